"""Red team 13, the Windows path, run for real under Wine (`pytest -m wine`, tests/test_wine.py's lane).

On Windows the tray runs every command in a job object it owns and tells a request from inside one
of its jobs by IsProcessInJob over its own job handles (core/execution/windows_jobs.py). Each test
here FAILS today: it asserts what should happen. Where Wine differs from Windows it says so.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import time

import pytest

from tests.test_wine import SCRIPTS, _quit_tray, _reset_pause, _start_tray, _tray_log, _tray_script
from tests.wine_env import WineEnv, parse_json_line

pytestmark = [pytest.mark.wine, pytest.mark.timeout(600)]


def test_rt13_a_pause_ends_the_background_job_a_finished_command_left_on_windows(wine: WineEnv, display: str) -> None:
    """A command the tray runs leaves a Windows Python writing to a file every 0.2 s (`python
    ticker.py FILE &`: the command ends at once, the ticker lives on in the command's job). The user
    pauses (a request from outside every job, as the CLI's `pause`). docs: "a pause stops everything
    the agent started, not only what runs in a call" (start_files.end_lingering on Linux; marks read
    from /proc for uncontained ones). On Windows nothing ends a finished command's job at a pause:
    5 s after it (the backstop is 1.2 s) the ticker still runs and still writes.
    Not a Wine artefact: the released job's handle is kept (windows_jobs.ProcessJob.close) but
    TerminateJobObject is only called from executor.end_tree, for a command still running."""
    tray = _start_tray(wine)
    try:
        report = _tray_script(wine, tray, "rt13_pause_leftover.py", wine.win(SCRIPTS / "rt13_ticker.py"))
    finally:
        _quit_tray(wine, tray)
    assert report["left_command"]["exitCode"] == 0, report
    assert report["ticking_before_pause"] and report["ticker_pid"], report
    assert report["pause"].startswith("accepted"), report
    assert report["state_after_pause"]["paused"] is True, report
    assert report["ticker_alive_5s_after_pause"] is False, f"the left-behind job survived the pause: {report}"
    assert report["lines_written_2s_after"] == 0, report


def test_rt13_a_job_left_by_a_command_of_an_earlier_tray_is_taken_for_the_user_by_the_next_tray(
    wine: WineEnv, display: str
) -> None:
    """A command of tray A leaves a Windows Python behind (`python asker.py ... &`), waiting. The user
    quits tray A (from outside: accepted) and starts tray B (a restart, an update, the next login's
    autostart while the process lives on). Tray B's `in_any_job` asks only about tray B's own jobs,
    so such a leftover would pass for the user: tray B opened the log at its word (and tried to show
    the resume question) and QUIT on its request. Fixed: every job is kill-on-close
    (windows_jobs.ProcessJob), so the leftover ends with tray A, as bwrap's --die-with-parent ends
    it with the tray on Linux; nothing is left to ask tray B anything."""
    folder = wine.drive_c / "rt13_old_leftover"
    folder.mkdir(exist_ok=True)
    log_before = len(_tray_log(wine)) if (wine.user_dir / ".cowork-terminal" / "logs" / "tray.log").exists() else 0
    tray_a = _start_tray(wine)
    try:
        left = _tray_script(
            wine, tray_a, "rt13_old_leftover.py", "leave", wine.win(folder), wine.win(SCRIPTS / "rt13_asker.py")
        )
        tray_a.wait(timeout=60)
    finally:
        if tray_a.poll() is None:
            tray_a.kill()
    assert left["left_command"]["exitCode"] == 0, left
    assert left["asker_alive_before_quit"] is True, left
    assert left["quit"] == "accepted: Cowork Terminal is quitting.", left
    tray_b = _start_tray(wine)
    try:
        report = _tray_script(wine, tray_b, "rt13_old_leftover.py", "ask", wine.win(folder))
        with contextlib.suppress(subprocess.TimeoutExpired):
            tray_b.wait(timeout=5 if report["left_behind"] is None else 30)
        quit_by_leftover = tray_b.poll() is not None
    finally:
        _quit_tray(wine, tray_b)
    log = _tray_log(wine)[log_before:]
    print(json.dumps(report, indent=1))
    assert report["asker_alive"] is False, f"a job left by tray A's command outlived tray A: {report} {log[-3000:]}"
    assert not quit_by_leftover, f"a job left by tray A's command quit tray B: {report}"


def test_rt13_a_server_takes_a_tray_look_alike_inside_the_trays_job_for_the_tray(wine: WineEnv, display: str) -> None:
    """A command the tray runs leaves a Windows Python behind that writes `python.exe -m app tray` as
    its own command line (its PEB: any process may). From a process outside every job, as a `serve`
    or the CLI does for the process at the tray's address, the OS's facts (transport._windows_peer)
    and peer.tray_refusal are asked. Such a process that created the tray's pipe (as a second
    instance, which the pipe's DACL and PIPE_UNLIMITED_INSTANCES allow on Windows) would be taken
    for the user's tray and allow anything: on Linux the pid namespace tells it. It passed every
    check here (same user, same python.exe, "-m app tray"): `in_command_job` asked only the asking
    process's own jobs, and a server or the CLI has none. Now every command of the tray joins a
    named job first (windows_jobs.gather_commands), which a server opens by name and asks
    IsProcessInJob about. Under Wine the command line is read from the PEB (Wine lacks
    ProcessCommandLineInformation)."""
    tray = _start_tray(wine)
    try:
        report = _tray_script(wine, tray, "rt13_lookalike.py", wine.win(SCRIPTS / "rt13_squat.py"))
    finally:
        _quit_tray(wine, tray)
    print(json.dumps(report, indent=1))
    assert report["left_command"]["exitCode"] == 0, report
    assert report["facts"]["argv"][-3:] == ["-m", "app", "tray"], "the look-alike's command line, as the OS tells it"
    assert report["facts"]["same_user"], report
    assert report["from_container"] is True, f"a process in the tray's job passes for one outside: {report}"
    assert report["tray_refusal"] is not None, f"a server would take the look-alike for its tray: {report}"


def test_rt13_a_look_alike_left_by_a_command_takes_the_pipe_after_the_tray_quits_and_swallows_the_users_pause(
    wine: WineEnv, display: str
) -> None:
    """A command of the tray leaves a Windows Python behind that writes `python.exe -m app tray` as its
    own command line (its PEB) and waits. The user quits the tray (from outside: accepted); the
    job had no kill-on-close, so the look-alike lived on, created the tray's pipe (the first
    instance: nothing on Windows stops it, Wine or not) and answered as the tray. The user then
    runs `cowork-terminal pause`. client.py's rule: a pause sent to a program at the tray's address
    that cannot be verified is applied by the CLI itself too ("a squatter acknowledged a pause that
    nothing applied", red team 2026-12-05). On Windows the CLI could not tell the look-alike is in a
    command's job (in_any_job of the CLI's own, empty job list): it verified it as the tray, trusted
    its "paused" and wrote nothing: the journal (what headless servers and the next tray read) was
    not paused, and the CLI even asked the look-alike for `state`, which goes only to a verified tray.
    Now the command's job ends with the tray (kill-on-close), so the look-alike does not outlive it
    and nobody answers; the CLI writes its pause itself whoever answered, and a look-alike in the
    tray's named job would not be verified as the tray (the test above)."""
    folder = wine.drive_c / "rt13_squat_chain"
    shutil.rmtree(folder, ignore_errors=True)  # no pid or heard file of an earlier run
    folder.mkdir()
    tray = _start_tray(wine)
    try:
        left = _tray_script(
            wine, tray, "rt13_squat_chain.py", "leave", wine.win(folder), wine.win(SCRIPTS / "rt13_squat_tray.py")
        )
        tray.wait(timeout=60)
    finally:
        if tray.poll() is None:
            tray.kill()
    try:
        assert left["left_command"]["exitCode"] == 0, left
        assert left["quit"] == "accepted: Cowork Terminal is quitting.", left
        (folder / "go").write_text("")
        completed = wine.python_run([wine.win(SCRIPTS / "rt13_squat_chain.py"), "pause", wine.win(folder)], timeout=180)
        report = json.loads(parse_json_line(completed.stdout))
    finally:
        _quit_tray(wine, tray)  # resets the journal's pause for the next test
    print(json.dumps(report, indent=1))
    assert report["journal_paused"] is True, f"the user's pause went only to the look-alike: {report}"
    assert report["cli_pause"]["code"] == 0, report
    assert "Host access is PAUSED" in report["cli_pause"]["said"], report
    assert report["state_asked_as_the_tray"].startswith("NoTray"), f"the look-alike was verified as the tray: {report}"


def test_rt13_the_users_pause_lands_in_the_journal_past_a_look_alike_outside_every_job(wine: WineEnv) -> None:
    """The look-alike of the test above, but outside every job (as a program a command got started
    outside its job would be, docs/security.md): it takes the tray's pipe while no tray runs and
    passes every check a server and the CLI make (same user, our python.exe, `-m app tray`), so
    the CLI asks it for `state`. The user's `cowork-terminal pause` must still be in the journal:
    the CLI writes it itself whoever answered (a tightening may come from anywhere)."""
    folder = wine.drive_c / "rt13_squat_outside"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    pid_file = folder / "pid"
    squat_tray = wine.win(SCRIPTS / "rt13_squat_tray.py")
    squat = wine.popen([str(wine.python), squat_tray, wine.win(pid_file), wine.win(folder / "go")])
    try:
        deadline = time.monotonic() + 60
        while not pid_file.exists() and squat.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert pid_file.exists(), "the look-alike did not start"
        (folder / "go").write_text("")
        completed = wine.python_run([wine.win(SCRIPTS / "rt13_squat_chain.py"), "pause", wine.win(folder)], timeout=180)
        report = json.loads(parse_json_line(completed.stdout))
    finally:
        if squat.poll() is None:
            squat.kill()
        _reset_pause(wine)
    print(json.dumps(report, indent=1))
    assert report["state_asked_as_the_tray"].startswith("accepted"), f"it should pass for the tray here: {report}"
    assert "pause" in report["look_alike_heard"], report
    assert report["cli_pause"]["code"] == 0, report
    assert "Host access is PAUSED" in report["cli_pause"]["said"], report
    assert report["journal_paused"] is True, f"the user's pause went only to the look-alike: {report}"


def test_a_pause_ends_the_background_job_a_headless_servers_finished_command_left_on_windows(
    wine: WineEnv,
) -> None:
    """No tray: a `serve --headless` runs a command that leaves a Windows Python ticking in its job
    and returns. Past the time a server keeps its pause backstop once its commands ended
    (BACKSTOP_IDLE_S), the user's `cowork-terminal pause` writes the pause into the journal; the server,
    which keeps watching while a finished command's job is held (running.Runs._may_have_left, on
    Windows through execution.jobs_left_behind: no /proc to read marks from), ends that job. The
    next command is refused for the pause."""
    from app.core.commands.running import BACKSTOP_IDLE_S
    from app.core.journal.store import Journal
    from app.core.paths import AppPaths
    from app.core.policy import approval

    quiet_s = str(BACKSTOP_IDLE_S + 3)
    data = wine.user_dir / ".cowork-terminal"
    with Journal(AppPaths(data_dir=data, log_dir=data / "logs")) as journal:
        approval.set_approval_mode(journal, approval.ApprovalMode.NEVER)  # the ticker runs unheld
    try:
        completed = wine.python_run(
            [wine.win(SCRIPTS / "headless_pause_leftover.py"), wine.win(SCRIPTS / "rt13_ticker.py"), quiet_s],
            env={"COWORK_TERMINAL_BASH": wine.bash},
            timeout=300,
        )
        report = json.loads(parse_json_line(completed.stdout))
    finally:
        _reset_pause(wine)
    print(json.dumps(report, indent=1))
    assert report["left_command"]["exitCode"] == 0, report
    assert report["ticking_before_pause"] and report["ticker_pid"], report
    assert report["cli_pause"]["code"] == 0 and "PAUSED" in report["cli_pause"]["said"], report
    assert report["ticker_alive_6s_after_pause"] is False, f"the left-behind job survived the pause: {report}"
    assert report["lines_written_2s_after"] == 0, report
    assert "paused" in report["after_pause"].lower(), report
