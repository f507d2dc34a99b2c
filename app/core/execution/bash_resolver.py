"""Finds the one bash every command runs in: a pure choice over (platform, environment, file check).

Windows never trusts PATH: `C:\\Windows\\System32\\bash.exe` is the WSL launcher, and a command
handed to it runs in a Linux VM that cannot see Windows tools (the seed's v0.4.1 fix: "dotnet not
found" on machines where it plainly is). So Windows walks a fixed list of Git for Windows install
locations and fails loudly, naming each one, when none exists.

macOS and Linux prefer the system bash at a fixed path over PATH, so the shell does not change
when a user's PATH does. On macOS that is /bin/bash 3.2: old, but it runs one-shot commands,
pipelines and heredocs fine, and it is always there. A Homebrew bash is only used when asked for
through the override, or when no system bash exists (then PATH decides).

`COWORK_TERMINAL_BASH` overrides everything. An override that names no file is an error, not a
silent fall back: the user asked for a specific bash and should hear that they are not getting it.
"""

from __future__ import annotations

import ntpath
import os
import shutil
import sys
from collections.abc import Callable, Mapping

from app.core.errors import CoworkError
from app.core.i18n import _

BASH_PATH_ENV = "COWORK_TERMINAL_BASH"
GIT_FOR_WINDOWS_URL = "https://git-scm.com/download/win"

# Defaults for when Windows does not tell us (a stripped environment, e.g. a service).
DEFAULT_PROGRAM_FILES = "C:\\Program Files"
DEFAULT_PROGRAM_FILES_X86 = "C:\\Program Files (x86)"

# Fixed system paths, most conventional first. /bin/bash leads: present on macOS and nearly every
# Linux (on merged-/usr systems it is the same file as /usr/bin/bash).
POSIX_BASH_PATHS = (
    "/bin/bash",
    "/usr/bin/bash",
    "/usr/local/bin/bash",
    "/opt/homebrew/bin/bash",
)


OVERRIDE_MISSING, GIT_BASH_MISSING, BASH_MISSING = "override-missing", "git-bash-missing", "bash-missing"


class BashNotFoundError(CoworkError):
    """No usable bash: the message names every place checked and what to do about it. The message
    is English (a server answers the model with it); `for_person` says it in the user's language."""

    def __init__(self, message: str, checked: list[str], kind: str = BASH_MISSING) -> None:
        super().__init__(message)
        self.checked = checked
        self.kind = kind

    def for_person(self) -> str:
        if self.kind == OVERRIDE_MISSING:
            return _(
                '{variable} is set to "{path}", but no file exists there. Point it at a bash program, or '
                "remove the setting to search the usual places."
            ).format(variable=BASH_PATH_ENV, path=self.checked[0])
        places = "\n".join(f"  {path}" for path in self.checked if path != "PATH")
        if self.kind == GIT_BASH_MISSING:
            return _(
                "Git Bash was not found. Checked:\n{places}\nInstall Git for Windows from {url} or set {variable} "
                "to the full path of bash.exe. (The bash.exe in System32 is not used: it starts WSL.)"
            ).format(places=places, url=GIT_FOR_WINDOWS_URL, variable=BASH_PATH_ENV)
        return _(
            "bash was not found. Checked:\n{places}\nand every folder on PATH. Install bash, or set {variable} "
            "to the full path of a bash program."
        ).format(places=places, variable=BASH_PATH_ENV)


def _is_windows(platform: str) -> bool:
    return platform == "win32"


def _getenv(environ: Mapping[str, str], name: str, platform: str) -> str | None:
    """Read a variable; case-insensitively on Windows, where `ProgramFiles` == `PROGRAMFILES`."""
    if not _is_windows(platform):
        return environ.get(name)
    wanted = name.upper()
    for key, value in environ.items():
        if key.upper() == wanted:
            return value
    return None


def _override(environ: Mapping[str, str], platform: str) -> str | None:
    """The user's override, tidied: whitespace and the quotes Windows' "Copy as path" adds."""
    raw = _getenv(environ, BASH_PATH_ENV, platform)
    if raw is None:
        return None
    value = raw.strip().strip('"').strip()
    return value or None


def bash_candidates(platform: str, environ: Mapping[str, str]) -> list[str]:
    """The fixed locations to try, in order (the override is handled by `resolve_bash`, first).

    Windows: the seed's Git for Windows list (machine-wide 64-bit, 32-bit, then per-user), joined
    with `ntpath` so it is right whatever OS computes it. Elsewhere: `POSIX_BASH_PATHS`; PATH is
    consulted after these by `resolve_bash`.
    """
    if not _is_windows(platform):
        return list(POSIX_BASH_PATHS)
    program_files = _getenv(environ, "ProgramFiles", platform) or DEFAULT_PROGRAM_FILES
    program_files_x86 = _getenv(environ, "ProgramFiles(x86)", platform) or DEFAULT_PROGRAM_FILES_X86
    local_app_data = _getenv(environ, "LOCALAPPDATA", platform)
    roots = [ntpath.join(program_files, "Git"), ntpath.join(program_files_x86, "Git")]
    if local_app_data:
        roots.append(ntpath.join(local_app_data, "Programs", "Git"))
    candidates: list[str] = []
    for root in roots:
        for sub in (("bin",), ("usr", "bin")):
            path = ntpath.join(root, *sub, "bash.exe")
            # 32-bit Windows sets both ProgramFiles variables to one folder: check it once.
            if path.lower() not in (c.lower() for c in candidates):
                candidates.append(path)
    return candidates


def resolve_bash(
    platform: str,
    environ: Mapping[str, str],
    is_file: Callable[[str], bool],
    which: Callable[[str], str | None] | None = None,
) -> str:
    """Return the absolute path of the bash to run, or raise `BashNotFoundError`.

    Order: the override; the fixed candidates (first hit wins); on macOS/Linux only, `which("bash")`.
    `which` is never called on Windows, whatever is passed.
    """
    override = _override(environ, platform)
    if override is not None:
        if is_file(override):
            return override
        raise BashNotFoundError(
            f'{BASH_PATH_ENV} is set to "{override}", but no file exists there. '
            f"Point it at a bash executable, or unset it to search the usual places.",
            [override],
            OVERRIDE_MISSING,
        )

    candidates = bash_candidates(platform, environ)
    for path in candidates:
        if is_file(path):
            return path

    if _is_windows(platform):
        listing = "\n".join(f"  {path}" for path in candidates)
        raise BashNotFoundError(
            "Git Bash was not found. Checked:\n"
            f"{listing}\n"
            f"Install Git for Windows from {GIT_FOR_WINDOWS_URL} "
            f"or set {BASH_PATH_ENV} to the full path of bash.exe. "
            "(The bash.exe on PATH is not used: in System32 it is the WSL launcher.)",
            candidates,
            GIT_BASH_MISSING,
        )

    on_path = which("bash") if which is not None else None
    if on_path:
        return on_path
    listing = "\n".join(f"  {path}" for path in candidates)
    raise BashNotFoundError(
        "bash was not found. Checked:\n"
        f"{listing}\n"
        "  and every folder on PATH.\n"
        f"Install bash, or set {BASH_PATH_ENV} to the full path of a bash executable.",
        [*candidates, "PATH"],
    )


def _is_executable_file(path: str) -> bool:
    return os.path.isfile(path) and (os.name == "nt" or os.access(path, os.X_OK))


def find_bash(environ: Mapping[str, str] | None = None) -> str:
    """`resolve_bash` for this machine (run once at start-up; it touches the file system), in this
    process's environment or in `environ` (the one a client gives the server it starts)."""
    if environ is None:
        return resolve_bash(sys.platform, os.environ, _is_executable_file, shutil.which)
    path = environ.get("PATH")
    return resolve_bash(sys.platform, environ, _is_executable_file, lambda name: shutil.which(name, path=path))
