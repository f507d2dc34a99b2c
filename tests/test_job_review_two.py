"""Two problems a review reproduced: a job whose headless server was killed read as running forever by
a peer server; and output capped at the budget in characters but sent as JSON whose escapes made the
text the model reads several times longer than the budget."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from app.core import liveness
from app.core.execution import orphans
from app.core.execution.output import DEFAULT_BUDGET_CHARS
from app.core.journal.store import Journal, Status
from app.core.paths import AppPaths
from tests.in_process_server import came, serving
from tests.stdio_client import STOP_DEADLINE_S, live_processes
from tests.test_jobs import COWORK, SHORT_PATIENCE, call, client_named
from tests.test_jobs_server_end import headless_here, row_of, wait_for_process

pytestmark = pytest.mark.anyio


# -- 1. a peer's job, its headless server killed ------------------------------------------------------


def server_alive(paths: AppPaths, server_id: int | None) -> bool:
    """Whether the server still holds its lock: its pid turns zombie before its last thread (and its
    lock) is gone."""
    with Journal(paths) as journal:
        [key] = [server.lock_key for server in journal.servers(live_only=False) if server.id == server_id]
    return key is not None and liveness.is_held(paths.server_lock(key))


def end_what_the_dead_server_left(paths: AppPaths, marker: str) -> None:
    """The killed server's command outlives it (nobody else ends it in this test): end it as a
    server's start-up does, so that the test leaves nothing running."""
    with Journal.open(paths) as journal:
        orphans.end_left_behind(paths, journal)
    deadline = time.monotonic() + STOP_DEADLINE_S
    while live_processes(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert live_processes(marker) == []


async def test_a_job_of_a_killed_headless_server_reads_as_interrupted_to_a_peer_server(
    home: Path, paths: AppPaths, tmp_path: Path
) -> None:
    """Only a journal opening, the tray and the log window marked a dead server's rows: a peer server
    said "still running" forever, and its command_stop waited for nothing. A peer must look whether
    the server is alive before it answers about its running job, and tell the model to run it again."""
    marker = f"4234.{os.getpid() % 1000}5"
    try:
        async with headless_here(home, COWORK) as peer, client_named(home, COWORK, SHORT_PATIENCE) as doomed:
            arguments = {"command": f"echo hi; sleep {marker}", "cwd": str(tmp_path)}
            started = await call(doomed, "execute_command", arguments)
            assert started["status"] == "running", started
            await wait_for_process(marker)
            job = started["jobId"]
            doomed_row = row_of(paths, job)  # (opening a journal marks dead servers: only before the kill)
            os.kill(doomed_row.server_pid, signal.SIGKILL)
            assert await came(lambda: not server_alive(paths, doomed_row.server_id)), "it died"
            with anyio.fail_after(10):
                listed = await call(peer, "command_list", {})
                waited = await call(peer, "command_wait", {"jobId": job, "timeout": 3000})
                stopped = await call(peer, "command_stop", {"jobId": job})
        assert job not in [entry["jobId"] for entry in listed["jobs"]], listed
        for said in (waited, stopped):
            assert said["status"] == "finished" and said["exitCode"] is None, said
            assert said["note"].startswith("the server running it stopped unexpectedly"), said
            assert said["note"].endswith("It did not finish: run it again with execute_command if it is still needed.")
        with Journal(paths) as journal:
            row = journal.get_command(job)
        assert row is not None and row.status is Status.INTERRUPTED, row
    finally:
        end_what_the_dead_server_left(paths, marker)


# -- 2. the output budget, counted in what the model reads ----------------------------------------------

NOTES_ROOM = 1_500  # the fields beside the output (note, outputFile, ...) are outside the budget


def escaped(text: str) -> int:
    """The characters `text` takes in a JSON text (as tools.reply writes it)."""
    return len(json.dumps(text, ensure_ascii=False)) - 2


async def read(client: Any, tool: str, arguments: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """What the model reads: the length of the text block, and its JSON."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    text = result.content[0].text
    return len(text), json.loads(text)


@pytest.mark.parametrize(
    "command",
    [
        "head -c 200000 /dev/zero",  # NUL bytes: each was a six-character escape
        "for i in $(seq 1 6000); do printf '\\033[1;31mred %d\\033[0m\\n' $i; done",  # colour codes
        "yes '\"\\\\' | head -n 60000",  # quotes, backslashes and line ends: two characters each
    ],
)
async def test_execute_command_output_stays_within_the_budget_in_the_text_the_model_reads(
    home: Path, tmp_path: Path, command: str
) -> None:
    """The budget counted characters before JSON escaped them: 30,000 became 180,000 characters of
    NUL escapes, or 55,524 with colour codes."""
    async with serving(home) as client:
        size, result = await read(client, "execute_command", {"command": command, "cwd": str(tmp_path)})
    assert result["status"] == "finished" and result["exitCode"] == 0, result
    assert escaped(result["stdout"]) + escaped(result["stderr"]) <= DEFAULT_BUDGET_CHARS
    assert size <= DEFAULT_BUDGET_CHARS + NOTES_ROOM, size
    assert escaped(result["stdout"]) > DEFAULT_BUDGET_CHARS * 0.9, "the budget is used, not wasted"
    assert "\x00" not in result["stdout"] and "\x1b" not in result["stdout"]


async def test_colour_codes_show_as_control_pictures_and_the_marker_still_names_the_true_lines_and_bytes(
    home: Path, tmp_path: Path
) -> None:
    """Each ESC is shown as one visible character; what the marker says left out is what is missing."""
    command = "for i in $(seq 1 6000); do printf '\\033[1;31mred %d\\033[0m\\n' $i; done"
    async with serving(home) as client:
        _, result = await read(client, "execute_command", {"command": command, "cwd": str(tmp_path)})
    stdout = result["stdout"]
    assert stdout.startswith("\u241b[1;31mred 1\u241b[0m\n\u241b[1;31mred 2\u241b[0m\n")
    marker = re.search(r"\[\.\.\. stdout lines ([\d,]+)-([\d,]+) \(([\d,]+) bytes\) left out here; [^\]]*\]\n", stdout)
    assert marker is not None, stdout[:300]
    first, last, omitted = (int(group.replace(",", "")) for group in marker.groups())
    head, tail = stdout[: marker.start()], stdout[marker.end() :]
    assert head.endswith(f"red {first - 1}\u241b[0m\n") and tail.startswith(f"\u241b[1;31mred {last + 1}\u241b")
    assert tail.endswith("red 6000\u241b[0m\n")
    whole = sum(len(f"\x1b[1;31mred {i}\x1b[0m\n") for i in range(1, 6001))
    shown = len(head.replace("\u241b", "\x1b").encode()) + len(tail.replace("\u241b", "\x1b").encode())
    assert omitted == whole - shown


@pytest.mark.parametrize(
    ("command", "arguments"),
    [
        ("head -c 200000 /dev/zero", {}),  # its last 50 lines: one line of NUL bytes
        ("head -c 200000 /dev/zero", {"offset": 0}),
        ("yes | head -n 100000", {"offset": 0, "limit": 100000}),  # line ends: two characters each
    ],
)
async def test_command_output_parts_stay_within_the_budget_in_the_text_the_model_reads(
    home: Path, tmp_path: Path, command: str, arguments: dict[str, Any]
) -> None:
    """command_output cut its parts at the budget in bytes: 30,000 NUL bytes were 180,000 characters of
    escapes. A part now ends where the budget does, and nextOffset reads on from there."""
    async with serving(home) as client:
        _, started = await read(client, "execute_command", {"command": command, "cwd": str(tmp_path)})
        size, part = await read(client, "command_output", {"jobId": started["jobId"], **arguments})
    assert escaped(part["output"]) <= DEFAULT_BUDGET_CHARS
    assert size <= DEFAULT_BUDGET_CHARS + NOTES_ROOM, size
    assert part["nextOffset"] - part["offset"] == len(part["output"].replace("\u2400", "\x00").encode())
    assert part["nextOffset"] - part["offset"] > DEFAULT_BUDGET_CHARS // 3, part["offset"]
