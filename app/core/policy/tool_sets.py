"""Which MCP tools a server offers: a user setting in the journal, overridable by `serve --tools`."""

from __future__ import annotations

from app.core import settings
from app.core.settings import ALL_TOOLS, EXECUTE_ONLY, SettingsStore

TOOLS_SETTING = settings.TOOLS
TOOL_SETS = (ALL_TOOLS, EXECUTE_ONLY)


def tool_set(journal: SettingsStore) -> str:
    """The tool set stored; one this version does not know (a newer version's) reads as the
    narrowest, as the tray reads it (authority.state.ControlState.from_wire)."""
    value = journal.get_setting(TOOLS_SETTING, ALL_TOOLS)
    return value if value in TOOL_SETS else EXECUTE_ONLY


def set_tool_set(journal: SettingsStore, value: str) -> None:
    if value not in TOOL_SETS:
        raise ValueError(f"tools must be one of {', '.join(TOOL_SETS)}")
    journal.set_setting(TOOLS_SETTING, value)


def narrowest_tools(chosen: str, flag: str | None) -> str:
    """`serve --tools` may offer fewer tools than the user chose, never more."""
    if flag is None or chosen == EXECUTE_ONLY:
        return chosen
    return flag


def tools_on(platform: str, tools: str) -> str:
    """Windows gets execute_command alone: the persistent shell session needs a pipe handed to bash
    by its descriptor number and process groups for Ctrl-C (`pass_fds`, `os.killpg`), which Windows
    does not have; offering it there would only give the model errors."""
    return EXECUTE_ONLY if platform == "win32" else tools
