"""The journal as every process shares it: schema, privacy, concurrency, retention, recovery."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.core import liveness
from app.core.journal.schema import SCHEMA_VERSION
from app.core.journal.store import Journal, Outcome, Status, preview
from app.core.paths import AppPaths
from app.core.settings import MAX_APPROVAL_WINDOW_S


def test_a_new_journal_is_in_wal_mode_at_the_current_schema_and_private(paths: AppPaths) -> None:
    with Journal.open(paths) as journal:
        journal.begin_command(command="echo", cwd="/")
        assert journal.schema_version() == SCHEMA_VERSION
    db = sqlite3.connect(paths.journal)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert stat.S_IMODE(paths.data_dir.stat().st_mode) == 0o700
    assert stat.S_IMODE(paths.journal.stat().st_mode) == 0o600


def test_a_journal_from_a_newer_app_is_refused_with_a_clear_message(paths: AppPaths) -> None:
    Journal(paths).close()
    db = sqlite3.connect(paths.journal)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(RuntimeError, match="newer Cowork Terminal"):
        Journal(paths)


def test_reopening_keeps_rows_and_does_not_migrate_twice(paths: AppPaths) -> None:
    with Journal.open(paths) as journal:
        journal.begin_command(command="first", cwd="/")
    with Journal.open(paths) as journal:
        assert [r.command for r in journal.recent_commands()] == ["first"]


def test_previews_keep_the_head_and_the_tail_of_long_output() -> None:
    text = preview(b"A" * 5000 + b"B" * 5000 + b"C" * 5000)
    assert text.startswith("A" * 2048)
    assert text.endswith("C" * 5000)
    assert "bytes not kept in the journal" in text


WRITER = """
import sys
from app.core.journal.store import Journal, Outcome, Status
from app.core.paths import AppPaths
journal = Journal.open(AppPaths.from_environment())
for i in range(int(sys.argv[1])):
    cid = journal.begin_command(command=f"writer {sys.argv[2]} #{i}", cwd="/")
    journal.finish_command(cid, Outcome(status=Status.FINISHED, exit_code=0))
"""


def test_several_processes_writing_at_once_lose_no_row(paths: AppPaths, cli_env: dict[str, str]) -> None:
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, "150", str(n)], env=cli_env) for n in range(4)]
    assert [w.wait(timeout=120) for w in writers] == [0, 0, 0, 0]
    with Journal.open(paths) as journal:
        rows = journal.recent_commands(limit=1000)
    assert len(rows) == 600
    assert all(r.status is Status.FINISHED for r in rows)


def test_retention_forgets_old_and_excess_rows_but_never_active_ones(paths: AppPaths) -> None:
    with Journal.open(paths) as journal:
        for i in range(30):
            cid = journal.begin_command(command=f"cmd {i}", cwd="/")
            if i != 0:
                journal.finish_command(cid, Outcome(status=Status.FINISHED, exit_code=0))
        deleted = journal.apply_retention(max_commands=10)
        assert deleted == 19
        remaining = journal.recent_commands(limit=100)
        assert [r.command for r in remaining][:10] == [f"cmd {i}" for i in range(29, 19, -1)]
        assert remaining[-1].command == "cmd 0"  # still running: kept whatever its age
        later = time.time() + 31 * 86_400
        assert journal.apply_retention(now=later) == 10
        assert [r.command for r in journal.recent_commands()] == ["cmd 0"]


def test_retention_by_size_trims_the_oldest_rows(paths: AppPaths) -> None:
    with Journal.open(paths) as journal:
        for i in range(200):
            cid = journal.begin_command(command=f"cmd {i}", cwd="/")
            journal.finish_command(cid, Outcome(status=Status.FINISHED, exit_code=0, stdout=os.urandom(8000)))
        deleted = journal.apply_retention(max_bytes=100_000)
        assert deleted == 40
        assert journal.recent_commands(limit=1)[0].command == "cmd 199"


def test_a_live_server_is_not_taken_for_dead(paths: AppPaths) -> None:
    with Journal.open(paths) as journal:
        lock = liveness.try_hold(paths.server_lock("k1"))
        server_id = journal.register_server(os.getpid(), headless=True, lock_key="k1")
        journal.begin_command(command="sleep", cwd="/", server_id=server_id)
        assert journal.recover_dead_servers() == []
        lock.release()
        assert journal.recover_dead_servers() == [server_id]
        [row] = journal.recent_commands()
        assert row.status is Status.INTERRUPTED


def test_stop_requests_reach_only_active_commands(paths: AppPaths) -> None:
    with Journal.open(paths) as journal:
        running = journal.begin_command(command="sleep", cwd="/")
        done = journal.begin_command(command="echo", cwd="/")
        journal.finish_command(done, Outcome(status=Status.FINISHED, exit_code=0))
        assert journal.request_stop(running) is True
        assert journal.request_stop(done) is False
        assert journal.stop_requests([running, done]) == {running}


def test_clear_history_keeps_running_commands(paths: AppPaths) -> None:
    with Journal.open(paths) as journal:
        journal.begin_command(command="running", cwd="/")
        finished = journal.begin_command(command="done", cwd="/")
        journal.finish_command(finished, Outcome(status=Status.FAILED, exit_code=1))
        assert journal.clear_history() == 1
        assert [r.command for r in journal.recent_commands()] == ["running"]


def test_data_version_moves_when_another_process_writes(paths: AppPaths, cli_env: dict[str, str]) -> None:
    with Journal.open(paths) as journal:
        before = journal.data_version()
        assert journal.data_version() == before
        subprocess.run([sys.executable, "-m", "app", "pause"], env=cli_env, check=True, capture_output=True)
        assert journal.data_version() != before
        assert journal.is_paused()


def test_home_override_moves_every_path(tmp_path: Path) -> None:
    paths = AppPaths.from_environment({"COWORK_TERMINAL_HOME": str(tmp_path / "x")})
    assert paths.journal == tmp_path / "x" / "journal.sqlite3"
    assert paths.log_dir == tmp_path / "x" / "logs"
    default = AppPaths.from_environment({})
    assert "cowork-terminal" in str(default.data_dir)


def test_connections_racing_to_create_a_new_journal_all_succeed(tmp_path: Path) -> None:
    """Switching a new file to WAL fails at once, without SQLite's busy wait, when another
    connection does the same: without a retry this failed about one run of this test in three."""
    import threading

    failures: list[str] = []
    for round_number in range(150):
        folder = tmp_path / f"fresh-{round_number}"
        fresh = AppPaths(folder, folder / "logs")

        def open_it(fresh: AppPaths = fresh) -> None:
            try:
                Journal(fresh).close()
            except sqlite3.OperationalError as exc:
                failures.append(str(exc))

        threads = [threading.Thread(target=open_it) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert failures == []


def test_a_lock_taken_with_patience_waits_out_a_probe(paths: AppPaths) -> None:
    import threading

    probe = liveness.try_hold(paths.tray_lock)  # another process's is_held(), caught mid-probe
    threading.Timer(0.1, probe.release).start()
    assert liveness.try_hold(paths.tray_lock) is None, "without patience the probe looks like a live tray"
    held = liveness.try_hold(paths.tray_lock, patience_s=1.0)
    assert held is not None
    assert stat.S_IMODE(paths.tray_lock.stat().st_mode) == 0o600
    held.release()


@pytest.mark.parametrize(
    ("stored_mode", "stored_window", "mode", "window"),
    [
        ("ask-me-nothing", "ten", "all", 1.0),  # unknown words: the strictest, as the tray reads them
        ("never", "nan", "never", 1.0),  # a NaN would end every wait at once, or never: the shortest
        ("all", 1e9, "all", MAX_APPROVAL_WINDOW_S),  # past the longest window: the longest
        ("all", "300", "all", 1.0),  # a number written as text: not a number, as the tray reads it
    ],
    ids=["unknown words", "nan", "too long", "text"],
)
def test_approval_settings_another_program_wrote_are_read_on_the_safe_side(
    paths: AppPaths, stored_mode: str, stored_window: object, mode: str, window: float
) -> None:
    from app.core import settings
    from app.core.policy import approval

    with Journal(paths) as journal:
        journal.set_setting(settings.APPROVAL_MODE, stored_mode)
        journal.set_setting(settings.APPROVAL_WINDOW_S, stored_window)
        assert approval.approval_mode(journal).value == mode
        assert approval.approval_window_s(journal) == window
        with pytest.raises(ValueError, match="between 1 and"):
            approval.set_approval_window_s(journal, float("nan"))


def test_the_trays_answer_is_recorded_even_when_its_server_ended_the_row_first(paths: AppPaths) -> None:
    """The tray pushes a Deny (or an Allow) to the command's server before it records it: a quick
    server recorded the command refused (or running) first, and the decision was then left out of the
    row ("denied by" missing in the log; a test without Tk failed so under load). The tray, which took
    the hold from its memory, records it whatever the row's status; anyone else only on a live hold."""
    with Journal(paths) as journal:
        ids = [
            journal.begin_command(
                command="rm -rf keep", cwd="/", status=Status.WAITING, hold_expires_at=time.time() + 60
            )
            for _ in range(2)
        ]
        for command_id in ids:
            journal.finish_command(command_id, Outcome(status=Status.REFUSED, reason="denied by user (tray menu)"))
        assert not journal.decide(ids[0], allowed=False, by="user (tray menu)"), "not taken: only a live hold"
        assert journal.decide(ids[1], allowed=False, by="user (tray menu)", taken=True)
        assert (journal.get_command(ids[1]).decision, journal.get_command(ids[1]).decided_by) == (
            "denied", "user (tray menu)",
        )  # fmt: skip
        assert not journal.decide(ids[1], allowed=True, by="user", taken=True), "answered once"
