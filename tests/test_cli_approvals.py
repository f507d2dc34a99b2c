"""Approving, denying and choosing the approval mode from the command line."""

from __future__ import annotations

import subprocess
import sys

from app.core import approval
from app.core.journal import Journal, Status
from app.core.paths import AppPaths


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app", *args], env=env, capture_output=True, text=True, timeout=60)


def hold(journal: Journal, command: str) -> int:
    return journal.begin_command(
        command=command, cwd="/tmp", status=Status.WAITING, reason="rm -r: recursive removal",
        confirmation_id=approval.new_confirmation_id(), hold_expires_at=approval.hold_expiry(),
    )


def test_approvals_lists_what_waits_and_approve_records_the_user(paths: AppPaths, cli_env: dict[str, str]) -> None:
    assert "Nothing is waiting" in cli(cli_env, "approvals").stdout
    with Journal.open(paths) as journal:
        first, second = hold(journal, "rm -rf build"), hold(journal, "sudo reboot")
    listing = cli(cli_env, "approvals").stdout
    assert "rm -rf build" in listing and "recursive removal" in listing and "sudo reboot" in listing
    assert cli(cli_env, "approve", str(first)).stdout == f"Allowed command #{first}.\n"
    assert cli(cli_env, "deny", str(second)).stdout == f"Denied command #{second}.\n"
    with Journal.open(paths) as journal:
        assert journal.get_command(first).decision == "allowed"
        assert journal.get_command(first).decided_by == "user (command line)"
        assert journal.get_command(second).decision == "denied"
    again = cli(cli_env, "approve", str(first))
    assert again.returncode == 2 and "not waiting for approval" in again.stderr


def test_approval_mode_shows_and_changes_the_setting(paths: AppPaths, cli_env: dict[str, str]) -> None:
    assert "Ask before dangerous commands (destructive)" in cli(cli_env, "approval-mode").stdout
    assert "Ask before every command" in cli(cli_env, "approval-mode", "all", "--window", "20").stdout
    with Journal.open(paths) as journal:
        assert approval.approval_mode(journal) is approval.ApprovalMode.ALL
        assert approval.approval_window_s(journal) == 20
    bad = cli(cli_env, "approval-mode", "--window", "90")
    assert bad.returncode == 2 and "between 1 and 55" in bad.stderr
