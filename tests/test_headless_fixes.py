"""The fixes of the tenth red team's headless findings (tests/test_red_team_ten_headless.py), each at its
own layer: the journal's count of pauses, which a headless server with no tray compares as the tray's
link compares the tray's (a command judged before a pause never starts after it, even once resumed),
and a headless server's pause backstop, a thread of its own that ends what runs when its event loop
is held up (as the tray's hub has: `Hub._end_what_a_pause_left`)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_types import CallToolResult, TextContent

from app.core.commands import admission, running
from app.core.commands.authority import ServerAuthority
from app.core.commands.running import PAUSE_BACKSTOP_S
from app.core.execution import start_files
from app.core.journal import pause_file
from app.core.journal.side_tables import PAUSE_COUNT_KEY
from app.core.journal.store import Journal, Status
from app.core.messages import PAUSED_MESSAGE
from app.core.paths import AppPaths
from tests.in_process_server import came, serving
from tests.test_pause_backstop import last_tick

bwrap = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("bwrap") is None, reason="bwrap (Linux)"
)


def text_of(result: CallToolResult) -> str:
    [content] = result.content
    assert isinstance(content, TextContent)
    return content.text


# -- the journal's count of pauses -------------------------------------------------------------


def test_the_journal_counts_each_pause_as_it_begins(paths: AppPaths) -> None:
    with Journal(paths) as journal:
        assert journal.pause_count() == 0
        journal.set_paused(True)
        journal.set_paused(True)  # already paused: no new pause
        assert journal.pause_count() == 1
        journal.set_paused(False)
        assert journal.pause_count() == 1
        journal.set_setting("paused", True)  # as the tray's hub writes its state (authority/record.py)
        assert journal.pause_count() == 2 and journal.is_paused()
        journal.set_setting("paused", False)
        assert journal.pause_count() == 2 and not journal.is_paused()


def test_a_pause_the_pause_file_alone_held_is_counted_as_it_ends(paths: AppPaths) -> None:
    """A full disk: `cowork-terminal pause` writes the pause file alone (no row can be written then);
    the resume, once there is room, counts it."""
    with Journal(paths) as journal:
        pause_file.write(paths.pause_file, True)
        assert journal.is_paused() and journal.pause_count() == 0
        journal.set_paused(False)
        assert not journal.is_paused() and journal.pause_count() == 1


def test_a_count_another_program_spoiled_still_moves(paths: AppPaths) -> None:
    with Journal(paths) as journal:
        with sqlite3.connect(paths.journal) as db:
            db.execute(
                "INSERT INTO settings(key, value, updated_at) VALUES (?, ?, 0)", (PAUSE_COUNT_KEY, '"not a number"')
            )
        assert journal.pause_count() == 0
        journal.set_paused(True)
        assert journal.pause_count() == 1


def test_a_headless_authority_says_the_journals_count_read_only_when_something_wrote(
    paths: AppPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Journal(paths) as journal, Journal(paths) as cli:
        authority = ServerAuthority(journal, None, headless=True)
        assert authority.pauses() == 0
        reads: list[int] = []
        counted = journal.pause_count
        monkeypatch.setattr(journal, "pause_count", lambda: reads.append(1) or counted())
        assert [authority.pauses() for _ in range(5)] == [0] * 5
        assert reads == [], "read again with nothing written"
        cli.set_paused(True)
        cli.set_paused(False)  # a pause and a resume: no longer paused, but counted
        assert not authority.paused() and authority.pauses() == 1
        assert reads == [1]
        # Not headless (a `serve` that looks for its tray) or bound to one: the tray's count alone.
        assert ServerAuthority(journal, None, headless=False).pauses() == 0


@pytest.mark.anyio
async def test_a_command_judged_through_a_pause_and_a_resume_is_refused_headless(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The person pauses and resumes (another process: its own connection) while a headless server
    judges a command: it is refused, and recorded as refused for the pause; the next one runs."""
    paths = AppPaths.from_environment({"COWORK_TERMINAL_HOME": str(home)})
    judged, mark = admission.classify, tmp_path / "ran"

    def pause_and_resume_meanwhile(command: str, **how: Any) -> Any:
        if "through a pause" in command:
            with Journal(paths) as cli:
                cli.set_paused(True)
                cli.set_paused(False)
        return judged(command, **how)

    monkeypatch.setattr(admission, "classify", pause_and_resume_meanwhile)
    async with serving(home) as client:
        refused = await client.call_tool("execute_command", {"command": f"echo through a pause > {mark}"})
        after = await client.call_tool("execute_command", {"command": "echo after the resume"})
    assert refused.is_error and PAUSED_MESSAGE in text_of(refused), text_of(refused)
    assert not mark.exists()
    assert not after.is_error and "after the resume" in text_of(after), text_of(after)
    with Journal(paths) as journal:
        rows = {row.command: (row.status, row.reason) for row in journal.recent_commands(limit=5)}
    assert rows[f"echo through a pause > {mark}"] == (Status.REFUSED, PAUSED_MESSAGE)


# -- the pause backstop ----------------------------------------------------------------------------


@bwrap
@pytest.mark.anyio
async def test_a_pause_ends_a_headless_command_while_the_servers_loop_is_held_up(home: Path, tmp_path: Path) -> None:
    """`cowork-terminal pause` (the journal and its pause file) while the headless server's event loop
    is held up: its watch cannot stop the command, and the backstop's thread ends it PAUSE_BACKSTOP_S
    after the pause was written."""
    paths = AppPaths.from_environment({"COWORK_TERMINAL_HOME": str(home)})
    ticks = tmp_path / "tick"
    command = f"while :; do date +%s.%N > {ticks}; sleep 0.05; done"
    results: list[CallToolResult] = []

    def pause() -> None:
        with Journal(paths) as cli:
            cli.set_paused(True)

    async with serving(home) as client:

        async def run() -> None:
            results.append(await client.call_tool("execute_command", {"command": command, "timeout": 60_000}))

        async with anyio.create_task_group() as group:
            group.start_soon(run)
            assert await came(lambda: last_tick(ticks) > 0)
            paused_at = time.time()
            threading.Thread(target=pause, daemon=True).start()
            time.sleep(PAUSE_BACKSTOP_S + 2.0)  # the loop that runs the command, held up (blocking on purpose)
            still = last_tick(ticks)
            await anyio.sleep(0.5)
            assert last_tick(ticks) == still, "the command still ran"
        assert still < paused_at + PAUSE_BACKSTOP_S + 0.4, f"it ran on {still - paused_at:.2f} s after the pause"
    [result] = results
    assert result.is_error or "stopped because the user paused host access" in text_of(result), result


@bwrap
@pytest.mark.anyio
async def test_the_backstop_thread_lives_only_while_a_command_may_run(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(running, "BACKSTOP_IDLE_S", 0.2)  # it lingers 30 s for the next call otherwise

    def backstops() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name == "pause backstop" and t.is_alive()]

    # A container of this process that outlived its command counts as running for any server here
    # (start_files.lingering): one an earlier test of this worker left is ended first.
    start_files.end_lingering()
    assert await came(lambda: not start_files.lingering(), 20.0), "a container an earlier test left lives on"
    assert not backstops()
    async with serving(home) as client:
        job = await client.call_tool("execute_command", {"command": "sleep 1", "background": True})
        assert not job.is_error, job
        assert len(backstops()) == 1
        await client.call_tool("command_wait", {"jobId": json.loads(text_of(job))["jobId"]})
        # About 0.3 s even beside two CPU hogs; 20 s for a loaded CI worker.
        gone = await came(lambda: not backstops(), 20.0)
        assert gone, f"it outlived its command (a container lingers: {start_files.lingering()})"


@bwrap
@pytest.mark.anyio
async def test_a_servers_backstop_ends_with_it_and_spares_a_later_servers_commands(home: Path, tmp_path: Path) -> None:
    """A server paused and closed before its backstop's time: the backstop ends with it, so that the
    commands of a server that follows it in the same process (tests; the tray's runners have the
    hub's) are not ended for a pause that is not theirs."""
    paths = AppPaths.from_environment({"COWORK_TERMINAL_HOME": str(home)})
    async with serving(home) as client:
        job = await client.call_tool("execute_command", {"command": "sleep 20", "background": True})
        assert not job.is_error, job
        with Journal(paths) as cli:
            cli.set_paused(True)
    async with serving(tmp_path / "other-home") as client:
        started = await client.call_tool("execute_command", {"command": "sleep 2; echo lived", "background": True})
        done = await client.call_tool("command_wait", {"jobId": json.loads(text_of(started))["jobId"]})
    assert "lived" in text_of(done), text_of(done)


def test_a_refusal_budget_writes_a_burst_then_one_a_second_and_says_what_it_left() -> None:
    from app.core.journal.refusals import REFUSALS_BURST, RefusalBudget

    budget = RefusalBudget("a server")
    assert all(budget.allows(100.0) for _ in range(REFUSALS_BURST))
    assert not budget.allows(100.0) and not budget.allows(100.5)
    assert budget.allows(101.6), "a second later, one more"
    assert not budget.allows(101.6)


@pytest.mark.anyio
async def test_a_headless_servers_flood_of_refused_calls_is_written_within_its_budget(home: Path) -> None:
    """A review, 2026-12-06: the budget was the tray's alone; a headless server wrote every refusal."""
    import sqlite3

    from app.core.journal.refusals import REFUSALS_BURST

    paths = AppPaths.from_environment({"COWORK_TERMINAL_HOME": str(home)})
    async with serving(home) as client:
        for _ in range(REFUSALS_BURST + 60):
            refused = await client.call_tool("execute_command", {"command": "true", "cwd": "/no/such/folder"})
            assert refused.is_error, refused
    with sqlite3.connect(paths.journal) as db:
        [(rows,)] = db.execute("SELECT COUNT(*) FROM commands WHERE status = 'refused'").fetchall()
    db.close()
    assert REFUSALS_BURST <= rows < REFUSALS_BURST + 30, rows


@bwrap
@pytest.mark.anyio
async def test_a_container_probe_that_times_out_refuses_the_command_and_never_runs_it_unprotected(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A probe that did not end in time was taken for "bwrap failed", and that server then ran every
    command unprotected (the tenth red team reached it with 2,800 socket files; a command that loads
    the computer as a server starts might). Now the command is refused, nothing runs, and the next one
    probes again."""
    from app.core.execution import container

    container.container_for.cache_clear()
    monkeypatch.setattr(container, "PROBE_TIMEOUT_S", 0.0001)  # the computer far too busy for bwrap
    made = tmp_path / "ran"
    try:
        async with serving(home) as client:
            refused = await client.call_tool("execute_command", {"command": f"touch {made}"})
            monkeypatch.setattr(container, "PROBE_TIMEOUT_S", 10.0)
            ran = await client.call_tool("execute_command", {"command": "readlink /proc/self/ns/pid"})
    finally:
        container.container_for.cache_clear()
    assert refused.is_error and "could not start its protective container in time" in text_of(refused), refused
    assert not made.exists(), "nothing ran, unprotected or not"
    assert not ran.is_error and os.readlink("/proc/self/ns/pid") not in text_of(ran), "probed again: contained"
