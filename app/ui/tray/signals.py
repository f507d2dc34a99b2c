"""How the tray's monitor thread is woken: by a kick from any thread, or by a quit signal.

A Python signal handler only runs when the main thread runs Python code, which a GTK or Cocoa
loop may not do for a long time; `set_wakeup_fd` makes the C-level handler write the signal's
number to a socket at once, and the monitor thread watches that socket next to the kick socket.
"""

from __future__ import annotations

import contextlib
import logging
import select
import signal
import socket
import threading
from typing import Any

log = logging.getLogger(__name__)

QUIT_SIGNALS = ("SIGTERM", "SIGINT", "SIGHUP")


class Wakeup:
    """Two sockets the monitor waits on: `kick()` from any thread, and quit signals once installed."""

    def __init__(self) -> None:
        self._wake_r, self._wake_w = _socket_pair()
        self._signal_r: socket.socket | None = None
        self._signal_w: socket.socket | None = None

    def kick(self) -> None:
        """Wake the monitor now (thread-safe)."""
        with contextlib.suppress(OSError):  # a full buffer means the monitor is awake anyway
            self._wake_w.send(b"k")

    def install_signal_wakeup(self) -> None:
        """SIGTERM/SIGINT/SIGHUP quit cleanly, whatever loop the main thread sits in (main thread only)."""
        if threading.current_thread() is not threading.main_thread():
            return
        self._signal_r, self._signal_w = _socket_pair()
        try:
            signal.set_wakeup_fd(self._signal_w.fileno(), warn_on_full_buffer=False)
        except (ValueError, OSError) as exc:
            log.warning("cannot watch for signals: %s", exc)
            return
        for name in QUIT_SIGNALS:
            if hasattr(signal, name):
                signal.signal(getattr(signal, name), _note_signal)

    def wait(self, timeout_s: float) -> bool:
        """Sleep until a kick, a signal or the timeout; True when a quit signal arrived."""
        sockets = [s for s in (self._wake_r, self._signal_r) if s is not None]
        ready, _, _ = select.select(sockets, [], [], timeout_s)
        signalled = False
        for sock in ready:
            try:
                data = sock.recv(4096)
            except (BlockingIOError, InterruptedError):
                continue
            if sock is self._signal_r and data:
                log.info("signal %s received: quitting", data[-1])
                signalled = True
        return signalled


def _socket_pair() -> tuple[socket.socket, socket.socket]:
    pair = socket.socketpair()
    for end in pair:
        end.setblocking(False)
    return pair


def _note_signal(signum: int, _frame: Any) -> None:
    """The Python-level half of a quit signal: nothing, the wakeup socket already told the monitor."""
