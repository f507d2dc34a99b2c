"""One message on the channel: a JSON object in a length-prefixed frame, never a pickle.

`multiprocessing.connection.Connection` gives the framing on sockets and pipes alike; only its
`send_bytes` / `recv_bytes` are used (its `recv` unpickles, which would run the peer's code).
Frames are capped, so a peer cannot make the tray allocate without bound.
"""

from __future__ import annotations

import contextlib
import json
import select
import sys
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

# What the tray sends at most: the largest call result the output budgets make. A result carries the
# output twice (its structured content and its text copy, where quotes are escaped twice), up to 8
# bytes a character in all, and the largest budget is 2,000,000 characters
# (execution.output.MAX_BUDGET_CHARS; the seed's 1 MiB a stream makes at most 12 MiB). At 1 MiB, the
# menu's "Up to 1 MB of output" could not carry 600 KB.
MAX_FRAME_BYTES = 20 << 20
# What the tray reads at most from any peer (a call, a request, a hello): it decodes a frame before
# it knows who sent it, and a 19 MiB frame of JSON took 450 MiB to decode (a review, 2026-12-05).
TO_TRAY_FRAME_BYTES = 1 << 20
# A frame this small goes whole into a socket that polls writable (macOS's low-water mark for that
# is 2,048 bytes; Linux keeps three quarters of the buffer free), so sending it cannot block.
QUICK_FRAME_BYTES = 2000


class ProtocolError(Exception):
    """The peer sent something that is not one of our messages: close the connection."""


def encode(message: dict[str, Any], limit: int = MAX_FRAME_BYTES) -> bytes:
    data = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass")
    if len(data) > limit:
        raise ProtocolError(f"message of {len(data)} bytes is over the {limit} byte limit")
    return data


def decode(data: bytes) -> dict[str, Any]:
    try:
        message = json.loads(data.decode("utf-8", "surrogatepass"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ProtocolError(f"not a JSON message: {exc}") from None
    if not isinstance(message, dict) or not isinstance(message.get("op"), str):
        raise ProtocolError("a message must be a JSON object with an 'op'")
    return message


class Channel:
    """A connection that several threads may send on; one thread receives. `tray_end`: the tray's end,
    which reads at most TO_TRAY_FRAME_BYTES and sends up to MAX_FRAME_BYTES; the other end the reverse."""

    def __init__(self, connection: Connection, wake: Callable[[], None] | None = None, *, tray_end: bool) -> None:
        self.connection = connection
        self.max_in, self.max_out = (
            (TO_TRAY_FRAME_BYTES, MAX_FRAME_BYTES) if tray_end else (MAX_FRAME_BYTES, TO_TRAY_FRAME_BYTES)
        )
        self._wake = wake  # ends a receive blocked in another thread (a socket's shutdown)
        self._send_lock = threading.Lock()
        self._close_lock = threading.Lock()
        self.closed = False

    def send(self, message: dict[str, Any]) -> None:
        self.send_frame(encode(message, self.max_out))

    def send_frame(self, data: bytes) -> None:
        """Send a message `encode` made already (a peer's outbox holds them so)."""
        with self._send_lock:
            self.connection.send_bytes(data)

    def send_if_room(self, data: bytes) -> bool:
        """Send an encoded message now when that cannot block: a small frame, a POSIX socket with
        room, no other thread mid-frame. False when nothing was sent (a writer thread sends it)."""
        if len(data) > QUICK_FRAME_BYTES or sys.platform == "win32" or not self._send_lock.acquire(blocking=False):
            return False
        try:
            if self.closed:
                return False
            room = select.poll()  # not select(): it refuses a descriptor above 1023
            try:
                room.register(self.connection.fileno(), select.POLLOUT)
            except OSError:  # closed by another thread meanwhile
                return False
            if not any(events & select.POLLOUT for _fd, events in room.poll(0)):
                return False
            self.connection.send_bytes(data)
            return True
        finally:
            self._send_lock.release()

    def receive(self, timeout_s: float | None = None) -> dict[str, Any] | None:
        """The next message; None on timeout. Raises EOFError/OSError when the peer is gone."""
        if timeout_s is not None and not self.connection.poll(timeout_s):
            return None
        try:
            data = self.connection.recv_bytes(self.max_in)
        except OSError as exc:
            if "bad message length" in str(exc):
                raise ProtocolError("frame over the size limit") from None
            raise
        except TypeError:  # closed by another thread meanwhile: Connection.close sets its handle to None
            if self.closed:
                raise EOFError("the channel was closed") from None
            raise
        return decode(data)

    def close(self) -> None:
        """Once, whichever thread comes first: a second os.close of the same number, racing in from
        another thread, would close whatever file or socket reused that number meanwhile."""
        with self._close_lock:
            if self.closed:
                return
            self.closed = True
        if self._wake is not None:
            with contextlib.suppress(OSError):
                self._wake()
        with contextlib.suppress(OSError):
            self.connection.close()
