"""Where each Claude client keeps its MCP config on each platform, and which ones are installed.

Everything here is a pure function of (platform, environment, home folder, exists-check) and
returns pure paths (`PureWindowsPath` for Windows), so every platform's case runs in tests on
Linux. Only `this_machine()` reads the real environment.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath

from app.core.errors import UsageError
from app.core.i18n import _
from app.core.paths import MSIX_PACKAGE_FAMILY, claude_config_folder  # the Claude package, which also hid our old data

CLAUDE_DESKTOP = "claude-desktop"
CLAUDE_DESKTOP_STORE = "claude-desktop-store"
CLAUDE_CODE = "claude-code"
# Stable ids, in the order the status table lists them. Documented in the README.
CLIENT_IDS = (CLAUDE_DESKTOP, CLAUDE_DESKTOP_STORE, CLAUDE_CODE)

CONFIG_FILE_NAME = "claude_desktop_config.json"
CLAUDE_CODE_FILE_NAME = ".claude.json"
# The Microsoft Store / MSIX package family; its AppData writes are redirected under this folder.
MSIX_APP_ID = f"{MSIX_PACKAGE_FAMILY}!Claude"  # as `Get-StartApps` lists it
# The standard (Squirrel) Windows installer puts the app here; an MSIX install never creates it.
WINDOWS_STANDARD_INSTALL_DIR = "AnthropicClaude"

Exists = Callable[[PurePath], bool]
MACOS, WINDOWS, LINUX = "macos", "windows", "linux"


@dataclass(frozen=True)
class ClientLocation:
    """One Claude client on this machine: where its MCP config lives and whether it is installed."""

    client_id: str
    name: str
    installed: bool
    # The JSON file we edit (Claude Desktop); None for Claude Code, which we change through its CLI.
    config_path: PurePath | None
    # The `claude` executable (Claude Code only).
    cli_path: PurePath | None
    # What was found, or looked for: shown in `clients` so a wrong guess is visible.
    evidence: str
    # A warning for the user, e.g. the standard config file that a Store install ignores.
    note: str = ""
    # Claude Code's own file of user-scope servers (`claude_code_file`): read, never written by us.
    servers_file: PurePath | None = None


def platform_family(platform: str) -> str:
    """Map a `sys.platform` value to macos, windows or linux (any other Unix counts as linux)."""
    if platform == "darwin":
        return MACOS
    if platform == "win32":
        return WINDOWS
    return LINUX


def client_ids_for(platform: str) -> tuple[str, ...]:
    """The clients that exist on this platform: the Store build is Windows-only."""
    if platform_family(platform) == WINDOWS:
        return CLIENT_IDS
    return (CLAUDE_DESKTOP, CLAUDE_CODE)


def _pure(platform: str) -> type[PurePath]:
    return PureWindowsPath if platform_family(platform) == WINDOWS else PurePosixPath


def xdg_config_home(environ: Mapping[str, str], home: PurePath) -> PurePath:
    """`$XDG_CONFIG_HOME`, or `~/.config` when unset, empty or relative (the XDG spec ignores those)."""
    value = environ.get("XDG_CONFIG_HOME", "")
    if value and PurePosixPath(value).is_absolute():
        return PurePosixPath(value)
    return PurePosixPath(home) / ".config"


def windows_appdata(environ: Mapping[str, str], home: PurePath) -> tuple[PureWindowsPath, PureWindowsPath]:
    """(%APPDATA%, %LOCALAPPDATA%), falling back to the default folders under the profile."""
    profile = PureWindowsPath(home)
    roaming = environ.get("APPDATA") or str(profile / "AppData" / "Roaming")
    local = environ.get("LOCALAPPDATA") or str(profile / "AppData" / "Local")
    return PureWindowsPath(roaming), PureWindowsPath(local)


def desktop_config_path(platform: str, environ: Mapping[str, str], home: PurePath) -> PurePath:
    """The standard Claude Desktop config file: the platform's default location."""
    family = platform_family(platform)
    if family == MACOS:
        return PurePosixPath(home) / "Library" / "Application Support" / "Claude" / CONFIG_FILE_NAME
    if family == WINDOWS:
        roaming, _local = windows_appdata(environ, home)
        return roaming / "Claude" / CONFIG_FILE_NAME
    return xdg_config_home(environ, home) / "Claude" / CONFIG_FILE_NAME


def store_config_path(environ: Mapping[str, str], home: PurePath) -> PureWindowsPath:
    """The config file a Microsoft Store / MSIX install really reads (its virtualized AppData)."""
    _roaming, local = windows_appdata(environ, home)
    return local / "Packages" / MSIX_PACKAGE_FAMILY / "LocalCache" / "Roaming" / "Claude" / CONFIG_FILE_NAME


def claude_code_file(platform: str, environ: Mapping[str, str], home: PurePath) -> PurePath:
    """Where Claude Code keeps its user-scope MCP servers: `.claude.json` in `$CLAUDE_CONFIG_DIR`
    when that is set, else in the home folder. Read directly: asking `claude mcp get` would run a
    program a command may have replaced, and it starts every server it lists."""
    return (claude_config_folder(platform, environ) or _pure(platform)(home)) / CLAUDE_CODE_FILE_NAME


def find_executable(
    name: str, platform: str, environ: Mapping[str, str], home: PurePath, exists: Exists
) -> PurePath | None:
    """Find `name` on PATH, then in the folders its installers use.

    The extra folders matter because a tray app started from the macOS Finder gets a minimal PATH
    (/usr/bin:/bin:/usr/sbin:/sbin), without the folder where Claude Code's installer put `claude`.
    Empty PATH entries (meaning the current folder) are skipped on purpose.
    """
    pure = _pure(platform)
    windows = platform_family(platform) == WINDOWS
    folders = [pure(d) for d in environ.get("PATH", "").split(";" if windows else ":") if d]
    if windows:
        roaming, _local = windows_appdata(environ, home)
        folders += [pure(home) / ".local" / "bin", roaming / "npm"]
        extensions = [e.lower() for e in environ.get("PATHEXT", ".COM;.EXE;.BAT;.CMD").split(";") if e]
        names = [name + ext for ext in extensions]
    else:
        folders += [
            pure(home) / ".local" / "bin",
            pure(home) / ".claude" / "local",
            pure("/usr/local/bin"),
            pure("/opt/homebrew/bin"),
        ]
        names = [name]
    for folder in folders:
        for candidate in names:
            if exists(folder / candidate):
                return folder / candidate
    return None


def _desktop_standard(platform: str, environ: Mapping[str, str], home: PurePath, exists: Exists) -> ClientLocation:
    family = platform_family(platform)
    path = desktop_config_path(platform, environ, home)
    note = ""
    if family == MACOS:
        apps = [
            PurePosixPath("/Applications/Claude.app"),
            PurePosixPath(home) / "Applications" / "Claude.app",
        ]
        found = [p for p in [*apps, path.parent] if exists(p)]
    elif family == WINDOWS:
        _roaming, local = windows_appdata(environ, home)
        install_dir = local / WINDOWS_STANDARD_INSTALL_DIR
        store = exists(local / "Packages" / MSIX_PACKAGE_FAMILY)
        found = [install_dir] if exists(install_dir) else []
        # Without the install folder, the config folder alone proves a standard install only when no
        # Store install exists: with one, that folder is the classic trap (edited, silently ignored).
        if not found and not store and exists(path.parent):
            found = [path.parent]
        if store and not found and exists(path):
            note = _(
                "{path} exists but the Microsoft Store install of Claude Desktop ignores it; "
                "use the {client} client instead"
            ).format(path=path, client=CLAUDE_DESKTOP_STORE)
    else:
        found = [p for p in [path.parent] if exists(p)]
    evidence = _("found {path}").format(path=found[0]) if found else _("not found")
    return ClientLocation(CLAUDE_DESKTOP, "Claude Desktop", bool(found), path, None, evidence, note)


def _desktop_store(environ: Mapping[str, str], home: PurePath, exists: Exists) -> ClientLocation:
    path = store_config_path(environ, home)
    package = path.parents[3]  # ...\Packages\Claude_pzs8sxrjxfjjc
    installed = exists(package)
    evidence = _("found {path}").format(path=package) if installed else _("not found")
    return ClientLocation(CLAUDE_DESKTOP_STORE, "Claude Desktop (Microsoft Store)", installed, path, None, evidence)


def _claude_code(platform: str, environ: Mapping[str, str], home: PurePath, exists: Exists) -> ClientLocation:
    cli = find_executable("claude", platform, environ, home, exists)
    evidence = _("found {path}").format(path=cli) if cli else _("`claude` not found on PATH")
    servers = claude_code_file(platform, environ, home)
    return ClientLocation(CLAUDE_CODE, "Claude Code", cli is not None, None, cli, evidence, servers_file=servers)


def locate_clients(platform: str, environ: Mapping[str, str], home: PurePath, exists: Exists) -> list[ClientLocation]:
    """Every client known on this platform, installed or not, in `CLIENT_IDS` order."""
    found = {
        CLAUDE_DESKTOP: lambda: _desktop_standard(platform, environ, home, exists),
        CLAUDE_DESKTOP_STORE: lambda: _desktop_store(environ, home, exists),
        CLAUDE_CODE: lambda: _claude_code(platform, environ, home, exists),
    }
    return [found[client_id]() for client_id in client_ids_for(platform)]


def select_clients(locations: list[ClientLocation], requested: list[str] | None, platform: str) -> list[ClientLocation]:
    """The clients a command acts on: the requested ids, else every installed one.

    Raises UsageError for an unknown id, an id this platform does not have, or when nothing is
    installed (the message names the platform's default location, to use with --client).
    """
    by_id = {loc.client_id: loc for loc in locations}
    if requested:
        chosen = []
        for client_id in dict.fromkeys(requested):  # keep order, drop repeats
            if client_id not in CLIENT_IDS:
                raise UsageError(
                    _("unknown client {client}; known clients: {clients}").format(
                        client=repr(client_id), clients=", ".join(CLIENT_IDS)
                    )
                )
            if client_id not in by_id:
                raise UsageError(
                    _("client {client} does not exist on this platform ({platform})").format(
                        client=repr(client_id), platform=platform
                    )
                )
            chosen.append(by_id[client_id])
        return chosen
    installed = [loc for loc in locations if loc.installed]
    if not installed:
        default = by_id[CLAUDE_DESKTOP].config_path
        raise UsageError(
            _(
                "no Claude install found on this computer. Install Claude Desktop or Claude Code and run "
                "this again, or write Claude Desktop's default config ({path}) now with --client {client}"
            ).format(path=default, client=CLAUDE_DESKTOP)
        )
    return installed


def restart_argvs(
    platform: str, client_id: str, environ: Mapping[str, str], home: PurePath
) -> tuple[list[str], list[str], list[str]]:
    """(quit, is-running, start) commands that restart Claude Desktop, which reads its config at start.

    `is-running` exits 0 while Claude still runs, so the caller waits for the quit to finish before
    starting it again (else macOS `open` just re-activates the quitting app). On Windows, Claude
    closes to the notification area instead of quitting, so it is ended with taskkill /F.
    """
    family = platform_family(platform)
    if family == MACOS and client_id == CLAUDE_DESKTOP:
        return (
            ["/usr/bin/osascript", "-e", 'quit app "Claude"'],
            ["/usr/bin/pgrep", "-x", "Claude"],
            ["/usr/bin/open", "-a", "Claude"],
        )  # the system's own: a command may write a folder early on PATH (core/system_programs.py)
    if family == WINDOWS and client_id in (CLAUDE_DESKTOP, CLAUDE_DESKTOP_STORE):
        running = [
            "powershell", "-NoProfile", "-Command",
            "if (Get-Process -Name claude -ErrorAction SilentlyContinue) { exit 0 } else { exit 1 }",
        ]  # fmt: skip
        quit_argv = ["taskkill", "/IM", "claude.exe", "/T", "/F"]
        if client_id == CLAUDE_DESKTOP_STORE:
            start = ["explorer.exe", f"shell:AppsFolder\\{MSIX_APP_ID}"]
        else:
            _roaming, local = windows_appdata(environ, home)
            start = [str(local / WINDOWS_STANDARD_INSTALL_DIR / "claude.exe")]
        return quit_argv, running, start
    raise UsageError(
        _("restarting {client} is not supported on {platform}: quit Claude and start it again by hand").format(
            client=client_id, platform=platform
        )
    )


def can_restart(platform: str, client_id: str) -> bool:
    """Whether `restart-claude` (and the Welcome window's restart button) works for this client here."""
    try:
        restart_argvs(platform, client_id, {}, PurePath("/home/user"))
    except UsageError:
        return False
    return True


def real_exists(path: PurePath) -> bool:
    return os.path.exists(path)


def this_machine() -> tuple[str, Mapping[str, str], PurePath]:
    """(platform, environment, home) of the running process, for the functions above."""
    return sys.platform, os.environ, Path.home()


def clients_here() -> tuple[str, list[ClientLocation]]:
    """(platform, every client's location) on this machine: what the CLI and the tray look at."""
    platform, environ, home = this_machine()
    return platform, locate_clients(platform, environ, home, real_exists)
