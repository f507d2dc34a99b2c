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
from pathlib import Path
from tkinter import ttk

import pytest

from app.core import i18n, messages
from app.core.journal.store import Journal, Outcome, Status
from app.core.paths import AppPaths
from app.core.policy.approval import set_approval_window_s
from app.ui.windows.log_window import WINDOW_SIZE, LogWindow
from tests.desktop_env import wait_for
from tests.stdio_client import connect, run
from tests.test_authority import wait_until_held
from tests.tray_process import running_tray

pytestmark = pytest.mark.gui
LANGUAGES = ("en", "es", "de", "ru")
# Two held commands, judged as the tray judges them: what they do travels in the user's language.
HOLDS = (
    (7, "rm -rf /home/ana/projects/recipes-app/node_modules /home/ana/projects/recipes-app/dist", ["NODE_ENV"]),
    (8, "git push --force origin main", []),
)


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
        for agent in ("Claude Desktop", "Claude Code"):  # as the Agent column names them
            needed = tk.font.nametofont("TkDefaultFont").measure(agent) + 8
            assert window.tree.column("client", "width") >= needed, f"agent {agent!r} is cut"
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
    from app.ui.windows.approval_prompt import ApprovalPrompt
    from app.ui.windows.held_command import judged
    from app.ui.windows.link import TrayLine

    i18n.use_language(language)
    root = tk.Tk(className="cowork-terminal-test")
    reader, writer = os.pipe()  # the tray's end stays open and silent: the prompt shows what it took
    prompt = ApprovalPrompt(root, TrayLine(stdin=os.fdopen(reader, "rb"), stdout=io.BytesIO()))
    try:
        for command_id, command, env_keys in HOLDS:
            held = judged(command_id, command, "/home/ana/projects/recipes-app", client="Claude Desktop",
                          expires_at=time.time() + 300, protected=(), env_keys=env_keys)  # fmt: skip
            prompt.take({"op": "show", "hold": held.to_json()})
        assert prompt.refresh()
        settle(root)
        assert cut_widgets(root) == []
        bottom = prompt.allow_button.winfo_rooty() + prompt.allow_button.winfo_height()
        assert bottom <= root.winfo_rooty() + root.winfo_height(), "the buttons fall below the window"
        assert root.winfo_height() <= root.winfo_screenheight() - 80, "taller than a small laptop's screen"
    finally:
        root.destroy()
        os.close(writer)


# ---- what a command does and why it ended: said from what it is, in the user's language


def details_text(window: LogWindow, command_id: int) -> str:
    window.select(command_id)
    return window.details.get("1.0", "end")


@pytest.mark.parametrize(
    ("language", "expected"),
    [
        ("de", "Läuft als Administrator\nLöscht den Ordner /home/ana/project/build und alles darin"),
        ("ru", "Выполняется от имени администратора\nУдаляет папку /home/ana/project/build и всё её содержимое"),
    ],
)
def test_the_approval_window_says_what_the_command_does_in_german_and_russian(
    display: str, speaking: None, language: str, expected: str
) -> None:
    from app.ui.windows.approval_prompt import ApprovalPrompt
    from app.ui.windows.held_command import judged
    from app.ui.windows.link import TrayLine

    i18n.use_language(language)
    # Judged as the tray judges it; the words travel to the window as JSON, as over the tray's pipe.
    held = judged(7, "sudo rm -rf build", "/home/ana/project", client="Claude", expires_at=time.time() + 300,
                  protected=())  # fmt: skip
    assert held.plain[1] == "Deletes the folder /home/ana/project/build and everything in it"  # the model's words
    root = tk.Tk(className="cowork-terminal-test")
    reader, writer = os.pipe()
    prompt = ApprovalPrompt(root, TrayLine(stdin=os.fdopen(reader, "rb"), stdout=io.BytesIO()))
    try:
        prompt.take({"op": "show", "hold": held.to_json()})
        assert prompt.refresh()
        settle(root)
        assert prompt.what.cget("text") == expected
        assert cut_widgets(root) == []
    finally:
        root.destroy()
        os.close(writer)


def test_the_log_window_says_why_in_german_and_an_unknown_reason_as_stored(
    display: str, paths: AppPaths, speaking: None
) -> None:
    i18n.use_language("de")
    with Journal.open(paths) as journal:
        killed = journal.begin_command(command="sleep 100", cwd="/home/ana/project")
        journal.finish_command(killed, Outcome(status=Status.KILLED, reason=messages.APP_GONE_STOP_REASON))
        denied = journal.begin_command(
            command="rm -rf /", cwd="/home/ana/project", status=Status.WAITING, hold_expires_at=time.time() + 60
        )
        assert journal.decide(denied, allowed=False, by=messages.PROMPT_DECIDED_BY)
        denial = messages.DENIED_BY_REASON.format(who=messages.PROMPT_DECIDED_BY)
        journal.finish_command(denied, Outcome(status=Status.REFUSED, reason=denial))
        old = journal.begin_command(command="make", cwd="/home/ana/project")
        journal.finish_command(old, Outcome(status=Status.FAILED, exit_code=2, reason="an old version's own words"))
    root = tk.Tk(className="cowork-terminal-test")
    root.geometry(f"{WINDOW_SIZE[0]}x{WINDOW_SIZE[1]}+0+0")
    window = LogWindow(root, Journal.open(paths))
    try:
        settle(root, 0.1)
        assert "Grund\tGestoppt, weil die App Cowork Terminal beendet wurde" in details_text(window, killed)
        shown = details_text(window, denied)
        assert "Grund\tAbgelehnt von Ihnen, im Zustimmungsfenster\n" in shown
        assert "abgelehnt von Ihnen, im Zustimmungsfenster" in shown, "the Answer line names who answered too"
        assert "Grund\tan old version's own words\n" in details_text(window, old)
    finally:
        window.close()


@pytest.mark.anyio
async def test_a_german_user_reads_why_a_real_serve_holds_a_command_while_the_model_reads_english(
    display: str, home: Path, paths: AppPaths, tmp_path: Path, speaking: None
) -> None:
    project = tmp_path / "project"
    (project / "build").mkdir(parents=True)
    german = {"LANGUAGE": "de", "LANG": "de_DE.UTF-8"}
    with Journal.open(paths) as journal:  # the held call returns after 1 s, not the default 40 s
        set_approval_window_s(journal, 1)
    with running_tray(home):
        async with connect(home, headless=False, env=german) as client:
            waited = await run(client, {"command": "rm -rf build", "cwd": str(project)})
            # Held, it is a job that waits for the user; the model reads English, whatever language the user speaks.
            assert waited["status"] == "waiting", waited
            assert f"What it does: Deletes the folder {project.resolve()}/build and everything in it" in waited["note"]
            held = await wait_until_held(paths)
            i18n.use_language("de")
            root = tk.Tk(className="cowork-terminal-test")
            window = LogWindow(root, Journal.open(paths))
            try:
                # Started by hand, the window shows the held command once the tray told it its own copy.
                window.select(held["id"])
                wait_for(lambda: window.root.update() or window.details_text().startswith("rm -rf build"), timeout_s=8)
                text = window.details.get("1.0", "end")
            finally:
                window.close()
    assert f"Grund\tLöscht den Ordner {project.resolve()}/build und alles darin\n" in text
    assert (project / "build").exists()


def test_a_yes_no_question_speaks_the_language_chosen_in_the_tray_not_the_systems(
    display: str, paths: AppPaths, speaking: None
) -> None:
    """Tk's message box worded its buttons in the system's language: "Verlauf löschen" with Yes/No.

    The log window's own question (armed, see windows/real_input.py) is the one asked here."""
    i18n.use_language("de")
    root = tk.Tk(className="cowork-terminal-test")
    window = LogWindow(root, Journal.open(paths))
    seen: list[str] = []

    def answer_no() -> None:
        [dialog] = [w for w in root.winfo_children() if isinstance(w, tk.Toplevel)]
        buttons = [w for w in _descendants(dialog) if isinstance(w, ttk.Button)]
        seen.extend(str(b.cget("text")) for b in buttons)
        buttons[0].invoke()

    try:
        root.after(300, answer_no)
        assert window.confirm("Verlauf löschen", "Alle Befehle löschen?") is False
        assert seen == ["Nein", "Ja"]
    finally:
        window.close()


def test_the_german_and_spanish_words_named_in_issue_24_read_naturally(speaking: None) -> None:
    from app.core.i18n import _
    from app.ui.windows.log_model import COLUMNS
    from app.ui.windows.welcome import INTRO

    i18n.use_language("de")
    assert "Sie sehen jeden Befehl, den es ausführt" in _(INTRO) and "Sie sehen alles, was es" not in _(INTRO)
    i18n.use_language("es")
    headings = {column: _(heading) for column, heading, _width, _stretch in COLUMNS}
    assert headings["exit"] == "Código de error" and _("Output") == "Resultado", "not 'Salida' for both"
