"""Runs under Windows Python (the wine lane): provenance by job membership (issue 21).

A job left behind by a command that has ended asks the tray to resume, quit and open the log; then
a command the tray runs (so in the tray's job) asks the same, then to pause; then this process,
outside every job of the tray, asks the same. One JSON line: what each
side was answered and what the tray's state was.
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

from app.core.channel.client import NoTray, TrayRefused, ask_tray
from app.core.paths import AppPaths

TRAY_WAIT_S = 90.0
ANSWER_WAIT_S = 120.0
ASKER = sys.argv[1]  # contained_asker.py, as a Windows path


def step(what: str) -> None:
    """Progress on stderr: a run that hangs shows where."""
    print(f"{time.monotonic():.1f} {what}", file=sys.stderr, flush=True)


def ask(paths: AppPaths, op: str) -> str:
    try:
        return "accepted: " + str(ask_tray(paths, op, wait_s=60.0).get("message"))
    except (NoTray, TrayRefused) as exc:
        return f"{type(exc).__name__}: {exc}"


def tray_state(paths: AppPaths) -> dict:
    return json.loads(str(ask_tray(paths, "state", wait_s=10.0).get("message")))


def wait_for_tray(paths: AppPaths) -> dict:
    deadline = time.monotonic() + TRAY_WAIT_S
    while True:
        try:
            return tray_state(paths)
        except (NoTray, TrayRefused) as exc:
            step(f"no tray yet: {exc!r}")
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


async def main() -> dict:
    paths = AppPaths.from_environment()
    report: dict = {"state_before": wait_for_tray(paths)}
    folder = tempfile.mkdtemp()
    answers, left_answers, go = (os.path.join(folder, name) for name in ("answers.json", "left.json", "go"))
    params = StdioServerParameters(command=sys.executable, args=["-I", "-m", "app", "serve"])
    async with Client(params, mode="legacy") as client:
        step("left behind")
        command = f"C:/python/python.exe '{ASKER}' '{left_answers}' '{go}' >/dev/null 2>&1 &"
        result = await client.call_tool("execute_command", {"command": command})
        report["left_command"] = json.loads(result.content[0].text) if not result.is_error else result.content[0].text
        open(go, "w").close()  # its command has ended: now it asks
        deadline = time.monotonic() + ANSWER_WAIT_S
        while not os.path.exists(left_answers) and time.monotonic() < deadline:
            await anyio.sleep(0.1)
        await anyio.sleep(0.5)  # written, and closed
        with open(left_answers, encoding="utf-8") as told:
            report["left_behind"] = json.load(told)
        step("asker")
        command = f"C:/python/python.exe '{ASKER}' '{answers}'"
        result = await client.call_tool("execute_command", {"command": command, "timeout": 120000})
        report["command"] = json.loads(result.content[0].text) if not result.is_error else result.content[0].text
    with open(answers, encoding="utf-8") as told:
        report["inside"] = json.load(told)
    step("outside")
    report["state_after_inside"] = tray_state(paths)
    report["outside"] = {op: ask(paths, op) for op in ("open_log", "resume")}
    report["state_after_outside"] = tray_state(paths)
    report["outside"]["quit"] = ask(paths, "quit")
    step("done")
    return report


if __name__ == "__main__":
    print(json.dumps(anyio.run(main)), flush=True)
    sys.stderr.flush()
    os._exit(0)  # the report is out: nothing left at exit (a worker thread, a handle) may hold the run up
