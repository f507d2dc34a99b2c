"""Runs under Windows Python (the wine lane): the MCP SDK's client drives a `serve` bound to the
Windows tray that the test started, and the tray runs the commands (issue 21).

It waits for the tray, runs `echo hi`, runs a Windows Python probe as a command (the probe asks
IsProcessInJob about itself and walks its parents), lets a command tree time out, and pauses a
running command with the CLI's `pause`. One JSON line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from app.core.channel import windows_pipe
from app.core.channel.client import NoTray, TrayRefused, ask_tray
from app.core.journal.store import Journal
from app.core.paths import AppPaths

# This Windows Python (the embeddable one) does not put a script's folder on sys.path.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from toolhelp import processes  # noqa: E402 - beside this script

TRAY_WAIT_S = 90.0
PROBE = sys.argv[1]  # job_probe.py, as a Windows path


def live_bash() -> int:
    return sum(name == "bash.exe" for _pid, _parent, name in processes())


def tray_pids() -> list[int]:
    """The python.exe processes running `-m app tray`, as the OS tells their command lines."""
    return [
        pid
        for pid, _parent, name in processes()
        if name == "python.exe" and (windows_pipe.process_command_line(pid) or ())[-3:] == ("-m", "app", "tray")
    ]


def wait_for_tray(paths: AppPaths) -> int:
    """The tray's pid, once it answers on its pipe."""
    deadline = time.monotonic() + TRAY_WAIT_S
    while True:
        try:
            ask_tray(paths, "state", wait_s=5.0)
            (pid,) = tray_pids()
            return pid
        except (NoTray, TrayRefused, ValueError) as exc:
            step(f"no tray yet: {exc!r}")
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def step(what: str) -> None:
    """Progress on stderr: a run that hangs shows where."""
    print(f"{time.monotonic():.1f} {what}", file=sys.stderr, flush=True)


async def call(client: Client, arguments: dict) -> dict:
    step(f"call {arguments['command']!r}")
    result = await client.call_tool("execute_command", arguments)
    text = result.content[0].text
    return {"error": text} if result.is_error else json.loads(text)


def cli(*args: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, timeout=120)
    return {"code": done.returncode, "said": (done.stdout + done.stderr).decode(errors="replace")}


async def main() -> dict:
    paths = AppPaths.from_environment()
    report: dict = {"tray_pid": wait_for_tray(paths), "bash_before": live_bash()}
    params = StdioServerParameters(command=sys.executable, args=["-I", "-m", "app", "serve"])
    async with Client(params, mode="legacy") as client:
        report["echo"] = await call(client, {"command": "echo hi"})
        probe = await call(client, {"command": f"C:/python/python.exe '{PROBE}'", "timeout": 60000})
        report["probe"] = probe
        with Journal.open(paths) as journal:
            report["rows"] = [
                {"command": c.command, "status": c.status.value, "server_pid": c.server_pid}
                for c in journal.recent_commands(limit=10)
            ]
            report["servers"] = [{"pid": s.pid, "id": s.id} for s in journal.servers(live_only=True)]

        started = time.monotonic()
        report["timeout"] = await call(client, {"command": "sleep 61 & sh -c 'sleep 62' & sleep 63", "timeout": 2000})
        report["timeout_s"] = time.monotonic() - started
        await anyio.sleep(1.0)
        report["bash_after_timeout"] = live_bash()

        outcome: dict = {}

        async def long_call() -> None:
            outcome.update(await call(client, {"command": "sleep 64 & sleep 65"}))

        async with anyio.create_task_group() as group:
            group.start_soon(long_call)
            while live_bash() <= report["bash_before"]:
                await anyio.sleep(0.1)
            await anyio.sleep(0.5)
            report["bash_while_running"] = live_bash()
            paused_at = time.monotonic()
            report["pause_cli"] = await anyio.to_thread.run_sync(cli, "pause")
        report["pause_stop_s"] = time.monotonic() - paused_at
        report["paused"] = outcome
        await anyio.sleep(1.0)
        report["bash_after_pause"] = live_bash()
        report["refused_while_paused"] = await call(client, {"command": "echo should not run"})
    step("done")
    return report


if __name__ == "__main__":
    print(json.dumps(anyio.run(main)), flush=True)
    sys.stderr.flush()
    os._exit(0)  # the report is out: nothing left at exit (a worker thread, a handle) may hold the run up
