"""Every location the app reads or writes, in one object that tests point elsewhere.

`COWORK_TERMINAL_HOME` moves all of it (data, logs, locks) under one folder: every test sets it,
so no test ever touches a real profile.

On Windows the data folder is `%USERPROFILE%\\.cowork-terminal`, not under AppData: Claude Desktop
for Windows is an MSIX package, and writes under `%APPDATA%` and `%LOCALAPPDATA%` of every process
it starts (our `serve`, the commands it runs) land in the package's private LocalCache, so the
server and the tray would each see their own journal and locks (docs/windows.md).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath

APP_NAME = "cowork-terminal"
DESKTOP_FILE_NAME = f"{APP_NAME}.desktop"  # the launcher's and the start-at-login entry's (XDG)
CLAUDE_CONFIG_DIR_ENV = "CLAUDE_CONFIG_DIR"  # where Claude Code keeps its folder and `.claude.json`, when moved
HOME_ENV = "COWORK_TERMINAL_HOME"
WINDOWS_DIR_NAME = ".cowork-terminal"  # in the user's profile folder, like .ssh or .docker
PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
# Where an older version kept its data on Windows (journal.migration moves it over once).
LEGACY_DIR_NAME = "cowork-terminal"
MSIX_PACKAGE_FAMILY = "Claude_pzs8sxrjxfjjc"


def claude_config_folder(platform: str, environ: Mapping[str, str]) -> PurePath | None:
    """`$CLAUDE_CONFIG_DIR` as Claude Code reads it, normalised (no trailing separator), or None when
    unset or relative."""
    pure = PureWindowsPath if platform == "win32" else PurePosixPath
    value = environ.get(CLAUDE_CONFIG_DIR_ENV, "")
    return pure(value) if value and pure(value).is_absolute() else None


def windows_profile(environ: Mapping[str, str], home: str) -> PureWindowsPath:
    """The user's profile folder as Python's Path.home() finds it: USERPROFILE, then HOMEDRIVE+HOMEPATH."""
    if environ.get("USERPROFILE"):
        return PureWindowsPath(environ["USERPROFILE"])
    if environ.get("HOMEDRIVE") and environ.get("HOMEPATH"):
        return PureWindowsPath(environ["HOMEDRIVE"] + environ["HOMEPATH"])
    return PureWindowsPath(home)


def default_locations(platform: str, environ: Mapping[str, str], home: str) -> tuple[PurePath, PurePath] | None:
    """(data folder, log folder) where this platform's rule is ours; None leaves it to platformdirs.

    Windows: one folder in the profile, outside AppData, which MSIX redirects for Claude's children.
    """
    if platform == "win32":
        data_dir = windows_profile(environ, home) / WINDOWS_DIR_NAME
        return data_dir, data_dir / "logs"
    return None


@dataclass(frozen=True)
class AppPaths:
    data_dir: Path
    log_dir: Path
    outputs_dir: Path | None = None  # None: the platform's place (output_folder_for)

    @classmethod
    def from_environment(cls, environ: dict[str, str] | None = None) -> AppPaths:
        env = os.environ if environ is None else environ
        override = env.get(HOME_ENV)
        if override:
            home = Path(override).expanduser().absolute()
            return cls(data_dir=home, log_dir=home / "logs", outputs_dir=Path(f"{home}{OUTPUTS_SUFFIX}"))
        chosen = default_locations(sys.platform, env, str(Path.home()))
        if chosen is not None:
            return cls(data_dir=Path(chosen[0]), log_dir=Path(chosen[1]))
        import platformdirs  # imported here: tests with an override never need it

        return cls(
            data_dir=Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)),
            log_dir=Path(platformdirs.user_log_dir(APP_NAME, appauthor=False)),
        )

    @property
    def journal(self) -> Path:
        return self.data_dir / "journal.sqlite3"

    @property
    def pause_file(self) -> Path:
        """The pause switch that survives a full disk (core/journal/pause_file)."""
        return self.data_dir / "pause"

    @property
    def locks_dir(self) -> Path:
        return self.data_dir / "locks"

    @property
    def tray_lock(self) -> Path:
        return self.locks_dir / "tray.lock"

    def server_lock(self, lock_key: str) -> Path:
        return self.locks_dir / f"server-{lock_key}.lock"

    @property
    def outputs(self) -> Path:
        """Whole outputs of commands whose result was cut (see output_folder_for)."""
        return self.outputs_dir or output_folder_for(sys.platform, os.environ, Path.home())

    def app_outputs(self, client_name: str | None) -> Path:
        """One app's own folder of whole outputs (app_outputs_name): its commands see it alone."""
        return self.outputs / app_outputs_name(client_name)

    def written_locations(self) -> list[Path]:
        """Every folder and file the app's processes write (for the rule that none is under AppData)."""
        return [
            self.data_dir,
            self.log_dir,
            self.journal,
            self.locks_dir,
            self.tray_lock,
            self.server_lock("x"),
            self.outputs,
            self.pause_file,
        ]


def app_outputs_name(client_name: str | None) -> str:
    """The name of an app's folder of whole outputs, from the name its MCP client gives (the key the
    job tools use to tell which app may see which job): readable, and never a path (a hash of the
    whole name tells names apart that read alike). Every unnamed client shares one."""
    if not client_name:
        return "app-unnamed"
    readable = re.sub(r"[^A-Za-z0-9_-]+", "_", client_name)[:40]
    return f"app-{readable}-{hashlib.sha256(client_name.encode()).hexdigest()[:10]}"


OUTPUTS_SUFFIX = "-outputs"  # with COWORK_TERMINAL_HOME=X, whole outputs go to X-outputs


def output_folder_for(platform: str, environ: Mapping[str, str], home: Path) -> Path:
    """Where whole outputs are kept: never inside the data or log folder, which the classifier
    guards (the model must `tail` and `grep` these files without asking the user), and on Windows
    outside AppData, where MSIX packaging (Claude Desktop) hides new files from other processes."""
    if platform == "win32":
        return home / f".{APP_NAME}{OUTPUTS_SUFFIX}"
    if platform == "darwin":
        return home / "Library" / "Caches" / APP_NAME / "outputs"
    cache = environ.get("XDG_CACHE_HOME", "")
    return (Path(cache) if os.path.isabs(cache) else home / ".cache") / APP_NAME / "outputs"


def make_private_dir(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    if os.name == "posix":
        os.chmod(folder, PRIVATE_DIR_MODE)


def make_private_dirs(folder: Path) -> None:
    """`folder` made private (0700), and every folder made on the way to it too: an app's folder
    made first must not leave the outputs folder above it open to other users."""
    missing = [parent for parent in (folder, *folder.parents) if not parent.exists()]
    for parent in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(parent, PRIVATE_DIR_MODE)
    make_private_dir(folder)


def make_private_file(path: Path) -> None:
    """Create `path` if missing and make it readable by its owner only (POSIX)."""
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_APPEND, PRIVATE_FILE_MODE)
    os.close(fd)
    if os.name == "posix":
        os.chmod(path, PRIVATE_FILE_MODE)


@dataclass(frozen=True)
class LegacySources:
    """Where an older version kept its data: the real folder, and the MSIX package's private copy."""

    local: PurePath
    msix_local: PurePath


def legacy_sources(platform: str, environ: Mapping[str, str], home: str) -> LegacySources | None:
    """The old Windows folders to import from, or None (other systems, or COWORK_TERMINAL_HOME set)."""
    if platform != "win32" or environ.get(HOME_ENV):
        return None
    profile = windows_profile(environ, home)
    local = PureWindowsPath(environ.get("LOCALAPPDATA") or profile / "AppData" / "Local")
    return LegacySources(
        local=local / LEGACY_DIR_NAME,
        msix_local=local / "Packages" / MSIX_PACKAGE_FAMILY / "LocalCache" / "Local" / LEGACY_DIR_NAME,
    )


def legacy_folders() -> list[str]:
    """This machine's old Windows folders (none elsewhere): commands that name them are destructive
    for a release, like the data folder itself, since an old journal there may still be read."""
    sources = legacy_sources(sys.platform, os.environ, str(Path.home()))
    return [] if sources is None else [str(sources.local), str(sources.msix_local)]


def protected_paths(paths: AppPaths) -> list[str]:
    """The app's own folders as the classifier guards them (the data and log folders, and for a
    release the old Windows ones), as named and with symlinks resolved."""
    folders = (str(paths.data_dir), str(paths.log_dir), *legacy_folders())
    return sorted({*folders, *map(os.path.realpath, folders)})


def hidden_folders(paths: AppPaths, protected: Sequence[str] | None = None) -> list[str]:
    """The app's own folders no command sees: empty in its container (container.hidden_locks). The
    data and log folders (the journal keeps every app's commands and output), as named and real, and
    the folder of lock files wherever it is. The outputs folder stays: a model reads its outputFile.
    `protected`: `protected_paths(paths)` when the caller has it (its realpaths, once a command)."""
    return sorted({*(protected_paths(paths) if protected is None else protected), str(paths.locks_dir)})


def runtime_dir(environ: Mapping[str, str], uid: int | None, exists: Callable[[str], bool]) -> str | None:
    """The folder holding this user's session sockets: $XDG_RUNTIME_DIR, or /run/user/<uid> (MCP
    clients pass on few variables, so the variable is often missing while the folder is there)."""
    named = environ.get("XDG_RUNTIME_DIR", "")
    if named.startswith("/") and exists(named):
        return named
    guessed = f"/run/user/{uid}" if uid is not None else None
    return guessed if guessed and exists(guessed) else None


def file_identity(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """The file or folder at `path` by its device and inode (links followed): another one put there
    reads otherwise, and None when nothing is there. What tells a folder made anew, a journal
    started anew, a shell's folder renamed under it."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino
