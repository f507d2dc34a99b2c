"""What servers killed without a word left running, found by their processes' marks and ended.

A server marks what it starts (`process_marks`) as `<home tag>:<server key>:<what>`: `<what>` is
the command's journal id, or `shell` for its session's bash. When the server's lock is free (it is
gone) its shell is an orphan, and so is each command the journal says was still running when it
went (`interrupted`, or still active before anyone noticed). A background job of a command that
had finished (`npm run dev &`) stays, as it did while its server lived. The home tag keeps one app
home (a test's, a second profile's) from touching another's processes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from app.core import liveness
from app.core.execution import process_marks
from app.core.paths import AppPaths

SHELL = "shell"  # the `<what>` of a session's bash itself


def home_tag(paths: AppPaths) -> str:
    return hashlib.sha256(str(paths.data_dir).encode()).hexdigest()[:12]


def server_mark(paths: AppPaths, server_key: str) -> str:
    """The mark prefix of one server; each process's mark adds `:<what>` to it."""
    return f"{home_tag(paths)}:{server_key}"


class Record(Protocol):
    """What `end_left_behind` needs of the journal (journal.store.Journal)."""

    def recover_dead_servers(self) -> object: ...
    def was_left_running(self, command_id: int) -> bool: ...


def end_left_behind(paths: AppPaths, record: Record) -> list[int]:
    """Mark dead servers crashed, then end what they left running (the order end_orphans needs);
    the pids ended."""
    record.recover_dead_servers()
    return end_orphans(paths, record.was_left_running)


def end_orphans(
    paths: AppPaths, left_running: Callable[[int], bool], proc_root: Path = process_marks.PROC_ROOT
) -> list[int]:
    """SIGKILL what dead servers of this app home left running; returns the pids.

    `left_running(command_id)` is Journal.was_left_running: recover dead servers first.
    """
    tag = home_tag(paths) + ":"
    alive: dict[str, bool] = {}
    orphans = []
    for pid, mark in process_marks.marked_processes(proc_root).items():
        if not mark.startswith(tag):
            continue
        key, _, what = mark[len(tag) :].partition(":")
        if key not in alive:
            alive[key] = liveness.is_held(paths.server_lock(key))
        if alive[key]:
            continue
        if what == SHELL or (what.isdigit() and left_running(int(what))):
            orphans.append(pid)
    return process_marks.kill(orphans, proc_root)
