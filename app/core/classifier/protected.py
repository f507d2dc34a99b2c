"""The app's own files (`protected_paths`): the texts that name them, and how a word relates to them."""

from __future__ import annotations

import fnmatch
import functools
import os
import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from .words import _Word, brace_group


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
    profile: bool = False  # PowerShell's profile folder is among them: its code names it `$PROFILE`
    by_name: dict[str, tuple[tuple[tuple[str, ...], int], ...]] = field(default_factory=dict, compare=False)
    # ... each name in `parts` -> (the path's names, where it is among them): `_by_tail` looks up
    seen: dict[tuple[str, bool, bool], str | None] = field(default_factory=dict, compare=False, repr=False)
    # ... a pattern's relation, once per command's words (a word repeated 10,000 times took 35 s)

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
                homes = (
                    "~", "$home", "${home}", "$userprofile", "${userprofile}", "%userprofile%", "$env:userprofile",
                    "${env:userprofile}", "$($env:userprofile)", "$env:home", "${env:home}",
                    "%homedrive%%homepath%", "$homedrive$homepath", "${homedrive}${homepath}",
                )  # fmt: skip
                texts.update([rest] if bare else (f"{start}/{rest}" for start in homes))
            for variable, value in folders:  # `$LOCALAPPDATA/cowork-terminal`, `%APPDATA%\\x` (red team, Windows)
                folder = _norm_path(value)
                if folder not in ("", "/") and path.startswith(folder + "/"):
                    rest = path[len(folder) :]
                    name = variable.casefold()
                    texts.update((f"${name}{rest}", f"${{{name}}}{rest}", f"%{name}%{rest}", f"$env:{name}{rest}"))
                    texts.update((f"${{env:{name}}}{rest}", f"$($env:{name}){rest}"))
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
        by_name: dict[str, list[tuple[tuple[str, ...], int]]] = {}
        for names in parts:
            for i, name in enumerate(names):
                by_name.setdefault(name, []).append((names, i))
        folders_of = tuple(f"{n}/" for n in named)
        tails = {name: tuple(found) for name, found in by_name.items()}
        profile = any(_PROFILE_FOLDER.search(path) for path in paths)
        return cls(tuple(paths), needle, parts, shorts, folders_of, named, above, guarding, profile, tails)

    def at_home(self) -> _Protected:
        """The same paths named also by their part under home alone (`.bashrc`): for code run there."""
        return _Protected.build(self.paths, bare=True)

    def names_profile(self, code: str) -> bool:
        """Whether PowerShell `code` names its profile (`$PROFILE`, `$PROFILE.CurrentUserAllHosts`),
        which lives in a protected folder: said in PowerShell only (`--profile $PROFILE` in bash is not)."""
        return self.profile and _PROFILE_VARIABLE.search(code) is not None

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
            pattern = re.compile(rf"(?<![^/\s'\"=]){re.escape(prefix)}~\d+(?:\.\w{{1,3}})?(?![^/\s'\"])")
            found = [pattern.sub(name, t) for t in found for name in names][:_MAX_SPELLINGS]
        return found

    def written_into(self, pattern: str, *, by_name: bool = False) -> bool:
        """Whether a file written at `pattern` (report.written: `*` where an expansion decides) may be
        a protected path or in one, or lands in a folder above one (`cp .bashrc ~`, `tar -C ~`).
        Where no container guards them (names_protected), a glob or an expansion counts only here,
        where the command may write: `du -sh ~/* > du.txt` only reads the member a glob matches."""
        pattern = pattern.replace("{}", "*")  # what find, xargs or parallel put there
        found = self.relation(_Word(None, pattern, pattern, glob=True))
        return found == "inside" or (found == "above" and not by_name)  # `by_name`: each file's name is known

    def relation(self, word: _Word) -> str | None:
        """'inside' if the word may name a protected path or something in it, 'above' for a parent."""
        if not self.paths:
            return None
        if word.value is not None and self.mentioned_in(word.value):
            return "inside"
        attached = attached_path(word.pattern)  # `curl -o/home/ann/.bashrc`: the value of `-o` (a red team)
        if attached is not None:
            value = word.value and attached_path(word.value)
            return self.relation(_Word(value, word.source, attached, word.glob, word.procsub))
        key = (word.pattern, word.value is None or word.glob, word.glob)
        if key not in self.seen:
            if len(self.seen) > _MAX_SEEN:
                self.seen.clear()
            self.seen[key] = self._pattern_relation(*key)
        return self.seen[key]

    def _pattern_relation(self, pattern: str, fuzzy: bool, glob: bool) -> str | None:
        if glob and "{" in pattern:  # `~/.{bashrc,x}`: each word bash makes of it
            made = [self._pattern_relation(each, True, False) for each in _braces(pattern)]
            return "inside" if "inside" in made else "above" if "above" in made else None
        path = _norm_path(pattern)
        through = _PROC_LINK.match(path)  # `/proc/self/root/home/ann/.bashrc`, `/proc/self/cwd/../..` (a red team)
        if through:
            path = (path[through.end() :] or "/") if through[1] == "root" else "*" + path[through.end() :]
            fuzzy = fuzzy or through[1] == "cwd"
        if fuzzy:  # `../../.b?shrc` from a project: where `..` leads, as far as it can be told
            path = _fold_dots(path)
        if not _ABSOLUTE.match(path):
            return self._by_tail(path) if path.startswith("*/") else None
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
            if not all(_matches(t, m) for m, t in pairs):
                continue
            if len(mine) >= len(theirs):
                return "inside"
            found = "above"
        return found

    def _by_tail(self, path: str) -> str | None:
        """A path after an expansion nobody knows here (`$d/.bashrc`, a relative path after `cd -`):
        'inside' when its first names, written out, may be the last of a protected path's, by two
        names or more, or by one that starts with a dot (`.bashrc`, `.claude`: `$d/app` is not the
        program's folder, and `"$dir"/*.*` names nothing); 'above' when all its names may be the
        folders above one (`"$(echo ~)/.config"` for `~/.config/autostart`)."""
        tail = [s for s in path.split("/") if s not in ("", ".")][1:]
        if not tail:
            return None
        if _GLOB_CHARS.search(tail[0]):  # `.b*rc` may be a dotted member's name; `*.*` is left alone
            if not tail[0].startswith("."):
                return None
            places = [
                p for name, found in self.by_name.items() if name[:1] == "." and _matches(name, tail[0]) for p in found
            ]
        else:
            places = list(self.by_name.get(tail[0], ()))
        found = None
        for theirs, i in places:
            k = len(theirs) - i
            if k == 1 and not tail[0].startswith("."):
                continue
            if k > len(tail):
                if (len(tail) > 1 or tail[0].startswith(".")) and all(
                    _matches(theirs[i + j], tail[j]) for j in range(1, len(tail))
                ):
                    found = "above"
            elif all(_matches(theirs[i + j], tail[j]) for j in range(1, k)):
                return "inside"
        return found


# `source FILE` and `. FILE` only read FILE, which the container allows (`source ~/.bashrc` in the
# session after an allowed change to it: held, it ran apart and never reached the session).
# Only where a command starts: `tee -a . ~/.bashrc` writes it (a review, 2026-12-04). A text search
# only: what it blanks is still read word by word (`echo "a;. " > ~/.bashrc`, a red team).
SOURCED = re.compile(r"(?:^|(?<=[;&|(\n]))[^\S\n]*(?:source|\.)\s+(?:\"[^\"]*\"|'[^']*'|[^\s;&|)]+)")
_MAX_SEEN = 4096
_PROC_LINK = re.compile(r"/proc/(?:self|thread-self|\d+|\*)/(root|cwd)(?=/|$)")  # `*`: `/proc/$$/root`
_LONGEST_PATTERN = 1024
_POSIX_CLASS = re.compile(r"\[:(\w+):\]")
_CLASSES = {"alpha": "a-z", "lower": "a-z", "upper": "a-z", "digit": "0-9", "alnum": "a-z0-9", "xdigit": "0-9a-f"}


def _matches(name: str, pattern: str) -> bool:
    """fnmatch with bash's spellings in brackets too: `[^a]` and `[[:alpha:]]` (a red team: `~/.[^a]ashrc`)."""
    if "[" in pattern:
        pattern = _POSIX_CLASS.sub(lambda m: _CLASSES.get(m[1], " -~"), pattern.replace("[^", "[!"))
    if len(pattern) > _LONGEST_PATTERN:  # no file's name is that long; fnmatch took seconds on `[[[[...` (a review)
        return True  # asking is the safe side
    return fnmatch.fnmatchcase(name, pattern)


_ATTACHED = re.compile(r"-[A-Za-z]+?(?=/|[A-Za-z]:[/\\])")


def attached_path(word: str) -> str | None:
    """The path a one-letter option carries in the same word (`-o/home/x`, `-oC:/x`, tar's `-CC:/x`)."""
    found = _ATTACHED.match(word)
    return word[found.end() :] if found else None


_PROFILE_FOLDER = re.compile(r"/documents/(?:windows)?powershell$")
_PROFILE_VARIABLE = re.compile(r"(?<![\w$])\$profile\b", re.I)
_GLOB_CHARS = re.compile(r"[*?\[]")


def _fold_dots(path: str) -> str:
    """A pattern with `..` as bash would follow it: a written-out name before it goes, anything else
    (`*`, `.b?sh`) leaves where it leads unknown (`*/`)."""
    if ".." not in path:
        return path
    absolute = path.startswith("/")
    names: list[str] = []
    for name in path.split("/"):
        if name in ("", "."):
            continue
        if name != "..":
            names.append(name)
        elif names and names[-1] != "*" and not _GLOB_CHARS.search(names[-1]) and not names[-1].endswith(":"):
            names.pop()
        elif names and names[-1].endswith(":"):  # `c:/..` is `c:/`
            continue
        elif names or not absolute:
            names = ["*"]
    joined = "/".join(names)
    return joined if names[:1] == ["*"] or not absolute else "/" + joined


_MAX_BRACE_WORDS = 32


def _braces(pattern: str) -> list[str]:
    """The words bash makes of a brace expression (`.{bashrc,profile}`, nested too); a sequence
    (`{1..9}`) stands for any text, and so does every group left when there would be more than 32."""
    words = [pattern]
    while True:
        made: list[str] = []
        for word in words:
            found = brace_group(word)
            if found is None:
                made.append(word)
                continue
            body = found[1]
            choices = ["*"] if ".." in body and "," not in body else body.split(",")
            made += [word[: found.start()] + choice + word[found.end() :] for choice in choices]
        if made == words:
            return words
        if len(made) > _MAX_BRACE_WORDS:
            return [_any_braces(word) for word in words]
        words = made


def _any_braces(word: str) -> str:
    while (found := brace_group(word)) is not None:
        word = word[: found.start()] + "*" + word[found.end() :]
    return word
