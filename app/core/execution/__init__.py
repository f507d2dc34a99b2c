"""Running commands: the executor, the shell session, output, process marks and the bash to use."""

from __future__ import annotations

import sys
from types import ModuleType


def lingering_containers() -> ModuleType | None:
    """start_files, when a container of this process lives on after its command (a background job);
    None otherwise. Not imported for the asking: a process that never ran a command has none."""
    start_files = sys.modules.get("app.core.execution.start_files")
    return start_files if start_files is not None and start_files.lingering() else None
