"""One connection to the hub: a server, the CLI, or something pretending; all untrusted until proven.

Its own module, below the hub and its parts: holds, questions, requests and server rows name a
peer, and the hub's connections make them.
"""

from __future__ import annotations

import contextlib
import logging
import queue
from typing import Any

from app.core.authority.oversized import frame_size, too_big_result
from app.core.authority.state import ControlState
from app.core.channel.call_messages import CallResult
from app.core.channel.peer import PeerFacts
from app.core.channel.protocol import Ack, ErrorReply, Message, encode
from app.core.channel.transport import Accepted
from app.core.channel.wire import MAX_FRAME_BYTES, ProtocolError
from app.core.channel.wire import encode as wire_encode
from app.core.i18n import N_, _
from app.core.i18n.formats import format_number

log = logging.getLogger(__name__)

# What the CLI or a window reads instead of an answer too big for one message (the user's language).
ANSWER_TOO_BIG = N_(
    "The answer was {size} bytes, more than Cowork Terminal can pass on in one message ({limit} bytes); "
    "nothing changed. Look in the Cowork Terminal app instead."
)

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
        frame: bytes | None
        try:
            frame = wire_encode(encode(message))
        except ProtocolError as exc:  # this one message is too big: the link, and the others, go on
            frame = self._instead_of_oversized(message, exc)
            if frame is None:
                return
        try:
            if self._outbox.unfinished_tasks == 0 and self.channel.send_if_room(frame):
                return  # nothing was queued, nor being sent by the writer: the order holds
        except OSError as exc:
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
        frame: bytes | None
        try:
            frame = wire_encode(encode(message))
        except ProtocolError as exc:  # the answer is too big: say so instead, and the link goes on
            frame = self._instead_of_oversized(message, exc)
            if frame is None:
                return
        try:
            self.channel.send_frame(frame)
        except OSError as exc:
            log.info("%s: answer failed (%s); closing", self.label, exc)
            self.channel.close()

    def _instead_of_oversized(self, message: Message, problem: ProtocolError) -> bytes | None:
        """What goes instead of a message too big for one frame: a call's result becomes an error
        result saying so (its server waits for it), an answer an error answer; anything else is
        logged and dropped. The link stays: closing it made every call of that server look lost,
        and the next ones refused, while the tray and its jobs lived on."""
        size = frame_size(message)
        log.warning("%s: a %s of %d bytes was not sent (%s)", self.label, type(message).__name__, size, problem)
        if isinstance(message, CallResult):
            return wire_encode(encode(CallResult(message.call_id, too_big_result(None, size))))
        if isinstance(message, (Ack, ErrorReply)):
            return wire_encode(encode(ErrorReply(message.seq, self._too_big_words(size))))
        return None

    def _too_big_words(self, size: int) -> str:
        """Why an answer is missing: in the user's language for the CLI, in English for a server."""
        words = _(ANSWER_TOO_BIG) if self.role == "cli" else ANSWER_TOO_BIG
        return words.format(size=format_number(size), limit=format_number(MAX_FRAME_BYTES))

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
