"""Where a tray-bound call's time goes: time stamps at each hop of `echo hi` through a real tray.

Run (Linux, bwrap installed): python bench/tray_hops_bench.py [--calls 200] [--compare-root DIR]

A server refuses a tray started under a profiler (issue 21's look-alike check), so this starts a real
tray (`python -m app tray`, pystray's dummy backend) and a `serve` bound to it with
COWORK_TERMINAL_HOP_TIMES=1 (app/core/hop_times.py): each process appends a monotonic time
stamp at each hop to hop-times.txt in the data folder. The calls are made one after another; for each,
the marks between the client's call and its result are put in time order, and the table gives the
median of each step from one mark to the next (with how many calls had it), then the whole call.
`--compare-root` does the same with another checkout first (one with the same marks).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import anyio
from mcp import Client

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from serve_bench import percentile  # noqa: E402 (bench/ is this script's folder)
from tray_call_bench import server, start_tray  # noqa: E402

from app.core.hop_times import HOPS_ENV, HOPS_FILE  # noqa: E402
from app.core.paths import HOME_ENV, AppPaths  # noqa: E402


async def timed_calls(home: Path, root: Path, count: int, headless: bool, gap_s: float = 0.0) -> list[tuple[int, int]]:
    """`count` calls of `echo hi` through a tray-bound server: each call's (start, end) in monotonic ns."""
    params = server(home, root, *(["--headless"] if headless else []))
    assert params.env is not None
    params.env[HOPS_ENV] = "1"
    windows = []
    async with Client(params, mode="legacy") as client:
        for _ in range(3):  # the runner, the classifier and the spare container warm up
            await client.call_tool("execute_command", {"command": "echo hi"})
        for _ in range(count):
            await anyio.sleep(gap_s)  # the model's turn between two calls (--gap-ms)
            began = time.monotonic_ns()
            said = await client.call_tool("execute_command", {"command": "echo hi"})
            windows.append((began, time.monotonic_ns()))
            assert not said.is_error, said
    return windows


def offsets(marks: list[tuple[int, str]], windows: list[tuple[int, int]]) -> dict[str, list[float]]:
    """For each hop, ms from the client's call to the hop's first mark in that call; `whole call` too."""
    found: dict[str, list[float]] = defaultdict(list)
    marks.sort()
    at = 0
    for began, ended in windows:
        while at < len(marks) and marks[at][0] < began:
            at += 1
        seen: set[str] = set()
        while at < len(marks) and marks[at][0] <= ended:
            stamp, hop = marks[at]
            at += 1
            if hop not in seen:
                seen.add(hop)
                found[hop].append((stamp - began) / 1e6)
        found["client: call"].append(0.0)
        found["client: result"].append((ended - began) / 1e6)
    return found


# The steps the breakdown is made of: (what, from hop, to hop), each a median over the calls.
STEPS = [
    ("headless: client → the tool (stdio, the SDK, the argument gate, arguments)", "client: call", "tool: in"),
    ("client → serve's forwarder (stdio, the SDK's server, the argument gate)", "client: call", "serve: call in"),
    ("serve → tray: `call` sent, read by the hub", "serve: call in", "hub: call in"),
    ("hub → command host's loop (a thread hop)", "hub: call in", "host: call on its loop"),
    ("host → the runner → the tool (the SDK's server in the tray)", "host: call on its loop", "tool: in"),
    ("the tool until admission's checks are done (request, pause, bash)", "tool: in", "admission: checked"),
    ("the classifier", "admission: checked", "admission: classified"),
    ("classified → `begin` asked (protected set, approval mode)", "admission: classified", "link: begin request"),
    ("`begin` row: runner's link → hub → journal → ack", "link: begin request", "link: begin acked"),
    ("row written → command starts", "link: begin acked", "exec: start"),
    ("the command (`echo hi` in the spare container)", "exec: start", "exec: end"),
    ("command ended → the tool returns (finish row posted, result made)", "exec: end", "tool: out"),
    ("the tool → the runner (the SDK's server makes the result)", "tool: out", "runner: client result"),
    ("the runner → the result pushed", "runner: client result", "host: result pushed"),
    ("tray → serve: `call_result` written, read by serve's link", "host: result pushed", "serve: result read"),
    ("serve's link thread → its loop → the client", "serve: result read", "client: result"),
    ("headless: the tool returns → the client has the result (the SDK)", "tool: out", "client: result"),
]


def steps(found: dict[str, list[float]]) -> list[tuple[str, float]]:
    """Each step's median: the difference of its two hops' offsets, call by call."""
    rows = []
    tray_bound = "serve: call in" in found
    for what, first, then in STEPS:
        if tray_bound and what.startswith("headless"):
            continue
        pairs = [b - a for a, b in zip(found.get(first, []), found.get(then, []), strict=False)]
        if pairs and len(found.get(first, [])) == len(found.get(then, [])):
            rows.append((what, statistics.median(pairs)))
    return rows


def run(root: Path, folder: Path, count: int, headless: bool, gap_s: float = 0.0) -> dict[str, list[float]]:
    home = folder / "home"
    tray = None if headless else start_tray(home, root, folder / "tray.log", extra={HOPS_ENV: "1"})
    try:
        windows = anyio.run(timed_calls, home, root, count, headless, gap_s)
    finally:
        if tray is not None:
            tray.terminate()
            tray.wait()
    data_dir = AppPaths.from_environment({HOME_ENV: str(home)}).data_dir
    marks = []
    for line in (data_dir / HOPS_FILE).read_text().splitlines():
        stamp, _pid, hop = line.split(" ", 2)
        marks.append((int(stamp), hop))
    return offsets(marks, windows)


def table(found: dict[str, list[float]]) -> None:
    print("| hop | ms after the client's call: median / p95 | calls |\n| --- | --- | --- |")
    order = sorted(found, key=lambda hop: statistics.median(found[hop]))
    for hop in order[1:]:
        values = found[hop]
        print(f"| {hop} | {statistics.median(values):.2f} / {percentile(values, 0.95):.2f} | {len(values)} |")
    print("\n| step | median ms |\n| --- | --- |")
    for what, median in steps(found):
        print(f"| {what} | {median:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--compare-root", type=Path, help="another checkout with the same marks, measured first")
    parser.add_argument("--headless", action="store_true", help="a headless server with no tray instead")
    parser.add_argument("--gap-ms", type=float, default=0.0, help="idle time before each call (0: back to back)")
    args = parser.parse_args()
    import os

    roots = ([("before", args.compare_root.resolve())] if args.compare_root else []) + [("now", ROOT)]
    load = os.getloadavg()[0]
    for tag, root in roots:
        with tempfile.TemporaryDirectory() as name:
            os.environ["HOME"] = name
            found = run(root, Path(name), args.calls, args.headless, args.gap_ms / 1000)
        print(f"\n{tag} ({root}), load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} now\n")
        table(found)


if __name__ == "__main__":
    main()
