"""Faults that used to end in a bare error (issue 23): each now ends in a plain message to the model
and the user, no traceback, and a notice that says what really happened. Real processes: a tray,
`serve` spoken to line by line under it (its stderr is what Claude's log for it shows), the CLI in a
pipe; a headless server in this process (tests/in_process_server.py) where what it answers and
records is the subject (what it prints for the user is read from this process's stderr); and, where
only the tray's hub is at stake, the hub and a server bound to it in this process.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client

from app.core.authority.hub import Hub
from app.core.execution import container
from app.core.journal import opening
from app.core.journal.store import JOURNAL_REPLACED_SETTING, Journal
from app.core.paths import HOME_ENV, AppPaths
from tests.channel_peers import Seen, monitor, running_hub
from tests.in_process_server import serving
from tests.raw_stdio import RawServer
from tests.stdio_client import STOP_DEADLINE_S, said
from tests.test_data_folder import LINUX_ROOT, fill, make_journal
from tests.tray_process import running_tray

BARE_ERROR = "ERROR: Error executing tool execute_command"  # the SDK's words when our code raised
FOREIGN_CHANGE = "Cowork Terminal did not make this change. Your settings and answers are unaffected."
NOT_RECORDED = "Cowork Terminal could not record this command, so it was not run: "
NEW_JOURNAL = "Cowork Terminal started a new activity journal"  # the notice's title


def tray_log(log: Path) -> str:
    """What the tray told the user (the dummy backend logs each notice) and logged."""
    return log.read_text(errors="replace") if log.exists() else ""


def echo(server: RawServer, text: str) -> str:
    answer = server.call("execute_command", json.dumps({"command": f"echo {text}"}))
    assert answer is not None, "the call got no answer"
    return answer


def ran(answer: str, text: str) -> bool:
    return not answer.startswith("ERROR: ") and json.loads(answer)["stdout"] == f"{text}\n"


def stopped(server: RawServer) -> str:
    server.process.stdin.close()
    server.wait(STOP_DEADLINE_S)
    return server.stderr()


@pytest.mark.parametrize("command", [("status",), ("log",)])
def test_the_cli_read_through_a_pipe_that_closes_early_ends_quietly(home: Path, command: tuple[str, ...]) -> None:
    """`cowork-terminal status | head -1`: the reader went away; nothing is wrong, nothing to say."""
    make_journal(home, commands=50)
    env = {**os.environ, HOME_ENV: str(home)}
    child = subprocess.Popen(
        [sys.executable, "-m", "app", *command], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    assert child.stdout is not None
    child.stdout.close()  # `head` took its line and left before the CLI wrote
    _, stderr = child.communicate(timeout=60)
    assert child.returncode == 128 + 13, "as a program ended by SIGPIPE: the pipeline's reader decides"
    assert stderr.decode() == ""


def still_running(paths: AppPaths) -> bool:
    with Journal(paths) as journal:
        return bool(journal.active_commands())


def damage_in_place(journal: Path) -> None:
    """Another program (or the disk) overwrites the journal's pages where they are: the same file,
    the same inode, its header kept, every page after it and every WAL frame garbage."""
    for path, keep in ((journal, 100), (Path(f"{journal}-wal"), 32)):
        if path.exists():
            size = path.stat().st_size
            with open(path, "r+b") as file:
                file.seek(keep)
                file.write(os.urandom(size - keep))


def test_a_journal_damaged_in_place_under_a_running_tray_is_replaced_and_commands_run_on(
    home: Path, paths: AppPaths, caplog: pytest.LogCaptureFixture
) -> None:
    """The tray's hub and a server bound to it in this process, polled as the tray's monitor polls
    it (app/ui/tray/loop.py: `hub.tick()`, then the servers' rows); `seen` is what the tray tells.
    The next command after the damage, before the monitor's next look, runs and is recorded in the
    new journal: the hub looks at the file before each command's row."""

    async def scenario(hub: Hub, seen: Seen) -> list[str]:
        supervisor = hub.new_supervisor(has_menu=True)

        def titles() -> list[str]:
            return monitor(hub, supervisor, seen)

        async with serving(home, bound=True) as client:
            for number in range(20):
                assert ran(await said(client, f"echo row{number}"), f"row{number}")
            # The last end is recorded as its result goes back: damaged before that, the end is
            # written into the new journal with its row (server_rows.write_back_ended), as it should.
            with anyio.fail_after(STOP_DEADLINE_S):
                while still_running(paths):
                    await anyio.sleep(0.05)
            titles()
            inode = paths.journal.stat().st_ino
            damage_in_place(paths.journal)
            assert paths.journal.stat().st_ino == inode, "damaged where it is, not replaced"
            answers = [await said(client, "echo after")]  # no monitor poll since the damage
            with Journal(paths) as journal:
                assert [row.command for row in journal.recent_commands()] == ["echo after"], "in the new journal"
            with anyio.fail_after(STOP_DEADLINE_S):
                while NEW_JOURNAL not in titles():
                    await anyio.sleep(0.05)
            answers.append(await said(client, "echo again"))
            titles()
        return answers

    with running_hub(paths) as (hub, seen):
        answers = anyio.run(scenario, hub, seen)
    told = seen.titles()
    assert ran(answers[0], "after") and ran(answers[1], "again"), answers
    assert not [record for record in caplog.records if record.exc_info], "no traceback in the tray's log"
    assert told.count(NEW_JOURNAL) == 1, told
    assert "The activity log was deleted" not in told, "it was damaged, not deleted"
    [kept] = home.glob("journal.corrupt-*.sqlite3")
    [message] = [message for title, message in seen.notices if title == NEW_JOURNAL]
    assert f"It was kept as {kept}" in message


def test_a_server_whose_journal_row_vanished_still_runs_commands_and_the_user_is_told(
    home: Path, paths: AppPaths
) -> None:
    """The tray's hub and a server bound to it, in this process (tests/in_process_server.py), as the
    tray's runner of a server's calls is bound to it: the hub writes its rows."""

    async def scenario() -> tuple[str, str, str]:
        async with serving(home, bound=True) as client:
            before = await said(client, "echo before")
            with sqlite3.connect(paths.journal) as db:  # another program deletes the servers' rows
                assert db.execute("DELETE FROM servers").rowcount == 1
            return before, await said(client, "echo after"), await said(client, "echo again")

    with running_hub(paths) as (hub, seen):
        before, answer, again = anyio.run(scenario)
        hub.tick()  # as the tray's monitor does at each poll
    assert ran(before, "before"), before
    assert ran(answer, "after"), answer
    assert ran(again, "again"), again
    assert ("The activity log was changed by another program", FOREIGN_CHANGE) in seen.notices, seen.notices
    with sqlite3.connect(paths.journal) as db:
        [(servers,)] = db.execute("SELECT count(*) FROM servers").fetchall()
        commands = [c for (c,) in db.execute("SELECT command FROM commands ORDER BY id")]
    assert servers == 1, "the tray registered it again"
    assert commands[-2:] == ["echo after", "echo again"]


@LINUX_ROOT
def test_a_server_started_on_a_full_disk_under_a_tray_says_the_disk_is_full_not_that_an_impostor_answered(
    small_disk: Path, tmp_path: Path
) -> None:
    home = small_disk / "home"
    make_journal(home, commands=3)
    log = tmp_path / "tray.log"
    with running_tray(home, log=log):
        filler = fill(small_disk)
        server = RawServer(home)
        try:
            assert server.initialize() is not None
            during = echo(server, "during")
            filler.unlink()
            after = echo(server, "after")
        finally:
            stderr = stopped(server)
    assert "not Cowork Terminal" not in during + stderr, during + stderr
    assert f"{NOT_RECORDED}the disk that holds Cowork Terminal's data is full ({home}, " in during, during
    assert ".." not in during
    assert ran(after, "after"), "once there is room, the same server runs commands"
    assert "Traceback" not in stderr + tray_log(log)


def test_a_headless_server_whose_row_was_deleted_registers_again_and_runs(
    home: Path, paths: AppPaths, capsys: pytest.CaptureFixture[str]
) -> None:
    async def scenario() -> list[str]:
        async with serving(home) as client:
            assert ran(await said(client, "echo before"), "before")
            with sqlite3.connect(paths.journal) as db:
                assert db.execute("DELETE FROM servers").rowcount == 1
            return [await said(client, "echo after"), await said(client, "echo again")]

    answers = anyio.run(scenario)
    stderr = capsys.readouterr().err
    assert all(ran(answer, text) for answer, text in zip(answers, ("after", "again"), strict=True)), answers
    assert "Traceback" not in stderr, stderr
    with sqlite3.connect(paths.journal) as db:
        assert db.execute("SELECT count(*) FROM servers").fetchone() == (1,), "registered again, once"
        assert db.execute("SELECT state FROM servers").fetchone() == ("exited",), "and its end recorded"


DAMAGE_SCRIPT = """import os
base = bytes.fromhex(open('target.hex').read().strip()).decode()
for suffix, keep in (('', 100), ('-wal', 32)):
    if os.path.exists(base + suffix):
        before = os.stat(base + suffix)
        with open(base + suffix, 'r+b') as file:
            file.seek(keep)
            file.write(os.urandom(before.st_size - keep))
        os.utime(base + suffix, ns=(before.st_atime_ns, before.st_mtime_ns))  # the write hidden, but its ctime
print('overwrote', base)
"""


async def agent_damages_journal(client: Client, journal: Path, work: Path) -> str:
    """What an agent runs: a script that names no file of ours (the journal's path arrives hex-encoded
    in a file of its own), so the classifier sees nothing of Cowork Terminal's to hold."""

    async def call(command: str) -> str:
        result = await client.call_tool("execute_command", {"command": command, "cwd": str(work)})
        return ("ERROR: " if result.is_error else "") + result.content[0].text

    assert ran(await call(f"echo {str(journal).encode().hex()} > target.hex && echo ok"), "ok")
    assert ran(await call(f"cat > damage.py <<'EOF'\n{DAMAGE_SCRIPT}EOF\necho ok"), "ok")
    return await call("python3 damage.py")


def test_a_headless_server_whose_journal_a_command_damaged_in_place_moves_it_aside_and_tells_the_model_and_user(
    home: Path, paths: AppPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No tray, and the container switched off (the only way a command reaches the data folder: in
    the container it is read-only). The server's own connection reads its cached pages and would go
    on writing into the damaged file; a fresh look before each row finds it, also when the attack
    sets the file's modification time back (its change time still moves)."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv(container.BWRAP_ENV, str(tmp_path / "no-bwrap"))
    inode = 0

    async def scenario() -> tuple[str, str, str, str]:
        nonlocal inode
        async with serving(home) as client:
            for number in range(20):
                assert ran(await said(client, f"echo row{number}"), f"row{number}")
            await anyio.sleep(opening.SETTLED_S + 0.2)  # the file now reads whole as it is: its next look is skipped
            inode = paths.journal.stat().st_ino
            damage = await agent_damages_journal(client, paths.journal, work)
            assert json.loads(damage)["stdout"] == f"overwrote {paths.journal}\n", "the attack ran"
            assert opening.damage_on_disk(paths.journal), "and damaged the journal where it is"
            assert paths.journal.stat().st_ino == inode
            return (
                damage,
                await said(client, "echo after"),
                await said(client, "echo again"),
                await said(client, "echo more"),
            )

    damage, first, second, third = anyio.run(scenario)
    stderr = capsys.readouterr().err  # what `serve` prints on its stderr, the server's log in Claude
    [kept] = home.glob("journal.corrupt-*.sqlite3")
    assert first.strip() != BARE_ERROR, first
    assert (
        "Cowork Terminal could not record this command, so it was not run. The activity journal was damaged "
        f"(file is not a database), so it was moved aside to {kept} and a new one was started. Nothing was "
        "deleted; the old history is in that file. Run the command again." in first
    ), first
    assert ran(second, "again") and ran(third, "more"), "the next calls run, recorded in a new journal"
    assert "Traceback" not in stderr, stderr
    assert (
        f"cowork-terminal: The activity log was damaged (file is not a database), so it was moved aside to {kept}"
        in (stderr)
    ), "the user is told in plain words (serve's log in Claude; the tray shows it at its next start)"
    assert kept.stat().st_ino == inode, "the damaged file itself is kept aside, never deleted"
    assert opening.damage_on_disk(kept), "as it was: still damaged, not rebuilt over"
    with sqlite3.connect(paths.journal) as db:
        commands = db.execute("SELECT id, command, status, reason FROM commands ORDER BY id").fetchall()
        [(replaced,)] = db.execute("SELECT value FROM settings WHERE key = ?", (JOURNAL_REPLACED_SETTING,))
    last_before = json.loads(damage)["jobId"]
    assert [row[:3] for row in commands] == [
        (last_before + 1, "echo after", "refused"),
        (last_before + 2, "echo again", "finished"),
        (last_before + 3, "echo more", "finished"),
    ], "nothing after the damage went into the damaged file, and its ids go on: no job id names two commands"
    assert "The activity journal was damaged" in commands[0][3]
    assert json.loads(second)["jobId"] == last_before + 2
    assert str(kept) in replaced, "the tray tells the user at its next start"


def test_in_its_container_a_command_cannot_damage_the_journal_at_all(
    home: Path, paths: AppPaths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The default: the data folder is empty and read-only in the command's container: the journal
    is not there to damage."""
    if not container.for_paths(paths).on:
        pytest.skip("no bwrap container on this machine")
    work = tmp_path / "work"
    work.mkdir()

    async def scenario() -> tuple[dict, str]:
        async with serving(home) as client:
            assert ran(await said(client, "echo before"), "before")
            damage = json.loads(await agent_damages_journal(client, paths.journal, work))
            return damage, await said(client, "echo after")

    damage, after = anyio.run(scenario)
    stderr = capsys.readouterr().err
    assert damage["exitCode"] == 0 and "overwrote" in damage["stdout"], damage  # it found nothing to open
    assert opening.damage_on_disk(paths.journal) is None
    assert ran(after, "after")
    assert "Traceback" not in stderr, stderr
    assert not list(home.glob("journal.corrupt-*"))
