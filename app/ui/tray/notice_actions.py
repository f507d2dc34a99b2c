"""Answering a held command from its notification, where the desktop puts buttons in notifications.

A button pressed in a notification reaches the sender over the session D-Bus (the ActionInvoked
signal), and any program of the user can send that signal, an agent's command included. So a
notification may only tighten or show: "Deny" denies the held command, "Show" brings the approval
window back. Allow stays a click in the app's own window, whose buttons take only real input
(windows/real_input.py). docs/decisions.md says why.

On Linux, through `notify-send --action NAME=Text` (libnotify 0.7.10 and later), which waits and
prints the NAME of the button pressed. An older notify-send, or none, gives the plain notice.
"""

from __future__ import annotations

import html
import logging
import subprocess
import threading
from collections.abc import Callable, Mapping

from app.core.i18n import _

log = logging.getLogger(__name__)

DENY, SHOW = "deny", "show"
NEVER_OFFERED = frozenset({"allow", "approve", "resume"})  # loosenings: only a click in our own window
HELP_TIMEOUT_S = 5.0
STOP_GRACE_S = 2.0


def hold_actions(windows: bool) -> dict[str, str]:
    """The buttons a held command's notification offers: Deny, and Show where a window can open."""
    actions = {DENY: _("Deny")}
    if windows:
        actions[SHOW] = _("Show")
    assert not NEVER_OFFERED & actions.keys()
    return actions


def supports_actions(platform: str, help_text: str) -> bool:
    """Whether this notify-send puts buttons in its notifications: Linux, and `--action` in its help."""
    return platform.startswith("linux") and "--action" in help_text


def action_argv(
    notify_send: str, app_name: str, title: str, message: str, actions: Mapping[str, str] | None = None
) -> list[str]:
    """notify-send with one button per action (NAME=Text), if any: it then waits and prints the NAME
    pressed. The body is escaped: most notification servers read it as markup, where a command's
    `<b>`, `<a href>` or `<img>` would show other text than the command (a red team, 2026-12-06),
    and a lone `<` could make the server drop the body."""
    buttons = [f"--action={name}={text}" for name, text in (actions or {}).items()]
    return [notify_send, f"--app-name={app_name}", *buttons, "--", title, html.escape(message, quote=False)]


def chosen_action(printed: str, offered: Mapping[str, str]) -> str | None:
    """The action notify-send printed, if it is one this notification offered; anything else
    (a closed notification prints nothing; a forged signal may name anything) is nobody's answer."""
    lines = printed.strip().splitlines()
    said = lines[-1].strip() if lines else ""
    return said if said in offered and said not in NEVER_OFFERED else None


class ActionNotices:
    """Notifications with buttons, one per key (a held command); each waits in a thread for its answer."""

    def __init__(self, notify_send: str, app_name: str) -> None:
        self.notify_send = notify_send
        self.app_name = app_name
        self._waiting: dict[str, subprocess.Popen[str]] = {}
        self._lock = threading.Lock()

    def show(
        self, key: str, title: str, message: str, actions: Mapping[str, str], on_action: Callable[[str], None]
    ) -> None:
        """Show the notification; `on_action` gets the button's name when one of `actions` is pressed."""
        argv = action_argv(self.notify_send, self.app_name, title, message, actions)
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        with self._lock:
            before, self._waiting[key] = self._waiting.get(key), process
        if before is not None:
            before.terminate()
        threading.Thread(
            target=self._wait, args=(key, process, dict(actions), on_action), name="notice-actions", daemon=True
        ).start()

    def _wait(
        self, key: str, process: subprocess.Popen[str], actions: dict[str, str], on_action: Callable[[str], None]
    ) -> None:
        printed, _err = process.communicate()
        with self._lock:
            withdrawn = self._waiting.get(key) is not process  # taken back: its answer is no longer asked for
            if not withdrawn:
                del self._waiting[key]
        chosen = None if withdrawn else chosen_action(printed or "", actions)
        if chosen is None:
            return
        log.info("notification %s: the user pressed %s", key, chosen)
        try:
            on_action(chosen)
        except Exception:  # the top of a thread: log it, keep the tray alive
            log.exception("acting on the notification's %s failed", chosen)

    def withdraw(self, keep: set[str] | None = None) -> None:
        """Stop waiting on the notifications whose key is not in `keep` (all when None): their
        command was answered elsewhere, so their buttons no longer mean anything."""
        with self._lock:
            gone = [(k, p) for k, p in self._waiting.items() if keep is None or k not in keep]
            for key, _process in gone:
                del self._waiting[key]
        for _key, process in gone:
            process.terminate()


def notify_send_help(notify_send: str) -> str:
    """`notify-send --help`, or "" when it cannot be run (then notifications carry no buttons)."""
    try:
        ran = subprocess.run(
            [notify_send, "--help"], capture_output=True, text=True, timeout=HELP_TIMEOUT_S, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError) as exc:
        log.info("notify-send --help failed: %s", exc)
        return ""
    return ran.stdout + ran.stderr
