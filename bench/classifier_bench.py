"""Benchmark the classifier on its corpus (tests/data/command_tiers.tsv): time per command.

Run: python bench/classifier_bench.py [--runs 15]
Each run classifies every corpus command once (warm: tree-sitter loaded, expressions compiled);
prints the median over runs of the whole pass and of one command, and the slowest command's median.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.core.classifier import classify  # noqa: E402
from tests.test_classifier import PROTECTED, ROWS  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    commands = [command for command, _tier, _why in ROWS]
    classify("true", protected_paths=PROTECTED)  # warm up
    passes: list[float] = []
    each: dict[str, list[float]] = {c: [] for c in commands}
    for _ in range(runs):
        start = time.perf_counter()
        for command in commands:
            t = time.perf_counter()
            classify(command, cwd="/home/ana/project", protected_paths=PROTECTED)
            each[command].append(time.perf_counter() - t)
        passes.append(time.perf_counter() - start)
    medians = sorted((statistics.median(v), c) for c, v in each.items())
    per_command = statistics.median(m for m, _ in medians)
    slowest, which = medians[-1]
    print(f"| corpus commands | {len(commands)} |")
    print(f"| whole corpus, median of {runs} passes | {statistics.median(passes) * 1000:.1f} ms |")
    print(f"| one command, median | {per_command * 1e6:.0f} µs |")
    print(f"| slowest command, median | {slowest * 1e6:.0f} µs ({which[:40]!r}) |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
