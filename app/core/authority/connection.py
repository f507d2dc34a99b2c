"""One connection to the hub: a server, the CLI, or something pretending; all untrusted until proven.

Its own module, below the hub and its parts: holds, questions, requests and server rows name a
peer, and the hub's connections make them.
"""

from __future__ import annotations

import contextlib
import logging
import queue
from typing import Any

from app.core.authority.state import ControlState
from app.core.channel.peer import PeerFacts
from app.core.channel.protocol import Ack, ErrorReply, Message, encode
from app.core.channel.transport import Accepted
from app.core.channel.wire import ProtocolError
from app.core.channel.wire import encode as wire_encode

log = logging.getLogger(__name__)

OUTBOX_LIMIT = 1000  # messages queued for one peer that does not read: then it is dropped


class Peer:
    """One connection: a server, the CLI, or something pretending; all untrusted until proven."""

    def __init__(self, accepted: Accepted) -> None:
        self.channel = accepted.channel
        self.facts: PeerFacts = accepted.peer
        self.role: str | None = None
        self.server_id: int | None = None
        self.registration: dict[str, Any] = {}  # what its row was made from, to make it again
        self.commands: set[int] = set()
        self.waiting: set[int] = set()  # held for the user, not running: Quit does not count them
        self.remembered: ControlState | None = None
        self.ended = False
        self._outbox: queue.Queue[bytes | None] = queue.Queue(OUTBOX_LIMIT)  # encoded messages

    @property
    def label(self) -> str:
        return f"{self.role or 'peer'} pid {self.facts.pid}"

    def push(self, message: Message) -> None:
        """Send without ever waiting on the peer: from this thread when nothing queued waits before
        it and the frame fits the socket's room (a call's result from the command host: one thread
        hop less, about 0.1 ms a call), otherwise through the writer thread. A peer that lets
        OUTBOX_LIMIT pile up is dropped."""
        try:
            frame = wire_encode(encode(message))
            if self._outbox.unfinished_tasks == 0 and self.channel.send_if_room(frame):
                return  # nothing was queued, nor being sent by the writer: the order holds
        except (OSError, ProtocolError) as exc:
            log.info("%s: send failed (%s); closing", self.label, exc)
            self.channel.close()
            return
        try:
            self._outbox.put_nowait(frame)
        except queue.Full:
            log.warning("%s does not read its messages: disconnecting it", self.label)
            self.channel.close()

    def answer(self, message: Ack | ErrorReply) -> None:
        """An answer to the request just read, sent from the reader's own thread: the caller waits
        for it (a server starts its command only then), so no hop through the outbox. A peer that
        stops reading its answers blocks only its own reader, for at most the send timeout."""
        try:
            self.channel.send(encode(message))
        except (OSError, ProtocolError) as exc:
            log.info("%s: answer failed (%s); closing", self.label, exc)
            self.channel.close()

    def write_loop(self) -> None:
        while True:
            frame = self._outbox.get()
            try:
                if frame is None or self.channel.closed:
                    return
                self.channel.send_frame(frame)
            except OSError as exc:
                log.info("%s: send failed (%s); closing", self.label, exc)
                self.channel.close()
                return
            finally:
                self._outbox.task_done()  # `push` sends itself only when all are done

    def stop_writing(self) -> None:
        with contextlib.suppress(queue.Full):
            self._outbox.put_nowait(None)
