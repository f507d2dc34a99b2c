"""The user's clicks in the tray's own windows are what loosen control: real windows under Xvfb,
driven with xdotool the way a person's keyboard would (XTEST events, not events sent to a window)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from app.core.channel.client import current_tray_state
from app.core.paths import AppPaths
from tests.clicks import ARMED_S, CONFIRM_TITLE, PROMPT_TITLE, press, shown_window
from tests.desktop_env import wait_for
from tests.stdio_client import STOP_DEADLINE_S, connect, run
from tests.test_authority import cli, wait_until_held
from tests.tray_process import running_tray

pytestmark = [pytest.mark.gui, pytest.mark.anyio]


def pause_then_ask_to_resume(home: Path, display: str) -> subprocess.Popen:
    """`cowork-terminal pause` (at once), then `cowork-terminal resume`, which waits for the click."""
    assert cli(home, "pause").returncode == 0
    env = {**os.environ, "COWORK_TERMINAL_HOME": str(home), "DISPLAY": display}
    return subprocess.Popen(
        [sys.executable, "-m", "app", "resume"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_a_cli_resume_changes_nothing_until_the_user_clicks_resume(home: Path, paths: AppPaths, display: str) -> None:
    with running_tray(home, display=display):
        asking = pause_then_ask_to_resume(home, display)
        window = shown_window(display, CONFIRM_TITLE)
        press(display, window, "Return", "KP_Enter")  # Enter never answers: no default button
        time.sleep(0.5)
        assert current_tray_state(paths)["paused"] is True, "nothing changes before a deliberate click"
        time.sleep(ARMED_S)
        press(display, window, "Tab", "space")  # from No (which has the focus) to Resume
        out, err = asking.communicate(timeout=STOP_DEADLINE_S)
        assert asking.returncode == 0, err
        assert "Host access is ON" in out
        assert current_tray_state(paths)["paused"] is False


def test_escape_in_the_confirm_window_keeps_the_pause(home: Path, paths: AppPaths, display: str) -> None:
    with running_tray(home, display=display):
        asking = pause_then_ask_to_resume(home, display)
        press(display, shown_window(display, CONFIRM_TITLE), "Escape")
        _out, err = asking.communicate(timeout=STOP_DEADLINE_S)
        assert asking.returncode != 0 and "You said no; nothing changed." in err
        assert current_tray_state(paths)["paused"] is True
        again = cli(home, "resume")  # asking again at once is refused without a window
        assert "a moment ago" in again.stderr


async def test_a_click_on_allow_in_the_prompt_runs_the_held_command(
    home: Path, paths: AppPaths, display: str, tmp_path: Path
) -> None:
    (tmp_path / "build" / "obj").mkdir(parents=True)
    with running_tray(home, display=display):
        async with connect(home, headless=False) as client, anyio.create_task_group() as group:
            result: dict = {}

            async def ask() -> None:
                result.update(await run(client, {"command": "rm -rf build", "cwd": str(tmp_path)}))

            group.start_soon(ask)
            await wait_until_held(paths)
            window = await anyio.to_thread.run_sync(shown_window, display, PROMPT_TITLE)
            await anyio.sleep(ARMED_S)
            await anyio.to_thread.run_sync(lambda: press(display, window, "Tab", "space"))
            with anyio.fail_after(STOP_DEADLINE_S):
                while not result:
                    await anyio.sleep(0.05)
    assert result["exitCode"] == 0
    assert not (tmp_path / "build").exists()
    wait_for(lambda: not (tmp_path / "build").exists())
