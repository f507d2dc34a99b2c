"""What the model asks a server to run, and the checks on it before anything runs.

Each rule says why it exists; a broken request gets a message that tells the model what to fix.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

from app.core.channel.pin import MAX_ENV_SHOWN
from app.core.errors import CoworkError
from app.core.execution.output import BYTES_PER_CHAR_MAX, MAX_BUDGET_CHARS, SCROLLBACK_MAX_LINES
from app.core.execution.output_files import FILE_CAP_BYTES

DEFAULT_TIMEOUT_MS = 30_000
MAX_TIMEOUT_MS = 600_000  # 10 minutes; clients cancel long before (about 60 s in Cowork)
MAX_COMMAND_BYTES = 100 * 1024  # Linux refuses a single argument over 128 KiB (MAX_ARG_STRLEN)
# Variables whose value is code, or names code to load, before or inside the command: bash's own,
# the loader's, and those of the interpreters and tools an agent runs most (Python, Node, Perl, Ruby,
# Java, glibc's iconv, git's config and helpers, less). A harmless-looking `git status` or
# `python3 -V` would run it unseen, so they are refused outright. Variables that change which
# program or repository is used (PATH, HOME, the other GIT_*) are allowed and their values are shown
# in the approval prompt (core/commands/pins/ SHOWN_ENV).
CODE_IN_ENVIRONMENT = re.compile(
    r"^(BASH_FUNC_.*|BASH_ENV|ENV|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|LD_.+|DYLD_.+|GCONV_PATH"
    r"|PYTHON(?!UNBUFFERED$|IOENCODING$|DONTWRITEBYTECODE$|UTF8$|HASHSEED$|FAULTHANDLER$).*"
    r"|NODE_OPTIONS|NODE_PATH|PERL5OPT|PERL5LIB|PERLLIB|PERL5DB|RUBYOPT|RUBYLIB"
    r"|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS"
    r"|GIT_CONFIG.*|GIT_EXEC_PATH|GIT_SSH|GIT_SSH_COMMAND|GIT_EDITOR|GIT_SEQUENCE_EDITOR|GIT_PAGER|GIT_ASKPASS"
    r"|GIT_EXTERNAL_DIFF|GIT_PROXY_COMMAND|GIT_TEMPLATE_DIR|GIT_TEST_FSMONITOR|LESSOPEN|LESSCLOSE"
    # A file of settings that names code (red team, 2026-12-04: a lesskey file's LESSOPEN, an OpenSSL
    # configuration's provider module, each under a harmless `less` or `curl --version`), the modules
    # GTK, GIO, Qt and GStreamer load, and npm's settings that name a shell or Node's options:
    r"|LESSKEY.*|OPENSSL_CONF.*|OPENSSL_MODULES|OPENSSL_ENGINES|GLIBC_TUNABLES"
    r"|GTK_MODULES|GTK_PATH|GIO_EXTRA_MODULES|GIO_MODULE_DIR|QT_PLUGIN_PATH|QT_QPA_PLATFORM_PLUGIN_PATH"
    r"|GST_PLUGIN.*|YARN_YARN_PATH"
    r"|NPM_CONFIG_(?:SCRIPT_SHELL|NODE_OPTIONS|USERCONFIG|GLOBALCONFIG|ONLOAD_SCRIPT|INIT_MODULE)"
    # Red team, 2026-12-05: tar's `--checkpoint-action=exec`, vim's and ex's start-up commands, less's
    # `+!` commands, psql's and mysql's settings files, bash's prompts; and the message buses' addresses,
    # whose `unixexec:` runs a program (under a harmless `systemctl --user is-active x`). Every variable
    # the classifier takes for code (tables.is_code_variable) is here, or picks programs (pins).
    r"|TAR_OPTIONS|VIMINIT|EXINIT|GVIMINIT|LESS|PSQLRC|MYSQL_HOME|PS[0-4]"
    r"|DBUS_(?:SESSION|SYSTEM|STARTER)_BUS_ADDRESS)$",
    re.I,
)


class CommandRefused(CoworkError):
    """The command did not run; the message tells the model why and what to do."""


@dataclass(frozen=True)
class ExecuteRequest:
    command: object
    cwd: object = None
    timeout_ms: object = None
    env: object = None


@dataclass(frozen=True)
class ValidRequest:
    command: str
    cwd: str
    timeout_ms: int
    env: dict[str, str]


# What cannot reach bash or the journal, whatever the argument: the operating system passes
# arguments and environment values as NUL-terminated C strings, and a lone UTF-16 surrogate (JSON
# may carry one as an unpaired "\ud800" escape) is not text, so it has no UTF-8 form at all.
NUL_PROBLEM = (
    "a NUL character (\\u0000), which no program can receive. Remove it; to produce a NUL byte, "
    "write it with printf '\\0' inside the command"
)
SURROGATE_PROBLEM = (
    "a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape), which is not text and has no UTF-8 "
    "form. Send proper UTF-8 text; to produce such bytes, write them with printf escapes inside the command"
)
GOT_TEXT_CHARS = 40  # how much of a wrong value a message quotes back


@dataclass(frozen=True)
class Argument:
    """One argument of a tool: its name, what it must be (for the message), and whether it is required."""

    name: str
    kind: str  # command, text, folder, milliseconds, env, lines
    required: bool = False


# Every tool's arguments, checked before anything else (the SDK's own validation never sees a bad
# value, so the model reads our words, never pydantic's).
TOOL_ARGUMENTS: dict[str, tuple[Argument, ...]] = {
    "execute_command": (
        Argument("command", "command", required=True),
        Argument("cwd", "folder"),
        Argument("timeout", "milliseconds"),
        Argument("env", "env"),
        Argument("background", "flag"),
    ),
    "execute_read_only_command": (
        Argument("command", "command", required=True),
        Argument("cwd", "folder"),
        Argument("timeout", "milliseconds"),
    ),
    "command_wait": (Argument("jobId", "job_id", required=True), Argument("timeout", "wait")),
    "command_output": (
        Argument("jobId", "job_id", required=True),
        Argument("tail", "count"),
        Argument("offset", "count"),
        Argument("limit", "count"),
    ),
    "command_stop": (Argument("jobId", "job_id", required=True),),
    "command_list": (),
    "terminal_run": (Argument("command", "command", required=True), Argument("timeout", "milliseconds")),
    "terminal_send_keys": (Argument("keys", "keys", required=True),),
    "terminal_confirm": (Argument("confirmation_id", "confirmation_id", required=True),),
    "terminal_cancel": (Argument("confirmation_id", "confirmation_id", required=True),),
    "terminal_interrupt": (),
    "terminal_read_scrollback": (Argument("lines", "lines"),),
}
# What each kind of string argument must be, in the words of "`name` must be a string: ..."
TEXT_MEANING = {
    "command": "the bash command to run",
    "keys": "the text to type",
    "confirmation_id": "the id from the held command's message",
    "folder": "the absolute path of an existing folder",
}


def json_kind(value: object) -> str:
    """What kind of JSON value the model sent, without the value."""
    if value is None or isinstance(value, bool):
        return "null" if value is None else "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return "an object" if isinstance(value, Mapping) else "a list" if isinstance(value, (list, tuple)) else "a string"


def got(value: object) -> str:
    """A wrong value as the model sent it, in JSON words, short."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return f"{value:g}" if isinstance(value, float) else str(value)
    if isinstance(value, str):
        shown = json.dumps(value[:GOT_TEXT_CHARS], ensure_ascii=True)
        return shown if len(value) <= GOT_TEXT_CHARS else f'{shown[:-1]}..." ({len(value):,} characters)'
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "a list"
    return type(value).__name__


def text_problem(text: str) -> str | None:
    """Why `text` cannot be passed on (NUL, lone surrogate), or None when it can."""
    if "\x00" in text:
        return NUL_PROBLEM
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return SURROGATE_PROBLEM
    return None


def argument_label(path: Sequence[str], *, key: bool = False) -> str:
    """How a message names one string inside the arguments: `command`, `env` name X, `env` value for X."""
    if len(path) >= 2 and path[0] == "env":
        name = path[1].encode("utf-8", "replace").decode()
        return f"`env` variable name {name!r}" if key else f"`env` value for {name}"
    return f"`{'.'.join(path)}`"


def unencodable_refusal(label: str, problem: str) -> CommandRefused:
    return CommandRefused(f"{label} contains {problem}.")


def check_strings(value: object, path: tuple[str, ...] = ()) -> None:
    """Refuse the first string, key or value, at any depth, that cannot be passed on; names it."""
    if isinstance(value, str):
        problem = text_problem(value)
        if problem:
            raise unencodable_refusal(argument_label(path), problem)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and (problem := text_problem(key)):
                raise unencodable_refusal(argument_label((*path, key), key=True), problem)
            check_strings(item, (*path, str(key)))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            check_strings(item, (*path, str(index)))


def check_arguments(tool: str, arguments: Mapping[str, object], accepted: Collection[str] | None = None) -> None:
    """Check one call's arguments before anything else: what cannot be encoded, names the tool does
    not take (`accepted`: its declared parameters), then each type.

    Raises CommandRefused with a message naming the argument and what it must be. Values that
    pass may still be refused later for what they mean (an empty command, a missing folder).
    """
    check_strings(arguments)
    if accepted is not None:
        check_names(tool, arguments, accepted)
    for argument in TOOL_ARGUMENTS.get(tool, ()):
        value = arguments.get(argument.name)
        if value is None:
            if argument.required:
                raise CommandRefused(missing_message(argument))
            continue
        check_kind(argument, value)
    command = arguments.get("command")
    if isinstance(command, str):  # at the edge: a call the tray would run must fit its channel too
        check_command_size(command)


def check_command_size(command: str) -> None:
    size = len(command.encode("utf-8", errors="surrogatepass"))
    if size > MAX_COMMAND_BYTES:
        raise CommandRefused(
            f"`command` is {size:,} bytes; the limit is {MAX_COMMAND_BYTES:,} bytes (the operating system's "
            "limit for one argument). Write large content to a file over several smaller calls "
            "(for example with heredocs appending `>>` to it), then run the file."
        )


def check_names(tool: str, arguments: Mapping[str, object], accepted: Collection[str]) -> None:
    """Refuse an argument the tool does not take: a misspelled `cwdir` would otherwise be dropped
    in silence, and the command would run in the home folder instead of the one the model meant."""
    unknown = [name for name in arguments if name not in accepted]
    if not unknown:
        return
    name = str(unknown[0])
    known = ", ".join(f"`{a}`" for a in accepted) or "none"
    import difflib  # here: only a call with a misspelt argument needs it

    close = difflib.get_close_matches(name, [str(a) for a in accepted], n=1)
    hint = f" Did you mean `{close[0]}`?" if close else ""
    raise CommandRefused(
        f"`{name}` is not an argument of {tool}, so nothing was run.{hint} Its arguments are: {known}."
    )


def missing_message(argument: Argument) -> str:
    if argument.kind == "command":
        return "`command` is empty: give the bash command to run."
    return f"`{argument.name}` is missing: give {TEXT_MEANING.get(argument.kind, 'it')}."


def check_kind(argument: Argument, value: object) -> None:
    """Whether a present value has its argument's type (booleans and strings are not numbers)."""
    if argument.kind in TEXT_MEANING:
        if not isinstance(value, str):
            meaning = TEXT_MEANING[argument.kind]
            raise CommandRefused(f"`{argument.name}` must be a string: {meaning} (got {got(value)}).")
    elif argument.kind == "milliseconds":
        timeout_ms(value)
    elif argument.kind == "wait":
        wait_ms(value)
    elif argument.kind == "env":
        environment(value)
    elif argument.kind == "lines":
        scrollback_lines(value)
    elif argument.kind == "job_id":
        job_id(value)
    elif argument.kind == "count":
        whole_number(argument.name, value)
    elif argument.kind == "flag" and not isinstance(value, bool):
        raise CommandRefused(f"`{argument.name}` must be true or false (got {got(value)}).")


def is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def timeout_ms(value: object) -> int:
    """The time limit in whole milliseconds; None means the default."""
    if value is None:
        return DEFAULT_TIMEOUT_MS
    if not is_number(value) or not math.isfinite(value) or not 1 <= value <= MAX_TIMEOUT_MS:
        hint = ""
        if is_number(value) and value > MAX_TIMEOUT_MS:
            hint = (
                " For longer work, start it in the background with its output going to a file, and check "
                "the file in later calls."
            )
        raise CommandRefused(
            f"`timeout` must be a number of milliseconds between 1 and {MAX_TIMEOUT_MS} (got {got(value)}).{hint}"
        )
    return max(1, int(value))


def wait_ms(value: object) -> float:
    """command_wait's `timeout`: any number of milliseconds from 0; the call waits no longer than its
    client lets one call last, and says so when it waited less than asked."""
    if not is_number(value) or not math.isfinite(value) or value < 0:
        raise CommandRefused(
            f"`timeout` must be a number of milliseconds, 0 or more (got {got(value)}). command_wait returns "
            "when the job ends or this time is up, and never waits longer than one call may last; leave "
            "`timeout` out to wait that long."
        )
    return float(value)


def scrollback_lines(value: object) -> int:
    low, high = 1, SCROLLBACK_MAX_LINES
    if not is_number(value) or not math.isfinite(value) or value != int(value) or not low <= value <= high:
        raise CommandRefused(f"`lines` must be a whole number from {low} to {high} (got {got(value)}).")
    return int(value)


# Tail lines, offset and limit in bytes: past the largest output file, which holds each of its two
# streams' first FILE_CAP_BYTES, then a note and the stream's kept end (4 bytes a character of the
# largest budget); twice that, so that no offset command_output returns is ever refused.
MAX_COUNT = 2 * 2 * (FILE_CAP_BYTES + MAX_BUDGET_CHARS * BYTES_PER_CHAR_MAX)


def job_id(value: object) -> int:
    """A job's id, as execute_command returned it."""
    if not is_number(value) or not math.isfinite(value) or value != int(value) or not 1 <= value < 2**63:
        raise CommandRefused(f"`jobId` must be the whole number execute_command returned as jobId (got {got(value)}).")
    return int(value)


def whole_number(name: str, value: object) -> int:
    if not is_number(value) or not math.isfinite(value) or value != int(value) or not 0 <= value <= MAX_COUNT:
        raise CommandRefused(f"`{name}` must be a whole number from 0 to {MAX_COUNT} (got {got(value)}).")
    return int(value)


def environment(env: object) -> dict[str, str]:
    """The model's extra variables, each rule saying why."""
    if env is None:
        return {}
    if not isinstance(env, Mapping):
        raise CommandRefused(f"`env` must be an object mapping variable names to string values (got {got(env)}).")
    if len(env) > MAX_ENV_SHOWN:  # the user is shown every one (pins.pin_command): a long list hid PATH's value
        raise CommandRefused(
            f"`env` has {len(env):,} variables; at most {MAX_ENV_SHOWN} may be sent. Send only the variables the "
            "command needs, or set the others inside the command."
        )
    clean_env: dict[str, str] = {}
    for key, value in env.items():
        if not isinstance(key, str) or not key or "=" in key or "\x00" in key:
            raise CommandRefused(f"`env` has an invalid variable name {key!r}: names are non-empty, without '='.")
        if CODE_IN_ENVIRONMENT.match(key):
            # bash or the dynamic loader would run code from it before the command: the command
            # line would not show that code, so neither the classifier nor the user could judge it.
            raise CommandRefused(
                f"`env` may not set {key}: it makes bash, the loader or the program run code that the command "
                "does not show. "
                "Put that code in the command itself."
            )
        if not isinstance(value, str):
            # Its kind only, never the value: a refused row's reason is journaled, and env values never are.
            raise CommandRefused(f"`env` value for {key} must be a string (got {json_kind(value)}); send it quoted.")
        if "\x00" in value:  # the operating system cannot pass NUL inside an environment value
            raise CommandRefused(f"`env` value for {key} contains a NUL byte, which cannot be passed to a process.")
        clean_env[key] = value
    return clean_env


def working_folder(cwd: object, home: str) -> str:
    """The folder a command runs in; every way it can be wrong gets its own message naming it."""
    if cwd is None or cwd == "":
        cwd = home
    if not isinstance(cwd, str):
        raise CommandRefused(f"`cwd` must be a string: {TEXT_MEANING['folder']} (got {got(cwd)}).")
    try:
        resolved = Path(cwd).expanduser()
    except RuntimeError:  # "~someone" whose home cannot be found
        raise CommandRefused(f"`cwd` names a home folder that does not exist: {cwd}. Give an absolute path.") from None
    if not resolved.is_absolute():
        resolved = Path(home) / resolved
    # Checked here so the model never sees Node's misleading "spawn bash ENOENT" for a bad folder,
    # nor a bare "Error executing tool" for one it may not look into (EACCES, ELOOP, ENAMETOOLONG).
    try:
        is_folder = stat.S_ISDIR(os.stat(resolved).st_mode)
    except FileNotFoundError:
        raise CommandRefused(
            f"`cwd` does not exist: {resolved}. Give an existing folder, or create it first."
        ) from None
    except NotADirectoryError:
        raise CommandRefused(
            f"`cwd` does not exist: {resolved} (a part of it is a file). Give an existing folder."
        ) from None
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise CommandRefused(
            f"`cwd` cannot be examined: {resolved} ({reason}). Give a folder this user can open."
        ) from None
    if not is_folder:
        raise CommandRefused(f"`cwd` is not a folder: {resolved}. Give the folder that contains it instead.")
    if not os.access(resolved, os.X_OK):
        raise CommandRefused(
            f"`cwd` cannot be entered: {resolved} (Permission denied). Give a folder this user can open."
        )
    return str(resolved)


def validate_request(request: ExecuteRequest, home: str) -> ValidRequest:
    """Check what the model sent and say exactly what is wrong; each rule says why it exists."""
    command = request.command
    check_strings({"command": command, "cwd": request.cwd, "env": request.env})
    if command is not None and not isinstance(command, str):
        raise CommandRefused(f"`command` must be a string: the bash command to run (got {got(command)}).")
    if not isinstance(command, str) or not command.strip():
        raise CommandRefused("`command` is empty: give the bash command to run.")
    check_command_size(command)
    cwd = working_folder(request.cwd, home)
    timeout = timeout_ms(request.timeout_ms)
    return ValidRequest(command=command, cwd=cwd, timeout_ms=timeout, env=environment(request.env))


@dataclass
class ClientInfo:
    """Who sends the requests: the MCP client as it named itself at initialize."""

    name: str | None = None
    version: str | None = None
    protocol: str | None = None  # the protocol version the client speaks, when it said
    patience: str | None = None  # COWORK_TERMINAL_PATIENCE_S of the server that forwarded the call (in a tray)
