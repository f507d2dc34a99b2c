"""Red team 13 (wine lane): does a pause end what a finished command left running on Windows?

A `serve` bound to the tray the test started runs `python rt13_ticker.py FILE &` (the command ends
at once, the ticker lives on in the command's job), then this process (outside every job) asks the
tray to pause, waits well past the pause's backstop, and looks whether the ticker still writes.
One JSON line; the ticker is ended at the end whatever happened."""

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
from app.core.paths import AppPaths

TICKER = sys.argv[1]
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


def lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as told:
            return told.read().splitlines()
    except OSError:
        return []


def alive(pid: int) -> bool:
    import ctypes

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    handle = kernel32.OpenProcess(0x1000 | 0x0400, False, pid)
    if not handle:
        return False
    code = ctypes.c_ulong(0)
    kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
    kernel32.CloseHandle(handle)
    return code.value == 259  # STILL_ACTIVE


async def leave_ticker(client: Client, ticker: str, ticks: str, report: dict) -> int | None:
    """A command that leaves `ticker` writing to `ticks` in the background; its pid once it ticks."""
    command = f"C:/python/python.exe '{ticker}' '{ticks}' >/dev/null 2>&1 &"
    result = await client.call_tool("execute_command", {"command": command})
    report["left_command"] = json.loads(result.content[0].text) if not result.is_error else result.content[0].text
    deadline = time.monotonic() + 60
    while len(lines(ticks)) < 5 and time.monotonic() < deadline:
        await anyio.sleep(0.2)
    first = lines(ticks)
    report["ticker_pid"] = pid = int(first[0].split()[1]) if first else None
    report["ticking_before_pause"] = len(first) >= 5
    return pid


def end_ticker(report: dict) -> None:
    """The test's own clean-up, whatever happened: TerminateProcess of a ticker still running."""
    if report.get("ticker_pid") and alive(report["ticker_pid"]):
        os.kill(report["ticker_pid"], signal.SIGTERM)


async def main() -> dict:
    paths = AppPaths.from_environment()
    report: dict = {"state_before": wait_for_tray(paths)}
    ticks = os.path.join(tempfile.mkdtemp(), "ticks.txt")
    params = StdioServerParameters(command=sys.executable, args=["-I", "-m", "app", "serve"])
    async with Client(params, mode="legacy") as client:
        pid = await leave_ticker(client, TICKER, ticks, report)
        step("pause")
        try:
            report["pause"] = "accepted: " + str(ask_tray(paths, "pause", wait_s=30.0).get("message"))
        except (NoTray, TrayRefused) as exc:
            report["pause"] = f"{type(exc).__name__}: {exc}"
        await anyio.sleep(5.0)  # the pause's backstop is 1.2 s
        report["state_after_pause"] = json.loads(str(ask_tray(paths, "state", wait_s=10.0).get("message")))
        count = len(lines(ticks))
        await anyio.sleep(2.0)
        report["lines_written_2s_after"] = len(lines(ticks)) - count
        report["ticker_alive_5s_after_pause"] = bool(pid) and alive(pid)
    end_ticker(report)
    return report


if __name__ == "__main__":
    print(json.dumps(anyio.run(main)), flush=True)
    sys.stderr.flush()
    os._exit(0)
