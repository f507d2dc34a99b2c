"""Runs one command through bash and ends its whole process tree: knows nothing of MCP or the journal.

Why each choice:
- stdin is /dev/null, so a command that reads stdin sees end of file at once instead of hanging;
- the command gets its own process group (POSIX) or process group flag (Windows), so a timeout
  or a stop ends its background jobs and every descendant, not only bash;
- output goes to a CommandOutput (head and tail in memory, the whole in a private file when it
  is long) and is decoded once at the end, so a command printing 200 MB costs a few MB at most
  and no character is split at a chunk boundary;
- a command in the default container runs in one started ahead when one waits (spare.py), which
  saves bwrap's set-up on the call; it is ended the same way.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.to_thread
from anyio.abc import ByteReceiveStream, Process

from app.core.execution import container as containers
from app.core.execution import landlock, pipes, process_marks, reaper, spare, windows_jobs
from app.core.execution.container import Container
from app.core.execution.output import CommandOutput
from app.core.execution.run_result import ExecutionResult, StopSignal
from app.core.execution.windows_jobs import ProcessJob
from app.core.hop_times import mark

READ_CHUNK_BYTES = 64 * 1024
STOP_GRACE_S = 0.5  # polite signal, then a hard kill
KILL_POLL_S = 0.02
# Words of both inits' own code (in their command lines). A command's own text may hold them too (a
# `grep` of a log), so they tell no init's fork (`_unstarted` reads the whole command line instead).
INIT_MARK = b"cowork-init: no lifeline"
STRAGGLER_GRACE_S = 0.1
DRAIN_AFTER_EXIT_S = 0.5  # a background job may hold the pipes open after bash exits
QUIET_DRAIN_S = 0.05  # in a container, when no background job holds the pipes (bwrap keeps them open)
WINDOWS_CREATE_NEW_PROCESS_GROUP = 0x00000200
WINDOWS_CREATE_NO_WINDOW = 0x08000000


@dataclass(frozen=True)
class CommandSpec:
    command: str
    cwd: str
    env: Mapping[str, str]
    timeout_s: float
    bash: str
    mark: str | None = None  # set as process_marks.MARK_ENV, so that what escapes the group can be found
    prefix: tuple[str, ...] = ()  # what bash runs inside (read_only: bwrap, sandbox-exec)
    inherit: tuple[int, ...] = ()  # file descriptors the prefix needs (read_only's bwrap: the lifeline)
    container: Container | None = None  # the OS container to run in (container.py); None: none
    read_only_binds: bool = True  # False: the user allowed this command to change the protected set
    spare: bool = False  # may run in a container started ahead (spare.py): the default container only
    # A person let it out of some of the container's protection: what it leaves running ends with it,
    # so that a job it started keeps no such right (a red team, 2026-12-05: a job rewrote ~/.claude.json
    # seconds after its allowed command returned).
    ends_whole: bool = False


def spawn_options(platform: str, *, suspended: bool = False) -> dict[str, Any]:
    """How to start bash so that its whole tree can be ended later. `suspended` (Windows): it waits
    until it is in its job (windows_jobs), so nothing it starts escapes the job first."""
    if platform == "win32":
        flags = WINDOWS_CREATE_NEW_PROCESS_GROUP | WINDOWS_CREATE_NO_WINDOW
        return {"creationflags": flags | (windows_jobs.CREATE_SUSPENDED if suspended else 0)}
    return {"start_new_session": True}


def windows_tree_kill_argv(pid: int) -> list[str]:
    """Windows has no process groups to signal: taskkill ends the process and all it started."""
    return ["taskkill", "/F", "/T", "/PID", str(pid)]


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a member changed user (setuid): still there
        return True
    return True


async def end_tree(
    process: Process,
    platform: str = sys.platform,
    mark: str | None = None,
    job: ProcessJob | None = None,
    contained: bool = False,
) -> None:
    """End bash and every process in its group: SIGTERM, a short grace, then SIGKILL; then
    whatever carries `mark` outside the group (a descendant that called `setsid`).

    In a container (`process` is bwrap): SIGTERM to the command's group, a short grace, then
    SIGKILL to bwrap, which ends the whole pid namespace, `setsid` children included.

    Windows: the job object bash was put in ends every descendant, also those whose parent already
    exited; taskkill /T (which walks parent ids) is the fallback when there is no job."""
    if platform == "win32":  # taskkill takes a moment: not on the event loop, and without a console
        if job is not None:
            job.terminate()
        argv = windows_tree_kill_argv(process.pid)
        await anyio.to_thread.run_sync(
            lambda: subprocess.run(argv, capture_output=True, check=False, creationflags=WINDOWS_CREATE_NO_WINDOW)
        )
        return
    if contained:
        await _end_container(process)
    else:
        await _end_group(process)
    if mark is not None:  # reads /proc: a few ms, off the event loop; even while being cancelled
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(process_marks.end_marked, mark)


async def _end_group(process: Process) -> None:
    pgid = process.pid  # start_new_session made bash the leader of its own group
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return
    # Grace goes to bash (which passes it on to its foreground job); the rest of the group gets a
    # short moment more. Orphans turn into zombies that only a reaping init clears, so waiting for
    # an empty group could take the whole grace for nothing.
    with anyio.move_on_after(STOP_GRACE_S):
        await process.wait()
    deadline = time.monotonic() + STRAGGLER_GRACE_S
    while time.monotonic() < deadline and _group_alive(pgid):
        await anyio.sleep(KILL_POLL_S)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


async def _end_container(process: Process) -> None:
    leader = containers.init_pid(process.pid)  # the command's group: the init's, set by --new-session
    if leader is not None:
        running = containers.children(leader)
        init_exe = _exe(leader)
        unstarted = [pid for pid in running if _unstarted(pid, init_exe)]
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(leader, signal.SIGTERM)  # the init (pid 1) traps it and lives on; the command gets it
        for pid in unstarted:  # whatever it has become since, it had run nothing of the command
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + STOP_GRACE_S
        while time.monotonic() < deadline and any(os.path.exists(f"/proc/{pid}") for pid in running):
            await anyio.sleep(KILL_POLL_S)
    containers.kill_bwrap(process.pid)
    with anyio.move_on_after(STOP_GRACE_S):
        await process.wait()


def _exe(pid: int) -> os.stat_result | None:
    """The program file `pid` runs (its /proc/PID/exe), None when it cannot be read."""
    try:
        return os.stat(f"/proc/{pid}/exe")
    except OSError:
        return None


def _unstarted(pid: int, init_exe: os.stat_result | None = None) -> bool:
    """Whether the init's child `pid` is still the init's fork, its command not yet exec'd. A SIGTERM
    that lands between the fork and the exec meets the handler the child still has of its init, which
    swallows it, and the command then ran to its end through the stop's grace (a red team, eleventh: a
    call cancelled 1-7 ms after it was sent ran its 0.25 s command, 4 tries in 80). So such a child is
    killed: it has run nothing of the command, and ending it loses nothing.

    Told by what a command does not have by chance: the init's own command line, the interpreter and
    its script in their places (`is_init_argv`), which the fork keeps until its exec, and the init's
    program file (`init_exe`, when readable). Not by the init's words anywhere in it: a command whose
    text held them (`grep "cowork-init: no lifeline" log`) was SIGKILLed at a Stop, its trap never ran."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            argv = handle.read().split(b"\0")
    except OSError:
        return False
    if not is_init_argv(argv):
        return False
    exe = _exe(pid)
    return init_exe is None or exe is None or os.path.samestat(exe, init_exe)


_PERL_INIT = landlock.PERL_INIT.encode()
_BASH_INIT = containers.INIT_SCRIPT.encode()


def is_init_argv(argv: list[bytes]) -> bool:
    """Whether `argv` (a command line split at its NULs) is a container init's: the Perl one
    (`perl -e PERL_INIT ...`) or the bash one (`bash --norc --noprofile -c ...INIT_SCRIPT cowork-init
    ...`). After its exec a command's is `bash -c COMMAND` (or what bash execs of it)."""
    perl = argv[1:3] == [b"-e", _PERL_INIT]
    bash = argv[1:4] == [b"--norc", b"--noprofile", b"-c"] and len(argv) > 5 and argv[4].endswith(_BASH_INIT)
    return perl or (bash and argv[5] == b"cowork-init")


async def read_status(fd: int) -> int | None:
    """The exit code the container's init writes on `fd` (non-blocking); None at end of file
    without one (the container ended before the command did)."""
    data = b""
    while not data.endswith(b"\n"):
        await anyio.wait_readable(fd)
        try:
            chunk = os.read(fd, 64)
        except BlockingIOError:
            continue
        if not chunk:
            return None
        data += chunk
    try:
        return int(data)
    except ValueError:
        return None


async def close_streams(process: Process) -> None:
    """Close our ends of the pipes without waiting for the process: a container lives on while a
    finished command's background job runs (the OS's child watcher reaps bwrap when it ends)."""
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None:
            with contextlib.suppress(Exception):
                await stream.aclose()


async def _pump(stream: ByteReceiveStream | None, output: CommandOutput, index: int, ended: list[bool]) -> None:
    """Feed `output` until the stream ends (`ended[index]` then says so) or the pump is cancelled."""
    if stream is None:
        ended[index] = True
        return
    try:
        while True:
            output.feed(index, await stream.receive(READ_CHUNK_BYTES))
    except anyio.EndOfStream:
        ended[index] = True
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        return


Started = tuple[Process, int, ByteReceiveStream | None, ByteReceiveStream | None]


async def _start(spec: CommandSpec, argv: list[str], env: dict[str, str], contained: bool) -> Started:
    """Start the command as is, or in a container of its own: the process, the status fd's read end
    (-1 when not contained), and its stdout and stderr (pipes of ours on POSIX: pipes.py)."""
    status_read = status_write = -1
    if contained:
        assert spec.container is not None
        status_read, status_write = os.pipe()
        os.set_blocking(status_read, False)
        argv = spec.container.wrap(argv, status_write, read_only_binds=spec.read_only_binds)
    elif spec.container is not None:  # macOS's sandbox-exec (container.SEATBELT): files only, no status fd
        argv = spec.container.wrap(argv, -1, read_only_binds=spec.read_only_binds)
    ours = sys.platform != "win32"  # Windows: asyncio's pipes (its loop cannot wait on a pipe's fd)
    streams = (pipes.output_pipe(), pipes.output_pipe()) if ours else None
    try:
        process = await anyio.open_process(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=streams[0][1] if streams else subprocess.PIPE,
            stderr=streams[1][1] if streams else subprocess.PIPE,
            cwd=spec.cwd,
            env=env,
            pass_fds=containers.inherited(status_write, status_read, spec.mark) if contained else spec.inherit,
            **spawn_options(sys.platform, suspended=True),
        )
    except BaseException:
        if contained:
            os.close(status_read)
        for stream, _write_end in streams or ():
            os.close(stream.take())
        raise
    finally:
        if contained:
            os.close(status_write)
        for _stream, write_end in streams or ():
            os.close(write_end)
    if streams:
        return process, status_read, streams[0][0], streams[1][0]
    return process, status_read, process.stdout, process.stderr


async def run_command(
    spec: CommandSpec, stop: StopSignal | None = None, output: CommandOutput | None = None
) -> ExecutionResult:
    """Run `spec.command` with `bash -c` and return when it ends, times out or is stopped; its
    output (stdout, then stderr) goes to `output` and is finished (fitted, file kept or removed).

    Raises OSError when bash cannot be started. If the caller is cancelled, the tree is ended
    before the cancellation propagates, so no process outlives the call.
    """
    stop = stop or StopSignal()
    output = output or CommandOutput()
    started = time.monotonic()
    argv = [*spec.prefix, spec.bash, "-c", spec.command]
    contained = spec.container is not None and spec.container.on and sys.platform != "win32"
    env = {**spec.env, process_marks.MARK_ENV: spec.mark} if spec.mark else dict(spec.env)
    if spec.ends_whole and not contained and sys.platform.startswith("linux"):  # let out to gain privileges
        reaped = reaper.wrap(argv, os.uname().machine, landlock.find_perl())
        if reaped != argv:  # no locale warning from Perl on the command's stderr
            argv, env = reaped, {**landlock.INIT_VARIABLES, **env}
    warm = spec.spare and spare.usable(spec.container, spec.read_only_binds) and os.path.isdir(spec.cwd)
    ready = await spare.take(spec.container if warm else None) if spec.spare else None
    stdout: ByteReceiveStream | None
    stderr: ByteReceiveStream | None
    if ready is not None and await ready.hand(argv, spec.cwd, env):
        process, status_read = ready.process, ready.status_read
        stdout, stderr = ready.stdout, ready.stderr
        mark("exec: handed to a spare")
    else:
        ready = None
        process, status_read, stdout, stderr = await _start(spec, argv, env, contained)
        mark("exec: started cold")
    if warm:
        assert spec.container is not None
        spare.refill_soon(spec.container)
    job = windows_jobs.job_for(process.pid, resume=True) if sys.platform == "win32" else None
    exited = quiet = ended_leftovers = False
    status: int | None = None
    ended = [False, False]  # each stream read to its end
    try:
        async with anyio.create_task_group() as pumps:
            pumps.start_soon(_pump, stdout, output, 0, ended)
            pumps.start_soon(_pump, stderr, output, 1, ended)
            with anyio.move_on_after(spec.timeout_s if math.isfinite(spec.timeout_s) else None), stop.cancels():
                if contained:
                    status = await read_status(status_read)
                    if status is not None:  # its container lives on for a job it left: a pause ends it
                        containers.start_files.command_done(status_read)  # from now, not after the drain
                    else:  # bwrap itself ended first: its exit code says why
                        await process.wait()
                else:
                    await process.wait()
                exited = True
            if not exited:
                await end_tree(process, mark=spec.mark, job=job, contained=contained)
            elif spec.ends_whole and status is not None:
                ended_leftovers = _end_leftovers(process.pid)
            # On the loop: a few /proc reads of the container's own processes (tens of µs), where a
            # hop to a worker thread and back cost 0.5-1 ms per command here.
            quiet = status is not None and not containers.output_held(process.pid)
            if quiet and ready is not None:
                # Nothing can write to a spare's pipes any more: what they hold is the whole rest,
                # read below without waiting for bwrap's exit to end them (about 2 ms a command).
                pumps.cancel_scope.cancel()
            else:
                # Output written before the end is still in the pipes: read it, but do not wait on
                # a descendant that keeps a pipe open.
                drain = QUIET_DRAIN_S if quiet else DRAIN_AFTER_EXIT_S
                with anyio.move_on_after(drain):
                    await process.wait()
                pumps.cancel_scope.deadline = anyio.current_time() + drain
        if ready is not None and quiet:
            output.feed(0, ready.stdout.rest())
            output.feed(1, ready.stderr.rest())
    except BaseException:
        with anyio.CancelScope(shield=True):
            await end_tree(process, mark=spec.mark, job=job, contained=contained)
        raise
    finally:
        if job is not None:
            job.close()
        if contained:
            os.close(status_read)
        # A job the command left running (`cmd &`) may still write: its output is read and dropped
        # (pipes.py). Otherwise nothing but a container's init holds the pipes: closed.
        left_running = exited and not quiet and not all(ended)
        ours = [stream for stream in (stdout, stderr) if isinstance(stream, pipes.PipeStream)]
        if left_running:
            pipes.discard(*(stream.take() for stream in ours))
        with anyio.CancelScope(shield=True):
            for stream in ours:
                await stream.aclose()
            if left_running and not ours:  # Windows: asyncio's pipes, read to their end on this loop
                pipes.discard_on_loop(process)
            elif contained and process.returncode is None:
                await close_streams(process)
            else:
                await process.aclose()
        output.finish()
    returncode = status if status is not None else process.returncode
    signal_name = None
    if returncode is not None and returncode < 0:
        signal_name = signal.Signals(-returncode).name if -returncode in signal.valid_signals() else None
        returncode = None
    timed_out = not exited and stop.reason is None
    return ExecutionResult(
        output=output,
        exit_code=returncode if exited else None,
        timed_out=timed_out,
        stopped_reason=None if exited else stop.reason,
        signal_name=signal_name,
        duration_ms=(time.monotonic() - started) * 1000,
        started=started,
        contained=contained,
        left_running=left_running,
        ended_leftovers=ended_leftovers,
        lingers=(lambda: process.returncode is None) if contained else (lambda: False),
    )


def _end_leftovers(bwrap_pid: int) -> bool:
    """End at once a container whose command ended (no grace: its processes hold a right a person
    gave the command alone); whether it still ran processes besides its init."""
    leader = containers.init_pid(bwrap_pid)
    others = leader is not None and bool(containers.children(leader))
    containers.kill_bwrap(bwrap_pid)
    return others
