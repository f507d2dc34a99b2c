"""The tray's journal connection: the one writer while a tray runs, and what it notices of others.

Journal writes share one connection under the hub's lock: a change of `PRAGMA data_version` on it
can then only mean that another program wrote the file, which the tray reports. A journal deleted,
replaced or damaged in place is found here; the hub starts a new one and writes its memory into it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from app.core import data_folder, settings
from app.core.authority import lock_holders
from app.core.authority.state import STORED_SETTINGS, ControlState, stored_state
from app.core.data_folder import DataFolderError
from app.core.i18n import N_, _
from app.core.journal import commands_table, pause_file
from app.core.journal.opening import DamageWatch, damage_on_disk
from app.core.journal.store import Journal, Outcome, repairing
from app.core.paths import AppPaths, file_identity

log = logging.getLogger(__name__)

WRITE_BUSY_TIMEOUT_S = 2.0  # a journal locked by another program: refuse, never hang the hub
FOREIGN_WRITE_NOTICE_GAP_S = 60.0
PROBLEM_NOTICE_GAP_S = 300.0
UNWRITTEN_RETRY_S = 5.0
# Why the journal could not be written: English in a server's answer (the model reads it), marked
# for the user's notice.
JOURNAL_LOCKED = N_("the activity log is locked by another program")
JOURNAL_DISK_FULL = N_("the disk that holds the activity log is full")
JOURNAL_NOT_WRITTEN = N_("the activity log cannot be written ({error})")
CLOSING_REASON = "Cowork Terminal (the app) stopped"  # English: what servers hear as the tray quits
JOURNAL_DAMAGED = "the activity log was damaged ({error}), so a new one was started"  # English: servers pass it on


class Record:
    """The journal as the hub writes it. Not thread-safe on its own: the hub calls it under its lock."""

    def __init__(self, paths: AppPaths, notify: Callable[[str, str], None]) -> None:
        self.paths = paths
        self.notify = notify
        self.writes = 0  # our own writes so far: with data_version, tells the tray's views to refresh
        self._last_foreign_notice = 0.0
        self._problem_told: tuple[str, float] | None = None  # what the user was told, and when
        self.unwritten_ends: dict[int, Outcome] = {}  # ends the file refused (locked, full): kept for later
        self._unwritten_tried = 0.0  # when the file last refused one (monotonic)
        self._writing_ends = False  # write_unwritten runs: its own writes do not start it again
        self._damage = DamageWatch(paths.journal)
        self.closed = False  # the tray quit: a server's late end is kept in the log, not written
        self.paused_by_others = False  # changed_by_others: the pause file says paused, not by us
        self.journal = self._open()
        damage = damage_on_disk(paths.journal, every_page=True)  # once, as the tray starts
        if damage:
            self._start_anew(damage)

    def _open(self) -> Journal:
        journal = Journal(self.paths, check_same_thread=False, busy_timeout_s=WRITE_BUSY_TIMEOUT_S)
        self._journal_inode = file_identity(self.paths.journal)
        # Another program's commit moves SQLite's data_version, which our own writes never do: it is
        # never reset by them. The pause file is also written by our own pause: seen after each write.
        self._seen_commits = journal.others_commits()
        self._seen_pause_stamp = pause_file.stamp(self.paths.pause_file)
        return journal

    def stored_state(self) -> ControlState:
        """The settings the file holds (read once, at start)."""
        journal = self.journal
        return stored_state(journal.get_setting, bool(journal.get_setting("paused", False)))

    def write_state(self, state: ControlState) -> None:
        """Copy the settings in force into the file (raises sqlite3.OperationalError)."""
        try:
            self.journal.set_setting("paused", state.paused)
            for field, key in STORED_SETTINGS:
                self.journal.set_setting(key, getattr(state, field))
        finally:  # the pause file, if written, was written by us: also when the settings' write failed after it
            self._seen_pause_stamp = pause_file.stamp(self.paths.pause_file)
        self.wrote()

    def wrote(self) -> None:
        """After each of our own writes. (Our commits do not move data_version: that one is never
        reset here; the pause file is taken for ours only after `write_state`, which writes it: a row
        written meanwhile swallowed the CLI's pause, a review found.) The file took a write, so the
        ends it refused before go in now, not at the upkeep's next retry: a job that ended on a full
        disk reads `finished` as soon as the next command is recorded."""
        self._counted()
        if self.unwritten_ends and not self._writing_ends:
            with contextlib.suppress(sqlite3.Error):  # the write just made stands; the upkeep tries again
                self.write_unwritten(retry_after_s=0.0)

    def _counted(self) -> None:
        self.writes += 1

    def paused_outside(self, stamp: int | None = None) -> bool:
        """Whether another program wrote a pause into the pause file since we last wrote it (the CLI,
        while the tray did not answer it): a pause from anywhere counts. `stamp`: the file's, if just read."""
        stamp = pause_file.stamp(self.paths.pause_file) if stamp is None else stamp
        return stamp != self._seen_pause_stamp and pause_file.read(self.paths.pause_file) is True

    def finish(self, command_id: int, outcome: Outcome) -> None:
        """Record how a command ended; when the file refuses (another program holds its lock, the
        disk is full) the end is kept and written by `write_unwritten`, never lost or sent back."""
        if self.closed:  # it was on its way as the tray quit (close)
            log.warning("the end of command %s could not be recorded", command_id)
            return
        self.unwritten_ends[command_id] = outcome
        self.write_unwritten(retry_after_s=0.0)

    def write_unwritten(self, retry_after_s: float = UNWRITTEN_RETRY_S) -> None:
        """Write the ends kept so far, oldest first, until the file refuses one (told once); not
        sooner than `retry_after_s` after the last refusal (each try may wait WRITE_BUSY_TIMEOUT_S
        under the hub's lock, which every request needs)."""
        if self.closed or time.monotonic() - self._unwritten_tried < retry_after_s:
            return
        self._writing_ends = True
        try:
            while self.unwritten_ends:
                command_id, outcome = next(iter(self.unwritten_ends.items()))
                try:  # a full disk too (DataFolderError): finish_command raises, the end stays here
                    self.journal.finish_command(command_id, outcome)
                except sqlite3.OperationalError as exc:
                    self._unwritten_tried = time.monotonic()
                    self.problem(exc)
                    return
                del self.unwritten_ends[command_id]
                self._counted()
        finally:
            self._writing_ends = False

    def gone_or_damaged(self) -> bool:
        """The file was deleted or replaced under us, or damaged in place."""
        return file_identity(self.paths.journal) != self._journal_inode or self._damaged_in_place()

    def _damaged_in_place(self) -> bool:
        """A journal overwritten where it is (same file, garbage pages): our own connection reads
        its cached pages and would not notice, so a fresh one looks whenever the file changed since
        a look found it whole (a stat otherwise: cheap enough before each command's row)."""
        damage = self._damage.damage()
        if damage:
            log.warning("the journal at %s is damaged (%s)", self.paths.journal, damage)
        return damage is not None

    def reopen(self, known: int = 0) -> None:
        """Start a new file where the old one was (the hub writes its memory into it next). Its ids
        go on above the old file's and above `known`, the highest id a server of the hub still has."""
        log.warning("the journal at %s was deleted or replaced: starting a new one", self.paths.journal)
        old: int | None = None
        with contextlib.suppress(sqlite3.Error):
            old = self.journal.last_command_id()  # a deleted file is still open here
        last = max(known, old or 0)
        with contextlib.suppress(sqlite3.Error):
            self.journal.close()
        if not self.paths.journal.exists():  # deleted: SQLite would replay its write-ahead log into the new file
            for suffix in ("-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    Path(f"{self.paths.journal}{suffix}").unlink()
        data_folder.ensure(self.paths)
        try:
            self.journal = self._open()
        except sqlite3.DatabaseError as exc:
            if not data_folder.is_corrupt(exc):
                raise
            self._start_anew(str(exc), above=last)
            return
        if last:
            self.journal.go_on_above(last)

    def _start_anew(self, damage: str, *, above: int = 0) -> None:
        """Damaged in a page only a read finds (opening did not): moved aside here for a new one whose
        ids go on above the old file's (as far as it or our connection to it reads) and `above`. The
        tray's runners keep no repair of their own (they share this process's file locks)."""
        known: int | None = None
        with contextlib.suppress(sqlite3.Error):
            known = self.journal.last_command_id()
        with contextlib.suppress(sqlite3.Error):
            self.journal.close()
        with repairing(self.paths):  # a server may have moved it aside and started a new one meanwhile
            if damage_on_disk(self.paths.journal, every_page=True) is None:
                self.journal = self._open()
                self.journal.go_on_above(max(above, known or 0))
                return
            replaced = data_folder.move_aside(self.paths.journal, damage)
            self.journal = self._open()
        self.journal.set_setting(settings.JOURNAL_REPLACED, dataclasses.asdict(replaced))
        self.journal.go_on_above(max(above, commands_table.ids_given_in(Path(replaced.moved_to), known)))

    def changed_by_others(self) -> bool:
        """True when another program wrote the file or the pause file since we last looked;
        `paused_by_others` says whether that program wrote a pause into the pause file."""
        commits, stamp = self.journal.others_commits(), pause_file.stamp(self.paths.pause_file)
        foreign = commits != self._seen_commits or stamp != self._seen_pause_stamp
        self.paused_by_others = self.paused_outside(stamp)
        self._seen_commits, self._seen_pause_stamp = commits, stamp
        return foreign

    def tell_foreign_change(self) -> None:
        """Tell the user, at most once a minute, that another program changed the file."""
        if time.monotonic() - self._last_foreign_notice <= FOREIGN_WRITE_NOTICE_GAP_S:
            return
        self._last_foreign_notice = time.monotonic()
        log.warning("the journal was changed by another program")
        self.notify(
            _("The activity log was changed by another program"),
            _("Cowork Terminal did not make this change. Your settings and answers are unaffected."),
        )

    def problem(self, exc: sqlite3.OperationalError) -> tuple[str, str]:
        """Why a write failed: in English (what a server tells the model) and in the user's words;
        the user is told once, and again only after PROBLEM_NOTICE_GAP_S (a lock held for long is
        met by every round of the tray's upkeep)."""
        text = str(exc)
        if isinstance(exc, DataFolderError):
            english, why = text, exc.for_person()
        elif "locked" in text or "busy" in text:
            english = JOURNAL_LOCKED
            why = _(JOURNAL_LOCKED)
            self._end_contained_lock_holders()
        elif "full" in text:
            english = JOURNAL_DISK_FULL
            why = _(JOURNAL_DISK_FULL)
        else:
            english = JOURNAL_NOT_WRITTEN.format(error=text)
            why = _(JOURNAL_NOT_WRITTEN).format(error=text)
        log.warning("journal write failed: %s", text)
        now = time.monotonic()
        told = self._problem_told
        if told is None or told[0] != why or now - told[1] >= PROBLEM_NOTICE_GAP_S:
            self._problem_told = (why, now)
            self.notify(_("Cowork Terminal cannot record commands"), _("Commands are refused: {why}.").format(why=why))
        return english, why

    def _end_contained_lock_holders(self) -> None:
        """A process of one of the tray's containers holding the journal's lock is ended (a
        tightening, as Stop is: core/authority/lock_holders.py), and the user told."""
        files = [Path(f"{self.paths.journal}{suffix}") for suffix in ("", "-wal", "-shm")]
        if lock_holders.end_contained_holders(files, os.getpid()):
            self.notify(
                _("A command locked the activity log"),
                _("A process of a command held Cowork Terminal's activity log locked, so it was ended."),
            )

    def close(self) -> None:
        """Write what waits and close the file. A server's end that arrives after this (it was on
        its way as the tray quit) is logged by `finish` instead; closing twice does nothing."""
        if self.closed:
            return
        self.write_unwritten(retry_after_s=0.0)
        self.closed = True
        for command_id in self.unwritten_ends:  # the tray quits with the file still refusing
            log.warning("the end of command %s could not be recorded", command_id)
        self.journal.close()
