"""The activity log window, for real: a Tk window on a private Xvfb display, fed by a real server.

The display comes from the shared session fixture `display` in conftest.py (Xvfb missing fails).

Each test builds the window in this process and pumps Tk's event loop until what the user would
see holds, while the MCP SDK's client drives a server from a background event loop (anyio's
blocking portal), as Claude would. A server is `serve --headless` in this process
(tests/in_process_server.py) on that loop's thread: the window reads what it writes in the journal,
and a stop or a pause reaches it through the journal, as from a tray process. A server bound to the
tray, whose rows the tray writes and whose commands it stops, is bound to the tray's hub in this
process (the `hub` fixture): a stop from a window started by hand reaches that hub too. A window
started by hand takes the holds only from a real tray (tests/tray_process.py), which holds the
commands of a server in this process as of any server linked to it; only a real tray shows a
confirm window to click. The server beside a window that asks the tray to resume is a real
`serve` process: a tray refuses a loosening asked from a server's process. The window's own process,
its closing and the command without a display stay processes.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import stat
import subprocess
import sys
import time
import tkinter as tk
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from app.core import app_log
from app.core.authority.hub import Hub
from app.core.channel.client import current_tray_state
from app.core.journal.store import Journal, Outcome, Status
from app.core.messages import PAUSED_MESSAGE, USER_STOP_REASON
from app.core.paths import HOME_ENV, AppPaths
from app.ui.windows import log_window
from app.ui.windows.controls import RequestControls, TrayLineControls
from app.ui.windows.log_window import EMPTY_FILTERED, EMPTY_LIST, ON_TITLE, PAUSED_TITLE, LogWindow
from tests.clicks import CONFIRM_TITLE, click_yes, shown_window
from tests.desktop_env import wait_for
from tests.in_process_server import serving
from tests.tray_process import running_tray
from tests.window_pipes import QUIET_S, TrayEnd

pytestmark = pytest.mark.gui

UI_TIMEOUT_S = 8.0
# New and finished commands show within half a second: bench/latency_bench.py measures that (250 ms
# median). Here `pump` gives every change UI_TIMEOUT_S, a deadline only a broken window misses.


class Answers:
    """The user's answers to the window's yes/no questions, and the questions they were asked."""

    def __init__(self) -> None:
        self.reply = False
        self.asked: list[str] = []

    def __call__(self, title: str, message: str) -> bool:
        self.asked.append(message)
        return self.reply


@pytest.fixture
def answers() -> Answers:
    return Answers()


@pytest.fixture
def open_window(display: str, paths: AppPaths, answers: Answers) -> Iterator[Callable[..., LogWindow]]:
    windows: list[LogWindow] = []

    def open_(**options: Any) -> LogWindow:
        root = tk.Tk(className="cowork-terminal-test")
        root.geometry("1180x760+0+0")
        window = LogWindow(root, Journal.open(paths), confirm=answers, **options)
        windows.append(window)
        pump(window, lambda: window.root.winfo_viewable())
        return window

    yield open_
    for window in windows:
        window.close()


@dataclass
class TrayLineEnds:
    """A window as the tray starts it: its buttons say the user's clicks on its private line."""

    tray: TrayEnd
    controls: TrayLineControls


@pytest.fixture
def tray_line() -> Iterator[TrayLineEnds]:
    end, line = TrayEnd.with_line()
    yield TrayLineEnds(end, TrayLineControls(line))
    end.close()


@pytest.fixture
def journal(paths: AppPaths) -> Iterator[Journal]:
    """A second connection, as the tray, the CLI or a server in another process would hold."""
    with Journal.open(paths) as connection:
        yield connection


def pump(window: LogWindow, condition: Callable[[], object], timeout_s: float = UI_TIMEOUT_S) -> float:
    """Run the window's event loop until `condition` holds; returns how long that took."""
    start = time.monotonic()
    while True:
        window.root.update()
        if condition():
            return time.monotonic() - start
        if time.monotonic() - start > timeout_s:
            pytest.fail(f"the window did not get there within {timeout_s} s; it shows {visible_rows(window)}")
        time.sleep(0.01)


def visible_rows(window: LogWindow) -> list[tuple[str, ...]]:
    tree = window.tree
    return [tuple(tree.item(iid, "values")) for iid in tree.get_children()]


def cell(window: LogWindow, command_id: int, column: str) -> str | None:
    iid = str(command_id)
    return window.tree.set(iid, column) if window.tree.exists(iid) else None


def shown_ids(window: LogWindow) -> list[int]:
    return [int(iid) for iid in window.tree.get_children()]


@dataclass
class Server:
    """A server Claude calls, driven by the SDK's client from another thread."""

    portal: BlockingPortal
    client: Client

    def call(self, command: str, **arguments: Any) -> Future:
        return self.portal.start_task_soon(self.client.call_tool, "execute_command", {"command": command, **arguments})


@contextmanager
def serve(home: Path, *, bound: bool = False, process: bool = False) -> Iterator[Server]:
    """`serve --headless` in this process (tests/in_process_server.py), on the event loop of a thread
    of its own: this thread may block while it pumps Tk or clicks, the server runs on. `bound`: a
    server of the hub of this process (the `hub` fixture), as the tray's runners are. A real
    `cowork-terminal serve --headless` process when asked: a tray refuses a loosening asked from a
    server's process, as from the commands it runs, so a window that asks one must not share its
    process with a server."""
    if not process:
        with (
            start_blocking_portal() as portal,
            portal.wrap_async_context_manager(serving(home, bound=bound)) as client,
        ):
            yield Server(portal, client)
        return
    # The SDK's stdio client passes only a few variables on: give the child its home explicitly.
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "USER", "LOGNAME", "SHELL")}
    env[HOME_ENV] = str(home)
    params = StdioServerParameters(command=sys.executable, args=["-m", "app", "serve", "--headless"], env=env)
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(Client(params, mode="legacy")) as c:
        yield Server(portal, c)


def result_of(future: Future, window: LogWindow, timeout_s: float = UI_TIMEOUT_S) -> Any:
    pump(window, future.done, timeout_s)
    return future.result()


def payload(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


def add_rows(journal: Journal, commands: list[tuple[str, str | None, Status]]) -> list[int]:
    ids = []
    for command, cwd, status in commands:
        cid = journal.begin_command(command=command, cwd=cwd, client_name="claude-ai")
        if status is not Status.RUNNING:
            code = 0 if status is Status.FINISHED else 1
            journal.finish_command(cid, Outcome(status=status, exit_code=code, stdout=b"out\n", duration_ms=5))
        ids.append(cid)
    return ids


def live_processes(marker: str) -> list[str]:
    out = subprocess.run(["ps", "-eo", "stat=,args="], capture_output=True, text=True, check=True).stdout
    return [
        line
        for line in out.splitlines()
        if marker in line and not line.lstrip().startswith("Z") and "ps -eo" not in line
    ]


def test_commands_run_through_a_real_server_show_with_their_details_and_output(
    open_window: Callable[..., LogWindow], home: Path, tmp_path: Path, journal: Journal
) -> None:
    window = open_window()
    assert window.empty_label.winfo_ismapped() and window.empty_label.cget("text") == EMPTY_LIST
    with serve(home) as server:
        payload(result_of(server.call("echo hello from serve", cwd=str(tmp_path)), window))
        failed = result_of(
            server.call(
                "printf 'line one\\nline two\\n'; echo 'oops: no such file' >&2; exit 3", env={"API_MODE": "test"}
            ),
            window,
        )
        assert json.loads(failed.content[0].text)["exitCode"] == 3
        newest = journal.recent_commands(limit=2)
        # The window may have listed a row while it ran: its end comes with a later refresh.
        pump(
            window,
            lambda: (
                shown_ids(window) == [r.id for r in newest]
                and all(cell(window, r.id, "status") != "● Running" for r in newest)
            ),
        )
    failed_row, echo_row = newest
    assert cell(window, echo_row.id, "status") == "✓ Finished"
    assert cell(window, echo_row.id, "command") == "echo hello from serve"
    assert cell(window, echo_row.id, "client") == echo_row.client_name and echo_row.client_name
    assert cell(window, failed_row.id, "status") == "✗ Failed" and cell(window, failed_row.id, "exit") == "3"
    assert "line one ⏎" not in cell(window, failed_row.id, "command")  # the command, not its output
    assert not window.empty_label.winfo_ismapped()

    window.select(failed_row.id)
    pump(window, lambda: "oops" in window.details_text())
    details = window.details_text()
    assert window.details_title.cget("text") == f"Command #{failed_row.id}: ✗ Failed: the program reported error 3"
    for fact in (
        "printf 'line one\\nline two\\n'",
        "line one\nline two",
        "oops: no such file",
        "API_MODE",
        str(Path.home()),
        failed_row.client_name,
    ):
        assert fact in details
    assert window.details.tag_names("1.0") == ("mono",), "the command shows in the monospace font"
    # Read-only, yet selectable and copyable.
    window.details.tag_add("sel", "1.0", "1.6")
    window.details.focus_force()
    window.details.event_generate("<<Copy>>")
    assert window.root.clipboard_get() == "printf"
    window.copy_command()
    assert window.root.clipboard_get() == failed_row.command
    assert not window.stop_button.winfo_ismapped(), "a finished command has nothing to stop"


def test_a_command_shows_as_running_then_finished_while_the_window_is_idle(
    open_window: Callable[..., LogWindow], home: Path, journal: Journal
) -> None:
    window = open_window()
    with serve(home) as server:
        call = server.call("sleep 1; echo done")
        pump(window, lambda: journal.active_commands())
        started = journal.active_commands()[0]
        pump(window, lambda: cell(window, started.id, "status") == "● Running")
        assert "1 command running" in window.activity_label.cget("text")
        window.select(started.id)
        pump(window, window.stop_button.winfo_ismapped)
        assert "Nothing yet." in window.details_text(), "no output so far, said plainly"
        pump(window, lambda: cell(window, started.id, "duration").endswith(" s"))

        payload(result_of(call, window))
        ended = journal.get_command(started.id)
        pump(window, lambda: cell(window, started.id, "status") == "✓ Finished")
    assert time.time() - ended.ended_at < 5
    pump(window, lambda: "done" in window.details_text())
    assert window.activity_label.cget("text") == "Nothing running."
    pump(window, lambda: not window.stop_button.winfo_ismapped())


def test_new_rows_arrive_while_the_user_reads_further_down_without_moving_the_view(
    open_window: Callable[..., LogWindow], journal: Journal
) -> None:
    add_rows(journal, [(f"echo {i}", "/srv", Status.FINISHED) for i in range(150)])
    window = open_window()
    window.tree.yview_moveto(0.5)
    pump(window, lambda: float(window.tree.yview()[0]) > 0.4)
    reading = window._first_visible()
    [new] = add_rows(journal, [("make deploy", "/srv", Status.RUNNING)])
    pump(window, lambda: window.tree.exists(str(new)))
    assert shown_ids(window)[0] == new
    assert window._first_visible() == reading, "the row the user was reading stays in place"


def test_the_pause_switch_pauses_at_once_and_resumes_only_after_the_users_click_in_the_app(
    open_window: Callable[..., LogWindow], home: Path, paths: AppPaths, journal: Journal, display: str
) -> None:
    with running_tray(home, display=display):
        window = open_window(controls=RequestControls(paths))  # `cowork-terminal log-window` started by hand
        assert window.state_label.cget("text") == ON_TITLE and "Pause" in window.pause_button.cget("text")
        with serve(home, process=True) as server:  # the window asks the tray to resume: not from a server
            payload(result_of(server.call("echo before"), window))
            window.pause_button.invoke()
            pump(window, lambda: window.state_label.cget("text") == PAUSED_TITLE)
            assert "Resume" in window.pause_button.cget("text")
            assert current_tray_state(paths)["paused"] is True, "the tray took it"

            refused = result_of(server.call("echo while paused"), window)
            assert refused.is_error and PAUSED_MESSAGE in refused.content[0].text
            [row] = journal.recent_commands(limit=1)
            assert row.status is Status.REFUSED
            pump(window, lambda: cell(window, row.id, "status") == "⊘ Refused: paused")

            pump(window, lambda: window.switch_arming.armed)  # Resume arms a moment after it shows
            window.pause_button.invoke()  # resuming loosens control: the app asks the user first
            shown_window(display, CONFIRM_TITLE)  # the tray asks the user in its own window
            window.root.update()
            assert current_tray_state(paths)["paused"] is True, "nothing changes before the click"
            assert window.state_label.cget("text") == PAUSED_TITLE
            click_yes(display, CONFIRM_TITLE)
            pump(window, lambda: window.state_label.cget("text") == ON_TITLE)
            assert payload(result_of(server.call("echo after"), window))["stdout"] == "after\n"

        # The tray's menu and the CLI flip the same switch: the window follows them.
        assert subprocess.run([sys.executable, "-m", "app", "pause"], capture_output=True, timeout=30).returncode == 0
        pump(window, lambda: window.state_label.cget("text") == PAUSED_TITLE)
        assert window.banner.cget("background") != window.tree.tag_configure("status-finished", "background")


def test_stop_ends_a_running_sleep_tree_through_the_server_and_the_row_says_so(
    open_window: Callable[..., LogWindow], home: Path, paths: AppPaths, journal: Journal, hub: Hub
) -> None:
    """Stop in a window started by hand asks the tray (the hub of this process: a stop is taken from
    anyone), which stops the command in the server that runs it, a server bound to it."""
    marker = "30.4242"  # an unusual duration, to find exactly these sleeps among the machine's processes
    window = open_window(controls=RequestControls(paths))
    with serve(home, bound=True) as server:
        call = server.call(f"sleep {marker} & sleep {marker}; wait")
        pump(window, lambda: len(live_processes(f"sleep {marker}")) >= 3 and shown_ids(window))  # bash, 2 sleeps
        [running] = journal.active_commands()
        window.select(running.id)
        pump(window, window.stop_button.winfo_ismapped)
        assert str(window.stop_button.cget("state")) == "normal"

        window.stop_button.invoke()
        clicked = time.monotonic()
        pump(window, lambda: cell(window, running.id, "status") in ("● Stopping…", "■ Stopped by the user"))
        result = payload(result_of(call, window))
        assert time.monotonic() - clicked < UI_TIMEOUT_S, "the server ended the tree, not the sleeps"
    assert result["note"].startswith(f"{USER_STOP_REASON}. Do not run it again") and result["exitCode"] is None
    pump(window, lambda: cell(window, running.id, "status") == "■ Stopped by the user")
    assert journal.get_command(running.id).status is Status.KILLED
    assert live_processes(f"sleep {marker}") == []
    pump(window, lambda: "Stopped by the user" in window.details_title.cget("text"))


def test_text_and_status_filters_narrow_the_list_including_rows_that_arrive_later(
    open_window: Callable[..., LogWindow], journal: Journal
) -> None:
    ids = add_rows(
        journal,
        [
            ("npm test", "/home/ana/web", Status.FAILED),
            ("npm install", "/home/ana/web", Status.FINISHED),
            ("git status", "/home/ana/notes", Status.FINISHED),
            ("cargo build", "/home/ana/tools/npm-helper", Status.TIMED_OUT),
        ],
    )
    window = open_window()
    assert len(shown_ids(window)) == 4

    window.filter_entry.insert(0, "NPM")  # typed by the user: applied once they pause
    pump(window, lambda: len(shown_ids(window)) == 3)
    assert set(shown_ids(window)) == {ids[0], ids[1], ids[3]}, "the command or the folder may match"

    window.status_box.set("Problems (failed, timed out, interrupted)")
    window.status_box.event_generate("<<ComboboxSelected>>")
    pump(window, lambda: set(shown_ids(window)) == {ids[0], ids[3]})
    assert "matching the filter" in window.status_bar.cget("text")

    later = add_rows(journal, [("npm run lint", "/w", Status.FAILED), ("npm ci", "/w", Status.FINISHED)])
    pump(window, lambda: shown_ids(window)[0] == later[0])
    assert not window.tree.exists(str(later[1])), "a new row outside the filter stays out"

    window.set_filter("nothing like this")
    assert shown_ids(window) == [] and window.empty_label.cget("text") == EMPTY_FILTERED
    window.clear_filter_button.invoke()
    assert len(shown_ids(window)) == 6


def test_clear_history_asks_first_and_only_then_asks_the_tray_to_delete(
    open_window: Callable[..., LogWindow], journal: Journal, answers: Answers, tray_line: TrayLineEnds
) -> None:
    add_rows(journal, [("ls", "/", Status.FINISHED), ("false", "/", Status.FAILED), ("top", "/", Status.RUNNING)])
    window = open_window(controls=tray_line.controls)  # as the tray starts it

    answers.reply = False
    window.clear_button.invoke()
    assert answers.asked and "2 finished commands" in answers.asked[0]
    assert tray_line.tray.heard(QUIET_S) is None, "the user said no: nothing is asked of the tray"

    answers.reply = True
    window.clear_button.invoke()
    assert tray_line.tray.heard() == {"op": "clear_history"}
    assert journal.count_commands() == 3, "the window deletes nothing itself: the tray, the journal's writer, does"


def test_clear_history_from_a_window_started_by_hand_deletes_finished_rows_after_a_click_in_the_app(
    open_window: Callable[..., LogWindow],
    journal: Journal,
    answers: Answers,
    home: Path,
    paths: AppPaths,
    display: str,
) -> None:
    ids = add_rows(journal, [("ls", "/", Status.FINISHED), ("false", "/", Status.FAILED), ("top", "/", Status.RUNNING)])
    with running_tray(home, display=display):
        files_before = sorted(p.name for p in home.rglob("*") if p.suffix != ".log")
        window = open_window(controls=RequestControls(paths))
        answers.reply = True
        window.clear_button.invoke()
        shown_window(display, CONFIRM_TITLE)  # the tray asks the user in its own window first
        assert journal.count_commands() == 3, "nothing is deleted before the click in the app"
        click_yes(display, CONFIRM_TITLE)
        pump(window, lambda: shown_ids(window) == [ids[2]])
        assert journal.count_commands() == 1, "a running command stays, its server still updates it"
        assert sorted(p.name for p in home.rglob("*") if p.suffix != ".log") == files_before, "only journal rows"


def test_history_cleared_elsewhere_leaves_the_list_too(open_window: Callable[..., LogWindow], journal: Journal) -> None:
    add_rows(journal, [("ls", "/", Status.FINISHED), ("pwd", "/", Status.FINISHED)])
    window = open_window()
    assert len(shown_ids(window)) == 2
    journal.clear_history()
    pump(window, lambda: shown_ids(window) == [])


def test_scrolling_to_the_end_pages_in_older_rows_and_holds_a_bounded_number(
    open_window: Callable[..., LogWindow], journal: Journal
) -> None:
    add_rows(journal, [(f"echo {i}", "/srv", Status.FINISHED) for i in range(1500)])
    window = open_window(page_size=100, max_rows=400)
    assert len(shown_ids(window)) == 100 and window.model.has_older
    oldest_seen = min(shown_ids(window))
    for _ in range(12):
        window.tree.yview_moveto(1.0)
        pump(window, lambda: not window._loading_older)
        assert len(window.tree.get_children()) <= 400
        oldest_seen = min(oldest_seen, *shown_ids(window))
    assert oldest_seen < 1500 - 1000, "scrolling reached deep into the history"
    assert window.model.has_newer and window.newest_button.winfo_ismapped()

    window.newest_button.invoke()
    pump(window, lambda: shown_ids(window)[0] == 1500)
    assert len(shown_ids(window)) == 100 and not window.newest_button.winfo_ismapped()


def test_right_clicking_a_running_row_offers_stop(
    open_window: Callable[..., LogWindow], journal: Journal, tray_line: TrayLineEnds
) -> None:
    [done, running] = add_rows(journal, [("ls", "/", Status.FINISHED), ("sleep 9", "/", Status.RUNNING)])
    window = open_window(controls=tray_line.controls)
    for command_id, state in ((done, "disabled"), (running, "normal")):
        x, y, _, height = window.tree.bbox(str(command_id))
        window.tree.event_generate("<Button-3>", x=x + 5, y=y + height // 2)
        window.root.tk.call("tk::MenuUnpost", window.row_menu)  # as Escape does: posting grabbed the pointer
        assert window.selected_id() == command_id
        assert window.row_menu.entrycget(0, "state") == state
    window.row_menu.invoke(0)
    assert tray_line.tray.heard() == {"op": "stop", "id": running}


def test_a_waiting_command_gets_the_approval_hook_and_can_be_stopped(
    open_window: Callable[..., LogWindow], journal: Journal, tray_line: TrayLineEnds
) -> None:
    held = journal.begin_command(command="rm -rf build", cwd="/srv", status=Status.WAITING)
    offered: list[int] = []

    def approval_buttons(frame: Any, record: Any, window: LogWindow) -> None:
        offered.append(record.id)
        tk.Button(frame, text="Allow").pack(side="left")

    window = open_window(waiting_actions=approval_buttons, controls=tray_line.controls)
    assert cell(window, held, "status") == "⚑ Waiting for you"
    assert "1 waiting for your approval" in window.activity_label.cget("text")
    window.show_link.event_generate("<Button-1>")
    assert window.selected_id() == held and offered == [held]
    assert window.actions_frame.winfo_children()
    assert window.stop(held)
    assert tray_line.tray.heard() == {"op": "stop", "id": held}


def test_the_window_the_tray_started_says_each_click_on_its_private_line(
    open_window: Callable[..., LogWindow], journal: Journal, tray_line: TrayLineEnds
) -> None:
    held = journal.begin_command(command="rm -rf build", cwd="/srv", status=Status.WAITING)
    window = open_window(controls=tray_line.controls)
    tray_line.tray.tell({"op": "holds", "holds": [{"id": held, "command": "rm -rf build", "cwd": "/srv"}]})
    window.pause_button.invoke()
    assert tray_line.tray.heard() == {"op": "pause", "paused": True}
    window.select(held)
    pump(window, lambda: {b.cget("text") for b in window.actions_frame.winfo_children()} >= {"Allow…", "Deny"})
    buttons = {b.cget("text"): b for b in window.actions_frame.winfo_children()}
    pump(window, lambda: window.decision_arming.armed)  # like the prompt's, they arm a moment after showing
    buttons["Allow…"].invoke()  # from the tray's own window, a click is the user's: the tray brings its prompt
    assert tray_line.tray.heard() == {"op": "decide", "id": held, "allowed": True, "command": "rm -rf build"}
    buttons["Deny"].invoke()
    assert tray_line.tray.heard() == {"op": "decide", "id": held, "allowed": False, "command": "rm -rf build"}
    assert journal.get_command(held).decision is None, "the window writes nothing: the tray records answers"


def test_a_waiting_row_in_the_trays_window_shows_the_trays_text_then_nobody_to_answer_once_the_tray_is_gone(
    open_window: Callable[..., LogWindow], journal: Journal, paths: AppPaths, tray_line: TrayLineEnds
) -> None:
    held = journal.begin_command(command="rm -rf build", cwd="/srv", status=Status.WAITING)
    rewrite_command(paths, held, "ls -la", "/tmp")
    assert journal.get_command(held).command == "ls -la", "the attack ran: the journal's row says ls"
    window = open_window(controls=tray_line.controls)
    tray_line.tray.tell({"op": "holds", "holds": [{"id": held, "command": "rm -rf build", "cwd": "/srv"}]})
    window.select(held)
    pump(window, lambda: cell(window, held, "command") == "rm -rf build" and "Allow…" in action_texts(window))
    tray_line.tray.to_window.close()  # the tray went away: its copy no longer answers for anything
    nobody = "Nobody can answer this command now: Cowork Terminal (the app) is not running."
    pump(window, lambda: cell(window, held, "command") == nobody and not action_texts(window))
    assert "ls -la" not in window.details_text()


def test_a_command_whose_server_died_turns_interrupted_while_the_window_is_open(
    open_window: Callable[..., LogWindow], journal: Journal, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(log_window, "LIVENESS_CHECK_S", 0.2)
    window = open_window()
    # A server that registered and started a command, then died holding no lock (as after kill -9).
    server_id = journal.register_server(999_999, headless=True, lock_key="gone")
    orphan = journal.begin_command(command="make test", cwd="/srv", server_id=server_id)
    pump(window, lambda: cell(window, orphan, "status") == "⚠ Interrupted")
    assert journal.get_command(orphan).status is Status.INTERRUPTED


def test_the_window_is_its_own_process_and_closing_it_stops_nothing_else(
    display: str, home: Path, cli_env: dict[str, str]
) -> None:
    from Xlib import X, protocol
    from Xlib import display as xdisplay

    with Journal.open(AppPaths.from_environment()) as journal:
        add_rows(journal, [("echo hi", "/", Status.FINISHED)])
    child = subprocess.Popen(
        [sys.executable, "-m", "app.ui.windows.log_window", "--report-ready"],
        env={**cli_env, "DISPLAY": display},
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        ready = child.stderr.readline().split()
        assert ready[0] == "ready", "the window opened and showed its rows"
        with serve(home) as server:
            call = server.call("sleep 0.5; echo still here")
            connection = xdisplay.Display(display)
            window = connection.create_resource_object("window", int(ready[3], 16))  # the child's own window
            if window.get_wm_name() is None:  # Tk keeps the window-manager properties on its wrapper
                window = window.query_tree().parent
            assert window.get_wm_name() == log_window.WINDOW_TITLE
            # What the window manager sends when the user clicks the close button.
            protocols = connection.intern_atom("WM_PROTOCOLS")
            message = protocol.event.ClientMessage(
                window=window,
                client_type=protocols,
                data=(32, [connection.intern_atom("WM_DELETE_WINDOW"), X.CurrentTime, 0, 0, 0]),
            )
            window.send_event(message)
            connection.sync()  # a round trip: the server has delivered the message before we let go
            connection.close()
            assert child.wait(10) == 0
            finished = call.result(10)
        assert json.loads(finished.content[0].text)["stdout"] == "still here\n"
        log = app_log.log_file(AppPaths.from_environment(), "log-window")
        assert log.exists() and stat.S_IMODE(log.stat().st_mode) == 0o600, "its own private, rotated log"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def test_the_window_module_loads_neither_the_mcp_sdk_nor_the_tray_library() -> None:
    code = (
        "import sys, app.ui.windows.log_window; print(sorted(m for m in ('mcp', 'pystray', 'PIL') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_without_a_display_the_command_says_so_instead_of_a_traceback(cli_env: dict[str, str]) -> None:
    env = {k: v for k, v in cli_env.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    result = subprocess.run(
        [sys.executable, "-m", "app.ui.windows.log_window"], env=env, capture_output=True, text=True
    )
    assert result.returncode == 1
    assert "cannot open the activity log window" in result.stderr and "Traceback" not in result.stderr


def rewrite_command(paths: AppPaths, command_id: int, command: str, cwd: str) -> None:
    """What any program of the user can do: write another text into a waiting row of the journal."""
    with contextlib.closing(sqlite3.connect(paths.journal)) as db, db:
        db.execute("UPDATE commands SET command = ?, cwd = ? WHERE id = ?", (command, cwd, command_id))


def action_texts(window: LogWindow) -> set[str]:
    return {str(b.cget("text")) for b in window.actions_frame.winfo_children()}


def test_a_window_started_by_hand_shows_the_trays_copy_of_a_held_command_not_a_rewritten_row(
    open_window: Callable[..., LogWindow], journal: Journal, paths: AppPaths, home: Path, tmp_path: Path
) -> None:
    """And Deny there answers the held command. The tray is a real one: a window takes the holds only
    from Cowork Terminal's own program. The server whose command it holds runs in this process: a
    tray holds (and runs) the commands of every server linked to it."""
    import anyio

    from tests.stdio_client import run

    (tmp_path / "cache").mkdir()
    seen: dict[str, Any] = {}

    async def scenario(window: LogWindow) -> None:
        async with serving(home) as client, anyio.create_task_group() as group:

            async def ask() -> None:
                seen["result"] = await run(client, {"command": "rm -rf cache", "cwd": str(tmp_path)})

            group.start_soon(ask)
            while not journal.pending_approvals():
                await anyio.sleep(0.05)
            held = seen["id"] = journal.pending_approvals()[0].id
            rewrite_command(paths, held, "ls -la", "/tmp")
            seen["journal_says"] = journal.get_command(held).command  # the attack ran: the row now says ls
            deadline = time.monotonic() + UI_TIMEOUT_S
            asking = "Asking Cowork Terminal for this command…"  # until the tray answers, nothing is shown
            while (
                window.selected_id() != held
                or "Allow…" not in action_texts(window)
                or asking in cell(window, held, "command")
            ):
                assert time.monotonic() < deadline, f"the window shows {visible_rows(window)}"
                window.root.update()
                window.show_active()
                await anyio.sleep(0.05)
            seen["cell"], seen["details"] = cell(window, held, "command"), window.details_text()
            {b.cget("text"): b for b in window.actions_frame.winfo_children()}["Deny"].invoke()
            deadline = time.monotonic() + UI_TIMEOUT_S
            while "result" not in seen:
                assert time.monotonic() < deadline, "the held command was not answered"
                window.root.update()
                await anyio.sleep(0.05)

    with running_tray(home):
        window = open_window(controls=RequestControls(paths))  # `cowork-terminal log-window` from a terminal
        anyio.run(scenario, window)
    assert seen["journal_says"] == "ls -la"
    assert seen["cell"] == "rm -rf cache", "the list shows what the tray holds, which is what Allow would run"
    assert seen["details"].startswith("rm -rf cache\n") and "ls -la" not in seen["details"]
    assert "The user denied this command" in seen["result"]["error"] and (tmp_path / "cache").exists()
    row = journal.get_command(seen["id"])
    assert row.decision == "denied" and row.status is Status.REFUSED


def test_a_window_started_by_hand_with_no_tray_says_nobody_can_answer_a_rewritten_waiting_row(
    open_window: Callable[..., LogWindow], journal: Journal, paths: AppPaths
) -> None:
    held = journal.begin_command(
        command="rm -rf build", cwd="/srv", status=Status.WAITING, hold_expires_at=time.time() + 600, reason="Deletes"
    )
    rewrite_command(paths, held, "ls -la", "/tmp")
    assert journal.get_command(held).command == "ls -la", "the attack ran: the journal's row says ls"
    window = open_window(controls=RequestControls(paths))
    window.select(held)
    nobody = "Nobody can answer this command now: Cowork Terminal (the app) is not running."
    pump(window, lambda: cell(window, held, "command") == nobody and window.details_text().startswith(nobody))
    assert not any("ls -la" in value for row in visible_rows(window) for value in row)
    assert "ls -la" not in window.details_text() and "/tmp" not in window.details_text()
    assert "Deletes" not in window.details_text(), "nor the journal's words on why it waits"
    assert not action_texts(window) & {"Allow…", "Deny"}, "no answer is offered: nobody could act on it"
    assert cell(window, held, "status") == "⚑ Waiting for you"


def test_the_users_rules_are_listed_and_removable_in_the_log_window(
    open_window: Callable[..., LogWindow], journal: Journal
) -> None:
    window = open_window()
    window.rules_button.invoke()
    assert str(window.toolbar.rules_intro.cget("text")).startswith("You have no rules.")
    rule = journal.add_rule("delete-build-folders", "/home/a/p", "folder", "deleting build folders in ~/p")
    window.rules_button.invoke()
    label, remove = window.toolbar.rule_rows[rule.id]
    # Described from the rule itself in the user's language, not from the text recorded back then.
    assert label.cget("text") == f"Rule {rule.id}: deleting build, dist, node_modules in /home/a/p"
    remove.invoke()  # no tray here: removing only tightens, so the window writes it itself
    assert window.toolbar.rule_rows == {} and str(window.toolbar.rules_intro.cget("text")).startswith(
        "You have no rules."
    )
    pump(window, lambda: journal.rules() == [])


def test_a_command_allowed_by_a_rule_says_so_in_its_details(journal: Journal) -> None:
    from app.ui.windows.log_model import detail_lines

    held = journal.begin_command(command="rm -rf build", cwd="/p", status=Status.WAITING, hold_expires_at=9e12)
    journal.decide(held, allowed=True, by="rule 3", rule_id=3)
    lines = {line.label: line.value for line in detail_lines(journal.get_command(held))}
    assert lines["Answer"] == "allowed by your rule 3"


@pytest.mark.parametrize("with_tray", [False, True], ids=["headless", "through-the-tray"])
def test_a_running_commands_output_shows_live_in_its_details(
    open_window: Callable[..., LogWindow], home: Path, journal: Journal, with_tray: bool, request: pytest.FixtureRequest
) -> None:
    """It said "Shown when the command ends." until the end (issue 24, item 5). Through the tray: a
    server bound to the tray's hub (in this process), whose journal rows the hub writes."""
    if with_tray:
        request.getfixturevalue("hub")
    window = open_window()
    with serve(home, bound=with_tray) as server:
        future = server.call("printf 'out-%s\\n' one; sleep 4; printf 'out-%s\\n' two")  # the text: not in the command
        [row] = wait_for(lambda: journal.active_commands())
        pump(window, lambda: row.id in shown_ids(window))
        window.select(row.id)
        pump(window, lambda: "out-one" in window.details_text())
        details = window.details_text()
        assert "Still running: more may follow." in details and "out-two" not in details
        assert not future.done(), "shown while it runs, not after"
        assert payload(result_of(future, window, 15))["stdout"] == "out-one\nout-two\n"
        pump(window, lambda: "out-two" in window.details_text())
