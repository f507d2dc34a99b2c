"""What the human sees is what runs: a command that hides characters from the person reading it
(escape sequences that rewrite a terminal line, zero-width spaces, 30 lines in a small box) shows
every one of them, in the CLI, the approval prompt and the activity log."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import tkinter as tk
from functools import partial
from pathlib import Path

import pytest

from app.core.journal.store import Journal
from app.core.paths import AppPaths
from app.ui.windows.approval_prompt import ApprovalPrompt
from app.ui.windows.held_command import WaitingCommand
from app.ui.windows.log_window import LogWindow
from tests.desktop_env import pump_until as pump_tk_until
from tests.stdio_client import connect, run
from tests.window_pipes import TrayEnd

ERASE_AND_FORGE = "echo done #\x1b[2K\r2026-12-01 10:00 #1 finished, exit code 0 [/home] ls"
pump_until = partial(pump_tk_until, timeout_s=10.0)


@pytest.mark.anyio
async def test_escape_sequences_in_a_command_reach_the_terminal_of_cowork_terminal_log_only_as_text(
    home: Path, paths: AppPaths
) -> None:
    async with connect(home) as client:
        ran = await run(client, {"command": ERASE_AND_FORGE})
    assert ran["stdout"] == "done\n"
    with Journal(paths) as journal:
        assert "\x1b[2K\r" in journal.recent_commands(limit=1)[0].command, "the command carried the escapes"
    env = {**os.environ, "COWORK_TERMINAL_HOME": str(home)}
    printed = subprocess.run([sys.executable, "-m", "app", "log"], env=env, capture_output=True, timeout=30)
    assert printed.returncode == 0, printed.stderr
    assert b"\x1b" not in printed.stdout and b"\r" not in printed.stdout
    assert b"echo done #^[[2K^M2026-12-01 10:00 #1 finished" in printed.stdout


@pytest.mark.gui
def test_the_prompt_shows_all_30_lines_and_the_zero_width_space_and_says_so(display: str) -> None:
    lines = [f"echo step {n}" for n in range(29)] + ["rm -rf bu\u200bild"]
    command = "\n".join(lines)
    tray, line = TrayEnd.with_line()
    root = tk.Tk()
    prompt = ApprovalPrompt(root, line)
    try:
        held = WaitingCommand(7, command, "/srv", "Claude", ("Deletes the folder",), (), time.time() + 300,
                              env_keys=("PATH=/tmp/\u200bbin:/usr/bin",))  # fmt: skip
        prompt.pending[7] = held
        assert prompt.refresh()
        root.update()
        shown = prompt.command.get("1.0", "end-1c")
        assert shown.splitlines()[-1] == "rm -rf bu\\u200bild" and len(shown.splitlines()) == 30
        facts = prompt.command_facts.cget("text")
        assert "30 lines" in facts and "1 character that does not show" in facts
        assert prompt.command_facts.winfo_ismapped() and prompt.command_scroll.winfo_ismapped()
        assert prompt.command.yview()[1] < 1.0, "the box scrolls: the last lines are below"
        assert "Extra environment: PATH=/tmp/\\u200bbin:/usr/bin" in prompt.details.cget("text")
    finally:
        root.destroy()
        tray.close()


@pytest.mark.gui
def test_the_log_window_shows_the_hidden_characters_in_the_list_and_the_details(display: str, paths: AppPaths) -> None:
    with Journal(paths) as journal:
        row = journal.begin_command(command="rm -rf bu\u200bild\x1b[8m", cwd="/srv/\u202eabc", env_keys=["A\u200bB"])
    root = tk.Tk()
    window = LogWindow(root, Journal.open(paths))
    try:
        window.select(row)
        pump_until(root, lambda: "\\u200b" in window.details_text())
        assert window.tree.set(str(row), "command") == "rm -rf bu\\u200bild^[[8m"
        assert "rm -rf bu\\u200bild^[[8m" in window.details_text()
        assert "/srv/\\u202eabc" in window.details_text()
        assert "extra environment: A\\u200bB" in window.details_text()
    finally:
        window.close()
