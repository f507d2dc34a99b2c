"""A real tray for tests: `python -m app tray` in its own process, reachable over its channel.

Without a display it runs pystray's `dummy` backend (the tray's threads, hub and channel all run;
windows it opens fail, which the tray reports); with the `display` fixture's Xvfb it runs the
`xorg` backend, so the approval prompt and confirm window it starts are real Tk windows.

A tray's first look rewrites start-at-login and Claude's entries that name another copy of the app
(core/install/stale_entries.py); every test's venv is another copy. So a tray started here never
sees the real user's home: HOME and the XDG folders that lie in it point to the test's own folder.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from app.core.channel.client import current_tray_state
from app.core.paths import HOME_ENV, AppPaths

TRAY_START_S = 20.0
TRAY_STOP_S = 10.0


def _real_homes() -> tuple[Path, ...]:
    """The real user's home as the suite found it: HOME's at import time, and the account's."""
    homes = {Path.home()}
    with contextlib.suppress(ImportError, KeyError):
        import pwd  # POSIX only

        homes.add(Path(pwd.getpwuid(os.getuid()).pw_dir))
    return tuple(homes)


REAL_HOMES = _real_homes()
XDG_FOLDERS = {"XDG_CONFIG_HOME": ".config", "XDG_DATA_HOME": ".local/share", "XDG_STATE_HOME": ".local/state",
               "XDG_CACHE_HOME": ".cache"}  # fmt: skip


def in_real_home(value: str | None, real_homes: Sequence[Path]) -> bool:
    """Whether a HOME or XDG value is (in) the real user's home; an unset HOME counts as the real one.
    A real home of `/` counts only as itself: every temporary folder lies below it."""
    if not value:
        return True
    path = Path(value).absolute()
    return any(path == real or (real != Path("/") and real in path.parents) for real in real_homes)


def isolated_desktop_env(env: Mapping[str, str], folder: Path, real_homes: Sequence[Path]) -> dict[str, str]:
    """`env` with HOME and the XDG folders moved to `folder` where they point into a real home.
    A test's fake desktop (tests/desktop_env.py: HOME in a temporary folder) is kept as it is."""
    isolated = dict(env)
    if in_real_home(env.get("HOME"), real_homes):
        isolated["HOME"] = str(folder)
    for name, default in XDG_FOLDERS.items():
        value = env.get(name)
        if (value and in_real_home(value, real_homes)) or (not value and isolated["HOME"] != env.get("HOME")):
            isolated[name] = str(Path(isolated["HOME"]) / default)
    return isolated


def desktop_home(home: Path) -> Path:
    """The user home a tray started by `running_tray(home)` sees, unless the test made a fake desktop.
    Next to the test's folder, not in it: a home inside the folder a command runs in changes how the
    classifier reads that command (`rm -rf build` there would come near the home)."""
    return home.parent.with_name(home.parent.name + "-desktop-home")


def connect_claude_desktop(env: Mapping[str, str], home: Path) -> None:
    """A returning user's desktop: Claude Desktop there (its config folder) with this app's entry for
    `home` in its config, so the tray starts as it does every day after the first, without the
    Welcome window (a Tk process of about 0.3 s of CPU in every test's tray). The tray's own tests
    of a first start (tests/test_tray.py, tests/test_welcome.py) make their own desktops."""
    from app.core.claude.config import connect_desktop, this_app_entry
    from app.core.claude.locations import desktop_config_path

    path = Path(desktop_config_path(sys.platform, env, Path(env["HOME"])))
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        connect_desktop(path, this_app_entry(environ={HOME_ENV: str(home)}))


@contextmanager
def running_tray(
    home: Path, *, display: str | None = None, log: Path | None = None, wrapper: Sequence[str] = ()
) -> Iterator[subprocess.Popen]:
    """The tray, started through `wrapper` when given (e.g. `setpriv` to run it without root's powers).
    In the home it makes for the tray (`desktop_home`), Claude Desktop is connected already; a test's
    own fake desktop is left as the test made it."""
    env = isolated_desktop_env(os.environ, desktop_home(home), REAL_HOMES)
    Path(env["HOME"]).mkdir(parents=True, exist_ok=True)
    if env["HOME"] != os.environ.get("HOME"):
        connect_claude_desktop(env, home)
    env[HOME_ENV] = str(home)
    env.pop("DISPLAY", None)
    if display:
        env["DISPLAY"] = display
        env["PYSTRAY_BACKEND"] = "xorg"
    else:
        env["PYSTRAY_BACKEND"] = "dummy"
    out = open(log or (home.parent / "tray.log"), "ab")  # noqa: SIM115 - closed below
    argv = [*wrapper, sys.executable, "-m", "app", "tray", "--verbose"]
    tray = subprocess.Popen(argv, env=env, stdout=out, stderr=out)
    try:
        wait_for_tray(home, tray, wrapper)
        yield tray
    finally:
        if tray.poll() is None:
            tray.terminate()
            try:
                tray.wait(TRAY_STOP_S)
            except subprocess.TimeoutExpired:
                tray.kill()
                tray.wait()
        out.close()


def wait_for_tray(home: Path, tray: subprocess.Popen, wrapper: Sequence[str] = ()) -> None:
    """The tray answers its channel. Asked through `wrapper` when given, as the tray's own peers are:
    a tray without root's powers cannot read a more powerful asker's pid namespace, and takes it for
    a process inside a command's container (core/channel/peer.py), as it should."""
    paths = AppPaths.from_environment({HOME_ENV: str(home)})
    deadline = time.monotonic() + TRAY_START_S
    while time.monotonic() < deadline:
        if tray.poll() is not None:
            raise AssertionError(f"the tray exited with code {tray.returncode} before it listened")
        if answers(paths, home, wrapper):
            return
        time.sleep(0.05)
    raise AssertionError(f"the tray did not answer on its channel within {TRAY_START_S:g} s")


def answers(paths: AppPaths, home: Path, wrapper: Sequence[str]) -> bool:
    if not wrapper:
        return current_tray_state(paths) is not None
    ask = (
        "import sys; from app.core.channel.client import current_tray_state as s; from app.core.paths import AppPaths;"
        " sys.exit(s(AppPaths.from_environment()) is None)"
    )
    env = {**os.environ, HOME_ENV: str(home)}
    return subprocess.run([*wrapper, sys.executable, "-c", ask], env=env, timeout=TRAY_START_S).returncode == 0
