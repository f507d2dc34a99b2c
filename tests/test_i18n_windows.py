"""The windows still fit in every language: German and Russian labels run longer than English.

Real Tk windows on the session's Xvfb display, at the size they open with, in each language.
"""

from __future__ import annotations

import io
import os
import time
import tkinter as tk
import tkinter.font
from collections.abc import Iterator
from tkinter import ttk

import pytest

from app.core import i18n
from app.core.journal import Journal, Outcome, Status
from app.core.paths import AppPaths
from app.ui.log_window import WINDOW_SIZE, LogWindow

pytestmark = pytest.mark.gui
LANGUAGES = ("en", "es", "de", "ru")
# Two held commands as a server describes them to the tray, which passes them to the prompt.
HOLDS = [
    {"id": 7, "client": "claude-ai", "tool": "execute_command", "cwd": "/home/ana/projects/recipes-app",
     "command": "rm -rf ~/projects/recipes-app/node_modules ~/projects/recipes-app/dist",
     "reasons": "rm -r: recursive removal", "env_keys": ["NODE_ENV"]},
    {"id": 8, "client": "claude-ai", "tool": "execute_command", "cwd": "/home/ana/projects/recipes-app",
     "command": "git push --force origin main", "reasons": "git push --force: rewrites the remote branch",
     "env_keys": []},
]  # fmt: skip


@pytest.fixture
def speaking() -> Iterator[None]:
    yield
    i18n.use_language("en")


def settle(root: tk.Tk, seconds: float = 0.3) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        root.update()
        time.sleep(0.02)


def cut_widgets(container: tk.Misc) -> list[str]:
    """Buttons and labels narrower than their text needs, or sticking out of their window."""
    cut = []
    right_edge = container.winfo_toplevel().winfo_width()
    for widget in _descendants(container):
        if not isinstance(widget, (ttk.Button, ttk.Label, tk.Label, tk.Button)) or not widget.winfo_ismapped():
            continue
        text = str(widget.cget("text"))
        if not text:
            continue
        if widget.winfo_width() < widget.winfo_reqwidth() and not int(widget.cget("wraplength") or 0):
            cut.append(f"{text!r}: {widget.winfo_width()} < {widget.winfo_reqwidth()} px")
        if widget.winfo_rootx() - container.winfo_toplevel().winfo_rootx() + widget.winfo_width() > right_edge:
            cut.append(f"{text!r}: past the window's right edge")
    return cut


def _descendants(widget: tk.Misc) -> Iterator[tk.Misc]:
    for child in widget.winfo_children():
        yield child
        yield from _descendants(child)


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_log_window_fits_its_texts_in_every_language(
    display: str, paths: AppPaths, speaking: None, language: str
) -> None:
    i18n.use_language(language)
    with Journal.open(paths) as journal:
        for status in (Status.FINISHED, Status.FAILED, Status.TIMED_OUT, Status.INTERRUPTED):
            command_id = journal.begin_command(command="npm test", cwd="/home/ana/project")
            journal.finish_command(command_id, Outcome(status=status, exit_code=1, duration_ms=83_000))
    root = tk.Tk(className="cowork-terminal-test")
    root.geometry(f"{WINDOW_SIZE[0]}x{WINDOW_SIZE[1]}+0+0")
    window = LogWindow(root, Journal.open(paths))
    try:
        window.select(max(int(i) for i in window.tree.get_children()))
        settle(root)
        assert cut_widgets(root) == []
        columns = sum(window.tree.column(c, "width") for c in window.tree["columns"])
        assert columns <= window.tree.winfo_width(), "the list's columns run past its right edge"
        for column in window.tree["columns"]:
            heading = window.tree.heading(column, "text")
            needed = tk.font.nametofont("TkHeadingFont").measure(heading)
            assert window.tree.column(column, "width") >= needed, f"heading {heading!r} is cut"
        tab = window.tree.winfo_fpixels(window.details.cget("tabs")[0]) if window.details.cget("tabs") else 0
        for label in (i18n._("Folder"), i18n._("Agent"), i18n._("When"), i18n._("Settings")):
            assert window.fonts["bold"].measure(label) < tab, f"detail label {label!r} runs into its value"
        for choice in window.status_box.cget("values"):
            needed = tk.font.nametofont("TkTextFont").measure(choice)
            assert needed <= window.status_box.winfo_width() - 20, f"status filter {choice!r} is cut"
    finally:
        window.close()


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_approval_window_shows_all_its_words_and_both_buttons_in_every_language(
    display: str, paths: AppPaths, speaking: None, language: str
) -> None:
    from app.ui.approval_prompt import ApprovalPrompt
    from app.ui.window_link import TrayLine

    i18n.use_language(language)
    root = tk.Tk(className="cowork-terminal-test")
    reader, writer = os.pipe()  # the tray's end stays open and silent: the prompt shows what it took
    prompt = ApprovalPrompt(root, TrayLine(stdin=os.fdopen(reader, "rb"), stdout=io.BytesIO()))
    try:
        for hold in HOLDS:
            prompt.take({"op": "show", "hold": {**hold, "expires_at": time.time() + 300}})
        assert prompt.refresh()
        settle(root)
        assert cut_widgets(root) == []
        bottom = prompt.allow_button.winfo_rooty() + prompt.allow_button.winfo_height()
        assert bottom <= root.winfo_rooty() + root.winfo_height(), "the buttons fall below the window"
        assert root.winfo_height() <= root.winfo_screenheight() - 80, "taller than a small laptop's screen"
    finally:
        root.destroy()
        os.close(writer)
