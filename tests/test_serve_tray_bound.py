"""A `serve` whose tray runs its commands loads and says only what such a server needs (issue 21's
idle memory target): no classifier or tree-sitter warmed, no admission, pins or session shell, no
word about a bash it will not use.

Real `serve` and tray processes: what a process loads (its /proc maps, the modules it held as it
exited, a fresh interpreter's modules) and what it writes to its stderr; one tray and one bound
server show all a bound server leaves out. The headless server that does speak of a missing bash,
beside the tray-bound one that does not, runs in this process (tests/in_process_server.py)."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.server.host_side import runs_its_own_commands
from tests.in_process_server import serving
from tests.raw_stdio import RawServer
from tests.tray_process import running_tray

MISSING_BASH = {"COWORK_TERMINAL_BASH": "/nowhere/bash"}
WARM_UP_WAIT_S = 3.0  # a headless server has loaded tree-sitter well within this after its first answer


def loads_tree_sitter(pid: int) -> bool:
    return "tree_sitter" in Path(f"/proc/{pid}/maps").read_text()


def loads_ctypes(pid: int) -> bool:
    return "_ctypes" in Path(f"/proc/{pid}/maps").read_text()


def until_tree_sitter(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if loads_tree_sitter(pid):
            return True
        time.sleep(0.05)
    return False


# Put first on a `serve`'s PYTHONPATH, it writes the names of the modules the server held as it exits.
MODULES_AT_EXIT = """import atexit, os, sys
def _write():
    with open(os.environ["COWORK_TEST_MODULES_AT_EXIT"], "w", encoding="utf-8") as out:
        out.write("\\n".join(sorted(sys.modules)))
atexit.register(_write)
"""


def writing_modules_at_exit(folder: Path) -> tuple[dict[str, str], Path]:
    """The environment of a `serve` that writes its modules as it exits (MODULES_AT_EXIT), and where."""
    site = folder / "site"
    site.mkdir(parents=True)
    (site / "sitecustomize.py").write_text(MODULES_AT_EXIT, encoding="utf-8")
    written = folder / "modules"
    search = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    return {"PYTHONPATH": search, "COWORK_TEST_MODULES_AT_EXIT": str(written)}, written


def stop(server: RawServer) -> str:
    assert server.process.stdin is not None
    server.process.stdin.close()
    assert server.wait(10.0) == 0
    return server.stderr()


def test_only_a_server_no_tray_runs_commands_for_decides_and_runs_them_itself() -> None:
    assert runs_its_own_commands(tray_runs_them=False)
    assert not runs_its_own_commands(tray_runs_them=True)


@pytest.mark.anyio
async def test_a_tray_bound_server_runs_its_commands_in_the_tray_loads_no_tree_sitter_and_says_nothing_of_bash(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """One tray-bound server, its bash missing, against a headless one: the first has its command run
    by the tray's bash, warms nothing up, loads none of what the tray runs commands with and says
    nothing of the bash; the other does both."""
    noting, noted = writing_modules_at_exit(tmp_path / "bound")
    with running_tray(home):
        bound = RawServer(home, env={**MISSING_BASH, **noting})  # not headless: bound to the tray
        try:
            bound.initialize()
            said = bound.call("execute_command", '{"command": "echo ran-in-the-tray"}')
            assert said is not None and "ran-in-the-tray" in said, said  # the tray's bash ran it
            assert not until_tree_sitter(bound.process.pid, WARM_UP_WAIT_S)
            assert not loads_ctypes(bound.process.pid)  # nor the container's modules (below)
            stderr = stop(bound)
        finally:
            bound.close()
    assert "/nowhere/bash" not in stderr, stderr
    held = set(noted.read_text(encoding="utf-8").split())
    assert "app.server.host_side" in held  # its host side was open: the list is the server's whole life
    assert sorted(held.intersection(TRAY_RUNS_THEM)) == []

    alone = RawServer(home, "--headless")
    try:
        alone.initialize()
        alone.request("tools/list", {})
        assert until_tree_sitter(alone.process.pid, WARM_UP_WAIT_S)
        said = alone.call("execute_command", '{"command": "echo ran-here"}')
        assert said is not None and "ran-here" in said, said
        assert loads_ctypes(alone.process.pid)  # its container asked the kernel for Landlock
    finally:
        alone.close()
    # The same variable does make bash missing for a server that runs its own commands (`serve
    # --headless`, here in this process; as a process: tests/test_server_stdio.py): it says so.
    for name, value in MISSING_BASH.items():
        monkeypatch.setenv(name, value)
    capsys.readouterr()
    async with serving(home) as headless:
        await headless.list_tools()  # answered once the server has set up, and has said it
    said = capsys.readouterr().err
    assert "cowork-terminal: " in said and "/nowhere/bash" in said, said


# What only a server that runs its own commands needs (0.6 MB of an idle tray-bound server, with ctypes).
RUNNING_MODULES = (
    "app.core.execution.executor",
    "app.core.execution.container",
    "app.core.execution.spare",
    "app.core.execution.shell_session",
    "app.core.execution.start_files",
    "app.core.execution.lone_files",
    "ctypes",
    "difflib",  # for a misspelt argument's "did you mean"
)
# And what decides and holds its commands: a tray-bound server's tray does (0.6 MB more, 2026-12-05).
TRAY_RUNS_THEM = (
    *RUNNING_MODULES,
    "tree_sitter",
    "app.core.classifier.analyzer",
    "app.core.classifier.tables",  # through the pins
    "app.core.commands.pins",
    "app.core.commands.admission",
    "app.core.commands.session_shell",
    "app.core.system_programs",
)


def test_what_every_server_loads_leaves_the_executor_the_container_and_ctypes_unloaded() -> None:
    serving = "app.cli.main, app.server.mcp_server, app.server.host_side, app.server.tools, app.server.job_tools"
    code = f"import sys, {serving}; print(' '.join(m for m in {TRAY_RUNS_THEM!r} if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert loaded == []


def test_a_serve_process_keeps_what_it_loaded_at_start_up_out_of_the_collectors_walks(home: Path) -> None:
    """A full collection walked the 100,000 objects `serve` loads at start-up (the SDK, the classifier)
    again once in some hundreds of calls, holding the call it fell in for 0.05-0.3 s (heap.py). Once
    its start-up work is done (in a worker thread), a headless server settles them, and its commands
    run as before."""
    server = RawServer(home, "--headless")
    settled = "start-up objects kept out of the garbage collector's walks: "
    told = b""
    try:
        server.initialize()
        said = server.call("execute_command", '{"command": "echo first"}')
        assert said is not None and '"stdout":"first' in said.replace(" ", ""), said
        assert server.process.stderr is not None
        deadline = time.monotonic() + 30
        while settled.encode() not in told and time.monotonic() < deadline:
            ready, _, _ = select.select([server.process.stderr], [], [], 0.5)
            told += os.read(server.process.stderr.fileno(), 65536) if ready else b""
        said = server.call("execute_command", '{"command": "echo second"}')
        assert said is not None and '"stdout":"second' in said.replace(" ", ""), said
    finally:
        server.close()
    assert told.decode().count(settled) == 1, told
