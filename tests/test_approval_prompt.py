"""The approval prompt window, for real on a private X display.

The tray starts it with pipes: held commands arrive on its stdin, the user's answers leave on its
stdout. Tested in this process over real pipes (to read what it shows), as its own process driven
with xdotool, and started by a real tray for a real `serve`.
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import time
import tkinter as tk
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest

from app.core.journal.store import Journal
from app.core.paths import AppPaths
from app.core.policy.rules import FOLDER_SCOPE, build_folders_kind
from app.ui.windows.approval_prompt import ARM_DELAY_MS, POLL_MS, ApprovalPrompt
from app.ui.windows.held_command import Decision, WaitingCommand, judged
from tests.clicks import ARMED_S, PROMPT_TITLE, click_yes, on_screen, press, shown_window, xdotool
from tests.desktop_env import pump_until as pump_tk_until
from tests.stdio_client import STOP_DEADLINE_S, connect, run
from tests.tray_process import running_tray
from tests.window_pipes import QUIET_S, TrayEnd

pytestmark = pytest.mark.gui
WAIT_S = 10.0


def hold(command_id: int, command: str) -> dict[str, Any]:
    """A held command as the tray describes it to the prompt (the server's own words)."""
    return {
        "id": command_id, "command": command, "cwd": "/srv/site", "env_keys": ["NODE_ENV"], "tool": "execute_command",
        "reasons": "rm -r: recursive removal", "client": "claude-ai", "expires_at": time.time() + 300,
        "explanation": None,
    }  # fmt: skip


@contextmanager
def prompt_on_pipes() -> Iterator[tuple[ApprovalPrompt, TrayEnd]]:
    """The prompt built in this process, its line to the tray made of real pipes."""
    tray, line = TrayEnd.with_line()
    root = tk.Tk()
    prompt = ApprovalPrompt(root, line)
    root.withdraw()
    root.after(POLL_MS, prompt.poll)  # following the tray, as `main` does
    try:
        yield prompt, tray
    finally:
        if _alive(root):
            root.destroy()
        tray.close()


pump_until = partial(pump_tk_until, timeout_s=WAIT_S)


def showing(prompt: ApprovalPrompt, command_id: int) -> bool:
    return prompt.current is not None and prompt.current.id == command_id


def enabled(button) -> bool:
    return bool(button.instate(["!disabled"]))


def _alive(root: tk.Tk) -> bool:
    try:
        return bool(root.winfo_exists())
    except tk.TclError:
        return False


def test_the_prompt_shows_the_exact_command_and_walks_through_pending_approvals(display: str) -> None:
    with prompt_on_pipes() as (prompt, tray):
        root = prompt.root
        tray.tell({"op": "show", "hold": hold(11, "rm -rf dist node_modules")})
        tray.tell({"op": "show", "hold": hold(12, "sudo apt-get remove nginx")})
        pump_until(root, lambda: showing(prompt, 11) and root.winfo_viewable())
        assert prompt.command.get("1.0", "end").strip() == "rm -rf dist node_modules"
        assert "claude-ai wants to run" in prompt.heading.cget("text")
        assert "1 more waiting" in prompt.heading.cget("text")
        assert "recursive removal" in prompt.reason.cget("text")
        assert "/srv/site" in prompt.details.cget("text")
        assert "Extra environment: NODE_ENV" in prompt.details.cget("text")
        pump_until(root, lambda: enabled(prompt.allow_button))
        prompt.allow_button.invoke()
        assert tray.heard() == {"op": "decide", "id": 11, "allowed": True, "rule": None}
        pump_until(root, lambda: showing(prompt, 12))
        assert "more waiting" not in prompt.heading.cget("text")

        tray.tell({"op": "gone", "id": 12})  # answered elsewhere: the prompt follows
        pump_until(root, lambda: prompt.current is None and not root.winfo_viewable())
        assert tray.heard(QUIET_S) is None, "the prompt answers nothing for the user"
        tray.to_window.close()  # the tray closes the prompt
        pump_until(root, lambda: not _alive(root))


def test_allow_and_deny_stay_disabled_for_a_moment_whenever_the_shown_command_changes(display: str) -> None:
    arm_s = ARM_DELAY_MS / 1000
    with prompt_on_pipes() as (prompt, tray):
        root = prompt.root
        # Timed from before the message: the window cannot start arming earlier, while the moment
        # the test sees it showing can come late on a loaded machine.
        shown = time.monotonic()
        tray.tell({"op": "show", "hold": hold(21, "rm -rf dist")})
        tray.tell({"op": "show", "hold": hold(22, "sudo rm -rf /var/www")})
        pump_until(root, lambda: showing(prompt, 21))
        assert not enabled(prompt.allow_button) and not enabled(prompt.deny_button), "not live as it opens"
        pump_until(root, lambda: enabled(prompt.allow_button) and enabled(prompt.deny_button))
        assert time.monotonic() - shown >= arm_s * 0.9

        # The shown command is answered elsewhere: the next one takes its place under the cursor.
        replaced = time.monotonic()
        tray.tell({"op": "gone", "id": 21})
        pump_until(root, lambda: showing(prompt, 22))
        assert not enabled(prompt.allow_button) and not enabled(prompt.deny_button)
        prompt.allow_button.invoke()  # the click meant for the previous command
        prompt.answer(True)  # nor any other way to allow it yet
        root.update()
        assert tray.heard(QUIET_S) is None, "a command the user did not read was not approved"

        pump_until(root, lambda: enabled(prompt.allow_button))
        assert time.monotonic() - replaced >= arm_s * 0.9
        prompt.allow_button.invoke()
        assert tray.heard() == {"op": "decide", "id": 22, "allowed": True, "rule": None}


def test_a_prompt_that_comes_back_after_it_was_hidden_is_not_armed_under_the_pointer(display: str) -> None:
    """A review, 2026-12-05: closed (or hidden by another program), the prompt came back half a
    second later with Allow already live where it was, and a click meant for the window below
    approved the command. Shown again, it waits the arming delay again."""
    with prompt_on_pipes() as (prompt, tray):
        root = prompt.root
        tray.tell({"op": "show", "hold": hold(31, "sudo rm -rf /var/www")})
        pump_until(root, lambda: showing(prompt, 31) and enabled(prompt.allow_button))
        root.withdraw()  # what the close box does
        pump_until(root, lambda: root.winfo_viewable())  # brought back (_keep_in_sight)
        back = time.monotonic()
        assert not enabled(prompt.allow_button), "not live as it comes back"
        prompt.allow_button.invoke()  # the click meant for the window below
        root.update()
        assert tray.heard(QUIET_S) is None, "nothing was approved"
        pump_until(root, lambda: enabled(prompt.allow_button))
        assert time.monotonic() - back >= ARM_DELAY_MS / 1000 * 0.8


def test_a_command_held_earlier_but_told_later_waits_until_the_one_on_screen_is_answered(display: str) -> None:
    """A review, 2026-12-05: two servers racing, a lower id told after a higher one replaced the
    command the person was reading, whose own time then ran on unseen."""
    with prompt_on_pipes() as (prompt, tray):
        root = prompt.root
        tray.tell({"op": "show", "hold": hold(41, "sudo rm -rf /var/www")})
        pump_until(root, lambda: showing(prompt, 41) and enabled(prompt.allow_button))
        tray.tell({"op": "show", "hold": hold(40, "rm -rf dist")})
        pump_until(root, lambda: "1 more waiting" in prompt.heading.cget("text"))
        assert showing(prompt, 41) and enabled(prompt.allow_button), "the command being read stays, armed"
        prompt.allow_button.invoke()
        assert tray.heard() == {"op": "decide", "id": 41, "allowed": True, "rule": None}
        pump_until(root, lambda: showing(prompt, 40))


def test_the_prompt_process_takes_holds_on_stdin_and_says_the_users_keys_on_stdout(
    display: str, cli_env: dict[str, str]
) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "app", "approval-prompt"],
        env={**cli_env, "DISPLAY": display},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    tray = TrayEnd(process.stdin, process.stdout)
    try:
        tray.tell({"op": "show", "hold": hold(31, "rm -rf old-build")})
        tray.tell({"op": "show", "hold": hold(32, "sudo reboot")})
        window = shown_window(display, PROMPT_TITLE)
        press(display, window, "Return", "KP_Enter")  # Enter never answers: no default button
        press(display, window, "Escape")  # Escape is Deny, at once
        assert tray.heard() == {"op": "decide", "id": 31, "allowed": False, "rule": None}
        click_yes(display, PROMPT_TITLE)  # the next one, once its buttons armed
        assert tray.heard() == {"op": "decide", "id": 32, "allowed": True, "rule": None}
        tray.close()  # the tray closes the prompt
        assert process.wait(WAIT_S) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_the_prompt_started_by_hand_in_a_terminal_says_the_app_opens_it(cli_env: dict[str, str]) -> None:
    terminal, child_end = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "app", "approval-prompt"],
            env=cli_env,
            stdin=child_end,
            capture_output=True,
            text=True,
            timeout=30,
        )
    finally:
        os.close(child_end)
        os.close(terminal)
    assert done.returncode == 2
    assert "the Cowork Terminal app opens this window when a command waits for you" in done.stderr


# ---- what the window says (issue 12): plain words, countdown, rules; driven through its line


def held(command: str, cwd: str, *, command_id: int = 1, expires_in_s: float = 300.0) -> WaitingCommand:
    """A held command as the tray sends it: judged by the classifier, as the tray does."""
    return judged(
        command_id, command, cwd, client="Claude Code", expires_at=time.time() + expires_in_s, protected=(),
        session="4",
    )  # fmt: skip


def shown(prompt: ApprovalPrompt, tray: TrayEnd, *items: WaitingCommand) -> tk.Tk:
    """Tell the prompt about `items` as the tray does, and wait until it shows the first."""
    for item in items:
        tray.tell({"op": "show", "hold": item.to_json()})
    pump_until(prompt.root, lambda: showing(prompt, items[0].id) and prompt.root.winfo_viewable())
    return prompt.root


def test_the_window_says_what_the_command_does_in_plain_words_and_counts_down(display: str) -> None:
    with prompt_on_pipes() as (prompt, tray):
        root = shown(prompt, tray, held("rm -rf build", "/home/ana/project", expires_in_s=125.4))
        assert prompt.what.cget("text") == "Deletes the folder /home/ana/project/build and everything in it"
        assert prompt.heading.cget("text") == "Claude Code wants to run this command on your computer:"
        assert prompt.details.cget("text") == "In folder: /home/ana/project"
        first = prompt.remaining.cget("text")
        assert first.startswith("Waiting for your answer: 2:0") and first.endswith("With no answer, it does not run.")
        pump_until(root, lambda: prompt.remaining.cget("text") != first, timeout_s=3)
        assert "2:0" in prompt.remaining.cget("text"), "the countdown moves, second by second"
        assert [b.cget("text") for b in (prompt.deny_button, prompt.allow_button)] == ["Deny", "Allow once"]
        assert str(root.focus_lastfor()) == str(prompt.deny_button), "the focus goes to Deny: nothing allows by default"


def test_a_build_folder_deletion_offers_a_rule_and_its_click_carries_the_rule(display: str, tmp_path: Path) -> None:
    project = str(tmp_path / "project")
    with prompt_on_pipes() as (prompt, tray):
        root = shown(prompt, tray, held("rm -rf node_modules", project, command_id=1),
                     held("sudo reboot", project, command_id=2))  # fmt: skip
        assert prompt.rules_row.winfo_ismapped()
        expected = f"deleting node_modules in {project}"  # what the command deletes, not every build folder
        # Its folder (pytest's long tmp_path) may be shortened in the middle to keep the window on the screen.
        shown_rule = prompt.rule_button.cget("text")
        assert shown_rule == f"Always allow {expected}" or (
            shown_rule.startswith("Always allow deleting node_modules in /")
            and "…" in shown_rule
            and shown_rule.endswith("/project")
        )
        # Not "for this session only": a session rule lasts until the agent asking quits.
        assert prompt.session_button.cget("text") == "Allow these until Claude Code quits"
        pump_until(root, lambda: enabled(prompt.rule_button))
        prompt.rule_button.invoke()
        assert tray.heard() == {
            "op": "decide", "id": 1, "allowed": True,
            "rule": {"kind": build_folders_kind(["node_modules"]), "folder": project, "scope": FOLDER_SCOPE,
                     "session": None, "description": expected},
        }  # fmt: skip
        pump_until(root, lambda: showing(prompt, 2))
        root.update()
        assert not prompt.rules_row.winfo_ismapped(), "no rule is ever offered for running as administrator"
        assert prompt.what.cget("text").startswith("Runs as administrator\n")


def test_a_session_rule_names_the_agents_session_and_a_denial_never_makes_a_rule() -> None:
    item = held("rm -rf dist", "/home/ana/project")
    rule = Decision(item, True, "session").rule()
    assert rule is not None and rule["scope"] == "session" and rule["session"] == "4"
    assert rule["description"].endswith("for this session")
    assert Decision(item, False, "session").to_message()["rule"] is None
    assert WaitingCommand.from_json(item.to_json()) == item, "held commands travel as JSON"


def test_a_tray_that_sends_only_the_basics_still_shows_the_reasons() -> None:
    basic = {"id": 9, "command": "rm -rf x", "cwd": "/p", "client": "Claude Desktop",
             "reasons": "rm -r: recursive removal", "expires_at": time.time() + 60, "explanation": None}  # fmt: skip
    item = WaitingCommand.from_json(basic)
    assert item.plain == ("rm -r: recursive removal",) and item.proposal is None


# ---- the whole path: a real tray, a real serve, real key presses


def press_in(display: str, name: str, *keys: str) -> None:
    press(display, shown_window(display, name), *keys)


async def _held_call(client: Any, command: str, cwd: Path, result: dict) -> None:
    result.update(await run(client, {"command": command, "cwd": str(cwd)}))


@pytest.mark.anyio
async def test_a_rule_made_by_a_click_lets_the_next_build_folder_deletion_run_and_others_still_wait(
    home: Path, paths: AppPaths, display: str, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    for name in ("build", "dist", "src", "sub/build"):
        (project / name).mkdir(parents=True)
    with running_tray(home, display=display):
        async with connect(home, headless=False) as client:
            first: dict = {}
            async with anyio.create_task_group() as group:
                group.start_soon(_held_call, client, "rm -rf build", project, first)
                await anyio.to_thread.run_sync(shown_window, display, PROMPT_TITLE)
                await anyio.sleep(ARMED_S)
                # From Deny (the focus), Tab twice: past Allow once, to "Always allow ... in this folder".
                await anyio.to_thread.run_sync(lambda: press_in(display, PROMPT_TITLE, "Tab", "Tab", "space"))
            with anyio.fail_after(STOP_DEADLINE_S):
                second = await run(client, {"command": "rm -rf build", "cwd": str(project / "sub")})
            third: dict = {}
            async with anyio.create_task_group() as group:  # dist: a build folder the rule does not name
                group.start_soon(_held_call, client, "rm -rf dist", project, third)
                await anyio.to_thread.run_sync(shown_window, display, PROMPT_TITLE)
                await anyio.sleep(0.5)
                assert not third, "an unmatched command still waits for the user"
                await anyio.to_thread.run_sync(lambda: press_in(display, PROMPT_TITLE, "Escape"))  # Escape is Deny
            with anyio.fail_after(WAIT_S):
                while await anyio.to_thread.run_sync(on_screen, display, PROMPT_TITLE):
                    await anyio.sleep(0.1)  # the prompt closes when nothing is left to answer
    assert first.get("exitCode") == 0 and not (project / "build").exists(), first
    assert second.get("exitCode") == 0 and not (project / "sub" / "build").exists(), second
    assert "The user denied this command" in third["error"] and (project / "dist").exists()
    with Journal(paths) as journal:
        [rule] = journal.rules()
        assert rule.folder == str(project.resolve()) and rule.kind == build_folders_kind(["build"])
        rows = {(r.command, r.cwd): r for r in journal.recent_commands(limit=10)}
        by_rule = rows[("rm -rf build", str(project / "sub"))]
        assert by_rule.allowed_by_rule == rule.id and by_rule.decided_by == f"rule {rule.id}"
        assert rows[("rm -rf build", str(project))].allowed_by_rule is None
        # The log says what the person did, in their words (it said "Refused" and "your rule 1").
        from app.ui.windows.log_model import detail_lines, status_label

        denied = rows[("rm -rf dist", str(project))]
        assert status_label(denied) == "⊘ Denied by you"
        assert denied.decision == "denied" and denied.decided_by == "user (approval prompt)"
        answer = {line.label: line.value for line in detail_lines(by_rule, rules=journal.rules())}["Answer"]
        assert answer == f"allowed by your rule “deleting build in {project}”"
    notices = (home.parent / "tray.log").read_text()  # the tray's log has each notice it showed
    assert f"notice: Rule made: From now on, deleting build in {project}" in notices


def test_the_most_dangerous_class_is_said_as_such_and_allowed_only_after_typing_allow(display: str) -> None:
    """The classifier names a danger class (issue 24, item 1); the window reads it defensively. A
    program downloaded and run names no folder: the word is typed."""

    from tests.window_pipes import QUIET_S

    piped = held("curl -fsSL https://example.com/install.sh | sh", "/home/ana", command_id=9)
    with prompt_on_pipes() as (prompt, tray):
        root = shown(prompt, tray, piped)
        assert prompt.severe_row.winfo_ismapped()
        assert prompt.danger_line.cget("text") == (  # in red and bold: the most dangerous class
            "Runs a program downloaded from the internet. Nobody has checked this program: it can do anything "
            "you can, and that cannot be undone."
        )
        assert str(prompt.danger_line.cget("font")).endswith("bold")
        assert prompt.confirm_label.cget("text") == "To allow it, type allow:"
        assert not prompt.rules_row.winfo_ismapped(), "no rule is offered for the most dangerous class"
        pump_until(root, lambda: enabled(prompt.deny_button))
        assert not enabled(prompt.allow_button), "armed, yet Allow waits for the word"
        prompt.answer(True)  # a click that got through anyway: nothing is sent
        assert tray.heard(QUIET_S) is None
        prompt.typed.set("Allow")
        assert enabled(prompt.allow_button)
        prompt.allow_button.invoke()
        assert tray.heard() == {"op": "decide", "id": 9, "allowed": True, "rule": None}


def test_deleting_the_whole_home_folder_waits_for_its_path_typed_by_the_user_not_by_another_program(
    display: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Typing "allow" let a habit through for `rm -rf ~` (issue 24: "type the folder's name"); and the
    box took keys any program could send it, which would make the click a habit again (issue 23)."""
    from app.ui.windows.real_input import IGNORED_SENT_TYPING
    from tests.window_pipes import QUIET_S

    monkeypatch.setenv("HOME", "/home/ana")
    home_wipe = held("rm -rf ~", "/home/ana/projects", command_id=9)
    assert home_wipe.confirm_name == "/home/ana"
    with prompt_on_pipes() as (prompt, tray):
        root = shown(prompt, tray, home_wipe)
        assert prompt.confirm_label.cget("text") == "To allow it, type the folder it deletes, /home/ana:"
        pump_until(root, lambda: enabled(prompt.deny_button))
        prompt.typed.set("allow")
        assert not enabled(prompt.allow_button), "the word is not the folder's name"
        prompt.typed.set("/home/an")
        assert not enabled(prompt.allow_button)
        prompt.typed.set("")

        window = shown_window(display, PROMPT_TITLE)
        xdotool(display, "windowfocus", "--sync", window)
        prompt.confirm_entry.focus_force()
        root.update()
        xdotool(display, "type", "--window", str(prompt.confirm_entry.winfo_id()), "/home/ana")  # XSendEvent
        pump_until(root, lambda: IGNORED_SENT_TYPING in caplog.text)  # the keys reached the box...
        pump_for(root, 0.3)
        assert prompt.typed.get() == "" and not enabled(prompt.allow_button), "...and typed nothing"
        prompt.answer(True)
        assert tray.heard(QUIET_S) is None

        xdotool(display, "type", "--delay", "20", "/home/ana/")  # the user's own keys (XTEST)
        pump_until(root, lambda: prompt.typed.get() == "/home/ana/")
        assert enabled(prompt.allow_button), "the path, a final / aside"
        prompt.allow_button.invoke()
        assert tray.heard() == {"op": "decide", "id": 9, "allowed": True, "rule": None}


def test_deleting_every_file_on_the_computer_asks_for_the_word_since_its_name_is_one_keystroke() -> None:
    root_wipe = held("rm -rf --no-preserve-root /", "/home/ana")
    assert root_wipe.severe and root_wipe.confirm_name is None
    assert WaitingCommand.from_json(root_wipe.to_json()) == root_wipe


def test_erasing_a_whole_disk_is_the_most_dangerous_class_and_waits_for_the_disks_name(
    display: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`dd of=/dev/sdb` and `mkfs /dev/sdb1` were "loss of your files", like deleting a build folder,
    allowed with one click (issue 24: the strongest class includes a whole disk)."""
    monkeypatch.setenv("HOME", "/home/ana")
    assert held("mkfs.ext4 /dev/sdb1", "/home/ana").confirm_name == "/dev/sdb1"
    assert held("dd if=backup.img of=restored.img", "/home/ana").danger == "loses_files", "a file is not a disk"
    both = held("rm -rf ~ && wipefs -a /dev/nvme0n1", "/home/ana")
    assert both.danger == "erases_disk" and both.confirm_name == "/dev/nvme0n1", "the name of the class it asks for"
    wipe = held("dd if=/dev/zero of=/dev/sdb bs=1M", "/home/ana", command_id=4)
    with prompt_on_pipes() as (prompt, tray):
        root = shown(prompt, tray, wipe)
        assert prompt.danger_line.cget("text") == (
            "Erases a whole disk. Everything on that disk would be lost for good: this cannot be undone."
        )
        assert prompt.confirm_label.cget("text") == "To allow it, type the disk it erases, /dev/sdb:"
        pump_until(root, lambda: enabled(prompt.deny_button))
        for typed in ("allow", "/dev/sda", "sdb"):
            prompt.typed.set(typed)
            assert not enabled(prompt.allow_button), typed
        prompt.typed.set("/dev/sdb")
        assert enabled(prompt.allow_button)
        prompt.allow_button.invoke()
        assert tray.heard() == {"op": "decide", "id": 4, "allowed": True, "rule": None}


def pump_for(root: tk.Tk, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        root.update()
        time.sleep(0.02)


def test_each_class_of_danger_says_what_would_be_lost_and_the_worst_are_severe() -> None:
    from app.ui.windows.held_command import danger_words

    wipe = held("rm -rf ~", "/home/ana")
    assert wipe.danger == "loses_everything" and wipe.severe
    assert danger_words(wipe.danger) == (
        "Deletes everything you have",
        "All your documents, photos and settings would be deleted for good: this cannot be undone.",
    )
    build = held("rm -rf build", "/home/ana/project")
    assert build.danger == "loses_files" and not build.severe, "a build folder is not the whole home"
    assert danger_words(build.danger) == (
        "Irreversible loss of your files",
        "What it deletes does not go to the Trash: this cannot be undone.",
    )
    piped = held("curl -fsSL https://example.com/install.sh | sh", "/home/ana")
    assert piped.severe and danger_words(piped.danger)[0] == "Runs a program downloaded from the internet"
    pushed = held("git push --force origin main", "/home/ana/project")
    assert pushed.danger == "shared_history" and not pushed.severe
    assert danger_words(None) is None and danger_words("from_a_newer_version") is None
    ordinary = held("rm -rf build", "/home/ana/project")
    assert WaitingCommand.from_json(ordinary.to_json()) == ordinary and not ordinary.severe


def test_the_windows_texts_use_its_whole_width_and_the_class_of_danger_reads_as_two_sentences(display: str) -> None:
    """The texts wrapped at 560 px beside an empty band, since the rule buttons make the window wider;
    and the class's title ran into its sentence with a second colon ("…files: What it deletes…: this…")."""
    from app.ui.windows.approval_prompt import FRAME_PAD_PX, WRAP_PX

    with prompt_on_pipes() as (prompt, tray):
        root = shown(prompt, tray, held("rm -rf build dist", "/home/ana/projects/recipes-app"))
        pump_until(root, lambda: prompt.rules_row.winfo_ismapped())
        root.update()
        width = prompt.heading.master.winfo_width()
        assert width > WRAP_PX + 2 * FRAME_PAD_PX, "the rule buttons make the window wider than the texts' minimum"
        for label in (prompt.heading, prompt.what, prompt.danger_line, prompt.advice):
            assert int(str(label.cget("wraplength"))) == width - 2 * FRAME_PAD_PX
        assert prompt.danger_line.cget("text") == (
            "Irreversible loss of your files. What it deletes does not go to the Trash: this cannot be undone."
        )
