"""A review's leftovers in the tray's windows. The approval prompt's size and names: real Tk windows
on the test's Xvfb display, driven through their real pipes as the tray drives them
(tests/test_approval_prompt.py). What a command's details in the log say of the rule that allowed
it: read from a real journal file, as the log window reads it."""

from __future__ import annotations

import sqlite3
import time
import tkinter as tk

import pytest

from app.core.authority.hub import Hub
from app.core.journal.store import Journal, Status
from app.core.paths import AppPaths
from app.core.policy.rules import DELETE_BUILD_FOLDERS, FOLDER_SCOPE
from app.ui.windows.controls import TrayLineControls
from app.ui.windows.held_command import judged
from app.ui.windows.log_window import LogWindow
from app.ui.windows.look import SCREEN_MARGIN_PX
from tests.test_approval_prompt import enabled, held, prompt_on_pipes, pump_for, pump_until, showing, shown

LONG_FOLDER = "/srv/" + "some-rather-long-folder-name/" * 4 + "x"  # its plain words are longer than a line


def width_showing_alone(command: str, cwd: str) -> int:
    """The prompt's width when it shows only this command, in a window of its own."""
    with prompt_on_pipes() as (prompt, tray):
        root = shown(prompt, tray, held(command, cwd, command_id=5))
        pump_for(root, 0.5)
        return root.winfo_width()


@pytest.mark.gui
def test_after_a_command_that_offered_a_rule_the_next_one_without_it_does_not_keep_the_window_wide(
    display: str,
) -> None:
    """The texts were wrapped at the width the rule buttons gave the window, and kept it: 974 px for
    a command that makes 853 px of a window of its own."""
    alone = width_showing_alone("rm -rf data", LONG_FOLDER)
    project = "/home/ana/projects/" + "a-rather-long-project-folder-name/" * 3 + "site"
    with prompt_on_pipes() as (prompt, tray):
        root = shown(prompt, tray, held("rm -rf node_modules", project, command_id=1),
                     held("rm -rf data", LONG_FOLDER, command_id=2))  # fmt: skip
        pump_for(root, 0.5)
        assert prompt.rules_row.winfo_ismapped()
        with_rule = root.winfo_width()
        assert with_rule > alone + 50, "the rule buttons make this window wider"
        pump_until(root, lambda: enabled(prompt.deny_button))
        prompt.deny_button.invoke()
        pump_until(root, lambda: showing(prompt, 2))
        pump_for(root, 0.5)
        assert not prompt.rules_row.winfo_ismapped()
        assert abs(root.winfo_width() - alone) <= 4, (root.winfo_width(), alone, with_rule)
        # ... and its texts still use the window's whole width.
        assert int(str(prompt.what.cget("wraplength"))) >= root.winfo_width() - 2 * 14 - 4


@pytest.mark.gui
def test_a_very_long_agent_name_is_shortened_so_the_window_and_its_buttons_fit_the_screen(display: str) -> None:
    """A client names itself (MCP clientInfo.name), with any length: 300 characters made the session
    rule's button 2572 px wide, cut on both sides in a window as wide as the screen."""
    name = "agent-" + "x" * 280 + "-the-end-of-it"
    item = judged(1, "rm -rf node_modules", "/home/ana/project", client=name, expires_at=time.time() + 300,
                  protected=(), session="4")  # fmt: skip
    with prompt_on_pipes() as (prompt, tray):
        root = shown(prompt, tray, item)
        pump_for(root, 0.5)
        assert root.winfo_reqwidth() <= root.winfo_screenwidth() - 2 * SCREEN_MARGIN_PX, "the window fits the screen"
        said = prompt.session_button.cget("text")
        assert said.startswith("Allow these until agent-xxx") and said.endswith("-the-end-of-it quits"), said
        assert "…" in said and len(said) < 100, said
        for button in (prompt.session_button, prompt.rule_button, prompt.allow_button, prompt.deny_button):
            assert button.winfo_reqwidth() <= button.winfo_width(), f"{button.cget('text')!r} is cut"
            assert button.winfo_rootx() >= 0 and button.winfo_rootx() + button.winfo_width() <= root.winfo_screenwidth()
        heading = prompt.heading.cget("text")
        assert heading.startswith("agent-xxx") and "…" in heading and len(heading) < 130, heading


@pytest.mark.gui
def test_an_agent_name_with_characters_that_do_not_show_has_them_written_out(display: str) -> None:
    item = judged(1, "rm -rf node_modules", "/home/ana/project", client="Claude\u202e edoC",
                  expires_at=time.time() + 300, protected=(), session="4")  # fmt: skip
    with prompt_on_pipes() as (prompt, tray):
        shown(prompt, tray, item)
        assert prompt.heading.cget("text").startswith("Claude\\u202e edoC wants to run")
        assert prompt.session_button.cget("text") == "Allow these until Claude\\u202e edoC quits"


def test_a_commands_details_write_out_what_does_not_show_in_its_rule_and_bear_a_rule_they_cannot_say(
    paths: AppPaths,
) -> None:
    """The details said a rule's folder with its bidi control raw, and a rule row of a kind this version
    does not know (a newer version's, or one another program wrote into the file) raised ValueError
    in them, leaving the pane of every command allowed by a rule unshown."""
    from app.ui.windows.log_model import detail_lines

    with Journal.open(paths) as journal:
        hidden = journal.add_rule(DELETE_BUILD_FOLDERS, "/home/a/p\u202eoj", FOLDER_SCOPE, "deleting build folders")
        with sqlite3.connect(paths.journal) as db:
            db.execute(
                "INSERT INTO rules(kind, folder, scope, session, description, created_at) "
                "VALUES ('delete-anything', '/home/a', 'folder', NULL, 'deleting anything', 0)"
            )
        db.close()
        unknown = max(rule.id for rule in journal.rules())
        answers = {}
        for rule_id in (hidden.id, unknown):
            held = journal.begin_command(command="rm -rf build", cwd="/p", status=Status.WAITING, hold_expires_at=9e12)
            journal.decide(held, allowed=True, by=f"rule {rule_id}", rule_id=rule_id)
            lines = detail_lines(journal.get_command(held), rules=journal.rules())
            answers[rule_id] = {line.label: line.value for line in lines}["Answer"]
    assert answers[hidden.id] == ("allowed by your rule “deleting build, dist, node_modules in /home/a/p\\u202eoj”")
    assert answers[unknown] == f"allowed by your rule {unknown}"


@pytest.mark.gui
def test_the_log_windows_rules_list_shows_the_rules_the_tray_applies_not_the_files(
    display: str, paths: AppPaths, hub: Hub
) -> None:
    """Another program rewrote the file's rules: the tray still applies the rule the user made (its rule
    book is in memory, core/authority/rule_book.py), while the list showed the planted row under that
    rule's number, and not the rule in force. The tray now tells its log window its rules, as it
    tells them (ui/tray/windows.py), and the list shows those; Remove names the rule shown."""
    from app.ui.tray.windows import rules_message
    from tests.window_pipes import TrayEnd

    made = hub.add_rule(DELETE_BUILD_FOLDERS, "/home/a/made", FOLDER_SCOPE, "deleting build folders in ~/made")
    with sqlite3.connect(paths.journal) as db:
        db.execute("DELETE FROM rules")
        db.execute(
            "INSERT INTO rules(kind, folder, scope, session, description, created_at) "
            "VALUES (?, '/home/a/planted', 'folder', NULL, 'planted', 0)",
            (DELETE_BUILD_FOLDERS,),
        )
    db.close()
    assert [rule.folder for rule in hub.rules()] == ["/home/a/made"], "what the tray applies"
    tray, line = TrayEnd.with_line()
    root = tk.Tk()
    window = LogWindow(root, Journal.open(paths), controls=TrayLineControls(line))
    try:
        tray.tell(rules_message(hub.rules()))  # at open, as the tray does
        pump_until(root, lambda: line.latest("rules")[0] is not None)
        window.rules_button.invoke()
        root.update()
        listed = [label.cget("text") for label, _remove in window.toolbar.rule_rows.values()]
        assert listed == [f"Rule {made.id}: deleting build, dist, node_modules in /home/a/made"]
        window.toolbar.rule_rows[made.id][1].invoke()
        assert tray.heard() == {"op": "remove_rule", "id": made.id}
        assert hub.remove_rule(made.id)  # what the tray does with it; then it tells the list the change
        tray.tell(rules_message(hub.rules()))
        pump_until(root, lambda: str(window.toolbar.rules_intro.cget("text")).startswith("You have no rules."))
    finally:
        window.close()
        tray.close()
