"""Tiers, a classification, the analysis limits, and the report that collects findings on one command."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Tier(enum.IntEnum):
    SAFE = 0
    MODERATE = 1
    DESTRUCTIVE = 2


@dataclass(frozen=True)
class Finding:
    """One thing a command would do. `reason` is terse, for the log and the CLI; `plain` says it in
    words for anyone ("Deletes the folder /home/ana/project/build and everything in it"). `kind` and
    `target` are set only where a rule the user made may cover the finding (app/core/rules.py)."""

    tier: Tier
    reason: str
    plain: str
    kind: str | None = None
    target: str | None = None


@dataclass(frozen=True)
class Classification:
    tier: Tier
    reasons: tuple[str, ...]
    findings: tuple[Finding, ...] = ()  # the deciding tier's findings, in the order they were found

    @property
    def plain(self) -> tuple[str, ...]:
        """What the command would do, in plain words, each once (the approval window, the model)."""
        return tuple(dict.fromkeys(f.plain for f in self.findings)) or tuple(plain_words(r) for r in self.reasons)


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


# Rule kinds (app/core/rules.py): findings a rule the user made may cover.
DELETE_RECURSIVE = "delete-recursive"  # target: the absolute path removed with everything in it


def plain_words(reason: str) -> str:
    """A reason said for anyone: "git reset --hard: discards uncommitted changes" -> "Discards
    uncommitted changes". Rules with more to say (the path, the branch) give their own words."""
    head, sep, tail = reason.partition(": ")
    if head.startswith("cannot tell"):
        what = tail or head
        return f"Cowork Terminal cannot tell what this command would do ({what})"
    text = tail if sep and " " in tail.strip() else reason  # "writes to a disk device: /dev/sda" stays whole
    return text[:1].upper() + text[1:]


class _Report:
    """What the analysis found, shared by a command and every string re-parsed inside it."""

    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self.nodes = 0

    def add(
        self, tier: Tier, reason: str, plain: str | None = None, kind: str | None = None, target: str | None = None
    ) -> None:
        self.findings.append(Finding(tier, reason, plain or plain_words(reason), kind, target))

    def top(self, since: int = 0) -> Tier:
        return max((f.tier for f in self.findings[since:]), default=S)

    def result(self) -> Classification:
        tier = self.top()
        if tier is S:
            return Classification(S, ())
        deciding = tuple(f for f in self.findings if f.tier == tier)
        reasons = dict.fromkeys(f.reason for f in deciding)
        return Classification(tier, tuple(reasons), deciding)


def _snip(text: str) -> str:
    text = " ".join(text.split())
    if len(text) > REASON_SNIPPET_CHARS:
        return text[: REASON_SNIPPET_CHARS - 1] + "…"
    return text
