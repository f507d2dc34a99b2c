"""Jobs (issue 22): a command outlives the call that started it, within each Claude app's patience.

The SDK's client, named as each Claude app names itself, drives servers in this process
(tests/in_process_server.py): one for what one server does, two for jobs shared by two servers of
the same app (each server keeps its own jobs and its own row in the journal, as two processes do).
Real `serve` processes stay for both handshakes; the patience is shortened through
COWORK_TERMINAL_PATIENCE_S so that the tests stay fast (the table's own values are checked as a
pure function).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp_types import Implementation

from app.core.commands.jobs import MAX_LIVE_JOBS
from app.core.commands.patience import (
    CLAUDE_CODE_PATIENCE_S,
    COWORK_PATIENCE_S,
    DESKTOP_CHAT_PATIENCE_S,
    MAX_PATIENCE_S,
    PATIENCE_ENV,
    UNKNOWN_PATIENCE_S,
    WAITED_META,
    patience_s,
    waited_before,
)
from app.core.execution import orphans, start_files
from app.core.journal.store import Journal, Status
from app.core.messages import AGENT_STOP_REASON
from app.core.paths import HOME_ENV, AppPaths
from tests.in_process_server import serving
from tests.stdio_client import STOP_DEADLINE_S, live_processes, server_params

pytestmark = pytest.mark.anyio

COWORK = "local-agent-mode-cowork-terminal"  # what Cowork sends: local-agent-mode-<the entry's key>
SHORT_PATIENCE = {PATIENCE_ENV: "1.5"}


# -- the table: a pure function ---------------------------------------------------------------------


def test_cowork_and_the_desktop_code_tab_get_45_seconds_under_their_60_second_cut() -> None:
    assert patience_s(COWORK, "2025-11-25", {}) == COWORK_PATIENCE_S == 45
    assert patience_s("local-agent-mode-defteriki", None, {}) == 45


def test_desktop_chat_gets_three_and_a_half_minutes_under_its_four() -> None:
    assert patience_s("claude-ai", "2025-06-18", {}) == DESKTOP_CHAT_PATIENCE_S == 210


def test_claude_code_stays_under_its_two_minute_auto_background() -> None:
    assert patience_s("claude-code", "2026-07-28", {}) == CLAUDE_CODE_PATIENCE_S
    assert CLAUDE_CODE_PATIENCE_S < 120


def test_an_unknown_or_unnamed_client_gets_45_seconds() -> None:
    for name in (None, "", "mcp", "claude-code-x", "local-agent", "cursor"):
        assert patience_s(name, None, {}) == UNKNOWN_PATIENCE_S == 45, name


def test_the_environment_variable_overrides_the_table_and_nonsense_in_it_is_ignored() -> None:
    assert patience_s("claude-ai", None, {PATIENCE_ENV: "12.5"}) == 12.5
    assert patience_s("claude-ai", None, {PATIENCE_ENV: "0"}) == 0
    for nonsense in ("", "soon", "nan", "-1", "inf", "1e9"):
        assert patience_s("claude-ai", None, {PATIENCE_ENV: nonsense}) == 210, nonsense


def test_the_time_a_forwarded_call_waited_in_the_tray_comes_out_of_the_patience_and_nonsense_counts_as_none() -> None:
    assert waited_before({WAITED_META: 2.5}) == 2.5
    assert waited_before({WAITED_META: 10**9}) == MAX_PATIENCE_S
    for nonsense in (None, {}, {WAITED_META: -1}, {WAITED_META: float("nan")}, {WAITED_META: "9"}, {WAITED_META: True}):
        assert waited_before(nonsense) == 0.0, nonsense


# -- real servers ------------------------------------------------------------------------------------


@asynccontextmanager
async def client_named(
    home: Path, name: str, env: dict[str, str] | None = None, mode: str = "legacy"
) -> AsyncIterator[Client]:
    params = server_params(home, "--headless", env=env)
    async with Client(params, mode=mode, client_info=Implementation(name=name, version="1.0.0")) as client:
        yield client


@asynccontextmanager
async def named_here(
    home: Path, name: str, monkeypatch: pytest.MonkeyPatch, env: dict[str, str] | None = None
) -> AsyncIterator[Client]:
    """`client_named`'s server in this process (tests/in_process_server.py): each call is another server,
    with its own jobs and its own row in the journal."""
    for variable, value in (env or {}).items():
        monkeypatch.setenv(variable, value)
    async with serving(home, client_info=Implementation(name=name, version="1.0.0")) as client:
        yield client


async def call(client: Client, tool: str, arguments: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments, **kwargs)
    text = result.content[0].text
    if result.is_error:
        return {"error": text}
    data = json.loads(text)
    assert data == result.structured_content, "the text block and the structured content must agree"
    return data


async def wait_until_finished(client: Client, job: int, seconds: float = 30.0) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        result = await call(client, "command_wait", {"jobId": job})
        if result.get("status") != "running":
            return result
    raise AssertionError(f"job {job} did not end within {seconds} s")


def rows(paths: AppPaths) -> list:
    with Journal.open(paths) as journal:
        return journal.recent_commands()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_long_command_from_cowork_returns_a_job_within_the_patience_and_command_wait_gives_its_result(
    home: Path, paths: AppPaths, mode: str
) -> None:
    async with client_named(home, COWORK, SHORT_PATIENCE, mode) as client:
        started = time.monotonic()
        first = await call(client, "execute_command", {"command": "echo start; sleep 4; echo end >&2; exit 3"})
        returned_after = time.monotonic() - started
        assert first["status"] == "running" and first["exitCode"] is None and first["timedOut"] is False
        assert first["stdout"] == "start\n", "what it printed so far"
        assert f"command_wait with jobId {first['jobId']}" in first["note"]
        assert 1.4 < returned_after < 4, "it returned at the patience, before the command ended"
        assert rows(paths)[0].status is Status.RUNNING, "the command goes on after the call"
        done = await wait_until_finished(client, first["jobId"])
    assert done["status"] == "finished" and done["exitCode"] == 3
    assert done["stdout"] == "start\n" and done["stderr"] == "end\n"
    [row] = rows(paths)
    assert row.id == first["jobId"] and row.status is Status.FAILED and row.exit_code == 3


async def test_a_short_command_keeps_the_seed_contract_in_one_call(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async with named_here(home, COWORK, monkeypatch, SHORT_PATIENCE) as client:
        result = await call(client, "execute_command", {"command": "echo hi"})
    assert result["stdout"] == "hi\n" and result["exitCode"] == 0 and result["timedOut"] is False
    assert result["status"] == "finished" and isinstance(result["jobId"], int)


async def test_claude_code_runs_a_command_to_its_end_in_one_call_with_progress(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str | None] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(message)

    async with named_here(home, "claude-code", monkeypatch) as client:
        result = await call(
            client,
            "execute_command",
            {"command": "for i in 1 2 3 4; do echo step$i; sleep 0.8; done"},
            progress_callback=on_progress,
        )
    assert result["status"] == "finished" and result["exitCode"] == 0
    assert result["stdout"] == "step1\nstep2\nstep3\nstep4\n"
    assert any(message and message.startswith("step") for message in seen), seen


async def test_background_returns_at_once_and_command_output_and_command_list_follow_the_job(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with named_here(home, COWORK, monkeypatch) as client:
        started = time.monotonic()
        first = await call(client, "execute_command", {"command": "seq 1 200; sleep 2; echo last", "background": True})
        assert time.monotonic() - started < 2, "background: true does not wait"
        assert first["status"] == "running"
        tail = await output_once_there(client, {"jobId": first["jobId"], "tail": 3}, "198\n199\n200\n")
        assert tail["status"] == "running"
        head = await call(client, "command_output", {"jobId": first["jobId"], "offset": 0, "limit": 6})
        assert head["output"] == "1\n2\n3\n" and head["nextOffset"] == 6
        listed = await call(client, "command_list", {})
        assert [(j["jobId"], j["status"]) for j in listed["jobs"]] == [(first["jobId"], "running")]
        done = await wait_until_finished(client, first["jobId"])
        assert done["exitCode"] == 0 and done["stdout"].endswith("200\nlast\n")
        listed = await call(client, "command_list", {})
    assert listed["jobs"][0]["status"] == "finished"


async def test_command_stop_ends_the_whole_tree_and_the_journal_says_the_agent_stopped_it(
    home: Path, paths: AppPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = f"41{os.getpid() % 1000}.5"
    async with named_here(home, COWORK, monkeypatch, SHORT_PATIENCE) as client:
        first = await call(client, "execute_command", {"command": f"sleep {marker} & sleep {marker}; echo never"})
        assert first["status"] == "running" and len(live_processes(marker)) >= 2
        stopped = await call(client, "command_stop", {"jobId": first["jobId"]})
        assert live_processes(marker) == []
    assert stopped["status"] == "finished" and stopped["exitCode"] is None
    assert "stopped by the agent" in stopped["note"] and "never" not in stopped["stdout"]
    [row] = rows(paths)
    assert row.status is Status.KILLED and row.reason == "stopped by the agent (command_stop)"


async def test_a_second_server_of_the_same_app_follows_and_waits_for_the_first_ones_job(
    home: Path, paths: AppPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with named_here(home, COWORK, monkeypatch) as first, named_here(home, COWORK, monkeypatch) as second:
        started = await call(
            first, "execute_command", {"command": "echo one; sleep 2; echo two; exit 4", "background": True}
        )
        job = started["jobId"]
        so_far = await output_once_there(second, {"jobId": job}, "one\n")
        assert so_far["status"] == "running", "read from the job's output file"
        listed = await call(second, "command_list", {})
        assert [(j["jobId"], j["server"]) for j in listed["jobs"]] == [(job, "another")]
        waited = await call(second, "command_wait", {"jobId": job})
    assert waited["status"] == "finished" and waited["exitCode"] == 4
    assert waited["stdout"] == "one\ntwo\n"
    assert waited["outputFile"] and Path(waited["outputFile"]).read_text() == "one\ntwo\n"


async def output_once_there(client: Any, arguments: dict[str, Any], expected: str) -> dict[str, Any]:
    """`command_output` once the job has printed `expected` (its container may take a second to start
    on a loaded machine); fails if it is not there within the deadline."""
    deadline = time.monotonic() + STOP_DEADLINE_S
    while True:
        said = await call(client, "command_output", arguments)
        if said.get("output") == expected or time.monotonic() > deadline:
            assert said.get("output") == expected, said
            return said
        await anyio.sleep(0.05)


async def job_process_started(marker: str) -> None:
    """A background call returns at once; its job's process starts a moment later (in a container)."""
    deadline = time.monotonic() + 10.0
    while time.monotonic() < deadline and not live_processes(marker):
        await anyio.sleep(0.05)
    assert len(live_processes(marker)) == 1, "the job's process runs"


async def test_another_agent_cannot_follow_or_stop_a_job(
    home: Path, paths: AppPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = f"42{os.getpid() % 1000}.5"
    async with named_here(home, COWORK, monkeypatch) as owner, named_here(home, "claude-code", monkeypatch) as stranger:
        started = await call(owner, "execute_command", {"command": f"sleep {marker}", "background": True})
        await job_process_started(marker)
        for tool in ("command_wait", "command_output", "command_stop"):
            refused = await call(stranger, tool, {"jobId": started["jobId"]})
            assert "There is no job" in refused["error"], tool
        assert len(live_processes(marker)) == 1, "the stranger's command_stop did nothing"
        await call(owner, "command_stop", {"jobId": started["jobId"]})
    deadline = time.monotonic() + STOP_DEADLINE_S
    while time.monotonic() < deadline and live_processes(marker):
        await anyio.sleep(0.1)
    assert live_processes(marker) == []


async def test_a_job_id_that_is_not_a_whole_number_is_refused_in_plain_words(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with named_here(home, COWORK, monkeypatch) as client:
        for value in ("12", True, 1.5, -3, None):
            refused = await call(client, "command_wait", {"jobId": value})
            assert "`jobId`" in refused["error"] and "pydantic" not in refused["error"], value
        bad_flag = await call(client, "execute_command", {"command": "echo hi", "background": "yes"})
    assert "`background` must be true or false" in bad_flag["error"]


async def test_a_second_server_of_the_same_app_can_stop_the_first_ones_job(
    home: Path, paths: AppPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = f"43{os.getpid() % 1000}.5"
    async with named_here(home, COWORK, monkeypatch) as first, named_here(home, COWORK, monkeypatch) as second:
        started = await call(first, "execute_command", {"command": f"sleep {marker}", "background": True})
        await job_process_started(marker)
        stopped = await call(second, "command_stop", {"jobId": started["jobId"]})
        assert live_processes(marker) == []
        finished = await wait_until_finished(first, started["jobId"])
    assert stopped["status"] == "finished" and stopped["exitCode"] is None
    assert finished["exitCode"] is None and finished["note"].startswith(f"{AGENT_STOP_REASON}. Check what")
    [row] = rows(paths)
    assert row.status is Status.KILLED


async def test_a_cancelled_command_wait_leaves_the_job_running_but_a_cancelled_call_ends_its_own(
    home: Path, paths: AppPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with named_here(home, COWORK, monkeypatch) as client:
        started = await call(client, "execute_command", {"command": "sleep 2; echo done", "background": True})
        with pytest.raises(Exception):  # noqa: B017 - the SDK's timeout error; what matters is the job
            await client.call_tool("command_wait", {"jobId": started["jobId"]}, read_timeout_seconds=0.5)
        done = await wait_until_finished(client, started["jobId"])
    assert done["exitCode"] == 0 and done["stdout"] == "done\n", "the wait was cancelled, not the job"
    [row] = rows(paths)
    assert row.status is Status.FINISHED


async def test_a_server_runs_at_most_so_many_jobs_at_once_and_tells_the_model_what_to_do(
    home: Path, paths: AppPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model in a loop of `background: true` (a red team started 180) filled the tray with
    containers until it ran out of open files: past MAX_LIVE_JOBS, a call is refused in words, and a
    job that ends (or is stopped) makes room."""
    marker = f"53{os.getpid() % 1000}.5"
    async with named_here(home, COWORK, monkeypatch) as client:
        jobs = [
            await call(client, "execute_command", {"command": f"sleep {marker}", "background": True})
            for _ in range(MAX_LIVE_JOBS)
        ]
        assert all(job["status"] == "running" for job in jobs), jobs
        refused = await call(client, "execute_command", {"command": "echo one more"})
        assert f"{MAX_LIVE_JOBS} commands this server started are still running or waiting" in refused["error"]
        assert "command_wait" in refused["error"] and "command_stop" in refused["error"], refused
        await call(client, "command_stop", {"jobId": jobs[0]["jobId"]})
        room = await call(client, "execute_command", {"command": "echo one more"})
        for job in jobs[1:]:
            await call(client, "command_stop", {"jobId": job["jobId"]})
    assert room["status"] == "finished" and room["stdout"] == "one more\n", room
    assert live_processes(marker) == []
    assert not any(row.command == "echo one more" and row.status is not Status.FINISHED for row in rows(paths))


async def test_a_container_left_running_by_a_finished_job_counts_toward_the_limit(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`nohup sleep N >/dev/null 2>&1 &` ends its job at once and leaves its container running: a
    loop of those filled the tray as `background: true` did (a second red team, 2026-12-05)."""
    marker = f"54{os.getpid() % 1000}.5"
    async with named_here(home, COWORK, monkeypatch) as client:
        for _ in range(MAX_LIVE_JOBS):
            done = await call(client, "execute_command", {"command": f"nohup sleep {marker} >/dev/null 2>&1 &"})
            assert done["status"] == "finished", done
        refused = await call(client, "execute_command", {"command": "echo one more"})
        assert f"{MAX_LIVE_JOBS} commands this server started are still running or waiting" in refused["error"]
        # What the tray's pause does (this process lives on): the containers of this app home's commands;
        # the whole process's count also had an earlier test's container still ending (under load).
        home_paths = AppPaths.from_environment({HOME_ENV: str(home)})
        assert start_files.end_lingering(orphans.home_tag(home_paths)) == MAX_LIVE_JOBS
        deadline = time.monotonic() + 10
        room = refused
        while "error" in room and time.monotonic() < deadline:  # each container's end is seen by its bwrap's
            await anyio.sleep(0.1)
            room = await call(client, "execute_command", {"command": "echo room"})
    assert room.get("stdout") == "room\n", room
    assert live_processes(marker) == []
