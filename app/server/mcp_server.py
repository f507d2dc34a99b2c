"""The stdio MCP server that Claude starts: a thin protocol layer over the core's CommandService.

This is the only module that imports `mcp`. stdout belongs to the protocol: nothing here prints,
logging goes to stderr, and the SDK points fd 1 away from the pipe while serving, so a child
process cannot corrupt the stream either.
"""

from __future__ import annotations

import functools
import logging
import os
import secrets
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from typing import Annotated, Any, NoReturn

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, WithJsonSchema

from app import __version__
from app.core import liveness, orphans
from app.core.command_output import OutputBudget, output_budget
from app.core.command_request import DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS, ExecuteRequest
from app.core.command_service import CommandService, SessionOutcome
from app.core.control.authority import ServerAuthority
from app.core.control.server_link import TrayLink
from app.core.data_folder import FULL, DataFolderError
from app.core.errors import CoworkError
from app.core.executor import ExecutionResult
from app.core.journal import Journal
from app.core.output_files import prune_outputs
from app.core.paths import AppPaths
from app.core.tool_sets import ALL_TOOLS, EXECUTE_ONLY, narrowest_tools, tool_set
from app.server import stdio_transport
from app.server.argument_gate import CallGate, ServiceUnavailable
from app.server.progress import with_progress

log = logging.getLogger(__name__)

SERVER_NAME = "cowork-terminal"
INSTRUCTIONS = (
    "Runs bash commands on the user's own computer (the host), outside your sandbox: install "
    "dependencies, build, test, use git. The user watches every command and can pause access or "
    "stop a command at any time."
)
OUTPUT_FILE_SENTENCE = (
    "When anything is left out, `outputFile` names a file with the whole output: read it with "
    "`tail`, `grep` or `sed -n`."
)


def budget_sentence(budget: OutputBudget) -> str:
    """What the model reads about the output budget (the setting in force when the server starts)."""
    if budget.chars is None:
        return "Each of stdout and stderr is capped at 1 MB (the start and the end are kept)."
    return (f"Output is cut to {budget.chars:,} characters in all (stdout and stderr share them), "
            "keeping the start and the end.")


EXECUTE_DESCRIPTION = """Run a bash command on the user's computer and return its stdout, stderr and exit code.

- The shell is always bash (Git Bash on Windows). Set `cwd` instead of starting with `cd dir &&`.
- No TTY and stdin is closed: interactive programs (editors, pagers, prompts, REPLs) cannot work;
  pass flags such as `--yes` or `--no-pager`.
- Write multi-line text with a quoted heredoc, for example:
  gh pr create --title "Fix" --body "$(cat <<'EOF'
  ## Summary
  - First item
  EOF
  )"
- `timeout` is in milliseconds (default {default_timeout}, at most {max_timeout}). Calls longer than
  about 50 s may be cancelled by the client: run long jobs in the background with output to a file
  (`nohup make > build.log 2>&1 &`) and read the file in later calls.
- {budget}
- {output_file}"""


OUTPUT_FILE_DESC = "absolute path of a file holding the whole output, when some of it was left out here"


# The schema the model reads stays typed, but the values reach the tools as sent: the argument gate
# (argument_gate.CallGate) has checked them first, in plain words, so pydantic's never fail.
Text = Annotated[Any, WithJsonSchema({"type": "string"})]
OptionalText = Annotated[Any, WithJsonSchema({"anyOf": [{"type": "string"}, {"type": "null"}]})]
OptionalNumber = Annotated[Any, WithJsonSchema({"anyOf": [{"type": "number"}, {"type": "null"}]})]
OptionalObject = Annotated[
    Any, WithJsonSchema({"anyOf": [{"additionalProperties": True, "type": "object"}, {"type": "null"}]})
]
WholeNumber = Annotated[Any, WithJsonSchema({"type": "integer"})]


class CommandResult(BaseModel):
    """What the model gets back: the seed's `{stdout, stderr, exitCode, timedOut}` and a few extras."""

    stdout: str
    stderr: str
    exitCode: int | None = Field(description="null when the command was killed (timeout, stop, pause)")
    timedOut: bool
    durationMs: float | None = None
    note: str | None = Field(default=None, description="why the command ended early, when it did")
    outputFile: str | None = Field(default=None, description=OUTPUT_FILE_DESC)


SESSION_RUN_DESCRIPTION = """Run a command in a persistent bash session on the user's computer.

Unlike execute_command, state carries across calls: `cd`, exported variables, shell functions.
Use it for a sequence of dependent steps; use execute_command for independent one-shot commands.
stderr is merged into the output. `timeout` is in milliseconds (default {default_timeout}): on timeout
the command keeps running in the session; read more with terminal_read_scrollback, answer a prompt
with terminal_send_keys, or stop it with terminal_interrupt. One command at a time.
{budget} {output_file}"""


def describe(template: str, budget: OutputBudget) -> str:
    return template.format(
        default_timeout=DEFAULT_TIMEOUT_MS,
        max_timeout=MAX_TIMEOUT_MS,
        budget=budget_sentence(budget),
        output_file=OUTPUT_FILE_SENTENCE,
    )



class SessionCommandResult(BaseModel):
    """What a session command produced so far."""

    output: str = Field(description="stdout and stderr, merged")
    exitCode: int | None = Field(description="null while the command is still running")
    timedOut: bool = Field(description="true when the time limit passed and the command still runs in the session")
    note: str | None = None
    outputFile: str | None = Field(default=None, description=OUTPUT_FILE_DESC)


def session_result(outcome: SessionOutcome) -> SessionCommandResult:
    result = outcome.result
    notes = []
    if outcome.restarted:
        notes.append("The previous shell session had ended, so a new one was started: cwd and variables were reset.")
    if outcome.stopped_reason:
        notes.append(f"The command was {outcome.stopped_reason}.")
    if result.ended_session:
        notes.append("The shell session ended (for example with `exit`); the next terminal_run starts a new one.")
    if not result.finished:
        notes.append(
            "Still running in the session. Read more with terminal_read_scrollback, answer a prompt with "
            "terminal_send_keys, or stop it with terminal_interrupt."
        )
    return SessionCommandResult(
        output=result.output,
        exitCode=result.exit_code,
        timedOut=not result.finished,
        note=" ".join(notes) or None,
        outputFile=result.output_file,
    )


@contextmanager
def refusals_as_errors() -> Iterator[None]:
    """The model reads a refusal as an error result (is_error) carrying our message; so too any
    other CoworkError (a full disk, a read-only data folder), whose text is written for people."""
    try:
        yield
    except CoworkError as refusal:
        raise ToolError(str(refusal)) from None


def command_result(result: ExecutionResult) -> CommandResult:
    return CommandResult(**result.to_model(), note=result.stopped_reason)


def reply(result: BaseModel, *, wrapped: bool = False) -> CallToolResult:
    """The result as structured content and, for clients that read only text, the same as compact
    JSON: the SDK's own text copy is indented JSON, which nearly doubles a long output's size.
    `wrapped`: the tool returns one of several models, which the SDK's schema puts under "result"."""
    structured = result.model_dump(mode="json")
    return CallToolResult(
        content=[TextContent(type="text", text=result.model_dump_json())],
        structured_content={"result": structured} if wrapped else structured,
    )


HANDSHAKE_WAIT_S = 2.0  # start-up work waits this long at most for the handshake to end


async def prepare_after_handshake(prepare: Callable[[], object], handshake_done: anyio.Event) -> None:
    """Run the slow start-up work in a worker thread once the handshake is over, so that it does
    not compete with answering `initialize` (the lifespan starts before the first message)."""
    with anyio.move_on_after(HANDSHAKE_WAIT_S):
        await handshake_done.wait()
    # Abandoned on a stop signal: the process is about to exit, and SQLite rolls back whatever it
    # left half-written.
    await anyio.to_thread.run_sync(prepare, abandon_on_cancel=True)


def build_server(
    service_factory: Callable[[], CommandService | ServiceUnavailable],
    prepare: Callable[[], object] | None = None,
    tools: str = ALL_TOOLS,
    link: TrayLink | None = None,
    budget: OutputBudget | None = None,
) -> MCPServer[Any]:
    """The MCP server around a CommandService that the lifespan creates (and closes) per process.
    `budget` is the output budget the tool descriptions state (each call reads the setting anew)."""
    budget = budget or OutputBudget()

    @asynccontextmanager
    async def lifespan(_: MCPServer[Any]) -> AsyncIterator[CommandService | ServiceUnavailable]:
        service = service_factory()
        if isinstance(service, ServiceUnavailable):  # the gate answers every call with its reason
            yield service
            return
        async with anyio.create_task_group() as background:
            background.start_soon(service.run_background)
            if link is not None:  # the tray's pushes reach the service on this loop, at once
                relay = PushRelay(anyio.lowlevel.current_token(), service.pushed)
                link.on_change = relay.kick
                relay.start()
            if prepare is not None:  # e.g. probing the login shell: off the loop, after the handshake
                background.start_soon(prepare_after_handshake, prepare, gate.handshake_done)
            try:
                yield service
            finally:
                if link is not None:
                    link.on_change = lambda: None
                    relay.close()
                background.cancel_scope.cancel()

    gate = CallGate()
    server: MCPServer[Any] = MCPServer(
        name=SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        middleware=[gate],
    )

    def service_of(ctx: Context) -> CommandService:
        service: CommandService = ctx.request_context.lifespan_context
        return service

    # Honest hints: these run arbitrary commands on the host, so not read-only, destructive, open-world.
    host_tool = ToolAnnotations(
        read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=True
    )
    # The others only act on what this server holds (a held command, the session's Ctrl-C and output).
    local_tool = ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )

    @server.tool(
        description=describe(EXECUTE_DESCRIPTION, budget),
        annotations=host_tool.model_copy(update={"title": "Run a command on the host"}),
    )
    async def execute_command(
        command: Annotated[Text, Field(description="The bash command to run.")],
        ctx: Context,
        cwd: Annotated[
            OptionalText, Field(description="Working directory (absolute path). Default: the user's home folder.")
        ] = None,
        timeout: Annotated[
            OptionalNumber, Field(description=f"Time limit in milliseconds. Default {DEFAULT_TIMEOUT_MS}.")
        ] = None,
        env: Annotated[
            OptionalObject,
            Field(description="Extra environment variables (string values), laid over the user's environment."),
        ] = None,
    ) -> Annotated[CallToolResult, CommandResult]:
        request = ExecuteRequest(command=command, cwd=cwd, timeout_ms=timeout, env=env)
        service = service_of(ctx)
        with refusals_as_errors():
            result = await with_progress(ctx, lambda hook: service.execute(request, on_output=hook))
        return reply(command_result(result))

    @server.tool(
        description="Run a command that is held for the user's approval, once they allow it. Waits a while "
        "(the user's approval window) for their answer. Only the user can approve, in Cowork Terminal; "
        "this tool cannot.",
        annotations=host_tool.model_copy(update={"title": "Run a held command once approved"}),
    )
    async def terminal_confirm(
        confirmation_id: Annotated[Text, Field(description="The id from the held command's message.")], ctx: Context
    ) -> Annotated[CallToolResult, CommandResult | SessionCommandResult]:
        service = service_of(ctx)
        with refusals_as_errors():
            outcome = await with_progress(ctx, lambda hook: service.confirm(confirmation_id, on_output=hook))
        result = session_result(outcome) if isinstance(outcome, SessionOutcome) else command_result(outcome)
        return reply(result, wrapped=True)

    @server.tool(
        description="Withdraw a command held for the user's approval; it will not run.",
        annotations=local_tool.model_copy(update={"title": "Withdraw a held command"}),
    )
    async def terminal_cancel(confirmation_id: Text, ctx: Context) -> str:
        with refusals_as_errors():
            return service_of(ctx).cancel(confirmation_id)

    if tools == EXECUTE_ONLY:
        return server

    @server.tool(description=describe(SESSION_RUN_DESCRIPTION, budget),
                 annotations=host_tool.model_copy(update={"title": "Run a command in the shell session"}))
    async def terminal_run(
        command: Annotated[Text, Field(description="The bash command to run in the session.")],
        ctx: Context,
        timeout: Annotated[
            OptionalNumber, Field(description=f"Time limit in milliseconds. Default {DEFAULT_TIMEOUT_MS}.")
        ] = None,
    ) -> Annotated[CallToolResult, SessionCommandResult]:
        service = service_of(ctx)
        with refusals_as_errors():
            outcome = await with_progress(ctx, lambda hook: service.session_run(command, timeout, on_output=hook))
        return reply(session_result(outcome))

    @server.tool(
        description="Type text into the program running in the shell session (for a prompt waiting for input). "
        "The text is sent as given: end it with a newline to press Enter. There is no TTY, so control keys "
        "do nothing: use terminal_interrupt for Ctrl-C. Returns what the program printed in the next moment.",
        annotations=host_tool.model_copy(update={"title": "Type into the session"}),
    )
    async def terminal_send_keys(
        keys: Annotated[Text, Field(description='Text to type, e.g. "yes\\n".')], ctx: Context
    ) -> str:
        with refusals_as_errors():
            return await service_of(ctx).session_send_keys(keys)

    @server.tool(
        description="Send Ctrl-C (SIGINT) to the program running in the shell session; the session stays. "
        "As in a script, the rest of a command list (`a; b`) then runs on.",
        annotations=local_tool.model_copy(update={"title": "Interrupt the session's command"}),
    )
    async def terminal_interrupt(ctx: Context) -> str:
        idle = await service_of(ctx).session_interrupt()
        if idle is None:
            return "No shell session is running."
        if idle:
            return "Sent Ctrl-C to the session; nothing is running in it now."
        return ("Sent Ctrl-C to the session, but its command is still running (it may ignore Ctrl-C). "
                "Read its output with terminal_read_scrollback.")

    @server.tool(
        description="Read the last lines the shell session printed (default 60, at most 500).",
        annotations=local_tool.model_copy(update={"title": "Read the session's recent output", "read_only_hint": True}),
    )
    async def terminal_read_scrollback(ctx: Context, lines: WholeNumber = 60) -> str:
        with refusals_as_errors():
            return service_of(ctx).session_scrollback(lines)

    return server


class PushRelay:
    """Hands the tray link's news to the event loop without ever blocking the link's reader: the
    loop may itself be waiting for the reader to deliver an answer."""

    def __init__(self, token: Any, on_loop: Callable[[], None]) -> None:
        self._token = token
        self._on_loop = on_loop
        self._event = threading.Event()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="tray-push-relay", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def kick(self) -> None:
        self._event.set()

    def close(self) -> None:
        self._closed = True
        self._event.set()

    def _run(self) -> None:
        while True:
            self._event.wait()
            self._event.clear()
            if self._closed:
                return
            try:
                anyio.from_thread.run_sync(self._on_loop, token=self._token)
            except RuntimeError:  # the loop has ended: the server is stopping
                return


def serve(*, headless: bool, tools: str | None = None, paths: AppPaths | None = None) -> int:
    """Run the stdio server until the client closes the pipe or stops it with a signal; registers
    this instance in the journal, and marks it `exited` either way (only a silent death is a crash)."""
    from app.core import classifier
    from app.core.bash_resolver import find_bash
    from app.core.host_environment import EnvironmentResolver

    paths = paths or AppPaths.from_environment()
    stdio_transport.stop_on_signals_at_start()
    try:
        journal = Journal(paths)  # dead servers are recovered after the handshake, with their orphans
    except DataFolderError as problem:
        reason = str(problem)
        if problem.kind == FULL:  # this server cannot notice the space coming back
            reason += " This server started while the disk was full: once there is room, restart Claude."
        return serve_unavailable(reason, tools or ALL_TOOLS)
    lock_key = secrets.token_hex(8)
    lock: liveness.HeldLock | None = None
    link: TrayLink | None = None
    authority: ServerAuthority | None = None
    server_id: int | None = None

    def leave() -> None:
        """Close this server's rows, leave its tray and give up its lock; once, however serving ended."""
        nonlocal lock, link, authority, server_id
        stdio_transport.ignore_stop_signals()
        try:
            if authority is not None:
                authority.end(server_id)
            elif server_id is not None:
                journal.end_server(server_id)
        except CoworkError as problem:  # a full disk: the next process marks it, once it can write
            print(f"cowork-terminal: {problem}", file=sys.stderr, flush=True)
        authority = server_id = None
        if link is not None:
            link.close()
            link = None
        if lock is not None:
            lock.release()
            lock = None
        paths.server_lock(lock_key).unlink(missing_ok=True)

    def stopped(name: str) -> NoReturn:
        """A client stopped us with a signal: an ordinary exit, not a crash."""
        leave()
        print(f"cowork-terminal: stopped by {name}", file=sys.stderr, flush=True)
        logging.shutdown()
        os._exit(0)  # see stdio_transport.serve_stdio: the stdin reader thread cannot be joined

    try:
        # The lock first, then the row: nobody may see this server registered and not holding its lock.
        with suppress(OSError):  # a read-only folder: the registration below says so
            lock = liveness.try_hold(paths.server_lock(lock_key))
        link = TrayLink(paths, headless=headless, lock_key=lock_key)
        if not link.try_connect():  # no tray: the server registers itself (a tray writes the row otherwise)
            try:
                link.server_id = journal.register_server(os.getpid(), headless=headless, lock_key=lock_key)
            except DataFolderError as problem:
                # Serve anyway: every command is refused with this reason until the disk has room
                # (or the folder is writable) again, and the model can tell the user; a server that
                # died here would show Claude only "failed".
                print(f"cowork-terminal: {problem}", file=sys.stderr, flush=True)
        server_id = link.server_id
        authority = ServerAuthority(journal, link, headless=headless)
        link.start()
        resolver = EnvironmentResolver()
        created: list[CommandService] = []

        def after_handshake() -> None:
            """Slow start-up work, in a worker thread once the client is served: loading the classifier
            and tree-sitter, the login-shell probe (macOS), and, with no tray to do it, retention (it
            may delete thousands of rows; its own connection) and ending what servers killed without a
            word left running."""
            for service in created:  # the classifier, with this server's own folders
                classifier.warm_up(cwd=service.home, protected_paths=service.protected_paths)
            resolver.prepare()
            if authority is None or authority.tethered:
                return  # the tray writes the journal, and it recovers crashed servers and their orphans
            try:
                with Journal(paths) as background:
                    background.apply_retention()
                    prune_outputs(paths.outputs)  # whole outputs past their retention period
                    background.recover_dead_servers()
                    orphans.end_orphans(paths, background.was_left_running)  # what a killed server left
            except DataFolderError as problem:  # a full disk: the calls say so; the next start retries
                log.warning("start-up upkeep skipped: %s", problem)

        def make_service() -> CommandService:
            assert authority is not None
            service = CommandService(
                journal,
                paths,
                server_id=server_id,
                bash=bash,
                environment=resolver.environment_for,
                authority=authority,
                run_mark=orphans.server_mark(paths, lock_key),
            )
            created.append(service)
            return service

        # `serve --tools` only narrows what the user chose; a tray's choice beats the file's.
        chosen = link.state.tools if link.state is not None else tool_set(journal)
        offered = narrowest_tools(chosen, tools)
        # Found once, then kept; a bash that is missing is looked for again at each command.
        bash = functools.cache(find_bash)
        try:
            bash()
        except CoworkError as missing:
            # Claude's log for this server shows it at once; every command the model sends says it too,
            # so the model can tell the user (a server that exited would show only "failed" in Claude).
            print(f"cowork-terminal: {missing}", file=sys.stderr, flush=True)
        budget = output_budget(journal)
        server = build_server(make_service, prepare=after_handshake, tools=offered, link=link, budget=budget)
        # MCPServer.run("stdio") offers no way in for the signals and the repaired lines: its own
        # run_stdio_async is these same calls around the low-level server.
        anyio.run(stdio_transport.serve_stdio, server._lowlevel_server, stopped)
    except BaseException as problem:  # a stop signal during start-up, before serving began
        name = stdio_transport.stop_signal_in(problem)
        if name is None:
            raise
        stopped(name)
    finally:
        leave()
        journal.close()
    return 0


def serve_unavailable(reason: str, tools: str) -> int:
    """Serve with no journal (the data folder cannot hold one): every call is answered with the
    reason, so the model can tell the user, instead of a server that Claude shows as "failed"."""
    print(f"cowork-terminal: {reason}", file=sys.stderr, flush=True)

    def stopped(name: str) -> NoReturn:
        print(f"cowork-terminal: stopped by {name}", file=sys.stderr, flush=True)
        os._exit(0)  # see stdio_transport.serve_stdio

    try:
        server = build_server(lambda: ServiceUnavailable(reason), tools=tools)
        anyio.run(stdio_transport.serve_stdio, server._lowlevel_server, stopped)
    except BaseException as problem:
        name = stdio_transport.stop_signal_in(problem)
        if name is None:
            raise
        stopped(name)
    return 0
