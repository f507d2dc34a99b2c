"""This install's running tray and servers: finding them and stopping them (for `uninstall` and `tray --quit`).

The tray is asked to quit through the journal and is gone when its lock is free. A server is one
that the journal lists as live, whose lock is still held (so its pid is still that server), and,
on Linux, whose program file is this install's: a server of another copy of the app that shares the
data folder is left alone. Processes are matched by their program's path, never by its name.
The tray is never one: each of its runners has a `servers` row of its own with the tray's pid and a
lock the tray holds (docs/ARCHITECTURE.md), and the tray quits only by being asked. A journal this
version cannot open (a newer version's) leaves the lock files to go by: on Linux their holders.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import sys
import time
from pathlib import Path

from app.core import liveness
from app.core.authority.lock_holders import file_id, parse_locks
from app.core.channel.client import NoTray, TrayRefused, ask_tray, tray_says_its_pid
from app.core.errors import CoworkError
from app.core.journal.store import Journal
from app.core.paths import AppPaths

PROC_ROOT = Path("/proc")
TRAY_QUIT_WAIT_S = 10.0  # the tray finishes what it is doing and lets go of its lock within this
SERVER_STOP_GRACE_S = 3.0  # a server ends its commands and closes its rows on SIGTERM within this
POLL_S = 0.1


def processes_running(executable: str, proc_root: Path = PROC_ROOT) -> list[int]:
    """The pids of processes whose program file is `executable` (Linux: /proc/<pid>/exe), never this one.

    Empty where /proc does not exist (macOS, Windows): callers then rely on the journal alone.
    """
    wanted = os.path.realpath(executable)
    found: list[int] = []
    try:
        entries = list(proc_root.iterdir())
    except OSError:
        return found
    for entry in entries:
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            program = os.readlink(entry / "exe")
        except OSError:  # gone meanwhile, a kernel thread, or another user's process
            continue
        if program == wanted:
            found.append(int(entry.name))
    return found


def tray_running(paths: AppPaths) -> bool:
    return liveness.is_held(paths.tray_lock)


def stop_tray(paths: AppPaths, wait_s: float = TRAY_QUIT_WAIT_S) -> bool:
    """Ask the running tray to quit and wait until its lock is free; True when none runs any more."""
    deadline = time.monotonic() + wait_s
    while True:
        if not tray_running(paths):
            return True
        try:
            ask_tray(paths, "quit", wait_s=wait_s)  # a tightening: the tray quits at once
            break
        except TrayRefused:
            return False
        except NoTray:
            # A tray takes its lock before it listens: one that is starting answers a moment later.
            if time.monotonic() >= deadline:
                return False
            time.sleep(POLL_S)
    while time.monotonic() < deadline:
        if not tray_running(paths):
            return True
        time.sleep(POLL_S)
    return False


class ServersUnknown(CoworkError):
    """The journal could not be read, and nothing else tells which servers run (not Linux); the text
    is why the journal could not be read."""


def live_servers(paths: AppPaths, executable: str, proc_root: Path = PROC_ROOT) -> list[int]:
    """The pids of this install's servers that are alive now (see the module's docstring); never the
    tray's. ServersUnknown when they cannot be found."""
    if not paths.journal.exists():
        return []
    try:
        with Journal(paths) as journal:
            found = [
                record.pid
                for record in journal.servers(limit=-1)
                if record.lock_key is not None and liveness.is_held(paths.server_lock(record.lock_key))
            ]
    except (CoworkError, sqlite3.Error) as problem:  # a newer version's journal, a damaged one
        holders = _server_lock_holders(paths, proc_root)
        if holders is None:
            raise ServersUnknown(str(problem)) from None
        found = holders
    tray = tray_pids(paths, proc_root)
    ours = set(processes_running(executable, proc_root)) if sys.platform.startswith("linux") else None
    pids: list[int] = []
    for pid in found:
        if pid in tray or pid in pids or (ours is not None and pid not in ours):
            continue
        pids.append(pid)
    return pids


def tray_pids(paths: AppPaths, proc_root: Path = PROC_ROOT) -> set[int]:
    """The running tray's pid (a set: empty when none runs). Linux: the holder of its lock, as
    /proc/locks says; elsewhere, or when that cannot be read: what the tray says at its hello."""
    if not tray_running(paths):
        return set()
    held = _holders([paths.tray_lock], proc_root)
    if held is not None:
        return held
    said = tray_says_its_pid(paths)
    return set() if said is None else {said}


def _holders(files: list[Path], proc_root: Path) -> set[int] | None:
    """The pids holding a lock on any of `files` (Linux's /proc/locks); None where it cannot be read."""
    if not sys.platform.startswith("linux"):
        return None
    wanted = {fid for fid in map(file_id, files) if fid is not None}
    try:
        locks = parse_locks((proc_root / "locks").read_text())
    except OSError:
        return None
    return {pid for pid, fid in locks if fid in wanted}


def _server_lock_holders(paths: AppPaths, proc_root: Path) -> list[int] | None:
    """Who holds a server's lock, without the journal (the tray too: it holds its runners' locks)."""
    try:
        files = sorted(paths.locks_dir.glob("server-*.lock"))
    except OSError:
        files = []
    held = _holders(files, proc_root)
    return None if held is None else sorted(held)


def stop_processes(pids: list[int], grace_s: float = SERVER_STOP_GRACE_S) -> list[int]:
    """SIGTERM, then SIGKILL what is still there after `grace_s`; returns the pids that were ended."""
    ended = []
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)
            ended.append(pid)
    deadline = time.monotonic() + grace_s
    while ended and time.monotonic() < deadline and any(_alive(pid) for pid in ended):
        time.sleep(POLL_S)
    for pid in ended:
        if _alive(pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, getattr(signal, "SIGKILL", signal.SIGTERM))
    return ended


def _alive(pid: int) -> bool:
    if os.name != "posix":
        return False  # Windows: SIGTERM is TerminateProcess, which does not wait
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaps it when it is our own child (tests); harmless otherwise
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
