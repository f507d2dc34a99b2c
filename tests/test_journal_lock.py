"""An agent's command that holds a lock on the journal (issue 21, a red-team route): the data
folder is read-only in its container, but a read-only file still takes a shared lock, and a shared
lock on byte 120 of SQLite's `-shm` file (the write lock of its write-ahead log) refuses every
writer. Before, the tray's monitor died on the first refused write and took the tray with it, and
the end of a command that finished meanwhile was lost. Now the tray lives on, refuses what it cannot
record (failing closed), says why once, and records the end once the lock is gone (lock_holders.py,
tests/test_lock_holders*). Since 2026-12-05 the data folder is empty in every container: the
command does not reach the journal at all, and every end is recorded at once."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from app.core.journal.store import Journal, Status
from app.core.paths import AppPaths
from app.core.policy.approval import ApprovalMode, set_approval_mode
from tests.agent_scripts import agent_script
from tests.desktop_env import wait_for
from tests.stdio_client import connect, run
from tests.tray_process import running_tray

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("bwrap") is None, reason="bwrap (Linux)"),
]

LOCKER = """
import fcntl, os, sys, time
while not os.path.exists(sys.argv[2]):  # the next command runs: its row is written
    time.sleep(0.05)
fd = os.open(sys.argv[1], os.O_RDONLY)  # read-only: all the container allows
fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB, 1, 120)
open(sys.argv[3], "w").write("locked")
time.sleep(600)  # held for as long as it lives
"""


async def test_a_command_cannot_reach_the_journal_to_lock_it_and_every_end_is_recorded(
    home: Path, paths: AppPaths, tmp_path: Path
) -> None:
    with Journal.open(paths) as journal:  # the user's choice: nothing waits for a click here
        set_approval_mode(journal, ApprovalMode.NEVER)
    running, locked = tmp_path / "running", tmp_path / "locked"
    shm = f"{paths.journal}-shm"
    with running_tray(home) as tray:
        async with connect(home, headless=False) as client:
            job = agent_script(LOCKER, background=True, args=(shm, str(running), str(locked)))
            assert (await run(client, {"command": job}))["exitCode"] == 0
            ended = await run(client, {"command": f"touch {running}; sleep 1; echo finished; exit 7"})
            assert (ended["stdout"], ended["exitCode"]) == ("finished\n", 7), ended  # the model has it

            def recorded() -> bool:
                with Journal.open(paths) as journal:
                    row = next(r for r in journal.recent_commands() if r.command.startswith(f"touch {running}"))
                return (row.status, row.exit_code) == (Status.FAILED, 7)

            wait_for(recorded, timeout_s=10)  # the tray writes it as the call ends: nothing held the lock
        assert tray.poll() is None, "the tray lives on"
    assert not locked.exists(), "the journal's files are not there to lock"
