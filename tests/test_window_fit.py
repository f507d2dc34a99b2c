"""The windows fit the screen they open on, in every language: on a 1280x800 screen and on a small
laptop's 1024x600, nothing a person needs (a button, a column, a scrollbar) is out of sight.

Real Tk windows: the session's Xvfb display (1280x800), and for the small screen a second Xvfb
display of 1024x600 that the windows open on (`tk.Tk(screenName=...)`).
"""

from __future__ import annotations

import os
import time
import tkinter as tk
import tkinter.font
from collections.abc import Iterator
from pathlib import Path
from tkinter import ttk

import pytest

from app.core import i18n
from app.core.journal.store import Journal, Outcome, Status
from app.core.paths import AppPaths
from tests import xvfb
from tests.desktop_env import make_fake_desktop, pump_until

pytestmark = pytest.mark.gui
LANGUAGES = ("en", "es", "de", "ru")
SMALL_SCREEN = (1024, 600)
MARGIN_PX = 40  # what the windows keep free above and below them (a panel, a title bar)


@pytest.fixture
def speaking() -> Iterator[None]:
    yield
    i18n.use_language("en")


@pytest.fixture(scope="module")
def small_screen(display: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A second X display, 1024x600: a small laptop's screen."""
    process, name = xvfb.start(tmp_path_factory.mktemp("xvfb-small") / "xvfb.log", "1024x600x24")
    try:
        yield name
    finally:
        xvfb.stop(process)


def small_root(small_screen: str, display: str) -> tk.Tk:
    """A Tk root on the small screen. Tk sets the process's DISPLAY to the screen it opened (Python's
    os.environ does not see it): set back, the other tests' windows open on the session's display."""
    root = tk.Tk(screenName=small_screen, className="cowork-terminal-test")
    os.environ["DISPLAY"] = display
    return root


def settle(root: tk.Misc, seconds: float = 0.3) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        root.update()
        time.sleep(0.02)


def in_sight(widget: tk.Misc) -> bool:
    """Whether the person sees all of `widget`: shown, at its full height, inside its window and
    inside the screen."""
    top = widget.winfo_toplevel()
    if not widget.winfo_ismapped() or widget.winfo_height() < widget.winfo_reqheight():
        return False
    right, bottom = widget.winfo_rootx() + widget.winfo_width(), widget.winfo_rooty() + widget.winfo_height()
    return (
        right <= top.winfo_rootx() + top.winfo_width()
        and bottom <= top.winfo_rooty() + top.winfo_height()
        and right <= widget.winfo_screenwidth()
        and bottom <= widget.winfo_screenheight()
    )


# ---- the activity log: a window narrower than its columns (the 1024-pixel screen's 984 pixels)


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_narrow_log_window_keeps_its_list_scrollbar_and_every_column(
    display: str, paths: AppPaths, speaking: None, language: str
) -> None:
    from app.ui.windows.log_window import LogWindow

    i18n.use_language(language)
    with Journal.open(paths) as journal:
        for number in range(30):  # more rows than the list shows: it needs its scrollbar
            command_id = journal.begin_command(command=f"npm test -- --shard={number}", cwd="/home/ana/project")
            journal.finish_command(command_id, Outcome(status=Status.FAILED, exit_code=1, duration_ms=8_300))
    root = tk.Tk(className="cowork-terminal-test")
    # What log_window.main opens on a 1024x600 screen: the width less 40, the height less 80.
    root.geometry(f"{SMALL_SCREEN[0] - 40}x{SMALL_SCREEN[1] - 80}+0+0")
    window = LogWindow(root, Journal.open(paths))
    try:
        settle(root, 0.5)
        tree = window.tree
        [scrollbar] = [w for w in tree.master.winfo_children() if isinstance(w, ttk.Scrollbar)]
        assert in_sight(scrollbar), "the list's scrollbar is pushed out of the window"
        assert scrollbar.winfo_width() > 4
        columns = [tree.column(c, "width") for c in tree["columns"]]
        assert sum(columns) <= tree.winfo_width(), f"columns {columns} run past the list's edge"
        for column in ("exit", "duration"):  # the last columns: what a cut hid first
            assert tree.column(column, "width") >= tkinter.font.nametofont("TkHeadingFont").measure(
                tree.heading(column, "text")
            ), f"the {column} column is squeezed"
        narrow = tree.column("command", "width")
        root.geometry("1180x760")  # wide again: the command column takes its room back
        settle(root, 0.3)
        assert tree.column("command", "width") > narrow + 100
    finally:
        window.close()


# ---- the Welcome window and the settings window on a 1024x600 screen


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_welcome_window_fits_a_small_screen_with_done_and_start_at_login_in_sight(
    small_screen: str,
    display: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    home: Path,
    speaking: None,
    language: str,
) -> None:
    from app.ui.windows.welcome import WelcomeWindow

    make_fake_desktop(tmp_path, monkeypatch)
    i18n.use_language(language)
    root = small_root(small_screen, display)
    root.geometry("+0+0")
    try:
        window = WelcomeWindow(root, check_command=["true"], restart_command=["true"], first_run=True)
        pump_until(root, lambda: window.apps is not None and window.busy == 0, timeout_s=30)
        settle(root)
        assert root.winfo_screenheight() == SMALL_SCREEN[1]
        assert root.winfo_height() <= SMALL_SCREEN[1] - 2 * MARGIN_PX, "taller than the small screen"
        assert in_sight(window.done_button), "Done is below the bottom of the screen"
        assert in_sight(window.autostart_box), "Start at login is squeezed out"
        assert in_sight(window.connect_buttons["claude-desktop"])
        # Connected, and Claude Desktop's own server seen: the live step says so in three lines.
        pump_until(root, lambda: window.real_input.armed, timeout_s=30)
        window.connect_buttons["claude-desktop"].invoke()
        pump_until(root, lambda: window.busy == 0 and window.apps and window.apps[0].connected, timeout_s=30)
        window.seen = {"Claude Desktop"}
        window._show_live()
        settle(root)
        for widget in (window.live, window.autostart_box, window.autostart_problem, window.done_button):
            assert in_sight(widget), f"{widget.cget('text')!r} is out of sight"
    finally:
        root.destroy()


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_settings_window_fits_a_small_screen_with_every_choice_and_close_in_sight(
    small_screen: str, display: str, speaking: None, language: str
) -> None:
    from app.ui.windows.settings_window import SettingsWindow

    i18n.use_language(language)
    root = small_root(small_screen, display)
    root.geometry("+0+0")
    try:
        window = SettingsWindow(root, lambda message: None)
        window.show({"approval_mode": "destructive", "output_budget": None, "autostart": True})
        settle(root)
        assert root.winfo_height() <= SMALL_SCREEN[1] - 2 * MARGIN_PX, "taller than the small screen"
        assert in_sight(window.close_button), "Close is below the bottom of the screen"
        for choice in window.choices.values():
            assert in_sight(choice), f"{choice.cget('text')!r} is squeezed out"
        for sentence in window.sentences:
            assert in_sight(sentence), f"{sentence.cget('text')!r} is cut"
    finally:
        root.destroy()


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_settings_window_on_a_large_screen_keeps_its_narrow_sentences(
    display: str, speaking: None, language: str
) -> None:
    from app.ui.windows.settings_window import WRAP_PX, SettingsWindow

    i18n.use_language(language)
    root = tk.Tk(className="cowork-terminal-test")
    try:
        window = SettingsWindow(root, lambda message: None)
        settle(root)
        assert all(int(str(s.cget("wraplength"))) == WRAP_PX for s in window.sentences)
        assert in_sight(window.close_button)
    finally:
        root.destroy()


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("width", [1180, 1100, 984])
def test_the_log_toolbars_controls_do_not_touch_each_other(
    display: str, paths: AppPaths, speaking: None, language: str, width: int
) -> None:
    from app.ui.windows.log_window import LogWindow

    i18n.use_language(language)
    root = tk.Tk(className="cowork-terminal-test")
    root.geometry(f"{width}x700+0+0")
    window = LogWindow(root, Journal.open(paths))
    try:
        settle(root)
        row = [window.filter_entry, window.clear_filter_button, window.status_box, window.rules_button]
        row += [window.clear_button]
        shown = [w for w in row if w.winfo_ismapped()]
        for i, left in enumerate(shown):
            for right in shown[i + 1 :]:
                top = max(left.winfo_rooty(), right.winfo_rooty())
                bottom = min(left.winfo_rooty() + left.winfo_height(), right.winfo_rooty() + right.winfo_height())
                if bottom <= top:
                    continue  # not on the same row
                gap = max(
                    right.winfo_rootx() - (left.winfo_rootx() + left.winfo_width()),
                    left.winfo_rootx() - (right.winfo_rootx() + right.winfo_width()),
                )
                assert gap >= 4, f"{left.winfo_class()} and {right.winfo_class()} touch ({gap} px apart)"
    finally:
        window.close()


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_long_rule_in_the_rules_list_keeps_away_from_its_remove_button(
    display: str, paths: AppPaths, speaking: None, language: str
) -> None:
    from app.core.policy.rules import DELETE_BUILD_FOLDERS, FOLDER_SCOPE
    from app.ui.windows.log_window import LogWindow

    i18n.use_language(language)
    with Journal.open(paths) as journal:
        journal.add_rule(DELETE_BUILD_FOLDERS, "/home/ana/projects/recipes-app", FOLDER_SCOPE, "")
        journal.add_rule(DELETE_BUILD_FOLDERS, "/home/ana/Documents/Clients/Acme Corporation/recipes", FOLDER_SCOPE, "")
    root = tk.Tk(className="cowork-terminal-test")
    window = LogWindow(root, Journal.open(paths))  # no tray: the list is read from the journal
    try:
        rules = window.show_rules()
        settle(root, 0.5)
        assert len(window.toolbar.rule_rows) == 2
        for label, remove in window.toolbar.rule_rows.values():
            assert in_sight(label) and in_sight(remove)
            gap = remove.winfo_rootx() - (label.winfo_rootx() + label.winfo_width())
            assert gap >= 4, f"{label.cget('text')!r} touches its Remove button ({gap} px apart)"
        rules.destroy()
    finally:
        window.close()
