"""The executor on its own: bounded output, clean decoding, the whole tree ended."""

from __future__ import annotations

import os
import time

import anyio
import pytest

from app.core.executor import (
    CappedBuffer,
    CommandSpec,
    StopSignal,
    run_command,
    spawn_options,
    windows_tree_kill_argv,
)
from tests.stdio_client import STOP_DEADLINE_S, live_processes

pytestmark = pytest.mark.anyio


def spec(command: str, timeout_s: float = 10, cap: int = 1024 * 1024) -> CommandSpec:
    return CommandSpec(command=command, cwd="/tmp", env=dict(os.environ), timeout_s=timeout_s, bash="/bin/bash",
                       output_cap_bytes=cap)


def test_a_character_cut_by_the_cap_is_never_split_into_garbage() -> None:
    buffer = CappedBuffer(cap_bytes=16)  # head 12 bytes, tail 4 bytes
    buffer.feed("aaaaaaaaaaa€".encode())  # the euro sign's 3 bytes straddle the head limit
    buffer.feed(b"x" * 100)
    buffer.feed("€zz".encode())  # the 4-byte tail keeps only part of the euro sign
    text = buffer.text("stdout")
    head, _, rest = text.partition("\n[...")
    assert head == "aaaaaaaaaaa"
    assert rest.splitlines()[1] == "zz"
    assert "\ufffd" not in text
    assert text.endswith("[stdout truncated at 16B]")


def test_the_marker_says_exactly_what_was_dropped() -> None:
    buffer = CappedBuffer(cap_bytes=1024 * 1024)
    for _ in range(300):
        buffer.feed(b"y" * 10_000)
    text = buffer.text("stderr")
    assert (
        "1,951,424 bytes of stderr omitted here: kept the first 786,432 and the last 262,144 of 3,000,000 bytes"
    ) in text
    assert text.endswith("[stderr truncated at 1MB]")


def test_chunks_split_inside_a_character_decode_once_at_the_end() -> None:
    buffer = CappedBuffer()
    data = "日本語 ✓".encode()
    for i in range(len(data)):
        buffer.feed(data[i : i + 1])
    assert buffer.text("stdout") == "日本語 ✓"


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
    assert len(result.stdout.head) + len(result.stdout.tail) == 1024 * 1024


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
