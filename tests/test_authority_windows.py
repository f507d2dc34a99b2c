"""The user's clicks in the tray's own windows are what loosen control: real windows under Xvfb,
driven with xdotool the way a person's keyboard would (XTEST events, not events sent to a window).

The approval prompt a real tray opens for a real `serve` is clicked the same way in
tests/test_approval.py (Allow runs the held command, and the journal says who approved it) and
tests/test_approval_prompt.py (Escape denies; a rule made by a click)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.core.channel.client import current_tray_state
from app.core.paths import AppPaths
from tests.clicks import ARMED_S, CONFIRM_TITLE, on_screen, press, shown_window
from tests.desktop_env import wait_for
from tests.stdio_client import STOP_DEADLINE_S
from tests.test_authority import cli
from tests.tray_process import running_tray

pytestmark = pytest.mark.gui


def pause_then_ask_to_resume(home: Path, display: str) -> subprocess.Popen:
    """`cowork-terminal pause` (at once), then `cowork-terminal resume`, which waits for the click."""
    assert cli(home, "pause").returncode == 0
    env = {**os.environ, "COWORK_TERMINAL_HOME": str(home), "DISPLAY": display}
    return subprocess.Popen(
        [sys.executable, "-m", "app", "resume"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_a_cli_resume_changes_nothing_until_the_user_clicks_resume_and_escape_keeps_the_pause(
    home: Path, paths: AppPaths, display: str
) -> None:
    """One tray for both answers: a click on Resume, then (paused again) Escape."""
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
        wait_for(lambda: not on_screen(display, CONFIRM_TITLE), timeout_s=STOP_DEADLINE_S)  # not the next one's

        asking = pause_then_ask_to_resume(home, display)  # Escape in the confirm window keeps the pause
        press(display, shown_window(display, CONFIRM_TITLE), "Escape")
        _out, err = asking.communicate(timeout=STOP_DEADLINE_S)
        assert asking.returncode != 0 and "You said no; nothing changed." in err
        assert current_tray_state(paths)["paused"] is True
        again = cli(home, "resume")  # asking again at once is refused without a window
        assert "a moment ago" in again.stderr
