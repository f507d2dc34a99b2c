"""What each menu action does: one small function per action, looked up in `ACTIONS`.

Every function runs on a worker thread (the tray's "tray-actions" or "tray-journal" queue) or in a
test, never on the UI thread. Loosening actions are here only because a click in the tray's own
menu or windows asked for them: nothing a server or a command sends reaches this table.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import subprocess
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Protocol

from app import __version__
from app.core import i18n, settings
from app.core.authority.hub import Hub, Question, RequestError
from app.core.claude import locations as cl
from app.core.errors import CoworkError
from app.core.execution.bash_resolver import BashNotFoundError, find_bash
from app.core.execution.output import parse_budget
from app.core.i18n import _
from app.core.i18n.language import choose_language, system_language
from app.core.install import autostart, stale_entries
from app.core.paths import AppPaths
from app.core.policy import approval
from app.ui.tray import menu
from app.ui.tray.claude_watch import ClaudeWatch
from app.ui.tray.platforms import (
    SHOW_FOLDER_TIMEOUT_S,
    Notifier,
    bash_problem,
    connect_hint,
    looser_hint,
    missing_tk_message,
    missing_tray_support,
    open_folder_argv,
    run_captured,
    spawn,
    system_has_gi,
)
from app.ui.tray.windows import ASK_USER, TrayWindows

log = logging.getLogger(__name__)

DECIDED_IN_MENU = "user (tray menu)"
TIMED_PAUSE_BY = "user (timed pause)"  # the pause a "Pause for…" click set: the one its timer may end
# Actions that only run inside the tray (not from a menu entry).
FIRST_LOOK = "first-look"
REFRESH_CLIENTS = "refresh-clients"
# Quick actions (the user's controls, the confirm window): their own queue, so nothing slow (a
# connection check, the `claude` CLI) ever delays them. Never the approval prompt's sync (OPEN_APPROVALS):
# it judges each new hold again, up to HOLD_JUDGING_S each, and five holds of a command naming eight
# 250 kB scripts kept a Pause waiting 4 s behind it (a red team, 2026-12-06). That sync has a queue of
# its own too (WINDOW_ACTIONS): behind the `claude` CLI (up to a minute) a new hold's prompt would come
# after the client gave up on the call (a review, 2026-12-06).
JOURNAL_ACTIONS = frozenset(
    {
        menu.TOGGLE_PAUSE,
        menu.PAUSE_FOR,
        menu.SET_APPROVAL_MODE,
        menu.TOGGLE_CONTAINER,
        menu.SET_OUTPUT_BUDGET,
        ASK_USER,
    }
)
WINDOW_ACTIONS = frozenset({menu.OPEN_APPROVALS})


class ActionsApp(Protocol):
    """What an action reaches of the tray (app.TrayApp): the hub's public controls, its windows and
    notices, and the few fields the menu shows (each replaced whole)."""

    hub: Hub
    paths: AppPaths
    platform: str
    backend: str
    windows: bool
    has_menu: bool
    has_loop: bool
    notifier: Notifier
    claude: ClaudeWatch
    tray_windows: TrayWindows
    uninstall_window_command: list[str]
    autostart: bool | None
    language: str | None
    problem: str | None
    confirming: str | None
    paused_until: float | None

    def submit(self, action: str, target: str | None = None) -> None: ...
    def read_rules_and_holds(self) -> None: ...


Action = Callable[[ActionsApp, "str | None"], None]


def perform(app: ActionsApp, action: str, target: str | None = None) -> None:
    """Do one action now, on the calling thread."""
    run = ACTIONS.get(action)
    if run is None:
        log.warning("unknown action %r ignored", action)
        return
    run(app, target)


# -- the user's controls (the journal queue) ----------------------------------------------------


def toggle_pause(app: ActionsApp, target: str | None) -> None:
    app.paused_until = None  # a click on the switch replaces any timed pause
    app.hub.set_paused(target == "on", by="user (tray menu)")


def pause_for(app: ActionsApp, target: str | None) -> None:
    until = menu.resume_time(str(target), datetime.now())
    app.paused_until = until.timestamp()
    app.hub.set_paused(True, by=TIMED_PAUSE_BY)
    log.info("host access paused from the tray menu until %s", until)


def set_approval_mode(app: ActionsApp, target: str | None) -> None:
    app.hub.set_settings(approval_mode=approval.ApprovalMode(str(target)).value)
    log.info("approval mode set to %s from the tray", target)
    app.tray_windows.push_settings()


def toggle_container(app: ActionsApp, _target: str | None) -> None:
    """The user's click: the one way to switch the OS container off."""
    app.hub.set_settings(container=not app.hub.container)
    log.info("commands %s from the tray", "contained" if app.hub.container else "not contained")
    app.tray_windows.push_settings()


def set_budget(app: ActionsApp, target: str | None) -> None:
    budget = parse_budget(str(target))
    app.hub.set_output_budget(budget)
    log.info("output budget set to %s from the tray", target)
    app.tray_windows.push_settings()


def open_approvals(app: ActionsApp, _target: str | None) -> None:
    app.tray_windows.sync_approval_prompt()


def ask_user(app: ActionsApp, _target: str | None) -> None:
    app.tray_windows.show_next_question()


# -- held commands, running jobs and rules ------------------------------------------------------


def deny(app: ActionsApp, target: str | None) -> None:
    """Deny in the menu (a tray without windows lists held commands there; it allows none: only the
    approval window, which shows a command whole, does)."""
    if app.hub.decide(int(str(target)), allowed=False, by=DECIDED_IN_MENU):
        log.info("held command %s denied from the tray menu", target)
    app.read_rules_and_holds()


def stop_job(app: ActionsApp, target: str | None) -> None:
    """A tightening: at once."""
    try:
        log.info("%s", app.hub.stop(int(str(target))))
    except RequestError as gone:  # it ended in the meantime
        log.info("%s", gone)


def remove_rule(app: ActionsApp, target: str | None) -> None:
    app.hub.remove_rule(int(str(target)))
    app.read_rules_and_holds()
    log.info("rule %s removed from the tray menu", target)


# -- Claude apps --------------------------------------------------------------------------------


def change_client(app: ActionsApp, target: str | None, *, action: str) -> None:
    app.confirming = None
    app.claude.change(action, str(target))


def check_client(app: ActionsApp, target: str | None) -> None:
    app.claude.check(str(target))


def refresh_clients(app: ActionsApp, _target: str | None) -> None:
    app.claude.refresh()


def ask_disconnect(app: ActionsApp, target: str | None) -> None:
    """ "Disconnect…": ask in the confirm window, then disconnect on yes. Without Tk, the menu
    itself asks (a "Yes, disconnect" item takes the place of "Disconnect…")."""
    client_id = str(target)
    location = app.claude.location(client_id)
    if not app.windows:
        app.confirming = client_id
        return

    def disconnect() -> str:
        app.submit(menu.DISCONNECT, client_id)
        return _("Disconnecting {client}.").format(client=location.name)

    app.tray_windows.ask_user(
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


# -- this app: windows, start at login, language ------------------------------------------------


def toggle_autostart(app: ActionsApp, target: str | None) -> None:
    if target == "on":
        autostart.enable()
    else:
        autostart.disable()
    app.autostart = read_autostart()
    app.tray_windows.push_settings()


def set_language(app: ActionsApp, target: str | None) -> None:
    picked = None if target == menu.FOLLOW_SYSTEM else str(target)
    choose_language(app.paths.data_dir, picked)  # windows opened from now on read it too
    i18n.use_language(picked or system_language())
    app.language = picked
    log.info("language set to %s from the tray", picked or "the system's")


def open_log(app: ActionsApp, _target: str | None) -> None:
    app.tray_windows.open_log_window()


def open_welcome(app: ActionsApp, _target: str | None) -> None:
    app.tray_windows.open_welcome()


def open_settings(app: ActionsApp, _target: str | None) -> None:
    app.tray_windows.open_settings()


def open_data_folder(app: ActionsApp, _target: str | None) -> None:
    """Show the data folder; where no file manager answers on Linux, the notice names it."""
    argv = open_folder_argv(app.platform, app.paths.data_dir)
    if not app.platform.startswith("linux"):
        spawn(argv)
        return
    try:
        shown = run_captured(argv, SHOW_FOLDER_TIMEOUT_S)[0] == 0
    except (OSError, subprocess.TimeoutExpired):
        shown = False
    if not shown:
        app.notifier.notify(menu.APP_TITLE, _("The data folder is {folder}").format(folder=app.paths.data_dir))


def uninstall(app: ActionsApp, _target: str | None) -> None:
    # The window asks, then quits this tray itself; not from files replaced since the tray started.
    app.tray_windows.open_uninstall(app.uninstall_window_command)


def show_about(app: ActionsApp, _target: str | None) -> None:
    _tell(app, _("About Cowork Terminal"), menu.about_text(__version__))


def show_help(app: ActionsApp, _target: str | None) -> None:
    _tell(app, *menu.help_notice())


def _tell(app: ActionsApp, title: str, text: str) -> None:
    """A window when Tk is there, else a notification."""
    (app.tray_windows.show_notice if app.windows else app.notifier.notify)(title, text)


# -- the first look at start ---------------------------------------------------------------------


def first_look(app: ActionsApp, _target: str | None = None) -> None:
    """At start: bash first (nothing works without it), then Claude apps, then start at login."""
    log.info("tray started (backend %s, pid %s)", app.backend, os.getpid())
    has_gi = importlib.util.find_spec("gi") is not None
    missing = missing_tray_support(
        app.platform, app.backend, executable=sys.executable, has_gi=has_gi, system_gi=system_has_gi()
    )
    if missing:
        log.warning("%s", missing)
        app.notifier.notify(_("Tray menu unavailable"), missing)
        if app.windows:  # some desktops show no notifications: this must be seen
            app.tray_windows.show_notice(_("Tray menu unavailable"), missing)
    if app.has_loop and not app.has_menu:
        app.tray_windows.open_log_window()  # without a menu, the window is where the controls are
    try:
        find_bash()
    except BashNotFoundError as exc:
        app.problem = bash_problem(exc, app.platform)
        app.notifier.notify(app.problem, exc.for_person())
    _say_if_unprotected(app)
    _repair_stale_entries(app)
    if not app.windows:
        said = missing_tk_message(app.platform, app.has_menu)
        app.notifier.notify(_("Cowork Terminal's windows cannot open"), said)
    app.claude.refresh()
    app.autostart = read_autostart()
    loose = app.hub.looser_than_default()
    if loose:  # set while no tray watched, perhaps by a program: the user should know
        mode = approval.ApprovalMode(app.hub.approval_mode).label
        app.notifier.notify(
            _("Cowork Terminal asks less than usual"),
            _("Approvals: {mode}.").format(mode=mode) + " " + looser_hint(app.has_menu),
        )
    carried = app.hub.rules_from_before()
    if carried:  # read from the file, not made in this run: the user sees them before they count for long
        app.notifier.notify(
            _("Rules from a previous run are in force"),
            "; ".join(rule.shown() for rule in carried)
            + ". "
            + _("If you did not make them, remove them in the activity log."),
        )
    shown = bool(app.hub.get_setting(settings.WELCOME_SHOWN, False))
    not_connected = app.claude.not_connected()
    if app.windows and not_connected and (not shown or not app.has_menu):
        # The first start (or no menu to find it in): it walks the user through.
        app.tray_windows.open_welcome(first_run=not shown)
    elif app.problem is None and not_connected:
        app.notifier.notify(_("Connect Cowork Terminal to Claude"), connect_hint(app.has_menu, app.windows))


def _say_if_unprotected(app: ActionsApp) -> None:
    """Once at start: commands run without the OS container (issue 21), in plain words and how to fix it."""
    from app.core.execution import container, start_files

    # A start-up file a command created is moved aside: the user hears of it here (start_files.py).
    start_files.tell_user = lambda title, message: app.notifier.notify(title, message)
    found = container.for_paths(app.paths, in_tray=True)  # the one its commands run in
    said = container.person_message(found.state, found.scoping)
    if said:
        log.warning("commands are less protected: %s", container.log_message(found.state, found.detail, found.scoping))
        app.notifier.notify(_("Commands are less protected"), said)
    linked = container.linked_program_file(found.protected.program) if container.guards_by_name(found) else None
    if linked is not None:  # the read-only bind (macOS: the profile) covers one of its names
        log.warning("commands can change the program's files through another name (a hard link): %s", linked)
        app.notifier.notify(_("Cowork Terminal's files are not protected"), container.linked_message())


def _repair_stale_entries(app: ActionsApp) -> None:
    """Start at login and Claude's entries that name a removed program or another copy run this one."""
    platform, environ, home = cl.this_machine()
    frozen = bool(getattr(sys, "frozen", False))
    for repair in stale_entries.repair_stale_entries(
        frozen=frozen, executable=os.path.abspath(sys.executable), platform=platform, environ=environ, home=Path(home)
    ):
        app.notifier.notify(repair.title, repair.notice)


def read_autostart() -> bool | None:
    """Whether start at login is on; None when the setting cannot be read (said in the app log)."""
    try:
        return autostart.is_enabled()
    except CoworkError as exc:
        log.warning("cannot read the start-at-login setting: %s", exc)
        return None


ACTIONS: dict[str, Action] = {
    FIRST_LOOK: first_look,
    ASK_USER: ask_user,
    REFRESH_CLIENTS: refresh_clients,
    menu.OPEN_LOG: open_log,
    menu.TOGGLE_PAUSE: toggle_pause,
    menu.PAUSE_FOR: pause_for,
    menu.CONNECT: lambda app, target: change_client(app, target, action=menu.CONNECT),
    menu.DISCONNECT: lambda app, target: change_client(app, target, action=menu.DISCONNECT),
    menu.CHECK: check_client,
    menu.TOGGLE_AUTOSTART: toggle_autostart,
    menu.OPEN_APPROVALS: open_approvals,
    menu.SET_APPROVAL_MODE: set_approval_mode,
    menu.TOGGLE_CONTAINER: toggle_container,
    menu.SET_OUTPUT_BUDGET: set_budget,
    menu.UNINSTALL: uninstall,
    menu.SET_LANGUAGE: set_language,
    menu.OPEN_DATA_FOLDER: open_data_folder,
    menu.ASK_DISCONNECT: ask_disconnect,
    menu.DENY: deny,
    menu.STOP_JOB: stop_job,
    menu.REMOVE_RULE: remove_rule,
    menu.OPEN_WELCOME: open_welcome,
    menu.OPEN_SETTINGS: open_settings,
    menu.SHOW_ABOUT: show_about,
    menu.SHOW_HELP: show_help,
}
