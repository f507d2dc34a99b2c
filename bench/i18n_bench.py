"""Benchmark what translation costs a process: loading a catalog, and `cowork-terminal --help`.

Run: python bench/i18n_bench.py [--runs 20]
Prints a markdown table for docs/benchmarks.md. All figures from one run, medians quoted.
Loading: the .po compiled in memory (a source checkout) against the compiled .mo a build ships.
Start-up: `python -m app --help` (builds every subcommand's help) in English and in Russian.
"""

from __future__ import annotations

import argparse
import gettext
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.core import i18n  # noqa: E402
from app.core.i18n.catalog import compile_mo, parse_po  # noqa: E402


def median_ms(action, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    po = i18n.LOCALE_DIR / "ru" / "LC_MESSAGES" / f"{i18n.DOMAIN}.po"
    mo_bytes = compile_mo(parse_po(po.read_text(encoding="utf-8")))
    from_po = median_ms(lambda: gettext.GNUTranslations(io.BytesIO(compile_mo(parse_po(po.read_text("utf-8"))))), runs)
    from_mo = median_ms(lambda: gettext.GNUTranslations(io.BytesIO(mo_bytes)), runs)
    entries = sum(1 for e in parse_po(po.read_text(encoding="utf-8")) if e.msgid)

    def cli(lang: str) -> None:
        with tempfile.TemporaryDirectory() as home:
            env = {k: v for k, v in os.environ.items() if k not in ("LANGUAGE", "LC_ALL", "LC_MESSAGES")}
            env.update(LANG=lang, COWORK_TERMINAL_HOME=home)
            subprocess.run([sys.executable, "-m", "app", "--help"], env=env, cwd=ROOT, capture_output=True, check=True)

    english = median_ms(lambda: cli("C.UTF-8"), runs)
    russian = median_ms(lambda: cli("ru_RU.UTF-8"), runs)
    print(f"| measure (median of {runs}) | figure |")
    print("| --- | --- |")
    print(f"| Russian catalog ({entries} texts): .po parsed and compiled in memory | {from_po:.2f} ms |")
    print(f"| the same catalog from compiled .mo bytes | {from_mo:.2f} ms |")
    print(f"| `python -m app --help`, English | {english:.0f} ms |")
    print(f"| `python -m app --help`, Russian (source checkout: .po compiled in memory) | {russian:.0f} ms |")
    print(f"| difference | {russian - english:+.0f} ms ({russian / english:.2f}x) |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
