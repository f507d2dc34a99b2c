"""Replace a file's contents all at once: readers see the old file or the new one, never half of it.

The new bytes go to a temporary file in the same folder (a rename is only atomic within one file
system), are flushed to disk, and then `os.replace` swaps them in. On any failure the temporary
file is removed and the original is untouched.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from app.core.paths import PRIVATE_FILE_MODE


def write_atomic(path: Path, data: bytes, mode: int = PRIVATE_FILE_MODE) -> None:
    """Write `data` to `path` atomically, creating the file with permission bits `mode` (POSIX).

    The folder must exist. Raises OSError unchanged; the caller words it for the user.
    """
    fd, temp_name = _create_temp(path, mode)
    try:
        with os.fdopen(fd, "wb") as temp:
            temp.write(data)
            temp.flush()
            os.fsync(temp.fileno())
        os.replace(temp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        raise
    _sync_folder(path.parent)


def _create_temp(path: Path, mode: int) -> tuple[int, str]:
    """Open a new, exclusive temporary file next to `path`; a leading dot keeps it out of listings."""
    fd, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    if os.name == "posix":
        os.fchmod(fd, mode)  # mkstemp made it 0600; give it exactly the mode asked for
    return fd, temp_name


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (POSIX); best effort, as Windows cannot open a folder."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
