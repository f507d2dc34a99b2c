"""What the journal lost, and no longer does (a red team, 2026-12-06, eleventh): the end of a command
written on a full disk (dropped, so its row said `interrupted`), and a headless server's rows and
settings after its journal was deleted (written into the deleted file, read from it)."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from app.core import data_folder, settings
from app.core.authority.record import Record
from app.core.commands.authority import NotRecorded, ServerAuthority
from app.core.journal.opening import GONE, DamageWatch
from app.core.journal.store import Journal, Outcome, Status
from app.core.paths import AppPaths
from app.core.policy.approval import MODE_SETTING, ApprovalMode

pytestmark = [pytest.mark.anyio]

DONE = Outcome(status=Status.FINISHED, exit_code=0)


@contextlib.contextmanager
def full_disk(journal: Journal, monkeypatch: pytest.MonkeyPatch, writes: int = 1) -> Iterator[None]:
    """The next `writes` ends of `journal` meet a full disk, as `Connection._write` says it."""
    real = journal.finish_command
    left = [writes]

    def finish(command_id: int, outcome: Outcome) -> None:
        if left[0] > 0:
            left[0] -= 1
            raise data_folder.full_disk(journal.paths.data_dir)
        real(command_id, outcome)

    monkeypatch.setattr(journal, "finish_command", finish)
    yield


def status_of(paths: AppPaths, command_id: int) -> tuple[str, int | None] | None:
    with contextlib.closing(sqlite3.connect(paths.journal)) as db:
        return db.execute("SELECT status, exit_code FROM commands WHERE id = ?", (command_id,)).fetchone()


def row(command: str) -> dict[str, Any]:
    return {"command": command, "cwd": "/", "status": Status.RUNNING}


def test_an_end_on_a_full_disk_is_raised_to_its_caller(paths: AppPaths) -> None:
    """Logged and swallowed here, the end was taken for written by the tray and by headless servers."""
    with Journal(paths) as journal:
        command_id = journal.begin_command(command="sleep 3", cwd="/")

        @contextlib.contextmanager
        def no_room() -> Iterator[sqlite3.Connection]:
            raise data_folder.full_disk(paths.data_dir)
            yield journal._db  # pragma: no cover - never reached

        journal._write = no_room  # type: ignore[method-assign]
        with pytest.raises(data_folder.DataFolderError):
            journal.finish_command(command_id, DONE)


def test_the_tray_writes_an_end_the_full_disk_refused_at_its_next_write(
    paths: AppPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    told: list[tuple[str, str]] = []
    record = Record(paths, lambda title, text: told.append((title, text)))
    try:
        job = record.journal.begin_command(command="sleep 3; echo done", cwd="/")
        with full_disk(record.journal, monkeypatch):
            record.finish(job, DONE)
            assert job in record.unwritten_ends, "kept, not taken for written"
            assert status_of(paths, job) == ("running", None)
            assert told, "the person is told the log cannot be written"
            record.journal.begin_command(command="echo space is back", cwd="/")
            record.wrote()  # the hub after each of its writes: no wait for the upkeep's retry
        assert status_of(paths, job) == ("finished", 0)
        assert record.unwritten_ends == {}
    finally:
        record.close()


async def test_a_headless_server_writes_an_end_the_full_disk_refused_with_its_next_row(
    paths: AppPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Journal(paths) as journal:
        authority = ServerAuthority(journal, None, headless=True)
        job = await authority.begin(**row("sleep 3; echo done"))
        with full_disk(journal, monkeypatch):
            authority.finish(job, DONE)  # the command ran: its end never raises into the job
            assert status_of(paths, job) == ("running", None)
            await authority.begin(**row("echo space is back"))
        assert status_of(paths, job) == ("finished", 0)


async def test_a_headless_server_writes_a_kept_end_as_it_leaves(
    paths: AppPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not marked `interrupted` by its own end_server while the end waits in memory."""
    with Journal(paths) as journal:
        server = journal.register_server(1, headless=True, lock_key=None)
        authority = ServerAuthority(journal, None, headless=True)
        job = await authority.begin(**row("sleep 3"), server_id=server)
        with full_disk(journal, monkeypatch):
            authority.finish(job, DONE)
        authority.end(server)
        assert status_of(paths, job) == ("finished", 0)


def test_a_watch_tells_a_deleted_or_replaced_file_from_one_stat(paths: AppPaths) -> None:
    with Journal(paths) as journal:
        watch = DamageWatch(paths.journal)
        assert watch.damage(journal.opened_as) is None
        for suffix in ("", "-wal", "-shm"):
            Path(f"{paths.journal}{suffix}").unlink(missing_ok=True)
        assert watch.damage(journal.opened_as) == GONE
        with Journal(paths):  # another process starts a new one there
            assert watch.damage(journal.opened_as) == GONE
        assert watch.damage() is None, "without `opened_as`, as the tray's Record asks: damage alone"


def delete(paths: AppPaths) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{paths.journal}{suffix}").unlink(missing_ok=True)


async def test_a_headless_server_follows_a_deleted_journal_and_keeps_its_stricter_settings(paths: AppPaths) -> None:
    """Its settings live on (a deleted file loosens nothing), its ids go on, its row is made again,
    and the command that found the file gone is refused, to be judged again under the new one."""
    with Journal(paths) as journal:
        journal.set_setting(MODE_SETTING, ApprovalMode.ALL.value)
        authority = ServerAuthority(journal, None, headless=True)
        first = await authority.begin(**row("echo one"))
        delete(paths)
        with pytest.raises(NotRecorded, match="was deleted or replaced, so a new one was started. Run the command"):
            await authority.begin(**row("echo two"))
        assert paths.journal.exists()
        with contextlib.closing(sqlite3.connect(paths.journal)) as db:
            rows = db.execute("SELECT id, status, command FROM commands").fetchall()
            servers = db.execute("SELECT pid FROM servers WHERE state = 'live'").fetchall()
        assert [(status, command) for _, status, command in rows] == [("refused", "echo two")]
        assert rows[0][0] > first, "no id a model holds is given again"
        assert servers, "the server is live in the new journal"
        assert authority.approval_mode() is ApprovalMode.ALL
        with Journal(paths) as reader:
            assert reader.get_setting(MODE_SETTING) == ApprovalMode.ALL.value
        third = await authority.begin(**row("echo three"))  # recorded in the new file
        assert status_of(paths, third) == ("running", None)


async def test_a_headless_server_follows_a_tightening_made_in_a_new_journal(paths: AppPaths) -> None:
    """The person's `approval-mode all` (the CLI, no tray) went into a new journal: the server obeys it."""
    with Journal(paths) as journal:
        journal.set_setting(settings.CONTAINER, False)  # the person's click, long ago
        authority = ServerAuthority(journal, None, headless=True)
        await authority.begin(**row("echo one"))
        delete(paths)
        with Journal(paths) as cli:
            cli.set_setting(MODE_SETTING, ApprovalMode.ALL.value)
        assert authority.approval_mode() is not ApprovalMode.ALL, "not seen before the next row"
        with pytest.raises(NotRecorded):
            await authority.begin(**row("echo two"))
        assert authority.approval_mode() is ApprovalMode.ALL
        assert authority.contained(), "a new journal holds the container on: the stricter stays"


async def test_a_headless_server_takes_its_running_jobs_rows_to_the_new_journal(
    paths: AppPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job that outlives the deletion keeps a row, and its end updates it."""
    with Journal(paths) as journal:
        server = journal.register_server(1, headless=True, lock_key="losses")
        link = SimpleNamespace(
            server_id=server, lock_key="losses", bound=False, connected=False, refusal=None, channel=None
        )
        link.take_undelivered = list
        authority = ServerAuthority(journal, link, headless=True)  # type: ignore[arg-type]
        job = await authority.begin(**row("sleep 60"), server_id=server)
        delete(paths)
        with pytest.raises(NotRecorded):
            await authority.begin(**row("echo two"), server_id=server)
        assert status_of(paths, job) == ("running", None)
        assert link.server_id != server or journal.live_server_pid(server) is not None
        authority.finish(job, DONE)
        assert status_of(paths, job) == ("finished", 0)


async def test_a_headless_start_whose_row_is_gone_is_refused_not_run_unrecorded(paths: AppPaths) -> None:
    """As the tray refuses one (`server_rows.started`): a review, 2026-12-06, found the headless path
    ran the command whatever `mark_started` said."""
    with Journal(paths) as journal:
        authority = ServerAuthority(journal, None, headless=True)
        command_id = journal.begin_command(command="rm -rf build", cwd="/", status=Status.WAITING)
        with contextlib.closing(sqlite3.connect(paths.journal)) as db, db:
            db.execute("DELETE FROM commands WHERE id = ?", (command_id,))
        with pytest.raises(NotRecorded, match="its record is missing from the activity log"):
            await authority.started(command_id)
