"""Red team 13's Windows job fixes, as values and in the hub of this process (the wine lane runs the
real calls: tests/test_red_team_thirteen_windows.py). A pause ends what finished commands left in
their jobs, as it ends a lingering container on Linux; every job is kill-on-close, so what a command
left ends with the process that ran it."""

from __future__ import annotations

import ctypes
import time

import pytest

from app.core.authority.hub import Hub
from app.core.execution import PAUSE_BACKSTOP_S, end_what_a_pause_left, windows_jobs
from app.core.execution.windows_jobs import ProcessJob


class FakeJob(ProcessJob):
    """A job as the tray holds it, without the OS: `released` once its command ended."""

    def __init__(self, *, released: bool, active: int = 1) -> None:  # no OS call
        self._released = released
        self._handle = 1
        self.active = active
        self.terminated = 0

    def terminate(self) -> None:
        self.terminated += 1
        self.active = 0

    def active_processes(self) -> int | None:
        return self.active

    def _close_handle(self) -> None:
        windows_jobs._JOBS.discard(self)
        self._handle = None


@pytest.fixture
def jobs(monkeypatch: pytest.MonkeyPatch) -> dict[str, FakeJob]:
    """A running command's job and a finished one's whose leftover still runs, as this process's jobs."""
    made = {"running": FakeJob(released=False), "finished": FakeJob(released=True)}
    monkeypatch.setattr(windows_jobs, "_JOBS", set(made.values()))
    return made


def test_a_jobs_limits_ask_for_kill_on_close_in_the_layout_windows_reads() -> None:
    limits = windows_jobs.extended_limits(windows_jobs.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE)
    basic = type(limits.BasicLimitInformation)
    assert basic.LimitFlags.offset == 16
    if ctypes.sizeof(ctypes.c_void_p) == 8:
        assert ctypes.sizeof(limits) == 144 and ctypes.sizeof(basic) == 64  # x64's sizes
    assert limits.BasicLimitInformation.LimitFlags == 0x2000
    assert limits.BasicLimitInformation.ActiveProcessLimit == 0 and limits.JobMemoryLimit == 0  # no other limit


def test_a_pause_ends_the_jobs_of_finished_commands_only(jobs: dict[str, FakeJob]) -> None:
    """The running command is stopped by the pause's own path (its output kept, the model told)."""
    assert windows_jobs.end_jobs() == 1
    assert jobs["finished"].terminated == 1 and jobs["running"].terminated == 0


def test_the_pauses_backstop_ends_every_job(jobs: dict[str, FakeJob]) -> None:
    assert windows_jobs.end_jobs(running=True) == 2
    assert jobs["finished"].terminated == 1 and jobs["running"].terminated == 1


def test_a_finished_commands_held_job_counts_as_left_behind(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(windows_jobs, "_JOBS", {FakeJob(released=False)})
    assert not windows_jobs.left_behind()
    monkeypatch.setattr(windows_jobs, "_JOBS", {FakeJob(released=False), FakeJob(released=True)})
    assert windows_jobs.left_behind()


def test_a_finished_commands_job_whose_processes_all_ended_is_let_go(monkeypatch: pytest.MonkeyPatch) -> None:
    """A headless server asks no in_any_job, which was the only place ended jobs were let go: their
    handles stayed, and left_behind kept its pause watch awake for ever (a review)."""
    gone, lingering = FakeJob(released=True, active=0), FakeJob(released=True)
    monkeypatch.setattr(windows_jobs, "_JOBS", {gone, lingering})
    assert windows_jobs.left_behind()
    assert list(windows_jobs._JOBS) == [lingering]
    windows_jobs.end_jobs()
    assert not windows_jobs.left_behind() and not windows_jobs._JOBS


def test_with_no_job_a_pause_ends_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(windows_jobs, "_JOBS", set())
    assert windows_jobs.end_jobs(running=True) == 0 and not windows_jobs.left_behind()


def test_the_users_pause_at_the_tray_ends_what_a_finished_command_left_in_its_job(
    hub: Hub, jobs: dict[str, FakeJob]
) -> None:
    """Red team 13: `python ticker.py FILE &` wrote on 5 s after a pause on Windows."""
    hub.set_paused(True)
    assert jobs["finished"].terminated >= 1, "the job a finished command left survived the pause"
    assert jobs["running"].terminated == 0, "the running command is stopped gently first"
    deadline = time.monotonic() + PAUSE_BACKSTOP_S + 5.0
    while jobs["running"].terminated == 0 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert jobs["running"].terminated >= 1, "the pause's backstop ends what still runs"


def test_no_job_is_ended_while_nobody_paused(hub: Hub, jobs: dict[str, FakeJob]) -> None:
    hub.set_settings(approval_window_s=30.0)
    time.sleep(PAUSE_BACKSTOP_S + 0.3)
    assert jobs["finished"].terminated == 0 and jobs["running"].terminated == 0


def test_a_headless_servers_pause_backstop_ends_the_commands_jobs_too(jobs: dict[str, FakeJob]) -> None:
    """The backstop a headless server runs (execution.end_what_a_pause_left, as the tray's hub does)
    ended containers and marked processes only: on Windows a running command's job lived on (a review)."""
    end_what_a_pause_left(None)
    assert jobs["running"].terminated == 1 and jobs["finished"].terminated == 1
