"""The tray app in the test's own process (pystray's dummy backend, on the test's display and fake
desktop), for tests of what its windows are told: import `in_process_tray`, the fixture `tray`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core import liveness
from app.core.paths import AppPaths
from app.ui.tray import platforms as tray_platform
from app.ui.tray.app import TrayApp
from tests.desktop_env import make_fake_desktop


@pytest.fixture(name="tray")
def in_process_tray(
    paths: AppPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path, display: str
) -> Iterator[TrayApp]:
    make_fake_desktop(tmp_path, monkeypatch)
    monkeypatch.setenv("PYSTRAY_BACKEND", "dummy")
    app = TrayApp(paths, liveness.try_hold(paths.tray_lock), tray_platform.load_pystray())
    app.start()
    assert app.settle()
    yield app
    app.shutdown()
