"""The agent's own scratch files (issue 24 item 11): a variable the same command assigned from
`mktemp`, and a path built from `$$` directly in the temporary folder. Deleting them is routine:
`t=$(mktemp) && ... && rm -f "$t"` and `tar czf /tmp/x-$$.tgz ... && rm -f /tmp/x-$$.tgz`.

Fail closed: a variable counts only when every mention of its name in the text is its `mktemp`
assignment or a plain `$t`/`${t}`, mktemp's arguments are plain words, and nothing in the text
could assign it by other means or replace mktemp (`source`, `.`, `eval`, a function or alias named
mktemp, a PATH change). What this cannot see: a function, alias or trap that an earlier command
left in the persistent session (each was judged when it was defined).
"""

from __future__ import annotations

import re

from .words import _Word

_ASSIGNED = re.compile(
    r"(?<![\w$])([A-Za-z_]\w*)=(\"?)(?:\$\(\s*mktemp((?:[ \t]+[^\s()`;&|$\"'\\*?\[]+)*)[ \t]*\)"
    r"|`\s*mktemp((?:[ \t]+[^\s()`;&|$\"'\\*?\[]+)*)[ \t]*`)\2(?=[\s;&|)]|$)"
)
_UNSAFE_TEXT = re.compile(
    r"(?<![\w.-])(?:source|eval|alias|unalias|declare|typeset|enable|hash)(?![\w.-])|(?:^|[;&|({\s])\.[ \t]"
    r"|mktemp\s*\(\s*\)|function\s+mktemp\b|\bPATH\+?=|\bBASH_ENV\b",
)
_SCRATCH_PATH = re.compile(r"^(\"?)/(?:tmp|var/tmp)/[\w.+-]*\$\$[\w.+-]*\1$")
_VARIABLE_WORD = re.compile(r"^(\"?)\$(?:([A-Za-z_]\w*)|\{([A-Za-z_]\w*)\})\1$")


def scratch_variables(text: str) -> frozenset[str]:
    """Names in `text` that hold only a fresh file or folder from mktemp (see the module's rules)."""
    if "mktemp" not in text or _UNSAFE_TEXT.search(text):
        return frozenset()
    found: set[str] = set()
    spans: dict[str, list[tuple[int, int]]] = {}
    for match in _ASSIGNED.finditer(text):
        arguments = (match[3] or match[4] or "").split()
        if "--" in arguments:
            continue
        name = match[1]
        found.add(name)
        spans.setdefault(name, []).append((match.start(1), match.end(1)))
    names = set()
    for name in found:
        mentions = re.finditer(rf"(?<![\w./-]){re.escape(name)}(?!\w)", text)  # not -t, /tmp/t
        if all(_is_expansion(text, m.start(), name) or (m.start(), m.end()) in spans[name] for m in mentions):
            names.add(name)
    return frozenset(names)


def _is_expansion(text: str, start: int, name: str) -> bool:
    """`$name` or `${name}` exactly: no `${name:=...}` (which assigns), no `${!name}`."""
    if text[start - 1 : start] == "$":
        return True
    return text[start - 2 : start] == "${" and text[start + len(name) : start + len(name) + 1] == "}"


def assigned_from_mktemp(value: str) -> bool:
    """The right-hand side of an assignment the pre-scan accepted: `$(mktemp ...)` or backticks."""
    return bool(re.match(r"^\"?(?:\$\(|`)\s*mktemp\b", value))


def scratch_word(w: _Word, seen: set[str]) -> bool:
    """`w` is exactly `$t`/`"${t}"` for a scratch variable already assigned, or `/tmp/name-$$.ext`."""
    if _SCRATCH_PATH.match(w.source):
        return True
    match = _VARIABLE_WORD.match(w.source)
    return match is not None and (match[2] or match[3]) in seen
