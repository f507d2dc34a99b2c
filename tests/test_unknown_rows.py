"""A journal row whose status this version does not know (a later version's new status, or another
program's edit: the column is free text): it is read with its text as written, hides no other row,
is said as written, and nothing acts on it (red team, twelfth, finding 2). And a tray whose program
file an update replaced is still our tray, while a look-alike run from a deleted copy is not
(finding 3)."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from mcp_types import Implementation

from app.cli.journal_commands import format_record
from app.core.channel.outcome import status_of
from app.core.channel.peer import linux_process_facts, own_facts, tray_refusal
from app.core.channel.values import BadValue
from app.core.journal.store import Journal, Outcome, Status
from app.core.paths import AppPaths
from app.ui.windows.log_model import Filter, row_for, status_label, status_tag
from tests.in_process_server import serving
from tests.test_jobs import call

CLAUDE = Implementation(name="claude-code", version="1.0")


def rows_with_a_status_we_do_not_know(paths: AppPaths, status: str = "queued") -> tuple[int, int]:
    """A finished command of this version's, then a row of `status`, as another program writes it."""
    with Journal(paths) as journal:
        server = journal.register_server(4242, headless=True, lock_key=None)
        first = journal.begin_command(
            server_id=server, server_pid=4242, client_name="claude-code", client_version="1",
            tool="execute_command", command="echo first", cwd="/tmp", env_keys=[], timeout_ms=1000, tier="safe",
        )  # fmt: skip
        journal.finish_command(first, Outcome(status=Status.FINISHED, exit_code=0))
    with contextlib.closing(sqlite3.connect(paths.journal)) as db:
        second = db.execute(
            "INSERT INTO commands (server_id, server_pid, client_name, tool, command, cwd, env_keys, timeout_ms, "
            "tier, status, created_at, stdout_preview) SELECT server_id, server_pid, client_name, tool, "
            "'echo second', cwd, env_keys, timeout_ms, tier, ?, created_at + 1, 'kept' FROM commands WHERE id = ?",
            (status, first),
        ).lastrowid
        db.commit()
    assert second is not None
    return first, second


def test_a_row_of_an_unknown_status_keeps_its_text_and_is_neither_running_nor_held(paths: AppPaths) -> None:
    first, second = rows_with_a_status_we_do_not_know(paths)
    with Journal(paths) as journal:
        listed = journal.recent_commands()
        assert [r.id for r in listed] == [second, first]
        unknown = listed[0]
        assert not unknown.status.known and unknown.status.value == "queued" and unknown.status.shown == "queued"
        assert Status.FINISHED.known and listed[1].status is Status.FINISHED
        assert not unknown.status.is_active and unknown.status is not Status.RUNNING
        assert unknown.to_json()["status"] == "queued"  # `log --json`: as written
        assert journal.active_commands() == [] and journal.pending_approvals() == []
        assert journal.request_stop(second) is False  # a Stop asks nothing of it
        assert journal.was_left_running(second) is False  # nor does the end of an orphan
        journal.recover_dead_servers()
        assert journal.get_command(second) == unknown  # not taken for interrupted: left as written
    with pytest.raises(ValueError, match="queued"):
        Status("queued")  # only the journal's rows are read leniently
    with pytest.raises(BadValue):
        status_of("queued")  # a server's message of such a status is refused, as before


def test_the_log_and_the_cli_say_an_unknown_status_as_written(paths: AppPaths) -> None:
    _, second = rows_with_a_status_we_do_not_know(paths, "on\nhold " + "x" * 200)
    with Journal(paths) as journal:
        record = journal.get_command(second)
    assert record is not None
    label = status_label(record)
    assert label.startswith("? “on hold xxx") and label.endswith("…” (unknown to this version)"), label
    assert "\n" not in label and len(label) < 80
    assert status_tag(record.status) == "status-unknown"  # a tag, not the row's free text
    assert row_for(record).values[2] == label and not row_for(record).is_running
    assert Filter().matches(record) and not Filter(statuses=("running", "waiting")).matches(record)
    assert label in format_record(record)


@pytest.mark.anyio
async def test_the_model_is_told_in_words_what_this_version_cannot_say_of_such_a_job(
    home: Path, paths: AppPaths
) -> None:
    _, second = rows_with_a_status_we_do_not_know(paths)
    async with serving(home, client_info=CLAUDE) as client:
        output = await call(client, "command_output", {"jobId": second})
        waited = await call(client, "command_wait", {"jobId": second})
        stopped = await call(client, "command_stop", {"jobId": second})
    for said in (output, waited, stopped):
        assert said.get("status") == "queued", said
        assert 'status in the journal is "queued", which this version of Cowork Terminal does not know' in said["note"]
        assert said["note"].endswith("run the command again with execute_command.")
    assert output["output"] == "kept"
    assert waited["stdout"] == "kept"
    with Journal(paths) as journal:
        row = journal.get_command(second)
    assert row is not None and row.stop_requested_at is None and row.status.value == "queued"


# -- the tray's program file replaced by an update ------------------------------------------------------


def run_until_killed(program: Path) -> subprocess.Popen:
    return subprocess.Popen([str(program), "-c", "import time; time.sleep(60)"])


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="root reads another's program link")
def test_a_program_replaced_at_its_path_is_itself_and_a_deleted_copy_elsewhere_is_not(tmp_path: Path) -> None:
    own = own_facts(str(tmp_path))
    ours = Path(own.executable)
    # An update renames a new file over the program: the process runs the old, unlinked file.
    replaced = tmp_path / "bin" / "python"
    replaced.parent.mkdir()
    shutil.copy2(ours, replaced)
    process = run_until_killed(replaced)
    try:
        fresh = replaced.with_name("python.new")
        shutil.copy2(replaced, fresh)
        os.replace(fresh, replaced)
        assert os.readlink(f"/proc/{process.pid}/exe") == f"{replaced} (deleted)"
        facts = linux_process_facts(process.pid, os.getuid())
        assert facts.executable == str(replaced)  # its path, to compare with the server's own
        as_tray = replace(facts, argv=(str(replaced), "-m", "app", "tray"))  # its program is what is checked
        assert tray_refusal(as_tray, replace(own, executable=str(replaced)), own.data_dir) is None
    finally:
        process.kill()
        process.wait()
    # A look-alike run from a copy of our program that it then deleted, and a link to ours put where
    # its copy was: its path is still its own, not ours.
    copy = tmp_path / "lookalike" / "python"
    copy.parent.mkdir()
    shutil.copy2(ours, copy)
    process = run_until_killed(copy)
    try:
        copy.unlink()
        copy.symlink_to(ours)
        facts = linux_process_facts(process.pid, os.getuid())
        assert facts.executable == str(copy)
        refusal = tray_refusal(facts, own, own.data_dir)
        assert refusal is not None and "not Cowork Terminal" in refusal
    finally:
        process.kill()
        process.wait()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")
def test_a_program_whose_name_ends_like_a_deleted_ones_keeps_its_name(tmp_path: Path) -> None:
    """Only the kernel's mark of an unlinked file is taken off: a file named so, still there, keeps it."""
    named = tmp_path / "python (deleted)"
    shutil.copy2(os.path.realpath(sys.executable), named)
    process = run_until_killed(named)
    try:
        facts = linux_process_facts(process.pid, os.getuid())
        assert facts.executable == str(named)
    finally:
        process.kill()
        process.wait()
