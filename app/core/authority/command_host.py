"""The tray's command host: it runs the tool calls that servers hand it, each server's in its own runner.

A server bound to a tray does not decide or run commands (issue 21): it sends each tool call here as
`call`, and the runner made for that server checks, classifies, holds or refuses it and starts its
command, exactly as a server's CommandService does, then the result goes back as `call_result`.

Everything runs on one thread with one event loop that lives as long as the tray: bubblewrap's
`--die-with-parent` follows the thread that started it, so every container is started from here.
A runner outlives its server: a job whose server went away goes on until it ends (its own time
limit, Stop, pause or quit); the runner is closed once its server is gone and none of its jobs
runs or waits. The runners themselves are made by `open_runner` (the MCP layer, given by the
entry point: the core imports no MCP). Loading that layer takes most of a second, so `warm` loads it
as soon as a server binds (`expect_calls`), while Claude is still starting up, not at the first call.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from contextlib import suppress
from typing import Any, Protocol

import anyio
import anyio.from_thread
import anyio.to_thread
from anyio.abc import TaskGroup

from app.core.authority.oversized import fitting
from app.core.channel.call_messages import Call, CallProgress, CallResult
from app.core.hop_times import mark

log = logging.getLogger(__name__)

REAP_INTERVAL_S = 1.0  # how often runners of servers that went away are checked for idleness
CLOSE_WAIT_S = 2.0  # at quit, how long the calls get to return their "the app stopped" results
# English: the model reads it (the MCP shape of a failed call).
HOST_FAILED = (
    "Error executing tool {tool}: the Cowork Terminal app could not run this call ({error}). Try again; if it "
    "fails again, ask the user to restart Cowork Terminal."
)

ProgressSink = Callable[[float, float | None, str | None], Awaitable[None]]


class CallRunner(Protocol):
    """The tools of one server, run in the tray (app/server/tray_side.py makes them)."""

    async def call(self, call: Call, progress: ProgressSink | None) -> Mapping[str, Any]:
        """Run one tool call; its MCP CallToolResult as JSON."""
        ...

    def busy(self) -> bool:
        """Whether one of its jobs runs or waits for the user."""
        ...

    def closing(self) -> None:
        """The app stops: end what runs now (the calls then return, saying why)."""
        ...

    async def aclose(self) -> None: ...


class PeerLike(Protocol):
    def push(self, message: Any) -> None: ...


RunnerOpener = Callable[[Call, TaskGroup], Awaitable[CallRunner]]


class _Served:
    """What the host keeps for one server: its runner (made at its first call) and its calls now."""

    def __init__(self, peer: PeerLike) -> None:
        self.peer = peer
        self.runner: CallRunner | None = None
        self.opening = anyio.Lock()
        self.calls: dict[str, anyio.CancelScope] = {}
        self.gone = False


class CommandHost:
    """One thread, one event loop, one runner per server that forwards its calls."""

    def __init__(self, open_runner: RunnerOpener, warm: Callable[[], None] | None = None) -> None:
        self._open_runner = open_runner
        self._warm = warm  # loads what open_runner needs; once, at the first server that binds
        self._served: dict[int, _Served] = {}  # by id(peer): the hub's Peer objects are not hashable by value
        self._portal: anyio.from_thread.BlockingPortal | None = None
        self._portal_cm: Any = None
        self._group: TaskGroup | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self._lock = threading.Lock()

    # -- from any thread --------------------------------------------------------------------------

    def start(self) -> None:
        """Start the host's thread and its event loop (the thread every container is started from)."""
        self._portal_cm = anyio.from_thread.start_blocking_portal(name="tray-command-host")
        self._portal = self._portal_cm.__enter__()
        self._portal.start_task_soon(self._main)
        self._ready.wait(5.0)

    def close(self) -> None:
        """End every runner (their jobs end with them) and the thread. Before the hub closes: the
        calls' results, which say the app stopped, then reach their servers ahead of `closing`."""
        with self._lock:  # no warm-up is scheduled after this
            portal, self._portal, self._warm = self._portal, None, None
        if portal is None:
            return
        with suppress(Exception):
            portal.call(self._close_all)
        with suppress(Exception):
            self._portal_cm.__exit__(None, None, None)

    def submit(self, peer: PeerLike, call: Call) -> None:
        """Run `call` for `peer` (thread-safe, returns at once); its result is pushed to the peer."""
        self._soon(self._run, peer, call)

    def _soon(self, func: Callable[..., Coroutine[Any, Any, None]], *args: Any) -> None:
        """Start `func(*args)` on the host's loop without waiting for that loop to wake (a portal's
        `start_task_soon` waits): the hub's reader, which calls this, answers its server meanwhile
        instead of when the host's loop runs (0.3 ms a call, contending with it for the GIL)."""
        loop, group = self._loop, self._group
        if loop is None or group is None or self._portal is None:
            raise RuntimeError("the command host is not running")
        loop.call_soon_threadsafe(functools.partial(group.start_soon, func, *args))

    def expect_calls(self) -> None:
        """A server that hands this tray its calls has bound: load the runners' modules now, in a
        worker thread: the host's loop must stay free, as every call waits for it to be taken
        (a call that comes meanwhile is taken at once, and its runner waits for the load)."""
        with self._lock:  # servers bind on their own threads: one of them schedules it
            warm, self._warm = self._warm, None
            portal = self._portal
            if warm is not None and portal is not None:
                with suppress(RuntimeError):
                    portal.start_task_soon(self._warm_up, warm)

    def cancel(self, peer: PeerLike, call_id: str) -> None:
        """The client cancelled the call: cancel it as the server would have (execute_command ends its job)."""
        with suppress(RuntimeError):
            self._soon(self._cancel, id(peer), call_id)

    def peer_gone(self, peer: PeerLike) -> None:
        """The server went away: its runner lives on while one of its jobs runs or waits."""
        with suppress(RuntimeError):
            self._soon(self._gone, id(peer))

    # -- on the host's loop ------------------------------------------------------------------------

    async def _main(self) -> None:
        async with anyio.create_task_group() as group:
            self._group, self._loop = group, asyncio.get_running_loop()
            group.start_soon(self._reap)
            self._ready.set()
            await anyio.sleep_forever()

    @staticmethod
    async def _warm_up(warm: Callable[[], None]) -> None:
        mark("host: warm-up start")
        began = time.monotonic()
        try:
            await anyio.to_thread.run_sync(warm)
        except Exception:  # the first call loads it again, and says what fails
            log.exception("loading the command runners ahead failed")
        else:
            log.info("command runners loaded ahead of the first call (%.2f s)", time.monotonic() - began)
        mark("host: warm-up end")

    async def _close_all(self) -> None:
        for served in list(self._served.values()):
            if served.runner is not None:
                served.runner.closing()
        with anyio.move_on_after(CLOSE_WAIT_S):
            while any(served.calls for served in list(self._served.values())):
                await anyio.sleep(0.02)
        for key in list(self._served):
            await self._drop(key)
        if self._group is not None:
            self._group.cancel_scope.cancel()

    async def _run(self, peer: PeerLike, call: Call) -> None:
        mark("host: call on its loop")
        served = self._served.get(id(peer))
        if served is None:
            served = self._served[id(peer)] = _Served(peer)
        with anyio.CancelScope() as scope:
            served.calls[call.call_id] = scope
            try:
                result = await self._answer(served, call)
            finally:
                served.calls.pop(call.call_id, None)
            mark("host: result pushed")
            peer.push(CallResult(call.call_id, fitting(call.tool, call.call_id, result)))

    async def _answer(self, served: _Served, call: Call) -> Mapping[str, Any]:
        try:
            async with served.opening:
                if served.runner is None:
                    assert self._group is not None
                    served.runner = await self._open_runner(call, self._group)
            progress = self._progress_to(served.peer, call.call_id) if call.progress else None
            return await served.runner.call(call, progress)
        except anyio.get_cancelled_exc_class():
            raise
        except Exception as problem:  # the top of a call: the model is told, the tray lives on
            log.exception("the command host could not run %s", call.tool)
            text = HOST_FAILED.format(tool=call.tool, error=problem)
            return {"content": [{"type": "text", "text": text}], "isError": True}

    @staticmethod
    def _progress_to(peer: PeerLike, call_id: str) -> ProgressSink:
        async def send(progress: float, total: float | None, message: str | None) -> None:
            peer.push(CallProgress(call_id, progress, total, message))

        return send

    async def _cancel(self, key: int, call_id: str) -> None:
        served = self._served.get(key)
        scope = served.calls.get(call_id) if served is not None else None
        if scope is not None:
            scope.cancel()

    async def _gone(self, key: int) -> None:
        served = self._served.get(key)
        if served is None:
            return
        # Its calls are not cancelled: in Claude a cancellation is the user's Stop, and a server that
        # died is not one. They end within the client's patience; their jobs go on as detached ones.
        served.gone = True
        await self._reap_one(key)

    async def _reap(self) -> None:
        while True:
            await anyio.sleep(REAP_INTERVAL_S)
            for key in list(self._served):
                await self._reap_one(key)

    async def _reap_one(self, key: int) -> None:
        served = self._served.get(key)
        if served is None or not served.gone or served.calls:
            return
        if served.runner is not None and served.runner.busy():
            return
        await self._drop(key)

    async def _drop(self, key: int) -> None:
        served = self._served.pop(key, None)
        if served is None or served.runner is None:
            return
        with anyio.CancelScope(shield=True):
            try:
                await served.runner.aclose()
            except Exception:  # closing must not take the host down
                log.exception("closing a runner failed")
