"""Red team 14 (wine lane): a `serve` bound to the test's tray runs `python rt14_redacl.py` (a command
that gives the tray's named job an empty DACL). Then, from outside every job as a server does, the
OS's facts about the real tray and tray_refusal; then a fresh `serve` runs `echo hi`. One JSON line."""

from __future__ import annotations

import json
import os
import sys
import time

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from app.core.channel.peer import own_facts, tray_refusal
from app.core.channel.transport import _windows_peer, address_for
from app.core.paths import AppPaths

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tray_client import tray_pids, wait_for_tray  # noqa: E402 - beside this script

REDACL = sys.argv[1]


async def run(command: str) -> dict:
    params = StdioServerParameters(command=sys.executable, args=["-I", "-m", "app", "serve"])
    async with Client(params, mode="legacy") as client:
        result = await client.call_tool("execute_command", {"command": command})
        text = result.content[0].text
        return {"error": text} if result.is_error else json.loads(text)


async def main() -> dict:
    paths = AppPaths.from_environment()
    tray_pid = wait_for_tray(paths)
    report: dict = {"tray_pid": tray_pid}
    report["before"] = await run("echo hi")
    report["redacl"] = await run(f"C:/python/python.exe '{REDACL}'")
    own = own_facts(os.path.realpath(paths.data_dir))
    facts = _windows_peer(tray_pid, address=address_for(paths))
    report["tray_in_command_job"] = facts.in_command_job
    report["tray_refusal"] = tray_refusal(facts, own, own.data_dir)
    time.sleep(1)
    report["after"] = await run("echo hi")
    report["tray_pids"] = tray_pids()
    return report


if __name__ == "__main__":
    print(json.dumps(anyio.run(main)), flush=True)
    sys.stderr.flush()
    os._exit(0)
