"""The approval prompt window, for real on a private X display, answering a real `serve`."""

from __future__ import annotations

import subprocess
import sys
import time
import tkinter as tk
from pathlib import Path

import anyio

from app.core import approval, liveness
from app.core.journal import Journal, Status
from app.core.paths import AppPaths
from app.ui.approval_prompt import ARM_DELAY_MS, POLL_MS, ApprovalPrompt
from tests.stdio_client import connect, run

WAIT_S = 10.0


def hold(journal: Journal, command: str) -> int:
    return journal.begin_command(
        command=command, cwd="/srv/site", status=Status.WAITING, reason="rm -r: recursive removal",
        confirmation_id=approval.new_confirmation_id(), hold_expires_at=approval.hold_expiry(), client_name="claude-ai",
        env_keys=["NODE_ENV"],
    )


def pump_until(root: tk.Tk, condition, timeout_s: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "the window did not get there in time"
        root.update()
        time.sleep(0.02)


def test_the_prompt_shows_the_exact_command_and_walks_through_pending_approvals(
    display: str, paths: AppPaths
) -> None:
    with Journal.open(paths) as journal:
        first = hold(journal, "rm -rf dist node_modules")
        second = hold(journal, "sudo apt-get remove nginx")
        root = tk.Tk()
        prompt = ApprovalPrompt(root, Journal.open(paths))
        try:
            assert prompt.refresh()
            root.update()
            assert prompt.command.get("1.0", "end").strip() == "rm -rf dist node_modules"
            assert "claude-ai wants to run" in prompt.heading.cget("text")
            assert "1 more waiting" in prompt.heading.cget("text")
            assert "recursive removal" in prompt.reason.cget("text")
            assert "/srv/site" in prompt.details.cget("text")
            assert "Extra environment: NODE_ENV" in prompt.details.cget("text")
            pump_until(root, lambda: prompt.allow_button.instate(["!disabled"]))
            prompt.allow_button.invoke()
            pump_until(root, lambda: prompt.current is not None and prompt.current.id == second)
            approval.deny(journal, second, by="user (log window)")  # answered elsewhere: the prompt follows
            pump_until(root, lambda: not root.winfo_exists() if _alive(root) else True)
        finally:
            if _alive(root):
                root.destroy()
        assert journal.get_command(first).decision == "allowed"
        assert journal.get_command(first).decided_by == "user (approval prompt)"
        assert journal.get_command(second).decided_by == "user (log window)"


def enabled(button) -> bool:
    return bool(button.instate(["!disabled"]))


def test_allow_and_deny_stay_disabled_for_a_moment_whenever_the_shown_command_changes(
    display: str, paths: AppPaths
) -> None:
    arm_s = ARM_DELAY_MS / 1000
    with Journal.open(paths) as journal:
        first = hold(journal, "rm -rf dist")
        second = hold(journal, "sudo rm -rf /var/www")
        root = tk.Tk()
        prompt = ApprovalPrompt(root, Journal.open(paths))
        try:
            assert prompt.refresh()
            shown = time.monotonic()
            root.after(POLL_MS, prompt.poll)  # following the journal, as `main` does
            root.update()
            assert not enabled(prompt.allow_button) and not enabled(prompt.deny_button), "not live as it opens"
            pump_until(root, lambda: enabled(prompt.allow_button) and enabled(prompt.deny_button))
            assert time.monotonic() - shown >= arm_s * 0.9

            # The shown command is answered elsewhere: the next one takes its place under the cursor.
            approval.deny(journal, first, by="user (log window)")
            pump_until(root, lambda: prompt.current is not None and prompt.current.id == second)
            replaced = time.monotonic()
            assert not enabled(prompt.allow_button) and not enabled(prompt.deny_button)
            prompt.allow_button.invoke()  # the click meant for the previous command
            prompt.answer(True)  # nor any other way to allow it yet
            root.update()
            assert journal.get_command(second).decision is None, "a command the user did not read was not approved"

            pump_until(root, lambda: enabled(prompt.allow_button))
            assert time.monotonic() - replaced >= arm_s * 0.9
            prompt.allow_button.invoke()
            assert journal.get_command(second).decision == "allowed"
        finally:
            if _alive(root):
                root.destroy()


def _alive(root: tk.Tk) -> bool:
    try:
        return bool(root.winfo_exists())
    except tk.TclError:
        return False


def test_escape_in_the_prompt_process_denies_a_held_command_of_a_real_serve(
    display: str, home: Path, paths: AppPaths, cli_env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "old-build").mkdir()
    tray = liveness.try_hold(paths.tray_lock)  # the tray's presence, which approvals require

    async def scenario() -> dict:
        async with connect(home) as client, anyio.create_task_group() as group:
            result: dict = {}

            async def ask() -> None:
                result.update(await run(client, {"command": "rm -rf old-build", "cwd": str(tmp_path)}))

            group.start_soon(ask)
            with Journal.open(paths) as journal:
                while not journal.pending_approvals():
                    await anyio.sleep(0.05)
            prompt = subprocess.Popen([sys.executable, "-m", "app", "approval-prompt"], env=cli_env)
            await anyio.sleep(1.5)  # the window maps
            window = subprocess.run(
                ["xdotool", "search", "--sync", "--name", "approve a command"],
                capture_output=True, text=True, timeout=10, env=cli_env,
            ).stdout.split()[0]
            # Escape is Deny; there is no window manager on Xvfb, so give the window the focus first.
            subprocess.run(["xdotool", "windowfocus", "--sync", window, "key", "Escape"], check=True, env=cli_env)
            assert prompt.wait(timeout=10) == 0, "the prompt closes when nothing is left to answer"
        return result

    try:
        result = anyio.run(scenario)
    finally:
        tray.release()
    assert "The user denied this command" in result["error"]
    assert (tmp_path / "old-build").exists()


def test_a_second_prompt_does_not_open_while_one_is_showing(paths: AppPaths, cli_env: dict[str, str]) -> None:
    lock = liveness.try_hold(paths.locks_dir / "approval-prompt.lock")
    try:
        started = time.monotonic()
        result = subprocess.run([sys.executable, "-m", "app", "approval-prompt"], env=cli_env, timeout=30)
    finally:
        lock.release()
    assert result.returncode == 0 and time.monotonic() - started < 10
