"""The tray's side of a forwarding server: the same tools, on the same CommandService, in the tray.

For each server that hands the tray its tool calls, the tray's command host
(core/authority/command_host.py) opens one `TrayRunner`: a host side as `serve` has one (a tray link
to the hub of this very process, core/channel/local_link.py, so the hub sees an ordinary server
whose commands it holds, stops and records), an MCP server with the argument gate and
`register_tools`, and the SDK's direct dispatcher to it (the server's handlers awaited in place, raw
dicts both ways), whose requests say they come from the real client (its name sets the patience).
So every result, text and refusal is what a server produces, but the decision and the command are
the tray's, and a job outlives the server that asked for it. The tray starts without the MCP SDK:
this module is loaded once the first server binds (`warm`, through CommandHost.expect_calls), ahead
of that server's first call.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any, cast

import anyio
import anyio.lowlevel
import anyio.to_thread
from anyio.abc import TaskGroup
from mcp.server import MCPServer
from mcp.server.runner import modern_on_request
from mcp.shared.direct_dispatcher import DirectDispatcher, create_direct_dispatcher_pair
from mcp_types import CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY
from mcp_types import SERVER_INFO_META_KEY as SERVER_INFO_META  # the modern era's stamp on every result
from mcp_types.version import LATEST_MODERN_VERSION

from app import __version__
from app.core.authority.command_host import ProgressSink
from app.core.channel import local_link
from app.core.channel.call_messages import Call
from app.core.commands.jobs import JobStatus
from app.core.commands.patience import WAITED_META
from app.core.commands.service import CommandService
from app.core.hop_times import mark
from app.core.paths import AppPaths, protected_paths
from app.server.argument_gate import CallGate, ServiceUnavailable, declared_parameters
from app.server.host_side import HostSide, load_for_commands
from app.server.mcp_server import INSTRUCTIONS, SERVER_NAME, PushRelay

log = logging.getLogger(__name__)


def as_forwarded(result: dict[str, Any]) -> dict[str, Any]:
    """A result as the forwarding server passes it on: without the stamp the in-process session adds
    (the client learns the server from `serve` itself), so what it reads is what `serve` made."""
    meta = result.get("_meta")
    if isinstance(meta, dict) and SERVER_INFO_META in meta:
        rest = {key: value for key, value in meta.items() if key != SERVER_INFO_META}
        result = {key: value for key, value in result.items() if key != "_meta"}
        if rest:
            result["_meta"] = rest
    return result


class TrayRunner:
    """One forwarding server's tools, run in the tray (see the module)."""

    def __init__(self, paths: AppPaths, call: Call) -> None:
        self.host = HostSide(paths, headless=False, tools=None, dial=local_link.hub_dial())
        self.gate = CallGate()
        self.server: MCPServer[Any] = MCPServer(
            name=SERVER_NAME, version=__version__, instructions=INSTRUCTIONS, middleware=[self.gate]
        )
        self.gate.declared = declared_parameters(self.server)
        # An unnamed client stays unnamed (""), as in `serve --headless`: the job tools then share
        # nothing with another server (Jobs.record, Jobs.others); a stand-in name such as "unknown"
        # let two unnamed apps read and stop each other's jobs (a red team, 2026-12-06).
        self.envelope = {  # what a modern client says with each request: its protocol, name, abilities
            PROTOCOL_VERSION_META_KEY: LATEST_MODERN_VERSION,
            CLIENT_INFO_META_KEY: {"name": call.client_name or "", "version": call.client_version or ""},
            CLIENT_CAPABILITIES_META_KEY: {},
        }
        self.patience = call.patience
        self.line: DirectDispatcher | None = None
        self.service: CommandService | None = None
        self._closed = anyio.Event()
        self._ended = anyio.Event()

    async def start(self, group: TaskGroup) -> None:
        await group.start(self._life)

    async def _life(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        # On this loop, as `serve` does it: the journal connection it opens is used from this thread.
        opened = self.host.open(self.server)
        relay: PushRelay | None = None
        try:
            async with anyio.create_task_group() as group:
                if isinstance(opened, ServiceUnavailable):
                    self.gate.serve_with(opened)
                else:
                    self.service = opened
                    opened.client.patience = self.patience
                    opened.repairs_journal = False  # the hub, in this same process, does it
                    group.start_soon(opened.run_background)
                    if self.host.link is not None:  # the hub's pushes reach the service on this loop
                        relay = PushRelay(anyio.lowlevel.current_token(), opened.pushed)
                        self.host.link.on_change = relay.kick
                        relay.start()
                    group.start_soon(
                        functools.partial(anyio.to_thread.run_sync, self.host.prepare, abandon_on_cancel=True)
                    )
                    self.gate.serve_with(opened)
                async with direct_line(self.server) as line:
                    self.line = line
                    task_status.started()
                    await self._closed.wait()
                group.cancel_scope.cancel()
        finally:
            try:
                if relay is not None:
                    relay.close()
                if self.host.link is not None:
                    self.host.link.on_change = lambda: None
                # On this thread: its journal connection was made here (the tray answers `end` at once).
                self.host.leave()
            finally:
                self._ended.set()

    async def call(self, call: Call, progress: ProgressSink | None) -> Mapping[str, Any]:
        assert self.line is not None
        # The time the call waited in the tray (a runner is built at a server's first call: 2 s here,
        # 10 s under load) comes out of the client's patience (job_tools.WAITED_META).
        meta: dict[str, Any] = {**self.envelope, WAITED_META: max(0.0, time.monotonic() - call.arrived)}
        opts: dict[str, Any] = {}
        if progress is not None:  # the direct path calls back with no token: the tools look for one
            meta["progressToken"] = call.call_id
            opts["on_progress"] = progress
        params = {"name": call.tool, "arguments": dict(call.arguments), "_meta": meta}
        mark("runner: client call")
        # The raw result, passed on as the server made it: `serve`'s client checks it against the
        # tool's schemas, so no second check here (0.3 ms a call, hop_times).
        result = await self.line.send_raw_request("tools/call", params, cast(Any, opts))
        mark("runner: client result")
        return as_forwarded(result)

    def busy(self) -> bool:
        service = self.service
        if service is None:
            return False
        return any(job.status in (JobStatus.RUNNING, JobStatus.WAITING) for job in service.jobs.jobs())

    def closing(self) -> None:
        # As when a server loses its tray: what runs ends with the "app stopped" reason.
        if self.host.link is not None:
            self.host.link.close()

    async def aclose(self) -> None:
        self._closed.set()
        await self._ended.wait()


async def _nothing_inbound(_ctx: Any, _method: str, _params: Mapping[str, Any] | None) -> None:
    """Neither side takes notifications: the modern era has none from client to server, and what the
    tools say meanwhile is progress, which comes back through the call's own callback."""


async def _no_server_requests(_ctx: Any, method: str, _params: Mapping[str, Any] | None) -> dict[str, Any]:
    raise RuntimeError(f"a server request ({method}) reached the tray's runner")  # the modern era has none


@contextlib.asynccontextmanager
async def direct_line(server: MCPServer[Any]) -> AsyncIterator[DirectDispatcher]:
    """The SDK's in-process path to `server` (what its `Client` opens in `auto` mode, without the
    client): requests go to the server's handlers as dicts, results come back as dicts."""
    lowlevel = server._lowlevel_server  # the SDK's own in-process client reaches it the same way
    async with lowlevel.lifespan(lowlevel) as state, anyio.create_task_group() as group:
        line, served = create_direct_dispatcher_pair(raise_handler_exceptions=False)
        await group.start(served.run, modern_on_request(lowlevel, state), _nothing_inbound)
        await group.start(line.run, _no_server_requests, _nothing_inbound)
        try:
            yield line
        finally:
            line.close()
            served.close()


def warm(paths: AppPaths) -> None:
    """Once a server has bound, before its first call: what that call would load cold besides this
    module (the classifier, tree-sitter, the executor), loaded while Claude is still starting, so the
    first command does not wait for them (issue 21)."""
    load_for_commands(str(Path.home()), protected_paths(paths))


async def open_runner(paths: AppPaths, call: Call, group: TaskGroup) -> TrayRunner:
    """A runner for the server whose first call is `call`, its tasks in `group` (the host's)."""
    runner = TrayRunner(paths, call)
    await runner.start(group)
    return runner
