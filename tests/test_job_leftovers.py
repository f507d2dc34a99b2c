"""Three leftovers of the job tools a review named: another server's job shown from the journal's
copies past the output budget; a killed headless server's commands running on until someone else
starts; and command_output's offsets meaning other bytes once a write to the outputs folder failed.

Servers in this process (tests/in_process_server.py) where only the tools matter; a real `serve`
process (tests/stdio_client.py) where it must be killed."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from app.core.commands.jobs import JoinedOutput
from app.core.execution import container, orphans
from app.core.execution.output import CommandOutput, OutputBudget, set_output_budget
from app.core.execution.output_files import OutputSpool
from app.core.journal.store import Journal
from app.core.paths import AppPaths
from tests.small_disk import small_tmpfs
from tests.stdio_client import STOP_DEADLINE_S, running_with
from tests.test_jobs import COWORK, SHORT_PATIENCE, call, client_named, named_here, wait_until_finished

pytestmark = pytest.mark.anyio

SMALL_BUDGET = 2_000


def escaped(text: str) -> int:
    """The characters `text` takes in the JSON text the model reads."""
    return len(json.dumps(text, ensure_ascii=False)) - 2


def set_budget(paths: AppPaths, chars: int) -> None:
    with Journal(paths) as journal:
        set_output_budget(journal, OutputBudget(chars))


MARKER = re.compile(r"\[\.\.\. ([\d,]+) bytes of (stdout|stderr) left out here; ([^\]]*) \.\.\.\]\n")


def read_on(said: str) -> int:
    """The offset a marker tells the model to read on from."""
    found = re.search(r"with command_output with jobId \d+ and offset (\d+)", said)
    assert found is not None, said
    return int(found.group(1))


# -- 1. another server's job: the journal's copies within the budget -------------------------------------


async def test_another_servers_job_is_shown_within_the_budget_and_each_marker_says_where_to_read_on(
    home: Path, paths: AppPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The journal keeps up to 8 KB of each stream; another server showed them whole, whatever the
    budget (2,000 characters at the least): 11 KB of lines here."""
    set_budget(paths, 100_000)  # the first server's output fits its budget: no output file is kept
    async with named_here(home, COWORK, monkeypatch) as first:
        done = await call(first, "execute_command", {"command": "seq 1 1500; seq 5001 6000 >&2"})
    assert done["status"] == "finished" and done["outputFile"] is None, done
    set_budget(paths, SMALL_BUDGET)
    async with named_here(home, COWORK, monkeypatch) as another:
        waited = await call(another, "command_wait", {"jobId": done["jobId"]})
        assert escaped(waited["stdout"]) + escaped(waited["stderr"]) <= SMALL_BUDGET, waited
        for stream, first_line, last_line in (("stdout", 1, 1500), ("stderr", 5001, 6000)):
            shown = waited[stream]
            assert shown.startswith(f"{first_line}\n") and shown.endswith(f"{last_line}\n"), shown
            marker = MARKER.search(shown)
            assert marker is not None and marker.group(2) == stream, shown
            last_shown = int(shown[: marker.start()].splitlines()[-1])
            rest = await call(
                another, "command_output", {"jobId": done["jobId"], "offset": read_on(shown), "limit": 30}
            )
            assert rest["output"].startswith(f"{last_shown + 1}\n"), (shown[: marker.end()], rest)


async def test_a_line_like_the_journals_own_cut_in_a_jobs_first_bytes_does_not_move_where_to_read_on(
    home: Path, paths: AppPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A review, 2026-12-05: the journal's cut was found as the first line that looked like it, so a
    command that printed one early shifted the offsets another server gave the model."""
    set_budget(paths, 100_000)
    command = "echo; echo '[... 5 bytes not kept in the journal ...]'; seq 1 3000"
    async with named_here(home, COWORK, monkeypatch) as first:
        done = await call(first, "execute_command", {"command": command})
    assert done["status"] == "finished" and done["outputFile"] is None, done
    set_budget(paths, SMALL_BUDGET)
    async with named_here(home, COWORK, monkeypatch) as another:
        shown = (await call(another, "command_wait", {"jobId": done["jobId"]}))["stdout"]
        assert shown.startswith("\n[... 5 bytes not kept in the journal ...]\n1\n"), shown  # the command's own line
        marker = MARKER.search(shown)
        assert marker is not None, shown
        last_shown = int(shown[: marker.start()].splitlines()[-1])
        rest = await call(another, "command_output", {"jobId": done["jobId"], "offset": read_on(shown), "limit": 30})
    assert rest["output"].startswith(f"{last_shown + 1}\n"), (shown[: marker.end()], rest)


async def test_another_servers_job_with_an_output_file_is_shown_within_the_budget_with_the_files_offset(
    home: Path, paths: AppPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """stdout alone, past the journal's 8 KB: the marker replaces the journal's own and names the offset
    in the output file where the left-out bytes start."""
    async with named_here(home, COWORK, monkeypatch) as first:
        started = await call(first, "execute_command", {"command": "seq 1 30000", "background": True})
        done = await wait_until_finished(first, started["jobId"])
    assert done["outputFile"], done
    set_budget(paths, SMALL_BUDGET)
    async with named_here(home, COWORK, monkeypatch) as another:
        waited = await call(another, "command_wait", {"jobId": started["jobId"]})
        shown = waited["stdout"]
        assert escaped(shown) + escaped(waited["stderr"]) <= SMALL_BUDGET, waited
        assert "not kept in the journal" not in shown, shown
        marker = MARKER.search(shown)
        assert marker is not None, shown
        last_shown = int(shown[: marker.start()].splitlines()[-1])
        first_after = int(shown[marker.end() :].splitlines()[0])
        left_out = len("".join(f"{n}\n" for n in range(last_shown + 1, first_after)).encode())
        assert marker.group(1) == f"{left_out:,}", shown
        rest = await call(another, "command_output", {"jobId": started["jobId"], "offset": read_on(shown), "limit": 30})
    assert rest["output"].startswith(f"{last_shown + 1}\n"), rest


# -- 2. a killed headless server: what it still ran ends with it ------------------------------------------


def pids_of(marker: str) -> list[int]:
    return running_with(marker)


async def test_a_killed_headless_servers_uncontained_commands_end_with_it_but_a_finished_ones_job_stays(
    home: Path, paths: AppPaths, tmp_path: Path
) -> None:
    """Without the container (no bwrap, or switched off) nothing ended them until the next server or
    tray started: a running job and the session's command ran on. In the container bwrap's
    --die-with-parent ends them (tests/test_server_stdio.py); a finished command's background job
    stays without one, as it does when its server ends any other way (orphans.py)."""
    running, session, left = (f"{n}{os.getpid() % 1000}.5" for n in (81, 82, 83))
    env = {**SHORT_PATIENCE, container.BWRAP_ENV: str(tmp_path / "no-bwrap")}
    try:
        async with client_named(home, COWORK, env) as client:
            finished = await call(client, "execute_command", {"command": f"sleep {left} >/dev/null 2>&1 &"})
            assert finished["status"] == "finished" and finished["exitCode"] == 0, finished
            job = await call(client, "execute_command", {"command": f"sleep {running}", "background": True})
            assert job["status"] == "running", job
            await call(client, "terminal_run", {"command": f"sleep {session}", "timeout": 500})
            with anyio.fail_after(STOP_DEADLINE_S):
                while not (pids_of(running) and pids_of(session) and pids_of(left)):
                    await anyio.sleep(0.05)
            with Journal(paths) as journal:
                server = journal.get_command(job["jobId"]).server_pid
            killed_at = time.monotonic()
            os.kill(server, signal.SIGKILL)
            while (pids_of(running) or pids_of(session)) and time.monotonic() - killed_at < STOP_DEADLINE_S:
                await anyio.sleep(0.05)
            gone_after = time.monotonic() - killed_at
            assert not pids_of(running) and not pids_of(session), "the server's commands outlived it"
            assert gone_after < 3.0, gone_after
            assert pids_of(left), "a finished command's background job is not the server's to end"
    finally:
        for pid in pids_of(left) + pids_of(running) + pids_of(session):
            os.kill(pid, signal.SIGKILL)


WATCHED = """
import os, subprocess, sys
from app.core.execution import orphans, process_marks
server = sys.argv[1]
orphans.watch_server(server)
def sleeper(what, seconds):
    env = {**os.environ, process_marks.MARK_ENV: f"{server}:{what}"}
    return subprocess.Popen(["sleep", seconds], env=env, start_new_session=True).pid
kept = sleeper(1, sys.argv[2])
orphans.leave_running(f"{server}:1")
for command in range(2, 2 + 3 * orphans.MAX_FINISHED_TOLD):
    orphans.leave_running(f"{server}:{command}")
doomed = sleeper(99999, sys.argv[3])
print(len(orphans._told), kept, doomed, flush=True)
sys.stdin.read()
"""


def test_the_watcher_forgets_finished_commands_that_left_nothing_and_still_spares_one_that_did() -> None:
    """Its list (and the watcher's own) grew by a line per uncontained command a headless server ran:
    the finished ones no process is left of are forgotten, the one whose job runs on is not."""
    kept_for, doomed_for = (f"{n}{os.getpid() % 1000}.7" for n in (84, 85))
    server = f"zz{os.getpid()}:watched"
    with subprocess.Popen(
        [sys.executable, "-c", WATCHED, server, kept_for, doomed_for], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    ) as process:
        try:
            assert process.stdout is not None
            told, kept, _doomed = (int(n) for n in process.stdout.readline().split())
            assert told <= 2 * orphans.MAX_FINISHED_TOLD, f"{told} lines kept for 769 commands finished"
            process.kill()
            deadline = time.monotonic() + STOP_DEADLINE_S
            while running_with(doomed_for) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not running_with(doomed_for), "the watcher no longer ends the server's running command"
            assert running_with(kept_for) == [kept], "a finished command's job was ended with its server"
        finally:
            for pid in running_with(kept_for) + running_with(doomed_for):
                os.kill(pid, signal.SIGKILL)


REWATCHED = """
import os, signal, subprocess, sys, time
from app.core.execution import orphans, process_marks
server = sys.argv[1]
orphans.watch_server(server)
pipe = f"pipe:[{os.fstat(orphans._watch_pipe).st_ino}]"
def reads_the_pipe(pid):
    try:
        return os.readlink(f"/proc/{pid}/fd/0") == pipe
    except OSError:  # a process that ended meanwhile
        return False
def gone(pid):
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:  # reaped
        return True
[watcher] = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid() and reads_the_pipe(p)]
os.kill(watcher, signal.SIGKILL)
while not gone(watcher):
    time.sleep(0.01)
env = {**os.environ, process_marks.MARK_ENV: f"{server}:7"}
doomed = subprocess.Popen(["sleep", sys.argv[2]], env=env, start_new_session=True).pid
orphans.leave_running(f"{server}:6")  # told to a watcher that is gone: a new one, told everything
print(watcher, doomed, flush=True)
sys.stdin.read()
"""


def test_a_watcher_killed_meanwhile_is_started_again_and_still_ends_the_servers_commands() -> None:
    """The next line told to a watcher that is gone starts a new one, told every line so far: the
    server's running command still ends with it."""
    doomed_for = f"86{os.getpid() % 1000}.7"
    server = f"zz{os.getpid()}:rewatched"
    with subprocess.Popen(
        [sys.executable, "-c", REWATCHED, server, doomed_for], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    ) as process:
        try:
            assert process.stdout is not None
            watcher, doomed = (int(n) for n in process.stdout.readline().split())
            assert doomed in running_with(doomed_for) and not os.path.exists(f"/proc/{watcher}/fd/0")
            process.kill()
            deadline = time.monotonic() + STOP_DEADLINE_S
            while running_with(doomed_for) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not running_with(doomed_for), "the server's command outlived it: no watcher after the first"
        finally:
            for pid in running_with(doomed_for):
                os.kill(pid, signal.SIGKILL)


# -- 3. a full disk: offsets read before a write failed mean the same bytes after it ----------------------


@pytest.fixture
def full_outputs(home: Path) -> Iterator[Path]:
    """The outputs folder of `home` on a 2 MiB tmpfs of its own (Linux, as root), unmounted afterwards."""
    with small_tmpfs(Path(f"{home}-outputs")) as folder:
        yield folder


async def read_all(client: Any, job: int, offset: int, limit: int) -> tuple[str, dict[str, Any]]:
    """What command_output gives from `offset` to the end, paged with nextOffset; and the last page."""
    text = ""
    for _ in range(2000):
        said = await call(client, "command_output", {"jobId": job, "offset": offset, "limit": limit})
        assert "error" not in said, said
        text += said["output"]
        if said["nextOffset"] >= said["totalBytes"]:
            return text, said
        assert said["nextOffset"] > offset, said
        offset = said["nextOffset"]
    raise AssertionError("paging did not end")


async def test_offsets_read_before_the_outputs_disk_filled_up_read_the_same_bytes_after_it(
    home: Path, monkeypatch: pytest.MonkeyPatch, full_outputs: Path, tmp_path: Path
) -> None:
    """Before the write failed command_output read the file (stdout and stderr as they came); after it,
    what memory kept (stdout, then stderr): offset 0 and every nextOffset meant other bytes."""
    go = tmp_path / "go"
    command = (
        "echo out-1; sleep 0.2; echo err-1 >&2; sleep 0.2; echo out-2; "
        f"while [ ! -e {go} ]; do sleep 0.05; done; "
        "head -c 3000000 /dev/zero | tr '\\0' x; echo; echo the-end; echo err-2 >&2"
    )
    async with named_here(home, COWORK, monkeypatch, SHORT_PATIENCE) as client:
        started = await call(client, "execute_command", {"command": command, "background": True, "cwd": str(tmp_path)})
        job = started["jobId"]
        before = {}
        deadline = time.monotonic() + STOP_DEADLINE_S
        while time.monotonic() < deadline and before.get("output") != "out-1\nerr-1\nout-2\n":
            before = await call(client, "command_output", {"jobId": job, "offset": 0})
            await anyio.sleep(0.05)
        assert before["output"] == "out-1\nerr-1\nout-2\n", before
        go.touch()
        done = await wait_until_finished(client, job)
        assert "No space left on device" in done["note"], done["note"]
        again = await call(client, "command_output", {"jobId": job, "offset": 0, "limit": before["nextOffset"]})
        assert again["output"] == before["output"] and again["nextOffset"] == before["nextOffset"], again
        rest, last = await read_all(client, job, before["nextOffset"], 30_000)
    assert rest.startswith("xxx"), rest[:200]
    assert "No space left on device" in rest and rest.endswith("the-end\nerr-2\n"), rest[-300:]
    assert last["totalBytes"] == before["nextOffset"] + len(rest.encode()), last
    assert "No space left on device" in last["note"] and "offset" in last["note"], last["note"]


def test_the_spool_knows_to_the_byte_what_each_stream_has_in_a_file_a_full_disk_cut_short(small_disk: Path) -> None:
    spool = OutputSpool(small_disk, "cmd1", 2)
    spool.open()  # at once, as for a job that outlived its call
    for turn in range(4_000):  # 4 MB in chunks of 700 bytes, the streams in turn: the 2 MiB disk fills up
        spool.write(turn % 2, (b"a", b"b")[turn % 2] * 700)
    kept = spool.kept_start()
    assert spool.problem is not None and "No space left on device" in spool.problem
    assert kept is not None and kept.path == spool.path
    held = kept.path.read_bytes()
    assert kept.size == len(held) and kept.per_stream == (held.count(b"a"), held.count(b"b")), kept


def test_what_was_read_in_memory_stays_readable_at_its_offsets_when_no_file_can_be_made(tmp_path: Path) -> None:
    not_a_folder = tmp_path / "outputs"
    not_a_folder.write_text("a file where the outputs folder should be")
    output = CommandOutput(OutputBudget(SMALL_BUDGET), not_a_folder)
    for turn in range(2_000):  # past the MiB kept in memory: the file is made then, and cannot be
        output.feed(turn % 2, f"{turn:06d}".encode() * 100 + b"\n")
        if turn == 1_000:
            read_before = output.spool.in_memory()
    kept = output.spool.kept_start()
    assert kept is not None and kept.path is None and read_before is not None
    assert kept.data.startswith(read_before) and kept.size > 1024 * 1024
    rest = output.rest_after(kept).decode()
    assert rest.startswith("[... the output kept in the order it came stops here (could not create a file in ")
    assert rest.endswith(f"{1_999:06d}" * 100 + "\n")
    joined, at, total = JoinedOutput(kept, rest.encode()).read_part(0, 601, None)
    assert (joined, at, total) == (read_before[:601], 0, kept.size + len(rest.encode()))
