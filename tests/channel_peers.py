"""A hub in this process and fake peers beside it, for the authority's edge cases in milliseconds.

The hub (`app.core.authority.hub.Hub`) listens at its real address (named after this test's own
COWORK_TERMINAL_HOME, so no other tray or test hears it) and writes a real journal. A `FakePeer`
stands for another process, a server or the CLI: it speaks the wire protocol by hand over the real
transport, so the hub sees it exactly as it sees any connection.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

from app.core.authority.hub import HeldCommand, Hub, Question
from app.core.authority.state import ControlState
from app.core.authority.supervisor import APPROVAL_NEEDED, Supervisor
from app.core.channel.transport import AddressTaken, Listener, address_for, connect
from app.core.channel.wire import Channel
from app.core.paths import AppPaths

ANSWER_S = 5.0  # a hub answers in milliseconds; this only bounds a test that would hang


@dataclass
class Seen:
    """What the hub told the tray around it (its callbacks), with an event per kind to wait on."""

    notices: list[tuple[str, str]] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    holds_changed: threading.Event = field(default_factory=threading.Event)
    asked: threading.Event = field(default_factory=threading.Event)

    def notify(self, title: str, message: str) -> None:
        self.notices.append((title, message))

    def titles(self) -> list[str]:
        """The titles of what the hub told the user so far."""
        return [title for title, _message in self.notices]

    def ask_user(self, question: Question) -> None:
        self.questions.append(question)
        self.asked.set()

    def on_holds(self) -> None:
        self.holds_changed.set()


@contextmanager
def running_hub(paths: AppPaths, **callbacks: Any) -> Iterator[tuple[Hub, Seen]]:
    """A started hub whose callbacks record into `Seen`; closed (telling its peers) afterwards."""
    seen = Seen()
    hub = Hub(
        paths,
        notify=seen.notify,
        ask_user=callbacks.pop("ask_user", seen.ask_user),
        on_holds=seen.on_holds,
        **callbacks,
    )
    deadline = time.monotonic() + ANSWER_S
    while True:  # a hub closed a moment ago lets go of the address once its accept thread wakes
        try:
            hub.start()
            break
        except AddressTaken:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.01)
    try:
        yield hub, seen
    finally:
        hub.close()


def monitor(hub: Hub, supervisor: Supervisor, seen: Seen) -> list[str]:
    """One poll of the tray's monitor (app/ui/tray/loop.py): the hub's look at the file, then the
    servers' rows; the titles of all the tray has told so far (the hub's notices and the
    supervisor's, but for the approval notices the prompt stands for)."""
    hub.tick()
    _snapshot, notices = hub.poll_servers(supervisor)
    seen.notices.extend((n.title, n.message) for n in notices if n.kind != APPROVAL_NEEDED)
    return seen.titles()


class FakePeer:
    """Another process on the channel, as far as the hub can tell (a server or the CLI)."""

    def __init__(self, paths: AppPaths) -> None:
        self.channel: Channel
        self.channel, self.tray = connect(address_for(paths))
        self.pushes: list[dict[str, Any]] = []
        self._seq = itertools.count(1)
        self.welcome: dict[str, Any] = {}

    def hello(self, role: str, **fields: Any) -> dict[str, Any]:
        self.welcome = self.ask("hello", role=role, **fields)
        return self.welcome

    def send(self, op: str, **fields: Any) -> int:
        seq = next(self._seq)
        self.channel.send({"op": op, "seq": seq, **fields})
        return seq

    def answer_to(self, seq: int, timeout_s: float = ANSWER_S) -> dict[str, Any]:
        """The hub's answer to request `seq`; pushes that come first are kept in `pushes`."""
        deadline = time.monotonic() + timeout_s
        while (left := deadline - time.monotonic()) > 0:
            message = self.channel.receive(left)
            if message is None:
                break
            if message.get("seq") == seq and message["op"] in ("ack", "error"):
                return message
            self.pushes.append(message)
        raise AssertionError(f"no answer to request {seq} within {timeout_s:g} s")

    def ask(self, op: str, **fields: Any) -> dict[str, Any]:
        return self.answer_to(self.send(op, **fields))

    def begin(self, command: str, *, status: str = "running", cwd: str | None = "/tmp", **row: Any) -> dict[str, Any]:
        """A server's `begin`: the row it would send for a command (a held one with status waiting)."""
        row = {"command": command, "cwd": cwd, "env_keys": [], "status": status, "tool": "execute_command", **row}
        return self.ask("begin", row=row)

    def next_push(self, op: str, timeout_s: float = ANSWER_S) -> dict[str, Any]:
        """The first push of kind `op`, from those kept or still to come."""
        for kept in self.pushes:
            if kept["op"] == op:
                self.pushes.remove(kept)
                return kept
        deadline = time.monotonic() + timeout_s
        while (left := deadline - time.monotonic()) > 0:
            try:
                message = self.channel.receive(left)
            except (EOFError, OSError) as exc:
                raise AssertionError(f"the hub closed the connection before a {op!r} push (got {self.pushes})") from exc
            if message is None:
                break
            if message["op"] == op:
                return message
            self.pushes.append(message)
        raise AssertionError(f"no {op!r} push within {timeout_s:g} s (got {self.pushes})")

    def quiet_for(self, seconds: float) -> list[dict[str, Any]]:
        """Everything pushed within `seconds` (for checks that something was NOT pushed)."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                message = self.channel.receive(left)
            except (EOFError, OSError):
                break
            if message is None:
                break
            self.pushes.append(message)
        return list(self.pushes)

    def close(self) -> None:
        self.channel.close()


@contextmanager
def fake_peers(paths: AppPaths) -> Iterator[Callable[..., FakePeer]]:
    """A maker of FakePeers that said hello (`make(role, **hello)`), every one closed at the end."""
    made: list[FakePeer] = []

    def make(role: str, **hello: Any) -> FakePeer:
        peer = FakePeer(paths)
        peer.hello(role, **hello)
        made.append(peer)
        return peer

    try:
        yield make
    finally:
        for peer in made:
            peer.close()


def wait_until(condition: Any, timeout_s: float = ANSWER_S) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the condition never became true")
        time.sleep(0.005)


# -- a program at the tray's address, played by the test -------------------------------------------


def state_wire(**changes: Any) -> dict[str, Any]:
    """The control state a tray says in its welcome: never asking, unless `changes` say otherwise."""
    return {**ControlState(approval_mode="never").to_wire(), **changes}


class AtTheTraysAddress:
    """A program listening at the tray's address: it takes one peer and reads its hello, then does
    what `after_hello` says (set everything it uses before calling this `__init__`)."""

    def __init__(self, paths: AppPaths) -> None:
        self.listener = Listener(address_for(paths))
        self.channel: Any = None
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        with suppress(OSError, EOFError):
            self.channel = self.listener.accept().channel
            self.channel.receive(ANSWER_S)  # the hello
            self.after_hello()

    def after_hello(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        self.listener.close()
        if self.channel is not None:
            self.channel.close()


class ScriptedTray(AtTheTraysAddress):
    """A program at the tray's address that welcomes one server, then answers each of its messages
    with `reply(message)` (None: no answer), as no tray of ours does."""

    def __init__(self, paths: AppPaths, state: dict[str, Any] | None = None) -> None:
        self.data_dir = os.path.realpath(paths.data_dir)
        self.state = state or state_wire()
        rows = itertools.count(7)  # the row ids it says it wrote
        self.reply: Callable[[dict[str, Any]], dict[str, Any] | None] = lambda m: {
            "op": "ack", "seq": m["seq"], **({"id": next(rows)} if m["op"] == "begin" else {}),
        }  # fmt: skip
        self.received: list[dict[str, Any]] = []
        super().__init__(paths)

    def after_hello(self) -> None:
        self.channel.send({"op": "ack", "data_dir": self.data_dir, "server_id": 1, "state": self.state})
        while True:
            message = self.channel.receive()
            self.received.append(message)
            answer = self.reply(message)
            if answer is not None:
                self.channel.send(answer)

    def push(self, message: dict[str, Any]) -> None:
        self.channel.send(message)

    def ops(self) -> list[str]:
        return [m["op"] for m in self.received]


@contextmanager
def scripted_tray(paths: AppPaths, state: dict[str, Any] | None = None) -> Iterator[ScriptedTray]:
    tray = ScriptedTray(paths, state)
    try:
        yield tray
    finally:
        tray.close()


__all__ = [
    "AtTheTraysAddress",
    "FakePeer",
    "HeldCommand",
    "ScriptedTray",
    "Seen",
    "running_hub",
    "scripted_tray",
    "state_wire",
    "wait_until",
]
