"""What arrives late and must still count (review after the eleventh red team): a tray's refusal of a
call that came after the server's acknowledgement timeout, and the end of a command kept after a
full disk when the journal is renewed before it could be written."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from app.core import data_folder
from app.core.commands import tray_link as tray_link_module
from app.core.commands.tray_link import ACK_TIMEOUT_S
from app.core.paths import HOME_ENV, AppPaths
from app.server.forwarding import TRAY_REFUSED_CALL
from tests.channel_peers import FakePeer, ScriptedTray, running_hub, wait_until
from tests.in_process_server import serving
from tests.small_disk import small_tmpfs
from tests.stdio_client import run

pytestmark = [pytest.mark.anyio]

REFUSAL = "host access is paused"


class RefusingTray(ScriptedTray):
    """A tray that runs its servers' calls (its welcome says so) and refuses each `call` after
    `delay_s`, on the thread that reads its server: a tray stalled that long, then answering."""

    def __init__(self, paths: AppPaths, delay_s: float) -> None:
        self.delay_s = delay_s
        super().__init__(paths)
        self.reply = self._answer

    def _answer(self, message: dict[str, Any]) -> dict[str, Any]:
        if message["op"] != "call":
            return {"op": "ack", "seq": message["seq"]}
        time.sleep(self.delay_s)
        return {"op": "error", "seq": message["seq"], "message": REFUSAL}

    def after_hello(self) -> None:
        welcome = {"data_dir": self.data_dir, "tray_pid": os.getpid(), "server_id": 1, "state": self.state}
        self.channel.send({"op": "ack", **welcome, "runs_commands": True})
        while True:
            message = self.channel.receive()
            self.received.append(message)
            self.channel.send(self.reply(message))


@pytest.mark.parametrize("delay_s", [0.0, ACK_TIMEOUT_S + 1.5], ids=["at once", "after the timeout"])
async def test_a_refusal_the_tray_sends_after_the_acknowledgement_timeout_reaches_the_model(
    home: Path, paths: AppPaths, monkeypatch: pytest.MonkeyPatch, delay_s: float
) -> None:
    """A tray-bound server forwards `echo hi`; the tray answers it with a refusal, at once or 6.5 s
    later. Both times the model reads the refusal, in the same words, soon after the tray sent it
    (it used to be dropped when late: the call waited until the client gave up)."""
    real = tray_link_module.own_facts  # the tray here is this test's Python: checked as a frozen build's

    def frozen(data_dir: str) -> Any:
        return dataclasses.replace(real(data_dir), frozen=True)

    monkeypatch.setattr(tray_link_module, "own_facts", frozen)
    tray = RefusingTray(paths, delay_s)
    answer: dict[str, Any] = {}
    try:
        async with serving(home, headless=False) as client:
            with anyio.move_on_after(delay_s + 5.0):
                answer = await run(client, {"command": "echo hi"})
    finally:
        tray.close()
    assert "call" in tray.ops(), tray.ops()
    expected = "Error executing tool execute_command: " + TRAY_REFUSED_CALL.format(reason=REFUSAL)
    assert answer == {"error": expected}, f"the tray refused the call after {delay_s:g} s; the model read {answer}"


# -- an end kept after a full disk, then a renewed journal --------------------------------------------


def fill(disk: Path) -> Path:
    filler = disk / "fill"
    subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=4k"], capture_output=True, check=False)
    return filler


def delete_journal(paths: AppPaths) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{paths.journal}{suffix}").unlink(missing_ok=True)


def row_of(paths: AppPaths, command_id: int) -> tuple[str, int | None, str] | None:
    with contextlib.closing(sqlite3.connect(paths.journal)) as db:
        return db.execute("SELECT status, exit_code, command FROM commands WHERE id = ?", (command_id,)).fetchone()


@pytest.mark.parametrize("server_left", [False, True], ids=["its server still there", "its server gone"])
def test_an_end_kept_after_a_full_disk_is_in_the_journal_renewed_before_it_was_written(
    tmp_path: Path, server_left: bool
) -> None:
    """A server of the tray runs `sleep 3; echo done`; the disk fills up and the command ends with 0
    (the hub keeps its end: `Record.unwritten_ends`). Room is made by deleting the journal (the
    person, a cleaner), and the tray's monitor starts a new one (`Hub.tick` -> `reopen_journal`): the
    command, over, was not among those written back, and its end updated no row. Now its row is
    there, `finished` with exit code 0, whether or not its server is still connected."""
    with small_tmpfs(tmp_path / "small", "300k") as disk:
        paths = data_folder.ensure(AppPaths.from_environment({HOME_ENV: str(disk / "home")}))
        with running_hub(paths) as (hub, _seen):
            agent = FakePeer(paths)
            try:
                agent.hello("server", headless=False, lock_key="late-end")
                job = agent.begin("sleep 3; echo done")["id"]
                other = agent.begin("sleep 60.5")["id"]  # still running: written back as before
                filler = fill(disk)
                assert agent.ask("finish", id=job, outcome={"status": "finished", "exit_code": 0})["op"] == "ack"
                assert job in hub.record.unwritten_ends, "the full disk refused the end: kept"
                if server_left:
                    agent.close()
                    wait_until(lambda: not hub.connections.servers())
                filler.unlink()
                delete_journal(paths)
                hub.tick()
                assert paths.journal.exists(), "the monitor started a new journal"
                assert row_of(paths, job) == ("finished", 0, "sleep 3; echo done"), row_of(paths, job)
                assert hub.record.unwritten_ends == {}
                if not server_left:
                    assert row_of(paths, other) == ("running", None, "sleep 60.5")
            finally:
                agent.close()


def test_an_end_kept_after_a_full_disk_brings_back_its_row_another_program_deleted(tmp_path: Path) -> None:
    """The same end kept, and the journal kept too, but another program deletes the command's row
    before there is room again: the monitor's upkeep writes the row back, with its end, instead of
    an end that updates no row."""
    with small_tmpfs(tmp_path / "small", "300k") as disk:
        paths = data_folder.ensure(AppPaths.from_environment({HOME_ENV: str(disk / "home")}))
        with running_hub(paths) as (hub, _seen):
            agent = FakePeer(paths)
            try:
                agent.hello("server", headless=False, lock_key="late-end")
                job = agent.begin("sleep 3; echo done")["id"]
                filler = fill(disk)
                assert agent.ask("finish", id=job, outcome={"status": "finished", "exit_code": 0})["op"] == "ack"
                assert job in hub.record.unwritten_ends
                filler.unlink()
                with contextlib.closing(sqlite3.connect(paths.journal)) as db, db:
                    db.execute("DELETE FROM commands WHERE id = ?", (job,))
                hub.tick()
                assert row_of(paths, job) == ("finished", 0, "sleep 3; echo done"), row_of(paths, job)
                assert hub.record.unwritten_ends == {}
            finally:
                agent.close()
