"""The environment commands run in, resolved once per server: a login shell can take seconds."""

from __future__ import annotations

import threading
from collections.abc import Mapping

from app.core.execution.shell_environment import command_environment, resolve_base_environment


class EnvironmentResolver:
    """Computes the user's terminal environment once (at start-up, off the event loop) and overlays per call."""

    def __init__(self) -> None:
        self._base: dict[str, str] | None = None
        self._lock = threading.Lock()

    def prepare(self) -> dict[str, str]:
        """Resolve the base now; the server calls this from a worker thread right after start."""
        with self._lock:
            if self._base is None:
                self._base = resolve_base_environment()
            return self._base

    def environment_for(self, overlay: Mapping[str, str]) -> dict[str, str]:
        return command_environment(self.prepare(), overlay)
