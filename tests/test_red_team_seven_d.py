"""A red team, 2026-12-05 (seventh, fourth pass): bash's command table set other than by an assignment
(`read 'BASH_CMDS[ls]'`, a nameref), aliases turned on by a glob (`shopt -s expand_alias[e]s`), a
function or trap left by mapfile's callback, Python modules that import the file they are given, and
the dynamic loader run as a program: each judged as its direct form; the everyday look-alikes keep
their tier."""

from __future__ import annotations

import base64
import json
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import pytest
from mcp import Client

from app.core.authority.hub import Hub
from app.core.classifier import Tier, classify
from app.core.commands.admission import lasts_in_session
from app.core.paths import AppPaths
from tests.in_process_server import deny, held_by, serving

TABLE = "makes a name run another program"
ALIASES = "turns on aliases"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A project folder holding a Python file that deletes a folder, a compiled program and a library."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "evil.py").write_text(f"import shutil; shutil.rmtree({str(tmp_path / 'Documents')!r})\ndef f(): pass\n")
    shutil.copy("/bin/true", project / "a.out")
    shutil.copy("/bin/true", project / "x.so")
    (project / "f").write_text("one\ntwo\n")
    return project


def judged(command: str, folder: Path) -> tuple[Tier, str]:
    verdict = classify(command, cwd=str(folder))
    return verdict.tier, " | ".join(verdict.reasons)


@pytest.mark.parametrize(
    "command",
    [
        "declare -n r=BASH_CMDS; r[ls]=./x.sh; ls",
        "declare -n r=BASH_ALIASES",
        "builtin declare -n r=BASH_CMDS",
        "typeset -n r='BASH_CMDS'",
        "read 'BASH_CMDS[ls]' <<< ./x.sh; ls",
        "read -r 'BASH_ALIASES[ls]' <<< '. ./t.sh'",
        "read -a BASH_CMDS <<< ./x.sh",
        "mapfile -t BASH_CMDS < f",
        "readarray BASH_ALIASES < f",
        "(( BASH_CMDS[ls]=1 ))",
    ],
)
def test_bash_command_table_set_any_way_is_held_as_the_assignment(command: str, folder: Path) -> None:
    """Each ran ./x.sh at the later `ls`, judged safe, where `BASH_CMDS[ls]=./x.sh` is held."""
    tier, reasons = judged(command, folder)
    assert tier is Tier.DESTRUCTIVE and TABLE in reasons, (command, reasons)


@pytest.mark.parametrize("command", ["declare -n r='PATH'", 'local -n r="PATH"'])
def test_a_quoted_nameref_to_path_sets_path(command: str, folder: Path) -> None:
    """The name's quotes were read as part of it: `declare -n r='PATH'` was safe."""
    tier, reasons = judged(command, folder)
    assert tier is Tier.MODERATE and "sets PATH" in reasons, reasons


@pytest.mark.parametrize(
    "command", ["read -r line <<< x", "mapfile -t lines < f", "(( a[i]=1 ))", "declare -n r=other", "read -a words"]
)
def test_reading_into_ordinary_names_stays_safe(command: str, folder: Path) -> None:
    assert judged(command, folder)[0] is Tier.SAFE


@pytest.mark.parametrize(
    "command", ["shopt -s expand_alias[e]s", "shopt -s 'expand_*'", "shopt -so posi?", "set -o posi[x]"]
)
def test_aliases_turned_on_by_a_glob_are_held(command: str, folder: Path) -> None:
    """With a file named expand_aliases (or posix) in the folder, bash expands the glob to it."""
    tier, reasons = judged(command, folder)
    assert tier is Tier.DESTRUCTIVE and ALIASES in reasons, reasons


@pytest.mark.parametrize(
    "command", ["shopt -s nullglob", "shopt -s extglob globstar", "set -o pipefail", "set -euo pipefail"]
)
def test_other_shell_options_stay_safe(command: str, folder: Path) -> None:
    assert judged(command, folder)[0] is Tier.SAFE


def session_lasts(command: str, folder: Path) -> bool:
    return lasts_in_session(command, classify(command, cwd=str(folder)), str(folder))


@pytest.mark.parametrize(
    "command",
    [
        "alias ls='. ./t.sh'",
        "alias ll='ls -l'",
        "mapfile -c 1 -C 'ls() { . ./t.sh; }; :' x <<< a",
        "mapfile -c 1 -C 'trap \". ./t.sh\" DEBUG; :' x <<< a",
        "readarray -c 1 -C 'ls() { . ./t.sh; }; :' x <<< a",
    ],
)
def test_an_alias_or_a_callbacks_function_lasts_in_the_session(command: str, folder: Path) -> None:
    """The callback runs in the session's shell: its function (or trap) ran t.sh, rewritten, at a later `ls`."""
    (folder / "t.sh").write_text(":\n")
    assert session_lasts(command, folder)


@pytest.mark.parametrize("command", ["mapfile -t lines < f", "alias", "alias ll", "mapfile -c 1 -C echo x < f"])
def test_what_leaves_nothing_does_not_last(command: str, folder: Path) -> None:
    assert not session_lasts(command, folder)


def test_an_alias_outside_a_session_keeps_its_tier(folder: Path) -> None:
    assert judged("alias ll='ls -l'", folder)[0] is Tier.SAFE


@pytest.mark.parametrize(
    "command",
    [
        "python3 -m pydoc ./evil.py",
        "python3 -m pydoc evil",
        "python3 -m inspect evil",
        "python3 -m inspect evil:f",
        "python3 -m pyclbr evil",
        "python3 -m modulefinder evil.py",
        "python3 -m code < evil.py",
    ],
)
def test_python_modules_that_import_a_file_are_judged_by_it(command: str, folder: Path) -> None:
    """Each imported (ran) evil.py, judged moderate ("runs a module")."""
    tier, reasons = judged(command, folder)
    assert tier is Tier.DESTRUCTIVE and "the program deletes files" in reasons, reasons


@pytest.mark.parametrize(
    "command",
    [
        "python3 -m pickle x.pkl",
        "python3 -m idlelib evil.py",
        "python3 -m idlelib.pyshell -r evil.py",
        "python3 -m pickle",
    ],
)
def test_python_modules_that_run_what_they_read_are_held(command: str, folder: Path) -> None:
    assert judged(command, folder)[0] is Tier.DESTRUCTIVE


@pytest.mark.parametrize("command", ["python3 -m pydoc json", "python3 -m code", "python3 -m inspect json"])
def test_a_standard_module_keeps_its_tier(command: str, folder: Path) -> None:
    assert judged(command, folder)[0] is Tier.MODERATE


@pytest.mark.parametrize(
    "command",
    [
        "/lib64/ld-linux-x86-64.so.2 ./a.out",
        "ld.so a.out",
        "/lib/ld-musl-x86_64.so.1 ./a.out",
        "/lib64/ld-linux-x86-64.so.2 --preload ./x.so /bin/true",
        "/lib64/ld-linux-x86-64.so.2 --audit x.so /bin/true",
    ],
)
def test_the_loader_run_as_a_program_is_judged_as_what_it_runs(command: str, folder: Path) -> None:
    """`./a.out` is held; through the loader it was moderate ("not known to be read-only")."""
    assert judged("./a.out", folder)[0] is Tier.DESTRUCTIVE
    assert judged(command, folder)[0] is Tier.DESTRUCTIVE


@pytest.mark.parametrize("command", ["/lib64/ld-linux-x86-64.so.2 --list /bin/true", "ld.so --help"])
def test_the_loader_on_an_installed_program_is_not_held(command: str, folder: Path) -> None:
    assert judged(command, folder)[0] <= Tier.MODERATE


@pytest.mark.parametrize("command", ["GCONV_PATH=./g iconv -f x -t y f", "env GCONV_PATH=/tmp/g iconv -l"])
def test_a_folder_of_character_set_modules_outside_the_systems_is_held(command: str, folder: Path) -> None:
    """iconv loads the converter modules GCONV_PATH names: as LD_PRELOAD's library."""
    tier, reasons = judged(command, folder)
    assert tier is Tier.DESTRUCTIVE and "GCONV_PATH loads the code" in reasons, reasons


def test_the_systems_character_set_modules_keep_the_tier(folder: Path) -> None:
    command = "GCONV_PATH=/usr/lib/x86_64-linux-gnu/gconv iconv -f x -t y f"
    assert judged(command, folder)[0] is Tier.MODERATE


@pytest.mark.anyio
async def test_a_command_table_entry_read_in_a_session_is_held(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`read 'BASH_CMDS[ls]' <<< $PWD/t.sh` ran unheld; t.sh, rewritten, ran at the later `ls`."""
    monkeypatch.setenv("HOME", str(tmp_path))
    project, victim = tmp_path / "project", tmp_path / "Documents"
    project.mkdir()
    victim.mkdir()
    (victim / "precious.txt").write_text("keep me")
    evil = base64.b64encode(f"#!/bin/sh\nrm -rf {victim}; echo pwned\n".encode()).decode()

    async def session(client: Client, command: str) -> dict[str, object]:
        result = await client.call_tool("terminal_run", {"command": command})
        text = result.content[0].text
        return {"error": text} if result.is_error else json.loads(text)

    async def denied(call: Callable[[], Awaitable[object]]) -> str:
        async with anyio.create_task_group() as group:
            group.start_soon(call)
            [held] = await held_by(hub)
            deny(hub, held.command_id)
        return held.reasons

    async with serving(home, bound=True) as client:
        await session(client, f"cd {project} && printf '#!/bin/sh\\n:\\n' > t.sh && chmod +x t.sh")
        said = await denied(lambda: session(client, "read 'BASH_CMDS[ls]' <<< $PWD/t.sh"))
        await session(client, f"echo {evil} | base64 -d > t.sh")
        await session(client, "ls")
    assert TABLE in said, said
    assert (victim / "precious.txt").exists(), "a later `ls` ran t.sh"
