"""`status`, `pause`, `resume`, `stop` and `log`, run as the user runs them: the CLI is a process.

The headless server a `stop` reaches (through the journal) is `serve --headless` in this process
(tests/in_process_server.py); the tray a `resume` asks is a real one, clicked on Xvfb. argparse's
refusal of an unknown option is `main` in this process.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli.main import main
from app.core.journal.store import Journal, Outcome, Status
from app.core.paths import AppPaths
from tests.clicks import CONFIRM_TITLE, click_yes
from tests.tray_process import running_tray


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app", *args], env=env, capture_output=True, text=True, timeout=60)


def test_version_and_help_describe_the_commands(cli_env: dict[str, str]) -> None:
    assert cli(cli_env, "--version").stdout.startswith("cowork-terminal ")
    help_text = cli(cli_env, "--help").stdout
    for command in ("serve", "status", "pause", "resume", "log"):
        assert command in help_text


@pytest.mark.gui
def test_pause_works_without_the_app_but_resume_waits_for_the_users_click_in_it(
    cli_env: dict[str, str], home: Path, display: str
) -> None:
    assert "PAUSED" in cli(cli_env, "pause").stdout  # tightening: from anywhere, even with no app
    status = json.loads(cli(cli_env, "status", "--json").stdout)
    assert status["paused"] is True and status["tray_running"] is False
    assert status["journal"].endswith("journal.sqlite3")
    assert "Host access: PAUSED" in cli(cli_env, "status").stdout
    refused = cli(cli_env, "resume")
    assert refused.returncode != 0 and "nobody can confirm this and nothing changed" in refused.stderr
    assert json.loads(cli(cli_env, "status", "--json").stdout)["paused"] is True

    with running_tray(home, display=display):
        status = json.loads(cli(cli_env, "status", "--json").stdout)
        assert status["paused"] is True and status["tray_running"] is True, "the app starts paused as it was left"
        asking = subprocess.Popen(
            [sys.executable, "-m", "app", "resume"],
            env={**cli_env, "DISPLAY": display},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        click_yes(display, CONFIRM_TITLE)
        out, err = asking.communicate(timeout=60)
        assert asking.returncode == 0, err
        assert "Host access is ON" in out
        assert json.loads(cli(cli_env, "status", "--json").stdout)["paused"] is False
        assert "Host access: on" in cli(cli_env, "status").stdout


def test_log_prints_the_newest_commands_as_text_and_json(paths: AppPaths, cli_env: dict[str, str]) -> None:
    with Journal.open(paths) as journal:
        for i in range(5):
            cid = journal.begin_command(command=f"echo {i}", cwd="/tmp")
            journal.finish_command(cid, Outcome(status=Status.FINISHED, exit_code=0))
    text = cli(cli_env, "log", "--limit", "3").stdout.splitlines()
    assert len(text) == 3 and "echo 4" in text[-1] and "✓ Finished, exit code 0" in text[-1]
    rows = [json.loads(line) for line in cli(cli_env, "log", "--json").stdout.splitlines()]
    assert [r["command"] for r in rows] == [f"echo {i}" for i in range(5)]
    assert rows[0]["status"] == "finished"


def test_log_speaks_the_users_language_as_the_activity_log_does(paths: AppPaths, cli_env: dict[str, str]) -> None:
    from app.core.messages import USER_STOP_REASON

    with Journal.open(paths) as journal:
        failed = journal.begin_command(command="npm test", cwd="/tmp")
        journal.finish_command(failed, Outcome(status=Status.FAILED, exit_code=1, duration_ms=8300))
        stopped = journal.begin_command(command="sleep 100", cwd="/tmp")
        journal.finish_command(stopped, Outcome(status=Status.KILLED, reason=USER_STOP_REASON, duration_ms=94_000))
    german = {**{k: v for k, v in cli_env.items() if not k.startswith(("LC_", "LANG"))}, "LANG": "de_DE.UTF-8"}
    first, second = cli(german, "log").stdout.splitlines()
    assert "✗ Fehlgeschlagen, Exit-Code 1 8,3 s [/tmp] npm test" in first
    assert "■ Von Ihnen gestoppt 1 min 34 s [/tmp] sleep 100" in second
    assert json.loads(cli(german, "log", "--json").stdout.splitlines()[0])["status"] == "failed", "values for scripts"


def test_log_rejects_a_bad_limit_with_an_exit_code(cli_env: dict[str, str]) -> None:
    result = cli(cli_env, "log", "--limit", "0")
    assert result.returncode == 2
    assert "--limit must be at least 1" in result.stderr


def test_log_follow_streams_commands_as_they_start_and_end_until_ctrl_c(
    paths: AppPaths, cli_env: dict[str, str]
) -> None:
    # As a terminal starts it in the foreground: a suite run as a background job of a script (`cmd &`)
    # would hand on Ctrl+C ignored, as POSIX shells do for their background jobs.
    follower = subprocess.Popen(
        ["env", "--default-signal=INT", sys.executable, "-m", "app", "log", "--follow", "--json"],
        env={**cli_env, "PYTHONFAULTHANDLER": "1"},  # SIGABRT prints where it stands
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        with Journal.open(paths) as journal:
            cid = journal.begin_command(command="make build", cwd="/tmp")
            # Shown running (at its start if the follower starts after it, else at its next poll),
            # and only then ended: the follower must see both states.
            first = json.loads(follower.stdout.readline())
            journal.finish_command(cid, Outcome(status=Status.FAILED, exit_code=2))
        second = json.loads(follower.stdout.readline())
        follower.send_signal(signal.SIGINT)  # the user's Ctrl+C in the terminal
        try:
            _, said = follower.communicate(timeout=10)
        except subprocess.TimeoutExpired:  # show where it stood
            follower.send_signal(signal.SIGABRT)
            pytest.fail(f"Ctrl+C did not end `log --follow` within 10 s; its stack:\n{follower.communicate()[1]}")
    finally:
        if follower.poll() is None:
            follower.kill()
            follower.wait()
    assert (first["command"], first["status"]) == ("make build", "running")
    assert (second["command"], second["status"], second["exit_code"]) == ("make build", "failed", 2)
    assert follower.returncode == 130 and said == "", "Ctrl+C ends it as a shell expects, with no traceback"


def test_an_option_no_command_has_is_refused_with_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as refused:
        main(["status", "--colour"])
    assert refused.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == "cowork-terminal: error: unrecognized arguments: --colour"


def test_stop_ends_a_command_running_in_a_headless_server(home: Path, cli_env: dict[str, str]) -> None:
    """`stop` is the CLI, a process; the headless server it reaches through the journal runs in this one."""
    import anyio

    from tests.in_process_server import serving
    from tests.stdio_client import run

    async def scenario() -> tuple[dict, subprocess.CompletedProcess[str]]:
        async with serving(home) as client, anyio.create_task_group() as group:
            result: dict = {}

            async def call() -> None:
                result.update(await run(client, {"command": "sleep 30"}))

            group.start_soon(call)
            with Journal.open(AppPaths.from_environment()) as journal, anyio.fail_after(10):
                while not journal.active_commands():
                    await anyio.sleep(0.05)
                command_id = journal.active_commands()[0].id
            # In a thread: the server runs on this event loop while the CLI asks it to stop.
            stopped = await anyio.to_thread.run_sync(lambda: cli(cli_env, "stop", str(command_id)))
        return result, stopped

    result, stopped = anyio.run(scenario)
    assert "Asked the server running command" in stopped.stdout
    assert (
        result["note"] == ("stopped by the user. Do not run it again unless the user asks; ask them how to go on.")
        and result["exitCode"] is None
    )
    again = cli(cli_env, "stop", "1")
    assert again.returncode == 2 and "is not running" in again.stderr


@pytest.mark.anyio
async def test_status_writes_out_escapes_in_a_clients_name(cli_env: dict[str, str], home: Path) -> None:
    """The client names itself (a red team, 2026-12-05): its name reached the user's terminal raw."""
    import anyio
    from mcp_types import Implementation

    from tests.in_process_server import serving
    from tests.stdio_client import run

    name = "claude\x1b]52;c;ZXZpbA==\x07\x1b[2J"
    async with serving(home, client_info=Implementation(name=name, version="1")) as client:
        assert (await run(client, {"command": "true"}))["exitCode"] == 0
        said = await anyio.to_thread.run_sync(lambda: cli(cli_env, "status"))
    line = next(line for line in said.stdout.splitlines() if line.startswith("Live server: pid"))
    assert "\x1b" not in said.stdout and "\x07" not in said.stdout, said.stdout
    assert "claude\\x1b]52;c;ZXZpbA==" in line or "claude^[]52;c;ZXZpbA==" in line, line
