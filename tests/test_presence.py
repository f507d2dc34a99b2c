"""The running tray is the user's presence: `serve` refuses commands while no tray runs, unless `--headless`.

A `serve` process meets a real tray process (tests/tray_process.py) as the tray comes and goes: the
tray takes only Cowork Terminal's program as its peer. `serve --headless` runs in this process
(tests/in_process_server.py): with no tray to meet, what it does is the server's alone.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import anyio
from desktop_env import serve_params
from mcp import Client

from app.core import liveness
from app.core.journal.store import Journal, Status
from app.core.messages import NO_TRAY_MESSAGE
from app.core.paths import AppPaths
from tests.in_process_server import serving
from tests.stdio_client import STOP_DEADLINE_S
from tests.tray_process import running_tray

# "Well under a second per call": one lock probe, 0.2 ms at the median in bench/latency_bench.py.
# This deadline only catches a probe that waits (a lock timeout, a retry loop).
PRESENCE_DECISION_S = 0.5


async def echo(client: Client) -> tuple[bool, str]:
    result = await client.call_tool("execute_command", {"command": "echo present"})
    return result.is_error, result.content[0].text


def test_serve_refuses_without_a_tray_and_runs_once_the_tray_runs(home: Path, paths: AppPaths) -> None:
    async def scenario() -> list[tuple[bool, str]]:
        async with Client(serve_params(home, headless=False), mode="legacy") as client:
            refused = await echo(client)
            with running_tray(home):
                ran = await echo_once_bound(client)
            refused_again = await echo_once_unbound(client)  # the tray quit: decided again on the next call
            return [refused, ran, refused_again]

    refused, ran, refused_again = anyio.run(scenario)
    assert refused[0] is True and NO_TRAY_MESSAGE in refused[1], "the model reads why and what to ask"
    assert "Ask the user to start the Cowork Terminal app" in refused[1]
    assert ran[0] is False and json.loads(ran[1])["stdout"] == "present\n"
    assert refused_again[0] is True and NO_TRAY_MESSAGE in refused_again[1]
    with Journal(paths) as journal:
        statuses = [(c.status, c.reason) for c in reversed(journal.recent_commands())]
    assert statuses[0] == (Status.REFUSED, NO_TRAY_MESSAGE)
    assert statuses[-2:] == [(Status.FINISHED, None), (Status.REFUSED, NO_TRAY_MESSAGE)]
    assert set(statuses[1:-2]) <= {(Status.REFUSED, NO_TRAY_MESSAGE)}, "only refusals while it looked for the tray"


async def echo_once_bound(client: Client) -> tuple[bool, str]:
    """A server started before the tray finds it within its reconnect interval (0.5 s)."""
    deadline = time.monotonic() + STOP_DEADLINE_S
    while True:
        answer = await echo(client)
        if not answer[0] or time.monotonic() > deadline:
            return answer
        await anyio.sleep(0.1)


async def echo_once_unbound(client: Client) -> tuple[bool, str]:
    """The server learns that its tray is gone on its link's reader thread: a call sent before that
    is answered "did not take this call ... try again"; the next says there is no tray."""
    deadline = time.monotonic() + STOP_DEADLINE_S
    while True:
        answer = await echo(client)
        if NO_TRAY_MESSAGE in answer[1] or time.monotonic() > deadline:
            return answer
        await anyio.sleep(0.1)


def test_serve_headless_runs_without_a_tray(home: Path, paths: AppPaths) -> None:
    async def scenario() -> tuple[bool, str]:
        async with serving(home) as client:  # `serve --headless` in this process
            return await echo(client)

    assert not liveness.is_held(paths.tray_lock)
    is_error, text = anyio.run(scenario)
    assert is_error is False and json.loads(text)["stdout"] == "present\n"


def test_whether_the_tray_is_alive_is_decided_without_waiting(paths: AppPaths) -> None:
    lock = liveness.try_hold(paths.tray_lock)
    try:
        started = time.perf_counter()
        assert liveness.is_held(paths.tray_lock)
        assert time.perf_counter() - started < PRESENCE_DECISION_S
    finally:
        lock.release()
    started = time.perf_counter()
    assert not liveness.is_held(paths.tray_lock)
    assert time.perf_counter() - started < PRESENCE_DECISION_S
