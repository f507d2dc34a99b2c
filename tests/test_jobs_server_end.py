"""What a job's record says when its server ends under it (issue 22): Claude closed the server, or it
was sent SIGTERM. The row and what another server of the same app reads must say the server ended,
not that the client cancelled the command.

The server that ends is a real `serve` process (its client closes stdio, or it gets SIGTERM), and
so are a real tray and its servers where the tray runs the job; the other server of the same app,
which only reads the record or asks a stop, runs in this process (tests/in_process_server.py)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp_types import Implementation

from app.core.journal.store import Journal, Status
from app.core.messages import AGENT_STOP_REASON
from app.core.paths import AppPaths
from tests.channel_peers import running_hub
from tests.in_process_server import serving
from tests.stdio_client import STOP_DEADLINE_S, live_processes, server_params
from tests.test_jobs import COWORK, call, client_named
from tests.tray_process import running_tray

pytestmark = pytest.mark.anyio


def row_of(paths: AppPaths, job: int):
    with Journal.open(paths) as journal:
        return journal.get_command(job)


async def wait_for_process(marker: str) -> None:
    deadline = time.monotonic() + 10.0
    while time.monotonic() < deadline and not live_processes(marker):
        await anyio.sleep(0.05)
    assert live_processes(marker), "the job runs"


@asynccontextmanager
async def tray_bound(home: Path, name: str) -> AsyncIterator[Client]:
    params = server_params(home)  # no --headless: bound to the running tray
    async with Client(params, mode="legacy", client_info=Implementation(name=name, version="1.0.0")) as client:
        yield client


@asynccontextmanager
async def headless_here(home: Path, name: str) -> AsyncIterator[Client]:
    """A headless server in this process, called by the app `name` (another server of that app)."""
    async with serving(home, client_info=Implementation(name=name, version="1.0.0")) as client:
        yield client


@asynccontextmanager
async def bound_here(home: Path, name: str) -> AsyncIterator[Client]:
    """A server bound to the hub of this process (started first), called by the app `name`."""
    async with serving(home, bound=True, client_info=Implementation(name=name, version="1.0.0")) as client:
        yield client


async def test_a_job_whose_headless_server_is_closed_by_claude_is_recorded_as_ended_with_its_server(
    home: Path, paths: AppPaths
) -> None:
    marker = f"51{os.getpid() % 1000}.5"
    async with client_named(home, COWORK) as client:
        started = await call(client, "execute_command", {"command": f"sleep {marker}", "background": True})
        await wait_for_process(marker)
    deadline = time.monotonic() + STOP_DEADLINE_S
    while time.monotonic() < deadline and (live_processes(marker) or row_of(paths, started["jobId"]).status.is_active):
        await anyio.sleep(0.1)
    assert live_processes(marker) == [], "the job ended with its server"
    row = row_of(paths, started["jobId"])
    assert row.status is Status.INTERRUPTED, row
    assert row.reason == "the server exited while it ran or waited", row
    async with headless_here(home, COWORK) as another:
        read = await call(another, "command_wait", {"jobId": started["jobId"]})
    assert read["status"] == "finished" and read["exitCode"] is None
    assert read["note"].startswith("the server exited while it ran or waited"), read
    assert "run it again with execute_command" in read["note"] and "cancel" not in read["note"]


async def test_a_job_whose_tray_bound_server_is_closed_by_claude_goes_on_in_the_tray_until_stopped(
    home: Path, paths: AppPaths
) -> None:
    """The tray runs the job (issue 21): its server's end is not the job's; another server of the
    same app still finds it running and can stop it."""
    marker = f"51{os.getpid() % 1000}.5"
    with running_tray(home):
        async with tray_bound(home, COWORK) as client:
            started = await call(client, "execute_command", {"command": f"sleep {marker}", "background": True})
            await wait_for_process(marker)
        await anyio.sleep(1.0)  # the server is gone: its job is not
        assert live_processes(marker), "the job goes on after its server"
        assert row_of(paths, started["jobId"]).status is Status.RUNNING
        async with tray_bound(home, COWORK) as another:
            listed = await call(another, "command_list", {})
            assert started["jobId"] in [job["jobId"] for job in listed["jobs"]], listed
            stopped = await call(another, "command_stop", {"jobId": started["jobId"]})
        assert stopped["status"] == "finished" and stopped["exitCode"] is None, stopped
        row = row_of(paths, started["jobId"])
        assert row.status is Status.KILLED and row.reason == AGENT_STOP_REASON, row  # not the user's Stop
        await anyio.sleep(0.5)
        assert live_processes(marker) == []


async def test_a_job_whose_server_gets_sigterm_is_recorded_as_ended_with_its_server(
    home: Path, paths: AppPaths
) -> None:
    marker = f"52{os.getpid() % 1000}.5"
    async with client_named(home, COWORK) as client:
        started = await call(client, "execute_command", {"command": f"sleep {marker}", "background": True})
        await wait_for_process(marker)
        servers = [line.split()[0] for line in os.popen("ps -eo pid=,args=").read().splitlines() if "app serve" in line]
        with Journal.open(paths) as journal:
            pid = journal.get_command(started["jobId"]).server_pid
        assert str(pid) in servers
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_DEADLINE_S
        while time.monotonic() < deadline and row_of(paths, started["jobId"]).status.is_active:
            await anyio.sleep(0.1)
    row = row_of(paths, started["jobId"])
    assert row.status is Status.INTERRUPTED and row.reason == "the server exited while it ran or waited", row
    assert live_processes(marker) == []


@pytest.mark.parametrize("bound", ["headless", "tray"])
async def test_command_stop_from_another_server_right_after_a_background_job_returns_still_stops_it(
    home: Path, paths: AppPaths, bound: str
) -> None:
    """The job's process starts a moment after the call returned: a stop asked in that moment waits
    (in the record, or in the tray's push) and reaches the job as it starts. Two headless servers; or
    two servers bound to the tray's hub, as the tray's runners of two servers' calls are; both in
    this process (tests/in_process_server.py)."""
    marker = f"53{os.getpid() % 1000}.5"
    server = headless_here if bound == "headless" else bound_here
    with running_hub(paths) if bound == "tray" else contextlib.nullcontext():
        async with server(home, COWORK) as first, server(home, COWORK) as second:
            for _ in range(3):
                started = await call(first, "execute_command", {"command": f"sleep {marker}", "background": True})
                stopped = await call(second, "command_stop", {"jobId": started["jobId"]})
                assert stopped["status"] == "finished" and stopped["exitCode"] is None, stopped
                row = row_of(paths, started["jobId"])
                assert row.status is Status.KILLED and row.reason == AGENT_STOP_REASON, row  # not the user's Stop
    # A stop that came before the process started ends its container; the namespace's last
    # process goes a moment later.
    deadline = time.monotonic() + STOP_DEADLINE_S
    while live_processes(marker) and time.monotonic() < deadline:
        await anyio.sleep(0.05)
    assert live_processes(marker) == []
