"""What the classifier found, in the person's language: built from each finding's template and
values (`classifier.findings.Words`), never by translating the English sentence the model reads."""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Sequence

from app.core.classifier import Classification, classify
from app.core.classifier.findings import PLACEHOLDERS, Words
from app.core.i18n import N_, _
from app.core.messages import (
    ENV_CHOSEN_PLAIN,
    MAKES_WRITABLE_PLAIN,
    PRIVILEGED_PLAIN,
    PROTECTED_UNGUARDED_PLAIN,
    PROTECTED_WRITE_PLAIN,
    SESSION_STATE_PLAIN,
    held_reason,
)

N_("Changes a file Cowork Terminal protects; if you allow it, it runs without that protection")
N_("Once allowed, it can change {names}")
N_(
    "Needs administrator rights, which do not work inside Cowork Terminal's protection; "
    "if you allow it, it runs without that protection"
)
N_("Changes a file Cowork Terminal guards: its own, Claude's settings or start-up files")
N_("Runs with environment settings the agent chose, which decide which programs it runs")
N_("Changes how the shell session runs later commands (where it finds programs, or code it runs by itself)")
# What admission may add after the classifier's words (running.unprotected_asks, then the model's
# `env`): some of these, always in this order (issue 21).
ASKS = (PROTECTED_WRITE_PLAIN, PRIVILEGED_PLAIN, PROTECTED_UNGUARDED_PLAIN, ENV_CHOSEN_PLAIN, SESSION_STATE_PLAIN)
# The protected files a held command may change once allowed, after PROTECTED_WRITE_PLAIN.
_WRITABLE = re.compile("; " + re.escape(MAKES_WRITABLE_PLAIN).replace(re.escape("{names}"), "(.+?)") + "(?=; | \\(|$)")


def _ask_for_person(ask: str, writable: re.Match[str] | None) -> str:
    if writable is not None and ask == MAKES_WRITABLE_PLAIN.format(names=writable[1]):
        return _(MAKES_WRITABLE_PLAIN).format(names=writable[1])
    return _(ask)


def asks_in(reasons: str) -> tuple[str, ...]:
    """What only a person's Allow gives a held command, as its runner wrote them into its reasons
    (`ASKS`, in their order, and after PROTECTED_WRITE_PLAIN the protected files it may then change):
    the approval window says each. A red team, 2026-12-05: the window left out which files, while
    the Allow made them writable."""
    return _with_writable(tuple(ask for ask in ASKS if ask in reasons), _WRITABLE.search(reasons))


def _with_writable(asks: tuple[str, ...], writable: re.Match[str] | None) -> tuple[str, ...]:
    """`asks` with the protected files the Allow makes writable said after PROTECTED_WRITE_PLAIN."""
    if writable is None or PROTECTED_WRITE_PLAIN not in asks:
        return asks
    at = asks.index(PROTECTED_WRITE_PLAIN) + 1
    return (*asks[:at], MAKES_WRITABLE_PLAIN.format(names=writable[1]), *asks[at:])


def ask_for_person(ask: str) -> str | None:
    """One of `asks_in` in the user's language; None for a text that is none of them (a window fed
    by another version)."""
    if ask in ASKS:
        return _(ask)
    writable = _WRITABLE.fullmatch("; " + ask)
    return None if writable is None else _ask_for_person(ask, writable)


def for_person(words: Words) -> str:
    """One finding in the user's language: "Löscht den Ordner /home/ana/build und alles darin"."""
    text = _said(words)
    return text[:1].upper() + text[1:]


def _said(words: Words) -> str:
    values = {name: _said(value) if isinstance(value, Words) else _value(value) for name, value in words.values}
    try:
        return _(words.template).format(**values)
    except (KeyError, IndexError, ValueError):  # a catalog that lost a placeholder: English, not nothing
        return words.template.format(**values)


def _value(value: str) -> str:
    """A value as it is (a path, a name), but a placeholder of the classifier's, which is translated."""
    return _(value) if value in PLACEHOLDERS else value


def lines_for_person(verdict: Classification) -> tuple[str, ...]:
    """What a command would do, one line per finding, in the user's language."""
    return tuple(dict.fromkeys(for_person(words) for words in verdict.words))


def danger_for_person(verdict: Classification) -> tuple[str, str] | None:
    """The worst class of danger of a command, in the user's language: its title and the one
    sentence on what would be lost and whether it can be undone; None below destructive."""
    danger = verdict.danger
    if danger is None:
        return None
    return _(danger.title), _(danger.sentence)


def held_reason_for_person(stored: str, command: str, cwd: str | None, protected: Sequence[str]) -> str | None:
    """Why a command was held, in the user's language, when `stored` (the English the journal
    keeps: plain words and terse reasons) is what the classifier says of that command today; None
    when it is not (an older version's words, another folder): then the stored text is shown."""
    verdict = classify(command, cwd=os.path.realpath(cwd) if cwd else None, protected_paths=protected)
    writable = _WRITABLE.search(stored)
    for chosen in (asks for count in range(1, len(ASKS) + 1) for asks in itertools.combinations(ASKS, count)):
        asks = _with_writable(chosen, writable)
        if held_reason((*verdict.plain, *asks), verdict.reasons) == stored:
            return "; ".join((*lines_for_person(verdict), *(_ask_for_person(ask, writable) for ask in asks)))
    if not verdict.reasons or held_reason(verdict.plain, verdict.reasons) != stored:
        return None
    return "; ".join(lines_for_person(verdict))
