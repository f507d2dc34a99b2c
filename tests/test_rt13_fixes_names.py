"""Red team 13's findings 5 and 6, fixed: where no container guards the protected set, the second
reading (`classifier.names_protected`) follows a name a suffix option makes (gzip's and xz's `-S`,
cp's `-b` among other flags) and a `cd` it cannot resolve (CDPATH, a glob) into a member. Each
command here is what a person must allow there; the everyday ones beside them still run unheld."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app.core.classifier import names_protected
from app.core.execution import container
from tests.in_process_server import serving
from tests.stdio_client import run

LINUX = sys.platform.startswith("linux")
HOME = "/home/ann"
PROJECT = f"{HOME}/code/site"
PROGRAM = [f"{HOME}/src/cowork/app", f"{HOME}/src/cowork/.venv", f"{HOME}/.pyenv/versions/3.12.3"]
pytestmark = pytest.mark.anyio


@pytest.fixture
def members(monkeypatch: pytest.MonkeyPatch) -> tuple[str, ...]:
    """What `Runs._names_unguarded` passes to names_protected on Linux without bwrap."""
    monkeypatch.setenv("HOME", HOME)
    for name in ("APPDATA", "LOCALAPPDATA", "USERPROFILE"):
        monkeypatch.delenv(name, raising=False)
    protected = container.protected_set(
        "linux", {}, HOME, [f"{HOME}/.local/share/cowork-terminal"], PROGRAM, f"{HOME}/.local/lib"
    )
    return (*container.hold_members(protected), *protected.program[:1])


def judged(commands: list[str], members: tuple[str, ...], *, held: bool) -> list[str]:
    """The commands names_protected judges otherwise than `held` says (empty: each as it should be)."""
    return [c for c in commands if names_protected(c, members, cwd=PROJECT, bare=False) != held]


def test_a_suffix_option_that_makes_a_protected_name_is_held(members: tuple[str, ...]) -> None:
    commands = [
        "gzip -S rc ~/.bash",  # packed: the file gains the suffix
        'gzip -d -S "$s" ~/.bashrcx',  # a suffix only bash knows: any shorter name
        "gzip -d -Sx ~/.bashrcx",
        "xz --suffix=x -d ~/.bashrcx",
        "gunzip ~/.bashrc-gz",  # gzip's own suffixes besides .gz
        "cp -b .bash ~",  # into a folder: the backup of ~/.bash beside it
        "SIMPLE_BACKUP_SUFFIX=rc cp -bt ~ .bash",
        "SIMPLE_BACKUP_SUFFIX=rc cp --back x ~/.bash",  # GNU takes a prefix of --backup
        "mv --suf=rc -b x ~/.bash",
    ]
    assert judged(commands, members, held=True) == []


def test_everyday_packing_and_copying_with_suffixes_and_backups_is_not_held(members: tuple[str, ...]) -> None:
    commands = [
        "gzip -d -S .gzip data.csv.gzip",
        "gunzip -S x logs/a.logx",
        "gzip -dc -S x ~/.bashrcx > out.txt",  # to its output: reads ~/.bashrcx only
        "gzip -S .gz -9 data.csv",
        'gzip -d -S "$s" data.csvx',
        "gunzip ~/Downloads/site.tar.gz",
        "xz -d -T 2 dump.sql.xz",
        "cp -fb a.txt b.txt",
        "ln -sfb ../shared/config.yml config.yml",
        "cp -b notes.md ~",
        "cp -t /tmp a b",
        "install -m 755 -b build/app ~/bin/app",
    ]
    assert judged(commands, members, held=False) == []


def test_a_cd_through_cdpath_or_a_glob_into_a_member_then_a_relative_write_is_held(members: tuple[str, ...]) -> None:
    commands = [
        "CDPATH=~/.config:~/.local/share cd fish && echo x > x.fish",
        "CDPATH=/tmp:~/.config cd autostart && echo x > e.desktop",
        "export CDPATH=~/.config; cd autostart; echo x > e.desktop",
        "CDPATH=.config cd autostart && echo x > e.desktop",  # relative to where it runs
        'cd "$d"/.config && echo x > autostart/e.desktop',  # an expansion that may be the home folder
        "cd ~/.config/auto* && cd .. && cd autostart && echo x > e.desktop",
    ]
    assert judged([f"cd ~ && {c}" if c.startswith("CDPATH=.config") else c for c in commands], members, held=True) == []


def test_cdpath_of_a_project_folder_and_globs_elsewhere_stay_unheld(members: tuple[str, ...]) -> None:
    commands = [
        "CDPATH=~/code cd site && echo x > a.txt",
        "CDPATH=.:~/code cd site && npm test > out.log",
        "CDPATH=~/.config cd myapp && echo x > a.txt",  # a folder of ~/.config no member is in
        "cd src/* && echo x > a.txt",
        "cd ~/code/s* && npm test > out.log",
        "cd ~/.loc* && echo x > notes.txt",  # above members, but the file is in none of them
        "cd ~/.config/auto* && ls",  # only reads there
        'cd "$X" && echo x > a.txt',
        "cd - && echo x > a.txt",
    ]
    assert judged(commands, members, held=False) == []


@pytest.mark.skipif(not LINUX, reason="the weaker mode of Linux (bwrap missing)")
async def test_without_bwrap_a_cdpath_into_the_project_runs_and_one_into_autostart_is_refused(
    home: Path, monkeypatch: pytest.MonkeyPatch, user_home: Path, no_container: None
) -> None:
    user = user_home
    (user / ".config" / "autostart").mkdir(parents=True, exist_ok=True)
    (user / "code" / "site").mkdir(parents=True, exist_ok=True)
    async with serving(home) as client:
        ok = await run(client, {"command": "CDPATH=~/code cd site && echo x > a.txt", "cwd": str(user)})
        held = await run(client, {"command": "cd ~/.con*/autos* && echo x > e.desktop", "cwd": str(user / "code")})
    assert ok.get("exitCode") == 0, ok
    assert (user / "code" / "site" / "a.txt").read_text() == "x\n"
    assert "nobody can approve it and it was not run" in held.get("error", ""), held
    assert "Changes a file Cowork Terminal guards" in held["error"]
    assert not (user / ".config" / "autostart" / "e.desktop").exists()
