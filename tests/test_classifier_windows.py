"""Windows commands Git Bash can start (red team, Windows): each was judged safe or moderate and ran
unasked; each is now held. Their everyday neighbours stay as they were."""

from __future__ import annotations

import pytest

from app.core.classifier import Danger, Tier, classify

PROJECT = "/home/ana/project"


def held(command: str, **kwargs: object) -> None:
    result = classify(command, **{"cwd": PROJECT, **kwargs})  # type: ignore[arg-type]
    assert result.tier is Tier.DESTRUCTIVE, (command, result.reasons)


def not_held(command: str, **kwargs: object) -> None:
    result = classify(command, **{"cwd": PROJECT, **kwargs})  # type: ignore[arg-type]
    assert result.tier is not Tier.DESTRUCTIVE, (command, result.reasons)


@pytest.mark.parametrize(
    "command",
    [
        "schtasks //create //tn x //tr calc.exe //sc onlogon",
        "SCHTASKS.EXE //Create //TN x //TR calc //SC ONLOGON",
        "schtasks.exe //CREATE //XML task.xml //TN x",
        "schtasks //run //tn x",
        "schtasks //change //tn x //tr calc",
        "schtasks -create -tn x -tr calc -sc onlogon",
    ],
)
def test_git_bash_double_slash_switches_are_the_switches_they_stand_for(command: str) -> None:
    result = classify(command, cwd=PROJECT)
    assert result.tier is Tier.DESTRUCTIVE, result.reasons
    assert result.danger is Danger.OUTSIDE_WATCH


def test_schtasks_delete_and_query_in_git_bash_spelling_are_judged_as_with_one_slash() -> None:
    assert classify("schtasks //delete //tn x //f").tier is Tier.MODERATE
    assert classify("schtasks //query //fo list").tier is Tier.SAFE
