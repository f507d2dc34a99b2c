"""A command's id is never given again: not after "Clear history", not in a journal the tray starts
anew while servers live (review of 2026-12-05). Servers, the tray and models keep ids (jobs, holds,
Stops, output files); a new command under an old id had another agent's output read as its own, a
Stop and an end reach another agent's command, and an Allow answer a hold the user never saw."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp_types import Implementation

from app.core.authority.hub import Hub
from app.core.commands.jobs import job_file
from app.core.journal.store import Journal, Status
from app.core.paths import AppPaths
from tests.channel_peers import running_hub
from tests.in_process_server import allow, came, held_by, holds_shown, serving
from tests.stdio_client import run

pytestmark = pytest.mark.anyio


def rows(paths: AppPaths) -> list:
    with Journal.open(paths) as journal:
        return journal.recent_commands()


def agent(name: str) -> Implementation:
    return Implementation(name=name, version="1.0.0")


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    text = result.content[0].text
    return {"error": text} if result.is_error else json.loads(text)


def renew(paths: AppPaths, hub: Hub) -> None:
    """Another program deletes the journal; the tray starts a new one at its next look."""
    paths.journal.unlink()
    hub.tick()


async def only_the_allowed_runs(
    hub: Hub, client: Client, held: int, job: int, allowed_folder: Path, other_folder: Path
) -> None:
    """The user allows the hold they saw: its job runs (removing `allowed_folder`), the other does not."""
    allow(hub, held)
    done = await call(client, "command_wait", {"jobId": job})
    assert done["status"] == "finished", done
    assert not allowed_folder.exists() and other_folder.exists()


def test_ids_go_on_above_the_rows_clear_history_deleted(paths: AppPaths) -> None:
    with Journal.open(paths) as journal:
        first = journal.begin_command(command="echo a", cwd="/tmp", status=Status.FINISHED)
        second = journal.begin_command(command="echo b", cwd="/tmp", status=Status.FINISHED)
        assert journal.clear_history() == 2
        assert journal.clear_history() == 0, "a second clearing keeps the floor the first set"
        again = journal.begin_command(command="echo c", cwd="/tmp")
        journal.raise_id_floor(1)  # a lower floor never lowers it
        last = journal.begin_command(command="echo d", cwd="/tmp")
    assert (first, second, again, last) == (1, 2, 3, 4)


async def test_after_clear_history_another_agent_reads_only_its_own_jobs_output(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path
) -> None:
    async with serving(home, bound=True, client_info=agent("agent-A")) as a:
        job = await run(a, {"command": "echo SECRET_OF_AGENT_A", "cwd": str(tmp_path), "background": True})
        await call(a, "command_wait", {"jobId": job["jobId"]})
    assert await came(lambda: rows(paths)[0].status is Status.FINISHED)
    hub.clear_history()
    async with serving(home, bound=True, client_info=agent("agent-B")) as b:
        mine = await run(b, {"command": "echo b-output", "cwd": str(tmp_path)})
        async with serving(home, bound=True, client_info=agent("agent-B")) as b2:
            out = await call(b2, "command_output", {"jobId": mine["jobId"]})
            theirs = await call(b2, "command_output", {"jobId": job["jobId"]})
    assert mine["jobId"] != job["jobId"]
    assert "SECRET_OF_AGENT_A" not in json.dumps(out) and "b-output" in out["output"], out
    assert "There is no job" in theirs["error"], theirs


async def test_in_a_journal_started_anew_a_stop_and_an_end_reach_only_their_own_command(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path
) -> None:
    async with serving(home, bound=True, client_info=agent("agent-A")) as a:
        old = await run(a, {"command": "sleep 2; echo SECRET_OF_A", "cwd": str(tmp_path), "background": True})
        assert await came(lambda: rows(paths)[0].status is Status.RUNNING)
        renew(paths, hub)
        async with serving(home, bound=True, client_info=agent("agent-B")) as b:
            new = await run(b, {"command": "sleep 30; echo b-output", "cwd": str(tmp_path), "background": True})
            assert new["jobId"] > old["jobId"], "ids go on above the old file's"
            a_done = await call(a, "command_wait", {"jobId": old["jobId"], "timeout": 20_000})
            hub.stop(new["jobId"])
            b_done = await call(b, "command_wait", {"jobId": new["jobId"], "timeout": 20_000})
    assert a_done["status"] == "finished" and a_done["stdout"] == "SECRET_OF_A\n", a_done
    assert b_done["exitCode"] is None and "SECRET_OF_A" not in json.dumps(b_done), b_done
    [row] = [r for r in rows(paths) if r.id == new["jobId"]]
    assert row.command == "sleep 30; echo b-output" and row.status is Status.KILLED, row


async def test_in_a_journal_started_anew_an_allow_answers_the_hold_the_user_saw(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path
) -> None:
    for victim in ("a_victim", "b_victim"):
        (tmp_path / victim).mkdir()
    async with (
        serving(home, bound=True, client_info=agent("agent-A")) as a,
        serving(home, bound=True, client_info=agent("agent-B")) as b,
    ):
        job_a = await run(a, {"command": "rm -rf a_victim", "cwd": str(tmp_path), "background": True})
        [held] = await held_by(hub)
        hub.seen(held.command_id)
        renew(paths, hub)
        job_b = await run(b, {"command": "rm -rf b_victim", "cwd": str(tmp_path), "background": True})
        shown = [(h["id"], h["command"]) for h in holds_shown(hub)]
        assert (held.command_id, "rm -rf a_victim") in shown and job_b["jobId"] != job_a["jobId"], shown
        await only_the_allowed_runs(
            hub, a, held.command_id, job_a["jobId"], tmp_path / "a_victim", tmp_path / "b_victim"
        )


async def test_a_server_reads_the_journal_started_anew_not_the_deleted_one(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path
) -> None:
    """It followed another server's job in the deleted file, as running, for good. The new file holds
    the job's row again (the tray writes its servers' running commands into it): its end is read there."""
    async with (
        serving(home, bound=True, client_info=agent("agent-A")) as a1,
        serving(home, bound=True, client_info=agent("agent-A")) as a2,
    ):
        job = await run(a1, {"command": "sleep 1; echo done", "cwd": str(tmp_path), "background": True})
        assert await came(lambda: rows(paths)[0].status is Status.RUNNING)
        renew(paths, hub)
        await call(a1, "command_wait", {"jobId": job["jobId"]})
        with anyio.fail_after(15):
            followed = await call(a2, "command_wait", {"jobId": job["jobId"], "timeout": 10_000})
    assert (followed.get("status"), followed.get("stdout")) == ("finished", "done\n"), followed


def test_an_output_file_older_than_the_row_is_not_its_output(tmp_path: Path) -> None:
    older = tmp_path / "20261205-010000-cmd7-aaaaaa.log"
    older.write_text("another command's output\n")
    past = time.time() - 3600
    os.utime(older, (past, past))
    assert job_file(tmp_path, 7) == older
    assert job_file(tmp_path, 7, since=time.time()) is None
    newer = tmp_path / "20261205-020000-cmd7-bbbbbb.log"
    newer.write_text("its own\n")
    assert job_file(tmp_path, 7, since=time.time() - 5) == newer


async def test_a_hold_keeps_its_id_when_another_program_deletes_every_row_under_it(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path
) -> None:
    """Where no container keeps the journal read-only, a command could delete its rows: the next
    held command then took the id of the one the user was looking at, replaced it in the tray, and
    the user's Allow for what was shown ran it."""
    import sqlite3

    for victim in ("shown", "swapped"):
        (tmp_path / victim).mkdir()
    async with serving(home, bound=True, client_info=agent("agent-A")) as a:
        first = await run(a, {"command": "rm -rf shown", "cwd": str(tmp_path), "background": True})
        [held] = await held_by(hub)
        with sqlite3.connect(paths.journal) as db:
            db.execute("DELETE FROM commands")
        db.close()
        second = await run(a, {"command": "rm -rf swapped", "cwd": str(tmp_path), "background": True})
        assert second["jobId"] > first["jobId"], (first, second)
        assert {(h["id"], h["command"]) for h in holds_shown(hub)} == {
            (first["jobId"], "rm -rf shown"),
            (second["jobId"], "rm -rf swapped"),
        }
        await only_the_allowed_runs(hub, a, held.command_id, first["jobId"], tmp_path / "shown", tmp_path / "swapped")


async def test_ids_go_on_in_a_journal_started_anew_after_the_history_was_cleared(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path
) -> None:
    """A review of the above: the new file took the old one's highest row, not what Clear history
    had deleted, and gave id 1 again."""
    async with serving(home, bound=True) as client:
        first = await run(client, {"command": "echo one", "cwd": str(tmp_path)})
        assert await came(lambda: rows(paths)[0].status is Status.FINISHED)
        hub.clear_history()
        renew(paths, hub)
        again = await run(client, {"command": "echo two", "cwd": str(tmp_path)})
    assert again["jobId"] > first["jobId"], (first, again)


def test_ids_go_on_above_the_rows_retention_deleted(paths: AppPaths) -> None:
    with Journal.open(paths) as journal:
        ids = [journal.begin_command(command=f"echo {n}", cwd="/tmp", status=Status.FINISHED) for n in range(3)]
        assert journal.apply_retention(now=time.time() + 400 * 86_400) == 3
        assert journal.apply_retention(now=time.time() + 400 * 86_400) == 0
        after = journal.begin_command(command="echo later", cwd="/tmp")
    assert after == ids[-1] + 1


@pytest.mark.parametrize("value", ["not a number", 10**25, -5])
def test_a_floor_another_program_wrote_that_no_id_can_follow_reads_as_none(paths: AppPaths, value: object) -> None:
    with Journal.open(paths) as journal:
        journal.set_setting("journal.command_id_floor", value)
        assert journal.begin_command(command="echo a", cwd="/tmp") == 1


def damage_journal(paths: AppPaths, how: str) -> None:
    """The journal's file, as a disk or another program leaves it: a table's page overwritten (found
    only by a read of that table), its header, or its second half gone."""
    data = paths.journal.read_bytes()
    size = int.from_bytes(data[16:18], "big")
    if how.startswith("the page of "):
        with Journal.open(paths) as journal:
            [root] = journal._db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (how[12:],)).fetchone()
        damaged = data[: size * (root - 1)] + b"\xff" * size + data[size * root :]
    else:
        damaged = {
            "garbage header": b"this is not SQLite" * 6 + data[108:],
            "truncated in half": data[: len(data) // 2],
        }[how]
    paths.journal.write_bytes(damaged)


def journal_of(paths: AppPaths, commands: int) -> int:
    """A journal of `commands` finished rows, long enough for many pages, closed (checkpointed)."""
    with Journal.open(paths) as journal:
        for n in range(commands):
            last = journal.begin_command(command=f"echo {n} {'x' * 300}", cwd="/tmp", status=Status.FINISHED)
    return last


@pytest.mark.parametrize("how", ["the page of settings", "garbage header", "truncated in half"])
def test_a_journal_moved_aside_for_damage_gives_none_of_its_ids_again(paths: AppPaths, how: str) -> None:
    """Left by the fifteenth sitting: a journal found damaged as it opened was moved aside, and the
    new one gave ids from 1 again. Read where the damage allows (the next id), else above any id a
    journal gives (the clock's milliseconds)."""
    last = journal_of(paths, 200)
    damage_journal(paths, how)
    before = time.time()
    with Journal.open(paths) as journal:
        assert journal.replaced is not None, "moved aside"
        new = journal.begin_command(command="echo after", cwd="/tmp")
    if how == "the page of settings":
        assert new == last + 1
    else:
        assert before * 1000 < new <= time.time() * 1000 + 1, new


async def test_a_tray_starts_on_a_journal_damaged_where_only_a_read_finds_it_and_gives_none_of_its_ids(
    paths: AppPaths, home: Path
) -> None:
    """2026-12-05: a page of the rules (or of another table the tray reads as it starts) damaged
    kept the tray from starting at all ("the activity log could not be read or written"). It now
    checks every page as it starts and moves a damaged journal aside for a new one."""
    last = journal_of(paths, 200)
    damage_journal(paths, "the page of rules")
    with running_hub(paths):
        async with serving(home, bound=True) as client:
            job = await call(client, "execute_command", {"command": "echo new"})
    assert job["jobId"] == last + 1 and job["stdout"] == "new\n", job
    [kept] = home.glob("journal.corrupt-*.sqlite3")
    with Journal.open(paths) as journal:
        assert journal.get_setting("journal.replaced")["moved_to"] == str(kept), "the tray tells the user"


def test_a_journal_another_process_already_started_anew_is_not_moved_aside_again(paths: AppPaths, home: Path) -> None:
    """A review, 2026-12-05: the tray moved aside whatever file was at the journal's path once it had
    found damage; a server that noticed first may have started a new one meanwhile. Under the repair
    lock the tray looks again, and a whole file stays where it is, its ids going on."""
    last = journal_of(paths, 20)
    with running_hub(paths) as (hub, _seen):
        record = hub.record
        with hub.lock:
            record._start_anew("damage found a moment ago", above=last)  # the file is whole again
            new = record.journal.begin_command(command="echo after", cwd="/tmp")
    assert not list(home.glob("journal.corrupt-*.sqlite3")), "nothing was moved aside"
    assert new == last + 1
