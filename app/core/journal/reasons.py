"""Why a command ended as it did, in the user's language, for the log window and the CLI.

The journal keeps each reason in English (`app.core.messages`; the model read the same words).
A person gets it said from what it is: a known reason, or a known template with its values
("denied by {who}"), or the plain words of a held command judged again; a reason this version does
not know (an older row, another version's words) is shown as it was stored.
"""

from __future__ import annotations

import dataclasses
import re
import string
from collections.abc import Sequence
from functools import cache

from app.core import messages
from app.core.i18n import N_, _
from app.core.journal.store import CommandRecord
from app.core.policy.plain_words import held_reason_for_person

KNOWN_REASONS: dict[str, str] = {
    messages.PAUSED_MESSAGE: N_("Host access was paused, so it did not run."),
    messages.NO_TRAY_MESSAGE: N_("The Cowork Terminal app was not running, so it did not run."),
    messages.DENIED_MESSAGE: N_("You denied it, so it did not run."),
    messages.PAUSE_STOP_REASON: N_("Stopped because you paused host access"),
    messages.APP_GONE_STOP_REASON: N_(
        "Stopped because the Cowork Terminal app stopped: nobody could watch it any more"
    ),
    messages.USER_STOP_REASON: N_("Stopped by you"),
    messages.MODEL_STOP_REASON: N_("Stopped by the agent"),
    messages.AGENT_STOP_REASON: N_("Stopped by an agent"),
    messages.CANCEL_REASON: N_("Cancelled by the agent (it cancelled the call or disconnected)"),
    messages.HOLD_EXPIRED_REASON: N_("The wait for your answer ran out"),
    messages.WITHDRAWN_REASON: N_("The agent withdrew it before you answered"),
    messages.AGENT_WITHDREW_REASON: N_("An agent withdrew it before you answered"),
    messages.APP_GONE_HOLD_REASON: N_("The Cowork Terminal app stopped before you answered"),
    messages.PAUSED_HOLD_REASON: N_("Host access was paused before you answered"),
    messages.OTHER_COMMAND_REASON: N_("The approval was for another command"),
    messages.SESSION_BUSY_REASON: N_("The shell session was still busy with an earlier command"),
    messages.SERVER_STOPPED_REASON: N_("The agent's server stopped while it ran"),
    messages.SESSION_ENDED_REASON: N_("The shell session ended"),
    messages.KEYS_NOT_READ_REASON: N_("The program did not read the keys"),
    messages.SERVER_EXITED_REASON: N_("The agent's server ended while it ran or waited"),
    messages.SERVER_CRASHED_REASON: N_("The agent's server stopped unexpectedly"),
    messages.DATA_MOVED_REASON: N_("Cowork Terminal moved its data folder while this ran"),
    messages.TIMED_OUT_REASON: N_("It ran out of time"),
    messages.ENV_CHANGED_REASON: N_("Not run: its environment changed after you were asked"),
    messages.SETTINGS_CHANGED_MESSAGE: N_("Not run: you changed the settings while it was being checked"),
}
# A template's values are shown as they are, except {who} (someone who answered) and {reasons}
# (what a held command does), which are said in the user's language too.
KNOWN_TEMPLATES: tuple[tuple[str, str], ...] = (
    (messages.DENIED_BY_REASON, N_("Denied by {who}")),
    (messages.KILLED_BY_REASON, N_("Ended by the signal {signal}")),
    (
        messages.SESSION_MOVED_REASON,
        N_("The shell session is now in {here}, not in the folder where the command was checked"),
    ),
    (messages.FOLDER_GONE_REASON, N_("Not run: the folder {folder} could no longer be opened after you were asked")),
    (messages.FOLDER_REPLACED_REASON, N_("Not run: the folder {folder} was replaced after you were asked")),
    (messages.SCRIPT_CHANGED_REASON, N_("Not run: the script {script} changed after you were asked")),
    (messages.BASH_NOT_STARTED_REASON, N_("bash could not be started ({bash}): {error}")),
    (
        messages.HOLDS_FULL_REASON,
        N_("Not run: {count} commands of the same agent were already waiting for your answer"),
    ),
    (messages.UNPROTECTED_REASON, N_("Ran without protection: {why}")),
    (
        messages.KEYS_HELD_REASON,
        N_("These keys would need your approval, and typed keys cannot wait for it, so none were sent"),
    ),
    (
        messages.NO_APPROVER_MESSAGE,
        N_("It needed your approval ({reasons}), but the Cowork Terminal app was not running"),
    ),
)
# The {why} of UNPROTECTED_REASON (messages.UNPROTECTED_WHY, by container state), in the user's words.
WHY_UNPROTECTED: dict[str, str] = {
    "missing": N_("bubblewrap is not installed"),
    "userns": N_("this system does not allow the protection"),
    "apparmor": N_("Ubuntu's AppArmor blocks the protection"),
    "failed": N_("bubblewrap could not start"),
    "unsupported": N_("this system has no file protection"),
    "off": N_("you switched the protection off"),
    "privileged": N_("you allowed a command that needs administrator rights"),
    "seatbelt-failed": N_("macOS's sandbox could not start"),
}
DECIDERS: dict[str, str] = {
    messages.PROMPT_DECIDED_BY: N_("you, in the approval window"),
    messages.LOG_WINDOW_DECIDED_BY: N_("you, in the activity log"),
    messages.CONFIRMED_DECIDED_BY: N_("you (confirmed)"),
    messages.REQUEST_DECIDED_BY: N_("a request from the command line or a window"),
    messages.UNKNOWN_DECIDER: N_("you"),
    messages.AGENT_STOP_BY: N_("an agent, which withdrew it"),
}
RULE_DECIDER = re.compile(r"rule (\d+)")


def who_for_person(decided_by: str | None) -> str:
    """Who answered, in the user's language: "you, in the approval window", "your rule 3"."""
    if not decided_by:
        return _("you")
    rule = RULE_DECIDER.fullmatch(decided_by)
    if rule:
        return _("your rule {number}").format(number=rule.group(1))
    return _(DECIDERS[decided_by]) if decided_by in DECIDERS else decided_by


def reason_for_person(record: CommandRecord, protected: Sequence[str] = ()) -> str:
    """The row's reason in the user's language, or as stored when this version does not know it."""
    stored = record.reason or ""
    unprotected = messages.UNPROTECTED_REASON.split("{")[0]
    first, joined, why = stored.partition(f"; {unprotected}")  # "timed out; ran without the container: ..."
    if joined:
        parts = (first, joined[2:] + why)
        return "; ".join(reason_for_person(dataclasses.replace(record, reason=part), protected) for part in parts)
    if stored in KNOWN_REASONS:
        return _(KNOWN_REASONS[stored])
    for template, said in KNOWN_TEMPLATES:
        values = _pattern(template).fullmatch(stored)
        if values is not None:
            return _said(said, values.groupdict(), record, protected)
    held = held_reason_for_person(stored, record.command, record.cwd, protected) if stored else None
    return held or stored


def _said(said: str, values: dict[str, str], record: CommandRecord, protected: Sequence[str]) -> str:
    if "who" in values:
        values["who"] = who_for_person(values["who"])
    if "why" in values:  # bwrap's own words after a failure's English are kept as they are
        for state, english in messages.UNPROTECTED_WHY.items():
            if state in WHY_UNPROTECTED and values["why"].startswith(english):
                values["why"] = _(WHY_UNPROTECTED[state]) + values["why"][len(english) :]
                break
    if "reasons" in values and "{reasons}" in said:
        held = held_reason_for_person(values["reasons"], record.command, record.cwd, protected)
        values["reasons"] = held or values["reasons"]
    return _(said).format(**values)


@cache
def _pattern(template: str) -> re.Pattern[str]:
    """A template as a pattern that gives back its values: "denied by {who}" -> "denied by (?P<who>.*)"."""
    parts = []
    for literal, name, _spec, _conversion in string.Formatter().parse(template):
        parts.append(re.escape(literal))
        if name:
            parts.append(f"(?P<{name}>.*?)")
    return re.compile("".join(parts), re.DOTALL)
