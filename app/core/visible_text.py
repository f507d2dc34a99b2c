"""Text a person reads, with every character that would not show made visible.

A command can hide what it does from the person asked to approve it: a zero-width space inside a
name, bidi controls that show the words in another order, a no-break space that looks like a word
break but is not one to bash, or terminal escape sequences that erase the line in a terminal and
print a forged one (`cowork-terminal log`). Everywhere a person reads a command or a folder (the
windows, the CLI, notifications), it goes through `visible` first: such characters are shown as
`\\u200b`, and control characters in caret notation (`^[` for ESC). Only the text shown changes:
what runs, and what Copy copies, stays the command itself.
"""

from __future__ import annotations

import unicodedata

# Characters Unicode does not classify as invisible but that show as nothing (or as a space): the
# last two, marks that draw nothing (Khitan's filler, a null notehead), a red team's (2026-12-06).
_INVISIBLE_EXTRA = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u180e\u3164\uffa0\u2800\U00016fe4\U0001d159")


def _hidden(char: str) -> bool:
    if char == " " or (" " < char < "\x7f"):
        return False
    category = unicodedata.category(char)
    # Cc controls, Cf format (zero-width, bidi, BOM, tags), Co/Cn private and unassigned, Zs other
    # than the plain space, Zl/Zp separators, Mn variation selectors; plus the blank-looking letters.
    if category in ("Cc", "Cf", "Co", "Cn", "Zs", "Zl", "Zp", "Cs"):
        return True
    if "VARIATION SELECTOR" in unicodedata.name(char, ""):
        return True
    return char in _INVISIBLE_EXTRA


def _shown(char: str) -> str:
    code = ord(char)
    if code < 0x20:
        return "^" + chr(code + 0x40)  # ESC is ^[, NUL ^@, CR ^M: as terminals say them
    if code == 0x7F:
        return "^?"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def visible(text: str, *, keep: str = "\n\t") -> str:
    """`text` with each character that would not show written out (`\\u200b`, `^[`); the
    characters in `keep` (newline and tab, where the text may span lines) stay as they are."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(_shown(c) if c not in keep and _hidden(c) else c for c in text)


def hidden_count(text: str) -> int:
    """How many characters of `text` would not show (newlines and tabs aside)."""
    return sum(1 for c in text if c not in "\n\t" and _hidden(c))
