"""Quitting the tray while commands run: the user is asked first, and quitting ends them."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from app.core import liveness
from app.core.channel.transport import address_for, connect
from app.core.channel.wire import Channel
from app.core.paths import AppPaths
from app.ui.tray.app import TrayApp
from tests.clicks import CONFIRM_TITLE, click_yes, press, shown_window
from tests.desktop_env import wait_for
from tests.tray_in_process import in_process_tray  # noqa: F401 - the fixture `tray`

pytestmark = pytest.mark.gui


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


def a_held_command(paths: AppPaths) -> Channel:
    """A server with one command held for the user's answer: nothing of it runs."""
    channel, _peer = connect(address_for(paths))
    channel.send({"op": "hello", "role": "server", "seq": 0, "headless": False, "lock_key": "quit-held"})
    assert channel.receive(5)["op"] == "ack"
    row = {"command": "rm -rf build", "cwd": "/tmp", "status": "waiting", "reason": "deletes files"}
    channel.send({"op": "begin", "seq": 1, "row": row})
    assert channel.receive(5)["op"] == "ack"
    return channel


def test_quit_does_not_count_a_held_command_that_never_ran_as_running(tray: TrayApp, paths: AppPaths) -> None:
    server = a_held_command(paths)
    wait_for(lambda: tray.hub.pending_holds())
    tray.hub.tick()
    assert tray.hub.running_count() == 0, "a command waiting for the user's answer is not running"
    tray.pystray_item("quit")(tray.icon)
    wait_for(tray._quit.is_set, timeout_s=3)  # no "1 command is running" question: it quits at once
    server.close()


def test_the_quit_question_does_not_warn_the_person_who_clicked_quit(
    tray: TrayApp, paths: AppPaths, tmp_path: Path, display: str
) -> None:
    import json
    import sys
    import tkinter as tk

    from app.ui.windows.confirm_window import ConfirmWindow
    from tests.test_welcome import texts
    from tests.window_pipes import TrayEnd

    asked = tmp_path / "asked.json"
    # The confirm window's process, replaced by one that keeps what the tray asked and says no.
    no = json.dumps({"op": "answer", "yes": False})
    keep = f"import sys; open({str(asked)!r}, 'w').write(sys.stdin.readline()); print({no!r})"
    tray.confirm_command = [sys.executable, "-c", keep]
    server = a_running_command(paths)
    tray.pystray_item("quit")(tray.icon)
    wait_for(lambda: asked.exists() and asked.read_text())
    question = json.loads(asked.read_text())
    assert "1 command is running" in question["text"]
    root = tk.Tk()
    try:
        _end, line = TrayEnd.with_line()
        ConfirmWindow(root, line, {k: str(v) for k, v in question.items()})
        root.update()
        shown = texts(root)
        assert "If you did not ask for this, say no." not in shown, shown
        assert any("Stop it and quit" in text for text in shown)
        root.destroy()
        root = tk.Tk()
        from_cli = {**question, "yours": "False", "text": "Resume host access?"}
        ConfirmWindow(root, TrayEnd.with_line()[1], from_cli)
        root.update()
        assert "If you did not ask for this, say no." in texts(root), "a question another program asked still warns"
    finally:
        root.destroy()
    assert not tray._quit.is_set()
    server.close()


def test_the_menu_names_a_connected_agent_as_people_know_it_not_by_its_handshake_id(
    tray: TrayApp, paths: AppPaths
) -> None:
    server_lock = liveness.try_hold(paths.server_lock("names"))  # alive, as a real server's lock says
    channel, _peer = connect(address_for(paths))
    channel.send({"op": "hello", "role": "server", "seq": 0, "headless": False, "lock_key": "names"})
    assert channel.receive(5)["op"] == "ack"
    channel.send({"op": "client", "seq": 1, "name": "claude-ai", "version": "0.14.10"})  # as Claude Desktop says
    assert channel.receive(5)["op"] == "ack"

    def server_line() -> str | None:
        try:
            return tray.pystray_item("server:0").text
        except KeyError:  # the menu follows the journal at the monitor's next poll
            return None

    line = wait_for(lambda: (text := server_line()) and "An AI agent" not in text and text)
    assert line.startswith("Claude Desktop · since "), line
    assert "claude-ai" not in line
    channel.close()
    assert server_lock is not None


def test_claude_coworks_servers_are_named_claude_cowork() -> None:
    from app.core.claude.names import friendly_client_name

    assert friendly_client_name("claude-cowork") == "Claude Cowork"
    assert friendly_client_name("local-agent-mode") == "Claude Cowork"
    assert friendly_client_name("claude-code") == "Claude Code"
    assert friendly_client_name("cowork-terminal-check") == "cowork-terminal-check", "our own check is not Cowork"


def test_pause_for_30_minutes_pauses_now_and_the_tray_resumes_by_itself(tray: TrayApp) -> None:
    tray.pystray_item("pause-for:30m")(tray.icon)
    wait_for(lambda: tray.hub.state.paused)
    assert tray.paused_until is not None and 1790 < tray.paused_until - time.time() <= 1800
    wait_for(lambda: tray.pystray_item("status").text.startswith("Paused until "))
    tray.paused_until = time.time() - 1  # the half hour has passed
    wait_for(lambda: not tray.hub.state.paused)
    wait_for(lambda: ("Host access resumed", "The pause you chose has ended.") in tray.notifier.history)
    assert tray.pystray_item("status").text != "Paused: Claude's commands are refused"


def test_a_timed_pause_never_lifts_a_pause_someone_asked_for_since(tray: TrayApp) -> None:
    tray.pystray_item("pause-for:1h")(tray.icon)
    wait_for(lambda: tray.hub.state.paused)
    tray.hub.set_paused(True, by="a request")  # `cowork-terminal pause`, or a program: a tightening
    tray.paused_until = time.time() - 1
    wait_for(lambda: tray.paused_until is None)  # the timer saw it and let go
    time.sleep(0.5)
    assert tray.hub.state.paused, "the timer resumes only the pause its own click set"
    tray.pystray_item("pause")(tray.icon)  # only a click on the switch lifts it
    wait_for(lambda: not tray.hub.state.paused)


def test_the_menus_recent_activity_shows_a_denied_command_as_denied_by_you(tray: TrayApp, paths: AppPaths) -> None:
    from app import __version__

    server = a_held_command(paths)
    [hold] = wait_for(lambda: tray.hub.pending_holds())
    tray.hub.decide(hold.command_id, allowed=False, by="user (approval prompt)")  # the user's Deny
    outcome = {"status": "refused", "reason": "denied by user (approval prompt)"}  # as the server closes it
    server.send({"op": "finish", "seq": 2, "id": hold.command_id, "outcome": outcome})

    def recent() -> list[str]:
        try:
            return [item.text for item in tray.pystray_item("recent").submenu.items]
        except KeyError:
            return []

    [line] = wait_for(lambda: [t for t in recent() if "rm -rf build" in t and "Denied" in t])
    assert "⊘ Denied by you" in line
    assert tray.pystray_item("about").text == f"About Cowork Terminal {__version__}"
    server.close()


def test_a_click_on_pause_drawn_unticked_pauses_even_if_a_pause_landed_while_the_menu_was_open(tray: TrayApp) -> None:
    """A review, 2026-12-05: the switch's click took its meaning from the state at the click, so a
    pause from the CLI landing while the menu was open turned the person's "Pause" into a resume."""
    item = tray.pystray_item("pause")
    assert item.checked is False  # the backend draws the menu: "Pause host access", unticked
    tray.hub.set_paused(True, by="a request")  # `cowork-terminal pause`, while the menu is open
    wait_for(lambda: tray.state.paused)
    item(tray.icon)  # the click on what the person saw
    time.sleep(0.5)
    wait_for(lambda: tray.settle())
    assert tray.hub.state.paused, "their click meant pause: host access stays paused"
    assert tray.pystray_item("pause").checked is True  # drawn again, ticked
    tray.pystray_item("pause")(tray.icon)  # now a click on the ticked switch resumes
    wait_for(lambda: not tray.hub.state.paused)
