"""The messages that carry a tool call from a server to the tray that runs it, and its answer back.

A server bound to a tray that runs commands does not decide or run anything itself: it sends each
`tools/call` as `call`, and the tray answers with `call_progress` (zero or more) and one
`call_result` (the MCP CallToolResult as JSON). `call_cancel` is the client's cancellation. Each
value is checked here, at the edge, as every channel message is (core/channel/protocol.py).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from app.core.channel.values import BadValue, fields_of, finite, optional_text, text

MAX_CALL_ID = 64  # characters: a server's own random id for one call
MAX_PROGRESS = 1e12


def call_id_of(value: object) -> str:
    checked = text(value, "call_id")
    if not checked or len(checked) > MAX_CALL_ID:
        raise BadValue(f"call_id must be 1 to {MAX_CALL_ID} characters")
    return checked


@dataclass(frozen=True)
class Call:
    """A server hands one tool call to the tray: the tool, its arguments as the client sent them, the
    client's name and version (its patience depends on them) and whether the client wants progress."""

    call_id: str
    tool: str
    arguments: Mapping[str, Any]
    client_name: str | None = None
    client_version: str | None = None
    progress: bool = False
    patience: str | None = None  # the server's COWORK_TERMINAL_PATIENCE_S, set in Claude's entry for it
    # When this process read it (not sent): the tray's runner counts the client's patience from here.
    arrived: float = field(default_factory=time.monotonic, compare=False)
    OP: ClassVar[str] = "call"

    def to_wire(self) -> dict[str, Any]:
        return {
            "op": self.OP,
            "call_id": self.call_id,
            "tool": self.tool,
            "arguments": dict(self.arguments),
            "client": {"name": self.client_name, "version": self.client_version},
            "progress": self.progress,
            "patience": self.patience,
        }

    @classmethod
    def from_wire(cls, message: Mapping[str, Any]) -> Call:
        client = fields_of(message.get("client") or {}, "client")
        return cls(
            call_id=call_id_of(message.get("call_id")),
            tool=text(message.get("tool"), "tool"),
            arguments=fields_of(message.get("arguments") or {}, "arguments"),
            client_name=optional_text(client.get("name"), "client.name"),
            client_version=optional_text(client.get("version"), "client.version"),
            progress=message.get("progress") is True,
            patience=optional_text(message.get("patience"), "patience"),
        )


@dataclass(frozen=True)
class CallCancel:
    """The client cancelled this call (in Claude, the user's stop button)."""

    call_id: str
    OP: ClassVar[str] = "call_cancel"

    def to_wire(self) -> dict[str, Any]:
        return {"op": self.OP, "call_id": self.call_id}

    @classmethod
    def from_wire(cls, message: Mapping[str, Any]) -> CallCancel:
        return cls(call_id_of(message.get("call_id")))


@dataclass(frozen=True)
class CallProgress:
    """A progress notification of a call the tray runs, for the server to pass on to its client."""

    call_id: str
    progress: float
    total: float | None = None
    message: str | None = None
    OP: ClassVar[str] = "call_progress"

    def to_wire(self) -> dict[str, Any]:
        return {
            "op": self.OP,
            "call_id": self.call_id,
            "progress": self.progress,
            "total": self.total,
            "message": self.message,
        }

    @classmethod
    def from_wire(cls, message: Mapping[str, Any]) -> CallProgress:
        total = message.get("total")
        return cls(
            call_id=call_id_of(message.get("call_id")),
            progress=finite(message.get("progress"), "progress", 0.0, MAX_PROGRESS),
            total=None if total is None else finite(total, "total", 0.0, MAX_PROGRESS),
            message=optional_text(message.get("message"), "message"),
        )


@dataclass(frozen=True)
class CallResult:
    """The end of a call the tray ran: the MCP CallToolResult, as JSON."""

    call_id: str
    result: Mapping[str, Any]
    OP: ClassVar[str] = "call_result"

    def to_wire(self) -> dict[str, Any]:
        return {"op": self.OP, "call_id": self.call_id, "result": dict(self.result)}

    @classmethod
    def from_wire(cls, message: Mapping[str, Any]) -> CallResult:
        return cls(call_id_of(message.get("call_id")), fields_of(message.get("result"), "result"))
