"""Stopping is not crashing: a real `serve` process told to stop with a signal, as clients do."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.authority.supervisor import SERVER_CRASHED, Supervisor
from app.core.journal.store import Journal, Status
from app.core.messages import SERVER_EXITED_REASON
from app.core.paths import AppPaths
from app.server.stdio_transport import POSIX_STOP_SIGNALS, WINDOWS_STOP_SIGNALS, stop_signal_names
from tests.raw_stdio import RawServer
from tests.stdio_client import STOP_DEADLINE_S, live_processes

POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


@pytest.fixture
def server(home: Path) -> Iterator[RawServer]:
    raw = RawServer(home, "--headless")
    yield raw
    raw.close()


def servers(home: Path) -> list:
    with Journal(AppPaths(home, home / "logs")) as journal:
        return journal.servers(live_only=False)


def registered(home: Path) -> list:
    """The server rows once the server has registered with its client's name, which it does once the
    handshake is over."""
    deadline = time.monotonic() + STOP_DEADLINE_S
    while time.monotonic() < deadline and not [row for row in servers(home) if row.client_name]:
        time.sleep(0.02)
    return servers(home)


def test_each_platform_stops_on_its_own_signals() -> None:
    assert stop_signal_names("linux") == POSIX_STOP_SIGNALS == ("SIGTERM", "SIGINT", "SIGHUP")
    assert stop_signal_names("darwin") == POSIX_STOP_SIGNALS
    # The C runtime raises SIGBREAK for Ctrl+Break and the console's close, logoff and shutdown events.
    assert stop_signal_names("win32") == WINDOWS_STOP_SIGNALS == ("SIGINT", "SIGBREAK")


@POSIX_ONLY
@pytest.mark.parametrize("name", POSIX_STOP_SIGNALS)
def test_a_health_check_that_initializes_then_signals_leaves_an_exited_row_and_no_crash_notice(
    home: Path, server: RawServer, name: str
) -> None:
    with Journal.open(AppPaths.from_environment()) as tray_view:
        supervisor = Supervisor(tray_view)
        supervisor.poll()
        assert server.initialize()["result"]["serverInfo"]["name"] == "cowork-terminal"
        [row] = registered(home)
        assert row.state == "live"
        assert row.client_label == "claude-code 2.1.0", "the name is recorded with the handshake, before any request"
        supervisor.poll()

        server.process.send_signal(getattr(signal, name))
        assert server.wait(STOP_DEADLINE_S) == 0, f"serve did not end on {name}"
        _, notices = supervisor.poll()
    [row] = servers(home)
    assert row.state == "exited"
    assert SERVER_CRASHED not in [n.kind for n in notices]
    assert f"stopped by {name}" in server.stderr()
    assert "Traceback" not in server.stderr()


@POSIX_ONLY
def test_a_signal_at_once_after_the_handshake_is_no_crash_whether_or_not_the_server_had_registered(
    home: Path, server: RawServer
) -> None:
    with Journal.open(AppPaths.from_environment()) as tray_view:
        supervisor = Supervisor(tray_view)
        supervisor.poll()
        server.initialize()
        server.process.send_signal(signal.SIGTERM)  # as `claude mcp list` does, without a pause
        assert server.wait(STOP_DEADLINE_S) == 0
        _, notices = supervisor.poll()
    assert [row.state for row in servers(home)] in ([], ["exited"])
    assert SERVER_CRASHED not in [n.kind for n in notices]
    assert "stopped by SIGTERM" in server.stderr()


@POSIX_ONLY
def test_sigterm_while_a_command_runs_ends_its_tree_and_closes_its_row(home: Path, server: RawServer) -> None:
    marker = f"41{os.getpid() % 1000}.5"
    server.initialize()
    server.send_call("execute_command", json.dumps({"command": f"sleep {marker} & sleep {marker}; echo never"}))
    deadline = time.monotonic() + STOP_DEADLINE_S
    while time.monotonic() < deadline and len(live_processes(f"sleep {marker}")) < 3:
        time.sleep(0.05)
    assert len(live_processes(f"sleep {marker}")) == 3  # bash and its two sleeps

    server.process.send_signal(signal.SIGTERM)
    assert server.wait(STOP_DEADLINE_S) == 0
    assert live_processes(f"sleep {marker}") == []
    with Journal(AppPaths(home, home / "logs")) as journal:
        [row] = journal.recent_commands()
    # The server ended under it (issue 22): interrupted, and said so, not "cancelled by the client".
    assert row.status is Status.INTERRUPTED and row.reason == SERVER_EXITED_REASON, row
    assert [s.state for s in servers(home)] == ["exited"]


@POSIX_ONLY
def test_a_server_given_no_handshake_registers_after_a_while_and_a_signal_then_leaves_an_exited_row(
    home: Path, server: RawServer
) -> None:
    deadline = time.monotonic() + STOP_DEADLINE_S
    while time.monotonic() < deadline and not (home / "journal.sqlite3").exists():
        time.sleep(0.01)
    while time.monotonic() < deadline and not servers(home):
        time.sleep(0.01)
    server.process.send_signal(signal.SIGTERM)
    assert server.wait(STOP_DEADLINE_S) == 0
    assert [s.state for s in servers(home)] == ["exited"]
    assert "Traceback" not in server.stderr()


def test_serve_loads_neither_its_host_side_nor_the_classifier_nor_other_command_groups_before_the_handshake() -> None:
    import subprocess

    code = (
        "import sys, json, app.cli.main as main; main.build_parser(main.SERVE_MODULES); "
        "import app.server.mcp_server; print(json.dumps(sorted(sys.modules)))"
    )
    loaded = set(
        json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    )
    assert "app.server.mcp_server" in loaded
    for later in (
        "tree_sitter",
        "app.core.classifier.analyzer",
        "app.cli.journal_commands",
        "app.cli.client_commands",
        "app.cli.desktop_commands",
        "app.core.authority.supervisor",
        "app.server.host_side",
        "app.server.tools",
        "app.core.journal.store",
        "app.core.commands.service",
        "app.core.commands.tray_link",
        "app.core.liveness",  # the lock comes with the host side, which takes it
    ):
        assert later not in loaded, f"{later} is loaded before the handshake"


@POSIX_ONLY
def test_a_tray_bound_server_told_to_stop_is_exited_with_its_client_named_and_the_tray_lives_on(home: Path) -> None:
    from tests.tray_process import running_tray

    with running_tray(home) as tray:
        server = RawServer(home)  # not headless: bound to the tray, which writes its row
        try:
            server.initialize(client="claude-code", version="2.1.0")
            deadline = time.monotonic() + STOP_DEADLINE_S
            while time.monotonic() < deadline and not [s for s in servers(home) if s.client_name]:
                time.sleep(0.05)
            server.process.send_signal(signal.SIGTERM)
            assert server.wait(STOP_DEADLINE_S) == 0
            while time.monotonic() < deadline and servers(home)[0].state == "live":
                time.sleep(0.05)
            [row] = servers(home)
            assert row.state == "exited" and row.client_label == "claude-code 2.1.0"
            assert tray.poll() is None
        finally:
            server.close()
    log = (home.parent / "tray.log").read_text(errors="replace")
    assert "server crashed" not in log.lower()
