"""Why a session command a person let out of the container ended, when its server ends under it.

A real tray (on Xvfb: the Allow is a click in its approval prompt) runs the commands of a real
`serve` process. The command writes a protected start-up file, so it is held; once allowed it runs
apart from the session's shell (session_shell.py), in the call's own task. Then the server ends
while the call waits (its stdin closed, or SIGTERM): the row must not say the client cancelled the
command. The tray lets a call whose server went away run on (command_host.py), as it does a job;
if it ends it, the row says the server ended (cancellation.py). A call the client itself cancels
still says the client cancelled it.

A review, 2026-12-05: a `serve` that ended told the tray `call_cancel` for each call it forwarded
(server/forwarding.py), exactly as for the client's own `notifications/cancelled`, so the row said
KILLED, "cancelled by the client" (the same held for any call in flight).
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import anyio
import pytest

from app.core.journal.store import Journal, Status
from app.core.messages import CANCEL_REASON, SERVER_EXITED_REASON
from app.core.paths import AppPaths
from tests.raw_stdio import RawServer
from tests.stdio_client import FIRST_CALL_DEADLINE_S, STOP_DEADLINE_S, connect, live_processes
from tests.test_authority import click_allow_when_held
from tests.tray_process import desktop_home, running_tray

pytestmark = [pytest.mark.anyio, pytest.mark.gui]


def row_of(paths: AppPaths, command: str):
    with Journal.open(paths) as journal:
        return next((row for row in journal.recent_commands() if row.command == command), None)


def let_out_command(home: Path, marker: str) -> str:
    """A session command held for the protected start-up file it writes, which then sleeps."""
    tray_home = desktop_home(home)  # the tray's HOME: where its commands run
    tray_home.mkdir(parents=True, exist_ok=True)
    (tray_home / ".bashrc").write_text("# start\n")
    return f"echo '# allowed' >> ~/.bashrc; sleep {marker}"


async def allowed_and_running(home: Path, paths: AppPaths, display: str, marker: str) -> None:
    """The user clicks Allow in the tray's prompt; then the command runs, let out of the container."""
    shown = await click_allow_when_held(paths, display)
    assert "Cowork Terminal protects" in shown["reasons"], shown
    deadline = time.monotonic() + FIRST_CALL_DEADLINE_S
    while time.monotonic() < deadline and not live_processes(f"sleep {marker}"):
        await anyio.sleep(0.05)
    assert live_processes(f"sleep {marker}"), "the allowed command runs"
    assert (desktop_home(home) / ".bashrc").read_text().endswith("# allowed\n"), "it ran let out of the container"


async def ended_row(paths: AppPaths, command: str, marker: str):
    deadline = time.monotonic() + STOP_DEADLINE_S
    while time.monotonic() < deadline and (
        (row := row_of(paths, command)) is None or row.status.is_active or live_processes(f"sleep {marker}")
    ):
        await anyio.sleep(0.1)
    assert live_processes(f"sleep {marker}") == [], "it ended with the call"
    row = row_of(paths, command)
    assert row is not None and row.decided_by == "user (approval prompt)", row
    return row


@pytest.mark.parametrize("how", ["stdin closed", "SIGTERM"])
async def test_a_let_out_session_command_whose_server_ends_is_not_recorded_as_cancelled_by_the_client(
    home: Path, paths: AppPaths, display: str, how: str
) -> None:
    marker = f"71{os.getpid() % 1000}.5"
    command = let_out_command(home, marker)
    with running_tray(home, display=display):
        server = RawServer(home)  # no --headless: bound to the tray, which runs its commands
        try:
            server.initialize()
            server.send_call("terminal_run", json.dumps({"command": command, "timeout": 120_000}))
            await allowed_and_running(home, paths, display, marker)
            if how == "SIGTERM":
                server.process.send_signal(signal.SIGTERM)
            server.close()  # Claude leaves: stdin ends
        finally:
            server.close()
        deadline = time.monotonic() + 3.0  # the cancellation was recorded within milliseconds
        while time.monotonic() < deadline and (row := row_of(paths, command)) is not None and row.status.is_active:
            await anyio.sleep(0.1)
        row = row_of(paths, command)
        assert row is not None and row.decided_by == "user (approval prompt)", row
        ended_with_its_server = (row.status, row.reason) == (Status.INTERRUPTED, SERVER_EXITED_REASON)
        assert row.status is Status.RUNNING or ended_with_its_server, row
    # The tray's end ends what it still ran.


async def test_a_let_out_session_command_whose_call_the_client_cancels_says_the_client_cancelled_it(
    home: Path, paths: AppPaths, display: str
) -> None:
    marker = f"72{os.getpid() % 1000}.5"
    command = let_out_command(home, marker)
    with running_tray(home, display=display):
        async with connect(home, headless=False) as client:
            async with anyio.create_task_group() as group:
                group.start_soon(client.call_tool, "terminal_run", {"command": command, "timeout": 120_000})
                await allowed_and_running(home, paths, display, marker)
                group.cancel_scope.cancel()  # the SDK's client sends notifications/cancelled
            row = await ended_row(paths, command, marker)
    assert (row.status, row.reason) == (Status.KILLED, CANCEL_REASON), row
