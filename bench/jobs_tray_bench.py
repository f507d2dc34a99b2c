"""What the job machinery (issue 22) costs through the tray, where commands run since issue 21: real
`serve` processes spoken to by the MCP SDK's client over stdio, one bound to a real tray (dummy
icon backend) and one `--headless` in another app home where no tray runs (a headless server binds
to a tray it finds), called in turn, the order switching each round.

Run (Linux or macOS with bash; the tray needs no display):
    python bench/jobs_tray_bench.py [--runs 200]

Measured, through the tray and headless:
- `execute_command {"command": "echo hi"}`: a short call, a job that ends within its call;
- the same with `background: true`, then `command_wait` for its result (two round trips);
- `command_wait` and `command_output` on a job that has ended (one round trip each).
bench/jobs_bench.py measures the machinery alone, in one process.
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
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import anyio  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from mcp_types import Implementation  # noqa: E402

from app.core.channel.client import current_tray_state  # noqa: E402
from app.core.commands.patience import PATIENCE_ENV  # noqa: E402
from app.core.paths import HOME_ENV, AppPaths  # noqa: E402

COWORK = "local-agent-mode-cowork-terminal"
WARM_UP = 20
TRAY_START_S = 30.0


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def child_env(home: Path, user: Path) -> dict[str, str]:
    """The app's home, and a user home of its own: a tray's first look rewrites Claude's entries and
    start-at-login that name another copy of the app, and this Python is not the user's app."""
    env = {k: v for k, v in os.environ.items() if k != PATIENCE_ENV}
    env.update({HOME_ENV: str(home), "HOME": str(user), "XDG_CONFIG_HOME": str(user / ".config")})
    env.update({"XDG_DATA_HOME": str(user / ".local/share"), "PYSTRAY_BACKEND": "dummy"})
    env.pop("DISPLAY", None)
    return env


def start_tray(home: Path, env: dict[str, str], log: Path) -> subprocess.Popen:
    out = open(log, "ab")  # noqa: SIM115 - the tray's log, closed with the process
    tray = subprocess.Popen([sys.executable, "-m", "app", "tray"], env=env, stdout=out, stderr=out)
    paths = AppPaths.from_environment({HOME_ENV: str(home)})
    deadline = time.monotonic() + TRAY_START_S
    while current_tray_state(paths) is None:
        if tray.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the tray did not start (its log: {log})")
        time.sleep(0.05)
    return tray


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    data = json.loads(result.content[0].text)
    if result.is_error:
        raise SystemExit(f"{tool} failed: {data}")
    return data


async def timed(work: Callable[[], Awaitable[dict[str, Any]]]) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    result = await work()
    return (time.perf_counter() - started) * 1000, result


async def one_round(client: Client) -> dict[str, float]:
    """Each measure once on `client`; milliseconds."""
    took: dict[str, float] = {}
    took["execute_command"], done = await timed(lambda: call(client, "execute_command", {"command": "echo hi"}))
    assert done["status"] == "finished" and done["stdout"] == "hi\n", done
    started = time.perf_counter()
    background = await call(client, "execute_command", {"command": "echo hi", "background": True})
    took["background"] = (time.perf_counter() - started) * 1000
    waited = await call(client, "command_wait", {"jobId": background["jobId"]})
    took["background + command_wait"] = (time.perf_counter() - started) * 1000
    assert waited["status"] == "finished" and waited["stdout"] == "hi\n", waited
    job = done["jobId"]
    took["command_wait (ended job)"], _ = await timed(lambda: call(client, "command_wait", {"jobId": job}))
    took["command_output (ended job)"], _ = await timed(lambda: call(client, "command_output", {"jobId": job}))
    return took


async def measure(env: dict[str, str], alone_env: dict[str, str], runs: int) -> dict[str, dict[str, list[float]]]:
    info = Implementation(name=COWORK, version="1.0.0")
    bound = StdioServerParameters(command=sys.executable, args=["-m", "app", "serve"], env=env)
    serve_headless = ["-m", "app", "serve", "--headless"]
    headless = StdioServerParameters(command=sys.executable, args=serve_headless, env=alone_env)
    figures: dict[str, dict[str, list[float]]] = {"tray": {}, "headless": {}}
    async with (
        Client(bound, mode="legacy", client_info=info) as through_tray,
        Client(headless, mode="legacy", client_info=info) as alone,
    ):
        for index in range(runs + WARM_UP):
            order = [("tray", through_tray), ("headless", alone)]
            for way, client in order if index % 2 else reversed(order):
                took = await one_round(client)
                if index >= WARM_UP:
                    for name, ms in took.items():
                        figures[way].setdefault(name, []).append(ms)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        home, user = Path(folder) / "app", Path(folder) / "user"
        user.mkdir()
        env, alone_env = child_env(home, user), child_env(Path(folder) / "headless-app", user)
        load_before = os.getloadavg()[0]
        tray = start_tray(home, env, Path(folder) / "tray.log")
        try:
            figures = anyio.run(measure, env, alone_env, args.runs)
        finally:
            tray.terminate()
            tray.wait(10)
    print(f"{platform.system()} {platform.machine()}, Python {platform.python_version()}, n={args.runs} each")
    print(f"load average (1 min) before / after: {load_before:.1f} / {os.getloadavg()[0]:.1f}")
    print("| measure | through the tray: median / p95 | headless: median / p95 | tray − headless (medians) |")
    print("| --- | --- | --- | --- |")
    for name, tray_ms in figures["tray"].items():
        alone_ms = figures["headless"][name]
        gap = statistics.median(tray_ms) - statistics.median(alone_ms)
        print(
            f"| {name} | {statistics.median(tray_ms):.1f} / {percentile(tray_ms, 0.95):.1f} ms "
            f"| {statistics.median(alone_ms):.1f} / {percentile(alone_ms, 0.95):.1f} ms | {gap:+.1f} ms |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
