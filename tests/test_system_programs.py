"""Programs the app starts outside a command's container are never ones a command could have planted
(core/system_programs.py): the choice with each platform's values, and the real check of a folder.
The attack itself, a `bwrap` planted first on PATH through `execute_command`, is in test_container.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.system_programs import PROGRAMS_ENV, find, system_program, trusted_path, user_may_change
from tests.tray_process import running_tray

LINUX_PATH = "/home/ann/.local/bin:/home/ann/.cargo/bin:/usr/local/bin:/usr/bin:/bin"


def on_disk(*paths: str):
    return lambda path: path in paths


def changeable_by_ann(folder: str) -> bool:
    return folder.startswith(("/home/ann", "/opt/homebrew"))


@pytest.mark.parametrize("name", ["bwrap", "notify-send", "perl"])
def test_on_linux_the_systems_folder_wins_over_a_copy_planted_first_on_path(name: str) -> None:
    exists = on_disk(f"/home/ann/.local/bin/{name}", f"/usr/bin/{name}")
    found = find(name, "linux", {"PATH": LINUX_PATH}, exists, changeable_by_ann)
    assert found == f"/usr/bin/{name}"


def test_a_copy_only_in_a_folder_the_user_can_change_is_not_used() -> None:
    exists = on_disk("/home/ann/.local/bin/bwrap")
    assert find("bwrap", "linux", {"PATH": LINUX_PATH}, exists, changeable_by_ann) is None


def test_a_path_folder_the_user_cannot_change_is_searched_after_the_systems() -> None:
    exists = on_disk("/usr/local/bin/bwrap", "/home/ann/.local/bin/bwrap")
    found = find("bwrap", "linux", {"PATH": LINUX_PATH}, exists, changeable_by_ann)
    assert found == "/usr/local/bin/bwrap"


def test_nixos_keeps_its_programs_outside_the_usual_folders_and_they_are_found() -> None:
    exists = on_disk("/run/current-system/sw/bin/bwrap", "/run/wrappers/bin/fusermount")
    assert find("bwrap", "linux", {}, exists, changeable_by_ann) == "/run/current-system/sw/bin/bwrap"
    assert find("fusermount", "linux", {}, exists, changeable_by_ann) == "/run/wrappers/bin/fusermount"


def test_on_macos_homebrews_folder_is_the_users_and_apples_own_come_first() -> None:
    path = "/opt/homebrew/bin:/usr/bin:/bin"
    assert find("open", "darwin", {"PATH": path}, on_disk("/opt/homebrew/bin/open", "/usr/bin/open"), changeable_by_ann)
    assert find("open", "darwin", {"PATH": path}, on_disk("/usr/bin/open"), changeable_by_ann) == "/usr/bin/open"
    assert find("gls", "darwin", {"PATH": path}, on_disk("/opt/homebrew/bin/gls"), changeable_by_ann) is None


def test_relative_and_empty_path_entries_are_never_searched() -> None:
    # An empty entry means the current folder, which is often the agent's project.
    exists = on_disk("bin/bwrap", "./bwrap")
    assert find("bwrap", "linux", {"PATH": "::bin:."}, exists, lambda folder: False) is None


def test_the_folders_named_by_whoever_starts_the_app_come_first() -> None:
    environ = {PROGRAMS_ENV: "/srv/stand-ins:relative", "PATH": LINUX_PATH}
    exists = on_disk("/srv/stand-ins/notify-send", "/usr/bin/notify-send", "relative/xdg-open", "/usr/bin/xdg-open")
    assert find("notify-send", "linux", environ, exists, changeable_by_ann) == "/srv/stand-ins/notify-send"
    assert find("xdg-open", "linux", environ, exists, changeable_by_ann) == "/usr/bin/xdg-open"


def test_windows_has_no_system_folders_here_and_searches_nothing() -> None:
    # Commands on Windows run in a job, which protects no file: the classifier guards there.
    assert find("bwrap", "win32", {"PATH": "C:/Windows"}, lambda path: True, lambda folder: False) is None


def test_a_folder_counts_as_changeable_when_it_or_a_parent_is_writable(tmp_path: Path) -> None:
    inner = tmp_path / "a" / "b"
    inner.mkdir(parents=True)
    assert user_may_change(str(inner))
    assert user_may_change(str(tmp_path / "not-made-yet"))


@pytest.mark.skipif(os.geteuid() != 0 or not sys.platform.startswith("linux"), reason="root, to become nobody")
def test_for_another_user_the_systems_folders_cannot_be_changed_and_their_home_can(tmp_path: Path) -> None:
    code = (
        "import sys; from app.core.system_programs import user_may_change as m;"
        "print(m('/usr/bin'), m('/usr/local/bin'), m('/tmp/x'))"
    )
    done = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-I", "-c", code],
        capture_output=True, text=True, check=False, cwd=Path(__file__).parents[1],
        env={"PYTHONPATH": str(Path(__file__).parents[1]), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False", "True"], "/tmp is writable by everyone"


def test_this_machines_bwrap_is_taken_from_the_systems_folder() -> None:
    found = system_program("bwrap", {"PATH": "/nowhere"})
    assert found is None or found in ("/usr/bin/bwrap", "/bin/bwrap")


@pytest.mark.gui
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pystray's X backend")
def test_a_uname_a_command_put_first_on_path_is_not_run_by_the_tray_as_it_connects_to_the_display(
    home: Path, tmp_path: Path, display: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # python-xlib asks platform.uname(), whose processor Python gets by running `uname -p` from PATH.
    planted = tmp_path / "bin"
    planted.mkdir()
    marker = tmp_path / "uname-ran"
    (planted / "uname").write_text(f'#!/bin/sh\necho ran > {marker}\nexec /usr/bin/uname "$@"\n')
    (planted / "uname").chmod(0o755)
    monkeypatch.setenv("PATH", f"{planted}:{os.environ['PATH']}")
    with running_tray(home, display=display):
        pass  # it answers on its channel: its icon is up
    assert not marker.exists()


def test_a_command_let_out_of_its_container_keeps_only_the_path_folders_no_command_can_change() -> None:
    # Red team, 2026-12-05: a `sudo` planted in ~/.local/bin ran as the user's Allow of `sudo ...`.
    kept = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin:/run/wrappers/bin:/run/current-system/sw/bin"
    assert trusted_path(LINUX_PATH + ":.:", "linux", changeable_by_ann) == kept
    assert trusted_path("/opt/homebrew/bin:/usr/bin", "darwin", changeable_by_ann) == "/usr/bin:/bin:/usr/sbin:/sbin"
    everything = trusted_path("/usr/local/bin:/usr/bin", "linux", lambda folder: True)
    assert everything == kept.removeprefix("/usr/local/bin:"), "root may write any folder: the system's stay"
    assert trusted_path("C:\\Windows", "win32", changeable_by_ann) is None, "no command is let out on Windows"
