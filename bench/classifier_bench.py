"""Benchmark the classifier on its corpus (tests/data/command_tiers.tsv): time per command.

Run: python bench/classifier_bench.py [--runs 15]
Each run classifies every corpus command once (warm: tree-sitter loaded, expressions compiled);
prints the median over runs of the whole pass and of one command, and the slowest command's median.
Then, where no container guards the protected set (Windows; Linux without bubblewrap), the second
reading every command that is not read-only gets (`names_protected`, running.py), with this
machine's protected set and with Windows' (home C:/Users/ana), in the same passes.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.core.classifier import Tier, classify, names_protected  # noqa: E402
from app.core.execution import container  # noqa: E402
from tests.test_classifier import PROTECTED, ROWS  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    commands = [command for command, _tier, _why in ROWS]
    classify("true", protected_paths=PROTECTED)  # warm up
    passes: list[float] = []
    each: dict[str, list[float]] = {c: [] for c in commands}
    linux = container.this_protected_set(PROTECTED)
    sets = {
        "this machine's": (*container.hold_members(linux), *linux.program[:1]),
        "Windows'": container.hold_members(container.protected_set("win32", {}, "C:/Users/ana", [], [], None)),
    }
    judged = [c for c in commands if classify(c, cwd="/home/ana/project").tier is not Tier.SAFE]
    unguarded: dict[str, list[float]] = {name: [] for name in sets}
    for _ in range(runs):
        start = time.perf_counter()
        for command in commands:
            t = time.perf_counter()
            classify(command, cwd="/home/ana/project", protected_paths=PROTECTED)
            each[command].append(time.perf_counter() - t)
        passes.append(time.perf_counter() - start)
        for name, members in sets.items():
            for command in judged:
                t = time.perf_counter()
                names_protected(command, members, cwd="/home/ana/project", bare=False)
                unguarded[name].append(time.perf_counter() - t)
    medians = sorted((statistics.median(v), c) for c, v in each.items())
    per_command = statistics.median(m for m, _ in medians)
    slowest, which = medians[-1]
    print(f"| corpus commands | {len(commands)} |")
    print(f"| whole corpus, median of {runs} passes | {statistics.median(passes) * 1000:.1f} ms |")
    print(f"| one command, median | {per_command * 1e6:.0f} µs |")
    print(f"| slowest command, median | {slowest * 1e6:.0f} µs ({which[:40]!r}) |")
    for name, times in unguarded.items():
        size = len(sets[name])
        print(f"| without a container: names_protected, {name} set ({size} paths), {len(judged)} commands | "
              f"{statistics.median(times) * 1e6:.0f} µs |")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
