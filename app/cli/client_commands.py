"""`clients`, `connect`, `disconnect` and `restart-claude`: this app's entry in each Claude client."""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
import subprocess
import sys
import time
from collections.abc import Callable

from app.core import liveness
from app.core.claude import config as cc
from app.core.claude import locations as cl
from app.core.errors import CoworkError
from app.core.i18n import N_, _
from app.core.i18n.formats import format_number
from app.core.paths import AppPaths

RESTART_WAIT_S = 15.0  # how long Claude gets to quit before we give up
RESTART_POLL_S = 0.25
RESTART_REMINDER = N_("Claude Desktop reads its config only when it starts: quit it completely and open it again.")
RESTART_REMINDER_WITH_COMMAND = N_(
    "Claude Desktop reads its config only when it starts: quit it completely and open it again "
    "(or run `cowork-terminal restart-claude`)."
)


def restart_reminder(platform: str, client_ids: list[str]) -> str:
    """The reminder, naming `restart-claude` only where it works (macOS, Windows; not Linux)."""
    if any(cl.can_restart(platform, client_id) for client_id in client_ids):
        return _(RESTART_REMINDER_WITH_COMMAND)
    return _(RESTART_REMINDER)


NEEDS_TRAY_HINT = N_(
    "Commands run only while the Cowork Terminal app is running (start it with `cowork-terminal`), so "
    "that you can see and stop them. To use it from the command line alone, connect with --headless."
)
STATE_TEXT = {
    cc.ABSENT: N_("not connected"),
    cc.CURRENT: N_("connected"),
    cc.CHANGED: N_("connected, other options"),
    cc.ALTERED: N_("not connected (settings added)"),
    cc.STALE: N_("stale (older install)"),
    cc.FOREIGN: N_("foreign (another program)"),
    cc.INVALID: N_("config unreadable"),
    cc.UNKNOWN: "-",
}
REPLACED_TEXT = {
    cc.STALE: N_("replaced the stale entry {entry}"),
    cc.FOREIGN: N_("replaced the foreign entry {entry}"),
    cc.CHANGED: N_("replaced the changed entry {entry}"),
    cc.ALTERED: N_("replaced the entry with added settings {entry}"),
}


def register(subparsers: argparse._SubParsersAction) -> None:
    clients = subparsers.add_parser("clients", help=_("list the Claude apps on this computer and our entry in each"))
    clients.add_argument("--json", action="store_true", help=_("print JSON instead of a table"))
    clients.set_defaults(handler=run_clients)

    def add_client_option(parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--client", action="append", choices=cl.CLIENT_IDS, metavar=_("ID"),
            help=_("act on this client only (repeatable): {clients}; default: every installed one").format(
                clients=", ".join(cl.CLIENT_IDS)
            ),
        )  # fmt: skip
        parser.add_argument("--dry-run", action="store_true", help=_("show what would change; change nothing"))

    connect = subparsers.add_parser("connect", help=_("add this app to Claude's MCP servers"))
    add_client_option(connect)
    connect.add_argument(
        "--replace", action="store_true", help=_("replace a cowork-terminal entry that runs another program")
    )
    connect.add_argument("--headless", action="store_true", help=_("the server runs without the tray (CLI-only use)"))
    connect.set_defaults(handler=run_connect)

    disconnect = subparsers.add_parser("disconnect", help=_("remove this app from Claude's MCP servers"))
    add_client_option(disconnect)
    disconnect.set_defaults(handler=run_disconnect)

    restart = subparsers.add_parser("restart-claude", help=_("quit Claude Desktop and start it again"))
    restart.add_argument(
        "--client", choices=(cl.CLAUDE_DESKTOP, cl.CLAUDE_DESKTOP_STORE), default=None, metavar=_("ID"),
        help=_("which Claude Desktop (Windows); default: the installed one"),
    )  # fmt: skip
    restart.set_defaults(handler=run_restart)


def _wanted_entry(args: argparse.Namespace) -> dict:
    return cc.this_app_entry(["--headless"] if getattr(args, "headless", False) else [])


def run_clients(args: argparse.Namespace) -> int:
    platform, locations = cl.clients_here()
    reminder = restart_reminder(platform, [loc.client_id for loc in locations if loc.installed])
    wanted = _wanted_entry(args)
    statuses = [cc.client_status(loc, wanted) for loc in locations]
    if args.json:
        report = {"entry": wanted, "clients": [dataclasses.asdict(s) for s in statuses], "note": reminder}
        print(json.dumps(report, indent=2))
        return 0
    rows = [(_("CLIENT"), _("INSTALLED"), _("OUR ENTRY"), _("CONFIG"))]
    for s in statuses:
        where = s.config_path or s.cli_path or s.evidence
        rows.append((s.client_id, _("yes") if s.installed else _("no"), _(STATE_TEXT[s.state]), where))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row[:3], widths, strict=True)) + "  " + row[3])
    for s in statuses:
        for text in (s.note, s.problem):
            if text:
                print(f"\n{s.client_id}: {text}")
    if not any(s.installed for s in statuses):
        print()
        print(_("No Claude app found. `cowork-terminal connect --client claude-desktop` writes the default file."))
    print(f"\n{reminder}")
    return 0


def _describe(location: cl.ClientLocation, change: cc.ConfigChange, connecting: bool) -> list[str]:
    """The lines one client's change prints."""
    head = f"{location.client_id}: "
    if change.action == "dry run":
        if change.preview is not None:
            return [head + _("would write {target}:").format(target=change.target), change.preview.rstrip("\n")]
        return [head + _("would run:")] + [f"  {shlex.join(argv)}" for argv in change.commands]
    if change.action == "unchanged":
        return [head + _("already connected, nothing changed ({target})").format(target=change.target)]
    if change.action == "nothing to remove":
        return [head + _("not connected, nothing to remove ({target})").format(target=change.target)]
    done = _("connected ({target})") if connecting else _("disconnected ({target})")
    lines = [head + done.format(target=change.target)]
    if change.previous in (cc.STALE, cc.FOREIGN, cc.CHANGED, cc.ALTERED) and connecting:
        lines.append("  " + _(REPLACED_TEXT[change.previous]).format(entry=json.dumps(change.previous_entry)))
    if change.backup:
        lines.append("  " + _("previous file kept as {path}").format(path=change.backup))
    return lines


def _apply(
    args: argparse.Namespace, connecting: bool, act: Callable[[cl.ClientLocation, dict], cc.ConfigChange]
) -> int:
    """Run `act` on each chosen client; one client's failure does not stop the others."""
    platform, locations = cl.clients_here()
    chosen = cl.select_clients(locations, args.client, platform)
    wanted = _wanted_entry(args)
    exit_code, written = 0, []
    for location in chosen:
        try:
            change = act(location, wanted)
        except CoworkError as exc:
            print(f"cowork-terminal: {location.client_id}: {exc.for_person()}", file=sys.stderr)
            exit_code = max(exit_code, exc.exit_code)
            continue
        print("\n".join(_describe(location, change, connecting)))
        if cc.needs_restart(location, change):
            written.append(location.client_id)
    if written:
        print(restart_reminder(platform, written))
    return exit_code


def run_connect(args: argparse.Namespace) -> int:
    code = _apply(
        args, True,
        lambda loc, entry: cc.connect_client(loc, entry, replace=args.replace, dry_run=args.dry_run),
    )  # fmt: skip
    tray_missing = not liveness.is_held(AppPaths.from_environment().tray_lock)
    if code == 0 and not args.dry_run and not args.headless and tray_missing:
        print(_(NEEDS_TRAY_HINT))  # connected from a terminal, with no tray to be the user's presence
    return code


def run_disconnect(args: argparse.Namespace) -> int:
    return _apply(args, False, lambda loc, entry: cc.disconnect_client(loc, entry, dry_run=args.dry_run))


def restart_claude(
    quit_argv: list[str], running_argv: list[str], start_argv: list[str], wait_s: float = RESTART_WAIT_S
) -> None:
    """Quit Claude, wait (bounded) until it is gone, start it again. Runs only when the user asks."""
    quiet: dict = {
        "stdin": subprocess.DEVNULL,
        "stdout": subprocess.DEVNULL,
        "stderr": subprocess.DEVNULL,
        "creationflags": getattr(subprocess, "CREATE_NO_WINDOW", 0),
    }  # no console flash on Windows
    try:
        subprocess.run(quit_argv, check=False, timeout=wait_s, **quiet)  # fails if Claude is not running: fine
        deadline = time.monotonic() + wait_s
        while subprocess.run(running_argv, check=False, timeout=wait_s, **quiet).returncode == 0:
            if time.monotonic() > deadline:
                raise CoworkError(
                    _("Claude did not quit within {seconds} s; quit it by hand and open it again").format(
                        seconds=format_number(wait_s, None)
                    )
                )
            time.sleep(RESTART_POLL_S)
        subprocess.Popen(start_argv, start_new_session=True, **quiet)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CoworkError(_("could not restart Claude: {error}").format(error=exc)) from exc


def run_restart(args: argparse.Namespace) -> int:
    platform, environ, home = cl.this_machine()
    client_id = args.client
    if client_id is None:
        locations = cl.locate_clients(platform, environ, home, cl.real_exists)
        installed = [loc for loc in locations if loc.installed and loc.config_path is not None]
        client_id = installed[0].client_id if installed else cl.CLAUDE_DESKTOP
    restart_claude(*cl.restart_argvs(platform, client_id, environ, home))
    print(f"{client_id}: " + _("restarted"))
    return 0
