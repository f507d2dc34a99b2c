"""A journal deleted, replaced or damaged under a tray whose servers still run or hold commands: the
new journal gets their rows back under their own ids, and a command whose row is missing is never
started, nor ended, unrecorded (red team, eleventh, chaos: findings 5 and 6).

The hub in this process and fake servers beside it (tests/channel_peers.py): milliseconds each.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from pathlib import Path

import pytest

from app.core.authority import server_rows
from app.core.journal.store import Journal, Status
from app.core.messages import ROW_LOST
from app.core.paths import AppPaths
from tests.channel_peers import FakePeer, running_hub

FINISHED = {"status": "finished", "exit_code": 0}


@pytest.fixture
def server(paths: AppPaths):
    made: list[FakePeer] = []

    def make() -> FakePeer:
        peer = FakePeer(paths)
        peer.hello("server", headless=False, lock_key=f"renewed-rows-{len(made)}")
        made.append(peer)
        return peer

    yield make
    for peer in made:
        peer.close()


def delete_journal(paths: AppPaths, suffixes: tuple[str, ...] = ("", "-wal", "-shm")) -> None:
    """Another program deletes the activity log under the tray."""
    for suffix in suffixes:
        Path(f"{paths.journal}{suffix}").unlink(missing_ok=True)


def delete_row(paths: AppPaths, command_id: int) -> None:
    """Another program deletes one command's row (the file stays)."""
    with contextlib.closing(sqlite3.connect(paths.journal)) as db, db:
        db.execute("DELETE FROM commands WHERE id = ?", (command_id,))


def row_of(paths: AppPaths, command_id: int):
    with Journal(paths) as journal:
        return journal.get_command(command_id)


@pytest.mark.parametrize("deleted", [("", "-wal", "-shm"), ("",)], ids=["all its files", "the main file only"])
def test_a_new_journal_holds_the_rows_of_what_runs_and_waits_under_their_own_ids(
    paths: AppPaths, server, deleted: tuple[str, ...]
) -> None:
    with running_hub(paths) as (hub, seen):
        agent = server()
        running = agent.begin("sleep 60.5", cwd="/srv/work", client_name="Claude", env_keys=["FOO"])["id"]
        held = agent.begin("rm -rf victim/*", status="waiting", cwd="/srv/work")["id"]
        hub.seen(held)
        expires_at = hub.held(held).expires_at
        delete_journal(paths, deleted)
        hub.tick()
        assert "The activity log was deleted" in seen.titles()
        job, hold = row_of(paths, running), row_of(paths, held)
        live = {server.id for server in hub.live_servers()}
        assert (job.status, job.command, job.cwd, job.client_name, job.env_keys) == (
            Status.RUNNING, "sleep 60.5", "/srv/work", "Claude", ["FOO"],
        )  # fmt: skip
        assert job.server_id in live and job.started_at is not None
        assert (hold.status, hold.command, hold.hold_expires_at) == (Status.WAITING, "rm -rf victim/*", expires_at)
        assert [record.id for record in hub.recent_commands(10)] == [held, running]
        # The person sees it, allows it, and it runs and ends recorded.
        with Journal(paths) as journal:
            assert [record.id for record in journal.pending_approvals()] == [held]
        assert hub.decide(held, allowed=True, by="user")
        assert agent.ask("started", id=held)["op"] == "ack"
        assert row_of(paths, held).status is Status.RUNNING
        for command_id in (held, running):
            assert agent.ask("finish", id=command_id, outcome=FINISHED)["op"] == "ack"
        assert {row_of(paths, i).status for i in (held, running)} == {Status.FINISHED}
        assert row_of(paths, held).decision == "allowed"
        newer = agent.begin("echo after")["id"]
        assert newer > held, "no id the old journal gave is given again"


def test_a_hold_allowed_but_not_yet_started_comes_back_with_its_answer(paths: AppPaths, server) -> None:
    with running_hub(paths) as (hub, _seen):
        agent = server()
        held = agent.begin("rm -rf build", status="waiting")["id"]
        assert hub.decide(held, allowed=True, by="user")
        delete_journal(paths)
        hub.tick()
        row = row_of(paths, held)
        assert (row.status, row.decision, row.decided_by) == (Status.WAITING, "allowed", "user")
        assert agent.ask("started", id=held)["op"] == "ack"
        assert row_of(paths, held).status is Status.RUNNING


def test_a_hold_nobody_can_answer_any_more_is_not_shown_as_waiting_for_an_answer(paths: AppPaths, server) -> None:
    """Dropped by a pause (its server is told and ends it): the file must not offer it to be allowed."""
    with running_hub(paths) as (hub, _seen):
        agent = server()
        held = agent.begin("rm -rf build", status="waiting")["id"]
        hub.set_paused(True)
        delete_journal(paths)
        hub.tick()
        row = row_of(paths, held)
        assert row.status is Status.WAITING and row.hold_expires_at <= time.time()
        with Journal(paths) as journal:
            assert journal.pending_approvals() == []


def test_a_journal_deleted_since_the_monitors_last_look_is_renewed_before_a_held_command_starts(
    paths: AppPaths, server
) -> None:
    with running_hub(paths) as (hub, _seen):
        agent = server()
        held = agent.begin("rm -rf build", status="waiting")["id"]
        assert hub.decide(held, allowed=True, by="user")
        delete_journal(paths)  # no tick: `started` comes first
        assert agent.ask("started", id=held)["op"] == "ack"
        row = row_of(paths, held)
        assert (row.status, row.command, row.decision) == (Status.RUNNING, "rm -rf build", "allowed")


def test_a_held_command_whose_row_another_program_deleted_starts_only_with_its_row_written_again(
    paths: AppPaths, server
) -> None:
    with running_hub(paths) as (hub, _seen):
        agent = server()
        held = agent.begin("rm -rf build", status="waiting", cwd="/srv/work")["id"]
        assert hub.decide(held, allowed=True, by="user")
        delete_row(paths, held)
        assert agent.ask("started", id=held)["op"] == "ack"
        row = row_of(paths, held)
        assert (row.status, row.command, row.cwd, row.decision) == (
            Status.RUNNING,
            "rm -rf build",
            "/srv/work",
            "allowed",
        )


def test_a_command_whose_row_cannot_be_written_again_is_refused_as_it_starts(
    paths: AppPaths, server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hub kept nothing of it (or could not write it): it does not run, and the model is told
    why and what to do."""
    with running_hub(paths) as (hub, _seen):
        agent = server()
        held = agent.begin("rm -rf build", status="waiting")["id"]
        assert hub.decide(held, allowed=True, by="user")
        delete_row(paths, held)
        monkeypatch.setattr(server_rows, "_write_back_row", lambda _hub, _peer, _kept: False)
        refused = agent.ask("started", id=held)
        assert (refused["op"], refused["message"]) == ("error", ROW_LOST)
        assert row_of(paths, held) is None
        assert hub.running_count() == 0, "it is still held, not running"


def test_the_end_of_a_command_whose_row_was_deleted_is_recorded_on_its_row_written_again(
    paths: AppPaths, server
) -> None:
    with running_hub(paths) as (hub, _seen):
        agent = server()
        running = agent.begin("sleep 1", cwd="/srv/work")["id"]
        delete_row(paths, running)
        assert agent.ask("finish", id=running, outcome=FINISHED)["op"] == "ack"
        row = row_of(paths, running)
        assert (row.status, row.exit_code, row.command) == (Status.FINISHED, 0, "sleep 1")


def test_the_end_of_a_command_is_recorded_in_a_journal_deleted_since_the_monitors_last_look(
    paths: AppPaths, server
) -> None:
    with running_hub(paths) as (hub, _seen):
        agent = server()
        running = agent.begin("sleep 1")["id"]
        delete_journal(paths)  # no tick: its end comes first
        assert agent.ask("finish", id=running, outcome=FINISHED)["op"] == "ack"
        assert row_of(paths, running).status is Status.FINISHED
        hub.tick()
        assert row_of(paths, running).status is Status.FINISHED, "not written again as running"


def test_what_ended_is_not_written_again(paths: AppPaths, server) -> None:
    with running_hub(paths) as (hub, _seen):
        agent = server()
        ended = agent.begin("echo done")["id"]
        assert agent.ask("finish", id=ended, outcome=FINISHED)["op"] == "ack"
        delete_journal(paths)
        hub.tick()
        assert row_of(paths, ended) is None
