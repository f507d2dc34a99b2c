"""A server's tray link against a hub (or a tray that misbehaves) in this process, over the real channel.

Both ends speak core/channel/protocol.py: these tests show the typed messages arrive, that a push
no tray of ours sends is refused at the server's edge (never loosening it), and that a request
waiting for the tray leaves the server's event loop free to answer everything else.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from app.core import liveness
from app.core.authority.state import STRICTEST
from app.core.channel.protocol import Started
from app.core.commands import tray_link as tray_link_module
from app.core.commands.request import ExecuteRequest
from app.core.commands.tray_link import TrayLink, exited
from app.core.execution import orphans
from app.core.execution.process_marks import MARK_ENV
from app.core.journal.store import Journal, Status
from app.core.paths import AppPaths
from tests.channel_peers import ScriptedTray, running_hub, scripted_tray, wait_until
from tests.test_command_service_inprocess import bound_link, fake_tray, serving, tray_link

SLOW_TRAY_S = 1.0  # how long the slow tray below takes to answer each request
TICK_S = 0.01


def test_a_link_bound_to_the_hub_hears_a_pause_as_a_typed_state_push(paths: AppPaths) -> None:
    with running_hub(paths) as (hub, _seen):
        link = tray_link(paths)
        assert link.try_connect(), link.refusal
        link.start()
        try:
            assert link.state is not None and link.state.paused is False
            hub.set_paused(True)
            wait_until(lambda: link.state is not None and link.state.paused)
            assert link.server_id is not None
        finally:
            link.close()


def test_a_state_push_no_tray_sends_leaves_the_server_at_its_strictest(paths: AppPaths) -> None:
    with fake_tray(paths) as tray:
        link = bound_link(paths)
        try:
            assert link.state is not None and not link.state.paused
            tray.push({"op": "state", "state": "paused"})  # not an object
            wait_until(lambda: link.state == STRICTEST)
        finally:
            link.close()


def test_a_hold_clock_of_nan_is_refused_and_a_good_one_after_it_is_taken(paths: AppPaths) -> None:
    with fake_tray(paths) as tray:
        link = bound_link(paths)
        try:
            tray.push({"op": "hold_clock", "id": 1, "expires_at": math.nan})
            tray.push({"op": "stop", "id": -4})
            tray.push({"op": "hold_clock", "id": 2, "expires_at": 1_800_000_000.0})
            wait_until(lambda: 2 in link.hold_clocks)  # the link read past the bad ones: they arrived
            assert link.hold_clocks == {2: 1_800_000_000.0}
            assert link.stops == set()
        finally:
            link.close()


@contextmanager
def slow_tray(paths: AppPaths) -> Iterator[ScriptedTray]:
    """A program at the tray's address that welcomes a server, then answers each request late."""

    def late(message: dict[str, Any]) -> dict[str, Any]:
        time.sleep(SLOW_TRAY_S)
        return {"op": "ack", "seq": message["seq"], "id": 7}

    with scripted_tray(paths) as tray:
        tray.reply = late
        yield tray


async def ticks_while(work: Any) -> tuple[int, float]:
    """Run `work` while another task counts TICK_S sleeps: (ticks, seconds `work` took)."""
    ticks = 0

    async def count() -> None:
        nonlocal ticks
        while True:
            await anyio.sleep(TICK_S)
            ticks += 1

    async with anyio.create_task_group() as group:
        group.start_soon(count)
        started = time.monotonic()
        await work()
        took = time.monotonic() - started
        group.cancel_scope.cancel()
    return ticks, took


@pytest.mark.anyio
async def test_a_request_waiting_for_the_tray_leaves_the_event_loop_free(paths: AppPaths) -> None:
    with slow_tray(paths):
        link = bound_link(paths)
        try:
            ticks, took = await ticks_while(lambda: link.request_async(Started(3)))
        finally:
            link.close()
    assert took >= SLOW_TRAY_S * 0.9, "the request did wait for the tray"
    assert ticks >= took / TICK_S / 4, f"the loop ran only {ticks} times in {took:.2f} s"


@pytest.mark.anyio
async def test_a_server_keeps_serving_while_the_tray_writes_a_commands_row_slowly(
    paths: AppPaths, tmp_path: Path
) -> None:
    with slow_tray(paths):
        link = bound_link(paths)
        async with serving(paths, link) as service:

            async def run() -> None:
                await service.execute(ExecuteRequest(command="true", cwd=str(tmp_path)))

            ticks, took = await ticks_while(run)
    assert took >= SLOW_TRAY_S * 0.9, "the row waited for the tray"
    assert ticks >= took / TICK_S / 4, f"the loop ran only {ticks} times in {took:.2f} s"


@pytest.mark.parametrize(
    ("stat", "gone"),
    [
        ("41 (python3) S 1 41 41 0 -1 4194560 0 0", False),  # sleeping, alive
        ("41 (python3 (tray)) R 1 41 41 0 -1 4194564 0 0", True),  # PF_EXITING: SIGKILLed, still ending
        ("41 (python3) Z 1 41 41 0 -1 4194316 0 0", True),  # a zombie
        (None, True),  # reaped
    ],
    ids=["running", "exiting", "zombie", "gone"],
)
def test_a_tray_counts_as_gone_as_soon_as_it_starts_to_exit(tmp_path: Path, stat: str | None, gone: bool) -> None:
    """A server ends what a dead tray ran once the tray is gone; a SIGKILLed tray on a loaded machine
    may take seconds to finish exiting, and it runs nothing more from the moment it starts."""
    if stat is not None:
        (tmp_path / "41").mkdir()
        (tmp_path / "41" / "stat").write_text(stat + "\n")
    assert exited(41, tmp_path) is gone


# A tray that has begun to die but still holds its runner's lock: its main thread ends at once (it
# then shows as a zombie, "gone" to `exited`) while another thread keeps the process, and with it the
# lock, for the seconds given; as a SIGKILLed tray's last threads do on a loaded machine.
DYING_TRAY = """
import ctypes, os, sys, threading, time
from pathlib import Path
from app.core import liveness
held = liveness.try_hold(Path(sys.argv[1]))  # kept: a lock nobody refers to is let go
assert held is not None
def last_thread():
    time.sleep(float(sys.argv[2]))
    os._exit(0)
threading.Thread(target=last_thread).start()
print("holding", flush=True)
ctypes.CDLL(None).pthread_exit(None)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="marks are read from /proc")
@pytest.mark.parametrize("locks_close", [True, False], ids=["its locks close", "its locks never close"])
def test_what_a_dead_tray_ran_without_a_container_is_ended_once_the_trays_locks_close(
    paths: AppPaths, locks_close: bool, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """CI saw a command outlive its SIGKILLed tray: the server looked once, as the tray began to exit,
    when the tray's lock still said its runner lived. It now looks until the tray's locks close, and
    says so when they do not (nothing is ended while a process holds them)."""
    if not locks_close:
        monkeypatch.setattr(tray_link_module, "TRAY_LOCKS_WAIT_S", 0.5)
    key = "runner-of-a-dying-tray"
    hold_s = "1.5" if locks_close else "60"
    tray = subprocess.Popen(
        [sys.executable, "-c", DYING_TRAY, str(paths.server_lock(key)), hold_s], stdout=subprocess.PIPE, text=True
    )
    left = None
    try:
        assert tray.stdout is not None and tray.stdout.readline().strip() == "holding"
        with Journal(paths) as journal:
            server_id = journal.register_server(tray.pid, headless=False, lock_key=key)
            command_id = journal.begin_command(command="sleep 300", cwd="/", server_id=server_id)
        mark = f"{orphans.server_mark(paths, key)}:{command_id}"
        left = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(300)"], env={**os.environ, MARK_ENV: mark}
        )
        wait_until(lambda: exited(tray.pid))
        assert liveness.is_held(paths.server_lock(key)), "the dying tray still holds its runner's lock"
        TrayLink(paths, headless=False, lock_key="the-server")._end_what_a_dead_tray_ran(tray.pid)
        with Journal(paths) as journal:
            record = journal.get_command(command_id)
        assert record is not None
        if locks_close:
            assert left.wait(10) == -signal.SIGKILL
            assert record.status is Status.INTERRUPTED
        else:
            assert left.poll() is None and record.status is Status.RUNNING
            assert f"the lost tray (pid {tray.pid}) still holds its locks" in caplog.text
    finally:
        for process in (left, tray):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
