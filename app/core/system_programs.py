"""The programs the app starts outside a command's container (bwrap itself, Perl for the container's
init, notify-send, xdg-open) come from folders no command can change.

Why: a command may write any folder of the user's, and one of those is often first on PATH: Ubuntu's
~/.profile puts ~/.local/bin ahead of /usr/bin, and Claude Code's installer makes that folder. A
`bwrap` a command planted there would start every later command with no container at all (and run
the planter's code outside first). So the system's own folders come first, then the PATH folders
the user cannot change (nor rename, through a parent they can write); a copy found only in a
changeable folder is not used.

`COWORK_TERMINAL_PROGRAMS` names folders searched before all of these (the tests' stand-ins for
notify-send and xdg-open). Like PATH, it comes from whoever starts the app: a command cannot change
the tray's environment (its autostart line, Claude's entries and the shell's start-up files are
protected, and the session bus and systemd's user manager are hidden from it).
"""

from __future__ import annotations

import os
import platform
import posixpath
import sys
from collections.abc import Callable, Mapping

PROGRAMS_ENV = "COWORK_TERMINAL_PROGRAMS"

# The operating system's folders, trusted whoever may write them (as root, anything can be written).
SYSTEM_FOLDERS: dict[str, tuple[str, ...]] = {
    "linux": ("/usr/bin", "/bin", "/usr/sbin", "/sbin", "/run/wrappers/bin", "/run/current-system/sw/bin"),
    "darwin": ("/usr/bin", "/bin", "/usr/sbin", "/sbin"),
}


def find(
    name: str,
    platform: str,
    environ: Mapping[str, str],
    is_executable: Callable[[str], bool],
    may_change: Callable[[str], bool],
) -> str | None:
    """Where `name` is on a POSIX system, or None: the override's folders, the system's, then the
    PATH folders `may_change` says the user cannot change. Not for Windows (no contained files there)."""
    system = SYSTEM_FOLDERS.get("linux" if platform.startswith("linux") else platform)
    if system is None:
        return None
    chosen = [f for f in environ.get(PROGRAMS_ENV, "").split(":") if posixpath.isabs(f)]
    chosen += system
    for folder in chosen:
        if is_executable(candidate := posixpath.join(folder, name)):
            return candidate
    for folder in environ.get("PATH", "").split(":"):
        if not posixpath.isabs(folder) or folder in chosen:
            continue  # an empty or relative entry is the current folder: often the agent's project
        if is_executable(candidate := posixpath.join(folder, name)) and not may_change(folder):
            return candidate
    return None


def trusted_path(path: str, platform: str, may_change: Callable[[str], bool]) -> str | None:
    """PATH for a command a person let out of its container (sudo, a protected file's change): the
    system's folders and those of `path` the user cannot change, in `path`'s order. None where the
    system's folders are not known (Windows: no command is let out there).

    Why: the prompt shows `sudo apt-get update`; a `sudo` a command planted in ~/.local/bin would
    have run, as the user's Allow, outside the container (red team, 2026-12-05)."""
    system = SYSTEM_FOLDERS.get("linux" if platform.startswith("linux") else platform)
    if system is None:
        return None
    kept = [f for f in path.split(":") if posixpath.isabs(f) and (f in system or not may_change(f))]
    return ":".join(dict.fromkeys([*kept, *system]))


def user_may_change(folder: str) -> bool:
    """Whether this user may write `folder` or one of its parents (and so rename it and make another)."""
    path = os.path.abspath(folder)
    while True:
        if os.access(path, os.W_OK):
            return True
        parent = os.path.dirname(path)
        if parent == path:
            return False
        path = parent


def _is_executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def answer_uname_now() -> None:
    """Have Python work out `platform.uname()`'s processor now, with only the system's folders on
    PATH: it runs `uname -p` found on PATH, once per process, and pystray's X backend (python-xlib)
    asks for it as it connects. A `uname` a command put in `~/.local/bin` ran in the tray."""
    folders = SYSTEM_FOLDERS.get("linux" if sys.platform.startswith("linux") else sys.platform)
    if folders is None:
        return
    saved = os.environ.get("PATH")
    os.environ["PATH"] = ":".join(folders)
    try:
        platform.uname().processor  # noqa: B018 - asked for its cached answer
    finally:
        if saved is None:
            del os.environ["PATH"]
        else:
            os.environ["PATH"] = saved


def system_program(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """`find` for this process (in `environ`, this process's by default): the absolute path to
    start `name` by, or None."""
    return find(name, sys.platform, os.environ if environ is None else environ, _is_executable, user_may_change)
