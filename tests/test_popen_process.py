"""A process started by subprocess.Popen, awaited as anyio's Process (core/execution/popen_process.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from app.core.execution.popen_process import PopenProcess

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="spares, its one user, are Linux only"),
]


def started(*argv: str) -> PopenProcess:
    return PopenProcess(subprocess.Popen(argv))


@pytest.mark.parametrize("pidfd", [True, False], ids=["pidfd", "no pidfd (polled)"])
async def test_waiting_gives_the_exit_code_or_the_signal(pidfd: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if not pidfd:  # a kernel before 5.3
        monkeypatch.delattr(os, "pidfd_open")
    exits = started("sh", "-c", "sleep 0.2; exit 3")
    assert exits.returncode is None
    with anyio.fail_after(10):
        assert await exits.wait() == 3
    assert exits.returncode == 3
    killed = started("sleep", "30")
    killed.kill()
    with anyio.fail_after(10):
        assert await killed.wait() == -signal.SIGKILL


async def test_signals_reach_it_and_stop_once_it_has_ended() -> None:
    process = started("sleep", "30")
    process.terminate()
    with anyio.fail_after(10):
        assert await process.wait() == -signal.SIGTERM
    process.send_signal(signal.SIGKILL)  # ended and reaped: no signal goes to a pid reused since
    await process.aclose()
    assert process.pid > 0 and process.stdin is None and process.stdout is None and process.stderr is None


def test_a_process_nobody_waits_for_is_reaped_as_it_ends() -> None:
    """A container outlives its command's call while a background job runs: no zombie is left."""
    process = started("sleep", "0.1")
    stat = Path(f"/proc/{process.pid}/stat")
    deadline = time.monotonic() + 10
    while stat.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not stat.exists(), "reaped, not a zombie"
    while process.returncode is None and time.monotonic() < deadline:  # the reaping thread sets it just after
        time.sleep(0.01)
    assert process.returncode == 0
