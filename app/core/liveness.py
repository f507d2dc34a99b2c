"""Who is alive: a process holds an OS file lock for as long as it lives, others test the lock.

The operating system drops the lock when its holder dies, however it dies, and keeps it across
sleep and resume; so "is the tray running?" and "did that server crash?" never depend on a
timestamp going stale, and the answer costs one non-blocking lock attempt (well under a
millisecond). The lock is the OS's own: `flock` on the whole file on POSIX, byte 0 through
`msvcrt.locking` on Windows (what `filelock` did for us, without its 0.7 MB at import). Both
belong to one open file: a probe opens the file again, so even from the holder's own process it
really asks the OS. The file stays in place on release: a waiter that opened it locks the same file.
"""

from __future__ import annotations

import errno
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from app.core.paths import PRIVATE_FILE_MODE

PATIENCE_POLL_S = 0.02

if sys.platform == "win32":
    import msvcrt

    # O_NOINHERIT: a command the tray starts must not keep the tray's lock alive after it.
    _OPEN_FLAGS = os.O_RDWR | os.O_CREAT | os.O_BINARY | os.O_NOINHERIT

    def _take(fd: int) -> bool:
        """Lock byte 0 of `fd` without waiting; False while another open file holds it."""
        os.lseek(fd, 0, os.SEEK_SET)  # msvcrt.locking locks from the file position; a bad fd fails here
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            # With a good descriptor and byte, all that is left is LockFile's refusal: the C runtime
            # says EACCES for each, and Wine's sets no errno at all (errno 0 or an older one).
            return False
        return True

    def _let_go(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    # O_NOFOLLOW: a link planted at a lock's path is refused, not followed to create a file elsewhere.
    _OPEN_FLAGS = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
    # EACCES: some file systems (NFS) say so instead of EWOULDBLOCK.
    _CONTENDED = frozenset({errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES})

    def _take(fd: int) -> bool:
        """flock `fd` exclusively without waiting; False while another open file holds it."""
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in _CONTENDED:
                return False
            raise
        return True

    def _let_go(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)

    def _is_held_read_only(path: Path) -> bool:
        """The same test where the lock file cannot be opened for writing (a command's container binds
        the data folder read-only): flock works on a descriptor opened only to read."""
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)  # closing drops a lock this probe took
        return False


class HeldLock:
    """A lock this process holds until `release()`, until nothing refers to it, or until it dies."""

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            _let_go(fd)
        finally:
            os.close(fd)  # closing the last descriptor drops the lock even if the unlock failed

    def __del__(self, _close: Callable[[int], None] = os.close) -> None:
        # As with filelock, a lock nobody refers to is let go. By closing alone (os.close bound here,
        # as module globals may be gone at exit): a forked child shares the open file, and its
        # unlock would drop the parent's lock too, where its close does not.
        if self._fd is not None:
            _close(self._fd)


def try_hold(path: Path, *, patience_s: float = 0.0) -> HeldLock | None:
    """Take the lock at `path` if nobody holds it; None when another holder is alive.

    `patience_s`: a process about to live under the lock (the tray) waits this long, because
    another process may be probing it (`is_held`) for a moment at the same instant.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    return _hold(path, patience_s)


def _hold(path: Path, patience_s: float) -> HeldLock | None:
    deadline = time.monotonic() + patience_s
    fd = os.open(path, _OPEN_FLAGS, PRIVATE_FILE_MODE)  # a new open file: never one this process holds
    taken = False
    try:
        while not (taken := _take(fd)) and time.monotonic() < deadline:
            time.sleep(PATIENCE_POLL_S)
    finally:
        if not taken:
            os.close(fd)
    return HeldLock(fd) if taken else None


def is_held(path: Path) -> bool:
    """True while some live process holds the lock at `path`."""
    if not path.exists():
        return False
    try:
        probe = _hold(path, 0.0)
    except OSError as exc:
        if sys.platform != "win32" and exc.errno in (errno.EROFS, errno.EACCES):
            return _is_held_read_only(path)
        raise
    if probe is None:
        return True
    probe.release()
    return False
