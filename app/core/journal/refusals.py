"""How many refused calls one server's rows may record: a burst, then a steady rate.

A red team (2026-12-06) had one server's refusals written at 390-740 rows a second of 4 kB each, 9 GB
an hour, against the journal's hourly retention of 100,000 rows and 256 MiB. Past the budget a refusal
is counted, not written: the model is refused all the same, and the log says how many went unrecorded.
The tray's hub keeps one budget per server (authority/server_rows.py); a headless server keeps its own
(commands/authority.py).
"""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)

REFUSALS_BURST = 120
REFUSALS_PER_S = 1.0


class RefusalBudget:
    """One server's budget of refused calls written; not thread-safe (its callers hold a lock, or
    run on one loop)."""

    def __init__(self, label: str) -> None:
        self.label = label
        self._tokens = float(REFUSALS_BURST)
        self._when: float | None = None
        self._unsaid = 0

    def allows(self, now: float) -> bool:
        """Whether one more refused call is written now (monotonic `now`)."""
        if self._when is not None:
            self._tokens = min(float(REFUSALS_BURST), self._tokens + (now - self._when) * REFUSALS_PER_S)
        self._when = now
        if self._tokens < 1:
            self._unsaid += 1
            return False
        self._tokens -= 1
        if self._unsaid:
            log.warning(
                "%d refused calls of %s were not recorded one by one (too many at once)", self._unsaid, self.label
            )
            self._unsaid = 0
        return True
