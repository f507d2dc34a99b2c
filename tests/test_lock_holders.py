"""Which lock holders on the journal the tray ends (core/authority/lock_holders.py): /proc/locks
read, and a process placed by its pid namespace and ancestry, with values (a /proc written here).
The real attack, a command's job holding SQLite's lock, is tests/test_journal_lock.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.core.authority.lock_holders import end_contained_holders, parse_locks, started_by_us_in_a_container

LOCKS = """1: FLOCK  ADVISORY  WRITE 8497 fe:00:2269485 0 EOF
2: POSIX  ADVISORY  READ 8813 fe:00:2557804 120 120
2: -> POSIX  ADVISORY  WRITE 9000 fe:00:2557804 120 120
3: OFDLCK ADVISORY  READ -1 08:1a:77 0 EOF
garbage
"""


def test_proc_locks_gives_each_holder_and_its_file_and_skips_waiters() -> None:
    assert parse_locks(LOCKS) == [(8497, (254, 0, 2269485)), (8813, (254, 0, 2557804)), (-1, (8, 26, 77))]


def fake_proc(tmp_path: Path, processes: dict[int, tuple[int, str]]) -> Path:
    """pid -> (parent, pid namespace)."""
    proc = tmp_path / "proc"
    for pid, (parent, namespace) in processes.items():
        (proc / str(pid) / "ns").mkdir(parents=True)
        (proc / str(pid) / "ns" / "pid").symlink_to(namespace)
        (proc / str(pid) / "stat").write_text(f"{pid} (a (name)) S {parent} {pid} {pid} 0")
    return proc


def test_only_a_process_in_a_container_the_tray_started_is_ours_to_end(tmp_path: Path) -> None:
    host, box, other = "pid:[1]", "pid:[2]", "pid:[3]"
    proc = fake_proc(
        tmp_path,
        {
            100: (1, host),  # the tray
            200: (100, host),  # bwrap, its child
            201: (200, box),  # the container's init
            202: (1, box),  # in a container's namespace, but not below the tray: not ours
            203: (201, box),  # a command's job
            300: (100, host),  # the log window: the tray's child, in its namespace
            400: (1, other),  # a Flatpak program of the user's, another namespace
            500: (999, box),  # its parent gone
        },
    )
    assert started_by_us_in_a_container(203, 100, proc)
    assert started_by_us_in_a_container(201, 100, proc)
    assert not started_by_us_in_a_container(300, 100, proc), "the tray's own window"
    assert not started_by_us_in_a_container(400, 100, proc), "the user's own sandboxed program"
    assert not started_by_us_in_a_container(202, 100, proc) and not started_by_us_in_a_container(500, 100, proc)
    assert not started_by_us_in_a_container(100, 100, proc)


@pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("bwrap") is None, reason="bwrap (Linux)")
def test_a_lock_held_from_a_container_this_process_started_is_ended_and_one_held_outside_is_not(
    tmp_path: Path,
) -> None:
    """With real processes: a shared lock on the file taken in a bwrap container of this process
    (as the tray's) is ended; the same lock taken by a program of the user's is left alone."""
    journal = tmp_path / "journal.sqlite3"
    journal.write_bytes(b"")
    lock = ["flock", "-s", str(journal), "sleep", "60"]
    boxed = subprocess.Popen(["bwrap", "--unshare-pid", "--die-with-parent", "--dev-bind", "/", "/", *lock])
    users = subprocess.Popen(lock, start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            holders = {pid for pid, _file in parse_locks(Path("/proc/locks").read_text())}
            in_box = holders & set(_descendants(boxed.pid))
            if in_box and users.pid in holders:
                break
            time.sleep(0.05)
        assert end_contained_holders([journal], os.getpid()) == sorted(in_box)
        assert boxed.wait(10) != 0  # its flock ended, bwrap's own init ends with it
        assert users.poll() is None, "the user's own lock holder was ended"
        assert end_contained_holders([tmp_path / "not-locked"], os.getpid()) == []
    finally:
        for process in (boxed, users):
            process.kill()
            process.wait(10)


def _descendants(pid: int) -> list[int]:
    """`pid` and every process below it, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        found.append(todo.pop())
        todo += children.get(found[-1], [])
    return found
