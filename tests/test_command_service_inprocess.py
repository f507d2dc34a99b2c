"""A server's brain in this process: CommandService, both ServerAuthority strategies and the tray link.

Bound to a tray, the service talks to a real hub started in this process (tests/channel_peers.py)
or to a fake tray listening at the tray's address; headless, it reads a real journal. Commands run
in a real bash. What the model reads is what these tests check: the result, or the refusal's text.
What only real processes show (attacks through `execute_command`, a tray killed or quit, the OS's
facts about a peer's program) stays in tests/test_authority.py.
"""

from __future__ import annotations

import gc
import os
import shutil
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest

from app.core.authority.hub import WRITE_BUSY_TIMEOUT_S, Hub
from app.core.channel.transport import Listener, address_for
from app.core.commands.admission import CommandHeld
from app.core.commands.authority import ServerAuthority
from app.core.commands.request import CommandRefused, ExecuteRequest
from app.core.commands.service import CommandService
from app.core.commands.tray_link import NO_ANSWER, TrayLink
from app.core.journal.store import Journal, Status
from app.core.messages import (
    APP_GONE_STOP_REASON,
    DENIED_MESSAGE,
    NO_TRAY_MESSAGE,
    OTHER_COMMAND_REASON,
    PAUSE_STOP_REASON,
    PAUSED_MESSAGE,
    REQUEST_DECIDED_BY,
    USER_STOP_REASON,
    WITHDRAWN_REASON,
)
from app.core.paths import AppPaths
from tests.channel_peers import FakePeer, running_hub

pytestmark = pytest.mark.anyio
BASH = shutil.which("bash") or "/bin/bash"
STOP_DEADLINE_S = 10.0  # a pause or Stop ends a command tree in well under a second; this bounds a loaded machine


@pytest.fixture(autouse=True)
def collected_after_each_test() -> Iterator[None]:
    """Each test's event loop ends with it; what it left to the garbage collector (asyncio's pipe
    transports of finished commands close their descriptors when collected) goes now, not in the
    middle of the next test, where a descriptor number may belong to a new socket already."""
    yield
    gc.collect()


def tray_link(paths: AppPaths, *, headless: bool = False, as_frozen: bool = True) -> TrayLink:
    """A server's link. The tray in these tests is this test's own Python, not `python -m app`: the
    check a frozen build makes (the same executable, the same data folder) is the one that applies,
    unless `as_frozen` is False (then a source install's check of the tray's arguments refuses it)."""
    link = TrayLink(paths, headless=headless, lock_key="in-process")
    if as_frozen:
        link.own = replace(link.own, frozen=True)
    return link


def bound_link(paths: AppPaths, *, headless: bool = False) -> TrayLink:
    link = tray_link(paths, headless=headless)
    assert link.try_connect(), link.refusal
    link.start()
    return link


@asynccontextmanager
async def serving(paths: AppPaths, link: TrayLink | None, *, headless: bool = False) -> AsyncIterator[CommandService]:
    """One server's CommandService, with its stop watch running, as `serve` sets it up."""
    journal = Journal(paths)
    if link is not None and link.server_id is None:  # no tray took its row: it writes its own
        link.server_id = journal.register_server(os.getpid(), headless=headless, lock_key="in-process")
    service = CommandService(
        journal,
        paths,
        server_id=link.server_id if link else None,
        bash=lambda: BASH,
        environment=lambda extra: {**os.environ, **extra},
        authority=ServerAuthority(journal, link, headless=headless),
    )
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(service.run_background)
            yield service
            group.cancel_scope.cancel()
        # As `serve` leaves: the end waits for the tray's answer, so every end posted before it is taken.
        service.authority.end(service.server_id)
    finally:
        if link is not None:
            link.close()
        journal.close()


async def refusal_of(service: CommandService, command: str, cwd: Path | None = None) -> str:
    with pytest.raises(CommandRefused) as refused:
        await service.execute(ExecuteRequest(command=command, cwd=str(cwd) if cwd else None))
    return str(refused.value)


async def held_in(hub: Hub) -> int:
    deadline = time.monotonic() + STOP_DEADLINE_S
    while not hub.pending_holds():
        assert time.monotonic() < deadline, "no command was held"
        await anyio.sleep(0.01)
    return hub.pending_holds()[0].command_id


async def started_in(hub: Hub) -> int:
    deadline = time.monotonic() + STOP_DEADLINE_S
    while not hub.running_count():
        assert time.monotonic() < deadline, "no command started"
        await anyio.sleep(0.01)
    with hub.lock:
        return next(iter(next(p for p in hub.peers if p.commands).commands))


async def eventually(condition: Any) -> None:
    """Wait on the event loop (the service runs on it) until `condition()` holds."""
    with anyio.fail_after(STOP_DEADLINE_S):
        while not condition():
            await anyio.sleep(0.01)


def row(paths: AppPaths, command_id: int):
    with Journal(paths) as journal:
        return journal.get_command(command_id)


# -- bound to a tray ------------------------------------------------------------------------------


async def test_a_held_command_runs_once_the_user_allows_it(paths: AppPaths, tmp_path: Path) -> None:
    (tmp_path / "victim").mkdir()
    with running_hub(paths) as (hub, _seen):
        async with serving(paths, bound_link(paths)) as service, anyio.create_task_group() as group:
            results: list[Any] = []

            async def ask() -> None:
                request = ExecuteRequest(command="rm -rf victim && echo gone", cwd=str(tmp_path))
                results.append(await service.execute(request))

            group.start_soon(ask)
            command_id = await held_in(hub)
            assert (tmp_path / "victim").exists(), "nothing runs before the answer"
            assert hub.decide(command_id, allowed=True, by="user (approval prompt)")
        [result] = results
    assert result.to_model()["stdout"] == "gone\n"
    assert not (tmp_path / "victim").exists()
    assert row(paths, command_id).status is Status.FINISHED


async def test_a_denied_command_does_not_run_and_the_model_is_told_not_to_retry(
    paths: AppPaths, tmp_path: Path
) -> None:
    (tmp_path / "victim").mkdir()
    with running_hub(paths) as (hub, _seen):
        async with serving(paths, bound_link(paths)) as service, anyio.create_task_group() as group:
            refusals: list[str] = []

            async def ask() -> None:
                refusals.append(await refusal_of(service, "rm -rf victim", tmp_path))

            group.start_soon(ask)
            assert hub.decide(await held_in(hub), allowed=False, by="user (approval prompt)")
    assert refusals == [DENIED_MESSAGE]
    assert (tmp_path / "victim").exists()


async def test_a_pause_while_a_command_waits_refuses_it_and_it_never_runs(paths: AppPaths, tmp_path: Path) -> None:
    (tmp_path / "victim").mkdir()
    with running_hub(paths) as (hub, _seen):
        async with serving(paths, bound_link(paths)) as service, anyio.create_task_group() as group:
            refusals: list[str] = []

            async def ask() -> None:
                refusals.append(await refusal_of(service, "rm -rf victim", tmp_path))

            group.start_soon(ask)
            command_id = await held_in(hub)
            hub.set_paused(True)
            assert not hub.decide(command_id, allowed=True, by="user"), "nothing waits any more"
    assert refusals == [PAUSED_MESSAGE]
    assert (tmp_path / "victim").exists()
    assert row(paths, command_id).status is Status.REFUSED


async def test_a_held_call_returns_its_confirmation_id_when_the_user_has_not_answered(paths: AppPaths) -> None:
    with running_hub(paths) as (hub, _seen):
        hub.set_settings(approval_mode="all", approval_window_s=1.0)
        async with serving(paths, bound_link(paths)) as service:
            started = time.monotonic()
            with pytest.raises(CommandHeld) as held:
                await service.execute(ExecuteRequest(command="echo waits"))
            assert 1.0 <= time.monotonic() - started < STOP_DEADLINE_S, "it waited the user's approval window"
            assert f"confirmation_id {held.value.confirmation_id}" in str(held.value)
            hub.decide(hub.pending_holds()[0].command_id, allowed=True, by="user")
            result = await service.confirm(held.value.confirmation_id)
    assert result.to_model()["stdout"] == "waits\n"


@pytest.mark.parametrize(
    ("act", "reason"),
    [
        (lambda hub, command_id: hub.set_paused(True), PAUSE_STOP_REASON),
        (lambda hub, command_id: hub.stop(command_id), USER_STOP_REASON),
        (lambda hub, command_id: hub.close(), APP_GONE_STOP_REASON),
    ],
    ids=["pause", "stop", "the tray goes away"],
)
async def test_a_running_command_ends_within_moments_and_the_model_is_told_why(
    paths: AppPaths, act: Any, reason: str
) -> None:
    with running_hub(paths) as (hub, _seen):
        async with serving(paths, bound_link(paths)) as service, anyio.create_task_group() as group:
            results: list[Any] = []

            async def long() -> None:
                results.append(await service.execute(ExecuteRequest(command="sleep 41000")))

            group.start_soon(long)
            command_id = await started_in(hub)
            acted = time.monotonic()
            act(hub, command_id)
            with anyio.fail_after(STOP_DEADLINE_S):
                while not results:
                    await anyio.sleep(0.01)
            took = time.monotonic() - acted
    [result] = results
    assert result.stopped_reason == reason
    assert result.exit_code is None
    assert took < STOP_DEADLINE_S / 2, "within moments, not when the sleep ends"


async def test_a_server_whose_tray_went_away_refuses_new_commands_until_it_is_back(paths: AppPaths) -> None:
    with running_hub(paths) as (hub, _seen):
        link = bound_link(paths)
        async with serving(paths, link) as service:
            assert (await service.execute(ExecuteRequest(command="echo bound"))).to_model()["stdout"] == "bound\n"
            hub.close()
            await eventually(lambda: not link.connected)
            assert await refusal_of(service, "echo alone") == NO_TRAY_MESSAGE
            with running_hub(paths):  # a tray again: the link finds it within its retry interval
                await eventually(lambda: link.connected)
                result = await service.execute(ExecuteRequest(command="echo back"))
    assert result.to_model()["stdout"] == "back\n"


async def test_while_its_tray_is_away_a_bound_server_asks_the_most_contains_and_records_nothing(
    paths: AppPaths,
) -> None:
    """What a bound server falls back on if a command gets past the refusal as its tray leaves: every
    answer on the side of the user's control, and no row written by itself (the tray writes them)."""
    from app.core.commands.authority import NotRecorded
    from app.core.policy.approval import ApprovalMode

    with running_hub(paths) as (hub, _seen):
        link = bound_link(paths)
        async with serving(paths, link) as service:
            hub.close()
            await eventually(lambda: not link.connected)
            authority = service.authority
            assert authority.approval_mode() is ApprovalMode.ALL and authority.contained() is True
            assert authority.paused() and not authority.present()
            with pytest.raises(NotRecorded, match="not running"):
                await authority.begin(command="echo unrecorded", cwd="/tmp", env_keys=[], tool="execute_command")
            with pytest.raises(NotRecorded, match="not running"):
                await authority.started(1)
    with Journal(paths) as journal:
        assert [row.command for row in journal.recent_commands()] == [], "nothing was written"


async def test_a_journal_locked_by_another_program_refuses_the_command_with_words_the_model_can_act_on(
    paths: AppPaths,
) -> None:
    import sqlite3

    with running_hub(paths):
        async with serving(paths, bound_link(paths)) as service:
            blocker = sqlite3.connect(paths.journal, timeout=1)
            blocker.execute("BEGIN IMMEDIATE")
            try:
                started = time.monotonic()
                refused = await refusal_of(service, "echo blocked")
                took = time.monotonic() - started
            finally:
                blocker.rollback()
                blocker.close()
            again = await service.execute(ExecuteRequest(command="echo again"))
    assert refused == (
        "Cowork Terminal could not record this command, so it was not run: the activity log is locked by "
        "another program. Try again in a moment."
    )
    assert took < WRITE_BUSY_TIMEOUT_S + 1.0, "a refusal, not a hang"
    assert again.to_model()["stdout"] == "again\n"


async def test_a_headless_server_that_met_a_tray_obeys_it_and_ignores_the_file(paths: AppPaths) -> None:
    with running_hub(paths) as (hub, _seen):
        link = bound_link(paths, headless=True)
        async with serving(paths, link, headless=True) as service:
            hub.set_paused(True)
            with Journal(paths) as journal:  # a program resumes in the file
                journal.set_paused(False)
            assert await refusal_of(service, "echo nope") == PAUSED_MESSAGE
            hub.close()
            await eventually(lambda: not link.connected)
            with Journal(paths) as journal:
                assert journal.is_paused() is False
            assert await refusal_of(service, "echo alone") == NO_TRAY_MESSAGE, "tray-bound for life"


# -- held commands: answers, confirm and cancel -----------------------------------------------------


async def held_call(service: CommandService, command: str, cwd: Path | None = None) -> CommandHeld:
    """A call the user has not answered within the approval window: the model gets an id."""
    with pytest.raises(CommandHeld) as held:
        await service.execute(ExecuteRequest(command=command, cwd=str(cwd) if cwd else None))
    return held.value


async def test_a_command_denied_from_the_command_line_does_not_run_and_the_row_says_who(
    paths: AppPaths, tmp_path: Path
) -> None:
    (tmp_path / "keep").mkdir()
    with running_hub(paths) as (hub, _seen):
        cli = FakePeer(paths)
        async with serving(paths, bound_link(paths)) as service, anyio.create_task_group() as group:
            refusals: list[str] = []

            async def ask() -> None:
                refusals.append(await refusal_of(service, "rm -rf keep", tmp_path))

            group.start_soon(ask)
            command_id = await held_in(hub)
            cli.hello("cli")
            assert (await anyio.to_thread.run_sync(lambda: cli.ask("deny", id=command_id)))["op"] == "ack"
        cli.close()
    assert refusals == [DENIED_MESSAGE]
    assert (tmp_path / "keep").exists()
    recorded = row(paths, command_id)
    assert (recorded.status, recorded.decision) == (Status.REFUSED, "denied")
    assert recorded.reason == f"denied by {REQUEST_DECIDED_BY}"


async def test_a_held_command_denied_after_the_call_returned_cannot_be_confirmed(paths: AppPaths) -> None:
    with running_hub(paths) as (hub, _seen):
        hub.set_settings(approval_window_s=1.0)
        async with serving(paths, bound_link(paths)) as service:
            held = await held_call(service, "sudo true")
            assert hub.decide(hub.pending_holds()[0].command_id, allowed=False, by=REQUEST_DECIDED_BY)
            with pytest.raises(CommandRefused) as refused:
                await service.confirm(held.confirmation_id)
    assert str(refused.value) == DENIED_MESSAGE


async def test_cancel_withdraws_a_held_command_and_the_user_is_no_longer_asked(paths: AppPaths) -> None:
    with running_hub(paths) as (hub, _seen):
        hub.set_settings(approval_window_s=1.0)
        async with serving(paths, bound_link(paths)) as service:
            held = await held_call(service, "sudo reboot")
            [hold] = hub.pending_holds()
            assert hold.command == "sudo reboot", "the tray asks the user about it"
            said = service.cancel(held.confirmation_id)
            await eventually(lambda: hub.pending_holds() == [])
            with pytest.raises(CommandRefused) as unknown:
                await service.confirm("hold-nonsense")
    assert said.startswith("Withdrawn: the held command will not run")
    assert str(unknown.value).startswith("No command is held as 'hold-nonsense' on this server: it already ran")
    recorded = row(paths, hold.command_id)
    assert recorded.status is Status.REFUSED and recorded.reason == WITHDRAWN_REASON


async def test_a_harmless_looking_command_run_in_the_apps_own_folder_is_held(paths: AppPaths, tmp_path: Path) -> None:
    # The route a model could take to write its own "allowed" into the journal: run a script whose
    # text names no file of ours, from inside our folder.
    script = tmp_path / "tool.py"
    script.write_text("import pathlib; pathlib.Path('made-by-the-model').write_text('x')\n")
    with running_hub(paths) as (hub, _seen):
        hub.set_settings(approval_window_s=1.0)
        async with serving(paths, bound_link(paths)) as service:
            await held_call(service, f"python3 {script}", paths.data_dir)
            [hold] = hub.pending_holds()
            recorded = row(paths, hold.command_id)  # while it waits (its server's end closes it)
            elsewhere = await service.execute(ExecuteRequest(command=f"python3 {script}", cwd=str(tmp_path)))
    assert recorded.tier == "destructive" and "Cowork Terminal's own data" in recorded.reason
    assert not (paths.data_dir / "made-by-the-model").exists()
    assert elsewhere.exit_code == 0 and (tmp_path / "made-by-the-model").exists()


# -- a fake tray at the tray's address ------------------------------------------------------------


def acked(seq: int) -> dict[str, Any]:
    """A tray's ack of a server's request: the row it wrote is number 7."""
    return {"op": "ack", "seq": seq, "id": 7}


class FakeTray:
    """A program listening at the tray's address that answers like a tray, or almost."""

    def __init__(self, paths: AppPaths, data_dir: str) -> None:
        self.listener = Listener(address_for(paths))
        self.data_dir = data_dir
        self.received: list[dict[str, Any]] = []
        self.channel: Any = None
        self.connected = threading.Event()
        self.knocked = threading.Event()  # a server connected (whatever it said then)
        self.hello: dict[str, Any] | None = None
        # How it answers a server's `begin` and `started`: an ack with the row's id, or any other
        # reply made from the request's `seq` (None: it never answers).
        self.answer_begin: Callable[[int], dict[str, Any] | None] = acked
        self.answer_started: Callable[[int], dict[str, Any] | None] = acked
        self.answer_hello: dict[str, Any] = {}  # fields that replace the tray's own in its welcome
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        with suppress(OSError, EOFError):
            self.channel = self.listener.accept().channel
            self.knocked.set()
            self.hello = self.channel.receive(STOP_DEADLINE_S)
            state = {"paused": False, "approval_mode": "destructive", "approval_window_s": 40, "tools": "all"}
            welcome = {"op": "ack", "data_dir": self.data_dir, "server_id": 1, "state": state}
            self.channel.send({**welcome, **self.answer_hello})
            self.connected.set()
            while True:
                message = self.channel.receive()
                assert message is not None  # no timeout: a message, or EOFError once closed
                self.received.append(message)
                answer = {"begin": self.answer_begin, "started": self.answer_started}.get(message["op"], acked)
                if message["op"] in ("begin", "started", "finish", "end", "client"):
                    reply = answer(message["seq"])
                    if reply is not None:
                        self.channel.send(reply)

    def push(self, message: dict[str, Any]) -> None:
        self.channel.send(message)

    def close(self) -> None:
        self.listener.close()
        if self.channel is not None:
            self.channel.close()


@contextmanager
def fake_tray(paths: AppPaths, data_dir: str | None = None) -> Iterator[FakeTray]:
    tray = FakeTray(paths, data_dir or os.path.realpath(paths.data_dir))
    try:
        yield tray
    finally:
        tray.close()


async def refusal_after_an_allow(paths: AppPaths, tray: FakeTray, folder: Path, digest: Callable[[dict], str]) -> str:
    """`rm -rf victim` in `folder`, held by the fake tray, then allowed with the digest `digest`
    makes of the row the server sent: what the model reads (the command must not run)."""
    refusals: list[str] = []
    async with serving(paths, bound_link(paths)) as service, anyio.create_task_group() as group:

        async def ask() -> None:
            refusals.append(await refusal_of(service, "rm -rf victim", folder))

        group.start_soon(ask)
        await eventually(lambda: any(m["op"] == "begin" for m in tray.received))
        row = next(m for m in tray.received if m["op"] == "begin")["row"]
        tray.push({"op": "decision", "id": 7, "allowed": True, "by": "user", "digest": digest(row)})
    [refusal] = refusals
    return refusal


def digest_of(row: dict[str, Any]) -> str:
    """The digest of what the user saw, as the tray makes it from the row the server sent."""
    from app.core.channel.protocol import Pin, command_digest

    pin = Pin.from_wire(row["pin"]) if row.get("pin") else None
    return command_digest(row["command"], row["cwd"], row["env_keys"], pin, row.get("confirmation_id"))


async def test_an_allow_for_another_command_is_refused_and_nothing_runs(paths: AppPaths, tmp_path: Path) -> None:
    (tmp_path / "victim").mkdir()
    with fake_tray(paths) as tray:
        refused = await refusal_after_an_allow(paths, tray, tmp_path, lambda _row: "0" * 64)
    assert refused == "The approval did not match this command, so it was not run. Run it again."
    assert (tmp_path / "victim").exists()
    ended = [m for m in tray.received if m["op"] == "finish"]
    assert [m["outcome"]["reason"] for m in ended] == [OTHER_COMMAND_REASON]


async def test_an_allowed_command_the_tray_will_not_start_after_all_runs_nothing(
    paths: AppPaths, tmp_path: Path
) -> None:
    """A pause that lands between the user's Allow and the command's start wins: the tray refuses
    the `started`, and the server runs nothing."""
    (tmp_path / "victim").mkdir()
    with fake_tray(paths) as tray:
        tray.answer_started = lambda seq: {"op": "error", "seq": seq, "message": "host access is paused"}
        refused = await refusal_after_an_allow(paths, tray, tmp_path, digest_of)
    assert refused == PAUSED_MESSAGE
    assert (tmp_path / "victim").exists()
    assert any(m["op"] == "started" for m in tray.received), "the server did ask to start it"


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ({"op": "error", "message": "host access is paused"}, PAUSED_MESSAGE),
        ({"op": "ack", "id": "seven"}, "Cowork Terminal could not record this command, so it was not run: id must"),
        (None, f"Cowork Terminal could not record this command, so it was not run: {NO_ANSWER}"),
    ],
    ids=["paused meanwhile", "no row id", "no answer"],
)
async def test_a_begin_the_tray_does_not_record_runs_nothing_and_the_model_is_told_why(
    paths: AppPaths, tmp_path: Path, answer: dict[str, Any] | None, said: str
) -> None:
    with fake_tray(paths) as tray:
        tray.answer_begin = lambda seq: None if answer is None else {**answer, "seq": seq}
        async with serving(paths, bound_link(paths)) as service:
            refused = await refusal_of(service, f"touch {tmp_path / 'made'}")
    assert refused.startswith(said), refused
    assert not (tmp_path / "made").exists()


@pytest.mark.parametrize(
    ("as_frozen", "data_dir", "why", "said_hello"),
    [
        (True, "/somewhere/else", "the tray there keeps its data in another folder (/somewhere/else)", True),
        # The OS's facts are read before a word is sent: this look-alike learns nothing of the server.
        (False, None, "the process at the tray's address does not run Cowork Terminal", False),
    ],
    ids=["another data folder", "a script, not the app"],
)
async def test_a_server_refuses_a_program_at_the_trays_address_and_tells_the_model_why(
    paths: AppPaths, as_frozen: bool, data_dir: str | None, why: str, said_hello: bool
) -> None:
    with fake_tray(paths, data_dir) as tray:
        link = tray_link(paths, as_frozen=as_frozen)
        assert not link.try_connect()
        assert tray.knocked.wait(STOP_DEADLINE_S), "the server did knock"
        assert tray.connected.wait(STOP_DEADLINE_S) if said_hello else not tray.connected.wait(1), tray.hello
        assert (tray.hello is not None) is said_hello, tray.hello
        assert link.refusal is not None and link.refusal.startswith(why)
        async with serving(paths, link) as service:
            refused = await refusal_of(service, "echo should not run")
    assert refused.startswith(NO_TRAY_MESSAGE + " (A program that is not Cowork Terminal answered instead: " + why)


@pytest.mark.parametrize(
    "answer",
    [{"seq": "one"}, {"server_id": "one"}, {"op": "error", "message": "busy"}],
    ids=["a malformed reply", "a welcome with a malformed value", "no welcome"],
)
async def test_a_program_at_the_trays_address_that_answers_unlike_the_tray_is_refused(
    paths: AppPaths, answer: dict[str, Any]
) -> None:
    with fake_tray(paths) as tray:
        tray.answer_hello = answer
        link = tray_link(paths)
        assert not link.try_connect()
        assert tray.connected.wait(STOP_DEADLINE_S), "it did answer the server's hello"
        async with serving(paths, link) as service:
            refused = await refusal_of(service, "echo should not run")
    assert link.refusal is not None
    assert link.refusal.startswith("the program at the tray's address did not answer as Cowork Terminal does")
    assert refused.startswith(NO_TRAY_MESSAGE + " (A program that is not Cowork Terminal answered instead")


# -- headless, no tray ever -------------------------------------------------------------------------


async def test_a_headless_server_with_no_tray_reads_pause_from_the_journal(paths: AppPaths) -> None:
    async with serving(paths, None, headless=True) as service:
        assert (await service.execute(ExecuteRequest(command="echo free"))).to_model()["stdout"] == "free\n"
        with Journal(paths) as journal:
            journal.set_paused(True)
        assert await refusal_of(service, "echo paused") == PAUSED_MESSAGE


async def test_a_headless_server_with_no_tray_refuses_what_needs_approval_as_nobody_can_answer(
    paths: AppPaths, tmp_path: Path
) -> None:
    (tmp_path / "victim").mkdir()
    async with serving(paths, None, headless=True) as service:
        refused = await refusal_of(service, "rm -rf victim", tmp_path)
    assert refused.startswith("This command needs the user's approval (")
    assert "the Cowork Terminal app is not running, so nobody can approve it" in refused
    assert (tmp_path / "victim").exists()


async def test_a_headless_server_with_no_tray_asks_as_the_approval_mode_in_the_journal_says(paths: AppPaths) -> None:
    from app.core.policy import approval

    async with serving(paths, None, headless=True) as service:
        with Journal(paths) as journal:
            approval.set_approval_mode(journal, approval.ApprovalMode.ALL)
        every = await refusal_of(service, "echo hi")
        with Journal(paths) as journal:
            approval.set_approval_mode(journal, approval.ApprovalMode.NEVER)
        never = await service.execute(ExecuteRequest(command="rm -rf /tmp/cowork-terminal-test-does-not-exist"))
    assert every.startswith("This command needs the user's approval (")
    assert never.exit_code == 0


async def test_a_server_not_started_headless_refuses_everything_without_a_tray(paths: AppPaths) -> None:
    link = tray_link(paths)
    assert not link.try_connect()
    async with serving(paths, link) as service:
        assert await refusal_of(service, "echo hello") == NO_TRAY_MESSAGE
