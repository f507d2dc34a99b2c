"""What the journal holds, as Python values: a command's status and record, a server's record, a
command's outcome, and the bounds on the text a row keeps (previews, refused commands)."""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

PREVIEW_HEAD_BYTES = 2048
PREVIEW_TAIL_BYTES = 6144
# A refused command never ran, so its row needs only enough text to recognise it: the whole text
# of a refused 5 MB command would let any model fill the disk (once in the WAL, once in the file).
REFUSED_TEXT_KEEP_CHARS = 4096
REFUSED_ENV_KEYS_KEPT = 50
BOUNDED_NOTE_CHARS = 100  # room for bounded()'s note: text this close to the limit is kept whole
LONE_SURROGATE = re.compile("[\ud800-\udfff]")
STATUS_SHOWN_CHARS = 40  # of a status this version does not know, as shown (it is free text)


class Status(str, Enum):
    """Every state a journaled command can be in; the log window gives each its own look."""

    WAITING = "waiting"  # held for the user's approval
    RUNNING = "running"
    FINISHED = "finished"  # exit code 0
    FAILED = "failed"  # non-zero exit code, or it could not be started
    TIMED_OUT = "timed_out"
    KILLED = "killed"  # stopped by the user, by pause, or by the client's cancellation
    REFUSED = "refused"  # never ran: paused, no tray, denied by the user, bad input
    INTERRUPTED = "interrupted"  # its server died while it ran

    @property
    def is_active(self) -> bool:
        return self in (Status.WAITING, Status.RUNNING)

    @classmethod
    def as_written(cls, text: object) -> Status:
        """A row's status: one this version knows, or else an unknown one that keeps its text (a
        later version's new status, or another program's edit: the column is free text). Reading
        never fails, so one such row hides no other; an unknown status is neither running nor held,
        so nothing acts on it. Only the journal's rows are read so: a message's status stays strict."""
        try:
            return cls(text)
        except ValueError:
            unknown = str.__new__(cls, str(text))
            unknown._name_ = "UNKNOWN"
            unknown._value_ = str(text)
            return unknown

    @property
    def known(self) -> bool:
        """False for a status this version does not know (`as_written`)."""
        return type(self)._value2member_map_.get(self._value_) is self

    @property
    def shown(self) -> str:
        """The status as a person or a model reads it: an unknown one as written, on one line, bounded."""
        text = " ".join(self._value_.split()) or "?"
        return text if len(text) <= STATUS_SHOWN_CHARS else f"{text[: STATUS_SHOWN_CHARS - 1]}…"


ACTIVE_STATUSES = tuple(s.value for s in Status if s.is_active)


def placeholders(count: int) -> str:
    """`?, ?, ...`: the placeholders of an IN list."""
    return ",".join("?" * count)


ACTIVE_MARKS = placeholders(len(ACTIVE_STATUSES))


@dataclass(frozen=True)
class CommandRecord:
    id: int
    server_id: int | None
    server_pid: int | None
    client_name: str | None
    client_version: str | None
    tool: str
    command: str
    cwd: str | None
    env_keys: list[str]
    timeout_ms: int | None
    tier: str | None
    status: Status
    reason: str | None
    exit_code: int | None
    timed_out: bool
    created_at: float
    started_at: float | None
    ended_at: float | None
    duration_ms: float | None
    stdout_bytes: int | None
    stderr_bytes: int | None
    stdout_preview: str | None
    stderr_preview: str | None
    stop_requested_at: float | None
    confirmation_id: str | None
    decision: str | None
    decided_by: str | None
    decided_at: float | None
    hold_expires_at: float | None
    allowed_by_rule: int | None = None

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> CommandRecord:
        values = dict(row)
        values["env_keys"] = json.loads(values["env_keys"] or "[]")
        values["status"] = Status.as_written(values["status"])
        values["timed_out"] = bool(values["timed_out"])
        return cls(**values)

    def to_json(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["status"] = self.status.value
        return data


@dataclass(frozen=True)
class ServerRecord:
    id: int
    pid: int
    client_name: str | None
    client_version: str | None
    headless: bool
    lock_key: str | None
    started_at: float
    last_seen: float
    ended_at: float | None
    state: str
    command_count: int = 0

    @property
    def client_label(self) -> str:
        if not self.client_name:
            return "unknown client"
        return f"{self.client_name} {self.client_version}".strip() if self.client_version else self.client_name


@dataclass(frozen=True)
class Outcome:
    """How a command ended, as the executor saw it."""

    status: Status
    exit_code: int | None = None
    timed_out: bool = False
    reason: str | None = None
    stdout: bytes = b""
    stderr: bytes = b""
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    duration_ms: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


CLIENT_TEXT_MAX = 200  # of a client's name or version, as we keep them


def preview(data: bytes) -> str:
    """A bounded, readable excerpt of one output stream for the journal: its head and its tail."""
    if len(data) <= PREVIEW_HEAD_BYTES + PREVIEW_TAIL_BYTES:
        return data.decode("utf-8", errors="replace")
    dropped = len(data) - PREVIEW_HEAD_BYTES - PREVIEW_TAIL_BYTES
    head = data[:PREVIEW_HEAD_BYTES].decode("utf-8", errors="replace")
    tail = data[-PREVIEW_TAIL_BYTES:].decode("utf-8", errors="replace")
    return f"{head}\n[... {dropped} bytes not kept in the journal ...]\n{tail}"


def client_text(text: str | None) -> str | None:
    """A client's name or version as we keep it, at most CLIENT_TEXT_MAX characters: a client may name
    itself with megabytes, and every window, list and journal row shows the name."""
    return None if text is None else text[:CLIENT_TEXT_MAX]


def storable(text: str) -> str:
    """`text` as SQLite can store it: a lone surrogate (no UTF-8 form) becomes U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return LONE_SURROGATE.sub("\ufffd", text)
    return text


def bounded(text: str, keep_chars: int = REFUSED_TEXT_KEEP_CHARS) -> str:
    """The head of `text`, with a note of its full size when it was longer. Bounding twice keeps the
    first note (a server bounds a refusal before sending it to the tray, whose journal bounds too)."""
    if len(text) <= keep_chars + BOUNDED_NOTE_CHARS:
        return text
    size = len(text.encode("utf-8", "surrogatepass"))
    return f"{text[:keep_chars]}\n[... only the first {keep_chars:,} characters of {size:,} bytes kept ...]"
