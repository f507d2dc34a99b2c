"""The MCP server as Claude sees it: a real `serve` process, the SDK's client, both handshakes (what
comes over stdio: text, a closed stdin, a cancellation and bad input in the `auto` handshake, bash
missing at start, a killed server, the client leaving); what the server does with a command (its
time, heredocs, concurrency, a cancellation, bad input, the output budget, a pause, the journal, no
tray to run it), on the same server in this process (tests/in_process_server.py)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client

from app.core.authority.hub import Hub
from app.core.journal.store import Journal, Outcome, Status
from app.core.paths import AppPaths
from tests.in_process_server import serving
from tests.raw_stdio import RawServer
from tests.stdio_client import FIRST_CALL_DEADLINE_S, MODES, STOP_DEADLINE_S, connect, live_processes, run

LINUX_ONLY = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="setsid, and marks read from /proc")
pytestmark = pytest.mark.anyio
# Tests whose calls depend on nothing before them share one server per handshake (conftest's
# `shared_server`); a test that reads the journal or needs its own environment starts its own.
SHARED = pytest.mark.xdist_group("server-stdio-shared-serve")


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


NODE_CLIENT = Path(__file__).parent / "data" / "node_stdio_client.js"


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed (CI has it)")
def test_a_nodejs_client_whose_stdio_is_socket_pairs_gets_long_lines_parallel_answers_and_a_clean_exit(
    cli_env: dict[str, str],
) -> None:
    """Claude Desktop, Claude Code and the Inspector are Node.js programs: a server's stdin and stdout
    are socket pairs there (libuv), which `serve` reads and writes on its loop."""
    done = subprocess.run(
        ["node", str(NODE_CLIENT), sys.executable],
        capture_output=True,
        text=True,
        timeout=60,
        env=cli_env,
        cwd=Path(__file__).resolve().parent.parent,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["name"] == "cowork-terminal" and report["long"] == "long\n"
    assert report["together"] == ["1", "2", "3", "4", "5"], "five calls at once, each answered"
    assert report["exit"] == 0, report["stderr"]


def journal_rows(home: Path) -> list:
    with Journal(AppPaths(home, home / "logs")) as journal:
        return journal.recent_commands(limit=100)


@pytest.mark.parametrize("shared_server", MODES, indirect=True)
@SHARED
async def test_tool_list_offers_execute_command_with_the_seed_contract(shared_server: Client) -> None:
    client = shared_server
    assert client.server_info.name == "cowork-terminal"
    assert client.instructions and "host" in client.instructions
    tools = {t.name: t for t in (await client.list_tools()).tools}
    tool = tools["execute_command"]
    schema = tool.input_schema
    assert schema["required"] == ["command"]
    assert set(schema["properties"]) == {"command", "cwd", "timeout", "env", "background"}  # background: issue 22
    assert set(tool.output_schema["properties"]) >= {"stdout", "stderr", "exitCode", "timedOut"}
    assert tool.annotations.read_only_hint is False
    assert tool.annotations.destructive_hint is True
    assert tool.annotations.open_world_hint is True
    for lesson in ("bash", "cwd", "heredoc", "TTY", "30,000 characters", "outputFile", "tail", "2>&1 &"):
        assert lesson in tool.description
    assert "outputFile" in tool.output_schema["properties"]


@pytest.mark.parametrize("shared_server", MODES, indirect=True)
@SHARED
async def test_echo_exit_codes_stderr_cwd_and_env_reach_the_model(shared_server: Client, tmp_path: Path) -> None:
    client = shared_server
    echo = await run(client, {"command": "echo hi"})
    assert echo["stdout"] == "hi\n" and echo["stderr"] == "" and echo["exitCode"] == 0
    assert echo["timedOut"] is False

    failing = await run(client, {"command": "echo oops >&2; exit 7"})
    assert failing["exitCode"] == 7 and failing["stderr"] == "oops\n"

    default_cwd = await run(client, {"command": "pwd"})
    assert default_cwd["stdout"].strip() == str(Path.home())

    given_cwd = await run(client, {"command": "pwd", "cwd": str(tmp_path)})
    assert given_cwd["stdout"].strip() == str(tmp_path)

    env = await run(client, {"command": 'echo "$GREETING $PAGER"', "env": {"GREETING": "hello there"}})
    assert env["stdout"] == "hello there cat\n"

    overridden = await run(client, {"command": "echo $PAGER", "env": {"PAGER": "less"}})
    assert overridden["stdout"] == "less\n"


async def test_without_bash_the_server_says_so_at_start_and_in_every_refusal(home: Path) -> None:
    missing = {"COWORK_TERMINAL_BASH": "/nowhere/bash"}
    started = RawServer(home, "--headless", env=missing)
    started.initialize()
    started.request("tools/list", {})  # answered once the server has set up, and has said it
    refusals = [started.call("execute_command", '{"command": "echo hi"}') for _ in range(2)]
    started.process.stdin.close()
    assert started.wait(STOP_DEADLINE_S) == 0
    stderr = started.stderr()
    assert "cowork-terminal: " in stderr and "/nowhere/bash" in stderr
    for refusal in refusals:
        assert refusal is not None and refusal.startswith("ERROR: "), refusal
        assert "/nowhere/bash" in refusal and "COWORK_TERMINAL_BASH" in refusal


async def test_a_multi_line_heredoc_body_arrives_whole(home: Path) -> None:
    body = "## Summary\n\n- First item\n- Second item with `backticks` and $dollars\n"
    command = f"cat <<'EOF'\n{body}EOF"
    async with serving(home) as client:
        result = await run(client, {"command": command})
    assert result["stdout"] == body


@pytest.mark.parametrize("shared_server", ["legacy"], indirect=True)
@SHARED
async def test_unicode_and_invalid_utf8_come_back_readable(shared_server: Client) -> None:
    unicode = await run(shared_server, {"command": "echo 'héllo wörld ✓ 日本語 🚀'"})
    invalid = await run(shared_server, {"command": r"printf 'ok \xff\xfe end'"})
    assert unicode["stdout"] == "héllo wörld ✓ 日本語 🚀\n"
    assert invalid["stdout"] == "ok \ufffd\ufffd end"


@pytest.mark.parametrize("shared_server", ["legacy"], indirect=True)
@SHARED
async def test_stdin_is_closed_so_cat_returns_at_once(shared_server: Client) -> None:
    started = time.monotonic()
    result = await run(shared_server, {"command": "cat; read -r line; echo read=$?", "timeout": 10_000})
    assert result["stdout"] == "read=1\n"
    assert result["timedOut"] is False
    assert time.monotonic() - started < 8


async def test_the_seed_budget_caps_each_stream_at_one_mebibyte_with_the_seed_marker(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    command = "head -c 3000000 /dev/zero | tr '\\0' a; echo; echo THE-END; echo err >&2"
    monkeypatch.setenv("COWORK_TERMINAL_OUTPUT_BUDGET", "seed")  # as Claude's configuration sets it
    async with serving(home) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        result = await run(client, {"command": command})
    assert "capped at 1 MB" in tools["execute_command"].description
    stdout = result["stdout"]
    assert stdout.endswith("[stdout truncated at 1MB]")
    assert "THE-END" in stdout, "the end of the output (where build errors are) is kept"
    assert "bytes of stdout omitted here" in stdout
    assert len(stdout.encode()) < 1024 * 1024 + 500
    assert result["stderr"] == "err\n"
    assert Path(result["outputFile"]).stat().st_size == 3_000_000 + len("\nTHE-END\n") + len("err\n")


async def test_a_timed_out_command_leaves_no_process_behind(home: Path) -> None:
    marker = f"31{os.getpid() % 1000}.5"
    command = f"sleep {marker}1 & bash -c 'sleep {marker}2 & wait' & sleep {marker}3"
    async with serving(home) as client:
        started = time.monotonic()
        result = await run(client, {"command": command, "timeout": 500})
        elapsed = time.monotonic() - started
    assert result["timedOut"] is True and result["exitCode"] is None
    assert elapsed < STOP_DEADLINE_S, "returns once the timeout ends the tree, not when the sleeps end"
    assert live_processes(marker) == []
    [row] = journal_rows(home)
    assert row.status is Status.TIMED_OUT and row.timed_out


@LINUX_ONLY
async def test_a_timeout_returns_promptly_even_when_a_descendant_keeps_the_pipe_open(home: Path) -> None:
    marker = f"32{os.getpid() % 1000}.5"
    # setsid puts the child in a new session: out of our process group, holding stdout open.
    command = f"echo before; setsid sleep {marker} & sleep 30"
    try:
        async with serving(home) as client:
            started = time.monotonic()
            result = await run(client, {"command": command, "timeout": 300})
            elapsed = time.monotonic() - started
            escaped = live_processes(f"sleep {marker}")
    finally:
        subprocess_cleanup(marker)
    assert result["timedOut"] is True
    assert result["stdout"] == "before\n"
    assert elapsed < STOP_DEADLINE_S
    assert escaped == [], "the descendant that left the group was found by its mark and ended"


def subprocess_cleanup(marker: str) -> None:
    subprocess.run(["pkill", "-f", f"sleep {marker}"], check=False)


async def test_concurrent_calls_run_at_the_same_time(home: Path, tmp_path: Path) -> None:
    # Each command checks in, then waits until all four have: run one after another, each would see
    # only itself (and wait out its 10 s).
    results: list[dict] = []
    meeting = tmp_path / "meeting"
    meeting.mkdir()
    wait_for_all = f"for _ in $(seq 200); do [ $(ls {meeting} | wc -l) -ge 4 ] && break; sleep 0.05; done"

    async def one(client: Client, i: int) -> None:
        command = f"touch {meeting}/{i}; {wait_for_all}; echo {i} saw $(ls {meeting} | wc -l)"
        results.append(await run(client, {"command": command, "timeout": 30_000}))

    async with serving(home) as client, anyio.create_task_group() as group:
        for i in range(4):
            group.start_soon(one, client, i)
    assert sorted(r["stdout"] for r in results) == ["0 saw 4\n", "1 saw 4\n", "2 saw 4\n", "3 saw 4\n"]


async def cancel_once_running(client: Client, marker: str) -> None:
    """Call `sleep marker & sleep marker`, and cancel the call once both sleeps run (a loaded machine
    can start it late): the SDK tells the server (notifications/cancelled)."""
    async with anyio.create_task_group() as group:
        group.start_soon(run, client, {"command": f"sleep {marker} & sleep {marker}"})
        with anyio.fail_after(STOP_DEADLINE_S):
            while sum(line.split(None, 1)[1].startswith("sleep ") for line in live_processes(marker)) < 2:
                await anyio.sleep(0.05)
        group.cancel_scope.cancel()


async def test_a_cancelled_call_ends_the_command_tree_and_the_journal_says_so(home: Path) -> None:
    marker = f"33{os.getpid() % 1000}.5"
    async with serving(home) as client:
        await cancel_once_running(client, marker)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and journal_rows(home)[0].status is Status.RUNNING:
            await anyio.sleep(0.05)
        assert live_processes(marker) == []
        after = await run(client, {"command": "echo still serving"})
    assert after["stdout"] == "still serving\n"
    row = journal_rows(home)[1]
    assert row.status is Status.KILLED
    assert "cancelled by the client" in row.reason


@pytest.mark.parametrize("shared_server", ["auto"], indirect=True)
@SHARED
async def test_a_call_cancelled_in_the_auto_handshake_ends_its_command_tree(shared_server: Client) -> None:
    marker = f"40{os.getpid() % 1000}.5"
    await cancel_once_running(shared_server, marker)
    with anyio.fail_after(STOP_DEADLINE_S):
        while live_processes(marker):
            await anyio.sleep(0.05)
    assert (await run(shared_server, {"command": "echo still serving"}))["stdout"] == "still serving\n"


async def test_closing_the_client_ends_running_commands(home: Path) -> None:
    marker = f"34{os.getpid() % 1000}.5"
    async with connect(home) as client, anyio.create_task_group() as group:
        group.start_soon(run, client, {"command": f"sleep {marker}"})
        with anyio.fail_after(STOP_DEADLINE_S):  # it runs: then the client goes
            while not live_processes(f"sleep {marker}"):
                await anyio.sleep(0.05)
        group.cancel_scope.cancel()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and live_processes(marker):
        await anyio.sleep(0.1)
    assert live_processes(marker) == []
    [row] = journal_rows(home)
    assert row.status in (Status.KILLED, Status.INTERRUPTED)


BAD_INPUTS = [
    ({"command": ""}, "`command` is empty"),
    ({"command": "   "}, "`command` is empty"),
    ({"command": "echo hi", "cwd": "/no/such/folder"}, "`cwd` does not exist: /no/such/folder"),
    ({"command": "echo hi", "cwd": "/etc/hostname"}, "`cwd` is not a folder"),
    ({"command": "echo hi", "env": {"N": 1}}, "`env` value for N must be a string"),
    ({"command": "echo hi", "env": {"N": "a\x00b"}}, "NUL byte"),
    ({"command": "echo hi", "env": {"A=B": "x"}}, "invalid variable name"),
    ({"command": "ls /", "env": {"BASH_FUNC_ls%%": "() { touch /tmp/pwned; }"}}, "may not set BASH_FUNC_ls%%"),
    ({"command": "true", "env": {"BASH_ENV": "/tmp/x.sh"}}, "may not set BASH_ENV"),
    ({"command": "true", "env": {"LD_PRELOAD": "/tmp/x.so"}}, "may not set LD_PRELOAD"),
    ({"command": "echo hi", "timeout": 0}, "`timeout` must be a number of milliseconds between 1 and 600000 (got 0)"),
    ({"command": "echo hi", "timeout": -5}, "`timeout` must be a number of milliseconds between 1"),
    ({"command": "echo hi", "timeout": 10**12}, "For longer work, start it in the background"),
    ({"command": "echo " + "x" * 3_000_000}, "the limit is 102,400 bytes"),
]


async def answers_bad_input_and_keeps_running(client: Client) -> None:
    for arguments, expected in BAD_INPUTS:
        result = await run(client, arguments)
        assert expected in result.get("error", ""), (arguments, result)
        assert "ENOENT" not in result["error"]
    assert (await run(client, {"command": "echo alive"}))["stdout"] == "alive\n"


async def test_bad_input_gets_a_clear_message_and_the_server_keeps_running(home: Path) -> None:
    async with serving(home) as client:
        await answers_bad_input_and_keeps_running(client)
    rows = journal_rows(home)
    refused = [r for r in rows if r.status is Status.REFUSED]
    assert len(refused) == len(BAD_INPUTS)
    assert any("`cwd` does not exist" in r.reason for r in refused)


@pytest.mark.parametrize("shared_server", ["auto"], indirect=True)
@SHARED
async def test_bad_input_over_stdio_in_the_auto_handshake_gets_the_same_messages(shared_server: Client) -> None:
    """Over stdio too, a 3 MB command among them; its journal rows are the test's above."""
    await answers_bad_input_and_keeps_running(shared_server)


async def test_a_bash_that_cannot_be_started_is_reported_at_the_call(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COWORK_TERMINAL_BASH", "/no/such/bash")  # as Claude's configuration sets it
    async with serving(home) as client:
        result = await run(client, {"command": "echo hi"})
    assert "/no/such/bash" in result["error"]


async def test_pause_refuses_new_calls_with_a_message_for_the_model_and_journals_it(home: Path) -> None:
    async with serving(home) as client:
        with Journal.open(AppPaths.from_environment()) as journal:
            journal.set_paused(True)
        refused = await run(client, {"command": "echo should-not-run"})
        with Journal.open(AppPaths.from_environment()) as journal:
            journal.set_paused(False)
        resumed = await run(client, {"command": "echo back"})
    assert "paused by the user" in refused["error"]
    assert "resume" in refused["error"]
    assert resumed["stdout"] == "back\n"
    rows = journal_rows(home)
    assert rows[1].status is Status.REFUSED and rows[1].command == "echo should-not-run"


async def test_pausing_stops_a_running_command_within_a_second(home: Path) -> None:
    marker = f"35{os.getpid() % 1000}.5"
    async with serving(home) as client:
        outcome: dict = {}

        async def long_call() -> None:
            outcome.update(await run(client, {"command": f"sleep {marker} & sleep {marker}"}))

        async with anyio.create_task_group() as group:
            group.start_soon(long_call)
            while not journal_rows(home) or journal_rows(home)[0].status is not Status.RUNNING:
                await anyio.sleep(0.05)
            await anyio.sleep(0.3)
            paused_at = time.monotonic()
            with Journal.open(AppPaths.from_environment()) as journal:
                journal.set_paused(True)
        stopped_after = time.monotonic() - paused_at
    assert stopped_after < STOP_DEADLINE_S
    assert outcome["exitCode"] is None and outcome["timedOut"] is False
    assert "paused host access" in outcome["note"]
    assert live_processes(marker) == []
    [row] = journal_rows(home)
    assert row.status is Status.KILLED and "paused" in row.reason


async def paused_until_gone(marker: str) -> float:
    """Pause through the journal, as the CLI does, until no process with `marker` lives (or three
    deadlines pass), then resume: how long the pause took to end them."""
    paused_at = time.monotonic()
    with Journal.open(AppPaths.from_environment()) as journal:
        journal.set_paused(True)
    while live_processes(marker) and time.monotonic() - paused_at < 3 * STOP_DEADLINE_S:
        await anyio.sleep(0.05)
    ended_after = time.monotonic() - paused_at
    with Journal.open(AppPaths.from_environment()) as journal:
        journal.set_paused(False)
    return ended_after


async def test_pausing_ends_the_background_job_a_finished_command_left(home: Path) -> None:
    """A pause stops everything the agent started (red team, 2026-12-04: a loop left by `nohup ...
    &` went on writing after the pause, until the app quit)."""
    marker = f"36{os.getpid() % 1000}.5"
    async with serving(home) as client:
        first = await run(client, {"command": f"nohup sleep {marker} >/dev/null 2>&1 & echo started"})
        assert first["stdout"] == "started\n" and live_processes(marker), "the job outlives its command"
        ended_after = await paused_until_gone(marker)
        again = await run(client, {"command": "echo back"})
    assert live_processes(marker) == [] and ended_after < STOP_DEADLINE_S, ended_after
    assert again["stdout"] == "back\n"


async def test_without_bwrap_a_pause_ends_the_background_jobs_finished_commands_left(
    home: Path, no_container: None
) -> None:
    """Red team, 2026-12-04: with no container, `nohup` and `setsid` loops went on writing through a
    pause; what a command of this server left carries its mark, and a pause ends it."""
    marker = f"38{os.getpid() % 1000}.5"
    async with serving(home) as client:
        first = await run(
            client, {"command": f"nohup sleep {marker} >/dev/null 2>&1 & setsid sleep {marker} & echo ok"}
        )
        assert first["stdout"] == "ok\n" and len(live_processes(marker)) == 2, "both outlive their command"
        ended_after = await paused_until_gone(marker)
    assert live_processes(marker) == [] and ended_after < STOP_DEADLINE_S, ended_after


async def test_a_pause_ends_a_left_background_job_also_once_its_server_is_gone(home: Path, hub: Hub) -> None:
    """Red team, 2026-12-04: with no server bound any more, a pause left a loop a finished command
    had left running (only a server's watch ended such jobs); the tray's own pause ends them now."""
    marker = f"37{os.getpid() % 1000}.5"
    async with serving(home, bound=True) as client:
        first = await run(client, {"command": f"nohup sleep {marker} >/dev/null 2>&1 & echo started"})
    assert first["stdout"] == "started\n" and live_processes(marker), "the job outlives its command and server"
    paused_at = time.monotonic()
    hub.set_paused(True)
    while live_processes(marker) and time.monotonic() - paused_at < 3 * STOP_DEADLINE_S:
        await anyio.sleep(0.05)
    assert live_processes(marker) == [], "ended by the pause"
    assert time.monotonic() - paused_at < STOP_DEADLINE_S


async def test_a_pause_as_a_command_ends_also_ends_the_job_it_left(home: Path, hub: Hub) -> None:
    """Red team, 2026-12-05: between its command's end and the end of its output (a job holding the
    pipes: a second), a container was neither running nor done: a pause then spared its job, and the
    job ran through the whole pause (3 of 4 times, with the agent calling in a loop)."""
    marker = f"39{os.getpid() % 1000}.5"
    async with serving(home, bound=True) as client, anyio.create_task_group() as group:
        said: dict = {}

        async def call() -> None:
            said.update(await run(client, {"command": f"(sleep {marker} &); echo x"}))

        group.start_soon(call)
        deadline = time.monotonic() + FIRST_CALL_DEADLINE_S
        while not live_processes(marker):
            assert time.monotonic() < deadline, f"its job never started: {said}"
            await anyio.sleep(0.01)
        hub.set_paused(True)  # the command has ended; its job holds the pipes a moment yet
    assert said["stdout"] == "x\n", said
    paused_at = time.monotonic()
    while live_processes(marker) and time.monotonic() - paused_at < 3 * STOP_DEADLINE_S:
        await anyio.sleep(0.05)
    hub.set_paused(False)
    assert live_processes(marker) == [], "ended by the pause"


async def test_the_journal_records_each_command_with_its_client_and_never_env_values(home: Path) -> None:
    async with serving(home) as client:
        await run(client, {"command": "echo secret-free; exit 3", "env": {"API_TOKEN": "s3cr3t"}})
    [row] = journal_rows(home)
    assert row.status is Status.FAILED and row.exit_code == 3
    assert row.env_keys == ["API_TOKEN"]
    assert row.client_name == "mcp"  # the SDK client's name from the handshake
    assert row.stdout_preview == "secret-free\n"
    assert row.duration_ms is not None and row.server_pid is not None
    journal_file = (home / "journal.sqlite3").read_bytes()
    assert b"s3cr3t" not in journal_file


@LINUX_ONLY
async def test_a_killed_servers_running_command_is_marked_interrupted_and_its_processes_ended(home: Path) -> None:
    import signal

    marker, background = f"36{os.getpid() % 1000}.5", f"37{os.getpid() % 1000}.5"

    async def call_that_dies_with_the_server(client) -> None:
        with pytest.raises(Exception, match="Connection closed"):
            await run(client, {"command": f"sleep {marker} & setsid sleep {marker} & sleep {marker}"})

    try:
        async with connect(home) as client, anyio.create_task_group() as group:
            # A finished command's background job (a dev server) is not the dead server's to end.
            await run(client, {"command": f"sleep {background} >/dev/null 2>&1 &"})
            group.start_soon(call_that_dies_with_the_server, client)
            while len(journal_rows(home)) < 2 or journal_rows(home)[0].status is not Status.RUNNING:
                await anyio.sleep(0.05)
            while len(live_processes(f"sleep {marker}")) < 3:
                await anyio.sleep(0.05)
            os.kill(journal_rows(home)[0].server_pid, signal.SIGKILL)
        with Journal.open(AppPaths.from_environment()) as journal:  # the next process to open it notices
            row = journal.recent_commands()[0]
            [server] = journal.servers(live_only=False)
        assert row.status is Status.INTERRUPTED
        assert "stopped unexpectedly" in row.reason
        assert server.state == "crashed"
        if shutil.which("bwrap") is not None:
            # In the container (issue 21) what a server started dies with it (--die-with-parent):
            # the running command's processes and a finished one's background job alike.
            with anyio.fail_after(STOP_DEADLINE_S):
                while live_processes(f"sleep {marker}") or live_processes(f"sleep {background}"):
                    await anyio.sleep(0.05)
            return
        assert len(live_processes(f"sleep {marker}")) >= 3, "nobody has ended them yet"

        async with connect(home) as client:  # the next server ends what the dead one left running
            with anyio.fail_after(STOP_DEADLINE_S):
                while live_processes(f"sleep {marker}"):
                    await anyio.sleep(0.05)
        assert live_processes(f"sleep {background}") != []
    finally:
        subprocess_cleanup(marker)
        subprocess_cleanup(background)


async def test_without_the_tray_serve_refuses_and_says_to_start_cowork_terminal(home: Path) -> None:
    async with serving(home, headless=False) as client:  # `serve` without --headless, no tray
        result = await run(client, {"command": "echo hi"})
    assert "Ask the user to start the Cowork Terminal app" in result["error"]
    [row] = journal_rows(home)
    assert row.command == "echo hi" and row.status is Status.REFUSED


async def test_a_server_forgets_history_past_the_retention_age_after_its_handshake(home: Path) -> None:
    with Journal.open(AppPaths.from_environment()) as journal:
        old = journal.begin_command(command="echo from last year", cwd="/")
        journal.finish_command(old, Outcome(status=Status.FINISHED, exit_code=0))
    with sqlite3.connect(home / "journal.sqlite3") as db:
        db.execute("UPDATE commands SET created_at = created_at - 40 * 86400 WHERE id = ?", (old,))
    async with serving(home) as client:
        await run(client, {"command": "echo today"})
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and len(journal_rows(home)) != 1:
            await anyio.sleep(0.05)
    assert [r.command for r in journal_rows(home)] == ["echo today"]
