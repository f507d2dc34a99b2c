"""A background job in the persistent session must not take over later session commands.

A red team found: a moderate `terminal_run` left a job that stopped the shell (SIGSTOP), opened
the pipe bash reads its commands from through `/proc/$$/fd/0`, read the next command with its
random marker token, and printed a forged completion marker: `touch ls-ran; ls` returned the job's
`README.md src`, exit 0, journaled as finished, and never ran. Now the shell reads its commands on
a descriptor its jobs do not inherit, the session is started anew before a command when another
process of its container holds that pipe or the shell is stopped, and a marker counts only when the
shell has read the command itself (shell_session.py).

The server runs bound to the tray's hub in this process (tests/in_process_server.py), in the real
container; each attack first shows that it was armed, then what the later command did.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from app.core.authority.hub import Hub
from app.core.journal.store import Journal, Status
from app.core.paths import AppPaths
from tests.in_process_server import serving

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("bwrap") is None, reason="bwrap (Linux)"),
]
WAIT_S = 30.0

# The descriptor the shell reads its commands from: 255 where it reads them as a script, 0 before.
COMMAND_FD = "fd=255; [ -e /proc/$$/fd/255 ] || fd=0"

# The red team's job: it stops the shell, reads its next command, answers for it, lets it go on.
STOPPING_JOB = (
    COMMAND_FD + "\n"
    "( sleep 0.5; kill -STOP $$; exec 0</proc/$$/fd/$fd; touch OUT/armed\n"
    "  while IFS= read -r line; do case $line in *__COWORK_DONE_*) tok=${line#*__COWORK_DONE_}; tok=${tok%%__*}; "
    "break;; esac; done\n"
    '  printf \'README.md\\nsrc\\n\\n__COWORK_DONE_%s__:0:%s\\n\' "$tok" "$PWD"; touch OUT/ran-instead\n'
    "  kill -CONT $$ ) >/proc/$$/fd/1 2>&1 & echo armed"
)

# A job that never leaves the shell stopped: it waits on the command pipe, then stops and continues
# the shell once, so that the shell waits behind it and the job gets the next command whole. It holds
# the pipe longer than the check waits for a fresh fork to let go (HOLDER_PATIENCE_S).
WAITING_JOB = (
    COMMAND_FD + "\n"
    "( exec 3</proc/$$/fd/$fd; touch OUT/holding\n"
    "  script=$(timeout 3 cat <&3); tok=${script#*__COWORK_DONE_}; tok=${tok%%__*}\n"
    '  printf \'README.md\\nsrc\\n\\n__COWORK_DONE_%s__:0:%s\\n\' "$tok" "$PWD" >/proc/$$/fd/1; touch OUT/ran-instead'
    " ) >/dev/null 2>&1 &\n"
    "( until [ -e OUT/holding ]; do sleep 0.05; done; sleep 0.5; kill -STOP $$; kill -CONT $$; touch OUT/armed )"
    " >/dev/null 2>&1 &\n"
    "echo armed"
)


async def session_command(client: Any, command: str) -> dict:
    result = await client.call_tool("terminal_run", {"command": command})
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


async def appears(path: Path) -> None:
    with anyio.fail_after(WAIT_S):
        while not path.exists():
            await anyio.sleep(0.05)


def row_of(paths: AppPaths, command: str):
    with Journal.open(paths) as journal:
        return next(row for row in journal.recent_commands() if row.command == command)


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The session's folder, with one file, and a folder where the attacks leave their traces."""
    monkeypatch.setenv("HOME", str(tmp_path))  # the hub's runner runs the commands in this process
    folder, out = tmp_path / "project", tmp_path / "out"
    folder.mkdir()
    out.mkdir()
    (folder / "real-file").write_text("")
    return folder, out


@pytest.mark.parametrize("job", [STOPPING_JOB, WAITING_JOB], ids=["stops the shell", "waits on its commands"])
async def test_a_job_that_reads_the_shells_commands_cannot_answer_for_the_next_one_which_runs_in_a_new_shell(
    home: Path, paths: AppPaths, hub: Hub, work: tuple[Path, Path], job: str
) -> None:
    folder, out = work
    later = f"touch {out}/ls-ran; ls"
    async with serving(home, bound=True) as client:
        await session_command(client, f"cd {folder}")
        # A job of the shell's own (a bash subshell) is no reason to start the session anew.
        await session_command(client, "( sleep 60; echo late ) & echo started")
        quiet = await session_command(client, "echo still")
        assert quiet["note"] is None, quiet
        assert (await session_command(client, job.replace("OUT", str(out))))["output"] == "armed\n"
        await appears(out / "armed")
        result = await session_command(client, later)
    assert (out / "ls-ran").exists(), "the command ran"
    assert not (out / "ran-instead").exists(), "the job did not answer for it"
    assert (result["output"], result["exitCode"]) == ("real-file\n", 0), result
    assert "started anew in the same folder" in (result["note"] or ""), result
    row = row_of(paths, later)
    assert (row.status, row.exit_code) == (Status.FINISHED, 0)


async def host_pid_of(marker: str) -> int:
    """The pid, as this machine sees it, of the process whose command line is `marker`: waited for,
    since a job started with `&` may still be bash's fork when its command returns (under load)."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/cmdline", "rb") as handle:
                        if handle.read().split(b"\0")[:2] == marker.encode().split(b" "):
                            return int(entry)
                except OSError:
                    continue
        await anyio.sleep(0.05)
    raise AssertionError(f"no process {marker!r}")


def parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/status") as handle:
        return int(next(line.split()[1] for line in handle if line.startswith("PPid:")))


def reading(task: str, fd: int) -> bool:
    """Whether the task (`/proc/.../task/TID` or `/proc/PID`) waits in a read of `fd`: the pipe's
    readers are woken in the order they began to wait, which decides who takes the next command."""
    try:
        with open(f"{task}/syscall") as handle:
            words = handle.read().split()
    except OSError:
        return False
    return len(words) > 1 and words[0] == str(READ_SYSCALL) and int(words[1], 16) == fd


READ_SYSCALL = {"x86_64": 0, "aarch64": 63}.get(os.uname().machine, -1)


async def until_reading(task: str, fd: int) -> None:
    if READ_SYSCALL < 0:
        await anyio.sleep(0.5)
        return
    with anyio.fail_after(WAIT_S):
        while not reading(task, fd):
            await anyio.sleep(0.02)


def answer_for_the_shell(shell: int, command_fd: int, forged: list[bytes]) -> tuple[threading.Thread, int]:
    """A reader the look inside the container cannot see (here: this process; for an agent, a process
    in another container given the pipe): it waits on the shell's command pipe, takes the next
    command and answers for it on the shell's output. Returns the reader and its descriptor of the pipe."""
    commands = os.open(f"/proc/{shell}/fd/{command_fd}", os.O_RDONLY)
    output = os.open(f"/proc/{shell}/fd/1", os.O_WRONLY)

    def answer() -> None:
        try:
            script = os.read(commands, 65536)
            token = re.search(rb"__COWORK_DONE_([0-9a-f]{16})__", script)
            if token:
                forged.append(script)
                os.write(output, b"README.md\nsrc\n\n__COWORK_DONE_" + token.group(1) + b"__:0:/\n")
        finally:
            os.close(commands)
            os.close(output)

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    return thread, commands


async def test_a_marker_from_a_process_that_took_the_command_is_not_the_shells_and_the_session_ends(
    home: Path, paths: AppPaths, hub: Hub, work: tuple[Path, Path]
) -> None:
    folder, out = work
    sleeper = f"sleep 6{os.getpid() % 1000}.5"
    later = f"touch {out}/ls-ran; ls"
    forged: list[bytes] = []
    async with serving(home, bound=True) as client:
        await session_command(client, f"cd {folder}; {sleeper} & echo started")
        shell = parent_of(await host_pid_of(sleeper))
        command_fd = 255 if os.path.exists(f"/proc/{shell}/fd/255") else 0
        await until_reading(f"/proc/{shell}", command_fd)
        thief, thiefs_fd = answer_for_the_shell(shell, command_fd, forged)
        # The reader waits on the pipe first; the shell, stopped and continued, then waits behind it.
        await until_reading(f"/proc/self/task/{thief.native_id}", thiefs_fd)
        os.kill(shell, signal.SIGSTOP)
        os.kill(shell, signal.SIGCONT)
        await until_reading(f"/proc/{shell}", command_fd)
        result = await session_command(client, later)
        with anyio.fail_after(WAIT_S):
            while thief.is_alive():
                await anyio.sleep(0.05)
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline and os.path.exists(f"/proc/{shell}"):
            await anyio.sleep(0.05)
        assert not os.path.exists(f"/proc/{shell}"), "the shell another process answered for was ended"
        fresh = await session_command(client, "echo fresh")
    assert forged, "the reader took the command"
    assert result["exitCode"] is None and "not reported by the session's shell" in (result["note"] or ""), result
    row = row_of(paths, later)
    assert (row.status, row.reason) == (Status.FAILED, "another process answered for the shell session"), row
    assert fresh["output"] == "fresh\n" and "a new one was started" in (fresh["note"] or ""), fresh
