"""The user's approval of held commands: the modes, the approval window, and when to ask.

Only the tray decides (core/authority/hub.py), from a click in its own windows or menu: the model can
ask, wait, confirm that it still wants a held command run, or withdraw it, never answer for the user.
"""

from __future__ import annotations

import secrets
import time
from enum import Enum

from app.core.i18n import _
from app.core.i18n.formats import format_number
from app.core.journal.store import Journal

MODE_SETTING = "approval_mode"
WINDOW_SETTING = "approval_window_s"
DEFAULT_APPROVAL_WINDOW_S = 40.0  # clients cancel a call after about 60 s: answer well before
MAX_APPROVAL_WINDOW_S = 55.0
HOLD_LIFETIME_S = 300.0  # a held command can be confirmed for 5 minutes


class ApprovalMode(str, Enum):
    DESTRUCTIVE = "destructive"  # ask for destructive commands (the default)
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


def approval_mode(journal: Journal) -> ApprovalMode:
    try:
        return ApprovalMode(journal.get_setting(MODE_SETTING, ApprovalMode.DESTRUCTIVE.value))
    except ValueError:  # a value written by a newer version: ask, the safe side
        return ApprovalMode.DESTRUCTIVE


def set_approval_mode(journal: Journal, mode: ApprovalMode) -> None:
    journal.set_setting(MODE_SETTING, ApprovalMode(mode).value)


def approval_window_s(journal: Journal) -> float:
    value = journal.get_setting(WINDOW_SETTING, DEFAULT_APPROVAL_WINDOW_S)
    try:
        return min(max(float(value), 1.0), MAX_APPROVAL_WINDOW_S)
    except (TypeError, ValueError):
        return DEFAULT_APPROVAL_WINDOW_S


def set_approval_window_s(journal: Journal, seconds: float) -> None:
    if not 1 <= seconds <= MAX_APPROVAL_WINDOW_S:
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
