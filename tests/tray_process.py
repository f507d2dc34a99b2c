"""A real tray for tests: `python -m app tray` in its own process, reachable over its channel.

Without a display it runs pystray's `dummy` backend (the tray's threads, hub and channel all run;
windows it opens fail, which the tray reports); with the `display` fixture's Xvfb it runs the
`xorg` backend, so the approval prompt and confirm window it starts are real Tk windows.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from app.core.channel.client import current_tray_state
from app.core.paths import HOME_ENV, AppPaths

TRAY_START_S = 20.0
TRAY_STOP_S = 10.0


@contextmanager
def running_tray(
    home: Path, *, display: str | None = None, log: Path | None = None, wrapper: Sequence[str] = ()
) -> Iterator[subprocess.Popen]:
    """The tray, started through `wrapper` when given (e.g. `setpriv` to run it without root's powers)."""
    env = dict(os.environ)
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
