"""What anyone on the channel may ask: a tightening is done at once, a loosening becomes a question.

The direction of each request is decided in core/policy/direction.py from its checked values; here
each tightening is one call of the hub's public controls, the same ones the tray's menu calls.
The answer to `holds` names the rules the tray applies too (`rules`): a log window started by hand
lists them from there.
"""

from __future__ import annotations

import json
from typing import Any, Protocol, TypeVar

from app.core.authority.connection import Peer
from app.core.authority.errors import RequestError
from app.core.authority.holds import HeldCommand
from app.core.authority.questions import Questions
from app.core.authority.state import ControlState
from app.core.channel.protocol import RulesTold
from app.core.execution.output import OutputBudget, parse_budget
from app.core.i18n import _
from app.core.messages import REQUEST_DECIDED_BY
from app.core.policy.direction import LOOSEN, REFUSE, classify_request
from app.core.policy.rules import Rule

T = TypeVar("T")


class RequestsHub(Protocol):
    """What a request may reach of the hub: its public controls, the same ones the tray's menu calls."""

    @property
    def state(self) -> ControlState: ...
    @property
    def questions(self) -> Questions: ...
    def pending_holds(self) -> list[HeldCommand]: ...
    def rules(self) -> list[Rule]: ...
    def set_paused(self, paused: bool, *, by: str = "user") -> None: ...
    def stop(self, command_id: int | None, by: str = "user") -> str: ...
    def decide(self, command_id: int, *, allowed: bool, by: str, rule_id: int | None = None) -> bool: ...
    def remove_rule(self, rule_id: int) -> bool: ...
    def quit_app(self) -> None: ...
    def open_log(self) -> None: ...
    def set_settings(self, **changes: Any) -> None: ...
    def set_output_budget(self, budget: OutputBudget) -> None: ...


def handle_request(
    hub: RequestsHub, peer: Peer, op: str, message: dict[str, Any], seq: int | None, typed: Any
) -> dict[str, Any] | None:
    """The fields of the ack, or None when the answer comes later (after the user's click)."""
    kind = classify_request(op, message, hub.state)
    if kind == REFUSE:
        raise RequestError(_("Refused: a value is out of range. Nothing changed."))
    if kind != LOOSEN:
        answer: dict[str, Any] = {"message": tighten(hub, op, typed)}
        if op == "holds":  # and the rules that may answer them, as the tray applies them (never the file's)
            answer["rules"] = RulesTold.of(hub.rules()).listed()
        return answer
    hub.questions.ask(peer, op, typed, seq)
    return None


def tighten(hub: RequestsHub, op: str, typed: Any) -> str:
    """Do a request that asks nothing of the user; the words the CLI prints."""
    if op == "state":
        return json.dumps(hub.state.to_wire())
    if op == "holds":  # what the user is asked, exactly as the servers described it
        return json.dumps([hold.to_window() for hold in hub.pending_holds()])
    if op == "pause":
        hub.set_paused(True, by="a request")
        return _("Host access is PAUSED: new commands are refused.")
    if op == "stop":
        return hub.stop(typed.id)
    if op == "deny":
        command_id = typed.id
        if not hub.decide(command_id, allowed=False, by=REQUEST_DECIDED_BY):
            raise RequestError(_("Command #{id} is not waiting for approval.").format(id=command_id))
        return _("Denied command #{id}.").format(id=command_id)
    if op == "remove_rule":  # one of the user's rules (core/policy/rules.py): removing one asks more
        rule_id = typed.id
        if not hub.remove_rule(rule_id):
            raise RequestError(_("There is no rule {number}.").format(number=rule_id))
        return _("Removed rule {number}.").format(number=rule_id)
    if op == "quit":
        hub.quit_app()
        return _("Cowork Terminal is quitting.")
    if op == "output_budget":  # how much output the model reads: not a control
        try:
            budget = parse_budget(typed.budget)
        except ValueError as exc:
            raise RequestError(str(exc)) from None
        hub.set_output_budget(budget)
        return _("Output budget changed.")
    if op == "open_log":
        hub.open_log()
        return _("Opened the activity log.")
    if op == "settings":
        hub.set_settings(**typed.changes)
        return _("Settings changed.")
    raise RequestError(f"unknown request {op!r}")
