"""Shared fixtures: every test runs against its own COWORK_TERMINAL_HOME."""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from app.core import data_folder
from app.core.authority.hub import Hub
from app.core.paths import HOME_ENV, AppPaths
from tests.small_disk import small_tmpfs


@pytest.fixture(autouse=True)
def null_device_kept() -> Iterator[None]:
    """The suite runs as root in CI, where a command run outside a container can replace /dev/null by
    a file (it happened once, 2026-12-06: every later test that needed it failed apart from the cause).
    The test after which it is no longer the null device fails, and it is made again."""
    yield
    if sys.platform == "linux" and not _is_null_device():
        if os.geteuid() == 0:
            with contextlib.suppress(FileNotFoundError):
                os.unlink("/dev/null")
            os.mknod("/dev/null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
            os.chmod("/dev/null", 0o666)
        pytest.fail("this test left /dev/null replaced by something else than the null device")


def _is_null_device() -> bool:
    try:
        found = os.lstat("/dev/null")
    except OSError:
        return False
    return stat.S_ISCHR(found.st_mode) and found.st_rdev == os.makedev(1, 3)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh, private app home for this test, also exported to child processes."""
    folder = tmp_path / "cowork-home"
    monkeypatch.setenv(HOME_ENV, str(folder))
    return folder


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's home folder for this test (`tmp_path/user`), as HOME here and for child processes,
    with Python's user site read from it again (`site.USER_BASE`)."""
    import site

    folder = tmp_path / "user"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setattr(site, "USER_BASE", None)
    return folder


@pytest.fixture
def paths(home: Path) -> AppPaths:
    return data_folder.ensure(AppPaths.from_environment())


@pytest.fixture
def cli_env(home: Path) -> dict[str, str]:
    """Environment for a `cowork-terminal` child process pointed at the test's home."""
    env = dict(os.environ)
    env[HOME_ENV] = str(home)
    return env


PYTHON = sys.executable


@pytest.fixture
def hub(paths: AppPaths) -> Iterator[Hub]:
    """The tray's authority in this process, at the tray's real address for this test's home: it holds,
    decides, records and pauses the commands of a server bound to it (tests/in_process_server.py,
    `serving(home, bound=True)`). Only a pause and a stop from the CLI reach it: the CLI and
    `ask_tray` refuse a program at the tray's address that is not Cowork Terminal's, as pytest is.
    For what a held or paused command does; what only a tray process shows stays with
    tests/tray_process.py."""
    from tests.channel_peers import running_hub

    with running_hub(paths) as (made, _seen):
        yield made


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def shared_server(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> AsyncIterator[object]:
    """One headless `serve` (the SDK's client over stdio) shared by a module's tests whose calls do
    not depend on each other: a serve costs about a second of CPU to start, most of it `import mcp`.
    Its home is its own, not the test's `home`: a test that reads the journal starts its own serve.
    The handshake is `legacy` unless parametrized (indirect=True) with another of MODES. A module
    using it declares a module-scoped `anyio_backend` and marks those tests with one xdist_group,
    so they share one worker (and so this one server)."""
    from tests.stdio_client import connect

    mode = getattr(request, "param", "legacy")
    async with connect(tmp_path_factory.mktemp("shared-serve") / "cowork-home", mode) as client:
        yield client


@pytest.fixture(scope="session")
def display(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A private X display for the whole session (tests/xvfb.py); missing Xvfb fails loudly, since
    CI installs it."""
    from tests import xvfb

    try:
        process, name = xvfb.start(tmp_path_factory.mktemp("xvfb") / "xvfb.log")
    except xvfb.XvfbError as exc:
        pytest.fail(str(exc))
    previous = os.environ.get("DISPLAY")
    os.environ["DISPLAY"] = name
    try:
        yield name
    finally:
        if previous is None:
            os.environ.pop("DISPLAY", None)
        else:
            os.environ["DISPLAY"] = previous
        xvfb.stop(process)


@pytest.fixture(scope="session")
def wine(tmp_path_factory: pytest.TempPathFactory, display: str) -> Iterator[object]:
    """A Windows CPython under Wine with this checkout installed (tests/wine_env.py), for `-m wine`.

    Its services (the desktop and Wine's tray window among them) run for the whole session, on
    the session's X display, as on a Windows desktop (WineEnv.keep_running).

    A missing Wine or shared/wine folder fails the lane with what to install, never skips it.
    """
    from tests import wine_env

    log: list[str] = []
    try:
        env = wine_env.session_prefix(tmp_path_factory.mktemp("wine") / "prefix", log)
    except wine_env.WineSetupError as exc:
        pytest.fail(str(exc))
    print("wine lane setup:", "; ".join(log))
    try:
        env.keep_running()
        yield env
    finally:
        env.stop()


@pytest.fixture
def no_container(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """bwrap missing: the weaker mode, where commands run without the OS container."""
    from app.core.execution import container

    monkeypatch.setenv(container.BWRAP_ENV, str(home / "no-bwrap"))


@pytest.fixture
def weaker_mode(paths: AppPaths, no_container: None) -> None:
    """No container, and the user's earlier choice never to be asked: an agent's job starts unheld."""
    from tests.test_container import never_ask

    never_ask(paths)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs of the test's own (small_tmpfs)."""
    with small_tmpfs(tmp_path / "small-disk") as mount_point:
        yield mount_point
