"""The Welcome window: from first start to a working, checked connection, without the README.

A Tk window in its own process (like the log window; Tk and pystray in one process crash on
macOS). The tray opens it on its first start and from "Getting started…" in its menu; `cowork-
terminal welcome` opens it too. It says what the app does in one sentence, then three steps:
connect each Claude app found (one big button each), restart Claude (with a button where the app
can do it: `claude.locations.can_restart`), and "Try it", which runs the same connection check as
the tray and shows success or the reason. The tray records that it showed it (WELCOME_SHOWN_SETTING).
Connect, Restart, Check and the start-at-login box act on Claude and this computer, so they are
armed like the approval prompt's buttons (`real_input.ArmedButtons`): a moment after they show, and
only for real input.

Slow work (reading the configs, connecting through `claude mcp add`, the check) runs on worker threads; they hand
results to the Tk thread through a queue read every POLL_MS, because Tk may only be touched from
the thread that created it.
"""

from __future__ import annotations

import argparse
import functools
import logging
import queue
import sys
import threading
import tkinter as tk
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from tkinter import ttk
from typing import Any

from app.core import settings
from app.core.claude import config as cc
from app.core.claude import locations as cl
from app.core.errors import CoworkError
from app.core.i18n import N_, _
from app.core.install import autostart
from app.core.journal.store import Journal
from app.core.paths import AppPaths
from app.core.self_command import app_argv
from app.ui.connection_probe import CHECK_PROCESS_TIMEOUT_S, check_notice, live_client_names, run_check
from app.ui.tray.platforms import run_captured
from app.ui.tray.tray_state import client_state_text
from app.ui.windows.look import SCREEN_MARGIN_PX, keep_within_screen, new_root, use_native_look
from app.ui.windows.real_input import ArmedButtons, protect_window

log = logging.getLogger(__name__)

TITLE = N_("Welcome to Cowork Terminal")
WELCOME_SHOWN_SETTING = settings.WELCOME_SHOWN
POLL_MS = 100
WATCH_MS = 1000  # how often the window looks for Claude's first real connection
RESTART_TIMEOUT_S = 40.0
WRAP_PX = 560
RESULTS_ROOM_PX = 110  # room kept for the check's answer and the live step, so the window never grows
WIDE_WRAP_PX = 900  # the texts' width on a screen too short for the window: fewer lines, a shorter window
FRAME_PAD_PX = 18
INTRO = N_(
    "Cowork Terminal lets Claude run commands on this computer while you stay in charge: you see "
    "everything it runs, dangerous commands wait for your OK, and you can pause it at any time."
)
AUTOSTART_LABEL = N_("Start Cowork Terminal when I log in")
AUTOSTART_WHY = N_("Claude can use this computer only while Cowork Terminal runs. You can change this in its menu.")
ALL_SET = N_("You're all set: try asking Claude “What is in my Downloads folder?”")
RESTART_TEXT = N_(
    "Quit Claude completely and open it again: it reads its settings only when it starts "
    "(closing its window is not enough)."
)


@dataclass(frozen=True)
class AppRow:
    """One Claude app as the window shows it."""

    client_id: str
    name: str
    installed: bool
    state: str

    @property
    def connected(self) -> bool:
        return self.state == cc.CURRENT


def look_for_apps() -> tuple[str, list[AppRow], dict[str, cl.ClientLocation]]:
    """(platform, each Claude app with the state of our entry, their locations). Slow: asks `claude`."""
    platform, locations = cl.clients_here()
    wanted = cc.this_app_entry()
    rows = []
    for location in locations:
        status = cc.client_status(location, wanted)
        rows.append(AppRow(status.client_id, status.name, status.installed, status.state))
    return platform, rows, {loc.client_id: loc for loc in locations}


class WelcomeWindow:
    """The window; `run_in_background` is how slow work leaves the Tk thread (tests may run it inline)."""

    def __init__(
        self,
        root: tk.Tk,
        *,
        check_command: Sequence[str],
        restart_command: Sequence[str],
        menu_hint: bool = True,
        check_timeout_s: float = CHECK_PROCESS_TIMEOUT_S,
        first_run: bool = False,
    ) -> None:
        self.root = root
        self.check_command = list(check_command)
        self.restart_command = list(restart_command)
        self.check_timeout_s = check_timeout_s
        self.platform = sys.platform
        self.apps: list[AppRow] | None = None
        self.locations: dict[str, cl.ClientLocation] = {}
        self._results: queue.Queue[Callable[[], None]] = queue.Queue()
        self.busy = 0  # background jobs still running (tests wait for 0)
        self.seen: set[str] = set()  # the apps whose own server connected while this window was open
        self.waiting_check: str | None = None  # the app a passed check said "has not connected yet" of
        self._watching = False
        root.title(_(TITLE))
        root.minsize(600, 480)
        # Never taller or wider than the screen: Done must stay where the person can click it.
        keep_within_screen(root)
        style = use_native_look(root)
        style.configure("Big.TButton", font=("TkDefaultFont", 12, "bold"), padding=(14, 8))
        style.configure("Step.TLabel", font=("TkDefaultFont", 12, "bold"))

        self.frame = frame = ttk.Frame(root, padding=FRAME_PAD_PX)
        frame.pack(fill="both", expand=True)
        # Packed first, at the bottom: when the texts grow, Done is never the part that is cut.
        bottom = ttk.Frame(frame)
        bottom.pack(fill="x", side="bottom", pady=(12, 0))
        ttk.Label(frame, text=_(TITLE), font=("TkDefaultFont", 16, "bold")).pack(anchor="w")
        self.intro = ttk.Label(frame, text=_(INTRO), wraplength=WRAP_PX, justify="left")
        self.intro.pack(anchor="w", pady=(6, 14))

        ttk.Label(frame, text=_("1. Connect Claude"), style="Step.TLabel").pack(anchor="w")
        self.apps_frame = ttk.Frame(frame)
        self.apps_frame.pack(fill="x", pady=(4, 12))
        self.looking = ttk.Label(self.apps_frame, text=_("Looking for Claude apps..."))
        self.looking.pack(anchor="w")
        self.connect_buttons: dict[str, ttk.Button] = {}
        self.real_input = ArmedButtons(root)  # Connect: a real click, once the list has shown a moment
        self.state_labels: dict[str, ttk.Label] = {}

        ttk.Label(frame, text=_("2. Restart Claude"), style="Step.TLabel").pack(anchor="w")
        self.restart_text = ttk.Label(frame, text=_(RESTART_TEXT), wraplength=WRAP_PX, justify="left")
        self.restart_text.pack(anchor="w", pady=(4, 0))
        self.restart_buttons = ttk.Frame(frame)
        self.restart_buttons.pack(anchor="w", pady=(4, 12))
        self.restart_result = ttk.Label(frame, wraplength=WRAP_PX, justify="left")
        # Restart and Check act on Claude and this computer: a real click, once they have shown a moment.
        self.step_input = ArmedButtons(root)

        ttk.Label(frame, text=_("3. Try it"), style="Step.TLabel").pack(anchor="w")
        ttk.Label(
            frame, wraplength=WRAP_PX, justify="left",
            text=_("Start Cowork Terminal the way Claude does and run a harmless command through it."),
        ).pack(anchor="w", pady=(4, 4))  # fmt: skip
        self.check_buttons = ttk.Frame(frame)
        self.check_buttons.pack(anchor="w")
        self.check_result = ttk.Label(frame, wraplength=WRAP_PX, justify="left", font=("TkDefaultFont", 11))
        self.check_result.pack(anchor="w", pady=(6, 0))
        # Driven by Claude's first real connection (its server's row in the journal), not by our check.
        self.live = ttk.Label(frame, wraplength=WRAP_PX, justify="left", font=("TkDefaultFont", 11, "bold"))
        self.live.pack(anchor="w", pady=(6, 0))

        self.autostart_on = tk.BooleanVar(root, value=False)
        self.autostart_box = ttk.Checkbutton(frame, text=_(AUTOSTART_LABEL), variable=self.autostart_on)
        # Start at login changes this computer: a real click, once the box shows the setting as it is
        # (greyed until then); a program's click puts the tick back.
        self.autostart_input = ArmedButtons(root)
        self.autostart_input.guard(self.autostart_box, self._autostart_clicked, refused=self._autostart_untouched)
        self.autostart_box.state(["disabled"])
        self._autostart_known = False
        self.autostart_box.pack(anchor="w", pady=(16, 0))
        self.autostart_problem = ttk.Label(frame, foreground="#555555", wraplength=WRAP_PX, justify="left")
        self.autostart_problem.configure(text=_(AUTOSTART_WHY))
        self.autostart_problem.pack(anchor="w", padx=(24, 0))

        if menu_hint:
            hint = _("Getting started… in the icon's menu opens this again.")
            ttk.Label(bottom, foreground="#555555", text=hint).pack(side="left")
        self.done_button = ttk.Button(bottom, text=_("Done"), command=root.destroy)
        self.done_button.pack(side="right")

        root.after(POLL_MS, self._take_results)
        self.in_background(look_for_apps, self._show_apps)
        self.in_background(lambda: _start_at_login(first_run), self._show_autostart)
        self._fixed_size = False

    # -- plumbing: slow work off the Tk thread -----------------------------------------------------

    def in_background(self, work: Callable[[], Any], then: Callable[[Any], None]) -> None:
        self.busy += 1

        def run() -> None:
            try:
                result: Any = work()
            except Exception as exc:  # the top of a worker thread: log it, show it
                log.exception("welcome window: background work failed")
                result = exc
            self._results.put(lambda: then(result))

        threading.Thread(target=run, name="welcome-work", daemon=True).start()

    def _take_results(self) -> None:
        while True:
            try:
                done = self._results.get_nowait()
            except queue.Empty:
                break
            self.busy -= 1
            done()
        self.root.after(POLL_MS, self._take_results)

    # -- start at login: on by default at the first run, one click to undo -------------------------

    def _show_autostart(self, result: Any) -> None:
        if not self._autostart_known:  # the box now shows the truth: it takes clicks a moment later
            self._autostart_known = True
            self.autostart_input.disarm()
        if isinstance(result, Exception):
            self.autostart_on.set(False)
            problem = result.for_person() if isinstance(result, CoworkError) else str(result)
            self.autostart_problem.configure(text=problem)
            return
        self.autostart_on.set(bool(result))

    def _autostart_untouched(self) -> None:
        """A click that does not count: Tk already flipped the tick, so flip it back."""
        self.autostart_on.set(not self.autostart_on.get())

    def _autostart_clicked(self) -> None:
        wanted = self.autostart_on.get()

        def work() -> bool:
            (autostart.enable if wanted else autostart.disable)()
            return autostart.is_enabled()

        self.in_background(work, self._show_autostart)

    # -- step 1: connect ----------------------------------------------------------------------------

    def _show_apps(self, found: Any) -> None:
        if isinstance(found, Exception):
            self.looking.configure(text=_("Could not look for Claude apps: {error}").format(error=found))
            return
        self.platform, apps, self.locations = found
        self.apps = apps
        for child in self.apps_frame.winfo_children():
            child.destroy()
        self.connect_buttons, self.state_labels = {}, {}
        shown = [a for a in apps if a.installed or a.connected]
        self.none_found: ttk.Label | None = None
        if not shown:
            self.none_found = ttk.Label(
                self.apps_frame, wraplength=WRAP_PX, justify="left",
                text=_("No Claude app was found on this computer. Install Claude Desktop or Claude Code, "
                       "then open this window again; or connect Claude Desktop now and install it later."),
            )  # fmt: skip
            self.none_found.pack(anchor="w")
            shown = [a for a in apps if a.client_id == cl.CLAUDE_DESKTOP]
        for app in shown:
            row = ttk.Frame(self.apps_frame)
            row.pack(fill="x", pady=3)
            button = ttk.Button(row, style="Big.TButton", width=28)  # connecting lets Claude in: a real click
            self.real_input.guard(button, functools.partial(self.connect, app))
            button.pack(side="left")
            label = ttk.Label(row, wraplength=WRAP_PX - 280, justify="left")
            label.pack(side="left", padx=(12, 0))
            self.connect_buttons[app.client_id], self.state_labels[app.client_id] = button, label
            self._show_app(app)
        self.real_input.disarm(greyed=False)  # the buttons' state says connected or not: kept as it is
        self._show_next_steps()
        self._keep_size()

    def _show_app(self, app: AppRow, problem: str = "") -> None:
        button, label = self.connect_buttons[app.client_id], self.state_labels[app.client_id]
        if app.connected:
            button.configure(text=_("{client} is connected").format(client=app.name))
            button.state(["disabled"])
        else:
            button.configure(text=_("Connect {client}").format(client=app.name))
            button.state(["!disabled"])
        said = _("connected") if app.connected else client_state_text(app.state, app.installed).split(" · ")[0]
        label.configure(text=problem or f"{app.name}: {said}")

    def connect(self, app: AppRow) -> None:
        location = self.locations[app.client_id]
        self.connect_buttons[app.client_id].state(["disabled"])
        self.state_labels[app.client_id].configure(text=_("Connecting {client}...").format(client=app.name))

        def work() -> AppRow:
            wanted = cc.this_app_entry()
            cc.connect_client(location, wanted, replace=True)  # the button is the user's consent
            status = cc.client_status(location, wanted)
            return AppRow(status.client_id, status.name, status.installed, status.state)

        def then(result: Any) -> None:
            if isinstance(result, Exception):
                failed = _("Connecting failed: {error}").format(error=result)
                problem = result.for_person() if isinstance(result, CoworkError) else failed
                self._show_app(app, problem)
                return
            assert self.apps is not None
            self.apps = [result if a.client_id == result.client_id else a for a in self.apps]
            self._show_app(result)
            if self.none_found is not None and result.connected:  # "No Claude app was found" is old news
                self.none_found.configure(
                    text=_(
                        "{client} is not installed yet. Cowork Terminal is ready for it: install it, then open it."
                    ).format(client=result.name)
                )
            self._show_next_steps()

        self.in_background(work, then)

    # -- steps 2 and 3: restart, then try it ----------------------------------------------------------

    def _show_next_steps(self) -> None:
        connected = [a for a in self.apps or () if a.connected]
        for frame in (self.restart_buttons, self.check_buttons):
            for child in frame.winfo_children():
                child.destroy()
        for app in connected:
            if cl.can_restart(self.platform, app.client_id):
                restart = ttk.Button(self.restart_buttons, text=_("Restart {client}").format(client=app.name))
                self.step_input.guard(restart, functools.partial(self.restart, app))
                restart.pack(side="left", padx=(0, 8))
            named = _("Check {client}").format(client=app.name)
            check = ttk.Button(self.check_buttons, text=named, style="Big.TButton")
            self.step_input.guard(check, functools.partial(self.check, app))
            check.pack(side="left", padx=(0, 8))
        if connected:
            self.step_input.disarm()  # new buttons: a click aimed at what was there before does not land on them
        else:
            ttk.Label(self.check_buttons, text=_("Connect a Claude app first.")).pack(side="left")
        self._show_live()
        if connected and not self._watching:
            self._watching = True
            self.root.after(0, self._watch)

    def _keep_size(self) -> None:
        """Fix the window's size once its steps are shown, with room for the answers still to come, so
        that it does not grow and jump under the mouse at each click."""
        if self._fixed_size:
            return
        self._fixed_size = True
        self.root.update_idletasks()
        room = self.root.winfo_screenheight() - 2 * SCREEN_MARGIN_PX
        if self.root.winfo_reqheight() + RESULTS_ROOM_PX > room:  # a short screen (1024x600): wider texts
            self._widen_texts()
            self.root.update_idletasks()
        width = min(max(self.root.winfo_reqwidth(), 600), self.root.winfo_screenwidth() - 2 * SCREEN_MARGIN_PX)
        height = min(self.root.winfo_reqheight() + RESULTS_ROOM_PX, room)
        self.root.geometry(f"{width}x{height}")

    def _widen_texts(self) -> None:
        """The texts wrapped at WIDE_WRAP_PX (less on a narrow screen): fewer lines, so that on a short
        screen the steps, their answers and Done fit (a window taller than the screen hid Done)."""
        wide = min(WIDE_WRAP_PX, self.root.winfo_screenwidth() - 2 * (SCREEN_MARGIN_PX + FRAME_PAD_PX))
        labels: list[tk.Misc] = list(self.root.winfo_children())
        while labels:
            widget = labels.pop()
            labels += widget.winfo_children()
            if isinstance(widget, ttk.Label) and int(str(widget.cget("wraplength")) or 0) == WRAP_PX:
                widget.configure(wraplength=max(WRAP_PX, wide))
        # ... and less room between the steps
        self.frame.configure(padding=(FRAME_PAD_PX, FRAME_PAD_PX // 2))
        self.intro.pack_configure(pady=(4, 8))
        self.apps_frame.pack_configure(pady=(2, 6))
        self.restart_buttons.pack_configure(pady=(2, 6))
        for label in (self.check_result, self.live):
            label.pack_configure(pady=(2, 0))
        self.autostart_box.pack_configure(pady=(8, 0))

    # -- the live step: Claude's own first connection ------------------------------------------------

    def _watch(self) -> None:
        """Look (off the Tk thread) for a server that a Claude app started; then say it connected."""
        if not self.root.winfo_exists():
            return
        self.in_background(connected_clients, self._saw)

    def _saw(self, names: Any) -> None:
        if not isinstance(names, Exception):
            self.seen |= set(names)
        self._show_live()
        if not all(a.name in self.seen for a in self.apps or () if a.connected):
            self.root.after(WATCH_MS, self._watch)

    def _show_live(self) -> None:
        if self.waiting_check is not None and self.waiting_check in self.seen:  # no longer true: the line below says
            self.waiting_check = None
            self.check_result.configure(text="")
        connected = [a for a in self.apps or () if a.connected]
        if not connected:
            self.live.configure(text="")
            return
        lines = []
        for app in connected:
            if app.name in self.seen:
                lines.append("✓ " + _("{client} is connected.").format(client=app.name))
            else:
                lines.append(_("Waiting for {client} to connect…").format(client=app.name))
        if any(a.name in self.seen for a in connected):
            lines.append(_(ALL_SET))
            self.live.configure(foreground="#166534")
        else:
            self.live.configure(foreground="")
        self.live.configure(text="\n".join(lines))

    def restart(self, app: AppRow) -> None:
        self.restart_result.configure(text=_("Restarting {client}...").format(client=app.name))
        self.restart_result.pack(anchor="w", after=self.restart_buttons)
        argv = [*self.restart_command, "--client", app.client_id]

        def then(result: Any) -> None:
            if isinstance(result, Exception):
                failed = _("Could not restart {client}: {error}").format(client=app.name, error=result)
                self.restart_result.configure(text=failed)
                return
            code, _out, err = result
            lines = err.strip().splitlines()
            text = (
                _("{client} was restarted.").format(client=app.name)
                if code == 0
                else (lines[-1] if lines else _("exit code {code}").format(code=code))
            )
            self.restart_result.configure(text=text.removeprefix("cowork-terminal: "))

        self.in_background(lambda: run_captured(argv, RESTART_TIMEOUT_S), then)

    def check(self, app: AppRow) -> None:
        self.check_result.configure(text=_("Checking {client}...").format(client=app.name), foreground="")

        def then(result: Any) -> None:
            if isinstance(result, Exception):
                result = (False, _("The check could not run: {error}").format(error=result))
            ok, message = result
            if ok:
                # The check starts the server as Claude will: it proves the entry, not that Claude
                # loaded it (that needs Claude's restart; the live line below says when it did).
                seen = app.name in self.seen
                connected, _title, text = check_notice(
                    app.client_id, app.name, ok, message, installed=app.installed, claude_connected=seen
                )
                self.check_result.configure(text=text, foreground="#166534" if connected else "")
                self.waiting_check = None if connected else app.name
            else:
                not_yet = _("Not working yet: {message}").format(message=message)
                self.check_result.configure(text=not_yet, foreground="#9a3412")

        self.in_background(lambda: run_check(self.check_command, app.client_id, app.name, self.check_timeout_s), then)


def connected_clients(paths: AppPaths | None = None) -> list[str]:
    """The Claude apps (by the names people know) whose own server runs now, as the journal says."""
    with Journal(paths or AppPaths.from_environment()) as journal:
        return sorted(live_client_names(journal.servers(live_only=True)))


def _start_at_login(first_run: bool) -> bool:
    """Whether the app starts at login; at the first run it is turned on first (issue 24, item 2):
    after a restart Claude is refused until the app runs, and people forget to start it."""
    if first_run and not autostart.is_enabled():
        autostart.enable()
    return autostart.is_enabled()


def main(argv: list[str] | None = None) -> int:
    """Open the Welcome window (the tray opens it, and remembers that it did)."""
    parser = argparse.ArgumentParser(prog="cowork-terminal welcome")
    parser.add_argument("--no-menu", action="store_true", help=argparse.SUPPRESS)  # the tray icon has no menu
    parser.add_argument("--first-run", action="store_true", help=argparse.SUPPRESS)  # the tray's first start
    args = parser.parse_args(argv or [])
    try:
        root = new_root()
    except tk.TclError as exc:
        print("cowork-terminal:", _("cannot open the Welcome window: {error}").format(error=exc), file=sys.stderr)
        return 1
    protect_window(root)
    frozen = bool(getattr(sys, "frozen", False))
    WelcomeWindow(
        root,
        check_command=app_argv(frozen, sys.executable, "check"),
        restart_command=app_argv(frozen, sys.executable, "restart-claude"),
        menu_hint=not args.no_menu,
        first_run=args.first_run,
    )
    root.mainloop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
