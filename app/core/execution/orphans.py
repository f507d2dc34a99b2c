"""What servers killed without a word left running, found by their processes' marks and ended.

A server marks what it starts (`process_marks`) as `<home tag>:<server key>:<what>`: `<what>` is
the command's journal id, or `shell` for its session's bash. When the server's lock is free (it is
gone) its shell is an orphan, and so is each command the journal says was still running when it
went (`interrupted`, or still active before anyone noticed). A background job of a command that
had finished (`npm run dev &`) stays, as it did while its server lived. The home tag keeps one app
home (a test's, a second profile's) from touching another's processes.

That is done by the next server or tray to start. A headless server's commands in the container end
with it anyway (bwrap's --die-with-parent); those it runs without one (no bwrap, or switched off, or
let out by a person's Allow) did not, until someone started. So such a server, as it first starts one
(running.Runs.watch_uncontained), also starts a watcher (`watch_server`): a small bash
outside any container that reads a pipe only this process writes, and at its end of file (this
process is gone, however it went, SIGKILL included) ends at once what carries this process's servers'
marks, but the background jobs of commands that had finished (`leave_running`). Linux only (marks are
read from /proc); a watcher killed meanwhile is started again, told everything, at the next line
this process tells it; should this process go first, the next server or tray does it, as before.
"""

from __future__ import annotations

import _thread
import contextlib
import hashlib
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from app.core import liveness
from app.core.execution import process_marks
from app.core.paths import AppPaths

log = logging.getLogger(__name__)

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


# The watcher (`watch_server`): lines `serves <server mark>` and `finished <command mark>` on stdin;
# at its end, SIGKILL to every process carrying a mark of a server it serves, but a finished command's,
# until none is left (a few rounds: what one forks while it is found). Builtins only, no locale, no
# start-up file (no BASH_ENV in its environment); signals to this process's group never reach it
# (a session of its own), and it ignores the polite ones.
WATCH_SCRIPT = r"""
trap '' INT TERM HUP QUIT
declare -A finished=()
servers=()
while IFS= read -r line; do
  case $line in
    "serves "*) servers+=("${line#serves }:") ;;
    "finished "*) finished["${line#finished }"]=1 ;;
    "forget "*) unset "finished[${line#forget }]" ;;
  esac
done
exec </dev/null
[ ${#servers[@]} -gt 0 ] || exit 0
for round in 1 2 3 4 5; do
  doomed=()
  for entry in /proc/[0-9]*; do
    mark=
    while IFS= read -r -d '' item; do
      case $item in MARK_ENV=*) mark=${item#*=}; break ;; esac
    done 2>/dev/null <"$entry/environ"
    [ -n "$mark" ] || continue
    for server in "${servers[@]}"; do
      case $mark in
        "$server"*) [ -n "${finished[$mark]+x}" ] || doomed+=("${entry#/proc/}"); break ;;
      esac
    done
  done
  [ ${#doomed[@]} -gt 0 ] || exit 0
  kill -KILL "${doomed[@]}" 2>/dev/null
done
""".replace("MARK_ENV", process_marks.MARK_ENV)

_watch_lock = threading.Lock()
_watch_pipe: int | None = None  # the write end of the watcher's stdin: only this process holds it
_told: list[str] = []  # every line told, for a watcher started again
# Finished commands the watcher is told of, past which those that left nothing running are forgotten
# (here and in the watcher): without it both lists grew by a line per uncontained command.
MAX_FINISHED_TOLD = 256
_forget_past = MAX_FINISHED_TOLD  # doubles while the finished still leave processes, so /proc is read seldom


def watch_server(run_mark: str) -> None:
    """End what the server with `run_mark` (this process's) still runs as soon as this process is
    gone, whoever ends it (see the module's doc); the watcher starts with the first server."""
    if sys.platform.startswith("linux") and f"serves {run_mark}" not in _told:
        _tell(f"serves {run_mark}")


def leave_running(mark: str) -> None:
    """The command with `mark` finished: what it left running (a dev server) stays when this process
    goes, as it did while it lived."""
    if _told and sys.platform.startswith("linux"):
        _tell(f"finished {mark}")
        if sum(line.startswith("finished ") for line in _told) > _forget_past:
            _forget_finished(set(process_marks.marked_processes().values()))


def _forget_finished(running: set[str]) -> None:
    """Forget the finished commands no process carries the mark of any more: none can come back,
    since only a process with the mark makes another (a fork the look misses as its parent exits
    is ended with this process, as it was before the command finished)."""
    global _forget_past
    with _watch_lock:
        gone = {line for line in _told if line.startswith("finished ") and line[len("finished ") :] not in running}
        _told[:] = [line for line in _told if line not in gone]
        _forget_past = max(MAX_FINISHED_TOLD, 2 * (sum(line.startswith("finished ") for line in _told)))
        pipe = _watch_pipe
        if pipe is None:
            return
        for line in gone:
            try:  # a line at a time: each is shorter than PIPE_BUF, so it is written whole or not at all
                os.write(pipe, f"forget {line[len('finished ') :]}\n".encode())
            except OSError:  # not read: the watcher spares a mark no process has; a new one is told _told
                break


def _tell(line: str) -> None:
    global _watch_pipe
    if "\n" in line:
        return
    with _watch_lock:
        _told.append(line)
        for _attempt in range(2):
            if _watch_pipe is None:
                _watch_pipe = _start_watcher("".join(f"{said}\n" for said in _told).encode())
                return
            try:
                os.write(_watch_pipe, f"{line}\n".encode())
                return
            except BlockingIOError:  # a watcher that stopped reading: this line is lost, not the server
                log.warning("the watcher of this server's commands is not reading: %s not told", line)
                return
            except OSError:  # it is gone (killed): a new one, told everything again
                os.close(_watch_pipe)
                _watch_pipe = None


def _start_watcher(told: bytes) -> int | None:
    """Start the watcher and tell it `told`; the write end of its pipe, or None when it cannot start."""
    from app.core.system_programs import system_program  # only a server that runs commands starts one

    bash = system_program("bash", os.environ) or "/bin/bash"
    read_end, write_end = os.pipe()  # close-on-exec: no command inherits the write end
    try:
        watcher = subprocess.Popen(
            [bash, "--norc", "--noprofile", "-c", WATCH_SCRIPT, "cowork-terminal-watch"],
            stdin=read_end,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",
            env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"},
            start_new_session=True,
        )
    except OSError as problem:
        log.warning("no watcher for this server's commands: %s", problem)
        os.close(write_end)
        return None
    finally:
        os.close(read_end)
    _thread.start_new_thread(watcher.wait, ())  # reaped whenever it ends
    os.set_blocking(write_end, False)
    try:
        os.write(write_end, told)  # a few lines: the empty pipe takes them at once
    except OSError as problem:
        log.warning("the watcher of this server's commands could not be told: %s", problem)
    return write_end


def _forget_watcher() -> None:
    """A forked child must not hold the watcher's pipe open: its parent's end would not be seen."""
    global _watch_pipe
    if _watch_pipe is not None:
        with contextlib.suppress(OSError):
            os.close(_watch_pipe)
    _watch_pipe = None
    _told.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_watcher)
