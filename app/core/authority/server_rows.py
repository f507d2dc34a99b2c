"""What servers send the hub: their commands' rows, written before a command runs.

A server starts a command only after the hub acknowledged its `begin`: the row is written, the
pause checked and, for a command that waits for the user, a hold made from the server's own words.
Each handler gets the hub, the peer and the message (decoded and checked at the edge:
core/channel/protocol.py), and returns the fields of the ack.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import sqlite3
import time
import weakref
from collections.abc import Callable, Collection
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

from app.core.authority.connection import Peer
from app.core.authority.errors import RequestError
from app.core.authority.holds import MAX_HOLDS_PER_PEER, HeldCommand, Holds
from app.core.authority.record import Record
from app.core.authority.state import ControlState, loosened
from app.core.channel.call_messages import Call, CallCancel
from app.core.channel.protocol import (
    DECIDE_AGAIN,
    Begin,
    BeginRow,
    ClientName,
    End,
    Finish,
    Progress,
    ServerStop,
    Started,
)
from app.core.i18n import _
from app.core.journal.refusals import RefusalBudget
from app.core.journal.store import CommandRecord, Outcome, Status
from app.core.messages import AGENT_STOP_BY, HOLDS_FULL_REASON, PAUSED_MESSAGE, ROW_LOST
from app.core.policy.approval import HOLD_UNSEEN_MAX_S

if TYPE_CHECKING:  # anyio loads with the command host, not with the tray's first import
    from app.core.authority.command_host import CommandHost


class RowsHub(Protocol):
    """What a server's rows reach of the hub: the record and the holds under its lock, and its callbacks."""

    @property
    def lock(self) -> AbstractContextManager[Any]: ...
    @property
    def record(self) -> Record: ...
    @property
    def state(self) -> ControlState: ...
    @property
    def holds(self) -> Holds: ...
    @property
    def command_host(self) -> CommandHost | None: ...
    def register(self, peer: Peer) -> int: ...
    def paused_since(self, peer: Peer, pauses: int | None) -> bool: ...
    def started_outside(self, peer: Peer, command_id: int) -> None: ...
    def highest_known_id(self) -> int: ...
    def held_arrived(self, hold: HeldCommand) -> None: ...
    def renew_journal_if_gone(self) -> bool: ...
    def stop(self, command_id: int | None, by: str = ...) -> str: ...
    def on_holds(self) -> None: ...
    def on_change(self) -> None: ...


log = logging.getLogger(__name__)

LIVE_OUTPUT_MAX_CHARS = 32 * 1024  # per stream: the journal keeps a preview, not the whole output


# English: a server reads it (one of ours never gets it: it forwards its calls to a tray that runs them).
RUNS_ITS_OWN = (
    "refused: this Cowork Terminal app decides about and runs every command of its servers itself; "
    "send the tool call to it"
)


# English: the model reads it when a command's row cannot be found or written again as it starts.

_refusals: weakref.WeakKeyDictionary[Peer, RefusalBudget] = weakref.WeakKeyDictionary()
# Each server's commands that run or wait, as their rows were written (and then started or
# answered): a journal deleted, replaced or damaged under them gets these rows back (`write_back`).
_kept: weakref.WeakKeyDictionary[Peer, dict[int, CommandRecord]] = weakref.WeakKeyDictionary()


@dataclasses.dataclass(frozen=True)
class _Ended:
    """A command that ended while the journal refused its end: its row as kept, its end, its server."""

    peer: weakref.ref[Peer]
    row: CommandRecord
    outcome: Outcome


@dataclasses.dataclass
class _EndedRows:
    """The commands whose end a hub's record keeps (`Record.unwritten_ends`: a full disk, a lock), with
    their rows, by id; and when the file last refused one of these rows (monotonic)."""

    rows: dict[int, _Ended] = dataclasses.field(default_factory=dict)
    refused_at: float = -math.inf


# By the hub's record. A journal renewed before an end went in gets the row back, with its end
# (`write_back_ended`): the record's end alone updates a row the new file does not have (a review:
# the command had no row at all).
_ended: weakref.WeakKeyDictionary[Record, _EndedRows] = weakref.WeakKeyDictionary()


def _may_record_refusal(peer: Peer, now: float) -> bool:
    """Whether one more refused call of `peer` is written (under the hub's lock): journal/refusals.py."""
    budget = _refusals.get(peer)
    if budget is None:
        budget = _refusals[peer] = RefusalBudget(peer.label)
    return budget.allows(now)


def begin(hub: RowsHub, peer: Peer, message: Begin) -> dict[str, Any]:
    row = message.row
    status = row.status
    if status.is_active and hub.command_host is not None and peer.facts.pid != os.getpid():
        # Only the tray's own runners run or hold commands: a server that runs one itself (patched to
        # skip the tray's decision) gets no row, no hold and no Allow for it.
        raise RequestError(RUNS_ITS_OWN)
    with hub.lock:
        if status is Status.REFUSED and not _may_record_refusal(peer, time.monotonic()):
            return {"id": 0}  # refused all the same; its record's id is asked for by nobody
        # Deleted, replaced or damaged in place since the monitor's last look: the row goes into a
        # new journal, not into a file our connection only reads from its cache.
        hub.renew_journal_if_gone()
        if status in (Status.RUNNING, Status.WAITING) and (hub.state.paused or hub.paused_since(peer, message.pauses)):
            # Its server had not yet heard of the pause, or decided before a pause (and a resume) that
            # came as it judged: refused here, and shown as such in the log.
            try:
                _write_row(hub, peer, row, Status.REFUSED, PAUSED_MESSAGE, None)
            except sqlite3.Error as problem:  # a full disk: the pause is still what the model is told
                log.warning("a command refused for the pause could not be recorded: %s", problem)
            raise RequestError("host access is paused")
        under = None if message.under is None else ControlState.from_wire(dict(message.under))
        since = [] if under is None or not status.is_active else loosened(hub.state, under)
        if status is Status.RUNNING:  # how long a hold waits decides nothing of a command that runs now
            since = [change for change in since if change != "approval_window_s"]
        if since:
            # Its runner decided under settings the user has tightened since (the push is on its way
            # to it): no row; its server refuses the call, and the model's next one is judged anew.
            return {DECIDE_AGAIN: True}
        if status is Status.WAITING and hub.holds.full_for(peer):
            full = HOLDS_FULL_REASON.format(count=MAX_HOLDS_PER_PEER)
            try:  # refused here, and shown as such in the log (a red team found no row for it)
                _write_row(hub, peer, row, Status.REFUSED, full, None)
            except sqlite3.Error as problem:
                log.warning("a command refused for the holds' limit could not be recorded: %s", problem)
            raise RequestError(full)
        command_id = _write_row(hub, peer, row, status, row.reason, row.confirmation_id)
        if status.is_active:
            peer.commands.add(command_id)
            _kept.setdefault(peer, {})[command_id] = _as_written(peer, command_id, row, status)
        if status is Status.RUNNING:
            hub.started_outside(peer, command_id)
        if status is Status.WAITING:
            peer.waiting.add(command_id)
        hold = None
        if status is Status.WAITING:
            hold = HeldCommand(
                command_id, row.command, row.cwd, list(row.env_keys), row.tool, row.reason or "",
                row.client_name or _("An AI agent"), time.time() + HOLD_UNSEEN_MAX_S, row.digest(), peer,
                row.explanation, row.pin, unprotected=row.unprotected,
            )  # fmt: skip
            hub.holds.add(hold)
    if hold is not None:
        hub.held_arrived(hold)
    # Plain rows wake nobody: the tray's icon follows them at its next poll (a quarter second),
    # and waking its monitor for each row would make every call wait for the journal's lock.
    return {"id": command_id}


def _write_row(
    hub: RowsHub, peer: Peer, row: BeginRow, status: Status, reason: str | None, confirmation_id: str | None
) -> int:
    """The journal row of a command `peer` begins, as `status` (under the hub's lock)."""
    journal = hub.record.journal
    if peer.server_id is None:  # its row was not written at its hello (a full disk)
        peer.server_id = hub.register(peer)

    def write() -> int:
        return journal.begin_command(
            command=row.command, cwd=row.cwd, env_keys=list(row.env_keys), timeout_ms=row.timeout_ms,
            server_id=peer.server_id, server_pid=peer.facts.pid, client_name=row.client_name,
            client_version=row.client_version, tool=row.tool, tier=row.tier, status=status,
            reason=reason, confirmation_id=confirmation_id,
            hold_expires_at=time.time() + HOLD_UNSEEN_MAX_S if status is Status.WAITING else None,
            above=hub.highest_known_id(),  # rows another program deleted under live commands
        )  # fmt: skip

    try:
        command_id = write()
    except sqlite3.IntegrityError:  # its server's row was deleted by another program: made again
        log.warning("the row of %s vanished from the journal: registering it again", peer.label)
        peer.server_id = hub.register(peer)
        command_id = write()
    hub.record.wrote()
    return command_id


def started(hub: RowsHub, peer: Peer, message: Started) -> dict[str, Any]:
    command_id = _owned(peer, message.id)
    with hub.lock:
        if hub.state.paused or hub.paused_since(peer, message.pauses):  # a hold made before a pause never runs
            raise RequestError("host access is paused")
        hub.renew_journal_if_gone()  # deleted since the monitor's last look: the update must reach a file
        kept = _kept.get(peer, {}).get(command_id)
        running = None if kept is None else dataclasses.replace(kept, status=Status.RUNNING, started_at=time.time())
        if not hub.record.journal.mark_started(command_id):
            # Its row is gone (another program deleted it): written again from the hub's memory, or the
            # command does not run, for none may run unrecorded (red team, eleventh: an allowed
            # `rm -rf` ran with no row at all).
            log.warning("the row of command %s vanished from the journal: writing it again", command_id)
            if running is None or not _write_back_row(hub, peer, running):
                raise RequestError(ROW_LOST)
        hub.record.wrote()
        if running is not None:
            _kept[peer][command_id] = running
        peer.waiting.discard(command_id)
        hub.started_outside(peer, command_id)
    return {}


def finish(hub: RowsHub, peer: Peer, message: Finish) -> dict[str, Any]:
    command_id = _owned(peer, message.id)
    outcome = message.outcome
    with hub.lock:
        try:  # deleted since the monitor's last look: the end goes into the new file
            hub.renew_journal_if_gone()
        except sqlite3.OperationalError as exc:  # no new file yet: the record keeps the end for later
            log.warning("the journal could not be started anew for the end of command %s: %s", command_id, exc)
        kept = _kept.get(peer, {}).pop(command_id, None)
        if kept is not None:
            _restore_if_missing(hub, peer, kept)  # an end with no row to update would be lost
        hub.record.finish(command_id, outcome)
        if kept is not None and command_id in hub.record.unwritten_ends:  # refused: kept with its row
            _ended.setdefault(hub.record, _EndedRows()).rows[command_id] = _Ended(weakref.ref(peer), kept, outcome)
        peer.commands.discard(command_id)
        peer.waiting.discard(command_id)
        was_held = hub.holds.pop(command_id) is not None
    if was_held:
        hub.on_holds()
        hub.on_change()
    return {}


def progress(hub: RowsHub, peer: Peer, message: Progress) -> dict[str, Any]:
    """A running command's output so far (a server sends it at most once a second)."""
    command_id = _owned(peer, message.id)
    with hub.lock:
        hub.record.journal.set_live_output(
            command_id, message.stdout[:LIVE_OUTPUT_MAX_CHARS].encode(),
            message.stderr[:LIVE_OUTPUT_MAX_CHARS].encode(), message.stdout_bytes, message.stderr_bytes,
        )  # fmt: skip
        hub.record.wrote()
    return {}


def client(hub: RowsHub, peer: Peer, message: ClientName) -> dict[str, Any]:
    if peer.server_id is not None:
        with hub.lock:
            name = (message.name, message.version)
            hub.record.journal.set_server_client(peer.server_id, *name)
            peer.registration["client"] = name
            hub.record.wrote()
        hub.on_change()
    return {}


def end(hub: RowsHub, peer: Peer, message: End) -> dict[str, Any]:
    if peer.server_id is not None and not peer.ended:
        peer.ended = True
        with hub.lock:
            hub.record.journal.end_server(peer.server_id, state="exited")
            hub.record.wrote()
        hub.on_change()
    return {}


def _as_written(peer: Peer, command_id: int, row: BeginRow, status: Status) -> CommandRecord:
    """The row `_write_row` just wrote for an active command, kept to write it again (`write_back`)."""
    now = time.time()
    return CommandRecord(
        id=command_id, server_id=peer.server_id, server_pid=peer.facts.pid, client_name=row.client_name,
        client_version=row.client_version, tool=row.tool, command=row.command, cwd=row.cwd,
        env_keys=list(row.env_keys), timeout_ms=row.timeout_ms, tier=row.tier, status=status, reason=row.reason,
        exit_code=None, timed_out=False, created_at=now, started_at=now if status is Status.RUNNING else None,
        ended_at=None, duration_ms=None, stdout_bytes=None, stderr_bytes=None, stdout_preview=None,
        stderr_preview=None, stop_requested_at=None, confirmation_id=row.confirmation_id, decision=None,
        decided_by=None, decided_at=None,
        hold_expires_at=now + HOLD_UNSEEN_MAX_S if status is Status.WAITING else None,
    )  # fmt: skip


def decided(peer: Peer, command_id: int, *, allowed: bool, by: str, rule_id: int | None) -> None:
    """The user's (or a rule's) answer to a held command, kept with its row (under the hub's lock)."""
    kept = _kept.get(peer, {})
    if command_id in kept:
        kept[command_id] = dataclasses.replace(
            kept[command_id], decision="allowed" if allowed else "denied", decided_by=by, decided_at=time.time(),
            allowed_by_rule=rule_id if allowed else None,
        )  # fmt: skip


def write_back(hub: RowsHub, peer: Peer) -> int:
    """Write again the rows of `peer`'s commands that run or wait, under their own ids, into a journal
    started anew (Hub.reopen_journal, under the hub's lock, after the peer's own row); how many were
    written. A hold shows as waiting only while the user can still answer it in the tray."""
    written = 0
    for command_id in sorted(peer.commands):
        kept = _kept.get(peer, {}).get(command_id)
        if kept is None:
            log.warning("command %s of %s runs, but the hub kept no row of it to write again", command_id, peer.label)
            continue
        if kept.status is Status.WAITING:
            hold = hub.holds.get(command_id)
            if hold is not None:  # its clock as the user sees it (`Hub.seen` may have restarted it)
                kept = dataclasses.replace(kept, hold_expires_at=hold.expires_at)
            elif kept.decision is None:  # run out, or dropped by a pause: nobody may answer it from the file
                kept = dataclasses.replace(kept, hold_expires_at=min(kept.hold_expires_at or 0.0, time.time()))
        try:
            written += _write_back_row(hub, peer, kept)
        except sqlite3.OperationalError as exc:  # a full disk: `started` and `finish` try again
            log.warning("the row of command %s could not be written again: %s", command_id, exc)
    return written


def forget_written_ends(hub: RowsHub) -> None:
    """Forget the rows kept with ends the record has written since (into a file that had the row),
    before the journal is renewed: only those whose end never went in are written again. Under the
    hub's lock."""
    ended = _ended.get(hub.record, _EndedRows()).rows
    for command_id in [i for i in ended if i not in hub.record.unwritten_ends]:
        try:
            written = hub.record.journal.get_command(command_id) is not None
        except sqlite3.Error:  # a damaged file, kept aside whole: its end is there, as every finished row's
            written = True
        if written:
            del ended[command_id]


def write_back_ended(hub: RowsHub, live: Collection[Peer], *, retry_after_s: float = 0.0) -> int:
    """Write again, with its end, the row of each command that ended while the journal refused its end
    and that the journal does not have (renewed since, or the row deleted): the record's end alone
    updates no row (`finish_command`). Its server's row is the one in the journal while that server is
    in `live`, none otherwise. Not sooner than `retry_after_s` after the file refused one (each try
    may wait for a lock, under the hub's). How many were written; under the hub's lock
    (Hub.reopen_journal, after the servers' rows, and the monitor's upkeep, for a new file that
    refused them too)."""
    pending = _ended.get(hub.record)
    if pending is None or time.monotonic() - pending.refused_at < retry_after_s:
        return 0
    ended = pending.rows
    written = 0
    for command_id, kept in sorted(ended.items()):
        try:
            missing = hub.record.journal.get_command(command_id) is None
            if missing:
                peer = kept.peer()
                row = kept.row
                if row.status is Status.WAITING:  # ended: nobody may answer it from the file
                    row = dataclasses.replace(row, hold_expires_at=min(row.hold_expires_at or 0.0, time.time()))
                _write_back_row(hub, peer if peer is not None and peer in live else None, row)
                hub.record.finish(command_id, kept.outcome)  # kept by the record again if the file refuses it
                written += 1
        except sqlite3.OperationalError as exc:  # a full disk again: the next renewal or upkeep tries again
            log.warning("the row of command %s, which ended, could not be written again: %s", command_id, exc)
            pending.refused_at = time.monotonic()
            return written
        if command_id not in hub.record.unwritten_ends:  # its row and its end are in
            del ended[command_id]
    return written


def _write_back_row(hub: RowsHub, peer: Peer | None, kept: CommandRecord) -> bool:
    """One kept row into the journal, under the server's row in it (none when its server ended, or
    when `peer` is None)."""
    journal = hub.record.journal
    server_id = None if peer is None or peer.ended else peer.server_id
    try:
        written = journal.write_back(dataclasses.replace(kept, server_id=server_id))
    except sqlite3.IntegrityError:  # its server's row is not in this journal
        written = journal.write_back(dataclasses.replace(kept, server_id=None))
    hub.record.wrote()
    return written


def _restore_if_missing(hub: RowsHub, peer: Peer, kept: CommandRecord) -> None:
    """A command ends whose row is not in the journal (deleted by another program, or not written
    again when the journal was renewed): its row is written first, so that its end is recorded."""
    try:
        if hub.record.journal.get_command(kept.id) is None:
            log.warning("the row of command %s vanished from the journal: writing it again", kept.id)
            _write_back_row(hub, peer, kept)
    except sqlite3.OperationalError as exc:  # locked, full: its end is still kept by the record
        log.warning("the row of command %s could not be written again: %s", kept.id, exc)


def _owned(peer: Peer, command_id: int) -> int:
    if command_id not in peer.commands:
        raise RequestError(f"command {command_id!r} is not one of this server's")
    return command_id


def call(hub: RowsHub, peer: Peer, message: Call) -> dict[str, Any]:
    """A tool call to run here: accepted at once; its progress and result are pushed to the peer."""
    host = hub.command_host
    if host is None:
        raise RequestError("this Cowork Terminal app does not run tool calls; run them in the server")
    host.submit(peer, message)
    return {}


def call_cancel(hub: RowsHub, peer: Peer, message: CallCancel) -> dict[str, Any]:
    if hub.command_host is not None:
        hub.command_host.cancel(peer, message.call_id)
    return {}


def stop(hub: RowsHub, peer: Peer, message: ServerStop) -> dict[str, Any]:
    """A server asks to stop a command another server runs: its agent's command_stop (the same app's,
    as the server checked). Its owner is told another agent asked, never the user: known from who
    asks here, a server, not from anything the message says (a red team, 2026-12-06)."""
    return {"message": hub.stop(message.id, by=AGENT_STOP_BY)}


SERVER_OPS: dict[str, Callable[[RowsHub, Peer, Any], dict[str, Any]]] = {
    "call": call,
    "call_cancel": call_cancel,
    "begin": begin,
    "started": started,
    "finish": finish,
    "progress": progress,
    "client": client,
    "end": end,
    "stop": stop,
}
