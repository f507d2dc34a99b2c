"""Lone protected files (`~/.claude.json`, shell start-up files) bound read-only again in live containers
when a program outside replaces them (issue 21).

A read-only bind of a file holds its inode: when Claude or an editor saves by writing a new file and
renaming it over the old one, the kernel detaches the bind from every container that had it, and a
command still running there could write the new file (`../shared/containment-notes.md`, section 1).
Folders do not have the gap, lone files do. So this process watches their folders (inotify), and on
each new file of a watched name binds it again in each of its containers whose bwrap command line
protects it, unless the user allowed that container to change it (container_lift.LIFTED).
The same thread watches the protected files that do not exist yet, for start_files.py.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import select
import struct
import threading
from collections.abc import Iterable

from app.core.execution import container_lift, start_files

log = logging.getLogger(__name__)

IN_MOVED_TO, IN_CREATE, IN_CLOEXEC, IN_NONBLOCK = 0x80, 0x100, 0o2000000, 0o4000
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


class _Watcher:
    """One inotify descriptor and one thread per process, for lone files and absent members."""

    def __init__(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        self.add_watch = libc.inotify_add_watch
        self.fd = libc.inotify_init1(IN_CLOEXEC | IN_NONBLOCK)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self.wake_read, self.wake_write = os.pipe()
        os.set_blocking(self.wake_read, False)
        os.set_blocking(self.wake_write, False)
        self.names: dict[int, dict[str, tuple[str, bool]]] = {}  # wd -> name -> (path, absent)

    def add(self, path: str, absent: bool) -> None:
        wd = self.add_watch(self.fd, os.path.dirname(path).encode(), IN_MOVED_TO | IN_CREATE)
        if wd < 0:
            log.warning("cannot watch %s: its folder cannot be watched", path)
            return
        self.names.setdefault(wd, {})[os.path.basename(path)] = (path, absent)

    def wake(self) -> None:
        with contextlib.suppress(BlockingIOError):
            os.write(self.wake_write, b"x")

    def run(self) -> None:
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        poller.register(self.wake_read, select.POLLIN)
        polled: set[int] = set()
        while True:
            for fd in set(start_files.live()) - polled:  # POLLHUP: its container's init is gone
                poller.register(fd, 0)
                polled.add(fd)
            ready = dict(poller.poll())
            if self.wake_read in ready:
                with contextlib.suppress(BlockingIOError):
                    os.read(self.wake_read, 4096)
            # The events first, then the ends seen with them: a file a command made just before its
            # container ended is judged while that container still counts (start_files.py).
            for path, absent in self._read_events():
                try:
                    start_files.appeared(path) if absent else bind_again(path)
                except Exception:  # the top of the watching thread: it must go on
                    log.exception("handling a new %s failed", path)
            gone = [fd for fd in polled if ready.get(fd, 0) & (select.POLLHUP | select.POLLERR | select.POLLNVAL)]
            for fd in gone:
                poller.unregister(fd)
                polled.discard(fd)
            start_files.ended(gone)

    def _read_events(self) -> list[tuple[str, bool]]:
        found: list[tuple[str, bool]] = []
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return found
            if not data:
                return found
            for wd, name in parse_events(data):
                if wd == -1:  # the queue overflowed (a flood of new files): look at every watched one
                    found += [entry for names in self.names.values() for entry in names.values()]
                elif name in self.names.get(wd, {}):
                    found.append(self.names[wd][name])


_watcher: _Watcher | None = None


def watch(files: Iterable[str], absent: Iterable[str] = ()) -> None:
    """Watch these lone files, and these absent members (start_files.py), from now on, for as long
    as this process lives (once per path)."""
    global _watcher
    with _lock:
        new = [(path, False) for path in files if path not in _started]
        new += [(path, True) for path in absent if path not in _started]
        if not new:
            return
        _started.update(path for path, _absent in new)
        if _watcher is None:
            try:
                _watcher = _Watcher()
            except OSError as exc:
                log.warning("cannot watch lone protected files: %s", exc)
                return
            threading.Thread(target=_watcher.run, name="lone-file-watch", daemon=True).start()
        for path, is_absent in new:
            _watcher.add(path, is_absent)
        guarded = [path for path, is_absent in new if is_absent]
    if guarded:
        start_files.guarding(guarded, _watcher.wake)
