"""Lone protected files (`~/.claude.json`, shell start-up files) bound read-only again in live containers
when a program outside replaces them (issue 21).

A read-only bind of a file holds its inode: when Claude or an editor saves by writing a new file and
renaming it over the old one, the kernel detaches the bind from every container that had it, and a
command still running there could write the new file (`../shared/containment-notes.md`, section 1).
Folders do not have the gap, lone files do. So this process watches their folders (inotify), and on
each new file of a watched name binds it again in each of its containers whose bwrap command line
protects it, unless the user allowed that container to change it (container_lift.LIFTED).
"""

from __future__ import annotations

import ctypes
import logging
import os
import struct
import threading
from collections.abc import Iterable

from app.core.execution import container_lift

log = logging.getLogger(__name__)

IN_MOVED_TO, IN_CREATE, IN_CLOEXEC = 0x80, 0x100, 0o2000000
EVENT_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len: then the name, NUL-padded
_started: set[str] = set()
_lock = threading.Lock()


def parse_events(data: bytes) -> list[tuple[int, str]]:
    """(watch descriptor, file name) of each event in one read of an inotify descriptor."""
    events, offset = [], 0
    while offset + EVENT_HEADER.size <= len(data):
        wd, _mask, _cookie, length = EVENT_HEADER.unpack_from(data, offset)
        raw = data[offset + EVENT_HEADER.size : offset + EVENT_HEADER.size + length]
        events.append((wd, raw.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")))
        offset += EVENT_HEADER.size + length
    return events


def protects(cmdline: list[str], path: str) -> bool:
    """Whether a bwrap command line binds `path` read-only onto itself."""
    return any(cmdline[i : i + 3] == ["--ro-bind", path, path] for i in range(len(cmdline) - 2))


def our_containers(proc: str = "/proc") -> list[tuple[int, list[str]]]:
    """(init pid, bwrap's command line) of each container this process started and that still runs."""
    found = []
    children: list[int] = []
    me = os.getpid()
    try:
        tasks = os.listdir(f"{proc}/{me}/task")
    except OSError:
        return []
    for task in tasks:  # each thread's own children: a container may be started from any of them
        try:
            with open(f"{proc}/{me}/task/{task}/children") as handle:
                children += [int(pid) for pid in handle.read().split()]
        except (OSError, ValueError):
            continue
    for pid in children:
        try:
            with open(f"{proc}/{pid}/cmdline", "rb") as handle:
                cmdline = [part.decode("utf-8", "surrogateescape") for part in handle.read().split(b"\0")]
            with open(f"{proc}/{pid}/task/{pid}/children") as handle:
                inits = [int(child) for child in handle.read().split()]
        except (OSError, ValueError):
            continue
        if cmdline and os.path.basename(cmdline[0]) == "bwrap" and inits:
            found.append((inits[0], cmdline))
    return found


def bind_again(path: str) -> int:
    """Bind `path` read-only again in each container of ours that protects it; how many."""
    done = 0
    for init, cmdline in our_containers():
        if not protects(cmdline, path) or path in container_lift.LIFTED.get(init, ()):
            continue  # not bound there, or the user allowed that command to change it
        if container_lift.change(container_lift.PROTECT, init, [path], ()) is None:
            done += 1
    return done


def _watch(files: list[str]) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(IN_CLOEXEC)
    if fd < 0:
        log.warning("cannot watch lone protected files: inotify_init1 failed (errno %s)", ctypes.get_errno())
        return
    names: dict[int, dict[str, str]] = {}
    for path in files:
        wd = libc.inotify_add_watch(fd, os.path.dirname(path).encode(), IN_MOVED_TO | IN_CREATE)
        if wd >= 0:
            names.setdefault(wd, {})[os.path.basename(path)] = path
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:
            return
        for wd, name in parse_events(data):
            replaced = names.get(wd, {}).get(name)
            if replaced is not None:
                try:
                    bind_again(replaced)
                except Exception:  # the top of the watching thread: it must go on
                    log.exception("binding %s again failed", replaced)


def watch(files: Iterable[str]) -> None:
    """Watch these lone files from now on, for as long as this process lives (once per file)."""
    with _lock:
        new = [path for path in files if path not in _started]
        _started.update(new)
    if new:
        threading.Thread(target=_watch, args=(new,), name="lone-file-watch", daemon=True).start()
