"""The CLI run by a command inside its container (issue 21): the data folder is empty and read-only
there (the journal holds every app's commands), so nothing of it is read and whatever would write
fails; the CLI itself still reads a journal in a read-only folder."""

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


async def test_inside_a_command_the_cli_finds_no_activity_log_and_pausing_from_there_cannot_write(
    home: Path, paths: AppPaths
) -> None:
    """The journal keeps every app's commands and their output: a red team (2026-12-05) read another
    app's secrets in it from a command. The data folder is empty and read-only in the container, so
    `log` and `status` there find nothing, and what would write still fails."""
    never_ask(paths)
    async with connect(home) as client:
        first = await run(client, {"command": "echo marker-of-the-first-command"})
        assert first["exitCode"] == 0, first
        where = await run(client, {"command": f"touch {paths.data_dir}/probe; ls -A {paths.data_dir}"})
        assert "Read-only file system" in where["stderr"] and where["stdout"] == "", where
        log = await run(client, {"command": f"{CLI} log --limit 5"})
        status = await run(client, {"command": f"{CLI} status"})
        pause = await run(client, {"command": f"{CLI} pause"})
    for said in (log, status, pause):
        assert said["exitCode"] != 0 and "marker-of-the-first-command" not in said["stdout"], said
        assert "data folder" in said["stderr"], said  # said in words, no traceback
    with Journal.open(paths) as journal:
        assert not journal.is_paused()


async def test_the_trays_commands_see_its_lock_file_alone_in_an_empty_data_folder(home: Path, paths: AppPaths) -> None:
    """The tray is this process: it holds the tray's lock as `cowork-terminal tray` takes it, and its
    hub runs the command of a server bound to it (tests/in_process_server.py). Its commands see that
    lock, read-only (a flock on it waits for the tray, never takes it), and nothing else of the folder."""
    never_ask(paths)
    lock = liveness.try_hold(paths.tray_lock)
    assert lock is not None
    try:
        with running_hub(paths):
            async with serving(home, bound=True) as client:
                seen = await run(client, {"command": f"cd {paths.data_dir} && find . | sort"})
    finally:
        lock.release()
    assert seen["stdout"].split() == [".", "./locks", "./locks/tray.lock"], seen


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
