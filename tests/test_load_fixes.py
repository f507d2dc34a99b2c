"""Fixes for a red team, 2026-12-06 (tenth, J; tests/test_red_team_ten_load.py): whole outputs kept
within their folder's cap as they are written, and the menu's Pause never behind the tray's judging
of held commands for the prompt."""

from __future__ import annotations

import os
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from app.core.authority.holds import HeldCommand
from app.core.classifier import JudgedTooLong
from app.core.execution import output_files
from app.core.execution.output_files import OutputSpool, outputs_size, prune_outputs
from app.core.paths import AppPaths
from app.ui.tray import menu
from app.ui.tray.actions import JOURNAL_ACTIONS, WINDOW_ACTIONS
from app.ui.tray.holds import for_window
from app.ui.windows.held_command import WaitingCommand, judged
from tests.test_red_team_ten_load import slow_to_judge

CAP = 4 * 1024 * 1024
CHUNK = 64 * 1024


@pytest.fixture
def outputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An outputs folder of its own (its own running total) whose cap is 4 MiB."""
    monkeypatch.setattr(output_files, "OUTPUTS_MAX_BYTES", CAP)
    monkeypatch.setattr(output_files, "FILE_CAP_BYTES", 1024 * 1024)  # what a prune leaves below the cap
    root = tmp_path / "outputs"
    (root / "app-x").mkdir(parents=True)
    return root


def old_file(folder: Path, name: str, size: int, age_s: float) -> Path:
    path = folder / f"{name}{output_files.OUTPUT_FILE_SUFFIX}"
    path.write_bytes(b"o" * size)
    then = time.time() - age_s
    os.utime(path, (then, then))
    return path


def flood(spool: OutputSpool, size: int, stream: int = 0) -> None:
    for _ in range(size // CHUNK):
        spool.write(stream, b"y" * CHUNK)


def test_a_write_past_the_cap_removes_the_oldest_outputs_at_once(outputs: Path) -> None:
    """Three old outputs of 1 MiB each (3 of the 4 MiB): a call writing 3 MiB more removes the
    oldest ones as it passes the cap, never the one it writes, and the folder never holds more."""
    olds = [old_file(outputs / "app-x", f"old{k}-cmd{k}-abc", 1024 * 1024, 3600 - k) for k in range(3)]
    spool = OutputSpool(outputs / "app-x", "cmd9", 2)
    biggest = 0
    for _ in range(3 * 1024 * 1024 // CHUNK):
        spool.write(0, b"y" * CHUNK)
        biggest = max(biggest, outputs_size(outputs)[1])
    assert biggest <= CAP
    assert not olds[0].exists() and olds[2].exists()  # the oldest first
    assert spool.path is not None and spool.path.stat().st_size == 3 * 1024 * 1024  # all of it: room was made
    spool.close(keep=True)


def test_a_file_that_is_itself_over_the_cap_stops_and_its_end_says_why(outputs: Path) -> None:
    """One call writes 6 MiB into an empty folder capped at 4: its file stops at the cap, and its end
    says how much was not kept and why, with the stream's last bytes (as past FILE_CAP_BYTES)."""
    spool = OutputSpool(outputs / "app-x", "cmd1", 2, cap_bytes=64 * 1024 * 1024)
    flood(spool, 6 * 1024 * 1024)
    assert spool.path is not None and spool.path.stat().st_size <= CAP
    spool.write(0, b"more")  # stopped: takes nothing more
    assert spool.path.stat().st_size <= CAP
    spool.close(keep=True, tails=[("stdout", b"the last bytes\n"), ("stderr", b"")])
    text = spool.path.read_bytes()
    assert len(text) <= CAP + 1024
    end = text[-300:].decode()
    assert "bytes of stdout not kept in this file (the outputs folder reached its cap of 4 MiB)" in end
    assert end.endswith("the last bytes\n")


def test_two_calls_share_the_cap_and_a_call_that_wrote_nothing_leaves_its_bytes(outputs: Path) -> None:
    """Files being written are never removed (their bytes would stay on disk); a removed file's bytes
    (nothing cut) are the folder's again."""
    first = OutputSpool(outputs / "app-x", "cmd1", 1)
    second = OutputSpool(outputs / "app-x", "cmd2", 1)
    flood(first, 3 * 1024 * 1024)
    flood(second, 3 * 1024 * 1024)
    assert first.path is not None and first.path.exists()
    assert outputs_size(outputs)[1] <= CAP
    first.close(keep=False)  # nothing was cut: its file goes, and its bytes with it
    third = OutputSpool(outputs / "app-x", "cmd3", 1)
    flood(third, 2 * 1024 * 1024)
    assert third.path is not None and third.path.stat().st_size == 2 * 1024 * 1024
    assert outputs_size(outputs)[1] <= CAP
    second.close(keep=True)
    third.close(keep=True)


def test_the_write_path_walks_the_folder_only_when_it_passes_the_cap(
    outputs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    walks: list[Path] = []
    walk = output_files._output_entries

    def counted(folder: Path):  # type: ignore[no-untyped-def]
        walks.append(folder)
        return walk(folder)

    monkeypatch.setattr(output_files, "_output_entries", counted)
    spool = OutputSpool(outputs / "app-x", "cmd1", 1)
    flood(spool, 3 * 1024 * 1024)  # 48 writes under the cap
    assert len(walks) == 1  # the running total, measured once
    flood(spool, 2 * 1024 * 1024)  # passes it: one prune, then the file stops
    assert len(walks) == 2
    spool.close(keep=True)


def test_the_upkeeps_prune_spares_a_file_being_written_and_counts_what_it_left(outputs: Path) -> None:
    spool = OutputSpool(outputs / "app-x", "cmd1", 1)
    flood(spool, 2 * 1024 * 1024)
    old_file(outputs / "app-x", "old-cmd7-abc", 100, 30 * 86_400)
    assert prune_outputs(outputs, max_bytes=0) == 1  # the old one only
    assert spool.path is not None and spool.path.exists()
    spool.close(keep=True)


# -- the prompt's judging, off the Pause's queue and bounded ------------------------------------


def test_the_approval_prompts_sync_is_not_on_the_pauses_queue() -> None:
    assert menu.TOGGLE_PAUSE in JOURNAL_ACTIONS and menu.PAUSE_FOR in JOURNAL_ACTIONS
    assert menu.OPEN_APPROVALS not in JOURNAL_ACTIONS
    # Nor behind the slow ones (the `claude` CLI, a connection check): a queue of its own (a review).
    assert {menu.OPEN_APPROVALS} == WINDOW_ACTIONS and not WINDOW_ACTIONS & JOURNAL_ACTIONS


def a_hold(command: str, cwd: str, reasons: str) -> HeldCommand:
    return HeldCommand(
        7, command, cwd, [], "execute_command", reasons, "claude-code", time.time() + 300, "d",
        SimpleNamespace(server_id=3),  # type: ignore[arg-type]  (only its server's id is read)
    )  # fmt: skip


def test_a_hold_too_slow_to_judge_again_is_shown_at_once_with_its_runners_reasons(
    tmp_path: Path, paths: AppPaths
) -> None:
    """Eight 250 kB scripts: 2.5 s to judge. Within HOLD_JUDGING_S the prompt shows the hold with what
    its runner said, as one that cannot be checked, and offers no rule; it is allowed only after the
    confirm word is typed, as the most dangerous are (scripts slow to read must not hide `rm -rf ~`'s
    typed word)."""
    command = slow_to_judge(tmp_path)
    reasons = "cannot tell what runs: the script p0.sh is too large to check; deletes files: build/*"
    hold = a_hold(command, str(tmp_path), reasons)
    began = time.monotonic()
    shown = for_window(hold, paths, 0.2)
    assert time.monotonic() - began < 1.0
    assert shown.plain == ("cannot tell what runs: the script p0.sh is too large to check", "deletes files: build/*")
    # Asked as one of the most dangerous (the confirm word typed): what it hides may be `rm -rf ~`.
    assert shown.danger == "cannot_tell" and shown.proposal is None and shown.severe and shown.unchecked
    assert WaitingCommand.from_json(shown.to_json()) == shown, "the prompt, a process of its own, gets it so"
    with pytest.raises(JudgedTooLong):
        judged(7, command, str(tmp_path), client="x", expires_at=0.0, protected=(), deadline=time.monotonic())


def test_a_hold_judged_in_time_is_shown_as_the_tray_judges_it(tmp_path: Path, paths: AppPaths) -> None:
    (tmp_path / "build").mkdir()
    hold = a_hold("rm -rf build/*", str(tmp_path), "the runner's words")
    shown = for_window(hold, paths, 0.5)
    assert shown.reasons == ("rm -r: recursive removal",) and shown.danger == "loses_files"


def test_a_file_another_server_is_writing_is_never_pruned_and_the_folder_is_measured_again(
    outputs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A review, 2026-12-06: each server's ledger spared only its own open files, so one flooding past
    the cap removed another's output mid-command; and measured once, the cap held per process. A file
    being written holds a lock that every prune respects; the folder is measured again as one writes."""
    from app.core.execution import output_files

    app_a = outputs / "app-a"
    theirs, handle = output_files._create_private_file(app_a, "cmd1")  # another server's, being written
    handle.write(b"x" * 1000)
    old = outputs / "app-b" / "old.log"
    old.parent.mkdir()
    old.write_bytes(b"y" * 1000)
    assert output_files._prune(outputs, max_bytes=0) == 1000, "theirs is left and counted"
    assert theirs.exists() and not old.exists()
    handle.close()  # their command ended
    assert output_files._prune(outputs, max_bytes=0) == 0 and not theirs.exists()

    monkeypatch.setattr(output_files, "REMEASURE_S", 0.0)
    ledger = output_files._Ledger(outputs, 10_000)
    mine = outputs / "app-c" / "mine.log"
    mine.parent.mkdir()
    ledger.opened(mine)
    (outputs / "app-a" / "grew.log").write_bytes(b"z" * 9_000)  # another server's, written since
    assert ledger.take(mine, 2_000) == 2_000, "room made"
    assert not (outputs / "app-a" / "grew.log").exists(), "seen as it was measured again, and pruned"
