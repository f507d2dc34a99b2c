"""The channel's messages as types, with one encode and one decode that checks every value at the edge.

Every message on the wire is a frozen dataclass here, with its `OP`, `to_wire()` and
`from_wire()`: what a server or the CLI sends the tray (`hello`, a server's rows, a request from
anyone), what the tray pushes (`state`, `decision`, `stop`, `hold_clock`, `closing`), the rules it
tells its windows (`rules`) and the two answers (`ack`, `error`). Both ends import this module (the
tray's hub, a server's tray link, the CLI), so neither imports the other. `encode` makes a message
a JSON object; `decode` reads one with the message kinds its receiver accepts, checking each value
(core/channel/values.py): NaN, infinity, a number out of range or a value of the wrong type is
refused here, before any comparison.

`BadValue` is a refused value in a request from anyone (the CLI, a script): the hub answers it
with an error and changes nothing. A server's own messages (`begin`, `finish`) that do not decode
are a `ProtocolError`: no server of ours sends them, and the peer is disconnected. A push from the
tray that does not decode is ignored by the server, which keeps its last known (strict) state.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from app.core.channel.call_messages import Call, CallCancel, CallProgress, CallResult
from app.core.channel.outcome import MAX_BYTES, outcome_from_wire, outcome_to_wire, status_of
from app.core.channel.pin import MAX_ENV_SHOWN, MAX_PIN_SCRIPTS, Pin, command_digest
from app.core.channel.values import (
    MAX_ID,
    BadValue,
    fields_of,
    finite,
    flag,
    optional_text,
    optional_whole,
    text,
    whole,
)
from app.core.channel.wire import ProtocolError
from app.core.journal.store import Outcome, Status
from app.core.policy.approval import MAX_APPROVAL_WINDOW_S, ApprovalMode
from app.core.policy.tool_sets import TOOL_SETS

MAX_TIMEOUT_MS = 24 * 3600 * 1000
MAX_EPOCH_S = 2.0**40  # a wall-clock time in seconds (year 36812): anything later is not a clock
# What a settings request may change (pause and resume have requests of their own).
SETTING_KEYS = ("approval_mode", "approval_window_s", "tools", "container")


# -- settings -----------------------------------------------------------------------------------


def setting_changes(changes: object) -> dict[str, Any]:
    """The settings a request changes, each checked: an unknown key or a value out of range is refused."""
    given = fields_of(changes, "changes")
    if not given:
        raise BadValue("changes is empty")
    unknown = sorted(str(k) for k in given if k not in SETTING_KEYS)
    if unknown:
        raise BadValue(f"unknown settings: {', '.join(unknown)}")
    checked: dict[str, Any] = {}
    for key, value in given.items():
        if key == "approval_mode":
            if value not in {mode.value for mode in ApprovalMode}:
                raise BadValue(f"approval_mode must be one of {', '.join(m.value for m in ApprovalMode)}")
            checked[key] = value
        elif key == "approval_window_s":
            checked[key] = finite(value, key, 1.0, MAX_APPROVAL_WINDOW_S)
        elif key == "container":  # commands in the OS container (turning it off loosens)
            checked[key] = flag(value, key)
        else:
            if value not in TOOL_SETS:
                raise BadValue(f"tools must be one of {', '.join(TOOL_SETS)}")
            checked[key] = value
    return checked


# -- the first message ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Hello:
    """Who a peer says it is. `remembered`: what a server was last told by a tray (read strictly by
    the hub: a malformed value reads as the strictest state)."""

    role: str
    pid: int | None = None
    headless: bool = False
    lock_key: str | None = None
    server_id: int | None = None
    remembered: Mapping[str, Any] | None = None
    OP: ClassVar[str] = "hello"

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"op": self.OP, "role": self.role, "pid": self.pid}
        if self.role == "server":
            wire.update(
                headless=self.headless, lock_key=self.lock_key, server_id=self.server_id,
                remembered=None if self.remembered is None else dict(self.remembered),
            )  # fmt: skip
        return wire

    @classmethod
    def from_wire(cls, message: Mapping[str, Any]) -> Hello:
        role = message.get("role")
        if role not in ("server", "cli"):
            raise BadValue(f"unknown role {role!r}")
        remembered = message.get("remembered")
        return cls(
            role=str(role),
            pid=optional_whole(message.get("pid"), "pid", 1, MAX_ID),
            headless=message.get("headless") is True,
            lock_key=optional_text(message.get("lock_key"), "lock_key"),
            server_id=optional_whole(message.get("server_id"), "server_id", 1, MAX_ID),
            remembered=None if remembered is None else fields_of(remembered, "remembered"),
        )


@dataclass(frozen=True)
class Welcome:
    """The fields of the tray's `ack` to a hello: where its data lives (the peer checks it is its
    own), its pid, its settings, and a server's row id."""

    data_dir: str
    tray_pid: int | None
    state: Mapping[str, Any]
    server_id: int | None = None
    runs_commands: bool = False  # the tray runs this server's tool calls (it sends each as `call`)

    def fields(self) -> dict[str, Any]:
        fields: dict[str, Any] = {"data_dir": self.data_dir, "tray_pid": self.tray_pid, "state": dict(self.state)}
        if self.server_id is not None:
            fields["server_id"] = self.server_id
        if self.runs_commands:
            fields["runs_commands"] = True
        return fields

    @classmethod
    def from_ack(cls, ack: Ack) -> Welcome:
        fields = ack.fields
        return cls(
            data_dir=text(fields.get("data_dir"), "data_dir"),
            tray_pid=optional_whole(fields.get("tray_pid"), "tray_pid", 1, MAX_ID),
            state=fields_of(fields.get("state"), "state"),
            server_id=optional_whole(fields.get("server_id"), "server_id", 1, MAX_ID),
            runs_commands=fields.get("runs_commands") is True,
        )


# -- what servers send ----------------------------------------------------------------------------


@dataclass(frozen=True)
class BeginRow:
    """A command's row as its server describes it (`begin`); the tray writes it before it runs."""

    command: str
    cwd: str | None
    env_keys: tuple[str, ...]
    status: Status
    timeout_ms: int | None = None
    client_name: str | None = None
    client_version: str | None = None
    tool: str = "execute_command"
    tier: str | None = None
    reason: str | None = None
    confirmation_id: str | None = None
    explanation: str | None = None
    pin: Pin | None = None
    # Held to run without some of the container's protection (a protected write, sudo): only a
    # person answers it, never one of the user's rules.
    unprotected: bool = False

    @classmethod
    def from_wire(cls, data: object) -> BeginRow:
        row = fields_of(data, "row")
        env_keys = row.get("env_keys") or []
        if not isinstance(env_keys, list):
            raise BadValue("env_keys must be a list")
        status = status_of(row.get("status", Status.RUNNING.value))
        pin = row.get("pin")
        return cls(
            command=optional_text(row.get("command"), "command") or "",
            cwd=optional_text(row.get("cwd"), "cwd"),
            env_keys=tuple(text(k, "env_keys") for k in env_keys),
            status=status,
            timeout_ms=optional_whole(row.get("timeout_ms"), "timeout_ms", 1, MAX_TIMEOUT_MS),
            client_name=optional_text(row.get("client_name"), "client_name"),
            client_version=optional_text(row.get("client_version"), "client_version"),
            tool=optional_text(row.get("tool"), "tool") or "execute_command",
            tier=optional_text(row.get("tier"), "tier"),
            reason=optional_text(row.get("reason"), "reason"),
            confirmation_id=optional_text(row.get("confirmation_id"), "confirmation_id"),
            explanation=optional_text(row.get("explanation"), "explanation"),
            pin=None if pin is None else Pin.from_wire(pin),
            unprotected=flag(row.get("unprotected", False), "unprotected"),
        )

    def digest(self) -> str:
        return command_digest(self.command, self.cwd, list(self.env_keys), self.pin, self.confirmation_id)

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "command": self.command, "cwd": self.cwd, "env_keys": sorted(self.env_keys),
            "status": self.status.value, "timeout_ms": self.timeout_ms, "client_name": self.client_name,
            "client_version": self.client_version, "tool": self.tool, "tier": self.tier, "reason": self.reason,
            "confirmation_id": self.confirmation_id, "explanation": self.explanation,
            "pin": None if self.pin is None else self.pin.to_wire(), "unprotected": self.unprotected or None,
        }  # fmt: skip
        return {key: value for key, value in wire.items() if value is not None}


# The field of a `begin`'s ack that says no row was written: the settings it was decided under are
# no longer the user's (a tightening's push had not reached its server yet).
DECIDE_AGAIN = "decide_again"


@dataclass(frozen=True)
class Begin:
    """A server's `begin`: write this row (and, for a held command, ask the user) before it runs.
    `under`: the user's settings (a `StatePush`'s) its server decided under, so that the tray can
    tell a decision made before the push of a tightening reached it; `pauses`: the tray's count of
    pauses its server had been told when it began to decide (`StatePush.pauses`; None: told none
    since it bound), so that the tray refuses a decision a pause came during (red team, ninth)."""

    row: BeginRow
    under: Mapping[str, Any] | None = None
    pauses: int | None = None
    OP: ClassVar[str] = "begin"

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"op": self.OP, "row": self.row.to_wire()}
        if self.under is not None:
            wire["under"] = dict(self.under)
        if self.pauses is not None:
            wire["pauses"] = self.pauses
        return wire

    @classmethod
    def from_wire(cls, message: Mapping[str, Any]) -> Begin:
        under = message.get("under")
        return cls(
            BeginRow.from_wire(message.get("row")),
            None if under is None else fields_of(under, "under"),
            optional_whole(message.get("pauses"), "pauses"),
        )

    @classmethod
    def of_row(cls, row: Mapping[str, Any], under: Mapping[str, Any] | None = None, pauses: int | None = None) -> Begin:
        """A server's `begin` for the keyword arguments of `Journal.begin_command`, checked as the
        tray will check it (BadValue for a row the tray would refuse)."""
        return cls(BeginRow.from_wire(begin_row_to_wire(row)), under, pauses)


def begin_row_to_wire(row: Mapping[str, Any]) -> dict[str, Any]:
    """A server's row as the keyword arguments of `Journal.begin_command`, made a message."""
    wire = {key: value for key, value in row.items() if value is not None}
    status = row.get("status")
    wire["status"] = status.value if isinstance(status, Status) else Status.RUNNING.value
    wire["env_keys"] = sorted(row.get("env_keys") or [])
    pin = row.get("pin")
    if isinstance(pin, Pin):
        wire["pin"] = pin.to_wire()
    wire.pop("hold_expires_at", None)  # the tray sets the hold's expiry itself
    return wire


@dataclass(frozen=True)
class Started:
    """A held command the user allowed starts now (refused by the tray while paused, and after a
    pause that came since it was held: `pauses` as in its `Begin`)."""

    id: int
    pauses: int | None = None
    OP: ClassVar[str] = "started"

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"op": self.OP, "id": self.id}
        if self.pauses is not None:
            wire["pauses"] = self.pauses
        return wire

    @classmethod
    def from_wire(cls, message: Mapping[str, Any]) -> Started:
        return cls(whole(message.get("id"), "id"), optional_whole(message.get("pauses"), "pauses"))


@dataclass(frozen=True)
class Finish:
    """How a command ended (previews only)."""

    id: int
    outcome: Outcome
    OP: ClassVar[str] = "finish"

    def to_wire(self) -> dict[str, Any]:
        return {"op": self.OP, "id": self.id, "outcome": outcome_to_wire(self.outcome)}

    @classmethod
    def from_wire(cls, message: Mapping[str, Any]) -> Finish:
        if "outcome" not in message:
            raise BadValue("finish without an outcome")
        return cls(whole(message.get("id"), "id"), outcome_from_wire(message.get("outcome")))


@dataclass(frozen=True)
class Progress:
    """A running command's output so far (at most once a second), for the live log."""

    id: int
    stdout: str = ""
    stderr: str = ""
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    OP: ClassVar[str] = "progress"

    def to_wire(self) -> dict[str, Any]:
        return {
            "op": self.OP, "id": self.id, "stdout": self.stdout, "stderr": self.stderr,
            "stdout_bytes": self.stdout_bytes, "stderr_bytes": self.stderr_bytes,
        }  # fmt: skip

    @classmethod
    def from_wire(cls, message: Mapping[str, Any]) -> Progress:
        return cls(
            id=whole(message.get("id"), "id"),
            stdout=optional_text(message.get("stdout"), "stdout") or "",
            stderr=optional_text(message.get("stderr"), "stderr") or "",
            stdout_bytes=whole(message.get("stdout_bytes", 0), "stdout_bytes", 0, MAX_BYTES),
            stderr_bytes=whole(message.get("stderr_bytes", 0), "stderr_bytes", 0, MAX_BYTES),
        )


@dataclass(frozen=True)
class ClientName:
    """Which client (Claude app) a server speaks to, for the journal."""

    name: str | None
    version: str | None
    OP: ClassVar[str] = "client"

    def to_wire(self) -> dict[str, Any]:
        return {"op": self.OP, "name": self.name, "version": self.version}

    @classmethod
    def from_wire(cls, message: Mapping[str, Any]) -> ClientName:
        return cls(optional_text(message.get("name"), "name"), optional_text(message.get("version"), "version"))


@dataclass(frozen=True)
class End:
    """The server leaves (after every end it sent): its row is marked exited."""

    OP: ClassVar[str] = "end"

    def to_wire(self) -> dict[str, Any]:
        return {"op": self.OP}

    @classmethod
    def from_wire(cls, message: Mapping[str, Any]) -> End:
        return cls()


# -- what the tray pushes to a server -------------------------------------------------------------


@dataclass(frozen=True)
class StatePush:
    """The user's settings now (read strictly by the server: a malformed one reads as the strictest),
    and how many pauses the tray has made (`pauses`: each change from not paused to paused), which
    a server's `Begin` and `Started` name back."""

    state: Mapping[str, Any]
    pauses: int | None = None
    OP: ClassVar[str] = "state"

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"op": self.OP, "state": dict(self.state)}
        if self.pauses is not None:
            wire["pauses"] = self.pauses
        return wire

    @classmethod
    def from_wire(cls, message: Mapping[str, Any]) -> StatePush:
        return cls(fields_of(message.get("state"), "state"), optional_whole(message.get("pauses"), "pauses"))


@dataclass(frozen=True)
class StopPush:
    """Stop this running command (the user's Stop, or a request from anyone). `by`: who asked when
    it was not the person (messages.AGENT_STOP_BY: another agent's command_stop, through its own
    server), so its owner never tells nor records it as the user's; None: the person's Stop."""

    id: int
    by: str | None = None
    OP: ClassVar[str] = "stop"

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"op": self.OP, "id": self.id}
        if self.by is not None:
            wire["by"] = self.by
        return wire

    @classmethod
    def from_wire(cls, message: Mapping[str, Any]) -> StopPush:
        return cls(whole(message.get("id"), "id"), optional_text(message.get("by"), "by"))


@dataclass(frozen=True)
class ServerStop:
    """A server asks to stop a command another server runs (its agent's command_stop). Taken as a
    server's message, so the tray knows from the asker, not from anything it says, that an agent
    asked, never the person."""

    id: int
    OP: ClassVar[str] = "stop"

    def to_wire(self) -> dict[str, Any]:
        return {"op": self.OP, "id": self.id}

    @classmethod
    def from_wire(cls, message: Mapping[str, Any]) -> ServerStop:
        return cls(whole(message.get("id"), "id"))


@dataclass(frozen=True)
class HoldClock:
    """The user sees this held command now: it expires at `expires_at` (wall clock, seconds)."""

    id: int
    expires_at: float
    OP: ClassVar[str] = "hold_clock"

    def to_wire(self) -> dict[str, Any]:
        return {"op": self.OP, "id": self.id, "expires_at": self.expires_at}

    @classmethod
    def from_wire(cls, message: Mapping[str, Any]) -> HoldClock:
        return cls(whole(message.get("id"), "id"), finite(message.get("expires_at"), "expires_at", 0.0, MAX_EPOCH_S))


@dataclass(frozen=True)
class Closing:
    """The app stops: a server ends what runs and refuses commands until a tray is back."""

    reason: str
    OP: ClassVar[str] = "closing"

    def to_wire(self) -> dict[str, Any]:
        return {"op": self.OP, "reason": self.reason}

    @classmethod
    def from_wire(cls, message: Mapping[str, Any]) -> Closing:
        return cls(optional_text(message.get("reason"), "reason") or "the app stopped")


@dataclass(frozen=True)
class DecisionPush:
    """The user's answer to a held command, with the digest of what the user saw."""

    id: int
    allowed: bool
    by: str
    digest: str
    OP: ClassVar[str] = "decision"

    def to_wire(self) -> dict[str, Any]:
        return {"op": self.OP, "id": self.id, "allowed": self.allowed, "by": self.by, "digest": self.digest}

    @classmethod
    def from_wire(cls, message: Mapping[str, Any]) -> DecisionPush:
        return cls(
            id=whole(message.get("id"), "id"),
            allowed=message.get("allowed") is True,  # anything else is a No
            by=text(message.get("by"), "by"),
            digest=text(message.get("digest"), "digest"),
        )


# -- what the tray tells the app's own windows ------------------------------------------------------


class RuleLike(Protocol):
    """A rule as the hub holds it (core/policy/rules.Rule): only what a window is told of it."""

    @property
    def id(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def folder(self) -> str: ...
    @property
    def scope(self) -> str: ...


@dataclass(frozen=True)
class RuleTold:
    """One of the rules the tray applies, as a window lists it (its kind and scope are told as they
    are: a window that does not know one says so rather than describing it)."""

    id: int
    kind: str
    folder: str
    scope: str

    def to_wire(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "folder": self.folder, "scope": self.scope}

    @classmethod
    def from_wire(cls, data: object) -> RuleTold:
        rule = fields_of(data, "rule")
        return cls(
            id=whole(rule.get("id"), "id", 1, MAX_ID),
            kind=text(rule.get("kind"), "kind"),
            folder=text(rule.get("folder"), "folder"),
            scope=text(rule.get("scope"), "scope"),
        )


@dataclass(frozen=True)
class RulesTold:
    """The rules the tray applies now, oldest first: told to the log window it started on its line
    (at open and whenever they change), and in the `rules` field of its answer to a `holds` request
    (a log window started by hand asks that way). Never the journal's rows, which any program of
    the user can rewrite."""

    rules: tuple[RuleTold, ...]
    OP: ClassVar[str] = "rules"

    @classmethod
    def of(cls, rules: Iterable[RuleLike]) -> RulesTold:
        return cls(tuple(RuleTold(rule.id, rule.kind, rule.folder, rule.scope) for rule in rules))

    def listed(self) -> list[dict[str, Any]]:
        return [rule.to_wire() for rule in self.rules]

    def to_wire(self) -> dict[str, Any]:
        return {"op": self.OP, "rules": self.listed()}

    @classmethod
    def from_wire(cls, message: Mapping[str, Any]) -> RulesTold:
        rules = message.get("rules")
        if not isinstance(rules, list):
            raise BadValue("rules must be a list")
        return cls(tuple(RuleTold.from_wire(rule) for rule in rules))


# -- the two answers to a request ---------------------------------------------------------------


@dataclass(frozen=True)
class Ack:
    """Done: the answer to the request numbered `seq`, with what it returns (`fields`)."""

    seq: int | None
    fields: Mapping[str, Any] = field(default_factory=dict)
    OP: ClassVar[str] = "ack"

    def to_wire(self) -> dict[str, Any]:
        return {**self.fields, "op": self.OP, "seq": self.seq}

    @classmethod
    def from_wire(cls, message: Mapping[str, Any]) -> Ack:
        seq = optional_whole(message.get("seq"), "seq")
        return cls(seq, {key: value for key, value in message.items() if key not in ("op", "seq")})


@dataclass(frozen=True)
class ErrorReply:
    """Not done: the answer to the request numbered `seq`, with why (a sentence its reader sees)."""

    seq: int | None
    message: str
    OP: ClassVar[str] = "error"

    def to_wire(self) -> dict[str, Any]:
        return {"op": self.OP, "seq": self.seq, "message": self.message}

    @classmethod
    def from_wire(cls, message: Mapping[str, Any]) -> ErrorReply:
        return cls(optional_whole(message.get("seq"), "seq"), optional_text(message.get("message"), "message") or "")


# -- what anyone may ask ----------------------------------------------------------------------------


@dataclass(frozen=True)
class IdRequest:
    """stop, deny, approve, remove_rule (from anyone), started (from a server), stop (a push): one id."""

    id: int

    @classmethod
    def from_wire(cls, message: Mapping[str, Any]) -> IdRequest:
        return cls(whole(message.get("id"), "id"))


@dataclass(frozen=True)
class SettingsRequest:
    changes: dict[str, Any]

    @classmethod
    def from_wire(cls, message: Mapping[str, Any]) -> SettingsRequest:
        return cls(setting_changes(message.get("changes")))


@dataclass(frozen=True)
class OutputBudgetRequest:
    budget: str

    @classmethod
    def from_wire(cls, message: Mapping[str, Any]) -> OutputBudgetRequest:
        budget = message.get("budget")
        if isinstance(budget, bool) or not isinstance(budget, (str, int)):
            raise BadValue("budget must be a number of characters or 'seed'")
        return cls(str(budget))


@dataclass(frozen=True)
class Request:
    """A request from anyone (a server, the CLI) as sent: its op and values. The tray reads it with
    `decode_request`, which checks every value before the request is classified."""

    op: str
    values: Mapping[str, Any] = field(default_factory=dict)

    def to_wire(self) -> dict[str, Any]:
        return {**self.values, "op": self.op}


class Message(Protocol):
    """Every message on the channel."""

    def to_wire(self) -> dict[str, Any]: ...


# What each receiver accepts, by op (a request from anyone is read by `decode_request` below).
FROM_TRAY: dict[str, Any] = {
    kind.OP: kind
    for kind in (Ack, ErrorReply, StatePush, DecisionPush, StopPush, HoldClock, Closing, CallProgress, CallResult)
}
FROM_SERVER: dict[str, Any] = {
    kind.OP: kind for kind in (Begin, Started, Finish, Progress, ClientName, End, Call, CallCancel, ServerStop)
}


def encode(message: Message) -> dict[str, Any]:
    """A message as the JSON object the channel sends (wire.py frames it)."""
    return message.to_wire()


def decode(message: Mapping[str, Any], kinds: Mapping[str, Any]) -> Any:
    """The typed form of a message, read with the kinds its receiver accepts (FROM_TRAY,
    FROM_SERVER); BadValue for an unknown op or a value out of range."""
    op = message.get("op")
    kind = kinds.get(op) if isinstance(op, str) else None
    if kind is None:
        raise BadValue(f"unexpected message {op!r}")
    return kind.from_wire(message)


REQUEST_TYPES: dict[str, Any] = {
    "stop": IdRequest,
    "deny": IdRequest,
    "approve": IdRequest,
    "remove_rule": IdRequest,
    "settings": SettingsRequest,
    "output_budget": OutputBudgetRequest,
}


def decode_request(op: str, message: Mapping[str, Any]) -> Any:
    """The typed form of a request from anyone, or None for a request that carries no values
    (pause, resume, state, holds...). Raises BadValue for a value out of range."""
    kind = REQUEST_TYPES.get(op)
    return None if kind is None else kind.from_wire(message)


__all__ = [
    "FROM_SERVER",
    "FROM_TRAY",
    "MAX_ENV_SHOWN",
    "MAX_ID",
    "MAX_PIN_SCRIPTS",
    "Ack",
    "BadValue",
    "DECIDE_AGAIN",
    "Begin",
    "BeginRow",
    "ClientName",
    "Closing",
    "DecisionPush",
    "End",
    "ErrorReply",
    "Finish",
    "Hello",
    "HoldClock",
    "IdRequest",
    "Message",
    "OutputBudgetRequest",
    "Pin",
    "Progress",
    "ProtocolError",
    "Request",
    "RuleTold",
    "RulesTold",
    "ServerStop",
    "SettingsRequest",
    "Started",
    "StatePush",
    "StopPush",
    "Welcome",
    "begin_row_to_wire",
    "command_digest",
    "decode",
    "decode_request",
    "encode",
    "fields_of",
    "finite",
    "flag",
    "optional_text",
    "optional_whole",
    "outcome_from_wire",
    "outcome_to_wire",
    "setting_changes",
    "text",
    "whole",
]
