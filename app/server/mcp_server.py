"""The stdio MCP server that Claude starts: a thin protocol layer over the core's CommandService.

This is the only module that imports `mcp`. stdout belongs to the protocol: nothing here prints,
logging goes to stderr, and the SDK points fd 1 away from the pipe while serving, so a child
process cannot corrupt the stream either.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any

import anyio
import anyio.to_thread
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

from app import __version__
from app.core import liveness
from app.core.command_service import (
    DEFAULT_TIMEOUT_MS,
    MAX_TIMEOUT_MS,
    CommandRefused,
    CommandService,
    ExecuteRequest,
)
from app.core.journal import Journal
from app.core.paths import AppPaths

log = logging.getLogger(__name__)

SERVER_NAME = "cowork-terminal"
INSTRUCTIONS = (
    "Runs bash commands on the user's own computer (the host), outside your sandbox: install "
    "dependencies, build, test, use git. The user watches every command and can pause access or "
    "stop a command at any time."
)
EXECUTE_DESCRIPTION = f"""Run a bash command on the user's computer and return its stdout, stderr and exit code.

- The shell is always bash (Git Bash on Windows). Set `cwd` instead of starting with `cd dir &&`.
- No TTY and stdin is closed: interactive programs (editors, pagers, prompts, REPLs) cannot work;
  pass flags such as `--yes` or `--no-pager`.
- Write multi-line text with a quoted heredoc, for example:
  gh pr create --title "Fix" --body "$(cat <<'EOF'
  ## Summary
  - First item
  EOF
  )"
- `timeout` is in milliseconds (default {DEFAULT_TIMEOUT_MS}, at most {MAX_TIMEOUT_MS}). Calls longer than
  about 50 s may be cancelled by the client: run long jobs in the background with output to a file
  (`nohup make > build.log 2>&1 &`) and read the file in later calls.
- Each of stdout and stderr is capped at 1 MB (the start and the end are kept)."""


class CommandResult(BaseModel):
    """What the model gets back: the seed's `{stdout, stderr, exitCode, timedOut}` and a few extras."""

    stdout: str
    stderr: str
    exitCode: int | None = Field(description="null when the command was killed (timeout, stop, pause)")
    timedOut: bool
    durationMs: float | None = None
    note: str | None = Field(default=None, description="why the command ended early, when it did")


def build_server(
    service_factory: Callable[[], CommandService], prepare: Callable[[], object] | None = None
) -> MCPServer[Any]:
    """The MCP server around a CommandService that the lifespan creates (and closes) per process."""

    @asynccontextmanager
    async def lifespan(_: MCPServer[Any]) -> AsyncIterator[CommandService]:
        service = service_factory()
        async with anyio.create_task_group() as background:
            background.start_soon(service.watch)
            if prepare is not None:  # e.g. probing the login shell: off the loop, after the handshake
                background.start_soon(anyio.to_thread.run_sync, prepare)
            try:
                yield service
            finally:
                background.cancel_scope.cancel()

    server: MCPServer[Any] = MCPServer(
        name=SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
    )

    @server.tool(
        description=EXECUTE_DESCRIPTION,
        annotations=ToolAnnotations(
            title="Run a command on the host",
            read_only_hint=False,
            destructive_hint=True,
            idempotent_hint=False,
            open_world_hint=True,
        ),
    )
    async def execute_command(
        command: Annotated[str, Field(description="The bash command to run.")],
        ctx: Context,
        cwd: Annotated[
            str | None, Field(description="Working directory (absolute path). Default: the user's home folder.")
        ] = None,
        timeout: Annotated[
            float | None, Field(description=f"Time limit in milliseconds. Default {DEFAULT_TIMEOUT_MS}.")
        ] = None,
        env: Annotated[
            dict[str, Any] | None,
            Field(description="Extra environment variables (string values), laid over the user's environment."),
        ] = None,
    ) -> CommandResult:
        service: CommandService = ctx.request_context.lifespan_context
        note_client(service, ctx)
        try:
            result = await service.execute(ExecuteRequest(command=command, cwd=cwd, timeout_ms=timeout, env=env))
        except CommandRefused as refusal:
            raise ToolError(str(refusal)) from None
        return CommandResult(**result.to_model(), note=result.stopped_reason)

    return server


def note_client(service: CommandService, ctx: Context) -> None:
    """Remember which client speaks to us (from the handshake, or each request's envelope)."""
    params = getattr(ctx.session, "client_params", None)
    info = getattr(params, "client_info", None)
    if info is None or service.client.name == info.name:
        return
    service.client.name, service.client.version = info.name, info.version
    if service.server_id is not None:
        service.journal.set_server_client(service.server_id, info.name, info.version)


def serve(*, headless: bool, paths: AppPaths | None = None) -> int:
    """Run the stdio server until the client closes the pipe; registers this instance in the journal."""
    from app.core.bash_resolver import find_bash
    from app.core.host_environment import EnvironmentResolver

    paths = (paths or AppPaths.from_environment()).ensure()
    journal = Journal.open(paths)
    journal.apply_retention()
    server_id = journal.register_server(os.getpid(), headless=headless)
    lock = liveness.try_hold(paths.server_lock(server_id))
    resolver = EnvironmentResolver()

    def make_service() -> CommandService:
        return CommandService(
            journal,
            paths,
            server_id=server_id,
            bash=find_bash,
            environment=lambda overlay: resolver.environment_for(overlay),
            require_tray=not headless,
        )

    try:
        build_server(make_service, prepare=resolver.prepare).run("stdio")
    finally:
        journal.end_server(server_id)
        if lock is not None:
            lock.release()
        paths.server_lock(server_id).unlink(missing_ok=True)
        journal.close()
    return 0

