"""`cowork-terminal uninstall` as a user runs it, against a fake home: real child processes, real files.

Every child gets HOME, XDG_CONFIG_HOME and XDG_DATA_HOME in a temporary folder and a PATH with only
system folders and the stand-in `claude` (tests/fake_claude.py, which keeps Claude Code's servers in
the fake home's `.claude.json`): no real Claude config, autostart entry or menu is ever touched.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from desktop_env import wait_for
from test_client_config import OTHER_SERVERS, RICH_CONFIG

from app.core import data_folder, liveness
from app.core.claude import config as cc
from app.core.install import autostart, installation, menu_entry
from app.core.journal.store import Journal
from app.core.paths import AppPaths
from tests.fake_claude import claude_calls, install_fake_claude, user_servers, write_user_servers

SYSTEM_PATH = "/usr/bin:/bin"
CLI_TIMEOUT_S = 60
START_TIMEOUT_S = 20
FOREIGN_ENTRY = {"command": "npx", "args": ["-y", "cowork-terminal-mcp"]}
GITHUB = {"command": "gh-mcp", "args": []}  # another server in Claude Code


class User:
    """A fake user with Claude Desktop (a config holding other servers and ours), Claude Code (ours
    through its CLI) and start at login on; `run` starts `python -m app ...` as that user."""

    def __init__(self, tmp_path: Path, cli_env: dict[str, str]) -> None:
        self.home = tmp_path / "user-home"
        self.config = self.home / ".config" / "Claude" / "claude_desktop_config.json"
        self.autostart = self.home / ".config" / "autostart" / autostart.DESKTOP_FILE_NAME
        self.app_home = Path(cli_env["COWORK_TERMINAL_HOME"])
        self.claude_bin = install_fake_claude(tmp_path / "claude-bin").parent
        self.claude_state = self.home / ".claude.json"  # Claude Code's own file
        self.env = dict(
            cli_env, HOME=str(self.home), XDG_CONFIG_HOME=str(self.home / ".config"),
            XDG_DATA_HOME=str(self.home / ".local" / "share"), PATH=f"{self.claude_bin}:{SYSTEM_PATH}",
        )  # fmt: skip
        self.env.pop("FAKE_CLAUDE_FAIL", None)
        self.env.pop("CLAUDE_CONFIG_DIR", None)
        self.ours = cc.build_entry(False, os.path.abspath(sys.executable), [], str(self.app_home))

    def set_up_everything(self) -> None:
        self.config.parent.mkdir(parents=True)
        servers = {**OTHER_SERVERS, "cowork-terminal": self.ours}
        self.config.write_text(json.dumps({**RICH_CONFIG, "mcpServers": servers}))
        write_user_servers(self.claude_state, {"github": GITHUB, "cowork-terminal": self.ours})
        autostart.enable("linux", self.env, self.home, command=[sys.executable, "-m", "app", "tray"])
        paths = data_folder.ensure(AppPaths.from_environment(self.env))
        Journal(paths).close()
        (paths.log_dir / "tray.log").write_text("a log line\n")

    def run(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "app", *args], env=self.env, input=stdin if stdin is not None else "",
            capture_output=True, text=True, timeout=CLI_TIMEOUT_S,
        )  # fmt: skip

    def claude_code_servers(self) -> dict:
        return user_servers(self.claude_state)

    def backups(self) -> list[Path]:
        return cc.list_backups(self.config)


@pytest.fixture
def user(tmp_path: Path, cli_env: dict[str, str]) -> User:
    return User(tmp_path, cli_env)


def test_a_dry_run_lists_every_step_and_changes_nothing(user: User) -> None:
    user.set_up_everything()
    before = (user.config.read_bytes(), user.claude_state.read_bytes(), user.autostart.read_bytes())

    result = user.run("uninstall", "--dry-run")

    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Uninstall would:" in out
    assert f"Remove Cowork Terminal from Claude Desktop ({user.config})" in out
    assert "Remove Cowork Terminal from Claude Code (its `claude` CLI)" in out
    assert f"Turn off Start at login ({user.autostart})" in out
    assert f"Kept: your command history and logs in {user.app_home} (delete them with --data)" in out  # the CLI's way
    assert out.rstrip().splitlines()[-1].startswith("To remove the program itself: pip uninstall cowork-terminal")
    assert (user.config.read_bytes(), user.claude_state.read_bytes(), user.autostart.read_bytes()) == before
    assert user.backups() == []
    assert ["mcp", "remove", "--scope", "user", "cowork-terminal"] not in _calls(user)


def test_uninstall_removes_only_our_entries_with_a_backup_and_turns_start_at_login_off(user: User) -> None:
    user.set_up_everything()
    original = user.config.read_bytes()

    result = user.run("uninstall", "--yes")

    assert result.returncode == 0, result.stdout + result.stderr
    config = json.loads(user.config.read_text())
    assert config == {**RICH_CONFIG, "mcpServers": OTHER_SERVERS}, "something besides our entry changed"
    [backup] = user.backups()
    assert backup.read_bytes() == original
    assert user.claude_code_servers() == {"github": GITHUB}
    assert ["mcp", "remove", "--scope", "user", "cowork-terminal"] in _calls(user)
    assert not user.autostart.exists()
    assert (user.app_home / "journal.sqlite3").exists() and (user.app_home / "logs" / "tray.log").exists()
    assert f"Removed Cowork Terminal from Claude Desktop (previous file kept as {backup})" in result.stdout
    assert "Turned off Start at login" in result.stdout
    assert "Quit Claude Desktop and open it again" in result.stdout
    assert f"Kept: your command history and logs in {user.app_home}" in result.stdout

    again = user.run("uninstall", "--dry-run")
    assert "Nothing of Cowork Terminal is set up for you here" in again.stdout


def test_without_a_terminal_or_yes_uninstall_refuses_and_changes_nothing(user: User) -> None:
    user.set_up_everything()
    before = user.config.read_bytes()
    result = user.run("uninstall")
    assert result.returncode == 2
    assert "there is no terminal to ask in: add --yes" in result.stderr
    assert user.config.read_bytes() == before and user.autostart.exists()


def test_in_a_terminal_uninstall_asks_first_and_a_no_changes_nothing(user: User) -> None:
    user.set_up_everything()
    before = user.config.read_bytes()
    # `script` gives the child a real terminal, where uninstall asks and reads the answer.
    script = shutil.which("script")
    if script is None:
        pytest.skip("`script` (bsdutils) is not installed")
    command = f"{sys.executable} -m app uninstall"
    result = subprocess.run(
        [script, "-qec", command, "/dev/null"], env=user.env, input="n\n", capture_output=True, text=True,
        timeout=CLI_TIMEOUT_S,
    )  # fmt: skip
    assert "Go ahead? [y/N]" in result.stdout
    assert "Nothing was changed." in result.stdout
    assert user.config.read_bytes() == before and user.autostart.exists()


def test_an_entry_of_another_program_under_our_name_stays_and_is_named(user: User) -> None:
    user.config.parent.mkdir(parents=True)
    user.config.write_text(json.dumps({"mcpServers": {"cowork-terminal": FOREIGN_ENTRY}}))
    result = user.run("uninstall", "--yes")
    assert result.returncode == 0, result.stderr
    assert json.loads(user.config.read_text())["mcpServers"]["cowork-terminal"] == FOREIGN_ENTRY
    assert "Kept: Claude Desktop's 'cowork-terminal' entry runs another program" in result.stdout


def test_an_entry_left_in_claude_codes_config_without_its_cli_is_named_with_the_command_to_run(user: User) -> None:
    user.env["PATH"] = SYSTEM_PATH
    if any(Path(folder, "claude").exists() for folder in ("/usr/local/bin", "/opt/homebrew/bin")):
        pytest.skip("a real Claude Code is installed on this machine")
    user.home.mkdir(parents=True)
    (user.home / ".claude.json").write_text(json.dumps({"mcpServers": {"cowork-terminal": user.ours}}))
    result = user.run("uninstall", "--dry-run")
    assert "run `claude mcp remove --scope user cowork-terminal`" in result.stdout


def test_data_goes_only_when_asked_and_only_the_files_the_app_writes(user: User) -> None:
    user.set_up_everything()
    theirs = user.app_home / "notes.txt"
    theirs.write_text("the user's own file in the folder they chose")
    result = user.run("uninstall", "--yes", "--data")
    assert result.returncode == 0, result.stderr
    assert f"Deleted {user.app_home / 'journal.sqlite3'}" in result.stdout
    assert not (user.app_home / "journal.sqlite3").exists() and not (user.app_home / "logs").exists()
    assert not (user.app_home / "locks").exists()
    assert theirs.read_text().startswith("the user's own file")
    assert "Kept: your command history" not in result.stdout


def test_uninstall_quits_the_running_tray_and_stops_this_installs_server(user: User) -> None:
    user.set_up_everything()
    paths = AppPaths.from_environment(user.env)
    env = dict(user.env, PYSTRAY_BACKEND="dummy")  # a real tray process, with no display to draw on
    tray = subprocess.Popen([sys.executable, "-m", "app", "tray"], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    server = subprocess.Popen([sys.executable, "-m", "app", "serve", "--headless"], env=env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        wait_for(lambda: liveness.is_held(paths.tray_lock), START_TIMEOUT_S)
        wait_for(lambda: _live_server_pids(paths) == [server.pid], START_TIMEOUT_S)
        plan = user.run("uninstall", "--dry-run").stdout
        assert tray.poll() is None, tray.stderr.read().decode()
        assert "Quit the Cowork Terminal tray app" in plan
        assert f"Stop the running server (pid {server.pid}) of this install" in plan

        result = user.run("uninstall", "--yes")

        assert result.returncode == 0, result.stdout + result.stderr
        assert tray.wait(START_TIMEOUT_S) == 0
        assert server.wait(START_TIMEOUT_S) is not None
        assert not liveness.is_held(paths.tray_lock)
        assert f"Stopped the running server (pid {server.pid})" in result.stdout
    finally:
        for process in (tray, server):
            if process.poll() is None:
                process.kill()
                process.wait()


def test_install_desktop_entry_adds_a_valid_menu_entry_that_uninstall_removes(user: User, tmp_path: Path) -> None:
    result = user.run("install-desktop-entry")
    assert result.returncode == 0, result.stderr
    entry = user.home / ".local" / "share" / "applications" / "cowork-terminal.desktop"
    text = entry.read_text()
    assert f"TryExec={os.path.abspath(sys.executable)}\n" in text
    expected = [os.path.abspath(sys.executable), "-I", "-m", "app", "tray"]
    assert autostart.parse_exec_value(_key(text, "Exec")) == expected
    # Docks group our windows (WM_CLASS, ui/windows/look.py) under this launcher, as under the .deb's.
    deb_entry = (Path(__file__).parent.parent / "installer/linux/cowork-terminal.desktop").read_text()
    assert _key(text, "StartupWMClass") == _key(deb_entry, "StartupWMClass") == "cowork-terminal"
    validate = shutil.which("desktop-file-validate")
    if validate:
        checked = subprocess.run([validate, str(entry)], capture_output=True, text=True)
        assert checked.returncode == 0 and not checked.stdout.strip(), checked.stdout + checked.stderr
    assert "Remove the menu entry and icons (1 file)" in user.run("uninstall", "--dry-run").stdout
    assert user.run("uninstall", "--yes").returncode == 0
    assert not entry.exists()


def test_bundled_icons_are_installed_in_every_size_and_removed_again(tmp_path: Path) -> None:
    bundle_icons = tmp_path / "bundle" / "share" / "icons" / "hicolor"
    for size in (16, 48, 256):
        png = bundle_icons / f"{size}x{size}" / "apps" / "cowork-terminal.png"
        png.parent.mkdir(parents=True)
        png.write_bytes(b"\x89PNG" + str(size).encode())
    environ, home = {}, tmp_path / "home"
    icons = menu_entry.bundled_icons(bundle_icons)
    assert sorted(icons) == [16, 48, 256]
    written = menu_entry.install_menu_entry(["/opt/x/cowork-terminal", "tray"], icons, environ, home)
    assert (home / ".local/share/icons/hicolor/48x48/apps/cowork-terminal.png").read_bytes() == b"\x89PNG48"
    assert sorted(menu_entry.menu_entry_files(environ, home)) == sorted(written)


# --- how to remove the program itself -------------------------------------------------------------


@pytest.mark.parametrize(
    ("platform", "frozen", "executable", "kind", "words"),
    [
        ("linux", True, "/opt/cowork-terminal/cowork-terminal", installation.DEB, "sudo apt remove cowork-terminal"),
        ("linux", True, "/home/ann/Applications/cowork-terminal/cowork-terminal", installation.TARBALL,
         "delete its folder: rm -r '/home/ann/Applications/cowork-terminal'"),
        ("win32", True, r"C:\Users\Ann\AppData\Local\Programs\Cowork Terminal\cowork-terminal.exe",
         installation.WINDOWS_INSTALLER,
         r"Installed apps > Cowork Terminal > Uninstall (or run C:\Users\Ann\AppData\Local\Programs\Cowork "
         r"Terminal\Uninstall.exe)"),
        ("darwin", True, "/Applications/Cowork Terminal.app/Contents/MacOS/cowork-terminal", installation.MACOS_APP,
         "drag /Applications/Cowork Terminal.app to the Trash"),
        ("linux", False, "/home/ann/ct/.venv/bin/python", installation.SOURCE,
         "pip uninstall cowork-terminal, or delete the virtual environment /home/ann/ct/.venv"),
    ],
)  # fmt: skip
def test_the_last_line_says_how_to_remove_the_program_for_the_way_it_was_installed(
    platform: str, frozen: bool, executable: str, kind: str, words: str
) -> None:
    venv = "/home/ann/ct/.venv" if kind == installation.SOURCE else ""
    install = installation.install_of(platform, frozen, executable, venv)
    assert install.kind == kind
    assert words in installation.removal_hint(install)


# --- helpers ---------------------------------------------------------------------------------------


def test_a_source_install_outside_a_venv_is_never_told_to_delete_its_python_folder() -> None:
    install = installation.install_of("linux", False, "/usr/bin/python3")
    assert installation.removal_hint(install) == "To remove the program itself: pip uninstall cowork-terminal"


def _calls(user: User) -> list[list[str]]:
    return [call[1:] for call in claude_calls(user.claude_bin)]


def _key(text: str, key: str) -> str:
    return next(line.split("=", 1)[1] for line in text.splitlines() if line.startswith(key + "="))


def _live_server_pids(paths: AppPaths) -> list[int]:
    if not paths.journal.exists():
        return []
    with Journal(paths) as journal:
        return [s.pid for s in journal.servers()]
