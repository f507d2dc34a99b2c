"""`tray` (the default command), `log-window`, `welcome`, `check` and `autostart`: the desktop side of the app.

`tray` takes the tray lock before anything heavy: a second launch finds it held, asks the running
tray (over its channel) to open the log window and exits at once, without loading pystray.
GUI libraries are imported inside the handlers, so no other command pays for them.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import os
import sys
from collections.abc import Callable
from typing import Any

from app.core import app_log, data_folder, liveness
from app.core.channel.client import NoTray, TrayRefused, ask_tray
from app.core.errors import CoworkError
from app.core.i18n import _
from app.core.i18n.formats import format_number
from app.core.paths import AppPaths

QUIT_WAIT_S = 10.0  # a second launch waits this long for the running tray to answer


def register(subparsers: argparse._SubParsersAction) -> None:
    tray = subparsers.add_parser(
        "tray",
        help=_("start the tray app (the default when no command is given)"),
        description=_(
            "Show the Cowork Terminal icon: host access at a glance, pause, connect Claude. "
            "Only one runs per user; starting it again opens the activity log of the running one."
        ),
    )
    tray.add_argument("--quit", action="store_true", help=_("ask the running tray app to quit, and wait for it"))
    tray.add_argument("--verbose", action="store_true", help=_("also print the app log on stderr"))
    tray.set_defaults(handler=run_tray)

    window = subparsers.add_parser("log-window", help=_("open the live activity log window"))
    window.add_argument("window_args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    window.set_defaults(handler=run_log_window)

    welcome = subparsers.add_parser("welcome", help=_("open the Welcome window: connect Claude, step by step"))
    welcome.add_argument("window_args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    welcome.set_defaults(handler=run_welcome)

    check = subparsers.add_parser(
        "check",
        help=_("start the server exactly as Claude would and run `echo ok` through it"),
        description=_(
            "Read each Claude client's entry for this app, start that exact command as an MCP "
            "client, run `echo ok`, and say what works or precisely what fails."
        ),
    )
    check.add_argument("--client", action="append", metavar=_("ID"), help=_("check this client only (repeatable)"))
    check.add_argument("--json", action="store_true", help=_("print one JSON object per client"))
    check.set_defaults(handler=run_check)

    start = subparsers.add_parser("autostart", help=_("start the tray app at login: on, off or status"))
    start.add_argument("setting", choices=("on", "off", "status"))
    start.set_defaults(handler=run_autostart)


TRAY_LOCK_PATIENCE_S = 0.3


def run_tray(args: argparse.Namespace) -> int:
    if args.quit:
        return quit_running_tray(data_folder.ensure(AppPaths.from_environment()))
    try:
        return start_tray(args)
    except CoworkError as problem:  # a full disk, a read-only folder: also said where a person sees it
        from app.ui.windows import problem_window

        if problem_window.shows_a_window(sys.platform, os.environ, problem_window.stderr_is_terminal()):
            problem_window.show_problem(problem.for_person())
        raise


def start_tray(args: argparse.Namespace) -> int:
    paths = data_folder.ensure(AppPaths.from_environment())
    # Patient: a server may be probing the lock ("is the tray there?") at this very moment.
    lock = liveness.try_hold(paths.tray_lock, patience_s=TRAY_LOCK_PATIENCE_S)
    if lock is None:
        try:
            ask_tray(paths, "open_log", wait_s=QUIT_WAIT_S)
        except (NoTray, TrayRefused) as exc:
            raise CoworkError(
                _("Cowork Terminal seems to be running but does not answer ({error})").format(error=exc)
            ) from None
        print(_("Cowork Terminal is already running: asked it to open the activity log."), file=sys.stderr)
        return 0
    try:
        app_log.configure(paths, "tray", echo_to_stderr=args.verbose)
        from app.ui.tray.app import run_tray as run_tray_app  # pystray and PIL: only for the tray itself

        return run_tray_app(paths, lock, open_runner=tray_runner_opener(paths), warm_runner=tray_runner_warmer(paths))
    except CoworkError:  # a full disk, a read-only folder: the CLI says it in words, no traceback
        raise
    except Exception:  # the top of the tray process: a windowed app has no stderr, so log it
        logging.getLogger(__name__).exception("the tray app failed")
        raise
    finally:
        lock.release()


def tray_runner_opener(paths: AppPaths) -> Any:
    """How the tray opens the runner of a server that hands it its calls: the MCP layer's, loaded at
    the first forwarded call (the tray itself starts without the MCP SDK)."""

    async def open_runner(call: Any, group: Any) -> Any:
        import anyio.to_thread  # loaded with the command host already

        # Loaded beside the host's loop (most of a second, if the warm-up has not done it yet): the
        # loop must stay free to take other servers' calls, which the hub waits for.
        tray_side = await anyio.to_thread.run_sync(importlib.import_module, "app.server.tray_side")
        return await tray_side.open_runner(paths, call, group)

    return open_runner


def tray_runner_warmer(paths: AppPaths) -> Callable[[], None]:
    """How the tray loads what its runners need (most of a second), once a server binds: before
    that server's first call needs it."""

    def warm() -> None:
        from app.core import heap
        from app.server.tray_side import warm as warm_in_tray

        warm_in_tray(paths)
        heap.settle()  # what the tray keeps for its life is loaded now: out of the collector's walks

    return warm


def quit_running_tray(paths: AppPaths) -> int:
    """Ask the running tray to quit and wait until its lock is free (for installers and scripts)."""
    from app.core.install.app_processes import TRAY_QUIT_WAIT_S, stop_tray, tray_running

    if not tray_running(paths):
        print(_("Cowork Terminal is not running."), file=sys.stderr)
        return 0
    if not stop_tray(paths):
        raise CoworkError(
            _("Cowork Terminal did not quit within {seconds} s; end it from its menu or task manager").format(
                seconds=format_number(TRAY_QUIT_WAIT_S, None)
            )
        )
    print(_("Cowork Terminal has quit."), file=sys.stderr)
    return 0


def run_log_window(args: argparse.Namespace) -> int:
    from app.ui.windows.log_window import main  # Tk: only in the window's own process

    return main(args.window_args)


def run_welcome(args: argparse.Namespace) -> int:
    from app.ui.windows.welcome import main  # Tk: only in the window's own process

    return main(args.window_args)


def run_check(args: argparse.Namespace) -> int:
    from app.core.claude import config as cc
    from app.core.claude import locations as cl
    from app.server.connection_check import check_client  # the MCP SDK: only for this command

    platform, locations = cl.clients_here()
    chosen = cl.select_clients(locations, args.client, platform)
    wanted = cc.this_app_entry()
    failed = False
    for location in chosen:
        result = check_client(location, wanted)
        failed |= not result.ok
        if args.json:
            print(json.dumps(result.to_json()))
        else:
            print(f"{location.client_id}: {_('ok') if result.ok else result.kind}: {result.message}")
    return 1 if failed else 0


def run_autostart(args: argparse.Namespace) -> int:
    from app.core.install import autostart

    if args.setting == "on":
        autostart.enable()
    elif args.setting == "off":
        autostart.disable()
    enabled = autostart.is_enabled()
    added = autostart.read_added(autostart.current_launch_command()) if enabled else []
    if added:  # issue 21: an `env` prefix or extra arguments change what starts at login
        text = _(
            "Start at login: on, with settings Cowork Terminal did not write ({added}); "
            "`cowork-terminal autostart on` removes them ({location})"
        )
        print(text.format(added=", ".join(added), location=autostart.autostart_location()))
        return 1
    text = _("Start at login: on ({location})") if enabled else _("Start at login: off ({location})")
    print(text.format(location=autostart.autostart_location()))
    return 0
