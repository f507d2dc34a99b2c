"""Progress notifications while a command runs, for calls whose client asked for them.

Claude Code shows `notifications/progress` messages and resets its idle timer on them; a call
without a progress token gets none and costs nothing. The message is the command's newest output
line, sent at most twice a second and only when it changed (or every few seconds, so a quiet
command still shows it is alive); the progress value is the seconds elapsed, which only grows.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
from mcp.server.mcpserver import Context

from app.core.execution.output import CommandOutput, OutputHook

log = logging.getLogger(__name__)

PROGRESS_INTERVAL_S = 0.5  # at most two progress notifications a second
PROGRESS_HEARTBEAT_S = 5.0  # one even when the newest line has not changed: clients reset their idle timer
HELD_MESSAGE = "waiting for the user's approval in Cowork Terminal"
SILENT_MESSAGE = "running; no output yet"

T = TypeVar("T")


def progress_token(ctx: Context) -> object | None:
    """The call's progress token (`_meta.progressToken`, which the SDK hands on as `progress_token`)."""
    return (ctx.request_context.meta or {}).get("progress_token")


async def with_progress(ctx: Context, work: Callable[[OutputHook | None], Awaitable[T]]) -> T:
    """Run `work`; when the call carries a progress token, report the command's newest output
    line while it runs (a client without a token gets nothing, and costs nothing)."""
    if progress_token(ctx) is None:
        return await work(None)
    outputs: list[CommandOutput] = []
    started = anyio.current_time()

    async def report() -> None:
        sent_line, sent_at = None, started
        try:
            while True:
                await anyio.sleep(PROGRESS_INTERVAL_S)
                now = anyio.current_time()
                # No output object yet: nothing runs, the command is held for the user's answer.
                line = (outputs[-1].latest_line() or SILENT_MESSAGE) if outputs else HELD_MESSAGE
                if line == sent_line and now - sent_at < PROGRESS_HEARTBEAT_S:
                    continue
                await ctx.report_progress(round(now - started, 2), None, line)
                sent_line, sent_at = line, now
        except Exception:  # the client went away: the command's own result still counts
            log.debug("progress notifications stopped", exc_info=True)

    failure: Exception | None = None
    async with anyio.create_task_group() as reporter:
        reporter.start_soon(report)
        try:
            result = await work(outputs.append)
        except Exception as exc:  # raised outside the group, so the SDK sees it, not an ExceptionGroup
            failure = exc
        finally:
            reporter.cancel_scope.cancel()
    if failure is not None:
        raise failure
    return result
