"""A start-up file a command's job makes in the moment its container is ended (a pause, a Stop, the
app quitting) is moved aside like any other (docs/security.md, "A start-up file that did not exist").

The end of a container's status pipe, which the watching thread waits for, comes as its init's
descriptors close, and the kernel does that before it has killed the rest of the container: a
review, 2026-12-06, had a job's `ln` in that moment make a file the app kept (1 run in about 165 of
a job making it in a loop, under load). Here jobs delete and make the file as fast as they can when
their container is ended: before the fix the file was left after 2 to 8 rounds of 20.
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import anyio
import pytest

from app.core.execution import lone_files, spare, start_files
from app.core.journal.store import Journal
from app.core.paths import AppPaths
from app.core.policy.approval import ApprovalMode, set_approval_mode
from tests.in_process_server import serving
from tests.stdio_client import run

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("bwrap") is None, reason="bwrap (Linux)"
)

ROUNDS = 20
LOOPS = 2  # processes making the file
STOP_AFTER_MS = 600  # the time limit that stops a command: the job is ready well before
WAIT_S = 30.0

# The job: makes `~/.bash_profile` where it is missing until it made it a few times (moved aside
# each time), says so in `ready`, then, in LOOPS processes, deletes and makes it as fast as it can
# until it is killed. Its name is built at run time: no hold.
JOB = (
    "import os, signal, sys\n"
    "for polite in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):  # a Stop's polite signal\n"
    "    signal.signal(polite, signal.SIG_IGN)\n"
    "home, ready, loops = sys.argv[1], sys.argv[2], int(sys.argv[3])\n"
    "os.chdir(home)\n"
    "name, made = '.bash_' + 'profile', 0\n"
    "while made < 5:\n"
    "    try:\n"
    "        os.close(os.open(name, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))\n"
    "        made += 1\n"
    "    except OSError:\n"
    "        pass\n"
    "for _ in range(loops - 1):\n"
    "    if os.fork() == 0:\n"
    "        break\n"
    "open(ready, 'w').close()\n"
    "while True:\n"
    "    try:\n"
    "        os.unlink(name)\n"
    "    except OSError:\n"
    "        pass\n"
    "    try:\n"
    "        os.close(os.open(name, os.O_CREAT | os.O_WRONLY, 0o644))\n"
    "    except OSError:\n"
    "        pass\n"
)


def moved_copies(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + start_files.MOVED_MARK + "*"))


async def wait_for(check, timeout_s: float = WAIT_S) -> bool:  # noqa: ANN001 - any callable
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            return False
        await anyio.sleep(0.02)
    return True


def settled() -> bool:
    """No container of this process is counted any more but an idle spare's, and every event queued
    so far has been judged."""
    with start_files._lock:
        counted = [entry for entry in start_files._guarded.values() if entry.pipe not in start_files._awaiting]
    watcher = lone_files._watcher
    return not counted and (watcher is None or watcher.handled())


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME for the server in this process and its commands, without a `.bash_profile`."""
    folder = tmp_path / "user"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.fixture
def never_ask(paths: AppPaths, monkeypatch: pytest.MonkeyPatch) -> None:
    """No command waits for a person: the guard alone acts. Each command runs in a container started
    for it: a spare started while a job's file was there would bind it, and the next job fail."""
    with Journal.open(paths) as journal:
        set_approval_mode(journal, ApprovalMode.NEVER)
    monkeypatch.setattr(spare, "usable", lambda _found, _read_only_binds: False)


async def rounds(client, tmp_path: Path, user_home: Path, end) -> list[int]:  # noqa: ANN001 - the client, a callable
    """Run the job ROUNDS times, each in a container of its own that `end` ends once it loops; the
    rounds after which a `.bash_profile` was left."""
    target, script = user_home / ".bash_profile", tmp_path / "job.py"
    script.write_text(JOB)
    left: list[int] = []
    for round_ in range(ROUNDS):
        ready = tmp_path / f"ready-{round_}"
        job = f'{sys.executable} {script} "$HOME" {ready} {LOOPS} >/dev/null 2>&1 &'
        started = await end(client, f"{job} echo started", ready)
        assert started["stdout"].startswith("started\n"), started
        assert await wait_for(settled), "the container's end is seen"
        if target.exists():
            left.append(round_)
            target.unlink()
        for moved in moved_copies(target):
            moved.unlink()
    return left


@pytest.mark.anyio
async def test_a_job_making_a_start_up_file_as_a_pause_ends_its_container_leaves_none_behind(
    home: Path, paths: AppPaths, user_home: Path, never_ask: None, tmp_path: Path
) -> None:
    async def pause(client, command: str, ready: Path) -> dict:  # noqa: ANN001 - the client
        started = await run(client, {"command": command})
        assert await wait_for(ready.exists), "the job runs"
        ended = start_files.end_lingering()  # what a pause does to a container its command left
        time.sleep(0.1)  # as a pause's thread, holding nothing the watching thread needs meanwhile
        assert ended == 1, "the container the job lives in"
        return started

    async with serving(home) as client:
        left = await rounds(client, tmp_path, user_home, pause)
    assert not left, f"a .bash_profile made as its container was ended was kept, after rounds {left} of {ROUNDS}"


@pytest.mark.anyio
async def test_a_job_making_a_start_up_file_as_a_stop_ends_its_container_leaves_none_behind(
    home: Path, paths: AppPaths, user_home: Path, never_ask: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A Stop or a time limit ends a running command's container by killing its bwrap, whose init then
    # dies of its parent's death (container.kill_bwrap): the init is no longer bwrap's child then.
    async def stop(client, command: str, ready: Path) -> dict:  # noqa: ANN001 - the client
        wait = f"until [ -e {ready} ]; do sleep 0.01; done; sleep 30"
        result = await run(client, {"command": f"{command}; {wait}", "timeout": STOP_AFTER_MS})
        assert result["timedOut"] and ready.exists(), result
        return result

    async with serving(home) as client:
        left = await rounds(client, tmp_path, user_home, stop)
    assert not left, f"a .bash_profile made as its container was ended was kept, after rounds {left} of {ROUNDS}"
