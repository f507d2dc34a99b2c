"""Which requests tighten control (applied at once, from anyone) and which loosen it (applied only
after the user clicks in a window the tray shows). Anything not listed loosens: the safe side.
A value that cannot be compared (NaN, infinity, a boolean for a number, out of range) is refused:
every comparison with NaN is false, so it would otherwise pass for a tightening."""

from __future__ import annotations

from typing import Any

from app.core.authority.state import ControlState, loosened, with_changes
from app.core.channel.protocol import BadValue, setting_changes

TIGHTEN = "tighten"
LOOSEN = "loosen"
NEUTRAL = "neutral"  # changes no control: reads, opening a window
REFUSE = "refuse"  # a value out of range: nothing changes, nobody is asked

# Requests a peer may send; each one's effect on the user's control.
TIGHTENING_OPS = frozenset({"pause", "stop", "deny", "quit", "remove_rule"})
LOOSENING_OPS = frozenset({"resume", "approve", "clear_history", "delete_data"})
NEUTRAL_OPS = frozenset({"state", "holds", "open_log", "output_budget"})
SETTING_OPS = frozenset({"settings"})  # approval mode, window, tools: depends on the direction
KNOWN_OPS = TIGHTENING_OPS | LOOSENING_OPS | NEUTRAL_OPS | SETTING_OPS


def classify_request(op: str, fields: dict[str, Any], current: ControlState) -> str:
    if op in TIGHTENING_OPS:
        return TIGHTEN
    if op in NEUTRAL_OPS:
        return NEUTRAL
    if op in SETTING_OPS:
        try:
            changes = setting_changes(fields.get("changes"))
        except BadValue:
            return REFUSE
        return LOOSEN if loosened(current, with_changes(current, **changes)) else TIGHTEN
    return LOOSEN
