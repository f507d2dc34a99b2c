"""Our entry in each Claude client's MCP config: build it, write it safely, report it, remove it.

Claude Desktop keeps more than `mcpServers` in `claude_desktop_config.json` (its preferences), so
this module never drops or reorders a key it does not own, refuses to touch a file it cannot
parse, backs the file up before each change and replaces it atomically. Claude Code is driven
through its own CLI (`claude mcp add/remove/get --scope user`), never by editing its files.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PureWindowsPath
from typing import Any

from app.core.atomic_file import write_atomic
from app.core.claude.locations import ClientLocation
from app.core.errors import CoworkError, UsageError
from app.core.i18n import _
from app.core.paths import HOME_ENV, PRIVATE_FILE_MODE
from app.core.self_command import app_argv

SERVER_NAME = "cowork-terminal"
MCP_SERVERS_KEY = "mcpServers"
BACKUPS_KEPT = 5
JSON_INDENT_SPACES = 2
# `claude mcp get` starts the server to check its health, which takes a few seconds.
CLAUDE_CLI_TIMEOUT_S = 60.0

# What an existing `cowork-terminal` entry is, compared with the one this app would write.
ABSENT = "absent"  # no entry
CURRENT = "current"  # exactly ours: nothing to do
CHANGED = "changed"  # this app (same executable) with other options: updated without --replace
STALE = "stale"  # this app's command shape, another executable (an old install): needs --replace
FOREIGN = "foreign"  # something else under our name (`npx cowork-terminal-mcp`...): needs --replace
INVALID = "invalid"  # the config file cannot be read; status only
UNKNOWN = "unknown"  # the client is not installed, so its entry cannot be asked for; status only

_BACKUP_SUFFIX_RE = re.compile(r"\.\d{8}-\d{6}-\d{9}\.bak$")
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_UTF8_BOM = b"\xef\xbb\xbf"


class ConfigFileError(UsageError):
    """A config file we refuse to change: not decodable, not JSON, or `mcpServers` not an object."""

    def __init__(self, path: Path, problem: str, line: int, column: int) -> None:
        self.path, self.problem, self.line, self.column = path, problem, line, column
        super().__init__(
            _(
                "{path} is not a valid Claude config: {problem} (line {line}, column {column}). "
                "Nothing was changed. To fix it, open the file in a text editor and correct that spot "
                "(JSON allows no comments or trailing commas, and every key and text needs double quotes), "
                "or rename the file to start a fresh one; then run this command again."
            ).format(path=path, problem=problem, line=line, column=column)
        )


class EntryConflictError(CoworkError):
    """A `cowork-terminal` entry that is not this app's; replaced only when the user says so."""


class ConfigWriteError(CoworkError):
    """The config could not be written (read-only, locked, disk full); the file is as it was."""


class ClaudeCliError(CoworkError):
    """The `claude` command failed or could not be run."""


def build_entry(
    frozen: bool, executable: str, extra_args: Sequence[str] = (), home: str | None = None
) -> dict[str, Any]:
    """The `mcpServers` entry that starts this app's server over stdio.

    Absolute executable, no shell, no `npx`: Claude Desktop starts it with a minimal PATH and no
    network may be needed at start. `home` (COWORK_TERMINAL_HOME) goes into `env` so the server
    uses the same data folder as the app that connected it.
    """
    command, *args = app_argv(frozen, executable, "serve", *extra_args)
    entry: dict[str, Any] = {"command": command, "args": args}
    if home:
        entry["env"] = {HOME_ENV: home}
    return entry


def this_app_entry(extra_args: Sequence[str] = (), environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """`build_entry` for the running app: the bundle when frozen, else this Python with `-m app`.

    `sys.executable` is made absolute but not resolved: in a venv it is a symlink, and resolving
    it would start the base Python, outside the venv that holds our dependencies.
    """
    env = os.environ if environ is None else environ
    override = env.get(HOME_ENV)
    home = str(Path(override).expanduser().absolute()) if override else None
    frozen = bool(getattr(sys, "frozen", False))
    return build_entry(frozen, os.path.abspath(sys.executable), extra_args, home)


def is_app_entry(entry: Mapping[str, Any]) -> bool:
    """Whether an entry runs some install of this app's `serve` (as opposed to another program)."""
    command, args = entry.get("command"), entry.get("args", [])
    if not isinstance(command, str) or not isinstance(args, list):
        return False
    if args[:3] == ["-m", "app", "serve"] or args[:4] == ["-I", "-m", "app", "serve"]:  # before/after issue 21
        return True
    # A bundle or a pip console script: "cowork-terminal", "Cowork Terminal.exe"... (either separator).
    stem = PureWindowsPath(command).name.lower().removesuffix(".exe")
    return args[:1] == ["serve"] and re.sub(r"[^a-z0-9]", "", stem) == "coworkterminal"


def starts_headless(entry: Any) -> bool:
    """Whether our entry starts `serve --headless`: such a server runs commands while the tray app is
    not running, with no one there to pause or approve (the user may choose it; so may a program)."""
    if not isinstance(entry, Mapping) or not is_app_entry(entry):
        return False
    args = entry.get("args") or []
    return "--headless" in args[args.index("serve") + 1 :] if "serve" in args else False


HEADLESS_ENTRY = "headless"  # our entry now starts `serve --headless`
TAKEN_OVER = "taken over"  # our entry now runs another program under our name


@dataclass(frozen=True)
class EntrySeen:
    """One client's entry as the tray last read it."""

    state: str
    headless: bool


def entry_news(before: EntrySeen | None, now: ClientStatus) -> str | None:
    """What the user should be told of a client's entry, read again: HEADLESS_ENTRY when it starts
    headless and did not (or was not read before: the tray's start), TAKEN_OVER when ours became
    another program's while the tray watched (at start the menu shows it: the seed's npm package
    may rightly be there); else None."""
    headless = starts_headless(now.entry)
    if headless and (before is None or not before.headless):
        return HEADLESS_ENTRY
    if now.state == FOREIGN and before is not None and before.state in (CURRENT, CHANGED):
        return TAKEN_OVER
    return None


def updated_entry(existing: Any, wanted: Mapping[str, Any]) -> dict[str, Any]:
    """`wanted`, plus what the user added to our own entry: other `env` keys (such as
    COWORK_TERMINAL_BASH) and other fields survive an update or a move of the install.

    Ours are `command`, `args` and COWORK_TERMINAL_HOME, which follows the app that connects.
    Another program's entry gives nothing to keep.
    """
    if not isinstance(existing, Mapping) or not is_app_entry(existing):
        return dict(wanted)
    merged = {**wanted, **{k: v for k, v in existing.items() if k not in ("command", "args", "env")}}
    kept = existing.get("env")
    env = {k: v for k, v in kept.items() if k != HOME_ENV} if isinstance(kept, Mapping) else {}
    env.update(wanted.get("env", {}))
    if env:
        merged["env"] = env
    return merged


def classify_entry(existing: Any, wanted: Mapping[str, Any]) -> str:
    """ABSENT, CURRENT, CHANGED, STALE or FOREIGN: see the constants."""
    if existing is None:
        return ABSENT
    if existing == updated_entry(existing, wanted):
        return CURRENT
    if not isinstance(existing, Mapping) or not is_app_entry(existing):
        return FOREIGN
    same = os.path.normcase(existing["command"]) == os.path.normcase(wanted["command"])
    return CHANGED if same else STALE


# --- reading -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConfigDocument:
    """A parsed config file; `raw` is None when the file does not exist yet."""

    path: Path
    raw: bytes | None
    data: dict[str, Any]

    @property
    def servers(self) -> dict[str, Any]:
        return self.data.get(MCP_SERVERS_KEY) or {}


def _line_column(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def decode_config(raw: bytes, path: Path) -> str:
    """Text of a config file: UTF-8 with or without BOM, or UTF-16 with BOM (PowerShell 5's default)."""
    encoding = "utf-16" if raw.startswith(_UTF16_BOMS) else "utf-8-sig"
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        good = raw[: exc.start].decode(encoding, errors="replace")
        line, column = _line_column(good, len(good))
        problem = _("bytes that are not {encoding} text").format(encoding=encoding.upper())
        raise ConfigFileError(path, problem, line, column) from exc


class _Unwritable(ValueError):
    """Parsed by Python but not safe to write back; carries where the culprit text is."""

    def __init__(self, problem: str, pattern: str, occurrence: int = 1) -> None:
        super().__init__(problem)
        self.problem, self.pattern, self.occurrence = problem, pattern, occurrence


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """JSON parsers keep the last of two equal keys; rewriting would silently drop the first."""
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            problem = _("the key {key} appears twice; delete one of them").format(key=repr(key))
            raise _Unwritable(problem, _key_pattern(key), 2)
        result[key] = value
    return result


def _refuse_constant(name: str) -> Any:
    """Python reads NaN and Infinity, but they are not JSON: Claude itself would reject the file."""
    raise _Unwritable(_("{name} is not valid JSON").format(name=name), r"(?<![\w\"])(?=" + re.escape(name) + ")")


def _finite_float(literal: str) -> float:
    """A number too large for a float would be written back as Infinity, breaking the file."""
    value = float(literal)
    if math.isinf(value):
        problem = _("the number {number} is too large").format(number=literal)
        raise _Unwritable(problem, r"(?<![\w.])(?=" + re.escape(literal) + ")")
    return value


def _key_pattern(key: str) -> str:
    return re.escape(json.dumps(key, ensure_ascii=False)) + r"\s*:\s*"


def _position(text: str, pattern: str, occurrence: int) -> tuple[int, int]:
    """Where the n-th match (1-based) of `pattern` ends: just after a key's colon, or before a value
    (value patterns match empty there). The start of the file when it does not match, as for a key
    spelled with escapes: the message still names the problem."""
    matches = list(re.finditer(pattern, text))
    if len(matches) < occurrence:
        return 1, 1
    return _line_column(text, matches[occurrence - 1].end())


def parse_config(text: str, path: Path) -> dict[str, Any]:
    """The config's top-level object; an empty or blank file counts as `{}`."""
    if not text.strip():
        return {}
    try:
        data = json.loads(
            text, object_pairs_hook=_refuse_duplicates, parse_constant=_refuse_constant, parse_float=_finite_float
        )
    except json.JSONDecodeError as exc:
        raise ConfigFileError(path, exc.msg, exc.lineno, exc.colno) from exc
    except _Unwritable as exc:
        line, column = _position(text, exc.pattern, exc.occurrence)
        raise ConfigFileError(path, exc.problem, line, column) from exc
    if not isinstance(data, dict):
        start = len(text) - len(text.lstrip())
        line, column = _line_column(text, start)
        raise ConfigFileError(path, _("the file must hold one JSON object, {{ ... }}").format(), line, column)
    servers = data.get(MCP_SERVERS_KEY, {})
    if not isinstance(servers, dict):
        line, column = _position(text, _key_pattern(MCP_SERVERS_KEY), 1)
        problem = _('"{key}" must be an object, {{ ... }}, not {kind}').format(
            key=MCP_SERVERS_KEY, kind=type(servers).__name__
        )
        raise ConfigFileError(path, problem, line, column)
    return data


def read_config(path: Path) -> ConfigDocument:
    """Read and parse a Claude Desktop config; a missing file is an empty document."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return ConfigDocument(path, None, {})
    except OSError as exc:
        raise ConfigWriteError(_("cannot read {path}: {error}").format(path=path, error=exc.strerror or exc)) from exc
    return ConfigDocument(path, raw, parse_config(decode_config(raw, path), path))


def render_config(data: Mapping[str, Any]) -> str:
    """The text we write: 2-space JSON, UTF-8 characters kept as they are, no BOM, final newline."""
    return json.dumps(data, indent=JSON_INDENT_SPACES, ensure_ascii=False) + "\n"


# --- writing -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConfigChange:
    """What connect/disconnect did (or, in a dry run, would do) to one client."""

    target: str  # the config file, or the `claude` executable
    action: str  # "written", "removed", "unchanged", "nothing to remove", "dry run"
    previous: str  # the state of our entry before: ABSENT, CURRENT, CHANGED, STALE, FOREIGN
    previous_entry: Any = None
    backup: str | None = None
    preview: str | None = None  # dry run: the whole JSON text that would be written
    commands: list[list[str]] = field(default_factory=list)  # Claude Code: what runs (or would)


def backup_path(path: Path, now_ns: int) -> Path:
    """`claude_desktop_config.json.20260801-142233-123456789.bak` (UTC): sorts by time, by name."""
    seconds, fraction = divmod(now_ns, 1_000_000_000)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(seconds))
    return path.with_name(f"{path.name}.{stamp}-{fraction:09d}.bak")


def list_backups(path: Path) -> list[Path]:
    """Our backups of `path`, oldest first."""
    if not path.parent.is_dir():
        return []
    prefix = path.name + "."
    found = [p for p in path.parent.iterdir() if p.name.startswith(prefix) and _BACKUP_SUFFIX_RE.search(p.name)]
    return sorted(found, key=lambda p: p.name)


def _write_backup(path: Path, raw: bytes) -> Path:
    target = backup_path(path, time.time_ns())
    # Exclusive create: a backup is never overwritten. Private, as the config may hold API keys.
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), PRIVATE_FILE_MODE)
    with os.fdopen(fd, "wb") as out:
        out.write(raw)
    return target


def _prune_backups(path: Path) -> None:
    for old in list_backups(path)[:-BACKUPS_KEPT]:
        old.unlink(missing_ok=True)


def _save(doc: ConfigDocument, text: str) -> Path | None:
    """Back up the current file, write `text` atomically, then keep only the newest backups.

    A read-only file (no owner write permission, or the Windows read-only attribute) is refused
    before anything is written: someone made it read-only on purpose, and on POSIX a rename would
    otherwise replace it anyway. If the write fails, the just-made backup (a copy of the unchanged
    file) is removed again, so a failure leaves the folder exactly as it was.
    """
    # Write through a symlink (a config kept in a dotfiles repo): replacing the link with a
    # plain file would silently cut it off from its target.
    path = Path(os.path.realpath(doc.path))
    backup = None
    try:
        if doc.raw is None:
            path.parent.mkdir(parents=True, exist_ok=True)
            mode = PRIVATE_FILE_MODE
        else:
            mode = stat.S_IMODE(path.stat().st_mode)
            if not mode & stat.S_IWUSR:
                raise ConfigWriteError(
                    _(
                        "{path} is read-only, so it was not changed. Make it writable "
                        "(Windows: Properties, untick Read-only; macOS/Linux: chmod u+w) and run this again."
                    ).format(path=path)
                )
            backup = _write_backup(path, doc.raw)
        write_atomic(path, text.encode("utf-8"), mode)
    except OSError as exc:
        if backup is not None:
            backup.unlink(missing_ok=True)
        raise ConfigWriteError(
            _(
                "could not write {path}: {error}. The file was not changed. If another program "
                "has it open or locked (an editor, a sync or backup tool), close that and run this again."
            ).format(path=path, error=exc.strerror or exc)
        ) from exc
    _prune_backups(path)
    return backup


def _conflict_message(where: str, state: str, existing: Any) -> str:
    if state == STALE:
        text = _(
            "{where} already has a {name} entry that runs an older install of this app: {entry}. "
            "Run connect again with --replace to replace it (the old entry is kept in a backup)."
        )
    else:
        text = _(
            "{where} already has a {name} entry that runs another program: {entry}. "
            "Run connect again with --replace to replace it (the old entry is kept in a backup)."
        )
    return text.format(where=where, name=repr(SERVER_NAME), entry=json.dumps(existing))


def needs_restart(location: ClientLocation, change: ConfigChange) -> bool:
    """Claude Desktop reads its config file only at start: a written or removed entry waits for it."""
    return location.config_path is not None and change.action in ("written", "removed")


def connect_desktop(
    path: Path, entry: Mapping[str, Any], *, replace: bool = False, dry_run: bool = False
) -> ConfigChange:
    """Put our entry into a Claude Desktop config, keeping everything else as it was."""
    doc = read_config(path)
    existing = doc.servers.get(SERVER_NAME)
    state = classify_entry(existing, entry)
    if state == CURRENT:
        return ConfigChange(str(path), "unchanged", state, existing)
    if state in (STALE, FOREIGN) and not replace:
        raise EntryConflictError(_conflict_message(str(path), state, existing))
    data = dict(doc.data)  # dicts keep insertion order: every other key stays where it was
    data[MCP_SERVERS_KEY] = {**doc.servers, SERVER_NAME: updated_entry(existing, entry)}
    text = render_config(data)
    if dry_run:
        return ConfigChange(str(path), "dry run", state, existing, preview=text)
    backup = _save(doc, text)
    return ConfigChange(str(path), "written", state, existing, str(backup) if backup else None)


def disconnect_desktop(path: Path, wanted: Mapping[str, Any], *, dry_run: bool = False) -> ConfigChange:
    """Remove the `cowork-terminal` entry, whatever it runs, and nothing else (an empty
    `mcpServers` stays: we do not know whether we created it)."""
    doc = read_config(path)
    existing = doc.servers.get(SERVER_NAME)
    state = classify_entry(existing, wanted)
    if existing is None:
        return ConfigChange(str(path), "nothing to remove", state)
    data = dict(doc.data)
    data[MCP_SERVERS_KEY] = {k: v for k, v in doc.servers.items() if k != SERVER_NAME}
    text = render_config(data)
    if dry_run:
        return ConfigChange(str(path), "dry run", state, existing, preview=text)
    backup = _save(doc, text)
    return ConfigChange(str(path), "removed", state, existing, str(backup) if backup else None)


def desktop_entry(path: Path) -> Any:
    """Our entry in a Claude Desktop config, or None. Raises ConfigFileError for a broken file."""
    return read_config(path).servers.get(SERVER_NAME)


# --- Claude Code ---------------------------------------------------------------------------


def claude_get_argv(claude: str) -> list[str]:
    return [claude, "mcp", "get", SERVER_NAME]


def claude_remove_argv(claude: str) -> list[str]:
    return [claude, "mcp", "remove", "--scope", "user", SERVER_NAME]


def claude_add_argv(claude: str, entry: Mapping[str, Any]) -> list[str]:
    """`claude mcp add --scope user cowork-terminal -- CMD ARGS`, or `add-json` when the entry has env.

    `add -e KEY=VALUE` cannot be used: its -e option takes several values and swallows the server
    name (anthropics/claude-code#62332); `add-json` carries the entry exactly.
    """
    if entry.get("env"):
        return [claude, "mcp", "add-json", "--scope", "user", SERVER_NAME, json.dumps({"type": "stdio", **entry})]
    return [claude, "mcp", "add", "--scope", "user", SERVER_NAME, "--", entry["command"], *entry["args"]]


def parse_claude_get(text: str) -> dict[str, Any] | None:
    """The entry `claude mcp get` describes, or None when its output has no `Command:` line.

    It prints `Command: ...`, `Args: a b c` (joined with spaces, so this splits on spaces: our own
    arguments contain none) and `Environment:` followed by indented `KEY=value` lines.
    """
    command, args, env, in_env = None, [], {}, False
    for line in text.splitlines():
        stripped = line.strip()
        if in_env and line.startswith("    ") and "=" in stripped:
            key, _, value = stripped.partition("=")
            env[key] = value
            continue
        in_env = stripped == "Environment:"
        if stripped.startswith("Command:"):
            command = stripped.removeprefix("Command:").strip()
        elif stripped.startswith("Args:"):
            args = stripped.removeprefix("Args:").split()
    if command is None:
        return None
    entry: dict[str, Any] = {"command": command, "args": args}
    if env:
        entry["env"] = env
    return entry


def _run_claude(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """The one place that runs `claude`: no stdin (it must never wait for a person), bounded time."""
    try:
        return subprocess.run(
            argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=CLAUDE_CLI_TIMEOUT_S,
            creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),  # the windowed app must not flash one
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        problem = _("could not run {program}: {error}").format(program=" ".join(argv[:3]), error=exc)
        raise ClaudeCliError(problem) from exc


def _check(result: subprocess.CompletedProcess[str]) -> None:
    if result.returncode != 0:
        said = (result.stderr or result.stdout).strip()
        raise ClaudeCliError(
            _("`{command}` failed (exit {code}): {error}").format(
                command=" ".join(result.args[:3]), code=result.returncode, error=said
            )
        )


def claude_code_entry(claude: str) -> Any:
    """Our entry as Claude Code reports it, or None; a non-zero `mcp get` means there is none."""
    result = _run_claude(claude_get_argv(claude))
    if result.returncode != 0:
        return None
    parsed = parse_claude_get(result.stdout)
    return parsed if parsed is not None else {"unparsed": result.stdout.strip()}


def connect_claude_code(
    claude: str, entry: Mapping[str, Any], *, replace: bool = False, dry_run: bool = False
) -> ConfigChange:
    """Register our server with Claude Code at user scope (all projects), through its CLI."""
    existing = claude_code_entry(claude)
    state = classify_entry(existing, entry)
    if state == CURRENT:
        return ConfigChange(claude, "unchanged", state, existing)
    if state in (STALE, FOREIGN) and not replace:
        raise EntryConflictError(_conflict_message("Claude Code", state, existing))
    add = claude_add_argv(claude, updated_entry(existing, entry))
    commands = ([] if state == ABSENT else [claude_remove_argv(claude)]) + [add]
    if dry_run:
        return ConfigChange(claude, "dry run", state, existing, commands=commands)
    for argv in commands:
        _check(_run_claude(argv))
    return ConfigChange(claude, "written", state, existing, commands=commands)


def disconnect_claude_code(claude: str, wanted: Mapping[str, Any], *, dry_run: bool = False) -> ConfigChange:
    """Remove our server from Claude Code's user scope."""
    existing = claude_code_entry(claude)
    state = classify_entry(existing, wanted)
    if existing is None:
        return ConfigChange(claude, "nothing to remove", state)
    commands = [claude_remove_argv(claude)]
    if dry_run:
        return ConfigChange(claude, "dry run", state, existing, commands=commands)
    _check(_run_claude(commands[0]))
    return ConfigChange(claude, "removed", state, existing, commands=commands)


# --- one client, whichever kind ---------------------------------------------------------------


@dataclass(frozen=True)
class ClientStatus:
    """One client as `clients` shows it (and the tray may): install, config, our entry's state."""

    client_id: str
    name: str
    installed: bool
    config_path: str | None
    cli_path: str | None
    state: str  # ABSENT, CURRENT, CHANGED, STALE, FOREIGN, INVALID or UNKNOWN
    entry: Any  # the entry found, if any
    evidence: str
    note: str
    problem: str = ""  # why the state is INVALID


def client_status(location: ClientLocation, wanted: Mapping[str, Any]) -> ClientStatus:
    """Where `location` stands. A Desktop config is read even when the app was not detected, since
    the file may exist anyway; Claude Code can only be asked through its CLI, so without it: UNKNOWN."""
    config = str(location.config_path) if location.config_path else None
    cli = str(location.cli_path) if location.cli_path else None
    problem, entry = "", None
    try:
        if config:
            entry = desktop_entry(Path(config))
            state = classify_entry(entry, wanted)
        elif cli:
            entry = claude_code_entry(cli)
            state = classify_entry(entry, wanted)
        else:
            state = UNKNOWN
    except CoworkError as exc:
        state, problem = INVALID, str(exc)
    return ClientStatus(
        location.client_id, location.name, location.installed, config, cli, state, entry,
        location.evidence, location.note, problem,
    )  # fmt: skip


def _cli_of(location: ClientLocation) -> str:
    if location.cli_path is None:
        raise UsageError(
            _("{client} is not installed here: {evidence}").format(client=location.name, evidence=location.evidence)
        )
    return str(location.cli_path)


def connect_client(
    location: ClientLocation, entry: Mapping[str, Any], *, replace: bool = False, dry_run: bool = False
) -> ConfigChange:
    """`connect_desktop` or `connect_claude_code`, by the kind of client."""
    if location.config_path is not None:
        return connect_desktop(Path(location.config_path), entry, replace=replace, dry_run=dry_run)
    return connect_claude_code(_cli_of(location), entry, replace=replace, dry_run=dry_run)


def disconnect_client(location: ClientLocation, wanted: Mapping[str, Any], *, dry_run: bool = False) -> ConfigChange:
    """`disconnect_desktop` or `disconnect_claude_code`, by the kind of client."""
    if location.config_path is not None:
        return disconnect_desktop(Path(location.config_path), wanted, dry_run=dry_run)
    return disconnect_claude_code(_cli_of(location), wanted, dry_run=dry_run)
