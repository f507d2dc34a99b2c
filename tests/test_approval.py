"""Held commands: only the person at the keyboard answers, through the tray's own interface.

A real tray process holds the commands of real `serve` processes. Denying goes through the CLI
(a tightening, applied at once); allowing is a click on Allow in the tray's approval prompt, under
Xvfb, which is the only way a held command can be allowed.

Held commands' other edges (a deny, confirm after a deny, cancel, the app's own folder, the approval
mode of a headless server) are tested in this process: tests/test_command_service_inprocess.py.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from app.core.journal.store import Journal, Status
from app.core.paths import AppPaths
from app.core.policy.approval import HOLD_LIFETIME_S
from tests.clicks import PROMPT_TITLE, click_yes
from tests.stdio_client import connect, run
from tests.test_authority import cli, holds, wait_until_held
from tests.tray_process import running_tray

pytestmark = pytest.mark.anyio


@pytest.fixture
def tray(home: Path) -> Iterator[subprocess.Popen]:
    """The tray app, running for real (no display: it holds commands; answers come from the CLI)."""
    with running_tray(home) as process:
        yield process


@pytest.fixture
def tray_with_windows(home: Path, display: str) -> Iterator[str]:
    """The tray app on Xvfb: its approval prompt is a real window the test clicks in."""
    with running_tray(home, display=display):
        yield display


def set_window(home: Path, seconds: float) -> None:
    """A shorter approval wait asks the user sooner: a tightening, applied by the tray at once."""
    done = cli(home, "approval-mode", "--window", str(seconds))
    assert done.returncode == 0, done.stderr


async def deny_when_held(home: Path, paths: AppPaths, seen: list) -> None:
    """The user denies from the command line, as soon as the command waits."""
    seen.append(await wait_until_held(paths))
    denied = await anyio.to_thread.run_sync(cli, home, "deny", str(seen[-1]["id"]))
    assert denied.returncode == 0, denied.stderr


async def allow_when_held(paths: AppPaths, display: str, seen: list) -> None:
    """The user clicks Allow in the approval prompt the tray opened."""
    seen.append(await wait_until_held(paths))
    await anyio.to_thread.run_sync(click_yes, display, PROMPT_TITLE)


def rows(paths: AppPaths) -> list:
    with Journal.open(paths) as journal:
        return journal.recent_commands()


def held_id(error: str) -> str:
    assert "confirmation_id" in error, error
    return error.split("confirmation_id ")[1].split()[0]


@pytest.mark.gui
async def test_an_allowed_destructive_command_runs_and_the_journal_says_who_approved(
    home: Path, paths: AppPaths, tray_with_windows: str, tmp_path: Path
) -> None:
    (tmp_path / "victim" / "sub").mkdir(parents=True)
    seen: list = []
    async with connect(home, headless=False) as client, anyio.create_task_group() as group:
        group.start_soon(allow_when_held, paths, tray_with_windows, seen)
        result = await run(client, {"command": "rm -rf victim", "cwd": str(tmp_path)})
    assert result["exitCode"] == 0
    assert not (tmp_path / "victim").exists()
    assert seen[0]["command"] == "rm -rf victim" and "recursive removal" in seen[0]["reasons"]
    [row] = rows(paths)
    assert row.status is Status.FINISHED and row.decision == "allowed"
    assert row.decided_by == "user (approval prompt)"
    assert row.tier == "destructive"


@pytest.mark.gui
async def test_no_answer_in_time_holds_the_command_and_confirm_runs_it_once_allowed(
    home: Path, paths: AppPaths, tray_with_windows: str, tmp_path: Path
) -> None:
    set_window(home, 1)
    (tmp_path / "later").mkdir()
    async with connect(home, headless=False) as client:
        started = time.monotonic()
        first = await run(client, {"command": "rm -rf later", "cwd": str(tmp_path)})
        assert 0.9 < time.monotonic() - started < 20, "held after the 1 s window, not the default one"
        assert "5 minutes" in first["error"] and "terminal_confirm" in first["error"]
        confirmation_id = held_id(first["error"])
        assert (tmp_path / "later").exists()
        await allow_when_held(paths, tray_with_windows, [])  # the user answers after the call returned
        confirmed = await client.call_tool("terminal_confirm", {"confirmation_id": confirmation_id})
    assert json.loads(confirmed.content[0].text)["exitCode"] == 0
    assert not (tmp_path / "later").exists()


LIBFAKETIME = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1")


async def test_an_expired_hold_can_no_longer_be_confirmed(
    home: Path, paths: AppPaths, tray: subprocess.Popen, tmp_path: Path
) -> None:
    if not LIBFAKETIME.exists():
        pytest.fail("libfaketime is missing, so a hold's 5 minutes cannot pass quickly: apt-get install -y libfaketime")
    clock = tmp_path / "server-clock"  # the server's wall clock, moved on by the test (libfaketime reads it)
    clock.write_text("+0\n")
    env = {
        "LD_PRELOAD": str(LIBFAKETIME),
        "FAKETIME_TIMESTAMP_FILE": str(clock),
        "FAKETIME_NO_CACHE": "1",
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
    }
    set_window(home, 1)
    async with connect(home, headless=False, env=env) as client:
        first = await run(client, {"command": "sudo true"})
        clock.write_text(f"+{int(HOLD_LIFETIME_S) + 60}\n")  # the hold's 5 minutes pass
        confirmed = await client.call_tool("terminal_confirm", {"confirmation_id": held_id(first["error"])})
        assert holds(paths) == [], "the user is no longer asked about it"
    assert confirmed.is_error and "hold expired" in confirmed.content[0].text
    [row] = rows(paths)
    assert row.status is Status.REFUSED and row.reason == "the hold expired before it was confirmed"


async def test_no_tool_or_argument_lets_the_model_approve_its_own_command(
    home: Path, paths: AppPaths, tray: subprocess.Popen
) -> None:
    set_window(home, 1)
    async with connect(home, headless=False) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        for tool in tools.values():
            assert not {"approve", "approved", "allow", "decision", "tier"} & set(tool.input_schema["properties"])
        sneaky = await run(client, {"command": "sudo true", "tier": "safe", "approved": True})
        again = await client.call_tool("terminal_confirm", {"confirmation_id": held_id(sneaky["error"])})
        assert again.is_error and "have not answered yet" in again.content[0].text
        [row] = rows(paths)
        assert row.status is Status.WAITING and row.decision is None
    assert holds(paths) == [], "the tray no longer asks about a command whose server is gone"
    [row] = rows(paths)
    assert row.status is Status.INTERRUPTED, "a server that exits closes what it still held"


@pytest.mark.gui
async def test_a_held_session_command_runs_only_in_the_folder_it_was_shown_in(
    home: Path, paths: AppPaths, tray_with_windows: str, tmp_path: Path
) -> None:
    for folder in ("shown", "elsewhere"):
        (tmp_path / folder / "victim").mkdir(parents=True)
    set_window(home, 1)
    async with connect(home, headless=False) as client:
        await client.call_tool("terminal_run", {"command": f"cd {tmp_path / 'shown'}"})
        held = await client.call_tool("terminal_run", {"command": "rm -rf victim"})
        await client.call_tool("terminal_run", {"command": f"cd {tmp_path / 'elsewhere'}"})  # harmless alone
        [pending] = holds(paths)
        assert pending["cwd"] == str(tmp_path / "shown"), "the user is shown where it would run"
        await allow_when_held(paths, tray_with_windows, [])
        confirmed = await client.call_tool("terminal_confirm", {"confirmation_id": held_id(held.content[0].text)})
    assert confirmed.is_error and "not in" in confirmed.content[0].text and "Run it again" in confirmed.content[0].text
    assert (tmp_path / "elsewhere" / "victim").exists() and (tmp_path / "shown" / "victim").exists()
