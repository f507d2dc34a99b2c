"""A journal written by a newer Cowork Terminal (its schema version above this one's), and uninstall
finding the servers without the journal and never the tray (tests/test_red_team_twelve_versions.py
has the end-to-end cases: serve, the CLI, the tray, `uninstall --yes`)."""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core import data_folder, liveness
from app.core.install import app_processes, uninstall
from app.core.install.installation import this_install
from app.core.journal.schema import SCHEMA_VERSION
from app.core.journal.store import Journal
from app.core.paths import AppPaths

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/locks is Linux's")


def make_newer(paths: AppPaths) -> None:
    Journal(paths).close()
    with contextlib.closing(sqlite3.connect(paths.journal)) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
        db.commit()


@contextlib.contextmanager
def holding(*locks: Path) -> Iterator[subprocess.Popen[str]]:
    """A process of this install's program (this Python) that holds `locks` until it is ended."""
    code = (
        "import sys, time; from pathlib import Path; from app.core import liveness; "
        "held = [liveness.try_hold(Path(p)) for p in sys.argv[1:]]; print('held', flush=True); time.sleep(600)"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code, *map(str, locks)], stdout=subprocess.PIPE, text=True, cwd=Path.cwd()
    )
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "held"
        yield process
    finally:
        process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()


def test_a_newer_journal_is_refused_in_words_and_left_as_it_is(paths: AppPaths) -> None:
    make_newer(paths)
    before = paths.journal.read_bytes()
    with pytest.raises(data_folder.NewerJournalError) as refused:
        Journal(paths)
    problem = refused.value
    assert isinstance(problem, data_folder.DataFolderError) and problem.kind == data_folder.NEWER
    said = str(problem)
    assert f"The activity log {paths.journal} was written by a newer Cowork Terminal" in said
    assert f"format {SCHEMA_VERSION + 1}" in said and f"knows format {SCHEMA_VERSION} and older" in said
    assert "install the newer Cowork Terminal again" in said
    assert f"move that file (and its -wal and -shm files, if there are any) out of {paths.data_dir}" in said
    person = problem.for_person()
    assert str(paths.journal) in person and "Install the newer Cowork Terminal again" in person
    # Nothing moved aside, nothing written: the newer version still reads its own file.
    assert paths.journal.read_bytes() == before
    assert not list(paths.data_dir.glob("journal.corrupt-*"))
    with contextlib.closing(sqlite3.connect(paths.journal)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1


def test_a_journal_moved_aside_as_told_gives_a_new_one(paths: AppPaths) -> None:
    make_newer(paths)
    paths.journal.rename(paths.data_dir / "kept.sqlite3")
    with Journal(paths) as journal:
        assert journal.schema_version() == SCHEMA_VERSION


@linux_only
def test_with_a_newer_journal_the_servers_are_found_by_their_locks(paths: AppPaths) -> None:
    make_newer(paths)
    with holding(paths.server_lock("abc")) as server:
        assert app_processes.live_servers(paths, sys.executable) == [server.pid]


@linux_only
def test_the_tray_holding_its_runners_locks_is_never_a_server(paths: AppPaths) -> None:
    """The tray holds its lock and a runner's; a server holds its own. With the journal's rows (the
    runner's row has the tray's pid) and without the journal (a newer version's), only the server."""
    with holding(paths.tray_lock, paths.server_lock("runner")) as tray, holding(paths.server_lock("srv")) as server:
        with Journal(paths) as journal:
            journal.register_server(tray.pid, headless=False, lock_key="runner")
            journal.register_server(server.pid, headless=False, lock_key="srv")
        assert app_processes.tray_pids(paths) == {tray.pid}
        assert app_processes.live_servers(paths, sys.executable) == [server.pid]
        make_newer(paths)
        assert app_processes.live_servers(paths, sys.executable) == [server.pid]


def test_where_the_locks_cannot_tell_uninstall_says_the_servers_are_unknown(
    paths: AppPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_newer(paths)
    monkeypatch.setattr(app_processes, "_holders", lambda files, proc_root: None)  # macOS, Windows
    with pytest.raises(app_processes.ServersUnknown):
        app_processes.live_servers(paths, sys.executable)
    plan = uninstall.plan_uninstall(paths, this_install(), delete_data=False, home=tmp_path / "no-desktop")
    assert plan.servers == ()
    assert any("could not be listed" in line and "quit Claude Desktop" in line for line in plan.manual), plan.manual


def test_a_planned_server_gone_since_is_not_signalled(paths: AppPaths, monkeypatch: pytest.MonkeyPatch) -> None:
    """The window may wait long between its plan and the click: a pid freed meanwhile (here: no
    server holds a lock now) is not signalled."""
    signalled: list[list[int]] = []
    monkeypatch.setattr(app_processes, "stop_processes", lambda pids: signalled.append(pids) or pids)
    plan = uninstall.UninstallPlan(install=this_install(), servers=(4_000_000,))
    report = uninstall.run_uninstall(plan, paths)
    assert signalled == [[]], report


def test_the_lock_of_a_live_server_is_what_counts(paths: AppPaths) -> None:
    """A server that ended lets go of its lock: it is not listed after (the lock file stays)."""
    with holding(paths.server_lock("gone")) as server:
        with Journal(paths) as journal:
            journal.register_server(server.pid, headless=True, lock_key="gone")
        if sys.platform.startswith("linux"):
            assert app_processes.live_servers(paths, sys.executable) == [server.pid]
    deadline = time.monotonic() + 5
    while liveness.is_held(paths.server_lock("gone")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert app_processes.live_servers(paths, sys.executable) == []
