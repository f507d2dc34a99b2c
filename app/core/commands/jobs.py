"""Jobs: every command is a job with an id (its journal row's) that may outlive the call that
started it (issue 22).

A call waits for its job as long as its client is patient (`patience`), then returns the job's id;
the job goes on in this server until it ends, its own time limit, Stop, pause, the tray's quit or
the server's end, and the model follows it with command_wait, command_output and command_stop. A
held command is a job too: the user's Allow runs it at the click, whether or not a call waits.

Another server of the same Claude app (Cowork starts several) follows a job through what both can
read: its journal row (status, exit code, the start and end of each stream) and its whole output,
spooled to its private file under the outputs folder once the job outlives its call.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable, Coroutine, Iterable, Iterator
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Generic, Protocol, TypeVar

import anyio

from app.core import liveness
from app.core.commands.cancellation import explain_with
from app.core.commands.request import ClientInfo, CommandRefused, ExecuteRequest, ValidRequest
from app.core.errors import CoworkError
from app.core.execution import orphans
from app.core.execution.output import BYTES_PER_CHAR_MAX, CommandOutput, OutputHook
from app.core.execution.output_decoding import (
    complete_utf8_prefix,
    is_utf8_continuation,
    json_end,
    json_length_of_bytes,
    json_start,
    skip_utf8_continuation,
)
from app.core.execution.output_files import OUTPUT_FILE_SUFFIX, KeptStart
from app.core.execution.read_only import Containment
from app.core.execution.run_result import ExecutionResult
from app.core.journal.store import CommandRecord, Journal, Status
from app.core.messages import (
    CANCEL_REASON,
    CANCELLED_HOLD_MESSAGE,
    MODEL_STOP_REASON,
    TOO_MANY_JOBS_MESSAGE,
    WITHDRAWN_MESSAGE,
    WITHDRAWN_REASON,
)

if TYPE_CHECKING:  # types only: admission loads with a server's first command (service.holds)
    from app.core.commands.admission import Admitted, Runner

log = logging.getLogger(__name__)


class TrayTie(Protocol):
    """What jobs ask of a server's authority (authority.ServerAuthority)."""

    @property
    def tethered(self) -> bool: ...


class JobsService(Protocol):
    """What jobs reach of their command service (service.CommandService)."""

    @property
    def journal(self) -> Journal: ...
    @property
    def authority(self) -> TrayTie: ...
    @property
    def client(self) -> ClientInfo: ...
    @property
    def server_id(self) -> int | None: ...
    @property
    def serving(self) -> bool: ...
    @property
    def run_mark(self) -> str | None: ...
    def read_only_containment(self) -> Containment: ...
    async def admit(
        self, request: ExecuteRequest, tool: str, runner: Runner, *, proven_read_only: bool = False
    ) -> Admitted: ...
    async def run_admitted(
        self, command_id: int, valid: ValidRequest, bash: str, on_output: OutputHook | None = None
    ) -> ExecutionResult: ...
    async def run_read_only(
        self, command_id: int, valid: ValidRequest, bash: str, on_output: OutputHook | None = None
    ) -> ExecutionResult: ...
    async def await_approval(self, confirmation_id: str, bash: str, on_output: OutputHook | None) -> Any: ...
    def spawn(self, work: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None: ...
    def stop_running(self, command_id: int, reason: str) -> bool: ...
    def withdraw(self, confirmation_id: str, reason: str = WITHDRAWN_REASON) -> None: ...


ServiceT = TypeVar("ServiceT", bound=JobsService)  # the server reads its own service back through `jobs.service`

READ_ONLY_TOOL = "execute_read_only_command"
KEEP_ENDED_JOBS = 20  # ended jobs this server remembers for command_wait and command_list
# Jobs one server may have running (or held) at once: an agent's dev server, watchers and builds fit;
# a loop of `background: true` does not fill the tray with containers (each holds descriptors, memory)
MAX_LIVE_JOBS = 32
FOLLOW_POLL_S = 0.25  # how often a job of another server is looked up in the journal
STOP_SETTLE_S = 5.0  # command_stop waits this long at most for the job to end
DEAD_SERVERS_EVERY_S = 1.0  # another server's running job makes this server probe the servers' locks this often at most


class JobStatus(str, Enum):
    """What the model reads in `status`."""

    WAITING = "waiting"  # held for the user's answer
    RUNNING = "running"
    FINISHED = "finished"  # ended in any way: exitCode, timedOut and note say how
    DENIED = "denied"  # never ran: denied, expired, withdrawn, paused or the app gone before an answer


@dataclass(eq=False)
class Job:
    """One command of this server, from its journal row to its end."""

    id: int
    tool: str
    command: str
    cwd: str
    confirmation_id: str | None = None  # while it may still be held
    created_at: float = field(default_factory=time.time)
    output: CommandOutput | None = None
    result: ExecutionResult | None = None
    refusal: str | None = None
    ended_at: float | None = None
    detached: bool = False  # it outlived a call: its whole output is kept in its file
    done: anyio.Event = field(default_factory=anyio.Event)
    started: anyio.Event = field(default_factory=anyio.Event)  # it runs (or ended): no longer held
    scope: anyio.CancelScope | None = None
    listeners: list[OutputHook] = field(default_factory=list)
    end_reason: str | None = None  # why `Jobs.end` cancelled it, when it did

    def live(self) -> bool:
        """Running, held, or ended with its container living on for a job it left (`nohup x &`)."""
        return not self.done.is_set() or (self.result is not None and self.result.lingers())

    @property
    def status(self) -> JobStatus:
        if self.result is not None:
            return JobStatus.FINISHED
        if self.refusal is not None:
            return JobStatus.DENIED if self.output is None else JobStatus.FINISHED
        return JobStatus.RUNNING if self.output is not None else JobStatus.WAITING

    def take_output(self, output: CommandOutput) -> None:
        """The command starts: its output is where progress and command_output read."""
        self.output = output
        self.started.set()
        if self.detached:
            output.keep_whole()
        for listener in list(self.listeners):
            listener(output)

    def detach(self) -> None:
        """The call that started it returns: keep the whole output, for later calls and other servers."""
        self.detached = True
        if self.output is not None:
            self.output.keep_whole()

    @contextlib.contextmanager
    def listening(self, hook: OutputHook | None) -> Iterator[None]:
        if hook is None:
            yield
            return
        if self.output is not None:
            hook(self.output)
        self.listeners.append(hook)
        try:
            yield
        finally:
            self.listeners.remove(hook)


class Jobs(Generic[ServiceT]):
    """This server's jobs: started, followed, stopped; and others' jobs of the same agent, read."""

    def __init__(self, service: ServiceT) -> None:
        self.service = service
        self._jobs: dict[int, Job] = {}
        self._starting = 0  # calls being admitted: they count toward MAX_LIVE_JOBS too
        self._next_dead_servers_look = 0.0  # time.monotonic() of the next look at other servers' locks

    async def start(self, request: ExecuteRequest, tool: str = "execute_command") -> Job:
        """Journal and start (or hold) a command; raises CommandRefused when it may not run at all.
        `tool` READ_ONLY_TOOL runs it contained (execution/read_only.py)."""
        service = self.service
        if not service.serving:
            raise CommandRefused("The server is still starting; try again in a moment.")
        live = self._starting + sum(job.live() for job in self._jobs.values())
        if live >= MAX_LIVE_JOBS:
            raise CommandRefused(TOO_MANY_JOBS_MESSAGE.format(count=live))
        self._starting += 1  # counted while it is admitted (a call beside it sees it: a red team)
        try:
            if tool == READ_ONLY_TOOL:
                proven = service.read_only_containment() is Containment.CLASSIFIER
                admitted = await service.admit(request, tool, service.run_read_only, proven_read_only=proven)
            else:
                admitted = await service.admit(request, tool, service.run_admitted)
        finally:
            self._starting -= 1
        job = Job(admitted.command_id, tool, admitted.request.command, admitted.request.cwd)
        job.confirmation_id = admitted.confirmation_id
        self._jobs[job.id] = job
        self._forget_old()
        service.spawn(self._run, job, admitted)
        return job

    async def _run(self, job: Job, admitted: Admitted) -> None:
        service = self.service
        explain_with(lambda: job.end_reason)  # this task's own context: `why_cancelled` reads it
        try:
            with anyio.CancelScope() as scope:
                job.scope = scope
                if admitted.confirmation_id is None:
                    runner = service.run_read_only if job.tool == READ_ONLY_TOOL else service.run_admitted
                    job.result = await runner(admitted.command_id, admitted.request, admitted.bash, job.take_output)
                else:
                    job.result = await service.await_approval(admitted.confirmation_id, admitted.bash, job.take_output)
            if scope.cancelled_caught and job.result is None:
                job.refusal = CANCELLED_HOLD_MESSAGE if job.end_reason == CANCEL_REASON else WITHDRAWN_MESSAGE
        except CommandRefused as refused:
            job.refusal = str(refused)
        except Exception:  # the top of the job's task: the server's other work must go on
            log.exception("job %s failed", job.id)
            job.refusal = "Cowork Terminal failed to run this command (see its log); it may not have run."
        finally:
            job.confirmation_id = None
            job.ended_at = time.time()
            job.started.set()
            job.done.set()
            if job.result is not None and not job.result.contained and service.run_mark:
                # What it left running stays when this process goes (a container's ends with it anyway).
                orphans.leave_running(f"{service.run_mark}:{job.id}")

    def _forget_old(self) -> None:
        ended = [job for job in self._jobs.values() if not job.live()]  # one whose container lives on counts
        for job in ended[: max(0, len(ended) - KEEP_ENDED_JOBS)]:
            del self._jobs[job.id]

    def get(self, job_id: int) -> Job | None:
        return self._jobs.get(job_id)

    async def wait(
        self, job: Job, seconds: float, on_output: OutputHook | None = None, *, held_s: float | None = None
    ) -> Job:
        """Wait up to `seconds` for the job to end, and at most `held_s` of them for the user to answer
        a held one (the approval window); a job still going is detached: it goes on."""
        deadline = anyio.current_time() + seconds
        with job.listening(on_output):
            held = job.confirmation_id is not None and not job.started.is_set()
            if held and held_s is not None:
                with anyio.move_on_after(min(seconds, held_s)):
                    await job.started.wait()
            if not held or held_s is None or job.started.is_set():
                with anyio.move_on_after(max(0.0, deadline - anyio.current_time())):
                    await job.done.wait()
        if not job.done.is_set():
            job.detach()
        return job

    def end(self, job: Job, reason: str = MODEL_STOP_REASON) -> None:
        """End a job of this server at once: its whole tree, or its hold (the user's prompt disappears)."""
        if not self.service.stop_running(job.id, reason) and job.confirmation_id is not None:
            self.service.withdraw(job.confirmation_id, CANCEL_REASON if reason == CANCEL_REASON else WITHDRAWN_REASON)
            if job.scope is not None:
                job.end_reason = reason
                job.scope.cancel()

    async def stop(self, job: Job) -> Job:
        """command_stop: end a job and wait (a little) for its end to be recorded."""
        self.end(job)
        with anyio.move_on_after(STOP_SETTLE_S):
            await job.done.wait()
        return job

    def jobs(self) -> list[Job]:
        return sorted(self._jobs.values(), key=lambda job: job.id, reverse=True)

    # -- jobs of other servers of the same agent ---------------------------------------------------

    def record(self, job_id: int) -> CommandRecord:
        """The journal's row of another server's job of this agent; CommandRefused when there is none."""
        self.service.journal.follow_renewal()
        row = self.service.journal.get_command(job_id)
        if row is None or row.client_name != self.service.client.name or not row.client_name:
            raise CommandRefused(
                f"There is no job {job_id} of this agent. Call command_list to see its jobs, or run the command "
                "again with execute_command."
            )
        if self._recorded_dead_servers([row]):  # its server died: the row says so now
            return self.service.journal.get_command(job_id) or row
        return row

    async def follow(self, job_id: int, seconds: float) -> CommandRecord:
        """Wait up to `seconds` for another server's job to end, reading its journal row."""
        deadline = anyio.current_time() + seconds
        while True:
            row = self.record(job_id)
            if not row.status.is_active or anyio.current_time() >= deadline:
                return row
            await anyio.sleep(min(FOLLOW_POLL_S, max(0.0, deadline - anyio.current_time())))

    def others(self) -> list[CommandRecord]:
        """This agent's jobs that other servers run now."""
        name = self.service.client.name
        if not name:
            return []
        self.service.journal.follow_renewal()
        rows = [
            row
            for row in self.service.journal.active_commands()
            if row.client_name == name and row.id not in self._jobs and row.server_id != self.service.server_id
        ]
        if self._recorded_dead_servers(rows):
            return self.others()
        return rows

    def _recorded_dead_servers(self, rows: Iterable[CommandRecord]) -> bool:
        """Whether the server of an active row among `rows` (another server's) was found dead just now,
        and its rows recorded as interrupted. A server killed without a word leaves its rows active; with
        no tray, nobody else looks (only a journal's opening does), and the model would read "still
        running" forever. Only where no tray writes the journal (its supervisor marks dead servers), and
        at most once every DEAD_SERVERS_EVERY_S: a look probes the lock of every live server."""
        if not any(row.status.is_active and row.server_id != self.service.server_id for row in rows):
            return False
        now = time.monotonic()
        if now < self._next_dead_servers_look:
            return False
        self._next_dead_servers_look = now + DEAD_SERVERS_EVERY_S
        journal = self.service.journal
        if self.service.authority.tethered or journal.read_only or liveness.is_held(journal.paths.tray_lock):
            return False
        try:
            return bool(journal.recover_dead_servers())
        except CoworkError as problem:  # a full disk: the row stays as it was; a later look tries again
            log.warning("could not record dead servers: %s", problem)
            return False


FILE_TIME_SLACK_S = 1.0  # a file system's time and the journal's may differ by a clock tick


def job_file(folder: Path, job_id: int, since: float = 0.0) -> Path | None:
    """The file holding a job's whole output (its spool, named `<time>-cmd<id>-<random>.log`), if any;
    only a regular file of ours, never a link someone put there, and none last written before `since`
    (its row's creation: a journal started anew gives ids again, and an older command's file under the
    same id is another agent's output, a review found)."""
    found: list[tuple[float, Path]] = []
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            name = entry.name
            if name.endswith(OUTPUT_FILE_SUFFIX) and f"-cmd{job_id}-" in name and entry.is_file(follow_symlinks=False):
                written = entry.stat(follow_symlinks=False).st_mtime
                if written >= since - FILE_TIME_SLACK_S:
                    found.append((written, Path(entry.path)))
    return max(found)[1] if found else None


def read_file_part(
    path: Path,
    offset: int | None,
    limit: int,
    tail_lines: int | None,
    *,
    growing: bool = False,
    room: int | None = None,
) -> tuple[bytes, int, int]:
    """Bytes of a job's output file: its `tail_lines` last lines, or `limit` bytes from `offset`,
    reading little more than `limit` bytes; whole characters only, and no more than `room` characters
    of the model's JSON text (see `part_of`). Returns (part, where it starts, the file's size)."""
    with _opened(path) as file:
        size = os.fstat(file.fileno()).st_size
        return _read_part(
            size, lambda start, count: _read_at(file, start, count), offset, limit, tail_lines, growing, room
        )


@dataclass(frozen=True)
class JoinedOutput:
    """A job's output after a write failed, read as one: the start kept in the order it came (the first
    `kept.size` bytes of its file, or bytes in memory), at the offsets read before the failure; then
    `rest`, what memory kept after it (CommandOutput.rest_after)."""

    kept: KeptStart
    rest: bytes

    def read_part(
        self, offset: int | None, limit: int, tail_lines: int | None, *, growing: bool = False, room: int | None = None
    ) -> tuple[bytes, int, int]:
        """`read_file_part` over the two: (part, where it starts, the size of both)."""
        size = self.kept.size + len(self.rest)
        if self.kept.path is None:
            return part_of(self.kept.data + self.rest, offset, limit, tail_lines, growing=growing, room=room)
        with _opened(self.kept.path) as file:

            def read(start: int, count: int) -> bytes:
                stop = start + count
                data = _read_at(file, start, max(0, min(stop, self.kept.size) - start))
                return data + self.rest[max(0, start - self.kept.size) : max(0, stop - self.kept.size)]

            return _read_part(size, read, offset, limit, tail_lines, growing, room)


def _opened(path: Path) -> BinaryIO:
    """A job's output file, for reading; never through a link put in its place."""
    return os.fdopen(os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)), "rb")


def _read_at(file: BinaryIO, start: int, count: int) -> bytes:
    file.seek(start)
    return file.read(count)


def _read_part(
    size: int,
    read: Callable[[int, int], bytes],
    offset: int | None,
    limit: int,
    tail_lines: int | None,
    growing: bool,
    room: int | None,
) -> tuple[bytes, int, int]:
    """`read_file_part`'s choice over `size` bytes that `read(start, count)` gives."""
    if tail_lines is not None:
        start = max(0, size - limit)
        window = read(start, size - start)
        part, at, _ = part_of(window, None, limit, tail_lines, cut_first=start > 0, growing=growing, room=room)
        return part, start + at, size
    start = min(offset or 0, size)
    # a few bytes more: the rest of a character cut before `offset`, and the one `limit` cuts;
    # none written since `size` was taken, so that the part never ends past totalBytes
    window = read(start, min(limit + 2 * BYTES_PER_CHAR_MAX, size - start))
    part, at, _ = part_of(window, 0, limit, None, cut_first=start > 0, growing=growing, room=room)
    return part, start + at, size


def part_of(
    data: bytes,
    offset: int | None,
    limit: int,
    tail_lines: int | None,
    *,
    cut_first: bool = False,
    growing: bool = False,
    room: int | None = None,
) -> tuple[bytes, int, int]:
    """The same choice over bytes in memory: (part, its start, the whole's size). A part holds whole
    UTF-8 characters: it starts after the rest of one cut before `offset` and ends before one that
    `limit` would cut, so that paging with its end as the next offset reads each character once; a
    `limit` smaller than one character still gets that character. `cut_first`: `data` is a window
    of a whole that starts earlier. `growing`: more may follow `data` (a running job), so a character
    cut at its very end waits for the rest. `room`: the part, decoded, takes at most this many
    characters of the model's JSON text (the output budget; output_decoding.json_length_of_bytes)."""
    if tail_lines is not None:
        begin = max(0, len(data) - limit)
        if room is not None:
            begin = json_start(len(data), room, lambda at: json_length_of_bytes(data, at, len(data)), begin)
        window = data[begin:]
        if growing:
            window = window[: complete_utf8_prefix(window)]
        cut = cut_first or begin > 0
        lines = window.splitlines(keepends=True)
        if cut and len(lines) > 1:
            lines = lines[1:]  # the first line of a window is cut
        part = b"".join(lines[-tail_lines:]) if tail_lines else b""
        if cut and len(part) == len(window):  # one long line, cut: start at a character
            part = part[skip_utf8_continuation(part) :]
        return part, begin + len(window) - len(part), len(data)
    start = min(offset or 0, len(data))
    if start > 0 or cut_first:  # the rest of a character cut before `offset` belongs to the part before
        start += skip_utf8_continuation(data[start : start + BYTES_PER_CHAR_MAX - 1])
    stop = min(len(data), start + limit)
    if room is not None:
        stop = json_end(start, stop, room, lambda at: json_length_of_bytes(data, start, at))
    end = _character_end(data, start, stop, growing)
    return data[start:end], start, len(data)


def _character_end(data: bytes, start: int, end: int, growing: bool) -> int:
    """`end` moved back to the start of the character it cuts, or forward past it when that would
    leave nothing; at the end of `data`, back before a character cut there when more may follow.
    Bytes that are not UTF-8 are cut where asked."""
    if end >= len(data):
        if not growing:
            return len(data)
        last = max(start, len(data) - BYTES_PER_CHAR_MAX)
        return last + complete_utf8_prefix(data[last:])
    back = end
    while back > start and end - back < BYTES_PER_CHAR_MAX - 1 and is_utf8_continuation(data[back]):
        back -= 1
    if is_utf8_continuation(data[back]):  # no character starts near: not UTF-8 here
        return end
    if back > start or end == start:
        return back
    ahead = end  # less than one character was asked for: take that character whole
    while ahead < min(len(data), start + BYTES_PER_CHAR_MAX) and is_utf8_continuation(data[ahead]):
        ahead += 1
    return ahead


def record_status(row: CommandRecord) -> JobStatus:
    """The model's status for a job read from the journal."""
    if row.status is Status.WAITING:
        return JobStatus.WAITING
    if row.status is Status.RUNNING:
        return JobStatus.RUNNING
    if row.status is Status.REFUSED:
        return JobStatus.DENIED
    return JobStatus.FINISHED
