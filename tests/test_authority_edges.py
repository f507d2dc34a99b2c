"""The edges of a server's link to the tray and of the tray's authority, in this process.

A tray that answers oddly, goes away mid-request or cannot be sent a message must leave the server
refusing (fail closed) and the record whole; a loosening asked too often stops being asked. The
tray's end is played by the test where no tray of ours would do it (a hub of this process that does
not welcome, a tray that never answers or refuses an end), by the real hub (tests/channel_peers.py)
elsewhere; the server's end is the real TrayLink and ServerAuthority.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_types import Implementation

from app.core.authority.questions import describe_changes
from app.core.authority.state import ControlState
from app.core.channel.call_messages import CallCancel
from app.core.channel.client import NoTray, TrayRefused, ask_tray
from app.core.channel.local_link import LocalEnd, local_pair
from app.core.channel.protocol import Begin, ClientName, Started
from app.core.channel.wire import TO_TRAY_FRAME_BYTES
from app.core.commands.admission import CommandHeld
from app.core.commands.authority import NotRecorded, ServerAuthority
from app.core.commands.request import (
    CommandRefused,
    ExecuteRequest,
    check_arguments,
    got,
    validate_request,
    whole_number,
)
from app.core.commands.tray_link import NO_ANSWER, LinkRefused, TrayLink
from app.core.execution.process_marks import parent_pid
from app.core.journal.store import Journal, Outcome, Status
from app.core.messages import HOLD_EXPIRED_REASON, NO_TRAY_MESSAGE, OTHER_COMMAND_REASON, WITHDRAWN_MESSAGE
from app.core.paths import AppPaths
from tests.channel_peers import AtTheTraysAddress, FakePeer, running_hub, scripted_tray, state_wire, wait_until
from tests.in_process_server import serving
from tests.test_command_service_inprocess import BASH, refusal_of, tray_link
from tests.test_command_service_inprocess import serving as serving_service

ANSWER_S = 5.0  # bounds a wait that would otherwise hang a broken test
LOCKED = "the activity log is locked by another program"


# -- a hub of this process, played by the test -----------------------------------------------------


class ScriptedHub:
    """The hub's end of an in-process channel (core/channel/local_link.py), played by the test: it
    answers a hello with `welcome` and each request with `reply(message)` (None: no answer)."""

    def __init__(self, paths: AppPaths, welcome: dict[str, Any] | None = None) -> None:
        self.end, self.link_end = local_pair()
        self.welcome = welcome or {
            "op": "ack", "data_dir": os.path.realpath(paths.data_dir), "server_id": 1, "state": state_wire(),
        }  # fmt: skip
        self.reply: Callable[[dict[str, Any]], dict[str, Any] | None] = lambda m: {"op": "ack", "seq": m["seq"]}
        self.received: list[dict[str, Any]] = []
        self.on_close: Callable[[], None] = lambda: None
        self.end.listen(self._deliver, lambda: self.on_close())

    def dial(self) -> LocalEnd:
        return self.link_end

    def _deliver(self, message: dict[str, Any]) -> None:
        self.received.append(message)
        answer = self.welcome if message["op"] == "hello" else self.reply(message)
        if answer is not None:
            self.end.send(answer)

    def ops(self) -> list[str]:
        return [m["op"] for m in self.received]


def local_link_to(hub: ScriptedHub, paths: AppPaths) -> TrayLink:
    return TrayLink(paths, headless=False, lock_key="edges", dial=hub.dial)


@pytest.mark.parametrize(
    "how",
    ["closed before the hello", "an error for a welcome", "a welcome whose state is not an object"],
)
def test_a_hub_of_this_process_that_does_not_welcome_the_server_leaves_it_unbound_and_refusing(
    paths: AppPaths, how: str
) -> None:
    hub = ScriptedHub(paths)
    if how == "closed before the hello":
        hub.end.close()
    elif how == "an error for a welcome":
        hub.welcome = {"op": "error", "seq": None, "message": "not now"}
    else:
        hub.welcome = {**hub.welcome, "state": "paused"}
    link = local_link_to(hub, paths)
    assert link.try_connect() is False
    assert (link.bound, link.connected, link.state) == (False, False, None)
    assert hub.link_end.closed, "the server let go of the channel it could not use"
    with Journal(paths) as journal:
        assert ServerAuthority(journal, link, headless=False).refusal() == NO_TRAY_MESSAGE


def test_a_hub_going_away_as_a_server_sends_leaves_its_end_recorded_and_every_later_request_refused(
    paths: AppPaths,
) -> None:
    """The hub's end closes while the server's is still open: the end the server posts cannot arrive,
    so the server writes it itself; a request is refused, and once the link knows, nothing is sent
    and nothing is taken from the journal instead (a tethered server obeys only a tray)."""
    with Journal(paths) as journal:
        server_id = journal.register_server(os.getpid(), headless=False, lock_key="edges")
        command_id = journal.begin_command(command="echo hi", cwd="/tmp", server_id=server_id)
        other_id = journal.begin_command(command="sleep 100", cwd="/tmp", server_id=server_id)
        hub = ScriptedHub(paths)
        link = local_link_to(hub, paths)
        assert link.try_connect(), link.refusal
        link.start()
        authority = ServerAuthority(journal, link, headless=False)
        try:
            assert link.tell(CallCancel("call-1")) is True  # a cancellation: sent, its answer not waited for
            wait_until(lambda: "call_cancel" in hub.ops())
            refusals: list[str] = []

            def as_the_hub_closes() -> None:  # the hub's end is closed, the server's not yet
                authority.finish(command_id, Outcome(status=Status.FINISHED, exit_code=0, stdout=b"hi\n"))
                try:
                    link.request(Started(command_id))
                except LinkRefused as refused:
                    refusals.append(str(refused))

            hub.on_close = as_the_hub_closes
            hub.end.close()
            assert refusals == ["the Cowork Terminal app could not be reached (the in-process channel is closed)"]
            assert not link.connected
            assert "finish" not in hub.ops()
            assert journal.get_command(command_id).status is Status.RUNNING, "not yet: the server writes it next"
            assert authority.refusal() == NO_TRAY_MESSAGE
            ended = journal.get_command(command_id)
            assert (ended.status, ended.exit_code, ended.stdout_preview) == (Status.FINISHED, 0, "hi\n")

            # From now on: nothing is sent, and nothing is read from or written to the journal instead.
            assert link.post(ClientName("Claude", "1")) is False
            assert link.tell(CallCancel("call-2")) is False
            with pytest.raises(LinkRefused, match="^the Cowork Terminal app is not running$"):
                link.request(Started(command_id))
            authority.request_stop(other_id)
            authority.progress(other_id, b"more", b"", 4, 0)
            authority.set_client(server_id, "Claude", "1")
            assert journal.stop_requests([other_id]) == set()
            other = journal.get_command(other_id)
            assert (other.status, other.stdout_preview) == (Status.RUNNING, None)
            assert [s.client_name for s in journal.servers()] == [None]
            journal.request_stop(other_id)  # another program writes a Stop into the file
            assert authority.stop_requests([other_id]) == set(), "a tethered server takes no Stop from the file"
            assert authority.paused() is True
        finally:
            link.close()


def test_a_push_the_server_fails_to_take_from_the_hub_of_its_process_counts_as_the_tray_gone(
    paths: AppPaths,
) -> None:
    hub = ScriptedHub(paths)
    link = local_link_to(hub, paths)
    assert link.try_connect(), link.refusal
    link.start()

    failures = iter([RuntimeError("a bug in what the server does with a push")])

    def broken() -> None:  # once: the link's own account of the loss goes through it too
        for failure in failures:
            raise failure

    link.on_change = broken
    try:
        with Journal(paths) as journal:
            authority = ServerAuthority(journal, link, headless=False)
            assert authority.refusal() is None
            hub.end.send({"op": "state", "state": state_wire()})
            assert not link.connected
            assert hub.end.closed, "the hub hears the server leave"
            assert authority.refusal() == NO_TRAY_MESSAGE, "refused, not run on the last state it heard"
    finally:
        link.close()


@pytest.mark.anyio
async def test_a_hub_of_this_process_that_answers_too_late_has_the_command_refused_after_the_wait(
    paths: AppPaths,
) -> None:
    """Both ways a server asks the hub of its process (from the event loop, and from a thread) give
    up after ACK_TIMEOUT_S, even while the hub is still busy with an earlier request: the command is
    refused, never run unrecorded. An answer that comes after that finds nobody, and breaks nothing."""
    hub = ScriptedHub(paths)
    hub.reply = lambda _message: None  # answered by hand below, late
    link = local_link_to(hub, paths)
    assert link.try_connect(), link.refusal
    link.start()
    loop_errors: list[dict[str, Any]] = []
    asyncio_loop = asyncio.get_running_loop()
    asyncio_loop.set_exception_handler(lambda _loop, context: loop_errors.append(context))
    from_threads: dict[int, str] = {}

    def ask_from_a_thread(command_id: int) -> None:
        try:
            link.request(Started(command_id))
        except LinkRefused as refused:
            from_threads[command_id] = str(refused)

    first = threading.Thread(target=ask_from_a_thread, args=(1,))
    last = threading.Thread(target=ask_from_a_thread, args=(2,))
    try:
        started = time.monotonic()
        first.start()  # the sending thread waits for its answer: what comes next waits behind it
        await anyio.to_thread.run_sync(wait_until, lambda: "started" in hub.ops())
        async with anyio.create_task_group() as group:

            async def ask_from_a_thread_too() -> None:
                await anyio.sleep(0.05)  # after the begin below was queued
                last.start()

            group.start_soon(ask_from_a_thread_too)
            with pytest.raises(LinkRefused) as from_the_loop:
                await link.request_async(Begin.of_row({"command": "echo hi", "cwd": "/tmp", "env_keys": []}))
        took = time.monotonic() - started
        for thread in (first, last):
            await anyio.to_thread.run_sync(thread.join, ANSWER_S * 2)
        await anyio.to_thread.run_sync(wait_until, lambda: "begin" in hub.ops())
        [begin] = [m for m in hub.received if m["op"] == "begin"]
        hub.end.send({"op": "ack", "seq": begin["seq"], "id": 7})  # the late answer
        await anyio.sleep(0.1)  # it reaches the event loop, where nobody waits for it any more
    finally:
        link.close()
        asyncio_loop.set_exception_handler(None)
    assert str(from_the_loop.value) == NO_ANSWER
    assert from_threads == {1: NO_ANSWER, 2: NO_ANSWER}
    assert 5.0 <= took < 2 * 5.0
    assert loop_errors == []


def test_a_request_whose_event_loop_ended_before_its_answer_leaves_the_link_sending(paths: AppPaths) -> None:
    """The answer to a request from an event loop that has ended since (a runner that left) has
    nowhere to go: the link's sending thread died of it, and every later post (a command's end, the
    client's name) was taken and never sent, while the link looked alive."""
    hub = ScriptedHub(paths)
    hub.reply = lambda message: None if message["op"] == "begin" else {"op": "ack", "seq": message["seq"]}
    link = local_link_to(hub, paths)
    assert link.try_connect(), link.refusal
    link.start()
    try:

        async def ask_then_leave() -> None:
            with anyio.move_on_after(0.2):  # the runner leaves while the tray writes the row
                await link.request_async(Begin.of_row({"command": "echo hi", "cwd": "/tmp", "env_keys": []}))

        anyio.run(ask_then_leave)
        [begin] = [m for m in hub.received if m["op"] == "begin"]
        hub.end.send({"op": "ack", "seq": begin["seq"], "id": 7})  # the answer, once that loop is gone
        assert link.post(ClientName("Claude", "1"))
        wait_until(lambda: "client" in hub.ops())
    finally:
        link.close()


# -- a program at the tray's address, played by the test -------------------------------------------


def bound_to(paths: AppPaths) -> TrayLink:
    link = tray_link(paths)  # the frozen build's check of its tray: this test's own Python passes it
    assert link.try_connect(), link.refusal
    link.start()
    return link


def refusing(*ops: str, why: str = LOCKED) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A tray's answers: an error for `ops` (as the hub says when the journal is locked), else an ack."""

    def reply(message: dict[str, Any]) -> dict[str, Any]:
        if message["op"] in ops:
            return {"op": "error", "seq": message["seq"], "message": why}
        return {"op": "ack", "seq": message["seq"], "id": 7}

    return reply


@pytest.mark.anyio
async def test_a_tray_that_goes_away_while_a_commands_row_waits_has_the_command_refused(paths: AppPaths) -> None:
    with scripted_tray(paths) as tray:
        tray.reply = lambda _message: None  # it takes the row and never says it wrote it
        async with serving_service(paths, bound_to(paths)) as service:
            refusals: list[str] = []

            async def ask() -> None:
                refusals.append(await refusal_of(service, "echo never ran"))

            async with anyio.create_task_group() as group:
                group.start_soon(ask)
                await anyio.to_thread.run_sync(wait_until, lambda: "begin" in tray.ops())
                tray.close()
            assert not service.authority.link.connected
    assert refusals == [
        "Cowork Terminal could not record this command, so it was not run: the Cowork Terminal app went away. "
        "Try again in a moment."
    ]


def test_a_push_the_server_fails_to_take_over_the_socket_counts_as_the_tray_gone(paths: AppPaths) -> None:
    with scripted_tray(paths) as tray, Journal(paths) as journal:
        link = bound_to(paths)
        failures = iter([RuntimeError("a bug in what the server does with a push")])

        def broken() -> None:
            for failure in failures:
                raise failure

        link.on_change = broken
        try:
            authority = ServerAuthority(journal, link, headless=False)
            assert authority.refusal() is None
            tray.push({"op": "state", "state": state_wire()})
            wait_until(lambda: not link.connected)
            assert authority.refusal() == NO_TRAY_MESSAGE, "refused, not run on the last state it heard"
        finally:
            link.close()


def test_an_end_a_refusal_and_a_leaving_the_tray_does_not_record_are_written_by_the_server_itself(
    paths: AppPaths,
) -> None:
    """A command's end and its server's leaving are records, not controls: one the tray refuses to
    write (its journal locked) is written by the server, so the history stays whole. A refusal's row
    too; but a row for a command that would run is never written without the tray."""
    with scripted_tray(paths) as tray, Journal(paths) as journal:
        server_id = journal.register_server(os.getpid(), headless=False, lock_key="edges")
        command_id = journal.begin_command(command="echo hi", cwd="/tmp", server_id=server_id)
        tray.reply = refusing("finish", "begin", "end")
        link = bound_to(paths)
        try:
            authority = ServerAuthority(journal, link, headless=False)
            authority.finish(command_id, Outcome(status=Status.FINISHED, exit_code=0, stdout=b"hi\n"))
            wait_until(lambda: "finish" in tray.ops())
            wait_until(lambda: (authority.flush(), journal.get_command(command_id).status)[1] is Status.FINISHED)
            assert journal.get_command(command_id).exit_code == 0

            row = {"command": "echo no", "cwd": "/nowhere", "env_keys": [], "server_id": server_id}
            refused_id = anyio.run(lambda: authority.begin(**row, status=Status.REFUSED, reason="`cwd` does not exist"))
            refused = journal.get_command(refused_id)
            assert (refused.command, refused.status, refused.reason) == (
                "echo no",
                Status.REFUSED,
                "`cwd` does not exist",
            )
            with pytest.raises(NotRecorded) as not_recorded:
                anyio.run(lambda: authority.begin(**row))
            assert str(not_recorded.value) == (
                f"Cowork Terminal could not record this command, so it was not run: {LOCKED}. Try again in a moment."
            )
            assert [c.command for c in journal.recent_commands()] == ["echo no", "echo hi"]

            authority.end(server_id)
            assert tray.ops().count("end") == 1
            [server] = journal.servers(live_only=False)
            assert server.state == "exited"
        finally:
            link.close()


def test_a_result_for_a_call_nobody_waits_for_is_ignored_and_the_link_stays(paths: AppPaths) -> None:
    with scripted_tray(paths) as tray:
        link = bound_to(paths)
        delivered: list[object] = []
        link.calls["call-mine"] = delivered.append
        try:
            tray.push({"op": "call_result", "call_id": "call-not-mine", "result": {"content": []}})
            tray.push({"op": "call_result", "call_id": "call-mine", "result": {"content": []}})
            wait_until(lambda: delivered)
            assert [getattr(d, "call_id", None) for d in delivered] == ["call-mine"]
            assert link.connected
        finally:
            link.close()


def test_a_message_too_big_for_the_channel_is_not_sent_and_the_link_stays(paths: AppPaths) -> None:
    """A client may name itself with a megabyte: the name is not sent (nor written to the journal
    behind the tray's back), and the server's next message still reaches the tray. One of half a
    megabyte is sent, and the journal keeps its start."""
    huge = "C" * TO_TRAY_FRAME_BYTES
    with running_hub(paths) as (_hub, _seen), Journal(paths) as journal:
        link = bound_to(paths)
        try:
            authority = ServerAuthority(journal, link, headless=False)
            assert link.post(ClientName(huge, "1")) is False
            assert link.tell(ClientName(huge, "1")) is False
            authority.set_client(link.server_id, huge, "1")
            assert link.connected
            authority.set_client(link.server_id, "Claude", "1")
            wait_until(lambda: [s.client_name for s in journal.servers()] == ["Claude"])
            authority.set_client(link.server_id, "K" * 500_000, "2" * 1000)
            kept = [("K" * 200, "2" * 200)]
            wait_until(lambda: [(s.client_name, s.client_version) for s in journal.servers()] == kept)
        finally:
            link.close()


@pytest.mark.anyio
@pytest.mark.parametrize("bound", [True, False], ids=["tray-bound", "headless"])
async def test_a_client_named_with_half_a_megabyte_is_kept_by_the_first_200_characters_on_every_row(
    home: Path, paths: AppPaths, request: pytest.FixtureRequest, bound: bool
) -> None:
    """The servers table kept 200 characters of a client's name, but each command's row kept the name a
    call carried, whole: half a megabyte on every row, in every window and list that shows it."""
    name, version = "K" * 500_000, "2" * 1000
    if bound:
        request.getfixturevalue("hub")
    async with serving(home, bound=bound, client_info=Implementation(name=name, version=version)) as client:
        result = await client.call_tool("execute_command", {"command": "echo hi"})
        assert not result.is_error, result
        with Journal(paths) as journal:
            kept = ("K" * 200, "2" * 200)
            assert [(row.client_name, row.client_version) for row in journal.recent_commands()] == [kept]
            assert [(row.client_name, row.client_version) for row in journal.servers()] == [kept]


@pytest.mark.anyio
async def test_a_held_command_confirmed_after_the_tray_said_another_command_or_too_late_does_not_run(
    paths: AppPaths, tmp_path: Path
) -> None:
    """The model confirms a held command the tray allowed with the digest of another command, then one
    whose hold the tray says ran out: neither runs, and once closed a hold is gone for good."""
    (tmp_path / "victim").mkdir()
    request = ExecuteRequest(command="rm -rf victim", cwd=str(tmp_path))
    with scripted_tray(paths, state_wire(approval_mode="all", approval_window_s=1)) as tray:
        async with serving_service(paths, bound_to(paths)) as service:
            link = service.authority.link

            async def held() -> str:
                with pytest.raises(CommandHeld) as waiting:
                    await service.execute(request)  # the approval window (1 s) passes unanswered
                return waiting.value.confirmation_id

            other, other_id = await held(), 7  # the tray numbers its rows from 7
            tray.push({"op": "decision", "id": other_id, "allowed": True, "by": "user", "digest": "0" * 64})
            await anyio.to_thread.run_sync(wait_until, lambda: other_id in link.decisions)
            with pytest.raises(CommandRefused) as mismatch:
                await service.confirm(other)

            late, late_id = await held(), 8
            tray.push({"op": "hold_clock", "id": late_id, "expires_at": time.time() - 1})
            await anyio.to_thread.run_sync(wait_until, lambda: late_id in link.hold_clocks)
            with pytest.raises(CommandRefused) as expired:
                await service.confirm(late)
            service.withdraw(late)  # command_stop on its job: nothing left to withdraw
            with pytest.raises(CommandRefused) as withdrawn:
                await service.await_approval(late, BASH, None)  # the job's task, started only now
            await anyio.to_thread.run_sync(wait_until, lambda: tray.ops().count("finish") == 2)
    assert str(mismatch.value) == "The approval did not match this command, so it was not run. Run it again."
    assert str(expired.value) == (
        "The held command can no longer run: the hold expired before it was confirmed. Run it again to ask "
        "the user anew."
    )
    assert str(withdrawn.value) == WITHDRAWN_MESSAGE
    ends = [(m["id"], m["outcome"]["status"], m["outcome"]["reason"]) for m in tray.received if m["op"] == "finish"]
    assert ends == [(7, "refused", OTHER_COMMAND_REASON), (8, "refused", HOLD_EXPIRED_REASON)]
    assert (tmp_path / "victim").is_dir()


# -- what a server makes of the model's request (pure) ----------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments", "refusal"),
    [
        (
            "execute_command",
            {"command": {"rm": "-rf"}},
            "`command` must be a string: the bash command to run (got an object).",
        ),
        (
            "execute_command",
            {"command": "echo \ud800"},
            "`command` contains a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape), which is not text "
            "and has no UTF-8 form. Send proper UTF-8 text; to produce such bytes, write them with printf escapes "
            "inside the command.",
        ),
        (
            "execute_command",
            {"command": "env", "env": {"LD_\x00": "x"}},
            "`env` variable name 'LD_\\x00' contains a NUL character (\\u0000), which no program can receive. "
            "Remove it; to produce a NUL byte, write it with printf '\\0' inside the command.",
        ),
        ("command_output", {"jobId": 1, "tail": -1}, "`tail` must be a whole number from 0 to 300435456 (got -1)."),
    ],
)
def test_an_argument_no_program_can_receive_is_refused_naming_it(
    tool: str, arguments: dict[str, Any], refusal: str
) -> None:
    with pytest.raises(CommandRefused) as refused:
        check_arguments(tool, arguments)
    assert str(refused.value) == refusal


def test_a_value_json_cannot_carry_is_named_by_its_type() -> None:
    assert got(b"rm") == "bytes"
    assert got({"a": 1}) == "an object"
    with pytest.raises(CommandRefused, match=r"^`offset` must be a whole number from 0 to 300435456 \(got 1.5\)\.$"):
        whole_number("offset", 1.5)


def folder_refusal(request: ExecuteRequest, home: Path) -> str:
    with pytest.raises(CommandRefused) as refused:
        validate_request(request, str(home))
    return str(refused.value)


def test_each_way_a_commands_folder_or_text_is_wrong_gets_its_own_words(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "sub").mkdir()
    assert folder_refusal(ExecuteRequest(command=["ls"]), tmp_path) == (
        "`command` must be a string: the bash command to run (got a list)."
    )
    assert folder_refusal(ExecuteRequest(command="ls", cwd=7), tmp_path) == (
        "`cwd` must be a string: the absolute path of an existing folder (got 7)."
    )
    assert folder_refusal(ExecuteRequest(command="ls", cwd="~no-such-user-here/x"), tmp_path) == (
        "`cwd` names a home folder that does not exist: ~no-such-user-here/x. Give an absolute path."
    )
    assert folder_refusal(ExecuteRequest(command="ls", cwd="notes.txt/inside"), tmp_path) == (
        f"`cwd` does not exist: {tmp_path}/notes.txt/inside (a part of it is a file). Give an existing folder."
    )
    # A relative folder is the home's: the command runs where the model meant, never in the server's cwd.
    assert validate_request(ExecuteRequest(command="ls", cwd="sub"), str(tmp_path)).cwd == str(tmp_path / "sub")


# -- the in-process channel itself ------------------------------------------------------------------


def test_the_in_process_channel_keeps_what_came_before_anyone_listened_and_closes_once_for_both() -> None:
    hub_end, link_end = local_pair()
    link_end.send({"op": "hello", "n": 1})
    link_end.send({"op": "hello", "n": 2})
    heard: list[int] = []
    closed: list[str] = []
    hub_end.listen(lambda message: heard.append(message["n"]), lambda: closed.append("hub"))
    assert heard == [1, 2], "what arrived first is handed over first, in order"
    assert link_end.receive(0.01) is None, "nothing came the other way"
    link_end.close()
    assert closed == ["hub"]
    with pytest.raises(OSError, match="the in-process channel is closed"):
        hub_end.send({"op": "ack"})
    with pytest.raises(EOFError):
        link_end.receive(0.01)
    late: list[str] = []
    link_end.listen(lambda _message: None, lambda: late.append("link"))
    assert late == ["link"], "a listener that comes after the close hears of it at once"
    alone = LocalEnd()
    alone.close()
    assert alone.closed


# -- the confirm questions a tray asks the user ------------------------------------------------------


def test_a_confirm_window_that_cannot_open_refuses_in_its_own_words_without_counting_as_a_no(
    paths: AppPaths,
) -> None:
    why = "The confirmation window could not open, so nothing changed."
    with running_hub(paths) as (hub, seen):
        hub.set_paused(True)
        cli = FakePeer(paths)
        try:
            cli.hello("cli")
            seq = cli.send("resume")
            assert seen.asked.wait(ANSWER_S)
            hub.answer(seen.questions[0], False, why_not=why)
            assert cli.answer_to(seq) == {"op": "error", "seq": seq, "message": why}
            seen.asked.clear()
            cli.send("resume")
            assert seen.asked.wait(ANSWER_S), "asked again at once: the user never said no"
        finally:
            cli.close()
        assert hub.state.paused is True


def test_after_three_nos_in_a_row_the_tray_says_so_once_and_asks_nothing_for_five_minutes(paths: AppPaths) -> None:
    with running_hub(paths) as (hub, seen):
        hub.set_paused(True)
        cli = FakePeer(paths)
        try:
            cli.hello("cli")
            for request in ({"op": "resume"}, {"op": "clear_history"}, {"op": "delete_data"}):
                seen.asked.clear()
                seq = cli.send(**request)
                assert seen.asked.wait(ANSWER_S)
                hub.answer(seen.questions[-1], False)
                assert cli.answer_to(seq)["message"] == "You said no; nothing changed."
            assert seen.notices == [
                (
                    "Cowork Terminal stops asking for a while",
                    "You said no to several requests in a row. For 5 min, requests to loosen control are "
                    "refused without asking you.",
                )
            ]
            refused = cli.ask("settings", changes={"approval_mode": "never"})
        finally:
            cli.close()
        assert refused["message"] == (
            "You said no to several requests in a row, so for 5 min Cowork Terminal asks nothing more and "
            "nothing changed. Use the Cowork Terminal window or menu instead."
        )
        assert len(seen.questions) == 3, "no window for the fourth"
        assert (hub.state.paused, hub.state.approval_mode) == (True, "destructive")


def test_a_settings_question_names_each_setting_it_would_change() -> None:
    before = ControlState()
    after = ControlState(approval_window_s=90.0, tools="execute", container=False)
    assert describe_changes(before, after) == (
        "the approval wait from 40 s to 90 s; the tools offered from 'all' to 'execute'; commands run unprotected"
    )
    assert describe_changes(after, ControlState(approval_window_s=90.0, tools="execute", container=True)) == (
        "commands run in a protected container"
    )


def test_a_process_gone_before_its_ancestry_is_read_has_no_parent() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert parent_pid(child.pid) is None
    assert parent_pid(os.getpid()) == os.getppid()


# -- the hub's journal writer ---------------------------------------------------------------------


def test_a_journal_another_program_broke_refuses_commands_and_tells_the_user_why_once(paths: AppPaths) -> None:
    with running_hub(paths) as (_hub, seen):
        server = FakePeer(paths)
        try:
            server.hello("server", pid=os.getpid(), lock_key="edges")
            vandal = sqlite3.connect(paths.journal)
            vandal.execute("DROP TABLE commands")
            vandal.commit()
            vandal.close()
            refusals = [server.begin("echo unrecorded")["message"] for _ in range(2)]
        finally:
            server.close()
    assert refusals == ["the activity log cannot be written (no such table: commands)"] * 2
    assert seen.notices == [
        (
            "Cowork Terminal cannot record commands",
            "Commands are refused: the activity log cannot be written (no such table: commands).",
        )
    ], "told once"


# -- a server that writes its own journal (headless, no tray) -----------------------------------------


def test_a_headless_server_whose_row_another_program_deleted_registers_again_and_records_the_command(
    paths: AppPaths,
) -> None:
    with Journal(paths) as journal:
        server_id = journal.register_server(os.getpid(), headless=True, lock_key="edges")
        vandal = sqlite3.connect(paths.journal)
        vandal.execute("DELETE FROM servers WHERE id = ?", (server_id,))
        vandal.commit()
        vandal.close()
        authority = ServerAuthority(journal, None, headless=True)
        command_id = anyio.run(lambda: authority.begin(command="echo hi", cwd="/tmp", server_id=server_id))
        recorded = journal.get_command(command_id)
        [again] = journal.servers()
        assert (recorded.command, recorded.server_id) == ("echo hi", again.id)
        assert (again.pid, again.state, again.headless) == (os.getpid(), "live", True)


# -- the CLI's question to the tray (core/channel/client.py) ---------------------------------------


class Impostor(AtTheTraysAddress):
    """A program at the tray's address that answers the CLI's hello with `welcome` (None: never),
    then each request with `reply(message)`."""

    def __init__(self, paths: AppPaths, welcome: dict[str, Any] | None) -> None:
        self.welcome = welcome
        self.reply: Callable[[dict[str, Any]], list[dict[str, Any]] | None] = lambda _message: None
        super().__init__(paths)

    def after_hello(self) -> None:
        if self.welcome is None:
            self.channel.receive()  # until the CLI gives up
            return
        self.channel.send(self.welcome)
        while True:
            answers = self.reply(self.channel.receive())
            if answers is None:
                self.channel.close()
                return
            for answer in answers:
                self.channel.send(answer)


@contextmanager
def impostor(paths: AppPaths, welcome: dict[str, Any] | None) -> Iterator[Impostor]:
    program = Impostor(paths, welcome)
    try:
        yield program
    finally:
        program.close()


@pytest.mark.parametrize(
    "welcome",
    [{"op": "error", "seq": None, "message": "who?"}, {"op": "ack", "seq": "one"}, None],
    ids=["an error", "a malformed ack", "nothing"],
)
def test_the_cli_does_not_take_a_program_that_does_not_welcome_it_for_the_tray(
    paths: AppPaths, welcome: dict[str, Any] | None
) -> None:
    with impostor(paths, welcome), pytest.raises(NoTray) as refused:
        ask_tray(paths, "pause")
    assert str(refused.value) == "the program at Cowork Terminal's address did not answer as the app does"


def welcome_of(paths: AppPaths) -> dict[str, Any]:
    return {"op": "ack", "seq": None, "data_dir": os.path.realpath(paths.data_dir), "state": state_wire()}


def test_a_tray_that_never_answers_the_clis_pause_is_told_as_nothing_changed(paths: AppPaths) -> None:
    with impostor(paths, welcome_of(paths)) as program:
        # What comes instead of the answer: a push meant for servers, a malformed message, another seq.
        program.reply = lambda m: [
            {"op": "state", "state": state_wire()},
            {"op": "ack", "seq": "x"},
            {"op": "ack", "seq": m["seq"] + 1},
        ]
        with pytest.raises(TrayRefused) as refused:
            ask_tray(paths, "pause", wait_s=0.3)
    assert str(refused.value) == "no answer within 0.3 s; nothing changed"


def test_a_tray_that_goes_away_before_answering_the_cli_is_told_as_gone(paths: AppPaths) -> None:
    with impostor(paths, welcome_of(paths)), pytest.raises(NoTray) as refused:
        ask_tray(paths, "stop", id=3)  # the program closes the connection instead of answering
    assert str(refused.value).startswith("the Cowork Terminal app went away (")
