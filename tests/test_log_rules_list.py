"""The log window's list of the user's rules shows the rules the tray applies, never the journal's rows
(which any program of the user can rewrite): the tray tells the log window it started on its line, at
open and whenever they change (a real tray app in this process, its log window a process that writes
down what it is told); a window started by hand asks a real tray process; with no tray the list reads
the file and says that nothing applies it. A row this version cannot describe is listed by its number.
Real Tk windows on the test's display."""

from __future__ import annotations

import json
import sqlite3
import sys
import time
import tkinter as tk
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from app.core import liveness
from app.core.channel.client import ask_tray
from app.core.journal.store import Journal
from app.core.paths import AppPaths
from app.core.policy.rules import DELETE_BUILD_FOLDERS, FOLDER_SCOPE, SESSION_SCOPE
from app.ui.tray import menu
from app.ui.tray import platforms as tray_platform
from app.ui.tray.app import TrayApp
from app.ui.windows.controls import TrayLineControls
from app.ui.windows.log_window import LogWindow
from tests.desktop_env import make_fake_desktop, pump_until
from tests.tray_process import running_tray
from tests.window_pipes import TrayEnd

pytestmark = pytest.mark.gui
WAIT_S = 10.0

# A stand-in log window: writes down every line the tray tells it, as it comes.
RECORDER = (
    "import sys\n"
    "with open(sys.argv[1], 'ab', buffering=0) as out:\n"
    "    for line in iter(sys.stdin.buffer.readline, b''):\n"
    "        out.write(line)\n"
)


def described(rule_id: int, folder: str) -> str:
    return f"Rule {rule_id}: deleting build, dist, node_modules in {folder}"


def plant(paths: AppPaths, *rows: tuple[str, str, str]) -> None:
    """What another program does: the file's rules replaced by `rows` (kind, folder, scope)."""
    with sqlite3.connect(paths.journal) as db:
        db.execute("DELETE FROM rules")
        for kind, folder, scope in rows:
            db.execute(
                "INSERT INTO rules(kind, folder, scope, session, description, created_at) "
                "VALUES (?, ?, ?, NULL, '', 0)",
                (kind, folder, scope),
            )
    db.close()


def listed(window: LogWindow) -> list[str]:
    return [label.cget("text") for label, _remove in window.toolbar.rule_rows.values()]


def intro(window: LogWindow) -> str:
    label = window.toolbar.rules_intro
    return "" if label is None else str(label.cget("text"))


def note(window: LogWindow) -> str:
    label = window.toolbar.rules_note
    return "" if label is None else str(label.cget("text"))


@contextmanager
def tray_app(
    paths: AppPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, log_window: list[str] | None = None
) -> Iterator[TrayApp]:
    """The tray app in this process (pystray's dummy backend), as tests/tray_in_process.py makes it."""
    make_fake_desktop(tmp_path, monkeypatch)
    monkeypatch.setenv("PYSTRAY_BACKEND", "dummy")
    app = TrayApp(
        paths, liveness.try_hold(paths.tray_lock), tray_platform.load_pystray(), log_window_command=log_window
    )
    app.start()
    try:
        yield app
    finally:
        app.shutdown()


def wait_for(condition: Callable[[], Any], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def told_rules(said: Path) -> list[list[str]] | None:
    """The folders of the last rules the tray told its log window, or None before it told any."""
    lines = said.read_bytes().splitlines() if said.exists() else []
    rules = [message for message in map(json.loads, lines) if message.get("op") == "rules"]
    return None if not rules else [[rule["folder"], rule["scope"]] for rule in rules[-1]["rules"]]


def test_the_tray_tells_its_log_window_the_rules_it_applies_at_open_and_whenever_they_change(
    display: str, paths: AppPaths, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    said = tmp_path / "told"
    with tray_app(paths, tmp_path, monkeypatch, [sys.executable, "-c", RECORDER, str(said)]) as app:
        assert app.settle()
        first = app.hub.add_rule(DELETE_BUILD_FOLDERS, "/home/a/first", FOLDER_SCOPE, "")
        app.perform(menu.OPEN_LOG)
        wait_for(lambda: told_rules(said) == [["/home/a/first", "folder"]], "told at open")
        plant(paths, (DELETE_BUILD_FOLDERS, "/home/a/planted", FOLDER_SCOPE))
        second = app.hub.add_rule(DELETE_BUILD_FOLDERS, "/home/a/second", SESSION_SCOPE, "", session="9")
        app.hub.add_rule(DELETE_BUILD_FOLDERS, "/home/a/third", FOLDER_SCOPE, "")  # as the prompt's click does
        # A session rule is in force only while its server is connected (none is): not told.
        wait_for(lambda: told_rules(said) == [["/home/a/first", "folder"], ["/home/a/third", "folder"]], "a new rule")
        assert second.id not in {rule.id for rule in app.hub.rules()}
        app.perform(menu.REMOVE_RULE, str(first.id))  # from the tray's menu
        wait_for(lambda: told_rules(said) == [["/home/a/third", "folder"]], "removed from the menu")
        third = app.hub.rules()[0]
        app.tray_windows.log_window_said({"op": "remove_rule", "id": third.id})  # from the log window itself
        wait_for(lambda: told_rules(said) == [], "removed from the log window")


def test_a_window_the_tray_started_lists_what_it_was_told_and_follows_it(display: str, paths: AppPaths) -> None:
    with Journal(paths) as journal:  # what the file says: never listed while a tray tells its own
        journal.add_rule(DELETE_BUILD_FOLDERS, "/home/a/in-the-file", FOLDER_SCOPE, "")
    tray, line = TrayEnd.with_line()
    root = tk.Tk()
    window = LogWindow(root, Journal.open(paths), controls=TrayLineControls(line))
    try:
        window.rules_button.invoke()
        assert intro(window) == "Asking Cowork Terminal for your rules…" and listed(window) == []
        rules = [
            {"id": 4, "kind": DELETE_BUILD_FOLDERS, "folder": "/home/a/p\u202ex", "scope": FOLDER_SCOPE},
            {"id": 7, "kind": "delete-anything", "folder": "/home/a", "scope": FOLDER_SCOPE},
            {"id": 9, "kind": DELETE_BUILD_FOLDERS, "folder": "/home/a/q", "scope": "for-ever"},
        ]
        tray.tell({"op": "rules", "rules": rules})
        pump_until(root, lambda: listed(window))  # the open list follows what the tray tells
        assert listed(window) == [
            described(4, "/home/a/p\\u202ex"),
            "Rule 7 (of a kind this version does not know)",
            "Rule 9 (of a kind this version does not know)",
        ]
        assert intro(window).startswith("Commands these rules cover run without asking you.") and note(window) == ""
        window.toolbar.rule_rows[7][1].invoke()  # Remove: said to the tray, and gone from the list at once
        assert tray.heard() == {"op": "remove_rule", "id": 7}
        assert list(window.toolbar.rule_rows) == [4, 9]
        tray.tell({"op": "rules", "rules": "not a list"})
        pump_until(root, lambda: not listed(window))
        assert intro(window).startswith("Cowork Terminal did not tell its rules (rules must be a list)")
        tray.to_window.close()  # the tray is gone: what it said no longer holds
        pump_until(root, lambda: intro(window) == "Cowork Terminal (the app) is not running, so no rule applies now.")
        assert listed(window) == []
    finally:
        window.close()
        tray.close()


def test_a_window_started_by_hand_asks_the_running_tray_for_the_rules_it_applies(
    display: str, paths: AppPaths, home: Path
) -> None:
    with Journal(paths) as journal:  # read by the tray at its start; a kind it does not know, not at all
        before = journal.add_rule(DELETE_BUILD_FOLDERS, "/home/a/before", FOLDER_SCOPE, "")
        journal.add_rule("delete-anything", "/home/a", FOLDER_SCOPE, "")
    with running_tray(home):
        plant(paths, (DELETE_BUILD_FOLDERS, "/home/a/planted", FOLDER_SCOPE))
        root = tk.Tk()
        window = LogWindow(root, Journal.open(paths))  # no line: it asks the tray, as the CLI does
        try:
            window.rules_button.invoke()
            assert listed(window) == [described(before.id, "/home/a/before")] and note(window) == ""
            window.toolbar.rule_rows[before.id][1].invoke()
            assert listed(window) == []
            wait_for(lambda: ask_tray(paths, "holds")["rules"] == [], "the tray removed its rule")
            pump_until(root, lambda: intro(window).startswith("You have no rules."))
        finally:
            window.close()


def test_with_no_tray_a_window_started_by_hand_lists_the_files_rules_and_says_nothing_applies_them(
    display: str, paths: AppPaths
) -> None:
    """A row of a kind this version does not know raised ValueError in the list."""
    with Journal(paths) as journal:
        known = journal.add_rule(DELETE_BUILD_FOLDERS, "/home/a/p", FOLDER_SCOPE, "")
        unknown = journal.add_rule("delete-anything", "/home/a", FOLDER_SCOPE, "")
    root = tk.Tk()
    window = LogWindow(root, Journal.open(paths))
    try:
        window.rules_button.invoke()
        assert listed(window) == [
            described(known.id, "/home/a/p"),
            f"Rule {unknown.id} (of a kind this version does not know)",
        ]
        assert note(window) == (
            "Cowork Terminal (the app) is not running, so no rule applies now. "
            "These are the rules it will read when it starts."
        )
    finally:
        window.close()


def test_a_rule_of_a_kind_this_version_does_not_know_in_the_file_at_start_is_not_in_force_and_the_tray_lives_on(
    display: str, paths: AppPaths, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tray's monitor described every rule in force for its menu, and one it could not describe
    stopped the monitor, and with it the tray."""
    with Journal(paths) as journal:
        known = journal.add_rule(DELETE_BUILD_FOLDERS, "/home/a/p", FOLDER_SCOPE, "")
        journal.add_rule("delete-anything", "/home/a", FOLDER_SCOPE, "")
        journal.add_rule(DELETE_BUILD_FOLDERS, "/home/a/q", "for-ever", "")
    with tray_app(paths, tmp_path, monkeypatch) as app:
        assert app.settle(), "the tray's monitor runs"
        assert [rule.id for rule in app.hub.rules()] == [known.id]
        assert [rule.id for rule in app.state.rules] == [known.id]
