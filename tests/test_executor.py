"""The executor on its own: bounded output, clean decoding, the whole tree ended."""

from __future__ import annotations

import os
import time

import anyio
import pytest

from app.core.execution.executor import (
    CommandSpec,
    StopSignal,
    run_command,
    spawn_options,
    windows_tree_kill_argv,
)
from app.core.execution.output import BYTES_PER_CHAR_MAX, DEFAULT_BUDGET_CHARS
from tests.stdio_client import STOP_DEADLINE_S, live_processes

pytestmark = pytest.mark.anyio


def spec(command: str, timeout_s: float = 10) -> CommandSpec:
    return CommandSpec(command=command, cwd="/tmp", env=dict(os.environ), timeout_s=timeout_s, bash="/bin/bash")


def test_spawn_options_put_the_command_in_its_own_group_on_each_platform() -> None:
    assert spawn_options("linux") == {"start_new_session": True}
    assert spawn_options("darwin") == {"start_new_session": True}
    flags = spawn_options("win32")["creationflags"]
    assert flags & 0x00000200 and flags & 0x08000000  # new process group, no console window
    assert windows_tree_kill_argv(4242) == ["taskkill", "/F", "/T", "/PID", "4242"]


async def test_a_command_printing_200_mb_keeps_memory_bounded_and_finishes() -> None:
    result = await run_command(spec("head -c 200000000 /dev/zero", timeout_s=60))
    assert result.exit_code == 0
    assert result.stdout.total == 200_000_000
    assert len(result.stdout.head) + len(result.stdout.tail) == 2 * BYTES_PER_CHAR_MAX * DEFAULT_BUDGET_CHARS
    assert len(result.to_model()["stdout"]) <= DEFAULT_BUDGET_CHARS


async def test_a_stop_signal_ends_the_tree_and_says_why() -> None:
    marker = f"41{os.getpid() % 1000}.5"
    stop = StopSignal()
    async with anyio.create_task_group() as group:
        outcome = {}

        async def go() -> None:
            outcome["result"] = await run_command(spec(f"sleep {marker} & sleep {marker}"), stop)

        group.start_soon(go)
        await anyio.sleep(0.3)
        started = time.monotonic()
        stop.set("stopped by the user")
    assert time.monotonic() - started < STOP_DEADLINE_S
    result = outcome["result"]
    assert result.stopped_reason == "stopped by the user"
    assert result.timed_out is False and result.exit_code is None
    assert live_processes(marker) == []


async def test_a_command_killed_by_a_signal_reports_no_exit_code_and_names_the_signal() -> None:
    result = await run_command(spec("kill -KILL $$"))
    assert result.exit_code is None
    assert result.signal_name == "SIGKILL"
    assert result.timed_out is False


async def test_a_missing_working_directory_raises_os_error() -> None:
    with pytest.raises(OSError):
        await run_command(CommandSpec("echo", "/no/such/dir", dict(os.environ), 5, "/bin/bash"))
