"""The Settings window: each choice with one plain sentence, and the tray applying what it says."""

from __future__ import annotations

import json
import os
import pty
import sys
import time
import tkinter as tk
from pathlib import Path
from types import ModuleType

import pytest

from app.ui.tray.app import TrayApp
from app.ui.windows import confirm_window, settings_window
from app.ui.windows.settings_window import SettingsWindow
from tests.clicks import ARMED_S, on_screen, press, shown_window
from tests.desktop_env import pump_until, wait_for
from tests.stdio_client import STOP_DEADLINE_S
from tests.test_welcome import texts
from tests.tray_in_process import in_process_tray  # noqa: F401 - the fixture `tray`

pytestmark = pytest.mark.gui


def test_each_choice_has_one_plain_sentence_and_a_click_says_what_was_chosen(display: str) -> None:
    root = tk.Tk()
    sent: list[dict] = []
    try:
        window = SettingsWindow(root, sent.append)
        window.show({"approval_mode": "destructive", "output_budget": "30000", "autostart": True})
        root.update()
        shown = texts(root)
        for words in (
            "Ask before dangerous commands",
            "Everyday commands run at once; anything that deletes, overwrites or changes the system waits for your OK.",
            "Nothing runs until you say yes. The safest choice, and the most clicks.",
            "Enough for most commands. Longer output is kept in a file that Claude can read.",
            "Claude can use this computer only while Cowork Terminal runs.",
        ):
            assert words in shown, words
        assert window.mode.get() == "destructive" and window.autostart.get() is True
        pump_until(root, lambda: window.arming.armed)  # the choices take clicks a moment after they show
        window.choices[("approval_mode", "all")].invoke()
        window.choices[("autostart", "")].invoke()
        assert sent == [
            {"op": "set", "key": "approval_mode", "value": "all"},
            {"op": "set", "key": "autostart", "value": "off"},
        ]
    finally:
        root.destroy()


# The settings window's process, replaced by one that keeps what the tray tells it and clicks once.
CLICKER = """
import json, sys
heard = open(sys.argv[1], "a")
heard.write(sys.stdin.readline()); heard.flush()
print(json.dumps({"op": "set", "key": sys.argv[2], "value": sys.argv[3]}), flush=True)
heard.write(sys.stdin.readline()); heard.flush()
"""


def test_a_click_in_the_settings_window_changes_the_setting_and_the_window_is_told(
    tray: TrayApp, tmp_path: Path
) -> None:
    heard = tmp_path / "heard.jsonl"
    tray.settings_command = [sys.executable, "-c", CLICKER, str(heard), "approval_mode", "all"]
    tray.pystray_item("settings")(tray.icon)
    wait_for(lambda: tray.hub.state.approval_mode == "all")
    lines = wait_for(lambda: heard.exists() and len(heard.read_text().splitlines()) == 2 and heard.read_text())
    first, after = (json.loads(line) for line in lines.splitlines())
    assert first["approval_mode"] == "destructive" and after["approval_mode"] == "all"


def test_a_value_the_window_does_not_offer_changes_nothing(tray: TrayApp, tmp_path: Path) -> None:
    heard = tmp_path / "heard.jsonl"
    tray.settings_command = [sys.executable, "-c", CLICKER, str(heard), "approval_mode", "sometimes"]
    tray.pystray_item("settings")(tray.icon)
    lines = wait_for(lambda: heard.exists() and len(heard.read_text().splitlines()) == 2 and heard.read_text())
    assert json.loads(lines.splitlines()[1])["approval_mode"] == "destructive", "told what holds, unchanged"
    assert tray.hub.state.approval_mode == "destructive"


def test_the_users_keys_in_the_real_settings_window_ask_less_and_escape_closes_it(tray: TrayApp, display: str) -> None:
    """The window the tray starts (its own process, the tray's settings on its stdin): the user's own
    keys choose "never ask", a loosening, which the tray applies; Escape closes the window."""
    tray.pystray_item("settings")(tray.icon)
    window = shown_window(display, "Cowork Terminal: settings")
    time.sleep(ARMED_S)  # the choices take keys a moment after the tray's settings arrive
    press(display, window, "Tab", "Tab", "Tab", "space")  # the third choice of "Ask before running"
    wait_for(lambda: tray.hub.state.approval_mode == "never")
    press(display, window, "Escape")
    opened = tray.tray_windows._settings
    assert opened is not None
    assert opened.process.wait(timeout=STOP_DEADLINE_S) == 0
    assert not on_screen(display, "Cowork Terminal: settings")


@pytest.mark.parametrize("window", [settings_window, confirm_window])
def test_a_window_started_by_hand_in_a_terminal_says_the_app_opens_it(
    window: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    terminal, child_end = pty.openpty()
    try:
        with open(child_end, closefd=False) as typed:
            monkeypatch.setattr(sys, "stdin", typed)
            assert window.main([]) == 2
        monkeypatch.setattr(sys, "stdin", None)  # a windowed build started with no console at all
        assert window.main([]) == 2
    finally:
        os.close(child_end)
        os.close(terminal)
    said = capsys.readouterr().err.splitlines()
    assert len(said) == 2 and said[0] == said[1]
    assert said[0].startswith("cowork-terminal: the Cowork Terminal app opens this window")


def test_every_window_has_the_same_modern_look_on_x11_not_tks_dated_default(display: str) -> None:
    from tkinter import ttk

    from app.ui.windows.approval_prompt import ApprovalPrompt
    from app.ui.windows.confirm_window import ConfirmWindow
    from tests.window_pipes import TrayEnd

    builders = (
        lambda root: SettingsWindow(root, lambda _message: None),
        lambda root: ConfirmWindow(root, TrayEnd.with_line()[1], {"text": "Resume host access?"}),
        lambda root: ApprovalPrompt(root, TrayEnd.with_line()[1]),
    )
    for build in builders:
        root = tk.Tk()
        try:
            build(root)
            assert ttk.Style(root).theme_use() == "clam"
        finally:
            root.destroy()
