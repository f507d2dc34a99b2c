"""Benchmark issue 21's targets in one run: a tray-bound `echo hi`, a headless one and the SDK's floor.

Run (Linux, bwrap installed): python bench/tray_call_bench.py [--calls 200] [--compare-root DIR] [--pause]

Started at once and called in a random order each round, so a noisy machine weighs on each alike:
- a `serve` bound to a real tray (`python -m app tray`, pystray's dummy backend): the tray runs the
  command, in its container;
- a headless `serve` with no tray: it runs the command itself, in the same container;
- the SDK's minimal server (a no-op tool): the floor every target is measured against.
`--compare-root` adds a tray, a bound and a headless server of another checkout (the code before a
change), so before and after are measured in the same run. Then, with every server idle for 2 s,
each one's RSS (`--rss-rounds N`: every server started N times, the median). `--pause`: 20
`sleep 30` running through the bound server, paused from the tray's channel; the time until the
last call returns. Medians are quoted.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
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

from app.core.channel.client import ask_tray, current_tray_state  # noqa: E402
from app.core.journal.store import Journal, Status  # noqa: E402
from app.core.paths import HOME_ENV, AppPaths  # noqa: E402

# The SDK's minimal server with a tool that runs the same command as `serve` does (bash, pipes, wait):
# the floor for a call that runs a command, where the no-op tool is the floor for a call at all.
SDK_ECHO_SERVER = """
import subprocess
from mcp.server import MCPServer
server = MCPServer(name="minimal-echo")
@server.tool()
def echo_hi() -> str:
    done = subprocess.run(["bash", "-c", "echo hi"], capture_output=True, start_new_session=True)
    return done.stdout.decode()
server.run("stdio")
"""
TRAY_OVER_SDK_MS = 4.0
HEADLESS_OVER_SDK_MS = 1.0
IDLE_RSS_OVER_SDK_MB = 6.0
PAUSE_TARGET_S = 1.0
IDLE_S = 2.0


def base_env(home: Path, root: Path) -> dict[str, str]:
    env = {k: os.environ[k] for k in ("PATH", "HOME", "LANG") if k in os.environ}
    env[HOME_ENV] = str(home)
    env["PYTHONPATH"] = str(root)  # ahead of the editable install: the checkout being measured
    return env


def server(home: Path, root: Path, *args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "app", "serve", *args], env=base_env(home, root), cwd=root
    )


def start_tray(home: Path, root: Path, log: Path, extra: dict[str, str] | None = None) -> subprocess.Popen:
    env = {**base_env(home, root), "PYSTRAY_BACKEND": "dummy", **(extra or {})}
    with open(log, "ab") as out:
        tray = subprocess.Popen([sys.executable, "-m", "app", "tray"], env=env, stdout=out, stderr=out, cwd=root)
    paths = AppPaths.from_environment({HOME_ENV: str(home)})
    deadline = time.monotonic() + 30
    while current_tray_state(paths) is None:
        if time.monotonic() > deadline or tray.poll() is not None:
            raise SystemExit(f"the tray did not start: see {log}")
        time.sleep(0.05)
    return tray


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def our_children() -> dict[int, str]:
    """This process's children (the servers the SDK's client started), by pid: their command line."""
    found = {}
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/children") as handle:
            for pid in handle.read().split():
                with contextlib.suppress(OSError), open(f"/proc/{pid}/cmdline", "rb") as cmd:
                    found[int(pid)] = cmd.read().replace(b"\0", b" ").decode()
    return found


async def calls(
    folder: Path, count: int, before: Path | None, gap_s: float = 0.0
) -> tuple[dict[str, list[float]], dict[str, float]]:
    roots = {"": ROOT} | ({"before, ": before} if before else {})
    trays: list[subprocess.Popen] = []
    try:
        for tag, root in roots.items():
            trays.append(start_tray(folder / f"{tag}tray", root, folder / f"{tag}tray.log"))
    except SystemExit:  # one did not start: the others must not outlive the bench
        for tray in trays:
            tray.terminate()
        raise
    minimal = folder / "minimal_server.py"
    minimal.write_text(MINIMAL_SDK_SERVER)
    echo_server = folder / "minimal_echo_server.py"
    echo_server.write_text(SDK_ECHO_SERVER)
    times: dict[str, list[float]] = {}
    rss: dict[str, float] = {}
    try:
        async with contextlib.AsyncExitStack() as stack:
            clients: dict[str, Client] = {}
            pids: dict[str, int] = {}

            async def enter(name: str, params: StdioServerParameters) -> Client:
                known = set(our_children())
                client = await stack.enter_async_context(Client(params, mode="legacy"))
                [pids[name]] = set(our_children()) - known
                return client

            for tag, root in roots.items():
                clients[f"{tag}tray-bound"] = await enter(f"{tag}tray-bound", server(folder / f"{tag}tray", root))
                clients[f"{tag}headless"] = await enter(
                    f"{tag}headless", server(folder / f"{tag}headless", root, "--headless")
                )
            sdk = await enter("sdk", StdioServerParameters(command=sys.executable, args=[str(minimal)]))
            sdk_echo = await enter("sdk, bash", StdioServerParameters(command=sys.executable, args=[str(echo_server)]))
            for name, client in clients.items():  # the first calls warm the probe, classifier, bash resolver
                for _ in range(3):
                    said = await client.call_tool("execute_command", {"command": "readlink /proc/self/ns/pid"})
                    assert not said.is_error and os.readlink("/proc/self/ns/pid") not in str(said), (name, said)
            await sdk.call_tool("noop", {})
            await sdk_echo.call_tool("echo_hi", {})
            times = {name: [] for name in [*clients, "sdk", "sdk, bash"]}
            for _ in range(count):
                await anyio.sleep(gap_s)  # the model's turn between two calls (--gap-ms)
                order = [*clients.items(), ("sdk", sdk), ("sdk, bash", sdk_echo)]
                random.shuffle(order)
                for name, client in order:
                    began = time.perf_counter()
                    if client is sdk:
                        said = await client.call_tool("noop", {})
                    elif client is sdk_echo:
                        said = await client.call_tool("echo_hi", {})
                    else:
                        said = await client.call_tool("execute_command", {"command": "echo hi"})
                    times[name].append((time.perf_counter() - began) * 1000)
                    assert not said.is_error, (name, said)
            await anyio.sleep(IDLE_S)
            rss = {name: rss_mb(pid) for name, pid in pids.items()}
    finally:
        for tray in trays:
            tray.terminate()
            tray.wait()
    return times, rss


async def pause_twenty(folder: Path) -> float:
    """20 `sleep 30` through a tray-bound server, paused from the tray's channel: seconds to the last result."""
    home = folder / "pause"
    paths = AppPaths.from_environment({HOME_ENV: str(home)})
    tray = start_tray(home, ROOT, folder / "pause-tray.log")
    ended: list[float] = []
    try:
        async with Client(server(home, ROOT), mode="legacy") as client, anyio.create_task_group() as group:

            async def one() -> None:
                said = await client.call_tool("execute_command", {"command": "sleep 30"})
                ended.append(time.perf_counter())
                assert json.loads(said.content[0].text)["exitCode"] is None, said

            for _ in range(20):
                group.start_soon(one)
            with Journal(paths) as journal:
                while sum(row.status is Status.RUNNING for row in journal.active_commands()) < 20:
                    await anyio.sleep(0.02)
            await anyio.sleep(0.3)  # every bash has started its sleep
            began = time.perf_counter()
            ask_tray(paths, "pause")
    finally:
        tray.terminate()
        tray.wait()
    return max(ended) - began


def line(label: str, values: list[float], target: str = "") -> str:
    figures = " / ".join(f"{value:.1f}" for value in (statistics.median(values), percentile(values, 0.95)))
    return f"| {label} (n={len(values)}) | {figures} ms | {target} |"


def verdict(value: float, limit: float) -> str:
    return "met" if value <= limit else "MISSED"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--compare-root", type=Path, help="another checkout (before), run in turn with this one")
    parser.add_argument("--pause", action="store_true", help="also pause 20 running commands")
    parser.add_argument(
        "--rss-rounds", type=int, default=1, help="start every server this many times for its idle RSS (medians)"
    )
    parser.add_argument(
        "--gap-ms",
        type=float,
        default=0.0,
        help="idle time before each round, as the model's turn between two calls (0: back to back)",
    )
    args = parser.parse_args()
    before = args.compare_root.resolve() if args.compare_root else None
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        os.environ["HOME"] = str(folder)  # the trays' first look reads Claude's folders: an empty home
        load = os.getloadavg()[0]
        times, rss = anyio.run(calls, folder, args.calls, before, args.gap_ms / 1000)
        rounds = {name: [value] for name, value in rss.items()}
        for again in range(1, args.rss_rounds):  # fresh servers (and trays), each read once idle
            (folder / f"round{again}").mkdir()
            for name, value in anyio.run(calls, folder / f"round{again}", 1, before)[1].items():
                rounds[name].append(value)
        rss = {name: statistics.median(values) for name, values in rounds.items()}
        paused = anyio.run(pause_twenty, folder) if args.pause else None
    median = {name: statistics.median(values) for name, values in times.items()}
    print(f"{platform.platform()}, Python {platform.python_version()}, {os.cpu_count()} cores, ", end="")
    print(f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end\n")
    print("| what | median / p95 | target |\n| --- | --- | --- |")
    sdk, sdk_bash = median["sdk"], median["sdk, bash"]
    for name, values in times.items():
        if name == "sdk":
            print(line("SDK-minimal server, a no-op tool", values))
            continue
        if name == "sdk, bash":
            print(line("SDK-minimal server, a tool running `bash -c 'echo hi'`", values))
            continue
        over, over_bash = median[name] - sdk, median[name] - sdk_bash
        limit = TRAY_OVER_SDK_MS if name.endswith("tray-bound") else HEADLESS_OVER_SDK_MS
        target = f"no-op +{over:.1f} ({verdict(over, limit)}), "
        target += f"bash +{over_bash:.1f} ms ({verdict(over_bash, limit)}); ≤ +{limit:g}"
        print(line(f"`echo hi`, {name}", values, target))
    for name, value in rss.items():
        over = value - rss.get("sdk", float("nan"))
        if name == "sdk, bash":
            continue
        target = "" if name == "sdk" else f"SDK +{over:.1f} MB; ≤ +{IDLE_RSS_OVER_SDK_MB:g} ({verdict(over, 6.0)})"
        print(f"| idle RSS, {name} (median of {args.rss_rounds}) | {value:.1f} MB | {target} |")
    if paused is not None:
        print(f"| 20 running commands, pause to the last result | {paused * 1000:.0f} ms | ", end="")
        print(f"≤ {PAUSE_TARGET_S * 1000:g} ms ({verdict(paused, PAUSE_TARGET_S)}) |")


if __name__ == "__main__":
    main()
