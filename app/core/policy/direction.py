"""Which requests tighten control (applied at once, from anyone) and which loosen it (applied only
after the user clicks in a window the tray shows). Anything not listed loosens: the safe side."""

from __future__ import annotations

from typing import Any

from app.core.authority.state import ControlState, loosened, with_changes

TIGHTEN = "tighten"
LOOSEN = "loosen"
NEUTRAL = "neutral"  # changes no control: reads, opening a window

# Requests a peer may send; each one's effect on the user's control.
TIGHTENING_OPS = frozenset({"pause", "stop", "deny", "quit", "remove_rule"})
LOOSENING_OPS = frozenset({"resume", "approve", "clear_history"})
NEUTRAL_OPS = frozenset({"state", "holds", "open_log", "output_budget"})
SETTING_OPS = frozenset({"settings"})  # approval mode, window, tools: depends on the direction
KNOWN_OPS = TIGHTENING_OPS | LOOSENING_OPS | NEUTRAL_OPS | SETTING_OPS


def classify_request(op: str, fields: dict[str, Any], current: ControlState) -> str:
    if op in TIGHTENING_OPS:
        return TIGHTEN
    if op in NEUTRAL_OPS:
        return NEUTRAL
    if op in SETTING_OPS:
        changes = fields.get("changes")
        if not isinstance(changes, dict) or not changes:
            return LOOSEN
        allowed = {"approval_mode", "approval_window_s", "tools", "container"}
        if set(changes) - allowed:
            return LOOSEN
        return LOOSEN if loosened(current, with_changes(current, **changes)) else TIGHTEN
    return LOOSEN
