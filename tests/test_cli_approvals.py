"""Approving, denying and choosing the approval mode from the command line.

The tray holds the commands: `approvals` lists what it asks about, `deny` takes effect at once, and
`approve` only brings the tray's approval window, where the user allows with a click.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from app.core.journal.store import Journal
from app.core.paths import AppPaths
from app.core.policy import approval
from tests.clicks import CONFIRM_TITLE, PROMPT_TITLE, click_yes, on_screen, shown_window, xdotool
from tests.stdio_client import connect, run
from tests.tray_process import running_tray


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app", *args], env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.gui
def test_approvals_lists_what_waits_deny_is_at_once_and_approve_brings_the_approval_window(
    home: Path, paths: AppPaths, cli_env: dict[str, str], display: str, tmp_path: Path
) -> None:
    (tmp_path / "build").mkdir()
    cli_env = {**cli_env, "DISPLAY": display}
    assert "Nothing is waiting" in cli(cli_env, "approvals").stdout

    async def scenario() -> list[dict]:
        results: list[dict] = [{}, {}]
        async with connect(home, headless=False) as first, connect(home, headless=False) as second:

            async def ask(client, arguments: dict, into: dict) -> None:
                into.update(await run(client, arguments))

            async with anyio.create_task_group() as group:
                group.start_soon(ask, first, {"command": "rm -rf build", "cwd": str(tmp_path)}, results[0])
                group.start_soon(ask, second, {"command": "sudo reboot"}, results[1])
                await anyio.to_thread.run_sync(steps)
        return results

    def steps() -> None:
        listing = ""
        for _ in range(200):
            listing = cli(cli_env, "approvals").stdout
            if "rm -rf build" in listing and "sudo reboot" in listing:
                break
        assert "rm -rf build" in listing and "sudo reboot" in listing
        # Why, in the words the approval window uses (the person's copy, not the model's).
        assert f"why: Deletes the folder {tmp_path}/build and everything in it; from " in listing
        shown_window(display, PROMPT_TITLE)
        assert len(xdotool(display, "search", "--onlyvisible", "--name", PROMPT_TITLE).split()) == 1, (
            "one approval prompt walks through both"
        )
        held = [json.loads(line) for line in cli(cli_env, "approvals", "--json").stdout.splitlines()]
        ids = {hold["command"]: hold["id"] for hold in held}
        build, reboot = ids["rm -rf build"], ids["sudo reboot"]
        assert f"#{build} [{tmp_path}] rm -rf build" in listing
        assert cli(cli_env, "deny", str(reboot)).stdout == f"Denied command #{reboot}.\n"
        # Not a yes/no: the approval window, which shows the command whole, is where it is allowed.
        shown = cli(cli_env, "approve", str(build))
        assert shown.returncode == 0, shown.stderr
        said = f"Command #{build} is shown in Cowork Terminal's approval window: allow or deny it there.\n"
        assert shown.stdout == said
        assert "rm -rf build" in cli(cli_env, "approvals").stdout, "it still waits"
        assert not on_screen(display, CONFIRM_TITLE), "no confirm window asks about it"
        click_yes(display, PROMPT_TITLE)
        for _ in range(200):
            if "rm -rf build" not in cli(cli_env, "approvals").stdout:
                break
        again = cli(cli_env, "approve", str(build))
        assert again.returncode != 0 and "not waiting for approval" in again.stderr

    with running_tray(home, display=display):
        allowed, denied = anyio.run(scenario)
    assert allowed["exitCode"] == 0 and not (tmp_path / "build").exists()
    assert "The user denied this command" in denied["error"]
    with Journal.open(paths) as journal:
        decided = {row.command: (row.decision, row.decided_by) for row in journal.recent_commands()}
    assert decided["rm -rf build"] == ("allowed", "user (approval prompt)")
    assert decided["sudo reboot"] == ("denied", "a request (command line or a window)")


def test_approval_mode_shows_and_changes_the_setting(paths: AppPaths, cli_env: dict[str, str]) -> None:
    assert "Ask before dangerous commands (destructive)" in cli(cli_env, "approval-mode").stdout
    assert "Ask before every command" in cli(cli_env, "approval-mode", "all", "--window", "20").stdout
    with Journal.open(paths) as journal:
        assert approval.approval_mode(journal) is approval.ApprovalMode.ALL
        assert approval.approval_window_s(journal) == 20
    bad = cli(cli_env, "approval-mode", "--window", "90")
    assert bad.returncode == 2 and "between 1 and 55" in bad.stderr


def test_without_a_tray_deny_says_nothing_waits(cli_env: dict[str, str]) -> None:
    """Only the tray holds commands: with none running, nothing can be waiting to be denied."""
    denied = cli(cli_env, "deny", "7")
    assert denied.returncode != 0
    assert "Command #7 is not waiting for approval (see `cowork-terminal approvals`)." in denied.stderr


def test_a_german_user_reads_why_a_command_waits_in_german_in_approvals_and_the_log(
    home: Path, cli_env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "build").mkdir()
    german = {**{k: v for k, v in cli_env.items() if not k.startswith(("LC_", "LANG"))}, "LANG": "de_DE.UTF-8"}
    listing, log = "", ""

    async def scenario() -> dict:
        async with connect(home, headless=False, env={"LANG": "de_DE.UTF-8"}) as client:
            held = await run(client, {"command": "rm -rf build", "cwd": str(tmp_path)})
            nonlocal listing, log
            listing = (await anyio.to_thread.run_sync(cli, german, "approvals")).stdout
            log = (await anyio.to_thread.run_sync(cli, german, "log")).stdout
            return held

    with running_tray(home):
        assert cli(german, "approval-mode", "--window", "2").returncode == 0  # a shorter wait only tightens
        held = anyio.run(scenario)
    # The model reads English; the person reads German, in both listings.
    assert f"What it does: Deletes the folder {tmp_path}/build and everything in it" in held["note"]
    assert f"Grund: Löscht den Ordner {tmp_path}/build und alles darin; von " in listing, listing
    assert f"rm -rf build (Löscht den Ordner {tmp_path}/build und alles darin)\n" in log, log


def test_a_damaged_setting_is_read_as_its_strictest_so_the_command_line_cannot_loosen_it(
    paths: AppPaths, cli_env: dict[str, str]
) -> None:
    """A tool set or approval mode the journal holds that this version does not know (a newer
    version's, a damaged file) is obeyed as the strictest by every server. With no tray, the command
    line writes only a tightening: it read such a tool set as "all" and wrote "all" without a click."""
    with Journal.open(paths) as journal:
        journal.set_setting("tools", "from-a-newer-version")
        journal.set_setting("approval_mode", "from-a-newer-version")
    for args in (("tools", "all"), ("approval-mode", "destructive")):
        said = cli(cli_env, *args)
        assert "Settings changed." not in said.stdout, (args, said.stdout)
        assert said.returncode == 1 and "nobody can confirm this and nothing changed" in said.stderr, (args, said)
    with Journal.open(paths) as journal:
        assert journal.get_setting("tools", None) == "from-a-newer-version"
        assert journal.get_setting("approval_mode", None) == "from-a-newer-version"
    assert "Settings changed." in cli(cli_env, "approval-mode", "all").stdout, "a tightening still needs no tray"
