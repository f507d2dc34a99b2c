"""Where a command's standard input comes from: a pipe, known text, a file, or something unknown."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class _Stdin:
    kind: str  # "pipe", "text" (known code), "unknown" (a heredoc/here-string with expansions), "file"
    text: str = ""
    source: str = ""


_PIPE = _Stdin("pipe")
_STDIN_FILES = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})
