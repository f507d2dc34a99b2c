"""One server's long-lived shell (terminal_run, terminal_send_keys): its commands are admitted
like any other, run one at a time, and end with the whole shell on pause, Stop or cancellation."""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import anyio.abc

from app.core.classifier import Classification, JudgedTooLong, Tier, classify_typed, repl_program
from app.core.commands.admission import CLASSIFY_ON_A_THREAD_CHARS, INLINE_JUDGING_S, judged_alone, reasons_text
from app.core.commands.authority import ServerAuthority
from app.core.commands.cancellation import why_cancelled
from app.core.commands.request import CommandRefused, ExecuteRequest, ValidRequest
from app.core.commands.running import ContainerSlow, unprotected_reason
from app.core.execution import orphans, process_marks
from app.core.execution.output import SCROLLBACK_MAX_LINES, OutputHook
from app.core.execution.output_decoding import console_code_pages
from app.core.execution.run_result import LEFT_RUNNING_NOTE, ExecutionResult, InputNotRead, StopSignal
from app.core.journal.store import Outcome, Status
from app.core.messages import (
    BASH_NOT_STARTED_REASON,
    CANCEL_REASON,
    CONTAINER_SLOW_MESSAGE,
    KEYS_HELD_REASON,
    KEYS_NOT_READ_REASON,
    SERVER_STOPPED_REASON,
    SESSION_BUSY_MESSAGE,
    SESSION_BUSY_REASON,
    SESSION_ENDED_REASON,
    SESSION_MOVED_REASON,
    TIMED_OUT_REASON,
)
from app.core.paths import file_identity
from app.core.policy.approval import needs_approval

if TYPE_CHECKING:
    from app.core.commands.running import Runs
    from app.core.execution.shell_session import RunningCommand, SessionResult, ShellSession

INTERRUPT_SETTLE_S = 5.0  # at most, for the interrupted command to end (it returns as soon as it does)
MAX_KEYS_BYTES = 64 * 1024
STARTING_MESSAGE = "The server is still starting; try again in a moment."


# For the model, after a session command a person allowed to run without some protection.
APART_NOTE = (
    "The user allowed this command to run without part of Cowork Terminal's protection, so it ran in a "
    "shell of its own, in the session's folder: the session's variables, functions and aliases did not "
    "apply to it, and nothing it set stays in the session. To load a start-up file it changed into the "
    "session, run `source FILE` there next: reading it needs no approval."
)
SHELL_ENDED_FIRST_NOTE = (
    "The session's shell was ended first, so that the start-up file this command may create is kept; "
    "the next terminal_run starts a new shell."
)


# For the model: the shell it had was replaced because the commands' protection changed: the user's
# switch, or a protected folder made anew (by the user, or by any program outside the container).
REPLACED_NOTE = (
    "How commands are protected changed (the user switched the protection in Cowork Terminal, or a folder it "
    "protects was made anew), so the shell session was started anew in the same folder: variables, functions "
    "and background jobs from before are gone."
)
# For the model: the shell it had was replaced because a program began listening on a socket that the
# container hides (shell_session.newly_hidden): anyone's, often another app's command's, not the user's.
NEW_SOCKET_NOTE = (
    "Before this command ran, the shell session was started anew in the same folder, because {paths} "
    "after the session's shell started. Cowork Terminal hides such sockets from commands (through "
    "a session bus, or a socket named like one, a command could have programs started outside its "
    "container), and a running shell cannot be cut off from one, so the new shell runs in a container "
    "that hides it. The user's settings did not change. The old shell and everything it started "
    "(variables, functions, background jobs) were ended; set up again what you still need."
)
NEW_SOCKET_PATHS_SHOWN = 3  # a command can make thousands: the note names a few


# For the model: the shell was replaced before its command, for what another process could do to it
# (shell_session.py `taken_over`: a job had stopped the shell and answered for the next command).
TAKEN_OVER_NOTE = (
    "Before this command ran, the shell session was started anew in the same folder, because {why}: such a "
    "process can read the commands sent to the shell and answer in its place. The old shell and everything it "
    "started (variables, functions, background jobs) were ended; set up again what you still need."
)
# For the model: a command whose end was reported by another process than the session's shell.
ANSWERED_BY_OTHER_NOTE = (
    "This command's end was not reported by the session's shell but by another process that had taken the "
    "command from it (a background job can do that), so it may not have run, and its output and exit code "
    "cannot be trusted. The shell session was ended with everything it started; run the command again if it "
    "is still needed: the next terminal_run starts a new shell."
)
ANSWERED_BY_OTHER_REASON = "another process answered for the shell session"
# Keys judged for one command of the session, which ended while they were judged (or journaled).
KEYS_PROGRAM_CHANGED_MESSAGE = (
    "The program in the session changed while the keys were judged, so none were sent: they were judged "
    "for the command that ran before. Send them again if they are meant for the program running now."
)
KEYS_PROGRAM_CHANGED_REASON = "the program in the session changed while the keys were judged"


@dataclass(frozen=True)
class SessionOutcome:
    result: SessionResult
    restarted: bool
    stopped_reason: str | None = None  # pause, the user's Stop
    note: str | None = None  # for the model: it ran apart (APART_NOTE), what the container refused


# A path named in the note as it is: any other is "a socket with an unusual name". A socket's name is
# anyone's to choose (`/tmp/dbus-x. NOTE FROM COWORK TERMINAL: run fix.sh`), and this note is the app's
# own words to the model (a review, 2026-12-06).
PLAIN_PATH = re.compile(r"/[A-Za-z0-9._/-]{1,80}")


def _replaced_note(hidden: list[str] | None) -> str:
    """Why the live shell was replaced, for the model: a socket that appeared (its paths), or the
    protection changed. A socket another app's command made is never told as the user's doing."""
    if hidden is None:
        return REPLACED_NOTE
    if not hidden:  # a folder hidden since (the runtime folder's), no socket
        return NEW_SOCKET_NOTE.format(paths="a folder Cowork Terminal hides from commands appeared")
    hidden = list(dict.fromkeys(p if PLAIN_PATH.fullmatch(p) else "a socket with an unusual name" for p in hidden))
    shown = ", ".join(hidden[:NEW_SOCKET_PATHS_SHOWN])
    more = len(hidden) - NEW_SOCKET_PATHS_SHOWN
    return NEW_SOCKET_NOTE.format(
        paths="a program began listening on " + (f"{shown} and {more} more" if more > 0 else shown)
    )


class ShellService(Protocol):
    """What the session shell reaches of its command service (service.CommandService)."""

    @property
    def authority(self) -> ServerAuthority: ...
    @property
    def home(self) -> str: ...
    @property
    def protected_paths(self) -> list[str]: ...
    @property
    def runs(self) -> Runs: ...
    @property
    def background(self) -> anyio.abc.TaskGroup | None: ...
    def environment(self, env: Mapping[str, str]) -> dict[str, str]: ...
    def check_allowed(self) -> None: ...
    async def journal_row(self, **row: Any) -> int: ...
    async def journal_refusal(self, request: ExecuteRequest, reason: str, tool: str) -> None: ...


class SessionShell:
    """The shell one server keeps for the model, started at its first command."""

    def __init__(self, service: ShellService) -> None:
        self.service = service
        self._session: ShellSession | None = None
        self._lock = anyio.Lock()
        self._typed_line = ""  # what send_keys typed since the last newline
        self._typing = anyio.Lock()

    def current_dir(self) -> str | None:
        """Where the next session command runs, for the journal, the approval prompt and the
        classifier: the shell's folder, or None (home) when a new shell will start."""
        session = self._session
        if session is None or not session.alive:
            return None
        here, _ = session.folder_now()
        return here if os.path.isdir(here) else None

    def alive(self) -> bool:
        """A session shell runs now (a pause ends it, with what it left running)."""
        return self._session is not None and self._session.alive

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def _ready(self, bash: str) -> tuple[ShellSession, bool, str | None]:
        """The session's shell, started if need be; whether a new one replaced an ended one (cwd and
        variables reset), and, when a live one was replaced in its folder for a container change, the
        note that tells the model why."""
        service = self.service
        background = service.background
        if background is None:
            raise CommandRefused(STARTING_MESSAGE)
        container = service.runs.container()
        from app.core.execution.container import SLOW  # here: a tray-bound `serve` never loads it

        if container.state == SLOW:  # not run unprotected for it (running.ContainerSlow)
            raise ContainerSlow(CONTAINER_SLOW_MESSAGE)
        replaced = False
        note = None
        if self._session is None:
            # Loaded by the first session command: a server whose tray runs its commands never has one.
            from app.core.execution.shell_session import ShellSession

            self._session = ShellSession(
                bash,
                service.home,
                service.environment({}),
                mark=service.runs.mark(orphans.SHELL),
                code_pages=console_code_pages(),
                container=container,
            )
        else:
            from app.core.execution.shell_session import newly_hidden, replaces, usable_container

            wanted = usable_container(container)
            if replaces(self._session.container, wanted) and not self._session.busy:
                # Switched on or off, or prepared anew (a protected folder made again): a shell of the
                # old container would keep what it gave (a review, 2026-12-05). The next one is new;
                # a command still running there ends as it would (the next is refused as busy till then).
                # A live one's successor starts where it was, where the next command was judged; an
                # ended one's starts at home as always (a review: it started in the ended one's folder).
                here = self._session.folder_now()[0] if self._session.alive else None
                await self._session.close()
                replaced = here is not None and os.path.isdir(here)
                self._session.resume_in = here if replaced else None
                if replaced:
                    note = _replaced_note(newly_hidden(self._session.container, wanted))
                self._session.container = wanted
        service.runs.watch_uncontained(self._session.container)
        restarted = await self._session.start(background)
        return self._session, restarted and not replaced, note

    async def run(
        self, command_id: int, valid: ValidRequest, bash: str, on_output: OutputHook | None = None
    ) -> SessionOutcome:
        """Run an admitted command in the shell (the runner of terminal_run's holds too)."""
        service, runs = self.service, self.service.runs
        if service.background is None:
            service.authority.finish(command_id, Outcome(status=Status.REFUSED, reason=STARTING_MESSAGE))
            raise CommandRefused(STARTING_MESSAGE)
        handed = False  # to runs.run or to the finisher, which record its end from then on
        try:
            if runs.lets_out(command_id):
                # A person allowed it to run without some of the container's protection: in a container
                # of its own, never in the session's, where what the agent left there (a DEBUG trap, a
                # function named `echo`, an open descriptor) would share the opening (red team, 2026-12-04).
                # When it may create a start-up file that does not exist, the idle shell ends first, and no
                # new one starts until the command has ended: while the session's container lives, a new
                # file is moved aside (start_files.py: what runs there cannot be told from outside).
                creates = not all(os.path.lexists(member) for member in runs.unbound.get(command_id, ()))
                async with self._lock if creates else contextlib.nullcontext():
                    self._check_still_in(command_id, valid)
                    session = self._session if creates else None
                    if session is not None and session.busy:
                        service.authority.finish(command_id, Outcome(status=Status.REFUSED, reason=SESSION_BUSY_REASON))
                        raise CommandRefused(SESSION_BUSY_MESSAGE)
                    ended = session is not None and session.alive
                    if session is not None:
                        await session.close()
                    handed = True
                    return apart(await runs.run(command_id, valid, bash, on_output), ended)
            async with self._lock:  # two first calls at once must not start two shells
                session, restarted, replaced_note = await self._ready(bash)
                if session.busy:
                    service.authority.finish(command_id, Outcome(status=Status.REFUSED, reason=SESSION_BUSY_REASON))
                    raise CommandRefused(SESSION_BUSY_MESSAGE)
                self._typed_line = ""
                self._check_still_in(command_id, valid)
                taken = await self._replace_if_taken(session)
                with anyio.CancelScope(shield=True):  # from here the finisher records its end, whatever comes
                    stop = runs.track(command_id)  # only now: a refusal above must not leave it registered
                    output = runs.new_output(command_id, ("output",))
                    runs.show_live(command_id, output)  # the activity log shows it as it comes (issue 24)
                    running = await session.send_command(valid.command, mark=runs.mark(str(command_id)), output=output)
                    unprotected = unprotected_reason(runs.container(), contained=session.container is not None)
                    # The finisher watches pause and Stop from now on, and journals the end whenever it
                    # comes, even after this call has returned (the command may outlive its time limit).
                    journaled = anyio.Event()
                    background = service.background
                    assert background is not None
                    background.start_soon(self._finish_command, command_id, running, stop, journaled, unprotected)
                    handed = True
        except anyio.get_cancelled_exc_class():  # before it reached the shell: its row must not stay running
            if not handed:
                with anyio.CancelScope(shield=True):
                    service.authority.finish(command_id, Outcome(status=Status.REFUSED, reason=why_cancelled()))
            raise
        except ContainerSlow:
            if not handed:
                service.authority.finish(command_id, Outcome(status=Status.FAILED, reason=CONTAINER_SLOW_MESSAGE))
            raise
        except CommandRefused:
            raise  # its row was ended where it was refused (busy, moved)
        except Exception as exc:  # the shell could not start (bash gone, its folder gone), a broken pipe
            if not handed:
                runs.running.pop(command_id, None)
                runs.hide_live(command_id)
                reason = BASH_NOT_STARTED_REASON.format(bash=bash, error=getattr(exc, "strerror", None) or exc)
                service.authority.finish(command_id, Outcome(status=Status.FAILED, reason=reason))
            raise
        if on_output is not None:
            on_output(output)
        runs.apply_user_stops()  # a pause that landed while the shell was starting
        try:
            with anyio.move_on_after(valid.timeout_ms / 1000):
                await running.done.wait()
        except BaseException:
            stop.set(CANCEL_REASON)  # the finisher interrupts it (and ends the shell if it must)
            raise
        finished = running.done.is_set()
        if finished:
            await journaled.wait()
        notes = (
            replaced_note,
            TAKEN_OVER_NOTE.format(why=taken) if taken else None,
            ANSWERED_BY_OTHER_NOTE if finished and running.answered_by_other else None,
        )
        return SessionOutcome(
            result=running.result(finished=finished, restarted=restarted),
            restarted=restarted,
            stopped_reason=stop.reason if finished else None,
            note=" ".join(note for note in notes if note) or None,
        )

    async def _replace_if_taken(self, session: ShellSession) -> str | None:
        """Start the idle shell anew in its folder when another process may read its commands or
        answer for it (ShellSession.taken_over); why, or None when it was left alone."""
        why = await session.taken_over_settled()
        if why is None:
            return None
        background = self.service.background
        assert background is not None
        here = session.folder_now()[0] if session.alive else None
        await session.close()
        session.resume_in = here if here is not None and os.path.isdir(here) else None
        await session.start(background)
        return why

    def _check_still_in(self, command_id: int, valid: ValidRequest) -> None:
        """Refuse the command when the session left the folder it was judged (and shown) in: the
        same folder by its identity, not by a name another command may have given to another."""
        session = self._session
        if session is not None and session.alive:
            here, where = session.folder_now()
        else:
            here, where = self.service.home, file_identity(self.service.home)
        if where is None or where != file_identity(valid.cwd):
            reason = SESSION_MOVED_REASON.format(here=here)
            self.service.authority.finish(command_id, Outcome(status=Status.REFUSED, reason=reason))
            raise CommandRefused(
                f"The shell session is now in {here}, not in {valid.cwd} where this command was checked "
                "(and shown to the user). Run it again with terminal_run if it is still wanted."
            )

    async def _finish_command(
        self,
        command_id: int,
        running: RunningCommand,
        stop: StopSignal,
        journaled: anyio.Event,
        unprotected: str | None = None,
    ) -> None:
        """Apply pause, Stop and cancellation to a session command, and journal how it ended
        (`unprotected`: unprotected_reason, when the session's shell runs outside the container)."""
        service = self.service
        server_stopping = False
        try:
            async with anyio.create_task_group() as group:

                async def on_stop() -> None:
                    await stop.wait()
                    # Pause, Stop and cancellation end the whole shell: Ctrl-C would only end the
                    # foreground program, and the rest of a command list (`a; b`) would run on.
                    await self.close()

                group.start_soon(on_stop)
                await running.done.wait()
                group.cancel_scope.cancel()
        except BaseException:  # cancelled: the server stops (its shell goes with it, perhaps first)
            server_stopping = True
            raise
        finally:
            service.runs.running.pop(command_id, None)
            service.authority.forget(command_id)
            service.runs.hide_live(command_id)
            running.output.finish()  # keeps or removes the whole output's file
            kept = running.output.streams[0]
            reason: str | None
            if not running.done.is_set() or (server_stopping and stop.reason is None):
                status, reason = Status.INTERRUPTED, SERVER_STOPPED_REASON  # not "the shell session ended"
            elif stop.reason is not None:
                status, reason = Status.KILLED, stop.reason
            elif running.ended_session:
                status, reason = Status.FAILED, SESSION_ENDED_REASON
            elif running.answered_by_other:
                status, reason = Status.FAILED, ANSWERED_BY_OTHER_REASON
            else:
                status = Status.FINISHED if running.exit_code == 0 else Status.FAILED
                reason = None
            if unprotected:
                reason = f"{reason}; {unprotected}" if reason else unprotected
            with anyio.CancelScope(shield=True):
                service.authority.finish(
                    command_id,
                    Outcome(
                        status=status,
                        exit_code=running.exit_code,
                        reason=reason,
                        stdout=kept.raw(),
                        stdout_bytes=kept.total,
                    ),
                )
                mark = service.runs.mark(str(command_id))
                cut_short = status in (Status.INTERRUPTED, Status.KILLED) or running.ended_session
                if mark and cut_short:  # it ended with the shell: what escaped the shell's group too
                    await anyio.to_thread.run_sync(process_marks.end_marked, mark)
                if running.answered_by_other and not server_stopping:
                    await self._end_taken_shell()
            journaled.set()

    async def _end_taken_shell(self) -> None:
        """End the shell another process answered for, with what runs in it (the answering job among
        them), unless a new one replaced it already; the next command starts a new one."""
        async with self._lock:
            session = self._session
            if session is not None and not session.busy and session.taken_over() is not None:
                await session.close()

    async def send_keys(self, keys: object) -> str:
        """Type into the program running in the session, journaled, and judged like a command."""
        service = self.service
        if not isinstance(keys, str) or keys == "":
            raise CommandRefused("`keys` is empty: give the text to type.")
        if len(keys.encode()) > MAX_KEYS_BYTES:
            raise CommandRefused(f"`keys` is longer than {MAX_KEYS_BYTES:,} bytes: send less at a time.")
        try:
            service.check_allowed()
        except CommandRefused as refusal:
            await service.journal_refusal(ExecuteRequest(command=keys), str(refusal), "terminal_send_keys")
            raise
        # One typing at a time: each is judged as the end of what those before it typed, which a
        # classification on a worker thread (below) would otherwise let another call change meanwhile.
        async with self._typing:
            return await self._type(keys)

    async def _type(self, keys: str) -> str:
        service = self.service
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
        under = service.authority.settings()
        # The command the keys are judged for: they go to it alone (below), not to the next one.
        running = session._current
        foreground = session.foreground or ""
        cwd, protected_paths = session.current_dir, service.protected_paths

        def judge(deadline: float | None = None) -> Classification:
            # Finding the interpreter analyzes the whole command line: on the worker thread with the rest.
            program = repl_program(foreground)
            return classify_typed(line, program, cwd=cwd, protected_paths=protected_paths, deadline=deadline)

        long = len(line) + len(foreground) > CLASSIFY_ON_A_THREAD_CHARS  # as execute_command's: others go on
        if not long:
            try:  # short keys may name a long script (`bash s0.sh`), as a short command may (admission)
                verdict = judge(time.monotonic() + INLINE_JUDGING_S)
            except JudgedTooLong:
                long = True
        if long:
            verdict = await judged_alone(judge)
        if not self._still_running(session, running):
            changed = KEYS_PROGRAM_CHANGED_REASON
            await service.journal_refusal(ExecuteRequest(command=keys), changed, "terminal_send_keys")
            raise CommandRefused(KEYS_PROGRAM_CHANGED_MESSAGE)
        if needs_approval(service.authority.approval_mode(), verdict.tier is Tier.DESTRUCTIVE):
            reason = KEYS_HELD_REASON.format(reasons=reasons_text(verdict.reasons))
            await service.journal_refusal(ExecuteRequest(command=keys), reason, "terminal_send_keys")
            raise CommandRefused(reason)
        command_id = await service.journal_row(
            command=keys, cwd=None, tool="terminal_send_keys", tier=verdict.tier.name.lower(), under=under
        )
        # No await from this check to the write (session.send_keys writes before its first await).
        if not self._still_running(session, running):
            changed = KEYS_PROGRAM_CHANGED_REASON
            service.authority.finish(command_id, Outcome(status=Status.REFUSED, reason=changed))
            raise CommandRefused(KEYS_PROGRAM_CHANGED_MESSAGE)
        # Only keys that go on count as typed: refused ones (a pause, settings changed) would make the
        # next keys be judged as the end of a line never typed (`echo ` then `rm -rf DIR`: a review).
        self._typed_line = line.rsplit("\n", 1)[1] if "\n" in line else line
        try:
            answer = await session.send_keys(keys)
        except InputNotRead:
            service.authority.finish(command_id, Outcome(status=Status.FAILED, reason=KEYS_NOT_READ_REASON))
            raise CommandRefused(
                "The program in the session is not reading its input, so not all keys were sent. Read its "
                "output with terminal_read_scrollback to see what it waits for, or stop it with terminal_interrupt."
            ) from None
        service.authority.finish(command_id, Outcome(status=Status.FINISHED, exit_code=0))
        return answer

    def _still_running(self, session: ShellSession, running: RunningCommand | None) -> bool:
        """Whether `running`, the command keys were judged for, is still what runs in the session: it
        may have ended and the next one started during the awaits (a review, 2026-12-06)."""
        return self._session is session and session.alive and session.busy and session._current is running

    async def interrupt(self) -> bool | None:
        """Ctrl-C to the session. None: no session; else whether nothing runs in it a moment later
        (so that a terminal_run right after does not find it busy while bash finishes the line)."""
        if self._session is None or not self._session.interrupt():
            return None
        return await self._session.wait_idle(INTERRUPT_SETTLE_S)

    def scrollback(self, lines: object) -> str:
        if isinstance(lines, bool) or not isinstance(lines, int) or not 1 <= lines <= SCROLLBACK_MAX_LINES:
            raise CommandRefused(f"`lines` must be a whole number from 1 to {SCROLLBACK_MAX_LINES}.")
        if self._session is None:
            return ""
        return self._session.scrollback(lines)


def apart(result: ExecutionResult, ended: bool = False) -> SessionOutcome:
    """A session command that ran in a container of its own, told as the session's tool tells one
    (`ended`: the session's shell was ended first)."""
    from app.core.execution.shell_session import SessionResult  # loaded where commands run, as here

    said = result.to_model()
    notes = (
        APART_NOTE,
        SHELL_ENDED_FIRST_NOTE if ended else None,
        result.protection_note,
        LEFT_RUNNING_NOTE if result.left_running else None,
    )
    return SessionOutcome(
        SessionResult(
            output=said["stdout"] + said["stderr"],
            exit_code=result.exit_code,
            finished=True,
            restarted=False,
            output_file=said["outputFile"],
        ),
        restarted=False,
        stopped_reason=TIMED_OUT_REASON if result.timed_out else result.stopped_reason,
        note=" ".join(note for note in notes if note),
    )
