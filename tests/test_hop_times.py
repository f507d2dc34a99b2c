"""The bench's hop time stamps: written only when the bench asks, into the data folder, and nowhere else."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from app.core.hop_times import HOPS_ENV, HOPS_FILE
from app.core.paths import AppPaths

MARK_TWICE = "from app.core.hop_times import mark; mark('serve: call in'); mark('exec: end')"


def test_a_process_started_with_the_variable_writes_one_line_per_hop_into_its_data_folder(
    cli_env: dict[str, str], home: Path
) -> None:
    subprocess.run([sys.executable, "-c", MARK_TWICE], env={**cli_env, HOPS_ENV: "1"}, check=True, timeout=30)
    lines = (AppPaths.from_environment().data_dir / HOPS_FILE).read_text().splitlines()
    assert [line.split(" ", 2)[2] for line in lines] == ["serve: call in", "exec: end"]
    first, second = (int(line.split(" ", 1)[0]) for line in lines)
    assert 0 <= second - first < 10**9  # monotonic nanoseconds, in order


def test_a_process_started_without_the_variable_writes_nothing(cli_env: dict[str, str], home: Path) -> None:
    env = {key: value for key, value in cli_env.items() if key != HOPS_ENV}
    subprocess.run([sys.executable, "-c", MARK_TWICE], env=env, check=True, timeout=30)
    assert not (AppPaths.from_environment().data_dir / HOPS_FILE).exists()
