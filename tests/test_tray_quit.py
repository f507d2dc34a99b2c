"""Quitting the tray while commands run: the user is asked first, and quitting ends them."""

from __future__ import annotations

import time
from pathlib import Path
from types import ModuleType

import pytest

from app.core import liveness
from app.core.channel.transport import address_for, connect
from app.core.channel.wire import Channel
from app.core.paths import AppPaths
from app.ui.tray import platforms as tray_platform
from app.ui.tray.app import TrayApp
from tests.clicks import CONFIRM_TITLE, click_yes, press, shown_window
from tests.desktop_env import make_fake_desktop, wait_for

pytestmark = pytest.mark.gui


@pytest.fixture
def tray(paths: AppPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path, display: str):
    make_fake_desktop(tmp_path, monkeypatch)
    monkeypatch.setenv("PYSTRAY_BACKEND", "dummy")
    pystray: ModuleType = tray_platform.load_pystray()
    app = TrayApp(paths, liveness.try_hold(paths.tray_lock), pystray)
    app.start()
    assert app.settle()
    yield app
    app.shutdown()


def a_running_command(paths: AppPaths) -> Channel:
    """A server (this test, speaking the servers' protocol) with one command running. (A real
    server would not obey this in-process tray: pytest is not Cowork Terminal.)"""
    channel, _peer = connect(address_for(paths))
    channel.send({"op": "hello", "role": "server", "seq": 0, "headless": False, "lock_key": "quit-test"})
    assert channel.receive(5)["op"] == "ack"
    channel.send({"op": "begin", "seq": 1, "row": {"command": "sleep 600", "cwd": "/tmp", "status": "running"}})
    assert channel.receive(5)["op"] == "ack"
    return channel


def closing_message(channel: Channel) -> str | None:
    while True:
        message = channel.receive(5)
        if message is None:
            return None
        if message["op"] == "closing":
            return message["reason"]


def test_quit_from_the_menu_asks_first_while_a_command_runs_and_ends_it_after_yes(
    tray: TrayApp, paths: AppPaths, display: str
) -> None:
    server = a_running_command(paths)
    tray.pystray_item("quit")(tray.icon)
    press(display, shown_window(display, CONFIRM_TITLE), "Escape")  # "Cancel"
    time.sleep(0.5)
    assert not tray._quit.is_set(), "a No keeps the tray and the command"
    tray.pystray_item("quit")(tray.icon)
    click_yes(display, CONFIRM_TITLE)  # "Stop and quit"
    wait_for(tray._quit.is_set)
    tray.shutdown()
    assert closing_message(server) == "Cowork Terminal (the app) stopped", "servers are told to end what runs"
    server.close()
