"""Find and end the processes a command left behind outside its process group.

Ending a command's process group misses two kinds of process: a descendant that called `setsid`
(it left the group), and everything a server started before it was killed with SIGKILL (nobody
was left to end the group). Every process a server starts carries a mark in its environment,
which its children inherit: `COWORK_TERMINAL_RUN=<home tag>:<server key>:<command id or session>`. On Linux the
marks can be read back from `/proc/<pid>/environ`, so such processes can be found and ended:
- `end_marked` ends what is left of one command (after a timeout, a Stop or a pause);
- `end_orphans` ends what servers of this app home left when they died (their lock is free).

Elsewhere (macOS, Windows) no process environment can be read, so both find nothing: macOS keeps
the group kill's limits, and Windows ends whole trees with `taskkill /T` anyway. A process that
clears its environment escapes too; this is a clean-up, not a containment.
"""

from __future__ import annotations

import hashlib
import os
import signal
from collections.abc import Callable
from pathlib import Path

from app.core import liveness
from app.core.paths import AppPaths

MARK_ENV = "COWORK_TERMINAL_RUN"
PROC_ROOT = Path("/proc")
_MARK_PREFIX = f"{MARK_ENV}=".encode()
SESSION = "session"  # the `<command>` part of a session shell's mark


def home_tag(paths: AppPaths) -> str:
    """A short tag of the app home, so that one home never ends another home's processes."""
    return hashlib.sha256(str(paths.data_dir).encode()).hexdigest()[:12]


def server_mark(paths: AppPaths, server_key: str) -> str:
    """The mark prefix of one server; a command's mark adds `:<what>` to it."""
    return f"{home_tag(paths)}:{server_key}"


def marked_processes(proc_root: Path = PROC_ROOT) -> dict[int, str]:
    """Every readable process with a mark, as {pid: mark}; empty where /proc does not exist."""
    found: dict[int, str] = {}
    try:
        entries = list(proc_root.iterdir())
    except OSError:
        return found
    for entry in entries:
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:  # gone meanwhile, or another user's process
            continue
        for item in environ.split(b"\0"):
            if item.startswith(_MARK_PREFIX):
                found[int(entry.name)] = item[len(_MARK_PREFIX) :].decode("utf-8", "replace")
                break
    return found


def _kill(pids: list[int]) -> list[int]:
    ended = []
    for pid in pids:
        if pid == os.getpid():
            continue
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            continue
        ended.append(pid)
    return ended


def end_marked(mark: str, proc_root: Path = PROC_ROOT) -> list[int]:
    """SIGKILL every process that carries exactly `mark`; returns their pids."""
    return _kill([pid for pid, found in marked_processes(proc_root).items() if found == mark])


def end_orphans(paths: AppPaths, left_running: Callable[[int], bool], proc_root: Path = PROC_ROOT) -> list[int]:
    """SIGKILL what dead servers of this app home left running; returns the pids.

    Left running means: a command the server was running when it died (`left_running(id)`, from
    the journal: Journal.was_left_running), or anything from its session shell. A background job
    of a command that had finished (`npm run dev &`) stays, as it did while its server lived.
    """
    tag = home_tag(paths) + ":"
    alive: dict[str, bool] = {}
    orphans = []
    for pid, mark in marked_processes(proc_root).items():
        if not mark.startswith(tag):
            continue
        key, _, what = mark[len(tag) :].partition(":")
        if key not in alive:
            alive[key] = liveness.is_held(paths.server_lock(key))
        if alive[key]:
            continue
        if what == SESSION or (what.isdigit() and left_running(int(what))):
            orphans.append(pid)
    return _kill(orphans)
