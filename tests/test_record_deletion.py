"""Deleting the record needs a person: `uninstall --data` from an agent's command is refused, with
the app running it waits for the user's click, and a run of No's stops the questions for a while."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from app.core.authority.no_streak import NoStreak
from app.core.execution.process_marks import MARK_ENV
from app.core.install.record_deletion import agent_run_reason, ancestors, runs_serve
from app.core.journal.store import Journal
from app.core.paths import AppPaths
from app.core.policy.approval import ApprovalMode, set_approval_mode
from tests.agent_job import AgentJob
from tests.clicks import CONFIRM_TITLE, press, shown_window
from tests.desktop_env import wait_for
from tests.in_process_server import serving
from tests.stdio_client import STOP_DEADLINE_S, run
from tests.test_authority import connect as connect_without_container
from tests.tray_process import running_tray

REFUSED = "comes from a command an AI agent runs"


def confirm_shown(display: str) -> bool:
    env = {**os.environ, "DISPLAY": display}
    found = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", CONFIRM_TITLE], env=env,
                           capture_output=True, text=True, timeout=30)  # fmt: skip
    return bool(found.stdout.strip())


@pytest.mark.parametrize(
    ("argv", "serve"),
    [
        (["/usr/bin/python3", "-m", "app", "serve", "--headless"], True),
        (["/opt/cowork-terminal/cowork-terminal", "serve"], True),
        (["cowork-terminal.exe", "serve"], True),
        (["/usr/bin/python3", "-m", "app", "tray"], False),
        (["bash", "-c", "serve the soup"], False),
    ],
)
def test_a_server_is_known_by_its_command_line(argv: list[str], serve: bool) -> None:
    assert runs_serve(argv) is serve


def test_an_agents_command_is_known_by_its_mark_or_a_server_among_its_ancestors() -> None:
    person = [["bash"], ["gnome-terminal-server"], ["systemd", "--user"]]
    assert agent_run_reason({}, person) is None
    assert agent_run_reason({MARK_ENV: "7-1"}, person) is not None
    assert agent_run_reason({}, [["bash"], ["/usr/bin/python3", "-m", "app", "serve"]]) is not None
    assert ancestors()[0], "this test's own parent is found on Linux"


def test_three_nos_stop_the_questions_for_some_minutes_and_say_so_once() -> None:
    now = [0.0]
    streak = NoStreak(limit=3, window_s=600, quiet_s=300, clock=lambda: now[0])
    assert [streak.said_no(), streak.said_no()] == [False, False] and streak.quiet_left_s() == 0
    now[0] = 10
    assert streak.said_no() is True, "the third No starts the quiet time: the moment to tell the user"
    assert streak.quiet_left_s() == 300
    now[0] = 200
    assert streak.said_no() is False, "said once"
    now[0] = 311
    assert streak.quiet_left_s() == 0
    streak.said_no()
    streak.said_yes()  # a Yes ends the streak
    assert [streak.said_no(), streak.said_no()] == [False, False]


@pytest.mark.anyio
async def test_uninstall_data_run_by_the_agent_deletes_nothing_even_without_its_mark(
    home: Path, paths: AppPaths, tmp_path: Path
) -> None:
    # In a script, as an agent hides what it runs from the classifier (which reads the script too: the
    # data folder's name comes from a file, read only when it runs).
    (tmp_path / "where.txt").write_text(str(home))
    (tmp_path / "u.sh").write_text(
        f'COWORK_TERMINAL_HOME="$(cat where.txt)" {sys.executable} -m app uninstall --yes --data\n'
    )
    with Journal.open(paths) as journal:  # the user's own earlier choice: the attack runs unheld
        set_approval_mode(journal, ApprovalMode.NEVER)
    # Without the OS container (tests/test_container.py), which would refuse it sooner (its data
    # folder is read-only there): what the command line itself refuses.
    async with connect_without_container(home) as client:
        await run(client, {"command": "echo a row in the history"})
        marked = await run(client, {"command": "bash u.sh 2>&1", "cwd": str(tmp_path)})
        unmarked = await run(client, {"command": f"env -u {MARK_ENV} bash u.sh 2>&1", "cwd": str(tmp_path)})
    for attempt in (marked, unmarked):
        assert "Uninstall will:" in attempt["stdout"], attempt  # the attack ran, and meant --data...
        assert REFUSED in attempt["stdout"] and attempt["exitCode"] != 0, attempt
    with Journal(paths) as journal:  # ...and deleted nothing
        assert journal.count_commands() == 3


@pytest.mark.gui
def test_with_the_app_running_uninstall_data_waits_for_the_click_and_a_run_of_nos_stops_the_questions(
    home: Path, paths: AppPaths, display: str
) -> None:
    env = {**os.environ, "COWORK_TERMINAL_HOME": str(home), "DISPLAY": display}
    log = home.parent / "tray.log"

    def ask(*args: str) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "app", *args], env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip

    with running_tray(home, display=display, log=log):
        for args in (["uninstall", "--yes", "--data"], ["resume"], ["approval-mode", "never"]):
            asking = ask(*args)
            press(display, shown_window(display, CONFIRM_TITLE), "Escape")  # the user says no
            out, err = asking.communicate(timeout=STOP_DEADLINE_S)
            assert asking.returncode != 0 and "You said no" in err, (args, out, err)
            wait_for(lambda: not confirm_shown(display))  # the next question gets a window of its own
        assert paths.journal.exists(), "the record was not deleted"
        wait_for(lambda: "Cowork Terminal stops asking for a while" in log.read_text())

        started = time.monotonic()
        again = ask("uninstall", "--yes", "--data")
        out, err = again.communicate(timeout=STOP_DEADLINE_S)
        assert again.returncode != 0 and "asks nothing more" in err, (out, err)
        assert time.monotonic() - started < 5, "refused at once, with no window"
        assert paths.journal.exists()
        assert log.read_text().count("Cowork Terminal stops asking for a while") == 1


@pytest.mark.gui
@pytest.mark.anyio
async def test_uninstall_data_from_an_agents_detached_job_waits_for_the_users_click_and_a_no_keeps_everything(
    home: Path, paths: AppPaths, display: str, tmp_path: Path, weaker_mode: None
) -> None:
    """The job leaves the server's ancestry and drops its mark: the tray cannot tell it from the user,
    so it asks the user, as for the user's own request. The agent's server, which hands the job to
    the tray to run, is in this process; it has left before the job asks."""
    job = AgentJob(tmp_path / "job", display, home)
    with running_tray(home, display=display):
        async with serving(home) as client:
            await job.start(client)
        await job.order("app uninstall --yes --data")
        window = await anyio.to_thread.run_sync(shown_window, display, CONFIRM_TITLE)  # the user is asked
        assert paths.journal.exists()
        job.stop()
        press(display, window, "Escape")  # the user says no
        [answer] = await job.answers()
    assert "Uninstall will:" in answer["out"], answer  # the attack ran, and meant --data...
    assert answer["code"] != 0 and "You said no" in answer["err"], answer
    with Journal(paths) as journal:  # ...and deleted nothing
        assert journal.count_commands() == 1
