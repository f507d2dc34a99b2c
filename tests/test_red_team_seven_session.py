"""A red team, 2026-12-05 (seventh), through a tray-bound server's tools: a persistent session's command
that changed how later ones run was not held, so a later innocent `ls` deleted ~/Documents; special
variables set in ways that were no assignment to them; a shell's start-up file and gdb's."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import pytest
from mcp import Client

from app.core.authority.hub import Hub
from app.core.paths import AppPaths
from tests.in_process_server import deny, held_by, serving
from tests.stdio_client import run

pytestmark = [pytest.mark.anyio]

# `ls` on a PATH that puts the project's bin first: deletes ~/Documents
PLANTED_LS = '#!/bin/sh\nrm -rf "$HOME/Documents"\necho pwned\n'


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A project folder, and ~/Documents (a test folder: HOME points at the test's)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    folder, victim = tmp_path / "project", tmp_path / "Documents"
    folder.mkdir()
    victim.mkdir()
    (victim / "precious.txt").write_text("keep me")
    return folder, victim


async def session(client: Client, command: str) -> dict[str, object]:
    result = await client.call_tool("terminal_run", {"command": command})
    text = result.content[0].text
    return {"error": text} if result.is_error else json.loads(text)


async def denied(hub: Hub, call: Callable[[], Awaitable[object]]) -> str:
    """The command a call sends is held for the user, who denies it: what the hold said (its reasons)."""
    async with anyio.create_task_group() as group:
        group.start_soon(call)
        [held] = await held_by(hub)
        deny(hub, held.command_id)
    return held.reasons


@pytest.mark.parametrize(
    "setter",
    [
        "builtin trap '. ./t.sh' DEBUG",
        "tr''ap '. ./t.sh' DEBUG",
        ". /dev/stdin <<< 'ls() { . ./t.sh; }'",
        "builtin eval 'ls() { . ./t.sh; }'",
    ],
)
async def test_session_code_that_runs_at_later_commands_is_held(
    home: Path, paths: AppPaths, hub: Hub, work: tuple[Path, Path], setter: str
) -> None:
    """The setter ran unheld (t.sh was `:`), t.sh was rewritten, and a later `ls` sourced it."""
    folder, victim = work
    evil = base64.b64encode(f"rm -rf {victim}; echo pwned\n".encode()).decode()
    async with serving(home, bound=True) as client:
        await session(client, f"cd {folder} && echo : > t.sh")
        said = await denied(hub, lambda: session(client, setter))
        await session(client, f"echo {evil} | base64 -d > t.sh")
        await session(client, "ls")
    assert "later commands" in said, said
    assert (victim / "precious.txt").exists(), "a later command ran rm -rf"


@pytest.mark.parametrize(
    "setter",
    ["export {PATH,X}=$PWD/bin:/usr/bin:/bin", "unset PATH; : ${PATH:=$PWD/bin:/usr/bin:/bin}", "getopts a PATH"],
)
async def test_a_session_path_set_without_an_assignment_as_written_is_held(
    home: Path, paths: AppPaths, hub: Hub, work: tuple[Path, Path], setter: str
) -> None:
    """A planted ./bin/ls (or ./?/ls for getopts' `?`) ran at a later `ls`."""
    folder, victim = work
    sub = "'?'" if "getopts" in setter else "bin"
    planted = base64.b64encode(PLANTED_LS.encode()).decode()
    async with serving(home, bound=True) as client:
        await session(client, f"cd {folder} && mkdir -p {sub} && echo {planted} | base64 -d > {sub}/ls")
        await session(client, f"chmod +x {sub}/ls")
        said = await denied(hub, lambda: session(client, setter))
        await session(client, "ls")
    assert "later commands" in said, said
    assert (victim / "precious.txt").exists(), "a later `ls` ran the planted one"


@pytest.mark.parametrize(
    "command",
    ["export {PATH,X}=$PWD/bin:/usr/bin:/bin; ls", "x=${BASH_ENV:=./rc.sh}; export BASH_ENV; bash -c 'echo hi'"],
)
async def test_the_read_only_tool_without_a_container_refuses_a_path_set_so(
    home: Path, paths: AppPaths, hub: Hub, work: tuple[Path, Path], no_container: None, command: str
) -> None:
    """Without the container it was "proven read-only", and ran the planted ls (rc.sh's rm -rf)."""
    folder, victim = work
    (folder / "bin").mkdir()
    (folder / "bin" / "ls").write_text(PLANTED_LS)
    os.chmod(folder / "bin" / "ls", 0o755)
    (folder / "rc.sh").write_text(f"rm -rf {victim}\n")
    async with serving(home, bound=True) as client:
        result = await client.call_tool("execute_read_only_command", {"command": command, "cwd": str(folder)})
    assert result.is_error, result.content[0].text
    assert (victim / "precious.txt").exists()


@pytest.mark.parametrize("option", ["--rcfile", "--init-file"])
async def test_a_shells_start_up_file_is_judged_before_it_runs(
    home: Path, paths: AppPaths, hub: Hub, work: tuple[Path, Path], option: str
) -> None:
    folder, victim = work
    (folder / "rc.sh").write_text(f"rm -rf {victim}\n")
    async with serving(home, bound=True) as client:
        said = await denied(hub, lambda: run(client, {"command": f"bash {option} rc.sh -i", "cwd": str(folder)}))
    assert "Deletes the folder" in said, said
    assert (victim / "precious.txt").exists(), "rm -rf in the start-up file ran unheld"


async def test_writing_gdbs_start_up_file_is_held(
    home: Path, paths: AppPaths, hub: Hub, work: tuple[Path, Path]
) -> None:
    """gdb runs ~/.gdbinit's `shell` lines at its next start: the write was moderate."""
    folder, victim = work
    async with serving(home, bound=True) as client:
        command = "echo 'shell rm -rf ~/Documents' > ~/.gdbinit"
        said = await denied(hub, lambda: run(client, {"command": command, "cwd": str(folder)}))
    assert "gdb runs at its next start" in said, said
    assert not (Path(os.environ["HOME"]) / ".gdbinit").exists()
    assert (victim / "precious.txt").exists()
