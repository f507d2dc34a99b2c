"""Where the app keeps its data on each system, and the move out of AppData on Windows (issue 10)."""

from __future__ import annotations

from pathlib import Path, PureWindowsPath

from app.core.journal import migration as data_migration
from app.core.journal.store import Journal, Status
from app.core.paths import (
    HOME_ENV,
    AppPaths,
    LegacySources,
    default_locations,
    legacy_folders,
    legacy_sources,
    output_folder_for,
    windows_profile,
)
from app.core.policy import approval, tool_sets

WINDOWS_ENV = {
    "USERPROFILE": r"C:\Users\Ann",
    "APPDATA": r"C:\Users\Ann\AppData\Roaming",
    "LOCALAPPDATA": r"C:\Users\Ann\AppData\Local",
    "HOMEDRIVE": "C:",
    "HOMEPATH": r"\Users\Ann",
    "TEMP": r"C:\Users\Ann\AppData\Local\Temp",
}


def windows_paths(environ: dict[str, str]) -> AppPaths:
    """The app's locations on Windows, as PureWindowsPaths (on purpose: this runs on every system)."""
    fallback = r"C:\Users\Fallback"
    chosen = default_locations("win32", environ, fallback)
    assert chosen is not None
    outputs = output_folder_for("win32", environ, windows_profile(environ, fallback))  # type: ignore[arg-type]
    return AppPaths(data_dir=chosen[0], log_dir=chosen[1], outputs_dir=outputs)  # type: ignore[arg-type]


def under(path: PureWindowsPath, folder: str) -> bool:
    folder_path = PureWindowsPath(folder)
    return path == folder_path or folder_path in path.parents


def test_on_windows_nothing_the_app_writes_is_under_appdata_where_msix_would_redirect_it() -> None:
    paths = windows_paths(WINDOWS_ENV)
    written = paths.written_locations()
    assert written, "the list of written locations must not be empty"
    for location in written:
        assert isinstance(location, PureWindowsPath)
        assert not under(location, WINDOWS_ENV["APPDATA"]), location
        assert not under(location, WINDOWS_ENV["LOCALAPPDATA"]), location
        assert under(location, WINDOWS_ENV["USERPROFILE"]), location
    assert paths.journal == PureWindowsPath(r"C:\Users\Ann\.cowork-terminal\journal.sqlite3")
    assert paths.log_dir == PureWindowsPath(r"C:\Users\Ann\.cowork-terminal\logs")
    assert paths.outputs == PureWindowsPath(r"C:\Users\Ann\.cowork-terminal-outputs")


def test_on_windows_the_profile_comes_from_homedrive_and_homepath_when_userprofile_is_missing() -> None:
    environ = {k: v for k, v in WINDOWS_ENV.items() if k != "USERPROFILE"}
    assert windows_paths(environ).data_dir == PureWindowsPath(r"C:\Users\Ann\.cowork-terminal")
    bare = windows_paths({})
    assert bare.data_dir == PureWindowsPath(r"C:\Users\Fallback\.cowork-terminal")


def test_other_systems_keep_the_platformdirs_folders() -> None:
    assert default_locations("linux", {"HOME": "/home/ann"}, "/home/ann") is None
    assert default_locations("darwin", {"HOME": "/Users/ann"}, "/Users/ann") is None


def test_the_old_windows_folders_are_looked_for_only_on_windows_without_an_override() -> None:
    sources = legacy_sources("win32", WINDOWS_ENV, r"C:\Users\Ann")
    assert sources == LegacySources(
        local=PureWindowsPath(r"C:\Users\Ann\AppData\Local\cowork-terminal"),
        msix_local=PureWindowsPath(
            r"C:\Users\Ann\AppData\Local\Packages\Claude_pzs8sxrjxfjjc\LocalCache\Local\cowork-terminal"
        ),
    )
    assert legacy_sources("win32", {**WINDOWS_ENV, HOME_ENV: r"D:\x"}, "") is None
    assert legacy_sources("linux", {"HOME": "/home/ann"}, "/home/ann") is None


def test_only_settings_stricter_than_the_defaults_survive_the_move() -> None:
    strict = {"paused": True, "approval_mode": "all", "approval_window_s": 20.0, "tools": "execute"}
    assert data_migration.stricter_settings(strict) == strict
    loose = {
        "paused": False,
        "approval_mode": "never",
        "approval_window_s": 55.0,
        "tools": "all",
        "tray.known_clients": ["x"],
        "something.new": 1,
    }
    assert data_migration.stricter_settings(loose) == {}
    assert data_migration.stricter_settings({"approval_window_s": True, "paused": "yes"}) == {}


def old_journal(folder: Path) -> Journal:
    return Journal(AppPaths(data_dir=folder, log_dir=folder / "Logs"))


def test_an_old_windows_folder_is_copied_over_once_with_only_strict_settings_and_the_msix_history(
    tmp_path: Path,
) -> None:
    local, msix = tmp_path / "Local" / "cowork-terminal", tmp_path / "msix" / "cowork-terminal"
    with old_journal(local) as old:
        old.begin_command(command="echo from the real folder", cwd=None, status=Status.FINISHED)
        old.begin_command(command="sleep 100", cwd=None)  # was running when the app was updated
        old.set_paused(True)
        approval.set_approval_mode(old, approval.ApprovalMode.NEVER)  # looser: may be the agent's work
        tool_sets.set_tool_set(old, tool_sets.EXECUTE_ONLY)
    (local / "Logs" / "tray.log").write_text("old tray log\n")
    with old_journal(msix) as redirected:
        redirected.begin_command(command="echo from the msix copy", cwd=None, status=Status.FINISHED)
        redirected.set_setting("approval_mode", "never")  # settings from here are never taken
    new_dir = tmp_path / "profile" / ".cowork-terminal"
    new = AppPaths(data_dir=new_dir, log_dir=new_dir / "logs")
    sources = LegacySources(local=local, msix_local=msix)

    report = data_migration.migrate(new, sources)

    assert report is not None and report.copied_journal and report.imported_commands == 1
    with Journal.open(new) as journal:
        commands = {c.command: c.status for c in journal.recent_commands(limit=10)}
        assert commands == {
            "echo from the real folder": Status.FINISHED,
            "sleep 100": Status.INTERRUPTED,
            "echo from the msix copy": Status.FINISHED,
        }
        assert journal.is_paused()
        assert tool_sets.tool_set(journal) == tool_sets.EXECUTE_ONLY
        assert approval.approval_mode(journal) is approval.ApprovalMode.DESTRUCTIVE
        assert "reset" in journal.get_setting(data_migration.NOTICE_SETTING)
    assert (new.log_dir / "tray.log").read_text() == "old tray log\n"
    assert data_migration.migrate(new, sources) is None, "a second start must not import again"
    assert (local / "journal.sqlite3").exists(), "the old folder is left as it was"


def test_a_fresh_windows_profile_has_nothing_to_move(tmp_path: Path) -> None:
    new = AppPaths(data_dir=tmp_path / "new", log_dir=tmp_path / "new" / "logs")
    sources = LegacySources(local=tmp_path / "none", msix_local=tmp_path / "none2")
    assert data_migration.migrate(new, sources) is None
    assert not new.journal.exists()


def test_off_windows_there_are_no_old_folders_to_protect() -> None:
    assert legacy_folders() == []
