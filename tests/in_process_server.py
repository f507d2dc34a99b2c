"""`serve --headless` in this process: the same server (`build_server`, its handshake, argument gate,
host side and tools), reached by the SDK's client over its in-memory streams instead of stdio.
With `bound=True` it is a server of the hub of this process instead (tests/channel_peers.py
`running_hub`), linked to it as the tray's own runners are (core/channel/local_link.py): the hub
holds, decides, records and pauses its commands, as a tray does those of every server bound to it.

For tests of what the tools do (the session shell, jobs, output): a `serve` process costs about a
second of CPU to start (issue 20), most of it `import mcp`, which this process has done already.
What only a process shows stays with tests/stdio_client.py's `connect`: stdio itself, signals, the
client leaving, the environment a client passes, a tray's look at its peer. Commands run in a real
bash in the real container, and write the journal of the test's home; they inherit this process's
environment, not the few variables the SDK's stdio client passes on.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.session import MessageHandlerFnT
from mcp_types import Implementation

from app.core.authority.holds import HeldCommand
from app.core.authority.hub import Hub
from app.core.channel import local_link
from app.core.messages import PROMPT_DECIDED_BY, REQUEST_DECIDED_BY
from app.core.paths import HOME_ENV, AppPaths
from app.server.host_side import HostSide
from app.server.mcp_server import build_server


@asynccontextmanager
async def serving(
    home: Path,
    *,
    tools: str | None = None,
    client_info: Implementation | None = None,
    bound: bool = False,
    message_handler: MessageHandlerFnT | None = None,
    headless: bool = True,
) -> AsyncIterator[Client]:
    """A headless server for `home`, as `serve --headless [--tools]` opens it, called by a client that
    names itself `client_info` (the SDK's name when None) and sees every message the server sends
    through `message_handler`; left as `serve` leaves. `bound`: a server of the hub this process runs
    for `home` (started first), as the tray's runner for a server is. `headless=False`: `serve`
    without `--headless`, which looks for the tray at its address for `home` (a tray process)."""
    paths = AppPaths.from_environment({HOME_ENV: str(home)})
    hosts: list[HostSide] = []
    dial = local_link.hub_dial() if bound else None
    assert dial is not None or not bound, "start the hub first (tests/channel_peers.py running_hub)"

    def open_host() -> HostSide:
        hosts.append(HostSide(paths, headless=headless and not bound, tools=tools, dial=dial))
        return hosts[0]

    try:
        # `legacy`: the classic handshake over memory streams, so the server's lifespan and its
        # argument gate run as they do for Claude Desktop.
        async with Client(
            build_server(open_host), mode="legacy", client_info=client_info, message_handler=message_handler
        ) as client:
            yield client
    finally:
        while hosts:
            hosts.pop().leave()


async def came(check: Callable[[], bool], seconds: float = 10.0) -> bool:
    """Whether `check` holds within `seconds`, asked on the event loop: a server in this process
    works on that loop, so a blocking wait would freeze it."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        await anyio.sleep(0.05)
    return check()


async def held_by(hub: Hub, count: int = 1, seconds: float = 10.0) -> list[HeldCommand]:
    """The commands the hub of this process holds for the user, once `count` of them wait."""
    with anyio.fail_after(seconds):
        while len(hub.pending_holds()) < count:
            await anyio.sleep(0.02)
    return hub.pending_holds()


def holds_shown(hub: Hub) -> list[dict[str, Any]]:
    """What the tray answers `cowork-terminal approvals` (and the prompt shows) about each hold."""
    return [hold.to_window() for hold in hub.pending_holds()]


def deny(hub: Hub, command_id: int) -> None:
    """What `cowork-terminal deny ID` asks of the tray (a tightening, from anyone)."""
    assert hub.decide(command_id, allowed=False, by=REQUEST_DECIDED_BY)


def allow(hub: Hub, command_id: int) -> None:
    """What a click on Allow in the tray's approval prompt does: the hold shown, then allowed. Only
    the person at the screen can do this; tests of the click itself use the real prompt
    (tests/test_approval_prompt.py, tests/test_authority_windows.py)."""
    hub.seen(command_id)
    assert hub.decide(command_id, allowed=True, by=PROMPT_DECIDED_BY)


async def allow_when_held(hub: Hub, seconds: float = 10.0) -> HeldCommand:
    """The user allows the first command the hub holds, as soon as it waits."""
    [held, *_] = await held_by(hub, seconds=seconds)
    allow(hub, held.command_id)
    return held


def ids_given_again(paths: AppPaths) -> None:
    """Another program deletes the journal's finished rows, past what "Clear history" keeps (the
    highest id given): the next command gets an id an earlier one had. The tray's own renewals never
    give an id again; what servers keep by id must not outlive its command anyway."""
    import sqlite3

    with sqlite3.connect(paths.journal) as db:
        db.execute("DELETE FROM commands WHERE status NOT IN ('running', 'waiting')")
        db.execute("DELETE FROM settings WHERE key = 'journal.command_id_floor'")
    db.close()
