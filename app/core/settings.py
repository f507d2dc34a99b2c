"""Every key of the journal's `settings` table and its default, named once.

The journal stores any JSON value under any key; which keys exist, what each holds and what it is
when unset is decided here, so that the modules that read a setting (the approval rules, the tool
sets, the output budget, the tray's supervisor) and the one that judges an old journal's settings
(journal.migration) agree without importing one another. This module imports nothing of the app.
"""

from __future__ import annotations

from typing import Any, Protocol

# The user's controls: the tray pushes them to its servers and keeps a copy here for its next start.
PAUSED = "paused"  # also kept in the pause file (journal/pause_file.py), which survives a full disk
APPROVAL_MODE = "approval_mode"  # policy.approval.ApprovalMode's value
APPROVAL_WINDOW_S = "approval_window_s"  # how long a held command waits for the user's click
TOOLS = "tools"  # policy.tool_sets: which tools a server offers
OUTPUT_BUDGET = "output_budget"  # execution.output: how much output a call returns (not a control)
CONTAINER = "container"  # commands run in the OS container (execution.container); off only by a click

# Records and notices.
JOURNAL_REPLACED = "journal.replaced"  # the last damaged journal moved aside (data_folder.Replacement)
JOURNAL_REPLACED_TOLD = "tray.journal_replaced_told"  # the `at` of the replacement last told
DATA_MOVED_NOTICE = "notice.data_moved"  # the sentence on the old Windows folder's move, shown once
KNOWN_CLIENTS = "tray.known_clients"  # the Claude apps already announced as new
WELCOME_SHOWN = "welcome.shown"  # the tray opened its Welcome window once
# The highest command id ever given in this journal (or in the one it replaced): ids go on above it,
# so that no job id a model holds, nor anything kept in memory by id, names a later command.
COMMAND_ID_FLOOR = "journal.command_id_floor"
# How many pauses the journal has said so far (each change to paused): a headless server refuses a
# decision made under an older count, even once resumed (a red team, 2026-12-06).
PAUSE_COUNT = "journal.pause_count"

DEFAULT_APPROVAL_MODE = "destructive"  # ask before dangerous commands
DEFAULT_APPROVAL_WINDOW_S = 40.0  # clients cancel a call after about 60 s: answer well before
MAX_APPROVAL_WINDOW_S = 55.0
ALL_TOOLS = "all"  # the execute set, the session tools, terminal_confirm and terminal_cancel (session holds)
# The seed's surface: execute_command, the read-only tool and the tools that follow jobs (issue 22).
EXECUTE_ONLY = "execute"

# What each key reads as when the journal has none (None: absent; its reader decides).
DEFAULTS: dict[str, Any] = {
    PAUSED: False,
    APPROVAL_MODE: DEFAULT_APPROVAL_MODE,
    APPROVAL_WINDOW_S: DEFAULT_APPROVAL_WINDOW_S,
    TOOLS: ALL_TOOLS,
    CONTAINER: True,
    OUTPUT_BUDGET: None,  # execution.output.DEFAULT_BUDGET_CHARS, or COWORK_TERMINAL_OUTPUT_BUDGET
    JOURNAL_REPLACED: None,
    JOURNAL_REPLACED_TOLD: None,
    DATA_MOVED_NOTICE: None,
    KNOWN_CLIENTS: [],
    WELCOME_SHOWN: False,
    COMMAND_ID_FLOOR: 0,
    PAUSE_COUNT: 0,
}


class SettingsStore(Protocol):
    """Where settings are read and written: the journal (journal.store.Journal), seen by the
    modules that only need its settings, so that they do not import the journal."""

    def get_setting(self, key: str, default: Any = None) -> Any: ...

    def set_setting(self, key: str, value: Any) -> None: ...
