"""`cowork-terminal serve`: the stdio MCP server that Claude starts from its config."""

from __future__ import annotations

import argparse

from app.core.control.client import current_tray_state
from app.core.journal import Journal
from app.core.paths import AppPaths
from app.core.tool_sets import TOOL_SETS, tool_set


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="run the MCP server over stdio (Claude starts this; you don't need to)",
        description="Speak MCP over stdin/stdout. Claude Desktop, Cowork and Claude Code start this "
        "from their config. Commands are refused while the tray app is not running, unless --headless.",
    )
    parser.add_argument(
        "--headless",
        action="store_true",
        help="run without the tray app (for people who use only the CLI); pause still applies",
    )
    parser.add_argument(
        "--tools",
        choices=TOOL_SETS,
        help="which tools to offer: all, or execute_command alone (default: the `tools` setting)",
    )
    parser.set_defaults(handler=run_serve)

    tools = subparsers.add_parser(
        "tools",
        help="show or set which tools servers offer to Claude (applies when Claude next starts them)",
    )
    tools.add_argument("tool_set", nargs="?", choices=TOOL_SETS)
    tools.set_defaults(handler=run_tools)


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
        "all": "all tools: execute_command, the persistent shell session, confirm and cancel of held commands",
        "execute": "execute_command alone (with confirm and cancel of held commands)",
    }
    print(f"Servers offer {described[current]}. Claude picks this up when it next starts the server.")
    return 0


def run_serve(args: argparse.Namespace) -> int:
    # Imported here: only `serve` pays for the MCP SDK, and it never loads a GUI library.
    from app.server.mcp_server import serve

    return serve(headless=args.headless, tools=args.tools)
