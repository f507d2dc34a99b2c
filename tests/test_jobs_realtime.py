"""Jobs in real time (issue 22): what a Cowork user sees with a command longer than Cowork's cut.

tests/test_jobs.py shortens the patience through COWORK_TERMINAL_PATIENCE_S to stay fast; here
nothing is shortened. A real tray runs the commands of a real `serve`, spoken to by the MCP SDK's
client named as Cowork names itself, so the call returns at Cowork's own patience (45 s, under its
60 s cut) and the model follows the job with command_wait. Each test takes about a minute or more:
marked slow, they run with `pytest -m slow tests/test_jobs_realtime.py` (README, "For developers").
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp_types import Implementation

from app.core.commands.patience import COWORK_PATIENCE_S, PATIENCE_ENV
from app.core.journal.store import Journal, Status
from app.core.paths import AppPaths
from app.core.policy.approval import HOLD_LIFETIME_S
from tests.clicks import PROMPT_TITLE, click_yes
from tests.stdio_client import STOP_DEADLINE_S, live_processes, server_params
from tests.test_authority import cli, wait_until_held
from tests.tray_process import running_tray

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(300)]  # the suite's 120 s is too short

COWORK = "local-agent-mode-cowork-terminal"  # what Cowork sends: local-agent-mode-<the entry's key>
COWORK_CUT_S = 60.0  # Cowork gives up on a call after about this long (-32001)
LONG_S = 70  # longer than Cowork's cut: the command cannot end within one call
TIMEOUT_MS = 180_000  # the command's own limit, as the model sets it for a long build (the default is 30 s)


@pytest.fixture(autouse=True)
def real_patience() -> None:
    """Nothing shortens the patience: not the suite's environment, not the server's."""
    assert PATIENCE_ENV not in os.environ


@asynccontextmanager
async def cowork(home: Path) -> AsyncIterator[Client]:
    """A server bound to the tray, spoken to by a client that names itself as Cowork does."""
    params = server_params(home)
    assert PATIENCE_ENV not in params.env
    async with Client(params, mode="legacy", client_info=Implementation(name=COWORK, version="1.0.0")) as client:
        yield client


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], float]:
    """What the model reads, and how long the call took."""
    started = time.monotonic()
    result = await client.call_tool(tool, arguments)
    took = time.monotonic() - started
    data = json.loads(result.content[0].text)
    assert data == result.structured_content or result.is_error, "the text block and structured content agree"
    return data, took


async def wait_until_ended(client: Client, job: int, seconds: float) -> tuple[dict[str, Any], list[float]]:
    """command_wait as Cowork's model would call it, until the job ends; each call's duration."""
    deadline = time.monotonic() + seconds
    took: list[float] = []
    while time.monotonic() < deadline:
        result, seconds_taken = await call(client, "command_wait", {"jobId": job})
        took.append(seconds_taken)
        if result["status"] not in ("running", "waiting"):
            return result, took
    raise AssertionError(f"job {job} did not end within {seconds} s")


def rows(paths: AppPaths) -> list:
    with Journal.open(paths) as journal:
        return journal.recent_commands()


async def test_a_70_second_command_from_cowork_returns_a_job_before_cowork_gives_up_and_command_wait_gets_its_end(
    home: Path, paths: AppPaths
) -> None:
    with running_tray(home):
        async with cowork(home) as client:
            first, took = await call(
                client, "execute_command", {"command": f"echo start; sleep {LONG_S}; echo end", "timeout": TIMEOUT_MS}
            )
            assert first["status"] == "running" and first["exitCode"] is None and first["timedOut"] is False
            assert first["stdout"] == "start\n", "what it printed so far"
            assert f"command_wait with jobId {first['jobId']}" in first["note"]
            assert COWORK_PATIENCE_S - 1 < took < COWORK_CUT_S - 10, f"returned after {took:.1f} s"
            assert rows(paths)[0].status is Status.RUNNING, "the command goes on after the call"
            done, waits = await wait_until_ended(client, first["jobId"], LONG_S + 30)
    assert done["status"] == "finished" and done["exitCode"] == 0 and done["timedOut"] is False
    assert done["stdout"] == "start\nend\n"
    assert all(wait < COWORK_CUT_S - 10 for wait in waits), f"every command_wait returned in time: {waits}"
    assert took + sum(waits) > LONG_S, "it really ran its 70 s"
    [row] = rows(paths)
    assert row.id == first["jobId"] and row.status is Status.FINISHED and row.exit_code == 0


@pytest.mark.gui
async def test_a_held_command_from_cowork_allowed_after_its_call_returned_runs_and_command_wait_reads_it(
    home: Path, paths: AppPaths, display: str, tmp_path: Path
) -> None:
    (tmp_path / "later").mkdir()
    with running_tray(home, display=display):
        async with cowork(home) as client:
            first, took = await call(
                client, "execute_command", {"command": "rm -rf later && echo gone", "cwd": str(tmp_path)}
            )
            assert first["status"] == "waiting" and first["exitCode"] is None, first
            assert took < COWORK_CUT_S - 10, f"returned after {took:.1f} s, before Cowork gives up"
            assert 0 < first["secondsToAnswer"] <= HOLD_LIFETIME_S and "command_wait" in first["note"], first
            assert (tmp_path / "later").exists(), "nothing ran before the click"
            await wait_until_held(paths)
            await anyio.to_thread.run_sync(click_yes, display, PROMPT_TITLE)  # no call is waiting now
            deadline = time.monotonic() + STOP_DEADLINE_S
            while (tmp_path / "later").exists():
                assert time.monotonic() < deadline, "it ran at the click, with nobody asking"
                await anyio.sleep(0.05)
            done, _ = await wait_until_ended(client, first["jobId"], 60)
    assert done["status"] == "finished" and done["exitCode"] == 0 and done["stdout"] == "gone\n", done
    [row] = rows(paths)
    assert row.status is Status.FINISHED and row.decided_by == "user (approval prompt)"


async def test_a_pause_ends_a_cowork_job_that_outlived_its_call_and_command_wait_says_so(
    home: Path, paths: AppPaths
) -> None:
    sleep = f"sleep {LONG_S + 1}"  # not the other tests' sleep: they may run at the same time (-n)
    with running_tray(home):
        async with cowork(home) as client:
            first, took = await call(
                client, "execute_command", {"command": f"echo start; {sleep}", "timeout": TIMEOUT_MS}
            )
            assert first["status"] == "running" and took < COWORK_CUT_S - 10, (first, took)
            assert live_processes(sleep), "the job runs on after its call"
            paused = await anyio.to_thread.run_sync(cli, home, "pause")
            assert paused.returncode == 0, paused.stderr
            started = time.monotonic()
            done, _ = await wait_until_ended(client, first["jobId"], 30)
            ended_within = time.monotonic() - started
    assert done["status"] == "finished" and done["exitCode"] != 0, done
    assert "paused" in done["note"], done["note"]
    assert ended_within < STOP_DEADLINE_S, ended_within
    assert not live_processes(sleep), "the whole job ended"
    [row] = rows(paths)
    assert row.status is Status.KILLED, row.status
