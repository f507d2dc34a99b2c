"""The hub's connections: who is connected, their threads, and which handler each message goes to.

Threads: one accepts; each connection has a reader (requests, answered in order) and a writer fed
by a queue, so a peer that stops reading never blocks the hub. Every peer is untrusted: it may
tighten, query, send its rows (a server), or ask to loosen (a confirm window).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol, cast

from app.core.authority.connection import Peer
from app.core.authority.errors import RequestError
from app.core.authority.record import CLOSING_REASON, JOURNAL_DAMAGED
from app.core.authority.requests import RequestsHub, handle_request
from app.core.authority.server_rows import SERVER_OPS, RowsHub
from app.core.authority.state import ControlState
from app.core.channel import local_link
from app.core.channel.local_link import LocalEnd, local_pair
from app.core.channel.peer import OwnFacts, PeerFacts, client_refusal, from_container
from app.core.channel.protocol import (
    FROM_SERVER,
    Ack,
    BadValue,
    Closing,
    ErrorReply,
    Hello,
    Message,
    Welcome,
    decode,
    decode_request,
    optional_whole,
)
from app.core.channel.transport import Accepted, Listener
from app.core.channel.wire import ProtocolError
from app.core.data_folder import is_corrupt
from app.core.hop_times import mark
from app.core.i18n import _
from app.core.policy.direction import KNOWN_OPS

log = logging.getLogger(__name__)

SEND_JOIN_S = 1.0  # at close, how long the writers get to deliver "closing"
CONTAINER_OPS = frozenset({"hello", "pause", "stop"})  # all a peer inside a command container may ask
# English: only a command the agent ran (or what it started) reads it.
CONTAINED_REFUSAL = (
    "Refused: this request comes from inside a command's container (a command the AI agent ran, or "
    "something it started). From there only pause and stop are accepted; ask the user to do this in "
    "the Cowork Terminal app."
)


class PeersHub(RequestsHub, RowsHub, Protocol):
    """What the connections reach of the hub: what requests and rows do, and a peer's arrival and leaving."""

    @property
    def own(self) -> OwnFacts: ...
    @property
    def real_data_dir(self) -> str: ...
    def forget(self, peer: Peer) -> None: ...
    def merge_remembered(self, remembered: ControlState) -> None: ...
    def reopen_journal(self) -> None: ...


class Connections:
    """The listener, the peers connected now and their threads; each message goes to its handler."""

    def __init__(self, hub: PeersHub) -> None:
        self.hub = hub
        self._peers: list[Peer] = []
        self._lock = threading.Lock()  # the list only: a push never waits for the hub's lock (or the disk)
        self._listener: Listener | None = None
        self._threads: list[threading.Thread] = []
        self.closing = False

    def start(self, address: Any) -> None:
        """Listen; raises AddressTaken when another process holds the tray's address."""
        self._listener = Listener(address)
        self._spawn("tray-hub-accept", self._accept_loop)
        local_link.offer(self.dial_local)

    def dial_local(self) -> LocalEnd:
        """A connection from this very process (a runner's link, core/channel/local_link.py): the
        same peer as over the socket, its messages handled on the sender's thread, one at a time."""
        hub_end, link_end = local_pair()
        own = self.hub.own
        facts = PeerFacts(
            os.getpid(), own.uid, own.executable, tuple(sys.argv),
            pid_namespace=own.pid_namespace, pid_depth=own.pid_depth,
        )  # fmt: skip
        peer = Peer(Accepted(cast(Any, hub_end), facts))
        with self._lock:
            self._peers.append(peer)
        self._spawn("tray-hub-send-local", peer.write_loop)
        one_at_a_time = threading.Lock()

        def deliver(message: dict[str, Any]) -> None:
            with one_at_a_time:
                try:
                    self._handle(peer, message)
                except ProtocolError as exc:
                    log.warning("%s sent a bad message (%s): disconnected", peer.label, exc)
                    hub_end.close()
                except Exception:  # as a reader thread's top: the peer is dropped, the hub lives on
                    log.exception("handling a message from %s failed", peer.label)
                    hub_end.close()

        hub_end.listen(deliver, on_close=lambda: self._drop(peer))
        return link_end

    def snapshot(self) -> list[Peer]:
        """The peers connected now (a copy)."""
        with self._lock:
            return list(self._peers)

    def servers(self) -> list[Peer]:
        return [p for p in self.snapshot() if p.role == "server"]

    def push_all(self, message: Message) -> None:
        """Queue a message for every peer: never blocks (each peer's writer thread sends it)."""
        for peer in self.snapshot():
            peer.push(message)

    def close(self, reason: str) -> None:
        """Tell every peer the app stops, give the writers a moment to say it, then close everything."""
        self.closing = True
        for peer in self.snapshot():
            peer.push(Closing(reason))
            peer.stop_writing()
        deadline = time.monotonic() + SEND_JOIN_S
        for thread in self._threads:
            if thread.name.startswith("tray-hub-send"):
                thread.join(max(0.0, deadline - time.monotonic()))
        local_link.withdraw(self.dial_local)
        if self._listener is not None:
            self._listener.close()
        for peer in self.snapshot():
            peer.channel.close()

    def _spawn(self, name: str, target: Callable[..., None], *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)
        thread.start()
        self._threads = [t for t in self._threads if t.is_alive()] + [thread]

    def _accept_loop(self) -> None:
        assert self._listener is not None
        while not self.closing:
            try:
                accepted = self._listener.accept()
            except OSError:
                if self.closing:
                    return
                log.exception("the hub could not accept a connection")
                time.sleep(0.1)
                continue
            refusal = client_refusal(accepted.peer, self.hub.own)
            if refusal:
                log.warning("refused a connection: %s", refusal)
                accepted.channel.close()
                continue
            peer = Peer(accepted)
            with self._lock:
                self._peers.append(peer)
            self._spawn(f"tray-hub-send-{accepted.peer.pid}", peer.write_loop)
            self._spawn(f"tray-hub-read-{accepted.peer.pid}", self._read_loop, peer)

    def _read_loop(self, peer: Peer) -> None:
        try:
            while not self.closing:
                message = peer.channel.receive()
                if message is None:
                    continue
                self._handle(peer, message)
        except (EOFError, OSError):
            pass
        except ProtocolError as exc:
            log.warning("%s sent a bad message (%s): disconnected", peer.label, exc)
        except Exception:  # the top of a thread: log it; the peer is dropped, the hub lives on
            log.exception("handling a message from %s failed", peer.label)
        finally:
            self._drop(peer)

    def _drop(self, peer: Peer) -> None:
        """The peer is gone: its channel closed, its writer ended, and the hub forgets it."""
        peer.channel.close()
        peer.stop_writing()
        with self._lock:
            if peer not in self._peers:
                return
            self._peers.remove(peer)
        self.hub.forget(peer)

    def _handle(self, peer: Peer, message: dict[str, Any]) -> None:
        hub = self.hub
        op = message["op"]
        mark(f"hub: {op} in")
        try:  # every answer carries the request's number back: a whole number, or none
            seq = optional_whole(message.get("seq"), "seq")
        except BadValue as bad:
            raise ProtocolError(str(bad)) from None
        if peer.role is None and op != "hello":
            raise ProtocolError("the first message must be hello")
        if op not in CONTAINER_OPS and from_container(peer.facts, hub.own):
            # A command (or anything it started, detached or not) cannot leave its container: from
            # there only tightening that needs no window; no window is shown, nothing else is done.
            log.warning("refused %r from %s: it runs inside a command's container", op, peer.label)
            peer.answer(ErrorReply(seq, CONTAINED_REFUSAL))
            return
        try:
            if op == "hello":
                reply = self._hello(peer, message)
            elif peer.role == "server" and op in SERVER_OPS:
                # BadValue: a message no server of ours sends (a ValueError: the peer is dropped below)
                reply = SERVER_OPS[op](hub, peer, decode(message, FROM_SERVER))
            elif op in KNOWN_OPS:
                try:  # every value checked before any comparison (a NaN would pass for a tightening)
                    typed = decode_request(op, message)
                except BadValue as bad:
                    raise RequestError(_("Refused: {problem}. Nothing changed.").format(problem=bad)) from None
                contained = op == "stop" and from_container(peer.facts, hub.own)  # an agent's, then
                answered = handle_request(hub, peer, op, message, seq, typed, contained=contained)
                if answered is None:  # answered later, after the user's click
                    return
                reply = answered
            else:
                raise RequestError(f"unknown request {op!r}")
        except RequestError as problem:
            peer.answer(ErrorReply(seq, str(problem)))
            return
        except (ValueError, TypeError, KeyError) as exc:  # a value no server of ours sends
            raise ProtocolError(f"malformed {op!r}: {exc}") from None
        except sqlite3.OperationalError as exc:
            with hub.lock:
                english, person = hub.record.problem(exc)
            # A server passes the answer on to the model (English); the CLI prints it to a person.
            peer.answer(ErrorReply(seq, person if peer.role == "cli" else english))
            return
        except sqlite3.DatabaseError as exc:  # damage SQLite found only now, as it read a page
            if hub.record.closed:  # read just before the tray quit (Hub.close): the file is closed
                log.warning("%r from %s came as the app stopped: not done", op, peer.label)
                peer.answer(ErrorReply(seq, CLOSING_REASON))
                return
            if not is_corrupt(exc):
                raise
            hub.reopen_journal()
            peer.answer(ErrorReply(seq, JOURNAL_DAMAGED.format(error=exc)))
            return
        mark(f"hub: {op} answered")
        peer.answer(Ack(seq, reply))

    def _hello(self, peer: Peer, message: dict[str, Any]) -> dict[str, Any]:
        hub = self.hub
        if peer.role is not None:
            raise ProtocolError("hello twice")
        try:
            hello = Hello.from_wire(message)
        except BadValue as bad:
            raise ProtocolError(str(bad)) from None
        peer.role = hello.role
        server_id = None
        if hello.role == "server":
            if hello.remembered is not None:
                peer.remembered = ControlState.from_wire(dict(hello.remembered))
                hub.merge_remembered(peer.remembered)
            with hub.lock:
                peer.registration = {"headless": hello.headless, "lock_key": hello.lock_key}
                claimed = hello.server_id  # its row from before, if the journal says that pid still has it
                if claimed is not None and hub.record.journal.live_server_pid(claimed) == peer.facts.pid:
                    peer.server_id = claimed
                else:
                    # A full disk must not turn the tray into "a program that is not Cowork Terminal":
                    # the server is welcomed, and registered at its first command (which the disk
                    # refuses in words until there is room).
                    with contextlib.suppress(sqlite3.OperationalError):
                        peer.server_id = hub.register(peer)
                hub.record.wrote()
            server_id = peer.server_id
            hub.on_change()
        # A server elsewhere hands this tray its tool calls; the tray's own runners (this process) run them.
        host = hub.command_host
        runs = hello.role == "server" and host is not None and peer.facts.pid != os.getpid()
        if runs and host is not None:
            host.expect_calls()  # its calls will come: the runners' modules load now, not at the first
        return Welcome(hub.real_data_dir, os.getpid(), hub.state.to_wire(), server_id, runs).fields()
