"""Benchmark long output: what a call that prints 5 MB or 50 MB sends back, and what it costs the server.

Run: python bench/output_bench.py [--root CHECKOUT ...] [--runs 3]
Each --root is a checkout of this repository (default: this one); its `app` is served by this
interpreter with that folder as the working directory, so `main` and a branch are measured in one
run on the same machine. For each output size it starts a fresh server, notes its resident memory,
runs the command, and reads the server's peak resident memory (VmHWM, Linux) before closing it.
"Reply" is the JSON of the tool result as the client received it (structured content and the text
block: what travels in the JSON-RPC response), and "text block" what a client that reads only
text puts in front of the model. Prints a markdown table for docs/benchmarks.md; medians are quoted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent
SIZES_MB = (5, 50)


def command_for(size_mb: int) -> str:
    """Text lines like a chatty build's log: base64 of random bytes, 76 characters a line."""
    raw_bytes = size_mb * 1_000_000 * 3 // 4  # base64 turns 3 bytes into 4 characters
    return f"head -c {raw_bytes} /dev/urandom | base64 -w 76"


def params(root: Path, home: str) -> StdioServerParameters:
    env = {k: os.environ[k] for k in ("PATH", "HOME") if k in os.environ}
    env["COWORK_TERMINAL_HOME"] = home
    return StdioServerParameters(command=sys.executable, args=["-m", "app", "serve", "--headless"], env=env, cwd=root)


def memory_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    return 0


async def one_run(root: Path, size_mb: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as home:
        async with Client(params(root, home), mode="legacy") as client:
            reply = await client.call_tool("execute_command", {"command": "echo $PPID"})
            server_pid = int(json.loads(reply.content[0].text)["stdout"])
            baseline = memory_kb(server_pid, "VmRSS")
            began = time.perf_counter()
            result = await client.call_tool("execute_command", {"command": command_for(size_mb), "timeout": 120_000})
            took = time.perf_counter() - began
            peak = memory_kb(server_pid, "VmHWM")
        data = json.loads(result.content[0].text)
        return {
            "reply_bytes": len(result.model_dump_json(by_alias=True, exclude_none=True).encode()),
            "text_bytes": len(result.content[0].text.encode()),
            "output_chars": len(data["stdout"]) + len(data["stderr"]),
            "baseline_mb": baseline / 1024,
            "peak_mb": peak / 1024,
            "seconds": took,
            "output_file": 1.0 if data.get("outputFile") else 0.0,
        }


async def measure(roots: list[Path], runs: int) -> dict[tuple[str, int], dict[str, float]]:
    results: dict[tuple[str, int], dict[str, float]] = {}
    for size_mb in SIZES_MB:
        samples: dict[Path, list[dict[str, float]]] = {root: [] for root in roots}
        for _ in range(runs):  # interleaved, so each checkout sees the same machine
            for root in roots:
                samples[root].append(await one_run(root, size_mb))
        for root in roots:
            results[(str(root), size_mb)] = {
                key: statistics.median(s[key] for s in samples[root]) for key in samples[root][0]
            }
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", action="append", type=Path, help="a checkout to measure (repeatable)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    roots = [r.resolve() for r in (args.root or [ROOT])]
    results = anyio.run(measure, roots, args.runs)
    print(f"Machine: {platform.platform()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"Command: python bench/output_bench.py {' '.join(f'--root {r}' for r in roots)} --runs {args.runs}\n")
    print(
        "| checkout | output | reply (JSON-RPC result) | text block | output characters | outputFile | "
        "server RSS before / peak | call took |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for (root, size_mb), r in results.items():
        print(
            f"| {Path(root).name} | {size_mb} MB | {r['reply_bytes'] / 1000:,.0f} kB "
            f"| {r['text_bytes'] / 1000:,.0f} kB | {r['output_chars']:,.0f} "
            f"| {'yes' if r['output_file'] else 'no'} | "
            f"{r['baseline_mb']:.0f} / {r['peak_mb']:.0f} MB | {r['seconds']:.2f} s |"
        )
    if len(roots) == 2:
        for size_mb in SIZES_MB:
            before, after = results[(str(roots[0]), size_mb)], results[(str(roots[1]), size_mb)]
            print(
                f"\n{size_mb} MB, {Path(roots[0]).name} → {Path(roots[1]).name}: reply "
                f"{before['reply_bytes'] / after['reply_bytes']:.0f}x smaller; server peak RSS "
                f"{before['peak_mb']:.0f} → {after['peak_mb']:.0f} MB"
            )


if __name__ == "__main__":
    main()
