"""`cowork-terminal serve`: the stdio MCP server that Claude starts from its config.

Only this module's parser is built when serving (main.SERVE_MODULES), so it loads nothing else:
`serve` answers `initialize` before it loads its host side (see app/server/mcp_server.py).
"""

from __future__ import annotations

import argparse

from app.core.i18n import _
from app.core.policy.tool_sets import TOOL_SETS


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve",
        help=_("run the MCP server over stdio (Claude starts this; you don't need to)"),
        description=_(
            "Speak MCP over stdin/stdout. Claude Desktop, Cowork and Claude Code start this from their "
            "config. Commands are refused while the tray app is not running, unless --headless."
        ),
    )
    parser.add_argument(
        "--headless",
        action="store_true",
        help=_("run without the tray app (for people who use only the CLI); pause still applies"),
    )
    parser.add_argument(
        "--tools",
        choices=TOOL_SETS,
        help=_("which tools to offer: all, or execute_command alone (default: the `tools` setting)"),
    )
    parser.set_defaults(handler=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    # Imported here: only `serve` pays for the MCP SDK, and it never loads a GUI library.
    from app.server.mcp_server import serve

    return serve(headless=args.headless, tools=args.tools)
