"""Shared fixtures: every test runs against its own COWORK_TERMINAL_HOME."""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.paths import HOME_ENV, AppPaths


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh, private app home for this test, also exported to child processes."""
    folder = tmp_path / "cowork-home"
    monkeypatch.setenv(HOME_ENV, str(folder))
    return folder


@pytest.fixture
def paths(home: Path) -> AppPaths:
    return AppPaths.from_environment().ensure()


@pytest.fixture
def cli_env(home: Path) -> dict[str, str]:
    """Environment for a `cowork-terminal` child process pointed at the test's home."""
    env = dict(os.environ)
    env[HOME_ENV] = str(home)
    return env


PYTHON = sys.executable


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


SCREEN = "1280x800x24"
XVFB_START_TIMEOUT_S = 10.0
APT_HINT = "apt-get install -y xvfb xauth x11-utils xdotool imagemagick"


@pytest.fixture(scope="session")
def display() -> Iterator[str]:
    """A private X display for the whole session; missing Xvfb fails loudly, since CI installs it."""
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        pytest.fail(f"Xvfb is not installed, so windows and the tray cannot be tested. Install it: {APT_HINT}")
    reader, writer = os.pipe()
    # -displayfd: Xvfb picks a free display number itself and writes it to us when it is ready.
    process = subprocess.Popen(
        [xvfb, "-displayfd", str(writer), "-screen", "0", SCREEN, "-nolisten", "tcp"],
        pass_fds=(writer,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(writer)
    number = read_line(reader, XVFB_START_TIMEOUT_S)
    os.close(reader)
    if not number:
        process.kill()
        pytest.fail(f"Xvfb did not start within {XVFB_START_TIMEOUT_S:.0f} s")
    previous = os.environ.get("DISPLAY")
    os.environ["DISPLAY"] = f":{number}"
    try:
        yield f":{number}"
    finally:
        if previous is None:
            os.environ.pop("DISPLAY", None)
        else:
            os.environ["DISPLAY"] = previous
        process.terminate()
        process.wait(5)


def read_line(fd: int, timeout_s: float) -> str:
    """Read up to a newline. Xvfb writes the number and the newline separately, and dies if the
    pipe is closed in between (it treats the failed write as fatal)."""
    data = b""
    deadline = time.monotonic() + timeout_s
    while b"\n" not in data:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(fd, 32) if ready else b""
        if not chunk:
            break
        data += chunk
    return data.decode().strip()


# Tests written for the journal-based controls, being moved to the tray channel (issue 10): each
# one leaves this list when it is rewritten against a real tray. Skipped, never silently passing.
MOVING_TO_THE_TRAY_CHANNEL = frozenset({
    "tests/test_tray.py::test_a_second_launchs_request_opens_the_log_window",
    "tests/test_approval_prompt.py::test_a_second_prompt_does_not_open_while_one_is_showing",
    "tests/test_approval.py::test_a_denied_command_does_not_run_and_the_model_is_told",
    "tests/test_approval.py::test_a_harmless_looking_command_run_in_the_apps_own_folder_is_held",
    "tests/test_approval.py::test_a_held_session_command_runs_only_in_the_folder_it_was_shown_in",
    "tests/test_approval.py::test_an_allowed_destructive_command_runs_and_the_journal_says_who_approved",
    "tests/test_approval.py::test_an_expired_hold_can_no_longer_be_confirmed",
    "tests/test_approval.py::test_cancel_withdraws_a_held_command_and_its_prompt_disappears",
    "tests/test_approval.py::test_no_answer_in_time_holds_the_command_and_confirm_runs_it_once_allowed",
    "tests/test_approval.py::test_no_answer_then_denied_makes_confirm_fail",
    "tests/test_approval.py::test_no_tool_or_argument_lets_the_model_approve_its_own_command",
    "tests/test_approval_prompt.py::test_allow_and_deny_stay_disabled_for_a_moment_whenever_the_shown_command_changes",
    "tests/test_approval_prompt.py::test_escape_in_the_prompt_process_denies_a_held_command_of_a_real_serve",
    "tests/test_approval_prompt.py::test_the_prompt_shows_the_exact_command_and_walks_through_pending_approvals",
    "tests/test_cli_approvals.py::test_approvals_lists_what_waits_and_approve_records_the_user",
    "tests/test_cli_journal.py::test_pause_and_resume_flip_the_state_that_status_shows",
    "tests/test_connection_check.py::test_a_good_entry_starts_the_server_and_runs_echo_ok",
    "tests/test_connection_check.py::test_a_missing_bash_is_reported_as_such",
    "tests/test_connection_check.py::test_a_paused_host_and_a_missing_tray_are_reported_as_the_server_answers",
    "tests/test_log_window.py::test_a_waiting_command_gets_the_approval_hook_and_can_be_stopped",
    "tests/test_log_window.py::test_allow_and_deny_in_the_details_answer_a_real_held_command",
    "tests/test_log_window.py::test_clear_history_asks_first_and_deletes_only_finished_rows",
    "tests/test_log_window.py::test_right_clicking_a_running_row_offers_stop",
    "tests/test_log_window.py::test_stop_ends_a_running_sleep_tree_through_the_server_and_the_row_says_so",
    "tests/test_log_window.py::test_the_pause_switch_flips_the_journal_and_the_server_then_refuses_new_commands",
    "tests/test_presence.py::test_serve_refuses_without_a_tray_and_runs_once_the_tray_lock_is_held",
    "tests/test_tray.py::test_a_check_connection_run_by_the_tray_never_loads_the_mcp_sdk_in_the_tray",
    "tests/test_tray.py::test_a_held_command_notifies_and_opens_the_approval_prompt",
    "tests/test_tray.py::test_a_pause_set_elsewhere_reaches_icon_and_tooltip",
    "tests/test_tray.py::test_a_second_launch_exits_at_once_and_the_running_tray_opens_its_log_window",
    "tests/test_tray.py::test_a_server_that_dies_mid_command_is_reported_and_its_command_marked_interrupted",
    "tests/test_tray.py::test_check_connection_from_the_menu_runs_the_configured_server_and_reports",
    "tests/test_tray.py::test_icon_updates_go_through_the_main_thread_marshal_when_the_backend_needs_one",
    "tests/test_tray.py::test_pause_from_the_tray_stops_a_running_command_launched_through_a_real_serve",
    "tests/test_tray.py::test_the_activity_log_opens_once_reopening_replaces_it_and_quitting_closes_it",
})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.nodeid in MOVING_TO_THE_TRAY_CHANNEL:
            item.add_marker(pytest.mark.skip(reason="being moved to the tray channel (issue 10)"))
