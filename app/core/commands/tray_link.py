"""A server's end of the channel: its tray, checked by the OS, and what the tray last told it.

The link is made once at start and kept; a server that lost its tray tries again every
RECONNECT_S and, until it is back, refuses commands (fail closed). A server that had a tray is
tray-bound for life, even if it was started `--headless`: it never goes back to reading controls
from the journal. One thread reads; requests from the event loop wait for their answer (the row is
written before the command starts), at most ACK_TIMEOUT_S.
"""

from __future__ import annotations

import itertools
import logging
import math
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

from app.core.authority.state import ControlState
from app.core.channel.peer import OwnFacts, own_facts, tray_refusal
from app.core.channel.protocol import BadValue, DecisionPush, IdRequest
from app.core.channel.transport import ChannelUnavailable, address_for, connect
from app.core.channel.wire import Channel, ProtocolError
from app.core.paths import AppPaths

log = logging.getLogger(__name__)

ACK_TIMEOUT_S = 5.0  # no answer from the tray in this long: the command is refused
HELLO_TIMEOUT_S = 2.0
RECONNECT_S = 0.5


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
    ) -> None:
        self.paths = paths
        self.headless = headless
        self.lock_key = lock_key
        self.on_change = on_change
        self.address = address_for(paths)
        self.own: OwnFacts = own_facts(os.path.realpath(paths.data_dir))
        self.server_id: int | None = None
        self.channel: Channel | None = None
        self.bound = False  # a tray accepted us once: from now on only a tray decides
        self.state: ControlState | None = None  # what the tray last pushed
        self.refusal: str | None = None  # why the last peer at the tray's address was not trusted
        self.closing_reason: str | None = None
        self.decisions: dict[int, Decision] = {}
        self.stops: set[int] = set()
        self.hold_clocks: dict[int, float] = {}  # held command -> when it expires, from when the user saw it
        self.version = 0
        self._seq = itertools.count(1)
        self._waiting: dict[int, tuple[threading.Event, list[dict[str, Any]]]] = {}
        # Ends sent without waiting (the model has its result at once): kept until the tray
        # acknowledges them; if it refuses or goes, the server writes them itself.
        self._unacked: dict[int, dict[str, Any]] = {}
        self._undelivered: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None
        self._warned: str | None = None

    @property
    def connected(self) -> bool:
        return self.channel is not None

    # -- connecting -------------------------------------------------------------------------------

    def try_connect(self) -> bool:
        """One attempt to reach and check the tray; True when bound to it now."""
        try:
            channel, peer = connect(self.address)
        except ChannelUnavailable:
            return False
        try:
            channel.send(
                {"op": "hello", "role": "server", "pid": os.getpid(), "headless": self.headless,
                 "lock_key": self.lock_key, "server_id": self.server_id,
                 "remembered": self.state.to_wire() if self.state else None}
            )  # fmt: skip
            welcome = channel.receive(HELLO_TIMEOUT_S)
        except (OSError, EOFError, ProtocolError):
            channel.close()
            return False
        if welcome is None or welcome.get("op") != "ack":
            channel.close()
            self._refuse("the program at the tray's address did not answer as Cowork Terminal does")
            return False
        refusal = tray_refusal(peer, self.own, welcome.get("data_dir"))
        if refusal:
            channel.close()
            self._refuse(refusal)
            return False
        server_id = welcome.get("server_id")
        if isinstance(server_id, int) and not isinstance(server_id, bool) and server_id > 0:
            self.server_id = server_id
        self.state = ControlState.from_wire(welcome.get("state"))
        self.refusal = None
        self.closing_reason = None
        self.bound = True
        self.channel = channel
        self._bump()
        log.info("bound to the tray (pid %s)", peer.pid)
        return True

    def _refuse(self, reason: str) -> None:
        self.refusal = reason
        if self._warned != reason:  # once per reason: Claude's log for this server shows it
            self._warned = reason
            print(f"cowork-terminal: not taking orders from the tray's address: {reason}", file=sys.stderr, flush=True)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="tray-link", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stopped.set()
        channel = self.channel
        if channel is not None:
            channel.close()

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

    def _lost(self, channel: Channel, exc: BaseException | None) -> None:
        channel.close()
        self.channel = None
        log.info("lost the tray (%s)", exc)
        with self._lock:
            waiting = list(self._waiting.values())
            self._undelivered.extend(self._unacked.values())
            self._unacked.clear()
        for event, box in waiting:
            box.append({"op": "error", "message": "the Cowork Terminal app went away"})
            event.set()
        self._bump()

    def _take(self, message: dict[str, Any]) -> None:
        op = message["op"]
        if op in ("ack", "error"):
            seq = message.get("seq")
            with self._lock:
                waiter = self._waiting.pop(seq, None) if isinstance(seq, int) else None
                posted = self._unacked.pop(seq, None) if isinstance(seq, int) else None
                if posted is not None and op == "error":
                    self._undelivered.append(posted)
            if waiter is not None:
                waiter[1].append(message)
                waiter[0].set()
            return
        if op == "state":
            self.state = ControlState.from_wire(message.get("state"))
        elif op == "decision":
            try:
                decision = DecisionPush.from_wire(message)
            except BadValue as bad:
                log.warning("ignored a malformed decision from the tray: %s", bad)
                return
            self.decisions[decision.id] = decision
        elif op == "stop":
            try:
                self.stops.add(IdRequest.from_wire(message).id)
            except BadValue as bad:
                log.warning("ignored a malformed stop from the tray: %s", bad)
                return
        elif op == "hold_clock":  # the user sees the held command now: its time runs from here
            command_id, expires_at = message.get("id"), message.get("expires_at")
            if (
                type(command_id) is not int
                or not isinstance(expires_at, (int, float))
                or isinstance(expires_at, bool)
                or not math.isfinite(expires_at)
            ):
                log.warning("ignored a malformed hold clock from the tray: %r", message)
                return
            self.hold_clocks[command_id] = float(expires_at)
        elif op == "closing":
            self.closing_reason = str(message.get("reason") or "the app stopped")
        else:
            log.info("ignored a message from the tray: %s", op)
            return
        self._bump()

    def _bump(self) -> None:
        self.version += 1
        self.on_change()

    # -- asking -----------------------------------------------------------------------------------

    def post(self, op: str, **fields: Any) -> bool:
        """Send without waiting for the answer; False when it could not even be sent. What the
        tray does not acknowledge comes back through `take_undelivered`."""
        channel = self.channel
        if channel is None:
            return False
        seq = next(self._seq)
        message = {"op": op, "seq": seq, **fields}
        with self._lock:
            self._unacked[seq] = message
        try:
            channel.send(message)
        except (OSError, ProtocolError):
            with self._lock:
                self._unacked.pop(seq, None)
            return False
        return True

    def take_undelivered(self) -> list[dict[str, Any]]:
        with self._lock:
            taken, self._undelivered = self._undelivered, []
        return taken

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        """Send a request and wait for the tray's answer; LinkRefused when it did not do it."""
        channel = self.channel
        if channel is None:
            raise LinkRefused("the Cowork Terminal app is not running")
        seq = next(self._seq)
        event = threading.Event()
        box: list[dict[str, Any]] = []
        with self._lock:
            self._waiting[seq] = (event, box)
        try:
            channel.send({"op": op, "seq": seq, **fields})
        except (OSError, ProtocolError) as exc:
            with self._lock:
                self._waiting.pop(seq, None)
            raise LinkRefused(f"the Cowork Terminal app could not be reached ({exc})") from None
        if not event.wait(ACK_TIMEOUT_S):
            with self._lock:
                self._waiting.pop(seq, None)
            raise LinkRefused(f"the Cowork Terminal app did not answer within {ACK_TIMEOUT_S:g} s")
        reply = box[0]
        if reply["op"] == "error":
            raise LinkRefused(str(reply.get("message") or "refused by the app"))
        return reply
