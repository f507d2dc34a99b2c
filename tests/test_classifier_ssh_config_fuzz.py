"""Our reader of ssh's configuration (`hosts.ssh_host_names`) against ssh itself (`ssh -G -F CFG
HOST`, OpenSSH 9.2), as a differential fuzzer found them apart (2026-12-05): ssh skips one empty
word before a keyword (`=HostName x`) and drops form feeds at a line's end; a quote inside a
keyword ends it (`Host"Name"x`); a value's words end at a space or a tab only, a `#` starts a
comment only at a word's start (`Host b#1`), and `?` is one byte (`é` is two); a `!pattern` is
matched case and all; the first HostName does not end the reading (a ProxyCommand after it still
applies); and `Match final` or `CanonicalizeHostname` make ssh read its files again for the host
it reaches, whose `Host` block's ProxyCommand then applies. Each: the machine ssh reaches (its
HostName, a ProxyCommand's hosts, a ControlPath's master) is among the ones we take."""

from __future__ import annotations

import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from app.core.classifier import Tier, classify, hosts
from tests.handoff_checks import held_outside

SSH = shutil.which("ssh")
needs_ssh = pytest.mark.skipif(SSH is None, reason="no OpenSSH client here")


def ssh_settings(config: Path, host: str) -> dict[str, str] | None:
    """What `ssh -G` prints for `host` (the first value of each key), None when ssh refuses the file."""
    done = subprocess.run(  # noqa: S603 (ssh from the PATH; -G prints its settings, connects nowhere)
        [str(SSH), "-G", "-F", str(config), "--", host], capture_output=True, stdin=subprocess.DEVNULL, timeout=30
    )
    if done.returncode != 0:
        return None
    settings: dict[str, str] = {}
    for line in done.stdout.decode("utf-8", "surrogateescape").split("\n"):  # not splitlines: a \f is in a value
        key, _, value = line.partition(" ")
        settings.setdefault(key, value)
    return settings


def write(folder: Path, text: str, files: dict[str, str]) -> str:
    """The configuration and the files it includes (`{dir}`: the folder), as bytes: a \\r or a \\f stays.
    An included file is one no other account may write (ssh refuses it otherwise, whatever the umask)."""
    for name, body in files.items():
        (folder / name).write_bytes(body.replace("{dir}", str(folder)).encode())
        (folder / name).chmod(0o644)
    text = text.replace("{dir}", str(folder))
    (folder / "config").write_bytes(text.encode())
    return text


def reached_among_ours(folder: Path, host: str, text: str, files: dict[str, str]) -> list[str] | None:
    """Ours, after checking that ssh's machine is among them: its HostName (or the host itself,
    or one address in another spelling, as ssh writes `1` as 0.0.0.1), each host its ProxyCommand
    names, and "cannot tell" for a ControlPath one master answers for any host. None: ssh refuses
    the file (it then connects nowhere)."""
    text = write(folder, text, files)
    settings = ssh_settings(folder / "config", host)
    if settings is None:
        return None
    ours = hosts.ssh_host_names(host, text, str(folder), hosts.read_ssh_file)
    if "*" in ours:
        return ours
    known = {name.casefold() for name in [*ours, host]}
    reached = settings["hostname"]
    addresses = {hosts.address(name) for name in known} - {None}
    assert reached.casefold() in known or hosts.address(reached) in addresses, (host, text, files, settings, ours)
    proxy = settings.get("proxycommand", "none")
    if proxy.casefold() != "none":
        assert set(hosts.command_hosts(proxy.replace("%h", host))) <= set(ours), (host, text, files, settings, ours)
    path = settings.get("controlpath", "none").casefold()  # printed expanded: a host's name or %C's hash in it
    own = path == "none" or reached.casefold() in path or host.casefold() in path or re.search("[0-9a-f]{40}", path)
    assert own, (host, text, files, settings, ours)
    return ours


# Each the fuzzer's, made as small as it goes; each read apart before (ssh reached this machine,
# ours did not see it)
REACHES_HERE = [
    ("x", "=HostName localhost\n", {}),  # an empty word before the keyword, skipped
    ("x", " = HostName 127.0.0.1\n", {}),
    ("x", "= ProxyCommand nc 127.0.0.1 22\n", {}),
    ("x", "HostName localhost\x0c\n", {}),  # a form feed at the end is dropped ("localhost\f" was ours)
    ("x", 'Host"Name"localhost\n', {}),  # a quote in a keyword ends it: HostName, then its value
    ("b#1", "Host b#1\n  HostName localhost\n", {}),  # a `#` inside a word is no comment
    ("web.example", "Host *#*\n  HostName %h\nHost *\n  HostName localhost\n", {}),  # so `*#*` is no `*`
    ("é", "Host ??\n  HostName localhost\n", {}),  # `?` is a byte: é is two
    ("BUILD", "Host * !build\n  HostName localhost\n", {}),  # ssh's `!build` does not rule out BUILD
    ("Build", "Host build\n  HostName a.example\nHost *\n  HostName localhost\n", {}),  # a case-blind match may not
    ("x", "Host x\n  HostName a.example\nHost *\n  ProxyCommand nc 127.0.0.1 22\n", {}),  # read on after a HostName
    ("x", "Host x\n  HostName y\nHost y\n  ProxyCommand nc 127.0.0.1 22\nMatch final\n", {}),  # read again for y
    ("x", "CanonicalizeHostname yes\nHost x\n  HostName y\nHost y\n  ProxyCommand nc 127.0.0.1 22\n", {}),
    ("x", "Host other\n  Include {dir}/f\nHost x\n  HostName y\nHost y\n  ProxyCommand nc 127.0.0.1 22\n",
     {"f": "Match final\n"}),  # a `Match final` ssh reads in a file included where no block applies
]  # fmt: skip

# ... and each a name ssh reads otherwise (not this machine either way: ours was wider)
READ_OTHERWISE = [
    ("x", "HostName %%h\n"),  # "%h" (ours "%x")
    ("x", "HostName localhost#c\n"),  # "localhost#c"
    ("x", "HostName local\\host\n"),  # "local\\host": a backslash before a letter is kept
    ("x", "HostName 'h1.example'#c\n"),  # "h1.example#c"
]


@needs_ssh
@pytest.mark.parametrize(("host", "text", "files"), REACHES_HERE)
def test_a_config_the_fuzzer_found_reaching_this_machine_is_read_as_ssh_reads_it(
    tmp_path: Path, host: str, text: str, files: dict[str, str]
) -> None:
    ours = reached_among_ours(tmp_path, host, text, files)
    assert ours is not None and "*" not in ours, ours  # ssh reads each; and ours tell, not "cannot tell"
    assert any(hosts._named_here(name) for name in ours), ours


@needs_ssh
@pytest.mark.parametrize(("host", "text"), READ_OTHERWISE)
def test_a_config_the_fuzzer_found_read_otherwise_is_read_as_ssh_reads_it(tmp_path: Path, host: str, text: str) -> None:
    ours = reached_among_ours(tmp_path, host, text, {})
    assert ours is not None and not any(hosts._named_here(name) for name in ours), ours


@needs_ssh
def test_a_control_path_one_master_answers_for_any_host_cannot_tell(tmp_path: Path) -> None:
    """`ControlPath /tmp/cm` (no `%h`, `%C`): `ssh github.com CMD` runs over a master connection
    to whichever host opened it first, this machine too; read as `-o ControlPath` and `-S` are."""
    text = write(tmp_path, "Host *\n  ControlPath /tmp/cm-shared\n", {})
    settings = ssh_settings(tmp_path / "config", "github.com")
    assert settings is not None and settings["controlpath"] == "/tmp/cm-shared"
    assert hosts.ssh_host_names("github.com", text, str(tmp_path), hosts.read_ssh_file) == ["*"]
    for own in ("/tmp/cm-%C", "~/.ssh/cm-%r@%h:%p", "none"):  # each host's own master, or none
        assert hosts.ssh_host_names("github.com", f"ControlPath {own}\n", str(tmp_path), hosts.read_ssh_file) == []


# ---- a small differential fuzzer, seeded: what ssh reads, from pieces chosen at random

PATTERNS = ["build", "b1", "x", "*", "b?", "*.example", "!b1", "!build", "BUILD", "b#1", "??", "*#*", "web.example"]
MATCHES = ["all", "final", "canonical", "host b*", "originalhost x", "!host x", "canonical all", "user root"]
VALUES = {
    "Host": lambda chance: " ".join(chance.choice(PATTERNS) for _ in range(chance.randint(1, 3))),
    "Match": lambda chance: chance.choice(MATCHES),
    "HostName": lambda chance: chance.choice(["localhost", "127.0.0.1", "a.example", "%h", "%%h", "web.example",
                                              "localhost#c", "local\\host", '"b1"', "x"]),
    "ProxyCommand": lambda chance: chance.choice(["nc 127.0.0.1 22", "nc %h %p", "none", "nc -x localhost:1080 %h %p"]),
    "Include": lambda chance: chance.choice(["{dir}/a", "{dir}/*.conf", '"{dir}/b.conf"', "{dir}/none"]),
    "CanonicalizeHostname": lambda chance: chance.choice(["yes", "no"]),
    "ControlPath": lambda chance: chance.choice(["/tmp/cm-%C", "none", "/tmp/cm-%h"]),
}  # fmt: skip
SPELLINGS = ["{k} {v}", "  {k} {v}", "\t{k}\t{v}", "{k}={v}", "{k} = {v}", "={k} {v}", " = {k} {v}", "{k} {v}\x0c",
             "{k} {v} # c", "{k} {v}\r", '"{k}" {v}', "{K} {v}"]  # fmt: skip


def random_config(chance: random.Random) -> str:
    lines = []
    for _ in range(chance.randint(1, 6)):
        key = chance.choice(list(VALUES))
        spelling = chance.choice(SPELLINGS)
        lines.append(spelling.format(k=key, K=key.upper(), v=VALUES[key](chance)))
    return "\n".join(lines) + "\n"


@needs_ssh
def test_random_configs_reach_no_machine_we_do_not_see(tmp_path: Path) -> None:
    chance = random.Random(20261205)
    read = 0
    for _ in range(150):  # about 1 s; a larger fuzzer's 10,000 (2026-12-05) found none apart
        files = {name: random_config(chance) for name in ("a", "b.conf") if chance.random() < 0.5}
        host = chance.choice(["build", "BUILD", "b1", "x", "b#1", "é", "web.example"])
        read += reached_among_ours(tmp_path, host, random_config(chance), files) is not None
    assert read > 50, read  # most are files ssh reads


# ---- through the classifier: the host as the command gives it


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "ana"
    (folder / ".ssh").mkdir(parents=True)
    (folder / "project").mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.mark.parametrize(
    ("config", "command"),
    [
        ("Host * !build\n  HostName localhost\n", "ssh BUILD id"),  # ssh matches BUILD, not build
        ("Host b.\n  HostName localhost\n", "ssh b. id"),  # nor `b` for `b.`
        ("Host b.\n  HostName localhost\n", "scp f b.:/tmp/"),
    ],
)
def test_an_alias_matched_against_the_host_as_given_is_held(user_home: Path, config: str, command: str) -> None:
    (user_home / ".ssh" / "config").write_text(config)
    held_outside(command, str(user_home / "project"), deciding=True)


@needs_ssh
def test_a_proxy_command_after_an_empty_word_is_judged_as_ssh_runs_it(user_home: Path) -> None:
    """`=ProxyCommand CMD` is a ProxyCommand line to ssh (its first, empty word skipped): its CMD is
    judged as an unspaced one is."""
    project = user_home / "project"
    (project / "cfg").write_text("=ProxyCommand rm -rf ~/notes\n")
    settings = ssh_settings(project / "cfg", "github.com")
    assert settings is not None and settings["proxycommand"] == "rm -rf ~/notes"
    result = classify("ssh -F cfg github.com id", cwd=str(project))
    assert result.tier is Tier.DESTRUCTIVE and "rm -r: recursive removal" in result.reasons, result
