"""The Welcome window, for real on a private X display: from first start to a checked connection."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tkinter as tk
from functools import partial
from pathlib import Path

import pytest
from desktop_env import FakeDesktop, make_fake_desktop, wait_for
from desktop_env import pump_until as pump_tk_until

from app.core.paths import AppPaths
from app.ui.windows.welcome import (
    ALL_SET,
    AUTOSTART_LABEL,
    AUTOSTART_WHY,
    INTRO,
    RESTART_TEXT,
    TITLE,
    WelcomeWindow,
)
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
        pump_until(root, lambda: window.step_input.armed)  # like Connect: a moment after it shows
        check.invoke()
        pump_until(root, lambda: window.busy == 0 and window.check_result.cget("text") != "Checking Claude Desktop...")
        assert window.check_result.cget("text") == (  # true before Claude's restart, and says what to do
            "Cowork Terminal started the way Claude Desktop will start it and ran a test command, but Claude Desktop "
            "has not connected yet. Quit Claude Desktop completely and open it again, then ask Claude “What is in my "
            "Downloads folder?”"
        )
        assert window.live.cget("text") == "Waiting for Claude Desktop to connect…", "our check is not Claude"
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


def test_the_welcome_and_uninstall_windows_open_with_their_titles_and_the_apps_own_window_class(
    display: str, desktop: FakeDesktop, cli_env: dict[str, str]
) -> None:
    env = dict(cli_env, HOME=str(desktop.home), XDG_CONFIG_HOME=str(desktop.config_home), DISPLAY=display)
    for argv, title in ((["welcome"], "Welcome"), (["uninstall-window"], "Uninstall Cowork Terminal")):
        process = subprocess.Popen([sys.executable, "-m", "app", *argv], env=env)
        try:
            window = shown_window(display, title)
            # Named "Tk" in the dock and the window list before (only the log window had its name).
            said = run_on_display(display, ["xprop", "-id", str(int(window)), "WM_CLASS"])
            # Tk numbers the instance ("cowork-terminal #2") while another of our windows is on the
            # display; the class, which docks match, stays.
            assert re.fullmatch(r'WM_CLASS\(STRING\) = "cowork-terminal( #\d+)?", "Cowork-terminal"', said), said
        finally:
            process.terminate()
            process.wait(10)


def run_on_display(display: str, argv: list[str]) -> str:
    env = {**os.environ, "DISPLAY": display}
    return subprocess.run(argv, env=env, capture_output=True, text=True, check=True, timeout=30).stdout.strip()


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


def test_the_first_run_turns_start_at_login_on_and_says_so_in_the_welcome_window(
    display: str, desktop: FakeDesktop, home: Path
) -> None:
    """After a reboot Claude was refused until the user remembered to start the app (issue 24, item 2)."""
    assert not desktop.autostart_file.exists()
    with running_tray(home, display=display):  # its first start opens the real Welcome window
        assert shown_window(display, "Welcome")
        wait_for(desktop.autostart_file.exists, timeout_s=WAIT_S)
    assert "Exec=" in desktop.autostart_file.read_text() and " tray" in desktop.autostart_file.read_text()


def test_the_welcome_windows_start_at_login_box_shows_the_setting_and_turns_it_off(
    display: str, desktop: FakeDesktop
) -> None:
    root = tk.Tk()
    try:
        window = WelcomeWindow(root, check_command=CHECK, restart_command=RESTART, first_run=True)
        pump_until(root, lambda: window.busy == 0 and window.apps is not None)
        assert AUTOSTART_LABEL in texts(root) and AUTOSTART_WHY in texts(root)
        assert window.autostart_on.get() and desktop.autostart_file.exists(), "on by default at the first run"
        pump_until(root, lambda: window.autostart_input.armed)  # the box takes clicks a moment after it shows
        window.autostart_box.invoke()  # the user unticks it
        pump_until(root, lambda: window.busy == 0)
        assert not window.autostart_on.get() and not desktop.autostart_file.exists()
    finally:
        root.destroy()
    root = tk.Tk()
    try:
        window = WelcomeWindow(root, check_command=CHECK, restart_command=RESTART)  # "Getting started…" later
        pump_until(root, lambda: window.busy == 0 and window.apps is not None)
        assert not window.autostart_on.get() and not desktop.autostart_file.exists(), "the user's No is kept"
    finally:
        root.destroy()


class ClaudeConnecting:
    """Claude Desktop, restarted: it starts our server and stays connected (in a thread, so that the
    test can keep pumping the window's Tk loop meanwhile)."""

    def __init__(self, home: Path) -> None:
        import threading

        self.home = home
        self.connected = threading.Event()
        self.leave = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        import anyio
        from mcp import Client
        from mcp.types import Implementation

        from tests.stdio_client import server_params

        async def main() -> None:
            me = Implementation(name="claude-ai", version="0.14.10")
            async with Client(server_params(self.home), client_info=me, mode="legacy"):
                self.connected.set()
                while not self.leave.is_set():
                    await anyio.sleep(0.05)

        anyio.run(main)

    def quit(self) -> None:
        self.leave.set()
        self.thread.join(WAIT_S)


def test_the_window_says_connected_only_when_claude_itself_connects_and_then_what_to_ask(
    display: str, desktop: FakeDesktop, home: Path
) -> None:
    with running_tray(home):
        root = tk.Tk()
        claude = None
        try:
            window = WelcomeWindow(root, check_command=CHECK, restart_command=RESTART)
            pump_until(root, lambda: window.apps is not None)
            size = (root.winfo_width(), root.winfo_height())
            pump_until(root, lambda: window.real_input.armed)  # Connect takes clicks a moment after it shows
            window.connect_buttons["claude-desktop"].invoke()
            pump_until(root, lambda: window.busy == 0 and window.apps[0].connected)
            assert window.live.cget("text") == "Waiting for Claude Desktop to connect…"
            assert ALL_SET not in texts(root), "nothing connected yet: not all set"
            pump_until(root, lambda: window.step_input.armed)
            window.check_buttons.winfo_children()[0].invoke()  # before Claude's restart: ready, not connected
            pump_until(root, lambda: window.busy == 0 and "has not connected yet" in window.check_result.cget("text"))
            claude = ClaudeConnecting(home)
            assert claude.connected.wait(WAIT_S)
            pump_until(root, lambda: "✓" in window.live.cget("text"))
            assert window.check_result.cget("text") == "", "'has not connected yet' is no longer true: gone"
            assert window.live.cget("text") == (
                "✓ Claude Desktop is connected.\nYou're all set: try asking Claude “What is in my Downloads folder?”"
            )
            root.update_idletasks()
            assert (root.winfo_width(), root.winfo_height()) == size, "the window keeps its size as it fills in"
            pump_until(root, lambda: window.step_input.armed)
            window.check_buttons.winfo_children()[0].invoke()  # now Claude's own server runs: connected
            pump_until(root, lambda: window.busy == 0 and "Checking" not in window.check_result.cget("text"))
            assert window.check_result.cget("text") == (
                "Claude Desktop is connected, and a test command ran. "
                "Try asking Claude “What is in my Downloads folder?”"
            )
        finally:
            if claude is not None:
                claude.quit()
            root.destroy()


def test_connecting_claude_desktop_when_none_was_found_replaces_the_not_found_line(
    display: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path
) -> None:
    make_fake_desktop(tmp_path, monkeypatch, claude_desktop=False)
    root = tk.Tk()
    try:
        window = WelcomeWindow(root, check_command=CHECK, restart_command=RESTART)
        pump_until(root, lambda: window.apps is not None)
        assert any(text.startswith("No Claude app was found") for text in texts(root))
        pump_until(root, lambda: window.real_input.armed)  # Connect takes clicks a moment after it shows
        window.connect_buttons["claude-desktop"].invoke()
        pump_until(root, lambda: window.busy == 0 and window.apps[0].connected)
        shown = texts(root)
        assert not any(text.startswith("No Claude app was found") for text in shown), shown
        assert (
            "Claude Desktop is not installed yet. Cowork Terminal is ready for it: install it, then open it." in shown
        )
    finally:
        root.destroy()
