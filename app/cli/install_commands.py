"""`uninstall` and `install-desktop-entry`: this copy of the app coming into, and leaving, the user's session."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from app.core.errors import UsageError
from app.core.i18n import _
from app.core.paths import AppPaths


def register(subparsers: argparse._SubParsersAction) -> None:
    uninstall = subparsers.add_parser(
        "uninstall",
        help=_("remove this app from Claude, start at login and the menu, and stop it"),
        description=_(
            "Remove Cowork Terminal's entry from every Claude config and Claude Code (keeping "
            "everything else, with a backup), turn Start at login off, remove the menu entry, quit the tray and "
            "stop this install's servers. Your command history and logs stay unless you add --data. The last "
            "line says how to remove the program itself."
        ),
    )
    uninstall.add_argument("--dry-run", action="store_true", help=_("list what would be done; do nothing"))
    uninstall.add_argument("--yes", action="store_true", help=_("do not ask before acting"))
    uninstall.add_argument("--data", action="store_true", help=_("also delete the command history and logs"))
    uninstall.set_defaults(handler=run_uninstall)

    window = subparsers.add_parser("uninstall-window", help=_("the tray's Uninstall window: asks, then uninstalls"))
    window.set_defaults(handler=run_uninstall_window)

    entry = subparsers.add_parser(
        "install-desktop-entry",
        help=_("add this copy (an unpacked .tar.gz) to your application menu, with its icon"),
        description=_(
            "Write a menu entry and the icon for this copy of the app into your own data folder "
            "(~/.local/share). `cowork-terminal uninstall` removes them again."
        ),
    )
    entry.set_defaults(handler=run_install_desktop_entry)


def run_uninstall(args: argparse.Namespace) -> int:
    from app.core.install import uninstall
    from app.core.install.installation import this_install

    paths = AppPaths.from_environment()
    plan = uninstall.plan_uninstall(paths, this_install(), delete_data=args.data)
    steps = plan.steps()
    if not steps:
        print(_("Nothing of Cowork Terminal is set up for you here: nothing to remove."))
    else:
        print(_("Uninstall will:") if not args.dry_run else _("Uninstall would:"))
        print("\n".join(f"  - {step}" for step in steps))
    if args.dry_run or not steps:
        print("\n".join(uninstall.closing_words(plan)))
        return 0
    if not args.yes and not _confirmed():
        print(_("Nothing was changed."))
        return 1
    if plan.delete_data and plan.data:
        _data_deletion_allowed(paths)  # a person's decision, or an error: nothing is changed then
    report = uninstall.run_uninstall(plan, paths)
    print("\n".join(report.done))
    for line in report.failed:
        print(f"cowork-terminal: {line}", file=sys.stderr)
    print("\n".join(uninstall.closing_words(plan, report)))
    return 1 if report.failed else 0


def run_uninstall_window(args: argparse.Namespace) -> int:
    from app.ui.windows.uninstall_window import main  # Tk: only in the window's own process

    return main()


def _data_deletion_allowed(paths: AppPaths) -> None:
    """Deleting the record needs a person (core/install/record_deletion.py): with the app running,
    the user's click in its confirm window; with none, a process that is not an agent's command."""
    from app.core.channel.client import request_change
    from app.core.install.app_processes import tray_running
    from app.core.install.record_deletion import agent_run_reason, ancestors

    why_not = agent_run_reason(os.environ, ancestors())
    if why_not is not None:
        raise UsageError(_(why_not))
    if tray_running(paths):  # its No (or its refusal of an agent's command) ends here, nothing changed
        print(request_change(paths, "delete_data", without_tray=None, announce=print))


def _confirmed() -> bool:
    """Ask in a terminal; elsewhere there is nobody to ask, so the user must say --yes."""
    if not sys.stdin or not sys.stdin.isatty():
        raise UsageError(_("uninstall asks before acting, and there is no terminal to ask in: add --yes"))
    try:
        answer = input(_("Go ahead? [y/N] "))
    except EOFError:
        return False
    # The short and long "yes" of the user's language ("s", "sí"; "j", "ja"; "д", "да"), and English's.
    return answer.strip().lower() in ("y", "yes", _("y"), _("yes"))


def run_install_desktop_entry(args: argparse.Namespace) -> int:
    from app.core.install import autostart, menu_entry

    if not sys.platform.startswith("linux"):
        raise UsageError(_("install-desktop-entry is for Linux; installers on Windows and macOS make the menu entry"))
    frozen = bool(getattr(sys, "frozen", False))
    executable = os.path.abspath(sys.executable)
    icons = menu_entry.bundled_icons(Path(executable).parent / menu_entry.BUNDLED_ICONS)
    written = menu_entry.install_menu_entry(
        autostart.launch_command(frozen, executable), icons, os.environ, Path.home()
    )
    print(_("Added Cowork Terminal to your application menu ({path}).").format(path=written[-1]))
    if not icons:
        print(_("No icons were found beside the program, so the menu shows a generic one."))
    print(_("`cowork-terminal uninstall` removes it again."))
    return 0
