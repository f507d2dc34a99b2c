"""The tools the model calls, their descriptions and their results: registered once this
server's CommandService exists (after the handshake, see `mcp_server.serve`).

The descriptions and results are the model's text: English, exact, saying what to do next.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from app.core.commands.request import DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS
from app.core.commands.service import CommandService
from app.core.errors import CoworkError
from app.core.execution.output import Kept, OutputBudget, clip
from app.core.execution.output_decoding import json_length
from app.core.execution.run_result import ExecutionResult
from app.core.policy.tool_sets import EXECUTE_ONLY
from app.server.job_tools import (
    Text,
    TimeoutArgument,
    WholeNumber,
    register_job_tools,
)
from app.server.progress import with_progress

if TYPE_CHECKING:  # a type only: the session's module loads with its first command
    from app.core.commands.session_shell import SessionOutcome

log = logging.getLogger(__name__)

OUTPUT_FILE_SENTENCE = (
    "When anything is left out, `outputFile` names a file with the whole output: read it with "
    "`tail`, `grep` or `sed -n`."
)


CONTROLS_SENTENCE = (
    "Control characters other than tabs and line ends are shown as their Unicode control pictures "
    "(ESC as \u241b, NUL as \u2400)."
)


def budget_sentence(budget: OutputBudget) -> str:
    """What the model reads about the output budget (the setting in force when the server starts), and
    how control characters are shown (output_decoding.visible_controls)."""
    if budget.chars is None:
        return f"Each of stdout and stderr is capped at 1 MB (the start and the end are kept). {CONTROLS_SENTENCE}"
    return (
        f"Output is cut to {budget.chars:,} characters in all (stdout and stderr share them), "
        f"keeping the start and the end. {CONTROLS_SENTENCE}"
    )


# The seed's budget is 1 MB a stream; the session's text is in a result twice (its text and its
# structured copy), so under it the scrollback gets this much: the answer then fits one message.
SCROLLBACK_SEED_CHARS = 100_000
SCROLLBACK_WHERE = "call terminal_read_scrollback with fewer lines to read the latest ones whole"


def fitted_scrollback(text: str, budget: OutputBudget) -> str:
    """The session's last lines within the output budget, as a command's output is fitted: its start
    and end, and a marker naming the lines left out between them."""
    room = budget.chars or SCROLLBACK_SEED_CHARS
    if json_length(text) <= room:
        return text
    kept = Kept("scrollback", text, text, True, len(text.encode("utf-8", "surrogatepass")), text.count("\n") + 1)
    return clip(kept, room, SCROLLBACK_WHERE)


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
- `timeout` is in milliseconds (default {default_timeout}, at most {max_timeout}).
- Long commands are fine: when one is still running as this call's time runs out, the call returns
  `status: "running"` with a `jobId` and the output so far; the command goes on. Follow it with
  command_wait (its result), command_output (more output) or command_stop. `background: true`
  returns at once. A command held for the user's approval returns `status: "waiting"` the same way.
- A process started with `&` (a dev server) outlives the call, but what it prints later is lost:
  send its output to a file (`npm run dev > dev.log 2>&1 &`) and read it.
- To look around (ls, cat, grep, find, git status/log/diff), use execute_read_only_command instead.
- {budget}
- {output_file}"""


OUTPUT_FILE_DESC = "absolute path of a file holding the whole output, when some of it was left out here"


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
    if outcome.note:
        notes.append(outcome.note)
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
    return CommandResult(**result.to_model(), note=result.model_note())


def reply(result: BaseModel, *, wrapped: bool = False) -> CallToolResult:
    """The result as structured content and, for clients that read only text, the same as compact
    JSON: the SDK's own text copy is indented JSON, which nearly doubles a long output's size.
    `wrapped`: the tool returns one of several models, which the SDK's schema puts under "result"."""
    structured = result.model_dump(mode="json")
    return CallToolResult(
        content=[TextContent(type="text", text=result.model_dump_json())],
        structured_content={"result": structured} if wrapped else structured,
    )


def register_tools(
    server: MCPServer[Any], current_service: Callable[[], CommandService | None], tools: str, budget: OutputBudget
) -> None:
    """The tools of the set `tools` on `server`, run by the current service. `budget` is the output
    budget their descriptions state (each call reads the setting anew). There is no service while the
    data folder cannot hold a journal: the argument gate then answers every call with the reason."""

    def service_of() -> CommandService:
        service = current_service()
        assert service is not None, "the argument gate refuses every call when there is no service"
        return service

    # Honest hints: these run arbitrary commands on the host, so not read-only, destructive, open-world.
    host_tool = ToolAnnotations(
        read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=True
    )
    # The others only act on what this server holds (a held command, the session's Ctrl-C and output).
    local_tool = ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )

    register_job_tools(
        server,
        service_of,
        reply,
        refusals_as_errors,
        describe(EXECUTE_DESCRIPTION, budget),
        host_tool,
    )

    if tools == EXECUTE_ONLY:
        return

    @server.tool(
        description="Run a terminal_run command that is held for the user's approval, once they allow it. Waits "
        "a while (the user's approval window) for their answer. Only the user can approve, in Cowork Terminal; "
        "this tool cannot. (A held execute_command is a job: follow it with command_wait.)",
        annotations=host_tool.model_copy(update={"title": "Run a held command once approved"}),
    )
    async def terminal_confirm(
        confirmation_id: Annotated[Text, Field(description="The id from the held command's message.")], ctx: Context
    ) -> Annotated[CallToolResult, CommandResult | SessionCommandResult]:
        service = service_of()
        with refusals_as_errors():
            outcome = await with_progress(ctx, lambda hook: service.confirm(confirmation_id, on_output=hook))
        result = command_result(outcome) if isinstance(outcome, ExecutionResult) else session_result(outcome)
        return reply(result, wrapped=True)

    @server.tool(
        description="Withdraw a terminal_run command held for the user's approval; it will not run. "
        "(Withdraw a held execute_command with command_stop.)",
        annotations=local_tool.model_copy(update={"title": "Withdraw a held command"}),
    )
    async def terminal_cancel(confirmation_id: Text) -> str:
        with refusals_as_errors():
            return service_of().cancel(confirmation_id)

    @server.tool(
        description=describe(SESSION_RUN_DESCRIPTION, budget),
        annotations=host_tool.model_copy(update={"title": "Run a command in the shell session"}),
    )
    async def terminal_run(
        command: Annotated[Text, Field(description="The bash command to run in the session.")],
        ctx: Context,
        timeout: TimeoutArgument = None,
    ) -> Annotated[CallToolResult, SessionCommandResult]:
        service = service_of()
        with refusals_as_errors():
            outcome = await with_progress(ctx, lambda hook: service.session_run(command, timeout, on_output=hook))
        return reply(session_result(outcome))

    @server.tool(
        description="Type text into the program running in the shell session (for a prompt waiting for input). "
        "The text is sent as given: end it with a newline to press Enter. There is no TTY, so control keys "
        "do nothing: use terminal_interrupt for Ctrl-C. Returns what the program printed in the next moment.",
        annotations=host_tool.model_copy(update={"title": "Type into the session"}),
    )
    async def terminal_send_keys(keys: Annotated[Text, Field(description='Text to type, e.g. "yes\\n".')]) -> str:
        with refusals_as_errors():
            return await service_of().session_send_keys(keys)

    @server.tool(
        description="Send Ctrl-C (SIGINT) to the program running in the shell session; the session stays. "
        "As in a script, the rest of a command list (`a; b`) then runs on.",
        annotations=local_tool.model_copy(update={"title": "Interrupt the session's command"}),
    )
    async def terminal_interrupt() -> str:
        idle = await service_of().session_interrupt()
        if idle is None:
            return "No shell session is running."
        if idle:
            return "Sent Ctrl-C to the session; nothing is running in it now."
        return (
            "Sent Ctrl-C to the session, but its command is still running (it may ignore Ctrl-C). "
            "Read its output with terminal_read_scrollback."
        )

    @server.tool(
        description="Read the last lines the shell session printed (default 60, at most 500).",
        annotations=local_tool.model_copy(update={"title": "Read the session's recent output", "read_only_hint": True}),
    )
    async def terminal_read_scrollback(lines: WholeNumber = 60) -> str:
        with refusals_as_errors():
            service = service_of()
            return fitted_scrollback(service.session_scrollback(lines), service.runs.output_budget())
