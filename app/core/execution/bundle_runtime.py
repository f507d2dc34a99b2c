"""What the frozen app's own runtime changes in its environment, kept away from every program it starts.

PyInstaller's runtime hooks set variables for the bundle's copies of GTK, GLib and Tk before our
code runs: GTK_PATH, GI_TYPELIB_PATH, TCL_LIBRARY... (paths into the bundle), XDG_DATA_DIRS (the
bundle's folder and, when it was unset, /usr/local/share:/usr/share added), GDK_PIXBUF_MODULE_FILE
(a temporary file). A user's command must see none of them. So a runtime hook of ours, which runs
before PyInstaller's own (installer/runtime_hook_environment.py), remembers the environment as the
process got it, and the frozen entry (`settle`) notes what the other hooks changed; `launch_values`
then gives the value each changed variable had at launch (None: it was unset).

GDK_PIXBUF_MODULE_FILE's temporary file is deleted by an `atexit` handler, which never runs when a
window is killed: on Linux `settle` keeps it open, deletes it at once and points the variable at
`/proc/self/fd/N`, so the file vanishes with the process however it ends.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
from collections.abc import Mapping, MutableMapping

# Variables whose value a runtime hook writes to a temporary file it deletes only at a clean exit.
TEMPORARY_FILE_VARIABLES = ("GDK_PIXBUF_MODULE_FILE",)

_launch_environment: dict[str, str] | None = None
_changed: dict[str, str | None] = {}
_pinned_fds: list[int] = []


def remember_launch_environment(environ: Mapping[str, str]) -> None:
    """Called by our runtime hook, first of all: the environment before any hook touched it."""
    global _launch_environment
    _launch_environment = dict(environ)


def runtime_changes(before: Mapping[str, str], after: Mapping[str, str]) -> dict[str, str | None]:
    """{name: value at launch, or None} for each variable set or changed between `before` and `after`."""
    return {name: before.get(name) for name, value in after.items() if before.get(name) != value}


def pin_temporary_file(environ: MutableMapping[str, str], name: str) -> bool:
    """Linux: let the file `environ[name]` names live exactly as long as this process (see the docstring)."""
    path = environ.get(name)
    if not path or not os.path.isfile(path) or not os.path.isdir("/proc/self/fd"):
        return False
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False
    _pinned_fds.append(fd)
    with contextlib.suppress(OSError):
        os.unlink(path)
    atexit.unregister(os.unlink)  # the hook's own clean-up would now fail on the missing file
    environ[name] = f"/proc/self/fd/{fd}"
    return True


def settle(environ: MutableMapping[str, str] | None = None, platform: str = sys.platform) -> None:
    """Called by the frozen entry after every runtime hook ran, before the app starts."""
    environ = os.environ if environ is None else environ
    if _launch_environment is None:
        return  # not frozen, or built without our hook: nothing to tell apart
    _changed.update(runtime_changes(_launch_environment, environ))
    if platform.startswith("linux"):
        for name in TEMPORARY_FILE_VARIABLES:
            pin_temporary_file(environ, name)


def launch_values() -> dict[str, str | None]:
    """The variables the runtime changed in this process, each with its value at launch (None: unset)."""
    return dict(_changed)


def as_launched(environ: Mapping[str, str], values: Mapping[str, str | None]) -> dict[str, str]:
    """`environ` with each variable in `values` back to its value at launch (unset when None)."""
    env = dict(environ)
    for name, value in values.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def child_environment() -> dict[str, str] | None:
    """The environment for a program the app starts (one of its own windows too): as launched, or
    None (inherit ours) when the runtime changed nothing."""
    return as_launched(os.environ, _changed) if _changed else None
