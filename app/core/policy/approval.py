"""The user's approval of held commands: the modes, the approval window, and when to ask.

Only the tray decides (core/authority/hub.py), from a click in its own windows or menu: the model can
ask, wait, confirm that it still wants a held command run, or withdraw it, never answer for the user.
"""

from __future__ import annotations

import math
import secrets
import time
from enum import Enum

from app.core import settings
from app.core.i18n import _
from app.core.i18n.formats import format_number
from app.core.settings import DEFAULT_APPROVAL_WINDOW_S, MAX_APPROVAL_WINDOW_S, SettingsStore

MODE_SETTING = settings.APPROVAL_MODE
WINDOW_SETTING = settings.APPROVAL_WINDOW_S
HOLD_LIFETIME_S = 300.0  # a held command can be confirmed for 5 minutes from when the user sees it
# Until the user can see it (another command is on screen first), a held command does not run out;
# this only bounds a hold nobody ever shows (issue 22: nothing expires unseen).
HOLD_UNSEEN_MAX_S = 3600.0


class ApprovalMode(str, Enum):
    DESTRUCTIVE = settings.DEFAULT_APPROVAL_MODE  # ask for destructive commands (the default)
    ALL = "all"  # ask for every command
    NEVER = "never"  # never ask; the journal still records everything

    @property
    def label(self) -> str:
        """What the user reads for this mode, in their language."""
        return {
            ApprovalMode.DESTRUCTIVE: _("Ask before dangerous commands"),
            ApprovalMode.ALL: _("Ask before every command"),
            ApprovalMode.NEVER: _("Never ask (everything is still recorded)"),
        }[self]


def approval_mode(journal: SettingsStore) -> ApprovalMode:
    try:
        return ApprovalMode(journal.get_setting(MODE_SETTING, settings.DEFAULT_APPROVAL_MODE))
    except ValueError:  # a value written by a newer version: ask about every command, as the tray reads it
        return ApprovalMode.ALL


def set_approval_mode(journal: SettingsStore, mode: ApprovalMode) -> None:
    journal.set_setting(MODE_SETTING, ApprovalMode(mode).value)


def approval_window_s(journal: SettingsStore) -> float:
    """The stored approval window; a value that is not a finite number reads as the strictest, 1 s
    (a NaN would make every wait end at once, or never), as the tray reads it (ControlState.from_wire)."""
    return window_value(journal.get_setting(WINDOW_SETTING, DEFAULT_APPROVAL_WINDOW_S))


def window_value(value: object) -> float:
    """An approval window as stored or sent: anything that is not a finite number (a string, a
    bool, a NaN) reads as the strictest, 1 s; a number is kept within 1 s and the longest."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return 1.0
    return min(max(float(value), 1.0), MAX_APPROVAL_WINDOW_S)


def set_approval_window_s(journal: SettingsStore, seconds: float) -> None:
    if not math.isfinite(seconds) or not 1 <= seconds <= MAX_APPROVAL_WINDOW_S:
        raise ValueError(
            _("the approval window must be between 1 and {seconds} seconds").format(
                seconds=format_number(MAX_APPROVAL_WINDOW_S, None)
            )
        )
    journal.set_setting(WINDOW_SETTING, float(seconds))


def needs_approval(mode: ApprovalMode, destructive: bool) -> bool:
    if mode is ApprovalMode.ALL:
        return True
    if mode is ApprovalMode.NEVER:
        return False
    return destructive


def new_confirmation_id() -> str:
    return f"hold-{secrets.token_hex(6)}"


def hold_expiry(now: float | None = None) -> float:
    return (now or time.time()) + HOLD_LIFETIME_S
