"""Attacks on the tray's own windows from another program on the same display: clicks sent to a
window (XSendEvent, what `xdotool click --window` does), a prompt hidden or killed, and Tk's `send`.
Where the route is an agent's, the attack comes from its detached background job, started through
execute_command (AgentJob; without the container, which hides the display from commands). Each
test shows the attack reached the window, then that it decided nothing, then that the user's own
click (XTEST, as from a mouse) still works."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import tkinter as tk
from pathlib import Path
from typing import Any

import anyio
import pytest

from app.core.channel.client import current_tray_state
from app.core.journal.store import Journal, Status
from app.core.messages import PROMPT_DECIDED_BY
from app.core.paths import AppPaths
from app.ui.windows.real_input import IGNORED_SENT_EVENT
from app.ui.windows.welcome import WelcomeWindow
from tests.agent_job import AgentJob
from tests.clicks import (
    ARMED_S,
    CONFIRM_TITLE,
    PROMPT_TITLE,
    Box,
    buttons_along,
    click_at,
    click_yes,
    deepest_at,
    press,
    sent_click,
    shown_window,
    window_boxes,
)
from tests.desktop_env import make_fake_desktop, pump_until, wait_for
from tests.stdio_client import STOP_DEADLINE_S, connect, run
from tests.test_authority import cli, click_allow_when_held, wait_until_held
from tests.tray_process import desktop_home, running_tray

pytestmark = [pytest.mark.gui, pytest.mark.anyio]
LOG_TITLE = "Cowork Terminal: activity"
SETTLE_S = 1.0  # long enough for a window and the tray to act on a click
PROMPT_STARTED = re.compile(r"approval prompt started \(pid (\d+)\)")  # in the tray's log


async def ask_deletion(client: Any, folder: Path, result: dict) -> None:
    """The command these tests have held: `rm -rf cache` in `folder`; what the model reads goes to `result`."""
    result.update(await run(client, {"command": "rm -rf cache", "cwd": str(folder)}))


async def answered(result: dict) -> None:
    """Until the model has its answer (the user's click decided the held command)."""
    with anyio.fail_after(10):
        while not result:
            await anyio.sleep(0.05)


def log_window(display: str) -> tuple[str, list]:
    top = hex(int(shown_window(display, LOG_TITLE)))
    return top, window_boxes(display, top)


def switch_button(display: str) -> tuple[str, Box]:
    """The log window's Pause/Resume switch: the button at the right of the coloured band."""
    _top, boxes = log_window(display)
    _band, (x, y, w, h) = deepest_at(boxes, boxes[0][2][0] + 3, boxes[0][2][1] + 3)
    return buttons_along(boxes, y + h // 2, x + w - 1, x)[0]


def right_column_buttons(display: str) -> list[tuple[str, Box]]:
    """The buttons at the log window's right edge, top to bottom: Clear history..., then (with a
    command selected) Copy command in the details."""
    _top, boxes = log_window(display)
    x, y, w, h = boxes[0][2]
    seen: list[tuple[str, Box]] = []
    for py in range(y + 130, y + h, 3):
        wid, box = deepest_at(boxes, x + w - 22, py)
        if 40 <= box[2] <= 400 and box[3] <= 60 and all(wid != s[0] for s in seen):
            seen.append((wid, box))
    return seen


def select_newest_row(display: str) -> tuple[tuple[str, Box], list[tuple[str, Box]]]:
    """Select the list's newest row with a real click; then Clear history... and the buttons of the
    details' head, from the right: Copy command, Stop, and for a waiting command Deny and "Allow…"."""
    _top, boxes = log_window(display)
    clear = right_column_buttons(display)[0]
    cx, cy, _cw, ch = clear[1]
    _list, (lx, ly, lw, _lh) = deepest_at(boxes, cx - 200, cy + ch + 60)
    click_at(display, (lx + lw - 160, ly + 30, 100, 16))  # at its right end: the prompt may cover its left
    time.sleep(SETTLE_S)
    return clear, details_buttons(display)


def details_buttons(display: str) -> list[tuple[str, Box]]:
    """The buttons of the selected command's details head, from the right (as they are drawn now)."""
    copy = right_column_buttons(display)[1]
    _top, boxes = log_window(display)
    x, y, w, h = copy[1]
    return buttons_along(boxes, y + h // 2, x + w - 1, x - 600)


def clipboard(display: str) -> str:
    """What a paste would give: the clipboard, read as another program on the display reads it."""
    probe = "import tkinter as t; r=t.Tk(); r.withdraw(); print(r.clipboard_get(), end='')"
    env = {**os.environ, "DISPLAY": display}
    return subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=30).stdout


def window_log(paths: AppPaths, name: str = "log-window.stderr.log") -> str:
    """What a window process wrote to its log in the logs folder (the log window's, by default)."""
    file = paths.log_dir / name
    return file.read_text(errors="replace") if file.exists() else ""


async def test_a_click_an_agents_job_sends_to_resume_in_the_log_window_does_nothing_and_the_users_click_does(
    home: Path, paths: AppPaths, display: str, tmp_path: Path, weaker_mode: None
) -> None:
    job = AgentJob(tmp_path / "job", display, home)
    with running_tray(home, display=display):
        await anyio.to_thread.run_sync(shown_window, display, LOG_TITLE)  # no tray menu here: it opens at start
        async with connect(home, headless=False) as client:
            await job.start(client)
        assert cli(home, "pause").returncode == 0  # the user pauses; the job lives on
        await anyio.to_thread.run_sync(wait_for, lambda: current_tray_state(paths)["paused"] is True)
        await anyio.sleep(SETTLE_S + ARMED_S)  # the window shows Resume, and it is armed
        resume, box = await anyio.to_thread.run_sync(switch_button, display)

        await job.click(resume, until=lambda: IGNORED_SENT_EVENT in window_log(paths))  # it got there
        await anyio.sleep(SETTLE_S)
        assert current_tray_state(paths)["paused"] is True, "...and resumed nothing"
        job.stop()

        click_at(display, box)  # the same button, clicked as by the user's mouse
        await anyio.to_thread.run_sync(wait_for, lambda: current_tray_state(paths)["paused"] is False)

        def journal_resumed() -> bool:  # the tray pushes to its servers first, then writes its file
            with Journal(paths) as journal:
                return journal.is_paused() is False

        await anyio.to_thread.run_sync(wait_for, journal_resumed)


async def test_clicks_an_agents_job_sends_to_allow_and_to_clear_history_in_the_log_window_do_nothing(
    home: Path, paths: AppPaths, display: str, tmp_path: Path, no_container: None
) -> None:
    (tmp_path / "cache").mkdir()
    job = AgentJob(tmp_path / "job", display, home)
    with running_tray(home, display=display):
        await anyio.to_thread.run_sync(shown_window, display, LOG_TITLE)
        async with connect(home, headless=False) as client, anyio.create_task_group() as group:
            group.start_soon(click_allow_when_held, paths, display)  # the user allowed the agent's script once
            await job.start(client)
            for number in range(2):
                await run(client, {"command": f"echo {number}"})
            result: dict = {}

            group.start_soon(ask_deletion, client, tmp_path, result)
            held = await wait_until_held(paths)
            await anyio.sleep(SETTLE_S)
            clear, row = await anyio.to_thread.run_sync(select_newest_row, display)
            allow = row[3]  # from the right: Copy command, Stop, Deny, Allow…
            await anyio.sleep(ARMED_S)

            await job.click(
                lambda: details_buttons(display)[3][0], until=lambda: IGNORED_SENT_EVENT in window_log(paths)
            )
            await anyio.sleep(SETTLE_S)
            assert not result and (tmp_path / "cache").exists(), "the sent click allowed nothing"
            with Journal(paths) as journal:
                assert journal.get_command(held["id"]).status is Status.WAITING

            # Clear history...: a sent click on its Yes deletes nothing.
            before = window_log(paths).count(IGNORED_SENT_EVENT)
            click_at(display, clear[1])
            dialog = hex(int(await anyio.to_thread.run_sync(shown_window, display, "Clear history")))
            dialog_boxes = await anyio.to_thread.run_sync(window_boxes, display, dialog)
            dx, dy, dw, dh = dialog_boxes[0][2]
            no, yes = buttons_along(dialog_boxes, dy + dh - 30, dx + dw - 5, dx)[:2]
            await anyio.sleep(ARMED_S)
            await job.click(yes[0], until=lambda: window_log(paths).count(IGNORED_SENT_EVENT) > before)
            job.stop()
            await anyio.sleep(SETTLE_S)
            with Journal(paths) as journal:
                assert journal.count_commands() == 4, "the sent click cleared nothing"
            click_at(display, yes[1])  # the user's own Yes

            def cleared_to_one() -> bool:
                with Journal(paths) as journal:
                    return journal.count_commands() == 1  # only the waiting command stays

            await anyio.to_thread.run_sync(lambda: wait_for(cleared_to_one, STOP_DEADLINE_S, 0.1))

            # The user's own "Allow…" brings the approval prompt, which shows the command whole (a red
            # team, 2026-12-06): it decides nothing itself; the user's Allow there runs it.
            click_at(display, allow[1])
            await anyio.sleep(SETTLE_S)
            assert not result and (tmp_path / "cache").exists(), "the log window's Allow decided nothing"
            await anyio.to_thread.run_sync(click_yes, display, PROMPT_TITLE)
            await answered(result)
            assert not (tmp_path / "cache").exists()
            with Journal(paths) as journal:
                assert journal.get_command(held["id"]).decided_by == PROMPT_DECIDED_BY


async def test_an_agents_background_job_asking_to_resume_cannot_click_resume_in_the_confirm_window(
    home: Path, paths: AppPaths, display: str, tmp_path: Path, weaker_mode: None
) -> None:
    """The job's click reaches Resume and decides nothing (without the window's protection, the
    tray resumed: "user (confirmed)"); the user's Escape then says no."""
    job = AgentJob(tmp_path / "job", display, home)
    with running_tray(home, display=display):
        async with connect(home, headless=False) as client:
            await job.start(client)
        assert cli(home, "pause").returncode == 0  # the user pauses; the job lives on
        await job.order("app resume")
        window = await anyio.to_thread.run_sync(shown_window, display, CONFIRM_TITLE)
        boxes = window_boxes(display, hex(int(window)))
        x, y, w, h = boxes[0][2]
        _no, resume = buttons_along(boxes, y + h - 30, x + w - 1, x)[:2]
        await anyio.sleep(ARMED_S + 0.5)  # armed: a click of the user's would count now
        await job.click(resume[0], until=lambda: IGNORED_SENT_EVENT in window_log(paths, "confirm-window.log"))
        await anyio.sleep(SETTLE_S)
        assert current_tray_state(paths)["paused"] is True, "...and decided nothing"
        job.stop()
        press(display, window, "Escape")  # the user's own answer
        [answer] = await job.answers()
    assert answer["code"] != 0 and "You said no; nothing changed." in answer["err"], answer
    with Journal(paths) as journal:
        assert journal.is_paused() is True


def test_tk_send_from_another_program_cannot_reach_the_trays_windows(home: Path, display: str) -> None:
    with running_tray(home, display=display):
        shown_window(display, LOG_TITLE)
        probe = (
            "import tkinter as t; r=t.Tk(); r.withdraw(); apps=r.tk.call('winfo','interps'); "
            "me=r.tk.call('tk','appname'); print(len(apps), len([a for a in apps if a != me]))"
        )
        env = {**os.environ, "DISPLAY": display}
        ran = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=30)
        assert ran.returncode == 0, ran.stderr  # the probe ran on the display...
        assert ran.stdout.split() == ["1", "0"], "...it sees itself registered, and no window of ours"


def map_state(display: str, window: str) -> str:
    env = {**os.environ, "DISPLAY": display}
    said = subprocess.run(["xwininfo", "-id", window], env=env, capture_output=True, text=True, timeout=30).stdout
    return next(line.split(":")[1].strip() for line in said.splitlines() if "Map State" in line)


async def test_a_prompt_an_agents_job_unmaps_comes_back_while_the_command_waits(
    home: Path, paths: AppPaths, display: str, tmp_path: Path, no_container: None
) -> None:
    (tmp_path / "cache").mkdir()
    job = AgentJob(tmp_path / "job", display, home)
    with running_tray(home, display=display):
        async with connect(home, headless=False) as client, anyio.create_task_group() as group:
            group.start_soon(click_allow_when_held, paths, display)  # the user allowed the agent's script once
            await job.start(client)
            result: dict = {}

            group.start_soon(ask_deletion, client, tmp_path, result)
            await wait_until_held(paths)
            prompt = await anyio.to_thread.run_sync(shown_window, display, PROMPT_TITLE)
            for _round in range(2):  # the job does it again
                seen = await job.order(f"unmap {int(prompt)}")  # what `xdotool search ... windowunmap` does
                assert "IsUnMapped" in seen, "the attack hid the prompt"
                # It comes back REVEAL_AFTER_S later, or as soon as a loaded machine lets it: waited for,
                # not timed (the command waits for minutes). xwininfo is a process: asked 10 times a second.
                await anyio.to_thread.run_sync(
                    lambda: wait_for(lambda: map_state(display, prompt) == "IsViewable", STOP_DEADLINE_S, 0.1)
                )
            job.stop()
            press(display, prompt, "Escape")  # the user denies it: the command never ran
            await answered(result)
            assert (tmp_path / "cache").exists()


async def test_a_waiting_row_an_agents_job_rewrites_in_the_journal_shows_in_the_log_window_as_the_tray_holds_it(
    home: Path, paths: AppPaths, display: str, tmp_path: Path, no_container: None
) -> None:
    (tmp_path / "cache").mkdir()
    job = AgentJob(tmp_path / "job", display, home)
    with running_tray(home, display=display):
        await anyio.to_thread.run_sync(shown_window, display, LOG_TITLE)
        async with connect(home, headless=False) as client, anyio.create_task_group() as group:
            group.start_soon(click_allow_when_held, paths, display)  # the user allowed the agent's script once
            await job.start(client)
            result: dict = {}

            group.start_soon(ask_deletion, client, tmp_path, result)
            held = await wait_until_held(paths)
            # What the agent's job can do without the container: rewrite the waiting row to look harmless.
            rewrite = {"file": str(paths.journal), "statement": "UPDATE commands SET command = 'ls -la' WHERE id = ?",
                       "values": [held["id"]]}  # fmt: skip
            await job.order(f"sql {json.dumps(rewrite)}")
            job.stop()
            with Journal(paths) as journal:
                assert journal.get_command(held["id"]).command == "ls -la", "the row was rewritten"
            await anyio.sleep(SETTLE_S)

            _clear, row = await anyio.to_thread.run_sync(select_newest_row, display)
            copy, allow = row[0], row[3]
            click_at(display, copy[1])  # Copy command: what the details show, as the user would paste it
            assert await anyio.to_thread.run_sync(clipboard, display) == "rm -rf cache"

            await anyio.sleep(ARMED_S)
            click_at(display, allow[1])  # "Allow…": the approval prompt, which shows the tray's hold, decides
            await anyio.to_thread.run_sync(click_yes, display, PROMPT_TITLE)  # the user allows: exactly that runs
            await answered(result)
            assert not (tmp_path / "cache").exists()


async def test_a_prompt_an_agents_job_kills_opens_again_while_the_command_waits(
    home: Path, paths: AppPaths, display: str, tmp_path: Path, no_container: None
) -> None:
    (tmp_path / "cache").mkdir()
    log = home.parent / "tray.log"
    job = AgentJob(tmp_path / "job", display, home)
    with running_tray(home, display=display, log=log):
        async with connect(home, headless=False) as client, anyio.create_task_group() as group:
            group.start_soon(click_allow_when_held, paths, display)  # the user allowed the agent's script once
            await job.start(client)
            result: dict = {}

            group.start_soon(ask_deletion, client, tmp_path, result)
            await wait_until_held(paths)
            await anyio.to_thread.run_sync(shown_window, display, PROMPT_TITLE)
            started = PROMPT_STARTED.findall(log.read_text())
            first = started[-1]
            await job.order(f"kill {first}")  # what `pkill -f approval-prompt` in a background job does
            await anyio.to_thread.run_sync(lambda: wait_for(lambda: not Path(f"/proc/{first}").exists()))
            job.stop()

            pids = await anyio.to_thread.run_sync(
                lambda: wait_for(lambda: PROMPT_STARTED.findall(log.read_text())[len(started) :])
            )
            assert pids[0] != first
            prompt = await anyio.to_thread.run_sync(shown_window, display, PROMPT_TITLE)  # shown again
            press(display, prompt, "Escape")
            await answered(result)
            assert (tmp_path / "cache").exists()


def test_sent_clicks_on_welcomes_connect_restart_and_check_buttons_do_nothing_and_the_users_clicks_do(
    display: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Connect writes Claude's config, Restart quits the user's Claude and Check starts a server: only
    the user's own click may."""
    desktop = make_fake_desktop(tmp_path, monkeypatch)
    restarted = tmp_path / "restarted"
    restart = [sys.executable, "-c", "import pathlib, sys; pathlib.Path(sys.argv[1]).write_text('yes')", str(restarted)]
    root = tk.Tk()
    try:
        root.geometry("+0+0")
        window = WelcomeWindow(root, check_command=[sys.executable, "-m", "app", "check"], restart_command=restart)
        pump_until(root, lambda: window.apps is not None, timeout_s=60)
        window.platform = "darwin"  # where the app can restart Claude: the window shows a Restart button
        pump_until(root, lambda: window.real_input.armed)
        connect = window.connect_buttons["claude-desktop"]
        sent_click_reaches(root, display, connect, caplog)
        assert window.busy == 0 and connect.instate(["!disabled"]), "...and connected nothing"
        assert "cowork-terminal" not in (desktop.desktop_config.read_text() if desktop.desktop_config.exists() else "")
        connect.invoke()
        pump_until(root, lambda: window.busy == 0 and window.check_buttons.winfo_children(), timeout_s=60)
        [restart_button] = window.restart_buttons.winfo_children()
        [check_button] = window.check_buttons.winfo_children()
        assert restart_button.cget("text") == "Restart Claude Desktop"
        pump_for(root, ARMED_S)  # armed: what stops the clicks below is where they come from

        # What the window says, not its count of background work: once connected, it looks for
        # Claude's first connection every second in the background, so that count moves by itself.
        said = lambda: window.restart_result.cget("text") or window.check_result.cget("text")  # noqa: E731
        for button in (restart_button, check_button):
            caplog.clear()
            sent_click(display, hex(button.winfo_id()))
            reached = lambda: IGNORED_SENT_EVENT in caplog.text or said() or restarted.exists()  # noqa: E731
            pump_until(root, reached)  # the click reached the button...
            pump_for(root, SETTLE_S)
            assert not restarted.exists() and window.restart_result.cget("text") == "", "...and restarted nothing"
            assert window.check_result.cget("text") == "", "...and checked nothing"
            assert IGNORED_SENT_EVENT in caplog.text

        for button in (restart_button, check_button):
            click_at(display, (button.winfo_rootx(), button.winfo_rooty(), button.winfo_width(), button.winfo_height()))
            pump_for(root, 0.2)
        pump_until(root, lambda: window.busy == 0, timeout_s=60)
        assert restarted.read_text() == "yes"
        assert window.restart_result.cget("text") == "Claude Desktop was restarted."
        assert window.check_result.cget("text").startswith("Not working yet: "), "checked: no app is running here"
    finally:
        root.destroy()


def pump_for(root: tk.Tk, seconds: float) -> None:
    """Let a window built in the test's process handle its events for a while."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        root.update()
        time.sleep(0.02)


def widget_box(widget: tk.Misc) -> Box:
    """Where a widget of a window built in the test's process is on the screen."""
    return (widget.winfo_rootx(), widget.winfo_rooty(), widget.winfo_width(), widget.winfo_height())


def sent_click_reaches(root: tk.Tk, display: str, widget: tk.Misc, caplog: pytest.LogCaptureFixture) -> None:
    """Send a program's click to `widget` and wait until the window has seen it and said it ignored it."""
    caplog.clear()
    sent_click(display, hex(widget.winfo_id()))
    pump_until(root, lambda: IGNORED_SENT_EVENT in caplog.text)  # the click reached the box...
    pump_for(root, SETTLE_S)


def test_a_sent_click_on_welcomes_start_at_login_box_changes_nothing_and_the_users_click_does(
    display: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Start at login changes this computer: the box was a plain Tk tick box that took any click (issue 23)."""
    desktop = make_fake_desktop(tmp_path, monkeypatch)
    root = tk.Tk()
    try:
        root.geometry("+0+0")
        window = WelcomeWindow(root, check_command=[sys.executable, "-m", "app", "check"], restart_command=["true"])
        box = window.autostart_box
        assert box.instate(["disabled"]), "greyed until it shows the setting as it is"
        pump_until(root, lambda: window.busy == 0 and window.autostart_input.armed, timeout_s=60)
        assert not window.autostart_on.get() and not desktop.autostart_file.exists()
        assert box.instate(["!disabled"])

        sent_click_reaches(root, display, box, caplog)
        assert not window.autostart_on.get(), "...and the tick went back"
        assert window.busy == 0 and not desktop.autostart_file.exists(), "...and nothing was turned on"

        click_at(display, widget_box(box))
        pump_until(root, lambda: window.busy == 0 and desktop.autostart_file.exists(), timeout_s=60)
        assert window.autostart_on.get()
    finally:
        root.destroy()


def test_sent_clicks_on_the_settings_windows_choices_send_nothing_and_the_users_click_does(
    display: str, caplog: pytest.LogCaptureFixture
) -> None:
    """ "Never ask" and the others went to the tray from a click any program could send, with no delay."""
    from app.ui.windows.settings_window import SettingsWindow

    root = tk.Tk()
    sent: list[dict] = []
    try:
        root.geometry("+0+0")
        window = SettingsWindow(root, sent.append)
        never, box = window.choices[("approval_mode", "never")], window.choices[("autostart", "")]
        never.invoke()  # before the tray said the settings: greyed, nothing chosen
        assert sent == [] and never.instate(["disabled"])
        window.show({"approval_mode": "destructive", "output_budget": "30000", "autostart": True})
        pump_for(root, ARMED_S)

        for choice in (never, box):
            sent_click_reaches(root, display, choice, caplog)
            assert sent == [], "...and nothing went to the tray"
        assert window.mode.get() == "destructive" and window.autostart.get() is True, "the shown choices are back"

        click_at(display, widget_box(never))
        pump_until(root, lambda: sent)
        assert sent == [{"op": "set", "key": "approval_mode", "value": "never"}]
    finally:
        root.destroy()


def test_sent_clicks_on_the_uninstall_windows_history_box_and_button_change_nothing_and_the_users_click_does(
    display: str, paths: AppPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Ticking "Also delete my command history" decides that the record goes: only the user may tick it."""
    from app.ui.windows.uninstall_window import UninstallWindow

    monkeypatch.setenv("HOME", str(tmp_path / "user-home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "user-home" / ".config"))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no `claude` to ask
    Journal(paths).close()
    deletes_history = f"Delete {paths.journal}"
    root = tk.Tk()
    try:
        root.geometry("+0+0")
        window = UninstallWindow(root, paths)
        window.start()
        pump_until(root, lambda: window.data_box.winfo_ismapped() and window.box_arming.armed, timeout_s=30)
        assert deletes_history not in window.body.cget("text")

        sent_click_reaches(root, display, window.data_box, caplog)
        assert not window.delete_data.get() and deletes_history not in window.body.cget("text"), "...and stays unticked"

        click_at(display, widget_box(window.data_box))
        pump_until(root, lambda: deletes_history in window.body.cget("text"))
        assert window.delete_data.get()

        # Uninstall itself, now that it would delete the history too, once armed.
        pump_until(root, lambda: window.arming.armed and window.uninstall_button.instate(["!disabled"]))
        sent_click_reaches(root, display, window.uninstall_button, caplog)
        assert window.heading.cget("text") == "Uninstall will:" and paths.journal.exists(), "...starts nothing"
    finally:
        root.destroy()


def test_a_tk_profile_a_command_writes_into_the_home_folder_is_not_run_by_a_window_opened_from_a_terminal(
    home: Path, paths: AppPaths, tmp_path: Path, display: str
) -> None:
    # tkinter runs ~/.<class>.py and ~/.<class>.tcl unless Python ignores the environment; the
    # tray starts its windows with `-I`, but `cowork-terminal log-window` typed in a terminal is the
    # console script, which does not. A command may write the home folder (it is not protected).
    user = tmp_path / "user"
    user.mkdir()
    marker = tmp_path / "profile-ran"
    (user / ".cowork-terminal.py").write_text(f"open({str(marker)!r}, 'w')\n")  # the class's and the program's
    (user / ".cowork-terminal.tcl").write_text(f'set f [open "{marker}.tcl" w]; close $f\n')
    env = {**os.environ, "HOME": str(user), "COWORK_TERMINAL_HOME": str(home), "DISPLAY": display}
    script = Path(sys.executable).parent / "cowork-terminal"
    window = subprocess.Popen([str(script), "log-window"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        shown_window(display, LOG_TITLE)  # Tk is up: the profiles would have run by now
    finally:
        window.terminate()
        window.wait(10)
    assert not marker.exists() and not Path(f"{marker}.tcl").exists()


async def test_x_resources_that_name_scripts_for_widget_options_run_nothing_in_the_approval_prompt(
    home: Path, paths: AppPaths, display: str, tmp_path: Path
) -> None:
    # Tk fills every option a widget is not given from X resources: the display's, or ~/.Xdefaults
    # where it has none (as here); ~/.Xresources becomes the display's at the next login. A script
    # there for the prompt's text box scrolled it into running code in the prompt's process, which
    # could answer the prompt itself (a red-team route). A command can no longer write either file
    # (tests/test_container.py); here the file is there already, as after a login.
    (tmp_path / "cache").mkdir()
    marker = tmp_path / "resource-ran"
    user = desktop_home(home)
    user.mkdir(parents=True, exist_ok=True)
    options = ("*Text.xScrollCommand", "*takeFocus", "*Button.takeFocus", "*validateCommand")
    lines = [f"{option}: exec touch {marker}-{i} ;#\n" for i, option in enumerate(options)]
    (user / ".Xdefaults").write_text("".join(lines))
    with running_tray(home, display=display):
        async with connect(home, headless=False) as client, anyio.create_task_group() as group:
            result: dict = {}

            group.start_soon(ask_deletion, client, tmp_path, result)
            await wait_until_held(paths)
            prompt = await anyio.to_thread.run_sync(shown_window, display, PROMPT_TITLE)
            await anyio.sleep(SETTLE_S)  # drawn, scrolled
            press(display, prompt, "Tab", "Tab", "shift+Tab")  # focus moves: -takefocus is asked
            await anyio.sleep(SETTLE_S)
            ran = sorted(p.name for p in tmp_path.glob(f"{marker.name}-*"))
            assert ran == [], f"a resource's script ran in the prompt: {ran}"
            press(display, prompt, "Escape")  # the user denies it
            await answered(result)
    assert (tmp_path / "cache").exists() and not list(tmp_path.glob(f"{marker.name}-*"))


def test_x_resources_naming_variables_for_labels_and_buttons_leave_the_apps_words(
    display: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `*TLabel.textVariable: ::tcl_platform(os)` made every label and button of the prompt read "Linux".
    from tkinter import ttk

    from app.ui.windows.look import new_root

    monkeypatch.setenv("HOME", str(tmp_path))
    options = ("*TLabel.textVariable", "*TButton.textVariable", "*listVariable")
    (tmp_path / ".Xdefaults").write_text("".join(f"{option}: ::tcl_platform(os)\n" for option in options))
    root = new_root()
    try:
        label, button = ttk.Label(root, text="Deletes the folder"), ttk.Button(root, text="Deny")
        listbox = tk.Listbox(root)
        label.pack(), button.pack(), listbox.pack()
        root.update()
        assert (label.cget("textvariable"), button.cget("textvariable"), listbox.cget("listvariable")) == ("",) * 3
        assert (label.cget("text"), button.cget("text")) == ("Deletes the folder", "Deny")
        assert tk.Label(root).option_get("textVariable", "Variable") == ""
    finally:
        root.destroy()
