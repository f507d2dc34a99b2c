"""The tray glue: pystray items clicked for real against a temporary app home and a fake Claude folder,
real `serve` processes, and the tray process itself (dummy backend, and xorg under Xvfb). What the
CLI's pause does to a command the tray runs is shown with the tray's hub and a server bound to it in
this process (tests/in_process_server.py)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from unittest.mock import ANY

import anyio
import pytest
from desktop_env import FakeDesktop, make_fake_desktop, serve_params, wait_for
from mcp import Client
from mcp_types import Implementation

from app.core import app_log, liveness, settings
from app.core.authority.hub import Hub
from app.core.channel.client import current_tray_state
from app.core.channel.transport import address_for
from app.core.channel.transport import connect as connect_channel
from app.core.claude import config as cc
from app.core.execution.bash_resolver import BASH_PATH_ENV, BashNotFoundError
from app.core.install import autostart
from app.core.journal.store import Journal, Status
from app.core.messages import PROMPT_DECIDED_BY
from app.core.paths import HOME_ENV, AppPaths
from app.core.self_command import app_argv
from app.ui.icons import load_icon
from app.ui.tray import app as tray
from app.ui.tray import loop, menu
from app.ui.tray import platforms as tray_platform
from app.ui.tray.app import TrayApp
from tests import xvfb
from tests.clicks import PROMPT_TITLE, on_screen, shown_window, xdotool
from tests.fake_claude import user_servers, write_user_servers
from tests.in_process_server import serving
from tests.python_source import parse_file
from tests.stdio_client import FIRST_CALL_DEADLINE_S, STOP_DEADLINE_S, live_processes, run
from tests.tray_process import running_tray, wait_for_tray

# Icon and tooltip follow a state change within half a second: bench/latency_bench.py measures that
# (200 ms median). The tests check that they follow, with a deadline only a broken tray misses.
FOLLOW_DEADLINE_S = 5.0
PROCESS_START_S = 15.0
PROCESS_STOP_S = 5.0

# A stand-in log window: says it opened, then stays open like a window would.
WINDOW_SCRIPT = "import pathlib, sys, time; pathlib.Path(sys.argv[1]).write_text('opened'); time.sleep(60)"


@pytest.fixture
def pystray(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.setenv("PYSTRAY_BACKEND", "dummy")  # no display in this process; the menu is data anyway
    module = tray_platform.load_pystray()
    assert tray_platform.backend_of(module) == "dummy"
    return module


@pytest.fixture
def desktop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path) -> FakeDesktop:
    return make_fake_desktop(tmp_path, monkeypatch)


@pytest.fixture
def code_desktop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path) -> FakeDesktop:
    """A fake desktop where Claude Code's `claude` CLI is installed too."""
    return make_fake_desktop(tmp_path, monkeypatch, claude_code=True)


def start_tray(paths: AppPaths, pystray: ModuleType, window_marker: Path, **kwargs: object) -> TrayApp:
    lock = liveness.try_hold(paths.tray_lock)
    assert lock is not None
    kwargs.setdefault("welcome_command", [sys.executable, "-c", WINDOW_SCRIPT, str(window_marker) + ".welcome"])
    app = TrayApp(
        paths, lock, pystray, log_window_command=[sys.executable, "-c", WINDOW_SCRIPT, str(window_marker)], **kwargs
    )
    app.start()
    assert app.settle(), "the first look at the machine did not finish"
    return app


@pytest.fixture
def window_marker(tmp_path: Path) -> Path:
    return tmp_path / "log-window-opened"


@pytest.fixture
def app(paths: AppPaths, pystray: ModuleType, desktop: FakeDesktop, window_marker: Path):
    running = start_tray(paths, pystray, window_marker)
    yield running
    running.shutdown()


OLD_INSTALL = {"command": "/old/cowork-terminal", "args": ["serve"]}
FOREIGN_ENTRY = {"command": "npx", "args": ["-y", "cowork-terminal-mcp"]}


def write_old_install_entry(desktop: FakeDesktop) -> None:
    """Claude Desktop's config with our entry pointing at an install that has since moved."""
    desktop.desktop_config.write_text(json.dumps({"mcpServers": {"cowork-terminal": OLD_INSTALL}}))


def click(app: TrayApp, key: str) -> None:
    """Click the pystray item exactly as the backend would, then wait until the tray shows the result."""
    app.pystray_item(key)(app.icon)
    assert app.settle()


def titles(app: TrayApp) -> list[str]:
    return [title for title, _ in app.notifier.history]


def messages(app: TrayApp) -> str:
    return "\n".join(message for _, message in app.notifier.history)


# --- the pause switch and the icon ----------------------------------------------------------------


def test_pausing_from_the_menu_writes_the_journal_and_the_icon_follows(app: TrayApp, paths: AppPaths) -> None:
    item = app.pystray_item("pause")
    assert (item.text, item.checked) == ("Pause host access", False)
    item(app.icon)
    assert app.settle()
    with Journal(paths) as journal:
        assert journal.is_paused()
    assert item.checked is True, "the same item object reads the new state"
    assert app.icon_state == menu.PAUSED
    assert app.icon.title == "Cowork Terminal: Paused: Claude's commands are refused"
    assert app.icon.icon.tobytes() == load_icon(menu.PAUSED, tray.ICON_SIZE_PX).tobytes()
    assert app.pystray_item("status").text == "Paused: Claude's commands are refused"

    click(app, "pause")
    with Journal(paths) as journal:
        assert not journal.is_paused()
    assert app.icon_state != menu.PAUSED


def test_a_pause_set_elsewhere_reaches_icon_and_tooltip(app: TrayApp, paths: AppPaths) -> None:
    for paused, state in ((True, menu.PAUSED), (False, menu.IDLE)):  # no client yet: idle, not "waiting"
        # What the tray's hub does for `cowork-terminal pause`, the log window's switch or a confirmed resume.
        app.hub.set_paused(paused, by="a request")
        wait_for(lambda state=state: app.icon_state == state, timeout_s=FOLLOW_DEADLINE_S, interval_s=0.01)
        assert ("Paused" in app.icon.title) is paused
        with Journal(paths) as journal:
            assert journal.is_paused() is paused, "the tray records it"


def test_icon_updates_go_through_the_main_thread_marshal_when_the_backend_needs_one(
    paths: AppPaths, pystray: ModuleType, desktop: FakeDesktop, window_marker: Path
) -> None:
    main_thread: queue.Queue = queue.Queue()  # stands in for AppKit's main run loop (macOS)
    app = start_tray(paths, pystray, window_marker, marshal=main_thread.put)
    try:
        while not main_thread.empty():
            main_thread.get()()
        before = app.icon.title
        app.hub.set_paused(True, by="a request")  # as the hub's reader thread does for `cowork-terminal pause`
        update = main_thread.get(timeout=FOLLOW_DEADLINE_S)
        assert app.icon.title == before, "nothing touched the icon outside the main thread"
        update()  # the main thread runs it
        assert "Paused" in app.icon.title
    finally:
        app.shutdown()


# --- first run, Claude clients ----------------------------------------------------------------------


def test_first_run_with_no_client_says_so_and_opens_the_welcome_window(
    app: TrayApp, desktop: FakeDesktop, window_marker: Path
) -> None:
    assert app.pystray_item("status").text == "Not connected to Claude yet"
    assert app.icon_state == menu.IDLE, "the waiting-for-you icon is kept for commands that wait"
    wait_for(lambda: Path(str(window_marker) + ".welcome").exists())
    assert "Connect Cowork Terminal to Claude" not in titles(app), "the Welcome window says it; no notice on top"
    with Journal(app.paths) as journal:
        assert journal.get_setting(settings.WELCOME_SHOWN) is True, "the next start does not open it again"


def test_a_later_start_with_no_client_names_the_menus_getting_started_item(
    paths: AppPaths, pystray: ModuleType, desktop: FakeDesktop, window_marker: Path
) -> None:
    with Journal(paths) as journal:
        journal.set_setting(settings.WELCOME_SHOWN, True)
    app = start_tray(paths, pystray, window_marker)
    try:
        assert not Path(str(window_marker) + ".welcome").exists()
        assert "Open Getting started… in this icon's menu." in messages(app)
        # The dummy backend has no notifications: the tray falls back to notify-send, quietly.
        sent = wait_for(lambda: desktop.calls("notify-send"))
        assert sent[0][:4] == ["notify-send", "--app-name=Cowork Terminal", "--", "Connect Cowork Terminal to Claude"]
    finally:
        app.shutdown()


def test_an_upgrade_with_claude_already_connected_does_not_open_the_welcome_window(
    paths: AppPaths, pystray: ModuleType, desktop: FakeDesktop, window_marker: Path
) -> None:
    desktop.desktop_config.write_text(json.dumps({"mcpServers": {"cowork-terminal": cc.this_app_entry()}}))
    app = start_tray(paths, pystray, window_marker)
    try:
        time.sleep(0.5)
        assert not Path(str(window_marker) + ".welcome").exists()
        assert "Connect Cowork Terminal to Claude" not in titles(app)
    finally:
        app.shutdown()


def answer_script(yes: bool) -> list[str]:
    """A stand-in for the confirm window: reads the question the tray sends, answers at once."""
    answer = json.dumps({"op": "answer", "yes": yes})
    return [sys.executable, "-c", f"import sys; sys.stdin.readline(); print({answer!r}, flush=True)"]


def test_connecting_and_disconnecting_claude_desktop_from_the_menu_edits_only_our_entry(
    paths: AppPaths, pystray: ModuleType, desktop: FakeDesktop, window_marker: Path
) -> None:
    theirs = {"preferences": {"menuBarEnabled": True}, "mcpServers": {"other": {"command": "other-server"}}}
    desktop.desktop_config.write_text(json.dumps(theirs))
    app = start_tray(paths, pystray, window_marker)
    app.confirm_command = answer_script(False)
    try:
        item = app.pystray_item("client:claude-desktop")
        assert item.text == "Claude Desktop: not connected · click to connect"

        item(app.icon)
        assert app.settle()
        written = desktop.read_desktop_config()
        assert written["preferences"] == theirs["preferences"]
        assert written["mcpServers"] == {"other": {"command": "other-server"}, "cowork-terminal": cc.this_app_entry()}
        assert written["mcpServers"]["cowork-terminal"]["env"] == {HOME_ENV: str(paths.data_dir)}
        assert app.pystray_item("client:claude-desktop").text == "Claude Desktop: connected"
        assert app.pystray_item("status").text == "Host access on · no agent connected"
        assert "Connected Claude Desktop. Quit and reopen Claude Desktop" in messages(app)
        assert app.pystray_item("check:claude-desktop").enabled

        disconnect = app.pystray_item("disconnect:claude-desktop")
        assert disconnect.text == "Disconnect Claude Desktop…"
        click(app, "disconnect:claude-desktop")  # the question is answered "Cancel"
        time.sleep(1.0)
        assert app.settle()
        assert "cowork-terminal" in desktop.read_desktop_config()["mcpServers"], "no silent disconnect"

        app.confirm_command = answer_script(True)  # now "Disconnect"
        click(app, "disconnect:claude-desktop")
        wait_for(lambda: "cowork-terminal" not in desktop.read_desktop_config().get("mcpServers", {}))
        assert app.settle()
        assert desktop.read_desktop_config() == theirs
        wait_for(lambda: app.pystray_item("client:claude-desktop").text.endswith("not connected · click to connect"))
        assert "Disconnected Claude Desktop." in messages(app)
    finally:
        app.shutdown()


def test_another_programs_entry_under_our_name_is_offered_for_replacement_and_replaced_by_a_click(
    paths: AppPaths, pystray: ModuleType, desktop: FakeDesktop, window_marker: Path
) -> None:
    desktop.desktop_config.write_text(json.dumps({"mcpServers": {"cowork-terminal": FOREIGN_ENTRY}}))
    app = start_tray(paths, pystray, window_marker)
    try:
        assert app.pystray_item("client:claude-desktop").text == "Claude Desktop: another program's entry"
        assert app.pystray_item("status").text != "Not connected to Claude yet"
        assert app.pystray_item("fix:claude-desktop").text == "Replace it with this app"
        click(app, "fix:claude-desktop")
        assert desktop.read_desktop_config()["mcpServers"]["cowork-terminal"] == cc.this_app_entry()
        assert "The previous file is kept as" in messages(app)
        assert list(desktop.desktop_config.parent.glob("*.bak"))
    finally:
        app.shutdown()


def test_at_start_the_tray_repairs_a_login_entry_and_a_claude_entry_that_name_a_missing_program(
    paths: AppPaths, pystray: ModuleType, desktop: FakeDesktop, window_marker: Path
) -> None:
    # What a user had before removing the .deb and unpacking the .tar.gz: both name /old/..., gone.
    old = {**OLD_INSTALL, "args": ["serve", "--headless"], "env": {"COWORK_TERMINAL_BASH": "/bin/bash"}}
    desktop.desktop_config.write_text(json.dumps({"mcpServers": {"other": {"command": "x"}, "cowork-terminal": old}}))
    autostart.enable("linux", os.environ, desktop.home, command=[OLD_INSTALL["command"], "tray"])
    app = start_tray(paths, pystray, window_marker)
    try:
        this_copy = os.path.abspath(sys.executable)
        assert autostart.read_command("linux", os.environ, desktop.home) == [this_copy, "-I", "-m", "app", "tray"]
        assert f"TryExec={this_copy}\n" in desktop.autostart_file.read_text()
        servers = desktop.read_desktop_config()["mcpServers"]
        assert servers["other"] == {"command": "x"}
        # The user's options stay (--headless); a variable the app does not write goes, since with it
        # the entry is not connected (issue 21): the backup keeps it.
        assert servers["cowork-terminal"] == cc.build_entry(False, this_copy, ["--headless"], str(paths.data_dir))
        assert servers["cowork-terminal"]["env"] == {HOME_ENV: str(paths.data_dir)}
        [backup] = cc.list_backups(desktop.desktop_config)
        assert json.loads(backup.read_text())["mcpServers"]["cowork-terminal"] == old
        notices = dict(app.notifier.history)
        assert notices["Start at login updated"] == (
            f"Start at login started /old/cowork-terminal (which no longer exists); it now starts this copy, "
            f"{this_copy}."
        )
        # What the repair dropped is named (a red team, 2026-12-06: it went unsaid).
        assert notices["Claude Desktop updated"].startswith(
            f"Claude Desktop started /old/cowork-terminal (which no longer exists); it now starts this copy, "
            f"{this_copy}. Settings Cowork Terminal did not write were left out: env COWORK_TERMINAL_BASH."
        ), notices["Claude Desktop updated"]
        assert "replace" not in app.pystray_item("client:claude-desktop").text  # no longer an old install's
        assert app.pystray_item("autostart").checked is True
    finally:
        app.shutdown()


def test_entries_that_already_run_this_copy_are_left_untouched_at_start(
    paths: AppPaths, pystray: ModuleType, desktop: FakeDesktop, window_marker: Path
) -> None:
    desktop.desktop_config.write_text(json.dumps({"mcpServers": {"cowork-terminal": cc.this_app_entry()}}))
    autostart.enable("linux", os.environ, desktop.home)
    before = (desktop.desktop_config.read_bytes(), desktop.autostart_file.read_bytes())
    app = start_tray(paths, pystray, window_marker)
    try:
        assert (desktop.desktop_config.read_bytes(), desktop.autostart_file.read_bytes()) == before
        assert cc.list_backups(desktop.desktop_config) == []
        assert not [t for t in titles(app) if t.endswith(" updated")]
    finally:
        app.shutdown()


def test_a_config_changed_outside_the_tray_shows_in_the_menu(app: TrayApp, desktop: FakeDesktop) -> None:
    assert app.pystray_item("client:claude-desktop").text.endswith("not connected · click to connect")
    desktop.desktop_config.write_text(json.dumps({"mcpServers": {"cowork-terminal": cc.this_app_entry()}}))
    wait_for(
        lambda: app.pystray_item("client:claude-desktop").text == "Claude Desktop: connected",
        timeout_s=loop.CLIENT_FILES_CHECK_S * 4,
    )


def test_an_entry_turned_headless_outside_the_tray_is_told_once_and_a_click_connects_it_again(
    app: TrayApp, desktop: FakeDesktop
) -> None:
    entry = cc.this_app_entry()
    headless = {**entry, "args": [*entry["args"], "--headless"]}
    desktop.desktop_config.write_text(json.dumps({"mcpServers": {"cowork-terminal": headless}}))
    told = "Claude Desktop can run commands without this app"
    wait_for(lambda: told in titles(app), timeout_s=loop.CLIENT_FILES_CHECK_S * 4)
    assert "while this app is not running, commands from Claude Desktop run with no pause switch" in messages(app)
    assert (
        "If you did not do this, open Connect to Claude in this icon's menu, then Claude Desktop and Update its "
        "entry." in messages(app)
    )
    wait_for(
        lambda: (
            app.pystray_item("client:claude-desktop").text == "Claude Desktop: connected, its entry needs an update"
        ),
        timeout_s=loop.CLIENT_FILES_CHECK_S * 4,
    )

    click(app, "fix:claude-desktop")
    assert desktop.read_desktop_config()["mcpServers"]["cowork-terminal"] == entry
    assert app.pystray_item("client:claude-desktop").text == "Claude Desktop: connected"
    assert titles(app).count(told) == 1


def test_our_entry_taken_over_by_another_program_while_the_tray_watches_is_told_and_a_click_takes_it_back(
    app: TrayApp, desktop: FakeDesktop
) -> None:
    entry = cc.this_app_entry()
    desktop.desktop_config.write_text(json.dumps({"mcpServers": {"cowork-terminal": entry}}))
    wait_for(
        lambda: app.pystray_item("client:claude-desktop").text == "Claude Desktop: connected",
        timeout_s=loop.CLIENT_FILES_CHECK_S * 4,
    )
    taken = {"command": "/tmp/agent-server", "args": ["--anything"]}
    desktop.desktop_config.write_text(json.dumps({"mcpServers": {"cowork-terminal": taken}}))
    told = "Claude Desktop no longer starts Cowork Terminal"
    wait_for(lambda: told in titles(app), timeout_s=loop.CLIENT_FILES_CHECK_S * 4)
    assert "Its settings now start /tmp/agent-server under Cowork Terminal's name" in messages(app)
    assert "then Claude Desktop and Replace it with this app." in messages(app)
    wait_for(
        lambda: app.pystray_item("client:claude-desktop").text == "Claude Desktop: another program's entry",
        timeout_s=loop.CLIENT_FILES_CHECK_S * 4,
    )

    click(app, "fix:claude-desktop")
    assert desktop.read_desktop_config()["mcpServers"]["cowork-terminal"] == entry
    assert titles(app).count(told) == 1


def test_the_tray_tells_of_a_headless_entry_at_start_and_of_a_taken_over_one_only_while_it_watched() -> None:
    entry = cc.this_app_entry()
    ours = cc.ClientStatus("claude-desktop", "Claude Desktop", True, "/c.json", None, cc.CURRENT, entry, "", "")
    headless = dataclasses.replace(ours, entry={**entry, "args": [*entry["args"], "--headless"]}, state=cc.CHANGED)
    foreign = dataclasses.replace(
        ours, entry={"command": "npx", "args": ["-y", "cowork-terminal-mcp"]}, state=cc.FOREIGN
    )
    assert cc.entry_news(None, ours) is None
    assert cc.entry_news(None, headless) == cc.HEADLESS_ENTRY, "at start too"
    assert cc.entry_news(cc.EntrySeen(cc.CURRENT, False), headless) == cc.HEADLESS_ENTRY
    assert cc.entry_news(cc.EntrySeen(cc.CHANGED, True), headless) is None, "once"
    assert cc.entry_news(None, foreign) is None, "the seed's package may rightly be there: the menu shows it"
    assert cc.entry_news(cc.EntrySeen(cc.CURRENT, False), foreign) == cc.TAKEN_OVER
    assert cc.entry_news(cc.EntrySeen(cc.FOREIGN, False), foreign) is None


def test_only_our_entry_with_serve_headless_counts_as_headless() -> None:
    entry = cc.this_app_entry()
    assert not cc.starts_headless(entry)
    assert cc.starts_headless({**entry, "args": [*entry["args"], "--headless"]})
    assert not cc.starts_headless({"command": "other-server", "args": ["serve", "--headless"]}), "not ours"
    assert not cc.starts_headless({"command": "/x/cowork-terminal", "args": ["--headless", "serve"]}), "not serve's"
    assert not cc.starts_headless(None)


def test_claude_code_is_read_from_its_file_and_connected_through_its_own_cli_only_at_a_click(
    paths: AppPaths, pystray: ModuleType, code_desktop: FakeDesktop, window_marker: Path
) -> None:
    """The tray runs no `claude` of its own accord: a command may have replaced that program (it lies
    in a folder of the user's), and `claude mcp get` would start every server Claude Code lists."""
    desktop = code_desktop
    write_user_servers(desktop.claude_code_file, {"github": {"command": "npx", "args": ["github-mcp"]}})
    app = start_tray(paths, pystray, window_marker)
    try:
        item = app.pystray_item("client:claude-code")
        assert (item.text, item.enabled) == ("Claude Code: not connected · click to connect", True)
        assert desktop.calls("claude") == [], "read from Claude Code's file, not asked of its CLI"
        item(app.icon)
        assert app.settle()
        assert desktop.calls("claude") == [["claude", "mcp", "add-json", "--scope", "user", "cowork-terminal", ANY]], (
            "the user's click runs Claude Code's own CLI, once, and the look after it reads the file"
        )
        servers = user_servers(desktop.claude_code_file)
        assert servers["cowork-terminal"] == {"type": "stdio", **cc.this_app_entry()} and "github" in servers
        assert app.pystray_item("client:claude-code").text == "Claude Code: connected"
    finally:
        app.shutdown()


def test_claude_codes_entry_turned_headless_outside_the_tray_is_told_with_no_claude_run(
    paths: AppPaths, pystray: ModuleType, code_desktop: FakeDesktop, window_marker: Path
) -> None:
    """Claude Code's file is watched as Claude Desktop's is (a program, or `claude mcp add` typed in a
    terminal, may change it while the tray runs); reading it runs nothing."""
    desktop = code_desktop
    entry = cc.this_app_entry()
    write_user_servers(desktop.claude_code_file, {"cowork-terminal": {"type": "stdio", **entry}})
    app = start_tray(paths, pystray, window_marker)
    try:
        assert app.pystray_item("client:claude-code").text == "Claude Code: connected"
        headless = {"type": "stdio", **entry, "args": [*entry["args"], "--headless"]}
        write_user_servers(desktop.claude_code_file, {"cowork-terminal": headless})
        told = "Claude Code can run commands without this app"
        wait_for(lambda: told in titles(app), timeout_s=loop.CLIENT_FILES_CHECK_S * 4)
        wait_for(
            lambda: app.pystray_item("client:claude-code").text == "Claude Code: connected, its entry needs an update",
            timeout_s=loop.CLIENT_FILES_CHECK_S * 4,
        )
        assert desktop.calls("claude") == []
    finally:
        app.shutdown()


def test_pause_and_the_approval_mode_take_effect_at_once_while_a_slow_claude_call_runs(
    paths: AppPaths, pystray: ModuleType, code_desktop: FakeDesktop, window_marker: Path
) -> None:
    from app.core.policy import approval

    desktop = code_desktop
    app = start_tray(paths, pystray, window_marker)
    try:
        desktop.delay_claude(5)
        before = len(desktop.calls("claude"))
        app.pystray_item("client:claude-code")(app.icon)  # connecting calls `claude`, which now takes 5 s
        wait_for(lambda: len(desktop.calls("claude")) > before)  # the slow action is inside `claude`

        app.pystray_item("pause")(app.icon)
        app.pystray_item("approval:all")(app.icon)
        with Journal(paths) as journal:  # queued behind the 5 s `claude` call, these would miss the deadline
            wait_for(
                lambda: journal.is_paused() and approval.approval_mode(journal) is approval.ApprovalMode.ALL,
                timeout_s=4.0,
                interval_s=0.01,
            )
        wait_for(lambda: app.icon_state == menu.PAUSED, timeout_s=4.0, interval_s=0.01)
        assert app._pending > 0, "the slow action is still running"

        desktop.delay_claude(None)
        assert app.settle(timeout_s=30)
        assert app.pystray_item("client:claude-code").text == "Claude Code: connected", "the slow action finished too"
    finally:
        app.shutdown()


def test_check_connection_from_the_menu_runs_the_configured_server_and_reports(
    paths: AppPaths, pystray: ModuleType, desktop: FakeDesktop, window_marker: Path, tmp_path: Path
) -> None:
    # A real server obeys only a real tray process, never this test's in-process tray: the checked
    # entry points at a second app home, where one runs. The menu and the report are this tray's.
    checked_home = tmp_path / "checked-home"
    entry = cc.this_app_entry(environ={HOME_ENV: str(checked_home)})
    desktop.desktop_config.write_text(json.dumps({"mcpServers": {"cowork-terminal": entry}}))
    check_command = ["env", f"{HOME_ENV}={checked_home}", sys.executable, "-m", "app", "check"]
    with running_tray(checked_home):
        app = start_tray(paths, pystray, window_marker, check_command=check_command)
        try:
            check_from_the_menu(app)
        finally:
            app.shutdown()


def check_from_the_menu(app: TrayApp) -> None:
    app.pystray_item("check:claude-desktop")(app.icon)
    busy = wait_for(lambda: menu.find_entry(app.entries(), "busy"))
    assert busy.text == "Checking Claude Desktop..."
    assert app.settle(timeout_s=30)
    assert app.notifier.history[-1] == (  # not "connected": Claude Desktop has not been restarted yet
        "Ready for Claude Desktop",
        "Cowork Terminal started the way Claude Desktop will start it and ran a test command, but Claude Desktop "
        "has not connected yet. Quit Claude Desktop completely and open it again, then ask Claude “What is in my "
        "Downloads folder?”",
    )
    assert menu.find_entry(app.entries(), "busy") is None


def test_a_failed_check_is_reported_with_the_check_commands_own_words(
    paths: AppPaths, pystray: ModuleType, desktop: FakeDesktop, window_marker: Path
) -> None:
    app = start_tray(paths, pystray, window_marker)
    try:
        write_old_install_entry(desktop)  # after the start, which would have repaired it
        wait_for(lambda: "older install" in app.pystray_item("client:claude-desktop").text)
        click(app, "check:claude-desktop")
        title, message = app.notifier.history[-1]
        assert title == "Connection problem: Claude Desktop"
        assert "entry is stale" in message and "/old/cowork-terminal" in message
    finally:
        app.shutdown()


def test_a_check_that_does_not_answer_in_time_is_stopped_and_reported_as_such(
    paths: AppPaths, pystray: ModuleType, desktop: FakeDesktop, window_marker: Path, tmp_path: Path
) -> None:
    desktop.desktop_config.write_text(json.dumps({"mcpServers": {"cowork-terminal": cc.this_app_entry()}}))
    pid_file = tmp_path / "hung-check.pid"
    hung = f"import os, pathlib, time; pathlib.Path({str(pid_file)!r}).write_text(str(os.getpid())); time.sleep(60)"
    app = start_tray(paths, pystray, window_marker, check_command=[sys.executable, "-c", hung], check_timeout_s=1.0)
    try:
        started = time.monotonic()
        click(app, "check:claude-desktop")
        assert time.monotonic() - started < 5
        assert app.notifier.history[-1] == (
            "Connection problem: Claude Desktop",
            "The check of Claude Desktop did not finish within 1 s, so it was stopped. The app log has the details.",
        )
        with pytest.raises(ProcessLookupError):
            os.kill(int(pid_file.read_text()), 0)  # the hung check was ended (and reaped)
        assert menu.find_entry(app.entries(), "busy") is None
    finally:
        app.shutdown()


# --- start at login, folders, windows -------------------------------------------------------------


def test_start_at_login_is_switched_from_the_menu(app: TrayApp, desktop: FakeDesktop) -> None:
    item = app.pystray_item("autostart")
    assert (item.text, item.checked) == ("Start at login", False)
    item(app.icon)
    assert app.settle()
    entry = desktop.autostart_file.read_text()
    assert re.search(r"^Exec=.*-m app tray$", entry, re.MULTILINE), entry
    assert item.checked is True
    click(app, "autostart")
    assert not desktop.autostart_file.exists() and item.checked is False


def test_open_data_folder_asks_the_file_manager_on_the_session_bus_never_xdg_open(
    app: TrayApp, desktop: FakeDesktop, paths: AppPaths
) -> None:
    # xdg-open chooses the program by file associations in the home folder, which a command may write.
    click(app, "data-folder")
    [call] = wait_for(lambda: desktop.calls("gdbus"))
    assert call[call.index("--method") + 1] == "org.freedesktop.FileManager1.ShowFolders"
    assert call[-2:] == [f"['{paths.data_dir.as_uri()}']", ""] and desktop.calls("xdg-open") == []


def test_open_data_folder_with_no_file_manager_answering_names_the_folder_in_a_notice(
    app: TrayApp, desktop: FakeDesktop, paths: AppPaths
) -> None:
    desktop.add_program("gdbus", "#!/bin/sh\necho 'Error: GDBus.Error: ServiceUnknown' >&2\nexit 1\n")
    click(app, "data-folder")
    assert wait_for(lambda: ("Cowork Terminal", f"The data folder is {paths.data_dir}") in app.notifier.history)
    assert desktop.calls("xdg-open") == []


def test_the_activity_log_opens_once_reopening_replaces_it_and_quitting_closes_it(
    app: TrayApp, window_marker: Path
) -> None:
    click(app, "open-log")
    wait_for(window_marker.exists)
    (first,) = app.tray_windows.log_windows
    assert oct((app.paths.log_dir / "log-window.stderr.log").stat().st_mode & 0o777) == "0o600"
    window_marker.unlink()
    click(app, "open-log")
    wait_for(window_marker.exists)
    (second,) = app.tray_windows.log_windows
    assert not first.alive(), "one window at most: the old one was closed"
    app.shutdown()
    assert not second.alive(), "quitting the app closes its windows"


def test_reopening_the_activity_log_while_the_monitor_looks_at_the_windows_keeps_the_new_one_quietly(
    app: TrayApp, window_marker: Path
) -> None:
    """The monitor looks at the windows on its own thread (check_windows) while the menu reopens the
    log: the window the tray itself closed is no failure to tell the user about, and the new window
    stays the tray's (it gets the pause switch and the holds, and quitting closes it)."""
    stop = threading.Event()

    def look() -> None:
        while not stop.is_set():
            app.tray_windows.check_windows()

    looker = threading.Thread(target=look, daemon=True)
    looker.start()
    try:
        for _ in range(5):
            window_marker.unlink(missing_ok=True)
            click(app, "open-log")
            wait_for(window_marker.exists)
            (window,) = app.tray_windows.log_windows
            assert window.alive()
    finally:
        stop.set()
        looker.join()
    assert "The activity log could not open" not in titles(app), messages(app)
    app.shutdown()
    assert not window.alive(), "quitting the app closes its windows"


def test_quit_from_the_menu_ends_run_and_releases_the_tray_lock(
    paths: AppPaths, pystray: ModuleType, desktop: FakeDesktop, window_marker: Path
) -> None:
    app = TrayApp(
        paths,
        liveness.try_hold(paths.tray_lock),
        pystray,
        log_window_command=[sys.executable, "-c", WINDOW_SCRIPT, str(window_marker)],
    )
    runner = threading.Thread(target=app.run)
    runner.start()
    assert app.settle()
    assert liveness.is_held(paths.tray_lock)
    app.pystray_item("quit")(app.icon)
    runner.join(PROCESS_STOP_S)
    assert not runner.is_alive()
    assert not liveness.is_held(paths.tray_lock)


def test_a_missing_bash_shows_the_error_icon_and_says_what_to_install(
    paths: AppPaths, pystray: ModuleType, desktop: FakeDesktop, window_marker: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(BASH_PATH_ENV, "/nonexistent/bash")
    app = start_tray(paths, pystray, window_marker)
    try:
        assert app.icon_state == menu.PROBLEM
        assert app.pystray_item("status").text == "bash is missing: commands cannot run"
        assert titles(app) == ["bash is missing: commands cannot run"], "bash first, nothing else yet"
        assert "/nonexistent/bash" in messages(app)
    finally:
        app.shutdown()


def test_each_platform_gets_its_own_commands_and_advice() -> None:
    folder = Path("/data")
    assert tray_platform.open_folder_argv("darwin", folder) == ["/usr/bin/open", "/data"]
    assert tray_platform.open_folder_argv("win32", folder) == ["explorer.exe", str(folder)]
    found = {"gdbus": "/run/current-system/sw/bin/gdbus"}.get
    linux = tray_platform.open_folder_argv("linux", folder, found)
    assert linux[:4] == ["/run/current-system/sw/bin/gdbus", "call", "--session", "--dest"]
    assert linux[-2:] == ["['file:///data']", ""], "a file: URI, which quotes what GVariant would not take"
    missing = tray_platform.open_folder_argv("linux", Path("/it's here"), lambda name: None)
    assert missing[0] == "/usr/bin/gdbus", "fails to start rather than search PATH"
    assert missing[-2] == "['file:///it%27s%20here']"
    assert app_argv(True, "/app/cowork-terminal", "log-window") == ["/app/cowork-terminal", "log-window"]
    assert app_argv(False, "/venv/python", "log-window") == ["/venv/python", "-I", "-m", "app", "log-window"]
    assert "AppIndicator" in tray_platform.missing_tray_support("linux", "xorg")
    for platform, backend in (("linux", "appindicator"), ("linux", "gtk"), ("win32", "win32"), ("darwin", "darwin")):
        assert tray_platform.missing_tray_support(platform, backend) is None
    missing = BashNotFoundError("Git Bash was not found.", [])
    assert tray_platform.bash_problem(missing, "win32") == "Git Bash is missing: install Git for Windows"
    assert tray_platform.main_thread_marshal("xorg") is None
    no_display = tray_platform.no_icon_message("linux", {}, RuntimeError("x"))
    assert "DISPLAY is not set" in no_display and "connect --headless" in no_display
    assert "DISPLAY" not in tray_platform.no_icon_message("darwin", {}, ImportError("no AppKit"))


# --- against real servers ------------------------------------------------------------------------


def test_a_pause_asked_by_the_cli_stops_a_command_the_trays_hub_runs_for_its_server_at_once(
    home: Path, paths: AppPaths, hub: Hub
) -> None:
    """`cowork-terminal pause` (the real CLI) reaches the tray's hub, which ends a command it runs for
    a bound server at once. The hub and the server bound to it run in this process, as a tray's hub
    and its runner for that server do; a real tray and a real `serve` show the same through the
    tray's own channel in tests/test_tray_local_link.py."""

    async def scenario() -> tuple[dict, float]:
        async with serving(home, bound=True) as client:
            outcome: dict = {}

            async def call() -> None:
                outcome.update(await run(client, {"command": "sleep 30"}))
                outcome["at"] = time.monotonic()

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(call)
                with anyio.fail_after(FIRST_CALL_DEADLINE_S):
                    while not running_commands(paths):
                        await anyio.sleep(0.02)
                clicked = time.monotonic()
                # The menu's Pause and this both end in the tray's hub (the menu: test above).
                paused = await anyio.to_thread.run_sync(lambda: app_cli(home, "pause"))
                assert paused.returncode == 0, paused.stderr
            return outcome, outcome["at"] - clicked

    outcome, took = anyio.run(scenario)
    assert hub.state.paused, "the tray's own state says paused"
    assert outcome["exitCode"] is None and outcome["note"].startswith(
        "stopped because the user paused host access. Commands are refused until the user resumes"
    )
    assert took < STOP_DEADLINE_S, f"the command stopped {took:.2f} s after the pause, not when `sleep 30` ended"
    with Journal(paths) as journal:
        assert journal.recent_commands(limit=1)[0].status is Status.KILLED


def running_commands(paths: AppPaths) -> list:
    with Journal(paths) as journal:
        return journal.active_commands()


def app_cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, HOME_ENV: str(home)}
    return subprocess.run([sys.executable, "-m", "app", *args], env=env, capture_output=True, text=True, timeout=30)


def notices(desktop: FakeDesktop) -> list[tuple[str, str]]:
    """What the tray process told the user: its notifications went to (our recording) notify-send."""
    return [(call[-2], call[-1]) for call in desktop.calls("notify-send")]


def test_a_server_that_dies_mid_command_is_reported_and_its_command_goes_on_in_the_tray(
    desktop: FakeDesktop, home: Path, paths: AppPaths
) -> None:
    """The tray runs the command (issue 21): a server's death is told, and is not its command's."""
    marker = "31.4159"  # a `sleep` no other process runs

    async def scenario(tray_pid: int) -> None:
        agent = Implementation(name="test-agent", version="1.0")
        async with Client(serve_params(home, headless=False), mode="legacy", client_info=agent) as client:

            async def call() -> None:
                with contextlib.suppress(Exception):  # the server is killed under it
                    await client.call_tool("execute_command", {"command": f"sleep {marker}"})

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(call)
                with anyio.fail_after(FIRST_CALL_DEADLINE_S):
                    while not running_commands(paths):
                        await anyio.sleep(0.02)
                with Journal(paths) as journal:  # the server's row, not the tray's runner of its calls
                    [server] = [row for row in journal.servers() if row.pid != tray_pid]
                assert server.client_label.startswith("test-agent 1.0")
                # Past the registration grace, so the tray probes its lock at once.
                await anyio.sleep(max(0.0, server.started_at + 2.1 - time.time()))
                os.kill(server.pid, signal.SIGKILL)
                await anyio.sleep(1.0)
                assert live_processes(f"sleep {marker}"), "the command goes on in the tray"
                tasks.cancel_scope.cancel()

    try:
        with running_tray(home) as tray:
            anyio.run(scenario, tray.pid)
            crashed = wait_for(
                lambda: [n for n in notices(desktop) if n[0] == "Cowork Terminal server crashed"], timeout_s=10
            )
            [running] = running_commands(paths)
            assert running.command == f"sleep {marker}"
    finally:
        _kill_processes_running(f"sleep {marker}")
    assert "test-agent 1.0" in crashed[0][1] and "interrupted" not in crashed[0][1]
    assert any("test-agent 1.0 connected for the first time" in message for _, message in notices(desktop))


def test_a_crashed_server_shows_in_the_menu_until_the_user_opens_the_activity_log(
    app: TrayApp, home: Path, paths: AppPaths
) -> None:
    # A headless server never takes this in-process tray for the app (pytest runs it): it records
    # its commands in the journal itself, as with no tray, and the tray's supervisor watches them.
    marker = "27.1828"  # a `sleep` no other process runs

    async def scenario() -> None:
        async with Client(serve_params(home, headless=True), mode="legacy") as client:

            async def call() -> None:
                with contextlib.suppress(Exception):  # the server is killed under it
                    await client.call_tool("execute_command", {"command": f"sleep {marker}"})

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(call)
                with anyio.fail_after(FIRST_CALL_DEADLINE_S):
                    while app.state.running != 1:
                        await anyio.sleep(0.02)
                with Journal(paths) as journal:
                    server = journal.servers()[0]
                await anyio.sleep(max(0.0, server.started_at + 2.1 - time.time()))  # past the registration grace
                os.kill(server.pid, signal.SIGKILL)
                with anyio.fail_after(5):
                    while app.state.crash is None:
                        await anyio.sleep(0.02)
                tasks.cancel_scope.cancel()

    try:
        anyio.run(scenario)
    finally:
        _kill_processes_running(f"sleep {marker}")
    assert app.icon_state == menu.PROBLEM
    assert app.pystray_item("crash").text.endswith("1 command interrupted")
    wait_for(lambda: "Cowork Terminal server crashed" in titles(app), timeout_s=10)  # told after the menu shows it
    click(app, "crash")  # opens the log: the user has seen it
    wait_for(lambda: app.state.crash is None, timeout_s=10)


def _kill_processes_running(command_line: str) -> None:
    out = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        pid, _, args = line.strip().partition(" ")
        if args.strip() == command_line:
            os.kill(int(pid), signal.SIGKILL)


# --- the tray process itself ------------------------------------------------------------------------


def tray_env(desktop: FakeDesktop, home: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update({HOME_ENV: str(home), "HOME": str(desktop.home), "XDG_CONFIG_HOME": str(desktop.config_home)})
    env.pop("DISPLAY", None)
    env.update(extra)
    return env


def stop_process(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.kill()
        process.wait(PROCESS_STOP_S)


def test_a_second_launch_exits_at_once_and_the_running_tray_opens_its_log_window(
    desktop: FakeDesktop, home: Path, paths: AppPaths
) -> None:
    env = tray_env(desktop, home, PYSTRAY_BACKEND="dummy")
    first = subprocess.Popen([sys.executable, "-m", "app", "tray"], env=env, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_tray(home, first)
        started = time.monotonic()
        second = subprocess.run(
            [sys.executable, "-m", "app", "tray"], env=env, capture_output=True, text=True, timeout=PROCESS_START_S
        )
        assert second.returncode == 0 and time.monotonic() - started < 5
        assert "already running: asked it to open the activity log" in second.stderr
        log = paths.log_dir / "tray.log"
        wait_for(lambda: "log window started" in log.read_text(), timeout_s=10)

        quitting = subprocess.run(
            [sys.executable, "-m", "app", "tray", "--quit"],
            env=env,
            capture_output=True,
            text=True,
            timeout=PROCESS_START_S,
        )
        assert quitting.returncode == 0 and "has quit" in quitting.stderr
        assert first.wait(PROCESS_STOP_S) == 0
        assert not liveness.is_held(paths.tray_lock)
        assert current_tray_state(paths) is None, "nothing answers at the tray's address any more"
    finally:
        stop_process(first)


def test_tray_quit_reaches_a_tray_that_holds_its_lock_but_does_not_listen_yet(
    desktop: FakeDesktop, home: Path, paths: AppPaths
) -> None:
    # The race CI met with the frozen app: `status` says running (the lock) before the tray listens.
    env = tray_env(desktop, home, PYSTRAY_BACKEND="dummy")
    tray = subprocess.Popen([sys.executable, "-m", "app", "tray"], env=env, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: liveness.is_held(paths.tray_lock) or tray.poll() is not None, timeout_s=PROCESS_START_S)
        quitting = subprocess.run(
            [sys.executable, "-m", "app", "tray", "--quit"], env=env, capture_output=True, text=True,
            timeout=PROCESS_START_S,
        )  # fmt: skip
        assert quitting.returncode == 0, quitting.stderr
        assert "has quit" in quitting.stderr
        assert tray.wait(PROCESS_STOP_S) == 0
    finally:
        stop_process(tray)


def test_without_a_display_the_tray_says_why_and_lets_go_of_its_lock(
    desktop: FakeDesktop, home: Path, paths: AppPaths
) -> None:
    env = tray_env(desktop, home)  # no DISPLAY, no PYSTRAY_BACKEND
    env.pop("PYSTRAY_BACKEND", None)
    env.pop("WAYLAND_DISPLAY", None)
    done = subprocess.run(
        [sys.executable, "-m", "app", "tray"], env=env, capture_output=True, text=True, timeout=PROCESS_START_S
    )
    assert done.returncode == 1
    assert "cannot show the tray icon: no graphical session was found (DISPLAY is not set)" in done.stderr
    assert not liveness.is_held(paths.tray_lock)


@pytest.fixture
def xvfb_display(tmp_path: Path) -> Iterator[str]:
    """A private Xvfb of this test's own (tests/xvfb.py). Missing Xvfb fails the test: CI installs it."""
    try:
        server, name = xvfb.start(tmp_path / "xvfb.log", screen="800x600x24")
    except xvfb.XvfbError as exc:
        pytest.fail(str(exc))
    try:
        yield name
    finally:
        xvfb.stop(server)


@pytest.mark.gui
def test_the_tray_runs_for_real_under_xvfb_holds_the_lock_and_stops_cleanly_on_sigterm(
    xvfb_display: str, desktop: FakeDesktop, home: Path, paths: AppPaths
) -> None:
    env = tray_env(desktop, home, DISPLAY=xvfb_display, PYSTRAY_BACKEND="xorg")
    process = subprocess.Popen(
        [sys.executable, "-m", "app", "tray"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        log = paths.log_dir / "tray.log"
        wait_for(lambda: log.exists() and "tray started (backend xorg" in log.read_text(), timeout_s=PROCESS_START_S)
        assert liveness.is_held(paths.tray_lock)
        # What is missing: AppIndicator, or (this venv's Python, where the system has it) the interpreter.
        # Said just after "tray started", once the tray has looked for GTK: wait for it, do not race it.
        wait_for(lambda: "its tray icon has no menu" in log.read_text(), timeout_s=10)
        window = re.search(
            r"log window started \(pid (\d+)\)",
            wait_for(lambda: "log window started" in log.read_text() and log.read_text(), timeout_s=10),
        )
        assert window, "without a menu, the log window is where the controls are"

        stopping = time.monotonic()
        process.send_signal(signal.SIGTERM)
        assert process.wait(PROCESS_STOP_S) == 0
        assert time.monotonic() - stopping < PROCESS_STOP_S
        assert not liveness.is_held(paths.tray_lock)
        assert "signal 15 received: quitting" in log.read_text()
        with pytest.raises(ProcessLookupError):
            os.kill(int(window.group(1)), 0)  # the window was closed (and reaped) with the app
    finally:
        stop_process(process)


def children_states(pid: int) -> dict[int, str]:
    """The process state of each child of `pid` (Z: a zombie nobody has waited for)."""
    found = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            with contextlib.suppress(OSError):
                found[int(child)] = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0]
    return found


def test_a_welcome_window_that_cannot_open_is_logged_with_its_reason_and_reaped(
    desktop: FakeDesktop, home: Path, paths: AppPaths
) -> None:
    """No display for the window (here: none at all, pystray's dummy icon): the Welcome the first start
    opens fails at once. The tray says why in its log and waits for it, instead of keeping a zombie
    until the next Welcome opens."""
    env = tray_env(desktop, home, PYSTRAY_BACKEND="dummy")
    process = subprocess.Popen(
        [sys.executable, "-m", "app", "tray"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        log = paths.log_dir / "tray.log"
        wait_for(lambda: log.exists() and "welcome window started" in log.read_text(), timeout_s=PROCESS_START_S)
        said = wait_for(
            lambda: [line for line in log.read_text().splitlines() if "the welcome window exited with code 1" in line],
            timeout_s=PROCESS_START_S,
        )
        assert said[0].endswith("cannot open the Welcome window: no display name and no $DISPLAY environment variable")
        assert "Z" not in children_states(process.pid).values(), children_states(process.pid)
        assert process.poll() is None, "the tray runs on"
    finally:
        stop_process(process)


# --- what each process imports ------------------------------------------------------------------------


def loaded_modules(code: str, env: dict[str, str] | None = None) -> set[str]:
    script = f"{code}\nimport sys, json\nprint(json.dumps(sorted(m.split('.')[0] for m in sys.modules)))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_the_tray_with_its_icons_and_menu_never_loads_tkinter(home: Path) -> None:
    env = {**os.environ, "PYSTRAY_BACKEND": "dummy", HOME_ENV: str(home)}
    code = (
        "import app.ui.tray.app as t\n"
        "from app.core.paths import AppPaths\n"
        "app = t.TrayApp(AppPaths.from_environment(), None, t.load_pystray())\n"
        "assert app.pystray_item('pause').text == 'Pause host access'\n"
        "app._image('running')\n"
    )
    modules = loaded_modules(code, env)
    assert {"pystray", "PIL"} <= modules
    assert "tkinter" not in modules and "_tkinter" not in modules


def test_importing_the_tray_module_alone_loads_no_gui_library() -> None:
    modules = loaded_modules("import app.ui.tray.app")
    assert not modules & {"pystray", "PIL", "tkinter", "mcp"}


def test_importing_the_tray_in_a_fresh_interpreter_does_not_load_the_mcp_sdk() -> None:
    modules = loaded_modules("import app.ui.tray.app")
    assert "mcp" not in modules and "mcp_types" not in modules and "anyio" not in modules


def test_a_check_connection_run_by_the_tray_never_loads_the_mcp_sdk_in_the_tray(
    desktop: FakeDesktop, home: Path
) -> None:
    desktop.desktop_config.write_text(json.dumps({"mcpServers": {"cowork-terminal": {"command": "/old/x"}}}))
    env = tray_env(desktop, home, PYSTRAY_BACKEND="dummy")
    code = (
        "import app.ui.tray.app as t\n"
        "from app.core.paths import AppPaths\n"
        "app = t.TrayApp(AppPaths.from_environment(), None, t.load_pystray())\n"
        "app.refresh_clients()\n"
        "app.perform('check', 'claude-desktop')\n"
        "assert app.notifier.history[-1][0] == 'Connection problem: Claude Desktop', app.notifier.history\n"
    )
    modules = loaded_modules(code, env)
    assert "pystray" in modules and "mcp" not in modules


def test_no_ui_module_imports_the_server_side_or_the_mcp_sdk() -> None:
    import ast

    ui = Path(tray.__file__).parent
    offenders = []
    for source in sorted(ui.glob("*.py")):
        for node in ast.walk(parse_file(source)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            bad = [n for n in names if n.split(".")[0] == "mcp" or n.startswith("app.server")]
            offenders += [f"{source.name}: {n}" for n in bad]
    assert offenders == []


def test_the_mcp_server_never_loads_pystray_pil_or_tkinter() -> None:
    modules = loaded_modules("import app.server.mcp_server")
    assert "mcp" in modules
    assert not modules & {"pystray", "PIL", "tkinter", "_tkinter", "Xlib"}


def test_the_autostart_command_switches_start_at_login(desktop: FakeDesktop, home: Path) -> None:
    env = tray_env(desktop, home)

    def autostart(setting: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "app", "autostart", setting],
            env=env,
            capture_output=True,
            text=True,
            timeout=PROCESS_START_S,
            check=True,
        )
        return done.stdout

    assert autostart("on").startswith("Start at login: on") and desktop.autostart_file.exists()
    assert autostart("status").startswith("Start at login: on")
    assert autostart("off").startswith("Start at login: off") and not desktop.autostart_file.exists()


def test_the_app_log_goes_to_the_log_folder_rotates_and_is_configured_once(paths: AppPaths) -> None:
    root = logging.getLogger()
    before, level = list(root.handlers), root.level
    try:
        app_log.configure(paths, "tray")
        path = app_log.configure(paths, "tray")  # again: replaces, never doubles
        assert path == paths.log_dir / "tray.log"
        logging.getLogger("cowork.test").info("hello once")
        assert path.read_text().count("hello once") == 1
        assert oct(path.stat().st_mode & 0o777) == "0o600"
        for _ in range(app_log.LOG_MAX_BYTES // 1000 + 10):
            logging.getLogger("cowork.test").info("x" * 1000)
        assert path.with_name("tray.log.1").exists() and path.stat().st_size < app_log.LOG_MAX_BYTES
    finally:
        for handler in [h for h in root.handlers if h not in before]:
            root.removeHandler(handler)
            handler.close()
        root.setLevel(level)


def test_every_app_log_file_is_private_even_after_a_rotation_under_a_permissive_umask(paths: AppPaths) -> None:
    root = logging.getLogger()
    before, level = list(root.handlers), root.level
    umask = os.umask(0o022)  # the usual default, which leaves new files 0644
    try:
        path = app_log.configure(paths, "tray")
        for _ in range(app_log.LOG_MAX_BYTES // 1000 + 10):
            logging.getLogger("cowork.test").info("x" * 1000)
        rotated = path.with_name("tray.log.1")
        assert rotated.exists() and path.exists()
        assert {p.name: oct(p.stat().st_mode & 0o777) for p in (path, rotated)} == {
            "tray.log": "0o600",
            "tray.log.1": "0o600",
        }
    finally:
        os.umask(umask)
        for handler in [h for h in root.handlers if h not in before]:
            root.removeHandler(handler)
            handler.close()
        root.setLevel(level)


# --- approvals -------------------------------------------------------------------------------------


def test_the_approval_mode_is_chosen_from_the_menu(app: TrayApp, paths: AppPaths) -> None:
    from app.core.policy import approval

    click(app, "approval:all")
    with Journal(paths) as journal:
        assert approval.approval_mode(journal) is approval.ApprovalMode.ALL
    assert app.pystray_item("approval:all").checked is True
    assert app.pystray_item("approval:destructive").checked is False


def test_the_output_budget_is_chosen_from_the_menu(app: TrayApp, paths: AppPaths) -> None:
    from app.core.execution.output import OutputBudget, output_budget

    click(app, "output:seed")
    with Journal(paths) as journal:
        assert output_budget(journal, environ={}) == OutputBudget(None)
    assert app.pystray_item("output:seed").checked is True
    assert app.pystray_item("output:30000").checked is False


def test_a_held_command_shows_in_the_menu_and_the_tray_opens_its_prompt(
    app: TrayApp, paths: AppPaths, tmp_path: Path
) -> None:
    # A real server never takes this in-process tray for the app (pytest runs it), so the test says
    # to the tray's channel what a server says when it holds a command.
    prompt_marker = tmp_path / "prompt-opened"
    app.approval_prompt_command = [sys.executable, "-c", WINDOW_SCRIPT, str(prompt_marker)]
    channel, _peer = connect_channel(address_for(paths))
    # Like a real server, it holds its lock: without it the tray's supervisor would soon call it
    # crashed and its held command interrupted (a race this test once lost under load).
    server_lock = liveness.try_hold(paths.server_lock("held-in-menu"))
    try:
        channel.send(
            {"op": "hello", "role": "server", "pid": os.getpid(), "headless": False, "lock_key": "held-in-menu"}
        )
        assert answer_to(channel, None)["op"] == "ack"
        channel.send({"op": "begin", "seq": 1, "row": {
            "command": "rm -rf build", "cwd": "/srv", "status": "waiting", "reason": "rm -r: recursive removal",
            "client_name": "claude-ai", "tool": "execute_command", "env_keys": [],
        }})  # fmt: skip
        held = answer_to(channel, 1)["id"]
        wait_for(prompt_marker.exists, timeout_s=10)
        wait_for(lambda: app.state.waiting == 1, timeout_s=FOLLOW_DEADLINE_S)
        assert app.icon_state == menu.ATTENTION
        assert app.pystray_item("waiting").text == "1 command waiting for you"
        notice = ("A command is waiting for your approval", "Claude Desktop wants to run: rm -rf build")
        # The prompt's process may start (and the menu follow) before the actions thread sends the notice.
        wait_for(lambda: notice in app.notifier.history, timeout_s=FOLLOW_DEADLINE_S)
        assert app.hub.decide(held, allowed=False, by=PROMPT_DECIDED_BY)  # what the prompt's Deny does
        decision = answer_to(channel, None, op="decision")
        assert (decision["id"], decision["allowed"]) == (held, False), "the server is told at once"
        wait_for(lambda: app.state.waiting == 0, timeout_s=FOLLOW_DEADLINE_S)
        with Journal(paths) as journal:
            assert journal.get_command(held).decided_by == "user (approval prompt)"
    finally:
        channel.close()
        if server_lock is not None:
            server_lock.release()


# A confirm window that writes down the question it was asked, then answers No.
ASKED_SCRIPT = (
    "import json, pathlib, sys; line = sys.stdin.readline(); pathlib.Path(sys.argv[1]).write_text(line); "
    "print(json.dumps({'op': 'answer', 'yes': False}), flush=True); sys.stdin.read()"
)


# A server, in a process of its own, that holds one command as a real server does; it prints the
# command's id and keeps its channel open until its stdin closes.
HOLDING_SERVER_SCRIPT = """
import json, os, sys
from app.core import liveness
from app.core.channel.transport import address_for, connect
from app.core.paths import AppPaths
paths = AppPaths.from_environment()
lock = liveness.try_hold(paths.server_lock("held-in-german"))
channel, _peer = connect(address_for(paths))
channel.send({"op": "hello", "role": "server", "pid": os.getpid(), "headless": False, "lock_key": "held-in-german"})
channel.send({"op": "begin", "seq": 1, "row": json.loads(sys.argv[1])})
while True:
    message = channel.receive(30)
    if message is not None and message.get("seq") == 1:
        print(message["id"], flush=True)
        break
sys.stdin.read()
"""


def test_a_program_asking_to_allow_a_held_command_is_told_in_german_that_the_approval_window_shows_it(
    app: TrayApp, paths: AppPaths, tmp_path: Path
) -> None:
    """`cowork-terminal approve N` asks no yes/no in a confirm window (its Yes allowed on less than the
    approval prompt shows: a red team, 2026-12-06): the tray brings its approval prompt and says so,
    in the person's language; the command still waits for their click there."""
    from app.core import i18n
    from app.core.classifier import classify
    from app.core.messages import held_reason
    from app.core.paths import protected_paths

    asked = tmp_path / "asked.json"
    app.confirm_command = [sys.executable, "-c", ASKED_SCRIPT, str(asked)]
    app.approval_prompt_command = [sys.executable, "-c", WINDOW_SCRIPT, str(tmp_path / "prompt-opened")]
    verdict = classify("rm -rf build", cwd="/srv", protected_paths=protected_paths(paths))
    row = {"command": "rm -rf build", "cwd": "/srv", "status": "waiting", "client_name": "claude-ai",
           "reason": held_reason(verdict.plain, verdict.reasons), "tool": "execute_command"}  # fmt: skip
    server = subprocess.Popen(
        [sys.executable, "-c", HOLDING_SERVER_SCRIPT, json.dumps(row)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        text=True, env={**os.environ, HOME_ENV: str(paths.data_dir)},
    )  # fmt: skip
    i18n.use_language("de")
    try:
        assert server.stdout is not None
        held = int(server.stdout.readline())
        # What `cowork-terminal approve` asks (the CLI itself would not trust a tray that runs in pytest).
        cli_channel, _cli_peer = connect_channel(address_for(paths))
        cli_channel.send({"op": "hello", "role": "cli", "pid": os.getpid()})
        assert answer_to(cli_channel, None)["op"] == "ack"
        cli_channel.send({"op": "approve", "seq": 2, "id": held})
        told = answer_to(cli_channel, 2)
        cli_channel.close()
        assert app.settle()
        still_held = app.hub.held(held) is not None
    finally:
        i18n.use_language("en")
        server.communicate(timeout=STOP_DEADLINE_S)
    assert told["message"] == (
        f"Befehl Nr. {held} wird im Zustimmungsfenster von Cowork Terminal angezeigt: "
        "Erlauben oder lehnen Sie ihn dort ab."
    ), told
    assert still_held
    wait_for(lambda: (tmp_path / "prompt-opened").exists(), timeout_s=30)  # the prompt's process has started
    assert not asked.exists(), "no confirm window asks a yes/no about it"


def answer_to(channel, seq: int | None, op: str = "ack") -> dict:
    """The tray's next message with this `seq` (and `op`), skipping its pushes of state."""
    deadline = time.monotonic() + FOLLOW_DEADLINE_S
    while time.monotonic() < deadline:
        message = channel.receive(max(0.0, deadline - time.monotonic()))
        if message is not None and message.get("seq") == seq and message["op"] == op:
            return message
    raise AssertionError(f"the tray sent no {op} for {seq}")


@pytest.mark.gui
def test_a_held_command_notifies_and_opens_the_approval_prompt(
    desktop: FakeDesktop, home: Path, paths: AppPaths, tmp_path: Path, display: str
) -> None:
    (tmp_path / "build").mkdir()

    async def scenario() -> dict:
        async with Client(serve_params(home, headless=False), mode="legacy") as client:
            outcome: dict = {}

            async def call() -> None:
                result = await client.call_tool("execute_command", {"command": "rm -rf build", "cwd": str(tmp_path)})
                outcome["error"] = result.content[0].text if result.is_error else None

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(call)
                await anyio.to_thread.run_sync(shown_window, display, PROMPT_TITLE)
                listing = await anyio.to_thread.run_sync(lambda: app_cli(home, "approvals", "--json").stdout)
                [held] = [json.loads(line) for line in listing.splitlines()]
                assert held["command"] == "rm -rf build"
                denied = await anyio.to_thread.run_sync(lambda: app_cli(home, "deny", str(held["id"])))
                assert denied.returncode == 0, denied.stderr
            return outcome

    with running_tray(home, display=display):
        outcome = anyio.run(scenario)
        wait_for(lambda: not on_screen(display, PROMPT_TITLE), timeout_s=10)  # nothing left to answer
    assert "The user denied this command" in outcome["error"]
    assert any(
        title == "A command is waiting for your approval" and message.endswith(" wants to run: rm -rf build")
        for title, message in notices(desktop)
    ), notices(desktop)
    assert (tmp_path / "build").exists()


def test_uninstall_from_the_menu_opens_the_uninstall_window_in_its_own_process(app: TrayApp, tmp_path: Path) -> None:
    marker = tmp_path / "uninstall-window-opened"
    assert app.uninstall_window_command[-1] == "uninstall-window"
    app.uninstall_window_command = [sys.executable, "-c", WINDOW_SCRIPT, str(marker)]
    click(app, "uninstall")
    wait_for(lambda: marker.exists())


def test_a_log_window_that_fails_at_once_is_reported_in_one_line_without_a_traceback(
    paths: AppPaths, pystray: ModuleType, desktop: FakeDesktop, window_marker: Path
) -> None:
    said = "Traceback (most recent call last):\\n  File x\\nRuntimeError: no display\\n"
    failing = f"import sys; sys.stderr.write('{said}'); sys.exit(1)"
    app = start_tray(paths, pystray, window_marker)
    try:
        app.log_window_command = [sys.executable, "-c", failing]
        click(app, "open-log")
        wait_for(lambda: "The activity log could not open" in titles(app))
        message = dict(app.notifier.history)["The activity log could not open"]
        assert message.startswith("RuntimeError: no display. The app log in ") and "Traceback" not in message
        assert "cowork-terminal log" not in message, "no command-line instructions for a GUI user"
    finally:
        app.shutdown()


def test_notices_name_only_controls_that_exist_and_never_a_command_to_type() -> None:
    for has_menu in (True, False):
        for windows in (True, False):
            texts = [
                tray_platform.connect_hint(has_menu, windows),
                tray_platform.looser_hint(has_menu),
                tray_platform.missing_tk_message("linux", has_menu),
            ]
            for text in texts:
                assert "`" not in text and "cowork-terminal " not in text, text
                if not has_menu:
                    assert "this icon's menu" not in text or "needs AppIndicator" in text, text
    assert "Getting started…" in tray_platform.connect_hint(True, True)
    assert "Getting started" not in tray_platform.connect_hint(True, False), "no Tk: no Welcome window"
    assert "need Tk" in tray_platform.connect_hint(False, False)
    assert "`" not in (tray_platform.missing_tray_support("linux", "xorg") or "")


def test_the_users_rules_show_in_the_menu_and_a_click_or_the_log_window_removes_one(
    app: TrayApp, paths: AppPaths
) -> None:
    from app.core.policy.rules import DELETE_BUILD_FOLDERS, FOLDER_SCOPE

    first, second = (  # as the approval prompt's "Always allow" makes them: in the tray's memory
        app.hub.add_rule(DELETE_BUILD_FOLDERS, folder, FOLDER_SCOPE, f"deleting build folders in {folder}")
        for folder in ("/home/ana/a", "/home/ana/b")
    )
    wait_for(lambda: menu.find_entry(app.entries(), f"rule:{second.id}") is not None)
    assert app.pystray_item(f"rule:{first.id}").text == ("deleting build, dist, node_modules in /home/ana/a")
    click(app, f"remove-rule:{first.id}")
    # "Remove" in the log window the tray started:
    app.tray_windows.log_window_said({"op": "remove_rule", "id": second.id})
    wait_for(lambda: menu.find_entry(app.entries(), "rules-none") is not None)
    with Journal(paths) as journal:
        assert journal.rules() == []


def test_the_welcome_window_goes_with_the_tray(
    paths: AppPaths, pystray: ModuleType, desktop: FakeDesktop, window_marker: Path
) -> None:
    app = start_tray(paths, pystray, window_marker)
    try:
        wait_for(lambda: Path(str(window_marker) + ".welcome").exists())
        welcome = app.tray_windows.welcome
        assert welcome is not None and welcome.poll() is None
    finally:
        app.shutdown()
    assert welcome.poll() is not None, "its connection check needs this tray: it does not outlive it"


# --- language --------------------------------------------------------------------------------------


def test_a_language_picked_in_the_menu_changes_the_tray_at_once_and_every_window_started_later(
    app: TrayApp, paths: AppPaths, cli_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.core import i18n

    monkeypatch.setenv("LANG", "C.UTF-8")  # the OS speaks English here
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    try:
        click(app, "language:de")
        assert app.pystray_item("pause").text == "Computerzugriff pausieren"
        assert app.pystray_item("language:de").checked is True
        assert app.icon.title.startswith("Cowork Terminal: ")
        environ = {k: v for k, v in cli_env.items() if k not in ("LANGUAGE", "LC_ALL", "LC_MESSAGES")}
        later = subprocess.run(
            [sys.executable, "-m", "app", "approvals"], env={**environ, "LANG": "C.UTF-8"},
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        # This tray (the test's process) is not one the CLI can verify: it says, in German, that it could not ask
        assert later.stderr.startswith("Cowork Terminal konnte nicht gefragt werden, welche Befehle"), later
        click(app, "language:system")
        assert app.pystray_item("pause").text == "Pause host access"
        assert app.pystray_item("language:system").checked is True
        assert not (paths.data_dir / "language").exists()
    finally:
        i18n.use_language("en")


def test_a_python_without_the_systems_gtk_says_so_in_a_window_not_only_a_notification(
    display: str, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    from tests.clicks import shown_window
    from tests.tray_process import running_tray

    if importlib.util.find_spec("gi") is not None or not tray_platform.system_has_gi():
        pytest.skip("needs a Python that cannot import the system's gi (this venv's, on this machine)")
    make_fake_desktop(tmp_path, monkeypatch)
    with running_tray(home, display=display):
        window = shown_window(display, "Tray menu unavailable")
        assert xdotool(display, "getwindowname", window) == "Tray menu unavailable"
    log = (home.parent / "tray.log").read_text()
    assert f"the Python it runs with ({sys.executable})" in log
