"""Reads gettext .po catalogs and writes .mo files, with the standard library alone.

Stdlib only and free of `app` imports, so that setup.py (the build hook), the PyInstaller spec
and the running app all compile catalogs with this one file: the app needs no Babel at run time.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Entry:
    """One message of a catalog: its English text (msgid), its translation(s) and its flags."""

    msgid: str
    msgid_plural: str | None = None
    msgstr: list[str] = field(default_factory=list)  # one item, or one per plural form
    context: str | None = None
    flags: set[str] = field(default_factory=set)

    @property
    def fuzzy(self) -> bool:
        return "fuzzy" in self.flags

    @property
    def translated(self) -> bool:
        return bool(self.msgstr) and all(self.msgstr)


def parse_po(text: str) -> list[Entry]:
    """The entries of a .po file's text, header (msgid "") included; obsolete `#~` entries dropped."""
    entries: list[Entry] = []
    current: Entry | None = None
    flags: set[str] = set()
    target: tuple[str, int] | None = None  # which field continuation lines extend

    def finish() -> None:
        nonlocal current
        if current is not None:
            entries.append(current)
        current = None

    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            if current is not None and target is not None and target[0] != "ctx":
                finish()
                target = None
            if line.startswith("#,"):
                flags |= {flag.strip() for flag in line[2:].split(",") if flag.strip()}
            continue
        keyword, _, rest = line.partition(" ")
        if line.startswith('"'):
            if current is None or target is None:
                raise ValueError(f"line {number}: a string outside any entry")
            _extend(current, target, _unquote(line, number))
            continue
        if keyword == "msgctxt":
            finish()
            current = Entry(msgid="", context=_unquote(rest, number), flags=flags)
            flags, target = set(), ("ctx", 0)
        elif keyword == "msgid":
            if current is None or current.context is None or target != ("ctx", 0):
                finish()
                current = Entry(msgid="", flags=flags)
                flags = set()
            current.msgid = _unquote(rest, number)
            target = ("id", 0)
        elif keyword == "msgid_plural" and current is not None:
            current.msgid_plural = _unquote(rest, number)
            target = ("plural", 0)
        elif keyword == "msgstr" and current is not None:
            current.msgstr = [_unquote(rest, number)]
            target = ("str", 0)
        elif keyword.startswith("msgstr[") and current is not None:
            index = int(keyword[7:-1])
            while len(current.msgstr) <= index:
                current.msgstr.append("")
            current.msgstr[index] = _unquote(rest, number)
            target = ("str", index)
        else:
            raise ValueError(f"line {number}: cannot read {line[:40]!r}")
    finish()
    return entries


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}
_ESCAPE = re.compile(r"\\(.)")


def _unquote(token: str, number: int) -> str:
    token = token.strip()
    if not (len(token) >= 2 and token[0] == token[-1] == '"'):
        raise ValueError(f"line {number}: expected a quoted string, found {token[:40]!r}")
    body = token[1:-1]
    if "\\" not in body:
        return body
    try:  # a .po string's escapes are C's simple ones
        return _ESCAPE.sub(lambda match: _ESCAPES[match.group(1)], body)
    except KeyError as exc:
        raise ValueError(f"line {number}: unknown escape \\{exc.args[0]}") from None


def _extend(entry: Entry, target: tuple[str, int], text: str) -> None:
    kind, index = target
    if kind == "ctx":
        entry.context = (entry.context or "") + text
    elif kind == "id":
        entry.msgid += text
    elif kind == "plural":
        entry.msgid_plural = (entry.msgid_plural or "") + text
    else:
        entry.msgstr[index] += text


def compile_mo(entries: list[Entry]) -> bytes:
    """The .mo bytes of these entries: fuzzy and untranslated ones are left out, as msgfmt does.

    Those then fall back to the English text at run time. The header entry is always kept: it
    carries the Plural-Forms rule that ngettext needs.
    """
    messages: dict[bytes, bytes] = {}
    for entry in entries:
        is_header = entry.msgid == "" and entry.context is None
        if not is_header and (entry.fuzzy or not entry.translated):
            continue
        key = entry.msgid
        if entry.msgid_plural is not None:
            key += "\0" + entry.msgid_plural
        if entry.context is not None:
            key = entry.context + "\x04" + key
        messages[key.encode()] = "\0".join(entry.msgstr).encode()
    keys = sorted(messages)
    ids = strs = b""
    offsets: list[tuple[int, int, int, int]] = []
    for raw in keys:
        offsets.append((len(ids), len(raw), len(strs), len(messages[raw])))
        ids += raw + b"\0"
        strs += messages[raw] + b"\0"
    # The layout of GNU .mo files: header, two tables of (length, offset), then the strings.
    keys_start = 7 * 4 + 16 * len(keys)
    values_start = keys_start + len(ids)
    key_table: list[int] = []
    value_table: list[int] = []
    for id_offset, id_length, str_offset, str_length in offsets:
        key_table += [id_length, id_offset + keys_start]
        value_table += [str_length, str_offset + values_start]
    header = struct.pack("Iiiiiii", 0x950412DE, 0, len(keys), 7 * 4, 7 * 4 + len(keys) * 8, 0, 0)
    return (
        header
        + struct.pack(f"{len(key_table)}i", *key_table)
        + struct.pack(f"{len(value_table)}i", *value_table)
        + ids
        + strs
    )


def compile_file(po_path: Path, mo_path: Path) -> None:
    """Compile one .po file into a .mo file (the build hook and the PyInstaller spec use this)."""
    mo_path.parent.mkdir(parents=True, exist_ok=True)
    mo_path.write_bytes(compile_mo(parse_po(po_path.read_text(encoding="utf-8"))))


def compile_tree(locale_dir: Path, out_dir: Path) -> list[Path]:
    """Compile every `<lang>/LC_MESSAGES/*.po` under `locale_dir` into the same layout under `out_dir`."""
    written = []
    for po_path in sorted(locale_dir.glob("*/LC_MESSAGES/*.po")):
        mo_path = out_dir / po_path.relative_to(locale_dir).with_suffix(".mo")
        compile_file(po_path, mo_path)
        written.append(mo_path)
    return written
