"""Binding a member of the protected set read-only inside a live container (live_binds.py),
with a real bubblewrap container, as root and as an unprivileged user."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from app.core.execution import container, live_binds

LINUX_BWRAP = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("bwrap") is None, reason="bwrap (Linux)"
)
NOBODY = 65534


class Shell:
    """A bash in a bwrap container like the session's, asked whether it can append to a path."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process

    @property
    def init_pid(self) -> int:
        pid = container.init_pid(self.process.pid)
        assert pid is not None
        return pid

    def can_write(self, path: Path) -> bool:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"(echo x >> {path}) 2>/dev/null && echo W || echo R\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline().strip()
        assert answer in ("W", "R"), "the contained shell answers"
        return answer == "W"


@contextmanager
def contained_shell(home: Path, members: list[Path], wrapper: list[str]) -> Iterator[Shell]:
    mounts = ["--bind", str(home), str(home)]
    for member in members:
        mounts += ["--ro-bind", str(member), str(member)]
    argv = [*wrapper, "bwrap", "--dev-bind", "/", "/", "--unshare-pid", "--proc", "/proc", "--die-with-parent",
            "--as-pid-1", *mounts, "--", "bash", "--norc", "-s"]  # fmt: skip
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        shell = Shell(process)
        assert shell.can_write(home / ".started"), "the contained shell runs (and its init is there)"
        yield shell
    finally:
        process.kill()
        process.wait()


def a_home(tmp_path: Path, owner: int | None = None) -> tuple[Path, Path, Path, Path]:
    home = tmp_path / "home"
    folder, nested = home / ".claude", home / ".claude" / "inner"
    nested.mkdir(parents=True)
    lone = home / ".bashrc"
    lone.write_text("a\n")
    if owner is not None:
        for path in (tmp_path, home, folder, nested, lone):
            os.chown(path, owner, owner)
    return home, folder, nested, lone


@LINUX_BWRAP
def test_a_folder_and_a_lone_file_bound_in_a_live_container_are_read_only_there_from_then_on(
    tmp_path: Path,
) -> None:
    """What start_files.py does for a lone member that appears, or is replaced by rename, while a
    container lives: the container did not bind it, and from then on it is read-only there."""
    home, folder, nested, lone = a_home(tmp_path)
    with contained_shell(home, [nested], []) as shell:
        assert not shell.can_write(nested / "g"), "the container protects what it bound"
        assert shell.can_write(folder / "f") and shell.can_write(lone)
        assert live_binds.protect(shell.init_pid, [str(folder), str(lone)]) is None
        assert not shell.can_write(folder / "f2") and not shell.can_write(lone)
    assert (folder / "f").read_text() == "x\n" and lone.read_text() == "a\nx\n"
    assert not (folder / "f2").exists()


@LINUX_BWRAP
@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root to become nobody")
def test_binding_works_for_an_unprivileged_user_whose_container_has_its_own_user_namespace(tmp_path: Path) -> None:
    """The helper joins the container's user namespace first (its owner may), then its mounts."""
    system_python = "/usr/bin/python3"
    if not os.path.exists(system_python):
        pytest.skip("no system python the unprivileged user may run")
    base = Path(tempfile.mkdtemp(prefix="lift-"))  # pytest's own folders are private to root
    os.chmod(base, 0o755)
    home, folder, _nested, _lone = a_home(base, owner=NOBODY)
    become = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    with contained_shell(home, [], become) as shell:
        assert os.readlink(f"/proc/{shell.init_pid}/ns/user") != os.readlink("/proc/self/ns/user")
        assert shell.can_write(folder / "f")
        argv = live_binds.helper_argv(shell.init_pid, [str(folder)])
        bound = subprocess.run([*become, system_python, *argv[1:]], capture_output=True, text=True, timeout=30)
        assert bound.stdout.strip() == "ok", bound.stderr
        assert not shell.can_write(folder / "f2")
    shutil.rmtree(base)


def test_inotify_events_are_read_with_their_names() -> None:
    from app.core.execution import lone_files

    def event(wd: int, name: bytes) -> bytes:
        padded = name + b"\0" * (16 - len(name))
        return lone_files.EVENT_HEADER.pack(wd, lone_files.IN_MOVED_TO, 0, len(padded)) + padded

    events = lone_files.parse_masked_events(event(1, b".claude.json") + event(2, b"x"))
    assert [(wd, name) for wd, _mask, name in events] == [(1, ".claude.json"), (2, "x")]
