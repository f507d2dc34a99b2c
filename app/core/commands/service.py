"""One server's way of turning a request from the model into a journaled, stoppable command.

It applies the user's rules in order (input checks, pause, tray presence), writes the journal row
before anything runs, runs the executor, and watches the journal so that the user's pause switch
and Stop button reach a running command within a second. It knows nothing of MCP: the server
layer turns `CommandRefused` into an error result the model reads.
"""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple

import anyio
import anyio.abc

from app.core.channel.protocol import Pin, command_digest
from app.core.classifier import Tier, classify, classify_typed, repl_program
from app.core.commands.authority import NotRecorded, ServerAuthority
from app.core.commands.jobs import Jobs, why_cancelled
from app.core.commands.pins import changed_since, pin_command
from app.core.commands.request import (
    CommandRefused,
    ExecuteRequest,
    ValidRequest,
    validate_request,
)
from app.core.data_folder import is_corrupt
from app.core.errors import CoworkError
from app.core.execution import container as containers
from app.core.execution import orphans, process_marks, read_only
from app.core.execution.container import Container
from app.core.execution.executor import CommandSpec, ExecutionResult, StopSignal, run_command
from app.core.execution.output import CommandOutput, OutputBudget, OutputHook, budget_from, output_budget
from app.core.execution.output_decoding import console_code_pages
from app.core.execution.shell_session import (
    SCROLLBACK_MAX_LINES,
    InputNotRead,
    RunningCommand,
    SessionResult,
    ShellSession,
)
from app.core.journal.store import Journal, Outcome, Status, bounded, storable
from app.core.messages import (
    APP_GONE_HOLD_REASON,
    APP_GONE_STOP_REASON,
    BASH_NOT_STARTED_REASON,
    CANCEL_REASON,
    DENIED_BY_REASON,
    DENIED_MESSAGE,
    HELD_MESSAGE,
    HOLD_EXPIRED_REASON,
    KEYS_HELD_REASON,
    KEYS_NOT_READ_REASON,
    KILLED_BY_REASON,
    NO_APPROVER_MESSAGE,
    OTHER_COMMAND_REASON,
    PAUSE_STOP_REASON,
    PAUSED_HOLD_REASON,
    PAUSED_MESSAGE,
    PROTECTED_WRITE_PLAIN,
    SERVER_EXITED_REASON,
    SERVER_STOPPED_REASON,
    SESSION_BUSY_MESSAGE,
    SESSION_BUSY_REASON,
    SESSION_ENDED_REASON,
    SESSION_MOVED_REASON,
    TIMED_OUT_REASON,
    UNKNOWN_DECIDER,
    UNPROTECTED_REASON,
    USER_STOP_REASON,
    WITHDRAWN_MESSAGE,
    WITHDRAWN_REASON,
    held_reason,
)
from app.core.paths import AppPaths, protected_paths
from app.core.policy.approval import (
    HOLD_LIFETIME_S,
    HOLD_UNSEEN_MAX_S,
    hold_expiry,
    needs_approval,
    new_confirmation_id,
)

log = logging.getLogger(__name__)

INTERRUPT_SETTLE_S = 5.0  # at most, for the interrupted command to end (it returns as soon as it does)
WATCH_INTERVAL_S = 0.2  # how often a busy headless server looks for pause and Stop in the journal
SERVING_WAIT_S = 5.0  # a call waits at most this long for a service opened at that call to start
DECISION_POLL_S = 0.1  # a held call looks again at least this often (a tray's push wakes it at once)
MAX_KEYS_BYTES = 64 * 1024
LIVE_OUTPUT_S = 1.0  # how often a running command's output so far goes to the record (the live log)


class CommandHeld(CommandRefused):
    """The command waits for the user's answer beyond this call; the model may confirm it later."""

    def __init__(self, message: str, *, confirmation_id: str) -> None:
        super().__init__(message)
        self.confirmation_id = confirmation_id


def _reasons_text(reasons: tuple[str, ...]) -> str:
    return "; ".join(reasons) if reasons else "it needs the user's approval"


@dataclass(frozen=True)
class SessionOutcome:
    result: SessionResult
    restarted: bool
    stopped_reason: str | None = None  # pause, the user's Stop


Runner = Callable[[int, "ValidRequest", str, "OutputHook | None"], Awaitable[Any]]


class Hold(NamedTuple):
    """A command waiting for the user's answer, with what is needed to run it (env values stay in memory)."""

    command_id: int
    request: ValidRequest
    runner: Runner
    expires_at: float
    reasons: str
    pin: Pin | None = None  # what the user is asked about: the folder, the scripts, the environment


class Admitted(NamedTuple):
    """A journaled request that may run now, or waits for the user when `confirmation_id` is set."""

    command_id: int
    request: ValidRequest
    bash: str
    confirmation_id: str | None = None


@dataclass
class ClientInfo:
    name: str | None = None
    version: str | None = None
    protocol: str | None = None  # the protocol version the client speaks, when it said


class CommandService:
    """Everything one server instance does with commands, between the protocol and the executor."""

    def __init__(
        self,
        journal: Journal,
        paths: AppPaths,
        *,
        server_id: int | None,
        bash: Callable[[], str],
        environment: Callable[[Mapping[str, str]], dict[str, str]],
        authority: ServerAuthority | None = None,
        home: str | None = None,
        run_mark: str | None = None,
    ) -> None:
        self.journal = journal
        self.paths = paths
        self.server_id = server_id
        self._bash = bash
        self._environment = environment
        # Headless with no tray by default (tests of the executor path); `serve` passes its own.
        self.authority = authority or ServerAuthority(journal, None, headless=True)
        self.home = home or str(Path.home())
        self.run_mark = run_mark  # orphans.server_mark: every process we start carries it
        self.client = ClientInfo()
        self.protected_paths = protected_paths(paths)  # as named, and as real
        self._held: dict[str, Hold] = {}
        self._session: ShellSession | None = None
        self._session_lock = anyio.Lock()
        self._typed_line = ""  # what send_keys typed since the last newline
        self._background: anyio.abc.TaskGroup | None = None
        self._live: dict[int, CommandOutput] = {}  # running commands' output, reported while they run
        self._live_bytes: dict[int, int] = {}  # how much of each was reported
        self._live_reported_at = 0.0
        self._running: dict[int, StopSignal] = {}
        self._wake = anyio.Event()
        self._pulse = anyio.Event()  # set and replaced whenever the tray pushes something
        self._serving = anyio.Event()  # run_background has started: jobs can run
        self.jobs = Jobs(self)  # every execute_command is a job (issue 22)
        self._containment: read_only.Containment | None = None
        self._unbound: dict[int, list[str]] = {}  # allowed by the user to change these protected members
        self._privileged: set[int] = set()  # allowed by the user to gain privileges: run outside

    def pushed(self) -> None:
        """The tray pushed a change (pause, Stop, a decision, or it went away): act on it now.
        Runs on the event loop (the link's thread hands it over)."""
        pulse, self._pulse = self._pulse, anyio.Event()
        pulse.set()
        self.apply_user_stops()

    async def _journal_row(self, **row: Any) -> int:
        """A journal row from this server: who runs it is filled in here, the rest by the caller.
        Raises CommandRefused when the row cannot be written: nothing runs unrecorded."""
        try:
            return await self.authority.begin(
                server_id=self.server_id,
                server_pid=os.getpid(),
                client_name=self.client.name,
                client_version=self.client.version,
                **row,
            )
        except NotRecorded as refused:
            raise CommandRefused(str(refused)) from None

    async def _journal_refusal(self, request: ExecuteRequest, reason: str, tool: str) -> None:
        """Journal a call that did not run. One that cannot be journaled (a full disk) is still
        refused, with its own reason: only what runs must be recorded first."""
        try:
            await self._journal_refused_row(request, reason, tool)
        except CoworkError as problem:
            log.warning("a refused call could not be journaled: %s", problem)

    async def _journal_refused_row(self, request: ExecuteRequest, reason: str, tool: str) -> None:
        env_keys = list(request.env) if isinstance(request.env, Mapping) else []
        command = request.command if isinstance(request.command, str) else repr(request.command)
        # Bounded here already, so that a refused 5 MB command is not sent whole to the tray either.
        await self._journal_row(
            command=bounded(storable(command)),
            cwd=bounded(storable(request.cwd)) if isinstance(request.cwd, str) else None,
            env_keys=[str(k) for k in env_keys],
            tool=tool,
            status=Status.REFUSED,
            reason=reason,
        )

    async def journal_refused_arguments(
        self, tool: str, text: object, arguments: Mapping[str, object], reason: str
    ) -> None:
        """A call refused at its arguments, before anything else (commands.request.check_arguments);
        the journal keeps a bounded, storable copy of what was sent."""
        request = ExecuteRequest(
            command="" if text is None else text, cwd=arguments.get("cwd"), env=arguments.get("env")
        )
        await self._journal_refusal(request, reason, tool)

    def check_allowed(self) -> None:
        """Raise CommandRefused when the user's rules say no command may run now."""
        refusal = self.authority.refusal()
        if refusal:
            raise CommandRefused(refusal)

    async def execute(
        self, request: ExecuteRequest, *, tool: str = "execute_command", on_output: OutputHook | None = None
    ) -> ExecutionResult:
        """Run one command under the user's rules; raises CommandRefused (or CommandHeld) when it does not run.
        `on_output` is told of the command's output as it starts (progress reports read it)."""
        return await self._submit(request, tool, self._run, on_output)

    async def session_run(
        self, command: object, timeout_ms: object, on_output: OutputHook | None = None
    ) -> SessionOutcome:
        """Run a command in this server's long-lived shell, under the same rules as `execute`."""
        request = ExecuteRequest(command=command, cwd=self._session_dir(), timeout_ms=timeout_ms)
        return await self._submit(request, "terminal_run", self._run_in_session, on_output)

    def _new_output(self, command_id: int, labels: tuple[str, ...]) -> CommandOutput:
        """Where a command's output goes: the user's budget, the private folder for whole outputs."""
        return CommandOutput(self._budget(), self.paths.outputs, f"cmd{command_id}", labels, console_code_pages())

    def _budget(self) -> OutputBudget:
        """The user's output budget. A journal damaged under this server (SQLite finds it only as it
        reads) is opened again, which moves it aside for a new one; the budget is no control, so
        the command runs on with the default if even that fails."""
        try:
            return output_budget(self.journal)
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, CoworkError) or not is_corrupt(exc):
                raise
            log.warning("the journal is damaged (%s): opening it again", exc)
        try:
            self.journal.reopen()
            return output_budget(self.journal)
        except (CoworkError, sqlite3.Error) as exc:
            log.warning("the output budget could not be read (%s): the default is used", exc)
            return budget_from(None, os.environ)

    def _changes_protected(self, command: str, tier: Tier) -> bool:
        """A command that may write (not read-only) and names a member of the protected set: held,
        so that the user can allow it to run without the read-only binds (issue 21)."""
        found = self._container()
        if not found.on or tier is Tier.SAFE:
            return False
        return containers.touches_protected(command, containers.hold_members(found.protected), self.home)

    def _container_for(self, command_id: int) -> Container:
        """The container one command runs in: none when the user allowed it to gain privileges;
        with the members it names writable when the user allowed it to change them."""
        if command_id in self._privileged:
            return Container(containers.PRIVILEGED)
        if command_id in self._unbound:
            return self._container().without(self._unbound[command_id])
        return self._container()

    def _container(self) -> Container:
        """The OS container for this process's commands, probed once (container.py); none when
        the user switched it off in the app."""
        if not self.authority.contained():
            return Container(containers.OFF)
        return containers.for_paths(self.paths)

    def _mark(self, what: str) -> str | None:
        return f"{self.run_mark}:{what}" if self.run_mark else None

    def _session_dir(self) -> str | None:
        """Where the next session command runs, for the journal, the approval prompt and the
        classifier: the shell's folder, or None (home) when a new shell will start."""
        session = self._session
        if session is None or not session.alive or not os.path.isdir(session.current_dir):
            return None
        return session.current_dir

    async def _submit(self, request: ExecuteRequest, tool: str, runner: Runner, on_output: OutputHook | None) -> Any:
        admitted = await self.admit(request, tool, runner)
        if admitted.confirmation_id is None:
            return await runner(admitted.command_id, admitted.request, admitted.bash, on_output)
        return await self._await_approval(admitted.confirmation_id, admitted.bash, on_output)

    async def admit(
        self, request: ExecuteRequest, tool: str, runner: Runner, *, proven_read_only: bool = False
    ) -> Admitted:
        """Check, classify and journal a request: it may run now, or (`confirmation_id`) it waits for
        the user. Raises CommandRefused when it may not run at all (journaled as refused).
        `proven_read_only`: refuse what the classifier cannot prove read-only (no OS containment)."""
        try:
            valid = validate_request(request, self.home)
            self.check_allowed()
            bash = self._bash()
        except CoworkError as refusal:
            await self._journal_refusal(request, str(refusal), tool)
            raise CommandRefused(str(refusal)) from None

        # The real folder: a symlink to the data folder must not pass for somewhere else.
        verdict = classify(valid.command, cwd=os.path.realpath(valid.cwd), protected_paths=self.protected_paths)
        if proven_read_only and verdict.tier is not Tier.SAFE:
            reason = read_only.NOT_PROVEN_MESSAGE.format(reasons=_reasons_text(verdict.reasons))
            await self._journal_refusal(request, reason, tool)
            raise CommandRefused(reason)
        protected_write = not proven_read_only and self._changes_protected(valid.command, verdict.tier)
        plain = (*verdict.plain, PROTECTED_WRITE_PLAIN) if protected_write else verdict.plain
        said = held_reason(plain, verdict.reasons)
        if not needs_approval(self.authority.approval_mode(), verdict.tier is Tier.DESTRUCTIVE or protected_write):
            return Admitted(await self._begin(valid, tool, verdict.tier.name.lower()), valid, bash)

        if not self.authority.present():
            reason = NO_APPROVER_MESSAGE.format(reasons=said)
            await self._journal_refusal(request, reason, tool)
            raise CommandRefused(reason)
        try:  # what runs is fixed now, as the user is asked (core/commands/pins.py)
            pin = await anyio.to_thread.run_sync(pin_command, valid.command, valid.cwd, valid.env)  # hashes files
        except OSError as exc:
            reason = f"`cwd` cannot be examined: {valid.cwd} ({exc.strerror}). Give a folder this user can open."
            await self._journal_refusal(request, reason, tool)
            raise CommandRefused(reason) from None
        confirmation_id = new_confirmation_id()
        expires_at = time.time() + HOLD_UNSEEN_MAX_S  # the tray starts the real clock when the user sees it
        command_id = await self._begin(
            valid,
            tool,
            verdict.tier.name.lower(),
            status=Status.WAITING,
            reason=said,
            confirmation_id=confirmation_id,
            pin=pin,
        )
        self._held[confirmation_id] = Hold(command_id, valid, runner, expires_at, said, pin)
        return Admitted(command_id, valid, bash, confirmation_id)

    async def confirm(
        self, confirmation_id: str, on_output: OutputHook | None = None
    ) -> ExecutionResult | SessionOutcome:
        """The model asks again for a held command: run it if the user allowed it, else wait a while."""
        command_id = self._lookup_hold(confirmation_id).command_id
        try:
            bash = self._bash()
        except CoworkError as problem:
            self._close_hold(confirmation_id, command_id, str(problem))
            raise CommandRefused(str(problem)) from None
        return await self._await_approval(confirmation_id, bash, on_output)

    def cancel(self, confirmation_id: str) -> str:
        """The model withdraws a held command; the user's prompt for it disappears."""
        hold = self._lookup_hold(confirmation_id)
        self._close_hold(confirmation_id, hold.command_id, WITHDRAWN_REASON)
        return f"Withdrawn: the held command will not run ({hold.request.command[:80]!r})."

    def _lookup_hold(self, confirmation_id: str) -> Hold:
        held = self._held.get(confirmation_id)
        if held is None:
            raise CommandRefused(
                f"No held command has the confirmation_id {confirmation_id!r} on this server. "
                "Run the command again to ask the user."
            )
        if self.hold_expires_at(held) <= time.time():
            self._close_hold(confirmation_id, held.command_id, HOLD_EXPIRED_REASON)
            raise CommandRefused(
                "The held command can no longer run: the hold expired before it was confirmed. Run it again to "
                "ask the user anew."
            )
        return held

    def _close_hold(self, confirmation_id: str, command_id: int, reason: str) -> None:
        self._held.pop(confirmation_id, None)
        self.authority.finish(command_id, Outcome(status=Status.REFUSED, reason=reason))

    async def await_approval(self, confirmation_id: str, bash: str, on_output: OutputHook | None) -> Any:
        """A job's hold: wait for the user's answer until the hold expires (not only the approval
        window), and run the command at the click; raises CommandRefused when it will not run."""
        if confirmation_id not in self._held:  # withdrawn (command_stop) before its task started
            raise CommandRefused(WITHDRAWN_MESSAGE)
        return await self._await_approval(confirmation_id, bash, on_output, until_expiry=True)

    def hold_expires_at(self, hold: Hold) -> float:
        """When a hold runs out: HOLD_LIFETIME_S after the user could first see it (the tray says when)."""
        return self.authority.hold_expiry(hold.command_id, hold.expires_at)

    def hold_of(self, confirmation_id: str) -> Hold | None:
        return self._held.get(confirmation_id)

    def withdraw(self, confirmation_id: str) -> None:
        """The model withdraws a job's hold (command_stop): its prompt disappears."""
        hold = self._held.get(confirmation_id)
        if hold is not None:
            self._close_hold(confirmation_id, hold.command_id, WITHDRAWN_REASON)

    def stop_running(self, command_id: int, reason: str) -> bool:
        """End a command this server runs, whole tree; False when it runs nothing by that id."""
        stop = self._running.get(command_id)
        if stop is None:
            return False
        stop.set(reason)
        return True

    async def _await_approval(
        self, confirmation_id: str, bash: str, on_output: OutputHook | None, *, until_expiry: bool = False
    ) -> Any:
        hold = self._held[confirmation_id]
        command_id, valid = hold.command_id, hold.request
        decision = await self._wait_for_decision(hold, until_expiry=until_expiry)
        if not self.authority.present() and decision is None:
            self._close_hold(confirmation_id, command_id, APP_GONE_HOLD_REASON)
            raise CommandRefused(self.authority.absence_message())
        if self.authority.paused():
            self._close_hold(confirmation_id, command_id, PAUSED_HOLD_REASON)
            raise CommandRefused(PAUSED_MESSAGE)
        stopped = command_id in self.authority.stop_requests([command_id])  # Stop on a held row = Deny
        if stopped or (decision is not None and not decision.allowed):
            who = decision.by if decision else UNKNOWN_DECIDER
            self._close_hold(confirmation_id, command_id, DENIED_BY_REASON.format(who=who))
            raise CommandRefused(DENIED_MESSAGE)
        if decision is not None:
            self._held.pop(confirmation_id, None)
            # The tray sends a digest of what the user saw: run only that, never a row rewritten on disk.
            if decision.digest != command_digest(valid.command, valid.cwd, sorted(valid.env), hold.pin):
                self._close_hold(confirmation_id, command_id, OTHER_COMMAND_REASON)
                raise CommandRefused("The approval did not match this command, so it was not run. Run it again.")
            if hold.pin is not None:  # the folder, scripts and environment the user was asked about
                changed = await anyio.to_thread.run_sync(changed_since, hold.pin, valid.env)
                if changed is not None:
                    log.warning("held command %s not run: %s", command_id, changed)
                    self._close_hold(confirmation_id, command_id, changed)
                    raise CommandRefused(
                        f"The command was not run: {changed}. Check what changed, then run it again to ask "
                        "the user anew."
                    )
                valid = replace(valid, cwd=hold.pin.folder)  # that very folder, not where a link points now
            try:
                await self.authority.started(command_id)
            except NotRecorded as refused:
                self._close_hold(confirmation_id, command_id, str(refused))
                raise CommandRefused(str(refused)) from None
            if self._container().on and containers.gains_privileges(valid.command):
                self._privileged.add(command_id)  # allowed by the user: sudo cannot work inside
            elif self._container().on:
                named = containers.named_members(valid.command, self._container().protected.all(), self.home)
                if named:  # the user allowed a change to these members of the protected set
                    self._unbound[command_id] = named
            return await hold.runner(command_id, valid, bash, on_output)
        if self.hold_expires_at(hold) <= time.time():
            self._close_hold(confirmation_id, command_id, HOLD_EXPIRED_REASON)
            raise CommandRefused("The held command expired before the user answered. Run it again to ask anew.")
        raise CommandHeld(
            HELD_MESSAGE.format(
                confirmation_id=confirmation_id,
                minutes=int(HOLD_LIFETIME_S // 60),
                reasons=hold.reasons,
            ),
            confirmation_id=confirmation_id,
        )

    async def _wait_for_decision(self, hold: Hold, *, until_expiry: bool = False) -> Any:
        """Wait up to the approval window (or the hold's expiry) for the user's answer, a pause, a
        Stop or the tray's absence."""
        authority = self.authority
        window_s = HOLD_UNSEEN_MAX_S if until_expiry else authority.approval_window_s()
        deadline = anyio.current_time() + window_s
        while True:
            decision = authority.decision(hold.command_id)
            if (
                decision is not None
                or authority.paused()
                or not authority.present()
                or authority.stop_requests([hold.command_id])
                or self.hold_expires_at(hold) <= time.time()
                or anyio.current_time() >= deadline
            ):
                return decision
            with anyio.move_on_after(min(DECISION_POLL_S, max(0.0, deadline - anyio.current_time()))):
                await self._pulse.wait()

    async def _begin(self, valid: ValidRequest, tool: str, tier: str, **row: object) -> int:
        if row.get("status") is Status.WAITING:
            row["hold_expires_at"] = hold_expiry()
        return await self._journal_row(
            command=valid.command, cwd=valid.cwd, env_keys=valid.env.keys(), timeout_ms=valid.timeout_ms,
            tool=tool, tier=tier, **row,
        )  # fmt: skip

    def _track(self, command_id: int) -> StopSignal:
        """Register a command that is about to run, so that pause and Stop reach it; whoever calls
        this must also remove it when the command ends."""
        stop = self._running[command_id] = StopSignal()
        self._wake.set()
        return stop

    def _report_live_output(self) -> None:
        """While commands run, their output so far goes to the record each LIVE_OUTPUT_S (from the
        watch loop), so the activity log shows it live, not "Shown when the command ends" (issue 24)."""
        now = time.monotonic()
        if now - self._live_reported_at < LIVE_OUTPUT_S:
            return
        self._live_reported_at = now
        for command_id, output in list(self._live.items()):
            if output.total_bytes != self._live_bytes.get(command_id):
                self._live_bytes[command_id] = output.total_bytes
                out, err = output.streams[0], output.streams[1]
                self.authority.progress(command_id, out.raw(), err.raw(), out.total, err.total)
        for gone in set(self._live_bytes) - set(self._live):
            del self._live_bytes[gone]

    async def run_read_only(
        self, command_id: int, valid: ValidRequest, bash: str, on_output: OutputHook | None = None
    ) -> ExecutionResult:
        """Run a command of execute_read_only_command: inside bwrap or sandbox-exec where there is one
        (where there is none, `admit` let only commands proven read-only through)."""
        way = self.read_only_containment()
        prefix = read_only.prefix_for(way, valid.cwd, self.home, os.environ, shutil.which)
        return await self._run(command_id, valid, bash, on_output, prefix=tuple(prefix))

    def read_only_containment(self) -> read_only.Containment:
        if self._containment is None:
            self._containment = read_only.containment(sys.platform, shutil.which, os.path.exists)
        return self._containment

    async def _run(
        self,
        command_id: int,
        valid: ValidRequest,
        bash: str,
        on_output: OutputHook | None = None,
        prefix: tuple[str, ...] = (),
    ) -> ExecutionResult:
        stop = self._track(command_id)
        self.apply_user_stops()  # a pause that landed after check_allowed, while another command ran
        spec = CommandSpec(
            command=valid.command,
            cwd=valid.cwd,
            env=self._environment(valid.env),
            timeout_s=valid.timeout_ms / 1000,
            bash=bash,
            mark=self._mark(str(command_id)),
            prefix=prefix,
            container=None if prefix else self._container_for(command_id),
        )
        output = self._new_output(command_id, ("stdout", "stderr"))
        if on_output is not None:
            on_output(output)
        self._live[command_id] = output  # its output so far goes to the record (_report_live_output)
        try:
            result = await run_command(spec, stop, output)
        except OSError as exc:
            message = BASH_NOT_STARTED_REASON.format(bash=bash, error=exc.strerror or exc)
            self.authority.finish(command_id, Outcome(status=Status.FAILED, reason=message))
            raise CommandRefused(message) from None
        except BaseException:  # its task was cancelled: Jobs.end, or the server ends (jobs.why_cancelled)
            reason = why_cancelled()
            status = Status.INTERRUPTED if reason == SERVER_EXITED_REASON else Status.KILLED
            with anyio.CancelScope(shield=True):
                self.authority.finish(command_id, Outcome(status=status, reason=reason))
            raise
        finally:
            self._running.pop(command_id, None)
            self._live.pop(command_id, None)
            self._unbound.pop(command_id, None)
        privileged = command_id in self._privileged
        self._privileged.discard(command_id)
        used = Container(containers.PRIVILEGED) if privileged else self._container()
        if not prefix:  # the read-only tool runs in its own container (read_only.py)
            result.protection_note = protection_note(result, self._container())
        self.authority.finish(command_id, outcome_of(result, used))
        return result

    @property
    def serving(self) -> bool:
        """Whether jobs can run: the server's background task group is up."""
        return self._background is not None

    async def run_admitted(
        self, command_id: int, valid: ValidRequest, bash: str, on_output: OutputHook | None = None
    ) -> ExecutionResult:
        """Run an admitted command now (a job's runner)."""
        return await self._run(command_id, valid, bash, on_output)

    async def until_serving(self, seconds: float = SERVING_WAIT_S) -> None:
        """Wait (briefly) for the background group that jobs run in: a service just opened at a call
        (the data folder had no room before) starts it on the same loop a moment later."""
        with anyio.move_on_after(seconds):
            await self._serving.wait()

    def spawn(self, work: Callable[..., Awaitable[Any]], *args: Any) -> None:
        """Run `work` for as long as the server lives (a job that outlives its call)."""
        if self._background is None:
            raise CommandRefused("The server is still starting; try again in a moment.")
        self._background.start_soon(work, *args)

    async def run_background(self) -> None:
        """Run for the server's life: the stop watch, and the session's reader and late results."""
        try:
            async with anyio.create_task_group() as background:
                self._background = background
                self._serving.set()
                await self._watch()
        finally:
            with anyio.CancelScope(shield=True):
                if self._session is not None:
                    await self._session.close()

    async def _watch(self) -> None:
        """While commands run, apply pause and Stop: a headless server polls the journal; a tray's
        pushes arrive through `pushed` at once, and this loop is only a backstop for them."""
        seen_version = -1
        while True:
            if not self._running:
                self._wake = anyio.Event()
                await self._wake.wait()
                seen_version = -1
            version = self.authority.version()
            if version != seen_version:
                seen_version = version
                self.apply_user_stops()
            self._report_live_output()
            await anyio.sleep(WATCH_INTERVAL_S)

    # -- the persistent shell session ---------------------------------------------------------

    async def _session_ready(self, bash: str) -> tuple[ShellSession, bool]:
        if self._background is None:
            raise CommandRefused("The server is still starting; try again in a moment.")
        if self._session is None:
            self._session = ShellSession(
                bash,
                self.home,
                self._environment({}),
                mark=self._mark(orphans.SHELL),
                code_pages=console_code_pages(),
                container=self._container(),
            )
        restarted = await self._session.start(self._background)
        return self._session, restarted

    async def _run_in_session(
        self, command_id: int, valid: ValidRequest, bash: str, on_output: OutputHook | None = None
    ) -> SessionOutcome:
        async with self._session_lock:  # two first calls at once must not start two shells
            session, restarted = await self._session_ready(bash)
            if not session.busy and not await session.protect_again():  # an allowed change stayed writable
                await session.close()  # so that shell's container ends, and a new one starts
                session, restarted = await self._session_ready(bash)
            if session.busy:
                self.authority.finish(command_id, Outcome(status=Status.REFUSED, reason=SESSION_BUSY_REASON))
                raise CommandRefused(SESSION_BUSY_MESSAGE)
            self._typed_line = ""
            here = self._session_dir() or self.home
            if os.path.realpath(here) != os.path.realpath(valid.cwd):  # it was judged (and shown) elsewhere
                reason = SESSION_MOVED_REASON.format(here=here)
                self.authority.finish(command_id, Outcome(status=Status.REFUSED, reason=reason))
                raise CommandRefused(
                    f"The shell session is now in {here}, not in {valid.cwd} where this command was checked "
                    "(and shown to the user). Run it again with terminal_run if it is still wanted."
                )
            members = self._unbound.pop(command_id, None)  # the user allowed it to change these
            if members:
                await session.lift(members)
            stop = self._track(command_id)  # only now: a refusal above must not leave it registered
            output = self._new_output(command_id, ("output",))
            running = await session.send_command(valid.command, mark=self._mark(str(command_id)), output=output)
        if on_output is not None:
            on_output(output)
        journaled = anyio.Event()
        assert self._background is not None
        # The finisher watches pause and Stop from now on, and journals the end whenever it comes,
        # even after this call has returned (the command may outlive its time limit).
        self._background.start_soon(self._finish_session_command, command_id, running, stop, journaled)
        self.apply_user_stops()  # a pause that landed while the shell was starting
        try:
            with anyio.move_on_after(valid.timeout_ms / 1000):
                await running.done.wait()
        except BaseException:
            stop.set(CANCEL_REASON)  # the finisher interrupts it (and ends the shell if it must)
            raise
        finished = running.done.is_set()
        if finished:
            await journaled.wait()
        return SessionOutcome(
            result=running.result(finished=finished, restarted=restarted),
            restarted=restarted,
            stopped_reason=stop.reason if finished else None,
        )

    async def _finish_session_command(
        self, command_id: int, running: RunningCommand, stop: StopSignal, journaled: anyio.Event
    ) -> None:
        """Apply pause, Stop and cancellation to a session command, and journal how it ended."""
        try:
            async with anyio.create_task_group() as group:

                async def on_stop() -> None:
                    await stop.wait()
                    # Pause, Stop and cancellation end the whole shell: Ctrl-C would only end the
                    # foreground program, and the rest of a command list (`a; b`) would run on.
                    if self._session is not None:
                        await self._session.close()

                group.start_soon(on_stop)
                await running.done.wait()
                group.cancel_scope.cancel()
        finally:
            self._running.pop(command_id, None)
            running.output.finish()  # keeps or removes the whole output's file
            kept = running.output.streams[0]
            if not running.done.is_set():  # the server is shutting down under it
                status, reason = Status.INTERRUPTED, SERVER_STOPPED_REASON
            elif stop.reason is not None:
                status, reason = Status.KILLED, stop.reason
            elif running.ended_session:
                status, reason = Status.FAILED, SESSION_ENDED_REASON
            else:
                status = Status.FINISHED if running.exit_code == 0 else Status.FAILED
                reason = None
            with anyio.CancelScope(shield=True):
                if self._session is not None and not await self._session.protect_again():
                    await self._session.close()  # never leave the shell's container open (container_lift)
                self.authority.finish(
                    command_id,
                    Outcome(
                        status=status,
                        exit_code=running.exit_code,
                        reason=reason,
                        stdout=kept.raw(),
                        stdout_bytes=kept.total,
                    ),
                )
                mark = self._mark(str(command_id))
                cut_short = status in (Status.INTERRUPTED, Status.KILLED) or running.ended_session
                if mark and cut_short:  # it ended with the shell: what escaped the shell's group too
                    await anyio.to_thread.run_sync(process_marks.end_marked, mark)
            journaled.set()

    async def session_send_keys(self, keys: object) -> str:
        """Type into the program running in the session, journaled, and judged like a command."""
        if not isinstance(keys, str) or keys == "":
            raise CommandRefused("`keys` is empty: give the text to type.")
        if len(keys.encode()) > MAX_KEYS_BYTES:
            raise CommandRefused(f"`keys` is longer than {MAX_KEYS_BYTES:,} bytes: send less at a time.")
        try:
            self.check_allowed()
        except CommandRefused as refusal:
            await self._journal_refusal(ExecuteRequest(command=keys), str(refusal), "terminal_send_keys")
            raise
        session = self._session
        if session is None or not session.alive or not session.busy:
            raise CommandRefused(
                "Nothing in the session is waiting for input, so the keys were not sent (they would not reach "
                "a program). Use terminal_run to run a command."
            )
        # Typed text reaches the running program: a shell reads it as commands, an interpreter's
        # prompt as its own code, anything else may run what it is given (classify_typed holds it).
        # The whole line being typed is judged (keys sent in pieces add up).
        line = self._typed_line + keys
        verdict = classify_typed(
            line, repl_program(session.foreground), cwd=session.current_dir, protected_paths=self.protected_paths
        )
        if needs_approval(self.authority.approval_mode(), verdict.tier is Tier.DESTRUCTIVE):
            reason = KEYS_HELD_REASON.format(reasons=_reasons_text(verdict.reasons))
            await self._journal_refusal(ExecuteRequest(command=keys), reason, "terminal_send_keys")
            raise CommandRefused(reason)
        self._typed_line = line.rsplit("\n", 1)[1] if "\n" in line else line
        command_id = await self._journal_row(
            command=keys, cwd=None, tool="terminal_send_keys", tier=verdict.tier.name.lower()
        )
        try:
            answer = await session.send_keys(keys)
        except InputNotRead:
            self.authority.finish(command_id, Outcome(status=Status.FAILED, reason=KEYS_NOT_READ_REASON))
            raise CommandRefused(
                "The program in the session is not reading its input, so not all keys were sent."
            ) from None
        self.authority.finish(command_id, Outcome(status=Status.FINISHED, exit_code=0))
        return answer

    async def session_interrupt(self) -> bool | None:
        """Ctrl-C to the session. None: no session; else whether nothing runs in it a moment later
        (so that a terminal_run right after does not find it busy while bash finishes the line)."""
        if self._session is None or not self._session.interrupt():
            return None
        return await self._session.wait_idle(INTERRUPT_SETTLE_S)

    def session_scrollback(self, lines: object) -> str:
        if isinstance(lines, bool) or not isinstance(lines, int) or not 1 <= lines <= SCROLLBACK_MAX_LINES:
            raise CommandRefused(f"`lines` must be a whole number from 1 to {SCROLLBACK_MAX_LINES}.")
        if self._session is None:
            return ""
        return self._session.scrollback(lines)

    def apply_user_stops(self) -> None:
        running = dict(self._running)
        if not running:
            return
        authority = self.authority
        if authority.tethered and not authority.present():  # the tray went away: nobody watches
            for stop in running.values():
                stop.set(APP_GONE_STOP_REASON)
            return
        if authority.paused():
            for stop in running.values():
                stop.set(PAUSE_STOP_REASON)
            return
        for command_id in authority.stop_requests(list(running)):
            running[command_id].set(USER_STOP_REASON)


def protection_note(result: ExecutionResult, container: Container) -> str | None:
    """What the model reads when a command failed on the protected set (container.py)."""
    if not result.contained:
        return None
    stderr = result.stderr.raw().decode("utf-8", "replace")
    return containers.protected_hint(stderr, result.exit_code, container.protected.all())


def outcome_of(result: ExecutionResult, container: Container | None = None) -> Outcome:
    if result.timed_out:
        status, reason = Status.TIMED_OUT, TIMED_OUT_REASON
    elif result.stopped_reason:
        status, reason = Status.KILLED, result.stopped_reason
    elif result.exit_code == 0:
        status, reason = Status.FINISHED, None
    else:
        status = Status.FAILED
        reason = KILLED_BY_REASON.format(signal=result.signal_name) if result.signal_name else None
    if container is not None and not result.contained and container.state != containers.UNSUPPORTED:
        unprotected = UNPROTECTED_REASON.format(why=containers.log_message(container.state))
        reason = f"{reason}; {unprotected}" if reason else unprotected
    return Outcome(
        status=status,
        exit_code=result.exit_code,
        timed_out=result.timed_out,
        reason=reason,
        stdout=result.stdout.raw(),
        stderr=result.stderr.raw(),
        stdout_bytes=result.stdout.total,
        stderr_bytes=result.stderr.total,
        duration_ms=result.duration_ms,
    )
