"""Start `serve` the way Claude does, run `echo ok` through it, and time the handshake.

    python installer/smoke_serve.py installer/out/dist/cowork-terminal/cowork-terminal
    python installer/smoke_serve.py --runs 10 python -m app

The command given is started with `serve --headless` appended, over stdio, with a throwaway
COWORK_TERMINAL_HOME, by the MCP SDK's client in the classic `initialize` mode (what Claude
Desktop sends). Exits non-zero unless every run echoed "ok". The release workflow runs it on each
frozen build: on Windows it is the check that the windowed executable speaks over the pipes its
parent passes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

HOME_ENV = "COWORK_TERMINAL_HOME"  # app.core.paths.HOME_ENV; not imported, so a bare checkout works
RUN_TIMEOUT_S = 60.0


async def one_run(command: list[str], home: str) -> tuple[float, str]:
    """(seconds from spawn to a finished handshake, what `echo ok` printed)."""
    env = {**os.environ, HOME_ENV: home}
    params = StdioServerParameters(command=command[0], args=[*command[1:], "serve", "--headless"], env=env)
    with anyio.fail_after(RUN_TIMEOUT_S):
        started = time.perf_counter()
        async with Client(params, mode="legacy") as client:
            handshake_s = time.perf_counter() - started
            result = await client.call_tool("execute_command", {"command": "echo ok"})
    if result.is_error:
        raise RuntimeError(f"execute_command failed: {result.content}")
    return handshake_s, result.structured_content["stdout"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1, help="how many servers to start, one after another")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the cowork-terminal command (serve is appended)")
    args = parser.parse_args()
    if not args.command:
        parser.error("give the command that starts cowork-terminal")
    times = []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as home:
            handshake_s, stdout = anyio.run(one_run, args.command, home)
        if stdout.strip() != "ok":
            print(f"expected 'ok', got {stdout!r}", file=sys.stderr)
            return 1
        times.append(handshake_s)
    print(
        f"{' '.join(args.command)}: echo ok fine; spawn to handshake over {len(times)} run(s): "
        f"median {statistics.median(times):.2f} s, min {min(times):.2f} s, max {max(times):.2f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
