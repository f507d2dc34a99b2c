"""The `cowork-terminal` command: parses arguments and hands each subcommand to its module.

Each module in COMMAND_MODULES registers its own subcommands. Modules import heavy parts (the MCP
SDK, pystray, Tk) inside the function that needs them, so `serve` never loads a GUI library.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from app import __version__
from app.core import i18n
from app.core.errors import CoworkError
from app.core.i18n import N_, _
from app.core.i18n.language import ENGLISH

COMMAND_MODULES = (
    "app.cli.server_commands",
    "app.cli.offer_commands",
    "app.cli.journal_commands",
    "app.cli.client_commands",
    "app.cli.approval_commands",
    "app.cli.desktop_commands",
    "app.cli.install_commands",
)
DEFAULT_COMMAND = "tray"
READER_GONE_EXIT = 128 + 13  # what a program ended by SIGPIPE reports, as `git log | head` does
# argparse's own words that a user meets in --help and usage errors. argparse looks them up
# through app.core.i18n (see _translate_argparse); marked here so that the catalogs carry them.
ARGPARSE_TEXTS = (
    N_("usage: "),
    N_("positional arguments"),
    N_("options"),
    N_("show this help message and exit"),
    N_("show program's version number and exit"),
    N_("%(prog)s: error: %(message)s\n"),
    N_("argument %(argument_name)s: %(message)s"),
    N_("invalid choice: %(value)r (choose from %(choices)s)"),
    N_("invalid %(type)s value: %(value)r"),
    N_("the following arguments are required: %s"),
    N_("unrecognized arguments: %s"),
    N_("expected one argument"),
    N_("ambiguous option: %(option)s could match %(matches)s"),
)


SERVE_MODULES = ("app.cli.server_commands",)


def build_parser(modules: Sequence[str] = COMMAND_MODULES) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cowork-terminal",
        description=_(
            "Let an AI agent run commands on this computer while you stay in charge. "
            "With no command, starts the tray app."
        ),
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar=_("COMMAND"))
    for module_name in modules:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    # `serve` starts every time Claude connects, and the handshake waits for it: it loads only its
    # own command module, not the other groups' (their help is not needed to serve).
    serving = args_list[:1] == ["serve"] and not {"-h", "--help"} & set(args_list)
    if serving:  # all `serve` says goes to Claude (the model, its log): English, and no language lookup
        i18n.use_language(ENGLISH)
    parser = build_parser(SERVE_MODULES if serving else COMMAND_MODULES)
    # A window's own options (`log-window --tray-line`, `welcome --no-menu`) pass through to it:
    # argparse's REMAINDER does not take a first argument that starts with "-".
    args, extra = parser.parse_known_args(args_list or [DEFAULT_COMMAND])
    if extra and isinstance(getattr(args, "window_args", None), list):
        args.window_args = [*extra, *args.window_args]
    elif extra:
        parser.error(_("unrecognized arguments: %s") % " ".join(extra))
    if not getattr(args, "handler", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        code = int(args.handler(args) or 0)
        sys.stdout.flush()  # a reader that stopped reading shows here, not in Python's flush at exit
        return code
    except BrokenPipeError:
        return _reader_went_away()
    except CoworkError as exc:
        print(f"cowork-terminal: {exc.for_person()}", file=sys.stderr)
        return exc.exit_code
    except Exception as exc:
        import sqlite3  # not before `serve`'s handshake

        if not isinstance(exc, sqlite3.Error):
            raise
        # Damage SQLite found only while reading (the journal is checked at open).
        problem = _("the activity log could not be read or written ({error}).").format(error=exc)
        print(f"cowork-terminal: {problem}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def _reader_went_away() -> int:
    """`cowork-terminal status | head`: the reader took what it wanted and closed the pipe. Nobody
    is owed a message; stdout goes to devnull so that Python's own flush at exit is quiet too."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return READER_GONE_EXIT
