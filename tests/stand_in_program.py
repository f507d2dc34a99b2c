"""A stand-in program on the PATH that records each start, for the end-to-end tests that a held
hand-off is refused by the server itself and never reaches the program."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from tests.in_process_server import serving
from tests.stdio_client import run

HELD = "This command needs the user's approval"  # headless: no one can click, so it did not run


def stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> Path:
    """Puts a `name` on the PATH that appends its words to the file returned, one line a start."""
    tools = tmp_path / "bin"
    tools.mkdir(exist_ok=True)
    started = tmp_path / f"{name}-started.txt"
    program = tools / name
    program.write_text(f'#!/bin/sh\necho "$@" >> {started}\n')
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    return started


async def runs_then_refuses(home: Path, cwd: Path, allowed: str, held: str) -> str:
    """Through execute_command, headless with no tray (only what is held waits for a person, and
    nobody can answer): `allowed` runs, `held` is refused. What the refusal says."""
    async with serving(home) as client:
        listed: dict[str, Any] = await run(client, {"command": allowed, "cwd": str(cwd)})
        refused: dict[str, Any] = await run(client, {"command": held, "cwd": str(cwd)})
    assert listed.get("exitCode") == 0, listed  # the stand-in runs where the command would
    said = str(refused.get("error", ""))
    assert HELD in said and "not running" in said, refused
    return said
