"""Benchmark what the OS container (issue 21) costs a call: `echo hi` through a headless `serve` with
the bwrap container and without it (bwrap made unavailable), against the SDK's minimal server.

Run (Linux, bwrap installed): python bench/container_bench.py [--calls 100]
All three servers run at once and are called in turn, so a noisy machine weighs on each alike;
medians are quoted. Also measured: bwrap alone (`bash -c true` bare, in the container) and the time
of the one-off probe.
"""

from __future__ import annotations

import argparse
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from serve_bench import MINIMAL_SDK_SERVER, percentile  # noqa: E402 (bench/ is this script's folder)

from app.core.execution import container  # noqa: E402

TARGET_CONTAINER_OVER_BARE_MS = 4.0  # issue 21: a tray-bound call <= SDK-minimal + 4 ms; bwrap ~3 ms here


def server(home: str, contained: bool) -> StdioServerParameters:
    env = {k: os.environ[k] for k in ("PATH", "HOME") if k in os.environ}
    env["COWORK_TERMINAL_HOME"] = home
    if not contained:
        env[container.BWRAP_ENV] = str(Path(home) / "no-bwrap")
    return StdioServerParameters(command=sys.executable, args=["-I", "-m", "app", "serve", "--headless"], env=env)


async def calls(count: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"contained": [], "bare": [], "sdk": []}
    with tempfile.TemporaryDirectory() as first, tempfile.TemporaryDirectory() as second:
        minimal = StdioServerParameters(command=sys.executable, args=["-c", MINIMAL_SDK_SERVER])
        async with (
            Client(server(first, True), mode="legacy") as contained,
            Client(server(second, False), mode="legacy") as bare,
            Client(minimal, mode="legacy") as sdk,
        ):
            said = await contained.call_tool("execute_command", {"command": "readlink /proc/self/ns/pid"})
            assert said.content[0].text.count("pid:[") == 1 and os.readlink("/proc/self/ns/pid") not in str(said)
            for client in (contained, bare):  # the first call warms the probe, classifier and bash resolver
                await client.call_tool("execute_command", {"command": "echo hi"})
            await sdk.call_tool("noop", {})
            for _ in range(count):
                for name, client in (("contained", contained), ("bare", bare)):
                    began = time.perf_counter()
                    await client.call_tool("execute_command", {"command": "echo hi"})
                    times[name].append(time.perf_counter() - began)
                began = time.perf_counter()
                await sdk.call_tool("noop", {})
                times["sdk"].append(time.perf_counter() - began)
    return times


def spawns(count: int) -> dict[str, list[float]]:
    """bash alone and bash in the container, as the executor starts them (Popen, waited)."""
    argv = ["/bin/bash", "-c", "true"]
    times: dict[str, list[float]] = {"bash": [], "bwrap + init": []}
    with tempfile.TemporaryDirectory() as home:
        found = container.linux_container([home])
        for _ in range(count):
            for name, line in (("bash", argv), ("bwrap + init", found.wrap(argv, 2))):
                began = time.perf_counter()
                subprocess.run(line, check=True, stderr=subprocess.DEVNULL)
                times[name].append(time.perf_counter() - began)
    return times


def probe_time(count: int) -> list[float]:
    times = []
    for _ in range(count):
        with tempfile.TemporaryDirectory() as home:
            began = time.perf_counter()
            found = container.linux_container([home])
            times.append(time.perf_counter() - began)
            assert found.on, found.detail
    return times


def line(label: str, seconds: list[float]) -> str:
    figures = " / ".join(f"{value * 1000:.1f}" for value in (statistics.median(seconds), percentile(seconds, 0.95)))
    return f"| {label} (n={len(seconds)}) | {figures} ms |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args()
    timed = anyio.run(calls, args.calls)
    spawned = spawns(args.calls)
    probed = probe_time(5)
    print(f"{platform.platform()}, Python {platform.python_version()}, {os.cpu_count()} cores\n")
    print("| what | median / p95 |\n| --- | --- |")
    print(line("`echo hi` through headless serve, in the container", timed["contained"]))
    print(line("`echo hi` through headless serve, bwrap unavailable", timed["bare"]))
    print(line("SDK-minimal server, a no-op tool", timed["sdk"]))
    print(line("`bash -c true`, Popen", spawned["bash"]))
    print(line("`bash -c true` in bwrap with our init and the protected set", spawned["bwrap + init"]))
    print(line("probe at first command (prepare + `true` in the container)", probed))
    extra = (statistics.median(timed["contained"]) - statistics.median(timed["bare"])) * 1000
    verdict = "met" if extra <= TARGET_CONTAINER_OVER_BARE_MS else "MISSED"
    print(f"\nThe container adds {extra:.1f} ms per call (target <= {TARGET_CONTAINER_OVER_BARE_MS:g} ms: {verdict}).")


if __name__ == "__main__":
    main()
