"""Replace a file's contents all at once: readers see the old file or the new one, never half of it.

The new bytes go to a temporary file in the same folder (a rename is only atomic within one file
system), are flushed to disk, and then `os.replace` swaps them in. On any failure the temporary
file is removed and the original is untouched.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from app.core.paths import PRIVATE_FILE_MODE


def write_atomic(
    path: Path,
    data: bytes,
    mode: int = PRIVATE_FILE_MODE,
    *,
    owner: tuple[int, int] | None = None,
    before_replace: Callable[[], None] | None = None,
) -> None:
    """Write `data` to `path` atomically, creating the file with permission bits `mode` (POSIX).

    `owner` (uid, gid), POSIX: the new file is given to them (root writing a user's file must not
    take it from the user). `before_replace` runs just before the rename, after the data is on disk:
    whatever it raises cancels the write (a check that the file was not changed meanwhile; the
    fsync can take seconds, and a check made before it would miss a save that lands during it).

    The folder must exist. Raises OSError unchanged; the caller words it for the user.
    """
    fd, temp_name = _create_temp(path, mode, owner)
    try:
        with os.fdopen(fd, "wb") as temp:
            temp.write(data)
            temp.flush()
            os.fsync(temp.fileno())
        if before_replace is not None:
            before_replace()
        os.replace(temp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        raise
    _sync_folder(path.parent)


def _create_temp(path: Path, mode: int, owner: tuple[int, int] | None = None) -> tuple[int, str]:
    """Open a new, exclusive temporary file next to `path`; a leading dot keeps it out of listings."""
    fd, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        if os.name == "posix":
            if owner is not None:
                os.fchown(fd, *owner)  # before the mode: a chown may clear set-id bits
            os.fchmod(fd, mode)  # mkstemp made it 0600; give it exactly the mode asked for
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        raise
    return fd, temp_name


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (POSIX); best effort, as Windows cannot open a folder."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
