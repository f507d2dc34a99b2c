"""Processes left outside a command's group are found by the mark in their environment and ended."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core import liveness
from app.core.execution import orphans, process_marks
from app.core.journal.store import Journal, Outcome, Status
from app.core.paths import AppPaths


def test_marks_are_read_from_a_proc_tree_and_anything_unreadable_is_skipped(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    for pid, environ in (
        ("101", b"A=1\0COWORK_TERMINAL_RUN=tag:key:5\0B=2\0"),
        ("102", b"A=1\0"),
        ("103", b"COWORK_TERMINAL_RUN_NOT=x\0"),
        ("104", b""),
    ):
        (proc / pid).mkdir(parents=True)
        (proc / pid / "environ").write_bytes(environ)
    (proc / "105").mkdir()  # gone, or another user's: no readable environ
    (proc / "self").mkdir()
    assert process_marks.marked_processes(proc) == {101: "tag:key:5"}
    assert process_marks.marked_processes(tmp_path / "no-proc-here") == {}, "macOS and Windows have no /proc"


def test_marks_are_scoped_to_the_app_home(tmp_path: Path) -> None:
    one = AppPaths(data_dir=tmp_path / "one", log_dir=tmp_path / "one" / "logs")
    two = AppPaths(data_dir=tmp_path / "two", log_dir=tmp_path / "two" / "logs")
    assert orphans.server_mark(one, "abc") != orphans.server_mark(two, "abc")
    assert orphans.server_mark(one, "abc").endswith(":abc")


LINUX_ONLY = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="marks are read from /proc")


@pytest.fixture
def spawn() -> Iterator:
    started: list[subprocess.Popen] = []

    def start(mark: str) -> subprocess.Popen:
        env = {**os.environ, process_marks.MARK_ENV: mark}
        process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], env=env)
        started.append(process)
        deadline = time.monotonic() + 10
        while process.pid not in process_marks.marked_processes() and time.monotonic() < deadline:
            time.sleep(0.01)
        return process

    yield start
    for process in started:
        process.kill()
        process.wait()


def ended(process: subprocess.Popen) -> bool:
    try:
        process.wait(5)
    except subprocess.TimeoutExpired:
        return False
    return True


@LINUX_ONLY
def test_end_marked_ends_exactly_the_processes_with_that_mark(spawn) -> None:
    mine, other = spawn("t:k:1"), spawn("t:k:2")
    assert process_marks.end_marked("t:k:1") == [mine.pid]
    assert ended(mine) and other.poll() is None


@LINUX_ONLY
def test_end_orphans_ends_what_a_dead_server_was_running_and_nothing_else(spawn, paths: AppPaths) -> None:
    live_key_lock = liveness.try_hold(paths.server_lock("alive"))
    with Journal(paths) as journal:
        running = journal.begin_command(command="make", cwd="/")
        finished = journal.begin_command(command="npm run dev &", cwd="/")
        journal.finish_command(finished, Outcome(status=Status.FINISHED, exit_code=0))
    dead, alive = orphans.server_mark(paths, "dead"), orphans.server_mark(paths, "alive")
    other_home = AppPaths(data_dir=paths.data_dir / "elsewhere", log_dir=paths.log_dir)
    to_end = [spawn(f"{dead}:{running}"), spawn(f"{dead}:{orphans.SHELL}")]
    to_keep = [
        spawn(f"{dead}:{finished}"),
        spawn(f"{alive}:{running}"),
        spawn(f"{orphans.server_mark(other_home, 'dead')}:{running}"),
    ]
    try:
        with Journal(paths) as journal:
            killed = orphans.end_orphans(paths, journal.was_left_running)
    finally:
        live_key_lock.release()
    assert sorted(killed) == sorted(p.pid for p in to_end)
    assert all(ended(p) for p in to_end)
    assert all(p.poll() is None for p in to_keep)


@LINUX_ONLY
def test_a_process_never_ends_itself_or_what_started_it_even_when_they_carry_the_mark() -> None:
    inner = "from app.core.execution import process_marks; print(process_marks.end_marked('t:k:up'))"
    outer = (
        f"import subprocess, sys; print(subprocess.run([sys.executable, '-c', {inner!r}], text=True, "
        "capture_output=True).stdout.strip())"
    )
    result = subprocess.run(
        [sys.executable, "-c", outer],
        env={**os.environ, process_marks.MARK_ENV: "t:k:up"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (result.returncode, result.stdout.strip()) == (0, "[]")
