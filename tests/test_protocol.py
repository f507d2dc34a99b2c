"""The channel's typed messages: one decode, and every value checked at the edge before any comparison."""

from __future__ import annotations

import json
import math
import re

import pytest

from app.core.authority.state import DEFAULTS, ControlState, loosened, with_changes
from app.core.channel.protocol import (
    FROM_SERVER,
    FROM_TRAY,
    Ack,
    BadValue,
    Begin,
    BeginRow,
    ClientName,
    Closing,
    DecisionPush,
    End,
    ErrorReply,
    Finish,
    Hello,
    HoldClock,
    Pin,
    Progress,
    Started,
    StatePush,
    StopPush,
    Welcome,
    begin_row_to_wire,
    command_digest,
    decode,
    decode_request,
    encode,
    outcome_from_wire,
    outcome_to_wire,
)
from app.core.journal.store import Outcome, Status

NOT_NUMBERS = [float("nan"), float("inf"), float("-inf"), True, False, "40", None, [40], {"s": 40}]
PIN = Pin(
    "/home/ana/project", (2049, 131), (("/home/ana/project/post.sh", "ab" * 32),), "cd" * 32, (("PATH", "/usr/bin"),)
)


@pytest.mark.parametrize("value", [*NOT_NUMBERS, -5, 0, 0.5, 56, 1e300])
def test_an_approval_window_that_is_not_a_finite_number_in_range_is_refused_at_the_edge(value: object) -> None:
    with pytest.raises(BadValue):
        decode_request("settings", {"op": "settings", "changes": {"approval_window_s": value}})


@pytest.mark.parametrize("value", [1, 1.5, 40, 55])
def test_an_approval_window_in_range_decodes_as_a_float(value: float) -> None:
    typed = decode_request("settings", {"op": "settings", "changes": {"approval_window_s": value}})
    assert typed.changes == {"approval_window_s": float(value)}


@pytest.mark.parametrize("value", [True, 3.0, -1, 2**63, "3", None, float("nan")])
def test_an_id_must_be_a_whole_number_in_range_and_never_a_boolean(value: object) -> None:
    for op in ("stop", "deny", "approve", "remove_rule"):
        with pytest.raises(BadValue):
            decode_request(op, {"op": op, "id": value})


def test_requests_that_carry_no_values_decode_to_nothing() -> None:
    assert decode_request("pause", {"op": "pause"}) is None
    assert decode_request("resume", {"op": "resume", "id": float("nan")}) is None


@pytest.mark.parametrize("budget", [True, 3.5, float("nan"), None, ["seed"]])
def test_an_output_budget_must_be_text_or_a_whole_number(budget: object) -> None:
    with pytest.raises(BadValue):
        decode_request("output_budget", {"op": "output_budget", "budget": budget})


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("exit_code", float("nan")),
        ("exit_code", True),
        ("exit_code", 2**40),
        ("stdout_bytes", -1),
        ("stdout_bytes", 1.5),
        ("duration_ms", float("inf")),
        ("duration_ms", -3.0),
        ("status", "exploded"),
    ],
)
def test_an_outcome_with_a_value_no_server_sends_is_refused(key: str, value: object) -> None:
    wire = outcome_to_wire(Outcome(status=Status.FINISHED, exit_code=0, duration_ms=12.5))
    wire[key] = value
    with pytest.raises(BadValue):
        outcome_from_wire(wire)
    with pytest.raises(BadValue):
        Finish.from_wire({"op": "finish", "id": 3, "outcome": wire})


def test_an_outcome_goes_through_the_wire_unchanged_but_cut_to_previews() -> None:
    outcome = Outcome(status=Status.FAILED, exit_code=2, reason="x", stdout=b"out", stdout_bytes=3, duration_ms=1.5)
    back = outcome_from_wire(outcome_to_wire(outcome))
    assert (back.status, back.exit_code, back.reason, back.stdout_bytes, back.duration_ms) == (
        Status.FAILED, 2, "x", 3, 1.5,
    )  # fmt: skip
    assert back.extra["stdout_preview"] == "out"


def test_a_begin_row_with_its_pin_decodes_to_the_digest_the_server_computes() -> None:
    row = {"command": "bash ./post.sh", "cwd": "/home/ana/link", "env_keys": ["PATH"], "status": Status.WAITING,
           "timeout_ms": 30_000, "tool": "execute_command", "pin": PIN}  # fmt: skip
    decoded = BeginRow.from_wire(begin_row_to_wire(row))
    assert decoded.pin == PIN
    assert decoded.digest() == command_digest("bash ./post.sh", "/home/ana/link", ["PATH"], PIN)


def test_a_hold_to_run_without_protection_says_so_both_ways_and_a_plain_row_does_not() -> None:
    """`unprotected`: no rule of the user's may answer it (authority/holds.rule_may_answer)."""
    row = {"command": "sudo ls", "cwd": "/x", "status": Status.WAITING, "unprotected": True}
    decoded = BeginRow.from_wire(begin_row_to_wire(row))
    assert decoded.unprotected and BeginRow.from_wire(decoded.to_wire()).unprotected
    plain = BeginRow.from_wire(begin_row_to_wire({"command": "ls", "cwd": "/x"}))
    assert not plain.unprotected and "unprotected" not in plain.to_wire()


@pytest.mark.parametrize(
    "other",
    [
        Pin("/home/ana/other", PIN.folder_id, PIN.scripts, PIN.env_digest, PIN.env_shown),
        Pin(PIN.folder, (2049, 132), PIN.scripts, PIN.env_digest, PIN.env_shown),
        Pin(PIN.folder, PIN.folder_id, (("/home/ana/project/post.sh", "ef" * 32),), PIN.env_digest, PIN.env_shown),
        Pin(PIN.folder, PIN.folder_id, PIN.scripts, "00" * 32, PIN.env_shown),
        Pin(PIN.folder, PIN.folder_id, PIN.scripts, PIN.env_digest, (("PATH", "/tmp/evilbin:/usr/bin"),)),
    ],
)
def test_the_digest_covers_the_folders_identity_the_scripts_and_the_environment(other: Pin) -> None:
    assert command_digest("ls", "/x", [], other) != command_digest("ls", "/x", [], PIN)


@pytest.mark.parametrize(
    "row",
    [
        {"command": "ls", "timeout_ms": float("nan")},
        {"command": "ls", "timeout_ms": True},
        {"command": "ls", "timeout_ms": -1},
        {"command": "ls", "env_keys": "PATH"},
        {"command": 3},
        {"command": "ls", "status": "done"},
        {"command": "ls", "unprotected": 1},
        {"command": "ls", "pin": {"folder": "/x", "folder_id": [1, True]}},
        {"command": "ls", "pin": {"folder": "/x", "folder_id": [1, -2]}},
        {"command": "ls", "pin": {"folder": "/x", "folder_id": 7}},
        {"command": "ls", "pin": {"folder": "/x", "folder_id": [1, 2], "scripts": "/x/run.sh"}},
        {"command": "ls", "pin": {"folder": "/x", "folder_id": [1, 2], "scripts": [["/x/run.sh"]]}},
        {"command": "ls", "pin": {"folder": "/x", "folder_id": [1, 2], "env_shown": [["A", "1"]] * 10_000}},
        "ls",
    ],
)
def test_a_begin_row_no_server_of_ours_sends_is_refused(row: object) -> None:
    with pytest.raises(BadValue):
        BeginRow.from_wire(row)


def test_a_decision_that_is_not_exactly_true_is_a_no() -> None:
    decision = DecisionPush.from_wire({"op": "decision", "id": 4, "allowed": 1, "by": "x", "digest": "d"})
    assert decision.allowed is False
    with pytest.raises(BadValue):
        DecisionPush.from_wire({"op": "decision", "id": True, "allowed": True, "by": "x", "digest": "d"})


def test_a_state_read_with_a_nan_window_takes_the_strictest_window_and_counts_as_loosening() -> None:
    assert ControlState.from_wire({**DEFAULTS.to_wire(), "approval_window_s": float("nan")}).approval_window_s == 1.0
    assert with_changes(DEFAULTS, approval_window_s=float("inf")).approval_window_s == 1.0
    odd = ControlState(approval_window_s=math.nan)  # made by hand: still never a tightening
    assert "approval_window_s" in loosened(DEFAULTS, odd)


@pytest.mark.parametrize(
    "hello",
    [
        {"op": "hello", "role": "admin"},
        {"op": "hello", "role": "server", "server_id": True},
        {"op": "hello", "role": "server", "server_id": float("nan")},
        {"op": "hello", "role": "server", "pid": -1},
        {"op": "hello", "role": "server", "remembered": "paused"},
    ],
)
def test_a_hello_no_program_of_ours_sends_is_refused(hello: dict) -> None:
    with pytest.raises(BadValue):
        Hello.from_wire(hello)


def test_a_servers_hello_decodes_with_what_it_remembers() -> None:
    hello = Hello.from_wire(
        {
            "op": "hello",
            "role": "server",
            "pid": 42,
            "headless": True,
            "lock_key": "k",
            "server_id": 7,
            "remembered": DEFAULTS.to_wire(),
        }  # fmt: skip
    )
    assert (hello.role, hello.pid, hello.headless, hello.server_id) == ("server", 42, True, 7)
    assert ControlState.from_wire(dict(hello.remembered or {})) == DEFAULTS


# -- every message: one encode, one decode ------------------------------------------------------

EVERY_MESSAGE = [
    (FROM_TRAY, Ack(3, {"message": "Done.", "done": True})),
    (FROM_TRAY, Ack(None, {"data_dir": "/d", "tray_pid": 7, "state": DEFAULTS.to_wire()})),
    (FROM_TRAY, ErrorReply(4, "host access is paused")),
    (FROM_TRAY, StatePush(DEFAULTS.to_wire())),
    (FROM_TRAY, DecisionPush(5, True, "user", "ab" * 32)),
    (FROM_TRAY, StopPush(6)),
    (FROM_TRAY, HoldClock(7, 1_800_000_000.5)),
    (FROM_TRAY, Closing("Cowork Terminal (the app) stopped")),
    (FROM_SERVER, Begin(BeginRow("rm -rf build", "/srv", ("A", "B"), Status.WAITING, reason="deletes", pin=PIN))),
    (FROM_SERVER, Begin(BeginRow("ls", None, (), Status.RUNNING), under=DEFAULTS.to_wire())),
    (FROM_SERVER, Started(8)),
    (FROM_SERVER, Finish(9, Outcome(status=Status.FINISHED, exit_code=0, duration_ms=3.5))),
    (FROM_SERVER, Progress(10, "so far", "", 6, 0)),
    (FROM_SERVER, ClientName("claude-ai", "0.1")),
    (FROM_SERVER, End()),
]


@pytest.mark.parametrize(
    ("kinds", "message"), EVERY_MESSAGE, ids=lambda m: type(m).__name__ if not isinstance(m, dict) else ""
)
def test_every_message_comes_back_the_same_through_encode_json_and_decode(kinds: dict, message: object) -> None:
    sent = json.loads(json.dumps(encode(message)))  # what the other end reads
    back = decode(sent, kinds)
    if isinstance(message, Finish):  # the outcome travels as previews: compared by its numbers
        assert (back.id, back.outcome.status, back.outcome.exit_code) == (9, Status.FINISHED, 0)
    else:
        assert back == message


def test_a_server_row_decodes_to_the_row_the_tray_writes() -> None:
    row = {"command": "ls", "cwd": None, "env_keys": ["B", "A"], "status": Status.RUNNING, "timeout_ms": 1000}
    begin = Begin.of_row(row)
    assert decode(encode(begin), FROM_SERVER).row == BeginRow.from_wire(begin_row_to_wire(row))
    assert (begin.row.command, begin.row.env_keys, begin.row.timeout_ms) == ("ls", ("A", "B"), 1000)


@pytest.mark.parametrize(
    ("kinds", "message", "why"),
    [
        (FROM_TRAY, {"op": "hold_clock", "id": 1, "expires_at": float("nan")}, "expires_at must be a number"),
        (FROM_TRAY, {"op": "hold_clock", "id": 1, "expires_at": float("inf")}, "expires_at must be a number"),
        (FROM_TRAY, {"op": "hold_clock", "id": True, "expires_at": 5}, "id must be a whole number"),
        (FROM_TRAY, {"op": "stop", "id": -1}, "id must be from 0"),
        (FROM_TRAY, {"op": "decision", "id": 1, "allowed": True, "by": None, "digest": "x"}, "by must be text"),
        (FROM_TRAY, {"op": "state", "state": "paused"}, "state must be an object"),
        (FROM_TRAY, {"op": "ack", "seq": 1.5}, "seq must be a whole number"),
        (FROM_TRAY, {"op": "error", "seq": 1, "message": 42}, "message must be text"),
        (FROM_TRAY, {"op": "closing", "reason": ["x"]}, "reason must be text"),
        (FROM_TRAY, {"op": "begin", "row": {}}, "unexpected message 'begin'"),
        (FROM_SERVER, {"op": "progress", "id": 1, "stdout_bytes": float("nan")}, "stdout_bytes must be a whole"),
        (FROM_SERVER, {"op": "started", "id": 2**63}, "id must be from 0"),
        (FROM_SERVER, {"op": "begin", "row": {"command": "ls", "status": "running"}, "under": "all"}, "under must be"),
        (FROM_SERVER, {"op": "decision", "id": 1}, "unexpected message 'decision'"),
        (FROM_SERVER, {"op": 7}, "unexpected message 7"),
    ],
)
def test_a_message_no_program_of_ours_sends_is_refused_at_the_edge_with_its_reason(
    kinds: dict, message: dict, why: str
) -> None:
    with pytest.raises(BadValue, match=re.escape(why)):
        decode(message, kinds)


def test_a_welcome_without_a_data_folder_is_not_one() -> None:
    with pytest.raises(BadValue, match="data_dir must be text"):
        Welcome.from_ack(Ack(None, {"tray_pid": 7, "state": {}}))


def test_the_digest_covers_the_hold_so_an_allow_kept_for_an_id_answers_no_later_hold_of_it() -> None:
    """A review, 2026-12-05: ids start again after the history is cleared; the same command held
    again under the same id must not match an Allow given to the first hold."""
    first = BeginRow("rm -rf victim", "/x", (), Status.WAITING, confirmation_id="hold-aaaaaaaaaaaa")
    again = BeginRow("rm -rf victim", "/x", (), Status.WAITING, confirmation_id="hold-bbbbbbbbbbbb")
    assert first.digest() != again.digest()
    assert first.digest() == command_digest("rm -rf victim", "/x", [], None, "hold-aaaaaaaaaaaa")
