"""Time stamps of a tool call's hops between `serve`, the tray's hub and its command host, for the bench.

A server refuses a tray started under a profiler (not the program it accepts as its tray, issue 21),
so bench/tray_call_bench.py `--hops` times the tray path this way instead: with
COWORK_TERMINAL_HOP_TIMES=1 in a process's environment at its start, each `mark` appends one line
(monotonic ns, pid, hop) to `hop-times.txt` in the data folder (one monotonic clock serves every
process of the machine). Time stamps and names only, into our own folder; nothing a call does
changes. Without the variable `mark` returns at once.
"""

from __future__ import annotations

import os
import time

HOPS_ENV = "COWORK_TERMINAL_HOP_TIMES"
HOPS_FILE = "hop-times.txt"

_enabled = os.environ.get(HOPS_ENV) == "1"
_fd: int | None = None


def _open() -> int | None:
    global _enabled, _fd
    from app.core.paths import AppPaths

    try:
        folder = AppPaths.from_environment().data_dir
        folder.mkdir(parents=True, exist_ok=True)
        _fd = os.open(folder / HOPS_FILE, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    except OSError:
        _enabled = False
    return _fd


def mark(hop: str) -> None:
    """Note that a call reached `hop` now (a no-op unless the bench asked for hop times)."""
    if not _enabled:
        return
    fd = _fd if _fd is not None else _open()
    if fd is not None:
        os.write(fd, f"{time.monotonic_ns()} {os.getpid()} {hop}\n".encode())
