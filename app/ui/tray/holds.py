"""Held commands as the tray shows them: what the prompt shows (the hub matches the user's rules)."""

from __future__ import annotations

import logging
import time

from app.core.authority.holds import rule_may_answer
from app.core.authority.hub import HeldCommand
from app.core.classifier import JudgedTooLong
from app.core.claude.names import friendly_client_name
from app.core.paths import AppPaths, protected_paths
from app.core.policy.plain_words import asks_in
from app.ui.windows.held_command import WaitingCommand, judged, unjudged

log = logging.getLogger(__name__)

# How long the prompt's judging of one new hold may take: a command naming eight 250 kB scripts took
# 2.5 s, one after another for each hold (a red team, 2026-12-06). Past it the prompt shows the hold
# with the reasons its runner gave, which judged it whole before holding it.
HOLD_JUDGING_S = 0.5


def for_window(hold: HeldCommand, paths: AppPaths, judging_s: float | None = None) -> WaitingCommand:
    """What the prompt shows: the command as its server sent it, judged here in plain words,
    with the rule the window may offer, and what only a person's Allow gives it (its runner's words).
    With `judging_s`, a judging that takes longer gives way to the runner's reasons (`unjudged`)."""
    session = None if hold.peer.server_id is None else str(hold.peer.server_id)
    asks = asks_in(hold.reasons) if hold.unprotected else ()  # its runner's words: tightening only
    client = friendly_client_name(hold.client)
    deadline = None if judging_s is None else time.monotonic() + judging_s
    try:
        return judged(
            hold.command_id, hold.command, hold.folder, client=client,
            expires_at=hold.expires_at, protected=protected_paths(paths), env_keys=hold.env_shown(),
            tool=hold.tool, session=session, offer_rule=rule_may_answer(hold), asks=asks, deadline=deadline,
        )  # fmt: skip
    except JudgedTooLong:
        log.info(
            "held command %s took over %.1f s to judge: shown with its runner's reasons", hold.command_id, judging_s
        )
        return unjudged(
            hold.command_id, hold.command, hold.folder, hold.reasons, client=client,
            expires_at=hold.expires_at, env_keys=hold.env_shown(), tool=hold.tool, session=session, asks=asks,
        )  # fmt: skip
