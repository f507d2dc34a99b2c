"""Every platform's Claude config locations and install detection, from fake environments."""

from __future__ import annotations

from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath

import pytest

from app.core.claude import locations as cl
from app.core.errors import UsageError

MAC_HOME = PurePosixPath("/Users/ada")
LINUX_HOME = PurePosixPath("/home/ada")
WIN_HOME = PureWindowsPath(r"C:\Users\Ada")
WIN_ENV = {
    "APPDATA": r"C:\Users\Ada\AppData\Roaming",
    "LOCALAPPDATA": r"C:\Users\Ada\AppData\Local",
    "PATH": r"C:\Windows\system32;C:\Tools",
    "PATHEXT": ".COM;.EXE;.BAT;.CMD",
}
WIN_STANDARD_CONFIG = PureWindowsPath(r"C:\Users\Ada\AppData\Roaming\Claude\claude_desktop_config.json")
WIN_STORE_PACKAGE = PureWindowsPath(r"C:\Users\Ada\AppData\Local\Packages\Claude_pzs8sxrjxfjjc")
WIN_STORE_CONFIG = WIN_STORE_PACKAGE / "LocalCache" / "Roaming" / "Claude" / "claude_desktop_config.json"
WIN_STANDARD_INSTALL = PureWindowsPath(r"C:\Users\Ada\AppData\Local\AnthropicClaude")


def fake_fs(*existing: PurePath):
    """An exists-check that knows only `existing` and their parent folders."""
    known = set()
    for path in existing:
        known.add(path)
        known.update(path.parents)
    return lambda path: path in known


def by_id(locations: list[cl.ClientLocation]) -> dict[str, cl.ClientLocation]:
    return {loc.client_id: loc for loc in locations}


def test_macos_config_is_under_application_support_and_found_by_the_app_bundle():
    found = by_id(cl.locate_clients("darwin", {}, MAC_HOME, fake_fs(PurePosixPath("/Applications/Claude.app"))))
    assert list(found) == ["claude-desktop", "claude-code"]
    desktop = found["claude-desktop"]
    assert desktop.config_path == PurePosixPath(
        "/Users/ada/Library/Application Support/Claude/claude_desktop_config.json"
    )
    assert desktop.installed and "/Applications/Claude.app" in desktop.evidence


def test_macos_app_in_the_users_applications_folder_or_only_a_config_folder_counts_as_installed():
    home_app = fake_fs(MAC_HOME / "Applications" / "Claude.app")
    config_only = fake_fs(MAC_HOME / "Library" / "Application Support" / "Claude")
    assert by_id(cl.locate_clients("darwin", {}, MAC_HOME, home_app))["claude-desktop"].installed
    assert by_id(cl.locate_clients("darwin", {}, MAC_HOME, config_only))["claude-desktop"].installed
    nothing = by_id(cl.locate_clients("darwin", {}, MAC_HOME, fake_fs()))["claude-desktop"]
    assert not nothing.installed and nothing.evidence == "not found"


def test_linux_config_follows_xdg_config_home():
    env = {"XDG_CONFIG_HOME": "/data/cfg"}
    desktop = by_id(cl.locate_clients("linux", env, LINUX_HOME, fake_fs(PurePosixPath("/data/cfg/Claude"))))
    assert desktop["claude-desktop"].config_path == PurePosixPath("/data/cfg/Claude/claude_desktop_config.json")
    assert desktop["claude-desktop"].installed


@pytest.mark.parametrize("value", [None, "", "relative/cfg"])
def test_linux_config_defaults_to_dot_config_when_xdg_is_unset_empty_or_relative(value):
    env = {} if value is None else {"XDG_CONFIG_HOME": value}
    path = cl.desktop_config_path("linux", env, LINUX_HOME)
    assert path == PurePosixPath("/home/ada/.config/Claude/claude_desktop_config.json")


def test_linux_without_a_claude_config_folder_is_not_installed():
    found = by_id(cl.locate_clients("linux", {}, LINUX_HOME, fake_fs()))
    assert not found["claude-desktop"].installed
    assert "claude-desktop-store" not in found


def test_other_unixes_are_treated_like_linux():
    assert cl.platform_family("freebsd14") == cl.LINUX
    assert cl.client_ids_for("freebsd14") == ("claude-desktop", "claude-code")


def test_windows_standard_install_is_found_by_its_install_folder():
    found = by_id(cl.locate_clients("win32", WIN_ENV, WIN_HOME, fake_fs(WIN_STANDARD_INSTALL / "claude.exe")))
    assert list(found) == ["claude-desktop", "claude-desktop-store", "claude-code"]
    assert found["claude-desktop"].installed
    assert found["claude-desktop"].config_path == WIN_STANDARD_CONFIG
    assert not found["claude-desktop-store"].installed


def test_windows_store_install_is_found_by_its_package_folder_and_uses_the_virtualized_config():
    found = by_id(cl.locate_clients("win32", WIN_ENV, WIN_HOME, fake_fs(WIN_STORE_PACKAGE / "AC")))
    store = found["claude-desktop-store"]
    assert store.installed and store.config_path == WIN_STORE_CONFIG
    assert not found["claude-desktop"].installed


def test_windows_store_install_warns_that_the_standard_config_it_ignores_exists():
    """The classic trap: someone edited %APPDATA%\\Claude\\...json, which an MSIX install never reads."""
    exists = fake_fs(WIN_STORE_PACKAGE / "AC", WIN_STANDARD_CONFIG)
    desktop = by_id(cl.locate_clients("win32", WIN_ENV, WIN_HOME, exists))["claude-desktop"]
    assert not desktop.installed
    assert "ignores it" in desktop.note and "claude-desktop-store" in desktop.note


def test_windows_with_both_installs_lists_both():
    exists = fake_fs(WIN_STORE_PACKAGE / "AC", WIN_STANDARD_INSTALL / "claude.exe", WIN_STANDARD_CONFIG)
    found = by_id(cl.locate_clients("win32", WIN_ENV, WIN_HOME, exists))
    assert found["claude-desktop"].installed and found["claude-desktop-store"].installed
    assert found["claude-desktop"].note == ""


def test_windows_config_folder_alone_means_a_standard_install_when_no_store_package_exists():
    found = by_id(cl.locate_clients("win32", WIN_ENV, WIN_HOME, fake_fs(WIN_STANDARD_CONFIG)))
    assert found["claude-desktop"].installed


def test_windows_paths_fall_back_to_the_profile_when_appdata_variables_are_missing():
    assert cl.desktop_config_path("win32", {}, WIN_HOME) == WIN_STANDARD_CONFIG
    assert cl.store_config_path({}, WIN_HOME) == WIN_STORE_CONFIG


def test_claude_code_is_found_on_path():
    exists = fake_fs(PurePosixPath("/opt/bin/claude"))
    code = by_id(cl.locate_clients("linux", {"PATH": "/usr/bin::/opt/bin"}, LINUX_HOME, exists))["claude-code"]
    assert code.installed and code.cli_path == PurePosixPath("/opt/bin/claude")
    assert code.config_path is None


def test_claude_codes_servers_are_read_from_its_file_in_the_home_folder_or_in_claude_config_dir():
    code = by_id(cl.locate_clients("linux", {}, LINUX_HOME, fake_fs()))["claude-code"]
    assert code.servers_file == LINUX_HOME / ".claude.json" and not code.installed
    moved = cl.claude_code_file("darwin", {"CLAUDE_CONFIG_DIR": "/Users/ada/.claude"}, MAC_HOME)
    assert moved == PurePosixPath("/Users/ada/.claude/.claude.json")
    assert cl.claude_code_file("linux", {"CLAUDE_CONFIG_DIR": "relative"}, LINUX_HOME) == LINUX_HOME / ".claude.json"
    assert cl.claude_code_file("win32", {}, WIN_HOME) == PureWindowsPath(r"C:\Users\Ada\.claude.json")
    moved = cl.claude_code_file("win32", {"CLAUDE_CONFIG_DIR": r"D:\claude"}, WIN_HOME)
    assert moved == PureWindowsPath(r"D:\claude\.claude.json")


def test_claude_code_is_found_in_its_installer_folder_when_path_is_the_minimal_gui_path():
    """A tray app started from the macOS Finder has PATH=/usr/bin:/bin:/usr/sbin:/sbin."""
    exists = fake_fs(MAC_HOME / ".local" / "bin" / "claude")
    env = {"PATH": "/usr/bin:/bin:/usr/sbin:/sbin"}
    code = by_id(cl.locate_clients("darwin", env, MAC_HOME, exists))["claude-code"]
    assert code.cli_path == MAC_HOME / ".local" / "bin" / "claude"


def test_claude_code_on_windows_is_found_with_a_pathext_extension():
    exists = fake_fs(PureWindowsPath(r"C:\Tools\claude.CMD"))
    code = by_id(cl.locate_clients("win32", WIN_ENV, WIN_HOME, exists))["claude-code"]
    assert code.installed and code.cli_path == PureWindowsPath(r"C:\Tools\claude.cmd")


def test_claude_code_on_windows_is_found_in_the_npm_folder_off_path():
    npm = PureWindowsPath(r"C:\Users\Ada\AppData\Roaming\npm\claude.cmd")
    code = by_id(cl.locate_clients("win32", WIN_ENV, WIN_HOME, fake_fs(npm)))["claude-code"]
    assert code.cli_path == npm


def test_claude_code_is_reported_absent_without_claude():
    code = by_id(cl.locate_clients("linux", {"PATH": "/usr/bin"}, LINUX_HOME, fake_fs()))["claude-code"]
    assert not code.installed and code.cli_path is None and "not found" in code.evidence


def test_selecting_nothing_picks_every_installed_client():
    exists = fake_fs(PurePosixPath("/home/ada/.config/Claude"), PurePosixPath("/usr/bin/claude"))
    locations = cl.locate_clients("linux", {"PATH": "/usr/bin"}, LINUX_HOME, exists)
    assert [loc.client_id for loc in cl.select_clients(locations, None, "linux")] == [
        "claude-desktop",
        "claude-code",
    ]


def test_selecting_nothing_when_nothing_is_installed_names_the_default_location():
    locations = cl.locate_clients("linux", {}, LINUX_HOME, fake_fs())
    with pytest.raises(
        UsageError, match=r"no Claude install found.*/home/ada/.config/Claude/.*--client claude-desktop"
    ):
        cl.select_clients(locations, None, "linux")


def test_selecting_by_id_keeps_order_drops_repeats_and_takes_uninstalled_clients():
    locations = cl.locate_clients("linux", {}, LINUX_HOME, fake_fs())
    chosen = cl.select_clients(locations, ["claude-code", "claude-desktop", "claude-code"], "linux")
    assert [loc.client_id for loc in chosen] == ["claude-code", "claude-desktop"]


def test_selecting_an_unknown_id_or_the_store_client_off_windows_is_refused():
    locations = cl.locate_clients("linux", {}, LINUX_HOME, fake_fs())
    with pytest.raises(UsageError, match="unknown client"):
        cl.select_clients(locations, ["claude-web"], "linux")
    with pytest.raises(UsageError, match="does not exist on this platform"):
        cl.select_clients(locations, ["claude-desktop-store"], "linux")


def test_restart_on_macos_quits_waits_and_opens_the_app():
    quit_argv, running, start = cl.restart_argvs("darwin", "claude-desktop", {}, MAC_HOME)
    assert quit_argv == ["/usr/bin/osascript", "-e", 'quit app "Claude"']  # never through PATH
    assert running == ["/usr/bin/pgrep", "-x", "Claude"]
    assert start == ["/usr/bin/open", "-a", "Claude"]


def test_restart_on_windows_ends_claude_and_starts_the_right_install():
    quit_argv, running, start = cl.restart_argvs("win32", "claude-desktop", WIN_ENV, WIN_HOME)
    assert quit_argv == ["taskkill", "/IM", "claude.exe", "/T", "/F"]
    assert running[0] == "powershell" and "Get-Process -Name claude" in running[-1]
    assert start == [str(WIN_STANDARD_INSTALL / "claude.exe")]
    _, _, store_start = cl.restart_argvs("win32", "claude-desktop-store", WIN_ENV, WIN_HOME)
    assert store_start == ["explorer.exe", r"shell:AppsFolder\Claude_pzs8sxrjxfjjc!Claude"]


def test_restart_on_linux_is_refused_with_advice():
    with pytest.raises(UsageError, match="by hand"):
        cl.restart_argvs("linux", "claude-desktop", {}, LINUX_HOME)


def test_this_machine_reads_the_real_platform_and_home(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    platform, environ, home = cl.this_machine()
    assert platform == "linux" and environ["HOME"] == str(tmp_path) and home == Path(tmp_path)
    assert cl.real_exists(tmp_path) and not cl.real_exists(tmp_path / "missing")
