"""A pause another program writes into the pause file (the CLI, when the tray did not answer it: stalled,
suspended) is taken by the tray (`Hub.tick`), and a change of the tray's own never writes it over. A review,
2026-12-06, found the tray's own next write (a row, any setting) took the file's change for its own, so the
pause was never taken, and the next setting the person changed cleared it from the file headless servers read."""

from __future__ import annotations

import contextlib
import sqlite3
import time

from app.core.journal import pause_file
from app.core.paths import AppPaths
from tests.channel_peers import running_hub


def cli_pauses(paths: AppPaths) -> None:
    time.sleep(0.01)  # the file's time stamp moves
    pause_file.write(paths.pause_file, True)


def test_the_files_pause_is_taken_at_the_next_tick(paths: AppPaths) -> None:
    with running_hub(paths) as (hub, _seen):
        hub.tick()
        cli_pauses(paths)
        hub.tick()
        assert hub.state.paused


def test_the_files_pause_is_taken_after_a_write_of_the_trays_own(paths: AppPaths) -> None:
    with running_hub(paths) as (hub, _seen):
        hub.tick()
        cli_pauses(paths)
        hub.welcome_shown()  # a write of the tray's own before the monitor's next tick
        hub.tick()
        assert hub.state.paused, "the pause file says paused, the tray does not"


def test_a_setting_changed_before_the_tick_keeps_the_files_pause(paths: AppPaths) -> None:
    with running_hub(paths) as (hub, _seen):
        hub.tick()
        cli_pauses(paths)
        hub.set_settings(approval_window_s=hub.state.approval_window_s)  # a click in Settings
        assert hub.state.paused and pause_file.read(paths.pause_file) is True


def test_a_resume_in_the_file_is_not_taken(paths: AppPaths) -> None:
    with running_hub(paths) as (hub, _seen):
        hub.set_paused(True)
        time.sleep(0.01)
        pause_file.write(paths.pause_file, False)  # another program "resumes"
        hub.tick()
        assert hub.state.paused


def test_a_pause_whose_setting_could_not_be_written_is_still_lifted_by_a_resume(paths: AppPaths) -> None:
    """The pause file is written before the setting: when the setting's write then failed (another
    program held the journal's lock), the tray took its own pause file for another program's, and
    the person's Resume was turned back into a pause (CI, 2026-12-06)."""
    with running_hub(paths) as (hub, _seen):
        with contextlib.closing(sqlite3.connect(paths.journal, timeout=0, isolation_level=None)) as other:
            other.execute("BEGIN IMMEDIATE")  # holds the write lock: the setting's write fails
            hub.set_paused(True)
            other.execute("ROLLBACK")
        hub.set_paused(False)
        assert not hub.state.paused
