"""The windows the tray opens, each in its own process: the activity log, the approval prompt,
confirm questions and notices, Settings and Welcome.

Tk and pystray in one process crash on macOS (pystray #138), so every window is a child process
that talks JSON lines with the tray (`PipedWindow`). What a window the tray started says is the
user's click; the tray still checks each message. Only the approval prompt allows a held command: it
alone shows everything about it (the environment's values, the folder typed for the most dangerous
ones), so an Allow asked anywhere else (the log window, `cowork-terminal approve N`) brings the prompt.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import IO, Any, Protocol

from app.core.authority.hub import HeldCommand, Hub, Question, RuleNotMade
from app.core.channel.protocol import RulesTold, encode
from app.core.claude.names import friendly_client_name
from app.core.execution.output import BUDGET_CHOICES
from app.core.i18n import _
from app.core.i18n.formats import shorten_command
from app.core.messages import LOG_WINDOW_DECIDED_BY, PROMPT_DECIDED_BY
from app.core.paths import AppPaths, make_private_file
from app.core.policy import approval
from app.core.policy.rules import SCOPES, SESSION_SCOPE, Rule
from app.core.program_identity import program_identity
from app.core.self_command import runs_this_program
from app.ui.tray import menu
from app.ui.tray.holds import HOLD_JUDGING_S, for_window
from app.ui.tray.notice_actions import DENY, SHOW, hold_actions
from app.ui.tray.platforms import Notifier, missing_tk_message, spawn
from app.ui.windows.link import PipedWindow

log = logging.getLogger(__name__)

ASK_USER = "ask-user"  # the action that shows the next question (a loosening someone asked for)

PROMPT_RESTARTS = 3  # a killed prompt opens again at most this often per PROMPT_RESTART_WINDOW_S
PROMPT_RESTART_WINDOW_S = 60.0
DECIDED_IN_NOTIFICATION = "user (notification)"
WINDOW_STOP_GRACE_S = 1.0  # a log window gets this long to close when replaced or at quit
PROGRAM_CHECK_S = 5.0  # how often the monitor looks whether the program's files were replaced (~1 ms)
REPLACED_NOTICE_S = 10.0  # "restart": said at most this often, however many windows it did not open


def _own(argv: Sequence[str]) -> bool:
    """Whether `argv` starts this program (a test's stand-in window does not)."""
    return runs_this_program(argv, bool(getattr(sys, "frozen", False)), sys.executable)


def files_replaced_text() -> str:
    """What the person is told once the tray's files were replaced under it."""
    return _(
        "Cowork Terminal's files were replaced while it was running (an update or another version). Quit "
        "Cowork Terminal and start it again: until then it opens none of its windows."
    )


class WindowsApp(Protocol):
    """What the windows reach of the tray (app.TrayApp): the hub's public controls, the commands
    that start each window, notices, and the action queue their clicks go to."""

    @property
    def hub(self) -> Hub: ...
    @property
    def paths(self) -> AppPaths: ...
    @property
    def platform(self) -> str: ...
    @property
    def windows(self) -> bool: ...
    @property
    def has_menu(self) -> bool: ...
    @property
    def autostart(self) -> bool | None: ...
    @property
    def notifier(self) -> Notifier: ...
    @property
    def program(self) -> str: ...  # the identity of the program's files, noted at the tray's start
    @property
    def log_window_command(self) -> list[str]: ...
    @property
    def approval_prompt_command(self) -> list[str]: ...
    @property
    def confirm_command(self) -> list[str]: ...
    @property
    def settings_command(self) -> list[str]: ...
    @property
    def welcome_command(self) -> list[str]: ...
    def submit(self, action: str, target: str | None = None) -> None: ...
    def kick(self) -> None: ...
    def quitting(self) -> bool: ...
    def read_rules_and_holds(self) -> None: ...
    def acknowledge_crashes(self) -> None: ...


class TrayWindows:
    """The windows one tray opened, and what their clicks do. Started from the actions threads."""

    def __init__(self, app: WindowsApp) -> None:
        self.app = app
        self.log_windows: list[PipedWindow] = []  # the activity log: one at most
        self.notices: list[PipedWindow] = []  # windows that only tell something (show_notice)
        self.welcome: subprocess.Popen[bytes] | None = None
        self._window_stderr = app.paths.log_dir / "log-window.stderr.log"
        self._welcome_stderr = app.paths.log_dir / "welcome.stderr.log"
        self._prompt: PipedWindow | None = None
        self._prompt_restarts: list[float] = []  # when the prompt was opened again after being killed
        self._prompt_shown: set[int] = set()
        self._confirm: PipedWindow | None = None
        self._questions: list[Question] = []
        self._settings: PipedWindow | None = None
        self._lock = threading.Lock()
        self._replaced = False  # the program's files changed since the tray started: no more windows
        self._holds_in_menu_since_replaced = False  # held commands then wait in the menu (sync_approval_prompt)
        self._program_checked = time.monotonic()
        self._replaced_told = 0.0

    @property
    def hub(self) -> Hub:
        return self.app.hub

    def close_all(self) -> None:
        """At quit: every window this tray opened goes with it."""
        with self._lock:
            log_windows, self.log_windows = self.log_windows, []
        for window in [*log_windows, *self.notices, self._prompt, self._confirm, self._settings]:
            if window is not None:
                window.close()
        if self.welcome is not None:  # its check needs this tray: it goes with it
            stop_process_now(self.welcome, WINDOW_STOP_GRACE_S)

    # -- the program the windows are started from ----------------------------------------------------

    def files_replaced(self) -> bool:
        """Whether the program's files on disk are no longer those the tray started from (an update
        or a downgrade while it runs): a window started now would be of another version, which may
        show less than the tray sends it (a red team, 2026-12-06). Once changed, for good."""
        if not self._replaced and program_identity() != self.app.program:
            self._replaced = True
            log.warning("the program's files were replaced since the tray started: it opens no more windows")
        return self._replaced

    def _tell_replaced(self) -> None:
        """Say why no window opens (at most every REPLACED_NOTICE_S: each click or hold asks again)."""
        now = time.monotonic()
        if now - self._replaced_told >= REPLACED_NOTICE_S or not self._replaced_told:
            self._replaced_told = now
            self.app.notifier.notify(menu.APP_TITLE, files_replaced_text())

    def _replaced_for(self, argv: Sequence[str]) -> bool:
        """Whether `argv` starts this tray's program from files replaced since it started (the person
        is told): checked before a window that works is closed to be replaced by one (a review)."""
        if _own(argv) and self.files_replaced():
            self._tell_replaced()
            return True
        return False

    def _window(
        self,
        argv: Sequence[str],
        on_message: Callable[[dict[str, Any]], None],
        *,
        stderr: Any = subprocess.DEVNULL,
        on_exit: Callable[[int], None] | None = None,
    ) -> PipedWindow | None:
        """A window of this tray's program, or None (the person told why) when its files were replaced.
        The window must then say on its line that it is this program (`link.PipedWindow`): files
        replaced while it started make it another, which is refused. A command that does not start
        this program (a test's stand-in) has no program to check."""
        if self._replaced_for(argv):
            return None
        program = self.app.program if _own(argv) else None
        return PipedWindow(argv, on_message, stderr=stderr, on_exit=on_exit, program=program,
                           on_refused=self._window_refused)  # fmt: skip

    def _window_refused(self, why: str) -> None:
        """A window that did not say it is this tray's program: its files are another version's."""
        self._replaced = True
        self._tell_replaced()

    def check_program(self) -> None:
        """At the monitor's poll, every PROGRAM_CHECK_S: files replaced under the tray are said to
        the person at once (not only at the next window: a call that imports what is gone fails too),
        and a window still starting from them (it has not said which program it is) is ended."""
        now = time.monotonic()
        if not self._replaced and now - self._program_checked >= PROGRAM_CHECK_S:
            self._program_checked = now
            if self.files_replaced():
                self._tell_replaced()
        if not self._replaced:
            return
        with self._lock:
            starting = [w for w in [*self.log_windows, *self.notices, self._prompt, self._confirm, self._settings]
                        if w is not None and w.awaiting_hello()]  # fmt: skip
        for window in starting:
            window.refuse("the program's files were replaced while it started")

    # -- the approval prompt ---------------------------------------------------------------------

    def sync_approval_prompt(self) -> None:
        """Make the approval prompt show exactly the hub's held commands: start it when something
        waits, tell it what is new and what is gone, close it when nothing is left."""
        holds = {h.command_id: h for h in self.hub.pending_holds()}
        self._tell_log_windows_holds(list(holds.values()))
        self.app.notifier.withdraw({f"hold:{i}" for i in holds})  # an answered command: its notice answers nothing more
        if not self.app.windows:  # no Tk: the menu's "waiting" line lists them, with Deny (no prompt to allow in)
            self._holds_in_menu(holds)
            return
        with self._lock:
            prompt = self._prompt
            if holds and (prompt is None or not prompt.alive()):
                prompt = self._prompt = self._window(
                    self.app.approval_prompt_command, self._prompt_said, on_exit=self._prompt_exited
                )
                if prompt is not None:
                    self._prompt_shown = set()
                    log.info("approval prompt started (pid %s)", prompt.pid)
            if prompt is None and not holds:
                return
            if prompt is not None and not holds:
                prompt.close()
                self._prompt = None
                return
            if prompt is None:  # its files were replaced: as without Tk, until a restart
                if not self._holds_in_menu_since_replaced:  # what a refused prompt was sent, it never showed
                    self._holds_in_menu_since_replaced = True
                    self._prompt_shown = set()
            else:
                for command_id in sorted(set(holds) - self._prompt_shown):
                    hold = holds[command_id]
                    shown = for_window(hold, self.app.paths, HOLD_JUDGING_S)  # bounded: see HOLD_JUDGING_S
                    prompt.send({"op": "show", "hold": shown.to_json()})
                    self._tell_waiting(hold)
                for command_id in self._prompt_shown - set(holds):
                    prompt.send({"op": "gone", "id": command_id})
                self._prompt_shown = set(holds)
                return
        self._holds_in_menu(holds)

    def _holds_in_menu(self, holds: dict[int, HeldCommand]) -> None:
        """No approval prompt can open: the menu's "waiting" line lists the held commands, with Deny,
        and each new one is told in a notice; each one's time starts now."""
        for command_id in sorted(set(holds) - self._prompt_shown):
            hold = holds[command_id]
            self.hub.seen(command_id)
            self._tell_waiting(hold)
        self._prompt_shown = set(holds)
        self.app.read_rules_and_holds()
        self.app.kick()

    def _tell_waiting(self, hold: HeldCommand) -> None:
        """A held command's notice; where the desktop has buttons, Deny and Show, never Allow."""
        self.app.notifier.notify(
            _("A command is waiting for your approval"),
            _("{client} wants to run: {command}").format(
                client=friendly_client_name(hold.client), command=shorten_command(hold.command, 120)
            ),
            key=f"hold:{hold.command_id}",
            actions=hold_actions(self.app.windows),
            on_action=functools.partial(self._hold_notice_pressed, hold.command_id),
        )

    def _hold_notice_pressed(self, command_id: int, action: str) -> None:
        """A button of a held command's notice: a program may have sent it, so it only denies or shows."""
        if action == DENY and self.hub.decide(command_id, allowed=False, by=DECIDED_IN_NOTIFICATION):
            log.info("held command %s denied from its notification", command_id)
        elif action == SHOW:
            self.app.submit(menu.OPEN_APPROVALS)
        self.app.kick()

    def _prompt_said(self, message: dict[str, Any]) -> None:
        if message.get("op") == "seen" and isinstance(message.get("id"), int):
            self.hub.seen(message["id"])  # its time to answer starts now (issue 22)
            return
        if message.get("op") != "decide" or not isinstance(message.get("id"), int):
            return
        allowed = message.get("allowed") is True
        rule = message.get("rule")
        try:
            if allowed and isinstance(rule, dict) and rule.get("scope") in SCOPES:
                self._make_rule(message["id"], str(rule["scope"]))
        finally:  # the click answers its command with or without a rule (a journal refused the rule's row)
            self.hub.decide(message["id"], allowed=allowed, by=PROMPT_DECIDED_BY)

    def _make_rule(self, command_id: int, scope: str) -> None:
        """The user clicked "Always allow ...": the rule is the one the tray itself offers for this
        hold (never a folder the window names), in the scope the user chose."""
        hold = next((h for h in self.hub.pending_holds() if h.command_id == command_id), None)
        proposal = None if hold is None else for_window(hold, self.app.paths).proposal
        if hold is None or proposal is None:
            return
        # The server by its connection, its id read under the hub's lock: a journal renewed since
        # the hold was read renumbers the servers.
        peer = hold.peer if scope == SESSION_SCOPE else None
        try:
            rule = self.hub.add_rule(proposal.kind, proposal.folder, scope, proposal.description(scope), peer=peer)
        except RuleNotMade as exc:  # its server has no row in a renewed journal: no rule, and said so
            log.warning("no rule made for command %s: %s", command_id, exc)
            self.app.notifier.notify(
                _("Rule not made"),
                _(
                    "The activity log could not record this conversation, so your rule for it was not made. "
                    "Commands like this one will ask you again."
                ),
            )
            return
        log.info("rule %s made by the user: %s", rule.id, rule.description)
        # Said back, so that a click that changes what is asked from now on never goes unnoticed.
        self.app.notifier.notify(
            _("Rule made"),
            _("From now on, {rule} runs without asking you. Your rules in the menu can remove it.").format(
                rule=rule.shown()
            ),
        )

    def _prompt_exited(self, code: int) -> None:
        now = time.monotonic()
        self._prompt_restarts = [t for t in self._prompt_restarts if now - t < PROMPT_RESTART_WINDOW_S]
        if code < 0 and self.hub.pending_holds() and len(self._prompt_restarts) < PROMPT_RESTARTS:
            # Killed by a signal while a command waits (another program can end any process of the
            # user's): a question must not wait unseen, so it opens again, a few times a minute.
            self._prompt_restarts.append(now)
            log.warning("the approval prompt was ended (code %s) while a command waits: opening it again", code)
            self.app.submit(menu.OPEN_APPROVALS)
            return
        if code != 0:  # no window: the menu's "waiting" line and the notices show them, each one's time runs
            for hold in self.hub.pending_holds():
                self.hub.seen(hold.command_id)
        if code != 0 and self.hub.pending_holds():
            log.warning("the approval prompt exited with code %s", code)
            self.app.notifier.notify(
                _("A command is waiting for your approval"),
                _("The approval window could not open. Open the activity log to answer it."),
            )
            return
        if not self.app.quitting():
            self.app.submit(menu.OPEN_APPROVALS)  # anything still waiting gets a new window

    # -- questions: loosening that someone asked for, confirmed by a click -------------------------

    def ask_user(self, question: Question) -> None:
        """Queue a question for the confirm window (thread-safe). A request to allow a held command is
        no question: the approval prompt shows it (opened if need be), and who asked is told where."""
        if question.shows is not None:
            if not self.app.windows:
                self.hub.questions.shown(question, why_not=missing_tk_message(self.app.platform, self.app.has_menu))
                return
            self.hub.on_holds()  # the tray's "show what waits": the prompt opens, if it is not open
            self.hub.questions.shown(question)
            return
        with self._lock:
            self._questions.append(question)
        self.app.submit(ASK_USER)

    def show_next_question(self) -> None:
        """One confirm window at a time; the next question waits for the previous answer."""
        with self._lock:
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
                        self.app.notifier.notify(menu.APP_TITLE, why)
                    else:
                        self.hub.answer(question, False)
                self.app.submit(ASK_USER)

            self._confirm = confirm = self._window(self.app.confirm_command, said, on_exit=exited)
        if confirm is None:  # nobody can confirm it now: a No, and the next question
            self.hub.answer(question, False, why_not=files_replaced_text())
            self.app.submit(ASK_USER)
            return
        confirm.send(
            {
                "op": "ask",
                "title": _("Cowork Terminal: confirm"),
                "text": question.text,
                "allow": question.allow_label,
                "deny": question.deny_label,
                "yours": question.yours,
            }
        )

    def show_notice(self, title: str, text: str) -> None:
        """A window that tells the user something they must see (the confirm window with one button)."""
        notice = self._window(self.app.confirm_command, lambda _message: None)
        if notice is None:  # what it would have said goes in a notice
            self.app.notifier.notify(title, text)
            return
        notice.send({"op": "ask", "title": title, "text": text, "allow": "", "deny": _("OK"), "yours": True})
        with self._lock:
            self.notices.append(notice)

    # -- Settings and Welcome ----------------------------------------------------------------------

    def open_settings(self) -> None:
        """The Settings window (one at a time): what it says goes through `_settings_said`."""
        if self._replaced_for(self.app.settings_command):  # the open one, if any, stays
            return
        if self._settings is not None and self._settings.alive():
            self._settings.close()
        self._settings = self._window(self.app.settings_command, self._settings_said)
        self.push_settings()

    def _settings_said(self, message: dict[str, Any]) -> None:
        """A click in the Settings window, which only this tray started: applied like a menu click."""
        key, value = message.get("key"), str(message.get("value"))
        if message.get("op") == "set" and key == "approval_mode" and value in {m.value for m in approval.ApprovalMode}:
            self.app.submit(menu.SET_APPROVAL_MODE, value)
        elif (
            message.get("op") == "set" and key == "output_budget" and value in {str(b.setting) for b in BUDGET_CHOICES}
        ):
            self.app.submit(menu.SET_OUTPUT_BUDGET, value)
        elif message.get("op") == "set" and key == "autostart" and value in ("on", "off"):
            self.app.submit(menu.TOGGLE_AUTOSTART, value)
        else:
            self.push_settings()  # anything else (a click another program sent): show what holds

    def push_settings(self) -> None:
        """Tell an open Settings window what holds now."""
        window = self._settings
        if window is None or not window.alive():
            return
        budget = self.hub.output_budget()
        window.send(
            {"op": "state", "approval_mode": self.hub.approval_mode,
             "output_budget": str(budget.setting), "autostart": self.app.autostart is True}
        )  # fmt: skip

    def open_welcome(self, *, first_run: bool = False) -> None:
        """The Welcome window: connect Claude step by step (first start, and "Getting started…").
        At the first run it turns start-at-login on, and shows how to turn it off."""
        argv = [
            *self.app.welcome_command,
            *([] if self.app.has_menu else ["--no-menu"]),
            *(["--first-run"] if first_run else []),
        ]
        # It has no line to the tray (it asks like the CLI, and a loosening it asks for is confirmed in
        # a window that is checked): only whether its files are still the tray's.
        if runs_this_program(argv, bool(getattr(sys, "frozen", False)), sys.executable) and self.files_replaced():
            self._tell_replaced()
            return
        with self._lock:  # the monitor thread reaps a Welcome that closed (check_windows)
            earlier, self.welcome = self.welcome, None
        if earlier is not None:  # one at a time: a new one comes to the front
            stop_process_now(earlier, WINDOW_STOP_GRACE_S)  # before its stderr file is made anew
        with open_stderr_file(self._welcome_stderr) as stderr:  # as the log window's
            welcome = spawn(argv, stderr=stderr)
        with self._lock:
            self.welcome = welcome
        self.hub.welcome_shown()
        log.info("welcome window started: %s", argv)

    def open_uninstall(self, argv: Sequence[str]) -> None:
        """The Uninstall window (`argv`): it asks, then uninstalls and quits this tray itself, so it
        has no line to the tray (it must outlive it) and says no hello: only whether its files are
        still the tray's is checked before it starts, as for Welcome. Another version's window may
        guard less what it does for the person (its "delete my history" tick and its button take only
        a person's click here) or not know what this version set up."""
        if _own(argv) and self.files_replaced():
            self._tell_replaced()
            return
        spawn(argv)

    # -- the activity log --------------------------------------------------------------------------

    def open_log_window(self) -> None:
        """Open the activity log; one window at most: reopening replaces it, so it comes to the front."""
        self.app.acknowledge_crashes()
        if not self.app.windows:
            self.app.notifier.notify(
                _("The activity log cannot open"), missing_tk_message(self.app.platform, self.app.has_menu)
            )
            return
        command = self.app.log_window_command
        if self._replaced_for([*command, "--tray-line"]):  # the open one, if any, stays: it still works
            return
        # Taken from the list before it is closed, and the new one put in whole: the monitor's look at
        # the windows (check_windows, on its thread) never takes this tray's own close for a window
        # that failed, nor drops the new one.
        with self._lock:
            replaced, self.log_windows = self.log_windows, []
        for window in replaced:
            window.close()
        with open_stderr_file(self._window_stderr) as stderr:
            opened = self._window([*command, "--tray-line"], self.log_window_said, stderr=stderr)
        if opened is None:
            return
        window = opened
        window.send({"op": "state", "paused": self.hub.paused})
        window.send(holds_message(self.hub.pending_holds()))
        window.send(rules_message(self.hub.rules()))
        with self._lock:
            self.log_windows = [window]
        log.info("log window started (pid %s): %s", window.pid, command)

    def tell_log_windows(self, message: dict[str, Any]) -> None:
        """Send one message to the open activity log."""
        for window in self.log_windows:
            window.send(message)

    def _tell_log_windows_holds(self, holds: list[HeldCommand]) -> None:
        """The log window shows the held commands as their servers told the tray (never the journal's
        text, which a command could rewrite): sent whenever they change."""
        self.tell_log_windows(holds_message(holds))

    def tell_log_windows_rules(self) -> None:
        """The log window lists the rules the tray applies (never the journal's rows, which another
        program can rewrite): sent at open, and whenever they change (TrayApp.show)."""
        self.tell_log_windows(rules_message(self.hub.rules()))

    def log_window_said(self, message: dict[str, Any]) -> None:
        """The log window the tray started: its buttons are the user's clicks."""
        op, command_id = message.get("op"), message.get("id")
        if op == "pause":
            self.hub.set_paused(message.get("paused") is True, by=LOG_WINDOW_DECIDED_BY)
        elif op == "stop" and isinstance(command_id, int):
            with contextlib.suppress(Exception):
                self.hub.stop(command_id, by=LOG_WINDOW_DECIDED_BY)
        elif op == "decide" and isinstance(command_id, int) and message.get("allowed") is True:
            # The log window shows less than the prompt (no environment's values, no typed folder for
            # the most dangerous commands): its Allow brings the approval prompt, which decides.
            log.info("command #%s: Allow in the log window, the approval prompt is shown", command_id)
            self.hub.on_holds()  # the tray's "show what waits": the prompt opens, if it is not open
        elif op == "decide" and isinstance(command_id, int):
            self.hub.decide(command_id, allowed=False, by=LOG_WINDOW_DECIDED_BY)  # a Deny: at once
        elif op == "clear_history":
            self.hub.clear_history()
        elif op == "remove_rule" and isinstance(command_id, int):
            self.hub.remove_rule(command_id)
            self.app.kick()
        else:
            log.warning("the log window sent an unknown request %r", op)

    def check_windows(self) -> None:
        """At each poll: a log window that failed at once (no Tk, no display) is reported, not silently
        lost; a Welcome that ended is reaped then, not left a zombie until the next one opens; and
        whether the program's files were replaced (check_program)."""
        self.check_program()
        with self._lock:
            welcome = self.welcome
            if welcome is not None and welcome.poll() is not None:
                self.welcome = None
                if welcome.returncode != 0:
                    log.warning("the welcome window exited with code %s: %s", welcome.returncode,
                                last_line(stderr_text(self._welcome_stderr)))  # fmt: skip
            ended = [window for window in self.log_windows if window.process.poll() is not None]
            self.log_windows = [window for window in self.log_windows if window not in ended]
        for window in ended:
            code = window.process.returncode
            if code != 0:
                said = stderr_text(self._window_stderr)
                log.warning("the log window exited with code %s: %s", code, said[-4000:])
                why = last_line(said)
                self.app.notifier.notify(
                    _("The activity log could not open"),
                    _("{error}. The app log in {folder} has the details.").format(
                        error=why or _("It exited with code {code}").format(code=code), folder=self.app.paths.log_dir
                    ),
                )


def open_stderr_file(path: Path) -> IO[bytes]:
    """Where a window's stderr goes (made anew at each start), private like every log the app writes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    make_private_file(path)
    return open(path, "wb")


def stderr_text(path: Path) -> str:
    """What a window wrote to its stderr file (empty when the file cannot be read)."""
    with contextlib.suppress(OSError):
        return path.read_text(encoding="utf-8", errors="replace").strip()
    return ""


def last_line(said: str) -> str:
    """The last line of a window's stderr: what failed ("cannot open ...: no display"), never a
    traceback; empty when it said nothing."""
    lines = said.splitlines()
    return lines[-1].removeprefix("cowork-terminal: ").rstrip(".")[:300] if lines else ""


def stop_process_now(process: subprocess.Popen[bytes], grace_s: float) -> None:
    """End a window process: terminate, and kill it if it is still there after `grace_s`."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(grace_s)


def rules_message(rules: Iterable[Rule]) -> dict[str, Any]:
    """What the log window is told of the user's rules: those the hub applies now, by id."""
    return encode(RulesTold.of(rules))


def holds_message(holds: Sequence[HeldCommand]) -> dict[str, Any]:
    """What the log window is told of the held commands: the servers' own words, by id, each bounded:
    its line reader drops a line over 1 MiB, and five holds of a 200 KB command made one (a review,
    2026-12-05). Its Allow and Deny name the id; the tray decides on the hold it keeps whole."""
    return {"op": "holds", "holds": [hold.to_list() for hold in holds]}
