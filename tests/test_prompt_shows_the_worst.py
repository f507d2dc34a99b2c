"""The approval prompt never hides the worst of what a command does (a red team, reproduced against a real
hub): a deletion of `~/Documents` after six build folders was counted in "and 2 more", and a one-line
command wrapped past the bottom of its box said nothing of the text out of sight."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import pytest

from app.ui.windows.approval_prompt import COMMAND_CUT
from app.ui.windows.held_command import WaitingCommand, judged
from tests.desktop_env import pump_until
from tests.test_ui_review_fixes import prompt_showing

pytestmark = pytest.mark.gui

SEVEN_LINES = "\n".join(
    f"rm -rf {name}" for name in ("build", "dist", ".cache", "out", "coverage", "tmp", "~/Documents")
)
ONE_LONG_LINE = "rm -rf " + " ".join(f"build/cache-{i:02d}" for i in range(40)) + " ~/Documents"


def held(command: str, cwd: Path) -> WaitingCommand:
    return judged(1, command, str(cwd), client="Claude Code", expires_at=time.time() + 300, protected=())


def documents() -> str:
    return f"Deletes the folder {Path.home() / 'Documents'} and everything in it"


@pytest.mark.parametrize(("command", "more"), [(SEVEN_LINES, 2), (ONE_LONG_LINE, 36)], ids=["seven-lines", "one-line"])
def test_a_deletion_outside_the_project_is_said_not_counted(
    display: str, tmp_path: Path, command: str, more: int
) -> None:
    """Five "Deletes …/proj/X" lines and "and 2 more" (or "and 36 more"): `~/Documents` was in neither."""
    project = tmp_path / "proj"
    project.mkdir()
    with prompt_showing(held(command, project)) as prompt:
        lines = prompt.what.cget("text").split("\n")
        assert len(lines) == 6 and lines[-1] == f"and {more} more", lines
        assert documents() in lines, lines
        names = ["build", "dist", ".cache", "out"] if more == 2 else [f"build/cache-{i:02d}" for i in range(4)]
        others = [f"Deletes the folder {project / name} and everything in it" for name in names]
        assert lines[:-1] == [*others, documents()], "the others kept, in the command's order"


def test_what_only_a_person_gives_outranks_the_deletions_counted(tmp_path: Path) -> None:
    """What only Allow gives (to run without the container's protection) is never counted either."""
    from app.core.policy.plain_words import ASKS
    from app.ui.windows.approval_prompt import plain_lines

    item = judged(1, ONE_LONG_LINE, str(tmp_path), client="Claude Code", expires_at=time.time() + 300,
                  protected=(), asks=[ASKS[1]])  # fmt: skip
    again = WaitingCommand.from_json(item.to_json())  # as it reaches the window
    said = plain_lines(again.lines(), again.line_ranks())
    assert said[-2:] == [ASKS[1], "and 37 more"] and documents() in said, said


def test_deletions_in_a_temporary_folder_do_not_hide_one_in_the_home_folder(tmp_path: Path) -> None:
    """A red team, 2026-12-05: eight folders in /tmp, then `~/Documents`: all outside the project, so
    all alike, and the first five were said while `~/Documents` was counted in "and 4 more"."""
    from app.ui.windows.approval_prompt import plain_lines

    (tmp_path / "proj").mkdir()
    command = "\n".join([*(f"rm -rf {tmp_path}/scratch/cache{i}" for i in range(8)), "rm -rf ~/Documents"])
    again = WaitingCommand.from_json(held(command, tmp_path / "proj").to_json())
    said = plain_lines(again.lines(), again.line_ranks())
    assert said[-1] == "and 4 more" and documents() in said, said


def test_deleting_every_file_on_the_computer_is_said_before_folders_in_the_home_folder(tmp_path: Path) -> None:
    """A review, 2026-12-05: ranked by place first, `/` (outside the home folder, above it) fell
    behind eight folders in it and was counted in "and 4 more"."""
    from app.ui.windows.approval_prompt import plain_lines

    command = "\n".join([*(f"rm -rf ~/old{i}" for i in range(8)), "rm -rf /"])
    again = WaitingCommand.from_json(held(command, tmp_path).to_json())
    said = plain_lines(again.lines(), again.line_ranks())
    assert any(line.startswith("Deletes every file on this computer") for line in said), said


def test_a_one_line_command_wrapped_past_the_box_says_it_needs_scrolling(display: str, tmp_path: Path) -> None:
    """One line of 40 folders and `~/Documents`, wrapped by the box: `~/Documents` below its bottom
    (bbox None), and no word about it, since only newlines were counted."""
    with prompt_showing(held(ONE_LONG_LINE, tmp_path)) as prompt:
        box = prompt.command
        assert box.bbox("end-1c") is None, "the end of the command is out of sight"
        assert prompt.command_facts.winfo_ismapped()
        assert prompt.command_facts.cget("text") == COMMAND_CUT
        assert prompt.command_scroll.winfo_ismapped()
        for _ in range(40):  # the person scrolls down with the wheel (X11's button 5)
            box.event_generate("<Button-5>", x=5, y=5)
            prompt.root.update()
        assert box.bbox("end-1c") is not None, "scrolled, the end shows"
        assert "~/Documents" in box.get("@0,0", "end")


def test_seven_lines_in_a_box_of_six_say_so_and_a_command_that_fits_says_so_once_it_no_longer_does(
    display: str, tmp_path: Path
) -> None:
    """Six of seven lines shown (yview 0-0.857), and only "The command has 7 lines." said."""
    with prompt_showing(held(SEVEN_LINES, tmp_path)) as prompt:
        assert prompt.command.yview()[1] < 1.0
        assert prompt.command_facts.cget("text") == f"The command has 7 lines. {COMMAND_CUT}"
        # The next command, one line, fits: nothing is said of it (the first was answered elsewhere).
        fits = "rm -rf " + " ".join(f"build/part-{i:02d}" for i in range(30))
        prompt.take({"op": "gone", "id": 1})
        prompt.take({"op": "show", "hold": replace(held(fits, tmp_path), id=2).to_json()})
        pump_until(prompt.root, lambda: prompt.current is not None and prompt.current.id == 2)
        prompt.root.update()
        assert prompt.command.yview() == (0.0, 1.0), "five lines in a box of six"
        assert not prompt.command_facts.winfo_ismapped()
        # The person makes the window narrower: the line wraps into more lines than the box has.
        prompt.root.geometry(f"560x{prompt.root.winfo_height()}")
        pump_until(prompt.root, lambda: prompt.command_facts.cget("text") == COMMAND_CUT, timeout_s=5)
        pump_until(prompt.root, prompt.command_facts.winfo_ismapped, timeout_s=5)
        assert prompt.command.yview()[1] < 1.0
