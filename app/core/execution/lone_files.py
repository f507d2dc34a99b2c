"""The thread that watches the lone members of the protected set (`~/.claude.json`, the shell
start-up files, a Claude Desktop folder that does not exist yet) and the containers that guard
them (issue 21); start_files.py decides what to do with each new file.

Why a watch: a read-only bind of a file holds its inode. When Claude or an editor saves by writing
a new file and renaming it over the old one, the kernel detaches the bind from every container that
had it, and a command still running there could write the new file
(`../shared/containment-notes.md`, section 1); and a member that does not exist cannot be bound at
all. Folders do not have the gap, lone members do. So one thread per process watches their folders
(inotify: created, moved in, deleted) and polls each live container's status pipe, whose end is the
end of that container's init, then, for a container we end ourselves, the init's pidfd, which says
when the rest of the container is gone too: a new file is bound again where it was bound, or moved
aside when a command may have made it (start_files.py).
"""

from __future__ import annotations

import array
import contextlib
import logging
import os
import select
import struct
import threading
import time
from collections.abc import Iterable

import anyio

from app.core.execution import start_files

log = logging.getLogger(__name__)

IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x80, 0x100, 0x200
IN_CLOEXEC, IN_NONBLOCK = 0o2000000, 0o4000
# Deleted (not renamed away: an editor that keeps a backup renames the file, then writes it anew)
GONE = IN_DELETE
EVENT_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len: then the name, NUL-padded
OVERFLOW_WD = -1  # IN_Q_OVERFLOW comes with no watch: events were lost
FAILED_PAUSE_S = 1.0  # after an unexpected error in the loop, before it goes on
HANDLED_WAIT_S = 1.0  # at most, for the files a finished command made to be judged
HANDLED_POLL_S = 0.001
END_WAIT_S = 2.0  # at most, at the app's exit, for its containers' ends to be seen
_started: set[str] = set()
_lock = threading.Lock()


def parse_masked_events(data: bytes) -> list[tuple[int, int, str]]:
    """(watch descriptor, mask, file name) of each event in one read of an inotify descriptor."""
    events, offset = [], 0
    while offset + EVENT_HEADER.size <= len(data):
        wd, mask, _cookie, length = EVENT_HEADER.unpack_from(data, offset)
        raw = data[offset + EVENT_HEADER.size : offset + EVENT_HEADER.size + length]
        events.append((wd, mask, raw.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")))
        offset += EVENT_HEADER.size + length
    return events


class _Watcher:
    """One inotify descriptor and one thread per process."""

    def __init__(self) -> None:
        import ctypes  # here: only a process that starts containers watches (ctypes is ~0.3 MB)

        libc = ctypes.CDLL(None, use_errno=True)
        self.add_watch = libc.inotify_add_watch
        self.fd = libc.inotify_init1(IN_CLOEXEC | IN_NONBLOCK)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self.wake_read, self.wake_write = os.pipe()
        os.set_blocking(self.wake_read, False)
        os.set_blocking(self.wake_write, False)
        self.names: dict[int, dict[str, str]] = {}  # wd -> name -> path
        self.busy = False  # between a poll that returned and the end of what it found

    def handled(self) -> bool:
        """Whether every event the kernel has queued so far has been read and acted on."""
        import fcntl  # here: this module is imported on Windows too, where there is no watcher
        import termios

        if self.busy:
            return False
        pending = array.array("i", [0])
        fcntl.ioctl(self.fd, termios.FIONREAD, pending, True)
        return pending[0] == 0 and not self.busy  # busy again: it read them meanwhile, and acts now

    def add(self, path: str) -> None:
        wd = self.add_watch(self.fd, os.path.dirname(path).encode(), IN_MOVED_TO | IN_CREATE | GONE)
        if wd < 0:
            log.warning("cannot watch %s: its folder cannot be watched", path)
            return
        self.names.setdefault(wd, {})[os.path.basename(path)] = path

    def wake(self) -> None:
        """A container was registered (start_files.register): poll its end from now on."""
        with contextlib.suppress(BlockingIOError):
            os.write(self.wake_write, b"x")

    def run(self) -> None:
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        poller.register(self.wake_read, select.POLLIN)
        polled: set[int] = set()
        while True:
            try:
                self._turn(poller, polled)
            except Exception:  # the top of the watching thread: it must go on
                log.exception("watching the lone protected files failed; going on")
                time.sleep(FAILED_PAUSE_S)

    def _turn(self, poller: select.poll, polled: set[int]) -> None:
        # A status pipe's POLLHUP: that container's init closed its descriptors; a pidfd's POLLIN:
        # the init has exited, and with it every process of its container (start_files.ended).
        for fd, events in start_files.watched():
            if fd not in polled:
                poller.register(fd, events)
                polled.add(fd)
        ready = dict(poller.poll())
        self.busy = True
        try:
            if self.wake_read in ready:
                with contextlib.suppress(BlockingIOError):
                    os.read(self.wake_read, 4096)
            # The events first, then the ends seen with them: a file a command made just before its
            # container ended is judged while that container still counts (start_files.py).
            for path, gone in self._read_events():
                try:
                    start_files.vanished(path) if gone else start_files.appeared(path)
                except Exception:  # one file's trouble must not stop the others
                    log.exception("handling a new %s failed", path)
        finally:
            self.busy = False
        ends = select.POLLIN | select.POLLHUP | select.POLLERR | select.POLLNVAL  # POLLIN: only a pidfd's
        ended = [fd for fd in polled if ready.get(fd, 0) & ends]
        for fd in ended:
            poller.unregister(fd)
            polled.discard(fd)
        start_files.ended(ended)

    def _read_events(self) -> list[tuple[str, bool]]:
        """(path, whether it went away) of each event on a watched name, in the kernel's order."""
        found: list[tuple[str, bool]] = []
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return found
            if not data:
                return found
            for wd, mask, name in parse_masked_events(data):
                if wd == OVERFLOW_WD:  # a flood of events hid some: look at every watched one
                    found += [(path, False) for names in self.names.values() for path in names.values()]
                elif name in self.names.get(wd, {}):
                    found.append((self.names[wd][name], bool(mask & GONE)))


_watcher: _Watcher | None = None


async def handled(timeout_s: float = HANDLED_WAIT_S) -> None:
    """Wait (briefly) until the files made before now are judged: a start-up file a command made as
    it ended is moved aside, and noted for the model (start_files.model_note), before its result
    is made. At once when nothing is queued, as after nearly every command."""
    deadline = time.monotonic() + timeout_s
    while _watcher is not None and not _watcher.handled() and time.monotonic() < deadline:
        await anyio.sleep(HANDLED_POLL_S)


def end_containers(wait_s: float = END_WAIT_S) -> None:
    """At the app's exit: end every container of this process, then wait (at most `wait_s`) until
    their ends and what they made before them are judged. Else a command's job, which outlives the
    app by a moment, could make a start-up file after the watching thread has stopped."""
    if start_files.end_all() == 0 or _watcher is None:
        return
    deadline = time.monotonic() + wait_s
    while (start_files.live() or not _watcher.handled()) and time.monotonic() < deadline:
        time.sleep(HANDLED_POLL_S * 20)


def watch(paths: Iterable[str]) -> None:
    """Watch these lone members (existing or not) from now on, for as long as this process lives
    (once per path); from then on the containers that bind or guard them are followed."""
    global _watcher
    with _lock:
        new = [path for path in paths if path not in _started]
        if not new:
            return
        if _watcher is None:
            try:
                _watcher = _Watcher()
            except OSError as exc:  # not marked as watched: the next container's watch tries again
                log.warning("cannot watch lone protected files: %s", exc)
                return
            threading.Thread(target=_watcher.run, name="lone-file-watch", daemon=True).start()
        _started.update(new)
        for path in new:
            _watcher.add(path)
        start_files.follow(_watcher.wake)
