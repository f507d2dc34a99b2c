"""Running commands: the executor, the shell session, output, process marks and the bash to use."""

from __future__ import annotations

import sys
from types import ModuleType


def lingering_containers() -> ModuleType | None:
    """start_files, when a container of this process lives on after its command (a background job);
    None otherwise. Not imported for the asking: a process that never ran a command has none."""
    start_files = sys.modules.get("app.core.execution.start_files")
    return start_files if start_files is not None and start_files.lingering() else None


def end_commands() -> int:
    """End every container of this process that runs or ran a command (not an idle spare), however
    its command is doing: a pause's last word, from the hub's own thread. How many were ended."""
    start_files = sys.modules.get("app.core.execution.start_files")
    return start_files.end_commands() if start_files is not None else 0
