"""Where one server takes its orders from: its tray, or (headless with no tray) the journal.

`CommandService` asks this object whether commands may run, what the approval mode is, whether
the user answered or pressed Stop, and has it write the rows. Bound to a tray, every answer comes
from the tray's messages and every row is written by the tray; the journal file is never read for
a control. A headless server that never met a tray reads the journal as before: it is unprotected
against a program that writes the user's files, as docs/security.md says.
"""

from __future__ import annotations

import dataclasses
import enum
import logging
import os
import sqlite3
import time
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

from app.core import settings
from app.core.authority.state import STORED_SETTINGS, ControlState, stored_state, strictest
from app.core.channel.protocol import (
    DECIDE_AGAIN,
    Ack,
    BadValue,
    Begin,
    ClientName,
    End,
    Finish,
    Progress,
    Request,
    Started,
    whole,
)
from app.core.commands.tray_link import Decision, LinkRefused, TrayLink
from app.core.errors import CoworkError
from app.core.journal.opening import GONE, DamageWatch
from app.core.journal.refusals import RefusalBudget
from app.core.journal.store import CommandRecord, Journal, Outcome, Status, preview, repairing
from app.core.messages import (
    AGENT_STOP_BY,
    HOLDS_FULL_MESSAGE,
    HOLDS_FULL_REASON,
    NO_TRAY_MESSAGE,
    PAUSED_MESSAGE,
    ROW_LOST,
)
from app.core.policy.approval import ApprovalMode, approval_mode, approval_window_s

log = logging.getLogger(__name__)


class NotRecorded(Exception):
    """The row could not be written (the tray refused or is gone): the command must not run."""


class SettingsChanged(Exception):
    """The tray wrote no row: the user tightened a setting after the command was judged under the
    older one (its push was still on its way). The command must not run as judged."""


class _Told(enum.Enum):
    """`pauses` left to the authority (TOLD_NOW)."""

    NOW = "now"


# A row's or start's `pauses` not named by its caller: the tray's count as this server knows it as it
# sends (a decision made before a pause whose push is still on its way is still refused).
TOLD_NOW = _Told.NOW


class ServerAuthority:
    def __init__(self, journal: Journal, link: TrayLink | None, *, headless: bool) -> None:
        self.journal = journal
        self.link = link
        self.headless = headless
        self._own_row: int | None = None  # this server's row, made again after it vanished
        self._last_row = 0  # the highest command id this server wrote itself
        self._damage = DamageWatch(journal.path)
        self._pauses_read: tuple[tuple[int, int], int] | None = None  # (journal's versions, its pause count)
        self._refusals = RefusalBudget("this server")  # the refused calls it writes itself (no tray)
        self._unwritten_ends: dict[int, Outcome] = {}  # ends the file refused (a full disk): written later
        self._client: tuple[str | None, str | None] | None = None  # the client's name, for a row made again

    @property
    def tethered(self) -> bool:
        """Bound to a tray for life (even if it is away right now)."""
        return self.link is not None and self.link.bound

    def _live_link(self) -> TrayLink | None:
        link = self.link
        return link if link is not None and link.connected else None

    # -- what the user allows now -------------------------------------------------------------

    def refusal(self) -> str | None:
        """Why no command may run now (paused, no tray), or None."""
        self.flush()
        link = self._live_link()
        if link is not None:
            return PAUSED_MESSAGE if link.state is None or link.state.paused else None
        if self.tethered or not self.headless:
            return self.absence_message()
        return PAUSED_MESSAGE if self.journal.is_paused() else None

    def absence_message(self) -> str:
        link = self.link
        if link is not None and link.refusal:
            return f"{NO_TRAY_MESSAGE} (A program that is not Cowork Terminal answered instead: {link.refusal}.)"
        return NO_TRAY_MESSAGE

    def paused(self) -> bool:
        link = self._live_link()
        if link is not None:
            return link.state is None or link.state.paused
        if self.tethered:
            return True  # the tray went away: nothing runs until it is back
        return self.journal.is_paused()

    def pauses(self) -> int:
        """How many pauses the tray has said so far, or headless with no tray the journal has seen
        begin: a command judged or held before the last one never starts, even when it was resumed
        meanwhile or the user had answered it (what was allowed before a pause does not run after it)."""
        link = self.link
        if self.tethered or not self.headless:
            return 0 if link is None else link.pauses
        # Read again only when something wrote the journal or the pause file since (data_version).
        seen = (self.journal.data_version(), self.journal.own_changes())
        if self._pauses_read is None or self._pauses_read[0] != seen:
            self._pauses_read = (seen, self.journal.pause_count())
        return self._pauses_read[1]

    def tray_pauses(self) -> int | None:
        """The tray's own count of its pauses as it last said (None: not said since this server bound
        to it, or no tray): a decision names it to the tray (`begin`, `started`), which refuses one
        made before a pause it has made since, even when it has resumed meanwhile."""
        link = self._live_link()
        return None if link is None else link.tray_pauses

    def present(self) -> bool:
        """Whether someone can answer a held command: a live tray."""
        return self._live_link() is not None

    def approval_mode(self) -> ApprovalMode:
        link = self._live_link()
        if link is not None and link.state is not None:
            return ApprovalMode(link.state.approval_mode)
        if self.tethered:
            return ApprovalMode.ALL
        return approval_mode(self.journal)

    def contained(self) -> bool:
        """Whether commands run in the OS container: off only after the user's click in the app."""
        link = self._live_link()
        if link is not None and link.state is not None:
            return link.state.container
        if self.tethered:
            return True
        return self.journal.get_setting(settings.CONTAINER, True) is not False

    def settings(self) -> dict[str, Any] | None:
        """The user's settings as its tray last pushed them (None headless): a command's row names
        those it was judged under (`begin`'s `under`)."""
        link = self._live_link()
        return None if link is None or link.state is None else link.state.to_wire()

    def approval_window_s(self) -> float:
        link = self._live_link()
        if link is not None and link.state is not None:
            return link.state.approval_window_s
        return approval_window_s(self.journal)

    def version(self) -> int:
        """Changes whenever something that controls commands may have changed."""
        if self.tethered:
            assert self.link is not None
            return self.link.version
        return self.journal.data_version()

    def stop_requests(self, command_ids: Sequence[int]) -> set[int]:
        if self.tethered:
            assert self.link is not None
            return self.link.stops.intersection(command_ids)
        return self.journal.stop_requests(list(command_ids))

    def stops_by_agents(self, command_ids: Sequence[int]) -> set[int]:
        """Of `command_ids`, those another agent asked to stop (its command_stop), not the person:
        their owner tells and records them so, never as the user's Stop or Deny."""
        if self.tethered:
            assert self.link is not None
            authors = self.link.stop_authors
            return {command_id for command_id in command_ids if authors.get(command_id) == AGENT_STOP_BY}
        return self.journal.stops_by_agents(list(command_ids))

    def request_stop(self, command_id: int) -> None:
        """Stop a command another server runs (its agent's command_stop; a tightening: anyone may
        ask); its tray passes it on, or, headless, the journal carries it to the server that polls
        it. Either way its owner is told another agent asked (the tray knows it from the asker)."""
        link = self._live_link()
        if link is not None:  # sent without waiting (a tray that cannot take it is going: its servers stop all)
            link.post(Request("stop", {"id": command_id}))
            return
        if not self.tethered:
            self.journal.request_stop(command_id, by=AGENT_STOP_BY)

    def hold_expiry(self, command_id: int, unseen: float) -> float:
        """When a held command runs out: HOLD_LIFETIME_S from when the user could see it, as its tray
        said; `unseen` until then (nothing expires unseen)."""
        link = self.link
        return unseen if link is None else link.hold_clocks.get(command_id, unseen)

    def hold_seen(self, command_id: int) -> bool:
        return self.link is not None and command_id in self.link.hold_clocks

    def decision(self, command_id: int) -> Decision | None:
        link = self.link
        return None if link is None else link.decisions.get(command_id)

    def forget(self, command_id: int) -> None:
        """A command's hold or run ended: what its tray said about the id (an answer, a hold's clock,
        a Stop) goes, so that none of it reaches a later command that reuses the id (ids start again
        after the history is cleared: a review, 2026-12-05)."""
        link = self.link
        if link is not None:
            link.decisions.pop(command_id, None)
            link.hold_clocks.pop(command_id, None)
            link.stops.discard(command_id)
            link.stop_authors.pop(command_id, None)

    # -- the record ---------------------------------------------------------------------------

    async def begin(
        self, *, under: dict[str, Any] | None = None, pauses: int | None | _Told = TOLD_NOW, **row: Any
    ) -> int:
        """Write the command's row before it starts; NotRecorded when the tray would not (paused, or
        paused since `tray_pauses()` said `pauses`), and SettingsChanged when the user tightened a
        setting since `settings()` said `under`. The event loop serves other calls while the tray
        writes it (up to ACK_TIMEOUT_S)."""
        link = self._link_for_row(row)
        if link is None:
            self._refuse_if_paused(row)
            if row.get("status") is Status.REFUSED and not self._refusals.allows(time.monotonic()):
                return 0  # refused all the same, counted in the log (journal/refusals.py)
            return self._write_row(row)
        try:
            named = link.tray_pauses if pauses is TOLD_NOW else pauses
            reply = await link.request_async(Begin.of_row(row, under, named))
        except (LinkRefused, BadValue) as refused:
            return self._row_refused(row, refused)
        if reply.fields.get(DECIDE_AGAIN) is True:
            raise SettingsChanged
        return _row_id(reply)

    def _refuse_if_paused(self, row: dict[str, Any]) -> None:
        """Headless with no tray: a command the journal's pause came for while it was judged is
        recorded as refused, and NotRecorded (a pause and a resume meanwhile: admission compares
        `pauses()`, the journal's count, before the row)."""
        active = (row.get("status") or Status.RUNNING) in (Status.RUNNING, Status.WAITING)
        if not active or not self.journal.is_paused():
            return
        refused = {key: value for key, value in row.items() if key not in ("confirmation_id", "hold_expires_at")}
        with suppress(sqlite3.Error, CoworkError):  # a full disk: the pause is still what the model is told
            self._write_row({**refused, "status": Status.REFUSED, "reason": PAUSED_MESSAGE})
        raise NotRecorded(PAUSED_MESSAGE)

    def _link_for_row(self, row: dict[str, Any]) -> TrayLink | None:
        """The link that writes this row, or None when this server writes it itself (headless with
        no tray, or a refusal's record); NotRecorded when nobody may write it."""
        link = self._live_link()
        if link is None and (self.tethered or not self.headless) and row.get("status") is not Status.REFUSED:
            raise NotRecorded(self.absence_message())
        return link

    def _row_refused(self, row: dict[str, Any], refused: Exception) -> int:
        if row.get("status") is Status.REFUSED:  # a refusal is a record, not a control: keep it
            return self._write_row(row)
        raise NotRecorded(_refusal_text(str(refused))) from None

    def _write_row(self, row: dict[str, Any]) -> int:
        """A row this server writes itself (headless, no tray). Its server's row may have vanished
        (another program deleted it): it is made again, once, and the command goes on."""
        row = _journal_row(row)
        if not self.tethered:  # bound to a tray (or its runner in the tray): the hub repairs the file
            self._repair_damage(row)
        if self._own_row is not None:
            row = {**row, "server_id": self._own_row}
        try:
            self._last_row = self.journal.begin_command(**row)
        except sqlite3.IntegrityError:
            server_id = row.get("server_id")
            if server_id is None or self.journal.live_server_pid(server_id) is not None:
                raise
            self._register_again()
            log.warning("this server's journal row %s vanished: registered again as %s", server_id, self._own_row)
            self._last_row = self.journal.begin_command(**{**row, "server_id": self._own_row})
        self._write_ends()  # the file takes writes again: the ends it refused go in now
        return self._last_row

    def _register_again(self) -> None:
        """This server's row, made again (it vanished, or the journal was started anew)."""
        lock_key = self.link.lock_key if self.link is not None else None
        self._own_row = self.journal.register_server(os.getpid(), headless=self.headless, lock_key=lock_key)
        if self.link is not None:
            self.link.server_id = self._own_row
        if self._client is not None:
            with suppress(sqlite3.Error, CoworkError):  # a name for the record only
                self.journal.set_server_client(self._own_row, *self._client)

    def _repair_damage(self, row: dict[str, Any]) -> None:
        """A journal overwritten in place under this server (same file, garbage pages) is read from
        this connection's cache and would take our rows unnoticed: a fresh connection looks first
        (0.2 ms median here), unless nothing wrote the file since it last read whole. Found
        damaged, it is moved aside whole for a new one (the user is told) and this command is
        refused, so the next one is judged by the new journal's settings. Its refusal is the new
        journal's first row, numbered after every id known of the old one: a job id the model
        holds, or a job still running here, never names a new command."""
        damage = self._damage.damage(self.journal.opened_as)  # one stat while the file is as it was
        if damage is None:
            return
        last = self._last_row
        with suppress(sqlite3.Error):  # what this connection still has of the old file, if it reads
            last = max(last, self.journal.last_command_id())
        if damage == GONE:
            told = self._follow_new_journal(last)
        else:
            log.warning("the journal at %s is damaged (%s): moving it aside", self.journal.path, damage)
            try:
                self.journal.reopen()
            except (CoworkError, sqlite3.Error) as exc:
                raise NotRecorded(
                    _refusal_text(f"its activity log is damaged ({damage}) and no new one could be started ({exc})")
                ) from None
            replaced = self.journal.replaced
            told = (
                replaced.message
                if replaced is not None
                else f"The activity journal was damaged ({damage}), so a new one was started."
            )
        refused = {key: value for key, value in row.items() if key not in ("confirmation_id", "hold_expires_at")}
        refused.update(server_id=None, status=Status.REFUSED, reason=f"not run: {told}")
        with suppress(sqlite3.Error, CoworkError):
            self._last_row = self.journal.begin_command(
                **refused, command_id=max(last, self.journal.last_command_id()) + 1
            )
        raise NotRecorded(
            f"Cowork Terminal could not record this command, so it was not run. {told} Run the command again."
        )

    def _follow_new_journal(self, last: int) -> str:
        """The journal was deleted (or another file put in its place) under this server, which went
        on writing into the deleted file and reading its settings there: nobody saw its commands,
        and a tightening the person made meanwhile (into a new journal) never reached it (a red
        team, 2026-12-06). It opens the file at the path now, a new one when there is none, whose
        ids go on above `last`; the settings it obeyed are written into it where stricter (a
        deleted file loosens nothing, as the tray writes its memory back), it registers again, and
        the rows of its commands still running go with it (their ends update them; the log shows
        them). Returns what the model is told; NotRecorded when no journal could be opened."""
        path = self.journal.path
        log.warning("the journal at %s was deleted or replaced: opening the one there now", path)
        before: ControlState | None = None
        running: list[CommandRecord] = []
        mine = self._own_row if self._own_row is not None else self.link.server_id if self.link is not None else None
        with suppress(sqlite3.Error, CoworkError):  # a deleted file still reads through its connection
            before = stored_state(self.journal.get_setting, self.journal.is_paused())
            running = [row for row in self.journal.active_commands() if mine is not None and row.server_id == mine]
        try:
            # One at a time with the tray and the other servers (a review): one that saw the file gone
            # must not remove the side files of the journal another has just made.
            with repairing(self.journal.paths):
                if not path.exists():  # deleted: SQLite would replay the old file's write-ahead log into a new one
                    for suffix in ("-wal", "-shm"):
                        with suppress(OSError):
                            Path(f"{path}{suffix}").unlink()
                self.journal.reopen()
        except (CoworkError, sqlite3.Error) as exc:
            raise NotRecorded(
                _refusal_text(f"its activity log was deleted and no new one could be started ({exc})")
            ) from None
        self._pauses_read = None  # another file: its pause count is read anew
        self.journal.go_on_above(last)
        if before is not None:
            with suppress(sqlite3.Error, CoworkError):  # a full disk: the refusal below says what it can
                _write_stricter(self.journal, before)
        with suppress(sqlite3.Error, CoworkError):
            self._register_again()
            for record in running:
                self.journal.write_back(dataclasses.replace(record, server_id=self._own_row))
        return "The activity journal was deleted or replaced, so a new one was started."

    async def started(self, command_id: int, pauses: int | None | _Told = TOLD_NOW) -> None:
        """A held command the user allowed starts now: the tray records it (and refuses while paused,
        or when it paused since `tray_pauses()` said `pauses`, as the hold was made); the event loop
        serves other calls meanwhile."""
        link = self._live_link()
        if link is None:
            if self.tethered:
                raise NotRecorded(self.absence_message())
            if not self.journal.mark_started(command_id):  # its row is gone: it never runs unrecorded
                raise NotRecorded(_refusal_text(ROW_LOST))
            return
        try:
            await link.request_async(Started(command_id, link.tray_pauses if pauses is TOLD_NOW else pauses))
        except LinkRefused as refused:
            raise NotRecorded(_refusal_text(str(refused))) from None

    def progress(self, command_id: int, stdout: bytes, stderr: bytes, stdout_bytes: int, stderr_bytes: int) -> None:
        """A running command's output so far, for the live log: sent without waiting; a headless
        server with no tray writes it itself. Losing one is harmless: the next, or the end, follows."""
        link = self._live_link()
        if link is not None:
            link.post(Progress(command_id, preview(stdout), preview(stderr), stdout_bytes, stderr_bytes))
        elif not self.tethered and self.headless:
            try:
                self.journal.set_live_output(command_id, stdout, stderr, stdout_bytes, stderr_bytes)
            except CoworkError as problem:  # a full disk: raised, it would end the watch for pause and Stop
                log.debug("a running command's output so far was not recorded: %s", problem)

    def finish(self, command_id: int, outcome: Outcome) -> None:
        """The end of a command, sent to the tray without waiting (the model's result need not wait
        for the record of it); an end the tray does not take is written here, so the record stays."""
        self.flush()
        link = self._live_link()
        if link is not None and link.post(Finish(command_id, outcome)):
            return
        self._unwritten_ends[command_id] = outcome
        self._write_ends()

    def flush(self) -> None:
        """Write the ends the tray did not acknowledge (it refused them, or went away)."""
        if self.link is None:
            return
        taken = [message for message in self.link.take_undelivered() if isinstance(message, Finish)]
        for message in taken:
            self._unwritten_ends[message.id] = message.outcome
        if taken:
            self._write_ends()

    def _write_ends(self) -> None:
        """Write the ends kept so far, oldest first, until the file refuses one: a full disk, or a
        lock held past the busy timeout. What it refuses stays here, written at the next write that
        succeeds (a row, another end) or as the server leaves; before, an end written on a full
        disk was dropped, and its row said `interrupted` once the server left (a red team, 2026-12-06)."""
        while self._unwritten_ends:
            command_id, outcome = next(iter(self._unwritten_ends.items()))
            try:
                self.journal.finish_command(command_id, outcome)
            except sqlite3.OperationalError as problem:  # DataFolderError is one: the command still ran
                log.warning(
                    "command #%s ended (%s) but the journal could not record it yet (kept for the next write): %s",
                    command_id,
                    outcome.status.value,
                    problem,
                )
                return
            del self._unwritten_ends[command_id]

    def set_client(self, server_id: int | None, name: str | None, version: str | None) -> None:
        self._client = (name, version)
        link = self._live_link()
        if link is not None and link.post(ClientName(name, version)):  # a name for the record: no wait
            return
        server_id = self._own_row or server_id
        if server_id is not None and not self.tethered:
            self.journal.set_server_client(server_id, name, version)

    def end(self, server_id: int | None) -> None:
        """The server leaves: after every end it sent (the tray takes them in order)."""
        self.flush()
        link = self._live_link()
        if link is not None:
            try:
                link.request(End())
                self.flush()  # an end the tray refused just before
                return
            except LinkRefused:
                self.flush()
        self._write_ends()  # before end_server, which marks what it still runs interrupted
        for command_id in self._unwritten_ends:  # the file still refuses them
            log.warning("the end of command %s could not be recorded", command_id)
        server_id = self._own_row or server_id
        if server_id is not None:
            self.journal.end_server(server_id)


def _write_stricter(journal: Journal, before: ControlState) -> None:
    """Write into `journal` each setting that `before` holds stricter than it does: a journal started
    anew (or put in place) tightens what a server obeyed, never loosens it."""
    now = stored_state(journal.get_setting, journal.is_paused())
    merged = strictest(now, before)
    if merged.paused and not now.paused:
        journal.set_paused(True)
    for field, key in STORED_SETTINGS:
        if getattr(merged, field) != getattr(now, field):
            journal.set_setting(key, getattr(merged, field))


def _journal_row(row: dict[str, Any]) -> dict[str, Any]:
    """A row for the journal itself: what pins a held command, and whether a rule may answer it, go
    only to the tray."""
    return {key: value for key, value in row.items() if key not in ("pin", "unprotected")}


def _row_id(reply: Ack) -> int:
    try:  # 0: a refused call the tray did not write one by one (journal/refusals.py)
        return whole(reply.fields.get("id"), "id", 0)
    except BadValue as bad:  # not a row id: the row cannot be said to be written
        raise NotRecorded(_refusal_text(str(bad))) from None


def _refusal_text(reason: str) -> str:
    if reason == "host access is paused":
        return PAUSED_MESSAGE
    if reason.endswith(HOLDS_FULL_REASON.split("}", 1)[1]):  # recorded as refused by the tray
        return HOLDS_FULL_MESSAGE.format(reason=reason)
    reason = reason.rstrip(".")  # a DataFolderError's text is a sentence of its own
    return f"Cowork Terminal could not record this command, so it was not run: {reason}. Try again in a moment."
