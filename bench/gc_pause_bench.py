"""Benchmark the garbage collector's full collections in a headless `serve` during its calls.

Run: python bench/gc_pause_bench.py [--calls 1000] [--compare-root DIR]

A `serve --headless` is started through a small wrapper (this script, with `--wrapped`) that runs
the app's own entry point with a `gc.callbacks` hook: each full collection (generation 2) is noted
with its duration, and the list is written to a file as the server exits. After its first command
and a few idle seconds (its start-up work is done in a worker thread), the server is called
`--calls` times back to back with `echo hi`. What is reported: the full collections that fell among
the calls, how long each held the process, and the calls' median, p99 and longest. `--compare-root`
does the same with another checkout first (the code before a change).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IDLE_S = 4.0  # after the first call: the start-up work (classifier, retention, heap.settle) is done


def wrapped() -> None:
    """Inside the server's process: note each full collection, then run `serve --headless`."""
    import atexit
    import runpy

    found: list[list[float]] = []
    start = [0.0, 0.0]

    def noted(phase: str, info: dict) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            start[:] = [time.time(), time.perf_counter()]
        else:  # when it began (the wall clock, which the client's process shares), and how long it took
            found.append([start[0], (time.perf_counter() - start[1]) * 1000])

    gc.callbacks.append(noted)
    atexit.register(lambda: Path(os.environ["GC_BENCH_OUT"]).write_text(json.dumps(found)))
    sys.argv = ["app", "serve", "--headless"]
    runpy.run_module("app", run_name="__main__", alter_sys=True)


async def measure(root: Path, count: int) -> tuple[list[float], list[list[float]]]:
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "collections.json"
        env = {
            "PATH": os.environ["PATH"],
            "HOME": folder,
            "COWORK_TERMINAL_HOME": f"{folder}/home",
            "PYTHONPATH": str(root),
            "GC_BENCH_OUT": str(out),
        }
        params = StdioServerParameters(
            command=sys.executable, args=[str(Path(__file__).resolve()), "--wrapped"], env=env, cwd=str(root)
        )
        times: list[float] = []
        async with Client(params, mode="legacy") as client:
            await client.call_tool("execute_command", {"command": "echo hi"})
            await anyio.sleep(IDLE_S)
            window = [time.time()]
            for _ in range(count):
                began = time.perf_counter()
                said = await client.call_tool("execute_command", {"command": "echo hi"})
                times.append((time.perf_counter() - began) * 1000)
                assert not said.is_error, said
            window.append(time.time())
        collections = json.loads(out.read_text())
        return times, [c for c in collections if window[0] <= c[0] <= window[1]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--compare-root", type=Path)
    parser.add_argument("--wrapped", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.wrapped:
        wrapped()
        return
    import anyio

    roots = ([("before", args.compare_root.resolve())] if args.compare_root else []) + [("now", ROOT)]
    print(f"{platform.platform()}, Python {platform.python_version()}, {os.cpu_count()} cores")
    print("\n| checkout | full collections among the calls (ms each) | median / p99 / longest call | load |")
    print("| --- | --- | --- | --- |")
    for tag, root in roots:
        load = os.getloadavg()[0]
        times, among = anyio.run(measure, root, args.calls)
        ordered = sorted(times)
        p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
        held = ", ".join(f"{ms:.0f}" for _at, ms in among) or "none"
        print(
            f"| {tag} | {len(among)}: {held} | {statistics.median(times):.1f} / {p99:.1f} / {ordered[-1]:.1f} ms "
            f"| {load:.1f} to {os.getloadavg()[0]:.1f} |"
        )


if __name__ == "__main__":
    main()
