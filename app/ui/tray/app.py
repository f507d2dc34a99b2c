"""The tray app: the icon and the threads behind it, glued to pystray.

Threads and processes, and why:
- The main thread runs pystray's event loop (`Icon.run`): macOS requires it, and every backend
  is happiest there. Menu clicks arrive on it and only queue work, so the UI never waits on disk.
- "tray-monitor" polls the journal every POLL_S (a `data_version` check while nothing happens),
  lets the Supervisor notice crashed servers, takes requests from other processes (a second
  launch, `tray --quit`), computes a `TrayState` and, when the picture changed, pushes icon,
  tooltip and menu to the UI through `UiDispatcher`: a direct call where the backend marshals to
  its own loop itself (xorg, gtk, appindicator, win32), `AppHelper.callAfter` on macOS, where
  AppKit may only be touched from the main thread.
- "tray-actions" runs what clicks ask for (actions.py), one at a time: config edits, the `claude`
  CLI (up to a minute), the connection check (seconds), start at login, and the approval prompt's
  sync with the hub's holds (each new hold judged again, within HOLD_JUDGING_S).
- "tray-journal" runs the clicks that only write the journal (pause, approval mode), on their own
  queue and connection: a pause takes effect at once, never behind a slow action (nor behind the
  judging of held commands: a red team, 2026-12-06).
- Windows live in their own processes (windows.py), and so does "Check connection":
  `cowork-terminal check --json`, which starts the server as Claude would (claude_watch.py). The
  tray reads its verdict; it never loads the MCP SDK.

pystray is imported inside `load_pystray`, never at module import: importing this module costs
no display connection, and the backend can be chosen first.
"""

from __future__ import annotations

import logging
import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

from app.core import data_folder, open_files
from app.core.authority.hub import Hub, Question
from app.core.channel.transport import AddressTaken
from app.core.errors import CoworkError
from app.core.i18n import _, ngettext
from app.core.i18n.language import chosen_language
from app.core.journal.store import Journal
from app.core.liveness import HeldLock
from app.core.paths import AppPaths
from app.core.private_process import forbid_dumps
from app.core.program_identity import program_identity
from app.core.self_command import app_argv
from app.ui.connection_probe import CHECK_PROCESS_TIMEOUT_S, live_client_names
from app.ui.tray import actions, menu
from app.ui.tray.actions import FIRST_LOOK, JOURNAL_ACTIONS, WINDOW_ACTIONS
from app.ui.tray.claude_watch import ClaudeWatch
from app.ui.tray.loop import Monitor
from app.ui.tray.menu import MenuEntry
from app.ui.tray.platforms import (
    Notifier,
    UiDispatcher,
    backend_of,
    load_pystray,
    main_thread_marshal,
    no_icon_message,
    tk_available,
)
from app.ui.tray.pystray_menu import PystrayMenu, find_item
from app.ui.tray.signals import Wakeup
from app.ui.tray.tray_state import TrayState
from app.ui.tray.windows import TrayWindows

if TYPE_CHECKING:
    from app.core.authority.command_host import CommandHost, RunnerOpener

log = logging.getLogger(__name__)

POLL_S = 0.25  # the icon follows the journal within this (the requirement is half a second)
QUIT_TIMEOUT_S = 3.0  # after this, a quit whose event loop did not return ends the process anyway
THREAD_JOIN_S = 2.0
ICON_SIZE_PX = 64  # every backend scales it; 64 px stays sharp up to 2x panels
ICON_NAME = "cowork-terminal"
_STOP = object()


class TrayApp:
    """The running tray: state, icon and the worker threads. `run()` blocks the main thread."""

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
        open_runner: RunnerOpener | None = None,
        warm_runner: Callable[[], None] | None = None,
    ) -> None:
        # Which program's files this tray runs from, noted first: windows start from the files on disk,
        # and once they are replaced (an update or a downgrade while it runs) none opens (windows.py).
        self.program = program_identity()
        self.paths = data_folder.ensure(paths)
        # Create and migrate the journal here, once: two threads switching a brand-new database to
        # WAL at the same moment fail with "database is locked" (SQLite does not wait for that).
        Journal(self.paths).close()
        self._lock = lock
        self.backend = backend_of(pystray)
        self.platform = platform
        self.poll_s = poll_s
        frozen = bool(getattr(sys, "frozen", False))
        self.log_window_command = list(log_window_command or app_argv(frozen, sys.executable, "log-window"))
        self.approval_prompt_command = app_argv(frozen, sys.executable, "approval-prompt")
        self.confirm_command = app_argv(frozen, sys.executable, "confirm-window")
        self.settings_command = app_argv(frozen, sys.executable, "settings-window")
        self.uninstall_window_command = app_argv(frozen, sys.executable, "uninstall-window")
        self.welcome_command = list(welcome_command or app_argv(frozen, sys.executable, "welcome"))
        # The windows need Tk; a Python without it still runs the tray, and the menu answers instead.
        self.windows = tk_available()
        self._ui = UiDispatcher(marshal if marshal is not None else main_thread_marshal(self.backend))
        self.has_loop = self.backend != "dummy"  # the dummy backend imports but cannot run
        self.wakeup = Wakeup()

        self.state = TrayState()
        self.icon_state = menu.icon_state(self.state)
        self._entries_for: tuple[TrayState, list[MenuEntry]] = (self.state, menu.build_menu(self.state))
        self._images: dict[str, Any] = {}
        self._menu = PystrayMenu(pystray, self.entries, self.click)
        self.icon = pystray.Icon(
            ICON_NAME, icon=self._image(self.icon_state), title=menu.tooltip(self.state), menu=self.menu()
        )
        self.notifier = Notifier(self.icon, self.backend, self._ui, platform=platform)
        # The xorg fallback shows an icon with no menu: notices must not send the user to one.
        self.has_menu = bool(getattr(self.icon, "HAS_MENU", True))
        self.claude = ClaudeWatch(
            self.notifier,
            has_menu=self.has_menu,
            check_command=check_command or app_argv(frozen, sys.executable, "check"),
            check_timeout_s=check_timeout_s,
            kick=self.kick,
            live_clients=self._live_clients,
        )
        self.tray_windows = TrayWindows(self)
        self.monitor = Monitor(self)

        # Shared between threads; each is replaced whole, never mutated in place.
        self.autostart: bool | None = False
        self.language = chosen_language(self.paths.data_dir)  # None: the OS's language
        self.problem: str | None = None
        self.confirming: str | None = None  # without Tk: the app whose "Disconnect…" asks in the menu
        self.paused_until: float | None = None  # a timed pause: when this tray resumes by itself

        self._jobs: queue.Queue[Any] = queue.Queue()
        self._journal_jobs: queue.Queue[Any] = queue.Queue()
        self._window_jobs: queue.Queue[Any] = queue.Queue()  # the approval prompt's syncs (WINDOW_ACTIONS)
        self._quit = threading.Event()
        self._stopped = threading.Event()
        self._progress = threading.Condition()
        self._pending = 0
        self._ticks = 0
        self._threads: list[threading.Thread] = []
        self._main_running = False

        # The user's authority: servers and the CLI reach it over the channel; it refuses to start
        # (AddressTaken) when another program already listens at the tray's address.
        self.hub = Hub(
            self.paths,
            notify=lambda title, message: self.notifier.notify(title, message),
            on_change=self.kick,
            ask_user=self.tray_windows.ask_user,
            on_holds=lambda: self.submit(menu.OPEN_APPROVALS),
            open_log=lambda: self.submit(menu.OPEN_LOG),
            quit_app=self.request_quit,
        )
        # The tray runs the tool calls servers hand it, from one thread of its own (issue 21).
        self.command_host: CommandHost | None = None
        if open_runner is not None:
            from app.core.authority.command_host import CommandHost as Host  # anyio: only when it runs calls

            self.command_host = Host(open_runner, warm_runner)
            self.command_host.start()
            self.hub.command_host = self.command_host
        try:
            self.hub.start()
        except AddressTaken:  # nothing of this tray lives on while the person reads why
            if self.command_host is not None:
                self.command_host.close()
            self.hub.close()
            raise

    # -- the menu: built from the model each time pystray asks ------------------------------

    def menu(self) -> Any:
        """A pystray menu whose items are rebuilt from the current state whenever it is read."""
        return self._menu.menu()

    def entries(self) -> list[MenuEntry]:
        """The menu model for the current state (cached until the state changes)."""
        state, entries = self._entries_for
        if state is not self.state:
            state = self.state
            entries = menu.build_menu(state)
            self._entries_for = (state, entries)
        return entries

    def pystray_item(self, key: str) -> Any:
        """The pystray item for `key` in a freshly built menu (calling it with the icon clicks it)."""
        found = find_item(self.icon.menu.items, key)
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
            drawn = self._menu.drawn_check(key)  # what the user saw decides, not a later state
            target = "off" if (entry.checked if drawn is None else drawn) else "on"
        self.submit(entry.action, target)

    def submit(self, action: str, target: str | None = None) -> None:
        """Queue an action (actions.ACTIONS) for a worker thread (thread-safe)."""
        with self._progress:
            self._pending += 1
        if action in JOURNAL_ACTIONS:
            jobs = self._journal_jobs
        else:
            jobs = self._window_jobs if action in WINDOW_ACTIONS else self._jobs
        jobs.put((action, target))

    def perform(self, action: str, target: str | None = None) -> None:
        """Do one action now, on the calling thread (the actions thread, or a test)."""
        actions.perform(self, action, target)

    def _live_clients(self) -> set[str]:
        servers = self.hub.live_servers()
        return live_client_names(servers)

    def refresh_clients(self) -> None:
        """Look at every Claude client's config again (see ClaudeWatch.refresh)."""
        self.claude.refresh()

    # -- lifetime ---------------------------------------------------------------------------

    def run(self) -> int:
        """Run until Quit, SIGTERM/SIGINT or a `quit` request; releases the tray lock at the end."""
        self._main_running = True
        self.wakeup.install_signal_wakeup()
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
            ("tray-monitor", self.monitor.run, ()),
            ("tray-actions", self._actions, (self._jobs,)),
            ("tray-journal", self._actions, (self._journal_jobs,)),
            ("tray-windows", self._actions, (self._window_jobs,)),
        )
        for name, target, args in workers:
            thread = threading.Thread(target=target, args=args, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)

    def request_quit(self) -> None:
        """Thread-safe: the monitor thread stops the icon, then `run()` returns."""
        self._quit.set()
        self.kick()

    def quitting(self) -> bool:
        """Whether a quit was asked for."""
        return self._quit.is_set()

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

        def quit_now() -> str:
            self.request_quit()
            return _("Quitting.")

        self.tray_windows.ask_user(Question("quit", text, _("Stop and quit"), _("Cancel"), quit_now, yours=True))

    def shutdown(self) -> None:
        """Stop the threads and the windows this tray opened, then let go of the tray lock."""
        self._quit.set()
        self.kick()
        self._jobs.put(_STOP)
        self._journal_jobs.put(_STOP)
        self._window_jobs.put(_STOP)
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(THREAD_JOIN_S)  # the actions thread may be inside a check: it is a daemon
        self.tray_windows.close_all()
        self.notifier.withdraw()
        if self.command_host is not None:  # what the tray runs ends first, and its servers are told why
            self.command_host.close()
        from app.core.execution import lone_files  # here: importing the tray loads no anyio

        lone_files.end_containers()  # and what commands left behind, before the guard of start-up files goes
        self.hub.close()  # servers end what runs: nobody would watch it any more
        if self._lock is not None:
            self._lock.release()
            self._lock = None
        self._stopped.set()
        log.info("tray stopped")

    def stop_icon(self) -> None:
        """The monitor ended: stop the icon, so that `run()` returns (and shuts the tray down)."""
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
        for window in self.tray_windows.log_windows:
            window.close()
        self.hub.close()
        logging.shutdown()
        os._exit(0)  # the OS releases the tray lock with the process

    def kick(self) -> None:
        """Wake the monitor thread now (thread-safe)."""
        self.wakeup.kick()

    def acknowledge_crashes(self) -> None:
        """The user opened the activity log: the crash notice in the menu has been seen."""
        self.monitor.acknowledge_crashes()

    def read_rules_and_holds(self) -> None:
        """Read the user's rules and the held commands again for the menu (see Monitor)."""
        self.monitor.read_rules_and_holds()

    def count_tick(self) -> None:
        """The monitor finished one round: `settle()` waits for these."""
        with self._progress:
            self._ticks += 1
            self._progress.notify_all()

    def settle(self, timeout_s: float = 10.0) -> bool:
        """Wait until every queued action ran and the icon shows the result; False on timeout."""
        deadline = time.monotonic() + timeout_s
        with self._progress:
            if not self._progress.wait_for(lambda: self._pending == 0, timeout_s):
                return False
            target = self._ticks + 1
        self.kick()
        with self._progress:
            return self._progress.wait_for(lambda: self._ticks > target, max(0.0, deadline - time.monotonic()))

    def show(self, state: TrayState) -> None:
        """The monitor composed a new state: push icon, tooltip and menu to the UI, and to an open
        activity log the rules the tray applies when they changed (made, removed, or a session's gone)."""
        if state.rules != self.state.rules:
            self.tray_windows.tell_log_windows_rules()
        name, title = menu.icon_state(state), menu.tooltip(state)
        image = self._image(name)
        # The icon's name before the state: whoever sees the new state sees its icon (a test does).
        self.icon_state = name
        self.state = state

        def apply() -> None:
            if self.icon.icon is not image:
                self.icon.icon = image
            self.icon.title = title
            if self.has_loop:
                self.icon.update_menu()

        self._ui(apply)

    def _image(self, name: str) -> Any:
        if name not in self._images:
            from app.ui.icons import load_icon

            self._images[name] = load_icon(name, ICON_SIZE_PX)
        return self._images[name]

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
            actions.perform(self, action, target)
        except CoworkError as exc:  # a failure the user can act on: its message says how
            self.notifier.notify(menu.APP_TITLE, exc.for_person())
        except Exception:  # the top of one action: log it, tell the user, keep the tray alive
            log.exception("action %s failed", action)
            self.notifier.notify(
                menu.APP_TITLE, _("Something went wrong ({action}). The app log has the details.").format(action=action)
            )
        finally:
            self.kick()


def run_tray(
    paths: AppPaths,
    lock: HeldLock,
    open_runner: RunnerOpener | None = None,
    warm_runner: Callable[[], None] | None = None,
) -> int:
    """The `tray` command after it took the tray lock: load pystray, build the app, run it."""
    forbid_dumps()  # before anything of the user's is held in memory (core/private_process.py)
    open_files.raise_limit()  # it runs every server's commands
    try:
        pystray = load_pystray()
    except Exception as exc:  # no display, no backend: the top of the process, say it plainly
        log.error("cannot show a tray icon: %r", exc)
        print(f"cowork-terminal: {no_icon_message(sys.platform, os.environ, exc)}", file=sys.stderr)
        return 1
    try:
        app = TrayApp(paths, lock, pystray, open_runner=open_runner, warm_runner=warm_runner)
    except AddressTaken as exc:  # said as every problem at start is: a window where nobody reads stderr
        log.error("cannot start: %s", exc)
        problem = _(
            "Cowork Terminal cannot start safely: {error}. Close that program (or restart the computer) and start "
            "Cowork Terminal again."
        ).format(error=exc)
        raise CoworkError(problem) from None
    return app.run()
