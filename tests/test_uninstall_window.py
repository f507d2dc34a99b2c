"""The tray's "Uninstall..." window, for real on a private X display, against a fake home."""

from __future__ import annotations

import contextlib
import json
import sys
import tkinter as tk
from functools import partial
from pathlib import Path

import pytest
from test_client_config import OTHER_SERVERS

from app.core.claude import config as cc
from app.core.install import autostart
from app.core.journal.store import Journal
from app.core.paths import AppPaths
from app.ui.windows.uninstall_window import UninstallWindow
from tests.desktop_env import pump_until as pump_tk_until

WAIT_S = 20.0


pump_until = partial(pump_tk_until, timeout_s=WAIT_S)


@pytest.fixture
def fake_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, paths: AppPaths) -> Path:
    home = tmp_path / "user-home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no `claude`: Claude Code is not installed here
    config = home / ".config" / "Claude" / "claude_desktop_config.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"mcpServers": {**OTHER_SERVERS, "cowork-terminal": cc.this_app_entry()}}))
    autostart.enable(command=[sys.executable, "-m", "app", "tray"])
    Journal(paths).close()
    return home


def test_the_window_lists_what_goes_asks_and_then_uninstalls(display: str, paths: AppPaths, fake_home: Path) -> None:
    config = fake_home / ".config" / "Claude" / "claude_desktop_config.json"
    root = tk.Tk()
    try:
        window = UninstallWindow(root, paths)
        window.start()
        pump_until(root, lambda: window.heading.cget("text") == "Uninstall will:")
        text = window.body.cget("text")
        assert f"Remove Cowork Terminal from Claude Desktop ({config})" in text
        assert "Turn off Start at login" in text
        assert f"Kept: your command history and logs in {paths.data_dir}" in text
        assert "--data" not in text, "the window's own checkbox deletes them: no command-line option there"
        assert json.loads(config.read_text())["mcpServers"].get("cowork-terminal"), "nothing changes before the click"

        pump_until(root, lambda: window.box_arming.armed)  # the box takes clicks a moment after it shows
        window.data_box.invoke()  # the tick box: the list now says the data goes too
        assert f"Delete {paths.journal}" in window.body.cget("text")
        window.data_box.invoke()
        assert f"Delete {paths.journal}" not in window.body.cget("text")

        pump_until(root, lambda: window.arming.armed)  # the button arms a moment after the list changed
        window.uninstall_button.invoke()
        pump_until(root, lambda: window.heading.cget("text") == "Cowork Terminal is uninstalled.")
        assert json.loads(config.read_text())["mcpServers"] == OTHER_SERVERS
        assert not autostart.is_enabled()
        assert paths.journal.exists(), "the data stays when the box is not ticked"
        assert "pip uninstall cowork-terminal" in window.body.cget("text").splitlines()[-1]
        assert "--data" not in window.body.cget("text"), "said in the window that has the box: no option's name"
        assert window.cancel_button.cget("text") == "Close"
    finally:
        if root.winfo_exists():
            root.destroy()


def test_the_uninstall_button_waits_until_the_list_is_shown(display: str, paths: AppPaths, fake_home: Path) -> None:
    root = tk.Tk()
    try:
        window = UninstallWindow(root, paths)
        assert window.uninstall_button.instate(["disabled"])
        window.uninstall_button.invoke()  # a click before the list: nothing happens
        assert autostart.is_enabled()
    finally:
        root.destroy()


def test_with_nothing_set_up_the_window_says_what_stays_without_the_command_lines_option(
    display: str, paths: AppPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "(delete them with --data)" stood beside the box that deletes them (issue 24, item 7)."""
    monkeypatch.setenv("HOME", str(tmp_path / "user-home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "user-home" / ".config"))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    Journal(paths).close()
    root = tk.Tk()
    try:
        window = UninstallWindow(root, paths)
        window.start()
        pump_until(root, lambda: window.heading.cget("text") == "Nothing of Cowork Terminal is set up for you here.")
        text = window.body.cget("text")
        assert f"Kept: your command history and logs in {paths.data_dir}" in text and "--data" not in text
        with contextlib.suppress(AssertionError):  # mapped once X has answered: a moment after the text
            pump_until(root, window.data_box.winfo_ismapped, timeout_s=5)
        assert window.data_box.winfo_ismapped(), "the box that deletes them is right there"
    finally:
        root.destroy()
