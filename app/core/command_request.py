"""What the model asks a server to run, and the checks on it before anything runs.

Each rule says why it exists; a broken request gets a message that tells the model what to fix.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from app.core.errors import CoworkError

DEFAULT_TIMEOUT_MS = 30_000
MAX_TIMEOUT_MS = 600_000  # 10 minutes; clients cancel long before (about 60 s in Cowork)
MAX_COMMAND_BYTES = 100 * 1024  # Linux refuses a single argument over 128 KiB (MAX_ARG_STRLEN)
CODE_IN_ENVIRONMENT = re.compile(r"^(BASH_FUNC_.*|BASH_ENV|ENV|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|LD_.+|DYLD_.+)$")


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


def validate_request(request: ExecuteRequest, home: str) -> ValidRequest:
    """Check what the model sent and say exactly what is wrong; each rule says why it exists."""
    command = request.command
    if not isinstance(command, str) or not command.strip():
        raise CommandRefused("`command` is empty: give the bash command to run.")
    if "\x00" in command:  # bash cannot receive a NUL byte in its argument
        raise CommandRefused("`command` contains a NUL byte, which bash cannot receive. Remove it.")
    size = len(command.encode("utf-8", errors="surrogatepass"))
    if size > MAX_COMMAND_BYTES:
        raise CommandRefused(
            f"`command` is {size:,} bytes; the limit is {MAX_COMMAND_BYTES:,} bytes (the operating system's "
            "limit for one argument). Write large content to a file over several smaller calls "
            "(for example with heredocs appending `>>` to it), then run the file."
        )

    cwd = request.cwd
    if cwd is None or cwd == "":
        cwd = home
    if not isinstance(cwd, str):
        raise CommandRefused("`cwd` must be a string: the absolute path of an existing folder.")
    resolved = Path(cwd).expanduser()
    if not resolved.is_absolute():
        resolved = Path(home) / resolved
    # Checked here so the model never sees Node's misleading "spawn bash ENOENT" for a bad folder.
    if not resolved.exists():
        raise CommandRefused(f"`cwd` does not exist: {resolved}. Give an existing folder, or create it first.")
    if not resolved.is_dir():
        raise CommandRefused(f"`cwd` is not a folder: {resolved}. Give the folder that contains it instead.")

    timeout = request.timeout_ms
    if timeout is None:
        timeout = DEFAULT_TIMEOUT_MS
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout):
        raise CommandRefused("`timeout` must be a number of milliseconds.")
    if timeout < 1 or timeout > MAX_TIMEOUT_MS:
        raise CommandRefused(
            f"`timeout` must be between 1 and {MAX_TIMEOUT_MS} milliseconds (got {timeout:g}). "
            "For longer work, start it in the background with its output going to a file, and check "
            "the file in later calls."
        )

    env = request.env or {}
    if not isinstance(env, Mapping):
        raise CommandRefused("`env` must be an object mapping variable names to string values.")
    clean_env: dict[str, str] = {}
    for key, value in env.items():
        if not isinstance(key, str) or not key or "=" in key or "\x00" in key:
            raise CommandRefused(f"`env` has an invalid variable name {key!r}: names are non-empty, without '='.")
        if CODE_IN_ENVIRONMENT.match(key):
            # bash or the dynamic loader would run code from it before the command: the command
            # line would not show that code, so neither the classifier nor the user could judge it.
            raise CommandRefused(
                f"`env` may not set {key}: it makes bash or the loader run code that the command does not show. "
                "Put that code in the command itself."
            )
        if not isinstance(value, str):
            raise CommandRefused(
                f"`env` value for {key} must be a string, got {type(value).__name__}; quote it (\"{value}\")."
            )
        if "\x00" in value:  # the operating system cannot pass NUL inside an environment value
            raise CommandRefused(f"`env` value for {key} contains a NUL byte, which cannot be passed to a process.")
        clean_env[key] = value
    return ValidRequest(command=command, cwd=str(resolved), timeout_ms=int(timeout), env=clean_env)
