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
from app.core.messages import AGENT_STOP_BY, REQUEST_DECIDED_BY
from app.core.policy.direction import LOOSEN, REFUSE, classify_request
from app.core.policy.rules import Rule

T = TypeVar("T")

# The `holds` answer: its list at most this long as JSON (twice that in its message, escaped again;
# the rest of the 1 MiB frame is the rules'), each hold's texts bounded (HeldCommand.to_list).
HOLDS_ANSWER_BYTES = 300_000


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
    hub: RequestsHub,
    peer: Peer,
    op: str,
    message: dict[str, Any],
    seq: int | None,
    typed: Any,
    *,
    contained: bool = False,
) -> dict[str, Any] | None:
    """The fields of the ack, or None when the answer comes later (after the user's click).
    `contained`: the asker runs inside a command's container (only a pause or a stop get this far)."""
    kind = classify_request(op, message, hub.state)
    if kind == REFUSE:
        raise RequestError(_("Refused: a value is out of range. Nothing changed."))
    if kind != LOOSEN:
        if op != "holds":
            return {"message": tighten(hub, op, typed, contained=contained)}
        # What the user is asked, as the servers described it (each text bounded: see holds_listed).
        listed, left_out = holds_listed(hub.pending_holds())
        # And the rules that may answer them, as the tray applies them (never the file's).
        answer: dict[str, Any] = {"message": listed, "rules": RulesTold.of(hub.rules()).listed()}
        if left_out:
            answer["left_out"] = left_out
        return answer
    hub.questions.ask(peer, op, typed, seq)
    return None


def holds_listed(holds: list[HeldCommand]) -> tuple[str, int]:
    """The holds as JSON for the `holds` answer, and how many were left out: each text field bounded
    (a command cut with a marker, as the journal's `bounded` cuts), and only as many holds as fit
    HOLDS_ANSWER_BYTES, so that the answer always fits one message (the CLI lists them, a window
    started by hand reads its rules from it). The approval window gets each whole, not from here."""
    listed: list[str] = []
    size = 0
    for hold in holds:
        one = json.dumps(hold.to_list())  # ASCII: each character of it at most two in the answer's frame
        if size + len(one) > HOLDS_ANSWER_BYTES:
            break
        listed.append(one)
        size += len(one) + 1
    return "[" + ",".join(listed) + "]", len(holds) - len(listed)


def tighten(hub: RequestsHub, op: str, typed: Any, *, contained: bool = False) -> str:
    """Do a request that asks nothing of the user; the words the CLI prints. A stop from inside a
    command's container (`cowork-terminal stop` run by a command) is an agent's, never the person's."""
    if op == "state":
        return json.dumps(hub.state.to_wire())
    if op == "pause":
        hub.set_paused(True, by="a request")
        return _("Host access is PAUSED: new commands are refused.")
    if op == "stop":
        return hub.stop(typed.id, by=AGENT_STOP_BY) if contained else hub.stop(typed.id)
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
