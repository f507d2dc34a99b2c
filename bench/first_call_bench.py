"""Benchmark the first command of a tray's life against the next one, through a bound `serve`.

Run (Linux): python bench/first_call_bench.py [--rounds 7] [--idle 2] [--compare-root DIR]

Each round starts a fresh tray (pystray's dummy backend) and a `serve` bound to it, waits `--idle`
seconds after the handshake (Claude starts its servers well before the model's first tool call),
then times the first `echo hi` and the second. Then a second `serve` binds the same tray and its
first call is timed (a runner per server, the tray's modules already loaded). `--compare-root` runs
another checkout's tray and servers in turn with this one, round by round, so before and after are
measured in the same run. Medians are quoted.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tray_call_bench import server, start_tray  # noqa: E402 (bench/ is this script's folder)


async def timed_call(client: Client) -> float:
    began = time.perf_counter()
    said = await client.call_tool("execute_command", {"command": "echo hi"})
    assert not said.is_error and "hi" in str(said.content), said
    return (time.perf_counter() - began) * 1000


async def one_round(folder: Path, root: Path, idle_s: float) -> tuple[float, float, float]:
    home = folder / "home"
    tray = start_tray(home, root, folder / "tray.log")
    try:
        async with Client(server(home, root), mode="legacy") as client:
            await anyio.sleep(idle_s)
            first, second = await timed_call(client), await timed_call(client)
        async with Client(server(home, root), mode="legacy") as client:
            await anyio.sleep(idle_s)
            next_server = await timed_call(client)
    finally:
        tray.terminate()
        tray.wait()
    return first, second, next_server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--idle", type=float, default=2.0, help="seconds between the handshake and the first call")
    parser.add_argument("--compare-root", type=Path, help="another checkout (before), run in turn with this one")
    args = parser.parse_args()
    roots = {"this checkout": ROOT} | ({"before": args.compare_root.resolve()} if args.compare_root else {})
    figures: dict[str, list[tuple[float, float, float]]] = {name: [] for name in roots}
    with tempfile.TemporaryDirectory() as name:
        os.environ["HOME"] = name  # the trays' first look reads Claude's folders: an empty home
        load = os.getloadavg()[0]
        for number in range(args.rounds):
            for tag, root in roots.items():
                folder = Path(name) / f"{number}-{tag.replace(' ', '-')}"
                folder.mkdir()
                figures[tag].append(anyio.run(one_round, folder, root, args.idle))
    print(f"{platform.platform()}, Python {platform.python_version()}, {os.cpu_count()} cores, ", end="")
    print(f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end\n")
    print(f"| checkout (median of {args.rounds} fresh trays) | first call | second call | next server's first call |")
    print("| --- | --- | --- | --- |")
    for tag, rounds in figures.items():
        first, second, next_server = (statistics.median(column) for column in zip(*rounds, strict=True))
        print(f"| {tag} | {first:.0f} ms | {second:.1f} ms | {next_server:.0f} ms |")


if __name__ == "__main__":
    main()
