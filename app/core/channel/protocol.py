"""The channel's messages as types, with one decode that checks every value at the edge.

Both ends import this module (the tray's hub and a server's tray link), so neither imports the
other. A value no program of ours sends (NaN, infinity, a negative or huge number, a boolean where
a number belongs, a string where a list belongs) is refused here, before any comparison: every
comparison with NaN is false, so a NaN that got through would count as a tightening everywhere.

`BadValue` is a refused value in a request from anyone (the CLI, a script): the hub answers it
with an error and changes nothing. A server's own messages (`begin`, `finish`) that do not decode
are a `ProtocolError`: no server of ours sends them, and the peer is disconnected.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.core.channel.wire import ProtocolError
from app.core.journal.store import Outcome, Status, preview
from app.core.policy.approval import MAX_APPROVAL_WINDOW_S, ApprovalMode
from app.core.policy.tool_sets import TOOL_SETS

MAX_ID = 2**62  # row ids, pids, sequence numbers: SQLite's integers are 64-bit
MAX_TIMEOUT_MS = 24 * 3600 * 1000
MAX_BYTES = 2**62
MAX_DURATION_MS = 366 * 24 * 3600 * 1000.0
EXIT_CODE_RANGE = (-(2**31), 2**32)  # Windows exit codes are unsigned 32-bit; signals are negative
MAX_PIN_SCRIPTS = 64
MAX_ENV_SHOWN = 256
# What a settings request may change (pause and resume have requests of their own).
SETTING_KEYS = ("approval_mode", "approval_window_s", "tools", "container")


class BadValue(ValueError):
    """A value that is not one our programs send: the request is refused, nothing changes."""


# -- values -----------------------------------------------------------------------------------


def finite(value: object, name: str, low: float, high: float) -> float:
    """A real number in [low, high]: never a boolean, NaN or infinity."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadValue(f"{name} must be a number (got {type(value).__name__})")
    if not math.isfinite(value) or not low <= value <= high:
        raise BadValue(f"{name} must be a number from {low:g} to {high:g} (got {value!r})")
    return float(value)


def whole(value: object, name: str, low: int = 0, high: int = MAX_ID) -> int:
    """A whole number in [low, high]: never a boolean or a float."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadValue(f"{name} must be a whole number (got {type(value).__name__})")
    if not low <= value <= high:
        raise BadValue(f"{name} must be from {low} to {high} (got {value})")
    return value


def optional_whole(value: object, name: str, low: int = 0, high: int = MAX_ID) -> int | None:
    return None if value is None else whole(value, name, low, high)


def text(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise BadValue(f"{name} must be text (got {type(value).__name__})")
    return value


def optional_text(value: object, name: str) -> str | None:
    return None if value is None else text(value, name)


def flag(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise BadValue(f"{name} must be true or false (got {type(value).__name__})")
    return value


def fields_of(message: object, name: str) -> Mapping[str, Any]:
    if not isinstance(message, Mapping):
        raise BadValue(f"{name} must be an object")
    return message


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


# -- what the approval pins -----------------------------------------------------------------------


@dataclass(frozen=True)
class Pin:
    """What a held command runs, fixed when the user is asked: the real folder and its identity, the
    content of each script it runs by path, and its environment (every value in a digest; the values
    that change which program runs, shown to the user)."""

    folder: str  # the resolved folder, where the command starts
    folder_id: tuple[int, int]  # (st_dev, st_ino) when the user was asked
    scripts: tuple[tuple[str, str], ...] = ()  # (absolute path, sha256 or "absent")
    env_digest: str = ""
    env_shown: tuple[tuple[str, str], ...] = ()

    def to_wire(self) -> dict[str, Any]:
        return {
            "folder": self.folder,
            "folder_id": list(self.folder_id),
            "scripts": [list(s) for s in self.scripts],
            "env_digest": self.env_digest,
            "env_shown": [list(e) for e in self.env_shown],
        }

    @classmethod
    def from_wire(cls, data: object) -> Pin:
        fields = fields_of(data, "pin")
        folder_id = fields.get("folder_id")
        if not isinstance(folder_id, list) or len(folder_id) != 2:
            raise BadValue("pin.folder_id must be [device, inode]")
        return cls(
            folder=text(fields.get("folder"), "pin.folder"),
            folder_id=(whole(folder_id[0], "device", 0, 2**64), whole(folder_id[1], "inode", 0, 2**64)),
            scripts=_pairs(fields.get("scripts"), "pin.scripts", MAX_PIN_SCRIPTS),
            env_digest=text(fields.get("env_digest", ""), "pin.env_digest"),
            env_shown=_pairs(fields.get("env_shown"), "pin.env_shown", MAX_ENV_SHOWN),
        )


def _pairs(value: object, name: str, limit: int) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > limit:
        raise BadValue(f"{name} must be a list of at most {limit} pairs")
    pairs = []
    for item in value:
        if not isinstance(item, list) or len(item) != 2:
            raise BadValue(f"{name} must hold [text, text] pairs")
        pairs.append((text(item[0], name), text(item[1], name)))
    return tuple(pairs)


def command_digest(command: str, cwd: str | None, env_keys: list[str], pin: Pin | None = None) -> str:
    """What the user saw and allowed; the server runs a held command only if its own copy matches.
    With a pin it covers the folder's identity, the scripts' content and the environment's values."""
    pinned = None if pin is None else pin.to_wire()
    material = json.dumps([command, cwd, sorted(env_keys), pinned], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()


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

    @classmethod
    def from_wire(cls, data: object) -> BeginRow:
        row = fields_of(data, "row")
        env_keys = row.get("env_keys") or []
        if not isinstance(env_keys, list):
            raise BadValue("env_keys must be a list")
        try:
            status = Status(row.get("status", Status.RUNNING.value))
        except ValueError:
            raise BadValue(f"unknown status {row.get('status')!r}") from None
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
        )

    def digest(self) -> str:
        return command_digest(self.command, self.cwd, list(self.env_keys), self.pin)


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


def outcome_to_wire(outcome: Outcome) -> dict[str, Any]:
    """An outcome as a message: previews only (the journal keeps no more), never whole outputs."""
    return {
        "status": outcome.status.value, "exit_code": outcome.exit_code, "timed_out": outcome.timed_out,
        "reason": outcome.reason, "stdout": preview(outcome.stdout), "stderr": preview(outcome.stderr),
        "stdout_bytes": outcome.stdout_bytes, "stderr_bytes": outcome.stderr_bytes,
        "duration_ms": outcome.duration_ms,
    }  # fmt: skip


def outcome_from_wire(data: object) -> Outcome:
    """How a command ended, every number checked (`BadValue` otherwise)."""
    fields = fields_of(data, "outcome")
    try:
        status = Status(fields.get("status", Status.FAILED.value))
    except ValueError:
        raise BadValue(f"unknown status {fields.get('status')!r}") from None
    duration = fields.get("duration_ms")
    return Outcome(
        status=status,
        exit_code=optional_whole(fields.get("exit_code"), "exit_code", *EXIT_CODE_RANGE),
        timed_out=fields.get("timed_out") is True,
        reason=optional_text(fields.get("reason"), "reason"),
        extra={  # already cut by the server
            "stdout_preview": optional_text(fields.get("stdout"), "stdout") or "",
            "stderr_preview": optional_text(fields.get("stderr"), "stderr") or "",
        },
        stdout_bytes=optional_whole(fields.get("stdout_bytes"), "stdout_bytes", 0, MAX_BYTES) or 0,
        stderr_bytes=optional_whole(fields.get("stderr_bytes"), "stderr_bytes", 0, MAX_BYTES) or 0,
        duration_ms=None if duration is None else finite(duration, "duration_ms", 0.0, MAX_DURATION_MS),
    )


@dataclass(frozen=True)
class Finish:
    id: int
    outcome: Outcome

    @classmethod
    def from_wire(cls, message: Mapping[str, Any]) -> Finish:
        if "outcome" not in message:
            raise BadValue("finish without an outcome")
        return cls(whole(message.get("id"), "id"), outcome_from_wire(message.get("outcome")))


@dataclass(frozen=True)
class ClientName:
    """Which client (Claude app) a server speaks to, for the journal."""

    name: str | None
    version: str | None

    @classmethod
    def from_wire(cls, message: Mapping[str, Any]) -> ClientName:
        return cls(optional_text(message.get("name"), "name"), optional_text(message.get("version"), "version"))


# -- what the tray pushes to a server -------------------------------------------------------------


@dataclass(frozen=True)
class DecisionPush:
    """The user's answer to a held command, with the digest of what the user saw."""

    id: int
    allowed: bool
    by: str
    digest: str

    def to_wire(self) -> dict[str, Any]:
        return {"op": "decision", "id": self.id, "allowed": self.allowed, "by": self.by, "digest": self.digest}

    @classmethod
    def from_wire(cls, message: Mapping[str, Any]) -> DecisionPush:
        return cls(
            id=whole(message.get("id"), "id"),
            allowed=message.get("allowed") is True,  # anything else is a No
            by=str(message.get("by")),
            digest=text(message.get("digest"), "digest"),
        )


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
    "BadValue",
    "BeginRow",
    "ClientName",
    "DecisionPush",
    "Finish",
    "Hello",
    "IdRequest",
    "OutputBudgetRequest",
    "Pin",
    "ProtocolError",
    "SettingsRequest",
    "begin_row_to_wire",
    "command_digest",
    "decode_request",
    "outcome_from_wire",
    "outcome_to_wire",
    "setting_changes",
]
