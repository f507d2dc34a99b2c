"""execute_command as a job, and the tools that follow jobs: command_wait, command_output,
command_stop, command_list (issue 22). The texts are the model's: English, exact, saying what to
do next; whatever the model must read is in the text block as well as the structured content.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
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
    JoinedOutput,
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
from app.core.execution.output import OutputBudget, cut_ends, fair_shares, joined_ends, output_budget
from app.core.execution.output_decoding import decode_output, json_length, visible_controls
from app.core.execution.output_files import KeptStart
from app.core.hop_times import mark
from app.core.journal.records import PREVIEW_HEAD_BYTES, PREVIEW_TAIL_BYTES
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
# What command_list returns at most, so that its answer always fits one message from the tray
# (each entry is at most about 7 KB there, its text being escaped twice).
COMMAND_LIST_ENTRIES_MAX = 100
LIST_COMMAND_CHARS = 200
LIST_CWD_CHARS = 300  # of a folder: its start and its end (the part that tells most)


def listed_text(text: str | None, keep: int) -> str | None:
    """At most about `keep` characters of `text`: its start and end, with what was left out between."""
    if text is None or len(text) <= keep:
        return text
    head, tail = text[: keep // 3], text[len(text) - (keep - keep // 3) :]
    return f"{head}[...{len(text) - len(head) - len(tail):,} characters...]{tail}"


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
    note: str | None = Field(default=None, description="jobs left out of the list, if any")


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
            f"Not all of the output could be kept ({problem}): outputFile holds only its start. command_output "
            f"with jobId {job.id} reads it at the same offsets as before, then what memory kept of the end of each "
            "stream. If you need all of it, free some disk space, then run the command again."
        )
    if all(stream.whole for stream in output.streams):
        return None
    return (
        f"Not all of the output could be kept ({problem}): only the start and end of each stream are, which "
        f"command_output with jobId {job.id} gives. If you need all of it, run the command again with its output "
        "redirected to a file in a folder with free space (`... > file 2>&1`), then read that file."
    )


INTERRUPTED_NOTE = "It did not finish: run it again with execute_command if it is still needed."


def unknown_status_note(row: CommandRecord) -> str:
    """For a job whose row has a status this version does not know (a later version's, or another
    program's edit): what can be said, and what to do next."""
    return (
        f'Job {row.id}\'s status in the journal is "{row.status.shown}", which this version of Cowork Terminal '
        "does not know (a newer version of the app, or another program, wrote it): this version cannot tell "
        "whether the command ran or how it ended, and neither stops nor allows it. If you still need it, run the "
        "command again with execute_command."
    )


def record_result(service: CommandService, row: CommandRecord, patience: float) -> JobResult:
    """What the model reads about another server's job: its journal row, and its output file."""
    status = record_status(row)
    path = job_file(service.paths.app_outputs(service.client.name), row.id, since=row.created_at)
    if not row.status.known:  # neither running nor ended as far as this version can tell: what was kept
        stdout, stderr = journal_streams(row, output_budget(service.journal), in_file=path is not None)
        return JobResult(
            jobId=row.id, status=row.status.shown, stdout=stdout, stderr=stderr, exitCode=row.exit_code,
            timedOut=row.timed_out, durationMs=row.duration_ms, note=unknown_status_note(row),
            outputFile=None if path is None else str(path),
        )  # fmt: skip
    note = row.reason
    if status is JobStatus.RUNNING:
        note = "Still running (in another server of this app); it goes on. " + follow_sentence(row.id, patience)
    elif status is JobStatus.WAITING:
        left = int((row.hold_expires_at or time.time()) - time.time())
        seen = left <= HOLD_LIFETIME_S  # the tray set its clock when the user could see it
        note = waiting_note(row.id, row.reason or "it needs the user's approval", left if seen else None, patience)
    stdout, stderr = journal_streams(row, output_budget(service.journal), in_file=path is not None)
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


# Where the journal cut a stream's copy (journal/records.py `preview`): its first and last bytes kept.
JOURNAL_CUT = re.compile(r"\n\[\.\.\. \d+ bytes not kept in the journal \.\.\.\]\n")
STREAM_LABELS = ("stdout", "stderr")


@dataclass(frozen=True)
class JournalCopy:
    """The journal's copy of one stream of another server's job: all of it, or its start (`first`)
    and end (`last`) where the journal cut its middle."""

    label: str
    first: str
    last: str | None  # None: the journal kept the stream whole
    total: int  # the bytes the stream had
    base: int  # where the copy starts in what command_output reads without a file (the copies in turn)
    alone: bool  # the other stream printed nothing: an output file holds this stream alone, from its start


def journal_cut(text: str) -> re.Match[str] | None:
    """The journal's own marker in its copy of a stream: the first after the head it kept (a line the
    command printed in its first bytes looks the same: a review, 2026-12-05). The head's text, encoded
    again, is never shorter than the bytes it was read from (each bad byte a replacement character)."""
    return next(
        (found for found in JOURNAL_CUT.finditer(text) if len(text[: found.start()].encode()) >= PREVIEW_HEAD_BYTES),
        None,
    )


def journal_copies(row: CommandRecord) -> list[JournalCopy]:
    """The journal's copies of a job's stdout and stderr, each split where the journal cut it."""
    texts = (row.stdout_preview or "", row.stderr_preview or "")
    totals = [
        total if total is not None else len(text.encode())
        for total, text in zip((row.stdout_bytes, row.stderr_bytes), texts, strict=True)
    ]
    copies, base = [], 0
    for index, (label, text) in enumerate(zip(STREAM_LABELS, texts, strict=True)):
        found = journal_cut(text) if totals[index] > PREVIEW_HEAD_BYTES + PREVIEW_TAIL_BYTES else None
        first, last = (text, None) if found is None else (text[: found.start()], text[found.end() :])
        copies.append(JournalCopy(label, first, last, totals[index], base, alone=totals[1 - index] == 0))
        base += len(text.encode())
    return copies


def journal_streams(row: CommandRecord, budget: OutputBudget, *, in_file: bool) -> tuple[str, str]:
    """stdout and stderr of another server's job, from the journal's copies (at most 8 KB of each
    stream), fitted to the output budget as every result is. Where text is left out (by the journal
    or to fit), a marker says how many bytes and how command_output reads them: at their offset in
    the output file (`in_file`), exact where that file holds this stream alone, else in the copies."""
    copies = journal_copies(row)
    needs = [_room_for_all(copy, row.id, in_file) for copy in copies]
    shares = needs if budget.chars is None else fair_shares(needs, budget.chars)
    out, err = (_fit_copy(copy, share, row.id, in_file) for copy, share in zip(copies, shares, strict=True))
    return out, err


def _room_for_all(copy: JournalCopy, job: int, in_file: bool) -> int:
    """The characters `copy` takes shown whole: where the journal cut it, with a marker of ours."""
    if copy.last is None:
        return json_length(copy.first)
    parts = (copy.first, "\n", _widest_marker(copy, job, in_file), copy.last)
    return sum(json_length(part) for part in parts)


def _fit_copy(copy: JournalCopy, room: int, job: int, in_file: bool) -> str:
    """One stream's copy in at most `room` characters of JSON text: its start and its end (cut at line
    boundaries where one is near, as output.clip does), a marker between them where anything is left out."""
    if copy.last is None and json_length(copy.first) <= room:
        return visible_controls(copy.first)
    space = max(room - json_length(_widest_marker(copy, job, in_file)) - json_length("\n"), 0)
    ending = copy.first if copy.last is None else copy.last
    if copy.last is not None and json_length(copy.first) + json_length(copy.last) <= space:
        head, tail = copy.first, copy.last
    else:
        head, tail = cut_ends(copy.first, ending, space)
    return joined_ends(head, _gap_marker(copy, job, in_file, head, tail), tail)


def _gap_marker(copy: JournalCopy, job: int, in_file: bool, head: str, tail: str) -> str:
    """The marker where `copy` is shown as `head`, then `tail`: how many bytes of the stream are left
    out between them, and where command_output reads them."""
    head_bytes, tail_bytes = len(head.encode()), len(tail.encode())
    left_out = max(copy.total - head_bytes - tail_bytes, 0)
    if in_file:  # the stream's own offsets are the file's only when the file holds it alone
        exact = copy.alone and "\ufffd" not in head
        return _marker_text(copy.label, left_out, job, head_bytes if exact else None, None)
    kept = len(copy.first.encode()) - head_bytes
    kept += len(copy.last.encode()) - tail_bytes if copy.last is not None else -tail_bytes
    return _marker_text(copy.label, left_out, job, copy.base + head_bytes, max(kept, 0))


def _marker_text(label: str, left_out: int, job: int, offset: int | None, kept: int | None) -> str:
    """`offset` None: the file merges the streams, so no offset of this one's bytes is known.
    `kept`: the bytes of those left out that the journal's copies hold (None: the file holds them all)."""
    if offset is None:
        where = (
            f"; read them in the whole output with command_output with jobId {job} (offset and limit), where "
            "stdout and stderr are merged as they came"
        )
    elif kept == 0:
        where = ", not kept anywhere"
    elif kept is None or kept >= left_out:
        where = f"; read them with command_output with jobId {job} and offset {offset}"
    else:
        where = (
            f"; only {kept:,} of them were kept: read those with command_output with jobId {job} and offset {offset}"
        )
    return f"[... {left_out:,} bytes of {label} left out here{where} ...]\n"


def _widest_marker(copy: JournalCopy, job: int, in_file: bool) -> str:
    """A marker at least as long as any `_gap_marker` of `copy`: room kept for it before cutting."""
    most = copy.total + copy.base + len(copy.first.encode()) + len((copy.last or "").encode())
    kinds = ((None, None), (most, None)) if in_file else ((most, 0), (most, most), (most, most - 1))
    return max((_marker_text(copy.label, most, job, offset, kept) for offset, kept in kinds), key=json_length)


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
            source: bytes | Path | JoinedOutput
            if job is not None:
                status = job.status.value
                source, note = job_source(job)
            else:
                row = jobs.record(number)
                status = record_status(row).value
                path = job_file(service.paths.app_outputs(service.client.name), number, since=row.created_at)
                if path is not None:
                    source, note = path, None
                else:  # it ended within its call: the journal kept the start and end of each stream
                    source = ((row.stdout_preview or "") + (row.stderr_preview or "")).encode()
                    note = JOURNAL_COPY_NOTE
                if not row.status.known:  # its output as kept, and that this version cannot say more
                    status, note = row.status.shown, unknown_status_note(row)
            growing = status == JobStatus.RUNNING.value  # a character cut at the end waits for its rest
            try:
                if isinstance(source, bytes):
                    part, at, total = part_of(source, start, size, lines, growing=growing, room=budget)
                elif isinstance(source, JoinedOutput):
                    part, at, total = source.read_part(start, size, lines, growing=growing, room=budget)
                else:
                    part, at, total = read_file_part(source, start, size, lines, growing=growing, room=budget)
            except OSError as problem:
                raise CommandRefused(f"The output of job {number} cannot be read: {problem.strerror}.") from None
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
                jobId=job.id, status=job.status.value, command=job.command[:LIST_COMMAND_CHARS],
                cwd=listed_text(job.cwd, LIST_CWD_CHARS), seconds=round((job.ended_at or now) - job.created_at, 1),
                server="this",
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
                jobId=row.id, status=record_status(row).value, command=row.command[:LIST_COMMAND_CHARS],
                cwd=listed_text(row.cwd, LIST_CWD_CHARS), seconds=round(now - row.created_at, 1), server="another",
            )
            for row in others
        ]  # fmt: skip
        if len(entries) > COMMAND_LIST_ENTRIES_MAX:
            more = len(entries) - COMMAND_LIST_ENTRIES_MAX
            entries = entries[:COMMAND_LIST_ENTRIES_MAX]
            capped = (
                f"Only {COMMAND_LIST_ENTRIES_MAX} jobs are listed; {more} more are not. "
                "command_wait or command_stop with a jobId still reach each of them."
            )
            note = f"{capped} {note}" if note else capped
        return reply(JobList(jobs=entries, note=note))


JOURNAL_COPY_NOTE = (
    "No output file of this job is left, so `output` is the copy its journal kept: the start and end of stdout, "
    "then of stderr (not in the order they came)."
)


def job_source(job: Job) -> tuple[bytes | Path | JoinedOutput, str | None]:
    """Where command_output reads one of this server's jobs: its output in memory while the spool
    holds it, else its file while that holds it all; once a write failed, what was kept in the order
    it came (at the offsets read before), then what memory kept of the rest; else what memory kept of
    each stream. With a note that says what is missing and why, when anything is."""
    output = job.output
    if output is None:
        return b"", None
    spool = output.spool
    memory = spool.in_memory()
    if memory is not None:  # the whole output, in the order it came
        return memory, None
    if spool.problem is None and spool.path is not None and spool.path.exists():
        spool.flush()
        return spool.path, None
    kept = spool.kept_start()
    if kept is not None and kept.size:  # offsets read before the failure keep meaning the same bytes
        return JoinedOutput(kept, output.rest_after(kept)), joined_note(job, kept)
    data = output.kept_bytes()
    if all(stream.whole for stream in output.streams):  # nothing was cut: only the order is lost
        why = f" ({spool.problem})" if spool.problem else ""
        return data, f"The order stdout and stderr came in was not kept{why}: `output` is stdout, then stderr."
    note = (
        f"Not all of the output could be kept ({spool.problem}), so `output` is what memory kept: stdout, then "
        "stderr, each with a marker where its middle was left out. The command printed "
        f"{output.total_bytes:,} bytes in all; totalBytes and offsets count only what is here."
    )
    if spool.path is None:
        advice = REDIRECT_ADVICE
    else:
        advice = "free some disk space, then run the command again"
        if size := file_size(spool.path):
            note += f" outputFile ({spool.path}) holds its first {size:,} bytes, in the order they came."
    return data, f"{note} If you need all of it, {advice}."


REDIRECT_ADVICE = "run the command again with its output redirected to a file (`... > file 2>&1`), then read that file"


def joined_note(job: Job, kept: KeptStart) -> str:
    """What command_output reads of a job whose output could not all be written (JoinedOutput)."""
    output = job.output
    assert output is not None
    where = f"outputFile ({kept.path})" if kept.path is not None else "what memory kept in the order it came"
    changing = " (it changes while the command runs)" if not job.done.is_set() else ""
    advice = "free some disk space, then run the command again" if kept.path is not None else REDIRECT_ADVICE
    return (
        f"Not all of the output could be kept ({output.spool.problem}). Up to offset {kept.size}, `output` is "
        f"{where}: stdout and stderr in the order they came, at the same offsets as before. After it comes what "
        f"memory kept of the rest{changing}: stdout, then stderr, with a marker where bytes were not kept anywhere. "
        f"The command printed {output.total_bytes:,} bytes in all. If you need all of it, {advice}."
    )


def file_size(path: Path | None) -> int:
    """The size of a file we made, or 0 when there is none (or it cannot be read)."""
    if path is None:
        return 0
    try:
        return path.stat().st_size
    except OSError:
        return 0
