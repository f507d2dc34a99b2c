"""A runner in the tray reaches the hub of its own process without a socket (core/channel/local_link.py):
holds, the user's Stop and pause still reach the commands it runs, through a real tray and a real `serve`."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from app.core.channel.client import ask_tray
from app.core.paths import AppPaths
from tests.stdio_client import connect, run
from tests.tray_process import running_tray

pytestmark = pytest.mark.anyio


def pids_of(marker: str) -> list[int]:
    """Live processes (not zombies) whose command line holds `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            alive = entry.name.isdigit() and (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
            if alive and marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except (OSError, IndexError):
            continue
    return found


def sockets_of(pid: int) -> int:
    """How many sockets the process holds open."""
    count = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            count += os.readlink(fd).startswith("socket:")
        except OSError:
            continue
    return count


async def until(check: Callable[[], object], seconds: float, what: str) -> None:
    with anyio.move_on_after(seconds):
        while not check():
            await anyio.sleep(0.05)
        return
    raise AssertionError(f"waited {seconds:g} s for {what}")


async def test_a_hold_the_users_stop_and_pause_reach_what_the_tray_runs_with_no_socket_to_its_own_hub(
    home: Path, paths: AppPaths, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    (work / "victim").mkdir(parents=True)
    stopped_marker, paused_marker = f"stopped-{os.getpid()}", f"paused-{os.getpid()}"
    with running_tray(home) as tray:
        async with connect(home, headless=False) as agent:
            await agent.list_tools()  # answered once the server is bound to the tray
            before = sockets_of(tray.pid)

            held = await run(agent, {"command": "rm -rf victim", "cwd": str(work), "background": True})
            assert held.get("status") == "waiting", held
            pending = json.loads(ask_tray(paths, "holds")["message"])
            assert [hold["command"] for hold in pending] == ["rm -rf victim"], pending

            stopped = await run(agent, {"command": f"sleep 30 # {stopped_marker}", "background": True})
            await until(lambda: pids_of(stopped_marker), 10, "the command to run")
            ask_tray(paths, "stop", id=stopped["jobId"])  # the user's Stop
            await until(lambda: not pids_of(stopped_marker), 5, "the stopped command to end")
            ended = json.loads((await agent.call_tool("command_wait", {"jobId": stopped["jobId"]})).content[0].text)
            assert ended.get("status") != "running" and ended.get("exitCode") is None, ended

            started = await run(agent, {"command": f"sleep 30 # {paused_marker}", "background": True})
            assert started.get("status") == "running", started
            await until(lambda: pids_of(paused_marker), 10, "the command to run")
            ask_tray(paths, "pause")
            await until(lambda: not pids_of(paused_marker), 5, "the paused command to end")
            refused = await run(agent, {"command": "echo after-pause"})
            assert "paused" in refused.get("error", ""), refused

            # The runner's link made no connection: the tray holds as many sockets as before the calls.
            await until(lambda: sockets_of(tray.pid) == before, 5, "the tray's sockets to be as before")
            await agent.call_tool("command_stop", {"jobId": held["jobId"]})
    assert (work / "victim").is_dir()
