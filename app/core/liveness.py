"""Who is alive: a process holds an OS file lock for as long as it lives, others test the lock.

The operating system drops the lock when its holder dies, however it dies, and keeps it across
sleep and resume; so "is the tray running?" and "did that server crash?" never depend on a
timestamp going stale, and the answer costs one non-blocking lock attempt (well under a
millisecond). `filelock` gives the same semantics on POSIX (flock) and Windows (msvcrt).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from filelock import FileLock, Timeout

from app.core.paths import PRIVATE_FILE_MODE

PATIENCE_POLL_S = 0.02


class HeldLock:
    """A lock this process holds until `release()` or its death."""

    def __init__(self, lock: FileLock) -> None:
        self._lock = lock

    def release(self) -> None:
        self._lock.release(force=True)


def _lock_for(path: Path) -> FileLock:
    # A new, non-singleton object each time: a test from this same process then really asks the
    # OS instead of counting up a re-entrant lock it already holds.
    return FileLock(path, is_singleton=False, fallback_to_soft=False, thread_local=False, mode=PRIVATE_FILE_MODE)


def try_hold(path: Path, *, patience_s: float = 0.0) -> HeldLock | None:
    """Take the lock at `path` if nobody holds it; None when another holder is alive.

    `patience_s`: a process about to live under the lock (the tray) waits this long, because
    another process may be probing it (`is_held`) for a moment at the same instant.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = _lock_for(path)
    try:
        lock.acquire(timeout=patience_s, poll_interval=PATIENCE_POLL_S)
    except Timeout:
        return None
    return HeldLock(lock)


def is_held(path: Path) -> bool:
    """True while some live process holds the lock at `path`."""
    if not path.exists():
        return False
    try:
        probe = try_hold(path)
    except OSError as exc:
        if exc.errno not in (errno.EROFS, errno.EACCES) or os.name != "posix":
            raise
        return _is_held_read_only(path)
    if probe is None:
        return True
    probe.release()
    return False


def _is_held_read_only(path: Path) -> bool:
    """The same test where the lock file cannot be opened for writing (a command's container binds
    the data folder read-only): flock works on a descriptor opened only to read."""
    import fcntl  # POSIX only

    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops a lock this probe took
    return False
