"""Red team 13 (wine lane): the user's `pause` while a look-alike left by a command holds the tray's pipe.

`leave FOLDER SQUAT`: a `serve` bound to the running tray runs `python SQUAT FOLDER/pid FOLDER/go &`
(it ends at once; the look-alike waits in the command's job), then this process, outside every job,
quits the tray (accepted from outside). `pause FOLDER`: with FOLDER/go made by the test, once the
look-alike answers on the pipe, the user's CLI `pause` runs; then the journal says whether host access
is paused. One JSON line each; the look-alike is ended at the end of `pause`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from app.core.channel.client import NoTray, TrayRefused, ask_tray
from app.core.journal.store import Journal
from app.core.paths import AppPaths


def ask(paths: AppPaths, op: str) -> str:
    try:
        return "accepted: " + str(ask_tray(paths, op, wait_s=30.0).get("message"))
    except (NoTray, TrayRefused) as exc:
        return f"{type(exc).__name__}: {exc}"


async def leave(folder: str, squat: str) -> dict:
    paths = AppPaths.from_environment()
    deadline = time.monotonic() + 90
    while ask(paths, "state").startswith("NoTray") and time.monotonic() < deadline:
        await anyio.sleep(0.5)
    report: dict = {}
    pid_file, go = os.path.join(folder, "pid"), os.path.join(folder, "go")
    params = StdioServerParameters(command=sys.executable, args=["-I", "-m", "app", "serve"])
    async with Client(params, mode="legacy") as client:
        command = f"C:/python/python.exe '{squat}' '{pid_file}' '{go}' >/dev/null 2>&1 &"
        result = await client.call_tool("execute_command", {"command": command})
        report["left_command"] = json.loads(result.content[0].text) if not result.is_error else result.content[0].text
    await anyio.sleep(1.0)
    report["quit"] = ask(paths, "quit")
    return report


def pause(folder: str) -> dict:
    paths = AppPaths.from_environment()
    report: dict = {}
    with open(os.path.join(folder, "pid"), encoding="utf-8") as told:
        pid = int(told.read())
    report["squat_alive"] = True
    deadline = time.monotonic() + 60
    while (answer := ask(paths, "state")).startswith("NoTray") and time.monotonic() < deadline:
        time.sleep(0.5)
    report["state_asked_as_the_tray"] = answer  # a CLI's `state` is only asked of a verified tray
    done = subprocess.run([sys.executable, "-m", "app", "pause"], capture_output=True, timeout=120)
    report["cli_pause"] = {"code": done.returncode, "said": (done.stdout + done.stderr).decode(errors="replace")}
    with Journal.open(paths) as journal:
        report["journal_paused"] = journal.is_paused()
    heard = os.path.join(folder, "pid.heard")
    report["look_alike_heard"] = ""
    if os.path.exists(heard):
        with open(heard, encoding="utf-8") as told:
            report["look_alike_heard"] = told.read()
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError as exc:
        report["kill"] = repr(exc)
    return report


if __name__ == "__main__":
    report = anyio.run(leave, sys.argv[2], sys.argv[3]) if sys.argv[1] == "leave" else pause(sys.argv[2])
    print(json.dumps(report), flush=True)
    sys.stderr.flush()
    os._exit(0)
