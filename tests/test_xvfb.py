"""The tests' own private display (tests/xvfb.py): a taken number is passed over, and what went
wrong is said. CI once failed 103 window tests on three workers whose Xvfb gave no display."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests import xvfb


@pytest.mark.gui
def test_a_second_display_started_by_the_same_process_skips_the_taken_number_and_both_answer(tmp_path: Path) -> None:
    log = tmp_path / "xvfb.log"
    first, first_name = xvfb.start(log)
    try:
        second, second_name = xvfb.start(log)  # same pid, so the same first choice: taken
        try:
            assert int(second_name[1:]) > int(first_name[1:])  # the next free one after it
            for name in (first_name, second_name):
                shown = subprocess.run(["xwininfo", "-root", "-display", name], capture_output=True, text=True)
                assert shown.returncode == 0 and "Width: 1280" in shown.stdout
            assert "server already running" in log.read_text()  # Xvfb's own words, kept
        finally:
            xvfb.stop(second)
    finally:
        xvfb.stop(first)


def test_every_try_that_failed_is_named_with_xvfbs_last_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "bin" / "Xvfb"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'Fatal server error: no screens found' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake.parent))
    with pytest.raises(xvfb.XvfbError) as failed:
        xvfb.start(tmp_path / "xvfb.log")
    message = str(failed.value)
    assert f"Xvfb gave no display in {xvfb.ATTEMPTS} tries" in message
    assert message.count("exited with 1") == xvfb.ATTEMPTS
    assert "Fatal server error: no screens found" in message


def test_a_missing_xvfb_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(xvfb.XvfbError, match="Xvfb is not installed.*apt-get install -y xvfb"):
        xvfb.start(tmp_path / "xvfb.log")


def test_a_display_that_never_answers_is_ended_and_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "bin" / "Xvfb"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\necho 'initializing' >&2\nexec {shutil.which('sleep')} 60\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake.parent))
    monkeypatch.setattr(xvfb, "READY_TIMEOUT_S", 0.5)
    with pytest.raises(xvfb.XvfbError) as failed:
        xvfb.start(tmp_path / "xvfb.log")
    assert str(failed.value).count("no answer in 0.5 s (initializing)") == xvfb.ATTEMPTS
