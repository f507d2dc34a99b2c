"""How long a call may keep its client waiting before it returns a job id instead (issue 22).

Each Claude app gives a tool call its own wall time, and none says so in the handshake: the figures
below are what public reports measured (docs/ARCHITECTURE.md, "Jobs"). A call returns well before
its client gives up; the command goes on as a job the model follows with command_wait.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

PATIENCE_ENV = "COWORK_TERMINAL_PATIENCE_S"
MAX_PATIENCE_S = 600.0

# Cowork and the Desktop Code tab cut a call at about 60 s (-32001); Cowork names itself
# `local-agent-mode-<the server's key in the config>` (a public measurement: "local-agent-mode-defteriki 1.0.0").
COWORK_PATIENCE_S = 45.0
# Claude Desktop chat gives up after about 4 minutes ("No result received ... after waiting 4 minutes").
DESKTOP_CHAT_PATIENCE_S = 210.0
# Claude Code resets its idle timer on progress, but moves a call past 2 minutes to its own background.
CLAUDE_CODE_PATIENCE_S = 110.0
UNKNOWN_PATIENCE_S = 45.0

# (how the client names itself: exact name, or a prefix ending in "-"), seconds.
PATIENCE_TABLE: tuple[tuple[str, float], ...] = (
    ("local-agent-mode-", COWORK_PATIENCE_S),
    ("claude-ai", DESKTOP_CHAT_PATIENCE_S),
    ("claude-code", CLAUDE_CODE_PATIENCE_S),
)


def patience_s(client_name: str | None, protocol_version: str | None, environ: Mapping[str, str]) -> float:
    """Seconds a call may wait for its command before returning a job id; `COWORK_TERMINAL_PATIENCE_S`
    (set in Claude's config entry) wins. `protocol_version` is taken so that a client whose limit
    changes with the protocol can be told apart; no public report ties a limit to it yet."""
    override = environ.get(PATIENCE_ENV, "").strip()
    if override:
        try:
            seconds = float(override)
        except ValueError:
            seconds = math.nan
        if math.isfinite(seconds) and 0 <= seconds <= MAX_PATIENCE_S:
            return seconds
    name = client_name or ""
    for key, seconds in PATIENCE_TABLE:
        if name == key or (key.endswith("-") and name.startswith(key)):
            return seconds
    return UNKNOWN_PATIENCE_S


# Request `_meta` key: seconds a forwarded call already waited before the tray's runner took it (the
# runner is built at its server's first call); they come out of the client's patience.
WAITED_META = "cowork-terminal/waitedS"


def waited_before(meta: Mapping[str, object] | None) -> float:
    """Seconds the call waited before its handler ran, from the request's `_meta` (0 when not said or
    not a finite, non-negative number). Only ever shortens a wait, so anyone may say it."""
    value = (meta or {}).get(WAITED_META)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        return 0.0
    return min(float(value), MAX_PATIENCE_S)
