"""What a review saw on a 1280×800 screen (Xvfb), as the person sees it: the approval prompt's answers
off the screen, the log window's details hiding output or jumping back to the top, Resume squeezed in
a longer language, a Settings window that missed a change, and hidden characters in the tray menu."""

from __future__ import annotations

import json
import sys
import time
import tkinter as tk
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from app.core import i18n
from app.core.journal.store import Journal, Outcome, Status
from app.core.paths import AppPaths
from app.ui.tray.app import TrayApp
from app.ui.tray.menu import build_menu, find_entry
from app.ui.tray.tray_state import JobView, TrayState, job_notice
from app.ui.windows.approval_prompt import ApprovalPrompt
from app.ui.windows.held_command import WaitingCommand, judged
from app.ui.windows.log_window import LogWindow
from tests.desktop_env import pump_until, wait_for
from tests.tray_in_process import in_process_tray  # noqa: F401 - the fixture `tray`
from tests.window_pipes import TrayEnd

pytestmark = pytest.mark.gui

DEEP = "Documents/Work/Clients/Acme Corporation/2024 Website Redesign/frontend/packages/customer-portal"


@contextmanager
def speaking(language: str) -> Iterator[None]:
    i18n.use_language(language)
    try:
        yield
    finally:
        i18n.use_language("en")


@contextmanager
def prompt_showing(item: WaitingCommand) -> Iterator[ApprovalPrompt]:
    """The approval prompt, told about `item` by the tray over real pipes, showing it."""
    tray, line = TrayEnd.with_line()
    root = tk.Tk()
    prompt = ApprovalPrompt(root, line)
    root.withdraw()
    root.after(50, prompt.poll)
    try:
        tray.tell({"op": "show", "hold": item.to_json()})
        pump_until(root, lambda: prompt.current is not None and root.winfo_viewable())
        for _ in range(10):  # its size settles (the texts wrap to the width)
            root.update()
            time.sleep(0.02)
        yield prompt
    finally:
        root.destroy()
        tray.close()


def held(command: str, cwd: Path) -> WaitingCommand:
    return judged(1, command, str(cwd), client="Claude Code", expires_at=time.time() + 300, protected=())


def on_screen(widget: tk.Misc) -> bool:
    """The whole widget lies within the screen."""
    right = widget.winfo_rootx() + widget.winfo_width()
    bottom = widget.winfo_rooty() + widget.winfo_height()
    screen = (widget.winfo_screenwidth(), widget.winfo_screenheight())
    return widget.winfo_ismapped() and right <= screen[0] and bottom <= screen[1]


@pytest.mark.parametrize("language", ["en", "de"])
def test_a_long_project_folder_keeps_allow_and_deny_on_the_screen(display: str, tmp_path: Path, language: str) -> None:
    """The rule button's text, with a 119-character folder, made the window 1442 px wide: Deny at x=1313."""
    folder = tmp_path / DEEP
    (folder / "build").mkdir(parents=True)
    with speaking(language), prompt_showing(held("rm -rf build", folder)) as prompt:
        root = prompt.root
        assert root.winfo_width() <= root.winfo_screenwidth()
        for button in (prompt.deny_button, prompt.allow_button, prompt.rule_button, prompt.session_button):
            assert on_screen(button), button.cget("text")
            assert button.winfo_width() >= button.winfo_reqwidth(), "its whole text shows"
        rule = prompt.rule_button.cget("text")
        assert "…" in rule and rule.endswith("customer-portal"), "shortened in the middle, its end kept"
        assert str(folder) in prompt.details.cget("text"), "the whole folder stays said"


def test_many_lines_of_plain_words_keep_the_command_and_the_answers_on_the_screen(display: str, tmp_path: Path) -> None:
    """Forty folders, one line each, made the window 1145 px tall: Deny at y=1098 on an 800 px screen."""
    command = "rm -rf " + " ".join(f"/home/ana/proj{i}" for i in range(40))
    with prompt_showing(held(command, tmp_path)) as prompt:
        root = prompt.root
        assert root.winfo_rooty() + root.winfo_height() <= root.winfo_screenheight()
        for widget in (prompt.command, prompt.deny_button, prompt.allow_button):
            assert on_screen(widget)
        lines = prompt.what.cget("text").split("\n")
        assert len(lines) == 6 and lines[0] == "Deletes the folder /home/ana/proj0 and everything in it"
        assert lines[-1] == "and 35 more"


@pytest.fixture
def open_window(display: str, paths: AppPaths) -> Iterator[Callable[..., LogWindow]]:
    windows: list[LogWindow] = []

    def open_(geometry: str = "1180x760+0+0") -> LogWindow:
        root = tk.Tk(className="cowork-terminal-test")
        root.geometry(geometry)
        window = LogWindow(root, Journal.open(paths), confirm=lambda _title, _text: False)
        windows.append(window)
        pump_until(root, lambda: root.winfo_viewable())
        return window

    yield open_
    for window in windows:
        window.close()


@pytest.fixture
def journal(paths: AppPaths) -> Iterator[Journal]:
    with Journal.open(paths) as connection:
        yield connection


def finished(journal: Journal, stdout: bytes) -> int:
    command_id = journal.begin_command(command="./build.sh", cwd="/tmp", client_name="claude-ai")
    journal.finish_command(command_id, Outcome(status=Status.FINISHED, exit_code=0, stdout=stdout, duration_ms=5))
    return command_id


def test_a_nul_byte_in_the_output_hides_nothing_after_it(
    open_window: Callable[..., LogWindow], journal: Journal
) -> None:
    """Tk ends a text at NUL: `a\\0b\\nc` showed as `a`."""
    command_id = finished(journal, b"a\x00b\nc-after\n")
    window = open_window()
    pump_until(window.root, lambda: window.tree.exists(str(command_id)))
    window.select(command_id)
    shown = window.details_text()
    assert "a^@b\nc-after\n" in shown


def test_colour_codes_and_progress_lines_show_as_a_terminal_leaves_them(
    open_window: Callable[..., LogWindow], journal: Journal
) -> None:
    """`▯[32m✓▯[0m` and every step of a progress line showed in the details."""
    command_id = finished(
        journal, b"\x1b[32m\xe2\x9c\x93\x1b[0m tests passed\nloading 10%\rloading 50%\rloading 100%\n"
    )
    window = open_window()
    pump_until(window.root, lambda: window.tree.exists(str(command_id)))
    window.select(command_id)
    shown = window.details_text()
    assert "✓ tests passed\nloading 100%\n" in shown
    assert "[32m" not in shown and "^[" not in shown and "50%" not in shown


def test_live_output_keeps_where_the_person_scrolled(open_window: Callable[..., LogWindow], journal: Journal) -> None:
    """A running command's details went back to the top each time its output grew."""
    command_id = journal.begin_command(command="make", cwd="/tmp", client_name="claude-ai")
    lines = "".join(f"line {i}\n" for i in range(300)).encode()
    journal.set_live_output(command_id, lines, b"", len(lines), 0)
    window = open_window()
    pump_until(window.root, lambda: window.tree.exists(str(command_id)))
    window.select(command_id)
    pump_until(window.root, lambda: "line 299" in window.details_text())
    window.details.yview_moveto(0.5)
    window.root.update()
    before = window.details.yview()[0]
    assert before > 0.4
    more = lines + b"line 300\n"
    journal.set_live_output(command_id, more, b"", len(more), 0)
    pump_until(window.root, lambda: "line 300" in window.details_text())
    assert abs(window.details.yview()[0] - before) < 0.05, "it stays where the person scrolled"


@pytest.mark.parametrize("language", ["de", "es", "ru"])
def test_resume_and_the_status_choice_show_whole_at_the_windows_smallest_size(
    open_window: Callable[..., LogWindow], journal: Journal, language: str
) -> None:
    """At 760 px the paused band squeezed Resume to 45 of its 249 px (Spanish), and the toolbar lost
    its "Show:" choice (German)."""
    journal.set_paused(True)
    with speaking(language):
        window = open_window("760x480+0+0")
        pump_until(window.root, lambda: window.paused is True)
        for _ in range(10):
            window.root.update()
            time.sleep(0.02)
        right = window.root.winfo_rootx() + window.root.winfo_width()
        for widget in (window.pause_button, window.status_box, window.filter_entry, window.clear_button):
            assert widget.winfo_ismapped() and widget.winfo_width() >= widget.winfo_reqwidth(), widget
            assert widget.winfo_rootx() + widget.winfo_width() <= right
        assert window.pause_button.cget("text") == i18n._("▶  Resume host access")
        hint = window.band.hint_label
        assert hint.winfo_reqwidth() <= hint.winfo_width(), "the hint wraps instead of running under the button"


# The Settings window's process, replaced by one that writes down each state the tray tells it.
LISTENER = """
import sys
heard = open(sys.argv[1], "a")
for line in sys.stdin:
    heard.write(line); heard.flush()
"""


def test_an_open_settings_window_shows_a_change_made_elsewhere(tray: TrayApp, tmp_path: Path) -> None:
    """`cowork-terminal` (the CLI) changes the approval mode through the hub: Settings kept the old one."""
    heard = tmp_path / "heard.jsonl"
    tray.settings_command = [sys.executable, "-c", LISTENER, str(heard)]
    tray.pystray_item("settings")(tray.icon)
    wait_for(lambda: heard.exists() and heard.read_text().count("\n") >= 1)
    tray.hub.set_settings(approval_mode="all")
    said = wait_for(lambda: [json.loads(x) for x in heard.read_text().splitlines()][-1]["approval_mode"] == "all")
    assert said
    window = tray.tray_windows._settings
    assert window is not None
    window.close()


def test_the_menus_running_job_and_its_ended_notice_show_hidden_characters() -> None:
    """The running-job line and the job-ended notice showed `\\u202e` (which turns the text around),
    zero-width characters and escapes as they are; the Recent activity line writes them out."""
    job = JobView(7, "echo ok\u202e fr- mr\u200b \x1b[2K", "Claude\u200b Code", time.time() - 100)
    state = TrayState(jobs=(job,))
    line = find_entry(build_menu(state), "job:7")
    assert line is not None
    for text in (line.text, *job_notice(job, "✓ Finished")):
        assert "\u202e" not in text and "\u200b" not in text and "\x1b" not in text
    assert "\\u202e" in line.text and "Claude\\u200b Code" in line.text
    title, body = job_notice(job, "✓ Finished")
    assert "\\u202e" in body and "^[" in body and body.endswith("\n✓ Finished") and "\\u200b" in title
