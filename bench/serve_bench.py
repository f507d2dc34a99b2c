"""Benchmark `cowork-terminal serve`: start-up, round trip against the bash floor, memory under load.

Run: python bench/serve_bench.py [--calls 200] [--starts 10]
Prints a markdown table for docs/benchmarks.md. Everything is measured in one run, so ratios hold
even on a noisy machine; medians are quoted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent
TARGET_ROUND_TRIP_OVER_FLOOR_MS = 3.0
TARGET_MEMORY_GROWTH_MB = 10.0


MINIMAL_SDK_SERVER = """
from mcp.server import MCPServer
server = MCPServer(name="minimal")
@server.tool()
def noop() -> str:
    return "ok"
server.run("stdio")
"""


def params(home: str) -> StdioServerParameters:
    env = {k: os.environ[k] for k in ("PATH", "HOME") if k in os.environ}
    env["COWORK_TERMINAL_HOME"] = home
    return StdioServerParameters(command=sys.executable, args=["-m", "app", "serve", "--headless"], env=env, cwd=ROOT)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def measure(calls: int, starts: int) -> dict[str, float]:
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as home:
        handshakes = []
        for _ in range(starts):
            began = time.perf_counter()
            async with Client(params(home), mode="legacy"):
                handshakes.append((time.perf_counter() - began) * 1000)
        results["handshake_median_ms"] = statistics.median(handshakes)
        # The SDK's own floor: a minimal MCPServer with one tool, started the same way.
        minimal = Path(home) / "minimal_server.py"
        minimal.write_text(MINIMAL_SDK_SERVER)
        floor_handshakes = []
        for _ in range(starts):
            began = time.perf_counter()
            async with Client(StdioServerParameters(command=sys.executable, args=[str(minimal)]), mode="legacy"):
                floor_handshakes.append((time.perf_counter() - began) * 1000)
        results["sdk_handshake_median_ms"] = statistics.median(floor_handshakes)

        async with Client(params(home), mode="legacy") as client:
            round_trips, floors = [], []
            for _ in range(20):  # warm up both paths
                await client.call_tool("execute_command", {"command": "echo hi"})
                subprocess.run(["bash", "-c", "echo hi"], capture_output=True)
            for _ in range(calls):  # interleaved, so both see the same machine
                began = time.perf_counter()
                await client.call_tool("execute_command", {"command": "echo hi"})
                round_trips.append((time.perf_counter() - began) * 1000)
                began = time.perf_counter()
                subprocess.run(["bash", "-c", "echo hi"], capture_output=True)
                floors.append((time.perf_counter() - began) * 1000)
            results["round_trip_median_ms"] = statistics.median(round_trips)
            results["round_trip_p95_ms"] = percentile(round_trips, 0.95)
            results["floor_median_ms"] = statistics.median(floors)
            results["floor_p95_ms"] = percentile(floors, 0.95)

            reply = await client.call_tool("execute_command", {"command": "echo $PPID"})
            server_pid = int(json.loads(reply.content[0].text)["stdout"])
            baseline = rss_kb(server_pid)
            peak = baseline
            done = threading.Event()

            def sample() -> None:
                nonlocal peak
                while not done.is_set():
                    peak = max(peak, rss_kb(server_pid))
                    time.sleep(0.005)

            sampler = threading.Thread(target=sample)
            sampler.start()
            began = time.perf_counter()
            await client.call_tool("execute_command", {"command": "head -c 50000000 /dev/urandom | base64 -w 0"})
            results["print_50mb_s"] = time.perf_counter() - began
            done.set()
            sampler.join()
            results["rss_baseline_mb"] = baseline / 1024
            results["rss_growth_mb"] = (peak - baseline) / 1024
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--starts", type=int, default=10)
    args = parser.parse_args()
    r = anyio.run(measure, args.calls, args.starts)
    over = r["round_trip_median_ms"] - r["floor_median_ms"]
    print(f"Machine: {platform.platform()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"Command: python bench/serve_bench.py --calls {args.calls} --starts {args.starts}\n")
    print("| measure | figure | target |")
    print("| --- | --- | --- |")
    starts = args.starts
    print(f"| spawn to handshake (median of {starts}) | {r['handshake_median_ms']:.0f} ms | as low as the SDK allows |")
    print(f"| the SDK's floor: a minimal `MCPServer`, same way | {r['sdk_handshake_median_ms']:.0f} ms | |")
    print(f"| `execute_command` `echo hi` round trip, median / p95 | {r['round_trip_median_ms']:.2f} / "
          f"{r['round_trip_p95_ms']:.2f} ms | |")
    print(f"| floor: `bash -c 'echo hi'` spawned directly, median / p95 | {r['floor_median_ms']:.2f} / "
          f"{r['floor_p95_ms']:.2f} ms | |")
    verdict = "met" if over <= TARGET_ROUND_TRIP_OVER_FLOOR_MS else "MISSED"
    target = TARGET_ROUND_TRIP_OVER_FLOOR_MS
    print(f"| round trip over the floor, median | {over:.2f} ms | ≤ {target:g} ms ({verdict}) |")
    verdict = "met" if r["rss_growth_mb"] <= TARGET_MEMORY_GROWTH_MB else "MISSED"
    print(f"| server RSS growth while a command prints 50 MB (base64 of 50 MB: 67 MB) | "
          f"{r['rss_growth_mb']:.1f} MB (baseline {r['rss_baseline_mb']:.0f} MB, took {r['print_50mb_s']:.1f} s) | "
          f"< {TARGET_MEMORY_GROWTH_MB:g} MB ({verdict}) |")


if __name__ == "__main__":
    main()
