"""The activity journal: the record of every command, one SQLite file, and its reads and writes.

While a tray runs it writes the rows its servers send and the user's decisions; the log window
and the CLI read (docs/ARCHITECTURE.md, "Who writes what"). SQLite in WAL mode lets writers and
readers work at once; each write is one short transaction. All of the app's SQL is in this folder:
the tables (schema.py), opening and repairing the file (opening.py), the values (records.py),
retention (retention.py) and the old Windows folder's move (migration.py). This module opens
the file; the queries are in commands_table.py (the commands) and side_tables.py (settings,
servers, rules), over connection.py's write transaction.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from app.core import data_folder, liveness, settings
from app.core.data_folder import Replacement
from app.core.journal import commands_table, opening, pause_file, schema
from app.core.journal.commands_table import CommandsTable
from app.core.journal.records import (  # noqa: F401 - re-exported: callers import the records from the store
    REFUSED_TEXT_KEEP_CHARS,
    CommandRecord,
    Outcome,
    ServerRecord,
    Status,
    bounded,
    preview,
    storable,
)
from app.core.journal.side_tables import PAUSED_SETTING, SideTables
from app.core.paths import PRIVATE_FILE_MODE, AppPaths, file_identity

log = logging.getLogger(__name__)

JOURNAL_REPLACED_SETTING = settings.JOURNAL_REPLACED
WAL_SIZE_LIMIT_BYTES = 4 * 1024 * 1024  # the WAL is cut back to this after a checkpoint


@contextmanager
def repairing(paths: AppPaths) -> Iterator[None]:
    """One process at a time moves a damaged journal aside, looking at it again under this lock: the
    one that noticed first may have started a new file meanwhile, which must not be moved aside."""
    lock = liveness.try_hold(paths.locks_dir / "journal-repair.lock", patience_s=opening.BUSY_TIMEOUT_S)
    try:
        yield
    finally:
        if lock is not None:
            lock.release()


class Journal(CommandsTable, SideTables):
    """One connection to the journal. Cheap to open; open one per process (or per thread)."""

    def __init__(
        self,
        paths: AppPaths,
        *,
        check_same_thread: bool = True,
        busy_timeout_s: float = opening.BUSY_TIMEOUT_S,
        read_only: bool = False,
    ) -> None:
        """Open the journal; a damaged one is moved aside for a new one (`self.replaced` says so),
        and a data folder that cannot hold it raises DataFolderError with the reason in words.
        `read_only` opens it only to read, changing nothing on disk (opening.connect_read_only)."""
        self.paths = paths
        self.read_only = read_only
        self._busy_timeout_s = busy_timeout_s
        self._check_same_thread = check_same_thread
        self.path = paths.journal
        self.replaced: Replacement | None = None
        try:
            if read_only:
                self._db = opening.connect_read_only(self.path, check_same_thread=check_same_thread)
                return
            data_folder.ensure(paths)
            self._connect(check_same_thread)
        except OSError as exc:
            raise data_folder.explain_os_error(paths.data_dir, exc) or exc from None
        except sqlite3.Error as exc:
            raise data_folder.explain_sqlite_error(paths.data_dir, exc) or exc from None
        if self.replaced is not None:
            self._tell_replaced(self.replaced)
        with suppress(OSError):  # a read-only folder: reading works, and a pause says why it cannot be set
            pause_file.ensure(paths.pause_file, bool(self._stored_setting(PAUSED_SETTING, False)))

    def _connect(self, check_same_thread: bool, known: int | None = None) -> None:
        damage = opening.damage_before_open(self.path)
        if damage:
            self._replace(damage)
        if not self.path.exists():
            from app.core.journal import migration  # Windows: the folder an older version used, once

            migration.migrate_if_needed(self.paths)
        if not self.path.exists():
            opening.build_whole(self.path)
        self._db = self._open_connection(check_same_thread)
        try:
            self._prepare()
            self._db.execute("SELECT count(value) FROM settings").fetchone()  # its rows, not its index: read next
            damage = opening.truncation(self._db, self.path)
            if damage:
                raise sqlite3.DatabaseError(damage)
        except sqlite3.DatabaseError as exc:
            if not data_folder.is_corrupt(exc) and not str(exc).startswith(opening.TRUNCATED):
                self._db.close()
                raise
            self._db.close()
            self._replace(str(exc))
            opening.build_whole(self.path)
            self._db = self._open_connection(check_same_thread)
            self._prepare()
        if self.replaced is not None:  # moved aside here: the new file goes on above its ids
            self.go_on_above(commands_table.ids_given_in(Path(self.replaced.moved_to), known))
        self._opened_as = file_identity(self.path)  # what follow_renewal compares the path with

    def go_on_above(self, last: int) -> None:
        """Give no id up to `last` (commands_table.raise_id_floor); a journal that cannot be written
        now leaves ids to start again, said in the log rather than failing its opening."""
        try:
            self.raise_id_floor(last)
        except sqlite3.OperationalError as exc:
            log.warning("the new journal could not be told to go on after id %s: %s", last, exc)

    def _open_connection(self, check_same_thread: bool) -> sqlite3.Connection:
        if os.name == "posix":
            # chmod, never open+close: closing any descriptor of the database drops every POSIX lock
            # this process holds on it, including those of its other open connections; another
            # process then thinks it closes the last connection and deletes the WAL under them.
            os.chmod(self.path, PRIVATE_FILE_MODE)
        db = sqlite3.connect(
            self.path,
            timeout=self._busy_timeout_s,
            isolation_level=None,  # we open transactions ourselves, short and explicit
            check_same_thread=check_same_thread,
        )
        db.row_factory = sqlite3.Row
        return db

    def _prepare(self) -> None:
        opening.retry_while_locked(lambda: self._db.execute("PRAGMA journal_mode=WAL"))
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT_BYTES}")
        self._db.execute("PRAGMA foreign_keys=ON")
        opening.retry_while_locked(self._migrate)
        opening.retry_while_locked(self._add_missing)
        for suffix in ("-wal", "-shm"):
            sidecar = Path(f"{self.path}{suffix}")
            if sidecar.exists() and os.name == "posix":
                os.chmod(sidecar, 0o600)

    def _replace(self, reason: str) -> None:
        """Move the damaged journal aside, once, whoever notices first (under a lock, looking again)."""
        with repairing(self.paths):
            if self.path.exists() and opening.still_damaged(self.path):
                self.replaced = data_folder.move_aside(self.path, reason)

    def _tell_replaced(self, replaced: Replacement) -> None:
        """The user hears of it: on stderr now (the CLI, serve's log in Claude), and from the tray
        (the supervisor reads the setting and notifies once)."""
        log.info("%s", replaced.message)
        if sys.stderr is not None:
            print(f"cowork-terminal: {replaced.for_person()}", file=sys.stderr, flush=True)
        with suppress(data_folder.DataFolderError):
            self.set_setting(JOURNAL_REPLACED_SETTING, dataclasses.asdict(replaced))

    @property
    def opened_as(self) -> tuple[int, int] | None:
        """The file this connection opened, by device and inode (`paths.file_identity`); None read-only."""
        opened: tuple[int, int] | None = getattr(self, "_opened_as", None)
        return opened

    def follow_renewal(self) -> None:
        """Open the file now at the journal's path when another is (the tray started a new journal,
        the old one deleted or damaged): a connection kept reading the old file, so a server's
        command_wait followed a job in it for good (a review, 2026-12-05). Nothing while none is."""
        now = file_identity(self.path)
        if now is not None and now != self._opened_as:
            self.reopen()

    def reopen(self) -> None:
        """Open the file at the journal's path again, in this same object: it was damaged under this
        connection (then it is moved aside for a new one, once, whoever notices first) or replaced."""
        known = None
        with suppress(sqlite3.Error):  # the old file's ids, as far as this connection still reads them
            known = self.last_command_id()
        with suppress(sqlite3.Error):
            self._db.close()
        self.replaced = None
        try:
            self._connect(self._check_same_thread, known)
        except OSError as exc:
            raise data_folder.explain_os_error(self.paths.data_dir, exc) or exc from None
        except sqlite3.Error as exc:
            raise data_folder.explain_sqlite_error(self.paths.data_dir, exc) or exc from None
        if self.replaced is not None:
            self._tell_replaced(self.replaced)

    @classmethod
    def open(cls, paths: AppPaths | None = None, **kwargs: Any) -> Journal:
        """Open the journal and mark commands whose server died as interrupted (unless a tray runs:
        then the tray alone writes the journal, and it does that itself)."""
        journal = cls(paths or AppPaths.from_environment(), **kwargs)
        if not journal.read_only and not liveness.is_held(journal.paths.tray_lock):
            journal.recover_dead_servers()
        return journal

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- plumbing ---------------------------------------------------------------------------

    def _migrate(self) -> None:
        if not schema.needs_migration(self._db):
            return  # the usual case: no write lock for it
        with self._write() as db:  # read again under the lock: another process may have migrated
            schema.migrate(db, self.path)

    def _add_missing(self) -> None:
        """Create the added tables and columns that this file lacks (schema.ADDED_TABLES)."""
        if schema.missing_parts(self._db) == ([], []):
            return  # the usual case: no write lock for it
        with self._write() as db:  # look again under the lock: another process may have added them
            schema.add_parts(db, *schema.missing_parts(db))

    def schema_version(self) -> int:
        return self._db.execute("PRAGMA user_version").fetchone()[0]

    def data_version(self) -> int:
        """Changes whenever another connection commits, or the pause file is written (a pause on a
        full disk lives only there): a cheap 'did anything happen?' check."""
        return hash((self.others_commits(), pause_file.stamp(self.paths.pause_file)))

    def own_changes(self) -> int:
        """Rows this connection changed so far: with `data_version`, whether anything wrote the file."""
        return self._db.total_changes

    def others_commits(self) -> int:
        """SQLite's `PRAGMA data_version`: it moves when another connection commits, never for this
        connection's own writes (so a foreign write is seen whatever this connection writes after it)."""
        return int(self._db.execute("PRAGMA data_version").fetchone()[0])

    def size_bytes(self) -> int:
        return sum(
            Path(f"{self.path}{suffix}").stat().st_size
            for suffix in ("", "-wal")
            if Path(f"{self.path}{suffix}").exists()
        )
