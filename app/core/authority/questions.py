"""Loosenings a program asks for, put to the user in a confirm window, and the words they read.

Anyone on the channel (the CLI, a script) may ask to resume, relax a setting or delete the history;
only the user's click in a window the tray started makes it happen. A request to allow a held command
is no yes/no: it brings the approval prompt, the one window that shows everything about it. One
window per question (repeats wait on the same one), a cooldown after a No, a quiet time after
several No's in a row, and nothing at all from a command the agent runs (its run mark, or a
process descending from a server).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

from app.core.authority.connection import Peer
from app.core.authority.errors import RequestError
from app.core.authority.holds import HeldCommand
from app.core.authority.no_streak import NoStreak
from app.core.authority.state import ControlState, with_changes
from app.core.channel.protocol import Ack, ErrorReply
from app.core.execution.process_marks import parent_pid
from app.core.i18n import N_, _, ngettext
from app.core.i18n.formats import format_number
from app.core.messages import CONFIRMED_DECIDED_BY
from app.core.policy.approval import ApprovalMode

SHOWN_IN_PROMPT = N_("Command #{id} is shown in Cowork Terminal's approval window: allow or deny it there.")


class QuestionsHub(Protocol):
    """What a question reaches of the hub: its lock, what it shows, and the controls a Yes applies."""

    @property
    def lock(self) -> AbstractContextManager[Any]: ...
    @property
    def state(self) -> ControlState: ...
    def notify(self, title: str, message: str) -> None: ...
    def server_pids(self) -> set[int | None]: ...
    def held(self, command_id: int) -> HeldCommand | None: ...
    def set_paused(self, paused: bool, *, by: str = "user") -> None: ...
    def set_settings(self, **changes: Any) -> None: ...
    def clear_history(self) -> int: ...


log = logging.getLogger(__name__)

ASK_COOLDOWN_S = 10.0  # after the user says No to a request, the same request is refused at once
ANCESTRY_DEPTH = 64


@dataclass
class Question:
    """A loosening asked for by a peer (the CLI), waiting for the user's click in a confirm window."""

    key: str
    text: str
    allow_label: str
    deny_label: str
    apply: Callable[[], str]
    waiting: list[tuple[Peer, int | None]] = field(default_factory=list)  # who to answer, with their seq
    yours: bool = False  # the person asked it by a click in the menu (Quit): no "if you did not ask" warning
    # A held command to show in the approval prompt: no yes/no is asked (TrayWindows.ask_user, `shown`).
    shows: int | None = None


class Questions:
    """The questions open now, and what the user said lately. Calls back into the hub to apply a Yes."""

    def __init__(self, hub: QuestionsHub, ask_user: Callable[[Question], None] | None) -> None:
        self.hub = hub
        self.ask_user = ask_user
        self.open: dict[str, Question] = {}
        self._refused_at: dict[str, float] = {}
        self._nos = NoStreak()  # a few No's in a row: questions stop for some minutes

    def ask(self, peer: Peer, op: str, typed: Any, seq: int | None) -> None:
        """Open a window for this request (or join the same one); RequestError when it is refused now."""
        if self.ask_user is None:
            raise RequestError(_("Cowork Terminal cannot show a window to ask you, so nothing changed."))
        if peer.facts.run_mark or self._descends_from_server(peer.facts.pid):
            raise RequestError(
                _(
                    "This request comes from a command an AI agent runs, so it was refused: only you can "
                    "loosen control, from the Cowork Terminal window or menu."
                )
            )
        quiet_s = self._nos.quiet_left_s()
        question = self._question(op, typed)
        if quiet_s and question.shows is None:  # showing a held command asks no yes/no: nothing to quiet
            raise RequestError(
                _(
                    "You said no to several requests in a row, so for {minutes} min Cowork Terminal asks "
                    "nothing more and nothing changed. Use the Cowork Terminal window or menu instead."
                ).format(minutes=max(1, round(quiet_s / 60)))
            )
        refused = self._refused_at.get(question.key, 0.0)
        if time.monotonic() - refused < ASK_COOLDOWN_S:
            raise RequestError(_("You said no to this a moment ago; nothing changed."))
        with self.hub.lock:
            existing = self.open.get(question.key)
            if existing is not None:  # the same request again: one window answers them all
                existing.waiting.append((peer, seq))
                return
            question.waiting.append((peer, seq))
            self.open[question.key] = question
        self.ask_user(question)

    def answer(self, question: Question, yes: bool, *, why_not: str | None = None) -> None:
        """The user's click in the confirm window: apply a Yes, then answer everyone who asked."""
        if question.shows is not None:  # no yes/no was asked of it: none is counted
            self.shown(question, why_not=why_not)
            return
        with self.hub.lock:
            self.open.pop(question.key, None)
        if yes:
            self._nos.said_yes()
            text, ok = question.apply(), True
        elif why_not:
            text, ok = why_not, False
        else:
            self._refused_at[question.key] = time.monotonic()
            text, ok = _("You said no; nothing changed."), False
            if self._nos.said_no():
                minutes = max(1, round(self._nos.quiet_s / 60))
                self.hub.notify(
                    _("Cowork Terminal stops asking for a while"),
                    _(
                        "You said no to several requests in a row. For {minutes} min, requests to loosen "
                        "control are refused without asking you."
                    ).format(minutes=minutes),
                )
        self._tell(question, text, ok)

    def shown(self, question: Question, *, why_not: str | None = None) -> None:
        """The tray showed `question.shows` in its approval prompt (or could not: `why_not`): everyone
        who asked is told so. Nothing is decided here, and no yes/no is counted."""
        with self.hub.lock:
            self.open.pop(question.key, None)
        self._tell(question, why_not or question.apply(), why_not is None)

    def _tell(self, question: Question, text: str, ok: bool) -> None:
        for peer, seq in question.waiting:
            peer.push(Ack(seq, {"message": text, "done": True}) if ok else ErrorReply(seq, text))

    def forget_peer(self, peer: Peer) -> None:
        """A peer went away: nobody to answer there."""
        for question in self.open.values():
            question.waiting = [(p, s) for p, s in question.waiting if p is not peer]

    def _descends_from_server(self, pid: int | None) -> bool:
        servers = self.hub.server_pids()
        for _step in range(ANCESTRY_DEPTH):
            if pid is None or pid <= 1:
                return False
            if pid in servers:
                return True
            pid = parent_pid(pid)
        return False

    def _question(self, op: str, typed: Any) -> Question:
        """The question a request puts to the user, in the user's words, with what a Yes does."""
        hub = self.hub
        if op == "resume":

            def resume() -> str:
                hub.set_paused(False, by=CONFIRMED_DECIDED_BY)
                return _("Host access is ON.")

            return Question(
                "resume", _("A program on this computer asks to resume host access, so that Claude can run "
                            "commands again."), _("Resume"), _("Keep paused"), resume,
            )  # fmt: skip
        if op == "approve":
            command_id = typed.id
            if hub.held(command_id) is None:
                raise RequestError(_("Command #{id} is not waiting for approval.").format(id=command_id))
            # Never a yes/no here: the approval prompt is the one window that shows a held command
            # whole (its environment's values, the folder to type for the most dangerous ones), so an
            # Allow asked from outside it brings the prompt, where the person allows or denies.
            return Question(
                f"approve-{command_id}", _(SHOWN_IN_PROMPT).format(id=command_id), "", "",
                lambda: _(SHOWN_IN_PROMPT).format(id=command_id), shows=command_id,
            )  # fmt: skip
        if op == "settings":
            changes = typed.changes
            wanted = with_changes(hub.state, **changes)
            words = describe_changes(hub.state, wanted)

            def change() -> str:  # on the state in force at the click: a pause made meanwhile stays
                hub.set_settings(**changes)
                return _("Settings changed.")

            return Question(
                "settings-" + json.dumps(wanted.to_wire(), sort_keys=True),
                _("A program on this computer asks to change Cowork Terminal's settings: {changes}.").format(
                    changes=words
                ),
                _("Change"),
                _("Keep as is"),
                change,
            )
        if op == "delete_data":  # `uninstall --data`: the CLI deletes the record only after this Yes
            return Question(
                "delete_data", _("A program on this computer asks to uninstall Cowork Terminal and delete "
                                 "its command history and logs."),
                _("Delete them"), _("Keep them"), lambda: _("You allowed deleting the history and logs."),
            )  # fmt: skip
        if op == "clear_history":
            return Question(
                "clear_history", _("A program on this computer asks to delete the activity log's history."),
                _("Delete history"), _("Keep it"),
                lambda: cleared(hub.clear_history()),
            )  # fmt: skip
        raise RequestError(f"unknown request {op!r}")


def cleared(count: int) -> str:
    return ngettext("Deleted {count} finished command.", "Deleted {count} finished commands.", count).format(
        count=count
    )


def describe_changes(before: ControlState, after: ControlState) -> str:
    """What a settings request changes, in the user's words."""
    words = []
    if after.approval_mode != before.approval_mode:
        words.append(
            _("approvals from '{before}' to '{after}'").format(
                before=ApprovalMode(before.approval_mode).label, after=ApprovalMode(after.approval_mode).label
            )
        )
    if after.approval_window_s != before.approval_window_s:
        words.append(
            _("the approval wait from {before} s to {after} s").format(
                before=format_number(before.approval_window_s, None), after=format_number(after.approval_window_s, None)
            )
        )
    if after.tools != before.tools:
        words.append(_("the tools offered from '{before}' to '{after}'").format(before=before.tools, after=after.tools))
    if after.container != before.container:
        words.append(_("commands run in a protected container") if after.container else _("commands run unprotected"))
    return "; ".join(words) or _("no change")
