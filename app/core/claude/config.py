"""Our entry in each Claude client's MCP config: build it, write it safely, report it, remove it.

Claude Desktop keeps more than `mcpServers` in `claude_desktop_config.json` (its preferences), so
this module never drops or reorders a key it does not own; config_file.py refuses to touch a file
it cannot parse, backs the file up before each change and replaces it atomically. Claude Code is driven
through its own CLI (`claude mcp add/remove/get --scope user`), never by editing its files.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PureWindowsPath
from typing import Any

from app.core.claude import config_file
from app.core.claude.config_file import (  # the rest re-exported: callers use them from here
    BACKUPS_KEPT,  # noqa: F401
    MCP_SERVERS_KEY,
    ConfigChangedError,
    ConfigDocument,
    ConfigFileError,
    ConfigWriteError,  # noqa: F401
    backup_path,  # noqa: F401
    list_backups,  # noqa: F401
    read_config,
    render_config,
)
from app.core.claude.locations import ClientLocation
from app.core.errors import CoworkError, UsageError
from app.core.i18n import _
from app.core.install.installation import same_program
from app.core.paths import HOME_ENV
from app.core.self_command import app_argv

SERVER_NAME = "cowork-terminal"
# `claude mcp add/remove` start Claude Code itself (node, its settings), which can take seconds.
CLAUDE_CLI_TIMEOUT_S = 60.0

# What an existing `cowork-terminal` entry is, compared with the one this app would write.
ABSENT = "absent"  # no entry
CURRENT = "current"  # exactly ours: nothing to do
CHANGED = "changed"  # this app (same executable) with other options, or without -I: updated without --replace
STALE = "stale"  # this app's command shape, another executable (an old install): needs --replace
FOREIGN = "foreign"  # something else under our name (`npx cowork-terminal-mcp`...): needs --replace
ALTERED = "altered"  # this app, plus an `env` key, field or argument it never writes: not connected until rewritten
INVALID = "invalid"  # the config file cannot be read; status only
UNKNOWN = "unknown"  # the client is not installed, so its entry cannot be asked for; status only


class EntryConflictError(CoworkError):
    """A `cowork-terminal` entry that is not this app's; replaced only when the user says so."""

    def __init__(self, message: str, entry: Any = None) -> None:
        super().__init__(message)
        self.entry = entry  # the entry found, for a caller that says what it left alone


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


# What this app writes into an entry besides `command` and `args`: COWORK_TERMINAL_HOME (when the
# app that connects has one) and nothing else. Any other `env` key, even one of our own settings
# (COWORK_TERMINAL_BWRAP, _BASH...), or any other field (`url`, `type: http`) can change what runs,
# so the entry is not ours as it stands (ALTERED) until rewritten. Claude Code adds `type: stdio`.
OWN_FIELDS = ("command", "args", "env", "type")
OWN_TYPE = "stdio"
SERVE_FLAGS = ("--headless",)  # `serve`'s own options, as this app writes them
SERVE_VALUE_OPTIONS = ("--tools",)


def is_own_env_key(key: str) -> bool:
    """Whether `key` is one this app writes into an entry's `env` (its value is checked apart)."""
    return key == HOME_ENV


def added_to_entry(entry: Mapping[str, Any], wanted: Mapping[str, Any] | None = None) -> list[str]:
    """What one of our entries carries that this app never writes and that can change what runs:
    an `env` key other than COWORK_TERMINAL_HOME, COWORK_TERMINAL_HOME naming another folder than
    `wanted`'s (default: the running app's), a field such as `url`, or an argument after `serve`
    that is not one of its options (issue 21). Empty for an entry as this app writes it."""
    wanted_env = (this_app_entry() if wanted is None else wanted).get("env") or {}
    added = [f"field {key}" for key in entry if key not in OWN_FIELDS]
    if "type" in entry and entry["type"] != OWN_TYPE:
        added.append(f"field type {json.dumps(entry['type'])}")
    env = entry.get("env")
    if env is not None and not isinstance(env, Mapping):
        added.append(f"env {json.dumps(env)}")
    elif isinstance(env, Mapping):
        added += [f"env {k}" for k, v in env.items() if not is_own_env_key(str(k)) or v != wanted_env.get(k)]
    return added + [f"argument {option}" for option in serve_options(entry)[1]]


def serve_options(entry: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The arguments after `serve` in one of our entries: `serve`'s own options (`--headless`,
    `--tools all`), kept across an update, and the others, which this app never writes."""
    args = [str(arg) for arg in entry.get("args") or []]
    options = args[args.index("serve") + 1 :] if "serve" in args else []
    own: list[str] = []
    other: list[str] = []
    i = 0
    while i < len(options):
        option = options[i]
        if option in SERVE_VALUE_OPTIONS and i + 1 < len(options):
            own += options[i : i + 2]
            i += 2
            continue
        is_own = option in SERVE_FLAGS or option.split("=", 1)[0] in SERVE_VALUE_OPTIONS and "=" in option
        (own if is_own else other).append(option)
        i += 1
    return own, other


def updated_entry(existing: Any, wanted: Mapping[str, Any]) -> dict[str, Any]:
    """`wanted`, as it would stand in place of `existing`: Claude Code's `type: stdio` is kept.

    Nothing else of an existing entry survives an update: what this app does not write
    (`added_to_entry`) is dropped, and COWORK_TERMINAL_HOME follows the app that connects.
    """
    if isinstance(existing, Mapping) and is_app_entry(existing) and existing.get("type") == OWN_TYPE:
        return {"type": OWN_TYPE, **wanted}
    return dict(wanted)


def launch_outdated(existing: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    """Whether one of our entries starts `serve` otherwise than this app now writes it: without
    `-I` (written before issue 21), which lets files in the folder Claude starts it in run as the app."""

    def head(entry: Mapping[str, Any]) -> list[Any]:
        args = list(entry.get("args") or [])
        return args[: args.index("serve") + 1] if "serve" in args else args

    return head(existing) != head(wanted)


def classify_entry(existing: Any, wanted: Mapping[str, Any]) -> str:
    """ABSENT, CURRENT, CHANGED, ALTERED, STALE or FOREIGN: see the constants."""
    if existing is None:
        return ABSENT
    if existing == updated_entry(existing, wanted):
        return CURRENT
    if not isinstance(existing, Mapping) or not is_app_entry(existing):
        return FOREIGN
    if not same_program(str(existing["command"]), str(wanted["command"])):
        return STALE
    if added_to_entry(existing, wanted):
        return ALTERED
    # The same interpreter by another name (python, python3): the entry is ours as it stands.
    same_command = {**wanted, "command": existing["command"]}
    return CURRENT if existing == updated_entry(existing, same_command) else CHANGED


# --- reading -------------------------------------------------------------------------------


# --- writing -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConfigChange:
    """What connect/disconnect did (or, in a dry run, would do) to one client."""

    target: str  # the config file, or the `claude` executable
    action: str  # "written", "removed", "unchanged", "nothing to remove", "dry run"
    previous: str  # the state of our entry before: ABSENT, CURRENT, CHANGED, ALTERED, STALE, FOREIGN
    previous_entry: Any = None
    backup: str | None = None
    preview: str | None = None  # dry run: the whole JSON text that would be written
    commands: list[list[str]] = field(default_factory=list)  # Claude Code: what runs (or would)


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


# Claude Desktop writes its preferences into the file while it runs: a change is made again on what
# it wrote this many times before the user is told to try again (a program writing the file non-stop).
SAVE_ATTEMPTS = 3


def _change_desktop(
    path: Path, plan: Callable[[ConfigDocument], tuple[ConfigChange, str | None]], dry_run: bool
) -> ConfigChange:
    """Read the file, `plan` the change on what it holds (the result, and the text to write or None
    for no write) and save it. When another program wrote the file between our read and our write,
    the change is planned again on what that program wrote, so its keys are kept, not overwritten
    with the old ones. After SAVE_ATTEMPTS such races, ConfigChangedError: the file stays as it was written."""
    for attempt in range(1, SAVE_ATTEMPTS + 1):
        doc = read_config(path)
        change, text = plan(doc)
        if text is None:
            return change
        if dry_run:
            return dataclasses.replace(change, action="dry run", preview=text)
        try:
            backup = config_file.save(doc, text)
        except ConfigChangedError:
            if attempt == SAVE_ATTEMPTS:
                raise
            continue
        return dataclasses.replace(change, backup=str(backup) if backup else None)
    raise AssertionError("unreachable: the last attempt returns or raises")


def connect_desktop(
    path: Path, entry: Mapping[str, Any], *, replace: bool = False, dry_run: bool = False
) -> ConfigChange:
    """Put our entry into a Claude Desktop config, keeping everything else as it was."""

    def plan(doc: ConfigDocument) -> tuple[ConfigChange, str | None]:
        existing = doc.servers.get(SERVER_NAME)
        state = classify_entry(existing, entry)
        if state == CURRENT:
            return ConfigChange(str(path), "unchanged", state, existing), None
        if state in (STALE, FOREIGN) and not replace:
            raise EntryConflictError(_conflict_message(str(path), state, existing), existing)
        data = dict(doc.data)  # dicts keep insertion order: every other key stays where it was; laid out as it was
        data[MCP_SERVERS_KEY] = {**doc.servers, SERVER_NAME: updated_entry(existing, entry)}
        return ConfigChange(str(path), "written", state, existing), render_config(data, doc.raw)

    return _change_desktop(path, plan, dry_run)


def _refuse_foreign(where: str, state: str, existing: Any) -> None:
    """Another program's entry under our name is not ours to remove: connect would not replace it
    unasked either. Checked on the read the change is made from (uninstall planned earlier)."""
    if state == FOREIGN:
        raise EntryConflictError(_conflict_message(where, state, existing), existing)


def disconnect_desktop(path: Path, wanted: Mapping[str, Any], *, dry_run: bool = False) -> ConfigChange:
    """Remove our `cowork-terminal` entry (any copy of this app's) and nothing else (an empty
    `mcpServers` stays: we do not know whether we created it). Another program's is refused."""

    def plan(doc: ConfigDocument) -> tuple[ConfigChange, str | None]:
        existing = doc.servers.get(SERVER_NAME)
        state = classify_entry(existing, wanted)
        if existing is None:
            return ConfigChange(str(path), "nothing to remove", state), None
        _refuse_foreign(str(path), state, existing)
        data = dict(doc.data)
        data[MCP_SERVERS_KEY] = {k: v for k, v in doc.servers.items() if k != SERVER_NAME}
        return ConfigChange(str(path), "removed", state, existing), render_config(data, doc.raw)

    return _change_desktop(path, plan, dry_run)


def desktop_entry(path: Path) -> Any:
    """Our entry in a Claude Desktop config, or None. Raises ConfigFileError for a broken file."""
    return read_config(path).servers.get(SERVER_NAME)


# --- Claude Code ---------------------------------------------------------------------------


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


def claude_code_entry(servers_file: Path) -> Any:
    """Our entry at Claude Code's user scope, read from its own file (`locations.claude_code_file`), or
    None. Raises UsageError for a broken file. `claude mcp add` writes an empty `env`, which
    this app's entries do not carry: it is read as none."""
    try:
        entry = read_config(servers_file).servers.get(SERVER_NAME)
    except ConfigFileError as broken:  # the Desktop config's advice (rename it) would lose Claude Code's state
        raise UsageError(
            _(
                "{path} (Claude Code's own settings) could not be read: {problem} (line {line}, column {column}). "
                "Nothing was changed. Do not delete or rename it: it also holds Claude Code's projects and "
                "sign-in. Correct that spot in a text editor, or restore a copy from Claude Code's backups folder."
            ).format(path=servers_file, problem=broken.problem, line=broken.line, column=broken.column)
        ) from broken
    if isinstance(entry, Mapping) and entry.get("env") == {}:
        entry = {key: value for key, value in entry.items() if key != "env"}
    return entry


def location_entry(location: ClientLocation) -> Any:
    """Our entry in one client's file (Claude Desktop's config, or Claude Code's servers file), or
    None. Raises ConfigFileError for a broken file."""
    if location.config_path is not None:
        return desktop_entry(Path(location.config_path))
    if location.servers_file is not None:
        return claude_code_entry(Path(location.servers_file))
    return None


def connect_claude_code(
    claude: str, servers_file: Path, entry: Mapping[str, Any], *, replace: bool = False, dry_run: bool = False
) -> ConfigChange:
    """Register our server with Claude Code at user scope (all projects), through its CLI: Claude Code
    writes its own file, which its running sessions write too."""
    existing = claude_code_entry(servers_file)
    state = classify_entry(existing, entry)
    if state == CURRENT:
        return ConfigChange(claude, "unchanged", state, existing)
    if state in (STALE, FOREIGN) and not replace:
        raise EntryConflictError(_conflict_message("Claude Code", state, existing), existing)
    add = claude_add_argv(claude, updated_entry(existing, entry))
    commands = ([] if state == ABSENT else [claude_remove_argv(claude)]) + [add]
    if dry_run:
        return ConfigChange(claude, "dry run", state, existing, commands=commands)
    for argv in commands[:-1]:
        _check(_run_claude(argv))
    try:
        _check(_run_claude(add))
    except ClaudeCliError:
        if existing is not None:  # removed above: the user must not be left with less than before
            _restore_claude_code(claude, existing)
        raise
    return ConfigChange(claude, "written", state, existing, commands=commands)


def _restore_claude_code(claude: str, entry: Any) -> None:
    """Put back, as it was, the entry removed before an add that failed; a second failure leaves
    the first error to be told (what `add` said is what the user must fix)."""
    with contextlib.suppress(ClaudeCliError):  # as Claude Code's file held it (with its `type`)
        _check(_run_claude([claude, "mcp", "add-json", "--scope", "user", SERVER_NAME, json.dumps(entry)]))


def disconnect_claude_code(
    claude: str, servers_file: Path, wanted: Mapping[str, Any], *, dry_run: bool = False
) -> ConfigChange:
    """Remove our server from Claude Code's user scope; another program's is refused."""
    existing = claude_code_entry(servers_file)
    state = classify_entry(existing, wanted)
    if existing is None:
        return ConfigChange(claude, "nothing to remove", state)
    _refuse_foreign("Claude Code", state, existing)
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
    state: str  # ABSENT, CURRENT, CHANGED, ALTERED, STALE, FOREIGN, INVALID or UNKNOWN
    entry: Any  # the entry found, if any
    evidence: str
    note: str
    problem: str = ""  # why the state is INVALID


def client_status(location: ClientLocation, wanted: Mapping[str, Any]) -> ClientStatus:
    """Where `location` stands. A Desktop config is read even when the app was not detected, since
    the file may exist anyway; Claude Code's file only when its CLI is found (it is what connects),
    so without it: UNKNOWN."""
    config = str(location.config_path) if location.config_path else None
    cli = str(location.cli_path) if location.cli_path else None
    problem, entry = "", None
    try:
        if config or cli:
            entry = location_entry(location)
            state = classify_entry(entry, wanted)
        else:
            state = UNKNOWN
    except CoworkError as exc:
        state, problem = INVALID, str(exc)
    return ClientStatus(
        location.client_id, location.name, location.installed, config, cli, state, entry,
        location.evidence, location.note, problem,
    )  # fmt: skip


def _claude_code_of(location: ClientLocation) -> tuple[str, Path]:
    """Claude Code's CLI (which writes) and its servers file (which we read)."""
    if location.cli_path is None:
        raise UsageError(
            _("{client} is not installed here: {evidence}").format(client=location.name, evidence=location.evidence)
        )
    assert location.servers_file is not None, "locate_clients names Claude Code's file"
    return str(location.cli_path), Path(location.servers_file)


def connect_client(
    location: ClientLocation, entry: Mapping[str, Any], *, replace: bool = False, dry_run: bool = False
) -> ConfigChange:
    """`connect_desktop` or `connect_claude_code`, by the kind of client."""
    if location.config_path is not None:
        return connect_desktop(Path(location.config_path), entry, replace=replace, dry_run=dry_run)
    return connect_claude_code(*_claude_code_of(location), entry, replace=replace, dry_run=dry_run)


def disconnect_client(location: ClientLocation, wanted: Mapping[str, Any], *, dry_run: bool = False) -> ConfigChange:
    """`disconnect_desktop` or `disconnect_claude_code`, by the kind of client."""
    if location.config_path is not None:
        return disconnect_desktop(Path(location.config_path), wanted, dry_run=dry_run)
    return disconnect_claude_code(*_claude_code_of(location), wanted, dry_run=dry_run)
