"""What servers send the hub: their commands' rows, written before a command runs.

A server starts a command only after the hub acknowledged its `begin`: the row is written, the
pause checked and, for a command that waits for the user, a hold made from the server's own words.
Each handler gets the hub, the peer and the message (decoded and checked at the edge:
core/channel/protocol.py), and returns the fields of the ack.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
import weakref
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

from app.core.authority.connection import Peer
from app.core.authority.errors import RequestError
from app.core.authority.holds import MAX_HOLDS_PER_PEER, HeldCommand, Holds
from app.core.authority.record import Record
from app.core.authority.state import ControlState, loosened
from app.core.channel.call_messages import Call, CallCancel
from app.core.channel.protocol import DECIDE_AGAIN, Begin, BeginRow, ClientName, End, Finish, Progress, Started
from app.core.i18n import _
from app.core.journal.refusals import RefusalBudget
from app.core.journal.store import Status
from app.core.messages import HOLDS_FULL_REASON, PAUSED_MESSAGE
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
    def on_holds(self) -> None: ...
    def on_change(self) -> None: ...


log = logging.getLogger(__name__)

LIVE_OUTPUT_MAX_CHARS = 32 * 1024  # per stream: the journal keeps a preview, not the whole output


# English: a server reads it (one of ours never gets it: it forwards its calls to a tray that runs them).
RUNS_ITS_OWN = (
    "refused: this Cowork Terminal app decides about and runs every command of its servers itself; "
    "send the tool call to it"
)


_refusals: weakref.WeakKeyDictionary[Peer, RefusalBudget] = weakref.WeakKeyDictionary()


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
        hub.record.journal.mark_started(command_id)
        hub.record.wrote()
        peer.waiting.discard(command_id)
        hub.started_outside(peer, command_id)
    return {}


def finish(hub: RowsHub, peer: Peer, message: Finish) -> dict[str, Any]:
    command_id = _owned(peer, message.id)
    outcome = message.outcome
    with hub.lock:
        hub.record.finish(command_id, outcome)
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


SERVER_OPS: dict[str, Callable[[RowsHub, Peer, Any], dict[str, Any]]] = {
    "call": call,
    "call_cancel": call_cancel,
    "begin": begin,
    "started": started,
    "finish": finish,
    "progress": progress,
    "client": client,
    "end": end,
}
