"""Why a command's task was cancelled, for its journal row (issue 22). A job's task is cancelled by
`Jobs.end`, which says why; otherwise the server is ending (Claude closed it, SIGTERM) and the
client cancelled nothing. Apart from jobs.py, so that admission and running read it too."""

from __future__ import annotations

import contextvars
from collections.abc import Callable

from app.core.messages import SERVER_EXITED_REASON

_said_by: contextvars.ContextVar[Callable[[], str | None] | None] = contextvars.ContextVar("said_by", default=None)


def explain_with(source: Callable[[], str | None]) -> None:
    """Where `why_cancelled` finds the reason, in the calling task's own context (a job's end_reason)."""
    _said_by.set(source)


def why_cancelled(otherwise: str = SERVER_EXITED_REASON) -> str:
    """Why the command of the task asking was cancelled: its job's reason, or `otherwise` (a call
    that is not a job is cancelled by its client, or as the server ends)."""
    source = _said_by.get()
    reason = source() if source is not None else None
    return reason or otherwise
