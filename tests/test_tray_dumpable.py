"""A command, and a detached process it leaves behind, try to get into the tray (issue 23).

- In its container (the default on Linux), a command runs in a pid namespace of its own: the
  tray's pid does not exist there, so there is nothing to attach to, read or signal (tested below,
  for a command and for a detached process it starts; the script is unreadable to the classifier
  and the user asked never to be asked, so the container alone must stop it).
- Without the container (bwrap missing, or switched off by the user's click): the tray is the
  commands' ancestor and in their namespace. Yama's `ptrace_scope` 1 (most distributions' default)
  lets a process trace only its own descendants; at 0, or with no Yama at all (this machine: no
  /proc/sys/kernel/yama), only the tray's being not dumpable (core/private_process.py) stops a
  debugger the classifier cannot see: tested below as a user's programs run, without root's
  powers (root's CAP_SYS_PTRACE may attach to anything, dumpable or not, as in CI). The classifier
  still holds `gdb -p`, `strace -p` and their kind in plain words (tested below).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from app.core.execution import container
from app.core.paths import AppPaths
from tests.agent_scripts import agent_script
from tests.channel_peers import running_hub
from tests.in_process_server import deny, serving
from tests.stdio_client import Client, connect, run, server_params
from tests.test_container import never_ask, own_namespace
from tests.test_private_process import AS_A_USER, as_a_user
from tests.tray_process import running_tray

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("bwrap") is None, reason="bwrap (Linux)"),
]
WAIT_S = 30.0
PTRACE_ATTACH = 16
ESRCH = 3
EPERM = 1

# What a command can learn of, and do to, the process whose pid it was given: the tray's.
ATTACH = """
import ctypes, json, os, subprocess, sys
pid, report = TRAY_PID, REPORT
seen = {"own_ns": os.readlink("/proc/self/ns/pid"),
        "visible_pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit())}
seen["tray_in_proc"] = os.path.exists(f"/proc/{pid}")
try:
    seen["program"] = os.readlink(f"/proc/{pid}/exe")
except OSError as exc:
    seen["program"] = exc.__class__.__name__
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
try:
    ask = [debugger, "-n", "-batch", "-p", str(pid), "-ex", "info proc"]
    done = subprocess.run(ask, capture_output=True, text=True)
    seen["debugger"] = done.stdout + done.stderr
except FileNotFoundError:
    seen["debugger"] = None
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
    """Weaker mode (no bwrap): nothing but the classifier keeps `gdb -p` off the tray here. The tray
    is this process: its hub holds the command of a server bound to it (tests/in_process_server.py),
    and `gdb -p` names this process's pid, as an agent would name the tray's."""
    monkeypatch.setenv(container.BWRAP_ENV, str(home / "no-bwrap"))  # the tray runs the commands
    tray_pid = os.getpid()
    with running_hub(paths) as (hub, _seen):
        hub.set_settings(approval_window_s=1.0)  # as `approval-mode --window 1` asks
        async with serving(home, bound=True) as client:
            result = await run(client, {"command": f"gdb -p {tray_pid} -batch -ex 'call (int)getpid()'"})
            assert result["status"] == "waiting", result
            assert [held.command_id for held in hub.pending_holds()] == [result["jobId"]], "the tray asks the user"
            assert tracer_of(tray_pid) == 0, "held: nothing attached"
            deny(hub, result["jobId"])  # as `cowork-terminal deny` asks
            waited = await client.call_tool("command_wait", {"jobId": result["jobId"]})
        assert tracer_of(tray_pid) == 0
    assert waited.is_error and json.loads(waited.content[0].text)["status"] == "denied", waited
    assert "Attaches to a running program and can read or change what it does" in result["note"], result["note"]


def yama_allows_attaching_to_any_process() -> bool:
    scope = Path("/proc/sys/kernel/yama/ptrace_scope")
    return not scope.exists() or scope.read_text().strip() == "0"


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="root, to drop its powers")
async def test_without_the_container_a_command_of_the_same_user_cannot_attach_to_or_read_the_tray(
    home: Path, paths: AppPaths, tmp_path: Path, weaker_mode: None
) -> None:
    """Tray, server and command run as a user's programs do: root's name, none of its powers. Where
    Yama is on, it refuses the attach too (the tray is the command's ancestor); the program link,
    which Yama does not guard, shows the tray itself is closed."""
    if yama_allows_attaching_to_any_process():  # the attack works on a process that is dumpable
        neighbour = subprocess.Popen([*AS_A_USER, "sleep", "60"])
        try:
            comm = Path(f"/proc/{neighbour.pid}/comm")  # setpriv has dropped root's powers once it is `sleep`
            deadline = time.monotonic() + WAIT_S
            while comm.read_text().strip() != "sleep" and time.monotonic() < deadline:
                time.sleep(0.02)
            probe = tmp_path / "neighbour.json"
            script = tmp_path / "attach.py"
            script.write_text(attach_script(neighbour.pid, probe))
            subprocess.run([*AS_A_USER, sys.executable, str(script)], capture_output=True, timeout=60, check=True)
            assert json.loads(probe.read_text())["ptrace_attach"] == [0, 0]
        finally:
            neighbour.kill()
            neighbour.wait()
    report = tmp_path / "seen.json"
    with running_tray(home, wrapper=AS_A_USER) as tray:
        async with Client(as_a_user(server_params(home)), mode="legacy") as client:
            command = agent_script(attach_script(tray.pid, report), background=True)
            assert (await run(client, {"command": command})).get("exitCode") == 0
            seen = await report_of(report)
            # The attack ran, beside the tray, with every right of its user but the debugger's.
            assert seen["own_ns"] == own_namespace() and seen["tray_in_proc"] is True
            assert seen["signal"] == "delivered"
            # And could not get in (a dumpable tray is attached to and stopped: the call never returns).
            assert seen["ptrace_attach"] == [-1, EPERM], seen
            assert seen["program"] == "PermissionError", "not dumpable: its program is hidden too"
            assert seen["mem"] == "PermissionError"
            if seen["debugger"] is not None:
                assert "Operation not permitted" in seen["debugger"], seen["debugger"]
            assert (await run(client, {"command": "echo still here"})).get("stdout") == "still here\n"
        assert tray.poll() is None and tracer_of(tray.pid) == 0, "the tray runs on, traced by nobody"
