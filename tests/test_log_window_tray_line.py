"""A log window the tray started: its buttons speak to the tray, it shows the tray's pause, and it
ends cleanly when the user closes it while the tray still holds its line."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
import tkinter as tk

import pytest

from app.core.journal.store import Journal
from app.core.paths import AppPaths
from app.ui.windows.controls import TrayLineControls
from app.ui.windows.link import MAX_LINE_BYTES, PipedWindow, TrayLine
from app.ui.windows.log_window import ON_TITLE, PAUSED_TITLE, LogWindow
from tests.clicks import press, shown_window
from tests.stdio_client import STOP_DEADLINE_S

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


def test_closing_the_log_window_the_tray_started_ends_it_cleanly_while_the_tray_holds_its_line(
    display: str, paths: AppPaths
) -> None:
    """Its reader thread waits on stdin all along: that wait must not make the interpreter abort
    as the window's process exits (it did: SIGABRT, "could not acquire lock for <stdin> at
    interpreter shutdown"; on macOS a crash report each time the user closed the window)."""
    ended: list[int] = []
    window = PipedWindow(
        [sys.executable, "-I", "-m", "app", "log-window", "--tray-line"],
        lambda _message: None,
        stderr=subprocess.PIPE,
        on_exit=ended.append,
    )
    try:
        press(display, shown_window(display, "Cowork Terminal"), "ctrl+w")  # the user closes it
        assert window.process.wait(timeout=STOP_DEADLINE_S) == 0
        assert window.process.stderr is not None
        assert "Fatal Python error" not in window.process.stderr.read().decode()
    finally:
        window.close()


def test_the_line_from_the_tray_drops_a_line_too_long_whole_and_reads_on() -> None:
    to_window_r, to_window_w = os.pipe()
    line = TrayLine(stdin=os.fdopen(to_window_r, "rb"), stdout=io.BytesIO())
    too_long = json.dumps({"op": "state", "x": "y" * MAX_LINE_BYTES}).encode()
    for part in (b'{"op": "first"}\n' + too_long[:1000], too_long[1000:] + b"\n", b'{"op": "last"}'):
        os.write(to_window_w, part)
    os.close(to_window_w)  # the tray closes the line; its last message had no newline yet
    heard = [line.incoming.get(timeout=WAIT_S) for _ in range(3)]
    assert heard == [{"op": "first"}, {"op": "last"}, None]
