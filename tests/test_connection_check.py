"""The "Check connection" action: each named outcome, produced by really starting the entry's command."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from desktop_env import FakeDesktop, make_fake_desktop, wait_for

from app.cli.main import main
from app.core.claude import config as cc
from app.core.claude import locations as cl
from app.core.execution.bash_resolver import BASH_PATH_ENV
from app.core.journal.store import Journal
from app.core.paths import AppPaths
from app.server import connection_check as check
from tests.fake_claude import write_user_servers
from tests.tray_process import running_tray


@pytest.fixture
def desktop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path) -> FakeDesktop:
    return make_fake_desktop(tmp_path, monkeypatch)


@pytest.fixture
def tray_without_bash(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[subprocess.Popen]:
    """The tray runs the commands (issue 21), so the bash that is missing is the tray's."""
    monkeypatch.setenv(BASH_PATH_ENV, "/nonexistent/bash")
    with running_tray(home) as process:
        yield process


def desktop_location() -> cl.ClientLocation:
    platform, environ, home = cl.this_machine()
    locations = cl.locate_clients(platform, environ, home, cl.real_exists)
    return next(loc for loc in locations if loc.client_id == cl.CLAUDE_DESKTOP)


def write_entry(desktop: FakeDesktop, entry: object) -> None:
    desktop.desktop_config.write_text(json.dumps({"mcpServers": {"cowork-terminal": entry}}))


def test_no_entry_is_reported_without_starting_anything(desktop: FakeDesktop) -> None:
    desktop.desktop_config.write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}}))
    result = check.check_client(desktop_location(), cc.this_app_entry())
    assert result.kind == check.NO_ENTRY
    assert "has no 'cowork-terminal' entry" in result.message and "Connect to Claude" in result.message


def test_a_stale_entry_from_an_older_install_is_named_as_such(desktop: FakeDesktop) -> None:
    old = {"command": "/opt/old/cowork-terminal", "args": ["serve"]}
    write_entry(desktop, old)
    result = check.check_client(desktop_location(), cc.this_app_entry())
    assert result.kind == check.STALE_ENTRY and result.entry == old
    assert "stale" in result.message and "/opt/old/cowork-terminal" in result.message
    assert "no longer exists" in result.message


def test_another_programs_entry_is_named_as_such(desktop: FakeDesktop) -> None:
    write_entry(desktop, {"command": "npx", "args": ["-y", "cowork-terminal-mcp"]})
    result = check.check_client(desktop_location(), cc.this_app_entry())
    assert result.kind == check.FOREIGN_ENTRY and "npx" in result.message


def test_an_unreadable_config_is_reported_with_its_line(desktop: FakeDesktop) -> None:
    desktop.desktop_config.write_text('{"mcpServers": {,}}')
    result = check.check_client(desktop_location(), cc.this_app_entry())
    assert result.kind == check.CONFIG_UNREADABLE and "line 1" in result.message


def test_a_server_that_crashes_at_start_is_reported_with_its_stderr(desktop: FakeDesktop) -> None:
    broken = cc.this_app_entry(["--tools", "no-such-set"])  # this app, with a value `serve` rejects at start
    write_entry(desktop, broken)
    result = check.check_client(desktop_location(), cc.this_app_entry())
    assert result.kind == check.CRASHED_AT_START, result
    assert "invalid choice: 'no-such-set'" in result.stderr
    assert "stopped at start" in result.message and "no-such-set" in result.message


def test_a_command_that_cannot_be_started_is_named(tmp_path: Path) -> None:
    missing = {"command": str(tmp_path / "gone" / "cowork-terminal"), "args": ["serve"]}
    result = check.check_entry("claude-desktop", "Claude Desktop", missing, missing)
    assert result.kind == check.COMMAND_NOT_FOUND
    assert "cannot be run: No such file or directory" in result.message


def test_a_missing_bash_is_reported_as_such(
    desktop: FakeDesktop, paths: AppPaths, tray_without_bash: subprocess.Popen
) -> None:
    write_entry(desktop, cc.this_app_entry())
    result = check.check_client(desktop_location(), cc.this_app_entry())
    assert result.kind == check.BASH_NOT_FOUND, result
    assert "/nonexistent/bash" in result.message


def test_a_good_entry_starts_the_server_and_runs_echo_ok_and_no_tray_or_a_pause_is_said_as_the_server_answers(
    desktop: FakeDesktop, paths: AppPaths, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same entry checked before the app starts, while it runs and once the user paused it (one
    tray for both of its outcomes)."""
    cc.connect_client(desktop_location(), cc.this_app_entry())
    no_tray = check.check_client(desktop_location(), cc.this_app_entry())
    assert no_tray.kind == check.NO_TRAY, no_tray
    assert "app is not running" in no_tray.message

    def states() -> list[str]:  # the tray ends its runner for that server once it has seen it go
        with Journal(paths) as journal:
            return [server.state for server in journal.servers(live_only=False)]

    with running_tray(home):  # the checked server binds to it and obeys it
        result = check.check_client(desktop_location(), cc.this_app_entry())
        assert result.ok, result
        assert result.message == "Claude Desktop's entry works: the server it starts ran `echo ok`."
        with Journal(paths) as journal:
            ran = journal.recent_commands(limit=1)[0]
            assert (ran.command, ran.client_name) == ("echo ok", "cowork-terminal-check"), "the check shows in the log"
        wait_for(lambda: states() and set(states()) == {"exited"})  # the checked servers exit cleanly

        assert main(["pause"]) == 0  # the CLI's own entry, here in this process, asks the tray
        assert "PAUSED" in capsys.readouterr().out
        paused = check.check_client(desktop_location(), cc.this_app_entry())
    assert paused.kind == check.PAUSED and "host access is paused" in paused.message


def test_claude_codes_entry_is_read_from_its_own_file_without_running_its_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path
) -> None:
    desktop = make_fake_desktop(tmp_path, monkeypatch, claude_code=True)
    [location] = [loc for loc in cl.clients_here()[1] if loc.client_id == cl.CLAUDE_CODE]
    assert location.servers_file == desktop.claude_code_file
    write_user_servers(desktop.claude_code_file, {"github": {"command": "npx", "args": ["github-mcp"]}})
    result = check.check_client(location, cc.this_app_entry())
    assert result.kind == check.NO_ENTRY and "Claude Code has no" in result.message
    desktop.claude_code_file.write_text("{")
    broken = check.check_client(location, cc.this_app_entry())
    assert str(desktop.claude_code_file) in broken.message, broken
    assert desktop.calls("claude") == []


def test_the_check_command_prints_one_line_per_client_and_fails_when_one_fails(
    desktop: FakeDesktop, cli_env: dict[str, str]
) -> None:
    write_entry(desktop, {"command": "/opt/old/cowork-terminal", "args": ["serve"]})
    cli_env.update({"HOME": str(desktop.home), "XDG_CONFIG_HOME": str(desktop.config_home)})
    done = subprocess.run(
        [sys.executable, "-m", "app", "check", "--client", "claude-desktop", "--json"],
        env=cli_env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert (report["client"], report["ok"], report["kind"]) == ("claude-desktop", False, check.STALE_ENTRY)


def test_a_missing_bash_is_explained_to_a_russian_user_in_russian(
    desktop: FakeDesktop, paths: AppPaths, tray_without_bash: subprocess.Popen
) -> None:
    """The server answers in English (the model's words); the check says it again in the user's language.
    Here the tray's bash is missing, named in the environment the tray and the check share (an entry
    that names it has settings Cowork Terminal did not write: not connected, issue 21)."""
    from app.core import i18n

    write_entry(desktop, cc.this_app_entry())
    i18n.use_language("ru")
    try:
        result = check.check_client(desktop_location(), cc.this_app_entry())
    finally:
        i18n.use_language("en")
    assert result.kind == check.BASH_NOT_FOUND, result
    assert f"{BASH_PATH_ENV} указывает на «/nonexistent/bash», но там нет файла" in result.message
    assert "no file exists there" not in result.message


def test_an_entry_that_is_not_run_is_judged_without_loading_the_mcp_sdk() -> None:
    """A missing, stale, foreign or altered entry is answered at once: the SDK (about 0.7 s of CPU to
    import) is loaded only to run an entry, as `check` and the tray's "Check connection" do."""
    code = (
        "import json, sys\n"
        "from app.core.claude import config as cc\n"
        "from app.server import connection_check as check\n"
        "wanted = cc.this_app_entry()\n"
        "entries = [None, {'command': '/old/install/cowork-terminal', 'args': ['serve']},\n"
        "           {'command': 'npx', 'args': ['other']}, {**wanted, 'env': {'PYTHONPATH': '/planted'}}]\n"
        "kinds = [check.check_entry('claude-desktop', 'Claude Desktop', e, wanted).kind for e in entries]\n"
        "print(json.dumps([kinds, sorted({m.split('.')[0] for m in sys.modules})]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    kinds, modules = json.loads(done.stdout.splitlines()[-1])
    assert kinds == [check.NO_ENTRY, check.STALE_ENTRY, check.FOREIGN_ENTRY, check.ALTERED_ENTRY]
    assert "mcp" not in modules and "mcp_types" not in modules
