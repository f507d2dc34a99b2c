"""`cowork-terminal tools` and `output-budget`: what servers offer Claude."""

from __future__ import annotations

import argparse

from app.core.channel.client import current_tray_state, request_change
from app.core.errors import UsageError
from app.core.execution.output import (
    BUDGET_ENV,
    DEFAULT_BUDGET_CHARS,
    SEED_BUDGET,
    output_budget,
    parse_budget,
    set_output_budget,
)
from app.core.i18n import _
from app.core.i18n.formats import format_number
from app.core.journal.store import Journal
from app.core.paths import AppPaths
from app.core.policy.tool_sets import TOOL_SETS, tool_set


def register(subparsers: argparse._SubParsersAction) -> None:
    tools = subparsers.add_parser(
        "tools",
        help=_("show or set which tools servers offer to Claude (applies when Claude next starts them)"),
    )
    tools.add_argument("tool_set", nargs="?", choices=TOOL_SETS)
    tools.set_defaults(handler=run_tools)

    budget = subparsers.add_parser(
        "output-budget",
        help=_("show or set how much of a command's output Claude gets back (the rest stays in a file)"),
        description=_(
            "How many characters of output a call returns to Claude, stdout and stderr together "
            "(default {default}); `{seed}` returns up to 1 MB per stream, like the "
            "cowork-terminal-mcp package. {variable} in a server's environment overrides this."
        ).format(default=format_number(DEFAULT_BUDGET_CHARS), seed=SEED_BUDGET, variable=BUDGET_ENV),
    )
    budget.add_argument("budget", nargs="?", metavar=_("CHARACTERS") + f"|{SEED_BUDGET}")
    budget.set_defaults(handler=run_output_budget)


def run_tools(args: argparse.Namespace) -> int:
    paths = AppPaths.from_environment()
    if args.tool_set:
        from app.cli.approval_commands import change_settings

        print(change_settings(paths, {"tools": args.tool_set}))
    state = current_tray_state(paths)
    if state is not None:
        current = str(state["tools"])
    else:
        with Journal.open(paths) as journal:
            current = tool_set(journal)
    described = {
        "all": _(
            "Servers offer all tools: execute_command, the persistent shell session, confirm and cancel of "
            "held commands. Claude picks this up when it next starts the server."
        ),
        "execute": _(
            "Servers offer execute_command alone (with confirm and cancel of held commands). Claude picks "
            "this up when it next starts the server."
        ),
    }
    print(described[current])
    return 0


def run_output_budget(args: argparse.Namespace) -> int:
    """Not a control (it changes how much output the model reads, not what may run), so anyone may
    set it; while the tray runs it writes the value, as it writes everything in the journal."""
    paths = AppPaths.from_environment()
    if args.budget is not None:
        try:
            budget = parse_budget(args.budget)
        except ValueError as exc:
            raise UsageError(str(exc)) from None

        def set_without_tray(journal: Journal) -> str:
            set_output_budget(journal, budget)
            return ""

        request_change(paths, "output_budget", without_tray=set_without_tray, budget=args.budget)
    with Journal.open(paths) as journal:
        current = output_budget(journal, environ={})
    print(
        _(
            "Claude gets back {budget} of each command's output; when more was printed, the whole "
            "output is kept in a file it is told about. Servers use this from their next command."
        ).format(budget=current.label)
    )
    return 0
