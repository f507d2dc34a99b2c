"""Start at login: a LaunchAgent on macOS, the HKCU Run value on Windows, an XDG autostart entry elsewhere.

Every platform's artifact is built by a pure function, and the facade (`enable`, `disable`,
`is_enabled`, `autostart_location`) takes the platform, environment and home folder as arguments,
so all three platforms run in tests on Linux. Windows goes through `reg.exe` rather than `winreg`
so the same code path runs everywhere: tests put a fake `reg` on PATH and exercise the real runner.
"""

from __future__ import annotations

import ntpath
import os
import plistlib
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from xml.parsers.expat import ExpatError

from app.core.atomic_file import write_atomic
from app.core.claude.locations import xdg_config_home
from app.core.errors import CoworkError
from app.core.i18n import LANGUAGES, N_, _, load_translation
from app.core.install.installation import same_program
from app.core.paths import DESKTOP_FILE_NAME
from app.core.self_command import app_argv

DISPLAY_NAME = "Cowork Terminal"
LAUNCH_AGENT_LABEL = "org.coworkterminal.tray"
# A theme icon name: installers put the app icon in the hicolor theme under this name.
DESKTOP_ICON = "cowork-terminal"
COMMENT = N_("Lets an AI agent use this computer's terminal while you stay in charge")
RUN_KEY = r"HKCU\Software\Microsoft\Windows\CurrentVersion\Run"
RUN_VALUE = DISPLAY_NAME
REG_TIMEOUT_S = 15
AUTOSTART_FILE_MODE = 0o600  # only the user's own session manager / launchd reads it


# --- the command that starts the tray --------------------------------------------------------------


def launch_command(frozen: bool, executable: str) -> list[str]:
    """The argv that starts the tray: the bundled exe when frozen, else this interpreter on the package.

    On Windows a source install starts through `pythonw.exe` (every install and venv has one next
    to `python.exe`): `python.exe` would open a console window at login whose closing kills the tray.
    """
    name = ntpath.basename(executable)  # ntpath: a Windows path, read the same on any OS
    if not frozen and name.lower() == "python.exe":
        executable = executable[: len(executable) - len(name)] + "pythonw.exe"
    return app_argv(frozen, executable, "tray")


def current_launch_command() -> list[str]:
    return launch_command(bool(getattr(sys, "frozen", False)), sys.executable)


# --- macOS: a LaunchAgent ------------------------------------------------------------------------


def launch_agent_plist(command: Sequence[str], label: str = LAUNCH_AGENT_LABEL) -> bytes:
    """The LaunchAgent that runs `command` once when the user logs in.

    `ProcessType Interactive` gives the tray an app's scheduling instead of a background job's
    throttling: it is a menu-bar app the user clicks. `LimitLoadToSessionType Aqua` keeps it out of
    SSH sessions, where there is no menu bar. No `KeepAlive`: quitting from the menu must stick.
    """
    return plistlib.dumps(
        {
            "Label": label,
            "ProgramArguments": list(command),
            "RunAtLoad": True,
            "ProcessType": "Interactive",
            "LimitLoadToSessionType": "Aqua",
        }
    )


def _plist_enabled(data: bytes) -> bool:
    try:
        plist = plistlib.loads(data)
    except (ValueError, ExpatError):  # a damaged file: launchd would not load it either
        return False
    return isinstance(plist, dict) and plist.get("RunAtLoad") is True and plist.get("Disabled") is not True


# --- Linux and other XDG desktops: an autostart entry ---------------------------------------------

# Characters that force an Exec argument into double quotes (Desktop Entry spec, "The Exec key").
_EXEC_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


def quote_exec_argument(argument: str) -> str:
    """One Exec argument, quoted per the Desktop Entry spec (before the string-value escaping)."""
    if any(ch in "\n\r" for ch in argument):
        raise CoworkError(_("cannot start at login: the path {path} contains a line break").format(path=repr(argument)))
    quoted = argument.replace("%", "%%")  # a bare % would start a field code such as %f
    if argument and not any(ch in _EXEC_RESERVED for ch in argument):
        return quoted
    inner = re.sub(r'(["`$\\])', r"\\\1", quoted)
    return f'"{inner}"'


def exec_value(command: Sequence[str]) -> str:
    """The Exec key's value: quoted arguments, then backslashes doubled as every string value needs."""
    return " ".join(quote_exec_argument(arg) for arg in command).replace("\\", "\\\\")


def string_value(text: str) -> str:
    """A Desktop Entry string value: backslash escapes for backslash, line breaks, a leading space."""
    escaped = text.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
    return "\\s" + escaped[1:] if escaped.startswith(" ") else escaped


def translated_lines(key: str, text: str) -> str:
    """A .desktop key in English (the default) and in each of the app's other languages."""
    lines = [f"{key}={text}\n"]
    lines += [f"{key}[{code}]={load_translation(code).gettext(text)}\n" for code in LANGUAGES[1:]]
    return "".join(lines)


def desktop_entry(command: Sequence[str], icon: str = DESKTOP_ICON) -> str:
    """The autostart entry; `X-GNOME-Autostart-enabled` is what GNOME's startup apps toggle.

    `TryExec` names the program itself: a desktop skips the entry when that file is gone (the app
    was removed without `uninstall`), instead of failing to start it at every login.
    """
    return (
        "[Desktop Entry]\n"
        "Type=Application\n"
        f"Name={DISPLAY_NAME}\n"
        + translated_lines("Comment", COMMENT)  # desktops show it in their startup-apps list
        + f"TryExec={string_value(command[0])}\n"
        f"Exec={exec_value(command)}\n"
        f"Icon={icon}\n"
        "Terminal=false\n"
        "Categories=Utility;\n"
        "X-GNOME-Autostart-enabled=true\n"
    )


DESKTOP_GROUP = "[Desktop Entry]"


def _desktop_keys(text: str) -> dict[str, str]:
    """The keys of the `[Desktop Entry]` group, the one a desktop starts at login: another group's
    (`[Desktop Action X]`) `Exec` must not stand in for it."""
    keys: dict[str, str] = {}
    in_entry = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("["):
            in_entry = stripped == DESKTOP_GROUP
        elif in_entry and "=" in stripped and not stripped.startswith("#"):
            key, value = stripped.split("=", 1)
            keys[key.strip()] = value.strip()
    return keys


def _desktop_entry_enabled(text: str) -> bool:
    """False when the user switched it off in place (`Hidden=true` or GNOME's own flag)."""
    keys = _desktop_keys(text)
    return keys.get("Hidden") != "true" and keys.get("X-GNOME-Autostart-enabled") != "false"


_STRING_ESCAPES = {"s": " ", "n": "\n", "t": "\t", "r": "\r", "\\": "\\"}


def parse_exec_value(value: str) -> list[str]:
    """The argv an Exec value stands for: the reverse of `exec_value` (string escapes, then quotes)."""
    text = re.sub(r"\\([sntr\\])", lambda m: _STRING_ESCAPES[m[1]], value)
    args: list[str] = []
    current, quoted, started, i = "", False, False, 0
    while i < len(text):
        ch = text[i]
        if quoted and ch == "\\" and i + 1 < len(text) and text[i + 1] in '"`$\\':
            current, i = current + text[i + 1], i + 2
            continue
        if ch == '"':
            quoted, started = not quoted, True
        elif ch == " " and not quoted:
            if started:
                args.append(current)
            current, started = "", False
        else:
            current, started = current + ch, True
        i += 1
    if started:
        args.append(current)
    return [arg.replace("%%", "%") for arg in args]


# --- Windows: the per-user Run value, through reg.exe -----------------------------------------------


def windows_command_line(command: Sequence[str]) -> str:
    """The Run value's data: the exe always in quotes (an unquoted "C:\\Program Files\\..." lets
    Windows try "C:\\Program.exe" first), the arguments quoted as the C runtime parses them."""
    executable, arguments = f'"{command[0]}"', subprocess.list2cmdline(command[1:])
    return f"{executable} {arguments}" if arguments else executable


def reg_add_argv(command_line: str) -> list[str]:
    return ["reg", "add", RUN_KEY, "/v", RUN_VALUE, "/t", "REG_SZ", "/d", command_line, "/f"]


def reg_delete_argv() -> list[str]:
    return ["reg", "delete", RUN_KEY, "/v", RUN_VALUE, "/f"]


def parse_windows_command_line(command_line: str) -> list[str]:
    """The argv of a Run value: the quoted exe, then arguments split as the C runtime would (simply:
    ours are plain words)."""
    text = command_line.strip()
    if text.startswith('"'):
        executable, _, rest = text[1:].partition('"')
    else:
        executable, _, rest = text.partition(" ")
    return [executable, *[arg.strip('"') for arg in rest.split()]]


def reg_query_argv() -> list[str]:
    return ["reg", "query", RUN_KEY, "/v", RUN_VALUE]


# "    Cowork Terminal    REG_SZ    "C:\...\cowork-terminal.exe" tray": four spaces between fields.
_REG_VALUE_LINE = re.compile(r"^\s+(?P<name>.+?)\s{4}(?P<type>REG_[A-Z_]+)(?:\s{4}(?P<data>.*))?$")


def parse_reg_query(output: str, value_name: str = RUN_VALUE) -> str | None:
    """The data of `value_name` in `reg query` output, or None when the output does not list it."""
    for line in output.splitlines():
        match = _REG_VALUE_LINE.match(line.rstrip("\r"))
        if match and match["name"] == value_name:
            return (match["data"] or "").rstrip()
    return None


def run(argv: Sequence[str], environ: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    """Run one short helper command with no console window, no stdin and a time limit."""
    try:
        return subprocess.run(
            list(argv),
            env=dict(environ),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            # reg.exe writes in the console's OEM code page; our value name is ASCII either way.
            encoding="oem" if os.name == "nt" else "utf-8",
            errors="replace",
            timeout=REG_TIMEOUT_S,
            creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),  # a windowed app must not flash one
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CoworkError(_("could not run {program}: {error}").format(program=argv[0], error=exc)) from exc


def _run_checked(argv: Sequence[str], environ: Mapping[str, str]) -> None:
    result = run(argv, environ)
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip() or _("exit status {code}").format(code=result.returncode)
        raise CoworkError(
            _("could not change the start-at-login setting ({command}): {error}").format(
                command=f"{argv[0]} {argv[1]}", error=detail
            )
        )


# --- the facade ----------------------------------------------------------------------------------


def _kind(platform: str) -> str:
    if platform == "darwin":
        return "darwin"
    if platform.startswith("win"):
        return "windows"
    return "xdg"  # Linux, the BSDs: every desktop that follows the XDG autostart spec


def _defaults(
    platform: str | None, environ: Mapping[str, str] | None, home: Path | None
) -> tuple[str, Mapping[str, str], Path]:
    return (
        sys.platform if platform is None else platform,
        os.environ if environ is None else environ,
        Path.home() if home is None else home,
    )


def autostart_location(
    platform: str | None = None, environ: Mapping[str, str] | None = None, home: Path | None = None
) -> Path | str:
    """Where the setting lives: the plist or .desktop file, or the registry value's full name."""
    platform, environ, home = _defaults(platform, environ, home)
    kind = _kind(platform)
    if kind == "darwin":
        return home / "Library" / "LaunchAgents" / f"{LAUNCH_AGENT_LABEL}.plist"
    if kind == "windows":
        return f"{RUN_KEY}\\{RUN_VALUE}"
    return Path(xdg_config_home(environ, home)) / "autostart" / DESKTOP_FILE_NAME


def is_enabled(platform: str | None = None, environ: Mapping[str, str] | None = None, home: Path | None = None) -> bool:
    """Whether the tray will start at the next login, as the platform itself would read it.

    Raises CoworkError when the setting cannot be read at all (no `reg`, an unreadable file).
    """
    platform, environ, home = _defaults(platform, environ, home)
    location = autostart_location(platform, environ, home)
    if isinstance(location, str):
        result = run(reg_query_argv(), environ)
        return result.returncode == 0 and parse_reg_query(result.stdout) is not None
    try:
        data = location.read_bytes()
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise CoworkError(_("could not read {path}: {error}").format(path=location, error=exc)) from exc
    if _kind(platform) == "darwin":
        return _plist_enabled(data)
    return _desktop_entry_enabled(data.decode("utf-8", errors="replace"))


def read_command(
    platform: str | None = None, environ: Mapping[str, str] | None = None, home: Path | None = None
) -> list[str] | None:
    """The command our start-at-login entry runs, or None when there is no enabled entry.

    Raises CoworkError when the setting cannot be read at all.
    """
    platform, environ, home = _defaults(platform, environ, home)
    if not is_enabled(platform, environ, home):
        return None
    location = autostart_location(platform, environ, home)
    if isinstance(location, str):
        value = parse_reg_query(run(reg_query_argv(), environ).stdout)
        return parse_windows_command_line(value) if value else None
    data = location.read_bytes()
    if _kind(platform) == "darwin":
        arguments = plistlib.loads(data).get("ProgramArguments")
        return [str(arg) for arg in arguments] if isinstance(arguments, list) and arguments else None
    exec_line = _desktop_keys(data.decode("utf-8", errors="replace")).get("Exec")
    return parse_exec_value(exec_line) if exec_line else None


_ENV_VALUE_OPTIONS = ("-u", "--unset", "-C", "--chdir", "-S", "--split-string")  # env(1)'s options with a value


def added_to_command(command: Sequence[str], launch: Sequence[str], plist_env: object = None) -> list[str]:
    """What a start-at-login entry carries that this app never writes and that changes what runs
    (issue 21): variables set through `env` (an XDG Exec line, a Run value) or a LaunchAgent's
    `EnvironmentVariables`, and arguments beyond the ones `launch` has. Empty for our own entry;
    an entry of another program is stale_entries' business."""
    added = [f"env {key}" for key in plist_env] if isinstance(plist_env, dict) else []
    argv = list(command)
    if argv and ntpath.basename(argv[0]).lower() in ("env", "env.exe"):
        argv = argv[1:]
        while argv and (argv[0].startswith("-") or "=" in argv[0]):
            option = argv.pop(0)
            if option in _ENV_VALUE_OPTIONS and argv:
                option = f"{option} {argv.pop(0)}"
            added.append(f"env {option}")
    if not argv or not same_program(argv[0], launch[0]):
        return added
    added += [f"argument {arg}" for arg in argv[1:] if arg not in launch[1:]]
    return added


def added_to_plist(plist: Mapping[str, object], command: Sequence[str]) -> list[str]:
    """The LaunchAgent keys this app does not write, or writes otherwise (`launch_agent_plist`):
    launchd runs `Program` rather than `ProgramArguments[0]`, and other keys change how it runs.
    `EnvironmentVariables` is named key by key (`added_to_command`)."""
    ours = plistlib.loads(launch_agent_plist(command))
    added = []
    for key, value in plist.items():
        if key != "EnvironmentVariables" and (key not in ours or value != ours[key]):
            added.append(f"{key} {value}" if isinstance(value, str) else str(key))
    return added


def read_added(
    launch: Sequence[str],
    platform: str | None = None,
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> list[str]:
    """`added_to_command` for the entry as it is now (and on macOS, `added_to_plist`); empty when
    there is none.

    Raises CoworkError when the setting cannot be read at all.
    """
    platform, environ, home = _defaults(platform, environ, home)
    command = read_command(platform, environ, home)
    if command is None:
        return []
    location = autostart_location(platform, environ, home)
    if _kind(platform) == "darwin" and isinstance(location, Path):
        plist = plistlib.loads(location.read_bytes())
        return added_to_command(command, launch, plist.get("EnvironmentVariables")) + added_to_plist(plist, command)
    return added_to_command(command, launch)


def lacks(command: Sequence[str], launch: Sequence[str]) -> list[str]:
    """The arguments of `launch` that our entry's `command` (the same program) does not have, such
    as `-I` in an entry written before issue 21: the entry then needs rewriting, though nothing
    was added to it."""
    if not command or not same_program(command[0], launch[0]):
        return []
    return [arg for arg in launch[1:] if arg not in command[1:]]


def is_present(platform: str | None = None, environ: Mapping[str, str] | None = None, home: Path | None = None) -> bool:
    """Whether our start-at-login entry exists at all, switched on or off: a file switched off
    with `X-GNOME-Autostart-enabled=false` still starts the app on desktops that ignore that key.

    Raises CoworkError when the setting cannot be read at all.
    """
    platform, environ, home = _defaults(platform, environ, home)
    location = autostart_location(platform, environ, home)
    if isinstance(location, str):
        return is_enabled(platform, environ, home)  # a Run value is either there or not
    return os.path.lexists(location)


def enable(
    platform: str | None = None,
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
    command: Sequence[str] | None = None,
    icon: str = DESKTOP_ICON,
) -> None:
    """Start the tray at login with `command` (default: how this process was started).

    Idempotent and always rewrites: `stale_entries` calls it at the tray's start to point an entry
    left naming a removed program, or another copy of the app, at this one.
    """
    platform, environ, home = _defaults(platform, environ, home)
    command = list(current_launch_command() if command is None else command)
    location = autostart_location(platform, environ, home)
    if isinstance(location, str):
        _run_checked(reg_add_argv(windows_command_line(command)), environ)
        return
    data = launch_agent_plist(command) if _kind(platform) == "darwin" else desktop_entry(command, icon).encode()
    try:
        location.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(location, data, AUTOSTART_FILE_MODE)
    except OSError as exc:
        raise CoworkError(_("could not write {path}: {error}").format(path=location, error=exc)) from exc


def disable(platform: str | None = None, environ: Mapping[str, str] | None = None, home: Path | None = None) -> None:
    """Stop starting at login; doing it twice is not an error."""
    platform, environ, home = _defaults(platform, environ, home)
    location = autostart_location(platform, environ, home)
    if isinstance(location, str):
        if is_enabled(platform, environ, home):  # `reg delete` of a missing value fails
            _run_checked(reg_delete_argv(), environ)
        return
    try:
        location.unlink(missing_ok=True)
    except OSError as exc:
        raise CoworkError(_("could not remove {path}: {error}").format(path=location, error=exc)) from exc
