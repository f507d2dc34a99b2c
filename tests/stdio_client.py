"""Drive a real `cowork-terminal serve` process with the MCP SDK's own client, over stdio."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from app.core.paths import HOME_ENV

MODES = ("legacy", "auto")  # the classic initialize handshake (Claude Desktop) and the SDK default
# A timeout, Stop or pause ends a command tree in well under a second (bench/latency_bench.py: about
# 190 ms). Tests give it this deadline, which only a stop that waits for the sleeps it should end misses.
STOP_DEADLINE_S = 10.0
# How long a test waits for a fresh tray's first command to run or be held: the tray loads the MCP
# SDK and the classifier for its runners when the first server binds (a second of CPU), and with
# 6 workers on 2 cores that load took 11 s. Only a wait for something to happen uses it.
FIRST_CALL_DEADLINE_S = 30.0


def server_params(home: Path, *extra_args: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    # The SDK's stdio client passes only a few variables on: give the child its home explicitly.
    child_env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "USER", "LOGNAME", "SHELL")}
    child_env[HOME_ENV] = str(home)
    # Coverage of the server itself, when the suite runs under `coverage run` (patch = subprocess).
    child_env.update({k: v for k, v in os.environ.items() if k.startswith("COVERAGE_")})
    child_env.update(env or {})
    return StdioServerParameters(command=sys.executable, args=["-m", "app", "serve", *extra_args], env=child_env)


@asynccontextmanager
async def connect(
    home: Path, mode: str = "legacy", *, headless: bool = True, env: dict[str, str] | None = None
) -> AsyncIterator[Client]:
    args = ("--headless",) if headless else ()
    async with Client(server_params(home, *args, env=env), mode=mode) as client:
        yield client


async def run(client: Client, arguments: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Call execute_command and return what the model reads: the JSON of the text block (or the error text)."""
    result = await client.call_tool("execute_command", arguments, **kwargs)
    text = result.content[0].text
    if result.is_error:
        return {"error": text}
    data = json.loads(text)
    assert data == result.structured_content, "the text block and the structured content must agree"
    return data


async def said(client: Client, command: str, tool: str = "execute_command") -> str:
    """What the model reads of `command` as text, an error marked "ERROR: " as tests/raw_stdio.py marks it."""
    result = await client.call_tool(tool, {"command": command})
    return ("ERROR: " if result.is_error else "") + result.content[0].text


def stdout_of(answer: str) -> str:
    """The stdout in `said`'s answer, which must not be an error."""
    assert not answer.startswith("ERROR: "), answer
    return json.loads(answer)["stdout"]


async def run_when_allowed(
    client: Client, arguments: dict[str, Any], allow_held: Callable[[], Awaitable[object]]
) -> dict[str, Any]:
    """A command the classifier holds (it cannot read the script), allowed by the user (`allow_held`):
    what the model reads once it ran (through command_wait if the call returned first)."""
    result: dict[str, Any] = {}

    async def call() -> None:
        result.update(await run(client, arguments))

    async with anyio.create_task_group() as group:
        group.start_soon(call)
        await allow_held()
    if result.get("status") == "waiting":
        waited = await client.call_tool("command_wait", {"jobId": result["jobId"]})
        result = json.loads(waited.content[0].text)
    return result


def running_with(text: str) -> list[int]:
    """Live processes (not zombies) whose whole command line holds `text` (ps cuts long lines)."""
    found = []
    for entry in Path("/proc").iterdir():
        with suppress(OSError, IndexError):
            alive = entry.name.isdigit() and (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
            if alive and text.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
    return found


def live_processes(marker: str) -> list[str]:
    """Processes (not zombies) whose command line contains `marker`."""
    out = subprocess.run(["ps", "-eo", "stat=,args="], capture_output=True, text=True, check=True).stdout
    return [
        line
        for line in out.splitlines()
        if marker in line and not line.lstrip().startswith("Z") and "ps -eo" not in line
    ]
