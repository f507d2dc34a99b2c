"""Our reader of git's config files (`git_settings.config_entries`) against git itself (`git config
--file F --list --null`, git 2.39), as a differential fuzzer found them apart (2026-12-05): git's
isspace is only space, tab, CR and LF (a \\v or \\f is kept in a value); it hands each setting on
as C strings, cut at their first NUL (`[remote "a.url\\0"] x = URL` is `remote.a.url`); it reads
bytes (a quote between the two of `é` drops out, and a file's size is in bytes). A group's members are
parted at space, tab and LF only, and the old `remotes/`, `branches/` files' lines at LF. A file
git refuses (it then runs no command): what git lists before it stops, read alike."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest

from app.core.classifier import Tier, classify, git_settings
from tests.handoff_checks import held_outside


def git_lists(folder: Path, data: bytes) -> tuple[bool, list[tuple[bytes, bytes]]]:
    """Whether git reads the config `data`, and the settings it lists (up to a line it refuses):
    a key without `=` with "" (as ours), a key before any section left out (ours reads none)."""
    path = folder / "config"
    path.write_bytes(data)
    done = subprocess.run(
        ["git", "config", "--file", str(path), "--list", "--null"],  # noqa: S607 (git from the PATH)
        capture_output=True,
        env={"PATH": os.environ["PATH"], "HOME": str(folder), "GIT_CONFIG_NOSYSTEM": "1"},
    )
    listed = [entry.partition(b"\n")[::2] for entry in done.stdout.split(b"\0")[:-1]]
    return done.returncode == 0, [(key, value) for key, value in listed if b"." in key]


def read_alike(folder: Path, data: bytes) -> None:
    """Our reader's settings, of the file as the classifier reads it, are git's, byte for byte."""
    accepted, listed = git_lists(folder, data)
    text = git_settings._config_text(str(folder / "config"))
    entries = git_settings.config_entries(text)
    read = [
        (key.encode("utf-8", "surrogateescape"), value.encode("utf-8", "surrogateescape")) for key, value in entries
    ]
    assert (read if accepted else read[: len(listed)]) == listed, (data, accepted)


# Each the fuzzer's, made as small as it goes; each read apart before (ours first, git's after)
MINIMIZED = [
    b"[a]a=\x0b",  # "" / "\v": a \v is no space to git
    b"[a]a=\x0c",  # "" / "\f"
    b'[a]a=\x0b""',  # "" / "\v": before an empty quote
    b"[a]a=\\\\\x0c",  # "\\" / "\\\f": after an escape
    b"[a]\n\turl = local\x0bhost:/x \x0c\n",  # "local host:/x" / "local\vhost:/x \f"
    b'[url "x"]\n\tinsteadOf = \x0bgh:\n',  # "gh:" / "\vgh:": git rewrites only what starts with \v
    b"[a]a=\x00",  # "\0" / ""
    b'[url "localhost:/r/"]\n\tinsteadOf = gh:\x00x\n',  # "gh:\0x" / "gh:": git rewrites gh:
    b'[\t"\x00"]a',  # `.\0.a` / `.`
    b'[remote "a.url\x00"] x = localhost:/x\n',  # `remote.a.url\0.x` / `remote.a.url`
    b'[include "path\x00"]\n\tx = more\n',  # `include.path\0.x` / `include.path`: an include
    b"[a]a=\x0c\n[",  # refused after: "" / "\f" before
    b'[a]a=\x00\n[ "\x00"]a\n/',  # refused after: "\0", `.\0.a` / "", `.`
    b'[a]a=\xc3"\xa9"',  # "\ufffd\ufffd" / "é": git joins the bytes the quotes stood between
    b'[remote "\xc3\\\xa9"]\n\turl = localhost:/x\n',  # the remote "\ufffd\ufffd" / "é"
    b"[a]a=\xff\xc3",  # bytes not UTF-8 at all: as they are
]


@pytest.mark.parametrize("data", MINIMIZED)
def test_a_config_the_fuzzer_found_read_apart_is_read_as_git_lists_it(tmp_path: Path, data: bytes) -> None:
    read_alike(tmp_path, data)


# ---- a small differential fuzzer, seeded: what git reads, from pieces chosen at random

HEADERS = ['[remote "origin"]', "[Remote.Backup]", '[url "localhost:/r/"]', "[include]", '[a\t"b\\"\\k"]', '[ "x"]',
           '[remote "a.url\0"]', "[x\x0b]", '[x "y" ]', "[a", "[.]", "[b]k=v", '[c "\x0c"]', "[d] ; c"]  # fmt: skip
KEYS = ["url", "insteadOf", "path", "Push-URL2", "k", "1x", "a_b", ""]
TOKENS = ["localhost:/x", "gh:", " ", "  ", "\t", "\x0b", "\x0c", "\r", "\0", '"', '"', "\\", "\\n", "\\t", "\\b",
          '\\"', "\\\\", "\\x", "\\\n", "\\\r\n", " #c", ";c", "é", "a b", "="]  # fmt: skip


def random_config(chance: random.Random) -> bytes:
    lines = []
    for _ in range(chance.randint(1, 6)):
        kind = chance.random()
        if kind < 0.3:
            lines.append(chance.choice(HEADERS))
        elif kind < 0.9:
            key = chance.choice(["", "\t", " ", "\x0b"]) + chance.choice(KEYS) + chance.choice(["", " ", "\t", "\r"])
            value = "".join(chance.choice(TOKENS) for _ in range(chance.randint(0, 5)))
            lines.append(key + ("=" + value if chance.random() < 0.85 else ""))
        else:
            lines.append(chance.choice(["# c", "; c", "", "\x0b", "\0"]))
    text = "".join(line + chance.choice(["\n", "\n", "\r\n"]) for line in lines)
    data = text.encode().replace("é".encode(), chance.choice([b"\xc3\xa9", b"\xc3", b"\xff", b'\xc3"\xa9"']))
    return (b"\xef\xbb\xbf" if chance.random() < 0.1 else b"") + data


def test_random_configs_are_read_as_git_lists_them(tmp_path: Path) -> None:
    chance = random.Random(20261205)
    for _ in range(300):  # under 1 s; of a larger fuzzer's (2026-12-05), 65,000 such read alike
        read_alike(tmp_path, random_config(chance))


# ---- what git then does: where it fetches from, what it runs


@pytest.fixture
def repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository in a home folder of its own; git's system file left out, as for git itself."""
    home = tmp_path / "ana"
    folder = home / "project"
    folder.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    git(folder, "init", "-q", "-b", "main")
    return folder


def git(folder: Path, *args: str, **environ: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(folder), *args],  # noqa: S603, S607 (git from the PATH, our own arguments)
        capture_output=True,
        env={**os.environ, **environ},
    )
    return done.stdout.decode()


def add_config(folder: Path, data: bytes | str) -> None:
    with (folder / ".git" / "config").open("ab") as config:
        config.write(data if isinstance(data, bytes) else data.encode())


def test_a_remote_named_through_a_nul_leads_where_git_fetches(repository: Path) -> None:
    add_config(repository, b'[remote "a.url\x00"]\n\tx = localhost:/x\n')
    assert git(repository, "remote", "get-url", "a") == "localhost:/x\n"  # git's remote `a`
    held_outside("git fetch a", str(repository), deciding=True)


def test_a_rewrite_cut_at_a_nul_is_the_prefix_git_rewrites(repository: Path) -> None:
    add_config(repository, b'[url "localhost:/r/"]\n\tinsteadOf = gh:\x00x\n')
    assert git(repository, "ls-remote", "--get-url", "gh:x.git") == "localhost:/r/x.git\n"
    held_outside("git clone gh:x.git", str(repository), deciding=True)


def test_an_include_named_through_a_nul_is_a_file_git_reads(repository: Path) -> None:
    marker = repository.parent / "ran"
    add_config(repository, b'[include "path\x00"]\n\tx = more\n')
    (repository / ".git" / "more").write_text(f"[core]\n\tfsmonitor = touch {marker}; false\n")
    git(repository, "status")
    assert marker.exists()  # git ran what the included file names
    assert git_settings.git_runs(str(repository / ".git")) == "include.path"
    assert classify("git status", cwd=str(repository)).tier is not Tier.SAFE


def test_a_remotes_name_whose_bytes_an_escape_parts_is_the_name_git_reads(repository: Path) -> None:
    add_config(repository, b'[remote "\xc3\\\xa9"]\n\turl = localhost:/x\n')
    assert git(repository, "remote", "get-url", "é") == "localhost:/x\n"
    held_outside("git fetch é", str(repository), deciding=True)


def test_an_include_whose_name_is_not_utf8_is_the_file_git_reads(repository: Path) -> None:
    add_config(repository, b"[include]\n\tpath = more\xff\n")
    Path(os.fsdecode(bytes(repository / ".git") + b"/more\xff")).write_text('[remote "b"]\n\turl = localhost:/x\n')
    assert git(repository, "remote", "get-url", "b") == "localhost:/x\n"
    held_outside("git fetch b", str(repository), deciding=True)


def test_a_config_over_256_kib_in_bytes_is_too_large_to_read_whatever_its_characters(repository: Path) -> None:
    add_config(repository, "# " + "é" * 140_000 + '\n[remote "b"]\n\turl = localhost:/x\n')  # 280,000 bytes
    assert git(repository, "remote", "get-url", "b") == "localhost:/x\n"  # git reads it all
    result = classify("git fetch b", cwd=str(repository))
    assert result.tier is Tier.DESTRUCTIVE and "larger than 256 KiB" in result.reasons[0], result
    add_config(repository, "[core]\n\tfsmonitor = x\n")
    assert git_settings.git_runs(str(repository / ".git")) == "config"


def test_a_groups_member_with_a_vertical_tab_is_one_remote(repository: Path) -> None:
    marker = repository.parent / "contacted"
    add_config(repository, b'[remotes]\n\tall = one\x0btwo three\n[remote "one\x0btwo"]\n\turl = localhost:/x\n')
    git(repository, "fetch", "all", GIT_SSH_COMMAND=f"echo >>{marker}")  # ssh as a stand-in: what it reaches
    assert "localhost" in marker.read_text()
    held_outside("git fetch all", str(repository), deciding=True)


def test_the_old_remotes_and_branches_files_are_read_by_lines_as_git_reads_them(repository: Path) -> None:
    (repository / ".git" / "remotes").mkdir()
    (repository / ".git" / "remotes" / "r").write_bytes(b"URL: a\x0bURL: b \nURL:\tc\r\nURL: d\x00e\n")
    (repository / ".git" / "branches").mkdir(exist_ok=True)
    (repository / ".git" / "branches" / "b").write_bytes(b" \x1flocalhost:/x\x00y#main\n")
    config = git_settings.git_config(str(repository / ".git"), os.environ, os.environ["HOME"])
    for name in ("r", "b"):
        assert config.urls[name] == git(repository, "remote", "get-url", "--all", name).split("\n")[:-1], name
