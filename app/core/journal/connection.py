"""What every part of the journal stands on: one SQLite connection and its short write transaction."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from app.core import data_folder
from app.core.paths import AppPaths


def row_id(cursor: sqlite3.Cursor) -> int:
    """The id of the row an INSERT just made (never None after one)."""
    assert cursor.lastrowid is not None
    return cursor.lastrowid


class Connection:
    """The connection the journal's tables are read and written through (store.Journal opens it)."""

    paths: AppPaths
    _db: sqlite3.Connection

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One short write transaction. A full disk or a read-only folder raises DataFolderError,
        whose text says so (SQLite's own words name neither the folder nor what to do)."""
        try:
            # BEGIN IMMEDIATE takes the write lock up front, so two servers never deadlock upgrading.
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            if self._db.in_transaction:
                with suppress(sqlite3.Error):
                    self._db.execute("ROLLBACK")
            problem = data_folder.explain_sqlite_error(self.paths.data_dir, exc)
            if problem is None:
                raise
            raise problem from exc
