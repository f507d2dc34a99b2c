"""The CLI run by a command inside its container (issue 21): the data folder is read-only there, so
`log` and `status` must read without writing, and whatever would write still fails."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from app.core import liveness
from app.core.journal.store import Journal
from app.core.paths import AppPaths
from app.core.policy.approval import ApprovalMode, set_approval_mode
from tests.channel_peers import running_hub
from tests.in_process_server import serving
from tests.stdio_client import connect, run

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("bwrap") is None, reason="bwrap (Linux)"),
]
PACKAGE = Path(__file__).resolve().parents[1]
CLI = f"cd {PACKAGE} && {sys.executable} -m app"


def never_ask(paths: AppPaths) -> None:
    """The user's own earlier choice: running the app's own CLI is not held for a click here."""
    with Journal.open(paths) as journal:
        set_approval_mode(journal, ApprovalMode.NEVER)


async def test_log_and_status_work_inside_a_command_while_pausing_from_there_still_cannot_write(
    home: Path, paths: AppPaths
) -> None:
    never_ask(paths)
    async with connect(home) as client:
        first = await run(client, {"command": "echo marker-of-the-first-command"})
        assert first["exitCode"] == 0, first
        where = await run(client, {"command": f"touch {paths.data_dir}/probe"})
        assert "Read-only file system" in where["stderr"], "the data folder is read-only in the container"
        log = await run(client, {"command": f"{CLI} log --limit 5"})
        status = await run(client, {"command": f"{CLI} status"})
        pause = await run(client, {"command": f"{CLI} pause"})
    assert log["exitCode"] == 0 and log["stderr"] == "", log
    assert "echo marker-of-the-first-command" in log["stdout"]
    assert status["exitCode"] == 0 and status["stderr"] == "", status
    assert status["stdout"].splitlines()[:2] == ["Host access: on", "Tray app: not running"]
    assert "Live server: pid" in status["stdout"]
    assert pause["exitCode"] != 0 and "cannot be written" in pause["stderr"], pause  # it ran, and failed
    with Journal.open(paths) as journal:
        assert not journal.is_paused()


async def test_status_inside_a_command_sees_the_running_tray_through_its_read_only_lock(
    home: Path, paths: AppPaths
) -> None:
    """The tray is this process: it holds the tray's lock as `cowork-terminal tray` takes it, and its
    hub runs the command of a server bound to it (tests/in_process_server.py). In the container the
    CLI cannot reach the tray's socket: the lock, read through the read-only folder, is all it has."""
    never_ask(paths)
    lock = liveness.try_hold(paths.tray_lock)
    assert lock is not None
    try:
        with running_hub(paths):
            async with serving(home, bound=True) as client:
                status = await run(client, {"command": f"{CLI} status"})
    finally:
        lock.release()
    assert status["exitCode"] == 0 and status["stderr"] == "", status
    assert "Tray app: running" in status["stdout"].splitlines()


def test_log_reads_a_journal_nobody_has_open_from_a_read_only_folder(paths: AppPaths, cli_env: dict) -> None:
    """No writer: no WAL and no -shm file, which SQLite cannot create in a read-only folder."""
    import subprocess

    with Journal.open(paths) as journal:
        journal.begin_command(command="echo left-from-yesterday", cwd="/")
    assert not Path(f"{paths.journal}-wal").exists()
    data = str(paths.data_dir)
    done = subprocess.run(
        ["bwrap", "--dev-bind", "/", "/", "--ro-bind", data, data, sys.executable, "-m", "app", "log"],
        env=cli_env,
        cwd=PACKAGE,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stderr == "", done
    assert "echo left-from-yesterday" in done.stdout
