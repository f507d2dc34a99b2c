"""`approvals`, `approve`, `deny` and `approval-mode`: the user's answers from the command line.

These act for the person at the keyboard, like the tray and the log window; no MCP tool reaches them.
"""

from __future__ import annotations

import argparse
import json

from app.core import approval
from app.core.errors import UsageError
from app.core.journal import Journal


def register(subparsers: argparse._SubParsersAction) -> None:
    listing = subparsers.add_parser("approvals", help="list commands waiting for your approval")
    listing.add_argument("--json", action="store_true", help="one JSON object per line")
    listing.set_defaults(handler=run_list)
    for name, verb in (("approve", "allow"), ("deny", "deny")):
        parser = subparsers.add_parser(name, help=f"{verb} a command waiting for your approval")
        parser.add_argument("command_id", type=int, help="the number shown by `approvals`")
        parser.set_defaults(handler=run_decide, allowed=name == "approve")
    mode = subparsers.add_parser("approval-mode", help="show or set which commands wait for your approval")
    mode.add_argument("mode", nargs="?", choices=[m.value for m in approval.ApprovalMode])
    mode.add_argument("--window", type=float, metavar="SECONDS", help="how long a call waits for your answer")
    mode.set_defaults(handler=run_mode)
    prompt = subparsers.add_parser("approval-prompt", help="open the approval window (the tray does this for you)")
    prompt.set_defaults(handler=run_prompt)


def run_prompt(args: argparse.Namespace) -> int:
    from app.ui.approval_prompt import main  # Tk only for this command

    return main([])


def run_list(args: argparse.Namespace) -> int:
    with Journal.open() as journal:
        pending = journal.pending_approvals()
    for record in pending:
        if args.json:
            print(json.dumps(record.to_json()))
        else:
            print(f"#{record.id} [{record.cwd}] {record.command}\n    why: {record.reason}; from {record.client_name}")
    if not pending and not args.json:
        print("Nothing is waiting for your approval.")
    return 0


def run_decide(args: argparse.Namespace) -> int:
    with Journal.open() as journal:
        if not journal.decide(args.command_id, allowed=args.allowed, by="user (command line)"):
            raise UsageError(
                f"Command #{args.command_id} is not waiting for approval (see `cowork-terminal approvals`)."
            )
    print(f"{'Allowed' if args.allowed else 'Denied'} command #{args.command_id}.")
    return 0


def run_mode(args: argparse.Namespace) -> int:
    with Journal.open() as journal:
        if args.mode:
            approval.set_approval_mode(journal, approval.ApprovalMode(args.mode))
        if args.window is not None:
            try:
                approval.set_approval_window_s(journal, args.window)
            except ValueError as exc:
                raise UsageError(str(exc)) from None
        mode = approval.approval_mode(journal)
        window = approval.approval_window_s(journal)
    print(f"{mode.label} ({mode.value}); a call waits up to {window:g} s for your answer.")
    return 0
