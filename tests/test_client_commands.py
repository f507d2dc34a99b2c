"""`clients`, `connect`, `disconnect`, `restart-claude` as a user runs them.

Each command runs once as a real child process, as a user types it (`user.run`: `clients` with
nothing installed, `connect` in the end-to-end test, `disconnect --dry-run`, `restart-claude`);
the other tests call the CLI's own entry (`app.cli.main.main`) in this process (`user.call`), with
the same arguments and environment, and read what it prints and returns. `check` runs as a process
in tests/test_connection_check.py.

Every command gets HOME and XDG_CONFIG_HOME in a temporary folder and a PATH with only system
folders and, where a test wants one, a fake `claude`: no real Claude config is ever touched.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from unittest.mock import ANY

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from test_client_config import FOREIGN_ENTRY, OTHER_SERVERS, RICH_CONFIG

from app.cli import client_commands
from app.cli.main import main
from app.core import liveness
from app.core.claude import config as cc
from app.core.errors import CoworkError
from tests.fake_claude import claude_calls, install_fake_claude, user_servers, write_user_servers

SYSTEM_PATH = "/usr/bin:/bin"
CLI_TIMEOUT_S = 60


@pytest.fixture
def user(tmp_path: Path, cli_env: dict[str, str], capfd: pytest.CaptureFixture[str]):
    """A fake user: a home folder, its env for the CLI, and the Linux community-build config path."""
    home = tmp_path / "user-home"
    home.mkdir()
    env = dict(cli_env, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), PATH=SYSTEM_PATH)
    for name in ("FAKE_CLAUDE_FAIL", "CLAUDE_CONFIG_DIR"):
        env.pop(name, None)

    class User:
        config = home / ".config" / "Claude" / "claude_desktop_config.json"

        def __init__(self) -> None:
            self.home, self.env = home, env

        def run(self, *args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "-m", "app", *args],
                env=self.env, capture_output=True, text=True, timeout=CLI_TIMEOUT_S,
            )  # fmt: skip

        def call(self, *args: str) -> subprocess.CompletedProcess[str]:
            """The same command through the CLI's own entry in this process, with this user's
            environment (and nothing else of this process's): what it prints and returns."""
            with pytest.MonkeyPatch.context() as scope:
                for name in set(os.environ) - set(self.env):
                    scope.delenv(name)
                for name, value in self.env.items():
                    scope.setenv(name, value)
                capfd.readouterr()
                try:
                    code = main(list(args))
                except SystemExit as usage:  # argparse's usage errors
                    code = usage.code
                out, err = capfd.readouterr()
            return subprocess.CompletedProcess(["cowork-terminal", *args], int(code or 0), out, err)

        def install_desktop(self, content: str | None = None) -> bytes | None:
            """A Linux community build: its config folder, and optionally a config file."""
            self.config.parent.mkdir(parents=True, exist_ok=True)
            if content is None:
                return None
            self.config.write_text(content, encoding="utf-8")
            return self.config.read_bytes()

        def install_claude_code(self, servers: dict | None = None):
            """The stand-in `claude` on PATH; Claude Code's file in the home folder, with `servers`."""
            claude = install_fake_claude(tmp_path / "claude-bin")
            self.env.update(PATH=f"{claude.parent}:{SYSTEM_PATH}")
            state = home / ".claude.json"
            if servers is not None:
                write_user_servers(state, servers)
            return claude, state, claude.parent

        def entry(self) -> dict:
            return json.loads(self.config.read_text("utf-8"))["mcpServers"]["cowork-terminal"]

    return User()


def real_claude_code_outside_path() -> bool:
    """find_executable also looks in installer folders; a real Claude Code there would be found."""
    return any(Path(folder, "claude").exists() for folder in ("/usr/local/bin", "/opt/homebrew/bin"))


def expected_entry(cli_env: dict[str, str], *extra: str) -> dict:
    return cc.build_entry(False, os.path.abspath(sys.executable), list(extra), cli_env["COWORK_TERMINAL_HOME"])


# --- clients ------------------------------------------------------------------------------------


def test_clients_with_nothing_installed_says_so_and_names_the_restart_rule(user):
    if real_claude_code_outside_path():
        pytest.skip("a real Claude Code is installed in a folder this test cannot hide")
    result = user.run("clients")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["CLIENT", "INSTALLED", "OUR", "ENTRY", "CONFIG"]
    assert lines[1].split()[:3] == ["claude-desktop", "no", "not"] and str(user.config) in lines[1]
    assert lines[2].split()[:2] == ["claude-code", "no"]
    assert "No Claude app found" in result.stdout
    assert "reads its config only when it starts" in result.stdout
    assert "restart-claude" not in result.stdout


def test_clients_json_reports_each_client_and_our_entry(user, cli_env):
    user.install_desktop(json.dumps({"mcpServers": {"cowork-terminal": FOREIGN_ENTRY}}))
    claude, _, _ = user.install_claude_code({"cowork-terminal": expected_entry(cli_env)})
    result = user.call("clients", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["entry"] == expected_entry(cli_env)
    desktop, code = report["clients"]
    assert (desktop["client_id"], desktop["installed"], desktop["state"]) == ("claude-desktop", True, "foreign")
    assert desktop["config_path"] == str(user.config) and desktop["entry"] == FOREIGN_ENTRY
    assert (code["client_id"], code["installed"], code["state"], code["cli_path"]) == (
        "claude-code", True, "current", str(claude),
    )  # fmt: skip


def test_clients_shows_why_a_config_is_unreadable(user):
    user.install_desktop('{"mcpServers": {},}')
    result = user.call("clients")
    assert "config unreadable" in result.stdout and "line 1, column 19" in result.stdout


# --- connect ----------------------------------------------------------------------------------------


def test_connect_with_no_claude_installed_names_the_default_location_and_writes_nothing(user):
    if real_claude_code_outside_path():
        pytest.skip("a real Claude Code is installed in a folder this test cannot hide")
    result = user.call("connect")
    assert result.returncode == 2
    assert "no Claude install found" in result.stderr and str(user.config) in result.stderr
    assert "--client claude-desktop" in result.stderr
    assert not (user.home / ".config").exists()


def test_connect_writes_every_installed_client_and_reminds_to_restart(user, cli_env):
    user.install_desktop(json.dumps(RICH_CONFIG))
    _, state, log = user.install_claude_code()
    result = user.call("connect")
    assert result.returncode == 0, result.stderr
    assert f"claude-desktop: connected ({user.config})" in result.stdout
    assert "claude-code: connected" in result.stdout
    assert "previous file kept as" in result.stdout and "reads its config only when it starts" in result.stdout
    assert "restart-claude" not in result.stdout, "restart-claude does not work on Linux: never suggested here"
    assert "run only while the Cowork Terminal app is running" in result.stdout and "--headless" in result.stdout
    assert user.entry() == expected_entry(cli_env)
    assert user_servers(state)["cowork-terminal"] == {"type": "stdio", **expected_entry(cli_env)}
    assert claude_calls(log) == [["claude", "mcp", "add-json", "--scope", "user", "cowork-terminal", ANY]]

    again = user.call("connect")
    assert again.returncode == 0
    assert again.stdout.count("already connected, nothing changed") == 2
    assert "reads its config" not in again.stdout  # nothing was written, so no restart needed
    assert len(cc.list_backups(user.config)) == 1


def test_connect_client_option_creates_a_missing_config_at_the_default_location(user, cli_env, paths):
    tray = liveness.try_hold(paths.tray_lock)  # the tray is running: no hint about it
    try:
        result = user.call("connect", "--client", "claude-desktop")
    finally:
        tray.release()
    assert result.returncode == 0, result.stderr
    assert "run only while" not in result.stdout
    assert json.loads(user.config.read_text("utf-8")) == {"mcpServers": {"cowork-terminal": expected_entry(cli_env)}}


def test_connect_dry_run_prints_the_exact_json_and_path_and_writes_nothing(user, cli_env):
    original = user.install_desktop(json.dumps({"mcpServers": OTHER_SERVERS, "zoom": 2}))
    claude, state, calls = user.install_claude_code()
    result = user.call("connect", "--dry-run")
    assert "run only while" not in result.stdout, "a dry run connects nothing"
    assert result.returncode == 0, result.stderr
    first, *rest = result.stdout.splitlines()
    assert first == f"claude-desktop: would write {user.config}:"
    code_at = rest.index("claude-code: would run:")
    printed = "\n".join(rest[:code_at]) + "\n"
    assert rest[code_at + 1].strip().startswith(f"{user.env['PATH'].split(':')[0]}/claude mcp add-json --scope user")
    assert user.config.read_bytes() == original and cc.list_backups(user.config) == []
    assert not state.exists() and claude_calls(calls) == [], "nothing run, nothing written"
    assert user.call("connect").returncode == 0
    assert user.config.read_text("utf-8") == printed  # exactly what the dry run showed


def test_connect_refuses_a_foreign_entry_until_replace(user, cli_env):
    original = user.install_desktop(json.dumps({"mcpServers": {"cowork-terminal": FOREIGN_ENTRY}}))
    refused = user.call("connect")
    assert refused.returncode == 1
    assert "cowork-terminal: claude-desktop:" in refused.stderr and "--replace" in refused.stderr
    assert "cowork-terminal-mcp" in refused.stderr
    assert user.config.read_bytes() == original
    replaced = user.call("connect", "--replace")
    assert replaced.returncode == 0, replaced.stderr
    assert "replaced the foreign entry" in replaced.stdout
    assert user.entry() == expected_entry(cli_env)
    [backup] = cc.list_backups(user.config)
    assert backup.read_bytes() == original


def test_an_invalid_config_fails_its_client_but_not_the_others(user, cli_env):
    original = user.install_desktop('{\n  "mcpServers": {\n    "a": {"command": "a"}\n    "b": {}\n  }\n}')
    _, state, _ = user.install_claude_code()
    result = user.call("connect")
    assert result.returncode == 2
    assert "line 4, column 5" in result.stderr and "Nothing was changed" in result.stderr
    assert user.config.read_bytes() == original
    assert "claude-code: connected" in result.stdout and "cowork-terminal" in user_servers(state)


def test_a_read_only_config_is_refused_with_advice(user):
    original = user.install_desktop(json.dumps({"mcpServers": {}}))
    user.config.chmod(0o444)
    result = user.call("connect")
    assert result.returncode == 1 and "read-only" in result.stderr
    assert user.config.read_bytes() == original


def test_headless_is_carried_in_args_and_switching_back_needs_no_replace(user, cli_env):
    user.install_desktop()
    assert user.call("connect", "--headless").returncode == 0
    assert user.entry() == expected_entry(cli_env, "--headless")
    switched = user.call("connect")
    assert switched.returncode == 0, switched.stderr
    assert "replaced the changed entry" in switched.stdout
    assert user.entry() == expected_entry(cli_env)


def test_an_unknown_client_id_is_a_usage_error(user):
    result = user.call("connect", "--client", "claude-web")
    assert result.returncode == 2 and "invalid choice" in result.stderr


def test_the_store_client_is_refused_off_windows(user):
    result = user.call("connect", "--client", "claude-desktop-store")
    assert result.returncode == 2 and "does not exist on this platform" in result.stderr


# --- disconnect ---------------------------------------------------------------------------------------


def test_disconnect_removes_our_entry_from_each_client_and_nothing_else(user):
    user.install_desktop(json.dumps(RICH_CONFIG))
    _, state, _ = user.install_claude_code({"other": FOREIGN_ENTRY})
    assert user.call("connect").returncode == 0
    result = user.call("disconnect")
    assert result.returncode == 0, result.stderr
    assert f"claude-desktop: disconnected ({user.config})" in result.stdout
    assert "claude-code: disconnected" in result.stdout
    assert json.loads(user.config.read_text("utf-8")) == RICH_CONFIG
    assert user_servers(state) == {"other": FOREIGN_ENTRY}
    again = user.call("disconnect", "--client", "claude-desktop")
    assert "not connected, nothing to remove" in again.stdout


def test_disconnect_dry_run_changes_nothing(user):
    user.install_desktop()
    assert user.call("connect").returncode == 0
    before = user.config.read_bytes()
    result = user.run("disconnect", "--dry-run")  # as a user runs it
    assert result.returncode == 0 and "would write" in result.stdout
    assert user.config.read_bytes() == before


# --- restart-claude ---------------------------------------------------------------------------------------


def test_restart_claude_on_linux_says_to_restart_by_hand(user):
    result = user.run("restart-claude")
    assert result.returncode == 2 and "by hand" in result.stderr


def fake_tools(folder: Path, running_polls: int) -> Path:
    """osascript, pgrep (reports Claude running `running_polls` times) and open, recording argv."""
    folder.mkdir()
    log = folder / "argv.log"
    for name, body in {
        "osascript": "exit 0",
        "pgrep": f'n=$(grep -c "^pgrep" "{log}"); [ "$n" -le {running_polls} ] && exit 0 || exit 1',
        "open": "exit 0",
    }.items():
        tool = folder / name
        tool.write_text(f'#!/bin/sh\necho "{name} $*" >> "{log}"\n{body}\n')
        tool.chmod(0o755)
    return log


def test_restart_claude_quits_waits_until_gone_and_starts_again(tmp_path, monkeypatch):
    log = fake_tools(tmp_path / "tools", running_polls=2)
    monkeypatch.setenv("PATH", f"{tmp_path / 'tools'}:{SYSTEM_PATH}")
    monkeypatch.setattr(client_commands, "RESTART_POLL_S", 0.01)
    client_commands.restart_claude(
        ["osascript", "-e", 'quit app "Claude"'], ["pgrep", "-x", "Claude"], ["open", "-a", "Claude"]
    )
    for _ in range(200):  # `open` is started detached: give it a moment to write its line
        if "open" in log.read_text():
            break
        subprocess.run(["sleep", "0.01"])
    assert log.read_text().splitlines() == [
        "osascript -e quit app \"Claude\"", "pgrep -x Claude", "pgrep -x Claude", "pgrep -x Claude",
        "open -a Claude",
    ]  # fmt: skip


def test_restart_claude_gives_up_when_claude_does_not_quit(tmp_path, monkeypatch):
    log = fake_tools(tmp_path / "tools", running_polls=10_000)
    monkeypatch.setenv("PATH", f"{tmp_path / 'tools'}:{SYSTEM_PATH}")
    monkeypatch.setattr(client_commands, "RESTART_POLL_S", 0.01)
    with pytest.raises(CoworkError, match="did not quit within 0.2 s"):
        client_commands.restart_claude(["osascript"], ["pgrep"], ["open"], wait_s=0.2)
    assert "open" not in log.read_text()


def test_restart_claude_reports_a_missing_tool(tmp_path):
    with pytest.raises(CoworkError, match="could not restart Claude"):
        client_commands.restart_claude([str(tmp_path / "missing")], ["true"], ["true"])


# --- end to end --------------------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_connected_entry_starts_a_server_that_runs_echo_ok(user, mode):
    """Connect a Linux community-build config with the CLI, read the entry back and start exactly
    that command, as Claude Desktop would, with the SDK's own stdio client."""
    user.install_desktop(json.dumps({"mcpServers": OTHER_SERVERS}))
    result = user.run("connect", "--headless")
    assert result.returncode == 0, result.stderr
    assert "run only while" not in result.stdout, "a headless server needs no tray"
    entry = user.entry()
    assert Path(entry["command"]).is_absolute() and "--headless" in entry["args"]
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=entry.get("env"))
    async with Client(params, mode=mode) as client:
        reply = await client.call_tool("execute_command", {"command": "echo ok"})
    assert not reply.is_error, reply.content
    assert reply.structured_content["stdout"] == "ok\n" and reply.structured_content["exitCode"] == 0


def test_the_restart_hint_names_restart_claude_only_where_it_works():
    assert "restart-claude" in client_commands.restart_reminder("darwin", ["claude-desktop"])
    assert "restart-claude" in client_commands.restart_reminder("win32", ["claude-desktop-store"])
    assert "restart-claude" not in client_commands.restart_reminder("linux", ["claude-desktop"])
    assert "restart-claude" not in client_commands.restart_reminder("darwin", ["claude-code"])


def test_the_readmes_claude_code_line_is_connected_not_an_older_install(user, cli_env):
    """The README says `.venv/bin/python -I -m app serve`; the app writes `.venv/bin/python3`: one
    interpreter under two names, so the entry is ours as it stands (it used to read "stale")."""
    claude, _, _ = user.install_claude_code()
    folder = Path(sys.executable).parent
    other_name = "python3" if Path(sys.executable).name == "python" else "python"
    readme_python = folder / other_name
    assert readme_python.exists() and os.path.abspath(readme_python) != os.path.abspath(sys.executable)
    user.env.pop("COWORK_TERMINAL_HOME")  # as the README's reader has it: the default data folder
    server = [str(readme_python), "-I", "-m", "app", "serve"]
    readme_line = ["mcp", "add", "--scope", "user", "cowork-terminal", "--", *server]
    added = subprocess.run(
        [str(claude), *readme_line], env=user.env, capture_output=True, text=True, timeout=CLI_TIMEOUT_S
    )
    assert added.returncode == 0, added.stderr
    listed = user.call("clients")
    assert listed.returncode == 0, listed.stderr
    [code_line] = [line for line in listed.stdout.splitlines() if line.startswith("claude-code ")]
    assert "connected" in code_line and "stale" not in code_line, listed.stdout
    assert "needs an update" not in code_line and "settings were added" not in code_line, listed.stdout
    connected = user.call("connect", "--client", "claude-code")
    assert connected.returncode == 0, connected.stderr


def test_another_venvs_python_is_still_another_install() -> None:
    from app.core.install.installation import same_program

    def resolve(path: str) -> str:
        return "/usr/bin/python3.12"  # every venv's python leads to the system's

    assert same_program("/home/ana/ct/.venv/bin/python", "/home/ana/ct/.venv/bin/python3", resolve)
    assert not same_program("/home/ana/old/.venv/bin/python3", "/home/ana/ct/.venv/bin/python3", resolve)


# --- an entry of ours with settings added (issue 21) ------------------------------------------------


@pytest.mark.parametrize(
    ("added", "named"),
    [
        ({"env": {"PYTHONPATH": "/tmp/planted"}}, "env PYTHONPATH"),
        ({"env": {"LD_PRELOAD": "/tmp/planted.so"}}, "env LD_PRELOAD"),
        ({"args_after_serve": ["--planted"]}, "argument --planted"),
    ],
)
def test_our_entry_with_an_env_block_or_an_extra_argument_is_not_connected_and_connect_repairs_it(
    user, cli_env, added, named
):
    entry = expected_entry(cli_env)
    entry["args"] = entry["args"] + added.get("args_after_serve", [])
    entry["env"] = {**entry["env"], "COWORK_TERMINAL_BASH": "/bin/bash", **added.get("env", {})}
    user.install_desktop(json.dumps({"mcpServers": {"cowork-terminal": entry}}))
    listed = user.call("clients")
    assert listed.returncode == 0, listed.stderr
    assert "not connected (settings added)" in listed.stdout.splitlines()[1], listed.stdout
    checked = user.call("check", "--client", "claude-desktop")
    assert checked.returncode == 1
    assert "claude-desktop: altered-entry:" in checked.stdout and named in checked.stdout, checked.stdout
    repaired = user.call("connect")
    assert repaired.returncode == 0, repaired.stderr
    assert "replaced the entry with added settings" in repaired.stdout
    assert user.entry() == expected_entry(cli_env), "only what the app writes: COWORK_TERMINAL_BASH goes too"
    assert "connected" in user.call("clients").stdout.splitlines()[1].split()
