"""One server's way of turning a request from the model into a journaled, stoppable command.

It applies the user's rules in order (input checks, pause, tray presence), writes the journal row
before anything runs, runs the executor, and watches the journal so that the user's pause switch
and Stop button reach a running command within a second. It knows nothing of MCP: the server
layer turns `CommandRefused` into an error result the model reads.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import anyio

from app.core import liveness
from app.core.errors import CoworkError
from app.core.executor import CommandSpec, ExecutionResult, StopSignal, run_command
from app.core.journal import Journal, Outcome, Status
from app.core.paths import AppPaths

DEFAULT_TIMEOUT_MS = 30_000
MAX_TIMEOUT_MS = 600_000  # 10 minutes; clients cancel long before (about 60 s in Cowork)
MAX_COMMAND_BYTES = 100 * 1024  # Linux refuses a single argument over 128 KiB (MAX_ARG_STRLEN)
WATCH_INTERVAL_S = 0.2  # how often a busy server looks for pause and Stop in the journal

PAUSED_MESSAGE = (
    "Host access is paused by the user in Cowork Terminal, so this command was not run. "
    "Ask the user to resume host access (tray icon or `cowork-terminal resume`), then try again."
)
NO_TRAY_MESSAGE = (
    "Cowork Terminal is not running on this computer, so host commands are refused: the user must "
    "be able to see and stop what runs. Ask the user to start the Cowork Terminal app, then try again."
)
PAUSE_STOP_REASON = "stopped because the user paused host access"
USER_STOP_REASON = "stopped by the user"
CANCEL_REASON = "cancelled by the client (call cancelled or client disconnected)"


class CommandRefused(CoworkError):
    """The command did not run; the message tells the model why and what to do."""


@dataclass(frozen=True)
class ExecuteRequest:
    command: object
    cwd: object = None
    timeout_ms: object = None
    env: object = None


@dataclass(frozen=True)
class ValidRequest:
    command: str
    cwd: str
    timeout_ms: int
    env: dict[str, str]


def validate_request(request: ExecuteRequest, home: str) -> ValidRequest:
    """Check what the model sent and say exactly what is wrong; each rule says why it exists."""
    command = request.command
    if not isinstance(command, str) or not command.strip():
        raise CommandRefused("`command` is empty: give the bash command to run.")
    if "\x00" in command:  # bash cannot receive a NUL byte in its argument
        raise CommandRefused("`command` contains a NUL byte, which bash cannot receive. Remove it.")
    size = len(command.encode("utf-8", errors="surrogatepass"))
    if size > MAX_COMMAND_BYTES:
        raise CommandRefused(
            f"`command` is {size:,} bytes; the limit is {MAX_COMMAND_BYTES:,} bytes (the operating system's "
            "limit for one argument). Write large content to a file over several smaller calls "
            "(for example with heredocs appending `>>` to it), then run the file."
        )

    cwd = request.cwd
    if cwd is None or cwd == "":
        cwd = home
    if not isinstance(cwd, str):
        raise CommandRefused("`cwd` must be a string: the absolute path of an existing folder.")
    resolved = Path(cwd).expanduser()
    if not resolved.is_absolute():
        resolved = Path(home) / resolved
    # Checked here so the model never sees Node's misleading "spawn bash ENOENT" for a bad folder.
    if not resolved.exists():
        raise CommandRefused(f"`cwd` does not exist: {resolved}. Give an existing folder, or create it first.")
    if not resolved.is_dir():
        raise CommandRefused(f"`cwd` is not a folder: {resolved}. Give the folder that contains it instead.")

    timeout = request.timeout_ms
    if timeout is None:
        timeout = DEFAULT_TIMEOUT_MS
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout):
        raise CommandRefused("`timeout` must be a number of milliseconds.")
    if timeout < 1 or timeout > MAX_TIMEOUT_MS:
        raise CommandRefused(
            f"`timeout` must be between 1 and {MAX_TIMEOUT_MS} milliseconds (got {timeout:g}). "
            "For longer work, start it in the background with its output going to a file, and check "
            "the file in later calls."
        )

    env = request.env or {}
    if not isinstance(env, Mapping):
        raise CommandRefused("`env` must be an object mapping variable names to string values.")
    clean_env: dict[str, str] = {}
    for key, value in env.items():
        if not isinstance(key, str) or not key or "=" in key or "\x00" in key:
            raise CommandRefused(f"`env` has an invalid variable name {key!r}: names are non-empty, without '='.")
        if not isinstance(value, str):
            raise CommandRefused(
                f"`env` value for {key} must be a string, got {type(value).__name__}; quote it (\"{value}\")."
            )
        if "\x00" in value:  # the operating system cannot pass NUL inside an environment value
            raise CommandRefused(f"`env` value for {key} contains a NUL byte, which cannot be passed to a process.")
        clean_env[key] = value
    return ValidRequest(command=command, cwd=str(resolved), timeout_ms=int(timeout), env=clean_env)


@dataclass
class ClientInfo:
    name: str | None = None
    version: str | None = None


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
        require_tray: bool,
        home: str | None = None,
    ) -> None:
        self.journal = journal
        self.paths = paths
        self.server_id = server_id
        self._bash = bash
        self._environment = environment
        self.require_tray = require_tray
        self.home = home or str(Path.home())
        self.client = ClientInfo()
        self._running: dict[int, StopSignal] = {}
        self._wake = anyio.Event()

    def _journal_refusal(self, request: ExecuteRequest, reason: str, tool: str) -> None:
        env_keys = list(request.env) if isinstance(request.env, Mapping) else []
        self.journal.begin_command(
            command=request.command if isinstance(request.command, str) else repr(request.command),
            cwd=request.cwd if isinstance(request.cwd, str) else None,
            env_keys=[str(k) for k in env_keys],
            server_id=self.server_id,
            server_pid=os.getpid(),
            client_name=self.client.name,
            client_version=self.client.version,
            tool=tool,
            status=Status.REFUSED,
            reason=reason,
        )

    def check_allowed(self) -> None:
        """Raise CommandRefused when the user's rules say no command may run now."""
        if self.journal.is_paused():
            raise CommandRefused(PAUSED_MESSAGE)
        if self.require_tray and not liveness.is_held(self.paths.tray_lock):
            raise CommandRefused(NO_TRAY_MESSAGE)

    async def execute(self, request: ExecuteRequest, *, tool: str = "execute_command") -> ExecutionResult:
        try:
            valid = validate_request(request, self.home)
            self.check_allowed()
            bash = self._bash()
        except CoworkError as refusal:
            self._journal_refusal(request, str(refusal), tool)
            raise CommandRefused(str(refusal)) from None

        command_id = self.journal.begin_command(
            command=valid.command,
            cwd=valid.cwd,
            env_keys=valid.env.keys(),
            timeout_ms=valid.timeout_ms,
            server_id=self.server_id,
            server_pid=os.getpid(),
            client_name=self.client.name,
            client_version=self.client.version,
            tool=tool,
        )
        stop = StopSignal()
        self._running[command_id] = stop
        self._wake.set()
        spec = CommandSpec(
            command=valid.command,
            cwd=valid.cwd,
            env=self._environment(valid.env),
            timeout_s=valid.timeout_ms / 1000,
            bash=bash,
        )
        try:
            result = await run_command(spec, stop)
        except OSError as exc:
            message = f"bash could not be started ({bash}): {exc.strerror or exc}"
            self.journal.finish_command(command_id, Outcome(status=Status.FAILED, reason=message))
            raise CommandRefused(message) from None
        except BaseException:
            with anyio.CancelScope(shield=True):
                self.journal.finish_command(command_id, Outcome(status=Status.KILLED, reason=CANCEL_REASON))
            raise
        finally:
            self._running.pop(command_id, None)
        self.journal.finish_command(command_id, outcome_of(result))
        return result

    async def watch(self) -> None:
        """Run for the server's life: while commands run, apply pause and Stop from the journal."""
        seen_version = -1
        while True:
            if not self._running:
                self._wake = anyio.Event()
                await self._wake.wait()
                seen_version = -1
            version = self.journal.data_version()
            if version != seen_version:
                seen_version = version
                self.apply_user_stops()
            await anyio.sleep(WATCH_INTERVAL_S)

    def apply_user_stops(self) -> None:
        running = dict(self._running)
        if not running:
            return
        if self.journal.is_paused():
            for stop in running.values():
                stop.set(PAUSE_STOP_REASON)
            return
        for command_id in self.journal.stop_requests(list(running)):
            running[command_id].set(USER_STOP_REASON)


def outcome_of(result: ExecutionResult) -> Outcome:
    if result.timed_out:
        status, reason = Status.TIMED_OUT, "timed out"
    elif result.stopped_reason:
        status, reason = Status.KILLED, result.stopped_reason
    elif result.exit_code == 0:
        status, reason = Status.FINISHED, None
    else:
        status = Status.FAILED
        reason = f"killed by {result.signal_name}" if result.signal_name else None
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
