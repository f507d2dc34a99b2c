"""The tray's windows and the program they start from (a red team, 2026-12-06: a tray whose files
were replaced by an older version started that version's approval prompt, which dropped what only a
person may allow). The tray notes its program's identity at start (core/program_identity.py); it
starts no window once the files on disk differ, and a window it starts must say first, on its line,
that it is that program (ui/windows/link.py), or it is told nothing and heard not at all."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from app.core.authority.questions import Question
from app.core.paths import AppPaths
from app.core.program_identity import SAY_PROGRAM_ENV, program_identity
from app.core.self_command import app_argv, runs_this_program
from app.ui.tray import windows as tray_windows
from app.ui.tray.windows import TrayWindows, files_replaced_text
from app.ui.windows import link
from app.ui.windows.link import PipedWindow, TrayLine

WAIT_S = 10.0
HEARD_S = 0.5  # how long "the window was told nothing" is waited for


def wait_for(condition: Any, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


# -- the identity ------------------------------------------------------------------------------------


def package(folder: Path) -> Path:
    (folder / "ui").mkdir(parents=True)
    (folder / "__init__.py").write_text("")
    (folder / "ui" / "prompt.py").write_text("SHOWN = 'asks'\n")
    return folder


def test_the_identity_changes_when_a_file_is_replaced_added_or_removed_not_with_pycache(tmp_path: Path) -> None:
    root = package(tmp_path / "app")
    first = program_identity(frozen=False, root=root)
    assert program_identity(frozen=False, root=root) == first
    (root / "ui" / "__pycache__").mkdir()
    (root / "ui" / "__pycache__" / "prompt.cpython-311.pyc").write_bytes(b"compiled")
    assert program_identity(frozen=False, root=root) == first, "Python writes __pycache__ itself"

    older = tmp_path / "older.py"
    older.write_text("SHOWN = 'less'\n")  # as long as the file it replaces
    os.utime(older, ns=(os.stat(root / "ui" / "prompt.py").st_mtime_ns,) * 2)
    shutil.copy2(older, tmp_path / "moved.py")
    os.replace(tmp_path / "moved.py", root / "ui" / "prompt.py")  # same size and time, another file
    replaced = program_identity(frozen=False, root=root)
    assert replaced != first
    (root / "ui" / "new.py").write_text("")
    added = program_identity(frozen=False, root=root)
    assert added not in (first, replaced)
    (root / "ui" / "new.py").unlink()
    assert program_identity(frozen=False, root=root) == replaced


def test_the_identity_of_this_install_costs_a_stat_of_each_file() -> None:
    """Looked at before each window the tray starts, and by the window itself: it must stay cheap."""
    started = time.perf_counter()
    for _ in range(10):
        assert program_identity() == program_identity(frozen=False)
    assert (time.perf_counter() - started) / 20 < 0.05


def test_a_frozen_builds_identity_is_its_executables(tmp_path: Path) -> None:
    executable = tmp_path / "cowork-terminal"
    executable.write_bytes(b"build 1")
    first = program_identity(frozen=True, executable=str(executable))
    assert program_identity(frozen=True, executable=str(executable)) == first
    replacement = tmp_path / "new"
    replacement.write_bytes(b"build 2")
    os.replace(replacement, executable)
    assert program_identity(frozen=True, executable=str(executable)) != first
    assert program_identity(frozen=True, executable=str(tmp_path / "gone")) != first


def test_only_the_apps_own_command_is_this_program() -> None:
    assert runs_this_program(app_argv(False, "/py", "approval-prompt"), False, "/py")
    assert runs_this_program(app_argv(True, "/bundle", "confirm-window"), True, "/bundle")
    assert not runs_this_program(["/py", "-c", "print()"], False, "/py")
    assert not runs_this_program(app_argv(False, "/other-py", "approval-prompt"), False, "/py")
    assert not runs_this_program(app_argv(False, "/py"), False, "/py")


# -- the line: a window says which program it is first -------------------------------------------------

# A window of an older version: it says nothing of its program, and clicks Allow at once; what it
# was told goes to argv[1].
OLDER_WINDOW = """
import json, sys
print(json.dumps({"op": "decide", "id": 7, "allowed": True}), flush=True)
with open(sys.argv[1], "w") as told:
    told.write(sys.stdin.read())
"""
# A window that says a program, then clicks Allow for what it is shown.
SAYING_WINDOW = """
import json, sys
print(json.dumps({"op": "hello", "program": sys.argv[2]}), flush=True)
shown = json.loads(sys.stdin.readline())
with open(sys.argv[1], "w") as told:
    told.write(json.dumps(shown))
print(json.dumps({"op": "decide", "id": shown["hold"]["id"], "allowed": True}), flush=True)
sys.stdin.read()
"""
# This version's window end (TrayLine): it says its program when the tray asks for it.
THIS_VERSIONS_WINDOW = """
import json, os, sys
from app.ui.windows.link import TrayLine
line = TrayLine()
shown = line.incoming.get(timeout=10)
line.send({"op": "decide", "id": shown["hold"]["id"], "allowed": True, "asked": os.environ.get(ASKED)})
line.incoming.get(timeout=10)
""".replace("ASKED", repr(SAY_PROGRAM_ENV))


class Heard:
    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.refused: list[str] = []
        self.exits: list[int] = []


def piped(script: str, heard: Heard, *args: str, program: str | None) -> PipedWindow:
    return PipedWindow(
        [sys.executable, "-c", script, *args],
        heard.messages.append,
        on_exit=heard.exits.append,
        program=program,
        on_refused=heard.refused.append,
    )


def test_a_window_that_does_not_say_its_program_is_told_nothing_and_its_allow_is_dropped(tmp_path: Path) -> None:
    told, heard = tmp_path / "told", Heard()
    window = piped(OLDER_WINDOW, heard, str(told), program=program_identity())
    window.send({"op": "show", "hold": {"id": 7, "command": "echo x >> ~/.bashrc"}})
    wait_for(lambda: heard.exits, "the window was not ended")
    assert heard.messages == [], "a click from a window of another version reached the tray"
    assert heard.refused and "before saying which program it is" in heard.refused[0]
    assert window.refused and not window.send({"op": "gone", "id": 7})
    assert not told.exists() or told.read_text() == ""


def test_a_window_of_another_program_is_refused(tmp_path: Path) -> None:
    told, heard = tmp_path / "told", Heard()
    window = piped(SAYING_WINDOW, heard, str(told), "not-this-one", program=program_identity())
    window.send({"op": "show", "hold": {"id": 7}})
    wait_for(lambda: heard.exits, "the window was not ended")
    assert heard.messages == [] and window.refused
    assert "another program" in heard.refused[0]


def test_a_window_that_says_the_trays_program_is_told_and_heard(tmp_path: Path) -> None:
    told, heard = tmp_path / "told", Heard()
    window = piped(SAYING_WINDOW, heard, str(told), "the-trays", program="the-trays")
    window.send({"op": "show", "hold": {"id": 7}})  # held until it said who it is, then sent
    wait_for(lambda: heard.messages, "the window's click did not reach the tray")
    assert heard.messages == [{"op": "decide", "id": 7, "allowed": True}]
    window.close()
    wait_for(lambda: heard.exits, "the window did not end")
    assert heard.refused == []
    assert json.loads(told.read_text()) == {"op": "show", "hold": {"id": 7}}


def test_this_versions_window_says_its_program_when_the_tray_asks(tmp_path: Path) -> None:
    heard = Heard()
    window = piped(THIS_VERSIONS_WINDOW, heard, program=program_identity())
    window.send({"op": "show", "hold": {"id": 9}})
    wait_for(lambda: heard.messages, "the window's click did not reach the tray")
    # Said to the tray only: the window's own children are not asked to say it again.
    assert heard.messages == [{"op": "decide", "id": 9, "allowed": True, "asked": None}]
    assert heard.refused == []
    window.close()


def test_a_window_the_tray_did_not_ask_says_nothing_of_its_program() -> None:
    read_end, write_end = os.pipe()
    out_read, out_write = os.pipe()
    with os.fdopen(out_read, "rb") as said:
        line = TrayLine(stdin=os.fdopen(read_end, "rb"), stdout=os.fdopen(out_write, "wb"))
        line.send({"op": "pause", "paused": True})
        assert json.loads(said.readline()) == {"op": "pause", "paused": True}
        os.close(write_end)


# -- the tray: no window from files that are not its own ----------------------------------------------


class Notices:
    def __init__(self) -> None:
        self.history: list[tuple[str, str]] = []

    def notify(self, title: str, message: str, **_kw: Any) -> None:
        self.history.append((title, message))

    def withdraw(self, _keys: Any = None) -> None:
        pass


class Answers:
    def __init__(self) -> None:
        self.answers: list[tuple[str, bool, str | None]] = []

    def answer(self, question: Question, yes: bool, *, why_not: str | None = None) -> None:
        self.answers.append((question.key, yes, why_not))

    def welcome_shown(self) -> None:
        raise AssertionError("no Welcome was to be shown")


class FakeApp:
    """What TrayWindows reaches of the tray, its windows this program's own commands."""

    def __init__(self, tmp_path: Path, program: str) -> None:
        self.paths = type("Paths", (), {"log_dir": tmp_path / "logs"})()
        self.hub = Answers()
        self.notifier = Notices()
        self.program = program
        self.platform, self.windows, self.has_menu, self.autostart = sys.platform, True, True, False
        frozen = bool(getattr(sys, "frozen", False))
        self.log_window_command = app_argv(frozen, sys.executable, "log-window")
        self.approval_prompt_command = app_argv(frozen, sys.executable, "approval-prompt")
        self.confirm_command = app_argv(frozen, sys.executable, "confirm-window")
        self.settings_command = app_argv(frozen, sys.executable, "settings-window")
        self.welcome_command = app_argv(frozen, sys.executable, "welcome")
        self.submitted: list[str] = []

    def submit(self, action: str, target: str | None = None) -> None:
        self.submitted.append(action)

    def kick(self) -> None:
        pass

    def quitting(self) -> bool:
        return False

    def read_rules_and_holds(self) -> None:
        pass

    def acknowledge_crashes(self) -> None:
        pass


def test_a_tray_whose_files_were_replaced_opens_no_window_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[Any] = []
    monkeypatch.setattr(tray_windows, "PipedWindow", lambda *a, **k: started.append(a))
    monkeypatch.setattr(tray_windows, "spawn", lambda *a, **k: started.append(a))
    app = FakeApp(tmp_path, program="the files the tray started from")
    windows = TrayWindows(app)  # type: ignore[arg-type]
    windows.open_settings()
    windows.open_log_window()
    windows.open_welcome()
    windows.show_notice("Help", "What the notice says")
    question = Question("resume", "Resume host access?", "Resume", "Cancel", lambda: "resumed")
    windows.ask_user(question)
    windows.show_next_question()
    assert started == [], "a window was started from files that are not the tray's"
    assert windows.files_replaced()
    assert app.hub.answers == [("resume", False, files_replaced_text())]
    said = [message for _title, message in app.notifier.history]
    assert said.count(files_replaced_text()) == 1, "said once, not at every window it did not open"
    assert "What the notice says" in said
    assert "Quit Cowork Terminal and start it again" in files_replaced_text()


def test_the_tray_says_at_once_that_its_files_were_replaced_and_ends_a_window_starting_from_them(
    tmp_path: Path,
) -> None:
    app = FakeApp(tmp_path, program=program_identity())
    windows = TrayWindows(app)  # type: ignore[arg-type]
    windows._program_checked = 0.0
    windows.check_windows()
    assert app.notifier.history == [] and not windows.files_replaced()
    heard = Heard()
    windows._settings = starting = piped("import time; time.sleep(30)", heard, program=app.program)
    app.program = "another"  # as the files being replaced: the identity on disk no longer matches
    windows.check_windows()  # within PROGRAM_CHECK_S of the last look: not yet
    assert app.notifier.history == []
    windows._program_checked = time.monotonic() - tray_windows.PROGRAM_CHECK_S
    windows.check_windows()
    assert [m for _t, m in app.notifier.history] == [files_replaced_text()]
    wait_for(lambda: heard.exits, "the window starting from the replaced files was not ended")
    assert starting.refused and "replaced while it started" in heard.refused[0]


@pytest.mark.gui
@pytest.mark.parametrize("role", ["approval-prompt", "confirm-window", "settings-window", "log-window --tray-line"])
def test_this_versions_windows_say_their_program_and_are_heard(display: str, paths: AppPaths, role: str) -> None:
    """The real windows, started as the tray starts them: each says it is the tray's program."""
    heard = Heard()
    argv = app_argv(False, sys.executable, *role.split())
    window = PipedWindow(argv, heard.messages.append, on_exit=heard.exits.append,
                         program=program_identity(), on_refused=heard.refused.append)  # fmt: skip
    try:
        wait_for(lambda: not window.awaiting_hello() or heard.exits, f"the {role} did not say its program")
        assert heard.refused == [] and heard.exits == [] and not window.refused
    finally:
        window.close()


class HeldOne:
    command_id, client, command = 5, "claude-code", "rm -rf build"

    def to_list(self) -> list[object]:
        return [self.command_id, self.command]


class HubWithHolds(Answers):
    def __init__(self) -> None:
        super().__init__()
        self.seen_ids: list[int] = []

    def pending_holds(self) -> list[HeldOne]:
        return [HeldOne()]

    def seen(self, command_id: int) -> None:
        self.seen_ids.append(command_id)


def test_a_held_command_sent_to_a_prompt_that_was_refused_is_listed_and_its_time_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A prompt refused at its hello never showed what it was sent: those held commands were kept as
    shown, never marked seen, and waited an hour instead of five minutes (a review, 2026-12-06)."""
    monkeypatch.setattr(tray_windows, "for_window", lambda hold, paths, s: type("Shown", (), {"to_json": dict})())
    monkeypatch.setattr(tray_windows, "runs_this_program", lambda argv, frozen, executable: True)
    app = FakeApp(tmp_path, program=program_identity())
    app.hub = HubWithHolds()  # type: ignore[assignment]
    # Another program's prompt, which waits until it is ended (by a signal: the prompt's restart path).
    says_another = (
        "import json, time; print(json.dumps({'op': 'hello', 'program': 'another'}), flush=True); time.sleep(30)"
    )
    app.approval_prompt_command = [sys.executable, "-c", says_another]
    windows = TrayWindows(app)  # type: ignore[arg-type]
    windows.sync_approval_prompt()
    prompt = windows._prompt
    assert prompt is not None
    wait_for(lambda: not prompt.alive(), "the prompt of another program was not ended")
    windows.sync_approval_prompt()  # the next look (what a new hold or OPEN_APPROVALS does)
    assert windows._prompt is None
    assert app.hub.seen_ids == [5], "its time never started"
    windows.sync_approval_prompt()
    assert app.hub.seen_ids == [5], "listed once"


def test_a_working_window_stays_open_when_a_new_one_cannot_start(tmp_path: Path) -> None:
    """After the files were replaced, a click on the log or Settings closed the window that still
    worked (it said its hello before) and opened none (a review, 2026-12-06)."""
    app = FakeApp(tmp_path, program=program_identity())
    windows = TrayWindows(app)  # type: ignore[arg-type]
    heard = Heard()
    log_window = piped(SAYING_WINDOW, heard, str(tmp_path / "told-log"), app.program, program=app.program)
    settings = piped(SAYING_WINDOW, Heard(), str(tmp_path / "told-settings"), app.program, program=app.program)
    windows.log_windows, windows._settings = [log_window], settings
    app.program = "another"  # the files on disk are no longer the tray's
    windows.open_log_window()
    windows.open_settings()
    assert windows.log_windows == [log_window] and log_window.alive()
    assert windows._settings is settings and settings.alive()
    assert [m for _t, m in app.notifier.history] == [files_replaced_text()]
    log_window.close()
    settings.close()


def test_a_window_that_never_says_its_program_is_refused_before_what_waits_for_it_grows_without_end() -> None:
    heard = Heard()
    window = piped("import time; time.sleep(30)", heard, program=program_identity())
    for number in range(link.UNSENT_MAX):
        assert window.send({"op": "update", "n": number})
    assert not window.send({"op": "update", "n": "one more"})
    assert window.refused and "did not say which program it is" in heard.refused[0]
    wait_for(lambda: heard.exits, "the window was not ended")
