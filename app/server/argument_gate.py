"""What the server does with each message before the SDK looks at it: who the client is, and
whether a tool call's arguments can be used at all.

The SDK validates tool arguments with pydantic and would hand the model pydantic's text (with a
link to errors.pydantic.dev), taking `true` as 1 ms and `"5000"` as 5000. Here every call is
checked first by `commands.request.check_arguments`, in our words; a refused call that carries a
command is journaled as refused. The tools' parameters are typed loosely for the same reason, so
the SDK's validation never fails on what passed here.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp_types import CallToolResult, TextContent

from app.core.errors import CoworkError
from app.server.stdio_transport import not_utf8, surrogate_message, unencodable_labels

if TYPE_CHECKING:  # loaded with the host side, after the handshake (see host_side)
    from app.core.commands.service import CommandService

log = logging.getLogger(__name__)

# The tools whose refused calls are journaled: they carry a command (or typed keys) the user may
# want to see was refused. The others act only on what this server holds.
COMMAND_ARGUMENT = {
    "execute_command": "command",
    "execute_read_only_command": "command",
    "terminal_run": "command",
    "terminal_send_keys": "keys",
}


def refusal_of(
    tool: str, arguments: Mapping[str, Any], meta: Any, accepted: Collection[str] | None = None
) -> str | None:
    """Why a call's arguments cannot be used, in words for the model; None when they can.
    `accepted`: the parameters the tool declares (None: not known, names are not checked)."""
    labels = unencodable_labels(meta)
    if labels:
        return surrogate_message(labels, not_utf8(meta))
    from app.core.commands.request import CommandRefused, check_arguments  # see host_side

    try:
        check_arguments(tool, arguments, accepted)
    except CommandRefused as refusal:
        return str(refusal)
    return None


def note_client(service: CommandService, name: object, version: object) -> None:
    """Remember which client speaks to us, at once (a health check that only initializes, too), by
    the name every window and journal row shows (records.client_text: a call's may be megabytes)."""
    import sqlite3  # with the host side, after the handshake

    from app.core.journal.records import client_text

    if not isinstance(name, str) or service.client.name == client_text(name):
        return
    service.client.name, service.client.version = (
        client_text(name),
        client_text(version if isinstance(version, str) else None),
    )

    try:
        service.authority.set_client(service.server_id, service.client.name, service.client.version)
    except (CoworkError, sqlite3.Error) as problem:  # the handshake must not fail for the journal's sake
        log.warning("could not record the client's name in the journal: %s", problem)


@dataclass(frozen=True)
class ServiceUnavailable:
    """What `serve` runs on when the data folder cannot hold the journal (read-only, missing):
    it still answers Claude, and every call gets the reason instead of a server that died."""

    reason: str


def error_result(tool: str, reason: str) -> CallToolResult:
    # Worded as the SDK words every other refusal, so the model reads one shape.
    return CallToolResult(
        content=[TextContent(type="text", text=f"Error executing tool {tool}: {reason}")], is_error=True
    )


def declared_parameters(server: Any) -> Callable[[str], Awaitable[Collection[str] | None]]:
    """The parameter names of each tool as the server lists them (None for a tool it does not have)."""

    async def parameters(tool: str) -> Collection[str] | None:
        for listed in await server.list_tools():
            if listed.name == tool:
                properties = (listed.input_schema or {}).get("properties")
                return list(properties) if isinstance(properties, Mapping) else []
        return None

    return parameters


class CallGate(ServerMiddleware[Any]):
    """Runs at the top of every inbound message (see ServerMiddleware). `handshake_done` is set
    when the handshake is over (`notifications/initialized`, or the first request of a client
    that sends no `initialize`): the server then sets up its host side, and every request but a
    ping waits here until `serve_with` says what the calls run on."""

    def __init__(self) -> None:
        self.handshake_done = anyio.Event()
        self._ready = anyio.Event()
        self._service: CommandService | ServiceUnavailable | None = None
        self._client: tuple[object, object] | None = None  # named at `initialize`, before the service
        self._reopen: Callable[[], Awaitable[CommandService | ServiceUnavailable]] | None = None
        # The parameters each tool declares (its signature is its schema): the names a call may use.
        self.declared: Callable[[str], Awaitable[Collection[str] | None]] | None = None
        self._parameters: dict[str, Collection[str]] = {}  # what `declared` said, until the service changes

    def serve_with(
        self,
        service: CommandService | ServiceUnavailable,
        reopen: Callable[[], Awaitable[CommandService | ServiceUnavailable]] | None = None,
    ) -> None:
        """What calls run on from now; `reopen` tries again, at each call, while it is unavailable."""
        self._service = service
        self._reopen = reopen
        self._parameters.clear()  # the tools are registered as the service opens
        if self._client is not None and not isinstance(service, ServiceUnavailable):
            note_client(service, *self._client)
        self._ready.set()

    async def parameters_of(self, tool: str) -> Collection[str] | None:
        """`declared(tool)`, kept: listing every tool's schema at each call cost about 0.1 ms."""
        if tool not in self._parameters and self.declared is not None:
            found = await self.declared(tool)
            if found is None:  # not a tool of ours: not kept, so no name a model invents stays
                return None
            self._parameters[tool] = found
        return self._parameters.get(tool)

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method == "initialize":
            info = (ctx.params or {}).get("clientInfo")
            if isinstance(info, Mapping):
                self._client = (info.get("name"), info.get("version"))
                if self._service is not None and not isinstance(self._service, ServiceUnavailable):
                    note_client(self._service, *self._client)
            return await call_next(ctx)
        self.handshake_done.set()
        if ctx.method == "ping" or ctx.method.startswith("notifications/"):
            return await call_next(ctx)
        await self._ready.wait()
        service = self._service
        if isinstance(service, ServiceUnavailable) and ctx.method == "tools/call" and self._reopen is not None:
            self.serve_with(await self._reopen(), self._reopen)
            service = self._service
        if isinstance(service, ServiceUnavailable):
            if ctx.method == "tools/call":
                return error_result(str((ctx.params or {}).get("name")), service.reason)
            return await call_next(ctx)
        assert service is not None
        info = getattr(getattr(ctx.session, "client_params", None), "client_info", None)
        if info is not None:  # the modern era: no initialize, each request says who sends it
            note_client(service, info.name, info.version)
        params = ctx.params
        if ctx.method != "tools/call" or not isinstance(params, Mapping):
            return await call_next(ctx)
        tool, arguments = params.get("name"), params.get("arguments") or {}
        if not isinstance(tool, str) or not isinstance(arguments, Mapping):
            return await call_next(ctx)
        accepted = await self.parameters_of(tool)
        reason = refusal_of(tool, arguments, params.get("_meta"), accepted)
        if reason is None:
            return await call_next(ctx)
        if tool in COMMAND_ARGUMENT:
            await service.journal_refused_arguments(tool, arguments.get(COMMAND_ARGUMENT[tool]), arguments, reason)
        return error_result(tool, reason)
