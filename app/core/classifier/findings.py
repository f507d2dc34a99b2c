"""Tiers, a classification, the analysis limits, and the report that collects findings on one command."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Tier(enum.IntEnum):
    SAFE = 0
    MODERATE = 1
    DESTRUCTIVE = 2


@dataclass(frozen=True)
class Classification:
    tier: Tier
    reasons: tuple[str, ...]


# Limits that keep a huge or hostile input from taking the server down; past them we ask.
MAX_COMMAND_CHARS = 1_000_000
MAX_NODES = 100_000
MAX_TREE_DEPTH = 300
MAX_SHELL_NESTING = 12
REASON_SNIPPET_CHARS = 60
TOUCHES_APP_DATA = "touches Cowork Terminal's own data or settings"
RUNS_ITSELF = "runs Cowork Terminal itself (it could change its own settings or answer its own approvals)"

D = Tier.DESTRUCTIVE
M = Tier.MODERATE
S = Tier.SAFE


class _Report:
    """What the analysis found, shared by a command and every string re-parsed inside it."""

    def __init__(self) -> None:
        self.findings: list[tuple[Tier, str]] = []
        self.nodes = 0

    def add(self, tier: Tier, reason: str) -> None:
        self.findings.append((tier, reason))

    def top(self, since: int = 0) -> Tier:
        return max((tier for tier, _ in self.findings[since:]), default=S)

    def result(self) -> Classification:
        tier = self.top()
        if tier is S:
            return Classification(S, ())
        reasons = dict.fromkeys(reason for t, reason in self.findings if t == tier)
        return Classification(tier, tuple(reasons))


def _snip(text: str) -> str:
    text = " ".join(text.split())
    if len(text) > REASON_SNIPPET_CHARS:
        return text[: REASON_SNIPPET_CHARS - 1] + "…"
    return text
