"""Red team 14, the Windows path after the tray's named job (windows_jobs.gather_commands), run for real
under Wine (`pytest -m wine`, tests/test_wine.py's lane).

Every command of the tray joins its named job first (`windows_jobs.umbrella_name` of the tray's pipe);
a server or the CLI opens it by name and refuses a program at the tray's address that runs in it.
Each test here failed when written. Two pass now (a name taken before the tray starts; a command
rewriting the job's access list); two are strict xfails, said in docs/security.md: a command can
start a process under another parent, outside every job. Where Wine differs from Windows it says so.
"""

from __future__ import annotations

import json
import shutil
import time

import pytest

from tests.test_wine import SCRIPTS, _quit_tray, _start_tray, _tray_log, _tray_script
from tests.wine_env import WineEnv

pytestmark = [pytest.mark.wine, pytest.mark.timeout(600)]


def test_rt14_a_name_taken_before_the_tray_starts_keeps_the_tray_from_starting(wine: WineEnv, display: str) -> None:
    """Before the tray starts, a process outside every named job (as a command of a headless server
    is, docs/security.md) creates the tray's named job (`windows_jobs.umbrella_name` of its pipe) as
    a job whose DACL grants Everyone JOB_OBJECT_QUERY only, and holds it. The tray started anyway,
    ran every command in no named job, and a server opening the squatter's job was told that a
    look-alike a command left was "not in it" and took it for the tray (red team 14). Now the tray,
    which makes its named job as it starts to listen, finds the name taken and does not start, as
    when its address is taken: it says why (fail closed; a tightening anyone may cause)."""
    folder = wine.drive_c / "rt14_name_squat"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    told, done = folder / "squatter.json", folder / "done"
    squatter = wine.popen(
        [str(wine.python), wine.win(SCRIPTS / "rt14_name_squatter.py"), wine.win(told), wine.win(done)]
    )
    tray = None
    try:
        deadline = time.monotonic() + 60
        while not told.exists() and squatter.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        squat = json.loads(told.read_text())
        assert squat["created"] and squat["error"] == 0 and squat["query_open"], squat
        log_before = len(_tray_log(wine)) if (wine.user_dir / ".cowork-terminal" / "logs" / "tray.log").exists() else 0
        tray = _start_tray(wine)
        code = tray.wait(timeout=120)
        log = _tray_log(wine)[log_before:]
    finally:
        done.write_text("")
        if tray is not None and tray.poll() is None:
            _quit_tray(wine, tray)
        if squatter.poll() is None:
            squatter.kill()
    assert code == 1, f"the tray started with its named job's name taken: {log[-2000:]}"
    assert "another program holds the name Cowork Terminal gives its commands" in log, log[-2000:]


@pytest.mark.xfail(
    strict=True,
    reason="known gap (docs/security.md, What remains): on Windows a command can start a process under another "
    "parent (PROC_THREAD_ATTRIBUTE_PARENT_PROCESS), outside every job: job membership is no proof against the user's "
    "own code",
)
def test_rt14_a_look_alike_a_tray_command_starts_under_another_parent_is_outside_the_named_job(
    wine: WineEnv, display: str
) -> None:
    """A command of the tray (`python rt14_spoof.py PIDFILE &`) starts the look-alike of the tray
    (rt13_squat.py) with CreateProcessW's PROC_THREAD_ATTRIBUTE_PARENT_PROCESS naming explorer.exe,
    a process of the same user outside every job: a process takes the job of the parent it is
    created under, so the look-alike is in neither the command's kill-on-close job nor the tray's
    named job. A server, outside every job, asks the named job about it, is told "not in it", and
    tray_refusal takes it for the user's tray. (Wine's server gives the new process the named
    parent's job, as Windows does; on Windows any process of the user may be named, the tray
    itself too.)"""
    tray = _start_tray(wine)
    try:
        report = _tray_script(wine, tray, "rt13_lookalike.py", wine.win(SCRIPTS / "rt14_spoof.py"))
    finally:
        _quit_tray(wine, tray)
    print(json.dumps(report, indent=1))
    assert report["left_command"]["exitCode"] == 0, report
    assert report["facts"]["argv"][-3:] == ["-m", "app", "tray"], report
    assert report["tray_refusal"] is not None, f"a look-alike a tray command started passed with servers: {report}"


def test_rt14_a_command_gives_the_named_job_an_empty_dacl_and_every_server_refuses_the_real_tray(
    wine: WineEnv, display: str
) -> None:
    """A command of the tray (`python rt14_redacl.py`) opens `Local\\CoworkTerminal-tray-commands` by
    name with JOB_OBJECT_ALL_ACCESS (gather_commands made it with the default security: the user,
    whom every command runs as, may do anything to it: change its DACL, its limits, terminate it)
    and gives it an empty DACL. From then on every server and the CLI fail to open it, count that
    as "unsure" (umbrella_answers) and refuse the REAL tray as "inside a command's container": a
    fresh `serve` answers `echo hi` with "Cowork Terminal is not running ... A program that is not
    Cowork Terminal answered instead", for every conversation, until the tray restarts. Fail
    closed by design, but one command of one conversation should not be able to switch the tray off
    for all of them, and the words tell the model and the user the real tray is a look-alike. The
    tray should make the named job with a DACL that grants the user (OWNER RIGHTS too) only
    JOB_OBJECT_QUERY | SYNCHRONIZE (its own handle keeps full access). Same on Windows."""
    tray = _start_tray(wine)
    try:
        report = _tray_script(wine, tray, "rt14_redacl_driver.py", wine.win(SCRIPTS / "rt14_redacl.py"))
    finally:
        _quit_tray(wine, tray)
    print(json.dumps(report, indent=1))
    assert report["before"].get("stdout", "").strip() == "hi", report
    redacl = json.loads(report["redacl"]["stdout"])
    assert redacl["opened_with_full_access"] is False, f"a command may rewrite the tray's named job: {report}"
    assert report["tray_refusal"] is None, f"servers now refuse the real tray: {report}"
    assert report["after"].get("stdout", "").strip() == "hi", f"a fresh server refused the real tray: {report}"


@pytest.mark.xfail(
    strict=True,
    reason="known gap (docs/security.md, What remains): on Windows a command can start a process under another "
    "parent (PROC_THREAD_ATTRIBUTE_PARENT_PROCESS), outside every job: job membership is no proof against the user's "
    "own code",
)
def test_rt14_a_process_a_tray_command_starts_under_another_parent_quits_the_tray_as_the_user(
    wine: WineEnv, display: str
) -> None:
    """The tray refuses every request but pause and stop from a process in one of its jobs (its
    in_any_job). A command of the tray asks it to quit from inside its job: refused. The same
    command started through rt14_spoof.py (CreateProcessW with PROC_THREAD_ATTRIBUTE_PARENT_PROCESS
    naming explorer.exe) is in none of the tray's jobs, and the tray takes its `quit` for the
    user's: it quits, every server loses its tray, and a look-alike may take the pipe next (red team
    13's chain; the escaped process also outlives the tray's kill-on-close jobs and a pause's
    end_jobs). Same on Windows: the created process takes the job of the parent it names."""
    tray = _start_tray(wine)
    try:
        report = _tray_script(wine, tray, "rt14_quit_driver.py", wine.win(SCRIPTS / "rt14_escaped_quit.py"))
    finally:
        _quit_tray(wine, tray)
    print(json.dumps(report, indent=1))
    assert str(report["inside_answer"]).startswith("TrayRefused"), f"a quit from the command's job: {report}"
    assert report["escaped_answer"] is not None, f"the escaped asker did not answer: {report}"
    assert report["tray_pids_after"] == [report["tray_pid"]], f"a process a command started quit the tray: {report}"
