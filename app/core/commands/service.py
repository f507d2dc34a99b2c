"""One server's way of turning a request from the model into a journaled, stoppable command.

It applies the user's rules in order (input checks, pause, tray presence), writes the journal row
before anything runs, runs the executor, and watches the journal so that the user's pause switch
and Stop button reach a running command within a second. It knows nothing of MCP: the server
layer turns `CommandRefused` into an error result the model reads.

This is the face the server calls; the work is in its parts: `admission` (checks, holds and the
user's answers), `running` (the commands running now, pause and Stop), `session_shell` (the
long-lived shell) and `jobs` (every call as a job).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from app.core.commands.authority import NotRecorded, ServerAuthority, SettingsChanged
from app.core.commands.jobs import Jobs
from app.core.commands.request import ClientInfo, CommandRefused, ExecuteRequest, ValidRequest
from app.core.commands.running import Runs, outcome_of, protection_note
from app.core.errors import CoworkError
from app.core.execution import read_only
from app.core.execution.output import OutputHook
from app.core.execution.run_result import ExecutionResult
from app.core.journal.store import Journal, Status, bounded, storable
from app.core.messages import CANCEL_REASON, SETTINGS_CHANGED_MESSAGE, WITHDRAWN_REASON
from app.core.paths import AppPaths, protected_paths

if TYPE_CHECKING:  # made at a server's first command (CommandService.holds, .shell)
    from app.core.commands.admission import Admitted, Hold, Holds, Runner
    from app.core.commands.session_shell import SessionOutcome, SessionShell

__all__ = ["ClientInfo", "CommandService", "outcome_of", "protection_note"]

log = logging.getLogger(__name__)

SERVING_WAIT_S = 5.0  # a call waits at most this long for a service opened at that call to start


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
        self.bash = bash  # the bash to run commands with; raises CoworkError when there is none
        self.environment = environment  # a command's environment from its `env`
        # Headless with no tray by default (tests of the executor path); `serve` passes its own.
        self.authority = authority or ServerAuthority(journal, None, headless=True)
        self.home = home or str(Path.home())
        self.run_mark = run_mark  # orphans.server_mark: every process we start carries it
        self.client = ClientInfo()
        # Whether this service moves a damaged journal aside itself: a runner in the tray leaves it to
        # the hub (the repair's lock is a file lock, which does not order threads of one process).
        self.repairs_journal = True
        self.protected_paths = protected_paths(paths)  # as named, and as real
        self.background: anyio.abc.TaskGroup | None = None
        self.pulse = anyio.Event()  # set and replaced whenever the tray pushes something
        self._serving = anyio.Event()  # run_background has started: jobs can run
        self.runs = Runs(self)
        self.jobs: Jobs[CommandService] = Jobs(self)  # every execute_command is a job (issue 22)
        self._holds: Holds | None = None
        self._shell: SessionShell | None = None

    # Admission and the session's shell (0.2 MB of modules) are made at the first command that needs
    # them: a tray-bound server's tray admits and runs its commands (issue 21's idle memory).

    @property
    def holds(self) -> Holds:
        if self._holds is None:
            from app.core.commands.admission import Holds

            self._holds = Holds(self)
        return self._holds

    @property
    def shell(self) -> SessionShell:
        if self._shell is None:
            from app.core.commands.session_shell import SessionShell

            self._shell = SessionShell(self)
        return self._shell

    def session_alive(self) -> bool:
        return self._shell is not None and self._shell.alive()

    def session_uncontained(self) -> bool:
        """Whether the session's shell runs now outside any container (started while the user had it
        switched off, or where there is none): switching it on ends it (Runs.apply_user_stops)."""
        shell = self._shell
        session = None if shell is None else shell._session  # its own shell: read, never changed here
        return session is not None and session.alive and session.container is None

    def end_session(self) -> None:
        """End the session's shell (a pause): what it left running goes with it; the next
        terminal_run starts a new one, and the model is told so."""
        if self.background is not None and self._shell is not None:
            self.background.start_soon(self._shell.close)

    def pushed(self) -> None:
        """The tray pushed a change (pause, Stop, a decision, or it went away): act on it now.
        Runs on the event loop (the link's thread hands it over)."""
        pulse, self.pulse = self.pulse, anyio.Event()
        pulse.set()
        self.runs.apply_user_stops()

    # -- the record -------------------------------------------------------------------------------

    async def journal_row(self, **row: Any) -> int:
        """A journal row from this server: who runs it is filled in here, the rest by the caller
        (`under`: the settings it was judged under, `authority.settings()`). Raises CommandRefused
        when the row cannot be written (nothing runs unrecorded) or the user tightened a setting
        since (it is recorded as refused: the model sends it again)."""
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
        except SettingsChanged:
            refused_row = {key: row[key] for key in ("command", "cwd", "env_keys", "tool", "tier") if key in row}
            try:
                await self.journal_row(**refused_row, status=Status.REFUSED, reason=SETTINGS_CHANGED_MESSAGE)
            except CommandRefused as problem:
                log.warning("a command judged under old settings could not be journaled: %s", problem)
            raise CommandRefused(SETTINGS_CHANGED_MESSAGE) from None

    async def journal_refusal(self, request: ExecuteRequest, reason: str, tool: str) -> None:
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
        await self.journal_row(
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
        await self.journal_refusal(request, reason, tool)

    def check_allowed(self) -> None:
        """Raise CommandRefused when the user's rules say no command may run now."""
        refusal = self.authority.refusal()
        if refusal:
            raise CommandRefused(refusal)

    # -- calls ------------------------------------------------------------------------------------

    async def execute(
        self, request: ExecuteRequest, *, tool: str = "execute_command", on_output: OutputHook | None = None
    ) -> ExecutionResult:
        """Run one command under the user's rules; raises CommandRefused (or CommandHeld) when it does not run.
        `on_output` is told of the command's output as it starts (progress reports read it)."""
        result: ExecutionResult = await self._submit(request, tool, self.runs.run, on_output)
        return result

    async def session_run(
        self, command: object, timeout_ms: object, on_output: OutputHook | None = None
    ) -> SessionOutcome:
        """Run a command in this server's long-lived shell, under the same rules as `execute`."""
        request = ExecuteRequest(command=command, cwd=self.shell.current_dir(), timeout_ms=timeout_ms)
        outcome: SessionOutcome = await self._submit(request, "terminal_run", self.shell.run, on_output)
        return outcome

    async def _submit(self, request: ExecuteRequest, tool: str, runner: Runner, on_output: OutputHook | None) -> Any:
        admitted = await self.admit(request, tool, runner)
        if admitted.confirmation_id is None:
            return await runner(admitted.command_id, admitted.request, admitted.bash, on_output)
        try:
            return await self.holds.wait_and_run(admitted.confirmation_id, admitted.bash, on_output)
        except anyio.get_cancelled_exc_class():  # the call was cancelled: its prompt goes, as a job's does
            self.holds.withdraw(admitted.confirmation_id, CANCEL_REASON)
            raise

    async def admit(
        self, request: ExecuteRequest, tool: str, runner: Runner, *, proven_read_only: bool = False
    ) -> Admitted:
        """Check, classify and journal a request (admission.Holds.admit)."""
        return await self.holds.admit(request, tool, runner, proven_read_only=proven_read_only)

    async def confirm(
        self, confirmation_id: str, on_output: OutputHook | None = None
    ) -> ExecutionResult | SessionOutcome:
        """The model asks again for a held command: run it if the user allowed it, else wait a while."""
        outcome: ExecutionResult | SessionOutcome = await self.holds.confirm(confirmation_id, on_output)
        return outcome

    def cancel(self, confirmation_id: str) -> str:
        """The model withdraws a held command; the user's prompt for it disappears."""
        return self.holds.cancel(confirmation_id)

    async def await_approval(self, confirmation_id: str, bash: str, on_output: OutputHook | None) -> Any:
        """A job's hold: wait for the user's answer until the hold expires, and run it at the click."""
        return await self.holds.await_approval(confirmation_id, bash, on_output)

    def hold_expires_at(self, hold: Hold) -> float:
        return self.holds.expires_at(hold)

    def hold_of(self, confirmation_id: str) -> Hold | None:
        return self.holds.of(confirmation_id)

    def withdraw(self, confirmation_id: str, reason: str = WITHDRAWN_REASON) -> None:
        """The model withdraws a job's hold (command_stop, or a cancelled call): its prompt disappears."""
        self.holds.withdraw(confirmation_id, reason)

    def stop_running(self, command_id: int, reason: str) -> bool:
        """End a command this server runs, whole tree; False when it runs nothing by that id."""
        return self.runs.stop_running(command_id, reason)

    async def run_admitted(
        self, command_id: int, valid: ValidRequest, bash: str, on_output: OutputHook | None = None
    ) -> ExecutionResult:
        """Run an admitted command now (a job's runner)."""
        return await self.runs.run(command_id, valid, bash, on_output)

    async def run_read_only(
        self, command_id: int, valid: ValidRequest, bash: str, on_output: OutputHook | None = None
    ) -> ExecutionResult:
        """Run a command of execute_read_only_command in its read-only container (running.py)."""
        return await self.runs.run_read_only(command_id, valid, bash, on_output)

    def read_only_containment(self) -> read_only.Containment:
        return self.runs.read_only_containment()

    async def session_send_keys(self, keys: object) -> str:
        """Type into the program running in the session, journaled, and judged like a command."""
        return await self.shell.send_keys(keys)

    async def session_interrupt(self) -> bool | None:
        """Ctrl-C to the session (session_shell.SessionShell.interrupt)."""
        return await self.shell.interrupt()

    def session_scrollback(self, lines: object) -> str:
        return self.shell.scrollback(lines)

    # -- the server's life ------------------------------------------------------------------------

    @property
    def serving(self) -> bool:
        """Whether jobs can run: the server's background task group is up."""
        return self.background is not None

    async def until_serving(self, seconds: float = SERVING_WAIT_S) -> None:
        """Wait (briefly) for the background group that jobs run in: a service just opened at a call
        (the data folder had no room before) starts it on the same loop a moment later."""
        with anyio.move_on_after(seconds):
            await self._serving.wait()

    def spawn(self, work: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        """Run `work` for as long as the server lives (a job that outlives its call)."""
        if self.background is None:
            from app.core.commands.session_shell import STARTING_MESSAGE

            raise CommandRefused(STARTING_MESSAGE)
        self.background.start_soon(work, *args)

    async def run_background(self) -> None:
        """Run for the server's life: the stop watch, and the session's reader and late results."""
        try:
            async with anyio.create_task_group() as background:
                self.background = background
                self._serving.set()
                await self.runs.watch()
        finally:
            if self._shell is not None:  # none was made: nothing to close
                with anyio.CancelScope(shield=True):
                    await self._shell.close()
