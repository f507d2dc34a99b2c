"""The Welcome window, for real on a private X display: from first start to a checked connection."""

from __future__ import annotations

import json
import subprocess
import sys
import tkinter as tk
from functools import partial
from pathlib import Path

import pytest
from desktop_env import FakeDesktop, make_fake_desktop
from desktop_env import pump_until as pump_tk_until

from app.core.paths import AppPaths
from app.ui.windows.welcome import INTRO, RESTART_TEXT, TITLE, WelcomeWindow
from tests.clicks import shown_window
from tests.tray_process import running_tray

WAIT_S = 60.0
CHECK = [sys.executable, "-m", "app", "check"]
RESTART = [sys.executable, "-m", "app", "restart-claude"]


@pytest.fixture
def desktop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path) -> FakeDesktop:
    return make_fake_desktop(tmp_path, monkeypatch)


pump_until = partial(pump_tk_until, timeout_s=WAIT_S)


def texts(widget: tk.Misc) -> list[str]:
    """Every label's and button's text in the window, top to bottom."""
    found = []
    for child in widget.winfo_children():
        try:
            text = child.cget("text")
        except tk.TclError:
            text = ""
        if text:
            found.append(str(text))
        found += texts(child)
    return found


def test_a_new_user_connects_claude_desktop_and_checks_it_from_the_welcome_window(
    display: str, desktop: FakeDesktop, home: Path
) -> None:
    with running_tray(home):  # the check's server runs `echo ok` under a real tray
        welcome_and_check(desktop)


def welcome_and_check(desktop: FakeDesktop) -> None:
    root = tk.Tk()
    try:
        window = WelcomeWindow(root, check_command=CHECK, restart_command=RESTART)
        assert root.title() == TITLE and INTRO in texts(root)
        pump_until(root, lambda: window.apps is not None)
        button = window.connect_buttons["claude-desktop"]
        assert button.cget("text") == "Connect Claude Desktop"
        assert window.state_labels["claude-desktop"].cget("text") == "Claude Desktop: not connected"
        assert "Connect a Claude app first." in texts(window.check_buttons)

        pump_until(root, lambda: window.real_input.armed)  # Connect takes clicks a moment after it shows
        button.invoke()
        pump_until(root, lambda: window.busy == 0 and "is connected" in str(button.cget("text")))
        assert button.instate(["disabled"]), "connected: nothing left to click there"
        assert "cowork-terminal" in json.loads(desktop.desktop_config.read_text())["mcpServers"]
        assert RESTART_TEXT in texts(root)
        assert texts(window.restart_buttons) == [], "no restart button where the app cannot restart Claude (Linux)"

        [check] = window.check_buttons.winfo_children()
        assert check.cget("text") == "Check Claude Desktop"
        check.invoke()
        pump_until(root, lambda: window.busy == 0 and window.check_result.cget("text") != "Checking Claude Desktop...")
        assert window.check_result.cget("text") == (
            "It works. Claude Desktop is connected: its server started and ran `echo ok`."
        )
    finally:
        root.destroy()


def test_a_failed_check_shows_the_reason_in_the_window(display: str, desktop: FakeDesktop, paths: AppPaths) -> None:
    desktop.desktop_config.write_text(json.dumps({"mcpServers": {"cowork-terminal": {"command": "/nope/gone"}}}))
    root = tk.Tk()
    try:
        window = WelcomeWindow(root, check_command=CHECK, restart_command=RESTART)
        pump_until(root, lambda: window.apps is not None)
        assert window.connect_buttons["claude-desktop"].cget("text") == "Connect Claude Desktop"
        assert "another program's entry" in window.state_labels["claude-desktop"].cget("text")
        window.check(window.apps[0])
        pump_until(root, lambda: window.busy == 0)
        said = window.check_result.cget("text")
        assert said.startswith("Not working yet: ") and len(said) > len("Not working yet: ")
    finally:
        root.destroy()


def test_the_welcome_command_opens_a_window_whose_title_says_welcome(
    display: str, desktop: FakeDesktop, cli_env: dict[str, str]
) -> None:
    env = dict(cli_env, HOME=str(desktop.home), XDG_CONFIG_HOME=str(desktop.config_home), DISPLAY=display)
    process = subprocess.Popen([sys.executable, "-m", "app", "welcome"], env=env)
    try:
        assert shown_window(display, "Welcome"), "a window whose title contains Welcome"
    finally:
        process.terminate()
        process.wait(10)


def test_a_windows_own_options_reach_it_through_the_cli(cli_env: dict[str, str]) -> None:
    """`welcome --no-menu` and `log-window --tray-line` (how the tray starts them) used to stop at
    argparse ("unrecognized arguments"), so the tray's windows never opened."""
    env = {k: v for k, v in cli_env.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    for argv, said in ((["welcome", "--no-menu"], "cannot open the Welcome window"),
                       (["log-window", "--tray-line"], "cannot open the activity log window")):  # fmt: skip
        result = subprocess.run([sys.executable, "-m", "app", *argv], env=env, capture_output=True, text=True,
                                stdin=subprocess.DEVNULL, timeout=60)  # fmt: skip
        assert result.returncode == 1 and said in result.stderr, (argv, result.stderr)
    wrong = subprocess.run([sys.executable, "-m", "app", "status", "--bogus"], env=env, capture_output=True, text=True)
    assert wrong.returncode == 2 and "unrecognized arguments: --bogus" in wrong.stderr
