"""Retention: the journal forgets old history so that it never grows without bound.

The commands still running or waiting are never deleted. Deleted pages are reused by later
writes, so the file stops growing at about the cap.
"""

from __future__ import annotations

import sqlite3
import time

from app.core.journal.records import ACTIVE_MARKS, ACTIVE_STATUSES

DEFAULT_RETENTION_DAYS = 30
DEFAULT_MAX_COMMANDS = 100_000
DEFAULT_MAX_BYTES = 256 * 1024 * 1024
DAY_S = 86_400.0


def forget_old(
    db: sqlite3.Connection,
    *,
    max_age_days: float = DEFAULT_RETENTION_DAYS,
    max_commands: int = DEFAULT_MAX_COMMANDS,
    max_bytes: int = DEFAULT_MAX_BYTES,
    now: float | None = None,
) -> int:
    """Delete what is older than `max_age_days`, beyond `max_commands` rows, or (a fifth at a time)
    beyond `max_bytes`, inside the caller's write transaction; returns the command rows deleted."""
    cutoff = (now or time.time()) - max_age_days * DAY_S
    marks = ACTIVE_MARKS  # the commands still running or waiting are never deleted
    deleted = 0
    deleted += db.execute(
        f"DELETE FROM commands WHERE created_at < ? AND status NOT IN ({marks})", (cutoff, *ACTIVE_STATUSES)
    ).rowcount
    # Counting reads only an index; the OFFSET walk reads every row, so it runs only when due.
    if db.execute("SELECT COUNT(*) FROM commands").fetchone()[0] > max_commands:
        deleted += db.execute(
            f"DELETE FROM commands WHERE status NOT IN ({marks}) AND id <= "
            f"(SELECT id FROM commands ORDER BY id DESC LIMIT 1 OFFSET ?)",
            (*ACTIVE_STATUSES, max_commands),
        ).rowcount
    used = db.execute(
        "SELECT (page_count - freelist_count) * page_size FROM pragma_page_count(), "
        "pragma_freelist_count(), pragma_page_size()"
    ).fetchone()[0]
    if used > max_bytes:
        # Drop the oldest fifth of the rows; the next run trims again if still too big.
        deleted += db.execute(
            f"DELETE FROM commands WHERE status NOT IN ({marks}) AND id < "
            f"(SELECT id FROM commands ORDER BY id LIMIT 1 OFFSET "
            f"(SELECT COUNT(*) / 5 FROM commands))",
            ACTIVE_STATUSES,
        ).rowcount
    db.execute(
        "DELETE FROM servers WHERE state != 'live' AND ended_at < ? "
        "AND id NOT IN (SELECT DISTINCT server_id FROM commands WHERE server_id IS NOT NULL)",
        (cutoff,),
    )
    db.execute("DELETE FROM ui_requests WHERE created_at < ?", (cutoff,))  # no longer written
    return deleted
