"""The tray decides about and runs every command of a server bound to it (issue 21; issue 22's
"jobs live in the tray"): a real tray, real `serve` processes over stdio with the SDK's client.

A tray costs about two seconds of CPU to start and meet its first server (it loads the MCP SDK and
the classifier for its runners then), so the tests here share one real tray (`shared_tray`, one
xdist group, so one worker); those whose calls depend on nothing before them share one server bound
to it as well (`agent`). A test that needs a server of its own (narrowed tools, a patched copy, one
it kills) starts it against that tray. Each test's commands carry their own marker or folder, and
what a test reads of the journal and the holds is its own.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp_types import TextContent

import app
from app.core import data_folder
from app.core.channel.client import ask_tray
from app.core.commands.jobs import MAX_LIVE_JOBS
from app.core.commands.tray_link import exited
from app.core.journal.store import Journal
from app.core.paths import HOME_ENV, AppPaths
from tests.channel_peers import FakePeer
from tests.stdio_client import FIRST_CALL_DEADLINE_S, connect, run, server_params
from tests.tray_process import running_tray

pytestmark = [pytest.mark.anyio, pytest.mark.xdist_group("tray-runs-shared-tray")]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@dataclass(frozen=True)
class SharedTray:
    home: Path
    paths: AppPaths
    process: subprocess.Popen


@pytest.fixture(scope="module")
def shared_tray(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedTray]:
    """One real tray (`python -m app tray`, dummy backend) for the module's tests, in its own home."""
    home = tmp_path_factory.mktemp("tray-runs") / "cowork-home"
    paths = data_folder.ensure(AppPaths.from_environment({HOME_ENV: str(home)}))
    with running_tray(home) as process:
        yield SharedTray(home, paths, process)


@pytest.fixture(scope="module")
async def agent(shared_tray: SharedTray) -> AsyncIterator[Client]:
    """One real `serve` bound to the shared tray, for tests whose calls depend on nothing before them."""
    async with connect(shared_tray.home, headless=False) as client:
        yield client


def ancestors(pid: int) -> list[int]:
    """The pids from `pid` up to init, as the host's /proc tells them."""
    chain = []
    while pid > 1:
        chain.append(pid)
        stat = Path(f"/proc/{pid}/stat").read_text()
        pid = int(stat.rsplit(")", 1)[1].split()[1])
    return chain


def pids_of(marker: str) -> list[int]:
    out = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout
    return [int(line) for line in out.split()]


def live_server_pids(paths: AppPaths) -> set[int]:
    with Journal(paths) as journal:
        return {server.pid for server in journal.servers(live_only=True)}


async def test_a_command_of_a_tray_bound_server_runs_in_the_trays_process_tree_not_the_servers(
    shared_tray: SharedTray, agent: Client
) -> None:
    marker = f"tray-runs-marker-{os.getpid()}"
    started = await run(agent, {"command": f"sleep 30 # {marker}", "background": True})
    assert started.get("status") == "running", started
    sleeper = pids_of(marker)
    assert sleeper, "the command does not run"
    chain = ancestors(sleeper[0])
    tray_pid = shared_tray.process.pid
    serve_pids = live_server_pids(shared_tray.paths) - {tray_pid}
    assert tray_pid in chain, (chain, tray_pid)
    assert serve_pids and not serve_pids & set(chain), (chain, serve_pids)
    stopped = await agent.call_tool("command_stop", {"jobId": started["jobId"]})
    assert not stopped.is_error, stopped


async def test_a_call_the_client_cancels_ends_its_command_in_the_tray(agent: Client) -> None:
    marker = f"cancelled-in-tray-{os.getpid()}"
    with anyio.move_on_after(20):
        async with anyio.create_task_group() as group:
            group.start_soon(run, agent, {"command": f"sleep 300 # {marker}"})
            with anyio.fail_after(FIRST_CALL_DEADLINE_S):
                while not pids_of(marker):
                    await anyio.sleep(0.05)
            group.cancel_scope.cancel()  # the client cancels the call (Claude's stop button)
    with anyio.fail_after(10):
        while pids_of(marker):
            await anyio.sleep(0.05)
    alive = await run(agent, {"command": "echo still-served"})
    assert alive.get("stdout") == "still-served\n", alive


async def test_progress_of_a_command_the_tray_runs_reaches_a_client_that_asked_for_it(agent: Client) -> None:
    said: list[str] = []

    async def progress(_value: float, _total: float | None, message: str | None) -> None:
        said.append(message or "")

    command = "for n in one two three four; do echo line-$n; sleep 0.7; done"
    done = await run(agent, {"command": command}, progress_callback=progress)
    assert done.get("exitCode") == 0, done
    assert any(message.startswith("line-") for message in said), said


async def test_a_server_that_runs_a_command_itself_gets_no_row_and_no_hold_from_a_tray_that_runs_them(
    shared_tray: SharedTray,
) -> None:
    paths = shared_tray.paths
    command = f"rm -rf victim-of-a-server-that-runs-it-{os.getpid()}"
    patched = FakePeer(paths)  # a server patched to run its commands itself, in another process
    try:
        welcome = patched.hello("server", pid=os.getpid(), headless=False, lock_key="patched")
        assert welcome["op"] == "ack" and welcome["runs_commands"] is True
        for status in ("running", "waiting"):
            answer = patched.begin(command, status=status)
            assert answer["op"] == "error" and "runs every command of its servers itself" in answer["message"]
        assert json.loads(ask_tray(paths, "holds")["message"]) == []
        refused = patched.begin(command, status="refused", reason="bad arguments")
        assert refused["op"] == "ack", "a refusal is still recorded: the user sees what was refused"
    finally:
        patched.close()
    with Journal(paths) as journal:
        assert [row.status.value for row in journal.recent_commands() if row.command == command] == ["refused"]


async def test_a_tool_the_server_was_started_without_is_not_run_by_the_tray_either(
    shared_tray: SharedTray, tmp_path: Path
) -> None:
    params = server_params(shared_tray.home, "--tools", "execute")
    async with Client(params, mode="legacy") as narrowed:
        listed = {tool.name for tool in (await narrowed.list_tools()).tools}
        assert "execute_command" in listed and "terminal_run" not in listed
        ran = await run(narrowed, {"command": "echo through-the-tray", "cwd": str(tmp_path)})
        assert ran.get("stdout") == "through-the-tray\n", ran
        refused = await narrowed.call_tool("terminal_run", {"command": "touch made-by-session", "cwd": str(tmp_path)})
    assert refused.is_error
    assert not (tmp_path / "made-by-session").exists()


def patched_tree(folder: Path) -> Path:
    """A copy of the program whose server never holds a command: the attack of a server started from
    a modified tree (issue 21). Returns the folder to start `python -m app serve` from."""
    shutil.copytree(Path(app.__file__).parent, folder / "app", ignore=shutil.ignore_patterns("__pycache__"))
    admission = folder / "app" / "core" / "commands" / "admission.py"
    source = admission.read_text()
    assert "if not needs_approval(" in source
    admission.write_text(source.replace("if not needs_approval(", "if True or not needs_approval(", 1))
    return folder


@asynccontextmanager
async def patched_server(home: Path, tree: Path, *, headless: bool) -> AsyncIterator[Client]:
    params = server_params(home, *(("--headless",) if headless else ()))
    params = params.model_copy(update={"cwd": str(tree)})
    async with Client(params, mode="legacy") as client:
        yield client


async def test_a_server_patched_to_skip_holds_still_has_its_rm_rf_held_by_the_tray(
    home: Path, shared_tray: SharedTray, tmp_path: Path
) -> None:
    tree = patched_tree(tmp_path / "patched")
    work = tmp_path / "work"
    (work / "first-victim").mkdir(parents=True)
    (work / "victim").mkdir()
    # The patch works: with no tray (in this test's own home), the patched server runs a destructive
    # command unheld.
    async with patched_server(home, tree, headless=True) as unguarded:
        ran = await run(unguarded, {"command": "rm -rf first-victim", "cwd": str(work)})
    assert ran.get("exitCode") == 0 and not (work / "first-victim").exists(), ran
    async with patched_server(shared_tray.home, tree, headless=False) as patched:
        held = await run(patched, {"command": "rm -rf victim", "cwd": str(work), "background": True})
        assert held.get("status") == "waiting", held
        assert (work / "victim").is_dir()
        pending = json.loads(ask_tray(shared_tray.paths, "holds")["message"])
        assert [hold["command"] for hold in pending if hold["cwd"] == str(work)] == ["rm -rf victim"], pending
        await patched.call_tool("command_stop", {"jobId": held["jobId"]})
    assert (work / "victim").is_dir()


def serve_pid(paths: AppPaths, tray_pid: int, known: set[int] = frozenset()) -> int:  # type: ignore[assignment]
    """The pid of the one `serve` bound to the tray (not the tray's own runners, nor `known` ones)."""
    pids = live_server_pids(paths) - {tray_pid} - set(known)
    assert len(pids) == 1, pids
    return pids.pop()


async def test_a_background_job_goes_on_after_its_server_is_killed_and_a_second_server_reads_its_result(
    shared_tray: SharedTray, tmp_path: Path
) -> None:
    command = "sleep 10; echo finished-in-the-tray"
    others = live_server_pids(shared_tray.paths)  # the servers of the tests before this one
    async with connect(shared_tray.home, headless=False) as first:
        started = await run(first, {"command": command, "cwd": str(tmp_path), "background": True})
        assert started.get("status") == "running", started
        killed = serve_pid(shared_tray.paths, shared_tray.process.pid, others)
        os.kill(killed, signal.SIGKILL)
        with anyio.fail_after(10):
            while not exited(killed):
                await anyio.sleep(0.05)
        killed_at = time.monotonic()
    async with connect(shared_tray.home, headless=False) as second:
        waited = await second.call_tool("command_wait", {"jobId": started["jobId"], "timeout": 30000})
    block = waited.content[0]
    assert isinstance(block, TextContent), waited
    result = json.loads(block.text)
    assert not waited.is_error, result
    assert result["exitCode"] == 0, result
    assert "finished-in-the-tray" in result["stdout"], result
    assert time.monotonic() - killed_at > 3, "the job ended before its server was gone: nothing was shown"


async def test_a_tray_runs_at_most_so_many_jobs_of_one_server_and_the_model_is_told_what_to_do(
    shared_tray: SharedTray, tmp_path: Path
) -> None:
    """The limit of live jobs (MAX_LIVE_JOBS) where the tray runs them, as tests/test_jobs.py checks
    it where a server runs its own: past it, a call is refused in words, and a stopped job makes room."""
    marker = f"55{os.getpid() % 1000}.5"
    async with connect(shared_tray.home, headless=False) as client:
        jobs = [
            await run(client, {"command": f"sleep {marker}", "cwd": str(tmp_path), "background": True})
            for _ in range(MAX_LIVE_JOBS)
        ]
        assert all(job.get("status") == "running" for job in jobs), jobs
        with anyio.fail_after(10):  # "running" is said as the container starts, before its sleep does
            while len(pids_of(f"^sleep {marker}")) < MAX_LIVE_JOBS:
                await anyio.sleep(0.1)
        refused = await run(client, {"command": "echo one more", "cwd": str(tmp_path)})
        assert f"{MAX_LIVE_JOBS} commands this server started are still running or waiting" in refused["error"]
        assert "command_wait" in refused["error"] and "command_stop" in refused["error"], refused
        await client.call_tool("command_stop", {"jobId": jobs[0]["jobId"]})
        room = await run(client, {"command": "echo one more", "cwd": str(tmp_path)})
        for job in jobs[1:]:
            await client.call_tool("command_stop", {"jobId": job["jobId"]})
    assert room.get("stdout") == "one more\n", room
    with anyio.fail_after(10):
        while pids_of(f"^sleep {marker}"):
            await anyio.sleep(0.1)


async def test_through_a_real_tray_a_rule_deletes_its_build_folder_and_nothing_outside_its_folder(
    home: Path, tmp_path: Path
) -> None:
    """The red team's route (2026-12-04) as an agent runs it, against a real tray: with the user's
    rule for the project, `env -C` once deleted ~/.local/bin with no click."""
    from app.core.policy.rules import DELETE_BUILD_FOLDERS, FOLDER_SCOPE

    paths = data_folder.ensure(AppPaths.from_environment({HOME_ENV: str(home)}))
    project, outside = tmp_path / "project", tmp_path / "user" / ".local" / "bin"
    (project / "build").mkdir(parents=True)
    outside.mkdir(parents=True)
    (outside / "keep").write_text("x")
    with Journal.open(paths) as journal:  # the user's click made it, before this tray started
        journal.add_rule(DELETE_BUILD_FOLDERS, str(project.resolve()), FOLDER_SCOPE, "deleting build folders")
    with running_tray(home):
        async with connect(home, headless=False) as client:
            ran = await run(client, {"command": "rm -rf build", "cwd": str(project)})
            held = await run(
                client, {"command": f"env -C {outside.parent} rm -rf bin", "cwd": str(project), "background": True}
            )
            await client.call_tool("command_stop", {"jobId": held["jobId"]})
    assert ran.get("exitCode") == 0 and not (project / "build").exists(), ran
    assert held.get("status") == "waiting" and (outside / "keep").exists(), held
