"""Running commands: the executor, the shell session, output, process marks and the bash to use."""

from __future__ import annotations

import logging
import sys
from types import ModuleType

log = logging.getLogger(__name__)

# A pause stops each command gently within about 0.6 s (the executor's grace, then SIGKILL); what still
# runs this long after it is ended from a thread of its own (the tray's hub, a headless server's
# backstop): the loop that stops commands gently can be held up by a slow judgement.
PAUSE_BACKSTOP_S = 1.2


def _loaded(name: str) -> ModuleType | None:
    """The execution module `name` where a command of this process loaded it, else None: a process
    that never ran a command has nothing of it to end, and is not made to import it for the asking."""
    return sys.modules.get(f"app.core.execution.{name}")


def lingering_containers() -> ModuleType | None:
    """start_files, when a container of this process lives on after its command (a background job);
    None otherwise. Not imported for the asking: a process that never ran a command has none."""
    start_files = _loaded("start_files")
    return start_files if start_files is not None and start_files.lingering() else None


def end_what_finished_commands_left(mark: str | None) -> None:
    """A pause: what finished commands marked under `mark` left running, a lingering container on
    Linux, a held job on Windows (red team 13). Neither module imported for the asking."""
    lingering = lingering_containers()
    if lingering is not None:
        lingering.end_lingering(mark)
    windows_jobs = _loaded("windows_jobs")
    if windows_jobs is not None:
        windows_jobs.end_jobs()


def jobs_left_behind() -> bool:
    """Windows: whether a finished command's job is still held (something it left may run)."""
    windows_jobs = _loaded("windows_jobs")
    return windows_jobs is not None and windows_jobs.left_behind()


def end_what_a_pause_left(mark: str | None) -> None:
    """A pause's last word, PAUSE_BACKSTOP_S after it: every command container of this process (not
    an idle spare) whose command was marked under `mark` (all of them without one), and every
    process still carrying such a mark (Linux: marks are read from /proc). Said in the log, never
    raised: it runs on a thread of its own."""
    try:
        start_files = _loaded("start_files")
        ended = start_files.end_commands(mark) if start_files is not None else 0
        windows_jobs = _loaded("windows_jobs")
        ended += windows_jobs.end_jobs(running=True) if windows_jobs is not None else 0  # Windows' jobs
        marked: list[int] = []
        if mark:
            from app.core.execution import process_marks

            marked = process_marks.end_marked_under(mark)  # Linux only (reads_marks)
    except Exception:  # a pid reused meanwhile, say
        log.exception("ending what a pause left failed")
        return
    if ended:
        log.warning("%d command container(s) still ran %.1f s after a pause: ended", ended, PAUSE_BACKSTOP_S)
    if marked:
        log.warning("%d marked process(es) still ran %.1f s after a pause: ended", len(marked), PAUSE_BACKSTOP_S)
