"""A red team, 2026-12-06 (eleventh, chaos): what a person's real computer does to the app (a tray
stopped or killed, a server's client gone). Each test fails today because the defect it names is
real; its docstring says what it does and what went wrong."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from app.core.paths import HOME_ENV, AppPaths
from tests.stdio_client import FIRST_CALL_DEADLINE_S, STOP_DEADLINE_S, connect, run, running_with
from tests.test_authority import click_allow_when_held, wait_until_held
from tests.tray_process import running_tray

pytestmark = [pytest.mark.anyio]

STALL_S = 8.0  # longer than the tray link's ACK_TIMEOUT_S (5 s)


async def wait_until_bound(client) -> None:
    """A server started with a tray runs its first call there (the tray loads its runners first)."""
    deadline = time.monotonic() + FIRST_CALL_DEADLINE_S
    while "error" in await run(client, {"command": "true"}):
        if time.monotonic() > deadline:
            raise AssertionError("the server never ran a call through the tray")
        await anyio.sleep(0.1)


def rows_with(paths: AppPaths, text: str) -> list[tuple[int, str]]:
    with contextlib.closing(sqlite3.connect(paths.journal)) as db:
        return db.execute("SELECT id, status FROM commands WHERE command LIKE ?", (f"%{text}%",)).fetchall()


async def test_a_call_sent_while_the_tray_is_stopped_is_said_not_taken_then_runs_when_it_continues(
    home: Path, paths: AppPaths, tmp_path: Path
) -> None:
    """A tray-bound `serve` runs one call through a real tray; the tray is then stopped (SIGSTOP: a
    laptop's suspend of one process, a debugger, a swap storm) for 8 s, during which the model calls
    `echo ran >> FILE`. After 5 s (`tray_link.ACK_TIMEOUT_S`) the server answers the call with
    "the Cowork Terminal app did not take this call (... did not answer within 5 s). Try again in a
    moment." (`forwarding.forward`, LinkRefused from `TrayLink.request_async`). But the `call` frame
    had already been written into the socket: when the tray continues it reads it, journals it and
    runs the command, whose result nobody reads (`link.calls` forgot it, no `call_cancel` was sent).
    The model, told it was not taken, sends it again: the command runs twice. What should happen:
    a call the model is told was not taken never runs (or the model is told it may have run)."""
    target = tmp_path / "ran.txt"
    async with connect(home, headless=False) as agent:
        with running_tray(home) as tray:
            await wait_until_bound(agent)
            answer: dict = {}

            async def call() -> None:
                answer.update(await run(agent, {"command": f"echo ran >> {target}"}))

            tray.send_signal(signal.SIGSTOP)
            try:
                async with anyio.create_task_group() as group:
                    group.start_soon(call)
                    await anyio.sleep(STALL_S)
                    tray.send_signal(signal.SIGCONT)
            finally:
                tray.send_signal(signal.SIGCONT)
            # The tray records the end as it sends the result: read once it has (a loaded machine
            # read the row still running as the answer arrived).
            deadline = time.monotonic() + STOP_DEADLINE_S
            while (rows := rows_with(paths, str(target))) and rows[-1][1] == "running" and time.monotonic() < deadline:
                await anyio.sleep(0.05)
    said = json.dumps(answer)
    # Now: the call waits for the stalled tray and gets the command's own result, once.
    assert answer.get("exitCode") == 0, f"told {said!r} (journal rows {rows})"
    assert target.read_text() == "ran\n", f"told {said!r}; the file holds {target.read_text()!r}"
    assert [status for _id, status in rows] == ["finished"], rows


def cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, HOME_ENV: str(home)}
    return subprocess.run([sys.executable, "-m", "app", *args], env=env, capture_output=True, text=True, timeout=300)


async def test_a_pause_asked_while_the_tray_is_stalled_says_paused_but_the_tray_never_pauses(
    home: Path, paths: AppPaths
) -> None:
    """A tray-bound `serve` leaves a job running in a real tray (`sleep 66.5`, patience 2 s). The
    tray then stalls (SIGSTOP here; a swap storm or a long hold of the hub's lock does the same past
    2 s), and the person runs `cowork-terminal pause`. The CLI's hello gets no answer within
    `client.HELLO_TIMEOUT_S` (2 s), so `request_change` takes the tray for absent (NoTray) and writes
    the pause into the journal and the pause file itself, then prints "Host access is PAUSED: new
    commands are refused." and exits 0 (`status` says PAUSED too). But the tray is alive and holds
    its lock: once it continues it never reads that pause (it is the authority and reads no control
    back from the journal), its state says `paused: False`, the job's sleep runs on, the model's next
    command runs, and `status` says "Host access: on" again. What should happen: the pause the CLI
    reports takes effect (or the CLI says the tray did not answer and nothing is paused)."""
    async with connect(home, headless=False, env={"COWORK_TERMINAL_PATIENCE_S": "2"}) as agent:
        with running_tray(home) as tray:
            await wait_until_bound(agent)
            job = await run(agent, {"command": "sleep 66.5; echo done"})
            assert job.get("status") == "running", job
            tray.send_signal(signal.SIGSTOP)
            try:
                paused = cli(home, "pause")
            finally:
                tray.send_signal(signal.SIGCONT)
            await anyio.sleep(STOP_DEADLINE_S / 2)  # a pause ends a job in well under a second
            after = await run(agent, {"command": "echo ran after the pause"})
            left = running_with("sleep 66.5")
    print(paused.stdout, paused.stderr, after, left)
    assert paused.returncode == 0 and "PAUSED" in paused.stdout, paused  # what the person was told
    assert "error" in after and "paused" in after["error"].lower(), f"told {paused.stdout!r}, yet {after}"
    assert not left, f"told {paused.stdout!r}, yet the job still runs: pids {left}"


def all_commands(paths: AppPaths) -> list[tuple[int, str, str]] | None:
    if not paths.journal.exists():
        return None
    with contextlib.closing(sqlite3.connect(paths.journal)) as db:
        return db.execute("SELECT id, status, command FROM commands").fetchall()


async def test_a_headless_server_whose_journal_was_deleted_records_nothing_and_misses_the_persons_tightening(
    home: Path, paths: AppPaths
) -> None:
    """A headless `serve` (no tray) runs `echo one`. Then the journal is deleted (`journal.sqlite3`
    and its -wal/-shm: a cleaner, the person, a command outside the container). The server goes on
    writing its rows into the deleted file through its open connection: `echo two` runs and no
    journal exists at all (`ServerAuthority._repair_damage` -> `DamageWatch.damage` ->
    `damage_on_disk` returns None for a missing file, "told elsewhere", and nobody tells). The
    person then runs `cowork-terminal approval-mode all` (a tightening, allowed with no tray): the
    CLI says "Settings changed. Ask before every command", writing a new journal, and `status`
    lists "Live servers: none" and 0 commands. The server still reads its settings from the
    deleted file: the model's `echo three` runs without asking, and is not recorded either. What
    should happen (as the tray does, `Hub.renew_journal_if_gone`): the server notices the file is
    gone before the next row, starts the journal anew, records its commands there, and follows the
    person's settings in it."""
    async with connect(home, headless=True) as agent:
        assert (await run(agent, {"command": "echo one"})).get("exitCode") == 0
        for file in paths.journal.parent.glob(paths.journal.name + "*"):
            file.unlink()
        two = await run(agent, {"command": "echo two"})
        rows_after_two = all_commands(paths)
        tightened = cli(home, "approval-mode", "all")
        assert tightened.returncode == 0 and "Ask before every command" in tightened.stdout, tightened
        await anyio.sleep(1.0)
        three = await run(agent, {"command": "echo three"})
        rows = all_commands(paths)
    print(two, rows_after_two, three, rows)
    assert "error" in three, f"the person asked to approve every command, yet `echo three` ran unasked: {three}"
    assert rows and any("echo two" in command for _, _, command in rows), f"`echo two` ran ({two}) unrecorded: {rows}"
    # Now: the server notices the file is gone before `echo two`'s row, opens a new journal (the one
    # the CLI then writes into), records `echo two` there as refused and tells the model to send it
    # again, judged under the new journal's settings.
    assert "Run the command again" in two.get("error", ""), two
    assert rows_after_two and [(status, command) for _, status, command in rows_after_two] == [("refused", "echo two")]


@contextlib.contextmanager
def small_disk(folder: Path, size: str) -> Iterator[Path]:
    """A tmpfs of `size` at `folder` (root only), unmounted at the end whatever happened."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], check=True)
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def job_row(paths: AppPaths, job_id: int) -> tuple[str, int | None, str | None]:
    with contextlib.closing(sqlite3.connect(paths.journal)) as db:
        return db.execute("SELECT status, exit_code, reason FROM commands WHERE id = ?", (job_id,)).fetchone()


@pytest.mark.skipif(os.geteuid() != 0, reason="mounts a small tmpfs")
async def test_a_job_that_finished_on_a_full_disk_is_recorded_interrupted_once_space_is_back(tmp_path: Path) -> None:
    """A headless `serve` whose data folder is on a 3 MB disk starts a job (`sleep 3; echo done`,
    patience 2 s, so it outlives its call). The disk then fills up (another program); the job ends
    with exit code 0 and `command_wait` gives the model its output, while its end cannot be written
    (serve logs "command #2 ended (finished) but the journal could not record it"). Space is freed
    and the next command runs and is recorded: the job's row still says `running`. When the server
    ends, the row is closed as `interrupted`, "the server exited while it ran or waited": the record
    says a command that finished with 0 was cut short. The tray keeps such ends and writes them once
    it can (`Record.unwritten_ends`); a headless server (`ServerAuthority.finished`/the service's
    end of a job) drops them. What should happen: the row ends `finished`, exit code 0."""
    with small_disk(tmp_path / "small", "3m") as disk:
        home = disk / "home"
        paths = AppPaths.from_environment({HOME_ENV: str(home)})
        async with connect(home, headless=True, env={"COWORK_TERMINAL_PATIENCE_S": "2"}) as agent:
            job = await run(agent, {"command": "sleep 3; echo done"})
            assert job.get("status") == "running", job
            filler = disk / "fill"
            subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=4k"], capture_output=True, check=False)
            waited: dict = {}
            while waited.get("status", "running") == "running":
                answer = await agent.call_tool("command_wait", {"jobId": job["jobId"]})
                waited = json.loads(answer.content[0].text)
            assert waited["exitCode"] == 0 and waited["stdout"] == "done\n", waited  # the model's answer
            filler.unlink()
            after = await run(agent, {"command": "echo space is back"})
            assert after.get("exitCode") == 0, after
            while_live = job_row(paths, job["jobId"])
        at_end = job_row(paths, job["jobId"])
    print(while_live, at_end)
    assert at_end[:2] == ("finished", 0), f"the job finished with 0, the journal says {at_end} (live: {while_live})"


@pytest.mark.skipif(os.geteuid() != 0, reason="mounts a small tmpfs")
async def test_the_tray_drops_the_end_of_a_job_that_finished_on_a_full_disk(tmp_path: Path) -> None:
    """The same with a real tray whose data folder is on an 8 MB disk: a tray-bound `serve` starts a
    job (`sleep 3; echo done`, patience 2 s); the disk fills up; the job ends with 0 and the model
    reads it through `command_wait`. The tray is built to keep such an end and write it once the
    file takes writes again (`Record.finish` -> `unwritten_ends`, `write_unwritten`), but
    `Journal.finish_command` (`CommandsTable.finish_command`) catches the full disk's
    DataFolderError itself and only logs it ("command #2 ended (finished) but the journal could not
    record it"), so `Record.finish` sees success and forgets the end. Space is freed, the next
    command is recorded, and 2 s later the job's row still says `running`; when the tray quits it
    becomes `interrupted`, "the server exited while it ran or waited". What should happen: the row
    ends `finished` with exit code 0 once there is room."""
    with small_disk(tmp_path / "small", "8m") as disk:
        home = disk / "home"
        paths = AppPaths.from_environment({HOME_ENV: str(home)})
        async with connect(home, headless=False, env={"COWORK_TERMINAL_PATIENCE_S": "2"}) as agent:
            with running_tray(home, log=tmp_path / "tray.log"):
                await wait_until_bound(agent)
                job = await run(agent, {"command": "sleep 3; echo done"})
                assert job.get("status") == "running", job
                filler = disk / "fill"
                subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=4k"], capture_output=True, check=False)
                waited: dict = {}
                while waited.get("status", "running") == "running":
                    answer = await agent.call_tool("command_wait", {"jobId": job["jobId"]})
                    waited = json.loads(answer.content[0].text)
                assert waited["exitCode"] == 0 and waited["stdout"] == "done\n", waited
                filler.unlink()
                after = await run(agent, {"command": "echo space is back"})
                assert after.get("exitCode") == 0, after
                await anyio.sleep(2.0)
                while_live = job_row(paths, job["jobId"])
        at_end = job_row(paths, job["jobId"])
    print(while_live, at_end)
    assert while_live[:2] == ("finished", 0), f"the job finished with 0, the live tray's journal says {while_live}"
    assert at_end[:2] == ("finished", 0), f"the job finished with 0, the journal says {at_end}"


async def test_a_journal_deleted_under_the_tray_leaves_a_running_job_without_a_row(home: Path, paths: AppPaths) -> None:
    """A tray-bound `serve` leaves a job running in a real tray (`sleep 60.5`, patience 2 s). The
    journal is deleted (`journal.sqlite3` and its -wal/-shm). The tray's monitor notices and starts a
    new journal (`Hub.reopen_journal`): it writes back the settings, the rules and a row for each
    live server, but none for the commands its servers still run or hold (`peer.commands`,
    `peer.waiting`; only their ids go into the floor). The job runs on for a minute with no row at
    all: the log window and `cowork-terminal` (which read the journal) show nothing running, so the
    person can neither see it nor Stop it there, and its end, when it comes, updates no row. What
    should happen: the new journal holds a `running` row for every command still running (and a
    `waiting` one for every hold)."""
    async with connect(home, headless=False, env={"COWORK_TERMINAL_PATIENCE_S": "2"}) as agent:
        with running_tray(home):
            await wait_until_bound(agent)
            job = await run(agent, {"command": "sleep 60.5; echo done"})
            assert job.get("status") == "running", job
            for file in paths.journal.parent.glob(paths.journal.name + "*"):
                file.unlink()
            deadline = time.monotonic() + STOP_DEADLINE_S
            while all_commands(paths) is None and time.monotonic() < deadline:
                await anyio.sleep(0.1)
            await anyio.sleep(1.0)  # the monitor's renewal has written what it writes
            rows = all_commands(paths)
            still = running_with("sleep 60.5")
            await agent.call_tool("command_stop", {"jobId": job["jobId"]})
    print(rows, still)
    assert rows is not None, "the tray started no new journal"
    assert still, "the job was meant to run on"
    assert any(row_id == job["jobId"] and status == "running" for row_id, status, _ in rows), (
        f"job {job['jobId']} runs (pids {still}), yet the new journal has no row of it: {rows}"
    )


@pytest.mark.gui
async def test_a_command_held_when_the_journal_was_deleted_runs_on_allow_and_is_never_recorded(
    home: Path, paths: AppPaths, tmp_path: Path, display: str
) -> None:
    """A tray-bound `serve` sends `rm -rf VICTIM/*`; a real tray (Xvfb) holds it for approval (its
    row says `waiting`). While it is held the journal is deleted; the tray starts a new one
    (`Hub.reopen_journal`) without the held command's row. The person clicks Allow in the prompt: the
    rm runs (VICTIM is emptied), the model reads exit code 0, and the journal holds no row of it at
    all, then or later: the `started` and `finish` updates of a row that is not there change
    nothing and are acknowledged (`Record`/`CommandsTable.mark_started`, `finish_command`). The rule
    "a journal row is written before a command starts" is broken for a destructive command a person
    allowed. What should happen: the new journal gets the hold's row back (or the Allow is refused
    because the command cannot be recorded)."""
    victim = tmp_path / "victim"
    (victim / "sub").mkdir(parents=True)
    answer: dict = {}
    async with connect(home, headless=False) as agent:
        with running_tray(home, display=display):
            await wait_until_bound(agent)

            async def call() -> None:
                answer.update(await run(agent, {"command": f"rm -rf {victim}/*"}))

            async with anyio.create_task_group() as group:
                group.start_soon(call)
                await wait_until_held(paths)
                for file in paths.journal.parent.glob(paths.journal.name + "*"):
                    file.unlink()
                deadline = time.monotonic() + STOP_DEADLINE_S
                while all_commands(paths) is None and time.monotonic() < deadline:
                    await anyio.sleep(0.1)
                await anyio.sleep(1.0)  # the monitor's renewal has written what it writes
                await click_allow_when_held(paths, display)
            await anyio.sleep(1.0)
            rows = all_commands(paths)
    print(answer, rows)
    assert answer.get("exitCode") == 0 and not any(victim.iterdir()), f"the allowed rm was meant to run: {answer}"
    assert rows and any(f"rm -rf {victim}/*" in command for _, _, command in rows), (
        f"the allowed `rm -rf` ran (job {answer.get('jobId')}), yet no journal row records it: {rows}"
    )
