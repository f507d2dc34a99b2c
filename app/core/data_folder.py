"""What can be wrong with the data folder, in words a person can act on (issue 11).

A full disk, a read-only or missing folder, and a damaged journal are not bugs of ours, so they
must never show as a traceback: each entry point prints the message, `serve` answers every call
with it, and a damaged journal is moved aside (never deleted) for a new one. The message is English
(the model reads it); a person reads `for_person()`, said in their language from what the problem is.
"""

from __future__ import annotations

import errno
import shutil
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from app.core.errors import CoworkError
from app.core.i18n import _
from app.core.i18n.formats import format_number
from app.core.paths import AppPaths, make_private_dir

FULL, READ_ONLY, MISSING = "full", "read-only", "missing"
NEWER = "newer"  # the journal of a newer version (NewerJournalError)
FULL_ERRNOS = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}
READ_ONLY_ERRNOS = {errno.EROFS, errno.EACCES, errno.EPERM}
CORRUPT_SQLITE_ERRORS = ("SQLITE_NOTADB", "SQLITE_CORRUPT")
CORRUPT_SQLITE_TEXT = ("file is not a database", "database disk image is malformed")
READ_ONLY_SQLITE_TEXT = ("readonly database", "unable to open database file", "read-only")


class DataFolderError(CoworkError, sqlite3.OperationalError):
    """The data folder cannot hold the journal right now; the text says why and what to do.

    Also an `sqlite3.OperationalError`, which is what the journal raised for these before: code
    that handles a failed write that way (the tray's hub answers its servers with the reason) still
    does, and now has words to pass on."""

    def __init__(
        self, kind: str, message: str, folder: Path | None = None, reason: str = "", free: int | None = None
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.folder = folder
        self.reason = reason  # the OS's or SQLite's own words
        self.free = free  # bytes left on the disk (a full disk), None when unknown

    def for_person(self) -> str:
        """The problem in the user's language: the same facts, the person's words."""
        folder = str(self.folder)
        if self.kind == FULL:
            free = _("free space unknown") if self.free is None else _("{size} free").format(size=size_text(self.free))
            return _(
                "The disk that holds Cowork Terminal's data is full ({folder}, {free}). Commands are refused "
                "until there is free space, because each one is recorded before it runs."
            ).format(folder=folder, free=free)
        if self.kind == READ_ONLY:
            return _(
                "Cowork Terminal's data folder {folder} cannot be written ({reason}). Commands are refused until "
                "it can be, because each one is recorded before it runs."
            ).format(folder=folder, reason=self.reason)
        if self.kind == MISSING:
            return _(
                "Cowork Terminal's data folder {folder} does not exist and cannot be created ({reason}). "
                "Commands are refused until it can be."
            ).format(folder=folder, reason=self.reason)
        return str(self)


def human_size(size: int) -> str:
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} bytes"


def size_text(size: int) -> str:
    """`human_size` in the user's language and number format ("1,5 GB")."""
    for unit, scale in ((_("{size} GB"), 1 << 30), (_("{size} MB"), 1 << 20), (_("{size} KB"), 1 << 10)):
        if size >= scale:
            return unit.format(size=format_number(size / scale, 1))
    return _("{size} B").format(size=size)


def free_bytes(folder: Path) -> int | None:
    """How much room the disk holding `folder` has left (None: unknown)."""
    for candidate in (folder, *folder.parents):
        try:
            return shutil.disk_usage(candidate).free
        except OSError:
            continue
    return None


def full_disk(folder: Path) -> DataFolderError:
    free = free_bytes(folder)
    said = "free space unknown" if free is None else f"{human_size(free)} free"
    return DataFolderError(
        FULL,
        f"the disk that holds Cowork Terminal's data is full ({folder}, {said}); "
        "commands are refused until space is freed, because each one is recorded before it runs.",
        folder,
        free=free,
    )


def read_only(folder: Path, reason: str) -> DataFolderError:
    return DataFolderError(
        READ_ONLY,
        f"Cowork Terminal's data folder {folder} cannot be written ({reason}); commands are refused "
        "until it is writable again, because each one is recorded before it runs.",
        folder,
        reason,
    )


def missing(folder: Path, reason: str) -> DataFolderError:
    return DataFolderError(
        MISSING,
        f"Cowork Terminal's data folder {folder} does not exist and cannot be created ({reason}); "
        "commands are refused until it can be.",
        folder,
        reason,
    )


class NewerJournalError(DataFolderError, RuntimeError):
    """The journal was written by a newer Cowork Terminal (its schema version is above this one's):
    this version must not write it, so commands are refused, as for a folder it cannot write. Never
    moved aside or deleted for the person: the newer version reads it, and its history is theirs.
    Also a RuntimeError, which is what `schema.migrate` raised for it before."""

    def __init__(self, journal: Path, found: int, known: int) -> None:
        from app import __version__

        self.journal = journal
        self.found = found
        self.known = known
        self.version = __version__
        super().__init__(
            NEWER,
            f"The activity log {journal} was written by a newer Cowork Terminal (its format "
            f"{found}; this version, {__version__}, knows format {known} and older), so this version cannot "
            "record commands and refuses them. Tell the user to install the newer Cowork Terminal again; or, "
            f"to go on with this version, to quit Cowork Terminal and move that file (and its -wal and -shm "
            f"files, if there are any) out of {journal.parent}: this version then starts a new, empty "
            "activity log, and the old history stays in the moved file.",
            journal.parent,
        )

    def for_person(self) -> str:
        return _(
            "The activity log {path} was written by a newer Cowork Terminal (its format {found}; "
            "this version, {version}, knows format {known} and older), so this version cannot record "
            "commands and refuses them. Install the newer Cowork Terminal again; or, to go on with this "
            "version, quit Cowork Terminal and move that file (and its -wal and -shm files, if there are "
            "any) out of {folder}: this version then starts a new, empty activity log, and the old history "
            "stays in the moved file."
        ).format(
            path=self.journal, found=self.found, version=self.version, known=self.known, folder=self.journal.parent
        )


def ensure(paths: AppPaths) -> AppPaths:
    """Create the data, log and lock folders, private to the user (0700) on POSIX, and return
    `paths`. A folder that cannot be made (read-only, full disk) raises DataFolderError, whose text
    says which and why. (Here rather than in paths, which the words of that error depend on.)"""
    for folder in (paths.data_dir, paths.log_dir, paths.locks_dir):
        try:
            make_private_dir(folder)
        except OSError as exc:
            raise explain_os_error(folder, exc) or exc from None
    return paths


def explain_os_error(folder: Path, exc: OSError) -> DataFolderError | None:
    """The folder's problem behind an OSError, or None when it is something else."""
    reason = exc.strerror or str(exc)
    if exc.errno in FULL_ERRNOS:
        return full_disk(folder)
    if exc.errno in READ_ONLY_ERRNOS:
        return read_only(folder, reason)
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):  # a parent is gone, or is a file
        return missing(folder, reason)
    return None


def explain_sqlite_error(folder: Path, exc: sqlite3.Error) -> DataFolderError | None:
    """The folder's problem behind an SQLite error (a full disk, a read-only folder), or None."""
    if isinstance(exc, DataFolderError):  # explained already: its text would be wrapped twice
        return exc
    name = getattr(exc, "sqlite_errorname", "") or ""
    text = str(exc).lower()
    if name == "SQLITE_FULL" or "disk is full" in text:
        return full_disk(folder)
    if name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM")) or any(
        words in text for words in READ_ONLY_SQLITE_TEXT
    ):
        if not folder.exists():
            return missing(folder, "it is not there")
        return read_only(folder, "read-only" if "readonly" in text else str(exc))
    if name.startswith("SQLITE_IOERR") and free_bytes(folder) == 0:
        return full_disk(folder)
    return None


def is_corrupt(exc: sqlite3.Error) -> bool:
    """Whether SQLite says the file is not a database, or a damaged one."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name in CORRUPT_SQLITE_ERRORS or any(words in str(exc) for words in CORRUPT_SQLITE_TEXT)


@dataclass(frozen=True)
class Replacement:
    """A damaged journal was moved aside and a new one started."""

    moved_to: str
    reason: str
    at: float

    @property
    def message(self) -> str:
        return (
            f"The activity journal was damaged ({self.reason}), so it was moved aside to {self.moved_to} "
            "and a new one was started. Nothing was deleted; the old history is in that file."
        )

    def for_person(self) -> str:
        """`message` in the user's language."""
        return _(
            "The activity log was damaged ({reason}), so it was moved aside to {path} and a new one was "
            "started. Nothing was deleted; the old history is in that file."
        ).format(reason=self.reason, path=self.moved_to)


def corrupt_name(journal: Path, now: float) -> Path:
    """`journal.corrupt-<time>.sqlite3`, next to the journal; never an existing file."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    candidate = journal.with_name(f"{journal.stem}.corrupt-{stamp}{journal.suffix}")
    number = 1
    while candidate.exists():
        number += 1
        candidate = journal.with_name(f"{journal.stem}.corrupt-{stamp}-{number}{journal.suffix}")
    return candidate


def move_aside(journal: Path, reason: str, now: float | None = None) -> Replacement:
    """Rename the damaged journal (and its WAL and shared-memory files with it); delete nothing."""
    now = time.time() if now is None else now
    target = corrupt_name(journal, now)
    journal.rename(target)
    for suffix in ("-wal", "-shm"):
        side = Path(f"{journal}{suffix}")
        if side.exists():
            side.rename(Path(f"{target}{suffix}"))
    return Replacement(moved_to=str(target), reason=reason, at=now)
