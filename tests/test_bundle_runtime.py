"""What a frozen app's runtime hooks set for themselves never reaches a command, and their temporary
files vanish with the process. Real child processes play the frozen app: they run our hook's call
first, then do what PyInstaller's GTK/GLib hooks do, then the frozen entry's `settle`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.execution import bundle_runtime

# What installer/runtime_hook_environment.py, PyInstaller's glib, gtk and gdkpixbuf hooks, and
# installer/entry.py do, in that order, in a process that stands for the frozen app.
FROZEN_START = """
import atexit, os, sys, tempfile
from app.core.execution import bundle_runtime
bundle_runtime.remember_launch_environment(os.environ)
os.environ["XDG_DATA_DIRS"] = "/bundle/share" + os.pathsep + "/usr/local/share/" + os.pathsep + "/usr/share/"
os.environ["GTK_PATH"] = "/bundle"
os.environ["GTK_DATA_PREFIX"] = "/bundle"
fd, cache = tempfile.mkstemp()
os.write(fd, b"loaders"); os.close(fd)
atexit.register(os.unlink, cache)
os.environ["GDK_PIXBUF_MODULE_FILE"] = cache
if sys.argv[1] == "settle":
    bundle_runtime.settle()
"""


def frozen_like(tmp_path: Path, code: str, mode: str = "settle", **env: str) -> subprocess.Popen[str]:
    environ = {k: v for k, v in os.environ.items() if k not in ("XDG_DATA_DIRS", "GTK_PATH", "GTK_DATA_PREFIX")}
    environ.update(TMPDIR=str(tmp_path), **env)
    return subprocess.Popen(
        [sys.executable, "-c", FROZEN_START + code, mode], env=environ, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def test_changes_are_told_apart_from_the_launch_environment_and_undone() -> None:
    before = {"PATH": "/usr/bin", "XDG_DATA_DIRS": "/usr/share"}
    after = {"PATH": "/usr/bin", "XDG_DATA_DIRS": "/b/share:/usr/share", "GTK_PATH": "/b"}
    changes = bundle_runtime.runtime_changes(before, after)
    assert changes == {"XDG_DATA_DIRS": "/usr/share", "GTK_PATH": None}
    assert bundle_runtime.as_launched(after, changes) == before


def test_commands_of_a_frozen_app_get_the_environment_it_was_launched_with(tmp_path: Path) -> None:
    code = """
from app.core.execution.shell_environment import resolve_base_environment
import json
print(json.dumps(resolve_base_environment()))
"""
    process = frozen_like(tmp_path, code, COWORK_TERMINAL_LOGIN_SHELL="0")
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    env = json.loads(out)
    hooks_set = ("XDG_DATA_DIRS", "GTK_PATH", "GTK_DATA_PREFIX", "GDK_PIXBUF_MODULE_FILE")
    assert [name for name in hooks_set if name in env] == []


def test_the_windows_a_frozen_app_opens_get_its_launch_environment_too(tmp_path: Path) -> None:
    code = """
import json
from app.core.execution import bundle_runtime
print(json.dumps(bundle_runtime.child_environment()))
"""
    process = frozen_like(tmp_path, code, XDG_DATA_DIRS="/home/ann/.local/share/flatpak/exports/share")
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    env = json.loads(out)
    assert env["XDG_DATA_DIRS"] == "/home/ann/.local/share/flatpak/exports/share"
    assert "GTK_PATH" not in env and "GDK_PIXBUF_MODULE_FILE" not in env


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/fd is Linux's")
@pytest.mark.parametrize("mode", ["settle", "no settle"])
def test_a_killed_process_leaves_no_temporary_file_behind_once_settled(tmp_path: Path, mode: str) -> None:
    code = """
import os, sys, time
path = os.environ["GDK_PIXBUF_MODULE_FILE"]
print(path, open(path, "rb").read().decode(), flush=True)
time.sleep(60)
"""
    process = frozen_like(tmp_path, code, mode)
    try:
        path, content = process.stdout.readline().split()
    finally:
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=30)
    assert content == "loaders"  # GdkPixbuf can still read the cache through the variable
    if mode == "settle":
        assert path.startswith("/proc/self/fd/")
        assert list(tmp_path.iterdir()) == []
    else:  # what PyInstaller's hook alone leaves behind: the reason for `settle`
        assert [p.name for p in tmp_path.iterdir()] == [Path(path).name]


def test_a_settled_process_exits_cleanly_without_the_hooks_own_clean_up_failing(tmp_path: Path) -> None:
    process = frozen_like(tmp_path, "print('ok')")
    out, err = process.communicate(timeout=60)
    assert (process.returncode, out.strip(), err) == (0, "ok", "")
    assert list(tmp_path.iterdir()) == []
