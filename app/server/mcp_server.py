"""The stdio MCP server that Claude starts: a thin protocol layer over the core's CommandService.

Only `app/server` imports `mcp`. stdout belongs to the protocol: nothing here prints, logging goes
to stderr, and the SDK points fd 1 away from the pipe while serving, so a child process cannot
corrupt the stream either.

Start-up is lean (issue 11): before `initialize` is answered this process has loaded only the SDK
and this module; the host side (journal, tray link, CommandService, the tools) is set up once the
handshake is over, and the classifier and tree-sitter load after that in a worker thread.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import TYPE_CHECKING, Any, NoReturn

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
from anyio.abc import TaskGroup
from mcp.server import MCPServer

from app import __version__
from app.core import open_files
from app.server import stdio_transport
from app.server.argument_gate import CallGate, ServiceUnavailable, declared_parameters
from app.server.forwarding import TrayForwarder

if TYPE_CHECKING:
    from app.core.commands.service import CommandService
    from app.core.paths import AppPaths
    from app.server.host_side import HostSide

log = logging.getLogger(__name__)

SERVER_NAME = "cowork-terminal"
INSTRUCTIONS = (
    "Runs bash commands on the user's own computer (the host), outside your sandbox: install "
    "dependencies, build, test, use git. The user watches every command and can pause access or "
    "stop a command at any time. Look around with execute_read_only_command; a long command returns "
    "a jobId to follow with command_wait."
)
HANDSHAKE_WAIT_S = 2.0  # the host side waits this long at most for the handshake to end


def build_server(open_host: Callable[[], HostSide], ending: stdio_transport.Ending | None = None) -> MCPServer[Any]:
    """The MCP server, with no tools until the host side that `open_host` makes has opened, once the
    handshake is over (the argument gate holds the requests until then). `ending`: set as serving
    ends (stdio_transport.serve_stdio), when the calls in flight are not the client's to cancel."""
    host: HostSide | None = None

    @asynccontextmanager
    async def lifespan(_: MCPServer[Any]) -> AsyncIterator[None]:
        async with anyio.create_task_group() as background:
            background.start_soon(open_after_handshake, background)
            try:
                yield None
            finally:
                if host is not None and host.link is not None:
                    host.link.on_change = lambda: None
                background.cancel_scope.cancel()

    async def open_after_handshake(background: TaskGroup) -> None:
        nonlocal host
        with anyio.move_on_after(HANDSHAKE_WAIT_S):
            await gate.handshake_done.wait()
        host = open_host()

        async def open_host_side() -> CommandService | ServiceUnavailable:
            """On the loop, at once: a few tens of milliseconds during which only the client waits.
            Again at each call while the data folder cannot hold the journal."""
            assert host is not None
            service = host.open(server)
            if isinstance(service, ServiceUnavailable):  # the gate answers the call with the reason
                return service
            background.start_soon(service.run_background)
            if host.link is not None:  # the tray's pushes reach the service on this loop, at once
                relay = PushRelay(anyio.lowlevel.current_token(), service.pushed)
                host.link.on_change = relay.kick
                relay.start()
                background.start_soon(close_at_exit, relay)
            # Abandoned on a stop signal: the process is about to exit, and SQLite rolls back
            # whatever it left half-written.
            background.start_soon(partial(anyio.to_thread.run_sync, host.prepare, abandon_on_cancel=True))
            return service

        gate.serve_with(await open_host_side(), reopen=open_host_side)

    async def close_at_exit(relay: PushRelay) -> None:
        try:
            await anyio.sleep_forever()
        finally:
            relay.close()

    def client() -> tuple[Any, Any]:
        service = host.service if host is not None else None
        return (service.client.name, service.client.version) if service is not None else (None, None)

    gate = CallGate()

    # After the gate: the tray runs every call of a server bound to it (issue 21).
    forwarder = TrayForwarder(
        lambda: host.link if host is not None else None,
        client,
        gate.parameters_of,
        lambda: ending is not None and ending.now,
    )
    server: MCPServer[Any] = MCPServer(
        name=SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        middleware=[gate, forwarder],
    )
    gate.declared = declared_parameters(server)
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
    stdio_transport.stop_on_signals_at_start()
    open_files.raise_limit()  # a headless one runs its commands itself
    hosts: list[HostSide] = []

    def open_host() -> HostSide:
        from app.core.paths import AppPaths  # after the handshake: see the module's docstring
        from app.server.host_side import HostSide

        hosts.append(HostSide(paths or AppPaths.from_environment(), headless=headless, tools=tools, lives_long=True))
        return hosts[0]

    def leave() -> None:
        stdio_transport.ignore_stop_signals()
        while hosts:
            hosts.pop().leave()

    def stopped(name: str) -> NoReturn:
        """A client stopped us with a signal: an ordinary exit, not a crash."""
        leave()
        print(f"cowork-terminal: stopped by {name}", file=sys.stderr, flush=True)
        logging.shutdown()
        os._exit(0)  # see stdio_transport.serve_stdio: the stdin reader thread cannot be joined

    try:
        ending = stdio_transport.Ending()
        server = build_server(open_host, ending)
        # MCPServer.run("stdio") offers no way in for the signals and the repaired lines: its own
        # run_stdio_async is these same calls around the low-level server.
        anyio.run(stdio_transport.serve_stdio, server._lowlevel_server, stopped, ending)
    except BaseException as problem:  # a stop signal during start-up, before serving began
        name = stdio_transport.stop_signal_in(problem)
        if name is None:
            raise
        stopped(name)
    finally:
        leave()
    return 0
