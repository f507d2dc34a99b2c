"""The approval prompt shows every part of the question, whatever the agent sends (a review,
2026-12-05): a path with 60 newlines, or of 3,800 characters, in what the command does took the
whole window, and the second folder it deletes, the command itself, the folder and the countdown
were squeezed out of it while Allow was armed; a PATH of 120 newlines did the same to the countdown
and the other variables. Held through the MCP tools, shown as the tray shows them, on a real display.
"""

from __future__ import annotations

import tkinter as tk
from pathlib import Path
from tkinter import font as tkfont
from typing import Any

import pytest

from app.core.authority.hub import Hub
from app.core.journal.store import Journal
from app.core.paths import AppPaths, protected_paths
from app.ui.tray.holds import for_window
from app.ui.windows.approval_prompt import (
    MAX_PLAIN_SCREEN_LINES,
    MIN_COMMAND_LINES,
    ApprovalPrompt,
)
from app.ui.windows.held_command import WaitingCommand
from tests.in_process_server import deny, held_by, serving
from tests.stdio_client import run
from tests.test_approval_prompt import enabled, prompt_on_pipes, pump_for, pump_until, showing
from tests.window_pipes import QUIET_S, TrayEnd

pytestmark = [pytest.mark.gui, pytest.mark.anyio]

NEWLINES_PATH = "./$'a" + "\\n" * 60 + "b'"  # bash's $'…': a folder whose name has 60 newlines
LONG_PATH = "./" + "/".join(["b" * 250] * 15)  # 3,800 characters, no special character at all


async def held_for_window(hub: Hub, paths: AppPaths, arguments: dict[str, Any], home: Path) -> WaitingCommand:
    """The command the agent sends, held by the hub, as the tray sends it to the prompt."""
    hub.set_settings(approval_window_s=1.0)  # the call returns, the command still waits
    async with serving(home, bound=True) as client:
        said = await run(client, arguments)
        assert "approv" in str(said).lower(), said
        [hold] = await held_by(hub)
        shown = for_window(hold, paths)
    return shown


def line_px(widget: tk.Misc) -> int:
    return int(tkfont.Font(font=widget.cget("font")).metrics("linespace"))


def whole_in_window(prompt: ApprovalPrompt, widget: tk.Misc) -> bool:
    """`widget` shows at its full height, inside the window, and the window inside the screen."""
    root = prompt.root
    top, bottom = root.winfo_rooty(), root.winfo_rooty() + root.winfo_height()
    return (
        bool(widget.winfo_ismapped())
        and widget.winfo_height() >= widget.winfo_reqheight()
        and top <= widget.winfo_rooty()
        and widget.winfo_rooty() + widget.winfo_height() <= bottom <= root.winfo_screenheight()
    )


def command_box_shows(prompt: ApprovalPrompt, lines: int) -> bool:
    box = prompt.command
    return bool(box.winfo_ismapped()) and box.winfo_height() >= lines * line_px(box) and whole_in_window(prompt, box)


def screen_lines(label: tk.Misc) -> int:
    """How many lines `label` takes on the screen, wrapped."""
    return round((label.winfo_height() - 2) / line_px(label))


def shown_until_armed(prompt: ApprovalPrompt, tray: TrayEnd, item: WaitingCommand) -> tk.Tk:
    tray.tell({"op": "show", "hold": item.to_json()})
    root = prompt.root
    pump_until(root, lambda: showing(prompt, item.id) and root.winfo_viewable())
    pump_until(root, lambda: prompt.armed)
    pump_for(root, 0.2)  # laid out
    return root


def the_whole_question_shows(prompt: ApprovalPrompt) -> None:
    """The command, its danger, the folder, the countdown and the answers all show, Allow armed."""
    assert command_box_shows(prompt, 3), (prompt.command.winfo_ismapped(), prompt.command.winfo_height())
    assert prompt.current is not None
    danger = [prompt.danger_line] if prompt.current.danger is not None else []  # said where it has a class
    for widget in (prompt.heading, prompt.what, *danger, prompt.details, prompt.remaining, prompt.advice,
                   prompt.allow_button, prompt.deny_button):  # fmt: skip
        assert whole_in_window(prompt, widget), widget
    assert prompt.remaining.cget("text").startswith("Waiting for your answer: ")
    assert "In folder: " in prompt.details.cget("text")
    assert screen_lines(prompt.what) <= MAX_PLAIN_SCREEN_LINES
    assert enabled(prompt.allow_button), "nothing hidden: Allow arms as always"


@pytest.mark.parametrize("first", [NEWLINES_PATH, LONG_PATH], ids=["newlines", "long"])
async def test_a_path_in_the_plain_words_never_pushes_the_rest_of_the_question_out_of_the_window(
    home: Path, paths: AppPaths, hub: Hub, display: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, first: str
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "ana"))  # the `~/Documents` it deletes: the test's own
    (tmp_path / "ana" / "Documents").mkdir(parents=True)
    project = tmp_path / "project"
    project.mkdir()
    command = f"rm -rf {first} ~/Documents"
    item = await held_for_window(hub, paths, {"command": command, "cwd": str(project)}, home)
    with prompt_on_pipes() as (prompt, tray):
        shown_until_armed(prompt, tray, item)
        the_whole_question_shows(prompt)
        said = prompt.what.cget("text").split("\n")
        assert any(line.endswith("/ana/Documents and everything in it") for line in said), said
        assert all(line.isprintable() for line in said), "each line of text, one line: newlines as ^J"
        if first == NEWLINES_PATH:
            assert "^J^J" in said[0]
        assert all(len(line) <= 300 for line in said) and "…" in said[0], "the long path, shortened"
        assert prompt.command.get("1.0", "end-1c") == command, "the command box: the whole command"


async def test_on_a_short_screen_the_command_box_and_the_plain_words_give_way_and_the_question_still_fits(
    home: Path, paths: AppPaths, hub: Hub, display: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A netbook's 600 pixels: the window is never taller than the screen (Tk would squeeze what was
    packed last, and Allow would wait forever), so the box shows fewer lines, and the plain words too."""
    monkeypatch.setattr(tk.Misc, "winfo_screenheight", lambda _self: 600)  # Xvfb's screen is 800 high
    monkeypatch.setenv("HOME", str(tmp_path / "ana"))
    (tmp_path / "ana" / "Documents").mkdir(parents=True)
    project = tmp_path / "project"
    project.mkdir()
    folders = " ".join(f"{LONG_PATH[:400]}{i}" for i in range(8))
    item = await held_for_window(hub, paths, {"command": f"rm -rf {folders} ~", "cwd": str(project)}, home)
    assert item.severe, "the whole home folder: the most dangerous class, its plain words in large bold"
    with prompt_on_pipes() as (prompt, tray):
        root = shown_until_armed(prompt, tray, item)
        assert root.winfo_height() <= 600 - 2 * 40
        prompt.typed.set(str(tmp_path / "ana"))
        the_whole_question_shows(prompt)
        assert int(str(prompt.command.cget("height"))) < 6, "the box gave up lines first"


async def test_a_folder_with_newlines_stays_one_line_in_the_details_and_on_the_rule_button(
    home: Path, paths: AppPaths, hub: Hub, display: str, tmp_path: Path
) -> None:
    """The rule button says the folder too: 80 newlines in its name made it 80 lines tall, and the
    buttons, packed first, squeezed the whole question out instead."""
    project = tmp_path / ("p" + "\n" * 80 + "q")
    (project / "build").mkdir(parents=True)
    item = await held_for_window(hub, paths, {"command": "rm -rf build", "cwd": str(project)}, home)
    assert item.proposal is not None, "a rule is offered: the button names the folder"
    with prompt_on_pipes() as (prompt, tray):
        shown_until_armed(prompt, tray, item)
        the_whole_question_shows(prompt)
        folder = prompt.details.cget("text")
        assert folder.startswith(f"In folder: {tmp_path}/p^J^J") and folder.endswith("^J^Jq"), folder
        rule = prompt.rule_button.cget("text")  # its folder shortened in the middle to fit the screen
        assert rule.startswith("Always allow deleting build in ") and rule.endswith("^J^Jq"), rule
        for text in (folder, rule, prompt.what.cget("text")):
            assert "\n" not in text, text
        assert whole_in_window(prompt, prompt.rule_button)


async def test_allow_waits_while_the_window_is_too_small_to_show_the_command(
    home: Path, paths: AppPaths, hub: Hub, display: str, tmp_path: Path
) -> None:
    """Made small (by the person, a window manager or a small screen), the window squeezes the command
    box out: Allow waits until it shows again, with every text it decides on."""
    (tmp_path / "build").mkdir()
    item = await held_for_window(hub, paths, {"command": "rm -rf build", "cwd": str(tmp_path)}, home)
    with prompt_on_pipes() as (prompt, tray):
        root = shown_until_armed(prompt, tray, item)
        assert tray.heard() == {"op": "seen", "id": item.id}  # shown: its clock started
        assert enabled(prompt.allow_button)
        root.minsize(1, 1)
        root.geometry("600x190")
        pump_until(root, lambda: not command_box_shows(prompt, MIN_COMMAND_LINES))
        pump_for(root, 0.3)
        assert prompt.armed and not enabled(prompt.allow_button), "armed, yet Allow waits for the command"
        prompt.answer(True)  # a click that got through anyway
        assert tray.heard(QUIET_S) is None
        root.geometry("")  # its own size again
        pump_until(root, lambda: enabled(prompt.allow_button))
        the_whole_question_shows(prompt)
        prompt.allow_button.invoke()
        assert tray.heard() == {"op": "decide", "id": item.id, "allowed": True, "rule": None}


async def test_the_logs_details_say_a_held_commands_folder_and_plain_words_on_one_line_each(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path
) -> None:
    """The activity log's details pane lists "Label<Tab>value" lines: a folder or plain words with a
    newline wrote lines of their own there ("Answer<Tab>allowed by you")."""
    from app.ui.windows.controls import as_told, held_texts
    from app.ui.windows.log_model import detail_lines
    from tests.in_process_server import holds_shown

    project = tmp_path / "p\nAnswer\tallowed by you"
    project.mkdir()
    hub.set_settings(approval_window_s=1.0)
    command = f"rm -rf {NEWLINES_PATH}"
    async with serving(home, bound=True) as client:
        await run(client, {"command": command, "cwd": str(project), "env": {"A\nB": "1"}})
        [hold] = await held_by(hub)
        told = held_texts({"holds": holds_shown(hub)})
        with Journal.open(paths) as journal:
            [record] = [as_told(r, told, str) for r in journal.recent_commands() if r.command == command]
        lines = detail_lines(record, protected=protected_paths(paths))
        deny(hub, hold.command_id)
    said = {line.label: line.value for line in lines}
    assert said["Folder"] == f"{tmp_path}/p^JAnswer^Iallowed by you"
    assert "^J^J" in said["Why"] and "^J" in said["Settings"], said
    assert all("\n" not in line.value and "\t" not in line.value for line in lines), said
