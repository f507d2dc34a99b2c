"""The mark a command's processes carry in their environment, and finding them by it.

Ending a command's process group misses a descendant that called `setsid` (it left the group),
and a server killed with SIGKILL ends nothing at all. So every process a server starts carries
`COWORK_TERMINAL_RUN=<mark>` in its environment, which its children inherit; on Linux the marks
can be read back from `/proc/<pid>/environ` and the processes ended. `orphans` decides whose.

Elsewhere (macOS, Windows) no process environment can be read here, so nothing is found: macOS
keeps the limits of the group kill, and Windows ends whole trees with `taskkill /T` anyway. A
process that clears its environment escapes too: this is a clean-up, not a containment.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Collection
from pathlib import Path

MARK_ENV = "COWORK_TERMINAL_RUN"
PROC_ROOT = Path("/proc")
_MARK_PREFIX = f"{MARK_ENV}=".encode()


def children(pid: int, proc: str = "/proc", task: int | None = None) -> list[int]:
    """The direct children of `pid`, or of its thread `task` only (Linux; empty when unknown): a
    process started from another thread is that thread's child in /proc."""
    try:
        with open(f"{proc}/{pid}/task/{pid if task is None else task}/children") as handle:
            return [int(p) for p in handle.read().split()]
    except (OSError, ValueError):
        return []


def reads_marks(platform: str) -> bool:
    """Whether marks can be read back here: Linux only. Under Wine a Windows Python sees the Linux
    host's /proc, whose pids are not Windows pids (found by the wine lane: a headless server read
    marks there and took that for being able to end what its commands left)."""
    return platform.startswith("linux")


def marked_processes(proc_root: Path = PROC_ROOT) -> dict[int, str]:
    """Every readable process with a mark, as {pid: mark}; empty where marks cannot be read."""
    found: dict[int, str] = {}
    if not reads_marks(sys.platform):
        return found
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


def parent_pid(pid: int, proc_root: Path = PROC_ROOT) -> int | None:
    """The parent of `pid` as this /proc shows it (Linux), or None when it cannot be read."""
    try:
        stat = (proc_root / str(pid) / "stat").read_text()
        return int(stat.rsplit(")", 1)[1].split()[1])  # the field after the state is the parent's pid
    except (OSError, IndexError, ValueError):
        return None


def _ancestors(proc_root: Path) -> set[int]:
    """This process and those above it: a mark inherited from far up must never end them."""
    chain: set[int] = set()
    pid: int | None = os.getpid()
    while pid is not None and pid > 1 and pid not in chain:
        chain.add(pid)
        pid = parent_pid(pid, proc_root)
    return chain


def kill(pids: Collection[int], proc_root: Path = PROC_ROOT) -> list[int]:
    """SIGKILL `pids`, never this process or one above it; returns those that were ended."""
    spared = _ancestors(proc_root)
    ended = []
    for pid in pids:
        if pid in spared:
            continue
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            continue
        ended.append(pid)
    return ended


def end_marked_where(chosen: Callable[[str], bool], proc_root: Path = PROC_ROOT) -> list[int]:
    """SIGKILL every process whose mark is `chosen`; returns their pids (the one walk the others share)."""
    return kill([pid for pid, mark in marked_processes(proc_root).items() if chosen(mark)], proc_root)


def end_marked_under(run_mark: str, spared: Collection[str] = (), proc_root: Path = PROC_ROOT) -> list[int]:
    """SIGKILL every process a command of the server with `run_mark` left (`{run_mark}:{what}`), but
    those marked as one of `spared` (the commands that run now, which end as they end)."""
    prefix = f"{run_mark}:"
    return end_marked_where(lambda mark: mark.startswith(prefix) and mark not in spared, proc_root)


def end_marked_any(marks: Collection[str], proc_root: Path = PROC_ROOT) -> list[int]:
    """SIGKILL every process that carries one of `marks`; returns their pids."""
    wanted = set(marks)
    return end_marked_where(wanted.__contains__, proc_root)


def end_marked(mark: str, proc_root: Path = PROC_ROOT) -> list[int]:
    """SIGKILL every process that carries exactly `mark`; returns their pids."""
    return end_marked_where(mark.__eq__, proc_root)
