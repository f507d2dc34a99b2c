"""ssh's and curl's own configuration, read where they choose the machine or the socket (a review
of issue 21's hand-offs, 2026-12-05): `Host build` / `HostName localhost` in ~/.ssh/config made
`ssh build CMD` reach this machine's ssh server, which starts CMD outside the command's container,
and `unix-socket=/run/docker.sock` in ~/.curlrc sent every `curl` to the Docker daemon. Writing
ssh's files that start programs or let someone in is held too."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from app.core.classifier import Tier, classify, hosts
from app.core.i18n import load_translation
from tests.handoff_checks import held_outside
from tests.stand_in_program import runs_then_refuses, stand_in

ALIASES = "Host build\n  HostName localhost\nHost gh\n  HostName github.com\n"


def _names(host: str, text: str, files: dict[str, str] | None = None) -> list[str]:
    return hosts.ssh_host_names(host, text, "/cfg", lambda path: (files or {}).get(path))


@pytest.mark.parametrize(
    ("host", "text", "names"),
    [
        ("build", ALIASES, ["localhost"]),
        ("gh", ALIASES, ["github.com"]),
        ("other", ALIASES, []),
        ("BUILD", "Host build\n\tHostName=127.0.0.1\n", ["127.0.0.1"]),  # case-blind, a tab, `=`
        ("build", 'host=build\nhostname = "localhost"  # mine\n', ["localhost"]),
        ("b1", "Host b? !b2\n  HostName localhost\n", ["localhost"]),
        ("b2", "Host b? !b2\n  HostName localhost\n", []),  # a negated pattern rules it out
        ("x", "Host *\n  HostName %h.example\n", ["x.example"]),
        ("x", "HostName localhost\nHost x\n  HostName other.example\n", ["localhost"]),  # before any Host
        # ssh takes the first value: a later block's HostName does not apply
        ("x", "Host x\n  HostName a.example\nHost *\n  HostName localhost\n", ["a.example"]),
        # a Match block may apply (its conditions are not evaluated): read on past it
        ("x", "Match user ana\n  HostName localhost\nHost x\n  HostName a.example\n", ["localhost", "a.example"]),
        ("x", "Match all\n  HostName localhost\nHost x\n  HostName a.example\n", ["localhost"]),
        ("x", 'Host x\n  HostName "unclosed\n', ["*"]),  # ssh refuses the file: cannot tell
        ("x", "# Host x\n#  HostName localhost\n", []),
    ],
)
def test_the_host_names_ssh_may_take_for_a_host(host: str, text: str, names: list[str]) -> None:
    assert _names(host, text) == names


def test_includes_are_followed_in_their_block_relative_to_the_files_folder(tmp_path: Path) -> None:
    (tmp_path / "conf.d").mkdir()
    (tmp_path / "conf.d" / "a.conf").write_text("Host build\n  HostName localhost\n")
    (tmp_path / "conf.d" / "b.conf").write_text("Host *\n  HostName b.example\n")
    read = {str(p): p.read_text() for p in (tmp_path / "conf.d").iterdir()}
    text = "Include conf.d/*.conf\n"
    assert hosts.ssh_host_names("build", text, str(tmp_path), read.get) == ["localhost"]
    assert hosts.ssh_host_names("x", text, str(tmp_path), read.get) == ["b.example"]
    # inside a block that does not apply, an Include is not read
    assert hosts.ssh_host_names("build", "Host other\n  Include conf.d/*.conf\n", str(tmp_path), read.get) == []
    # one that includes itself ends at ssh's depth, as "cannot tell"
    loop = {str(tmp_path / "self"): "Include self\n"}
    assert hosts.ssh_host_names("x", "Include self\n", str(tmp_path), loop.get) == ["*"]


@pytest.mark.parametrize(
    ("platform", "environ", "homes", "files"),
    [
        ("linux", {}, ["/home/ana"], ["/home/ana/.ssh/config", "/etc/ssh/ssh_config"]),
        ("darwin", {}, ["/Users/ana", "/tmp/h"],
         ["/Users/ana/.ssh/config", "/tmp/h/.ssh/config", "/etc/ssh/ssh_config"]),
        ("win32", {"PROGRAMDATA": "D:\\PD"}, ["C:\\Users\\ana"],
         ["C:\\Users\\ana\\.ssh\\config", "D:\\PD\\ssh\\ssh_config"]),
        ("win32", {}, ["C:\\Users\\ana"], ["C:\\Users\\ana\\.ssh\\config", "C:\\ProgramData\\ssh\\ssh_config"]),
    ],
)  # fmt: skip
def test_the_files_ssh_reads_on_each_system(
    platform: str, environ: dict[str, str], homes: list[str], files: list[str]
) -> None:
    assert hosts.ssh_config_files(platform, environ, homes) == files


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder whose ~/.ssh/config names `build` as this machine and `gh` as another."""
    folder = tmp_path / "ana"
    (folder / ".ssh").mkdir(parents=True)
    (folder / ".ssh" / "config").write_text(ALIASES)
    (folder / "project").mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.mark.parametrize(
    "command",
    [
        "ssh build 'echo x >> ~/.bashrc'",
        "ssh ana@build id",
        "scp run.sh build:/tmp/",
        "rsync -a . build:backup/",
        "git push build:/srv/site.git main",
        "git clone ssh://build/srv/x.git",
        "sftp build",
        "mosh build",
        "sshfs build:/ mnt",
        "autossh -M 0 build",
    ],
)
def test_an_alias_of_this_machine_in_the_users_ssh_config_is_held(user_home: Path, command: str) -> None:
    held_outside(command, str(user_home / "project"), deciding=True)


@pytest.mark.parametrize(
    ("command", "tier"),
    [
        ("ssh gh id", Tier.MODERATE),
        ("ssh other.example id", Tier.MODERATE),
        ("git clone gh:ana/x.git", Tier.MODERATE),
        ("ssh -o HostName=github.com build id", Tier.MODERATE),  # the command line's HostName comes first
        ("ssh -F none gh id", Tier.MODERATE),
    ],
)
def test_an_alias_of_another_machine_keeps_its_tier(user_home: Path, command: str, tier: Tier) -> None:
    assert classify(command, cwd=str(user_home / "project")).tier is tier


def test_an_alias_in_a_file_given_with_dash_f_is_held(user_home: Path) -> None:
    project = user_home / "project"
    (project / "cfg").write_text("Host x\n  HostName 127.0.0.1\n")
    result = held_outside("ssh -F cfg x id", str(project), deciding=True)
    assert result.reasons == ("ssh -F cfg: starts a program outside Cowork Terminal's watch",)
    assert classify("ssh -F cfg gh id", cwd=str(project)).tier is Tier.MODERATE


@pytest.mark.parametrize(
    "command",
    [
        "echo 'ssh-ed25519 AAAA agent' >> ~/.ssh/authorized_keys",
        "printf 'Host x\\n HostName localhost\\n' >> ~/.ssh/config && ssh x id",
        "cp mine.conf ~/.ssh/config.d/",
        "cp key.pub ~/.ssh/",
        "echo 'touch /tmp/x' > ~/.ssh/rc",
        "tee -a $HOME/.ssh/environment < env.txt",
        "echo x >> ~/.ssh/authorized_keys2",
        'echo x > ~/.ssh/"$name"',  # which file an expansion decides
    ],
)
def test_writing_sshs_files_that_start_programs_or_let_someone_in_is_held(user_home: Path, command: str) -> None:
    result = classify(command, cwd=str(user_home / "project"))
    assert result.tier is Tier.DESTRUCTIVE, result
    assert any("ssh reads it to run programs or to let others log in" in r for r in result.reasons), result


def test_a_link_to_sshs_settings_written_through_is_held_and_everyday_files_are_not(user_home: Path) -> None:
    project = user_home / "project"
    (project / "cfg").symlink_to(user_home / ".ssh" / "config")
    said = classify("echo 'Host *' >> cfg", cwd=str(project)).plain
    assert said == ("Changes cfg, which ssh reads to run programs or let others log in",)
    for command in ("ssh-keyscan github.com >> ~/.ssh/known_hosts", "cat ~/.ssh/config", "cp ~/.ssh/config /tmp/x"):
        assert classify(command, cwd=str(project)).tier is not Tier.DESTRUCTIVE, command


@pytest.mark.parametrize("language", ["de", "es", "ru"])
def test_a_person_reads_why_in_their_language(language: str) -> None:
    template = "Changes {source}, which ssh reads to run programs or let others log in"
    said = load_translation(language).gettext(template)
    assert said != template and "{source}" in said


def test_a_socket_named_in_a_curl_config_file_is_held(user_home: Path) -> None:
    project = user_home / "project"
    (project / "sock.cfg").write_text('# the daemon\nunix-socket = "/var/run/docker.sock"\n')
    (project / "nest.cfg").write_text("config: sock.cfg\n")
    (project / "plain.cfg").write_text("silent\nurl = https://example.com\n")
    (project / "own.cfg").write_text(f"--unix-socket {project / 'app.sock'}\n")
    os.mkfifo(project / "app.sock")  # the project's own socket (a FIFO stands in: only its place counts)
    for command in ("curl -K sock.cfg http://x/", "curl --config=nest.cfg http://x/", "curl -sKsock.cfg x"):
        held_outside(command, str(project), deciding=True)
    for command in ("curl -K plain.cfg http://x/", "curl -K own.cfg http://x/", "curl https://example.com"):
        assert classify(command, cwd=str(project)).tier is Tier.MODERATE, command
    assert classify("curl -K - http://x/", cwd=str(project)).reasons == (
        "cannot tell what runs: curl reads its options from -",
    )
    (user_home / ".curlrc").write_text("abstract-unix-socket docker\n")
    held_outside("curl http://x/", str(project), deciding=True)
    assert classify("curl -q http://x/", cwd=str(project)).tier is Tier.MODERATE  # -q first: no ~/.curlrc
    (user_home / ".curlrc").unlink()
    result = classify("echo 'unix-socket=/run/docker.sock' >> ~/.curlrc; curl http://x/", cwd=str(project))
    assert result.tier is Tier.DESTRUCTIVE and "which this command writes" in result.reasons[-1], result


@pytest.mark.anyio
async def test_through_execute_command_ssh_to_an_alias_of_this_machine_never_starts(
    home: Path, user_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server itself, headless with no tray: a stand-in `ssh` on the PATH records every start."""
    started = stand_in(tmp_path, monkeypatch, "ssh")
    said = await runs_then_refuses(home, user_home / "project", "ssh gh true", "ssh build 'echo x >> ~/.bashrc'")
    assert "outside Cowork Terminal's watch" in said, said
    assert started.read_text() == "gh true\n", "ssh to this machine must never start"


@pytest.fixture
def repository(user_home: Path) -> Path:
    """A repository with `origin` on another machine and `backup` on this one (over ssh)."""
    folder = user_home / "project"
    subprocess.run(["git", "init", "-q", str(folder)], check=True)  # noqa: S607 (git from the PATH)
    for name, url in (("origin", "git@github.com:ana/x.git"), ("backup", "localhost:/srv/backup.git")):
        subprocess.run(["git", "-C", str(folder), "remote", "add", name, url], check=True)  # noqa: S607
    return folder


@pytest.mark.parametrize(
    "command",
    [
        "git push backup main",
        "git push",  # git chooses the remote: any of them may be this machine
        "git fetch --all",
        "git pull backup",
        "git remote update",
        "git remote show backup",
        "git ls-remote backup",
        "git -C . push backup",
    ],
)
def test_a_remote_named_before_the_command_that_is_this_machine_is_held(repository: Path, command: str) -> None:
    result = held_outside(command, str(repository), deciding=True)
    assert "(localhost:/srv/backup.git)" in result.reasons[0], result


@pytest.mark.parametrize(
    "command", ["git push origin main", "git fetch origin", "git remote -v", "git remote show -n backup", "git status"]
)
def test_a_remote_on_another_machine_or_no_remote_contacted_keeps_its_tier(repository: Path, command: str) -> None:
    assert classify(command, cwd=str(repository)).tier is not Tier.DESTRUCTIVE, command


def test_a_url_the_users_git_settings_rewrite_to_this_machine_is_held(user_home: Path) -> None:
    (user_home / ".gitconfig").write_text(
        '[url "localhost:/srv/"]\n\tinsteadOf = gh:\n[url "ana@127.0.0.1:/p/"]\n\tpushInsteadOf = lab:\n'
    )
    project = str(user_home / "project")
    held_outside("git clone gh:x.git", project, deciding=True)
    held_outside("git push lab:x.git main", project, deciding=True)
    assert classify("git fetch lab:x.git", cwd=project).tier is Tier.MODERATE  # pushInsteadOf: pushes only
    assert classify("git clone other:x.git", cwd=project).tier is Tier.MODERATE


# ---- a red team of the above (2026-12-05)


@pytest.mark.parametrize(
    "command",
    [
        "ssh -o HostName=%h localhost id",  # ssh reads %h as the host given
        "ssh localhost -o HostName=%h id",
        "ssh -o 'HostName=\"localhost\"' x id",  # quoted, as ssh unquotes it
        "ssh -o \"HostName='localhost'\" x id",
        "ssh -o HostName=127.0.0.%h 1 id",
        "ssh -vo HostName=localhost x id",  # in a cluster of letters
        "ssh -o ProxyCommand='nc 127.0.0.1 22' x id",  # the login goes over a connection to this machine
        "ssh -o 'ProxyCommand socat - TCP:localhost:22' x id",
        "ssh -o ProxyCommand='nc %h 22' localhost id",
        "git -c core.sshCommand=\"ssh -o 'ProxyCommand=nc 127.0.0.1 22'\" clone x:r",
        "ssh ssh://localhost id",  # ssh's URL form of the host
        "ssh ssh://ana@127.0.0.1:22 id",
        "ssh -S /tmp/master github.com id",  # a master connection's socket any host reuses
        "ssh -o ControlPath=/tmp/master github.com id",
        "ssh -P x localhost id",  # OpenSSH 9.4's `-P TAG` takes a value; 9.2's -P none (x the host)
        "ssh -vP work localhost id",
        "autossh -M 0 -P x localhost id",
    ],
)
def test_settings_on_the_command_line_that_reach_this_machine_are_held(user_home: Path, command: str) -> None:
    held_outside(command, str(user_home / "project"), deciding=True)


@pytest.mark.parametrize(
    ("command", "tier"),
    [
        ("ssh -o HostName=build x id", Tier.MODERATE),  # a HostName is a name, never an alias
        ("ssh -o HostName=github.com localhost id", Tier.MODERATE),  # the machine is github.com
        ("ssh -o ProxyCommand='nc -X 5 -x proxy.example:1080 %h %p' github.com id", Tier.MODERATE),
        ("ssh -o ControlPath=~/.ssh/cm-%r@%h:%p -o ControlMaster=auto github.com id", Tier.MODERATE),
        ("ssh -G build", Tier.SAFE),  # prints its settings, connects nowhere
    ],
)
def test_settings_that_reach_another_machine_keep_their_tier(user_home: Path, command: str, tier: Tier) -> None:
    assert classify(command, cwd=str(user_home / "project")).tier is tier


@pytest.mark.parametrize(
    ("config", "command"),
    [
        ("Host x\n  HostName 127.0.0.1\n", "rsync -e 'ssh -F cfg' f x:/tmp/"),  # another client adds the host
        ("Host x\n  HostName 127.0.0.1\n", "GIT_SSH_COMMAND='ssh -F cfg' git push x:/srv/r.git"),
        ("Host x\n  HostName 127.0.0.1\n", "mosh --ssh='ssh -F cfg' x"),
        ("Host x\n  HostName 127.0.0.1\n", "sshfs -F cfg x:/ mnt"),
        ("Host x\n  HostName 127.0.0.1\n", "scp -Fcfg f x:/tmp/"),
        ("Host x\n  HostName 127.0.0.1\n", "sftp -Fcfg x"),
        ("Host x\n  HostName 127.0.0.1\n", "ssh -F cfg ana@x id"),
        ("Host x\n  HostName 127.0.0.1\n", "ssh -F cfg ssh://x id"),
        ("Host x\n  ProxyCommand nc 127.0.0.1 22\n", "ssh -F cfg x id"),
        ("Host x y\rHost none\nHostName 127.0.0.1\n", "ssh -F cfg x id"),  # ssh's lines end at \n only
        ('"HostName" 127.0.0.1\n', "ssh -F cfg x id"),  # a quoted keyword
        ('Host"Name" 127.0.0.1\n', "ssh -F cfg x id"),
    ],
)
def test_an_ssh_file_read_as_ssh_reads_it_is_held(user_home: Path, config: str, command: str) -> None:
    project = user_home / "project"
    (project / "cfg").write_text(config)
    held_outside(command, str(project), deciding=True)


def test_an_include_of_many_folders_is_not_walked_and_many_files_are_read(user_home: Path) -> None:
    """`Include /proc/*/root/proc/*/comm` took seconds and grew with every process; forty files in
    config.d made every host "cannot tell" (any host held)."""
    assert _names("x", "Include /proc/*/root/proc/*/root/proc/*/comm\n") == ["*"]
    (user_home / ".ssh" / "config.d").mkdir()
    for k in range(40):
        (user_home / ".ssh" / "config.d" / f"{k:02}.conf").write_text(f"Host h{k}\n  HostName h{k}.example\n")
    (user_home / ".ssh" / "config").write_text("Include config.d/*\n" + ALIASES)  # read for every host
    project = str(user_home / "project")
    assert classify("git push git@github.com:ana/x.git main", cwd=project).tier is Tier.MODERATE
    assert classify("ssh h39 id", cwd=project).tier is Tier.MODERATE
    held_outside("ssh build id", project, deciding=True)


@pytest.mark.parametrize(
    "command",
    [
        "echo KEY >> ~/.ssh/authorized_key?",  # bash expands a lone match in a redirection
        "echo x > ~/.ss?/rc",
        "d=config.d; echo x >> ~/.ssh/$d/y",
        "cp -r .ssh ~/",  # lands as ~/.ssh
        "cp -r .ssh ~",
    ],
)
def test_writing_sshs_files_by_a_glob_or_into_the_home_folder_is_held(user_home: Path, command: str) -> None:
    result = classify(command, cwd=str(user_home / "project"))
    assert result.tier is Tier.DESTRUCTIVE, result


def test_a_file_copied_into_a_folder_by_its_name_lands_there_and_a_file_target_does_not(user_home: Path) -> None:
    project = str(user_home / "project")
    said = classify("cp x/.gitconfig ~/", cwd=project).reasons
    assert said == ("cannot tell what runs: writes ~/.gitconfig, whose commands git runs",)
    assert classify("cp config $HOME/.ssh/", cwd=project).tier is Tier.DESTRUCTIVE  # an expansion's slash
    for command in ("cp -r .git backup/", "mv .git backup/", "cp -r src/.claude dist/"):  # a copy of a project
        assert classify(command, cwd=project).tier is Tier.MODERATE, command
    assert classify("cp .mcp.json /tmp/mcp.json.bak", cwd=project).tier is Tier.MODERATE  # a file, not a folder
    assert classify("cp notes.md ~", cwd=project).tier is Tier.MODERATE


def test_a_quoted_keyword_in_an_ssh_file_is_read_as_ssh_reads_it(user_home: Path) -> None:
    """`"ProxyCommand" CMD` runs CMD: its code is judged, as an unquoted keyword's is."""
    project = user_home / "project"
    (project / "cfg").write_text('"ProxyCommand" rm -rf ~/notes\n')
    result = classify("ssh -F cfg github.com id", cwd=str(project))
    assert result.tier is Tier.DESTRUCTIVE and "rm -r: recursive removal" in result.reasons, result


def test_writing_a_file_the_users_ssh_config_includes_from_elsewhere_is_held(user_home: Path) -> None:
    """Colima and OrbStack add `Include ~/.colima/ssh_config` to ~/.ssh/config: a `Host` written
    there and used in the same line reached this machine unasked."""
    (user_home / ".colima").mkdir()
    (user_home / ".ssh" / "config").write_text("Include ~/.colima/ssh_config\nInclude conf.d/*.conf\n" + ALIASES)
    project = str(user_home / "project")
    for command in (
        "printf 'Host x\\n HostName localhost\\n' >> ~/.colima/ssh_config; ssh x id",
        "echo 'Host *' > ~/.ssh/conf.d/a.conf",
    ):
        result = classify(command, cwd=project)
        assert result.tier is Tier.DESTRUCTIVE, result
        assert "ssh reads it to run programs or to let others log in" in result.reasons[0], result
    assert classify("echo x > ~/.colima/notes.txt", cwd=project).tier is Tier.MODERATE


def test_a_proxy_on_this_machine_that_relays_to_another_is_not_this_machine(user_home: Path) -> None:
    """A SOCKS or HTTP proxy on localhost (a company's, Tor's) relays to the host: every `git pull`
    was held (a second red team, 2026-12-05); sshd does not speak SOCKS, so `-x localhost:22` is none."""
    (user_home / ".ssh" / "config").write_text("Host github.com\n  ProxyCommand nc -X 5 -x localhost:1080 %h %p\n")
    project = str(user_home / "project")
    for command in (
        "git clone git@github.com:a/b.git",
        "ssh -o 'ProxyCommand connect -S 127.0.0.1:1080 %h %p' gitlab.com id",
        "ssh -o 'ProxyCommand socat - PROXY:localhost:%h:%p,proxyport=3128' gitlab.com id",
    ):
        assert classify(command, cwd=project).tier is Tier.MODERATE, command
    held_outside("ssh -o 'ProxyCommand nc localhost 22' gitlab.com id", project, deciding=True)


@pytest.mark.parametrize(
    "command", ["tar -xf keys.tar -C ~/.ssh/", "tar -C $HOME/.ssh -xf keys.tar", "unzip keys.zip -d ~/.ssh"]
)
def test_an_archive_unpacked_into_sshs_folder_is_held(user_home: Path, command: str) -> None:
    result = classify(command, cwd=str(user_home / "project"))
    assert result.tier is Tier.DESTRUCTIVE and "ssh reads it" in result.reasons[0], result


def test_an_f_files_include_is_split_as_ssh_splits_it_and_its_code_judged(user_home: Path) -> None:
    """`Include "a b/inc"` is one file to ssh: its ProxyCommand's code was looked for in `"a` and `b/inc"`."""
    folder = user_home / "project" / "a b"
    folder.mkdir(parents=True)
    (folder / "inc").write_text("Host *\n  ProxyCommand rm -rf ~/notes\n")
    (user_home / "project" / "cfg").write_text(f'Include "{folder}/inc"\n')
    result = classify("ssh -F cfg github.com id", cwd=str(user_home / "project"))
    assert result.tier is Tier.DESTRUCTIVE and "rm -r: recursive removal" in result.reasons, result


@pytest.mark.parametrize("command", ["ssh -S /tmp/m-%%h github.com id", "ssh -o 'ControlPath=/tmp/m-%%h' x.example id"])
def test_a_control_path_whose_percent_h_is_written_out_is_any_hosts(user_home: Path, command: str) -> None:
    """`%%h` is the text `%h`: one master's socket for every host (hosts.shared_control_path)."""
    held_outside(command, str(user_home / "project"), deciding=True)
    assert classify(command.replace("%%h", "%h"), cwd=str(user_home / "project")).tier is Tier.MODERATE


def test_an_alias_past_the_first_quarter_megabyte_of_the_users_config_is_read(user_home: Path) -> None:
    """ssh reads its file whole: a cut at 256 KiB missed a `Host` alias after it; past 4 MiB, which
    machine a host is cannot be told."""
    filler = "".join(f"Host h{k}\n  HostName h{k}.example\n" for k in range(12_000))  # about 400 KB
    config = user_home / ".ssh" / "config"
    config.write_text(filler + "Host late\n  HostName localhost\n")
    project = str(user_home / "project")
    held_outside("ssh late id", project, deciding=True)
    assert classify("ssh h7 id", cwd=project).tier is Tier.MODERATE
    config.write_text(filler * 11)  # over 4 MiB
    assert classify("ssh h7 id", cwd=project).tier is Tier.DESTRUCTIVE
