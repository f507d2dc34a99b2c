"""Who may delete the record (`uninstall --data`): a person, never a command an agent runs.

The history and logs are how the user sees what agents did; deleting them is what an agent that
did something would want. So with the app running, `--data` waits for the user's click in the
app's confirm window (the tray asks, and it refuses outright a request from a command an agent
runs). With no app running nobody can click: then `--data` is refused to a process that carries a
server's run mark (COWORK_TERMINAL_RUN) or descends from a `serve`, and a person runs it from a
terminal of their own (or a script they started). What this cannot see: an agent's process that
cleared its environment and left its ancestry (double fork, `setsid`, a scheduler) while no app
runs; the app running is the real guard, which is why uninstalling asks it first.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from app.core.execution.process_marks import MARK_ENV, parent_pid
from app.core.i18n import N_

ANCESTRY_DEPTH = 64
FROM_AN_AGENT = N_(
    "This comes from a command an AI agent runs, so the command history and logs were not deleted: "
    "only you can delete them, from a terminal of your own or from the app's Uninstall window."
)


def runs_serve(argv: Sequence[str]) -> bool:
    """Whether a process's command line is a Cowork Terminal server (`cowork-terminal serve`,
    `python -m app serve`, or the bundled program)."""
    words = [os.path.basename(word) for word in argv]
    ours = any(w.startswith("cowork-terminal") for w in words) or ("-m" in words and "app" in words)
    return ours and "serve" in words


def agent_run_reason(environ: Mapping[str, str], ancestors: Sequence[Sequence[str]]) -> str | None:
    """Why this process is an agent's command (English, marked for the person), or None."""
    if environ.get(MARK_ENV):
        return FROM_AN_AGENT
    if any(runs_serve(argv) for argv in ancestors):
        return FROM_AN_AGENT
    return None


def ancestors(pid: int | None = None, proc_root: Path = Path("/proc")) -> list[list[str]]:
    """The command lines of this process's ancestors, nearest first (Linux; empty elsewhere)."""
    found: list[list[str]] = []
    pid = os.getppid() if pid is None else pid
    for _step in range(ANCESTRY_DEPTH):
        if pid <= 1:
            break
        try:
            argv = (proc_root / str(pid) / "cmdline").read_bytes().split(b"\0")
        except OSError:
            break
        parent = parent_pid(pid, proc_root)
        if parent is None:
            break
        found.append([a.decode("utf-8", "replace") for a in argv if a])
        pid = parent
    return found
