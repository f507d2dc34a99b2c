"""The user's clicks in the tray's own windows, as a person's keyboard makes them: xdotool under the
`display` fixture's Xvfb (XTEST events, not events sent to a window), after the buttons arm."""

from __future__ import annotations

import os
import subprocess
import time

from tests.stdio_client import STOP_DEADLINE_S

ARMED_S = 1.3  # the windows' buttons arm 1 s after they show a question
PROMPT_TITLE = "approve a command"
CONFIRM_TITLE = "Cowork Terminal: confirm"


def xdotool(display: str, *args: str) -> str:
    env = {**os.environ, "DISPLAY": display}
    return subprocess.run(
        ["xdotool", *args], env=env, capture_output=True, text=True, check=True, timeout=STOP_DEADLINE_S
    ).stdout.strip()


def shown_window(display: str, name: str) -> str:
    """The first mapped window whose title contains `name` (waits until one shows)."""
    return xdotool(display, "search", "--sync", "--onlyvisible", "--name", name).splitlines()[0]


def press(display: str, window: str, *keys: str) -> None:
    """Keys as from the keyboard: focus the window, then XTEST key events."""
    xdotool(display, "windowfocus", "--sync", window)
    xdotool(display, "key", "--delay", "50", *keys)


def click_yes(display: str, name: str) -> None:
    """Answer yes (Allow, Resume, ...) in the window titled `name`: from the focused No/Deny, Tab to
    the yes button and press it, once the buttons are armed."""
    window = shown_window(display, name)
    time.sleep(ARMED_S)
    press(display, window, "Tab", "space")
