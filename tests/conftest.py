"""Shared fixtures: every test runs against its own COWORK_TERMINAL_HOME."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from app.core.paths import HOME_ENV, AppPaths


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh, private app home for this test, also exported to child processes."""
    folder = tmp_path / "cowork-home"
    monkeypatch.setenv(HOME_ENV, str(folder))
    return folder


@pytest.fixture
def paths(home: Path) -> AppPaths:
    return AppPaths.from_environment().ensure()


@pytest.fixture
def cli_env(home: Path) -> dict[str, str]:
    """Environment for a `cowork-terminal` child process pointed at the test's home."""
    env = dict(os.environ)
    env[HOME_ENV] = str(home)
    return env


PYTHON = sys.executable


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
