"""`serve --headless` in this process: the same server (`build_server`, its handshake, argument gate,
host side and tools), reached by the SDK's client over its in-memory streams instead of stdio.

For tests of what the tools do (the session shell, jobs, output): a `serve` process costs about a
second of CPU to start (issue 20), most of it `import mcp`, which this process has done already.
What only a process shows stays with tests/stdio_client.py's `connect`: stdio itself, signals, the
client leaving, the environment a client passes, a tray's look at its peer. Commands run in a real
bash in the real container, and write the journal of the test's home; they inherit this process's
environment, not the few variables the SDK's stdio client passes on.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from mcp import Client
from mcp_types import Implementation

from app.core.paths import HOME_ENV, AppPaths
from app.server.host_side import HostSide
from app.server.mcp_server import build_server


@asynccontextmanager
async def serving(
    home: Path, *, tools: str | None = None, client_info: Implementation | None = None
) -> AsyncIterator[Client]:
    """A headless server for `home`, as `serve --headless [--tools]` opens it, called by a client that
    names itself `client_info` (the SDK's name when None); left as `serve` leaves."""
    paths = AppPaths.from_environment({HOME_ENV: str(home)})
    hosts: list[HostSide] = []

    def open_host() -> HostSide:
        hosts.append(HostSide(paths, headless=True, tools=tools))
        return hosts[0]

    try:
        # `legacy`: the classic handshake over memory streams, so the server's lifespan and its
        # argument gate run as they do for Claude Desktop.
        async with Client(build_server(open_host), mode="legacy", client_info=client_info) as client:
            yield client
    finally:
        while hosts:
            hosts.pop().leave()
