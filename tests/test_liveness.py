"""Who is alive (app/core/liveness.py): the OS's own file lock, held by real processes.

On Linux, a holder is a real Python process (killed with SIGKILL to die); on Windows, the same
under Wine with a Windows CPython (`-m wine`), where the lock is byte 0 through msvcrt.locking.
That a patient taker waits out a probe is tests/test_journal.py's."""

from __future__ import annotations

import ast
import json
import os
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from app.core import liveness

ROOT = Path(__file__).resolve().parents[1]
POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="flock")
START_S = 30.0

# Holds the lock at argv[1] and starts a command that is given every descriptor it could inherit
# (as a tray's command outlives it), then waits until it is killed.
HOLDER = """
import subprocess, sys
from pathlib import Path
from app.core import liveness
held = liveness.try_hold(Path(sys.argv[1]))
assert held is not None
command = subprocess.Popen(["sleep", "60"], close_fds=False)
print(command.pid, flush=True)
sys.stdin.readline()
"""


@contextmanager
def held_elsewhere(path: Path) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """A process that holds the lock at `path`, and the pid of the command it started."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    command_pid = None
    try:
        assert holder.stdout is not None
        command_pid = int(holder.stdout.readline())
        yield holder, command_pid
    finally:
        holder.kill()
        holder.wait(START_S)
        if command_pid is not None:  # not our child: its own parent, or init, reaps it
            os.kill(command_pid, signal.SIGKILL)


@POSIX_ONLY
def test_a_lock_another_process_holds_is_held_until_that_process_is_killed(tmp_path: Path) -> None:
    path = tmp_path / "locks" / "tray.lock"
    with held_elsewhere(path) as (holder, command_pid):
        assert liveness.is_held(path)
        assert liveness.try_hold(path) is None
        assert liveness.try_hold(path, patience_s=0.1) is None, "patience waits out a probe, not a live holder"
        holder.send_signal(signal.SIGKILL)
        holder.wait(START_S)
        os.kill(command_pid, 0)  # the command it started lives on, with whatever it inherited
        assert not liveness.is_held(path), "the OS let go of a killed holder's lock"
        mine = liveness.try_hold(path)
        assert mine is not None
        mine.release()


def test_a_probe_from_the_holders_own_process_asks_the_os(tmp_path: Path) -> None:
    path = tmp_path / "server-k.lock"
    held = liveness.try_hold(path)
    assert held is not None
    assert liveness.is_held(path), "not a re-entrant count: a second open file of the same process"
    assert liveness.try_hold(path) is None
    held.release()
    held.release()  # a second release does nothing
    assert not liveness.is_held(path)
    assert path.exists(), "the file stays: a waiter that opened it locks the same file"


def test_a_lock_nobody_refers_to_is_let_go(tmp_path: Path) -> None:
    path = tmp_path / "dropped.lock"
    liveness.try_hold(path)
    assert not liveness.is_held(path)


@POSIX_ONLY
def test_a_forked_child_dropping_its_copy_of_a_lock_leaves_the_parents_lock_held(tmp_path: Path) -> None:
    """The child shares the parent's open file: its unlock would drop the parent's lock, its close does not."""
    import gc

    path = tmp_path / "forked.lock"
    held = liveness.try_hold(path)
    assert held is not None
    child = os.fork()
    if child == 0:  # pragma: no cover - the child
        del held
        gc.collect()
        os._exit(0)
    assert os.waitpid(child, 0)[1] == 0
    assert liveness.is_held(path)
    held.release()


@POSIX_ONLY
def test_a_lock_file_is_private_and_a_link_at_its_path_is_not_followed(tmp_path: Path) -> None:
    old_umask = os.umask(0o022)
    try:
        held = liveness.try_hold(tmp_path / "private.lock")
    finally:
        os.umask(old_umask)
    assert held is not None
    held.release()
    assert stat.S_IMODE((tmp_path / "private.lock").stat().st_mode) == 0o600
    (tmp_path / "planted.lock").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(OSError):
        liveness.try_hold(tmp_path / "planted.lock")
    assert not (tmp_path / "elsewhere").exists()


@POSIX_ONLY
def test_the_posix_decision_says_held_only_when_another_open_file_holds_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "decision.lock"
    first, second = (os.open(path, os.O_RDWR | os.O_CREAT, 0o600) for _ in range(2))
    try:
        assert liveness._take(first) is True
        assert liveness._take(second) is False
        liveness._let_go(first)
        assert liveness._take(second) is True
    finally:
        os.close(first)
        os.close(second)
    with pytest.raises(OSError):  # a descriptor that is not open is an error, never "held"
        liveness._take(second)


def test_filelock_is_not_a_dependency() -> None:
    """The OS's lock replaced it (docs/decisions.md, Dependencies)."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert not [d for d in dependencies if d.lower().startswith("filelock")]


def test_no_module_of_the_app_imports_filelock() -> None:
    """Read from the sources: an import inside a function, loaded only when it runs, counts too."""
    importers = []
    for source in sorted((ROOT / "app").rglob("*.py")):
        for node in ast.walk(ast.parse(source.read_text(), str(source))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(name.split(".")[0] == "filelock" for name in names):
                importers.append(str(source.relative_to(ROOT)))
    assert importers == []


# Under Wine: a Windows Python holds the lock (and probes it from its own process), another probes it.
WINDOWS_HOLDER = """
import json, os, sys
from pathlib import Path
from app.core import liveness
path = Path(sys.argv[1])
held = liveness.try_hold(path)
fd = os.open(path, os.O_RDWR | os.O_BINARY)
own = {"held": held is not None, "is_held": liveness.is_held(path), "try_hold": liveness.try_hold(path) is None,
       "take": liveness._take(fd)}
os.close(fd)
try:
    liveness._take(fd)
except OSError:
    own["closed_fd_raises"] = True
print(json.dumps(own), flush=True)
sys.stdin.readline()
held.release()
print(json.dumps({"released": True}), flush=True)
sys.stdin.readline()
"""
WINDOWS_PROBE = """
import json, sys
from pathlib import Path
from app.core import liveness
path = Path(sys.argv[1])
held = liveness.is_held(path)
taken = liveness.try_hold(path)
print(json.dumps({"is_held": held, "taken": taken is not None, "platform": sys.platform}), flush=True)
"""


@pytest.mark.wine
@pytest.mark.timeout(600)
def test_under_windows_a_lock_is_held_by_its_process_until_released_or_killed(wine: object, tmp_path: Path) -> None:
    from tests.wine_env import WineEnv, parse_json_line

    assert isinstance(wine, WineEnv)
    lock = wine.drive_c / "liveness-test" / "tray.lock"
    lock.parent.mkdir(exist_ok=True)
    where = wine.win(lock)

    def probe() -> dict:
        return json.loads(parse_json_line(wine.python_run(["-c", WINDOWS_PROBE, where], timeout=120).stdout))

    def holder() -> subprocess.Popen[bytes]:
        process = wine.popen([str(wine.python), "-c", WINDOWS_HOLDER, where])
        assert process.stdout is not None and process.stderr is not None
        line = process.stdout.readline()
        if not line.strip():
            process.kill()
            raise AssertionError(f"the Windows holder said nothing: {process.stderr.read().decode(errors='replace')}")
        expected = {"held": True, "is_held": True, "try_hold": True, "take": False, "closed_fd_raises": True}
        assert json.loads(line) == expected, "a second open file of the holder's own process is refused"
        return process

    first = holder()
    try:
        assert probe() == {"is_held": True, "taken": False, "platform": "win32"}
        assert first.stdin is not None and first.stdout is not None
        first.stdin.write(b"\n")
        first.stdin.flush()
        assert json.loads(first.stdout.readline()) == {"released": True}
        assert probe() == {"is_held": False, "taken": True, "platform": "win32"}
    finally:
        first.kill()
        first.wait(60)
    second = holder()
    try:
        second.kill()  # the Windows process itself: Wine's loader runs it in this process
        second.wait(60)
        assert probe() == {"is_held": False, "taken": True, "platform": "win32"}, "the OS let go of a killed holder"
    finally:
        if second.poll() is None:
            second.kill()
