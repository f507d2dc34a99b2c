"""Two apps on one computer, kept apart (fixes for a red team, 2026-12-06: tests/test_red_team_twelve_apps.py):
an unnamed client bound to a tray stays unnamed, as headless, so its jobs are no other server's; and
past the outputs cap one app's writes make room from the app that holds the most, never from an
app that holds less (output_files._make_room)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp_types import CLIENT_INFO_META_KEY

from app.core.channel.call_messages import Call
from app.core.execution import output_files
from app.core.execution.output_files import OutputSpool, outputs_size, prune_outputs
from app.core.journal.store import Journal
from app.core.paths import AppPaths
from tests.raw_stdio import RawServer
from tests.test_load_fixes import old_file
from tests.tray_process import running_tray

CAP = 4 * 1024 * 1024
MIB = 1024 * 1024
CHUNK = 64 * 1024


@pytest.fixture
def outputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An outputs folder of its own (its own running total) whose cap is 4 MiB."""
    monkeypatch.setattr(output_files, "OUTPUTS_MAX_BYTES", CAP)
    monkeypatch.setattr(output_files, "FILE_CAP_BYTES", MIB)  # what a prune leaves below the cap
    monkeypatch.setattr(output_files, "_ledgers", {})
    root = tmp_path / "outputs"
    for app in ("app-trusted", "app-flood"):
        (root / app).mkdir(parents=True)
    return root


def flood(spool: OutputSpool, size: int) -> None:
    for _ in range(size // CHUNK):
        spool.write(0, b"y" * CHUNK)


# -- the outputs cap, app by app ----------------------------------------------------------------------


def test_a_flood_makes_room_from_its_own_app_and_then_stops_its_own_file(outputs: Path) -> None:
    """The other app's outputs (older than the flood's own) stay; the flood's own old files go first,
    then its file stops at the cap, its end saying why."""
    theirs = [old_file(outputs / "app-trusted", f"t{k}-cmd{k}-abc", MIB // 2, 7200 - k) for k in range(2)]
    own_old = old_file(outputs / "app-flood", "f-cmd5-abc", MIB, 600)
    spool = OutputSpool(outputs / "app-flood", "cmd9", 2)
    flood(spool, 6 * MIB)
    spool.close(keep=True, tails=[("stdout", b"end\n"), ("stderr", b"")])
    assert all(path.exists() for path in theirs), "the other app's outputs were deleted by this app's flood"
    assert not own_old.exists(), "the flooding app's own old output goes first"
    assert outputs_size(outputs)[1] <= CAP + 1024  # its note and last bytes, written all the same
    assert spool.path is not None and b"the outputs folder reached its cap of 4 MiB" in spool.path.read_bytes()[-400:]


def test_an_app_that_holds_the_most_gives_room_to_one_that_holds_less(outputs: Path) -> None:
    """No app is starved by another's flood: when the flooding app's kept files fill the cap, the
    other app's next output takes room from them (the oldest first), and is kept whole."""
    floods = [old_file(outputs / "app-flood", f"f{k}-cmd{k}-abc", MIB, 3600 - k) for k in range(4)]
    spool = OutputSpool(outputs / "app-trusted", "cmd9", 1)
    flood(spool, 2 * MIB)
    assert spool.path is not None and spool.path.stat().st_size == 2 * MIB, "kept whole: room was made"
    spool.close(keep=True)
    assert not floods[0].exists() and floods[3].exists(), "the flooding app's oldest went first"
    assert outputs_size(outputs)[1] <= CAP


def test_an_app_never_loses_files_to_one_that_holds_as_much(outputs: Path) -> None:
    """On a tie the writer's own files go: two apps that each hold 2 MiB, the second writing 1 MiB
    more, lose only the second's oldest."""
    trusted = [old_file(outputs / "app-trusted", f"t{k}-cmd{k}-abc", MIB, 7200 - k) for k in range(2)]
    own = [old_file(outputs / "app-flood", f"f{k}-cmd{k + 2}-abc", MIB, 3600 - k) for k in range(2)]
    spool = OutputSpool(outputs / "app-flood", "cmd9", 1)
    flood(spool, MIB)
    spool.close(keep=True)
    assert all(path.exists() for path in trusted)
    assert not own[0].exists()
    assert outputs_size(outputs)[1] <= CAP


def test_the_upkeep_past_the_cap_removes_from_the_app_that_holds_the_most(outputs: Path) -> None:
    """Past the cap (a smaller cap since), the hourly upkeep takes the oldest files of the biggest app,
    not the oldest of all (the other app's, older, stay)."""
    trusted = old_file(outputs / "app-trusted", "t-cmd1-abc", MIB, 7200)
    floods = [old_file(outputs / "app-flood", f"f{k}-cmd{k + 2}-abc", MIB, 3600 - k) for k in range(3)]
    assert prune_outputs(outputs, max_bytes=2 * MIB) == 2
    assert trusted.exists() and floods[2].exists() and not floods[0].exists() and not floods[1].exists()
    # Past the retention period, every app's go, oldest or not.
    assert prune_outputs(outputs, max_age_days=1 / 24) == 1 and not trusted.exists()


# -- an unnamed client bound to a tray ----------------------------------------------------------------


def test_the_trays_runner_passes_an_unnamed_clients_empty_name_on(paths: AppPaths) -> None:
    """No stand-in name ("unknown" made every unnamed client one agent): the service the runner opens
    is told the name is empty, as `serve --headless` is, and the job tools share nothing for it."""
    from app.server.tray_side import TrayRunner

    for name in (None, ""):
        runner = TrayRunner(paths, Call(call_id="1", tool="execute_command", arguments={}, client_name=name))
        envelope = runner.envelope[CLIENT_INFO_META_KEY]
        assert envelope["name"] == "", envelope


def test_a_client_named_unknown_never_reaches_an_unnamed_clients_job_in_a_tray(home: Path, paths: AppPaths) -> None:
    """The red team's second case, by the code: a client that names itself "unknown" matched every
    unnamed client's rows in the tray. The unnamed client's row now has no name (the log shows
    "unknown agent"), and the named one is refused its job."""
    with running_tray(home):
        unnamed, named = RawServer(home), RawServer(home)
        try:
            unnamed.initialize(client="", version="1.0")
            named.initialize(client="unknown", version="1.0")
            started = unnamed.call("execute_command", json.dumps({"command": "sleep 30", "background": True}))
            assert started is not None and not started.startswith("ERROR: "), started
            job = json.loads(started)["jobId"]
            read = named.call("command_output", json.dumps({"jobId": job}))
            stopped = named.call("command_stop", json.dumps({"jobId": job}))
            own = unnamed.call("command_stop", json.dumps({"jobId": job}))
        finally:
            unnamed.close()
            named.close()
    refused = f"There is no job {job} of this agent"
    assert read is not None and refused in read, read
    assert stopped is not None and refused in stopped, stopped
    assert own is not None and '"status":"finished"' in own, own
    with Journal(paths) as journal:
        row = journal.get_command(job)
    assert row is not None and not row.client_name, row
