"""The tray's monitor thread: poll the journal and the hub, compose what the menu shows, tell what ended.

Every POLL_S (or sooner when kicked) it lets the hub tick, ends a timed pause that ran out, lets the
Supervisor notice crashed servers, composes a `TrayState` and, when it changed, hands it to the app
to show. The hub's memory is the truth for pause, approval mode and held commands, not the file.
"""

from __future__ import annotations

import dataclasses
import logging
import sqlite3
import threading
import time
from typing import Protocol

from app import __version__
from app.core.authority.hub import Hub
from app.core.authority.supervisor import APPROVAL_NEEDED, Snapshot, Supervisor
from app.core.claude.names import friendly_client_name
from app.core.i18n import _
from app.core.journal.store import ServerRecord
from app.core.paths import AppPaths
from app.core.policy import approval
from app.ui.tray import menu
from app.ui.tray.actions import REFRESH_CLIENTS, TIMED_PAUSE_BY
from app.ui.tray.claude_watch import ClaudeWatch
from app.ui.tray.platforms import Notifier
from app.ui.tray.signals import Wakeup
from app.ui.tray.tray_state import (
    CrashView,
    HeldView,
    JobView,
    RecentView,
    RuleView,
    ServerView,
    TrayState,
    ended_jobs,
    job_notice,
    long_jobs,
)
from app.ui.tray.windows import TrayWindows
from app.ui.windows.log_model import outcome_text, status_label

log = logging.getLogger(__name__)

CLIENT_FILES_CHECK_S = 1.0  # how often Claude Desktop config files are looked at for outside edits


class LoopApp(Protocol):
    """What the monitor reaches of the tray (app.TrayApp): the hub's public reads, what the menu shows,
    and how to show it or stop."""

    hub: Hub
    paths: AppPaths
    notifier: Notifier
    claude: ClaudeWatch
    tray_windows: TrayWindows
    wakeup: Wakeup
    state: TrayState
    poll_s: float
    windows: bool
    has_menu: bool
    autostart: bool | None
    language: str | None
    problem: str | None
    confirming: str | None
    paused_until: float | None

    def submit(self, action: str, target: str | None = None) -> None: ...
    def show(self, state: TrayState) -> None: ...
    def count_tick(self) -> None: ...
    def quitting(self) -> bool: ...
    def request_quit(self) -> None: ...
    def stop_icon(self) -> None: ...


class Monitor:
    """What the "tray-monitor" thread runs (`run`), and the views of the hub it keeps for the menu."""

    def __init__(self, app: LoopApp) -> None:
        self.app = app
        self._held: tuple[HeldView, ...] = ()  # for the menu, when no approval window can open
        self._rules: tuple[RuleView, ...] = ()
        self._rules_version: object = None  # the journal as the recent-activity list last read it
        self._recent: tuple[RecentView, ...] = ()
        self._acknowledge = threading.Event()

    @property
    def hub(self) -> Hub:
        return self.app.hub

    def acknowledge_crashes(self) -> None:
        """The user opened the activity log: the crash notice in the menu has been seen (thread-safe)."""
        self._acknowledge.set()

    def run(self) -> None:
        """The thread's body: until quit, poll, publish, notify, then stop the icon."""
        app, hub = self.app, self.hub
        try:
            # The supervisor shares the hub's connection (the tray's only writer) under its lock.
            supervisor = hub.new_supervisor(has_menu=app.has_menu)
            next_files_check = 0.0
            while not app.quitting():
                try:
                    next_files_check = self._round(supervisor, next_files_check)
                except sqlite3.OperationalError as exc:
                    # Another program holds the journal's lock (a command can, through a read-only
                    # file), or the disk is full: said once; commands are refused; the next round tries.
                    hub.journal_refused(exc)
                if app.wakeup.wait(app.poll_s):
                    app.request_quit()
        except Exception:  # the top of a thread: log it, tell the user, and quit
            # Without its monitor the tray can neither show what runs nor take Quit: letting go of
            # the tray lock (by quitting) makes every server refuse commands, the safe way to fail.
            log.exception("the tray's monitor thread failed")
            app.notifier.notify(
                _("{app} stopped").format(app=menu.APP_TITLE),
                _(
                    "An internal error stopped {app}, so Claude's commands are refused until you "
                    "start it again. The app log in {folder} has the details."
                ).format(app=menu.APP_TITLE, folder=app.paths.log_dir),
            )
        app.stop_icon()

    def _round(self, supervisor: Supervisor, next_files_check: float) -> float:
        """One poll: the hub's upkeep, what the servers' rows say, the icon, notices and windows."""
        app, hub = self.app, self.hub
        hub.tick()
        self._end_timed_pause()
        self.read_rules_and_holds()
        if self._acknowledge.is_set():
            self._acknowledge.clear()
            supervisor.acknowledge()
        snapshot, notices = hub.poll_servers(supervisor)
        # Pause, approval mode and held commands: the hub's memory is the truth, not the file.
        snapshot = dataclasses.replace(
            snapshot,
            paused=hub.paused,
            approval_mode=approval.ApprovalMode(hub.approval_mode),
            waiting=len(hub.pending_holds()),
        )
        self._publish(snapshot)
        for notice in notices:
            if notice.kind != APPROVAL_NEEDED:  # the hub announces holds (see sync_approval_prompt)
                app.notifier.notify(notice.title, notice.message)
        app.tray_windows.check_windows()
        if time.monotonic() >= next_files_check:
            next_files_check = time.monotonic() + CLIENT_FILES_CHECK_S
            if app.claude.edited_outside():
                app.submit(REFRESH_CLIENTS)
        app.count_tick()
        return next_files_check

    def read_rules_and_holds(self) -> None:
        """The user's rules and the recent commands for the menu, and, without windows, the held
        commands it lists (from the hub's memory)."""
        hub = self.hub
        carried = {rule.id for rule in hub.rules_from_before()}
        self._rules = tuple(  # the rules in force, from the hub's memory (never the file's rows)
            RuleView(r.id, _("{rule} (from a previous run)").format(rule=r.shown()) if r.id in carried else r.shown())
            for r in hub.rules()
        )
        version = hub.data_version()
        if version != self._rules_version:
            self._rules_version = version
            self._recent = tuple(
                RecentView(r.id, status_label(r), r.created_at, r.command)
                for r in hub.recent_commands(limit=menu.RECENT_SHOWN)
            )
        if not self.app.windows:
            self._held = tuple(
                HeldView(h.command_id, h.command, friendly_client_name(h.client)) for h in hub.pending_holds()
            )

    def _end_timed_pause(self) -> None:
        """Resume when a timed pause runs out: a loosening, but the one the user's own "Pause for…"
        click asked for. If something paused again since (the CLI, a program: `paused_by` changed),
        or the user resumed, the timer does nothing: it never lifts a pause it did not set."""
        app = self.app
        if app.paused_until is None:
            return
        if not self.hub.paused or self.hub.paused_by != TIMED_PAUSE_BY:
            app.paused_until = None
            return
        if time.time() >= app.paused_until:
            app.paused_until = None
            self.hub.set_paused(False, by="user (timed pause ended)")
            app.notifier.notify(_("Host access resumed"), _("The pause you chose has ended."))

    def _publish(self, snapshot: Snapshot) -> None:
        """Compose the state; when the picture changed, the icon, tooltip and menu show it."""
        app = self.app
        crash = snapshot.last_crash
        linked = {p.server_id for p in self.hub.peers if p.role == "server"}  # the servers it speaks with
        state = TrayState(
            paused=snapshot.paused,
            paused_until=app.paused_until if snapshot.paused else None,
            servers=tuple(_server_view(s, linked) for s in snapshot.servers),
            running=snapshot.running,
            waiting=snapshot.waiting,
            clients=app.claude.clients,
            crash=None if crash is None else CrashView(crash.client_label, crash.at, crash.interrupted),
            autostart=app.autostart,
            problem=app.problem,
            busy=app.claude.busy,
            approval_mode=snapshot.approval_mode,
            container=self.hub.container,
            output_budget=snapshot.output_budget,
            held=self._held if not app.windows else (),
            jobs=long_jobs(
                tuple(
                    JobView(r.id, r.command, friendly_client_name(r.client_name), r.started_at or r.created_at)
                    for r in snapshot.running_rows
                ),
                time.time(),
            ),
            confirm_disconnect=app.confirming,
            rules=self._rules,
            recent=self._recent,
            version=__version__,
            windows=app.windows,
            language=app.language,
        )
        previous = app.state
        if state == previous:
            return
        self._tell_ended_jobs(ended_jobs(previous.jobs, state.jobs))
        if state.paused != previous.paused:  # the log window shows the tray's pause, not the file's
            app.tray_windows.tell_log_windows({"op": "state", "paused": state.paused})
        if _settings(state) != _settings(previous):  # changed anywhere (the CLI too): an open Settings shows it
            app.tray_windows.push_settings()
        app.show(state)

    def _tell_ended_jobs(self, ended: tuple[JobView, ...]) -> None:
        """A long command (listed in the menu) ended: one notice naming its agent and how it ended."""
        for job in ended:
            record = self.hub.command(job.id)
            if record is not None and not record.status.is_active:
                self.app.notifier.notify(*job_notice(job, outcome_text(record)))


def _settings(state: TrayState) -> tuple[object, ...]:
    """What the Settings window shows."""
    return state.approval_mode, state.output_budget, state.autostart


def _server_view(record: ServerRecord, linked: set[int | None]) -> ServerView:
    # The app people know ("Claude Desktop"), not what it calls itself ("claude-ai 0.14").
    return ServerView(
        friendly_client_name(record.client_name), record.started_at, record.command_count, record.headless,
        record.id in linked,
    )  # fmt: skip
