"""Which program this is: the files on disk it runs from, so that the tray can tell when they were
replaced under it (an update or a downgrade while it runs) before it starts a window from them.

A frozen build is one executable: its identity is that file's. A source install is the `app`
package's files. The identity is a digest of each file's path, size, modification time and file
number (`os.stat`), never of its bytes: a window starts often, and a stat of the ~300 files costs
about a millisecond where reading them would cost far more. A file replaced, written or added
changes it; `__pycache__` does not count (Python writes it on its own).
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

# The window's side of the handshake: set by the tray in the environment of a window it starts
# (ui/windows/link.py), which then says its identity first on its line.
SAY_PROGRAM_ENV = "COWORK_TERMINAL_SAY_PROGRAM"
PACKAGE_ROOT = Path(__file__).resolve().parents[1]  # the `app` folder this process loaded


def program_identity(*, frozen: bool | None = None, executable: str | None = None, root: Path | None = None) -> str:
    """The identity of the program as it is on disk now (a file that cannot be read counts as
    missing: an identity too, and one that never matches a program that ran from it)."""
    frozen = bool(getattr(sys, "frozen", False)) if frozen is None else frozen
    if frozen:
        return hashlib.sha256(_line("", executable or sys.executable).encode()).hexdigest()
    base = str(root or PACKAGE_ROOT)
    lines, folders = [], [base]
    while folders:
        folder = folders.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            lines.append(_line(folder[len(base) :], None))
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    folders.append(entry.path)
            elif not entry.name.endswith((".pyc", ".pyo")):
                lines.append(_line(entry.path[len(base) :], entry.path))
    lines.sort()
    return hashlib.sha256("".join(lines).encode("utf-8", "surrogateescape")).hexdigest()


def _line(name: str, path: str | None) -> str:
    try:
        if path is None:
            raise OSError
        found = os.stat(path)
    except OSError:
        return f"{name}\0missing\n"
    return f"{name}\0{found.st_size}\0{found.st_mtime_ns}\0{found.st_ino}\n"
