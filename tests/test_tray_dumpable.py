"""A command, and a detached process it leaves behind, try to get into the tray (issue 23).

The tray stays dumpable: every server checks its program through /proc/<tray>/exe, which the
kernel hides for a non-dumpable process (docs/security.md, "Same-user code injection"). What keeps
a command out of it:

- In its container (the default on Linux), a command runs in a pid namespace of its own: the
  tray's pid does not exist there, so there is nothing to attach to, read or signal (tested below,
  for a command and for a detached process it starts; the script is unreadable to the classifier
  and the user asked never to be asked, so the container alone must stop it).
- Without the container (bwrap missing, or switched off by the user's click): the tray is the
  commands' ancestor. Yama's `ptrace_scope` 1 (most distributions' default) lets a process trace
  only its own descendants, so a command cannot trace the tray; at 0, or with no Yama at all (this
  machine: no /proc/sys/kernel/yama), a process of the same user can attach, and only the
  classifier stands in the way: it holds `gdb -p`, `strace -p` and their kind in plain words
  (tested below). A debugger it cannot see (the script above, run with the user's "never ask" and
  the container off) attaches: tried by hand on this machine, `ptrace(PTRACE_ATTACH)` returned 0.
  Root, as in CI, may attach to anything, dumpable or not.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

import anyio
import pytest

from app.core.execution import container
from app.core.paths import AppPaths
from tests.stdio_client import connect, run
from tests.test_authority import cli
from tests.test_container import agent_script, never_ask, own_namespace
from tests.tray_process import running_tray

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("bwrap") is None, reason="bwrap (Linux)"),
]
WAIT_S = 30.0
PTRACE_ATTACH = 16
ESRCH = 3

# What a command can learn of, and do to, the process whose pid it was given: the tray's.
ATTACH = """
import ctypes, json, os, subprocess, sys
pid, report = TRAY_PID, REPORT
seen = {"own_ns": os.readlink("/proc/self/ns/pid"),
        "visible_pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit())}
seen["tray_in_proc"] = os.path.exists(f"/proc/{pid}")
try:
    with open(f"/proc/{pid}/mem", "rb") as mem:
        seen["mem"] = "opened"
except OSError as exc:
    seen["mem"] = exc.__class__.__name__
libc = ctypes.CDLL(None, use_errno=True)
attach = getattr(libc, "pt" + "race")
attach.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
seen["ptrace_attach"] = [attach(PTRACE_ATTACH, pid, None, None), ctypes.get_errno()]
try:
    os.kill(pid, 0)
    seen["signal"] = "delivered"
except OSError as exc:
    seen["signal"] = exc.__class__.__name__
debugger = "g" + "db"
done = subprocess.run([debugger, "-n", "-batch", "-p", str(pid), "-ex", "info proc"], capture_output=True, text=True)
seen["debugger"] = done.stdout + done.stderr
with open(report, "w") as out:
    json.dump(seen, out)
print("looked")
"""


def attach_script(tray_pid: int, report: Path) -> str:
    return (
        ATTACH.replace("TRAY_PID", str(tray_pid))
        .replace("REPORT", repr(str(report)))
        .replace("PTRACE_ATTACH", str(PTRACE_ATTACH))
    )


def tracer_of(pid: int) -> int:
    """Who traces `pid` (0: nobody), from its status file."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("TracerPid:"):
            return int(line.split()[1])
    raise AssertionError(f"no TracerPid for {pid}")


async def report_of(path: Path) -> dict:
    deadline = time.monotonic() + WAIT_S
    while not path.exists() and time.monotonic() < deadline:
        await anyio.sleep(0.1)
    return json.loads(path.read_text())


@pytest.mark.skipif(shutil.which("gdb") is None, reason="gdb")
@pytest.mark.parametrize("detached", [False, True], ids=["command", "detached process"])
async def test_in_its_container_a_command_cannot_see_attach_to_read_or_signal_the_tray(
    home: Path, paths: AppPaths, tmp_path: Path, detached: bool
) -> None:
    report = tmp_path / "seen.json"
    never_ask(paths)
    with running_tray(home) as tray:
        assert Path(f"/proc/{tray.pid}").exists() and tracer_of(tray.pid) == 0
        async with connect(home, headless=False) as client:
            result = await run(client, {"command": agent_script(attach_script(tray.pid, report), background=detached)})
            assert result.get("exitCode") == 0, result
            seen = await report_of(report)
        assert tray.poll() is None and tracer_of(tray.pid) == 0, "the tray runs on, traced by nobody"
    # The attack ran, in a namespace of its own.
    assert seen["own_ns"] != own_namespace()
    assert tray.pid not in seen["visible_pids"] and len(seen["visible_pids"]) <= 6, seen["visible_pids"]
    # And found nothing to get into.
    assert seen["tray_in_proc"] is False
    assert seen["mem"] == "FileNotFoundError"
    assert seen["ptrace_attach"] == [-1, ESRCH]
    assert seen["signal"] == "ProcessLookupError"
    assert "No such process" in seen["debugger"], seen["debugger"]


async def test_without_the_container_a_debugger_attaching_to_the_tray_is_held_and_never_runs_unasked(
    home: Path, paths: AppPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Weaker mode (no bwrap): nothing but the classifier keeps `gdb -p` off the tray here."""
    monkeypatch.setenv(container.BWRAP_ENV, str(home / "no-bwrap"))  # the tray runs the commands
    with running_tray(home) as tray:
        assert cli(home, "approval-mode", "--window", "1").returncode == 0
        async with connect(home, headless=False) as client:
            result = await run(client, {"command": f"gdb -p {tray.pid} -batch -ex 'call (int)getpid()'"})
            assert result["status"] == "waiting", result
            assert tracer_of(tray.pid) == 0, "held: nothing attached"
            denied = await anyio.to_thread.run_sync(cli, home, "deny", str(result["jobId"]))
            assert denied.returncode == 0, denied.stderr
        assert tray.poll() is None and tracer_of(tray.pid) == 0
    assert "Attaches to a running program and can read or change what it does" in result["note"], result["note"]
