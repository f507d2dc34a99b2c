"""Benchmark what the OS container (issue 21) costs a call: `echo hi` through a headless `serve` with
the bwrap container and without it (bwrap made unavailable), against the SDK's minimal server.

Run (Linux, bwrap installed): python bench/container_bench.py [--calls 100] [--compare-root DIR]
All servers run at once and are called in turn, so a noisy machine weighs on each alike; medians
are quoted. `--compare-root` adds a server from another checkout (the code before a change), with
and without its container, so before and after are measured in one run. Also measured, interleaved:
where a container's time goes (bash alone, bwrap alone, the flags, the protected set's binds, each
init), and the one-off probe.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
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

from app.core.execution import container, landlock  # noqa: E402

TARGET_CONTAINER_OVER_BARE_MS = 4.0  # issue 21: a tray-bound call <= SDK-minimal + 4 ms; bwrap ~3 ms here


def server(home: str, contained: bool, root: Path = ROOT) -> StdioServerParameters:
    """A headless `serve` of the checkout at `root` (PYTHONPATH ahead of the editable install)."""
    env = {k: os.environ[k] for k in ("PATH", "HOME") if k in os.environ}
    env["COWORK_TERMINAL_HOME"] = home
    env["PYTHONPATH"] = str(root)
    if not contained:
        env[container.BWRAP_ENV] = str(Path(home) / "no-bwrap")
    return StdioServerParameters(command=sys.executable, args=["-m", "app", "serve", "--headless"], env=env, cwd=root)


async def calls(count: int, before: Path | None) -> dict[str, list[float]]:
    roots = {"contained": (True, ROOT), "bare": (False, ROOT)}
    if before is not None:
        roots |= {"before, contained": (True, before), "before, bare": (False, before)}
    times: dict[str, list[float]] = {name: [] for name in [*roots, "sdk"]}
    homes = [tempfile.TemporaryDirectory() for _ in roots]
    minimal = StdioServerParameters(command=sys.executable, args=["-c", MINIMAL_SDK_SERVER])
    try:
        async with contextlib.AsyncExitStack() as stack:
            clients = {}
            for (name, (contained, root)), home in zip(roots.items(), homes, strict=True):
                clients[name] = await stack.enter_async_context(
                    Client(server(home.name, contained, root), mode="legacy")
                )
            sdk = await stack.enter_async_context(Client(minimal, mode="legacy"))
            said = await clients["contained"].call_tool("execute_command", {"command": "readlink /proc/self/ns/pid"})
            assert said.content[0].text.count("pid:[") == 1 and os.readlink("/proc/self/ns/pid") not in str(said)
            for client in clients.values():  # the first call warms the probe, classifier and bash resolver
                await client.call_tool("execute_command", {"command": "echo hi"})
            await sdk.call_tool("noop", {})
            for _ in range(count):
                order = [*clients.items(), ("sdk", sdk)]
                random.shuffle(order)
                for name, client in order:
                    began = time.perf_counter()
                    if name == "sdk":
                        await client.call_tool("noop", {})
                    else:
                        await client.call_tool("execute_command", {"command": "echo hi"})
                    times[name].append(time.perf_counter() - began)
    finally:
        for home in homes:
            home.cleanup()
    return times


def spawns(count: int) -> dict[str, list[float]]:
    """Where a container's time goes: each line started as the executor starts it (Popen in a
    session of its own, waited), all interleaved in a random order each round."""
    argv = ["/bin/bash", "-c", "true"]
    with tempfile.TemporaryDirectory() as home:
        found = container.linux_container([home])
        bash_init = dataclasses.replace(found, init=())  # the init before Landlock (bwrap's --new-session)
        base = ["bwrap", "--dev-bind", "/", "/", "--unshare-pid", "--proc", "/proc"]
        lines = {
            "bash": argv,
            "bwrap, pid namespace": [*base, "--", *argv],
            "+ --die-with-parent --as-pid-1": [*base, "--die-with-parent", "--as-pid-1", "--", *argv],
            "+ --new-session": [*base, "--die-with-parent", "--as-pid-1", "--new-session", "--", *argv],
            f"+ the protected set ({len(found.mounts) // 3} binds)": [
                *base,
                "--die-with-parent",
                "--as-pid-1",
                *found.mounts,
                *found.hidden,
                "--",
                *argv,
            ],  # fmt: skip
            "whole container, bash init and --new-session (before)": bash_init.wrap(argv, 2),
            "whole container, Perl init with Landlock (after)": found.wrap(argv, 2),
        }
        times: dict[str, list[float]] = {name: [] for name in lines}
        for _ in range(count):
            order = list(lines.items())
            random.shuffle(order)
            for name, line in order:
                began = time.perf_counter()
                subprocess.run(
                    line,
                    check=True,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                    pass_fds=(container.lifeline(),),
                )
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
    parser.add_argument("--compare-root", type=Path, help="another checkout (before), called in turn")
    args = parser.parse_args()
    before = args.compare_root.resolve() if args.compare_root else None
    timed = anyio.run(calls, args.calls, before)
    spawned = spawns(args.calls)
    probed = probe_time(5)
    scoping = landlock.plan(sys.platform, landlock.kernel_abi(), landlock.find_perl())
    print(f"{platform.platform()}, Python {platform.python_version()}, {os.cpu_count()} cores, ", end="")
    print(f"load average {os.getloadavg()[0]:.1f}; Landlock: {landlock.log_message(scoping)}\n")
    print("| what | median / p95 |\n| --- | --- |")
    for name, label in (
        ("contained", "`echo hi` through headless serve, in the container"),
        ("bare", "`echo hi` through headless serve, bwrap unavailable"),
        ("before, contained", f"before ({before}): in the container"),
        ("before, bare", "before: bwrap unavailable"),
        ("sdk", "SDK-minimal server, a no-op tool"),
    ):
        if timed.get(name):
            print(line(label, timed[name]))
    for name, seconds in spawned.items():
        print(line(f"`bash -c true`: {name}", seconds))
    print(line("probe at first command (prepare + `true` in the container)", probed))
    median = {name: statistics.median(values) * 1000 for name, values in timed.items() if values}
    extra = median["contained"] - median["bare"]
    verdict = "met" if extra <= TARGET_CONTAINER_OVER_BARE_MS else "MISSED"
    print(f"\nThe container adds {extra:.1f} ms per call (target <= {TARGET_CONTAINER_OVER_BARE_MS:g} ms: {verdict}).")
    if "before, contained" in median:
        was = median["before, contained"] - median["before, bare"]
        print(f"Before: it added {was:.1f} ms; in the container, after / before = ", end="")
        print(f"{median['contained'] / median['before, contained']:.2f}.")
    print(f"Over the SDK-minimal server: contained +{median['contained'] - median['sdk']:.1f} ms, ", end="")
    print(f"bare +{median['bare'] - median['sdk']:.1f} ms.")


if __name__ == "__main__":
    main()
