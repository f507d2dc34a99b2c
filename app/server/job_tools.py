"""execute_command as a job, and the tools that follow jobs: command_wait, command_output,
command_stop, command_list (issue 22). The texts are the model's: English, exact, saying what to
do next; whatever the model must read is in the text block as well as the structured content.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import BaseModel, Field, WithJsonSchema

from app.core.commands.jobs import (
    READ_ONLY_TOOL,
    Job,
    Jobs,
    JobStatus,
    job_file,
    part_of,
    read_file_part,
    record_status,
)
from app.core.commands.patience import PATIENCE_ENV, patience_s, waited_before
from app.core.commands.request import (
    DEFAULT_TIMEOUT_MS,
    CommandRefused,
    ExecuteRequest,
    job_id,
    wait_ms,
    whole_number,
)
from app.core.commands.service import CommandService
from app.core.execution import read_only
from app.core.execution.output import output_budget
from app.core.execution.output_decoding import decode_output, visible_controls
from app.core.hop_times import mark
from app.core.journal.store import CommandRecord, Status
from app.core.messages import CANCEL_REASON
from app.core.policy.approval import HOLD_LIFETIME_S
from app.server.progress import with_progress

# The schema the model reads stays typed, but the values reach the tools as sent: the argument gate
# (argument_gate.CallGate) has checked them first, in plain words, so pydantic's never fail. One set
# for every tool (tools.py imports them from here).
Text = Annotated[Any, WithJsonSchema({"type": "string"})]
OptionalText = Annotated[Any, WithJsonSchema({"anyOf": [{"type": "string"}, {"type": "null"}]})]
OptionalNumber = Annotated[Any, WithJsonSchema({"anyOf": [{"type": "number"}, {"type": "null"}]})]
OptionalObject = Annotated[
    Any, WithJsonSchema({"anyOf": [{"additionalProperties": True, "type": "object"}, {"type": "null"}]})
]
OptionalWhole = Annotated[Any, WithJsonSchema({"anyOf": [{"type": "integer"}, {"type": "null"}]})]
Flag = Annotated[Any, WithJsonSchema({"type": "boolean"})]
WholeNumber = Annotated[Any, WithJsonSchema({"type": "integer"})]
CwdArgument = Annotated[
    OptionalText, Field(description="Working directory (absolute path). Default: the user's home folder.")
]
TimeoutArgument = Annotated[
    OptionalNumber, Field(description=f"Time limit in milliseconds. Default {DEFAULT_TIMEOUT_MS}.")
]
JobId = Annotated[Any, WithJsonSchema({"type": "integer"}), Field(description="The jobId execute_command returned.")]

READ_ONLY_DESCRIPTION = """Look around on the user's computer with a bash command that cannot change anything:
list, read and search files (ls, cat, head, grep -r, find, wc, du), and read git (git status, log,
diff, show, blame). Prefer it to execute_command whenever nothing needs to change: the user can allow
it once and for all.

It cannot create, change or delete files (a private empty /tmp is writable and thrown away) and, where
the OS allows it (Linux with bubblewrap), cannot reach the network; anything that tries fails or is
refused, and such work belongs to execute_command. Results have
the same fields as execute_command, long ones included (`status: "running"` and a `jobId` to follow
with command_wait)."""

DEFAULT_TAIL_LINES = 50
COMMAND_LIST_MAX = 20


class JobResult(BaseModel):
    """The seed's `{stdout, stderr, exitCode, timedOut}` with the job's id and status."""

    jobId: int
    status: str = Field(description="finished, running (still going), waiting (for the user) or denied")
    stdout: str
    stderr: str
    exitCode: int | None = Field(description="null while it runs, or when it was killed (timeout, stop, pause)")
    timedOut: bool
    durationMs: float | None = None
    note: str | None = Field(default=None, description="what to do next, or why the command ended early")
    outputFile: str | None = Field(
        default=None, description="absolute path of a file holding the whole output, when some of it was left out"
    )
    secondsToAnswer: int | None = Field(
        default=None, description="seconds the user still has to answer a waiting command, once it is shown to them"
    )


class JobOutput(BaseModel):
    jobId: int
    status: str
    output: str = Field(description="stdout and stderr as they came, merged (unless `note` says otherwise)")
    offset: int = Field(description="byte offset of `output` in the whole output")
    nextOffset: int = Field(description="pass as `offset` to read on")
    totalBytes: int = Field(description="bytes that can be read with `offset`: the whole output, unless `note` says")
    note: str | None = Field(default=None, description="what `output` is, when it is not the whole output")


class JobEntry(BaseModel):
    jobId: int
    status: str
    command: str
    cwd: str | None
    seconds: float = Field(description="how long it has run or waited, or ran")
    server: str = Field(description="this server, or another server of the same app")


class JobList(BaseModel):
    jobs: list[JobEntry]
    note: str | None = Field(default=None, description="ended jobs left out of the list, if any")


def follow_sentence(job: int, patience: float) -> str:
    return (
        f"Call command_wait with jobId {job} for its result (each call returns within about {patience:.0f} s), "
        f"command_output with jobId {job} to read what it printed so far, or command_stop with jobId {job} to end it."
    )


def waiting_note(job: int, reasons: str, seconds_left: int | None, patience: float) -> str:
    """`seconds_left`: None while the user cannot see it yet (another held command is on screen)."""
    if seconds_left is None:
        time_left = (
            f"the user is shown it once the commands before it are answered, and has {HOLD_LIFETIME_S / 60:.0f} "
            "minutes to answer from then"
        )
    else:
        minutes, seconds = divmod(max(0, seconds_left), 60)
        time_left = f"the user has {minutes} min {seconds} s left to answer"
    return (
        f"This command needs the user's approval in Cowork Terminal. What it does: {reasons}. It is job {job}, "
        f"and {time_left}. "
        "It runs as soon as they allow it, whether or not you are waiting. "
        f"Tell the user it is waiting for them in Cowork Terminal, then call command_wait with jobId {job} for "
        f"its result (each call returns within about {patience:.0f} s), or command_stop with jobId {job} "
        "to withdraw it."
    )


def job_result(service: CommandService, job: Job, patience: float) -> JobResult:
    """What the model reads about one of this server's jobs, now."""
    status = job.status
    if status is JobStatus.DENIED or (job.refusal is not None and job.result is None):
        return JobResult(
            jobId=job.id, status=JobStatus.DENIED.value, stdout="", stderr="", exitCode=None, timedOut=False,
            note=job.refusal,
        )  # fmt: skip
    if job.result is not None:
        model = job.result.to_model()
        # Why it ended early, a write the container refused, a job left running (ExecutionResult).
        note = job.result.model_note()
        if job.tool == READ_ONLY_TOOL and read_only.blocked(model["stderr"], model["exitCode"]):
            note = read_only.BLOCKED_NOTE
        return JobResult(jobId=job.id, status=status.value, note=joined(note, lost_output_note(job)), **model)
    if status is JobStatus.WAITING:
        hold = service.hold_of(job.confirmation_id) if job.confirmation_id else None
        seen = service.authority.hold_seen(job.id)
        left = max(0, int(service.hold_expires_at(hold) - time.time())) if hold is not None and seen else None
        return JobResult(
            jobId=job.id, status=status.value, stdout="", stderr="", exitCode=None, timedOut=False,
            note=waiting_note(job.id, hold.reasons if hold else "it needs the user's approval", left, patience),
            secondsToAnswer=left,
        )  # fmt: skip
    assert job.output is not None
    so_far = job.output.snapshot()
    elapsed = time.time() - job.created_at
    return JobResult(
        jobId=job.id, status=status.value, stdout=so_far.texts[0], stderr=so_far.texts[1], exitCode=None,
        timedOut=False, outputFile=so_far.output_file,
        note=joined(
            f"Still running after {elapsed:.0f} s as job {job.id}; it goes on. " + follow_sentence(job.id, patience),
            lost_output_note(job),
        ),
    )  # fmt: skip


def joined(*sentences: str | None) -> str | None:
    """Notes one after the other, a full stop between them where one ends without; None when none."""
    said = [sentence.rstrip() for sentence in sentences if sentence]
    if not said:
        return None
    ended = [sentence if sentence.endswith((".", "!", "?")) else f"{sentence}." for sentence in said[:-1]]
    return " ".join([*ended, said[-1]])


def lost_output_note(job: Job) -> str | None:
    """What the model must know when a job's output could not all be kept (a full disk, an outputs
    folder that cannot be written): the markers say so in stdout, this says what to do."""
    output = job.output
    if output is None or output.spool.problem is None:
        return None
    problem = output.spool.problem
    if output.spool.path is not None:
        return (
            f"Not all of the output could be kept ({problem}): outputFile holds only its start, and "
            f"command_output with jobId {job.id} gives the start and end of each stream. If you need all of it, "
            "free some disk space, then run the command again."
        )
    if all(stream.whole for stream in output.streams):
        return None
    return (
        f"Not all of the output could be kept ({problem}): only the start and end of each stream are, which "
        f"command_output with jobId {job.id} gives. If you need all of it, run the command again with its output "
        "redirected to a file in a folder with free space (`... > file 2>&1`), then read that file."
    )


INTERRUPTED_NOTE = "It did not finish: run it again with execute_command if it is still needed."


def record_result(service: CommandService, row: CommandRecord, patience: float) -> JobResult:
    """What the model reads about another server's job: its journal row, and its output file."""
    status = record_status(row)
    path = job_file(service.paths.outputs, row.id, since=row.created_at)
    note = row.reason
    if status is JobStatus.RUNNING:
        note = "Still running (in another server of this app); it goes on. " + follow_sentence(row.id, patience)
    elif status is JobStatus.WAITING:
        left = int((row.hold_expires_at or time.time()) - time.time())
        seen = left <= HOLD_LIFETIME_S  # the tray set its clock when the user could see it
        note = waiting_note(row.id, row.reason or "it needs the user's approval", left if seen else None, patience)
    stdout, stderr = visible_controls(row.stdout_preview or ""), visible_controls(row.stderr_preview or "")
    if status is JobStatus.FINISHED and path is not None:
        if not stdout and not stderr and (last := file_tail(service, path)):
            # its server ended before it could record the streams (issue 22): the file has them, merged
            stdout = last
            said = (
                "The journal kept no copy of its output (its server ended before it could), so stdout shows the "
                "last lines of outputFile, where stdout and stderr are merged as they came; read the rest with "
                f"command_output with jobId {row.id}."
            )
        else:
            said = "The start and end of each stream are shown; outputFile has it all."
        note = f"{note + '. ' if note else ''}{said}"
    if row.status is Status.INTERRUPTED:  # its server ended under it (issue 22): it did not finish
        note = f"{(note or 'it was interrupted').rstrip('.')}. {INTERRUPTED_NOTE}"
    return JobResult(
        jobId=row.id, status=status.value, stdout=stdout, stderr=stderr,
        exitCode=row.exit_code, timedOut=row.timed_out, durationMs=row.duration_ms, note=note,
        outputFile=str(path) if path is not None and status is JobStatus.FINISHED else None,
    )  # fmt: skip


def file_tail(service: CommandService, path: Path) -> str:
    """The last lines of a job's output file, within the output budget; "" when it cannot be read."""
    budget = output_budget(service.journal).chars or 1024 * 1024
    try:
        part, _, _ = read_file_part(path, None, budget, DEFAULT_TAIL_LINES, room=budget)
    except OSError:
        return ""
    return visible_controls(decode_output(part))


def answer(reply: Callable[[BaseModel], CallToolResult], result: JobResult) -> CallToolResult:
    """A job's result; a command that will never run (denied, expired, withdrawn) is an error result,
    as every refusal is, with the same JSON: the model reads `status: "denied"` and the reason."""
    done = reply(result)
    if result.status == JobStatus.DENIED.value:
        done.is_error = True
    return done


def client_patience(service: CommandService, ctx: Context) -> float:
    session = getattr(ctx.request_context, "session", None)
    protocol = getattr(getattr(session, "client_params", None), "protocol_version", None)
    # In the tray, the override is the forwarding server's (set in Claude's entry for it), not the tray's.
    environ = os.environ if service.client.patience is None else {PATIENCE_ENV: service.client.patience}
    return patience_s(service.client.name, protocol if isinstance(protocol, str) else None, environ)


async def wait_for_job(
    ctx: Context,
    jobs: Jobs,
    job: Job,
    seconds: float,
    reply: Callable[[BaseModel], CallToolResult],
    *,
    end_on_cancel: bool = True,
    shortened: str | None = None,
) -> CallToolResult:
    """Wait for a job within the client's patience, with progress. A cancelled execute_command ends
    its job (in Claude a cancellation is the user's stop button); a cancelled command_wait only stops
    waiting (`end_on_cancel` False): the job had already outlived one call. `shortened`: said when
    the job still goes on (command_wait was asked to wait longer than a call may)."""
    try:
        held_s = jobs.service.authority.approval_window_s()
        await with_progress(ctx, lambda hook: jobs.wait(job, seconds, hook, held_s=held_s))
    except anyio.get_cancelled_exc_class():
        if end_on_cancel:
            jobs.end(job, CANCEL_REASON)
        raise
    return answer(reply, still_going(job_result(jobs.service, job, client_patience(jobs.service, ctx)), shortened))


def still_going(result: JobResult, shortened: str | None) -> JobResult:
    """`result`, with `shortened` in its note when the job goes on (running, or waiting for the user)."""
    if shortened and result.status in (JobStatus.RUNNING.value, JobStatus.WAITING.value):
        result.note = joined(result.note, shortened)
    return result


def shortened_wait(asked_s: float, patience: float) -> str | None:
    """What command_wait says when it was asked to wait longer than one call may last."""
    if asked_s <= patience:
        return None
    return (
        f"command_wait waits at most about {patience:.0f} s per call, not the {asked_s:.0f} s asked: "
        "call command_wait again to wait longer."
    )


def register_job_tools(
    server: MCPServer[Any],
    service_of: Callable[[], CommandService],
    reply: Callable[[BaseModel], CallToolResult],
    refusals_as_errors: Callable[[], Any],
    execute_description: str,
    host_tool: ToolAnnotations,
) -> None:
    """execute_command and the job tools, on `server` (see tools.register_tools)."""
    local_tool = ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )
    reading = local_tool.model_copy(update={"read_only_hint": True})

    async def start_and_wait(ctx: Context, request: ExecuteRequest, tool: str, *, background: bool = False) -> Any:
        """Start a command as a job, then wait for it as long as this client is patient (at once when
        `background`); the one path of execute_command and the read-only tool."""
        mark("tool: in")
        started = anyio.current_time() - waited_before(ctx.request_context.meta)  # in the tray, before the runner
        service = service_of()
        jobs = service.jobs
        await service.until_serving()
        with refusals_as_errors():
            job = await jobs.start(request, tool)
        mark("tool: job started")
        patience = 0.0 if background else client_patience(service, ctx)
        said = await wait_for_job(ctx, jobs, job, max(0.0, patience - (anyio.current_time() - started)), reply)
        mark("tool: out")
        return said

    @server.tool(
        description=execute_description,
        annotations=host_tool.model_copy(update={"title": "Run a command on the host"}),
    )
    async def execute_command(
        command: Annotated[Text, Field(description="The bash command to run.")],
        ctx: Context,
        cwd: CwdArgument = None,
        timeout: TimeoutArgument = None,
        env: Annotated[
            OptionalObject,
            Field(description="Extra environment variables (string values), laid over the user's environment."),
        ] = None,
        background: Annotated[
            Flag, Field(description="true: return at once with a jobId, then follow it with command_wait.")
        ] = False,
    ) -> Annotated[CallToolResult, JobResult]:
        request = ExecuteRequest(command=command, cwd=cwd, timeout_ms=timeout, env=env)
        return await start_and_wait(ctx, request, "execute_command", background=background is True)

    @server.tool(
        description=READ_ONLY_DESCRIPTION,
        annotations=ToolAnnotations(
            title="Look around on the host (read-only)",
            read_only_hint=True,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    )
    async def execute_read_only_command(
        command: Annotated[Text, Field(description="The bash command to run, read-only.")],
        ctx: Context,
        cwd: CwdArgument = None,
        timeout: TimeoutArgument = None,
    ) -> Annotated[CallToolResult, JobResult]:
        request = ExecuteRequest(command=command, cwd=cwd, timeout_ms=timeout)
        return await start_and_wait(ctx, request, READ_ONLY_TOOL)

    @server.tool(
        description="Wait for a job that execute_command started (its jobId) and return its result: the same "
        "fields as execute_command. If it is still running or waiting for the user when this call's time is up, "
        "it returns status running or waiting again: call command_wait again. `timeout` (milliseconds) waits "
        "less; 0 returns at once.",
        annotations=reading.model_copy(update={"title": "Wait for a command's result"}),
    )
    async def command_wait(
        jobId: JobId,
        ctx: Context,
        timeout: Annotated[
            OptionalNumber,
            Field(description="Wait at most this many milliseconds (a call never waits longer than it may last)."),
        ] = None,
    ) -> Annotated[CallToolResult, JobResult]:
        started = anyio.current_time() - waited_before(ctx.request_context.meta)  # in the tray, before the runner
        service = service_of()
        jobs = service.jobs
        patience = client_patience(service, ctx)
        shortened = None
        if timeout is not None:
            with refusals_as_errors():
                asked = wait_ms(timeout) / 1000
            shortened = shortened_wait(asked, patience)
            patience = min(patience, asked)
        seconds = max(0.0, patience - (anyio.current_time() - started))
        with refusals_as_errors():
            number = job_id(jobId)
            job = jobs.get(number)
            if job is None:
                row = await jobs.follow(number, seconds)
                said = record_result(service, row, client_patience(service, ctx))
                return answer(reply, still_going(said, shortened))
        return await wait_for_job(ctx, jobs, job, seconds, reply, end_on_cancel=False, shortened=shortened)

    @server.tool(
        description="Read what a job printed so far (stdout and stderr merged, as they came; where that could not "
        f"be kept, `note` says what you read instead): its last `tail` lines (default {DEFAULT_TAIL_LINES}), or "
        "`limit` bytes from byte `offset` (use nextOffset to read on). A part always holds whole characters, so it "
        "may be a few bytes shorter than `limit`, or longer when `limit` is less than one character; it also ends "
        "where the output budget does (quotes, backslashes, tabs and line ends count as two characters).",
        annotations=reading.model_copy(update={"title": "Read a command's output"}),
    )
    async def command_output(
        jobId: JobId,
        tail: Annotated[OptionalWhole, Field(description="How many last lines.")] = None,
        offset: Annotated[OptionalWhole, Field(description="Byte offset to read from.")] = None,
        limit: Annotated[OptionalWhole, Field(description="How many bytes at most.")] = None,
    ) -> Annotated[CallToolResult, JobOutput]:
        service = service_of()
        jobs = service.jobs
        with refusals_as_errors():
            number = job_id(jobId)
            budget = output_budget(service.journal).chars or 1024 * 1024
            size = min(whole_number("limit", limit), budget) if limit is not None else budget
            lines = None if offset is not None and tail is None else DEFAULT_TAIL_LINES
            if tail is not None:
                lines = whole_number("tail", tail)
            start = whole_number("offset", offset) if offset is not None else None
            job = jobs.get(number)
            if job is not None:
                status = job.status.value
                data, path, note = job_source(job)
            else:
                row = jobs.record(number)
                status = record_status(row).value
                data, path, note = None, job_file(service.paths.outputs, number, since=row.created_at), None
                if path is None:  # it ended within its call: the journal kept the start and end of each stream
                    data = ((row.stdout_preview or "") + (row.stderr_preview or "")).encode()
                    note = JOURNAL_COPY_NOTE
            growing = status == JobStatus.RUNNING.value  # a character cut at the end waits for its rest
            if data is None and path is not None:
                try:
                    part, at, total = read_file_part(path, start, size, lines, growing=growing, room=budget)
                except OSError as problem:
                    raise CommandRefused(f"The output of job {number} cannot be read: {problem.strerror}.") from None
            else:
                part, at, total = part_of(data or b"", start, size, lines, growing=growing, room=budget)
        text = visible_controls(decode_output(part, job.output.code_pages if job is not None and job.output else ()))
        return reply(
            JobOutput(
                jobId=number, status=status, output=text, offset=at, nextOffset=at + len(part), totalBytes=total,
                note=note,
            )
        )  # fmt: skip

    @server.tool(
        description="End a job (its jobId): a running command is stopped with everything it started; a command "
        "waiting for the user's approval is withdrawn. Returns its final result.",
        annotations=local_tool.model_copy(update={"title": "Stop a command"}),
    )
    async def command_stop(
        jobId: JobId,
        ctx: Context,
    ) -> Annotated[CallToolResult, JobResult]:
        service = service_of()
        jobs = service.jobs
        with refusals_as_errors():
            number = job_id(jobId)
            job = jobs.get(number)
            if job is None:
                row = jobs.record(number)
                if row.status.is_active:
                    service.authority.request_stop(number)
                row = await jobs.follow(number, 5.0)
                return answer(reply, record_result(service, row, client_patience(service, ctx)))
        await jobs.stop(job)
        return answer(reply, job_result(service, job, client_patience(service, ctx)))

    @server.tool(
        description="List this agent's jobs: all those running or waiting for the user (also in other servers "
        f"of the same app), and this server's {COMMAND_LIST_MAX} most recent ended ones, newest first.",
        annotations=reading.model_copy(update={"title": "List commands"}),
    )
    async def command_list() -> Annotated[CallToolResult, JobList]:
        service = service_of()
        jobs = service.jobs
        now = time.time()
        ours = jobs.jobs()
        ended = [job for job in ours if job.done.is_set()]
        shown = set(ended[:COMMAND_LIST_MAX])  # every job still going, and the newest ended ones
        entries = [
            JobEntry(
                jobId=job.id, status=job.status.value, command=job.command[:200], cwd=job.cwd,
                seconds=round((job.ended_at or now) - job.created_at, 1), server="this",
            )
            for job in ours
            if not job.done.is_set() or job in shown
        ]  # fmt: skip
        left_out = len(ended) - len(shown)
        note = (
            f"{left_out} older ended job{'s are' if left_out != 1 else ' is'} not listed; command_wait with a "
            "jobId still gives that job's result."
            if left_out
            else None
        )
        with refusals_as_errors():
            others = jobs.others()
        entries += [
            JobEntry(
                jobId=row.id, status=record_status(row).value, command=row.command[:200], cwd=row.cwd,
                seconds=round(now - row.created_at, 1), server="another",
            )
            for row in others
        ]  # fmt: skip
        return reply(JobList(jobs=entries, note=note))


JOURNAL_COPY_NOTE = (
    "No output file of this job is left, so `output` is the copy its journal kept: the start and end of stdout, "
    "then of stderr (not in the order they came)."
)


def job_source(job: Job) -> tuple[bytes | None, Path | None, str | None]:
    """Where command_output reads one of this server's jobs: its output in memory while the spool
    holds it, else its file (None, path) while that holds it all; else what memory kept of each
    stream, with a note that says what is missing and why. (bytes or None, file or None, note)"""
    output = job.output
    if output is None:
        return b"", None, None
    spool = output.spool
    memory = spool.in_memory()
    if memory is not None:  # the whole output, in the order it came
        return memory, None, None
    if spool.problem is None and spool.path is not None and spool.path.exists():
        spool.flush()
        return None, spool.path, None
    data = output.kept_bytes()
    if all(stream.whole for stream in output.streams):  # nothing was cut: only the order is lost
        why = f" ({spool.problem})" if spool.problem else ""
        return data, None, f"The order stdout and stderr came in was not kept{why}: `output` is stdout, then stderr."
    note = (
        f"Not all of the output could be kept ({spool.problem}), so `output` is what memory kept: stdout, then "
        "stderr, each with a marker where its middle was left out. The command printed "
        f"{output.total_bytes:,} bytes in all; totalBytes and offsets count only what is here."
    )
    if spool.path is None:
        advice = "run the command again with its output redirected to a file (`... > file 2>&1`), then read that file"
    else:
        advice = "free some disk space, then run the command again"
        if size := file_size(spool.path):
            note += f" outputFile ({spool.path}) holds its first {size:,} bytes, in the order they came."
    return data, None, f"{note} If you need all of it, {advice}."


def file_size(path: Path | None) -> int:
    """The size of a file we made, or 0 when there is none (or it cannot be read)."""
    if path is None:
        return 0
    try:
        return path.stat().st_size
    except OSError:
        return 0
