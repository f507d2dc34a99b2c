"""A Claude config file as a file: read and parsed strictly, rendered, and saved with a backup.

Claude Desktop keeps more than `mcpServers` in `claude_desktop_config.json` (its preferences), so a
file that cannot be parsed exactly is refused, never rewritten; each change backs the file up first
and replaces it atomically, and only if the file still holds what the change was made from
(claude/config.py decides what the change is, and makes it again on what Claude Desktop wrote).
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import time
from collections.abc import Callable, Iterator, Mapping
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


class ConfigChangedError(ConfigWriteError):
    """Another program (Claude Desktop saving its preferences) wrote the file after we read it: our
    change, made on the old content, would undo theirs, so nothing was written."""

    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(
            _(
                "{path} was changed by another program while this app was changing it (Claude Desktop "
                "saves its settings there), so this app left it as that program wrote it. Wait a moment, "
                "or quit Claude Desktop, and run this again."
            ).format(path=path)
        )


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
    encoding, name = ("utf-16", "UTF-16") if raw.startswith(_UTF16_BOMS) else ("utf-8-sig", "UTF-8")
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        good = raw[: exc.start].decode(encoding, errors="replace")
        line, column = _line_column(good, len(good))
        problem = _("bytes that are not {encoding} text").format(encoding=name)  # not Python's "UTF-8-SIG"
        raise ConfigFileError(path, problem, line, column) from exc


class _Unwritable(ValueError):
    """Parsed by Python but not safe to write back; `locate` finds where in the text the culprit is."""

    def __init__(self, problem: str, locate: Callable[[str], int | None]) -> None:
        super().__init__(problem)
        self.problem, self.locate = problem, locate


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """JSON parsers keep the last of two equal keys; rewriting would silently drop the first."""
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            problem = _("the key {key} appears twice; delete one of them").format(key=repr(key))
            raise _Unwritable(problem, _duplicate_at)
        result[key] = value
    return result


def _refuse_constant(name: str) -> Any:
    """Python reads NaN and Infinity, but they are not JSON: Claude itself would reject the file."""
    raise _Unwritable(_("{name} is not valid JSON").format(name=name), lambda text: _scalar_at(text, name))


def _whole_number(literal: str) -> int:
    """Python refuses to read an integer of more than 4,300 digits (a ValueError, no JSON error):
    the file is refused in words, as a number too large for a float is (a review, 2026-12-05)."""
    try:
        return int(literal)
    except ValueError:
        problem = _("the number {number} is too large").format(number=f"{literal[:12]}…")
        raise _Unwritable(problem, lambda text: _scalar_at(text, literal)) from None


def _finite_float(literal: str) -> float:
    """A number too large for a float would be written back as Infinity, breaking the file."""
    value = float(literal)
    if math.isinf(value):
        problem = _("the number {number} is too large").format(number=literal)
        raise _Unwritable(problem, lambda text: _scalar_at(text, literal))
    return value


# --- where in the text: a walk over the JSON's tokens, so text inside strings never matches ---

_JSON_SPACE = " \t\n\r"
_SCALAR_RE = re.compile(r'[^ \t\n\r,:\[\]{}"]+')
_COLON_RE = re.compile(r"[ \t\n\r]*:[ \t\n\r]*")
_KEY, _SCALAR, _OBJECT_END = "key", "scalar", "object end"
_DECODER = json.JSONDecoder()  # reads one string token, escapes and all


def _tokens(text: str) -> Iterator[tuple[str, Any, int, int]]:
    """(kind, what, index, depth) in text order: each key (what: the key as decoded, escapes and
    all; index: where its value starts), each number or literal (what: its text), and each
    object's end (what: its (key, value index) pairs). Depth 1 is the top-level object. Only text
    the parser already accepted is walked, so it stops quietly at anything unexpected."""
    objects: list[list[tuple[str, int]] | None] = []  # one per open container; None for an array
    expect_key = False
    i = 0
    while i < len(text):
        char = text[i]
        if char in _JSON_SPACE:
            i += 1
        elif char == ",":
            expect_key = bool(objects) and objects[-1] is not None
            i += 1
        elif char in "{[":
            objects.append([] if char == "{" else None)
            expect_key = char == "{"
            i += 1
        elif char in "}]":
            if not objects:
                return
            pairs = objects.pop()
            if pairs is not None:
                yield _OBJECT_END, pairs, i, len(objects) + 1
            expect_key = False
            i += 1
        elif char == '"':
            try:
                value, i = _DECODER.raw_decode(text, i)
            except ValueError:
                return
            pairs = objects[-1] if objects else None
            if expect_key and pairs is not None:
                colon = _COLON_RE.match(text, i)
                if colon is None:
                    return
                i = colon.end()
                pairs.append((value, i))
                expect_key = False
                yield _KEY, value, i, len(objects)
        else:
            scalar = _SCALAR_RE.match(text, i)
            if scalar is None:
                return
            yield _SCALAR, scalar.group(), i, len(objects)
            i = scalar.end()


def _duplicate_at(text: str) -> int | None:
    """Where the value of the key the parser found twice starts: it checks each object's keys in
    order when the object ends (inner objects first), so this does too."""
    for kind, pairs, _index, _depth in _tokens(text):
        if kind == _OBJECT_END:
            seen: set[str] = set()
            for key, index in pairs:
                if key in seen:
                    return index
                seen.add(key)
    return None


def _scalar_at(text: str, literal: str) -> int | None:
    """Where the first number or literal spelled `literal` is (not one inside a string)."""
    return next((i for kind, what, i, _depth in _tokens(text) if kind == _SCALAR and what == literal), None)


def _top_level_value_at(text: str, key: str) -> int | None:
    """Where the value of the top-level object's `key` starts (not a nested key of that name)."""
    return next((i for kind, what, i, depth in _tokens(text) if kind == _KEY and depth == 1 and what == key), None)


def _json_kind(value: Any) -> str:
    """A value's type in JSON's words, as the file spells it; Python's ("NoneType", "list") mean
    nothing to someone editing the file."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)  # null, true, false: the words in the file
    if isinstance(value, str):
        return _('a text, "..."')
    if isinstance(value, list):
        return _("an array, [ ... ]")
    return _("a number")


def _line_column_at(text: str, index: int | None) -> tuple[int, int]:
    """Line and column of `index`; the start of the file when it could not be told (the message
    still names the problem)."""
    return (1, 1) if index is None else _line_column(text, index)


def parse_config(text: str, path: Path) -> dict[str, Any]:
    """The config's top-level object; an empty or blank file counts as `{}`."""
    if not text.strip():
        return {}
    try:
        data = json.loads(
            text,
            object_pairs_hook=_refuse_duplicates,
            parse_constant=_refuse_constant,
            parse_float=_finite_float,
            parse_int=_whole_number,
        )
    except json.JSONDecodeError as exc:
        # The decoder's detail stays English ("Expecting ',' delimiter"); the lead-in says what it is.
        problem = _("JSON syntax error: {detail}").format(detail=exc.msg)
        raise ConfigFileError(path, problem, exc.lineno, exc.colno) from exc
    except _Unwritable as exc:
        line, column = _line_column_at(text, exc.locate(text))
        raise ConfigFileError(path, exc.problem, line, column) from exc
    if not isinstance(data, dict):
        start = len(text) - len(text.lstrip())
        line, column = _line_column(text, start)
        raise ConfigFileError(path, _("the file must hold one JSON object, {{ ... }}").format(), line, column)
    servers = data.get(MCP_SERVERS_KEY, {})
    if not isinstance(servers, dict):
        line, column = _line_column_at(text, _top_level_value_at(text, MCP_SERVERS_KEY))
        problem = _('"{key}" must be an object, {{ ... }}, not {kind}').format(
            key=MCP_SERVERS_KEY, kind=_json_kind(servers)
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


def refuse_if_changed(doc: ConfigDocument, path: Path) -> None:
    """Raise ConfigChangedError unless `path` still holds exactly the bytes `doc` was read from (or
    still does not exist): Claude Desktop writes its preferences into this file while it runs, and
    text made from the old content would silently undo what it wrote."""
    try:
        raw: bytes | None = path.read_bytes()
    except FileNotFoundError:
        raw = None
    if raw != doc.raw:
        raise ConfigChangedError(path)


def save(doc: ConfigDocument, text: str) -> Path | None:
    """Back up the current file, write `text` atomically, then keep only the newest backups.

    A read-only file (no owner write permission, one this user may not write, or the Windows
    read-only attribute) is refused before anything is written: someone made it read-only on
    purpose, and on POSIX a rename would otherwise replace it anyway. Just before the file is
    replaced it is read again: if another program changed it since `doc` was read, ConfigChangedError
    (the caller starts over from the new content). If the write fails or is refused, the
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
            try:
                mode = stat.S_IMODE(path.stat().st_mode)
            except FileNotFoundError:  # deleted since it was read: that, too, is another program's change
                raise ConfigChangedError(path) from None
            if not may_replace(mode, os.name != "posix" or os.access(path, os.W_OK)):
                raise ConfigWriteError(
                    _(
                        "{path} is read-only, so it was not changed. Make it writable "
                        "(Windows: Properties, untick Read-only; macOS/Linux: chmod u+w) and run this again."
                    ).format(path=path)
                )
            backup = _write_backup(path, doc.raw)
        refuse_if_changed(doc, path)  # as late as can be: the backup may have taken a moment
        write_atomic(path, data, mode)
    except (OSError, ConfigChangedError) as exc:
        if backup is not None:
            backup.unlink(missing_ok=True)
        if isinstance(exc, ConfigChangedError):
            raise
        raise ConfigWriteError(
            _(
                "could not write {path}: {error}. The file was not changed. If another program "
                "has it open or locked (an editor, a sync or backup tool), close that and run this again."
            ).format(path=path, error=exc.strerror or exc)
        ) from exc
    _prune_backups(path)
    return backup
