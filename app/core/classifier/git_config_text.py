"""A git config file's text read as git's config.c reads it (`config_entries`): its settings in
order, by name and value. Pure, with no file or program: what git_settings reads and follows, where
repository.py finds core.worktree, and what the pins read of a hooks folder all read alike."""

from __future__ import annotations

import re

Entry = tuple[str, str]  # (`section[.subsection].key`, value), as `config_entries` gives them
GIT_SPACES = " \t\n\r"  # git's isspace (its own ctype): not \v nor \f, which it keeps in a value
_ESCAPES = {"n": "\n", "t": "\t", "b": "\b"}  # and `\\`, `\"` as themselves; git refuses any other
# The usual lines, each read at once (a 256 KiB config char by char took 43 ms): a header without
# escapes, a key whose value has no quote, escape or comment; blanks before them
_BLANKS = re.compile(r"[ \t\n\r]*")
_PLAIN_LINE = re.compile(
    r'(?:\[([-A-Za-z0-9.]+)(?:[ \t\r]+"([^"\\\n]*)")?\][ \t\r]*'  # [section "sub"]
    r"|([A-Za-z][A-Za-z0-9-]*)[ \t]*=([^\n\\\"#;]*))(?=\n|$)"  # key = value
)
_KEY_NAME = re.compile(r"[A-Za-z][A-Za-z0-9-]*")
_SECTION_NAME = re.compile(r"[-A-Za-z0-9.]*")
_INLINE_BLANKS = re.compile(r"[ \t\r]*")
_NOT_PLAIN = re.compile(r'[\\"#;]')
_TO_SPACE = str.maketrans("\t\r", "  ")
_RAW_BYTE = re.compile("[\udc80-\udcff]")  # a byte not UTF-8, as git_settings._config_text decodes it


def config_entries(text: str) -> list[Entry]:
    """A git config's settings, in order, as (`section[.subsection].key`, value), read as git's
    config.c reads them: the section and key in lower case (all of an old-style `[remote.Backup]`),
    a subsection's `\\x` as `x`; a value's quotes anywhere in it, its escapes, its backslash-newline
    continuations and a comment outside quotes; a key without `=` as ""; each cut at a NUL. Spaces are
    git's (not \\v, \\f). A line git refuses (it then refuses the file, and runs no command) is
    skipped: what follows is still read."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")  # git skips a byte-order mark, so must we
    entries: list[Entry] = []
    section, at = "", 0
    while (at := _past(_BLANKS, text, at)) < len(text):
        char = text[at]
        if (plain := _PLAIN_LINE.match(text, at)) is not None:
            at = plain.end()
            if plain[1] is not None:
                section = plain[1].lower() + ("" if plain[2] is None else f".{plain[2]}")
            elif section:
                entries.append(_entry(f"{section}.{plain[3].lower()}", _plain_value(plain[4])))
        elif char == "[":
            header, at = _config_section(text, at + 1)
            section = section if header is None else header
        elif (name := _KEY_NAME.match(text, at)) is not None:
            key, at = name[0].lower(), name.end()
            while at < len(text) and text[at] in " \t":
                at += 1
            if at < len(text) and text[at] == "=":
                value, at = _config_value(text, at + 1)
            elif at < len(text) and text[at] != "\n":
                at = _line_end(text, at)
                continue
            else:
                value = ""
            if section:
                entries.append(_entry(f"{section}.{key}", value))
        else:  # a comment, or a line git refuses
            at = _line_end(text, at)
    if _RAW_BYTE.search(text) is not None:
        return [(_as_git_reads(key), _as_git_reads(value)) for key, value in entries]
    return entries


def _as_git_reads(text: str) -> str:
    """Bytes not UTF-8 (as surrogates) as git reads them: one character where a quote or an escape
    git drops stood between its bytes (`[remote "\\xc3\\\\\\xa9"]`: the remote `é`)."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no decoding of bytes gave: as it is
        return text


def _entry(key: str, value: str) -> Entry:
    """A setting as git passes it on: C strings, each cut at its first NUL (a review, 2026-12-05:
    `[remote "a.url\\0"] x = URL` is `remote.a.url`, and a value `gh:\\0x` the prefix `gh:`)."""
    if "\0" in key or "\0" in value:
        return key.partition("\0")[0], value.partition("\0")[0]
    return key, value


def _line_end(text: str, at: int) -> int:
    end = text.find("\n", at)
    return len(text) if end < 0 else end + 1


def _config_section(text: str, at: int) -> tuple[str | None, int]:
    """The section a header names (from after its `[`) and where reading goes on; None for one git
    refuses (then from the end of its line)."""
    start, at = at, _past(_SECTION_NAME, text, at)
    name = text[start:at].lower()
    if text[at : at + 1] == "]" and name:
        return name, at + 1
    if text[at : at + 1] not in ("", "\n") and text[at] in GIT_SPACES:
        at = _past(_INLINE_BLANKS, text, at)
        if text[at : at + 1] == '"':
            sub, at = _config_subsection(text, at + 1)
            if sub is not None and text[at : at + 1] == "]":
                return f"{name}.{sub}", at + 1
    return None, _line_end(text, at)


def _past(pattern: re.Pattern[str], text: str, at: int) -> int:
    """Where what `pattern` (which may match nothing) matches at `at` ends."""
    found = pattern.match(text, at)
    return at if found is None else found.end()


def _config_subsection(text: str, at: int) -> tuple[str | None, int]:
    """A quoted subsection from after its `"`: each `\\x` as `x`; None where a line ends first."""
    sub: list[str] = []
    while at < len(text):
        char, at = text[at], at + 1
        if char == '"':
            return "".join(sub), at
        if char == "\\" and at < len(text):
            char, at = text[at], at + 1
        if char == "\n":
            return None, at - 1
        sub.append(char)
    return None, at


def _plain_value(text: str) -> str:
    """A value with no quote, escape or comment: each space inside as one space (a tab too)."""
    value = text.strip(" \t\r")
    return value if value.isprintable() else value.translate(_TO_SPACE)


def _config_value(text: str, at: int) -> tuple[str, int]:
    """A value from after its `=` to the end of its line, as git's parse_value reads it (spaces
    outside quotes at either end dropped, each inside kept as one space), and where the next line starts."""
    end = _line_end(text, at)
    line = text[at:end].rstrip("\n")
    if _NOT_PLAIN.search(line) is None:
        return _plain_value(line), end
    value: list[str] = []
    quoted = comment = False
    spaces = 0
    while at < len(text):
        char, at = text[at], at + 1
        if char == "\n":
            break  # inside quotes git refuses the line: what came before is kept
        if comment:
            continue
        if char in GIT_SPACES and not quoted:
            spaces += 1 if value else 0
            continue
        if char in "#;" and not quoted:
            comment = True
            continue
        if spaces:
            value.append(" " * spaces)
            spaces = 0
        if char == "\\":
            if at >= len(text):
                break
            char, at = text[at], at + 1
            if char != "\n":
                value.append(_ESCAPES.get(char, char))
        elif char == '"':
            quoted = not quoted
        else:
            value.append(char)
    return "".join(value), at
