"""What the tray watches, without any UI: live servers, crashes, first connections, refusals while paused.

The tray does not start the servers (Claude does), so "wanted versus actual" (as in ActivityWatch's
aw-qt) reads: a server whose journal row says `live` is wanted, a server whose OS lock is held is
actually alive; a crash is wanted-and-not-alive. Each poll lets the journal mark such servers
crashed (their running commands interrupted) and compares the live set with the previous poll, so
a crash is reported even when another process (the CLI, a new server) noticed it first.

Crashes are counted in a sliding window: the tray says "keeps crashing" once instead of repeating
one notice per crash forever. Everything here is plain data in, plain data out, with the clock
passed in, so tests drive it against a real journal in a temporary folder.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass

from app.core import settings
from app.core.claude.names import client_named, friendly_client_name
from app.core.data_folder import DataFolderError
from app.core.execution import orphans
from app.core.execution.output import OutputBudget, output_budget
from app.core.execution.output_files import prune_outputs
from app.core.i18n import N_, _, ngettext
from app.core.journal.store import JOURNAL_REPLACED_SETTING, CommandRecord, Journal, ServerRecord, Status
from app.core.messages import PAUSED_MESSAGE
from app.core.policy.approval import ApprovalMode, approval_mode

log = logging.getLogger(__name__)

CRASH_WINDOW_S = 600.0  # crashes older than this no longer count, nor keep the icon on "attention"
CRASH_LOOP_COUNT = 3  # this many crashes inside the window: one "keeps crashing" notice
# A server writes its journal row a moment before it takes its lock; younger ones are not probed.
REFUSAL_NOTICE_GAP_S = 30.0  # at most one "refused while paused" notice per this many seconds
KNOWN_CLIENTS_SETTING = settings.KNOWN_CLIENTS
# The client name "Check connection" introduces itself with: this app, never announced as new.
CHECK_CLIENT_NAME = "cowork-terminal-check"
EXPIRE_HOLDS_EVERY_S = 5.0  # how often the tray closes holds nobody answered in time (not every poll)
UPKEEP_EVERY_S = 3600.0  # how often the tray forgets old history and whole outputs (and at its start)
ENDED_SERVERS_LOOKUP = 200  # how many recent server rows to search for the ones that just ended
NEW_COMMANDS_LOOKUP = 500

SERVER_CRASHED = "server-crashed"
CRASH_LOOP = "crash-loop"
FIRST_CONNECTION = "first-connection"
REFUSED_WHILE_PAUSED = "refused-paused"
APPROVAL_NEEDED = "approval-needed"  # the tray also opens the approval prompt for it
JOURNAL_REPLACED = "journal-replaced"
JOURNAL_REPLACED_TOLD_SETTING = settings.JOURNAL_REPLACED_TOLD
# Where the pause switch is, by whether the tray icon has a menu (the xorg fallback has none).
PAUSE_WHERE = {True: N_("Pause host access in this icon's menu"), False: N_("Pause in the activity log window")}


@dataclass(frozen=True)
class Notice:
    """Something the user should hear about once (the tray shows it as a notification)."""

    kind: str
    title: str
    message: str


@dataclass(frozen=True)
class CrashInfo:
    server_id: int
    client_label: str
    at: float
    interrupted: int  # commands that were running in it, now marked interrupted


@dataclass(frozen=True)
class Snapshot:
    """The journal as the tray shows it, at one moment."""

    paused: bool = False
    servers: tuple[ServerRecord, ...] = ()
    running: int = 0
    waiting: int = 0  # commands held for the user's approval: undecided, not expired
    last_crash: CrashInfo | None = None  # the newest crash the user has not seen yet
    crashes_in_window: int = 0
    approval_mode: ApprovalMode = ApprovalMode.DESTRUCTIVE
    output_budget: OutputBudget = OutputBudget()
    running_rows: tuple[CommandRecord, ...] = ()  # the running commands, newest first (the menu lists long ones)


class CrashWindow:
    """Counts events inside a sliding time window."""

    def __init__(self, window_s: float = CRASH_WINDOW_S) -> None:
        self.window_s = window_s
        self._times: deque[float] = deque()

    def record(self, at: float) -> int:
        """Add one event; returns how many the window now holds."""
        self._times.append(at)
        return self.count(at)

    def count(self, now: float) -> int:
        while self._times and self._times[0] <= now - self.window_s:
            self._times.popleft()
        return len(self._times)


class Supervisor:
    """One poller over one journal connection; call `poll()` from a single thread."""

    def __init__(
        self,
        journal: Journal,
        *,
        clock: Callable[[], float] = time.time,
        crash_window_s: float = CRASH_WINDOW_S,
        version: Callable[[], object] | None = None,
        has_menu: bool = True,
    ) -> None:
        self.journal = journal
        # What says "something changed": data_version sees other connections' commits; the tray
        # writes through the connection this poller shares, so it adds a count of its own writes.
        self._version = version
        self.has_menu = has_menu  # notices name only controls that exist: no menu, no "untick in the menu"
        self._clock = clock
        self._crashes = CrashWindow(crash_window_s)
        self._crash_loop_noticed_at: float | None = None
        self._known_clients: set[str] = set(journal.get_setting(KNOWN_CLIENTS_SETTING, []) or [])
        self._live_ids: set[int] | None = None  # None until the first poll: crashes before it are old news
        newest = journal.recent_commands(limit=1)
        self._last_command_id = newest[0].id if newest else 0
        self._last_refusal_notice_at: float | None = None
        self._waiting_ids: set[int] = set()
        self._refusals_unreported = 0
        self._last_crash: CrashInfo | None = None
        self._data_version: object = None
        self._next_expiry_sweep = 0.0
        self._next_upkeep = 0.0
        self._first_hold_expiry: float | None = None  # when the soonest pending hold runs out
        self._snapshot = Snapshot()

    def acknowledge(self) -> None:
        """The user looked (opened the activity log): the last crash no longer needs attention."""
        self._last_crash = None
        self._snapshot = _replace_crash(self._snapshot, None, self._snapshot.crashes_in_window)

    def poll(self) -> tuple[Snapshot, list[Notice]]:
        """Read what changed since the last poll; cheap when nothing did (a version check and a
        lock probe per live server)."""
        now = self._clock()
        dead = self.journal.recover_dead_servers()
        if self._live_ids is None:  # servers may have died while no tray watched
            self._end_orphans()
        if now >= self._next_upkeep:
            self._next_upkeep = now + UPKEEP_EVERY_S
            self._upkeep(now)
        expired = 0
        if now >= self._next_expiry_sweep:
            self._next_expiry_sweep = now + EXPIRE_HOLDS_EVERY_S
            expired = self.journal.expire_holds(now)  # our own write: data_version does not show it
        version = self._version() if self._version is not None else self.journal.data_version()
        hold_ran_out = self._first_hold_expiry is not None and now >= self._first_hold_expiry
        notices: list[Notice] = []
        if dead or expired or hold_ran_out or version != self._data_version or self._live_ids is None:
            self._data_version = version
            servers = tuple(self.journal.servers(live_only=True))
            notices += self._ended_servers(servers, now)
            notices += self._first_connections(servers)
            self._count_new_refusals()
            active = self.journal.active_commands()
            # Only holds the user can still answer: not the decided ones the model never came back
            # for (terminal_confirm), nor the expired ones.
            pending = self.journal.pending_approvals(now)
            self._first_hold_expiry = min((c.hold_expires_at or now for c in pending), default=None)
            notices += self._new_approvals(pending)
            notices += self._journal_replaced()
            self._snapshot = Snapshot(
                paused=self.journal.is_paused(),
                servers=servers,
                running=sum(1 for c in active if c.status is Status.RUNNING),
                running_rows=tuple(c for c in active if c.status is Status.RUNNING),
                waiting=len(pending),
                approval_mode=approval_mode(self.journal),
                output_budget=output_budget(self.journal, environ={}),  # the setting, as the menu sets it
            )
        notices += self._pending_refusal_notice(now)
        if self._last_crash is not None and now - self._last_crash.at >= self._crashes.window_s:
            self._last_crash = None  # old enough to stop asking for attention
        self._snapshot = _replace_crash(self._snapshot, self._last_crash, self._crashes.count(now))
        return self._snapshot, notices

    # -- the parts of a poll ----------------------------------------------------------------

    def _upkeep(self, now: float) -> None:
        """Retention of the journal's history and of the whole outputs' files. While a tray runs it
        alone writes the journal, so servers leave this to it; it may delete thousands of rows, which
        holds the servers' rows for a moment (see docs/benchmarks.md), once an hour."""
        try:
            self.journal.apply_retention(now=now)
        except DataFolderError as problem:  # a full disk: the next hour tries again
            log.warning("retention skipped: %s", problem)
        prune_outputs(self.journal.paths.outputs, now=now)

    def _end_orphans(self) -> None:
        """End what a crashed server was running (see core/execution/orphans)."""
        orphans.end_orphans(self.journal.paths, self.journal.was_left_running)

    def _ended_servers(self, servers: tuple[ServerRecord, ...], now: float) -> list[Notice]:
        live_ids = {s.id for s in servers}
        previous, self._live_ids = self._live_ids, live_ids
        gone = sorted((previous or set()) - live_ids)
        if not gone:
            return []
        ended = {s.id: s for s in self.journal.servers(live_only=False, limit=ENDED_SERVERS_LOOKUP)}
        crashed = [i for i in gone if i in ended and ended[i].state == "crashed"]
        if not crashed:
            return []  # they exited normally (their client closed them), or were already forgotten
        self._end_orphans()  # whoever noticed the crash first
        recent = self.journal.recent_commands(statuses=[Status.INTERRUPTED.value], limit=1000)
        interrupted = Counter(c.server_id for c in recent)
        notices: list[Notice] = []
        for server_id in crashed:
            crash = CrashInfo(server_id, ended[server_id].client_label, now, interrupted[server_id])
            self._last_crash = crash
            count = self._crashes.record(now)
            message = [_("The server used by {client} stopped unexpectedly.").format(client=crash.client_label)]
            if crash.interrupted:
                message.append(
                    ngettext(
                        "{count} running command was interrupted.",
                        "{count} running commands were interrupted.",
                        crash.interrupted,
                    ).format(count=crash.interrupted)
                )
            message.append(_("Claude starts a new one when it next needs it."))
            notices.append(Notice(SERVER_CRASHED, _("Cowork Terminal server crashed"), " ".join(message)))
            loop_noticed = self._crash_loop_noticed_at
            if count >= CRASH_LOOP_COUNT and (loop_noticed is None or now - loop_noticed >= self._crashes.window_s):
                self._crash_loop_noticed_at = now
                minutes = round(self._crashes.window_s / 60)
                stopped = ngettext(
                    "{count} servers stopped unexpectedly in the last {minutes} minute.",
                    "{count} servers stopped unexpectedly in the last {minutes} minutes.",
                    minutes,
                ).format(count=count, minutes=minutes)
                where = _("The app log (in {folder}) and the activity log show what they ran.").format(
                    folder=self.journal.paths.log_dir
                )
                notices.append(Notice(CRASH_LOOP, _("Cowork Terminal servers keep crashing"), f"{stopped} {where}"))
        return notices

    def _first_connections(self, servers: tuple[ServerRecord, ...]) -> list[Notice]:
        new = sorted(
            {
                s.client_name
                for s in servers
                if s.client_name and s.client_name != CHECK_CLIENT_NAME and s.client_name not in self._known_clients
            }
        )
        if not new:
            return []
        self._known_clients.update(new)
        self.journal.set_setting(KNOWN_CLIENTS_SETTING, sorted(self._known_clients))
        labels = {s.client_name: s.client_label for s in servers}
        return [
            Notice(
                FIRST_CONNECTION,
                _("{client} connected to Cowork Terminal").format(client=friendly_client_name(name)),
                _(
                    "{client} connected for the first time. Everything it runs on this computer "
                    "shows in the activity log, and {where} stops it at any time."
                ).format(client=client_named(name, labels[name]), where=_(PAUSE_WHERE[self.has_menu])),
            )
            for name in new
        ]

    def _journal_replaced(self) -> list[Notice]:
        """A damaged journal was moved aside (by whichever process opened it first): told once."""
        replaced = self.journal.get_setting(JOURNAL_REPLACED_SETTING)
        told_at = self.journal.get_setting(JOURNAL_REPLACED_TOLD_SETTING)
        if not isinstance(replaced, dict) or replaced.get("at") == told_at:
            return []
        self.journal.set_setting(JOURNAL_REPLACED_TOLD_SETTING, replaced.get("at"))
        return [
            Notice(
                JOURNAL_REPLACED,
                _("Cowork Terminal started a new activity journal"),
                _("The old one was damaged ({reason}). It was kept as {path}; nothing was deleted.").format(
                    reason=replaced.get("reason"), path=replaced.get("moved_to")
                ),
            )
        ]

    def _new_approvals(self, waiting: list[CommandRecord]) -> list[Notice]:
        """One notice per command newly held for the user's answer."""
        ids = {c.id for c in waiting}
        new = [c for c in waiting if c.id not in self._waiting_ids]
        self._waiting_ids = ids
        return [
            Notice(
                APPROVAL_NEEDED,
                _("A command is waiting for your approval"),
                _("{client} wants to run: {command}").format(
                    client=friendly_client_name(c.client_name), command=c.command[:120]
                ),
            )
            for c in sorted(new, key=lambda c: c.id)
        ]

    def _count_new_refusals(self) -> None:
        new = self.journal.recent_commands(after_id=self._last_command_id, limit=NEW_COMMANDS_LOOKUP)
        if new:
            self._last_command_id = max(c.id for c in new)
        self._refusals_unreported += sum(1 for c in new if c.status is Status.REFUSED and c.reason == PAUSED_MESSAGE)

    def _pending_refusal_notice(self, now: float) -> list[Notice]:
        """Refusals are told at most once per REFUSAL_NOTICE_GAP_S, with how many there were."""
        if not self._refusals_unreported:
            return []
        last = self._last_refusal_notice_at
        if last is not None and now - last < REFUSAL_NOTICE_GAP_S:
            return []
        count, self._refusals_unreported = self._refusals_unreported, 0
        self._last_refusal_notice_at = now
        refused = ngettext(
            "Cowork Terminal refused {count} command from Claude because host access is paused.",
            "Cowork Terminal refused {count} commands from Claude because host access is paused.",
            count,
        ).format(count=count)
        how = _("Turn off {where} to let it run commands again.").format(where=_(PAUSE_WHERE[self.has_menu]))
        return [Notice(REFUSED_WHILE_PAUSED, _("Host access is paused"), f"{refused} {how}")]


def _replace_crash(snapshot: Snapshot, crash: CrashInfo | None, count: int) -> Snapshot:
    return dataclasses.replace(snapshot, last_crash=crash, crashes_in_window=count)
