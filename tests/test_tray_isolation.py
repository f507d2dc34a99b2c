"""The trays the tests start never see the real user's home (their first look rewrites what it finds there)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app.core.install import autostart
from tests import tray_process
from tests.desktop_env import wait_for
from tests.tray_process import desktop_home, isolated_desktop_env, running_tray

REAL = Path("/home/ann")
GONE = "/gone/cowork-terminal"  # the program a stale start-at-login entry names


def test_a_real_home_and_its_config_folder_are_replaced_by_the_tests_folder() -> None:
    env = isolated_desktop_env({"HOME": "/home/ann", "XDG_CONFIG_HOME": "/home/ann/.config"}, Path("/t/d"), (REAL,))
    assert env["HOME"] == "/t/d"
    assert env["XDG_CONFIG_HOME"] == "/t/d/.config"
    assert env["XDG_DATA_HOME"] == "/t/d/.local/share"


def test_an_unset_home_counts_as_the_real_one() -> None:
    env = isolated_desktop_env({}, Path("/t/d"), (REAL,))
    assert env["HOME"] == "/t/d" and env["XDG_CONFIG_HOME"] == "/t/d/.config"


def test_a_fake_desktop_the_test_made_is_kept() -> None:
    fake = {"HOME": "/tmp/x/user-home", "XDG_CONFIG_HOME": "/tmp/x/user-home/.config"}
    assert isolated_desktop_env(fake, Path("/t/d"), (REAL,)) == fake


def test_a_fake_home_with_the_real_config_folder_still_loses_the_real_folder() -> None:
    env = isolated_desktop_env({"HOME": "/tmp/x", "XDG_CONFIG_HOME": "/home/ann/.config"}, Path("/t/d"), (REAL,))
    assert env["HOME"] == "/tmp/x" and env["XDG_CONFIG_HOME"] == "/tmp/x/.config"


def test_a_real_home_of_slash_does_not_swallow_every_temporary_folder() -> None:
    fake = {"HOME": "/tmp/x"}
    assert isolated_desktop_env(fake, Path("/t/d"), (Path("/"),)) == fake
    assert isolated_desktop_env({"HOME": "/"}, Path("/t/d"), (Path("/"),))["HOME"] == "/t/d"


def stale_entry(home: Path) -> Path:
    """A start-at-login entry that names a removed program: the tray's first look rewrites it."""
    env = {"XDG_CONFIG_HOME": str(home / ".config")}
    autostart.enable("linux", env, home, command=[GONE, "tray"])
    path = autostart.autostart_location("linux", env, home)
    assert isinstance(path, Path) and GONE in path.read_text()
    return path


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the XDG autostart folder is Linux's")
def test_a_tray_started_by_the_test_helpers_never_touches_the_real_users_autostart_folder(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "the-real-user"  # stands for the home of whoever runs the suite
    monkeypatch.setattr(tray_process, "REAL_HOMES", (real,))
    monkeypatch.setenv("HOME", str(real))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(real / ".config"))
    real_entry = stale_entry(real)
    before = real_entry.read_bytes(), real_entry.stat().st_mtime_ns
    own_entry = stale_entry(desktop_home(home))
    with running_tray(home):
        # The tray's first look ran: it rewrote a stale entry, the one where its HOME points.
        wait_for(lambda: GONE not in own_entry.read_text() or GONE not in real_entry.read_text(), timeout_s=20)
    assert (real_entry.read_bytes(), real_entry.stat().st_mtime_ns) == before, "the real entry was rewritten"
    assert sorted(p.name for p in real_entry.parent.iterdir()) == [real_entry.name]
    assert GONE not in own_entry.read_text(), "the tray repairs what it finds in the home the helper gave it"
