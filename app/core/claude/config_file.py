"""A Claude config file as a file: read and parsed strictly, rendered, and saved with a backup.

Claude Desktop keeps more than `mcpServers` in `claude_desktop_config.json` (its preferences), so a
file that cannot be parsed exactly is refused, never rewritten; each change backs the file up first
and replaces it atomically (claude/config.py decides what the change is).
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.atomic_file import write_atomic
from app.core.errors import CoworkError, UsageError
from app.core.i18n import _
from app.core.paths import PRIVATE_FILE_MODE

MCP_SERVERS_KEY = "mcpServers"
BACKUPS_KEPT = 5
JSON_INDENT_SPACES = 2
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


class ConfigWriteError(CoworkError):
    """The config could not be written (read-only, locked, disk full); the file is as it was."""


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


_LONE_SURROGATE_RE = re.compile(r"[\ud800-\udfff]")


def render_config(data: Mapping[str, Any]) -> str:
    """The text we write: 2-space JSON, UTF-8 characters kept as they are, no BOM, final newline.

    A lone surrogate (`"\\ud83d"`, half an emoji, as JavaScript writes a cut string) has no UTF-8
    form: it is written back as the escape it was read from, so the user's text stays as it was.
    """
    text = json.dumps(data, indent=JSON_INDENT_SPACES, ensure_ascii=False) + "\n"
    return _LONE_SURROGATE_RE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


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


def may_replace(mode: int, writable: bool) -> bool:
    """Whether a config may be replaced: its owner may write it (`mode`), and so may we
    (`writable`, `os.access`): a root-owned 0644 file in the user's folder is not theirs to
    change, though a rename there would replace it."""
    return bool(mode & stat.S_IWUSR) and writable


def save(doc: ConfigDocument, text: str) -> Path | None:
    """Back up the current file, write `text` atomically, then keep only the newest backups.

    A read-only file (no owner write permission, one this user may not write, or the Windows
    read-only attribute) is refused before anything is written: someone made it read-only on
    purpose, and on POSIX a rename would otherwise replace it anyway. If the write fails, the
    just-made backup (a copy of the unchanged file) is removed again, so a failure leaves the
    folder exactly as it was.
    """
    data = text.encode("utf-8")  # before the backup: text that cannot be written leaves nothing behind
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
            if not may_replace(mode, os.name != "posix" or os.access(path, os.W_OK)):
                raise ConfigWriteError(
                    _(
                        "{path} is read-only, so it was not changed. Make it writable "
                        "(Windows: Properties, untick Read-only; macOS/Linux: chmod u+w) and run this again."
                    ).format(path=path)
                )
            backup = _write_backup(path, doc.raw)
        write_atomic(path, data, mode)
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
