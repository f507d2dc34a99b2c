"""The user's control settings as the tray holds them, and which way a change goes.

Pure data: the hub, the server link and the CLI all compare settings here, so "stricter" means the
same thing everywhere. Stricter: paused; asking more often (never -> destructive -> all); a shorter
approval window; fewer tools (execute -> all is a loosening); commands in the OS container (turning
it off is a loosening: issue 21).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

from app.core import settings
from app.core.policy.approval import DEFAULT_APPROVAL_WINDOW_S, ApprovalMode, window_value
from app.core.policy.tool_sets import ALL_TOOLS, EXECUTE_ONLY, TOOL_SETS

# How strict each value is: a higher rank asks for more of the user's attention.
MODE_RANK = {ApprovalMode.NEVER.value: 0, ApprovalMode.DESTRUCTIVE.value: 1, ApprovalMode.ALL.value: 2}
TOOLS_RANK = {ALL_TOOLS: 0, EXECUTE_ONLY: 1}


@dataclass(frozen=True)
class ControlState:
    paused: bool = False
    approval_mode: str = ApprovalMode.DESTRUCTIVE.value
    approval_window_s: float = DEFAULT_APPROVAL_WINDOW_S
    tools: str = ALL_TOOLS
    container: bool = True  # commands run in the OS container (core/execution/container.py)

    def to_wire(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_wire(cls, data: object) -> ControlState:
        """Read a state from a message; anything malformed reads as the strictest value."""
        if not isinstance(data, dict):
            return STRICTEST
        mode = data.get("approval_mode")
        window = data.get("approval_window_s")
        tools = data.get("tools")
        return cls(
            paused=data.get("paused") is not False,
            approval_mode=mode if mode in MODE_RANK else ApprovalMode.ALL.value,
            approval_window_s=window_value(window),
            tools=tools if tools in TOOL_SETS else EXECUTE_ONLY,
            container=data.get("container") is not False,
        )


STRICTEST = ControlState(paused=True, approval_mode=ApprovalMode.ALL.value, approval_window_s=1.0, tools=EXECUTE_ONLY)
DEFAULTS = ControlState()


def strictest(*states: ControlState) -> ControlState:
    """Merge what several sources remember (the tray's file, each server's last push): every setting
    takes its strictest value, so a file edited while no tray ran cannot loosen a live server."""
    first, *rest = states
    merged = first
    for other in rest:
        merged = ControlState(
            paused=merged.paused or other.paused,
            approval_mode=max(merged.approval_mode, other.approval_mode, key=MODE_RANK.__getitem__),
            approval_window_s=min(merged.approval_window_s, other.approval_window_s),
            tools=max(merged.tools, other.tools, key=TOOLS_RANK.__getitem__),
            container=merged.container or other.container,
        )
    return merged


def loosened(before: ControlState, after: ControlState) -> list[str]:
    """The settings that `after` relaxes compared with `before` (empty: a pure tightening)."""
    changes = []
    if before.paused and not after.paused:
        changes.append("paused")
    if MODE_RANK[after.approval_mode] < MODE_RANK[before.approval_mode]:
        changes.append("approval_mode")
    if not after.approval_window_s <= before.approval_window_s:  # NaN counts as a loosening
        changes.append("approval_window_s")
    if TOOLS_RANK[after.tools] < TOOLS_RANK[before.tools]:
        changes.append("tools")
    if before.container and not after.container:
        changes.append("container")
    return changes


def with_changes(state: ControlState, **changes: Any) -> ControlState:
    """`state` with some settings replaced, each value checked as a message's would be."""
    merged = {**state.to_wire(), **changes}
    return ControlState.from_wire(merged)


# The settings the journal keeps of a state but the pause (kept in the pause file too), by field.
STORED_SETTINGS = (
    ("approval_mode", settings.APPROVAL_MODE),
    ("approval_window_s", settings.APPROVAL_WINDOW_S),
    ("tools", settings.TOOLS),
    ("container", settings.CONTAINER),
)


def stored_state(get_setting: Callable[[str, Any], Any], paused: bool) -> ControlState:
    """The state a journal's settings say (`get_setting(key, default)`), with `paused` as the caller
    reads it (the setting alone, or with the pause file); each value checked as a message's would be."""
    return ControlState.from_wire(
        {"paused": paused, **{field: get_setting(key, getattr(DEFAULTS, field)) for field, key in STORED_SETTINGS}}
    )


__all__ = [
    "DEFAULTS", "STORED_SETTINGS", "STRICTEST", "ControlState", "loosened", "replace", "stored_state", "strictest",
    "with_changes",
]  # fmt: skip
