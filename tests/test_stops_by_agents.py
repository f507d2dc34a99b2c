"""Who stopped it: another agent's command_stop (through its own server) is told and recorded as an
agent's, never as the person's Stop or Deny; the person's own Stop (the CLI, the log window, the
tray's menu) keeps its words. The red team's two cases are in tests/test_red_team_twelve_apps.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import anyio
import pytest
from mcp_types import Implementation

from app.core.channel.protocol import FROM_SERVER, FROM_TRAY, ServerStop, StopPush, decode
from app.core.journal.reasons import reason_for_person, who_for_person
from app.core.journal.store import Journal, Status
from app.core.messages import (
    AGENT_STOP_BY,
    AGENT_STOP_REASON,
    AGENT_WITHDREW_MESSAGE,
    AGENT_WITHDREW_REASON,
    DENIED_MESSAGE,
    STOP_NEXT_STEPS,
    USER_STOP_REASON,
)
from app.core.paths import HOME_ENV, AppPaths
from tests.channel_peers import FakePeer, fake_peers, running_hub
from tests.in_process_server import serving
from tests.test_jobs import call

CLAUDE = Implementation(name="claude-code", version="1.0")


def test_a_stop_push_says_who_asked_only_when_it_was_not_the_person() -> None:
    assert StopPush(7).to_wire() == {"op": "stop", "id": 7}
    assert decode({"op": "stop", "id": 7}, FROM_TRAY) == StopPush(7)  # the person's, as before
    told = decode(StopPush(7, AGENT_STOP_BY).to_wire(), FROM_TRAY)
    assert told == StopPush(7, AGENT_STOP_BY)
    assert decode({"op": "stop", "id": 7, "by": "whoever"}, FROM_SERVER) == ServerStop(7)  # its words count for nothing


def test_the_journal_keeps_who_asked_and_the_persons_stop_after_an_agents_is_theirs(paths: AppPaths) -> None:
    with Journal(paths) as journal:
        server = journal.register_server(1, headless=True, lock_key=None)
        agents = journal.begin_command(server_id=server, command="sleep 30", cwd="/tmp", status=Status.RUNNING)
        persons = journal.begin_command(server_id=server, command="sleep 31", cwd="/tmp", status=Status.RUNNING)
        assert journal.request_stop(agents, by=AGENT_STOP_BY) and journal.request_stop(persons)
        assert journal.stop_requests([agents, persons]) == {agents, persons}
        assert journal.stops_by_agents([agents, persons]) == {agents}
        journal.request_stop(agents)  # the person presses Stop too
        assert journal.stops_by_agents([agents, persons]) == set()


def test_the_log_says_another_agent_in_the_persons_words(paths: AppPaths) -> None:
    with Journal(paths) as journal:
        server = journal.register_server(1, headless=True, lock_key=None)
        row = journal.begin_command(server_id=server, command="sleep 30", cwd="/tmp", status=Status.RUNNING)
        record = journal.get_command(row)
    assert record is not None
    assert reason_for_person(replace(record, reason=AGENT_STOP_REASON)) == "Stopped by an agent"
    assert (
        reason_for_person(replace(record, reason=AGENT_WITHDREW_REASON)) == "An agent withdrew it before you answered"
    )
    assert who_for_person(AGENT_STOP_BY) == "an agent, which withdrew it"


async def started_job(client, command: str) -> int:
    started = await call(client, "execute_command", {"command": command, "background": True})
    assert "jobId" in started, started
    return started["jobId"]


@pytest.mark.anyio
async def test_a_job_another_agent_stopped_tells_its_owner_what_to_do_next(home: Path, paths: AppPaths, hub) -> None:
    async with (
        serving(home, bound=True, client_info=CLAUDE) as owner,
        serving(home, bound=True, client_info=CLAUDE) as other,
    ):
        job = await started_job(owner, "sleep 30")
        await anyio.sleep(0.5)
        stopped = await call(other, "command_stop", {"jobId": job})
        told = await call(owner, "command_wait", {"jobId": job, "timeout": 5000})
    assert told["note"] == f"{AGENT_STOP_REASON}. {STOP_NEXT_STEPS[AGENT_STOP_REASON]}", told
    assert stopped["note"].startswith(AGENT_STOP_REASON), stopped
    with Journal(paths) as journal:
        row = journal.get_command(job)
    assert row is not None and row.status is Status.KILLED and row.reason == AGENT_STOP_REASON


@pytest.mark.anyio
async def test_a_held_job_another_agent_withdrew_says_so_and_no_one_answered_it(
    home: Path, paths: AppPaths, hub, tmp_path: Path
) -> None:
    victim = tmp_path / "victim"
    (victim / "inside").mkdir(parents=True)
    async with (
        serving(home, bound=True, client_info=CLAUDE) as owner,
        serving(home, bound=True, client_info=CLAUDE) as other,
    ):
        job = await started_job(owner, f"rm -rf {victim}")
        assert hub.held(job) is not None
        stopped = await call(other, "command_stop", {"jobId": job})
        told = await call(owner, "command_wait", {"jobId": job, "timeout": 5000})
        assert hub.held(job) is None, "the person is no longer asked about it"
    assert victim.exists()
    assert told["error"] and AGENT_WITHDREW_MESSAGE in told["error"], told
    assert AGENT_WITHDREW_REASON in stopped["error"], stopped
    with Journal(paths) as journal:
        row = journal.get_command(job)
    assert row is not None and row.status is Status.REFUSED
    assert (row.reason, row.decided_by, row.decision) == (AGENT_WITHDREW_REASON, AGENT_STOP_BY, "denied")


@pytest.mark.anyio
async def test_the_persons_stop_and_deny_keep_their_words(home: Path, paths: AppPaths, hub, tmp_path: Path) -> None:
    """The CLI's Stop (a `cli` peer) of a running job and of a held one: the user's, as before."""
    victim = tmp_path / "victim"
    victim.mkdir()
    async with serving(home, bound=True, client_info=CLAUDE) as owner:
        running = await started_job(owner, "sleep 30")
        held = await started_job(owner, f"rm -rf {victim}")
        await anyio.sleep(0.5)
        cli = FakePeer(paths)
        try:
            cli.hello("cli")
            assert cli.ask("stop", id=running)["op"] == "ack"
            assert cli.ask("stop", id=held)["op"] == "ack"
        finally:
            cli.close()
        stopped = await call(owner, "command_wait", {"jobId": running, "timeout": 5000})
        denied = await call(owner, "command_wait", {"jobId": held, "timeout": 5000})
    assert stopped["note"] == f"{USER_STOP_REASON}. {STOP_NEXT_STEPS[USER_STOP_REASON]}", stopped
    assert DENIED_MESSAGE in denied["error"], denied
    with Journal(paths) as journal:
        assert (row := journal.get_command(running)) is not None and row.reason == USER_STOP_REASON
        assert (row := journal.get_command(held)) is not None and row.decided_by == "user"


def test_a_server_peer_stop_reaches_the_owner_as_another_agents(paths: AppPaths) -> None:
    """On the wire: a server's `stop` is pushed to the owner with `by`, whatever the asker wrote."""
    with running_hub(paths) as (_hub, _seen):
        owner, other = FakePeer(paths), FakePeer(paths)
        try:
            owner.hello("server", headless=False, lock_key="a")
            other.hello("server", headless=False, lock_key="b")
            job = owner.begin("sleep 30")["id"]
            assert other.ask("stop", id=job, by="user")["op"] == "ack"
            assert owner.next_push("stop") == {"op": "stop", "id": job, "by": AGENT_STOP_BY}
        finally:
            owner.close()
            other.close()


@pytest.mark.anyio
async def test_headless_a_job_another_agent_stopped_is_an_agents_stop_and_the_clis_is_the_users(
    home: Path, paths: AppPaths
) -> None:
    async with serving(home, client_info=CLAUDE) as owner, serving(home, client_info=CLAUDE) as other:
        by_agent = await started_job(owner, "sleep 30")
        by_person = await started_job(owner, "sleep 31")
        await anyio.sleep(0.5)
        await call(other, "command_stop", {"jobId": by_agent})
        with Journal(paths) as journal:
            journal.request_stop(by_person)  # `cowork-terminal stop` with no tray
        agents = await call(owner, "command_wait", {"jobId": by_agent, "timeout": 5000})
        persons = await call(owner, "command_wait", {"jobId": by_person, "timeout": 5000})
    assert agents["note"].startswith(AGENT_STOP_REASON), agents
    assert persons["note"].startswith(USER_STOP_REASON), persons
    with Journal(paths) as journal:
        assert (row := journal.get_command(by_agent)) is not None and row.reason == AGENT_STOP_REASON
        assert (row := journal.get_command(by_person)) is not None and row.reason == USER_STOP_REASON


STOP_FROM_INSIDE = """
import json, os, sys
from app.core.channel.transport import address_for, connect
from app.core.paths import AppPaths
channel, _peer = connect(address_for(AppPaths.from_environment()))
channel.send({"op": "hello", "role": "cli", "pid": os.getpid()})
channel.receive(5)
channel.send({"op": "stop", "seq": 1, "id": int(sys.argv[1])})
reply = channel.receive(5)
while reply is not None and reply.get("seq") != 1:
    reply = channel.receive(5)
print(json.dumps(reply))
"""


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap makes the pid namespace (CI installs it)")
def test_a_stop_asked_from_inside_a_commands_container_is_an_agents_not_the_persons(
    paths: AppPaths, home: Path
) -> None:
    """`cowork-terminal stop N` run by a command (where Landlock's scopes do not keep it from the tray)
    reached the hub as the CLI's, and the job's owner was told the user stopped it. A peer in another
    pid namespace is a command's: its stop is an agent's."""
    with running_hub(paths) as (_hub, _seen), fake_peers(paths) as make:
        owner = make("server", headless=False, lock_key="owner")
        command_id = owner.begin("sleep 60.5")["id"]
        asked = subprocess.run(
            ["bwrap", "--dev-bind", "/", "/", "--unshare-pid", "--die-with-parent",
             sys.executable, "-c", STOP_FROM_INSIDE, str(command_id)],
            capture_output=True, text=True, timeout=60, env={**os.environ, HOME_ENV: str(home)},
        )  # fmt: skip
        assert asked.returncode == 0, asked.stderr
        assert json.loads(asked.stdout)["op"] == "ack", asked.stdout
        assert owner.next_push("stop") == {"op": "stop", "id": command_id, "by": AGENT_STOP_BY}
        with Journal(paths) as journal:
            assert journal.stops_by_agents([command_id]) == {command_id}
