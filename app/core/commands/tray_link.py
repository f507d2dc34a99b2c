"""A server's end of the channel: its tray, checked by the OS, and what the tray last told it.

The link is made once at start and kept; a server that lost its tray tries again every
RECONNECT_S and, until it is back, refuses commands (fail closed). A server that had a tray is
tray-bound for life, even if it was started `--headless`: it never goes back to reading controls
from the journal. One thread reads; a request waits for its answer (the row is written before the
command starts), at most ACK_TIMEOUT_S: `request` blocks its thread, `request_async` lets the event
loop go on serving meanwhile. Every message is a type of core/channel/protocol.py, decoded and
checked as it arrives.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import os
import queue
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from app.core import liveness
from app.core.authority.state import STRICTEST, ControlState
from app.core.channel.call_messages import CallProgress, CallResult
from app.core.channel.local_link import Dial, LocalEnd
from app.core.channel.peer import OwnFacts, own_facts, tray_refusal
from app.core.channel.protocol import (
    FROM_TRAY,
    Ack,
    BadValue,
    Closing,
    DecisionPush,
    ErrorReply,
    Hello,
    HoldClock,
    Message,
    StatePush,
    StopPush,
    Welcome,
    decode,
    encode,
)
from app.core.channel.transport import ChannelUnavailable, address_for, connect
from app.core.channel.wire import Channel, ProtocolError
from app.core.errors import CoworkError
from app.core.execution import orphans
from app.core.hop_times import mark
from app.core.journal.store import Journal
from app.core.paths import AppPaths

log = logging.getLogger(__name__)

ACK_TIMEOUT_S = 5.0  # no answer from the tray in this long: a request is refused (a forwarded call waits on)
NO_ANSWER = f"the Cowork Terminal app did not answer within {ACK_TIMEOUT_S:g} s"
REFUSED_BY_THE_APP = "refused by the app"  # a refusal that gave no reason
HELLO_TIMEOUT_S = 2.0
RECONNECT_S = 0.5
TRAY_EXIT_WAIT_S = 3.0  # after the channel broke: a tray still there this long did not die
TRAY_LOCKS_WAIT_S = 30.0  # a dying tray's locks close with its last thread: how long to wait for that
PF_EXITING = 0x4  # <linux/sched.h>: the flags field of /proc/<pid>/stat, set as a process starts to exit


class LinkRefused(Exception):
    """The tray did not write what was asked (paused, journal locked, gone): the command must not run."""


Decision = DecisionPush  # the user's answer to a held command, as the tray pushed it


class TrayLink:
    """The connection to the tray, as one server sees it."""

    def __init__(
        self,
        paths: AppPaths,
        *,
        headless: bool,
        lock_key: str,
        on_change: Callable[[], None] = lambda: None,
        dial: Dial | None = None,
    ) -> None:
        self.paths = paths
        # The hub of this same process (a runner in the tray): no socket, no OS facts to check.
        self.dial = dial
        self.headless = headless
        self.lock_key = lock_key
        self.on_change = on_change
        self.address = address_for(paths)
        self.own: OwnFacts = own_facts(os.path.realpath(paths.data_dir))
        self.server_id: int | None = None
        self.channel: Channel | LocalEnd | None = None
        self.bound = False  # a tray accepted us once: from now on only a tray decides
        self.state: ControlState | None = None  # what the tray last pushed
        self.pauses = 0  # how many times the tray said paused after not paused: a pause ends every hold
        # The tray's own count of its pauses, as its last push said (None: no push since binding): a
        # decision names it to the tray, which refuses one made before its latest pause.
        self.tray_pauses: int | None = None
        self.refusal: str | None = None  # why the last peer at the tray's address was not trusted
        self.closing_reason: str | None = None
        self.decisions: dict[int, Decision] = {}
        self.stops: set[int] = set()
        self.stop_authors: dict[int, str] = {}  # a Stop not the person's: who asked (StopPush's `by`)
        self.hold_clocks: dict[int, float] = {}  # held command -> when it expires, from when the user saw it
        self.version = 0
        self.runs_commands = False  # the tray runs this server's tool calls (its welcome said so)
        self.tray_pid: int | None = None
        # Forwarded calls waiting for the tray's answer: each gets its call_progress and call_result,
        # the tray's refusal of it when that came after ACK_TIMEOUT_S (`request_async`'s `late_to`),
        # and None when the tray goes away. Called on the reader's thread: they must not block.
        self.calls: dict[str, Callable[[CallProgress | CallResult | ErrorReply | None], None]] = {}
        self._seq = itertools.count(1)
        self._waiting: dict[int, Callable[[Ack | ErrorReply], None]] = {}  # by seq: called on the reader's thread
        # Ends sent without waiting (the model has its result at once): kept until the tray
        # acknowledges them; if it refuses or goes, the server writes them itself.
        self._unacked: dict[int, Message] = {}
        self._undelivered: list[Message] = []
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None
        self._posts: queue.SimpleQueue[Callable[[], None] | None] | None = None  # local: the sending thread's
        self._warned: str | None = None

    @property
    def connected(self) -> bool:
        return self.channel is not None

    # -- connecting -------------------------------------------------------------------------------

    def try_connect(self) -> bool:
        """One attempt to reach and check the tray; True when bound to it now."""
        if self.dial is not None:
            return self._connect_local(self.dial)
        try:
            channel, peer = connect(self.address)
        except ChannelUnavailable:
            return False
        # The OS's facts before a word is sent: a look-alike learns nothing of this server, and the
        # tray does not register a server that would refuse it (a second row for one server).
        refusal = tray_refusal(peer, self.own, self.own.data_dir)
        if refusal:
            channel.close()
            self._refuse(refusal)
            return False
        try:
            channel.send(encode(self._hello()))
            answer = channel.receive(HELLO_TIMEOUT_S)
        except (OSError, EOFError, ProtocolError):
            channel.close()
            return False
        try:
            ack = None if answer is None else decode(answer, FROM_TRAY)
        except BadValue:
            ack = None
        if not isinstance(ack, Ack):
            channel.close()
            self._refuse("the program at the tray's address did not answer as Cowork Terminal does")
            return False
        refusal = tray_refusal(peer, self.own, ack.fields.get("data_dir"))  # the OS's facts first
        if refusal is None:
            try:
                welcome = Welcome.from_ack(ack)
            except BadValue as bad:
                refusal = f"the program at the tray's address did not answer as Cowork Terminal does ({bad})"
        if refusal:
            channel.close()
            self._refuse(refusal)
            return False
        self._bind(channel, welcome, peer.pid)
        return True

    def _connect_local(self, dial: Dial) -> bool:
        """Bind to the hub of this process (local_link.py): the same hello and welcome, no socket."""
        channel = dial()
        try:
            channel.send(encode(self._hello()))
            answer = channel.receive(HELLO_TIMEOUT_S)
            ack = None if answer is None else decode(answer, FROM_TRAY)
            welcome = Welcome.from_ack(ack) if isinstance(ack, Ack) else None
        except (OSError, EOFError, BadValue):
            welcome = None
        if welcome is None:
            channel.close()
            return False
        self._bind(channel, welcome, os.getpid())
        return True

    def _hello(self) -> Hello:
        return Hello(
            "server", os.getpid(), self.headless, self.lock_key, self.server_id,
            self.state.to_wire() if self.state else None,
        )  # fmt: skip

    def _bind(self, channel: Channel | LocalEnd, welcome: Welcome, tray_pid: int | None) -> None:
        if welcome.server_id is not None:
            self.server_id = welcome.server_id
        self._set_state(ControlState.from_wire(dict(welcome.state)))
        self.tray_pauses = None  # this tray's count comes with its first push
        self.runs_commands = welcome.runs_commands
        self.tray_pid = tray_pid
        self.refusal = None
        self.closing_reason = None
        self.bound = True
        self.channel = channel
        self._bump()
        log.info("bound to the tray (pid %s)", tray_pid)

    def _refuse(self, reason: str) -> None:
        self.refusal = reason
        if self._warned != reason:  # once per reason: Claude's log for this server shows it
            self._warned = reason
            print(f"cowork-terminal: not taking orders from the tray's address: {reason}", file=sys.stderr, flush=True)

    def start(self) -> None:
        channel = self.channel
        if isinstance(channel, LocalEnd):  # the hub's messages come on its own thread: no reader
            channel.listen(functools.partial(self._take_local, channel), lambda: self._lost(channel, None))
            self._posts = queue.SimpleQueue()
            self._thread = threading.Thread(target=self._send_posts, name="tray-link-posts", daemon=True)
        else:
            self._thread = threading.Thread(target=self._run, name="tray-link", daemon=True)
        self._thread.start()

    def _take_local(self, channel: LocalEnd, message: dict[str, Any]) -> None:
        try:
            self._take(message)
        except Exception:  # as the reader thread's top: the tray counts as gone (fail closed)
            log.exception("the tray link failed")
            channel.close()

    def _send_posts(self) -> None:
        """What goes to the hub of this process, in order, on this thread: the hub writes rows on the
        sender's thread, and neither a post nor a request may hold up the event loop that sent it."""
        assert self._posts is not None
        while True:
            work = self._posts.get()
            if work is None:
                return
            try:
                work()
            except Exception:  # the top of the thread: one post's failure must not silence the rest
                log.exception("sending to the tray failed")

    def _send_local(self, channel: LocalEnd, wire: dict[str, Any], seq: int | None) -> None:
        try:
            channel.send(wire)
        except (OSError, ProtocolError):
            with self._lock:
                posted = self._unacked.pop(seq, None) if seq is not None else None
                if posted is not None:
                    self._undelivered.append(posted)

    def close(self) -> None:
        self._stopped.set()
        channel = self.channel
        if channel is not None:
            channel.close()
        if self._posts is not None:
            self._posts.put(None)

    def _run(self) -> None:
        while not self._stopped.is_set():
            channel = self.channel
            if channel is None:
                if not self.try_connect():
                    self._stopped.wait(RECONNECT_S)
                continue
            try:
                message = channel.receive()
                if message is not None:
                    self._take(message)
            except (EOFError, OSError, ProtocolError) as exc:
                self._lost(channel, exc)
            except Exception:  # the top of a thread: log it and treat the tray as gone (fail closed)
                log.exception("the tray link failed")
                self._lost(channel, None)

    def _lost(self, channel: Channel | LocalEnd, exc: BaseException | None) -> None:
        channel.close()
        self.channel = None
        log.info("lost the tray (%s)", exc)
        with self._lock:
            waiting = list(self._waiting.values())
            self._waiting.clear()
            self._undelivered.extend(self._unacked.values())
            self._unacked.clear()
        for answer in waiting:
            answer(ErrorReply(None, "the Cowork Terminal app went away"))
        for deliver in list(self.calls.values()):
            deliver(None)
        self._bump()
        if self.runs_commands and self.tray_pid is not None and sys.platform == "linux":
            threading.Thread(target=self._end_what_a_dead_tray_ran, args=(self.tray_pid,), daemon=True).start()

    def _end_what_a_dead_tray_ran(self, tray_pid: int) -> None:
        """A tray killed without a word ends its contained commands with it (--die-with-parent), but
        not those it ran without a container (bwrap missing or switched off): once the tray is gone,
        the server it ran them for ends them, as the next tray would (core/execution/orphans)."""
        deadline = time.monotonic() + TRAY_EXIT_WAIT_S
        while not exited(tray_pid):
            if time.monotonic() > deadline:
                return  # the channel broke, the tray did not: it still runs and ends its commands
            time.sleep(0.05)
        try:
            with Journal(self.paths) as journal:
                # A dying tray holds its runners' locks until its last thread is gone (seconds on a
                # loaded machine), and only a server whose lock is free counts as dead.
                locks = [
                    self.paths.server_lock(s.lock_key)
                    for s in journal.servers(limit=-1)
                    if s.pid == tray_pid and s.lock_key
                ]
                deadline = time.monotonic() + TRAY_LOCKS_WAIT_S
                while any(liveness.is_held(lock) for lock in locks):
                    if time.monotonic() > deadline:
                        log.warning("the lost tray (pid %d) still holds its locks: what it ran goes on", tray_pid)
                        break
                    time.sleep(0.1)
                ended = orphans.end_left_behind(self.paths, journal)
        except CoworkError as problem:  # a full disk or a damaged journal: the next tray retries
            log.warning("could not end what the tray left running: %s", problem)
            return
        if ended:
            log.info("ended %d processes the lost tray left running", len(ended))

    def _take(self, raw: dict[str, Any]) -> None:
        try:
            message = decode(raw, FROM_TRAY)
        except BadValue as bad:
            log.warning("ignored a malformed %r from the tray: %s", raw.get("op"), bad)
            if raw.get("op") == "state":  # settings that cannot be read: the strictest, never the last
                self._set_state(STRICTEST)
                self._bump()
            return
        if isinstance(message, (Ack, ErrorReply)):
            seq = message.seq
            with self._lock:
                waiter = self._waiting.pop(seq, None) if seq is not None else None
                posted = self._unacked.pop(seq, None) if seq is not None else None
                if posted is not None and isinstance(message, ErrorReply):
                    self._undelivered.append(posted)
            if waiter is not None:
                waiter(message)
            return
        if isinstance(message, (CallProgress, CallResult)):
            deliver = self.calls.get(message.call_id)
            if deliver is not None:
                deliver(message)
            return
        if isinstance(message, StatePush):
            self._set_state(ControlState.from_wire(dict(message.state)))
            if message.pauses is not None:
                self.tray_pauses = message.pauses
        elif isinstance(message, DecisionPush):
            self.decisions[message.id] = message
        elif isinstance(message, StopPush):
            if message.by is None:  # the person's Stop: said as theirs, even after an agent's
                self.stop_authors.pop(message.id, None)
            elif message.id not in self.stops:  # an agent's, unless the person's came first
                self.stop_authors[message.id] = message.by
            self.stops.add(message.id)
        elif isinstance(message, HoldClock):  # the user sees the held command now: its time runs from here
            self.hold_clocks[message.id] = message.expires_at
        elif isinstance(message, Closing):
            self.closing_reason = message.reason
        self._bump()

    def _set_state(self, state: ControlState) -> None:
        if state.paused and not (self.state is not None and self.state.paused):
            self.pauses += 1
        self.state = state

    def _bump(self) -> None:
        self.version += 1
        self.on_change()

    # -- asking -----------------------------------------------------------------------------------

    def post(self, message: Message) -> bool:
        """Send without waiting for the answer; False when it could not even be sent. What the
        tray does not acknowledge comes back through `take_undelivered`."""
        channel = self.channel
        if channel is None:
            return False
        seq = next(self._seq)
        with self._lock:
            self._unacked[seq] = message
        if self._posts is not None and isinstance(channel, LocalEnd):
            self._posts.put(functools.partial(self._send_local, channel, {**encode(message), "seq": seq}, seq))
            return True
        try:
            channel.send({**encode(message), "seq": seq})
        except (OSError, ProtocolError):
            with self._lock:
                self._unacked.pop(seq, None)
            return False
        return True

    def tell(self, message: Message) -> bool:
        """Send and forget (a cancellation): the tray's answer is not waited for, and not kept."""
        channel = self.channel
        if channel is None:
            return False
        if self._posts is not None and isinstance(channel, LocalEnd):
            self._posts.put(
                functools.partial(self._send_local, channel, {**encode(message), "seq": next(self._seq)}, None)
            )
            return True
        try:
            channel.send({**encode(message), "seq": next(self._seq)})
        except (OSError, ProtocolError):
            return False
        return True

    def take_undelivered(self) -> list[Message]:
        with self._lock:
            taken, self._undelivered = self._undelivered, []
        return taken

    def request(self, message: Message) -> Ack:
        """Send a request and wait for the tray's answer, blocking this thread for at most
        ACK_TIMEOUT_S; LinkRefused when it did not do it. On the event loop, use `request_async`."""
        posts = self._posts
        if posts is None or threading.current_thread() is self._thread:
            return self._request_now(message)
        box: list[Ack | LinkRefused] = []
        done = threading.Event()

        def work() -> None:
            try:
                box.append(self._request_now(message))
            except LinkRefused as refused:
                box.append(refused)
            done.set()

        posts.put(work)  # after what was posted before it, as over the socket
        if not done.wait(ACK_TIMEOUT_S):
            raise LinkRefused(NO_ANSWER)
        if isinstance(box[0], LinkRefused):
            raise box[0]
        return box[0]

    def _send_request(self, message: Message, answer: Callable[[Ack | ErrorReply], None]) -> int:
        """Send `message` with a new seq; the tray's answer (or "went away") goes to `answer`, on the
        reader's thread. LinkRefused when it could not be sent."""
        channel = self.channel
        if channel is None:
            raise LinkRefused("the Cowork Terminal app is not running")
        mark(f"link: {getattr(message, 'OP', '?')} request")
        seq = next(self._seq)
        with self._lock:
            self._waiting[seq] = answer
        try:
            channel.send({**encode(message), "seq": seq})
        except (OSError, ProtocolError) as exc:
            with self._lock:
                self._waiting.pop(seq, None)
            raise LinkRefused(f"the Cowork Terminal app could not be reached ({exc})") from None
        return seq

    def _request_now(self, message: Message) -> Ack:
        event = threading.Event()
        box: list[Ack | ErrorReply] = []

        def answer(reply: Ack | ErrorReply) -> None:
            box.append(reply)
            event.set()

        seq = self._send_request(message, answer)
        if not event.wait(ACK_TIMEOUT_S):
            with self._lock:
                self._waiting.pop(seq, None)
            raise LinkRefused(NO_ANSWER)
        mark(f"link: {getattr(message, 'OP', '?')} acked")
        return accepted(box[0])

    async def request_async(self, message: Message, *, late_to: str | None = None) -> Ack:
        """`request` for the event loop, which goes on answering (other tools, pings, pushes from the
        tray) while the tray writes the row. Over the socket the request is sent from the loop, as
        posts are (a small frame), and the reader's thread hands the answer back: no worker thread
        on the way (0.2 ms a call). To the hub of this process, its sending thread does it.
        `late_to`: the forwarded call (`calls`) that waits on after a timeout, and so gets the tray's
        refusal if it comes later (the model reads it as that call's answer)."""
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[Ack | ErrorReply | LinkRefused] = loop.create_future()

        def settle(reply: Ack | ErrorReply | LinkRefused) -> None:  # from any thread
            def put() -> None:
                if not answer.done():
                    answer.set_result(reply)
                elif late_to is not None and (refusal := late_refusal(reply)) is not None:
                    deliver = self.calls.get(late_to)  # gone when the call ended meanwhile
                    if deliver is not None:
                        deliver(refusal)

            with contextlib.suppress(RuntimeError):  # its loop ended meanwhile: nobody waits for the answer
                loop.call_soon_threadsafe(put)

        sent: list[int] = []

        def send() -> None:
            try:
                sent.append(self._send_request(message, settle))
            except LinkRefused as problem:
                settle(problem)

        if self._posts is None:
            send()
        else:
            self._posts.put(send)
        timed_out = False
        try:
            reply: Ack | ErrorReply | LinkRefused | None = None
            with anyio.move_on_after(ACK_TIMEOUT_S):
                reply = await answer
            if reply is None and answer.done() and not answer.cancelled():  # came as the time ran out
                reply = answer.result()
            if reply is None:
                timed_out = True
                raise LinkRefused(NO_ANSWER)
            if isinstance(reply, LinkRefused):
                raise reply
            return accepted(reply)
        finally:
            if not (timed_out and late_to is not None):
                with self._lock:
                    for seq in sent:  # unanswered (cancelled, or timed out and not waited for): forgotten
                        self._waiting.pop(seq, None)
            # else: kept, so that the tray's answer, when it comes, still reaches `settle` (an ack
            # is dropped there, a refusal goes to the call); the answer or the tray's end clears it.


def late_refusal(reply: Ack | ErrorReply | LinkRefused) -> ErrorReply | None:
    """A request's answer that came after the wait for it ended, as a refusal of it: the tray's own,
    or the request's when it could not be sent at all (queued to the hub of this process); None
    for an ack, and for the "went away" of a tray gone (`_lost` tells the calls itself)."""
    if isinstance(reply, LinkRefused):
        return ErrorReply(None, str(reply))
    if isinstance(reply, ErrorReply) and reply.seq is not None:
        return reply
    return None


def accepted(reply: Ack | ErrorReply) -> Ack:
    """The tray's answer to a request, or LinkRefused with the reason it gave."""
    if isinstance(reply, ErrorReply):
        raise LinkRefused(reply.message or REFUSED_BY_THE_APP)
    return reply


def exited(pid: int, proc: Path = Path("/proc")) -> bool:
    """Whether `pid` is gone, a zombie, or exiting (a SIGKILLed tray on a loaded machine can take
    seconds to finish: its locks close as it ends, and it never runs another command)."""
    try:
        fields = (proc / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
        return fields[0] in ("Z", "X") or bool(int(fields[6]) & PF_EXITING)
    except (OSError, IndexError, ValueError):
        return True
