"""The one way the classifier (and an approval's pins) reads a file it judges a command by: only a
regular file, opened non-blocking. A FIFO or a device a command puts where a script, a repository's
config or its index was (`mkfifo .git/config`) must not stall the classifier: a blocking open of
one waited forever for a writer (a review, 2026-12-05: `git status` after `rm .git/config &&
mkfifo .git/config` hung it)."""

from __future__ import annotations

import os
import stat


def read_regular(path: str, limit: int) -> bytes | None:
    """At most `limit` bytes of a regular file (a caller that must know whether there is more asks
    for one byte more); None when it is not one or cannot be read."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:  # looked at before it is opened: opening a serial port a link names resets the board on it
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        fd = os.open(path, flags)
    except (OSError, ValueError):  # ValueError: a NUL in the name
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # replaced in between
            return None
        chunks: list[bytes] = []
        size = 0
        while size < limit:  # a read may return less than asked before the end
            chunk = os.read(fd, min(limit - size, 1 << 24))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)
