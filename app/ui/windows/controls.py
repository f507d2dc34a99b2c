"""What a window's buttons do with the user's controls, depending on who started the window.

- Started by the tray: its buttons are the user's clicks, said on the private line to the tray.
- Started any other way (`cowork-terminal log-window` from a terminal): it asks the tray like the
  CLI does, so a loosening (resume, allow, clear history) waits for the user's click in the tray's
  confirm window; with no tray, tightening goes to the journal and loosening is refused.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from app.core.channel.client import NobodyToConfirm, TrayRefused, request_change
from app.core.i18n import N_, _
from app.core.journal.store import Journal
from app.core.paths import AppPaths
from app.ui.windows.link import TrayLine

NO_APP_TO_CONFIRM = N_(
    "Cowork Terminal (the app) is not running, so nobody can confirm this and nothing changed. "
    "Start the app, then try again."
)


@dataclass(frozen=True)
class HeldText:
    """What the tray holds of a waiting command: the text and folder its server sent the tray."""

    command: str
    cwd: str | None


def held_texts(message: dict[str, Any]) -> dict[int, HeldText] | None:
    """The tray's `holds` message read; None when it is not one."""
    holds = message.get("holds")
    if not isinstance(holds, list):
        return None
    told: dict[int, HeldText] = {}
    for hold in holds:
        if isinstance(hold, dict) and isinstance(hold.get("id"), int) and isinstance(hold.get("command"), str):
            cwd = hold.get("cwd")
            told[hold["id"]] = HeldText(hold["command"], cwd if isinstance(cwd, str) else None)
    return told


class Controls(Protocol):
    def told_paused(self) -> bool | None:
        """The pause as the tray told this window, or None when it tells nothing."""

    def told_holds(self) -> dict[int, HeldText] | None:
        """The held commands as the tray holds them, by id; None when the tray tells nothing."""

    def news(self) -> bool:
        """Whether the tray told something since the last call (the window then refreshes)."""

    def set_paused(self, paused: bool) -> None: ...
    def stop(self, command_id: int) -> None: ...
    def decide(self, command_id: int, allowed: bool, command: str | None = None) -> None: ...
    def clear_history(self) -> None: ...
    def remove_rule(self, rule_id: int) -> None: ...


class TrayLineControls:
    """For a window the tray started: each click goes straight to the tray."""

    def __init__(self, line: TrayLine) -> None:
        self.line = line
        self._paused: bool | None = None
        self._holds: dict[int, HeldText] = {}  # nothing waits until the tray says so

    def told_paused(self) -> bool | None:
        return self._paused

    def told_holds(self) -> dict[int, HeldText] | None:
        return self._holds

    def news(self) -> bool:
        changed = False
        for message in self.line.drain():
            if message is None:  # the tray is gone: what it said last no longer holds
                changed, self._paused = True, None
            elif message.get("op") == "state" and isinstance(message.get("paused"), bool):
                changed, self._paused = True, message["paused"]
            elif message.get("op") == "holds" and (told := held_texts(message)) is not None:
                changed, self._holds = True, told
        return changed

    def set_paused(self, paused: bool) -> None:
        self.line.send({"op": "pause", "paused": paused})

    def stop(self, command_id: int) -> None:
        self.line.send({"op": "stop", "id": command_id})

    def decide(self, command_id: int, allowed: bool, command: str | None = None) -> None:
        """`command`: the text the user saw, which the tray checks against its own before allowing."""
        self.line.send({"op": "decide", "id": command_id, "allowed": allowed, "command": command})

    def clear_history(self) -> None:
        self.line.send({"op": "clear_history"})

    def remove_rule(self, rule_id: int) -> None:
        self.line.send({"op": "remove_rule", "id": rule_id})


class RequestControls:
    """For a window started by hand: ask the tray (off the UI thread: the user may take a while)."""

    def __init__(self, paths: AppPaths, on_problem: Callable[[str], None] = lambda _text: None) -> None:
        self.paths = paths
        self.on_problem = on_problem

    def told_paused(self) -> bool | None:
        return None

    def told_holds(self) -> dict[int, HeldText] | None:
        return None  # the confirm window the tray opens for an Allow shows its own copy

    def news(self) -> bool:
        return False

    def _ask(self, op: str, without_tray: Callable[[Journal], object] | None, **fields: Any) -> None:
        def work() -> None:
            try:
                request_change(self.paths, op, without_tray=without_tray, **fields)
            except NobodyToConfirm:  # the CLI's words name a command: a window names the app
                self.on_problem(_(NO_APP_TO_CONFIRM))
            except TrayRefused as refused:
                self.on_problem(str(refused))

        threading.Thread(target=work, name="window-request", daemon=True).start()

    def set_paused(self, paused: bool) -> None:
        if paused:
            self._ask("pause", lambda journal: journal.set_paused(True))
        else:
            self._ask("resume", None)

    def stop(self, command_id: int) -> None:
        self._ask("stop", lambda journal: journal.request_stop(command_id), id=command_id)

    def decide(self, command_id: int, allowed: bool, command: str | None = None) -> None:
        self._ask("approve" if allowed else "deny", None, id=command_id)

    def clear_history(self) -> None:
        self._ask("clear_history", None)

    def remove_rule(self, rule_id: int) -> None:  # tightening: with no tray, straight to the journal
        self._ask("remove_rule", lambda journal: journal.remove_rule(rule_id), id=rule_id)
