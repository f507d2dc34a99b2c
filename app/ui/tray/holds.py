"""Held commands as the tray shows them: what the prompt shows (the hub matches the user's rules)."""

from __future__ import annotations

from app.core.authority.holds import rule_may_answer
from app.core.authority.hub import HeldCommand
from app.core.claude.names import friendly_client_name
from app.core.paths import AppPaths, protected_paths
from app.core.policy.plain_words import asks_in
from app.ui.windows.held_command import WaitingCommand, judged


def for_window(hold: HeldCommand, paths: AppPaths) -> WaitingCommand:
    """What the prompt shows: the command as its server sent it, judged here in plain words,
    with the rule the window may offer, and what only a person's Allow gives it (its runner's words)."""
    session = None if hold.peer.server_id is None else str(hold.peer.server_id)
    asks = asks_in(hold.reasons) if hold.unprotected else ()  # its runner's words: tightening only
    return judged(
        hold.command_id, hold.command, hold.folder, client=friendly_client_name(hold.client),
        expires_at=hold.expires_at, protected=protected_paths(paths), env_keys=hold.env_shown(),
        tool=hold.tool, session=session, offer_rule=rule_may_answer(hold), asks=asks,
    )  # fmt: skip
