"""Processes of a command's container that hold a lock on the journal: the tray ends them.

Why: the data folder is read-only in a command's container, but a read-only file still takes a
shared lock, and one on SQLite's write lock (byte 120 of the `-shm` file) refuses every writer, so
no command could be recorded, and so none could run (tests/test_journal_lock.py). Ending a
command's process is a tightening, as Stop is. Only processes the tray started in a container are
ended (their pid namespace is not the tray's and the tray is their ancestor): never the user's own
programs, nor another sandbox's (a Flatpak database browser has a pid namespace of its own too).
Linux only: elsewhere there is no /proc/locks, and nothing is ended.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterable
from pathlib import Path

from app.core.channel.peer import pid_namespace
from app.core.execution.process_marks import kill, parent_pid

log = logging.getLogger(__name__)

FileId = tuple[int, int, int]  # device major, minor, inode: as /proc/locks names a file


def parse_locks(text: str) -> list[tuple[int, FileId]]:
    """(pid, file) of each lock in /proc/locks' text ("1: POSIX ADVISORY READ 8813 fe:00:2557804 128 128")."""
    found = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 6 or fields[1] == "->":  # "->" lines are waiters, not holders
            continue
        with contextlib.suppress(ValueError):
            major, minor, inode = fields[5].split(":")
            found.append((int(fields[4]), (int(major, 16), int(minor, 16), int(inode))))
    return found


def file_id(path: Path) -> FileId | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return os.major(info.st_dev), os.minor(info.st_dev), info.st_ino


def started_by_us_in_a_container(pid: int, tray_pid: int, proc: Path = Path("/proc")) -> bool:
    """Whether `pid` runs in another pid namespace than the tray and descends from it."""
    theirs, ours = pid_namespace(pid, proc), pid_namespace(tray_pid, proc)
    if theirs is None or ours is None or theirs == ours:
        return False
    seen: set[int] = set()
    parent: int | None = pid
    while parent is not None and parent > 1 and parent not in seen:
        seen.add(parent)
        parent = parent_pid(parent, proc)
        if parent == tray_pid:
            return True
    return False


def end_contained_holders(files: Iterable[Path], tray_pid: int, proc: Path = Path("/proc")) -> list[int]:
    """End the processes of the tray's containers that hold a lock on any of `files`; their pids."""
    if not sys.platform.startswith("linux"):
        return []
    wanted = {fid for fid in map(file_id, files) if fid is not None}
    try:
        locks = parse_locks((proc / "locks").read_text())
    except OSError:
        return []
    holders = {pid for pid, fid in locks if fid in wanted and pid != tray_pid}
    ended = kill(sorted(pid for pid in holders if started_by_us_in_a_container(pid, tray_pid, proc)), proc)
    for pid in ended:
        log.warning("ended process %s of a command's container: it held a lock on the journal", pid)
    return ended
