"""Red team 14 (wine lane): a `serve` bound to the test's tray runs, as the model would, first
`python rt14_escaped_quit.py OUT` directly (in the command's job), then
`python rt14_spoof.py OUT2 rt14_escaped_quit.py &` (the same request from a process started under
explorer.exe). Its argument: rt14_escaped_quit.py. What the tray answered each, and whether it
still runs. One JSON line."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from app.core.paths import AppPaths

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # tray_client reads sys.argv[1]: ours, the asker
from tray_client import tray_pids, wait_for_tray  # noqa: E402 - beside this script

HERE = os.path.dirname(os.path.abspath(__file__))
ASKER = sys.argv[1]  # rt14_escaped_quit.py
SPOOF = os.path.join(HERE, "rt14_spoof.py")


def read_when_there(path: str, wait_s: float = 60.0) -> object:
    deadline = time.monotonic() + wait_s
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.2)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as told:
        return json.load(told)["answer"]


async def main() -> dict:
    paths = AppPaths.from_environment()
    report: dict = {"tray_pid": wait_for_tray(paths)}
    folder = tempfile.mkdtemp()
    inside, escaped = os.path.join(folder, "inside.json"), os.path.join(folder, "escaped.json")
    params = StdioServerParameters(command=sys.executable, args=["-I", "-m", "app", "serve"])
    async with Client(params, mode="legacy") as client:
        result = await client.call_tool("execute_command", {"command": f"C:/python/python.exe '{ASKER}' '{inside}'"})
        report["inside_command"] = result.content[0].text
        report["inside_answer"] = read_when_there(inside, 5.0)
        command = f"C:/python/python.exe '{SPOOF}' '{escaped}' '{ASKER}' >/dev/null 2>&1 &"
        result = await client.call_tool("execute_command", {"command": command})
        report["escape_command"] = result.content[0].text
    report["escaped_answer"] = read_when_there(escaped)
    time.sleep(3)
    report["tray_pids_after"] = tray_pids()
    return report


if __name__ == "__main__":
    print(json.dumps(anyio.run(main)), flush=True)
    sys.stderr.flush()
    os._exit(0)
