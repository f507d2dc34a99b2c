"""Benchmark the tray channel (issue 10): what it adds to a call, and how fast pause and Stop act.

Run (Linux): python bench/channel_bench.py [--calls 300] [--stops 5]

In one run, interleaved so that every path sees the same machine:
- `execute_command` `echo hi` through a headless server with no tray, which writes the journal
  itself (the design before the channel), through a server bound to a real tray process, which
  sends its rows to the tray and starts the command once the row is written, and `bash -c` alone
  (the floor). Target: the channel adds at most 0.5 ms to the median call.
- one request/answer over the channel on its own (a `client` update, which the tray writes).
- Stop and pause, from the request to the model's result with the command's tree ended: through
  the journal, which a headless server polls every 0.2 s (before), and pushed by the tray (after).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from serve_bench import percentile  # noqa: E402 (bench/ is this script's folder)

from app.core.channel.client import ask_tray, current_tray_state  # noqa: E402
from app.core.journal.store import Journal, Status  # noqa: E402
from app.core.paths import HOME_ENV, AppPaths  # noqa: E402

ADDED_TARGET_MS = 0.5
STOP_TARGET_S = 1.0


def server(home: Path, *args: str) -> StdioServerParameters:
    env = {k: os.environ[k] for k in ("PATH", "HOME") if k in os.environ}
    env[HOME_ENV] = str(home)
    return StdioServerParameters(command=sys.executable, args=["-m", "app", "serve", *args], env=env, cwd=REPO)


def start_tray(home: Path) -> subprocess.Popen:
    env = {**os.environ, HOME_ENV: str(home), "PYSTRAY_BACKEND": "dummy"}
    tray = subprocess.Popen(
        [sys.executable, "-m", "app", "tray"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    paths = AppPaths.from_environment({HOME_ENV: str(home)})
    deadline = time.monotonic() + 20
    while current_tray_state(paths) is None:
        if time.monotonic() > deadline:
            raise SystemExit("the tray did not start")
        time.sleep(0.05)
    return tray


async def calls(before_home: Path, after_home: Path, count: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"before": [], "after": [], "floor": []}
    async with (
        Client(server(before_home, "--headless"), mode="legacy") as before,
        Client(server(after_home), mode="legacy") as after,
    ):
        for _ in range(20):  # warm up every path
            await before.call_tool("execute_command", {"command": "echo hi"})
            await after.call_tool("execute_command", {"command": "echo hi"})
        for _ in range(count):
            for name, client in (("before", before), ("after", after)):
                began = time.perf_counter()
                reply = await client.call_tool("execute_command", {"command": "echo hi"})
                times[name].append((time.perf_counter() - began) * 1000)
                assert not reply.is_error, reply
            began = time.perf_counter()
            subprocess.run(["bash", "-c", "echo hi"], capture_output=True)
            times["floor"].append((time.perf_counter() - began) * 1000)
    return times


def raw_requests(home: Path, count: int) -> list[float]:
    from app.core.commands.tray_link import TrayLink

    link = TrayLink(AppPaths.from_environment({HOME_ENV: str(home)}), headless=True, lock_key="bench")
    assert link.try_connect()
    link.start()
    times = []
    for _ in range(count):
        began = time.perf_counter()
        link.request("client", name="bench", version="1")
        times.append((time.perf_counter() - began) * 1000)
    link.request("end")
    link.close()
    return times


async def one_stop(client: Client, journal: Journal, act) -> float:
    """Run `sleep 30 & sleep 30`, call `act(command_id)`, return seconds to the model's result."""
    result: dict = {}

    async def call() -> None:
        reply = await client.call_tool("execute_command", {"command": "sleep 30 & sleep 30"})
        result["ended"] = time.perf_counter()
        result["body"] = json.loads(reply.content[0].text)

    async with anyio.create_task_group() as group:
        group.start_soon(call)
        while not journal.active_commands() or journal.active_commands()[0].status is not Status.RUNNING:
            await anyio.sleep(0.01)
        await anyio.sleep(0.2)  # let bash start both sleeps
        [running] = journal.active_commands()
        began = time.perf_counter()
        act(running.id)
    assert result["body"]["exitCode"] is None, result["body"]
    return result["ended"] - began


async def stops_before(home: Path, runs: int) -> tuple[list[float], list[float]]:
    """A headless server with no tray: Stop and pause written to the journal, which it polls."""
    paths = AppPaths.from_environment({HOME_ENV: str(home)})
    by_stop, by_pause = [], []
    async with Client(server(home, "--headless"), mode="legacy") as client:
        with Journal(paths) as journal:
            for _ in range(runs):
                by_stop.append(await one_stop(client, journal, journal.request_stop))
                by_pause.append(await one_stop(client, journal, lambda _id: journal.set_paused(True)))
                journal.set_paused(False)
    return by_stop, by_pause


async def stops_after(folder: Path, runs: int) -> tuple[list[float], list[float]]:
    """A server bound to a real tray: Stop and pause sent to the tray, which pushes them. Resuming
    takes the user's click, so each pause gets a fresh tray, server and home."""
    home = folder / "stops"
    paths = AppPaths.from_environment({HOME_ENV: str(home)})
    by_stop, by_pause = [], []
    tray = start_tray(home)
    try:
        async with Client(server(home), mode="legacy") as client:
            with Journal(paths) as journal:
                for _ in range(runs):
                    by_stop.append(await one_stop(client, journal, lambda i: ask_tray(paths, "stop", id=i)))
    finally:
        tray.terminate()
        tray.wait()
    for index in range(runs):
        home = folder / f"pause-{index}"
        paths = AppPaths.from_environment({HOME_ENV: str(home)})
        tray = start_tray(home)
        try:
            async with Client(server(home), mode="legacy") as client:
                with Journal(paths) as journal:
                    pause = functools.partial(lambda p, _id: ask_tray(p, "pause"), paths)
                    by_pause.append(await one_stop(client, journal, pause))
        finally:
            tray.terminate()
            tray.wait()
    return by_stop, by_pause


def row(label: str, values: list[float], unit: str = "ms", target: str = "") -> str:
    figures = " / ".join(f"{v:.2f}" for v in (statistics.median(values), percentile(values, 0.95)))
    return f"| {label} (n={len(values)}) | {figures} {unit} | {target} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--stops", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        before_home, after_home = Path(folder) / "before", Path(folder) / "after"
        os.environ["HOME"] = folder  # the tray's first look reads Claude's folders: an empty home
        tray = start_tray(after_home)
        try:
            times = anyio.run(calls, before_home, after_home, args.calls)
            raw = raw_requests(after_home, 2000)
        finally:
            tray.terminate()
            tray.wait()
        stop_before, pause_before = anyio.run(stops_before, before_home, args.stops)
        stop_after, pause_after = anyio.run(stops_after, Path(folder), args.stops)
    floor = statistics.median(times["floor"])
    before_over = statistics.median(times["before"]) - floor
    after_over = statistics.median(times["after"]) - floor
    added = after_over - before_over
    print(f"Machine: {platform.platform()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"Command: python bench/channel_bench.py --calls {args.calls} --stops {args.stops}\n")
    print("| measure | median / p95 | target |")
    print("| --- | --- | --- |")
    print(row("`echo hi` call, headless server writing the journal itself (before)", times["before"]))
    print(row("`echo hi` call, server bound to the tray over the channel (after)", times["after"]))
    print(row("floor: `bash -c 'echo hi'`", times["floor"]))
    verdict = "met" if added <= ADDED_TARGET_MS else "MISSED"
    print(f"| over the floor, before / after (medians) | {before_over:.2f} / {after_over:.2f} ms | |")
    print(f"| added by the channel (difference of medians) | {added:.2f} ms | ≤ {ADDED_TARGET_MS} ms ({verdict}) |")
    print(row("one request and answer over the channel (the tray writes a row)", raw))
    print(row("Stop to the model's result, journal polled (before)", [s * 1000 for s in stop_before]))
    print(row("pause to the model's result, journal polled (before)", [s * 1000 for s in pause_before]))
    target = f"< {STOP_TARGET_S * 1000:g} ms"
    print(row("Stop to the model's result, pushed by the tray (after)", [s * 1000 for s in stop_after], target=target))
    print(
        row("pause to the model's result, pushed by the tray (after)", [s * 1000 for s in pause_after], target=target)
    )


if __name__ == "__main__":
    main()
