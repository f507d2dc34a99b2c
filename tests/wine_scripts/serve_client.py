"""Runs under Windows Python (the wine lane): the MCP SDK's own client drives `serve --headless`.

It runs `echo` through the bash given as COWORK_TERMINAL_BASH, lets a command tree time out,
pauses a running command through the journal, and leaves two background jobs (one printing, one
printing to a file); then reports what the model read, how long each
took, which bash.exe processes were left, and where the journal and locks are. One JSON line.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from app.core.journal.store import Journal, Status
from app.core.paths import AppPaths

# This Windows Python (the embeddable one) does not put a script's folder on sys.path.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from toolhelp import processes  # noqa: E402 - beside this script

BASH = os.environ["COWORK_TERMINAL_BASH"]


def live_images(name: str) -> int:
    """How many processes with this image name run now."""
    return sum(image == name.lower() for _pid, _parent, image in processes())


async def call(client: Client, arguments: dict) -> dict:
    result = await client.call_tool("execute_command", arguments)
    text = result.content[0].text
    return {"error": text} if result.is_error else json.loads(text)


async def main() -> dict:
    report: dict = {"bash_before": live_images("bash.exe")}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "app", "serve", "--headless"], env={"COWORK_TERMINAL_BASH": BASH}
    )
    paths = AppPaths.from_environment()
    async with Client(params, mode="legacy") as client:
        report["tools"] = sorted(tool.name for tool in (await client.list_tools()).tools)
        report["echo"] = await call(client, {"command": "echo hello from busybox; uname -s"})
        # A job protects no file: the approval rules guard the protected set (no tray here: refused).
        report["bashrc"] = await call(client, {"command": "echo calc >> ~/.bashrc"})
        report["bashrc_hidden"] = await call(client, {"command": "f=rc; echo calc >> ~/.bash$f"})  # read word by word

        started = time.monotonic()
        report["timeout"] = await call(client, {"command": "sleep 61 & sh -c 'sleep 62' & sleep 63", "timeout": 2000})
        report["timeout_s"] = time.monotonic() - started
        await anyio.sleep(1.0)
        report["bash_after_timeout"] = live_images("bash.exe")

        outcome: dict = {}

        async def long_call() -> None:
            outcome.update(await call(client, {"command": "sleep 64 & sleep 65"}))

        async with anyio.create_task_group() as group:
            group.start_soon(long_call)
            with Journal.open(paths) as journal:
                while not any(c.status is Status.RUNNING for c in journal.recent_commands(limit=1)):
                    await anyio.sleep(0.05)
                await anyio.sleep(0.5)
                report["bash_while_running"] = live_images("bash.exe")
                paused_at = time.monotonic()
                journal.set_paused(True)
        report["pause_stop_s"] = time.monotonic() - paused_at
        report["paused"] = outcome
        await anyio.sleep(1.0)
        report["bash_after_pause"] = live_images("bash.exe")
        report["refused_while_paused"] = await call(client, {"command": "echo should not run"})
        with Journal.open(paths) as journal:
            journal.set_paused(False)
        # A job that prints after its command returned, more than a pipe holds (its output is read
        # and dropped, so it neither breaks nor blocks), and one whose output goes to a file.
        folder = tempfile.mkdtemp()
        talking = "(sleep 1; echo late; yes late | head -n 60000; echo > talked) & echo ok"
        quiet = "(sleep 1; echo late; echo > quiet) > job.log 2>&1 &"
        report["talking_job"] = await call(client, {"command": talking, "cwd": folder})
        report["quiet_job"] = await call(client, {"command": quiet, "cwd": folder})
        for _ in range(300):  # 30 s at most: busybox under Wine starts slowly
            if {"quiet", "talked"} <= set(os.listdir(folder)):
                break
            await anyio.sleep(0.1)
        await anyio.sleep(1.0)
        report["job_files"] = sorted(os.listdir(folder))
        with Journal.open(paths) as journal:
            report["rows"] = [
                {"command": c.command, "status": c.status.value, "reason": c.reason}
                for c in journal.recent_commands(limit=10)
            ]
        report["locks"] = sorted(p.name for p in paths.locks_dir.iterdir())
    report["journal"] = str(paths.journal)
    report["data_dir"] = str(paths.data_dir)
    return report


if __name__ == "__main__":
    print(json.dumps(anyio.run(main)), flush=True)
