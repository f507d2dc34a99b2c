"""Why a command's task was cancelled, for its journal row (issue 22). A job's task is cancelled by
`Jobs.end`, which says why, or else as the server ends (Claude closed it, SIGTERM). Any other task
is a tool call's own (a session command), which its client cancelled or left. Apart from jobs.py,
so that admission, running and the session read it too."""

from __future__ import annotations

import contextvars
from collections.abc import Callable

from app.core.messages import CANCEL_REASON, SERVER_EXITED_REASON

_said_by: contextvars.ContextVar[Callable[[], str | None] | None] = contextvars.ContextVar("said_by", default=None)


def explain_with(source: Callable[[], str | None]) -> None:
    """Where `why_cancelled` finds the reason, in the calling task's own context (a job's end_reason)."""
    _said_by.set(source)


def why_cancelled() -> str:
    """Why the command of the task asking was cancelled: its job's reason, the server's end for a job
    without one, or its client for a tool call's own task (a review, 2026-12-05: a held session
    command cancelled between the Allow and its start was recorded as the server's end)."""
    source = _said_by.get()
    if source is None:
        return CANCEL_REASON
    return source() or SERVER_EXITED_REASON
