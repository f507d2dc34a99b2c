"""A log window the tray started: its buttons speak to the tray, and it shows the tray's pause."""

from __future__ import annotations

import io
import json
import os
import time
import tkinter as tk

import pytest

from app.core.journal.store import Journal
from app.core.paths import AppPaths
from app.ui.windows.controls import TrayLineControls
from app.ui.windows.link import TrayLine
from app.ui.windows.log_window import ON_TITLE, PAUSED_TITLE, LogWindow

pytestmark = pytest.mark.gui
WAIT_S = 8.0


def pump_until(window: LogWindow, condition) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, "the window did not show it in time"
        window.root.update()
        time.sleep(0.01)


def test_the_window_shows_the_trays_pause_not_the_files_and_its_clicks_go_to_the_tray(
    display: str, paths: AppPaths
) -> None:
    to_window_r, to_window_w = os.pipe()
    said = io.BytesIO()
    with Journal(paths) as journal:
        journal.set_paused(False)  # the file says "on", as a program that rewrote it would leave it
    line = TrayLine(stdin=os.fdopen(to_window_r, "rb"), stdout=said)
    root = tk.Tk(className="cowork-terminal-test")
    window = LogWindow(root, Journal.open(paths), controls=TrayLineControls(line))
    try:
        pump_until(window, lambda: window.state_label.cget("text") == ON_TITLE)
        os.write(to_window_w, json.dumps({"op": "state", "paused": True}).encode() + b"\n")
        pump_until(window, lambda: window.state_label.cget("text") == PAUSED_TITLE)
        window.toggle_pause()  # the user's click on Resume
        assert json.loads(said.getvalue().splitlines()[-1]) == {"op": "pause", "paused": False}
        assert window.state_label.cget("text") == PAUSED_TITLE, "nothing changes until the tray says so"
    finally:
        os.close(to_window_w)
        window.close()
