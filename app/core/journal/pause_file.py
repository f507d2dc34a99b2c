"""The pause switch in a form that survives a full disk: a small file, allocated once, overwritten in place.

Pausing must work exactly when things go wrong, and a full disk is one of those times: SQLite
needs free pages for any write (its WAL grows first), so `settings.paused` alone cannot be set
then. This file always holds one fixed-size record; writing it in place needs no new block on
ordinary filesystems (copy-on-write ones such as btrfs or APFS may still need one). The journal
reads it first (`Journal.is_paused`) and writes it before the setting.
"""

from __future__ import annotations

import os
from pathlib import Path

from app.core.paths import PRIVATE_FILE_MODE

RECORD_BYTES = 64
PAUSED, RESUMED = b"paused=1", b"paused=0"


def record(paused: bool) -> bytes:
    return (PAUSED if paused else RESUMED).ljust(RECORD_BYTES - 1) + b"\n"


def read(path: Path) -> bool | None:
    """The switch as the file holds it; None when there is no valid record (never written)."""
    try:
        with open(path, "rb") as file:
            head = file.read(len(PAUSED))
    except OSError:
        return None
    return True if head == PAUSED else False if head == RESUMED else None


def write(path: Path, paused: bool) -> None:
    """Overwrite the record in place (no truncation, so its block stays allocated) and flush it."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, PRIVATE_FILE_MODE)
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, record(paused))
        os.fsync(fd)
    finally:
        os.close(fd)


def ensure(path: Path, paused: bool) -> None:
    """Allocate the file while there is room, holding the switch as it stands."""
    if read(path) is None:
        write(path, paused)


def stamp(path: Path) -> int:
    """Changes when the file is written: lets cheap "did anything change?" checks see a pause."""
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0
