"""A Claude config file as a file: read and parsed strictly, rendered, and saved with a backup.

Claude Desktop keeps more than `mcpServers` in `claude_desktop_config.json` (its preferences), so a
file that cannot be parsed exactly is refused, never rewritten; each change backs the file up first
and replaces it atomically, and only if the file still holds what the change was made from
(claude/config.py decides what the change is, and makes it again on what Claude Desktop wrote).
"""

from __future__ import annotations

import errno
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
# A file that reads empty may be another program's save in place caught between its truncate and
# its write (Node's fs.writeFile, nano): it is read again after this long before it counts as `{}`.
EMPTY_REREAD_DELAY_S = 0.25
_BACKUP_SUFFIX_RE = re.compile(r"\.\d{8}-\d{6}-\d{9}\.bak$")
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_UTF8_BOM = b"\xef\xbb\xbf"


class ConfigFileError(UsageError):
    """A config file we refuse to change: not decodable, not JSON, or `mcpServers` not an object."""

    def __init__(self, path: Path, problem: str, line: int, column: int, message: str | None = None) -> None:
        self.path, self.problem, self.line, self.column = path, problem, line, column
        # `message`: the whole text, for a problem no text editor can fix (a FIFO where the file should be)
        super().__init__(
            message
            or _(
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


_NESTING_RE = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')  # a string (skipped whole) or a bracket


def _deepest_at(text: str) -> int | None:
    """Where the first bracket of the deepest nesting is (brackets inside strings do not count)."""
    depth = deepest = 0
    where = None
    for match in _NESTING_RE.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > deepest:
                deepest, where = depth, match.start()
        elif token in "]}":
            depth -= 1
    return where


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
    except RecursionError:
        # Python's json gives up past ~1,000 levels (Claude's JSON.parse does not): refused in words,
        # not a traceback; its own traceback, thousands of frames deep, is of no use (from None).
        line, column = _line_column_at(text, _deepest_at(text))
        raise ConfigFileError(path, _("values are nested too deeply"), line, column) from None
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


def _kind_of(mode: int) -> str:
    """What a file that is not a regular file (nor a folder) is, in the user's words."""
    if stat.S_ISFIFO(mode):
        return _("a named pipe (FIFO)")
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return _("a device")
    return _("a special file")


def _refuse_irregular(path: Path, mode: int) -> None:
    """Raise ConfigFileError unless `mode` is a regular file's: reading a FIFO blocks until a writer
    comes (forever), and a rename over a device (a link to /dev/null) would replace the device.
    A folder is the OSError reading one always gave ("cannot read ...: Is a directory")."""
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    problem = _("not a regular file but {kind}").format(kind=_kind_of(mode))
    message = _(
        "{path} is {problem}, so this app did not read or change it. Nothing was changed. "
        "Put Claude's config file there instead (or remove what is there) and run this again."
    ).format(path=path, problem=problem)
    raise ConfigFileError(path, problem, 1, 1, message)


def _read_regular(path: Path) -> bytes:
    """The bytes of `path` (links followed), refused before opening unless it is a regular file;
    non-blocking and checked again once open, in case a FIFO took its place meanwhile.
    Raises FileNotFoundError and other OSError unchanged."""
    _refuse_irregular(path, os.stat(path).st_mode)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb") as source:
        _refuse_irregular(path, os.fstat(source.fileno()).st_mode)
        return source.read()


def read_config(path: Path) -> ConfigDocument:
    """Read and parse a Claude Desktop config; a missing file is an empty document. A file that
    reads empty is read again after EMPTY_REREAD_DELAY_S: taken for `{}` in the middle of another
    program's save, the whole config would be replaced by our entry alone."""
    try:
        raw = _read_regular(path)
        if not raw:
            time.sleep(EMPTY_REREAD_DELAY_S)
            raw = _read_regular(path)
    except FileNotFoundError:
        return ConfigDocument(path, None, {})
    except OSError as exc:
        raise ConfigWriteError(_("cannot read {path}: {error}").format(path=path, error=exc.strerror or exc)) from exc
    return ConfigDocument(path, raw, parse_config(decode_config(raw, path), path))


_LONE_SURROGATE_RE = re.compile(r"[\ud800-\udfff]")
_FIRST_INDENT_RE = re.compile(r"\n([ \t]+)\S")
_NON_ASCII_ESCAPE_RE = re.compile(rb"\\u(?!00[0-7])[0-9a-fA-F]{4}")  # \\u0080 and up


def _layout(raw: bytes | None) -> tuple[int | str, str, bool]:
    """The indent, line ending and escaping of an existing file's text, so that a change leaves the
    rest of it as it was (a dotfiles diff shows our lines only): the first indented line's indent
    (a tab, or up to 8 spaces), CRLF if the file uses it, and non-ASCII escaped if the file is pure
    ASCII with such escapes. A file without indented lines (compact) gets 2 spaces, LF, UTF-8."""
    if not raw:
        return JSON_INDENT_SPACES, "\n", False
    encoding = "utf-16" if raw.startswith(_UTF16_BOMS) else "utf-8-sig"
    text = raw.decode(encoding, errors="replace")
    indent: int | str = JSON_INDENT_SPACES
    first = _FIRST_INDENT_RE.search(text)
    if first and first[1] == "\t":
        indent = "\t"
    elif first and set(first[1]) == {" "} and len(first[1]) <= 8:
        indent = len(first[1])
    newline = "\r\n" if "\r\n" in text[: text.find("\n") + 1] else "\n"
    escaped = raw.isascii() and _NON_ASCII_ESCAPE_RE.search(raw) is not None
    return indent, newline, escaped


def render_config(data: Mapping[str, Any], like: bytes | None = None) -> str:
    """The text we write: JSON laid out as the file `like` was (`_layout`; 2-space, LF by default),
    UTF-8 characters kept as they are unless that file escaped them, no BOM, final newline.

    A lone surrogate (`"\\ud83d"`, half an emoji, as JavaScript writes a cut string) has no UTF-8
    form: it is written back as the escape it was read from, so the user's text stays as it was.
    """
    indent, newline, escaped = _layout(like)
    text = json.dumps(data, indent=indent, ensure_ascii=escaped) + "\n"
    text = _LONE_SURROGATE_RE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)
    return text.replace("\n", newline)  # JSON text has no raw newline inside a string


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


def _write_backup(path: Path, raw: bytes, owner: tuple[int, int] | None = None) -> Path:
    """A private copy of `raw`, on disk before the file is changed (`owner`: as for write_atomic)."""
    target = backup_path(path, time.time_ns())
    # Exclusive create: a backup is never overwritten. Private, as the config may hold API keys.
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), PRIVATE_FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as out:
            if owner is not None:
                os.fchown(out.fileno(), *owner)
            out.write(raw)
            out.flush()
            os.fsync(out.fileno())
    except BaseException:
        # Cut short (a full disk): named like a good backup, it would be restored, and counted
        # among the BACKUPS_KEPT, pruning a good one.
        target.unlink(missing_ok=True)
        raise
    return target


_NO_SPACE = (errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC))


def _write_in_place(path: Path, data: bytes) -> None:
    """Overwrite `path`'s own inode with `data` (a hard-linked config: a rename would cut it off
    from its other names). Space is reserved first where the system can, so a full disk fails
    before a byte is changed; the new bytes go over the old and the rest is cut off after, so the
    file is never empty (a reader would take an empty file for `{}`). Not atomic: a reader may see
    a mix for a moment, which it refuses as broken JSON rather than misreads."""
    fd = os.open(path, os.O_WRONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "wb") as out:
        if not stat.S_ISREG(os.fstat(out.fileno()).st_mode):  # something else took its place
            raise ConfigChangedError(path)
        if data and hasattr(os, "posix_fallocate"):
            try:
                os.posix_fallocate(out.fileno(), 0, len(data))
            except OSError as exc:
                if exc.errno in _NO_SPACE:
                    raise
                # EINVAL/EOPNOTSUPP: a file system that cannot reserve; the write finds out
        out.write(data)
        out.flush()
        out.truncate(len(data))
        os.fsync(out.fileno())


def _owner_to_keep(info: os.stat_result) -> tuple[int, int] | None:
    """The file's owner and group, when we are root and they are someone else's (sudo -E): a new
    file made by root would take the config away from its user (and from Claude Desktop)."""
    if os.name != "posix" or os.geteuid() != 0:
        return None
    if (info.st_uid, info.st_gid) == (os.geteuid(), os.getegid()):
        return None
    return info.st_uid, info.st_gid


def _user_name(uid: int) -> str:
    try:
        import pwd  # POSIX only

        return pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError):
        return f"uid {uid}"


def _unwritable_message(path: Path, info: os.stat_result) -> str:
    """Why a config may not be replaced, and a fix that works: a file of another user's (root's,
    after a `sudo -E connect`) cannot be chmod-ed by this user, only given back with chown."""
    if os.name == "posix" and os.geteuid() not in (0, info.st_uid):
        return _(
            "{path} is owned by {owner}, not by you, so it was not changed. Make yourself its owner "
            '(sudo chown "$USER" "{path}") and run this again.'
        ).format(path=path, owner=_user_name(info.st_uid))
    return _(
        "{path} is read-only, so it was not changed. Make it writable "
        "(Windows: Properties, untick Read-only; macOS/Linux: chmod u+w) and run this again."
    ).format(path=path)


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
        raw: bytes | None = _read_regular(path)
    except FileNotFoundError:
        raw = None
    except ConfigFileError:  # a FIFO or device put there meanwhile: the next read refuses it in words
        raise ConfigChangedError(path) from None
    if raw != doc.raw:
        raise ConfigChangedError(path)


def save(doc: ConfigDocument, text: str) -> Path | None:
    """Back up the current file, write `text` atomically, then keep only the newest backups.

    A read-only file (no owner write permission, one this user may not write, or the Windows
    read-only attribute) is refused before anything is written: someone made it read-only on
    purpose, and on POSIX a rename would otherwise replace it anyway. So is anything but a regular
    file (ConfigFileError). Just before the file is replaced it is read again: if another program
    changed it since `doc` was read, ConfigChangedError (the caller starts over from the new
    content). If the write fails or is refused, the just-made backup (a copy of the unchanged file)
    is removed again, so a failure leaves the folder exactly as it was.

    Run as root on another user's file, the new file keeps that user as owner. A file with more
    than one hard link is written in place (`_write_in_place`), so that every name keeps the text.
    """
    data = text.encode("utf-8")  # before the backup: text that cannot be written leaves nothing behind
    # Write through a symlink (a config kept in a dotfiles repo): replacing the link with a
    # plain file would silently cut it off from its target.
    path = Path(os.path.realpath(doc.path))
    backup = None
    owner = None
    in_place = False
    try:
        if doc.raw is None:
            path.parent.mkdir(parents=True, exist_ok=True)
            mode = PRIVATE_FILE_MODE
        else:
            try:
                info = path.stat()
            except FileNotFoundError:  # deleted since it was read: that, too, is another program's change
                raise ConfigChangedError(path) from None
            _refuse_irregular(path, info.st_mode)
            mode = stat.S_IMODE(info.st_mode)
            if not may_replace(mode, os.name != "posix" or os.access(path, os.W_OK)):
                raise ConfigWriteError(_unwritable_message(path, info))
            owner = _owner_to_keep(info)
            in_place = info.st_nlink > 1
            backup = _write_backup(path, doc.raw, owner)
        refuse_if_changed(doc, path)  # before the new text is written out: the backup may have taken a moment
        if in_place:
            _write_in_place_or_restore(path, data, doc.raw, backup)
        else:
            # Checked again after the new file's fsync, which can take seconds on a slow disk.
            write_atomic(path, data, mode, owner=owner, before_replace=lambda: refuse_if_changed(doc, path))
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


def _write_in_place_or_restore(path: Path, data: bytes, raw: bytes | None, backup: Path | None) -> None:
    """`_write_in_place`; when it fails, the old bytes are written back, so the usual "not changed"
    holds (the OSError goes on). If even that fails, the file may be cut short: ConfigWriteError
    names the backup, which is kept."""
    try:
        _write_in_place(path, data)
    except OSError as exc:
        try:
            _write_in_place(path, raw or b"")
        except (OSError, ConfigChangedError):
            raise ConfigWriteError(
                _(
                    "could not write {path}: {error}. Its previous content is kept in {backup}: "
                    "copy that file back over it."
                ).format(path=path, error=exc.strerror or exc, backup=backup)
            ) from exc
        raise
