"""Commands waiting for the user, as their servers described them, and the rules that answer them.

The hub keeps one `Holds` and calls it under its own lock (this class has none): a hold is added
when a server's `begin` says "waiting", leaves when the user (or a rule) answers it, when its time
runs out, when its server goes, or when a pause drops every one. What the user is shown comes from
here, never from the journal's row: another program may rewrite the row.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from app.core.authority.connection import Peer
from app.core.channel.protocol import Pin
from app.core.classifier import classify
from app.core.journal.records import bounded
from app.core.policy.rules import Rule, matching_rule

MAX_HOLDS_PER_PEER = 5  # a server (or a program posing as one) cannot bury the user in questions


@dataclass
class HeldCommand:
    """A command waiting for the user, as its server described it to the hub (never from the file)."""

    command_id: int
    command: str
    cwd: str | None
    env_keys: list[str]
    tool: str
    reasons: str
    client: str
    expires_at: float
    digest: str
    peer: Peer
    explanation: str | None = None
    pin: Pin | None = None  # what runs: the real folder, the scripts' content, the environment
    seen_at: float | None = None  # when the user could first see it: its clock starts then
    unprotected: bool = False  # it would run without some of the container's protection: no rule answers it

    @property
    def folder(self) -> str | None:
        """The folder the command runs in, resolved (what the user is shown)."""
        return self.pin.folder if self.pin is not None else self.cwd

    def env_shown(self) -> list[str]:
        """The environment as the user sees it: NAME=value for what changes which program runs."""
        shown = dict(self.pin.env_shown) if self.pin is not None else {}  # what picks programs first
        return [*(f"{key}={value}" for key, value in shown.items()), *(k for k in self.env_keys if k not in shown)]

    def to_window(self) -> dict[str, Any]:
        return {
            "id": self.command_id, "command": self.command, "cwd": self.cwd, "env_keys": self.env_keys,
            "tool": self.tool, "reasons": self.reasons, "client": self.client, "expires_at": self.expires_at,
            "explanation": self.explanation, "seen": self.seen_at is not None,
            "folder": self.folder, "env_shown": self.env_shown(),
        }  # fmt: skip

    def to_list(self) -> dict[str, Any]:
        """`to_window` with each text bounded (a command cut with a marker, as the journal's `bounded`
        cuts): what a list of holds says (the log window's, the CLI's), one of which is at most about
        10 KB however long the command; the approval window gets it whole (`to_window`)."""
        told = self.to_window()
        for key, keep in LISTED_TEXT_KEEP.items():
            if isinstance(told.get(key), str):
                told[key] = bounded(told[key], keep)
        for key in ("env_keys", "env_shown"):
            told[key] = [bounded(str(entry), LISTED_ENV_KEEP) for entry in told[key][:LISTED_ENV_MAX]]
        return told


# A hold as a list says it (HeldCommand.to_list): its texts at most this long.
LISTED_TEXT_KEEP = {"command": 4000, "cwd": 1000, "folder": 1000, "reasons": 1000, "explanation": 1000, "client": 200}
LISTED_ENV_KEEP = 200
LISTED_ENV_MAX = 20


class Holds:
    """The waiting commands by id. Each call holds a lock of its own, a moment: a Deny takes its hold
    without the hub's lock, which the hourly upkeep holds for seconds after a flood of rows (a red
    team, 2026-12-06); the rest calls it under the hub's lock as before."""

    def __init__(self) -> None:
        self._by_id: dict[int, HeldCommand] = {}
        self._lock = threading.Lock()

    def get(self, command_id: int) -> HeldCommand | None:
        with self._lock:
            return self._by_id.get(command_id)

    def add(self, hold: HeldCommand) -> None:
        with self._lock:
            self._by_id[hold.command_id] = hold

    def pop(self, command_id: int) -> HeldCommand | None:
        with self._lock:
            return self._by_id.pop(command_id, None)

    def full_for(self, peer: Peer) -> bool:
        """True when this peer already has MAX_HOLDS_PER_PEER commands waiting."""
        with self._lock:
            return sum(hold.peer is peer for hold in self._by_id.values()) >= MAX_HOLDS_PER_PEER

    def drop(self, held: Iterable[int]) -> list[int]:
        """Remove these ids; the ones that were there."""
        with self._lock:
            return [command_id for command_id in list(held) if self._by_id.pop(command_id, None) is not None]

    def drop_all(self) -> list[int]:
        """Every hold goes (a pause): the ids that were there."""
        with self._lock:
            gone, self._by_id = list(self._by_id), {}
            return gone

    def drop_peer(self, peer: Peer) -> list[int]:
        """The holds of a peer that went away."""
        with self._lock:
            return self._drop_where(lambda hold: hold.peer is peer)

    def expire(self, now: float) -> list[int]:
        """Remove the holds whose time ran out; their ids."""
        with self._lock:
            return self._drop_where(lambda hold: hold.expires_at <= now)

    def _drop_where(self, gone: Callable[[HeldCommand], bool]) -> list[int]:
        found = [i for i, hold in self._by_id.items() if gone(hold)]
        for command_id in found:
            del self._by_id[command_id]
        return found

    def pending(self, now: float) -> list[HeldCommand]:
        """The holds still waiting at `now`, oldest first."""
        with self._lock:
            held = list(self._by_id.values())
        return [h for h in sorted(held, key=lambda h: h.command_id) if h.expires_at > now]


def rule_may_answer(hold: HeldCommand) -> bool:
    """Whether any rule of the user's may answer this hold (else the window offers none): never one
    to run without some of the container's protection; only a fresh `bash -c` (execute_command),
    where no function, alias or variable the agent set before can change what `rm` is, and with no
    `env` of the model's (a PATH of its own would pick another `rm`)."""
    return not hold.unprotected and hold.tool == "execute_command" and not hold.env_keys


def rule_for(hold: HeldCommand, rules: list[Rule], protected: list[str]) -> int | None:
    """The id of the first of the user's rules that allows this held command, or None.

    `rules` must be the tray's own (the hub's rule book): a row written into the file never counts.
    The command is judged in its real folder, as it will run."""
    if not rules or not rule_may_answer(hold):
        return None
    real_cwd = hold.folder if hold.pin is not None else os.path.realpath(hold.cwd) if hold.cwd else None
    verdict = classify(hold.command, cwd=real_cwd, protected_paths=protected)
    session = None if hold.peer.server_id is None else str(hold.peer.server_id)
    rule = matching_rule(rules, hold.command, real_cwd, verdict, session)
    return None if rule is None else rule.id
