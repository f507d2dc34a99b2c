"""Benchmark the promises the issues make in seconds: how fast the user's controls take effect.

Run (Linux; a private Xvfb is started when DISPLAY is unset):
    python bench/latency_bench.py [--runs 20]

Measured, each against the issue's target, with medians quoted:
- a pause asked of the tray (CLI, log window) reaching the tray icon and tooltip;
- the log window showing a new command, a finished one, and a pause set elsewhere;
How fast Stop and pause end a running command tree, before and after the tray channel, is measured
in bench/channel_bench.py.
The tests check that each of these happens; how fast is measured here, where a loaded machine
cannot turn a figure into a failing build.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from serve_bench import percentile  # noqa: E402 (bench/ is this script's folder)

from app.core import data_folder, liveness  # noqa: E402
from app.core.journal.store import Journal, Outcome, Status  # noqa: E402
from app.core.paths import HOME_ENV, AppPaths  # noqa: E402

FOLLOW_TARGET_S = 0.5  # icon, tooltip and window rows follow the journal "within half a second"
GIVE_UP_S = 10.0


def row(label: str, seconds: list[float], target_s: float) -> str:
    median = statistics.median(seconds)
    verdict = "met" if median <= target_s else "MISSED"
    figures = " / ".join(f"{value * 1000:.1f}" for value in (median, percentile(seconds, 0.95), max(seconds)))
    return f"| {label} (n={len(seconds)}) | {figures} ms | < {target_s * 1000:g} ms ({verdict}) |"


def wait_until(condition: Callable[[], bool], step: Callable[[], None] = lambda: time.sleep(0.001)) -> float:
    """Seconds until `condition` holds, calling `step` in between."""
    started = time.perf_counter()
    while not condition():
        if time.perf_counter() - started > GIVE_UP_S:
            raise SystemExit(f"gave up after {GIVE_UP_S:.0f} s")
        step()
    return time.perf_counter() - started


def tray_follows(paths: AppPaths, runs: int) -> list[str]:
    os.environ["PYSTRAY_BACKEND"] = "dummy"  # the icon is data; no panel needed to read its state
    # A user home of its own: the tray's first look points start at login and Claude's entries at
    # the running copy, and the bench's Python is not the user's app.
    user = paths.data_dir / "bench-user"
    os.environ.update(HOME=str(user), XDG_CONFIG_HOME=str(user / ".config"), XDG_DATA_HOME=str(user / "share"))
    from app.ui.tray import menu
    from app.ui.tray import platforms as tray_platform
    from app.ui.tray.app import TrayApp

    app = TrayApp(paths, liveness.try_hold(paths.tray_lock), tray_platform.load_pystray())
    app.start()
    app.settle()
    times = []
    for index in range(runs):
        paused = index % 2 == 0
        app.hub.set_paused(paused)  # what `cowork-terminal pause` or the log window asks of the tray
        times.append(
            wait_until(
                lambda paused=paused: (
                    (app.icon_state == menu.PAUSED) is paused and ("Paused" in app.icon.title) is paused
                )
            )
        )
        time.sleep(0.05)
    app.shutdown()
    return [row("a pause set elsewhere reaches the tray icon and tooltip", times, FOLLOW_TARGET_S)]


def window_follows(paths: AppPaths, runs: int) -> list[str]:
    import tkinter as tk

    from app.ui.windows.log_window import PAUSED_TITLE, LogWindow

    root = tk.Tk(className="cowork-terminal-bench")
    root.geometry("1180x760+0+0")
    window = LogWindow(root, Journal.open(paths))

    def pump() -> None:
        root.update()
        time.sleep(0.001)

    def status_of(command_id: int) -> str | None:
        iid = str(command_id)
        return window.tree.set(iid, "status") if window.tree.exists(iid) else None

    appeared, finished, paused = [], [], []
    with Journal(paths) as journal:
        wait_until(lambda: bool(root.winfo_viewable()), pump)
        for index in range(runs):
            command_id = journal.begin_command(command=f"make test  # {index}", cwd="/srv")
            appeared.append(wait_until(lambda i=command_id: status_of(i) is not None, pump))
            journal.finish_command(command_id, Outcome(status=Status.FINISHED, exit_code=0, duration_ms=5.0))
            finished.append(wait_until(lambda i=command_id: status_of(i) == "✓ Finished", pump))
            want = index % 2 == 0
            journal.set_paused(want)
            paused.append(wait_until(lambda w=want: (window.state_label.cget("text") == PAUSED_TITLE) is w, pump))
        journal.set_paused(False)
    window.close()
    return [
        row("log window shows a new command", appeared, FOLLOW_TARGET_S),
        row("log window shows a command finished", finished, FOLLOW_TARGET_S),
        row("log window follows a pause set elsewhere", paused, FOLLOW_TARGET_S),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    xvfb = None
    if not os.environ.get("DISPLAY"):
        from log_window_open import start_xvfb

        xvfb, os.environ["DISPLAY"] = start_xvfb()

    with tempfile.TemporaryDirectory() as folder:
        os.environ[HOME_ENV] = str(Path(folder) / "app-home")
        # The tray's first look reads Claude's config folders: point it at an empty home.
        os.environ["HOME"] = os.environ["XDG_CONFIG_HOME"] = folder
        paths = data_folder.ensure(AppPaths.from_environment())
        try:
            lines = tray_follows(paths, args.runs)
            lines += window_follows(paths, args.runs)
        finally:
            if xvfb is not None:
                xvfb.terminate()
    print(f"Machine: {platform.platform()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"Command: python bench/latency_bench.py --runs {args.runs}\n")
    print("| measure | median / p95 / max | target (median) |")
    print("| --- | --- | --- |")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
