"""Held commands as the tray judges them: which of the user's rules answers one, and what the prompt shows."""

from __future__ import annotations

import os
from collections.abc import Sequence

from app.core.authority.hub import HeldCommand
from app.core.classifier import classify
from app.core.claude.names import friendly_client_name
from app.core.paths import AppPaths, protected_paths
from app.core.policy.rules import Rule, matching_rule
from app.ui.windows.held_command import WaitingCommand, judged


def rule_for_hold(rules: Sequence[Rule], hold: HeldCommand, paths: AppPaths) -> int | None:
    """The id of the user's rule that allows this hold, or None. `rules` are the tray's own, from
    the hub's memory: a row written into the file never counts."""
    if not rules:
        return None
    real_cwd = hold.folder if hold.pin is not None else os.path.realpath(hold.cwd) if hold.cwd else None
    verdict = classify(hold.command, cwd=real_cwd, protected_paths=protected_paths(paths))
    session = None if hold.peer.server_id is None else str(hold.peer.server_id)
    rule = matching_rule(rules, hold.command, real_cwd, verdict, session)
    return None if rule is None else rule.id


def for_window(hold: HeldCommand, paths: AppPaths) -> WaitingCommand:
    """What the prompt shows: the command as its server sent it, judged here in plain words,
    with the rule the window may offer."""
    session = None if hold.peer.server_id is None else str(hold.peer.server_id)
    return judged(
        hold.command_id, hold.command, hold.folder, client=friendly_client_name(hold.client),
        expires_at=hold.expires_at, protected=protected_paths(paths), env_keys=hold.env_shown(),
        tool=hold.tool, session=session,
    )  # fmt: skip
