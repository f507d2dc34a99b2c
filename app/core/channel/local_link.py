"""The channel between a tray runner's link and the hub of the same process, without a socket.

A server bound to the tray hands it its calls; the tray's runner for that server (app/server/
tray_side.py) talks to the hub as any server does, through a TrayLink. Over the tray's socket each of
its journal rows, holds and pushes cost four thread hand-overs inside the tray itself (the loop, a
worker, the hub's reader, the link's reader: docs/benchmarks.md, "hop by hop"). Here the hub handles
a message the link sends on the sending thread, and what the hub sends reaches the link on the hub's
thread: the same messages, checked by the same code on both sides, with no socket and no reader
threads. Closing either end closes both, and each side then acts as when a socket broke.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

from app.core.channel import wire

Deliver = Callable[[dict[str, Any]], None]


class LocalEnd:
    """One end of an in-process channel, with the interface of core/channel/wire.Channel."""

    def __init__(self) -> None:
        self.other: LocalEnd | None = None
        self.closed = False
        self._inbox: queue.Queue[dict[str, Any]] = queue.Queue()
        self._deliver: Deliver | None = None
        self._on_close: Callable[[], None] | None = None
        self._lock = threading.Lock()

    def listen(self, deliver: Deliver, on_close: Callable[[], None]) -> None:
        """From now on each message is handed to `deliver` on the sender's thread (those that came
        before, first); `on_close` runs once when the channel closes."""
        with self._lock:
            self._on_close = on_close
            waiting = []
            while not self._inbox.empty():
                waiting.append(self._inbox.get_nowait())
            self._deliver = deliver
        for message in waiting:
            deliver(message)
        if self.closed:
            self._closed()

    def send_if_room(self, data: bytes) -> bool:
        """Never at once: the hub's own runners get their messages in order from the writer thread."""
        return False

    def send(self, message: dict[str, Any]) -> None:
        # Encoded and decoded as on the wire (its limit and checks): the other side gets plain values,
        # never a shared object.
        self.send_frame(wire.encode(message))

    def send_frame(self, data: bytes) -> None:
        other = self.other
        if self.closed or other is None or other.closed:
            raise OSError("the in-process channel is closed")
        other._arrive(wire.decode(data))

    def _arrive(self, message: dict[str, Any]) -> None:
        with self._lock:
            deliver = self._deliver
            if deliver is None:
                self._inbox.put(message)
                return
        deliver(message)

    def receive(self, timeout_s: float | None = None) -> dict[str, Any] | None:
        """The next message before `listen` (the handshake); None on timeout."""
        try:
            return self._inbox.get(timeout=timeout_s)
        except queue.Empty:
            if self.closed:
                raise EOFError("the in-process channel was closed") from None
            return None

    def close(self) -> None:
        """Close both ends; each side's `on_close` runs once."""
        for end in (self, self.other):
            if end is not None:
                end._closed()

    def _closed(self) -> None:
        with self._lock:
            self.closed = True
            hook, self._on_close = self._on_close, None
        if hook is not None:
            hook()


def local_pair() -> tuple[LocalEnd, LocalEnd]:
    """Two connected ends: (the hub's, the link's)."""
    hub, link = LocalEnd(), LocalEnd()
    hub.other, link.other = link, hub
    return hub, link


# The hub of this process, when it has one (the tray): how a runner's link reaches it.
Dial = Callable[[], LocalEnd]
_hub_dial: Dial | None = None


def offer(dial: Dial) -> None:
    """The hub of this process listens: runners made from now on reach it through `dial`."""
    global _hub_dial
    _hub_dial = dial


def withdraw(dial: Dial) -> None:
    global _hub_dial
    if _hub_dial == dial:
        _hub_dial = None


def hub_dial() -> Dial | None:
    """How to reach the hub of this process; None in a process with no hub (`serve`)."""
    return _hub_dial
