"""Red team, twelfth sitting: two agents on one computer (two Claude apps, or two agents of one app,
each its own `serve`, bound to one tray), one of them hostile. Each test reproduces a way one agent
reaches what the person gave, or what belongs, to the other agent, or speaks for the person about
it; each fails while the defect is real, and its docstring gives the steps and what went wrong.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import anyio
import pytest
from mcp_types import Implementation

from app.core.execution import output_files
from app.core.journal.store import Journal
from app.core.messages import AGENT_STOP_REASON, AGENT_WITHDREW_MESSAGE, AGENT_WITHDREW_REASON, USER_STOP_REASON
from app.core.paths import AppPaths
from app.core.policy.rules import SESSION_SCOPE, build_folders_kind, describe
from tests.channel_peers import fake_peers, running_hub, wait_until
from tests.in_process_server import serving
from tests.raw_stdio import RawServer
from tests.test_jobs import call, named_here
from tests.tray_process import running_tray


@pytest.fixture
def peers(paths: AppPaths):
    """Servers bound to the hub (FakePeers), each by its lock key."""
    with fake_peers(paths) as make:
        yield lambda lock_key, **hello: make("server", headless=False, lock_key=lock_key, **hello)


def delete_journal(paths: AppPaths) -> None:
    """The activity log is deleted under the tray (any program, or a damaged file moved aside)."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{paths.journal}{suffix}").unlink(missing_ok=True)


# -- "Allow these until Claude Code quits" ------------------------------------------------------------


def test_a_session_rule_given_to_one_app_does_not_answer_the_other_apps_hold_after_the_journal_is_renewed(
    paths: AppPaths, peers, tmp_path: Path
) -> None:
    """Steps: an earlier server comes and goes (server row 1); Claude Code's server binds (row 2);
    its `rm -rf node_modules` in ~/project is held and the person clicks "Allow these until Claude
    Code quits" (a session rule for server "2", as app/ui/tray/windows.py `_make_rule` makes it); the
    other app's server binds (row 3). The activity log is then deleted and started anew
    (Hub.reopen_journal): the rules are copied with their old session "2", and the live servers are
    registered again from 1, so the other app's server is now row 2. Its own `rm -rf node_modules`
    in the same folder is then allowed at once by Claude Code's session rule, with no window.
    What should happen: a session rule answers only the server the person gave it to (or none)."""
    project = tmp_path / "project"
    (project / "node_modules").mkdir(parents=True)
    folder = str(project.resolve())
    with running_hub(paths) as (hub, _seen):
        earlier = peers("earlier")
        earlier.ask("end")
        earlier.close()
        wait_until(lambda: len(hub.connections.servers()) == 0)
        trusted = peers("claude-code")
        held = trusted.begin("rm -rf node_modules", status="waiting", cwd=folder, client_name="claude-code")["id"]
        hold = hub.held(held)
        assert hold is not None
        kind = build_folders_kind(["node_modules"])
        session = str(hold.peer.server_id)
        hub.add_rule(kind, folder, SESSION_SCOPE, describe(kind, folder, SESSION_SCOPE), session)
        hub.decide(held, allowed=True, by="prompt")
        assert trusted.next_push("decision")["allowed"] is True
        trusted.ask("finish", id=held, outcome={"status": "finished", "exit_code": 0})

        hostile = peers("other-app")
        delete_journal(paths)
        hub.tick()  # the tray's monitor finds the log gone and starts a new one

        asked = hostile.begin("rm -rf node_modules", status="waiting", cwd=folder, client_name="other-app")["id"]
        pushed = hostile.quiet_for(0.5)
        decided = [push for push in pushed if push.get("op") == "decision"]
        with Journal(paths) as journal:
            row = journal.get_command(asked)
        assert not decided and hub.held(asked) is not None, (
            f"the other app's hold was answered by the rule the person gave Claude Code's session: {decided}, "
            f"row decided by {row.decided_by if row else None!r}"
        )


# -- jobs of an app that gives no name ----------------------------------------------------------------


def job_of(text: str | None) -> dict:
    assert text is not None and not text.startswith("ERROR: "), text
    return json.loads(text)


def test_a_server_bound_to_a_tray_never_follows_nor_stops_the_job_of_another_unnamed_client(home: Path) -> None:
    """Steps: a real tray; two `serve` processes bound to it, each from a different MCP client that
    gives an empty clientInfo name (two unnamed apps). The first starts a background job that prints
    a secret and sleeps; the second calls command_output, then command_stop, with that jobId.
    Headless, `Jobs.record` refuses a row with no client name ("There is no job N of this agent");
    bound to a tray, the tray's runner names every unnamed client "unknown" (tray_side.UNNAMED_CLIENT),
    the rows say "unknown", and the second client reads the first one's output and stops its job.
    (By the code, not run here: a client that names itself "unknown" would reach them too.)
    Fixed: the runner passes the empty name on, as headless (tests/test_apps_apart.py)."""
    secret = f"UNNAMED-A-SECRET-{os.getpid()}"
    with running_tray(home):
        first, second = RawServer(home), RawServer(home)
        try:
            first.initialize(client="", version="1.0")
            second.initialize(client="", version="1.0")
            started = job_of(
                first.call("execute_command", json.dumps({"command": f"echo {secret}; sleep 30", "background": True}))
            )
            job = started["jobId"]
            time.sleep(1.0)
            read = second.call("command_output", json.dumps({"jobId": job}))
            stopped = second.call("command_stop", json.dumps({"jobId": job}))
            after = job_of(first.call("command_wait", json.dumps({"jobId": job, "timeout": 0})))
        finally:
            first.close()
            second.close()
    refused = f"There is no job {job} of this agent"
    assert (
        read is not None
        and secret not in read
        and refused in read
        and stopped is not None
        and refused in stopped
        and after["status"] == "running"
    ), f"the other unnamed client read: {read}\nit stopped: {stopped}\nthe owner then reads: {after}"


# -- one app's flood and the other app's whole outputs ------------------------------------------------


@pytest.mark.anyio
async def test_one_apps_flood_of_output_does_not_delete_the_other_apps_kept_outputs(
    home: Path, paths: AppPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Steps: two apps' servers ("claude-code" and "other-app"). Claude Code runs a command whose
    output is cut, so its whole output is kept in its own app folder (outputFile), as the model is
    told to read it there. The other app's agent then runs commands that print more than the outputs
    folder's cap (here 4 MiB, so the test takes a second; the real cap is 1 GiB and a call's file
    keeps at most 64 MiB of each stream, so by arithmetic nine calls that each print 64 MiB on stdout
    and on stderr pass it, in well under a minute). The running total
    (output_files._Ledger.take) removes the oldest files of every app's folder to make room, so
    Claude Code's kept output is deleted by the other app's writes: its outputFile no longer exists.
    What should happen: one app's writes make room from its own files (and stop its own file, as a
    file over the cap already does), never by deleting another app's kept outputs.
    Fixed: room is made from the app that holds the most, never from one holding less than the
    writer (output_files._make_room; tests/test_apps_apart.py)."""
    monkeypatch.setattr(output_files, "OUTPUTS_MAX_BYTES", 4 * 1024 * 1024)
    monkeypatch.setattr(output_files, "_ledgers", {})
    async with named_here(home, "claude-code", monkeypatch) as trusted:
        kept = await call(trusted, "execute_command", {"command": "seq 1 200000; echo TRUSTED-KEPT-OUTPUT"})
        assert kept.get("outputFile"), kept
        path = Path(kept["outputFile"])
        assert "TRUSTED-KEPT-OUTPUT" in path.read_text()
        async with named_here(home, "other-app", monkeypatch) as hostile:
            flooded = await call(hostile, "execute_command", {"command": "seq 1 1500000"})
        still_there = path.exists()
    assert flooded.get("outputFile"), flooded
    assert still_there, f"the other app's output flood deleted Claude Code's kept output {path}"


# -- whose Stop it was --------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_job_stopped_by_another_agent_is_never_told_or_recorded_as_stopped_by_the_user(
    home: Path, paths: AppPaths, hub
) -> None:
    """Steps: two servers of the same app ("claude-code": two projects, two agents) bound to the tray's
    hub. The first starts a background job; the second calls command_stop with its jobId (allowed:
    same app). The second's stop reaches the owner as the hub's StopPush, which carries no author, and
    the owner ends the job with USER_STOP_REASON: the first agent reads "stopped by the user. Do not
    run it again unless the user asks; ask them how to go on.", and the person's activity log says
    the user stopped it ("Stopped by you"), though nobody clicked anything. A server stopping its own
    job says "stopped by the agent (command_stop)" (MODEL_STOP_REASON).
    What should happen: the owner and the log say an agent stopped it, never the user."""
    info = Implementation(name="claude-code", version="1.0")
    async with (
        serving(home, bound=True, client_info=info) as owner,
        serving(home, bound=True, client_info=info) as other,
    ):
        started = await call(owner, "execute_command", {"command": "sleep 30", "background": True})
        job = started["jobId"]
        await anyio.sleep(0.5)
        stopped = await call(other, "command_stop", {"jobId": job})
        told = await call(owner, "command_wait", {"jobId": job, "timeout": 5000})
    with Journal(paths) as journal:
        row = journal.get_command(job)
    assert row is not None
    said = f"the other agent read: {stopped}\nthe owner read: {told}\nthe log's row says: {row.reason!r}"
    assert told.get("status") == "finished", said
    assert USER_STOP_REASON not in str(told.get("note")) and row.reason != USER_STOP_REASON, said
    assert str(told.get("note")).startswith(AGENT_STOP_REASON) and row.reason == AGENT_STOP_REASON, said


@pytest.mark.anyio
async def test_a_held_job_withdrawn_by_another_agent_is_never_told_or_recorded_as_the_users_deny(
    home: Path, paths: AppPaths, hub, tmp_path: Path
) -> None:
    """Steps: two servers of the same app ("claude-code") bound to the tray's hub. The first's
    `rm -rf <folder>` is held for the person's answer (a job in the background); before the person
    answers, the second agent calls command_stop with that jobId. The hub takes a Stop of a held
    command as a Deny by "user" (Hub.stop's default `by`), so the first agent reads DENIED_MESSAGE,
    "The user denied this command in Cowork Terminal ... Do not run it or a variant of it again",
    and the row says it was denied by the user, though the person never answered.
    What should happen: the owner reads that another agent withdrew it, and the row says so."""
    victim = tmp_path / "victim"
    (victim / "inside").mkdir(parents=True)
    info = Implementation(name="claude-code", version="1.0")
    async with (
        serving(home, bound=True, client_info=info) as owner,
        serving(home, bound=True, client_info=info) as other,
    ):
        started = await call(owner, "execute_command", {"command": f"rm -rf {victim}", "background": True})
        assert started.get("status") == "waiting", started
        job = started["jobId"]
        stopped = await call(other, "command_stop", {"jobId": job})
        told = await call(owner, "command_wait", {"jobId": job, "timeout": 5000})
    with Journal(paths) as journal:
        row = journal.get_command(job)
    assert row is not None and victim.exists()
    said = (
        f"the other agent read: {stopped}\nthe owner read: {told}\n"
        f"the log's row: decided_by={row.decided_by!r}, reason={row.reason!r}"
    )
    assert "The user denied" not in str(told) and "user" not in str(row.decided_by or ""), said
    assert AGENT_WITHDREW_MESSAGE in str(told) and row.reason == AGENT_WITHDREW_REASON, said


# -- one app's command and the other app's persistent session -----------------------------------------


@pytest.mark.anyio
@pytest.mark.skipif(shutil.which("bwrap") is None or shutil.which("ssh-agent") is None, reason="bwrap, ssh-agent")
async def test_one_apps_command_does_not_reset_the_other_apps_shell_session(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Steps: two apps' servers ("claude-code" and "other-app"), commands in the OS container. Claude
    Code's agent sets up its persistent session (terminal_run: a variable, a background job such as
    a dev server). The other app's agent runs `ssh-agent -a /tmp/dbus-<name> sleep 20`, which the
    classifier finds moderate (runs unasked): a program listening on a socket in /tmp named like a
    session bus. Every container made after that hides it (container.tmp_buses), so the container
    Claude Code's session would get now differs from its shell's (shell_session.replaces: "hiding
    something now that it did not"), and its next terminal_run starts a new shell: its variable and
    its background job are gone, and its model reads REPLACED_NOTE, "The user changed how commands
    are protected", which the user did not. The other agent can do this at every new name.
    What should happen: Claude Code's session goes on (a socket another app's command made is not a
    bus the session's shell could use), or at least is not said to be the user's doing.
    Fixed (2026-12-06): the replacement stays (a socket made after the session's container cannot be
    hidden from its running shell, and who serves it is neither cheap nor sound to tell); the model
    is told the real reason: the socket, by its path, and what the new shell lost."""
    name = f"/tmp/dbus-rt12-{os.getpid()}"
    async with (
        named_here(home, "claude-code", monkeypatch) as trusted,
        named_here(home, "other-app", monkeypatch) as hostile,
    ):
        try:
            first = await call(trusted, "terminal_run", {"command": "export KEEP=still-here; sleep 120 & echo set"})
            assert "set" in str(first), first
            listening = await call(
                hostile, "execute_command", {"command": f"ssh-agent -a {name} sleep 20", "background": True}
            )
            for _ in range(50):  # its socket is listened on within a moment
                if Path(name).exists():
                    break
                await anyio.sleep(0.1)
            made = Path(name).is_socket()
            after = await call(trusted, "terminal_run", {"command": "echo KEEP=$KEEP; jobs | wc -l"})
        finally:
            Path(name).unlink(missing_ok=True)
    Path(name).unlink(missing_ok=True)  # bwrap's mount point for it, if a spare started meanwhile made one
    said = f"the other app's command: {listening}\nClaude Code's session then read: {after}"
    assert made, f"the other app's command made no socket at {name}: {listening}"
    assert "The user changed how commands are protected" not in str(after), said
    if "KEEP=still-here" not in str(after):  # started anew: for the socket, and said so
        note = str(after.get("note") or "")
        assert f"a program began listening on {name} after the session's shell started" in note, said
        assert "The user's settings did not change" in note and "background jobs" in note, said
