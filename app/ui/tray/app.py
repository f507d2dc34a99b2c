"""The tray app: the icon, its menu and the threads behind them, glued to pystray.

Threads and processes, and why:
- The main thread runs pystray's event loop (`Icon.run`): macOS requires it, and every backend
  is happiest there. Menu clicks arrive on it and only queue work, so the UI never waits on disk.
- "tray-monitor" polls the journal every POLL_S (a `data_version` check while nothing happens),
  lets the Supervisor notice crashed servers, takes requests from other processes (a second
  launch, `tray --quit`), computes a `TrayState` and, when the picture changed, pushes icon,
  tooltip and menu to the UI through `UiDispatcher`: a direct call where the backend marshals to
  its own loop itself (xorg, gtk, appindicator, win32), `AppHelper.callAfter` on macOS, where
  AppKit may only be touched from the main thread.
- "tray-actions" runs what clicks ask for, one at a time: config edits, the `claude` CLI (up to
  a minute), the connection check (seconds), start at login.
- "tray-journal" runs the clicks that only write the journal (pause, approval mode), on their own
  queue and connection: a pause takes effect at once, never behind a slow action.
- Windows live in their own processes (the log window is Tk; Tk and pystray in one process crash
  on macOS, pystray #138), and so does "Check connection": `cowork-terminal check --json`, which
  starts the server as Claude would. The tray reads its verdict; it never loads the MCP SDK.

pystray is imported inside `load_pystray`, never at module import: importing this module costs
no display connection, and the backend can be chosen first.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib.util
import logging
import os
import queue
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from types import ModuleType
from typing import Any

from app import __version__
from app.core import data_folder, i18n, settings
from app.core.authority.hub import HeldCommand, Hub, Question, RequestError
from app.core.authority.supervisor import APPROVAL_NEEDED, Snapshot, Supervisor
from app.core.channel.transport import AddressTaken
from app.core.classifier import classify
from app.core.claude import config as cc
from app.core.claude import locations as cl
from app.core.claude.names import friendly_client_name
from app.core.errors import CoworkError
from app.core.execution.bash_resolver import BashNotFoundError, find_bash
from app.core.execution.output import BUDGET_CHOICES, output_budget, parse_budget, set_output_budget
from app.core.i18n import _, ngettext
from app.core.i18n.formats import shorten_command
from app.core.i18n.language import choose_language, chosen_language, system_language
from app.core.install import autostart, stale_entries
from app.core.journal.store import Journal, ServerRecord
from app.core.liveness import HeldLock
from app.core.messages import LOG_WINDOW_DECIDED_BY, PROMPT_DECIDED_BY
from app.core.paths import AppPaths, make_private_file, protected_paths
from app.core.policy import approval
from app.core.policy.rules import SCOPES, SESSION_SCOPE, matching_rule
from app.core.self_command import app_argv
from app.ui.connection_probe import CHECK_PROCESS_TIMEOUT_S, check_notice, live_client_names, run_check
from app.ui.tray import menu
from app.ui.tray.menu import (
    ClientView,
    CrashView,
    HeldView,
    JobView,
    MenuEntry,
    RecentView,
    RuleView,
    ServerView,
    TrayState,
)
from app.ui.tray.notice_actions import DENY, SHOW, hold_actions
from app.ui.tray.platforms import (
    Notifier,
    UiDispatcher,
    backend_of,
    bash_problem,
    connect_hint,
    load_pystray,
    looser_hint,
    main_thread_marshal,
    missing_tk_message,
    missing_tray_support,
    no_icon_message,
    open_folder_argv,
    spawn,
    system_has_gi,
    tk_available,
)
from app.ui.windows.held_command import WaitingCommand, judged
from app.ui.windows.link import PipedWindow
from app.ui.windows.log_model import outcome_text, status_label

log = logging.getLogger(__name__)

POLL_S = 0.25  # the icon follows the journal within this (the requirement is half a second)
CLIENT_FILES_CHECK_S = 1.0  # how often Claude Desktop config files are looked at for outside edits
QUIT_TIMEOUT_S = 3.0  # after this, a quit whose event loop did not return ends the process anyway
PROMPT_RESTARTS = 3  # a killed prompt opens again at most this often per PROMPT_RESTART_WINDOW_S
PROMPT_RESTART_WINDOW_S = 60.0
WINDOW_STOP_GRACE_S = 1.0  # a log window gets this long to close when replaced or at quit
THREAD_JOIN_S = 2.0
ICON_SIZE_PX = 64  # every backend scales it; 64 px stays sharp up to 2x panels
ICON_NAME = "cowork-terminal"

WELCOME_SHOWN_SETTING = settings.WELCOME_SHOWN
DECIDED_IN_MENU = "user (tray menu)"
DECIDED_IN_NOTIFICATION = "user (notification)"
TIMED_PAUSE_BY = "user (timed pause)"  # the pause a "Pause for…" click set: the one its timer may end
# Actions that only run inside the tray (not from a menu entry).
FIRST_LOOK = "first-look"
REFRESH_CLIENTS = "refresh-clients"
ASK_USER = "ask-user"  # show the next question (a loosening someone asked for) in a confirm window
# Quick actions (the user's controls, the approval and confirm windows): their own queue, so
# nothing slow (a connection check, the `claude` CLI) ever delays them.
JOURNAL_ACTIONS = frozenset(
    {
        menu.TOGGLE_PAUSE,
        menu.PAUSE_FOR,
        menu.SET_APPROVAL_MODE,
        menu.TOGGLE_CONTAINER,
        menu.SET_OUTPUT_BUDGET,
        menu.OPEN_APPROVALS,
        ASK_USER,
    }
)
_STOP = object()


# --- the app -----------------------------------------------------------------------------------


class TrayApp:
    """The running tray: state, icon and the two worker threads. `run()` blocks the main thread."""

    def __init__(
        self,
        paths: AppPaths,
        lock: HeldLock | None,
        pystray: ModuleType,
        *,
        marshal: Callable[[Callable[[], None]], None] | None = None,
        log_window_command: Sequence[str] | None = None,
        welcome_command: Sequence[str] | None = None,
        check_command: Sequence[str] | None = None,
        check_timeout_s: float = CHECK_PROCESS_TIMEOUT_S,
        platform: str = sys.platform,
        poll_s: float = POLL_S,
    ) -> None:
        self.paths = data_folder.ensure(paths)
        # Create and migrate the journal here, once: two threads switching a brand-new database to
        # WAL at the same moment fail with "database is locked" (SQLite does not wait for that).
        Journal(self.paths).close()
        self._lock = lock
        self._pystray = pystray
        self.backend = backend_of(pystray)
        self.platform = platform
        self.poll_s = poll_s
        frozen = bool(getattr(sys, "frozen", False))
        self.log_window_command = list(log_window_command or app_argv(frozen, sys.executable, "log-window"))
        self.approval_prompt_command = app_argv(frozen, sys.executable, "approval-prompt")
        self.confirm_command = app_argv(frozen, sys.executable, "confirm-window")
        self.settings_command = app_argv(frozen, sys.executable, "settings-window")
        self._settings: PipedWindow | None = None
        self.uninstall_window_command = app_argv(frozen, sys.executable, "uninstall-window")
        self.welcome_command = list(welcome_command or app_argv(frozen, sys.executable, "welcome"))
        # The windows need Tk; a Python without it still runs the tray, and the menu answers instead.
        self.windows = tk_available()
        # `cowork-terminal check`, to which each check appends `--client ID --json`.
        self.check_command = list(check_command or app_argv(frozen, sys.executable, "check"))
        self.check_timeout_s = check_timeout_s
        self._ui = UiDispatcher(marshal if marshal is not None else main_thread_marshal(self.backend))
        self.has_loop = self.backend != "dummy"  # the dummy backend imports but cannot run

        self.state = TrayState()
        self.icon_state = menu.icon_state(self.state)
        self._entries_for: tuple[TrayState, list[MenuEntry]] = (self.state, menu.build_menu(self.state))
        self._images: dict[str, Any] = {}
        self.icon = pystray.Icon(
            ICON_NAME, icon=self._image(self.icon_state), title=menu.tooltip(self.state), menu=self.menu()
        )
        self.notifier = Notifier(self.icon, self.backend, self._ui, platform=platform)
        # The xorg fallback shows an icon with no menu: notices must not send the user to one.
        self.has_menu = bool(getattr(self.icon, "HAS_MENU", True))

        # Shared between threads; each is replaced whole, never mutated in place.
        self._clients: tuple[ClientView, ...] | None = None
        self._locations: dict[str, cl.ClientLocation] = {}
        self._watched_files: dict[Path, tuple[float, int] | None] = {}  # config file -> stamp when read
        self._entries_seen: dict[str, cc.EntrySeen] = {}  # each client's entry as the tray last read it
        self._autostart: bool | None = False
        self._language = chosen_language(self.paths.data_dir)  # None: the OS's language
        self._problem: str | None = None
        self._busy: str | None = None
        self._held: tuple[HeldView, ...] = ()  # for the menu, when no approval window can open
        self._confirming: str | None = None  # without Tk: the app whose "Disconnect…" asks in the menu
        self._welcome: subprocess.Popen[bytes] | None = None
        self._rules: tuple[RuleView, ...] = ()
        self._rules_version: object = None  # the journal as the recent-activity list last read it
        self._recent: tuple[RecentView, ...] = ()

        self._jobs: queue.Queue[Any] = queue.Queue()
        self._journal_jobs: queue.Queue[Any] = queue.Queue()
        self._quit = threading.Event()
        self._stopped = threading.Event()
        self._acknowledge = threading.Event()
        self._progress = threading.Condition()
        self._pending = 0
        self._ticks = 0
        self._wake_r, self._wake_w = socket.socketpair()
        for end in (self._wake_r, self._wake_w):
            end.setblocking(False)
        self._signal_r: socket.socket | None = None
        self._signal_w: socket.socket | None = None
        self._threads: list[threading.Thread] = []
        self._windows: list[PipedWindow] = []
        self._notices: list[PipedWindow] = []  # windows that only tell something (show_notice)
        self.paused_until: float | None = None  # a timed pause: when this tray resumes by itself
        self._window_stderr = self.paths.log_dir / "log-window.stderr.log"
        self._main_running = False
        self._prompt: PipedWindow | None = None
        self._prompt_restarts: list[float] = []  # when the prompt was opened again after being killed
        self._prompt_shown: set[int] = set()
        self._confirm: PipedWindow | None = None
        self._questions: list[Question] = []
        self._windows_lock = threading.Lock()

        # The user's authority: servers and the CLI reach it over the channel; it refuses to start
        # (AddressTaken) when another program already listens at the tray's address.
        self.hub = Hub(
            self.paths,
            notify=lambda title, message: self.notifier.notify(title, message),
            on_change=self._kick,
            ask_user=self._ask_user,
            on_holds=lambda: self.submit(menu.OPEN_APPROVALS),
            rule_for_hold=self.rule_for_hold,
            open_log=lambda: self.submit(menu.OPEN_LOG),
            quit_app=self.request_quit,
        )
        self.hub.start()

    # -- the menu: built from the model each time pystray asks ------------------------------

    def menu(self) -> Any:
        """A pystray menu whose items are rebuilt from the current state whenever it is read."""
        return self._pystray.Menu(self._menu_items)

    def entries(self) -> list[MenuEntry]:
        """The menu model for the current state (cached until the state changes)."""
        state, entries = self._entries_for
        if state is not self.state:
            state = self.state
            entries = menu.build_menu(state)
            self._entries_for = (state, entries)
        return entries

    def _current(self, key: str, fallback: MenuEntry) -> MenuEntry:
        return menu.find_entry(self.entries(), key) or fallback

    def _menu_items(self) -> list[Any]:
        return [self._item(entry) for entry in self.entries()]

    def _item(self, entry: MenuEntry) -> Any:
        pystray = self._pystray
        if entry.separator:
            return pystray.Menu.SEPARATOR
        key = entry.key

        # Callables, so an item shows the newest state even where a backend keeps built items.
        def text(_item: Any) -> str:
            return self._current(key, entry).text

        def enabled(_item: Any) -> bool:
            return self._current(key, entry).enabled

        def checked(_item: Any) -> bool:
            return bool(self._current(key, entry).checked)

        def clicked(_icon: Any, _item: Any) -> None:
            self.click(key)

        action: Any = clicked
        if entry.submenu is not None:
            action = pystray.Menu(*[self._item(sub) for sub in entry.submenu])
        item = pystray.MenuItem(
            text,
            action,
            checked=checked if entry.checked is not None else None,
            default=entry.default,
            enabled=enabled,
        )
        item.cowork_key = key
        return item

    def pystray_item(self, key: str) -> Any:
        """The pystray item for `key` in a freshly built menu (calling it with the icon clicks it)."""

        def walk(items: Any) -> Any:
            for item in items:
                if getattr(item, "cowork_key", None) == key:
                    return item
                if item.submenu is not None:
                    found = walk(item.submenu.items)
                    if found is not None:
                        return found
            return None

        found = walk(self.icon.menu.items)
        if found is None:
            raise KeyError(key)
        return found

    def click(self, key: str) -> None:
        """What a click on the item `key` means now; runs on the UI thread, so it only queues work."""
        entry = menu.find_entry(self.entries(), key)
        if entry is None or not entry.enabled or entry.action is None:
            return
        if entry.action == menu.QUIT:
            self.quit_asking_first()
            return
        target = entry.target
        if entry.action in (menu.TOGGLE_PAUSE, menu.TOGGLE_AUTOSTART):
            target = "off" if entry.checked else "on"  # what the user saw decides, not a later state
        self.submit(entry.action, target)

    def submit(self, action: str, target: str | None = None) -> None:
        with self._progress:
            self._pending += 1
        (self._journal_jobs if action in JOURNAL_ACTIONS else self._jobs).put((action, target))

    # -- lifetime ---------------------------------------------------------------------------

    def run(self) -> int:
        """Run until Quit, SIGTERM/SIGINT or a `quit` request; releases the tray lock at the end."""
        self._main_running = True
        self._install_signal_wakeup()
        try:
            if self.has_loop:
                self.icon.run(setup=self._setup)
            else:
                self.start()
                while not self._stopped.wait(self.poll_s):
                    pass
        except Exception as exc:
            if not self._quit.is_set():
                raise
            # GTK/AppIndicator raise at stop when no notification service runs (pystray hides its
            # last notification over D-Bus): expected and harmless, so one line, no traceback.
            log.warning("the tray backend failed while stopping: %s", exc)
        finally:
            self.shutdown()
        return 0

    def _setup(self, icon: Any) -> None:
        self._ui(lambda: setattr(icon, "visible", True))  # through the dispatcher: AppKit wants the main thread
        self.start()

    def start(self) -> None:
        """Start the worker threads (`run()` does; tests call it to drive the menu without an event loop)."""
        if self._threads:
            return
        self.submit(FIRST_LOOK)
        workers: tuple[tuple[str, Callable[..., None], tuple[Any, ...]], ...] = (
            ("tray-monitor", self._monitor, ()),
            ("tray-actions", self._actions, (self._jobs,)),
            ("tray-journal", self._actions, (self._journal_jobs,)),
        )
        for name, target, args in workers:
            thread = threading.Thread(target=target, args=args, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)

    def _say_if_unprotected(self) -> None:
        """Once at start: commands run without the OS container (issue 21), in plain words and how to fix it."""
        from app.core.execution import container

        found = container.for_paths(self.paths)
        said = container.person_message(found.state)
        if said:
            log.warning("commands are not contained: %s", container.log_message(found.state, found.detail))
            self.notifier.notify(_("Commands are less protected"), said)

    def request_quit(self) -> None:
        """Thread-safe: the monitor thread stops the icon, then `run()` returns."""
        self._quit.set()
        self._kick()

    def quit_asking_first(self) -> None:
        """Quit from the menu: when commands run, quitting stops them, so the user says so first."""
        running = self.hub.running_count()
        if not running:
            self.request_quit()
            return
        text = ngettext(
            "{count} command is running. Stop it and quit {app}?",
            "{count} commands are running. Stop them and quit {app}?",
            running,
        ).format(count=running, app=menu.APP_TITLE)
        self._ask_user(
            Question(
                "quit", text, _("Stop and quit"), _("Cancel"), lambda: self.request_quit() or _("Quitting."), yours=True
            )
        )

    def shutdown(self) -> None:
        """Stop the threads and the windows this tray opened, then let go of the tray lock."""
        self._quit.set()
        self._kick()
        self._jobs.put(_STOP)
        self._journal_jobs.put(_STOP)
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(THREAD_JOIN_S)  # the actions thread may be inside a check: it is a daemon
        for window in [*self._windows, *self._notices, self._prompt, self._confirm, self._settings]:
            if window is not None:
                window.close()
        self._windows = []
        self.notifier.withdraw()
        if self._welcome is not None:  # its check needs this tray: it goes with it
            _stop_process_now(self._welcome, WINDOW_STOP_GRACE_S)
        self.hub.close()  # servers end what runs: nobody would watch it any more
        if self._lock is not None:
            self._lock.release()
            self._lock = None
        self._stopped.set()
        log.info("tray stopped")

    def _stop_icon(self) -> None:
        self._stopped.set()
        if not self.has_loop:
            return
        if self._main_running:
            # pystray's xorg backend sometimes leaves run() blocked after stop(): do not hang forever.
            watchdog = threading.Timer(QUIT_TIMEOUT_S, self._force_exit)
            watchdog.daemon = True
            watchdog.start()
        # icon.stop() waits for the backend's loop; from a helper thread, so nothing here can hang.
        threading.Thread(target=lambda: self._ui(self.icon.stop), name="tray-stop", daemon=True).start()

    def _force_exit(self) -> None:
        log.warning("the tray's event loop did not stop within %s s; exiting anyway", QUIT_TIMEOUT_S)
        for window in self._windows:
            window.close()
        self.hub.close()
        logging.shutdown()
        os._exit(0)  # the OS releases the tray lock with the process

    def _install_signal_wakeup(self) -> None:
        """SIGTERM/SIGINT/SIGHUP quit cleanly, whatever loop the main thread sits in.

        A Python signal handler only runs when the main thread runs Python code, which a GTK or
        Cocoa loop may not do for a long time; `set_wakeup_fd` makes the C-level handler write the
        signal's number to a socket at once, and the monitor thread watches that socket.
        """
        if threading.current_thread() is not threading.main_thread():
            return
        self._signal_r, self._signal_w = socket.socketpair()
        for end in (self._signal_r, self._signal_w):
            end.setblocking(False)
        try:
            signal.set_wakeup_fd(self._signal_w.fileno(), warn_on_full_buffer=False)
        except (ValueError, OSError) as exc:
            log.warning("cannot watch for signals: %s", exc)
            return
        for name in ("SIGTERM", "SIGINT", "SIGHUP"):
            if hasattr(signal, name):
                signal.signal(getattr(signal, name), _note_signal)

    def _kick(self) -> None:
        with contextlib.suppress(OSError):  # a full buffer means the monitor is awake anyway
            self._wake_w.send(b"k")

    def _wait(self, timeout_s: float) -> None:
        sockets = [s for s in (self._wake_r, self._signal_r) if s is not None]
        ready, _, _ = select.select(sockets, [], [], timeout_s)
        for sock in ready:
            try:
                data = sock.recv(4096)
            except (BlockingIOError, InterruptedError):
                continue
            if sock is self._signal_r and data:
                log.info("signal %s received: quitting", data[-1])
                self._quit.set()

    def settle(self, timeout_s: float = 10.0) -> bool:
        """Wait until every queued action ran and the icon shows the result; False on timeout."""
        deadline = time.monotonic() + timeout_s
        with self._progress:
            if not self._progress.wait_for(lambda: self._pending == 0, timeout_s):
                return False
            target = self._ticks + 1
        self._kick()
        with self._progress:
            return self._progress.wait_for(lambda: self._ticks > target, max(0.0, deadline - time.monotonic()))

    # -- the monitor thread -------------------------------------------------------------------

    def _monitor(self) -> None:
        hub = self.hub
        try:
            # The supervisor shares the hub's connection (the tray's only writer) under its lock.
            supervisor = hub.with_journal(
                lambda journal: Supervisor(
                    journal, version=lambda: (hub.journal.data_version(), hub.writes), has_menu=self.has_menu
                )
            )
            next_files_check = 0.0
            refreshed_for: object = None
            while not self._quit.is_set():
                hub.tick()
                self._end_timed_pause()
                self._read_rules_and_holds()
                if self._acknowledge.is_set():
                    self._acknowledge.clear()
                    supervisor.acknowledge()

                def poll(journal: Journal) -> tuple[Snapshot, list[Any]]:
                    supervisor.journal = journal  # the hub may have started a new journal
                    return supervisor.poll()

                snapshot, notices = hub.with_journal(poll)
                # Pause, approval mode and held commands: the hub's memory is the truth, not the file.
                snapshot = dataclasses.replace(
                    snapshot,
                    paused=hub.state.paused,
                    approval_mode=approval.ApprovalMode(hub.state.approval_mode),
                    waiting=len(hub.pending_holds()),
                )
                self._publish(snapshot)
                for notice in notices:
                    if notice.kind != APPROVAL_NEEDED:  # the hub announces holds (see sync_approval_prompt)
                        self.notifier.notify(notice.title, notice.message)
                self._check_windows()
                if time.monotonic() >= next_files_check:
                    next_files_check = time.monotonic() + CLIENT_FILES_CHECK_S
                    refreshed_for = self._check_client_files(refreshed_for)
                with self._progress:
                    self._ticks += 1
                    self._progress.notify_all()
                self._wait(self.poll_s)
        except Exception:  # the top of a thread: log it, tell the user, and quit
            # Without its monitor the tray can neither show what runs nor take Quit: letting go of
            # the tray lock (by quitting) makes every server refuse commands, the safe way to fail.
            log.exception("the tray's monitor thread failed")
            self.notifier.notify(
                _("{app} stopped").format(app=menu.APP_TITLE),
                _(
                    "An internal error stopped {app}, so Claude's commands are refused until you "
                    "start it again. The app log in {folder} has the details."
                ).format(app=menu.APP_TITLE, folder=self.paths.log_dir),
            )
        self._stop_icon()

    def _read_rules_and_holds(self) -> None:
        """The user's rules for the menu, and, without
        windows, the held commands it lists (from the hub's memory)."""
        hub = self.hub
        carried = {rule.id for rule in hub.rules_from_before()}
        self._rules = tuple(  # the rules in force, from the hub's memory (never the file's rows)
            RuleView(r.id, _("{rule} (from a previous run)").format(rule=r.shown()) if r.id in carried else r.shown())
            for r in hub.rules()
        )
        with hub.lock:
            version = (hub.journal.data_version(), hub.writes)
            if version != self._rules_version:
                self._rules_version = version
                self._recent = tuple(
                    RecentView(r.id, status_label(r), r.created_at, r.command)
                    for r in hub.journal.recent_commands(limit=menu.RECENT_SHOWN)
                )
        if not self.windows:
            self._held = tuple(
                HeldView(h.command_id, h.command, friendly_client_name(h.client)) for h in hub.pending_holds()
            )

    def _end_timed_pause(self) -> None:
        """Resume when a timed pause runs out: a loosening, but the one the user's own "Pause for…"
        click asked for. If something paused again since (the CLI, a program: `paused_by` changed),
        or the user resumed, the timer does nothing: it never lifts a pause it did not set."""
        if self.paused_until is None:
            return
        if not self.hub.state.paused or self.hub.paused_by != TIMED_PAUSE_BY:
            self.paused_until = None
            return
        if time.time() >= self.paused_until:
            self.paused_until = None
            self.hub.set_paused(False, by="user (timed pause ended)")
            self.notifier.notify(_("Host access resumed"), _("The pause you chose has ended."))

    def _publish(self, snapshot: Snapshot) -> None:
        """Compose the state; when the picture changed, push icon, tooltip and menu to the UI."""
        crash = snapshot.last_crash
        linked = {p.server_id for p in list(self.hub.peers) if p.role == "server"}  # the servers it speaks with
        state = TrayState(
            paused=snapshot.paused,
            paused_until=self.paused_until if snapshot.paused else None,
            servers=tuple(_server_view(s, linked) for s in snapshot.servers),
            running=snapshot.running,
            waiting=snapshot.waiting,
            clients=self._clients,
            crash=None if crash is None else CrashView(crash.client_label, crash.at, crash.interrupted),
            autostart=self._autostart,
            problem=self._problem,
            busy=self._busy,
            approval_mode=snapshot.approval_mode,
            container=self.hub.state.container,
            output_budget=snapshot.output_budget,
            held=self._held if not self.windows else (),
            jobs=menu.long_jobs(
                tuple(
                    JobView(r.id, r.command, friendly_client_name(r.client_name), r.started_at or r.created_at)
                    for r in snapshot.running_rows
                ),
                time.time(),
            ),
            confirm_disconnect=self._confirming,
            rules=self._rules,
            recent=self._recent,
            version=__version__,
            windows=self.windows,
            language=self._language,
        )
        previous = self.state
        if state == previous:
            return
        self.state = state
        self._tell_ended_jobs(menu.ended_jobs(previous.jobs, state.jobs))
        if state.paused != previous.paused:  # the log window shows the tray's pause, not the file's
            for window in self._windows:
                window.send({"op": "state", "paused": state.paused})
        name, title = menu.icon_state(state), menu.tooltip(state)
        image = self._image(name)
        self.icon_state = name

        def apply() -> None:
            if self.icon.icon is not image:
                self.icon.icon = image
            self.icon.title = title
            if self.has_loop:
                self.icon.update_menu()

        self._ui(apply)

    def _tell_ended_jobs(self, ended: tuple[JobView, ...]) -> None:
        """A long command (listed in the menu) ended: one notice naming its agent and how it ended."""
        for job in ended:
            record = self.hub.with_journal(lambda journal, job_id=job.id: journal.get_command(job_id))
            if record is not None and not record.status.is_active:
                self.notifier.notify(*menu.job_notice(job, outcome_text(record)))

    def _image(self, name: str) -> Any:
        if name not in self._images:
            from app.ui.icons import load_icon

            self._images[name] = load_icon(name, ICON_SIZE_PX)
        return self._images[name]

    def _check_client_files(self, refreshed_for: object) -> object:
        """Notice a Claude Desktop config edited outside the tray (by `connect`, or by hand): compare
        each file with how it was when the tray last read it. Returns what a refresh was asked for."""
        watched = self._watched_files
        if watched is refreshed_for:
            return refreshed_for  # a refresh for exactly this reading is already queued
        if any(_file_stamp(path) != stamp for path, stamp in watched.items()):
            self.submit(REFRESH_CLIENTS)
            return watched
        return refreshed_for

    # -- the actions thread -------------------------------------------------------------------

    def _actions(self, jobs: queue.Queue[Any]) -> None:
        """Run one queue's actions in order."""
        while True:
            job = jobs.get()
            if job is _STOP:
                break
            action, target = job
            try:
                self._run_action(action, target)
            finally:
                with self._progress:
                    self._pending -= 1
                    self._progress.notify_all()

    def _run_action(self, action: str, target: str | None) -> None:
        try:
            self.perform(action, target)
        except CoworkError as exc:  # a failure the user can act on: its message says how
            self.notifier.notify(menu.APP_TITLE, exc.for_person())
        except Exception:  # the top of one action: log it, tell the user, keep the tray alive
            log.exception("action %s failed", action)
            self.notifier.notify(
                menu.APP_TITLE, _("Something went wrong ({action}). The app log has the details.").format(action=action)
            )
        finally:
            self._kick()

    def _first_look(self) -> None:
        """At start: bash first (nothing works without it), then Claude apps, then start at login."""
        log.info("tray started (backend %s, pid %s)", self.backend, os.getpid())
        has_gi = importlib.util.find_spec("gi") is not None
        missing = missing_tray_support(
            self.platform, self.backend, executable=sys.executable, has_gi=has_gi, system_gi=system_has_gi()
        )
        if missing:
            log.warning("%s", missing)
            self.notifier.notify(_("Tray menu unavailable"), missing)
            if self.windows:  # some desktops show no notifications: this must be seen
                self.show_notice(_("Tray menu unavailable"), missing)
        if self.has_loop and not self.has_menu:
            self.open_log_window()  # without a menu, the window is where the controls are
        try:
            find_bash()
        except BashNotFoundError as exc:
            self._problem = bash_problem(exc, self.platform)
            self.notifier.notify(self._problem, exc.for_person())
        self._say_if_unprotected()
        self._repair_stale_entries()
        if not self.windows:
            said = missing_tk_message(self.platform, self.has_menu)
            self.notifier.notify(_("Cowork Terminal's windows cannot open"), said)
        self.refresh_clients(include_cli=True)
        self._autostart = _read_autostart()
        loose = self.hub.looser_than_default()
        if loose:  # set while no tray watched, perhaps by a program: the user should know
            mode = approval.ApprovalMode(self.hub.state.approval_mode).label
            self.notifier.notify(
                _("Cowork Terminal asks less than usual"),
                _("Approvals: {mode}.").format(mode=mode) + " " + looser_hint(self.has_menu),
            )
        carried = self.hub.rules_from_before()
        if carried:  # read from the file, not made in this run: the user sees them before they count for long
            self.notifier.notify(
                _("Rules from a previous run are in force"),
                "; ".join(rule.shown() for rule in carried)
                + ". "
                + _("If you did not make them, remove them in the activity log."),
            )
        with self.hub.lock:
            shown = bool(self.hub.journal.get_setting(WELCOME_SHOWN_SETTING, False))
        not_connected = self._clients is not None and not any(c.has_entry for c in self._clients)
        if self.windows and not_connected and (not shown or not self.has_menu):
            # The first start (or no menu to find it in): it walks the user through.
            self.open_welcome(first_run=not shown)
        elif self._problem is None and not_connected:
            self.notifier.notify(_("Connect Cowork Terminal to Claude"), connect_hint(self.has_menu, self.windows))

    def _repair_stale_entries(self) -> None:
        """Start at login and Claude's entries that name a removed program or another copy run this one."""
        platform, environ, home = cl.this_machine()
        frozen = bool(getattr(sys, "frozen", False))
        for repair in stale_entries.repair_stale_entries(
            frozen=frozen, executable=os.path.abspath(sys.executable), platform=platform, environ=environ, home=home
        ):
            self.notifier.notify(_("{what} updated").format(what=repair.what), repair.notice)

    def perform(self, action: str, target: str | None = None) -> None:
        """Do one action now, on the calling thread (the actions thread, or a test)."""
        if action == menu.OPEN_LOG:
            self.open_log_window()
        elif action == FIRST_LOOK:
            self._first_look()
        elif action == ASK_USER:
            self._show_next_question()
        elif action == menu.TOGGLE_PAUSE:
            self.paused_until = None  # a click on the switch replaces any timed pause
            self.hub.set_paused(target == "on", by="user (tray menu)")
        elif action == menu.PAUSE_FOR:
            until = menu.resume_time(str(target), datetime.now())
            self.paused_until = until.timestamp()
            self.hub.set_paused(True, by=TIMED_PAUSE_BY)
            log.info("host access paused from the tray menu until %s", until)
        elif action in (menu.CONNECT, menu.DISCONNECT):
            self._confirming = None
            self._change_client(action, str(target))
        elif action == menu.CHECK:
            self._check_client(str(target))
        elif action == menu.TOGGLE_AUTOSTART:
            if target == "on":
                autostart.enable()
            else:
                autostart.disable()
            self._autostart = _read_autostart()
            self._push_settings()
        elif action == menu.OPEN_APPROVALS:
            self.sync_approval_prompt()
        elif action == menu.SET_APPROVAL_MODE:
            self.hub.set_settings(approval_mode=approval.ApprovalMode(str(target)).value)
            log.info("approval mode set to %s from the tray", target)
            self._push_settings()
        elif action == menu.TOGGLE_CONTAINER:  # the user's click: the one way to switch it off
            self.hub.set_settings(container=not self.hub.state.container)
            log.info("commands %s from the tray", "contained" if self.hub.state.container else "not contained")
            self._push_settings()
        elif action == menu.SET_OUTPUT_BUDGET:
            budget = parse_budget(str(target))
            self.hub.with_journal(lambda journal: set_output_budget(journal, budget))
            log.info("output budget set to %s from the tray", target)
            self._push_settings()
        elif action == menu.UNINSTALL:
            spawn(self.uninstall_window_command)  # the window asks, then quits this tray itself
        elif action == menu.SET_LANGUAGE:
            picked = None if target == menu.FOLLOW_SYSTEM else str(target)
            choose_language(self.paths.data_dir, picked)  # windows opened from now on read it too
            i18n.use_language(picked or system_language())
            self._language = picked
            log.info("language set to %s from the tray", picked or "the system's")
        elif action == menu.OPEN_DATA_FOLDER:
            spawn(open_folder_argv(self.platform, self.paths.data_dir))
        elif action == REFRESH_CLIENTS:
            self.refresh_clients(include_cli=False)
        elif action == menu.ASK_DISCONNECT:
            self._ask_disconnect(str(target))
        elif action in (menu.ALLOW, menu.DENY):
            allowed = action == menu.ALLOW
            if self.hub.decide(int(str(target)), allowed=allowed, by=DECIDED_IN_MENU):
                log.info("held command %s %s from the tray menu", target, "allowed" if allowed else "denied")
            self._read_rules_and_holds()
        elif action == menu.STOP_JOB:  # a tightening: at once
            try:
                log.info("%s", self.hub.stop(int(str(target))))
            except RequestError as gone:  # it ended in the meantime
                log.info("%s", gone)
        elif action == menu.REMOVE_RULE:
            self.hub.remove_rule(int(str(target)))
            self._read_rules_and_holds()
            log.info("rule %s removed from the tray menu", target)
        elif action == menu.OPEN_WELCOME:
            self.open_welcome()
        elif action == menu.OPEN_SETTINGS:
            self.open_settings()
        elif action in (menu.SHOW_ABOUT, menu.SHOW_HELP):
            about = action == menu.SHOW_ABOUT
            title, text = (_("About Cowork Terminal"), menu.about_text(__version__)) if about else menu.help_notice()
            (self.show_notice if self.windows else self.notifier.notify)(title, text)
        else:
            log.warning("unknown action %r ignored", action)

    def refresh_clients(self, *, include_cli: bool) -> None:
        """Look at every Claude client's config again. Claude Code is asked through `claude mcp get`,
        which starts a server: only at start and after our own changes, never on a timer."""
        _platform, locations = cl.clients_here()
        # Stamped before reading: an edit that lands while we read still counts as news.
        stamps = {Path(loc.config_path): _file_stamp(Path(loc.config_path)) for loc in locations if loc.config_path}
        wanted = cc.this_app_entry()
        known = {c.client_id: c for c in self._clients or ()}
        views = []
        seen = dict(self._entries_seen)
        news: list[tuple[str, cc.ClientStatus]] = []
        for location in locations:
            if location.config_path is None and not include_cli and location.client_id in known:
                views.append(known[location.client_id])
                continue
            status = cc.client_status(location, wanted)
            views.append(ClientView(status.client_id, status.name, status.installed, status.state, status.problem))
            said = cc.entry_news(seen.get(status.client_id), status)
            if said is not None:
                news.append((said, status))
            seen[status.client_id] = cc.EntrySeen(status.state, cc.starts_headless(status.entry))
        self._locations = {loc.client_id: loc for loc in locations}
        self._clients = tuple(views)
        self._watched_files = stamps
        self._entries_seen = seen
        for said, status in news:  # once the menu shows the entry's state
            self._tell_entry_news(said, status)

    def _tell_entry_news(self, said: str, status: cc.ClientStatus) -> None:
        """An entry that now starts `serve --headless` (at start too), or ours taken over by another
        program while the tray watched: quitting this app would no longer stop that client's
        commands, or nothing of this app would see them, and a program may have written it."""
        client = status.name
        if said == cc.HEADLESS_ENTRY:
            title = _("{client} can run commands without this app").format(client=client)
            text = _(
                "Its settings start Cowork Terminal with --headless: while this app is not running, commands "
                "from {client} run with no pause switch or approvals."
            ).format(client=client)
            fix = _("Update its entry")
        else:
            program = status.entry.get("command") if isinstance(status.entry, dict) else None
            title = _("{client} no longer starts Cowork Terminal").format(client=client)
            text = _(
                "Its settings now start {program} under Cowork Terminal's name: this app does not see or "
                "control what that program runs."
            ).format(program=program or _("another program"))
            fix = _("Replace it with this app")
        if self.has_menu:
            undo = _(
                "If you did not do this, open Connect to Claude in this icon's menu, then {client} and {fix}."
            ).format(client=client, fix=fix)
        else:
            undo = _("If you did not do this, connect {client} again in the Welcome window.").format(client=client)
        self.notifier.notify(title, text + " " + undo)

    def _location(self, client_id: str) -> cl.ClientLocation:
        location = self._locations.get(client_id)
        if location is None:
            raise CoworkError(_("unknown Claude client {client}").format(client=repr(client_id)))
        return location

    def _change_client(self, action: str, client_id: str) -> None:
        location = self._location(client_id)
        wanted = cc.this_app_entry()
        try:
            if action == menu.CONNECT:
                # The item's text said "replace ..." for a stale or foreign entry: the click is consent.
                change = cc.connect_client(location, wanted, replace=True)
                done = [_("Connected {client}.").format(client=location.name)]
            else:
                change = cc.disconnect_client(location, wanted)
                done = [_("Disconnected {client}.").format(client=location.name)]
        finally:
            self.refresh_clients(include_cli=location.config_path is None)
        log.info("%s %s: %s", action, client_id, change.action)
        if cc.needs_restart(location, change):
            done.append(_("Quit and reopen {client}: it reads its config only at start.").format(client=location.name))
        if change.backup:
            done.append(_("The previous file is kept as {path}.").format(path=change.backup))
        self.notifier.notify(menu.APP_TITLE, " ".join(done))

    def _check_client(self, client_id: str) -> None:
        location = self._location(client_id)
        self._busy = _("Checking {client}...").format(client=location.name)
        self._kick()
        try:
            ok, message = self._run_check(location)
        finally:
            self._busy = None
        servers = self.hub.with_journal(lambda journal: journal.servers(live_only=True))  # Claude's own, if any
        _connected, title, text = check_notice(
            location.client_id, location.name, ok, message,
            installed=location.installed, claude_connected=location.name in live_client_names(servers),
        )  # fmt: skip
        self.notifier.notify(title, text)

    def _run_check(self, location: cl.ClientLocation) -> tuple[bool, str]:
        """Run `cowork-terminal check --client ID --json` and read its verdict: (ok, message)."""
        return run_check(self.check_command, location.client_id, location.name, self.check_timeout_s)

    def _ask_disconnect(self, client_id: str) -> None:
        """ "Disconnect…": ask in the confirm window, then disconnect on yes. Without Tk, the menu
        itself asks (a "Yes, disconnect" item takes the place of "Disconnect…")."""
        location = self._location(client_id)
        if not self.windows:
            self._confirming = client_id
            return

        def disconnect() -> str:
            self.submit(menu.DISCONNECT, client_id)
            return _("Disconnecting {client}.").format(client=location.name)

        self._ask_user(
            Question(
                f"disconnect:{client_id}",
                _(
                    "Disconnect {client}? It will no longer be able to run commands on this computer "
                    "through Cowork Terminal. You can connect it again from this menu."
                ).format(client=location.name),
                _("Disconnect"),
                _("Cancel"),
                disconnect,
                yours=True,
            )  # fmt: skip
        )

    # -- the windows, each in its own process ----------------------------------------------------

    def _notify_hold(self, hold: HeldCommand) -> None:
        """A held command's notice; where the desktop has buttons, Deny and Show, never Allow."""
        self.notifier.notify(
            _("A command is waiting for your approval"),
            _("{client} wants to run: {command}").format(
                client=friendly_client_name(hold.client), command=shorten_command(hold.command, 120)
            ),
            key=f"hold:{hold.command_id}",
            actions=hold_actions(self.windows),
            on_action=functools.partial(self._hold_notice_pressed, hold.command_id),
        )

    def _hold_notice_pressed(self, command_id: int, action: str) -> None:
        """A button of a held command's notice: a program may have sent it, so it only denies or shows."""
        if action == DENY and self.hub.decide(command_id, allowed=False, by=DECIDED_IN_NOTIFICATION):
            log.info("held command %s denied from its notification", command_id)
        elif action == SHOW:
            self.submit(menu.OPEN_APPROVALS)
        self._kick()

    def sync_approval_prompt(self) -> None:
        """Make the approval prompt show exactly the hub's held commands: start it when something
        waits, tell it what is new and what is gone, close it when nothing is left."""
        holds = {h.command_id: h for h in self.hub.pending_holds()}
        self._tell_log_windows_holds(list(holds.values()))
        self.notifier.withdraw({f"hold:{i}" for i in holds})  # an answered command: its notice answers nothing more
        if not self.windows:  # no Tk: the menu's "waiting" line lists them, with Allow once / Deny
            for command_id in sorted(set(holds) - self._prompt_shown):
                hold = holds[command_id]
                self.hub.seen(command_id)  # the menu lists every one: each one's time starts now
                self._notify_hold(hold)
            self._prompt_shown = set(holds)
            self._read_rules_and_holds()
            self._kick()
            return
        with self._windows_lock:
            prompt = self._prompt
            if holds and (prompt is None or not prompt.alive()):
                prompt = self._prompt = PipedWindow(
                    self.approval_prompt_command, self._prompt_said, on_exit=self._prompt_exited
                )
                self._prompt_shown = set()
                log.info("approval prompt started (pid %s)", prompt.pid)
            if prompt is None:
                return
            if not holds:
                prompt.close()
                self._prompt = None
                return
            for command_id in sorted(set(holds) - self._prompt_shown):
                hold = holds[command_id]
                prompt.send({"op": "show", "hold": self._for_window(hold).to_json()})
                self._notify_hold(hold)
            for command_id in self._prompt_shown - set(holds):
                prompt.send({"op": "gone", "id": command_id})
            self._prompt_shown = set(holds)

    def _for_window(self, hold: HeldCommand) -> WaitingCommand:
        """What the prompt shows: the command as its server sent it, judged here in plain words,
        with the rule the window may offer."""
        session = None if hold.peer.server_id is None else str(hold.peer.server_id)
        return judged(
            hold.command_id, hold.command, hold.folder, client=friendly_client_name(hold.client),
            expires_at=hold.expires_at, protected=protected_paths(self.paths), env_keys=hold.env_shown(),
            tool=hold.tool, session=session,
        )  # fmt: skip

    def _prompt_said(self, message: dict[str, Any]) -> None:
        if message.get("op") == "seen" and isinstance(message.get("id"), int):
            self.hub.seen(message["id"])  # its time to answer starts now (issue 22)
            return
        if message.get("op") != "decide" or not isinstance(message.get("id"), int):
            return
        allowed = message.get("allowed") is True
        rule = message.get("rule")
        if allowed and isinstance(rule, dict) and rule.get("scope") in SCOPES:
            self._make_rule(message["id"], str(rule["scope"]))
        self.hub.decide(message["id"], allowed=allowed, by=PROMPT_DECIDED_BY)

    def _make_rule(self, command_id: int, scope: str) -> None:
        """The user clicked "Always allow ...": the rule is the one the tray itself offers for this
        hold (never a folder the window names), in the scope the user chose."""
        hold = next((h for h in self.hub.pending_holds() if h.command_id == command_id), None)
        proposal = None if hold is None else self._for_window(hold).proposal
        if hold is None or proposal is None:
            return
        session = str(hold.peer.server_id) if scope == SESSION_SCOPE else None
        rule = self.hub.add_rule(proposal.kind, proposal.folder, scope, proposal.description(scope), session)
        log.info("rule %s made by the user: %s", rule.id, rule.description)
        # Said back, so that a click that changes what is asked from now on never goes unnoticed.
        self.notifier.notify(
            _("Rule made"),
            _("From now on, {rule} runs without asking you. Your rules in the menu can remove it.").format(
                rule=rule.shown()
            ),
        )

    def rule_for_hold(self, hold: HeldCommand) -> int | None:
        """The hub asks, for each new hold: does one of the user's rules allow it? (Its id, or None.)"""
        rules = self.hub.rules()  # the tray's own: a row written into the file never counts
        if not rules:
            return None
        real_cwd = hold.folder if hold.pin is not None else os.path.realpath(hold.cwd) if hold.cwd else None
        verdict = classify(hold.command, cwd=real_cwd, protected_paths=protected_paths(self.paths))
        session = None if hold.peer.server_id is None else str(hold.peer.server_id)
        rule = matching_rule(rules, hold.command, real_cwd, verdict, session)
        return None if rule is None else rule.id

    def _prompt_exited(self, code: int) -> None:
        now = time.monotonic()
        self._prompt_restarts = [t for t in self._prompt_restarts if now - t < PROMPT_RESTART_WINDOW_S]
        if code < 0 and self.hub.pending_holds() and len(self._prompt_restarts) < PROMPT_RESTARTS:
            # Killed by a signal while a command waits (another program can end any process of the
            # user's): a question must not wait unseen, so it opens again, a few times a minute.
            self._prompt_restarts.append(now)
            log.warning("the approval prompt was ended (code %s) while a command waits: opening it again", code)
            self.submit(menu.OPEN_APPROVALS)
            return
        if code != 0:  # no window: the menu's "waiting" line and the notices show them, each one's time runs
            for hold in self.hub.pending_holds():
                self.hub.seen(hold.command_id)
        if code != 0 and self.hub.pending_holds():
            log.warning("the approval prompt exited with code %s", code)
            self.notifier.notify(
                _("A command is waiting for your approval"),
                _("The approval window could not open. Open the activity log to answer it."),
            )
            return
        if not self._quit.is_set():
            self.submit(menu.OPEN_APPROVALS)  # anything still waiting gets a new window

    # -- questions: loosening that someone asked for, confirmed by a click -------------------------

    def _ask_user(self, question: Question) -> None:
        with self._windows_lock:
            self._questions.append(question)
        self.submit(ASK_USER)

    def _show_next_question(self) -> None:
        """One confirm window at a time; the next question waits for the previous answer."""
        with self._windows_lock:
            if (self._confirm is not None and self._confirm.alive()) or not self._questions:
                return
            question = self._questions.pop(0)
            answered: list[bool] = []

            def said(message: dict[str, Any]) -> None:
                if message.get("op") == "answer" and not answered:
                    answered.append(message.get("yes") is True)
                    self.hub.answer(question, answered[0])

            def exited(code: int) -> None:
                if not answered:  # closed, killed, or no display: a No
                    answered.append(False)
                    if code != 0:
                        why = _("The confirmation window could not open, so nothing changed.")
                        self.hub.answer(question, False, why_not=why)
                        self.notifier.notify(menu.APP_TITLE, why)
                    else:
                        self.hub.answer(question, False)
                self.submit(ASK_USER)

            self._confirm = PipedWindow(self.confirm_command, said, on_exit=exited)
        self._confirm.send(
            {
                "op": "ask",
                "title": _("Cowork Terminal: confirm"),
                "text": question.text,
                "allow": question.allow_label,
                "deny": question.deny_label,
                "yours": question.yours,
            }
        )

    def open_settings(self) -> None:
        """The Settings window (one at a time): what it says goes through `_settings_said`."""
        if self._settings is not None and self._settings.alive():
            self._settings.close()
        self._settings = PipedWindow(self.settings_command, self._settings_said)
        self._push_settings()

    def _settings_said(self, message: dict[str, Any]) -> None:
        """A click in the Settings window, which only this tray started: applied like a menu click."""
        key, value = message.get("key"), str(message.get("value"))
        if message.get("op") == "set" and key == "approval_mode" and value in {m.value for m in approval.ApprovalMode}:
            self.submit(menu.SET_APPROVAL_MODE, value)
        elif (
            message.get("op") == "set" and key == "output_budget" and value in {str(b.setting) for b in BUDGET_CHOICES}
        ):
            self.submit(menu.SET_OUTPUT_BUDGET, value)
        elif message.get("op") == "set" and key == "autostart" and value in ("on", "off"):
            self.submit(menu.TOGGLE_AUTOSTART, value)
        else:
            self._push_settings()  # anything else (a click another program sent): show what holds

    def _push_settings(self) -> None:
        window = self._settings
        if window is None or not window.alive():
            return
        budget = self.hub.with_journal(output_budget)
        window.send(
            {"op": "state", "approval_mode": self.hub.state.approval_mode,
             "output_budget": str(budget.setting), "autostart": self._autostart is True}
        )  # fmt: skip

    def show_notice(self, title: str, text: str) -> None:
        """A window that tells the user something they must see (the confirm window with one button)."""
        notice = PipedWindow(self.confirm_command, lambda _message: None)
        notice.send({"op": "ask", "title": title, "text": text, "allow": "", "deny": _("OK"), "yours": True})
        with self._windows_lock:
            self._notices.append(notice)

    def open_welcome(self, *, first_run: bool = False) -> None:
        """The Welcome window: connect Claude step by step (first start, and "Getting started…").
        At the first run it turns start-at-login on, and shows how to turn it off."""
        argv = [
            *self.welcome_command,
            *([] if self.has_menu else ["--no-menu"]),
            *(["--first-run"] if first_run else []),
        ]
        if self._welcome is not None:
            _stop_process_now(self._welcome, WINDOW_STOP_GRACE_S)  # one at a time: a new one comes to the front
        self._welcome = spawn(argv)
        self.hub.with_journal(lambda journal: journal.set_setting(WELCOME_SHOWN_SETTING, True))
        log.info("welcome window started: %s", argv)

    def open_log_window(self) -> None:
        """Open the activity log; one window at most: reopening replaces it, so it comes to the front."""
        self._acknowledge.set()
        if not self.windows:
            self.notifier.notify(_("The activity log cannot open"), missing_tk_message(self.platform, self.has_menu))
            return
        for window in self._windows:
            window.close()
        self._window_stderr.parent.mkdir(parents=True, exist_ok=True)
        make_private_file(self._window_stderr)  # like every log the app writes: the user's eyes only
        with open(self._window_stderr, "wb") as stderr:
            window = PipedWindow([*self.log_window_command, "--tray-line"], self._log_window_said, stderr=stderr)
        window.send({"op": "state", "paused": self.hub.state.paused})
        window.send(holds_message(self.hub.pending_holds()))
        self._windows = [window]
        log.info("log window started (pid %s): %s", window.pid, self.log_window_command)

    def _tell_log_windows_holds(self, holds: list[HeldCommand]) -> None:
        """The log window shows the held commands as their servers told the tray (never the journal's
        text, which a command could rewrite): sent whenever they change."""
        for window in self._windows:
            window.send(holds_message(holds))

    def _log_window_said(self, message: dict[str, Any]) -> None:
        """The log window the tray started: its buttons are the user's clicks."""
        op, command_id = message.get("op"), message.get("id")
        if op == "pause":
            self.hub.set_paused(message.get("paused") is True, by=LOG_WINDOW_DECIDED_BY)
        elif op == "stop" and isinstance(command_id, int):
            with contextlib.suppress(Exception):
                self.hub.stop(command_id, by=LOG_WINDOW_DECIDED_BY)
        elif op == "decide" and isinstance(command_id, int):
            allowed = message.get("allowed") is True
            hold = next((h for h in self.hub.pending_holds() if h.command_id == command_id), None)
            if allowed and (hold is None or message.get("command") != hold.command):
                # The window shows the tray's own copy: an Allow for any other text is not the user's.
                log.warning("the log window allowed command #%s as a text the tray does not hold", command_id)
                return
            self.hub.decide(command_id, allowed=allowed, by=LOG_WINDOW_DECIDED_BY)
        elif op == "clear_history":
            self.hub.clear_history()
        elif op == "remove_rule" and isinstance(command_id, int):
            self.hub.remove_rule(command_id)
            self._kick()
        else:
            log.warning("the log window sent an unknown request %r", op)

    def _check_windows(self) -> None:
        """A log window that failed at once (no Tk, no display) is reported, not silently lost."""
        alive = []
        for window in self._windows:
            code = window.process.poll()
            if code is None:
                alive.append(window)
            elif code != 0:
                said = self._window_stderr.read_text(encoding="utf-8", errors="replace").strip()
                log.warning("the log window exited with code %s: %s", code, said[-4000:])
                lines = said.splitlines()
                # The last line says what failed ("cannot open ...: no display"); never a traceback.
                why = lines[-1].removeprefix("cowork-terminal: ").rstrip(".")[:300] if lines else ""
                self.notifier.notify(
                    _("The activity log could not open"),
                    _("{error}. The app log in {folder} has the details.").format(
                        error=why or _("It exited with code {code}").format(code=code), folder=self.paths.log_dir
                    ),
                )
        self._windows = alive


def _stop_process_now(process: subprocess.Popen[bytes], grace_s: float) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(grace_s)


def _note_signal(signum: int, _frame: Any) -> None:
    """The Python-level half of a quit signal: nothing, the wakeup socket already told the monitor."""


def _file_stamp(path: Path) -> tuple[float, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_mtime, info.st_size


def _server_view(record: ServerRecord, linked: set[int | None]) -> ServerView:
    # The app people know ("Claude Desktop"), not what it calls itself ("claude-ai 0.14").
    return ServerView(
        friendly_client_name(record.client_name), record.started_at, record.command_count, record.headless,
        record.id in linked,
    )  # fmt: skip


def _read_autostart() -> bool | None:
    try:
        return autostart.is_enabled()
    except CoworkError as exc:
        log.warning("cannot read the start-at-login setting: %s", exc)
        return None


def holds_message(holds: Sequence[HeldCommand]) -> dict[str, Any]:
    """What the log window is told of the held commands: the servers' own words, by id."""
    return {"op": "holds", "holds": [hold.to_window() for hold in holds]}


def run_tray(paths: AppPaths, lock: HeldLock) -> int:
    """The `tray` command after it took the tray lock: load pystray, build the app, run it."""
    # Not forbid_dumps() here: every server checks the tray's program through /proc/<pid>/exe, which
    # the kernel hides from other processes of a non-dumpable one (core/private_process.py).
    try:
        pystray = load_pystray()
    except Exception as exc:  # no display, no backend: the top of the process, say it plainly
        log.error("cannot show a tray icon: %r", exc)
        print(f"cowork-terminal: {no_icon_message(sys.platform, os.environ, exc)}", file=sys.stderr)
        return 1
    try:
        app = TrayApp(paths, lock, pystray)
    except AddressTaken as exc:
        log.error("cannot start: %s", exc)
        problem = _(
            "Cowork Terminal cannot start safely: {error}. Close that program (or restart the computer) and start "
            "Cowork Terminal again."
        ).format(error=exc)
        print(f"cowork-terminal: {problem}", file=sys.stderr)
        return 1
    return app.run()
