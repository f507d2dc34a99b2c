"""A server bound to a tray that runs commands hands it every tool call, and passes back its answer.

The tray decides about and runs every command (issue 21): a server modified in any way cannot skip
a hold, because it no longer decides. This middleware sits after the argument gate: each
`tools/call` goes to the tray as one `call` message (with the client's name and version, which set
its patience), the tray's `call_progress` become the client's progress notifications, and its
`call_result` is the call's result. A cancellation by the client is sent on as `call_cancel`; the
calls the SDK cancels because serving ends (stdin ended, a stop signal) are not: the tray lets them
run on, as jobs (command_host.py), and a row never says the client cancelled what it did not.
`initialize` and `tools/list` stay here. A server that never met a tray (`--headless` with no
tray) runs its calls itself, as does one whose tray does not offer to run them.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import secrets
import sys
from collections.abc import Awaitable, Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp_types import CallToolResult

from app.server.argument_gate import error_result

if TYPE_CHECKING:  # loaded with the host side, after the handshake (lean start, see mcp_server)
    from app.core.commands.tray_link import TrayLink

log = logging.getLogger(__name__)

# English: the model reads them.
TRAY_GONE_DURING_CALL = (
    "the Cowork Terminal app went away during this call, and every command it ran was stopped with it. "
    "Ask the user to start Cowork Terminal, then run the command again (check first what it already changed)."
)
TRAY_REFUSED_CALL = "the Cowork Terminal app did not take this call ({reason}). Try again in a moment."
CALL_TOO_BIG = (
    "this call is {size:,} bytes, more than Cowork Terminal can pass on ({limit} MiB), so it was not run. Send less: "
    "put long text in a file with a command of its own first, and keep `env` values short."
)
# The link broke but the tray lives on (it closed a connection it could not serve): nothing was stopped.
LINK_LOST_DURING_CALL = (
    "the connection to the Cowork Terminal app was lost during this call, but the app still runs, so what "
    "this call started may still be running or may have finished: nothing was stopped. Do not run it again "
    "before you checked: in a moment, list your jobs with command_list and follow this one with command_wait."
)
TRAY_EXIT_LOOK_S = 0.5  # a tray that is quitting or was killed is seen gone within this (tray_link.exited)


class TrayForwarder(ServerMiddleware[Any]):
    """Sends each tool call to the tray while the link says the tray runs them (see the module)."""

    def __init__(
        self,
        link_of: Callable[[], TrayLink | None],
        client_of: Callable[[], tuple[Any, Any]],
        declared: Callable[[str], Awaitable[Collection[str] | None]],
        ending: Callable[[], bool] = lambda: False,
    ) -> None:
        self._link_of = link_of
        self._client_of = client_of
        self._declared = declared  # the tools this server lists (`serve --tools` narrows them)
        self._ending = ending  # serving ends: what is cancelled now, the client did not cancel

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        link = self._link_of() if ctx.method == "tools/call" else None
        params = ctx.params
        if link is None or not link.runs_commands or not isinstance(params, Mapping):
            return await call_next(ctx)
        tool, arguments = params.get("name"), params.get("arguments") or {}
        if not isinstance(tool, str) or not isinstance(arguments, Mapping):
            return await call_next(ctx)
        if not link.connected:  # bound, the tray gone: the local service refuses, in its words
            return await call_next(ctx)
        if await self._declared(tool) is None:  # a tool this server does not list: the SDK says so
            return await call_next(ctx)
        return await forward(ctx, link, tool, arguments, self._client_of(), self._ending)


def progress_token_of(params: Mapping[str, Any]) -> str | int | None:
    meta = params.get("_meta")
    token = meta.get("progressToken") if isinstance(meta, Mapping) else None
    return token if isinstance(token, (str, int)) and not isinstance(token, bool) else None


async def forward(
    ctx: ServerRequestContext[Any, Any],
    link: TrayLink,
    tool: str,
    arguments: Mapping[str, Any],
    client: tuple[Any, Any],
    ending: Callable[[], bool] = lambda: False,
) -> CallToolResult | dict[str, Any]:
    """One tool call, run by the tray: its result, or why there is none."""
    # Loaded already, with the host side (not before the handshake: 4 ms of a lean start).
    from app.core.channel.call_messages import Call, CallCancel, CallProgress, CallResult
    from app.core.channel.protocol import ErrorReply
    from app.core.commands.patience import PATIENCE_ENV
    from app.core.commands.tray_link import ACK_TIMEOUT_S, NO_ANSWER, REFUSED_BY_THE_APP, LinkRefused
    from app.core.hop_times import mark

    mark("serve: call in")
    token = progress_token_of(ctx.params or {})
    call_id = secrets.token_hex(12)
    name, version = (value if isinstance(value, str) else None for value in client)
    send, receive = anyio.create_memory_object_stream[CallProgress | CallResult | ErrorReply | None](math.inf)
    loop = asyncio.get_running_loop()

    def deliver(message: CallProgress | CallResult | ErrorReply | None) -> None:  # on the link's reader thread
        mark("serve: result read")
        loop.call_soon_threadsafe(send.send_nowait, message)

    link.calls[call_id] = deliver
    try:
        try:
            patience = os.environ.get(PATIENCE_ENV)
            call = Call(call_id, tool, dict(arguments), name, version, token is not None, patience)
            await link.request_async(call, late_to=call_id)
            mark("serve: call acked")
        except LinkRefused as refused:
            if str(refused) != NO_ANSWER:
                return refused_result(tool, call, str(refused))
            # Sent, or queued to be, but not acknowledged in time: the app stalled (suspended, swapping)
            # and reads the call when it goes on, so its result is waited for as any other's (a broken
            # link or the client's own cancellation still ends the wait), and so is its refusal, which
            # `deliver` gets then (a review: it was dropped, and the call waited for the client to
            # give up). Told "not taken", the model sent the call again, and the app ran both (red
            # team, eleventh; a `call_cancel` sent after it raced the command's start across the
            # app's threads).
            log.warning("the app did not acknowledge a call within %g s: waiting for its result", ACK_TIMEOUT_S)
        async for message in receive:
            if message is None:
                return error_result(tool, await why_link_lost(link.tray_pid, link.closing_reason))
            if isinstance(message, ErrorReply):  # the late refusal: in the words an early one gets
                log.info("the app refused a call it had not acknowledged in time: %s", message.message)
                return refused_result(tool, call, message.message or REFUSED_BY_THE_APP)
            if isinstance(message, CallResult):
                mark("serve: call out")
                # As the tray made it: the SDK checks every result against the protocol's schema
                # as it sends it, so a model of it here would check it twice (0.05 ms a call).
                return dict(message.result)
            if token is not None:
                try:
                    await ctx.session.send_progress_notification(
                        token,
                        message.progress,
                        message.total,
                        message.message,
                        related_request_id=None if ctx.request_id is None else str(ctx.request_id),
                    )
                except Exception:  # the client went away: the call's own result still counts
                    log.debug("progress notification failed", exc_info=True)
        return error_result(tool, await why_link_lost(link.tray_pid, link.closing_reason))
    except anyio.get_cancelled_exc_class():
        if not ending():  # the client's own cancellation (see the module)
            with anyio.CancelScope(shield=True):
                link.tell(CallCancel(call_id))
        raise
    finally:
        link.calls.pop(call_id, None)
        send.close()
        receive.close()


def refused_result(tool: str, call: Any, reason: str) -> CallToolResult:
    """What the model reads when the tray refused `call` (early or late): too big to pass on, or
    not taken, with the tray's reason."""
    from app.core.authority.oversized import frame_size
    from app.core.channel.wire import TO_TRAY_FRAME_BYTES

    size = frame_size(call)
    if size > TO_TRAY_FRAME_BYTES:  # no retry would pass (a red team: a 5 MB `env` value)
        return error_result(tool, CALL_TOO_BIG.format(size=size, limit=TO_TRAY_FRAME_BYTES >> 20))
    return error_result(tool, TRAY_REFUSED_CALL.format(reason=reason))


async def why_link_lost(pid: int | None, closing_reason: str | None, platform: str = sys.platform) -> str:
    """What the model reads when the link broke during a call: the tray (`pid`) is gone, quitting
    (`closing_reason`) or killed, and its commands with it; or only the connection was (a red team,
    2026-12-05: the model was told its commands had stopped while they ran on). Where /proc does not
    tell (not Linux), the tray is taken for gone."""
    from app.core.commands.tray_link import exited

    if pid is None or closing_reason is not None or platform != "linux":
        return TRAY_GONE_DURING_CALL
    with anyio.move_on_after(TRAY_EXIT_LOOK_S):
        while not exited(pid):
            await anyio.sleep(0.05)
        return TRAY_GONE_DURING_CALL
    return LINK_LOST_DURING_CALL
