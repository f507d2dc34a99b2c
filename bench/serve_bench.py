"""Benchmark `cowork-terminal serve`: start-up, round trip against the bash floor, memory under load.

Run: python bench/serve_bench.py [--calls 200] [--starts 10] [--startup-only] [--app-root DIR]
Prints a markdown table for docs/benchmarks.md. Everything is measured in one run, so ratios hold
even on a noisy machine; medians are quoted. `serve` and the SDK's minimal server start in turn, so
both see the same machine. `--app-root` measures another checkout of the app (for before/after).
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
TARGET_START_OVER_SDK = 0.05  # spawn-to-initialize within 5 % of the SDK's own minimal server
CLIENT_PAUSE_S = 0.5  # a client lists tools and thinks before its first call; the worker loads meanwhile


MINIMAL_SDK_SERVER = """
from mcp.server import MCPServer
server = MCPServer(name="minimal")
@server.tool()
def noop() -> str:
    return "ok"
server.run("stdio")
"""


APP_ROOT = ROOT
COMPARE_ROOT: Path | None = None  # another checkout, started in turn with this one (before/after)


def params(home: str, root: Path | None = None) -> StdioServerParameters:
    root = root or APP_ROOT
    env = {k: os.environ[k] for k in ("PATH", "HOME") if k in os.environ}
    env["COWORK_TERMINAL_HOME"] = home
    env["PYTHONPATH"] = str(root)  # ahead of the editable install: the checkout being measured
    return StdioServerParameters(command=sys.executable, args=["-m", "app", "serve", "--headless"], env=env, cwd=root)


async def timed_start(server: StdioServerParameters) -> tuple[float, float]:
    """Spawn to the end of the handshake, and spawn to the answer of the first `tools/list` (the
    client's next step, which `serve` answers once it has set up its host side)."""
    began = time.perf_counter()
    async with Client(server, mode="legacy") as client:
        handshake = (time.perf_counter() - began) * 1000
        await client.list_tools()
        return handshake, (time.perf_counter() - began) * 1000


async def first_calls(
    home: str, starts: int, pause_s: float, root: Path | None = None
) -> tuple[list[float], list[float]]:
    """The first and the second `echo hi` call of fresh servers, `pause_s` after their handshake."""
    first, second = [], []
    for _ in range(starts):
        async with Client(params(home, root), mode="legacy") as client:
            # As clients do at connect; the SDK's client would otherwise list the tools inside the
            # first call (to validate its structured result), and that is not the server's first call.
            await client.list_tools()
            await anyio.sleep(pause_s)
            began = time.perf_counter()
            await client.call_tool("execute_command", {"command": "echo hi"})
            first.append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            await client.call_tool("execute_command", {"command": "echo hi"})
            second.append((time.perf_counter() - began) * 1000)
    return first, second


async def measure_startup(starts: int) -> dict[str, float]:
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as home:
        minimal = Path(home) / "minimal_server.py"
        minimal.write_text(MINIMAL_SDK_SERVER)
        sdk = StdioServerParameters(command=sys.executable, args=[str(minimal)])
        other_home = Path(home) / "compared"
        await timed_start(params(home))  # the journal's creation is not a start-up cost
        if COMPARE_ROOT:
            await timed_start(params(str(other_home), COMPARE_ROOT))
        ours, floor, other = [], [], []
        for _ in range(starts):  # in turn, so all see the same machine
            ours.append(await timed_start(params(home)))
            floor.append(await timed_start(sdk))
            if COMPARE_ROOT:
                other.append(await timed_start(params(str(other_home), COMPARE_ROOT)))
        results["handshake_median_ms"] = statistics.median(h for h, _ in ours)
        results["sdk_handshake_median_ms"] = statistics.median(h for h, _ in floor)
        results["tools_median_ms"] = statistics.median(t for _, t in ours)
        results["sdk_tools_median_ms"] = statistics.median(t for _, t in floor)
        first, second = await first_calls(home, starts, CLIENT_PAUSE_S)
        results["first_call_median_ms"] = statistics.median(first)
        results["second_call_median_ms"] = statistics.median(second)
        first, second = await first_calls(home, starts, 0.0)
        results["first_call_at_once_median_ms"] = statistics.median(first)
        if COMPARE_ROOT:
            results["compared_handshake_median_ms"] = statistics.median(h for h, _ in other)
            results["compared_tools_median_ms"] = statistics.median(t for _, t in other)
            first, second = await first_calls(str(other_home), starts, CLIENT_PAUSE_S, COMPARE_ROOT)
            results["compared_first_call_median_ms"] = statistics.median(first)
            results["compared_second_call_median_ms"] = statistics.median(second)
    return results


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
    global APP_ROOT, COMPARE_ROOT
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--startup-only", action="store_true", help="only start-up and the first call")
    parser.add_argument("--app-root", type=Path, default=ROOT, help="the checkout whose `serve` is measured")
    parser.add_argument("--compare-root", type=Path, help="another checkout, started in turn (before/after)")
    args = parser.parse_args()
    APP_ROOT = args.app_root.resolve()
    COMPARE_ROOT = args.compare_root.resolve() if args.compare_root else None
    r = anyio.run(measure_startup, args.starts)
    print(f"Machine: {platform.platform()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    compared = f" --compare-root {COMPARE_ROOT}" if COMPARE_ROOT else ""
    print(
        f"Command: python bench/serve_bench.py --calls {args.calls} --starts {args.starts}"
        f"{' --startup-only' if args.startup_only else ''}{compared} (app: {APP_ROOT})\n"
    )
    print("| measure | figure | target |")
    print("| --- | --- | --- |")
    starts = args.starts
    over_sdk = r["handshake_median_ms"] / r["sdk_handshake_median_ms"] - 1
    verdict = "met" if over_sdk <= TARGET_START_OVER_SDK else "MISSED"
    print(f"| spawn to handshake of `serve` (median of {starts}) | {r['handshake_median_ms']:.0f} ms | |")
    floor = r["sdk_handshake_median_ms"]
    print(f"| the SDK's floor: a minimal `MCPServer`, started in turn with it | {floor:.0f} ms | |")
    target = f"≤ +{TARGET_START_OVER_SDK * 100:g} % ({verdict})"
    print(f"| `serve` over the SDK's floor | {over_sdk * 100:+.1f} % | {target} |")
    over_tools = r["tools_median_ms"] - r["sdk_tools_median_ms"]
    print(
        f"| spawn to the first `tools/list` answer: `serve` / the SDK's floor | {r['tools_median_ms']:.0f} / "
        f"{r['sdk_tools_median_ms']:.0f} ms ({over_tools:+.0f} ms) | |"
    )
    print(
        f"| first `echo hi` call, {CLIENT_PAUSE_S:g} s after the handshake (median of {starts}) | "
        f"{r['first_call_median_ms']:.1f} ms | about the second's |"
    )
    print(f"| the second call of the same server | {r['second_call_median_ms']:.1f} ms | |")
    print(f"| first call sent at once after the handshake | {r['first_call_at_once_median_ms']:.1f} ms | |")
    if COMPARE_ROOT:
        print(
            f"| compared checkout ({COMPARE_ROOT}): spawn to handshake / to `tools/list`, in turn with the "
            f"above | {r['compared_handshake_median_ms']:.0f} / {r['compared_tools_median_ms']:.0f} ms | |"
        )
        print(
            f"| compared checkout: first / second call, {CLIENT_PAUSE_S:g} s after the handshake | "
            f"{r['compared_first_call_median_ms']:.1f} / {r['compared_second_call_median_ms']:.1f} ms | |"
        )
    if args.startup_only:
        return
    r = anyio.run(measure, args.calls, args.starts)
    over = r["round_trip_median_ms"] - r["floor_median_ms"]
    print(
        f"| `execute_command` `echo hi` round trip, median / p95 | {r['round_trip_median_ms']:.2f} / "
        f"{r['round_trip_p95_ms']:.2f} ms | |"
    )
    print(
        f"| floor: `bash -c 'echo hi'` spawned directly, median / p95 | {r['floor_median_ms']:.2f} / "
        f"{r['floor_p95_ms']:.2f} ms | |"
    )
    verdict = "met" if over <= TARGET_ROUND_TRIP_OVER_FLOOR_MS else "MISSED"
    target = TARGET_ROUND_TRIP_OVER_FLOOR_MS
    print(f"| round trip over the floor, median | {over:.2f} ms | ≤ {target:g} ms ({verdict}) |")
    verdict = "met" if r["rss_growth_mb"] <= TARGET_MEMORY_GROWTH_MB else "MISSED"
    print(
        f"| server RSS growth while a command prints 50 MB (base64 of 50 MB: 67 MB) | "
        f"{r['rss_growth_mb']:.1f} MB (baseline {r['rss_baseline_mb']:.0f} MB, took {r['print_50mb_s']:.1f} s) | "
        f"< {TARGET_MEMORY_GROWTH_MB:g} MB ({verdict}) |"
    )


if __name__ == "__main__":
    main()
