"""The app's own files (`protected_paths`): the texts that name them, and how a word relates to them."""

from __future__ import annotations

import fnmatch
import functools
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


_ABSOLUTE = re.compile(r"^/|^[a-z]:/")
_DRIVE = re.compile(r"^([a-z]):/(.*)$")
_ANY_DRIVE = re.compile(r"^(?:([a-z]):|/cygdrive/([a-z])|/mnt/([a-z]))(?=/|$)(.*)$")
_ESCAPE = re.compile(r"\\(.)")


def _canonical(path: str) -> str:
    """One spelling for a Windows path: C:/x, /cygdrive/c/x and /mnt/c/x all become /c/x (Git Bash's)."""
    drive = _ANY_DRIVE.match(path)
    if drive:
        return f"/{drive[1] or drive[2] or drive[3]}{drive[4]}"
    return path


_NAME_CHAR = r"[\w.\-]"
_FOLDER_VARIABLES = ("LOCALAPPDATA", "APPDATA", "USERPROFILE")  # Windows' folders, as a command may name them
_WINDOWS_ESCAPES = re.compile(r"[\^`'\"]")  # and quotes: `"$LOCALAPPDATA"/cowork-terminal`
_TRAILING_DOTS = re.compile(r"(?<=[\w-])[. ]+(?=/|$|[\s'\"])")
_WINDOWS_HINTS = re.compile(r"[\^`'\"~]|[. ](?=[/\\\s]|$)")  # what makes one of those spellings
_MAX_SPELLINGS = 16


@dataclass(frozen=True)
class _Protected:
    """The app's data folder and settings, and the texts that name them in a command line."""

    paths: tuple[str, ...]  # absolute, normalised
    needle: re.Pattern[str] | None  # any spelling of one of them, with path-name boundaries
    parts: tuple[tuple[str, ...], ...] = ()  # each path's names, one spelling (what `relation` compares)

    short: tuple[tuple[str, tuple[str, ...]], ...] = ()  # 8.3 short names' first letters -> the names they may be
    folders: tuple[str, ...] = ()  # each path of `parts` as "/a/b/", what a path inside it starts with
    named: frozenset[str] = frozenset()  # ... and as "/a/b"
    above: frozenset[str] = frozenset()  # the folders above them: "/", "/a"
    guarding: bool = False  # names_protected's reading: a glob or expansion counts only where written

    @staticmethod
    def build(raw: Sequence[str], *, bare: bool = True, guarding: bool = False) -> _Protected:
        """Built once per set of paths, home folder and Windows' folder variables: every command is
        classified against the same. `bare`: a path under home is named by its part under home alone
        (`.claude`, as after `cd;`); otherwise only from `~`, `$HOME` or `%USERPROFILE%`. `guarding`:
        see `written_into`."""
        folders = tuple((name, os.environ.get(name, "")) for name in _FOLDER_VARIABLES)
        return _Protected._built(tuple(str(item) for item in raw), _home(), folders, bare, guarding)

    @classmethod
    @functools.lru_cache(maxsize=8)
    def _built(
        cls,
        raw: tuple[str, ...],
        home: str,
        folders: tuple[tuple[str, str], ...] = (),
        bare: bool = True,
        guarding: bool = False,
    ) -> _Protected:
        home = _norm_path(home)
        paths: list[str] = []
        texts: set[str] = set()
        for item in raw:
            path = _norm_path(os.path.expanduser(item))
            if not path or path == "/":
                continue
            paths.append(path)
            texts.add(path)
            drive = _DRIVE.match(path)
            if drive:  # Git Bash and Cygwin spell C:/x as /c/x and /cygdrive/c/x
                texts.add(f"/{drive[1]}/{drive[2]}")
                texts.add(f"/cygdrive/{drive[1]}/{drive[2]}")
            if home not in ("", "/") and path.startswith(home + "/"):
                # The part under home covers ~/x, $HOME/x, ${HOME}/x, "$HOME"/x and `cd; ... x`.
                rest = path[len(home) + 1 :]
                homes = ("~", "$home", "${home}", "$userprofile", "${userprofile}", "%userprofile%", "$env:userprofile")
                texts.update([rest] if bare else (f"{start}/{rest}" for start in homes))
            for variable, value in folders:  # `$LOCALAPPDATA/cowork-terminal`, `%APPDATA%\\x` (red team, Windows)
                folder = _norm_path(value)
                if folder not in ("", "/") and path.startswith(folder + "/"):
                    rest = path[len(folder) :]
                    name = variable.casefold()
                    texts.update((f"${name}{rest}", f"${{{name}}}{rest}", f"%{name}%{rest}", f"$env:{name}{rest}"))
            if re.search(r"/documents/(?:windows)?powershell$", path):  # PowerShell's profile file, by its variable
                texts.add("$profile")
        if not texts:
            return cls((), None)
        alternatives = "|".join(re.escape(t) for t in sorted(texts, key=len, reverse=True))
        needle = re.compile(rf"(?<!{_NAME_CHAR})(?:{alternatives})(?!{_NAME_CHAR})")
        parts = tuple(tuple(s for s in _canonical(path).split("/") if s) for path in paths)
        short: dict[str, set[str]] = {}
        for names in parts:
            for name in names:
                short.setdefault(re.sub(r"[. ]", "", name)[:6], set()).add(name)
        named = frozenset("/" + "/".join(names) for names in parts)
        above = frozenset("/" + "/".join(names[:n]) for names in parts for n in range(len(names)))
        shorts = tuple((k, tuple(sorted(v))) for k, v in short.items())
        return cls(tuple(paths), needle, parts, shorts, tuple(f"{n}/" for n in named), named, above, guarding)

    def mentioned_in(self, text: str) -> bool:
        if self.needle is None:
            return False
        folded = text.casefold()
        variants = [folded, folded.replace("\\", "/"), _ESCAPE.sub(r"\1", folded)]
        # Windows' own spellings of a name (red team, Windows): cmd's `^` and PowerShell's backtick
        # escapes (and quotes, which split `"$LOCALAPPDATA"/x`), a trailing dot or space Win32 drops
        # (`.cowork-terminal.`), an 8.3 short name (`COWORK~1`)
        if _WINDOWS_HINTS.search(folded):  # most words have none: no more text to make and search
            plain = _WINDOWS_ESCAPES.sub("", folded.replace("\\", "/"))
            trimmed = _TRAILING_DOTS.sub("", plain)
            variants += [plain, trimmed]
            if "~" in plain:
                variants += self._long_names(trimmed)
        # Most texts have none of these spellings: each distinct one is searched once (a fifth of the
        # classifier's time went to searching the same text five times).
        return any(self.needle.search(v) for v in dict.fromkeys(variants))

    def _long_names(self, text: str) -> list[str]:
        """`text` with each 8.3 short name (`cowork~1`) written as each protected name it may stand for."""
        found = [text]
        for prefix, names in self.short:
            pattern = re.compile(rf"(?<![^/\s'\"=]){re.escape(prefix)}~\d+(?![^/\s'\"])")
            found = [pattern.sub(name, t) for t in found for name in names][:_MAX_SPELLINGS]
        return found

    def written_into(self, pattern: str) -> bool:
        """Whether a file written at `pattern` (report.written: `*` where an expansion decides) may be
        a protected path or in one, or lands in a folder above one (`cp .bashrc ~`, `tar -C ~`).
        Where no container guards them (names_protected), a glob or an expansion counts only here,
        where the command may write: `du -sh ~/* > du.txt` only reads the member a glob matches."""
        return self.relation(_Word(None, pattern, pattern, glob=True)) is not None

    def relation(self, word: _Word) -> str | None:
        """'inside' if the word may name a protected path or something in it, 'above' for a parent."""
        if not self.paths:
            return None
        if word.value is not None and self.mentioned_in(word.value):
            return "inside"
        if word.glob and _BRACES.search(word.pattern):  # `~/.{bashrc,x}`: each word bash makes of it
            made = [self.relation(_Word(None, word.source, each, True)) for each in _braces(word.pattern)]
            return "inside" if "inside" in made else "above" if "above" in made else None
        path = _norm_path(word.pattern)
        if not _ABSOLUTE.match(path):
            return self._by_tail(path) if path.startswith("*") else None
        fuzzy = word.value is None or word.glob
        if not fuzzy:
            path = posixpath.normpath(path)
        mine = [s for s in _canonical(path).split("/") if s not in ("", ".")]
        if not fuzzy:  # as below, by prefixes: a 60-path set is searched for each word (no container)
            joined = "/" + "/".join(mine)
            if joined in self.named or joined.startswith(self.folders):
                return "inside"
            return "above" if joined in self.above else None
        found = None
        for theirs in self.parts:
            pairs = zip(mine, theirs, strict=False)  # the shorter decides: inside, or above
            if not all(fnmatch.fnmatchcase(t, m) for m, t in pairs):
                continue
            if len(mine) >= len(theirs):
                return "inside"
            found = "above"
        return found

    def _by_tail(self, path: str) -> str | None:
        """A path after an expansion nobody knows here (`$d/.bashrc`, a relative path after `cd -`):
        'inside' when its start may be the end of a protected path, by two names or more, or by one
        that starts with a dot (`.bashrc`, `.claude`: `$d/app` is not the program's folder)."""
        tail = [s for s in path.split("/") if s not in ("", ".")]
        if tail and tail[0] == "*":
            tail = tail[1:]
        for theirs in self.parts:
            for k in range(min(len(tail), len(theirs)), 0, -1):
                if (k > 1 or theirs[-1].startswith(".")) and all(
                    fnmatch.fnmatchcase(t, m) for m, t in zip(tail[:k], theirs[-k:], strict=True)
                ):
                    return "inside"
        return None


_BRACES = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")
_MAX_BRACE_WORDS = 32


def _braces(pattern: str) -> list[str]:
    """The words bash makes of a brace expression (`.{bashrc,profile}`, nested too), 32 at most; a
    sequence (`{1..9}`) stands for any text."""
    found = _BRACES.search(pattern)
    if found is None:
        return [pattern]
    body = found[0][1:-1]
    choices = ["*"] if ".." in body and "," not in body else body.split(",")
    words: list[str] = []
    for choice in choices:
        words += _braces(pattern[: found.start()] + choice + pattern[found.end() :])
        if len(words) >= _MAX_BRACE_WORDS:
            return words[:_MAX_BRACE_WORDS]
    return words
