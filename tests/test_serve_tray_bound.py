"""A `serve` whose tray runs its commands loads and says only what such a server needs (issue 21's
idle memory target): no classifier or tree-sitter warmed, no word about a bash it will not use."""

from __future__ import annotations

import time
from pathlib import Path

from app.server.host_side import runs_its_own_commands
from tests.raw_stdio import RawServer
from tests.tray_process import running_tray

MISSING_BASH = {"COWORK_TERMINAL_BASH": "/nowhere/bash"}
WARM_UP_WAIT_S = 3.0  # a headless server has loaded tree-sitter well within this after its first answer


def loads_tree_sitter(pid: int) -> bool:
    return "tree_sitter" in Path(f"/proc/{pid}/maps").read_text()


def until_tree_sitter(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if loads_tree_sitter(pid):
            return True
        time.sleep(0.05)
    return False


def stop(server: RawServer) -> str:
    assert server.process.stdin is not None
    server.process.stdin.close()
    assert server.wait(10.0) == 0
    return server.stderr()


def test_only_a_server_no_tray_runs_commands_for_decides_and_runs_them_itself() -> None:
    assert runs_its_own_commands(tray_runs_them=False)
    assert not runs_its_own_commands(tray_runs_them=True)


def test_a_tray_bound_server_without_bash_says_nothing_of_it_and_its_commands_run_in_the_tray(home: Path) -> None:
    with running_tray(home):
        bound = RawServer(home, env=MISSING_BASH)
        try:
            bound.initialize()
            said = bound.call("execute_command", '{"command": "echo ran-in-the-tray"}')
            assert said is not None and "ran-in-the-tray" in said, said  # the tray's bash ran it
            stderr = stop(bound)
        finally:
            bound.close()
    assert "/nowhere/bash" not in stderr, stderr
    # The same variable does make bash missing for a server that runs its own commands: it says so.
    alone = RawServer(home, "--headless", env=MISSING_BASH)
    try:
        alone.initialize()
        alone.request("tools/list", {})
        stderr = stop(alone)
    finally:
        alone.close()
    assert "/nowhere/bash" in stderr, stderr


def test_a_tray_bound_server_does_not_load_tree_sitter_where_a_headless_one_does(home: Path) -> None:
    alone = RawServer(home, "--headless")
    try:
        alone.initialize()
        alone.request("tools/list", {})
        assert until_tree_sitter(alone.process.pid, WARM_UP_WAIT_S)
    finally:
        alone.close()
    with running_tray(home):
        bound = RawServer(home)
        try:
            bound.initialize()
            said = bound.call("execute_command", '{"command": "echo ran-in-the-tray"}')
            assert said is not None and "ran-in-the-tray" in said, said
            assert not until_tree_sitter(bound.process.pid, WARM_UP_WAIT_S)
        finally:
            bound.close()
