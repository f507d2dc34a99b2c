"""The app's own files (`protected_paths`): the texts that name them, and how a word relates to them."""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass

from .words import _Word


def _home() -> str:
    return os.path.expanduser("~").replace("\\", "/").rstrip("/") or "/"


def _norm_path(path: str) -> str:
    """Forward slashes, case folded (asking on a case-only difference is the safe side), no trailing /."""
    path = path.replace("\\", "/").casefold()
    if len(path) > 1:
        path = path.rstrip("/")
    return path


def _canonical(path: str) -> str:
    """One spelling for a Windows path: C:/x, /cygdrive/c/x and /mnt/c/x all become /c/x (Git Bash's)."""
    drive = re.match(r"^(?:([a-z]):|/cygdrive/([a-z])|/mnt/([a-z]))(?=/|$)(.*)$", path)
    if drive:
        return f"/{drive[1] or drive[2] or drive[3]}{drive[4]}"
    return path


_NAME_CHAR = r"[\w.\-]"


@dataclass(frozen=True)
class _Protected:
    """The app's data folder and settings, and the texts that name them in a command line."""

    paths: tuple[str, ...]  # absolute, normalised
    needle: re.Pattern[str] | None  # any spelling of one of them, with path-name boundaries

    @classmethod
    def build(cls, raw: Sequence[str]) -> _Protected:
        home = _norm_path(_home())
        paths: list[str] = []
        texts: set[str] = set()
        for item in raw:
            path = _norm_path(os.path.expanduser(str(item)))
            if not path or path == "/":
                continue
            paths.append(path)
            texts.add(path)
            drive = re.match(r"^([a-z]):/(.*)$", path)
            if drive:  # Git Bash and Cygwin spell C:/x as /c/x and /cygdrive/c/x
                texts.add(f"/{drive[1]}/{drive[2]}")
                texts.add(f"/cygdrive/{drive[1]}/{drive[2]}")
            if home not in ("", "/") and path.startswith(home + "/"):
                # The part under home covers ~/x, $HOME/x, ${HOME}/x, "$HOME"/x and `cd; ... x`.
                texts.add(path[len(home) + 1 :])
        if not texts:
            return cls((), None)
        alternatives = "|".join(re.escape(t) for t in sorted(texts, key=len, reverse=True))
        needle = re.compile(rf"(?<!{_NAME_CHAR})(?:{alternatives})(?!{_NAME_CHAR})")
        return cls(tuple(paths), needle)

    def mentioned_in(self, text: str) -> bool:
        if self.needle is None:
            return False
        folded = text.casefold()
        variants = (folded, folded.replace("\\", "/"), re.sub(r"\\(.)", r"\1", folded))
        return any(self.needle.search(v) for v in variants)

    def relation(self, word: _Word) -> str | None:
        """'inside' if the word may name a protected path or something in it, 'above' for a parent."""
        if not self.paths:
            return None
        if word.value is not None and self.mentioned_in(word.value):
            return "inside"
        path = _norm_path(word.pattern)
        if not re.match(r"^/|^[a-z]:/", path):
            return None
        fuzzy = word.value is None or word.glob
        if not fuzzy:
            path = posixpath.normpath(path)
        mine = [s for s in _canonical(path).split("/") if s not in ("", ".")]
        found = None
        for protected in self.paths:
            theirs = [s for s in _canonical(protected).split("/") if s]
            pairs = zip(mine, theirs, strict=False)  # the shorter decides: inside, or above
            if not all(fnmatch.fnmatchcase(t, m) if fuzzy else m == t for m, t in pairs):
                continue
            if len(mine) >= len(theirs):
                return "inside"
            found = "above"
        return found
