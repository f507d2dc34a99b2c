"""A fake desktop for the tray's tests: a home with a Claude Desktop folder, and small stand-in programs.

The stand-ins (`claude`, `xdg-open`, `notify-send`, `gdbus`) are real executables on PATH (and named
in COWORK_TERMINAL_PROGRAMS, where the app looks for all but `claude`) that record how
they were called, so the tray's own code runs unchanged: it finds them, starts them, reads them.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp.client.stdio import StdioServerParameters

from app.core.system_programs import PROGRAMS_ENV
from tests.fake_claude import install_fake_claude
from tests.stdio_client import server_params

# `xdg-open` and `notify-send`: write their arguments to calls.log and exit.
RECORDER = """#!{python}
import json, pathlib, sys
with open(pathlib.Path(__file__).parent / "calls.log", "a") as log:
    log.write(json.dumps([pathlib.Path(sys.argv[0]).name, *sys.argv[1:]]) + "\\n")
"""


@dataclass
class FakeDesktop:
    home: Path  # the user's home folder ($HOME)
    config_home: Path  # $XDG_CONFIG_HOME
    bin: Path  # the stand-in programs, first on PATH

    @property
    def desktop_config(self) -> Path:
        return self.config_home / "Claude" / "claude_desktop_config.json"

    @property
    def claude_code_file(self) -> Path:
        """Claude Code's own file, where the stand-in `claude` keeps its user-scope servers."""
        return self.home / ".claude.json"

    @property
    def autostart_file(self) -> Path:
        return self.config_home / "autostart" / "cowork-terminal.desktop"

    def calls(self, program: str | None = None) -> list[list[str]]:
        log = self.bin / "calls.log"
        if not log.exists():
            return []
        calls = [json.loads(line) for line in log.read_text().splitlines()]
        return [c for c in calls if program is None or c[0] == program]

    def delay_claude(self, seconds: float | None) -> None:
        """Make each later `claude` call take `seconds` (after it is logged); None: answer at once again."""
        delay = self.bin / "claude-delay-s"
        if seconds is None:
            delay.unlink(missing_ok=True)
        else:
            delay.write_text(str(seconds))

    def read_desktop_config(self) -> dict[str, Any]:
        return json.loads(self.desktop_config.read_text())

    def add_program(self, name: str, source: str) -> None:
        path = self.bin / name
        path.write_text(source.format(python=sys.executable))
        path.chmod(path.stat().st_mode | stat.S_IXUSR)


def make_fake_desktop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, claude_desktop: bool = True, claude_code: bool = False
) -> FakeDesktop:
    """A home where Claude Desktop is "installed" (its config folder exists), optionally a `claude`
    CLI, plus recording `xdg-open` and `notify-send`; everything goes through the environment."""
    desktop = FakeDesktop(tmp_path / "user-home", tmp_path / "user-home" / ".config", tmp_path / "fake-bin")
    for folder in (desktop.home, desktop.config_home, desktop.bin):
        folder.mkdir(parents=True, exist_ok=True)
    if claude_desktop:
        desktop.desktop_config.parent.mkdir(parents=True)
    if claude_code:
        install_fake_claude(desktop.bin)
    desktop.add_program("xdg-open", RECORDER)
    desktop.add_program("gdbus", RECORDER)  # a file manager answers on the session bus
    desktop.add_program("notify-send", RECORDER)
    monkeypatch.setenv("HOME", str(desktop.home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(desktop.config_home))
    # Only system folders after ours: a real `claude` elsewhere on this machine must not be found.
    monkeypatch.setenv("PATH", os.pathsep.join([str(desktop.bin), "/usr/bin", "/bin"]))
    # xdg-open and notify-send are never taken from PATH (core/system_programs.py): named here instead.
    monkeypatch.setenv(PROGRAMS_ENV, str(desktop.bin))
    monkeypatch.delenv("COWORK_TERMINAL_BASH", raising=False)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)  # Claude Code's file is the home folder's
    return desktop


def serve_params(app_home: Path, *, headless: bool, env: dict[str, str] | None = None) -> StdioServerParameters:
    """`python -m app serve` as Claude starts it, pointed at the test's app home."""
    return server_params(app_home, *(["--headless"] if headless else []), env=env)


def wait_for(condition: Callable[[], Any], timeout_s: float = 10.0, interval_s: float = 0.02) -> Any:
    """Poll `condition` until it returns something truthy; fail the test on timeout."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout_s} s")
        time.sleep(interval_s)


def pump_until(root: Any, condition: Callable[[], Any], timeout_s: float = 10.0) -> None:
    """`wait_for` for a Tk window built in the test's process: its events run while it waits."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "the window did not get there in time"
        root.update()
        time.sleep(0.02)
