"""Benchmark the tray's look at every page of the journal as it starts, against the cheap look a
server takes before each command's row (opening.damage_on_disk with and without `every_page`).

Run: python bench/journal_check_bench.py [--sizes 1000 10000 100000] [--rounds 7]

Each size is a journal of that many finished commands with previews of 900 characters (near what a
command with output keeps), written into a temporary folder. The file is in the page cache: a tray
started at login may read it from disk first. Medians are quoted.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.core.journal.opening import damage_on_disk  # noqa: E402
from app.core.journal.store import Journal  # noqa: E402
from app.core.paths import HOME_ENV, AppPaths  # noqa: E402


def journal_of(folder: Path, commands: int) -> AppPaths:
    paths = AppPaths.from_environment({HOME_ENV: str(folder)})
    with Journal.open(paths) as journal:
        db = journal._db
        db.execute("BEGIN")
        db.executemany(
            "INSERT INTO commands(command, cwd, status, created_at, stdout_preview) VALUES (?, ?, 'finished', ?, ?)",
            ((f"echo {n}", "/tmp", time.time(), "y" * 900) for n in range(commands)),
        )
        db.execute("COMMIT")
    return paths


def median_ms(journal: Path, rounds: int, *, every_page: bool) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        assert damage_on_disk(journal, every_page=every_page) is None
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    print(f"{platform.platform()}, Python {platform.python_version()}, medians of {args.rounds}")
    print("| commands | file | every page (tray start) | cheap look (before each row) |")
    print("| --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as temporary:
        for size in args.sizes:
            paths = journal_of(Path(temporary) / str(size), size)
            whole = median_ms(paths.journal, args.rounds, every_page=True)
            cheap = median_ms(paths.journal, args.rounds, every_page=False)
            megabytes = paths.journal.stat().st_size / 1e6
            print(f"| {size:,} | {megabytes:.1f} MB | {whole:.1f} ms | {cheap:.2f} ms |")


if __name__ == "__main__":
    main()
