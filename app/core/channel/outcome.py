"""How a command ended, as a `finish` message carries it: previews only, every number checked."""

from __future__ import annotations

from typing import Any

from app.core.channel.values import BadValue, fields_of, finite, optional_text, optional_whole
from app.core.journal.store import Outcome, Status, preview

MAX_BYTES = 2**62
MAX_DURATION_MS = 366 * 24 * 3600 * 1000.0
EXIT_CODE_RANGE = (-(2**31), 2**32)  # Windows exit codes are unsigned 32-bit; signals are negative


def outcome_to_wire(outcome: Outcome) -> dict[str, Any]:
    """An outcome as a message: previews only (the journal keeps no more), never whole outputs."""
    return {
        "status": outcome.status.value, "exit_code": outcome.exit_code, "timed_out": outcome.timed_out,
        "reason": outcome.reason, "stdout": preview(outcome.stdout), "stderr": preview(outcome.stderr),
        "stdout_bytes": outcome.stdout_bytes, "stderr_bytes": outcome.stderr_bytes,
        "duration_ms": outcome.duration_ms,
    }  # fmt: skip


def status_of(value: object) -> Status:
    """A command's status from the wire (`BadValue` for one the journal does not know)."""
    try:
        return Status(value)
    except ValueError:
        raise BadValue(f"unknown status {value!r}") from None


def outcome_from_wire(data: object) -> Outcome:
    """How a command ended, every number checked (`BadValue` otherwise)."""
    fields = fields_of(data, "outcome")
    status = status_of(fields.get("status", Status.FAILED.value))
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
