"""What a window's buttons do with the user's controls, depending on who started the window.

- Started by the tray: its buttons are the user's clicks, said on the private line to the tray.
- Started any other way (`cowork-terminal log-window` from a terminal): it asks the tray like the
  CLI does, so a loosening (resume, allow, clear history) waits for the user's click in the tray's
  confirm window; with no tray, tightening goes to the journal and loosening is refused.

Either way a waiting command is shown as the tray holds it, never as the journal's text (which any
program of the user can rewrite): the tray tells its window its holds, and a window started by hand
asks the tray for them (issue 23).
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from app.core.channel.client import HELLO_TIMEOUT_S, NobodyToConfirm, NoTray, TrayRefused, ask_tray, request_change
from app.core.i18n import N_, _
from app.core.install.app_processes import tray_running
from app.core.journal.store import CommandRecord, Journal, Status
from app.core.paths import AppPaths
from app.ui.windows.link import TrayLine

NO_APP_TO_CONFIRM = N_(
    "Cowork Terminal (the app) is not running, so nobody can confirm this and nothing changed. "
    "Start the app, then try again."
)
# What a window shows instead of the journal's text of a waiting command nobody vouches for.
NOT_HELD = N_("Cowork Terminal does not hold this command, so it cannot run.")
ASKING = N_("Asking Cowork Terminal for this command…")
NOBODY_TO_ANSWER = N_("Nobody can answer this command now: Cowork Terminal (the app) is not running.")
NO_ANSWER = N_("Nobody can answer this command now: Cowork Terminal did not answer ({error}).")
HOLDS_REFRESH_S = 1.0  # a window started by hand asks the tray for its holds at most this often


@dataclass(frozen=True)
class HeldText:
    """What the tray holds of a waiting command: the text and reasons its server sent the tray, and the
    folder it runs in (the pinned real folder, not the path as the agent wrote it)."""

    command: str
    cwd: str | None
    reasons: str | None = None


def held_texts(message: dict[str, Any]) -> dict[int, HeldText] | None:
    """The tray's `holds` message read; None when it is not one."""
    holds = message.get("holds")
    if not isinstance(holds, list):
        return None
    told: dict[int, HeldText] = {}
    for hold in holds:
        if isinstance(hold, dict) and isinstance(hold.get("id"), int) and isinstance(hold.get("command"), str):
            # The real folder the hold pinned: `~/project/notes`, a link, emptied ~/Documents (a red team,
            # 2026-12-06); the path as sent only from a tray that tells no folder.
            cwd, reasons = hold.get("folder", hold.get("cwd")), hold.get("reasons")
            told[hold["id"]] = HeldText(
                hold["command"], cwd if isinstance(cwd, str) else None, reasons if isinstance(reasons, str) else None
            )
    return told


def as_told(record: CommandRecord, holds: dict[int, HeldText] | None, unvouched: Callable[[], str]) -> CommandRecord:
    """A row as the window shows it: a waiting command with the tray's own text and folder, or,
    when the tray does not vouch for it, `unvouched()` in place of the journal's text (no folder, no
    reason: those are the journal's words too)."""
    if record.status is not Status.WAITING:
        return record
    held = None if holds is None else holds.get(record.id)
    if held is None:
        return dataclasses.replace(record, command=unvouched(), cwd=None, reason=None)
    return dataclasses.replace(record, command=held.command, cwd=held.cwd, reason=held.reasons or record.reason)


class Controls(Protocol):
    def told_paused(self) -> bool | None:
        """The pause as the tray told this window, or None when it tells nothing."""

    def told_holds(self) -> dict[int, HeldText] | None:
        """The held commands as the tray holds them, by id; None when no tray tells them now."""

    def unvouched(self) -> str:
        """What to show for a waiting command the tray does not (or cannot now) vouch for."""

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
        self._holds: dict[int, HeldText] | None = None  # until the tray tells them (it does at once)
        self._gone = False

    def told_paused(self) -> bool | None:
        return self._paused

    def told_holds(self) -> dict[int, HeldText] | None:
        return self._holds

    def unvouched(self) -> str:
        if self._gone:
            return _(NOBODY_TO_ANSWER)
        return _(ASKING) if self._holds is None else _(NOT_HELD)

    def news(self) -> bool:
        changed = False
        for message in self.line.drain():
            if message is None:  # the tray is gone: what it said last no longer holds
                changed, self._paused, self._holds, self._gone = True, None, None, True
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
        self._lock = threading.Lock()
        self._holds: dict[int, HeldText] | None = None  # the tray's answer, while it answers
        self._why = _(ASKING)  # why there is no answer (yet)
        self._asked_at: float | None = None
        self._asking = False
        self._changed = False

    def told_paused(self) -> bool | None:
        return None

    def told_holds(self) -> dict[int, HeldText] | None:
        """The tray's holds as it last answered; asks again (off the UI thread) when that is
        older than HOLDS_REFRESH_S. Called only while the window shows a waiting command."""
        with self._lock:
            stale = self._asked_at is None or time.monotonic() - self._asked_at >= HOLDS_REFRESH_S
            if stale and not self._asking:
                self._asking = True
                threading.Thread(target=self._ask_holds, name="window-holds", daemon=True).start()
            return self._holds

    def unvouched(self) -> str:
        with self._lock:
            return _(NOT_HELD) if self._holds is not None else self._why

    def _ask_holds(self) -> None:
        holds: dict[int, HeldText] | None = None
        why = ""
        try:
            reply = ask_tray(self.paths, "holds", wait_s=HELLO_TIMEOUT_S)
            told = json.loads(str(reply.get("message") or "[]"))
            holds = held_texts({"holds": told}) or {}
        except NoTray as problem:  # a tray that runs but cannot be asked is not "not running" (a review)
            why = _(NO_ANSWER).format(error=problem) if tray_running(self.paths) else _(NOBODY_TO_ANSWER)
        except (TrayRefused, ValueError) as problem:
            why = _(NO_ANSWER).format(error=problem)
        with self._lock:
            if (holds, why) != (self._holds, self._why):
                self._holds, self._why, self._changed = holds, why, True
            self._asked_at = time.monotonic()
            self._asking = False

    def news(self) -> bool:
        """Whether the tray's answer about its holds changed since the last call."""
        with self._lock:
            changed, self._changed = self._changed, False
            return changed

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
