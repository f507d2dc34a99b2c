"""Why a command ended as it did, said to a person in their language from what the journal keeps."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from app.core import i18n
from app.core.classifier import classify
from app.core.journal.reasons import KNOWN_REASONS, KNOWN_TEMPLATES, reason_for_person, who_for_person
from app.core.journal.store import Status
from app.core.messages import (
    DENIED_BY_REASON,
    KILLED_BY_REASON,
    NO_APPROVER_MESSAGE,
    PROMPT_DECIDED_BY,
    TIMED_OUT_REASON,
    UNPROTECTED_REASON,
    UNPROTECTED_WHY,
    held_reason,
)
from tests.test_log_model import record

ROW = record(command="rm -rf build", cwd="/home/ana/project", status=Status.REFUSED, tier="destructive")


@pytest.fixture
def speaking() -> Iterator[None]:
    yield
    i18n.use_language("en")


def why(reason: str, language: str) -> str:
    i18n.use_language(language)
    return reason_for_person(replace(ROW, reason=reason))


@pytest.mark.parametrize("language", ["es", "de", "ru"])
def test_every_reason_the_app_writes_is_said_in_the_users_language(speaking: None, language: str) -> None:
    for stored, english in KNOWN_REASONS.items():
        shown = why(stored, language)
        assert shown not in (stored, english), (language, stored)
    for template, english in KNOWN_TEMPLATES:
        stored = template.format(who=PROMPT_DECIDED_BY, signal="SIGKILL", here="/tmp", bash="/bin/bash",
                                 error="Permission denied", reasons="it needs the user's approval",
                                 folder="/tmp/work", script="/tmp/work/post.sh",
                                 why="bwrap is not installed", count=5)  # fmt: skip
        shown = why(stored, language)
        assert shown != stored and not shown.startswith(english.split("{")[0]), (language, stored)


# "on" and macOS's "seatbelt" are never written as a reason: their commands ran with their files guarded.
@pytest.mark.parametrize("state", sorted(set(UNPROTECTED_WHY) - {"on", "seatbelt"}))
def test_why_a_command_ran_without_protection_is_said_in_the_users_words_also_after_another_reason(
    speaking: None, state: str
) -> None:
    """The log's "Why" said "Ohne Schutz ausgeführt: the user allowed a command that gains privileges
    ..." and "timed out; ran without the container: ..." all in English (a review, 2026-12-04)."""
    unprotected = UNPROTECTED_REASON.format(why=UNPROTECTED_WHY[state])
    alone, after = why(unprotected, "de"), why(f"{TIMED_OUT_REASON}; {unprotected}", "de")
    assert alone.startswith("Ohne Schutz ausgeführt: ") and UNPROTECTED_WHY[state] not in alone, alone
    assert after == f"Die Zeit ist abgelaufen; {alone}", after
    failed = why(UNPROTECTED_REASON.format(why="bwrap failed: bwrap: Can't mount proc"), "de")
    assert failed == "Ohne Schutz ausgeführt: bubblewrap konnte nicht starten: bwrap: Can't mount proc"


def test_a_german_user_reads_who_denied_a_command_and_which_signal_ended_one(speaking: None) -> None:
    assert why(DENIED_BY_REASON.format(who=PROMPT_DECIDED_BY), "de") == "Abgelehnt von Ihnen, im Zustimmungsfenster"
    assert why(DENIED_BY_REASON.format(who="rule 4"), "ru") == "Отклонено вашим правилом 4"
    assert why(KILLED_BY_REASON.format(signal="SIGSEGV"), "de") == "Durch das Signal SIGSEGV beendet"
    i18n.use_language("de")
    assert who_for_person("user (activity log)") == "Ihnen, im Aktivitätsprotokoll"


def test_why_a_command_waits_or_could_not_be_approved_is_said_from_the_command_judged_again(speaking: None) -> None:
    verdict = classify("rm -rf build", cwd="/home/ana/project")
    held = held_reason(verdict.plain, verdict.reasons)
    assert why(held, "de") == "Löscht den Ordner /home/ana/project/build und alles darin"
    assert why(NO_APPROVER_MESSAGE.format(reasons=held), "ru") == (
        "Требовалось ваше одобрение (Удаляет папку /home/ana/project/build и всё её содержимое), "
        "но приложение Cowork Terminal не было запущено"
    )


def test_a_reason_this_version_does_not_know_is_shown_as_it_was_stored(speaking: None) -> None:
    assert why("stopped by a future version for its own reasons", "de") == (
        "stopped by a future version for its own reasons"
    )
    assert why("Deletes build (rm -r: from an older version)", "ru") == "Deletes build (rm -r: from an older version)"
