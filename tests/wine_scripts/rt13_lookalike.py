"""Red team 13 (wine lane): what a `serve` (or the CLI), outside every job, concludes about a look-alike
of the tray that a command of the tray left running in the tray's job.

A `serve` bound to the test's tray runs `python rt13_squat.py PIDFILE &`; this process then builds the
OS's facts about the look-alike exactly as a server does for the process at the tray's address
(transport._windows_peer) and asks peer.tray_refusal, the check a server and the CLI make before
taking a peer for their tray. It also asks the real tray what it thinks (a request from the
look-alike's job is refused there). One JSON line; the look-alike is ended at the end."""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import time

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from app.core.channel.client import NoTray, TrayRefused, ask_tray
from app.core.channel.peer import from_container, own_facts, tray_refusal
from app.core.channel.transport import _windows_peer, address_for
from app.core.paths import AppPaths

SQUAT = sys.argv[1]
TRAY_WAIT_S = 90.0


def step(what: str) -> None:
    print(f"{time.monotonic():.1f} {what}", file=sys.stderr, flush=True)


def wait_for_tray(paths: AppPaths) -> dict:
    deadline = time.monotonic() + TRAY_WAIT_S
    while True:
        try:
            return json.loads(str(ask_tray(paths, "state", wait_s=10.0).get("message")))
        except (NoTray, TrayRefused) as exc:
            step(f"no tray yet: {exc!r}")
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


async def main() -> dict:
    paths = AppPaths.from_environment()
    report: dict = {"state_before": wait_for_tray(paths)}
    pid_file = os.path.join(tempfile.mkdtemp(), "squat.pid")
    params = StdioServerParameters(command=sys.executable, args=["-I", "-m", "app", "serve"])
    async with Client(params, mode="legacy") as client:
        command = f"C:/python/python.exe '{SQUAT}' '{pid_file}' >/dev/null 2>&1 &"
        result = await client.call_tool("execute_command", {"command": command})
        report["left_command"] = json.loads(result.content[0].text) if not result.is_error else result.content[0].text
    deadline = time.monotonic() + 60
    while not os.path.exists(pid_file) and time.monotonic() < deadline:
        await anyio.sleep(0.1)
    with open(pid_file, encoding="utf-8") as told:
        pid = int(told.read())
    report["squat_pid"] = pid
    facts = _windows_peer(pid, address=address_for(paths))
    own = own_facts(os.path.realpath(paths.data_dir))
    report["facts"] = {
        "executable": facts.executable,
        "own_executable": own.executable,
        "argv": list(facts.argv),
        "in_command_job": facts.in_command_job,
        "same_user": facts.uid == own.uid,
    }
    report["from_container"] = from_container(facts, own)
    report["tray_refusal"] = tray_refusal(facts, own, own.data_dir)
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError as exc:
        report["kill"] = repr(exc)
    return report


if __name__ == "__main__":
    print(json.dumps(anyio.run(main)), flush=True)
    sys.stderr.flush()
    os._exit(0)
