"""`cowork-terminal serve`: the stdio MCP server that Claude starts from its config."""

from __future__ import annotations

import argparse


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
        choices=("all", "execute"),
        help="which tools to offer: all (default; the setting `tools` in the journal) or execute_command alone",
    )
    parser.set_defaults(handler=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    # Imported here: only `serve` pays for the MCP SDK, and it never loads a GUI library.
    from app.server.mcp_server import serve

    return serve(headless=args.headless, tools=args.tools)
