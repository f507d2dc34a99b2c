"""`approvals`, `approve`, `deny` and `approval-mode`: the user's answers from the command line.

A program the agent runs can type these too, so the tray decides: denying and asking more often
take effect at once; asking less waits for the user's click in the tray's window, and `approve N`
brings the approval window, the one that shows the command whole, where the user allows it.
"""

from __future__ import annotations

import argparse
import json
import sys

from app.core.authority.state import loosened, stored_state, with_changes
from app.core.channel.client import NoTray, TrayRefused, ask_tray, current_tray_state, request_change
from app.core.errors import UsageError
from app.core.i18n import N_, _
from app.core.i18n.formats import format_number
from app.core.install.app_processes import tray_running
from app.core.journal.store import Journal
from app.core.paths import AppPaths, protected_paths
from app.core.policy import approval
from app.core.policy.tool_sets import set_tool_set
from app.core.visible_text import visible

COULD_NOT_ASK = N_(
    "Could not ask Cowork Terminal which commands wait for your approval ({error}). Some may be waiting: "
    "see the Cowork Terminal app."
)
MORE_WAITING = N_("More commands wait than are listed here ({count} not listed): see them in the Cowork Terminal app.")


def register(subparsers: argparse._SubParsersAction) -> None:
    listing = subparsers.add_parser("approvals", help=_("list commands waiting for your approval"))
    listing.add_argument("--json", action="store_true", help=_("one JSON object per line"))
    listing.set_defaults(handler=run_list)
    for name, text in (
        ("approve", _("allow a command waiting for your approval")),
        ("deny", _("deny a command waiting for your approval")),
    ):
        parser = subparsers.add_parser(name, help=text)
        parser.add_argument("command_id", type=int, help=_("the number shown by `approvals`"))
        parser.set_defaults(handler=run_decide, allowed=name == "approve")
    mode = subparsers.add_parser("approval-mode", help=_("show or set which commands wait for your approval"))
    mode.add_argument("mode", nargs="?", choices=[m.value for m in approval.ApprovalMode])
    mode.add_argument("--window", type=float, metavar=_("SECONDS"), help=_("how long a call waits for your answer"))
    mode.set_defaults(handler=run_mode)
    prompt = subparsers.add_parser("approval-prompt", help=_("the approval window (the app opens it for you)"))
    prompt.set_defaults(handler=run_prompt)
    confirm = subparsers.add_parser("confirm-window", help=_("the confirm window (the app opens it for you)"))
    confirm.set_defaults(handler=run_confirm)
    settings = subparsers.add_parser("settings-window", help=_("the settings window (the app opens it for you)"))
    settings.set_defaults(handler=run_settings)


def run_prompt(args: argparse.Namespace) -> int:
    from app.ui.windows.approval_prompt import main  # Tk only for this command

    return main([])


def run_confirm(args: argparse.Namespace) -> int:
    from app.ui.windows.confirm_window import main  # Tk only for this command

    return main([])


def run_settings(args: argparse.Namespace) -> int:
    from app.ui.windows.settings_window import main  # Tk only for this command

    return main([])


def run_list(args: argparse.Namespace) -> int:
    """What waits for the user, as the tray holds it (the servers' own words, not the file's)."""
    paths = AppPaths.from_environment()
    try:
        answer = ask_tray(paths, "holds", wait_s=5.0)
    except (NoTray, TrayRefused) as problem:
        if isinstance(problem, NoTray) and not tray_running(paths):
            answer = {}  # only a running tray holds commands
        else:  # one runs, and may hold commands: "nothing is waiting" would be a guess
            print(_(COULD_NOT_ASK).format(error=problem), file=sys.stderr)
            return 1
    pending = json.loads(str(answer.get("message") or "[]"))
    for hold in pending:
        if args.json:
            print(json.dumps(hold))
        else:
            print(visible(f"#{hold['id']} [{hold['cwd']}] {hold['command']}", keep="\n"))
            # The server's words are English (the model read them): said again from the command.
            from app.core.policy.plain_words import held_reason_for_person

            said = held_reason_for_person(hold["reasons"], hold["command"], hold["cwd"], protected_paths(paths))
            why = _("why: {reason}; from {client}").format(reason=said or hold["reasons"], client=hold["client"])
            print("    " + why)
    left_out = answer.get("left_out")
    if isinstance(left_out, int) and left_out > 0:
        print(_(MORE_WAITING).format(count=left_out), file=sys.stderr if args.json else sys.stdout)
    elif not pending and not args.json:
        print(_("Nothing is waiting for your approval."))
    return 0


def run_decide(args: argparse.Namespace) -> int:
    paths = AppPaths.from_environment()
    if args.allowed:  # the tray answers where the command is shown (its approval window) or why it is not
        print(request_change(paths, "approve", without_tray=None, id=args.command_id))
        return 0

    def without_tray(journal: Journal) -> str:  # only the tray holds commands: nothing can be waiting
        raise UsageError(
            _("Command #{id} is not waiting for approval (see `cowork-terminal approvals`).").format(id=args.command_id)
        )

    print(request_change(paths, "deny", without_tray=without_tray, id=args.command_id))
    return 0


def run_mode(args: argparse.Namespace) -> int:
    paths = AppPaths.from_environment()
    changes: dict[str, object] = {}
    if args.mode:
        changes["approval_mode"] = approval.ApprovalMode(args.mode).value
    if args.window is not None:
        if not 1 <= args.window <= approval.MAX_APPROVAL_WINDOW_S:
            raise UsageError(
                _("the approval window must be between 1 and {seconds} seconds").format(
                    seconds=format_number(approval.MAX_APPROVAL_WINDOW_S, None)
                )
            )
        changes["approval_window_s"] = float(args.window)
    if changes:
        print(change_settings(paths, changes))
    state = current_tray_state(paths)
    with Journal.open(paths) as journal:
        mode = approval.ApprovalMode(state["approval_mode"]) if state else approval.approval_mode(journal)
        window = float(state["approval_window_s"]) if state else approval.approval_window_s(journal)
    print(
        _("{mode} ({value}); a call waits up to {seconds} s for your answer.").format(
            mode=mode.label, value=mode.value, seconds=format_number(window, None)
        )
    )
    return 0


def change_settings(paths: AppPaths, changes: dict[str, object]) -> str:
    """Settings through the tray; with no tray, only a tightening is written (for headless servers)."""
    with Journal.open(paths) as journal:
        stored = stored_state(journal.get_setting, journal.is_paused())  # damaged values read as the strictest
    wanted = with_changes(stored, **changes)
    tightening = not loosened(stored, wanted)

    def without_tray(journal: Journal) -> str:
        approval.set_approval_mode(journal, approval.ApprovalMode(wanted.approval_mode))
        approval.set_approval_window_s(journal, wanted.approval_window_s)
        set_tool_set(journal, wanted.tools)
        return _("Settings changed.")

    return request_change(
        paths, "settings", without_tray=without_tray if tightening else None, announce=print, changes=changes
    )
