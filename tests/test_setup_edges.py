"""One-click setup and uninstall at their edges: entries that only look like ours, start-at-login
files that say one thing and run another, and config files we must not (or cannot) write.

Real files in a temporary home, the stand-in `claude` (tests/fake_claude.py) and, where a test says
so, the CLI as a child process: no real Claude config or start-at-login entry is touched.
"""

from __future__ import annotations

import json
import os
import plistlib
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.core.claude import config as cc
from app.core.claude import config_file
from app.core.claude.locations import ClientLocation
from app.core.install import autostart, installation, uninstall
from app.core.install.stale_entries import UPDATED, repair_stale_entries
from app.core.paths import HOME_ENV, AppPaths
from app.ui.tray.tray_state import client_state_text
from tests.fake_claude import claude_calls, install_fake_claude, user_servers, write_user_servers

PY = os.path.abspath(sys.executable)
W = cc.build_entry(False, PY, [])
LAUNCH = autostart.launch_command(False, PY)
FOREIGN_ENTRY = {"command": "npx", "args": ["-y", "cowork-terminal-mcp"]}
OLD_SHAPE = {"command": PY, "args": ["-m", "app", "serve"]}  # written before `-I` (issue 21)
CLI_TIMEOUT_S = 60


class Machine:
    """A Linux user's home with Claude Desktop's config folder; `environ` is what the app is given."""

    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path / "home"
        self.config = self.home / ".config" / "Claude" / "claude_desktop_config.json"
        self.config.parent.mkdir(parents=True)
        self.claude_bin = tmp_path / "claude-bin"
        self.environ = {
            "HOME": str(self.home), "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"), "PATH": "/usr/bin:/bin",
        }  # fmt: skip
        self.autostart = self.home / ".config" / "autostart" / autostart.DESKTOP_FILE_NAME

    def write_entry(self, entry: object) -> bytes:
        self.config.write_text(json.dumps({"mcpServers": {"other": {"command": "x"}, "cowork-terminal": entry}}))
        return self.config.read_bytes()

    def entry(self) -> object:
        return json.loads(self.config.read_text())["mcpServers"].get("cowork-terminal")

    def with_claude(self) -> Path:
        """The stand-in `claude` on PATH; Claude Code's file is `.claude.json` in the home."""
        claude = install_fake_claude(self.claude_bin)
        self.environ["PATH"] = f"{claude.parent}:/usr/bin:/bin"
        return self.home / ".claude.json"

    def repair(self, platform: str = "linux") -> list:
        return repair_stale_entries(
            frozen=False, executable=PY, platform=platform, environ=self.environ, home=self.home
        )

    def cli(self, *args: str, app_home: Path) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, **self.environ, HOME_ENV: str(app_home)}
        env.pop("CLAUDE_CONFIG_DIR", None)
        env.pop("FAKE_CLAUDE_FAIL", None)
        return subprocess.run(
            [sys.executable, "-m", "app", *args], env=env, capture_output=True, text=True, timeout=CLI_TIMEOUT_S
        )


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Machine:
    made = Machine(tmp_path)
    monkeypatch.setenv("HOME", str(made.home))  # the stand-in `claude` keeps Claude Code's file there
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv(HOME_ENV, raising=False)  # this_app_entry() is then W, as the tray writes it
    return made


# --- 1, 2: only what the app writes makes an entry ours ---------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "added"),
    [
        ({**W, "env": {"COWORK_TERMINAL_BWRAP": "/home/u/.local/bin/bwrap"}}, ["env COWORK_TERMINAL_BWRAP"]),
        ({**W, "env": {HOME_ENV: "/home/u/elsewhere"}}, [f"env {HOME_ENV}"]),
        ({"type": "http", "url": "https://example.com/mcp", **W}, ["field url", 'field type "http"']),
        ({**W, "cwd": "/home/u"}, ["field cwd"]),
    ],
)
def test_a_setting_or_field_the_app_never_writes_is_not_connected_and_connect_drops_it(
    machine: Machine, entry: dict[str, Any], added: list[str]
) -> None:
    machine.write_entry(entry)
    location = ClientLocation("claude-desktop", "Claude Desktop", True, machine.config, None, "found")
    status = cc.client_status(location, W)
    assert status.state == cc.ALTERED
    assert client_state_text(status.state, True) == "not connected: settings were added to its entry"
    assert cc.added_to_entry(entry, W) == added
    change = cc.connect_desktop(machine.config, W)
    assert (change.action, change.previous) == ("written", cc.ALTERED)
    assert machine.entry() == W


def test_the_app_home_the_app_writes_and_claude_codes_type_stdio_are_ours() -> None:
    wanted = cc.build_entry(False, PY, [], "/home/u/ct-data")
    assert cc.classify_entry(dict(wanted), wanted) == cc.CURRENT
    assert cc.classify_entry({"type": "stdio", **wanted}, wanted) == cc.CURRENT
    assert cc.classify_entry(cc.build_entry(False, PY, [], "/home/u/other"), wanted) == cc.ALTERED


# --- 3: entries an older version wrote, without -I ---------------------------------------------------------


def test_an_entry_without_dash_i_is_not_called_connected_and_the_tray_start_brings_it_up_to_date(
    machine: Machine,
) -> None:
    old = {**OLD_SHAPE, "args": [*OLD_SHAPE["args"], "--headless"]}
    original = machine.write_entry(old)
    assert cc.classify_entry(old, W) == cc.CHANGED
    assert client_state_text(cc.CHANGED, True) == "connected, its entry needs an update"

    [repair] = machine.repair()

    assert machine.entry() == cc.build_entry(False, PY, ["--headless"])  # the user's --headless kept
    [backup] = cc.list_backups(machine.config)
    assert backup.read_bytes() == original
    assert (repair.what, repair.why, repair.title) == ("Claude Desktop", UPDATED, "Claude Desktop updated")
    assert repair.notice == f"Claude Desktop updated. The previous file is kept as {backup}."
    assert machine.repair() == [], "done once"


def test_a_start_at_login_entry_without_dash_i_is_brought_up_to_date(machine: Machine) -> None:
    autostart.enable("linux", machine.environ, machine.home, command=[PY, "-m", "app", "tray"])

    [repair] = machine.repair()

    assert autostart.read_command("linux", machine.environ, machine.home) == LAUNCH
    assert (repair.why, repair.notice) == (UPDATED, "Start at login updated.")


def test_an_old_entry_with_settings_added_or_claude_codes_is_not_rewritten_at_start(machine: Machine) -> None:
    servers_file = machine.with_claude()
    write_user_servers(servers_file, {"cowork-terminal": {"type": "stdio", **OLD_SHAPE}})
    original = machine.write_entry({**OLD_SHAPE, "env": {"PYTHONPATH": "/tmp/planted"}})
    before = servers_file.read_bytes()
    assert machine.repair() == []
    assert machine.config.read_bytes() == original  # the menu says "settings were added": the user's call
    assert servers_file.read_bytes() == before and claude_calls(machine.claude_bin) == []


# --- 4, 5: start-at-login files that run something else ------------------------------------------------------


def test_a_launch_agent_with_a_program_key_counts_as_altered_and_is_rewritten(machine: Machine) -> None:
    autostart.enable("darwin", machine.environ, machine.home, command=LAUNCH)
    plist_file = Path(autostart.autostart_location("darwin", machine.environ, machine.home))
    plist = plistlib.loads(plist_file.read_bytes())
    plist["Program"] = "/Users/u/.local/bin/evil"
    plist_file.write_bytes(plistlib.dumps(plist))

    assert autostart.read_added(LAUNCH, "darwin", machine.environ, machine.home) == ["Program /Users/u/.local/bin/evil"]
    [repair] = machine.repair("darwin")
    assert "Program /Users/u/.local/bin/evil" in repair.notice
    assert "Program" not in plistlib.loads(plist_file.read_bytes())


def test_only_the_desktop_entry_group_of_an_autostart_file_is_read(machine: Machine) -> None:
    autostart.enable("linux", machine.environ, machine.home, command=LAUNCH)
    ours = machine.autostart.read_text()
    exec_line = next(line for line in ours.splitlines() if line.startswith("Exec="))
    planted = ours.replace(exec_line, "Exec=env LD_PRELOAD=/tmp/x.so " + exec_line.removeprefix("Exec="))
    machine.autostart.write_text(planted + f"\n[Desktop Action Clean]\nName=Clean\n{exec_line}\nHidden=true\n")

    assert autostart.is_enabled("linux", machine.environ, machine.home)
    assert autostart.read_command("linux", machine.environ, machine.home) == ["env", "LD_PRELOAD=/tmp/x.so", *LAUNCH]
    assert autostart.read_added(LAUNCH, "linux", machine.environ, machine.home) == ["env LD_PRELOAD=/tmp/x.so"]


# --- 6, 7: uninstall -------------------------------------------------------------------------------------------


def _plan(machine: Machine, tmp_path: Path) -> tuple[uninstall.UninstallPlan, AppPaths]:
    paths = AppPaths.from_environment({HOME_ENV: str(tmp_path / "app-data")})
    install = installation.install_of("linux", False, PY)
    plan = uninstall.plan_uninstall(
        paths, install, delete_data=False, platform="linux", environ=machine.environ, home=machine.home
    )
    return plan, paths


def test_uninstall_removes_a_start_at_login_file_that_was_switched_off(machine: Machine, tmp_path: Path) -> None:
    autostart.enable("linux", machine.environ, machine.home, command=LAUNCH)
    text = machine.autostart.read_text().replace("X-GNOME-Autostart-enabled=true", "X-GNOME-Autostart-enabled=false")
    machine.autostart.write_text(text)
    plan, paths = _plan(machine, tmp_path)
    assert f"Turn off Start at login ({machine.autostart})" in plan.steps()

    report = uninstall.run_uninstall(plan, paths, platform="linux", environ=machine.environ, home=machine.home)

    assert "Turned off Start at login" in report.done and report.failed == []
    assert not machine.autostart.exists()


def test_uninstall_leaves_an_entry_that_became_another_programs_after_the_plan_and_says_so(
    machine: Machine, tmp_path: Path
) -> None:
    machine.write_entry(W)
    plan, paths = _plan(machine, tmp_path)
    assert [client.location.name for client in plan.clients] == ["Claude Desktop"]
    original = machine.write_entry(FOREIGN_ENTRY)  # another program took our name in between

    report = uninstall.run_uninstall(plan, paths, platform="linux", environ=machine.environ, home=machine.home)

    assert machine.config.read_bytes() == original and cc.list_backups(machine.config) == []
    assert report.failed == []
    kept = f"Kept: Claude Desktop's 'cowork-terminal' entry runs another program: {json.dumps(FOREIGN_ENTRY)}"
    assert kept in report.done
    assert not any(line.startswith("Removed Cowork Terminal from Claude Desktop") for line in report.done)


# --- 8: disconnect -------------------------------------------------------------------------------------------


def test_disconnect_refuses_another_programs_entry_as_connect_does(machine: Machine, tmp_path: Path) -> None:
    original = machine.write_entry(FOREIGN_ENTRY)
    result = machine.cli("disconnect", "--client", "claude-desktop", app_home=tmp_path / "app-data")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "already has a 'cowork-terminal' entry that runs another program" in result.stderr
    assert "--replace" in result.stderr and "disconnected" not in result.stdout
    assert machine.config.read_bytes() == original and cc.list_backups(machine.config) == []


# --- 9, 10: config files ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "writable", "allowed"), [(0o644, True, True), (0o644, False, False), (0o444, True, False)]
)
def test_a_config_is_replaced_only_when_its_owner_and_this_user_may_write_it(
    mode: int, writable: bool, allowed: bool
) -> None:
    assert config_file.may_replace(mode, writable) is allowed


NOBODY_SAVES = """
import sys
sys.path[:0] = sys.argv[2:]
from pathlib import Path
from app.core.claude import config as cc
try:
    cc.connect_desktop(Path(sys.argv[1]), {"command": "/x/python", "args": ["-I", "-m", "app", "serve"]})
except cc.ConfigWriteError as refused:
    print(refused)
    sys.exit(1)
"""


def test_a_root_owned_config_in_the_users_folder_is_refused_naming_its_owner(tmp_path: Path) -> None:
    """As another user (nobody), a 0644 file owned by root in a folder that user owns: a rename
    would replace it, but it is not theirs to change. The advice names the owner and a fix that works
    (a chmod would not: the user cannot change another's file; a ninth red team, 2026-12-06)."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        pytest.skip("needs root and setpriv to act as another user")
    import pwd  # POSIX only

    nobody = pwd.getpwnam("nobody")
    folder = Path("/tmp/setup-fix") / tmp_path.name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    try:
        os.chmod(folder.parent, 0o755)
        os.chown(folder, nobody.pw_uid, nobody.pw_gid)
        config = folder / "claude_desktop_config.json"
        config.write_text(json.dumps({"mcpServers": {}}))
        os.chmod(config, 0o644)  # root's
        python = shutil.which("python3", path="/usr/bin:/bin") or ""
        site = [p for p in sys.path if p.endswith("site-packages")]
        argv = [setpriv, f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups", python]
        tree = str(Path(__file__).parent.parent)
        importing = "import sys; sys.path[:0] = sys.argv[1:]; import app.core.claude.config"
        probe = subprocess.run([*argv, "-c", importing, tree, *site], capture_output=True, text=True, cwd="/")
        if probe.returncode != 0:
            pytest.skip(f"nobody cannot run the app here: {probe.stderr[-300:]}")
        result = subprocess.run(
            [*argv, "-c", NOBODY_SAVES, str(config), tree, *site],
            capture_output=True, text=True, cwd="/", timeout=CLI_TIMEOUT_S,
        )  # fmt: skip
        assert result.returncode == 1, result.stdout + result.stderr
        assert "is owned by root, not by you, so it was not changed" in result.stdout, result.stdout
        assert 'sudo chown "$USER"' in result.stdout and "chmod" not in result.stdout
        assert json.loads(config.read_text()) == {"mcpServers": {}} and config.stat().st_uid == 0
        assert sorted(p.name for p in folder.iterdir()) == [config.name]
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_config_holding_half_an_emoji_is_connected_and_keeps_its_text(machine: Machine, tmp_path: Path) -> None:
    original = b'{"lastTitle": "party \\ud83d", "mcpServers": {}}'
    machine.config.write_bytes(original)
    result = machine.cli("connect", "--client", "claude-desktop", app_home=tmp_path / "app-data")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    written = machine.config.read_bytes()
    assert b'"lastTitle": "party \\ud83d"' in written  # as JavaScript wrote it, byte for byte
    assert json.loads(written)["lastTitle"] == "party \ud83d"
    assert "cowork-terminal" in json.loads(written)["mcpServers"]
    [backup] = cc.list_backups(machine.config)
    assert backup.read_bytes() == original


# --- 11: Claude Code's add failing after the remove --------------------------------------------------------


def test_claude_code_gets_its_old_entry_back_when_the_new_one_cannot_be_added(
    machine: Machine, monkeypatch: pytest.MonkeyPatch
) -> None:
    servers_file = machine.with_claude()
    old = {"type": "stdio", **OLD_SHAPE, "args": [*OLD_SHAPE["args"], "--headless"]}
    write_user_servers(servers_file, {"github": {"command": "gh-mcp", "args": []}, "cowork-terminal": old})
    monkeypatch.setenv("FAKE_CLAUDE_FAIL", "add")  # `mcp add` fails; `mcp remove` and `add-json` work
    claude = str(machine.claude_bin / "claude")

    with pytest.raises(cc.ClaudeCliError, match=r"`.*claude mcp add` failed \(exit 3\): fake failure"):
        cc.connect_claude_code(claude, servers_file, W)

    assert cc.claude_code_entry(servers_file) == old
    assert user_servers(servers_file)["github"] == {"command": "gh-mcp", "args": []}
    assert [call[1:3] for call in claude_calls(machine.claude_bin)] == [
        ["mcp", "remove"], ["mcp", "add"], ["mcp", "add-json"],
    ]  # fmt: skip
