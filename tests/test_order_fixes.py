"""The fixes of the ninth red team's order findings (tests/test_red_team_nine_order.py), each at its
own layer: the tray's count of pauses that a decision names (`Begin.pauses`, `Started.pauses`), the
sweep of what closed servers left at a pause, ending processes by their exact marks, and a headless
server's row checked against the journal's pause."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

import anyio
import pytest

from app.core.authority.hub import Hub
from app.core.channel.protocol import FROM_SERVER, FROM_TRAY, Begin, BeginRow, Started, StatePush, decode, encode
from app.core.commands.authority import NotRecorded, ServerAuthority
from app.core.commands.tray_link import TrayLink
from app.core.execution import orphans, process_marks
from app.core.journal.store import Journal, Status
from app.core.messages import PAUSED_MESSAGE
from app.core.paths import AppPaths
from tests.channel_peers import FakePeer, running_hub, wait_until

linux_proc = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="marks are read from /proc")


def begin(server: FakePeer, command: str, pauses: int | None, status: str = "running", **row: str) -> dict[str, object]:
    """A server's `begin` naming the tray's count of pauses it decided under (`pauses`)."""
    row = {"command": command, "cwd": "/tmp", "env_keys": [], "status": status, "tool": "execute_command", **row}
    return server.ask("begin", row=row, **({} if pauses is None else {"pauses": pauses}))


def test_the_pause_count_goes_both_ways_on_the_wire() -> None:
    for direction, message in [
        (FROM_TRAY, StatePush({"paused": True}, 3)),
        (FROM_SERVER, Begin(BeginRow("ls", None, (), Status.RUNNING), pauses=2)),
        (FROM_SERVER, Started(8, 5)),
    ]:
        assert decode(encode(message), direction) == message
    assert "pauses" not in encode(Started(8)), "none said: none sent (a tray before these reads it as before)"


def test_a_row_decided_before_a_pause_is_refused_after_the_resume(paths: AppPaths) -> None:
    """A server's decision names the tray's count of pauses it had heard of; a row named with an older
    count is refused once the tray has resumed (recorded as refused for the pause), and one named with
    the count in force is written."""
    with running_hub(paths) as (hub, _seen):
        server = FakePeer(paths)
        try:
            server.hello("server", pid=os.getpid(), lock_key="order")
            hub.set_paused(True)
            hub.set_paused(False)
            pushes = [server.next_push("state"), server.next_push("state")]
            assert [push.get("pauses") for push in pushes] == [1, 1]
            before = begin(server, "echo judged before the pause", 0)
            unnamed = begin(server, "echo named no count", None)  # it had not heard of the pause
            after = begin(server, "echo judged after the resume", 1)
        finally:
            server.close()
        with Journal(paths) as journal:
            rows = {row.command: (row.status, row.reason) for row in journal.recent_commands(limit=10)}
    assert before == {"op": "error", "seq": before["seq"], "message": "host access is paused"}
    assert unnamed["op"] == "error", unnamed
    assert after["op"] == "ack" and isinstance(after.get("id"), int), after
    assert rows["echo judged before the pause"] == (Status.REFUSED, PAUSED_MESSAGE)


def test_a_server_that_bound_after_a_pause_is_not_refused_for_it(paths: AppPaths) -> None:
    """No count named (no push since it bound): only a pause pushed to that server refuses it."""
    with running_hub(paths) as (hub, _seen):
        hub.set_paused(True)
        hub.set_paused(False)
        server = FakePeer(paths)
        try:
            server.hello("server", pid=os.getpid(), lock_key="later")
            answer = begin(server, "echo after it all", None)
        finally:
            server.close()
    assert answer["op"] == "ack", answer


def test_the_start_of_a_hold_made_before_a_pause_is_refused_after_the_resume(paths: AppPaths) -> None:
    with running_hub(paths) as (hub, _seen):
        server = FakePeer(paths)
        try:
            server.hello("server", pid=os.getpid(), lock_key="order")
            hub.set_settings(approval_mode="all")
            count = server.next_push("state")["pauses"]
            old = begin(server, "rm -rf old", count, "waiting", confirmation_id="c1", reason="deletes")
            hub.set_paused(True)
            hub.set_paused(False)
            new = begin(server, "rm -rf new", count + 1, "waiting", confirmation_id="c2", reason="deletes")
            refused = server.ask("started", id=old["id"], pauses=count)
            started = server.ask("started", id=new["id"], pauses=count + 1)
        finally:
            server.close()
    assert refused["op"] == "error" and refused["message"] == "host access is paused", refused
    assert started["op"] == "ack", started


@contextmanager
def marked_sleeps(*marks: str) -> Iterator[dict[str, subprocess.Popen[bytes]]]:
    """A `sleep` carrying each mark (as a command's processes do), killed afterwards."""
    made = {mark: subprocess.Popen(["sleep", "60"], env={**os.environ, process_marks.MARK_ENV: mark}) for mark in marks}
    try:
        wait_until(lambda: set(process_marks.marked_processes().values()) >= set(marks))
        yield made
    finally:
        for process in made.values():
            process.kill()
            process.wait()


@linux_proc
def test_ending_by_exact_marks_spares_the_others() -> None:
    with marked_sleeps("order-test:a:1", "order-test:a:2", "order-test:a:10") as made:
        ended = process_marks.end_marked_any({"order-test:a:1", "order-test:a:10"})
        made["order-test:a:1"].wait(5)
        made["order-test:a:10"].wait(5)
        assert made["order-test:a:2"].poll() is None
    assert sorted(ended) == sorted([made["order-test:a:1"].pid, made["order-test:a:10"].pid])


@linux_proc
def test_a_pause_ends_at_once_what_servers_gone_left_and_the_rest_after_the_backstop(paths: AppPaths) -> None:
    """What a closed runner (or a tray before) left carries a mark no connected server has: the pause
    ends it at once. A live server's own processes are its own to end gently (its sweep, its stop);
    whatever of them still runs at the backstop is ended then."""
    gone = orphans.server_mark(paths, "gone") + ":4"
    live = orphans.server_mark(paths, "live") + ":5"
    other_home = "0123456789ab:gone:4"  # another app home's: never touched
    with running_hub(paths) as (hub, _seen), marked_sleeps(gone, live, other_home) as made:
        server = FakePeer(paths)
        try:
            server.hello("server", pid=os.getpid(), lock_key="live")
            hub.set_paused(True)
            made[gone].wait(5)
            assert made[live].poll() is None, "a connected server's command is its own to stop"
            made[live].wait(5)  # the backstop, PAUSE_BACKSTOP_S later
            assert made[other_home].poll() is None
        finally:
            server.close()


def test_a_headless_row_is_refused_when_the_journal_says_paused(paths: AppPaths) -> None:
    """Headless with no tray: a pause that came while the command was judged refuses its row."""
    with Journal(paths) as journal:
        server_id = journal.register_server(os.getpid(), headless=True, lock_key="order")
        authority = ServerAuthority(journal, None, headless=True)
        journal.set_paused(True)
        with pytest.raises(NotRecorded) as refused:
            anyio.run(lambda: authority.begin(command="echo late", cwd="/tmp", server_id=server_id))
        [row] = journal.recent_commands(limit=1)
        journal.set_paused(False)
        command_id = anyio.run(lambda: authority.begin(command="echo now", cwd="/tmp", server_id=server_id))
    assert str(refused.value) == PAUSED_MESSAGE
    assert (row.command, row.status, row.reason) == ("echo late", Status.REFUSED, PAUSED_MESSAGE)
    assert command_id > row.id


@linux_proc
def test_switching_the_container_on_ends_what_a_gone_server_started_outside_it(paths: AppPaths) -> None:
    """A command begun while the user had the container off, whose server has gone since: switching it
    on ends what carries its mark; a command begun while it was on, and a connected server's (its own
    to end), go on."""
    with running_hub(paths) as (hub, _seen):
        hub.set_settings(container=False)
        gone, live = FakePeer(paths), FakePeer(paths)
        try:
            gone.hello("server", pid=os.getpid(), lock_key="gone")
            live.hello("server", pid=os.getpid(), lock_key="live")
            outside = begin(gone, "nohup loop &", None)["id"]
            its_own = begin(live, "nohup loop &", None)["id"]
            gone.close()
            wait_until(lambda: len(hub.connections.servers()) == 1)
            marks = {
                "outside": f"{orphans.server_mark(paths, 'gone')}:{outside}",
                "inside": f"{orphans.server_mark(paths, 'gone')}:{int(outside) + 100}",
                "live": f"{orphans.server_mark(paths, 'live')}:{its_own}",
            }
            with marked_sleeps(*marks.values()) as made:
                hub.set_settings(container=True)
                made[marks["outside"]].wait(5)
                assert made[marks["inside"]].poll() is None
                assert made[marks["live"]].poll() is None
        finally:
            live.close()


def test_a_server_names_the_count_it_last_heard_and_is_refused_for_an_older_one(paths: AppPaths) -> None:
    """The link keeps the tray's count from its pushes; a row named with it is written, one named with
    an older count (or none, decided before any push came) is refused as paused, and a row whose caller
    names none (the session's keys) gets the count known as it is sent."""
    with running_hub(paths) as (hub, _seen), Journal(paths) as journal:
        link = TrayLink(paths, headless=False, lock_key="order")
        link.own = replace(link.own, frozen=True)  # the tray is this test's Python: a frozen build's check
        assert link.try_connect(), link.refusal
        link.start()
        try:
            authority = ServerAuthority(journal, link, headless=False)
            assert authority.tray_pauses() is None, "told nothing since it bound"
            hub.set_paused(True)
            hub.set_paused(False)
            wait_until(lambda: authority.tray_pauses() == 1 and not authority.paused())
            row = {"command": "echo hi", "cwd": "/tmp", "env_keys": [], "tool": "execute_command"}

            async def rows() -> list[object]:
                said: list[object] = []
                for pauses in (0, None, 1, "unnamed"):
                    named = {} if pauses == "unnamed" else {"pauses": pauses}
                    try:
                        said.append(await authority.begin(**row, **named))
                    except NotRecorded as refused:
                        said.append(str(refused))
                return said

            said = anyio.run(rows)
        finally:
            link.close()
    assert said[:2] == [PAUSED_MESSAGE, PAUSED_MESSAGE]
    assert all(isinstance(command_id, int) for command_id in said[2:]), said


def test_a_deny_taken_between_an_allows_look_and_its_take_is_not_overridden(hub: Hub) -> None:
    """A review, 2026-12-06: since a Deny is taken outside the hub's lock, one that came between an
    Allow's look at the hold (a rule's) and its take was followed by that Allow, both pushed: the
    server keeps the last one it gets, so the Allow replaced the person's Deny."""
    import threading
    import time

    from app.core.authority.holds import HeldCommand

    pushed: list[object] = []

    class Peer:  # weakly referable and hashable, as a real peer is (server_rows keeps rows per peer)
        server_id = 1
        push = staticmethod(pushed.append)

    peer = Peer()
    hub.holds.add(
        HeldCommand(7, "rm -rf x", "/", [], "execute_command", "r", "c", time.time() + 300, "d", peer)  # type: ignore[arg-type]
    )
    looked = hub.holds.get

    def look_then_the_persons_deny(command_id: int):  # type: ignore[no-untyped-def]
        found = looked(command_id)
        if threading.current_thread().name == "rule":
            clicking = threading.Thread(target=lambda: hub.decide(7, allowed=False, by="user"), daemon=True)
            clicking.start()  # its push comes before the hub's lock, which this Allow holds: wait for that
            deadline = time.monotonic() + 10
            while not pushed and time.monotonic() < deadline:
                time.sleep(0.01)
        return found

    hub.holds.get = look_then_the_persons_deny  # type: ignore[method-assign]
    allowed: list[bool] = []
    rule = threading.Thread(target=lambda: allowed.append(hub.decide(7, allowed=True, by="rule 3")), name="rule")
    rule.start()
    rule.join(10)
    assert allowed == [False], "the Allow found the hold gone"
    assert [getattr(m, "allowed", None) for m in pushed] == [False], pushed
