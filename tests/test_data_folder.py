"""A damaged journal, a read-only or missing data folder and a full disk, as each entry point tells
them: the CLI and the tray as real processes; what a server answers the model, and what `serve`
prints on its stderr for the user, on the headless server in this process (tests/in_process_server.py);
each kind of damage as the journal opened in this process finds it; and where only the tray's hub is
at stake, the hub in this process. Real SQLite files, and (as root) real small tmpfs mounts."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from app.core.authority.supervisor import JOURNAL_REPLACED, Supervisor
from app.core.journal import pause_file
from app.core.journal.store import Journal, Status
from app.core.paths import HOME_ENV, AppPaths
from tests.in_process_server import serving
from tests.stdio_client import STOP_DEADLINE_S, said, stdout_of

LINUX_ROOT = pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.geteuid() != 0, reason="mounts a small tmpfs (Linux, as root; CI is)"
)


def cli(home: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    child_env = {**os.environ, HOME_ENV: str(home), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "app", *args], capture_output=True, text=True, env=child_env, timeout=60
    )


def make_journal(home: Path, commands: int = 300) -> bytes:
    """A journal with some history, closed (no WAL left), returned as its bytes."""
    with Journal(AppPaths(home, home / "logs")) as journal:
        for number in range(commands):
            journal.begin_command(command=f"echo {number} " + "x" * 400, cwd="/")
    return (home / "journal.sqlite3").read_bytes()


def damage(home: Path, how: str) -> bytes:
    data = make_journal(home)
    page_size = int.from_bytes(data[16:18], "big")
    damaged = {
        "garbage header": b"this is not SQLite" * 6 + data[108:],
        "truncated in half": data[: len(data) // 2],
        "truncated at a page boundary": data[: page_size * 3],
        "emptied to 0 bytes": b"",
    }[how]
    (home / "journal.sqlite3").write_bytes(damaged)
    return damaged


def corrupt_copies(home: Path) -> list[Path]:
    return sorted(home.glob("journal.corrupt-*.sqlite3"))


DAMAGES = ["garbage header", "truncated in half", "truncated at a page boundary", "emptied to 0 bytes"]


@pytest.mark.parametrize("how", DAMAGES)
def test_each_kind_of_damage_is_found_the_file_kept_as_it_was_and_a_new_journal_started(
    home: Path, how: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The journal opened in this process, as each entry point opens it (the CLI through a process
    below); what it prints for the user is read from this process's stderr."""
    damaged = damage(home, how)
    with Journal.open(AppPaths.from_environment()) as journal:
        assert journal.recent_commands() == [], "a new journal"
        journal.begin_command(command="echo recorded", cwd="/")
    said = capsys.readouterr().err
    [kept] = corrupt_copies(home)
    assert kept.read_bytes() == damaged, "nothing is deleted: the damaged file is kept as it was"
    assert f"moved aside to {kept}" in said and "a new one was started" in said, said
    with Journal.open(AppPaths.from_environment()) as journal:
        assert [row.command for row in journal.recent_commands()] == ["echo recorded"]
    assert "moved aside" not in capsys.readouterr().err, "told once, when it happened"
    assert corrupt_copies(home) == [kept]


def test_a_damaged_journal_is_moved_aside_a_new_one_started_and_the_cli_says_so(home: Path) -> None:
    damaged = damage(home, "truncated at a page boundary")
    result = cli(home, "status")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    [kept] = corrupt_copies(home)
    assert kept.read_bytes() == damaged, "nothing is deleted: the damaged file is kept as it was"
    assert f"moved aside to {kept}" in result.stderr and "a new one was started" in result.stderr
    assert "Host access: on" in result.stdout
    again = cli(home, "status")
    assert again.returncode == 0 and "moved aside" not in again.stderr, "told once, when it happened"
    assert corrupt_copies(home) == [kept]


def test_the_tray_tells_of_a_replaced_journal_once(home: Path) -> None:
    damage(home, "garbage header")
    with Journal.open(AppPaths.from_environment()) as journal:
        _, notices = Supervisor(journal).poll()
        [notice] = [n for n in notices if n.kind == JOURNAL_REPLACED]
        assert "journal.corrupt-" in notice.message and "nothing was deleted" in notice.message
        _, later = Supervisor(journal).poll()  # a tray started again
    assert JOURNAL_REPLACED not in [n.kind for n in later]


def test_serve_on_a_damaged_journal_says_so_on_stderr_and_runs_commands(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The headless server in this process: what it prints for the user (Claude's log for the server
    shows its stderr) is read from this process's stderr."""
    damaged = damage(home, "truncated in half")

    async def scenario() -> str:
        async with serving(home) as client:
            return await said(client, "echo fine")

    answer = anyio.run(scenario)
    out, stderr = capsys.readouterr()
    assert stdout_of(answer) == "fine\n"
    [kept] = corrupt_copies(home)
    assert "cowork-terminal: The activity log was damaged (" in stderr, stderr
    assert f"so it was moved aside to {kept} and a new one was started" in stderr, stderr
    assert "moved aside" not in out, "stdout belongs to the protocol"
    assert "Traceback" not in stderr
    assert kept.read_bytes() == damaged


@pytest.fixture
def tmpfs(small_disk: Path) -> Path:
    """A 2 MiB tmpfs of our own (conftest's `small_disk`)."""
    return small_disk


def read_only_home(tmpfs: Path) -> Path:
    home = tmpfs / "home"
    make_journal(home, commands=3)
    subprocess.run(["mount", "-o", "remount,ro", str(tmpfs)], check=True)
    return home


ENTRY_POINTS = [("pause",), ("stop", "1"), ("tray",)]  # resume asks the tray only; status and log read (below)


@LINUX_ROOT
def test_every_entry_point_explains_a_read_only_data_folder_without_a_traceback(tmpfs: Path) -> None:
    home = read_only_home(tmpfs)
    for args in ENTRY_POINTS:  # from a terminal session with no display: the words on stderr
        result = cli(home, *args, env={"PYSTRAY_BACKEND": "dummy", "DISPLAY": "", "WAYLAND_DISPLAY": ""})
        assert result.returncode != 0, args
        assert "Traceback" not in result.stderr + result.stdout, (args, result.stderr)
        assert f"data folder {home} cannot be written (Read-only file system)" in result.stderr, (args, result.stderr)


@LINUX_ROOT
def test_status_and_log_read_a_read_only_data_folder_and_status_says_it_is_read_only(tmpfs: Path) -> None:
    home = read_only_home(tmpfs)
    status = cli(home, "status")
    assert status.returncode == 0 and status.stderr == "", status
    assert f"Data folder: {home} is read-only here, so the journal was only read." in status.stdout
    assert "3 commands" in status.stdout
    log = cli(home, "log")
    assert log.returncode == 0 and log.stderr == "", log
    assert len(log.stdout.splitlines()) == 3


@LINUX_ROOT
def test_the_app_started_from_the_desktop_on_a_read_only_folder_says_why_in_a_window(tmpfs: Path, display: str) -> None:
    from tests.clicks import press, shown_window

    home = read_only_home(tmpfs)
    env = {**os.environ, HOME_ENV: str(home), "DISPLAY": display, "PYSTRAY_BACKEND": "dummy"}
    app = subprocess.Popen(
        [sys.executable, "-m", "app", "tray"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # no terminal, as a launcher
    try:
        window = shown_window(display, "Cowork Terminal cannot start")
        assert app.poll() is None, "the app waits until the person has read it"
        press(display, window, "Return")
        _, stderr = app.communicate(timeout=STOP_DEADLINE_S)
    finally:
        app.kill()
    assert app.returncode != 0
    assert f"data folder {home} cannot be written (Read-only file system)" in stderr and "Traceback" not in stderr


def test_a_problem_at_start_is_shown_in_a_window_only_where_nobody_reads_stderr() -> None:
    from app.ui.windows.problem_window import shows_a_window

    assert shows_a_window("linux", {"DISPLAY": ":0"}, stderr_is_terminal=False)
    assert shows_a_window("linux", {"WAYLAND_DISPLAY": "wayland-0"}, stderr_is_terminal=False)
    assert not shows_a_window("linux", {}, stderr_is_terminal=False), "no display: stderr is all there is"
    assert not shows_a_window("linux", {"DISPLAY": ":0"}, stderr_is_terminal=True), "a terminal reads it"
    assert shows_a_window("win32", {}, stderr_is_terminal=False)  # a windowed build has no stderr at all
    assert shows_a_window("darwin", {}, stderr_is_terminal=False)
    assert not shows_a_window("darwin", {}, stderr_is_terminal=True)


@LINUX_ROOT
def test_serve_on_a_read_only_data_folder_answers_every_call_with_the_reason(
    tmpfs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = read_only_home(tmpfs)
    monkeypatch.setenv(HOME_ENV, str(home))

    async def scenario() -> list[str]:
        async with serving(home) as client:
            return [await said(client, "echo hi"), await said(client, "ls", "terminal_run")]

    for answer in anyio.run(scenario):
        assert answer.startswith("ERROR: ")
        assert "cannot be written (Read-only file system); commands are refused" in answer
        assert answer.count("cannot be written") == 1, "the reason is said once, not wrapped in itself"


def test_a_data_folder_that_cannot_be_created_is_explained(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    home = blocker / "home"
    result = cli(home, "status")
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert f"data folder {home} does not exist and cannot be created" in result.stderr


def fill(disk: Path) -> Path:
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as out:  # unbuffered: nothing left to flush at close
        try:
            while True:
                out.write(b"\0" * 65536)
                out.flush()
        except OSError:
            pass
    return filler


@LINUX_ROOT
def test_on_a_full_disk_calls_are_refused_in_words_and_pause_still_works(
    tmpfs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The headless server in this process; the agent's CLI pauses and reads the status, as a process."""
    home = tmpfs / "home"
    monkeypatch.setenv(HOME_ENV, str(home))

    async def scenario() -> None:
        async with serving(home) as client:
            assert stdout_of(await said(client, "echo before")) == "before\n"
            filler = fill(tmpfs)

            began = time.monotonic()
            with anyio.fail_after(STOP_DEADLINE_S):  # a call on a full disk is answered
                answer = await said(client, "echo during")
            assert time.monotonic() - began < STOP_DEADLINE_S
            assert f"the disk that holds Cowork Terminal's data is full ({home}, " in answer
            assert "commands are refused until space is freed" in answer

            paused = await anyio.to_thread.run_sync(cli, home, "pause")
            assert paused.returncode == 0 and "PAUSED" in paused.stdout, paused.stderr
            assert "Traceback" not in paused.stderr
            assert pause_file.read(home / "pause") is True
            assert "paused by the user" in await said(client, "echo paused")
            status = await anyio.to_thread.run_sync(cli, home, "status")
            assert "Host access: PAUSED" in status.stdout and "Traceback" not in status.stderr

            filler.unlink()
            with Journal(AppPaths(home, home / "logs")) as journal:  # as the user's click in the app would
                journal.set_paused(False)
            assert stdout_of(await said(client, "echo after")) == "after\n"

    anyio.run(scenario)
    with Journal(AppPaths(home, home / "logs")) as journal:
        assert [r.command for r in journal.recent_commands() if r.status is Status.FINISHED] == [
            "echo after",
            "echo before",
        ]


@LINUX_ROOT
def test_a_server_started_on_a_full_disk_serves_once_there_is_room_without_a_restart(
    tmpfs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmpfs / "home"
    home.mkdir()
    monkeypatch.setenv(HOME_ENV, str(home))
    filler = fill(tmpfs)

    async def scenario() -> None:
        async with serving(home) as client:
            answer = await said(client, "echo during")
            assert answer.startswith("ERROR: ")
            assert "commands are refused until space is freed" in answer and "restart" not in answer
            filler.unlink()
            assert stdout_of(await said(client, "echo after")) == "after\n"

    anyio.run(scenario)
    with Journal(AppPaths(home, home / "logs")) as journal:
        assert [r.command for r in journal.recent_commands()] == ["echo after"]


def running(home: Path) -> bool:
    with Journal(AppPaths(home, home / "logs")) as journal:
        return any(r.status is Status.RUNNING for r in journal.recent_commands())


async def paused_on_a_full_disk(tmpfs: Path, command: str, fails_meanwhile_s: float = 0.0) -> str:
    """`command` runs on the headless server in this process; the disk fills, and after
    `fails_meanwhile_s` the agent's CLI (a process) pauses: what the model reads of the command."""
    home = tmpfs / "home"
    answers: list[str] = []
    async with serving(home) as client:

        async def call() -> None:
            answers.append(await said(client, command))

        async with anyio.create_task_group() as group:
            group.start_soon(call)
            with anyio.fail_after(STOP_DEADLINE_S):
                while not running(home):
                    await anyio.sleep(0.05)
            fill(tmpfs)
            await anyio.sleep(fails_meanwhile_s)
            assert (await anyio.to_thread.run_sync(cli, home, "pause")).returncode == 0
            with anyio.fail_after(STOP_DEADLINE_S):  # the pause reaches the running command
                while not answers:
                    await anyio.sleep(0.05)
    return answers[0]


@LINUX_ROOT
def test_a_pause_on_a_full_disk_stops_a_running_command(tmpfs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(HOME_ENV, str(tmpfs / "home"))
    marker = f"52{os.getpid() % 1000}.5"
    answer = anyio.run(paused_on_a_full_disk, tmpfs, f"sleep {marker}")
    assert "paused host access" in answer, answer


@LINUX_ROOT
def test_a_pause_on_a_full_disk_stops_a_command_whose_live_output_can_no_longer_be_written(
    tmpfs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The live log's copy of a running command's output is written each second: on a full disk that
    write fails, and it must not end the server's watch for pause and Stop."""
    monkeypatch.setenv(HOME_ENV, str(tmpfs / "home"))
    answer = anyio.run(paused_on_a_full_disk, tmpfs, "while :; do echo more; sleep 0.1; done", 2.5)
    assert "paused host access" in answer, answer  # two live-output writes failed meanwhile


def test_an_old_journal_without_a_pause_file_keeps_its_pause(home: Path) -> None:
    with Journal(AppPaths(home, home / "logs")) as journal:
        journal.set_paused(True)
    (home / "pause").unlink()
    with sqlite3.connect(home / "journal.sqlite3") as db:
        assert json.loads(db.execute("SELECT value FROM settings WHERE key = 'paused'").fetchone()[0]) is True
    with Journal(AppPaths(home, home / "logs")) as journal:
        assert journal.is_paused()
    assert pause_file.read(home / "pause") is True, "the file is allocated from the setting while there is room"


def test_a_pause_that_reached_only_the_pause_file_is_kept_by_the_tray_that_starts_next(home: Path) -> None:
    """The tray's hub (here in this process, tests/channel_peers.py) reads the stored settings as it
    starts: its state is what the tray answers a `state` request (`status`) and pushes to its servers."""
    from tests.channel_peers import running_hub

    make_journal(home, commands=1)
    pause_file.write(home / "pause", True)  # as `pause` does on a full disk with no tray
    with running_hub(AppPaths.from_environment()) as (hub, _seen):
        assert hub.state.paused is True


# ---- the person reads these in their language; the model keeps the English words


def speaking(language: str) -> dict[str, str]:
    """The environment of a user whose system speaks `language`."""
    locale = {"de": "de_DE.UTF-8", "ru": "ru_RU.UTF-8", "es": "es_ES.UTF-8"}[language]
    return {"LC_ALL": "", "LC_MESSAGES": "", "LANGUAGE": "", "LANG": locale}


def test_a_german_user_reads_in_german_that_the_data_folder_cannot_be_created(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    home = blocker / "home"
    result = cli(home, "status", env=speaking("de"))
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert f"Der Datenordner von Cowork Terminal {home} existiert nicht und kann nicht angelegt werden" in result.stderr
    assert "does not exist" not in result.stderr


def test_a_russian_user_reads_in_russian_that_a_damaged_journal_was_moved_aside(home: Path) -> None:
    damage(home, "garbage header")
    result = cli(home, "status", env=speaking("ru"))
    assert result.returncode == 0, result.stderr
    [kept] = corrupt_copies(home)
    assert f"поэтому он перемещён в {kept}, и начат новый. Ничего не удалено" in result.stderr
    assert "moved aside" not in result.stderr


@LINUX_ROOT
def test_a_read_only_data_folder_is_explained_in_german_to_the_person(tmpfs: Path) -> None:
    home = read_only_home(tmpfs)
    for args in ENTRY_POINTS:  # from a terminal session with no display: the words on stderr
        no_display = {"DISPLAY": "", "WAYLAND_DISPLAY": ""}
        result = cli(home, *args, env={"PYSTRAY_BACKEND": "dummy", **no_display, **speaking("de")})
        assert result.returncode != 0 and "Traceback" not in result.stderr, (args, result.stderr)
        assert f"In den Datenordner von Cowork Terminal {home} kann nicht geschrieben werden" in result.stderr, (
            args, result.stderr
        )  # fmt: skip


@LINUX_ROOT
def test_on_a_read_only_data_folder_a_german_server_tells_the_model_in_english(
    tmpfs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The headless server in this process, which speaks German meanwhile (as `serve` started in a
    German session does)."""
    from app.core import i18n

    home = read_only_home(tmpfs)
    monkeypatch.setenv(HOME_ENV, str(home))

    async def scenario() -> str:
        async with serving(home) as client:
            return await said(client, "echo hi")

    spoken = i18n.current_language()
    i18n.use_language("de")
    try:
        answer = anyio.run(scenario)
    finally:
        i18n.use_language(spoken)
    assert "cannot be written (Read-only file system); commands are refused" in answer, answer


@LINUX_ROOT
def test_on_a_full_disk_a_russian_user_pausing_reads_why_in_russian(tmpfs: Path) -> None:
    home = tmpfs / "home"
    make_journal(home, commands=3)
    fill(tmpfs)
    paused = cli(home, "pause", env=speaking("ru"))
    assert paused.returncode == 0, paused.stderr
    assert f"Диск с данными Cowork Terminal заполнен ({home}, свободно 0 Б)" in paused.stderr
    assert "is full" not in paused.stderr


@LINUX_ROOT
def test_on_a_full_disk_a_german_trays_server_tells_the_model_in_english(
    tmpfs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tray writes the rows and answers its servers why it could not: in English, because a
    server passes it on to the model, whatever language the tray speaks. The tray's hub and a server
    bound to it run in this process (tests/in_process_server.py), which speaks German meanwhile."""
    from app.core import i18n
    from tests.channel_peers import running_hub
    from tests.in_process_server import serving

    home = tmpfs / "home"
    make_journal(home, commands=3)
    monkeypatch.setenv(HOME_ENV, str(home))

    async def scenario() -> str:
        async with serving(home, bound=True) as client:
            before = await client.call_tool("execute_command", {"command": "echo before"})
            assert json.loads(before.content[0].text)["stdout"] == "before\n"
            filler = fill(tmpfs)
            try:
                during = await client.call_tool("execute_command", {"command": "echo during"})
            finally:
                filler.unlink()
        assert during.is_error
        return during.content[0].text

    spoken = i18n.current_language()
    i18n.use_language("de")  # the whole process: the tray's words, and its server's
    try:
        with running_hub(AppPaths.from_environment()) as (_hub, seen):
            answer = anyio.run(scenario)
        told = [message for _title, message in seen.notices]
    finally:
        i18n.use_language(spoken)
    assert any("Datenträger" in message for message in told), "the user reads it in German"
    assert "Cowork Terminal could not record this command, so it was not run" in answer
    assert f"the disk that holds Cowork Terminal's data is full ({home}, " in answer, answer
    assert "Datenträger" not in answer


@LINUX_ROOT
def test_the_app_started_from_a_german_desktop_on_a_read_only_folder_says_why_in_german(
    tmpfs: Path, display: str
) -> None:
    from tests.clicks import press, shown_window

    home = read_only_home(tmpfs)
    env = {**os.environ, HOME_ENV: str(home), "DISPLAY": display, "PYSTRAY_BACKEND": "dummy", **speaking("de")}
    app = subprocess.Popen(
        [sys.executable, "-m", "app", "tray"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # no terminal, as a launcher
    try:
        window = shown_window(display, "Cowork Terminal kann nicht starten")
        press(display, window, "Return")
        _, stderr = app.communicate(timeout=STOP_DEADLINE_S)
    finally:
        app.kill()
    assert app.returncode != 0
    assert f"In den Datenordner von Cowork Terminal {home} kann nicht geschrieben werden" in stderr, stderr
