"""Benchmark the read-only tool's check inside bwrap: Perl's with its Landlock ruleset against bash's.

Run (Linux with bwrap and Perl): python bench/read_only_check_bench.py [--rounds 60]

Each round starts the read-only container (bwrap, as `read_only.bwrap_prefix` builds it, without the
seccomp filter) running `bash -c true` once with each check, in a random order, 20 ms apart; the
whole start-to-exit time is timed. Medians are quoted.
"""

from __future__ import annotations

import argparse
import platform
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.core.execution import read_only  # noqa: E402
from app.core.execution.container import lifeline  # noqa: E402
from app.core.execution.landlock import find_perl  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=60)
    args = parser.parse_args()
    bwrap, perl = shutil.which("bwrap"), find_perl()
    if bwrap is None or perl is None:
        sys.exit("needs bwrap and Perl")
    life = lifeline()
    checks = {
        "bash's check": read_only.bwrap_prefix(bwrap, "/tmp", None, lifeline_fd=life),
        "Perl's check with Landlock": read_only.bwrap_prefix(bwrap, "/tmp", None, lifeline_fd=life, perl=perl),
    }
    times: dict[str, list[float]] = {name: [] for name in checks}
    for _ in range(args.rounds):
        for name in random.sample(list(checks), len(checks)):
            started = time.perf_counter()
            subprocess.run([*checks[name], "/bin/bash", "-c", "true"], pass_fds=(life,), check=True)
            times[name].append((time.perf_counter() - started) * 1000)
            time.sleep(0.02)
    print(f"{platform.platform()}, Python {platform.python_version()}, medians of {args.rounds}")
    for name, measured in times.items():
        print(f"| {name} | {statistics.median(measured):.2f} ms |")


if __name__ == "__main__":
    main()
