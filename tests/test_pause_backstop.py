"""A pause ends what runs even while the command host's loop is held up (a red team, 2026-12-05: a short
`git status` on a crafted index held that loop for 9-17 s, and a running command went on after the
person's pause). The hub ends what is left from a thread of its own (`Hub._end_what_a_pause_left`)."""

from __future__ import annotations

import shutil
import sys
import threading
import time
from pathlib import Path

import anyio
import pytest
from mcp_types import CallToolResult

from app.core.authority.hub import PAUSE_BACKSTOP_S, Hub
from app.core.journal.records import Status
from tests.in_process_server import came, serving

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("bwrap") is None, reason="bwrap (Linux)"),
]


def last_tick(ticks: Path) -> float:
    try:
        return float(ticks.read_text() or 0)
    except (OSError, ValueError):
        return 0.0


async def test_a_pause_ends_a_running_command_while_the_loop_that_runs_it_is_held_up(
    home: Path, hub: Hub, tmp_path: Path
) -> None:
    ticks = tmp_path / "tick"
    command = f"while :; do date +%s.%N > {ticks}; sleep 0.05; done"
    results: list[CallToolResult] = []

    async def run() -> None:
        results.append(await client.call_tool("execute_command", {"command": command, "timeout": 60_000}))

    async with serving(home, bound=True) as client:
        async with anyio.create_task_group() as group:
            group.start_soon(run)
            assert await came(lambda: last_tick(ticks) > 0)
            paused_at = time.time()
            threading.Thread(target=hub.set_paused, args=(True,), daemon=True).start()  # the menu's click
            time.sleep(PAUSE_BACKSTOP_S + 2.0)  # the loop that runs the command, held up (blocking on purpose)
            still = last_tick(ticks)
            await anyio.sleep(0.5)
            assert last_tick(ticks) == still, "the command still ran"
        assert still < paused_at + PAUSE_BACKSTOP_S + 0.5, f"it ran on {still - paused_at:.2f} s after the pause"
    [result] = results
    assert "stopped because the user paused host access" in result.content[0].text, result  # told why
    assert all(row.status is not Status.RUNNING for row in hub.recent_commands(5))


async def test_a_pause_leaves_an_idle_spare_and_a_resume_runs_again(home: Path, hub: Hub, tmp_path: Path) -> None:
    """The backstop ends the containers of commands only: with none running, nothing is ended and the
    next command after the resume runs as before."""
    async with serving(home, bound=True) as client:
        first = await client.call_tool("execute_command", {"command": "echo one"})
        hub.set_paused(True)
        await anyio.sleep(PAUSE_BACKSTOP_S + 0.3)
        hub.set_paused(False)
        second = await client.call_tool("execute_command", {"command": "echo two"})
    assert not first.is_error and not second.is_error, (first, second)
    assert '"two' in second.content[0].text, second
