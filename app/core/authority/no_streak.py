"""Repeated questions stop after a few No's: 30 requests in a row must not give the user 30 windows.

Each loosening a program asks for opens a confirm window. A program that asks again and again (with
another value each time, so the per-question cooldown never applies) would bury the user in
windows until one is clicked by mistake. After NOS_BEFORE_QUIET No's within NOS_WINDOW_S, the tray
asks nothing more for QUIET_S: such requests are refused at once, and the tray says so once. All
programs count as one source: telling them apart needs a process identity they cannot change,
which a program can always shed (a new process, a new parent). A Yes ends the streak.
"""

from __future__ import annotations

import time
from collections.abc import Callable

NOS_BEFORE_QUIET = 3
NOS_WINDOW_S = 600.0
QUIET_S = 300.0


class NoStreak:
    """The user's recent No's to questions programs asked, and the quiet time they started."""

    def __init__(
        self,
        *,
        limit: int = NOS_BEFORE_QUIET,
        window_s: float = NOS_WINDOW_S,
        quiet_s: float = QUIET_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit, self.window_s, self.quiet_s, self.clock = limit, window_s, quiet_s, clock
        self._nos: list[float] = []
        self._quiet_until = 0.0

    def said_no(self) -> bool:
        """Count a No; True when it starts a quiet time (the moment to tell the user, once)."""
        now = self.clock()
        self._nos = [t for t in self._nos if now - t < self.window_s] + [now]
        if len(self._nos) >= self.limit and now >= self._quiet_until:
            self._quiet_until = now + self.quiet_s
            self._nos = []
            return True
        return False

    def said_yes(self) -> None:
        self._nos = []

    def quiet_left_s(self) -> float:
        """Seconds until questions may be asked again; 0 when they may."""
        return max(0.0, self._quiet_until - self.clock())
