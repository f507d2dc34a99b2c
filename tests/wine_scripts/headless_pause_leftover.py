"""The wine lane: does a pause end what a finished command of a headless server left running?

No tray runs. A `serve --headless` runs `python rt13_ticker.py FILE &` (the command ends at once,
the ticker lives on in the command's job). Later (longer than a server whose commands all ended
keeps its pause backstop), this process (outside every job) runs the user's `cowork-terminal
pause`, which writes the pause into the journal; the server sees it there and ends the jobs its
finished commands left (running.Runs: `_may_have_left`, kept while a job is held). It waits well
past the pause's backstop and looks whether the ticker still writes. One JSON line; the ticker is
ended at the end whatever happened."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

# This Windows Python (the embeddable one) does not put a script's folder on sys.path.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rt13_pause_leftover import alive, end_ticker, leave_ticker, lines, step  # noqa: E402 - beside this script

TICKER = sys.argv[1]
QUIET_S = float(sys.argv[2])  # from the command's end to the pause: past the backstop's idle end


async def main() -> dict:
    report: dict = {}
    ticks = os.path.join(tempfile.mkdtemp(), "ticks.txt")
    # The SDK passes a server only a few variables: COWORK_TERMINAL_BASH (busybox's bash.exe) too.
    params = StdioServerParameters(
        command=sys.executable, args=["-I", "-m", "app", "serve", "--headless"], env=dict(os.environ)
    )
    async with Client(params, mode="legacy") as client:
        pid = await leave_ticker(client, TICKER, ticks, report)
        await anyio.sleep(QUIET_S)
        step("pause")
        paused = subprocess.run(
            [sys.executable, "-I", "-m", "app", "pause"], capture_output=True, text=True, timeout=120
        )
        report["cli_pause"] = {"code": paused.returncode, "said": paused.stdout + paused.stderr}
        await anyio.sleep(6.0)  # the server looks at the pause file each second; its backstop is 1.2 s
        count = len(lines(ticks))
        await anyio.sleep(2.0)
        report["lines_written_2s_after"] = len(lines(ticks)) - count
        report["ticker_alive_6s_after_pause"] = bool(pid) and alive(pid)
        said = await client.call_tool("execute_command", {"command": "echo after"})
        report["after_pause"] = said.content[0].text
    end_ticker(report)
    return report


if __name__ == "__main__":
    print(json.dumps(anyio.run(main)), flush=True)
    sys.stderr.flush()
    os._exit(0)
