"""A red team, 2026-12-06 (ninth, I): the order and time of holds, late Allows, pauses, jobs and stops,
through a tray-bound server's tools (a real MCP client, a real hub, commands in real bash in the real
container). Each test fails while the attack it describes works."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp_types import CallToolResult, TextContent

from app.core.authority.hub import Hub
from app.core.commands.pins import HASH_LIMIT_BYTES
from app.core.messages import PROMPT_DECIDED_BY
from tests.in_process_server import held_by, serving

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("bwrap") is None, reason="bwrap (Linux)"),
]


def text_of(result: CallToolResult) -> str:
    [content] = result.content
    assert isinstance(content, TextContent)
    return content.text


def said(result: CallToolResult) -> dict[str, object]:
    text = text_of(result)
    return {"error": text} if result.is_error else json.loads(text)


def stamps(path: Path) -> list[float]:
    try:
        return [float(line) for line in path.read_text().split()]
    except (OSError, ValueError):
        return []


# A command the classifier takes about a second to judge (96 KB of pipelines bash never reaches: they
# are judged, as every word is, but `||` after a `date` that succeeds skips them), and that only
# appends a time stamp to a file of the test's: moderate, so it runs unasked in the default mode.
PIPELINE = " | ".join("grep -v x" for _ in range(1000))
SLOW_TO_JUDGE = "date +%s.%N >> MARK || { " + "; ".join([PIPELINE] * 8) + "; }"


async def test_commands_sent_before_a_pause_do_not_run_after_the_resume(home: Path, hub: Hub, tmp_path: Path) -> None:
    """The attack: the model sends eight long commands at once (`background: true`), each ~96 KB and so
    judged on the worker thread, one at a time (`admission.judged_alone`). The person pauses host access
    half a second later (the first is being judged, the others wait their turn), and resumes 2.5 s later.
    A pause refuses new calls and ends what runs, and a hold made before a pause never runs after it
    (the link counts pauses); but a command that was still being judged is not a hold and is not running:
    nothing ties it to the pause. Its row is asked for after the resume, the hub finds nothing paused,
    and it runs. What it achieved: commands sent before the pause ran after the resume, with no new call
    (each appended its time stamp, later than the resume, to its file)."""
    marks = [tmp_path / f"mark{i}" for i in range(8)]
    results: list[CallToolResult] = []

    async def send(client: Client, mark: Path) -> None:
        command = SLOW_TO_JUDGE.replace("MARK", str(mark))
        results.append(await client.call_tool("execute_command", {"command": command, "background": True}))

    async with serving(home, bound=True) as client:
        async with anyio.create_task_group() as group:
            for mark in marks:
                group.start_soon(send, client, mark)
            await anyio.sleep(0.5)  # every call is in: the first is being judged, the others wait
            await anyio.to_thread.run_sync(hub.set_paused, True)  # the person's click on Pause
            paused_at = time.time()
            await anyio.sleep(2.5)
            await anyio.to_thread.run_sync(hub.set_paused, False)  # the person's click on Resume
            resumed_at = time.time()
        for result in results:  # what was let through runs to its end
            job = said(result).get("jobId")
            if job is not None:
                await client.call_tool("command_wait", {"jobId": job})
    after = {mark.name: [t for t in stamps(mark) if t >= resumed_at] for mark in marks}
    during = {mark.name: [t for t in stamps(mark) if paused_at <= t < resumed_at] for mark in marks}
    assert not any(during.values()), during
    assert not any(after.values()), (
        f"commands sent before the pause ran after the resume: {after}; results: {[said(r) for r in results]}"
    )


async def test_a_command_allowed_just_before_a_pause_does_not_run_after_the_resume(
    home: Path, hub: Hub, tmp_path: Path
) -> None:
    """The attack: the model sends a command that waits for the user (`background: true`), naming 64
    files of 64 MB less a byte (sparse: no disk space) as scripts bash runs after an `exit` it never
    passes. Every one is pinned by its content's hash, so the check that nothing changed between the
    Allow and the start (`pins.changed_since`, in `admission.Holds._starting`) hashes 4 GB: some 2-3 s
    here. The person clicks Allow, thinks better of it and pauses 0.3 s later (a pause refuses a held
    command "also one the user had allowed that had not started"), then resumes. The pause count is
    compared before that check (`_wait_and_run`), and the tray's `started` refuses only while paused;
    nothing looks at the count again. What it achieved: the command allowed before the pause ran after
    the resume (its time stamp is later than the resume)."""
    folder, mark = tmp_path / "project", tmp_path / "mark"
    folder.mkdir()
    for index in range(64):
        with open(folder / f"s{index}.sh", "wb") as script:
            script.truncate(HASH_LIMIT_BYTES - 1)  # the largest size still hashed whole
    command = f"date +%s.%N >> {mark}; exit 0; " + "; ".join(f"bash s{index}.sh" for index in range(64))
    async with serving(home, bound=True) as client:
        job = said(
            await client.call_tool("execute_command", {"command": command, "cwd": str(folder), "background": True})
        )
        assert job.get("status") == "waiting", job
        [held] = await held_by(hub, seconds=60)
        hub.seen(held.command_id)  # the prompt shows it
        assert hub.decide(held.command_id, allowed=True, by=PROMPT_DECIDED_BY)  # the person's Allow
        await anyio.sleep(0.3)  # the server has the Allow: it checks that nothing changed (2-3 s)
        await anyio.to_thread.run_sync(hub.set_paused, True)  # meanwhile, the person's Pause
        await anyio.sleep(0.5)
        await anyio.to_thread.run_sync(hub.set_paused, False)  # and Resume
        resumed_at = time.time()
        ended = said(await client.call_tool("command_wait", {"jobId": job["jobId"]}))
    ran_after = [stamp for stamp in stamps(mark) if stamp >= resumed_at]
    assert not ran_after, (
        f"the command allowed before the pause ran {ran_after[0] - resumed_at:.2f} s after it: {ended}"
    )


def lines_in(path: Path) -> int:
    try:
        return path.read_text().count("\n")
    except OSError:
        return 0


async def test_a_job_left_while_protection_was_off_cannot_write_a_protected_file_once_it_is_on(
    home: Path, hub: Hub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attack: while the person has "Protect my settings from commands" switched off (their click),
    the model runs a command that leaves a job behind (`nohup sh -c 'while :; do ... >> ~/.bashrc ...' &`)
    and returns at once. The person switches the protection on again (a tightening). Commands run from
    then on are in the container, and the session's shell is started anew; but the job of the finished
    command runs on outside any container (nothing but a pause or the app's quit ends it): a protected
    start-up file keeps being written. What it achieved: `~/.bashrc` was written by the agent's job
    seconds after the person switched the protection on."""
    user = tmp_path / "user"
    user.mkdir()
    monkeypatch.setenv("HOME", str(user))
    bashrc = user / ".bashrc"
    bashrc.write_text("# the user's\n")
    hub.set_settings(container=False)  # the person's click in the menu
    job = 'while :; do echo "# the job" >> "$HOME/.bashrc"; sleep 0.1; done'
    command = f"nohup sh -c '{job}' >/dev/null 2>&1 &"
    async with serving(home, bound=True) as client:
        try:
            written = await left_job_writes_after_protection_is_on(client, hub, command, user, bashrc)
        finally:
            hub.set_paused(True)  # the test's own clean-up: a pause ends the job
    assert written == 0, f"the job wrote ~/.bashrc {written} times in the second after protection was switched on"


async def left_job_writes_after_protection_is_on(
    client: Client, hub: Hub, command: str, user: Path, bashrc: Path
) -> int:
    """Run `command` (protection off), wait for its job to write `bashrc`, switch protection on; how many
    lines the job writes between 1.5 and 2.5 s after that."""
    result = said(await client.call_tool("execute_command", {"command": command, "cwd": str(user)}))
    if result.get("status") == "waiting":  # asked or not, the person allows it: protection is off
        [held] = await held_by(hub)
        hub.seen(held.command_id)
        assert hub.decide(held.command_id, allowed=True, by=PROMPT_DECIDED_BY)
        result = said(await client.call_tool("command_wait", {"jobId": result["jobId"]}))
    assert result.get("status") == "finished", result
    with anyio.fail_after(10):
        while lines_in(bashrc) < 3:
            await anyio.sleep(0.05)
    hub.set_settings(container=True)  # the person switches the protection on again
    await anyio.sleep(1.5)  # whatever the app does about it, done by now
    counted = lines_in(bashrc)
    await anyio.sleep(1.0)
    return lines_in(bashrc) - counted


def processes_naming(marker: str) -> list[int]:
    """The pids of processes whose command line holds `marker` (the test's own, unique to it)."""
    found = []
    for entry in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker.encode() in entry.read_bytes():
                found.append(int(entry.parent.name))
        except OSError:
            continue
    return found


async def test_a_pause_ends_an_uncontained_job_whose_server_has_gone(
    home: Path, hub: Hub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attack: where no container runs a command (the person switched the protection off here; so
    too on Linux without bubblewrap), the model leaves a job (`nohup sh -c 'while :; ...' &`, which keeps
    its process group and its mark), and its client then ends (the Claude session closes). The tray's
    runner for that server closes within a second: its jobs ended, it counts as idle. The person then
    pauses host access, which stops "the background jobs of finished ones" "within a second" (README),
    by each runner's sweep of the processes carrying its mark (`Runs.apply_user_stops`: with the runner
    still there, the same job is ended); but the runner that started the job is gone,
    and the hub's own sweep ends containers only (`start_files.end_lingering`, `end_commands`). What it
    achieved: the agent's job went on writing after the pause."""
    loop = tmp_path / "loop"
    job = f'while :; do date +%s.%N >> "{loop}"; sleep 0.1; done'
    hub.set_settings(container=False)  # the person's click in the menu
    try:
        async with serving(home, bound=True) as client:
            command = f"nohup sh -c '{job}' >/dev/null 2>&1 &"
            result = said(await client.call_tool("execute_command", {"command": command, "cwd": str(tmp_path)}))
            assert result.get("status") == "finished", result
        await anyio.sleep(3.0)  # its server has left: the runner is closed (reaped each second)
        assert stamps(loop), "the job runs"
        await anyio.to_thread.run_sync(hub.set_paused, True)  # the person's click on Pause
        await anyio.sleep(2.0)  # a pause ends what commands left within a second
        paused_at = time.time()
        await anyio.sleep(1.0)
        after = [stamp for stamp in stamps(loop) if stamp >= paused_at]
    finally:
        for pid in processes_naming(str(loop)):  # the test's own clean-up, by pid
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert not after, f"the job wrote {len(after)} times 2-3 s after the pause"
