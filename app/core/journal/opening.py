"""Opening the journal's file safely: damage found before and after SQLite opens it, a new journal
built whole, and set-up steps retried while another process does the same (issue 11)."""

from __future__ import annotations

import os
import secrets
import sqlite3
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from app.core import data_folder
from app.core.journal import schema
from app.core.paths import make_private_file

BUSY_TIMEOUT_S = 10.0
LOCKED_RETRY_S = 0.02
TRUNCATED = "the file is shorter than its header says (truncated)"


def damage_before_open(path: Path) -> str | None:
    """An emptied journal: SQLite would silently take it for a new one. A journal is never
    empty otherwise, since `build_whole` builds it whole under another name first."""
    try:
        empty = path.stat().st_size == 0
    except FileNotFoundError:
        return None
    return "emptied to 0 bytes" if empty and not Path(f"{path}-wal").exists() else None


def truncation(db: sqlite3.Connection, path: Path) -> str | None:
    """Why the file is shorter than its own header says (truncated), checked without reading every
    page; SQLite finds other damage itself when it reads. None when it is whole."""
    wal = Path(f"{path}-wal")
    if wal.exists() and wal.stat().st_size > 0:
        return None  # the WAL may hold pages beyond the end of the file
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    size = path.stat().st_size
    return f"{TRUNCATED} ({size:,} of {pages * page_size:,} bytes)" if size < pages * page_size else None


def damage_on_disk(path: Path, *, every_page: bool = False) -> str | None:
    """What SQLite says is wrong with the journal as it is on disk now, read through a connection
    of its own (another connection may keep serving its cached pages); None when it reads whole.
    `every_page`: SQLite's quick check of every page (80 ms for 100,000 commands here), as the tray
    starts: a page only a later read finds kept the tray from starting at all (2026-12-05)."""
    try:  # mode=rw: a journal deleted meanwhile is not created here
        probe = sqlite3.connect(f"{path.absolute().as_uri()}?mode=rw", uri=True, timeout=BUSY_TIMEOUT_S)
    except sqlite3.Error:
        return None  # cannot open it at all: a missing or unreadable file is told elsewhere
    try:
        if every_page:
            found = probe.execute("PRAGMA quick_check(1)").fetchone()[0]
            if found != "ok":
                return str(found)
        probe.execute("SELECT count(*) FROM sqlite_master").fetchone()
        probe.execute("SELECT count(value) FROM settings").fetchone()
        return truncation(probe, path)
    except sqlite3.DatabaseError as exc:
        return str(exc) if data_folder.is_corrupt(exc) else None
    finally:
        probe.close()


GONE = "deleted, or replaced by another file"  # DamageWatch.damage: not the file a connection opened

# A file written less than this before a look that found it whole is looked at again next time: a
# write in the same tick of the file system's clock would leave its times as they were (git's "racy
# clean" rule). A journal in WAL mode has its file written only at checkpoints, so it is mostly older.
SETTLED_S = 1.0


class DamageWatch:
    """`damage_on_disk` for one journal, skipped while the file is the one a look found whole and
    nothing wrote it since: its device, inode, size and change time (which a program cannot set
    back, unlike the modification time) all as they were. The look opens a connection of its own
    (about 0.2 ms); a server that runs its commands itself takes one before each command's row."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._whole_as: tuple[int, ...] | None = None

    def damage(self, opened_as: tuple[int, int] | None = None) -> str | None:
        """What is wrong with the file (None: nothing). `opened_as`: the device and inode a connection
        opened, told apart from the file at the path by the same stat: GONE when that was deleted,
        or another file put there. A connection goes on writing into a deleted file unseen, and
        `damage_on_disk` finds nothing wrong with a file that is not there (a red team, 2026-12-06)."""
        signature = _signature(self.path)
        if opened_as is not None and (signature is None or signature[:2] != opened_as):
            self._whole_as = None
            return GONE
        if signature is not None and signature == self._whole_as:
            return None
        looked_at = time.time_ns()
        damage = damage_on_disk(self.path)
        settled = signature is not None and looked_at - max(signature[3], signature[4]) > SETTLED_S * 1e9
        self._whole_as = signature if damage is None and settled else None
        return damage


def _signature(path: Path) -> tuple[int, ...] | None:
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns


def retry_while_locked(step: Callable[[], object]) -> None:
    """Run a set-up step that SQLite does not wait for: switching a new file to WAL, or its first
    migration, fails at once with "database is locked" while another process does the same (two
    servers starting together on a fresh install)."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            step()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(LOCKED_RETRY_S)


def still_damaged(path: Path) -> bool:
    """Another process may have replaced it already: look at the file as it is now."""
    if damage_before_open(path):
        return True
    probe = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S)
    try:
        probe.execute("SELECT count(*) FROM sqlite_master").fetchone()
        probe.execute("SELECT count(value) FROM settings").fetchone()  # its rows (count(*) reads its index)
        return truncation(probe, path) is not None
    except sqlite3.DatabaseError as exc:
        return data_folder.is_corrupt(exc)
    finally:
        probe.close()


def build_whole(path: Path) -> None:
    """Build a new journal whole under a private name, then link it into place: nobody ever
    sees an empty journal (which is how an emptied one is told apart), and a second process
    creating one at the same moment keeps the first one's."""
    fresh = path.with_name(f"{path.stem}.new-{os.getpid()}-{secrets.token_hex(4)}{path.suffix}")
    make_private_file(fresh)
    try:
        db = sqlite3.connect(fresh, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("BEGIN IMMEDIATE")
            schema.migrate(db, path)
            db.execute("COMMIT")
        finally:
            db.close()
        with suppress(FileExistsError):
            os.link(fresh, path)
    finally:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{fresh}{suffix}").unlink(missing_ok=True)


def can_write(folder: Path) -> bool:
    """Whether this process may write in the data folder. Inside a command's container it is bound
    read-only (issue 21), and a reader must not try: opening for writing fails there."""
    return os.access(folder, os.W_OK)


def connect_read_only(path: Path, *, check_same_thread: bool = True) -> sqlite3.Connection:
    """A connection that never writes, for readers in a read-only folder (the CLI's `log` and
    `status` run by a command in its container). While a writer has the journal open, its -wal and
    -shm files exist and `mode=ro` reads through them; with no writer there is no WAL, the file is
    whole, and `immutable=1` opens it without the -shm file SQLite could not create."""
    uri = path.absolute().as_uri()
    try:
        db = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_S, check_same_thread=check_same_thread)
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError:
        wal = Path(f"{path}-wal")
        if wal.exists() and wal.stat().st_size > 0:
            raise  # committed pages live in the WAL: reading the file alone would lie
        db = sqlite3.connect(
            f"{uri}?mode=ro&immutable=1", uri=True, timeout=BUSY_TIMEOUT_S, check_same_thread=check_same_thread
        )
    db.row_factory = sqlite3.Row
    return db
