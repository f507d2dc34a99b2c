"""repair_stale_entries against a fake home: real config files, a real autostart entry, a fake `claude`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.claude import config as cc
from app.core.install import autostart
from app.core.install.stale_entries import ALTERED, MISSING, OTHER_COPY, repair_stale_entries
from tests.fake_claude import claude_calls, install_fake_claude, write_user_servers

THIS_COPY = "/home/ann/Applications/cowork-terminal/cowork-terminal"  # the .tar.gz the tray runs from
DEB_COPY = "/opt/cowork-terminal/cowork-terminal"
FOREIGN_ENTRY = {"command": "npx", "args": ["-y", "cowork-terminal-mcp"]}


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    home = tmp_path / "home"
    claude = install_fake_claude(tmp_path / "bin")
    environ = {"XDG_CONFIG_HOME": str(home / ".config"), "PATH": f"{claude.parent}:/usr/bin:/bin"}
    monkeypatch.setenv("HOME", str(home))  # where the stand-in `claude` keeps Claude Code's file
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    state = home / ".claude.json"
    config = home / ".config" / "Claude" / "claude_desktop_config.json"
    config.parent.mkdir(parents=True)
    return home, environ, config, state


def repair(machine, exists) -> list:
    home, environ, _, _ = machine
    return repair_stale_entries(
        frozen=True, executable=THIS_COPY, platform="linux", environ=environ, home=home, exists=exists
    )


def test_entries_of_another_existing_copy_are_pointed_at_this_one_and_say_so(machine) -> None:
    home, environ, config, state = machine
    config.write_text(json.dumps({"mcpServers": {"cowork-terminal": {"command": DEB_COPY, "args": ["serve"]}}}))
    write_user_servers(state, {"cowork-terminal": {"command": DEB_COPY, "args": ["serve", "--headless"]}})
    autostart.enable("linux", environ, home, command=[DEB_COPY, "tray"])

    repairs = repair(machine, exists=lambda path: path == DEB_COPY)

    assert [(r.what, r.why) for r in repairs] == [
        ("Start at login", OTHER_COPY), ("Claude Desktop", OTHER_COPY), ("Claude Code", OTHER_COPY),
    ]  # fmt: skip
    assert cc.claude_code_entry(state) == {"command": DEB_COPY, "args": ["serve", "--headless"]}, "told, not rewritten"
    assert autostart.read_command("linux", environ, home) == [THIS_COPY, "tray"]
    assert json.loads(config.read_text())["mcpServers"]["cowork-terminal"] == {"command": THIS_COPY, "args": ["serve"]}
    assert repairs[0].title == "Start at login updated"
    assert repairs[0].notice == (
        f"Start at login started {DEB_COPY} (another copy of Cowork Terminal); it now starts this copy, {THIS_COPY}."
    )
    assert "The previous file is kept as" in repairs[1].notice


def test_claude_codes_entry_of_another_copy_is_told_and_its_program_is_not_run_without_a_click(machine) -> None:
    """Only Claude Code's CLI writes its file, and `claude` lives where commands can write (issue 21):
    the tray's start runs it for nobody; the user connects Claude Code again."""
    home, _environ, _config, state = machine
    write_user_servers(state, {"cowork-terminal": {"command": DEB_COPY, "args": ["serve", "--headless"]}})
    before = state.read_bytes()

    [told] = repair(machine, exists=lambda path: path == DEB_COPY)
    [gone] = repair(machine, exists=lambda path: False)

    assert claude_calls(home.parent / "bin") == []
    assert state.read_bytes() == before
    assert (told.what, told.why, told.title) == ("Claude Code", OTHER_COPY, "Claude Code starts another copy")
    assert told.notice == (
        f"Claude Code starts {DEB_COPY}, another copy of Cowork Terminal. "
        f"Connect Claude Code again to start this copy, {THIS_COPY}."
    )
    assert gone.notice == (
        f"Claude Code starts {DEB_COPY}, which no longer exists. "
        f"Connect Claude Code again to start this copy, {THIS_COPY}."
    )


def test_a_missing_program_is_named_as_such(machine) -> None:
    home, environ, config, _ = machine
    autostart.enable("linux", environ, home, command=[DEB_COPY, "tray"])
    [fixed] = repair(machine, exists=lambda path: False)
    assert fixed.why == MISSING and "which no longer exists" in fixed.notice


def test_another_programs_entry_and_entries_of_this_copy_are_left_alone(machine) -> None:
    home, environ, config, state = machine
    config.write_text(json.dumps({"mcpServers": {"cowork-terminal": FOREIGN_ENTRY}}))
    write_user_servers(state, {"cowork-terminal": {"command": THIS_COPY, "args": ["serve"]}})
    autostart.enable("linux", environ, home, command=[THIS_COPY, "tray"])
    before = (config.read_bytes(), state.read_bytes())
    assert repair(machine, exists=lambda path: True) == []
    assert (config.read_bytes(), state.read_bytes()) == before
    assert cc.list_backups(config) == []


@pytest.mark.parametrize(
    "command",
    [["env", "PYTHONPATH=/tmp/planted", THIS_COPY, "tray"], [THIS_COPY, "tray", "--planted"]],
)
def test_a_start_at_login_entry_of_this_copy_with_settings_added_is_rewritten_and_says_so(machine, command) -> None:
    home, environ, _, _ = machine
    autostart.enable("linux", environ, home, command=command)
    [fixed] = repair(machine, exists=lambda path: True)
    assert fixed.why == ALTERED
    assert autostart.read_command("linux", environ, home) == [THIS_COPY, "tray"]
    added = "env PYTHONPATH=/tmp/planted" if command[0] == "env" else "argument --planted"
    assert fixed.notice == (
        f"Start at login started {command[0]} with settings Cowork Terminal did not write ({added}); "
        f"it now starts {THIS_COPY} without them."
    )
