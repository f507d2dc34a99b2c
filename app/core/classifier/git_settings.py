"""git's settings, read as git reads them: which of a repository's settings name a program git
runs (`core.fsmonitor`, a filter, an include: `git_runs`), and where its remotes and submodules
lead (`git_config`, `remote_urls`, `submodule_urls`). Read by our own reader (`config_entries`,
after git's config.c): the classifier starts no program."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

from .git_config_text import GIT_SPACES, Entry, config_entries
from .regular_files import read_regular
from .repository import (
    MAX_SETTINGS_BYTES,
    MAX_SUBMODULES,
    SettledCache,
    _CannotTell,
    _common_dir,
    _Files,
    _gitlinks,
    _listing,
    _module_folders,
    _read,
    _short,
    _stat_key,
    _work_tree,
    git_dir,
)
from .tables import _GIT_EXEC_CONFIG

# git's own values for core.fsmonitor: its built-in daemon, or none; anything else is a program
_FSMONITOR_BUILT_IN = frozenset({"", "true", "false", "yes", "no", "on", "off", "1", "0"})
_GIT_INCLUDES = re.compile(r"^(include\.path|includeif\..*\.path)$", re.I)


def git_runs(
    git: str | None, seen: list[str] | None = None, *, work_tree: str = "", submodules: bool = True
) -> str | None:
    """The first setting of a repository's config (and a worktree's, and the common folder's, and
    its submodules', unless the command runs git in none: `submodules`) whose value git runs, or that
    includes another file; None when there is none. `work_tree`: where git was told its work tree is
    (`--work-tree`), and so its submodules; raises _CannotTell where those cannot be told."""
    if git is None:
        return None
    seen = [] if seen is None else seen
    if len(seen) > MAX_SUBMODULES:
        return "submodules"  # too many to read: held
    if os.path.realpath(git) in seen:
        return None
    seen.append(os.path.realpath(git))
    folders = [git]
    common = _read(os.path.join(git, "commondir"))
    if common is not None:
        folders.append(os.path.join(git, common.strip()))
    for path in (os.path.join(folders[-1], "config"), os.path.join(git, "config.worktree")):
        data = read_regular(path, MAX_SETTINGS_BYTES + 1)
        if data is None:
            continue
        if len(data) > MAX_SETTINGS_BYTES:
            return os.path.basename(path)
        found = _config_runs(data.decode("utf-8", "surrogateescape"))
        if found:
            return found
    return _submodules_run(git, folders[-1], seen, work_tree) if submodules else None


def _submodules_run(git: str, common: str, seen: list[str], work_tree: str = "") -> str | None:
    """`git status` runs git in each submodule (a review, 2026-12-05: a submodule's core.fsmonitor
    ran): the repositories under `modules/`, and those a gitlink of the index finds in the work tree
    (`sub/.git`, added without .gitmodules; in the one `--work-tree` names: a review, 2026-12-05)."""
    modules = os.path.join(common, "modules")
    for folder in _module_folders(modules):  # a submodule's repository (its own, read there)
        found = git_runs(folder, seen)
        if found:
            return f"{os.path.relpath(folder, modules)}: {found}"
    links = _gitlinks(git, common)
    if not links:
        return None
    top = work_tree or _work_tree(git, common)
    for link in links:
        inner = os.path.join(top, link, ".git")
        if os.path.isfile(inner) or os.path.isdir(inner):
            found = git_runs(git_dir(os.path.join(top, link)), seen)
            if found:
                return f"{link}: {found}"
    return None


# ---- git's settings, read as git reads them
#
# Where a remote leads is in git's settings: the system's, the user's and the repository's, with
# each file they include. A red team (2026-12-05) found a reader of our own misread them (a
# backslash-newline, a quote inside a value, `[remote.Backup]`, an include), and git then contacted
# this machine; so `config_entries` reads them as git's config.c does (its tests compare it with
# `git config --list`). git itself is not started for it: an include naming a FIFO made it wait, and
# the classifier must answer at once. An include is read whatever its condition (`includeIf`): the
# command may meet it (a checkout first).

MAX_INCLUDE_DEPTH = 10  # git's own
MAX_CONFIG_FILES = 64  # files one reading reads at most, includes included
_CONFIG_VARIABLES = ("XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM")


def _config_runs(text: str) -> str | None:
    for setting, value in config_entries(text):
        if setting.lower() == "core.fsmonitor" and value.lower() in _FSMONITOR_BUILT_IN:
            continue
        if _GIT_EXEC_CONFIG.match(setting) or _GIT_INCLUDES.match(setting):
            return setting
    return None


def git_config_files(environ: Mapping[str, str], home: str) -> list[str]:
    """The user's and the system's git config files git reads, as its config.c finds them: where
    GIT_CONFIG_GLOBAL and GIT_CONFIG_SYSTEM say (empty: none), else $XDG_CONFIG_HOME/git/config (or
    ~/.config/git/config) and ~/.gitconfig, and /etc/gitconfig unless GIT_CONFIG_NOSYSTEM is true."""
    config_home = environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    if "GIT_CONFIG_GLOBAL" in environ:
        user = [environ["GIT_CONFIG_GLOBAL"]] if environ["GIT_CONFIG_GLOBAL"] else []
    else:
        user = [os.path.join(config_home, "git", "config"), os.path.join(home, ".gitconfig")]
    system = environ.get("GIT_CONFIG_SYSTEM", "/etc/gitconfig")
    return user + ([system] if system and not _git_true(environ.get("GIT_CONFIG_NOSYSTEM", "")) else [])


def _git_true(value: str) -> bool:
    """A variable's value as git_env_bool reads it: true, yes, on, or a number other than 0 (`1k`)."""
    if value.strip().lower() in ("true", "yes", "on"):
        return True
    number = value.strip().rstrip("kKmMgG")
    return number.lstrip("+-").isdigit() and int(number) != 0


class Config(NamedTuple):
    """Settings as git reads them (`entries`), with what says where a fetch or a push goes, found
    once (a line of 500 `git ls-remote rN` looks them up 500 times)."""

    entries: list[Entry]
    urls: dict[str, list[str]]  # each remote's `url`s, by its name
    push_urls: dict[str, list[str]]  # its `pushurl`s
    groups: dict[str, list[str]]  # `remotes.G`: its members, names or URLs
    chosen: list[str]  # what `branch.B.remote` names: a remote, or a URL
    chosen_for_push: list[str]  # `branch.B.pushRemote`, `remote.pushDefault`
    rewrites: list[tuple[str, str, bool]]  # (BASE, prefix, for a push only) of `url.BASE.insteadOf`
    submodules: list[str]  # `submodule.NAME.url`
    paths: list[str]  # `submodule.NAME.path`
    pushes_submodules: bool  # push.recurseSubmodules on-demand or only, or submodule.recurse
    files: tuple[str, ...] = ()  # the files read (or looked for: an include not there), each once


Memo = dict[object, "Config | str"]  # settings read for one command, or why they cannot be


def config_of(entries: list[Entry]) -> Config:
    """The `Config` of settings read."""
    found = Config(entries, {}, {}, {}, [], [], [], [], [], False)
    pushes = False
    for key, value in entries:
        lowered = key.lower()
        if (remote := _REMOTE_KEY.match(key)) is not None:
            found.urls.setdefault(remote[1], [])
            kind = remote[2].lower()
            if kind in ("url", "pushurl"):
                (found.urls if kind == "url" else found.push_urls).setdefault(remote[1], []).append(value)
        elif (group := _GROUP.match(key)) is not None:
            found.groups.setdefault(group[1], []).extend(w for w in _GROUP_SPACE.split(value) if w)
        elif _CHOSEN.match(key) or _CHOSEN_FOR_PUSH.match(key):
            (found.chosen if _CHOSEN.match(key) else found.chosen_for_push).append(value)
        elif (rewrite := _REWRITE.match(key)) is not None:
            found.rewrites.append((rewrite[1], value, bool(rewrite[2])))
        elif _SUBMODULE_URL.match(key) or _SUBMODULE_PATH.match(key):
            (found.submodules if lowered.endswith(".url") else found.paths).append(value)
        elif lowered == "push.recursesubmodules" and value.lower() in ("on-demand", "only"):
            pushes = True
        elif lowered == "submodule.recurse":
            pushes = value == "" or _git_true(value)
    return found._replace(pushes_submodules=pushes)


def git_config(
    git: str | None,
    environ: Mapping[str, str],
    home: str,
    memo: Memo | None = None,
) -> Config:
    """Every setting git reads in the repository whose git folder is `git` (None: outside one): the
    system's, the user's (in `home`, where `environ`'s variables put them), the repository's and its
    worktree's, each include followed (an `includeIf`'s whatever its condition), as git reads them
    (`config_entries`). Raises _CannotTell where they cannot be read (a FIFO, past the limits). Kept
    in `memo` for the command (a line of 500
    `git ls-remote r1` read a 240 KB config 500 times: 4.9 s), and across commands while none of
    the files read changes (`_remembered`)."""
    files = git_config_files(environ, home)
    watched = list(files)
    if git is not None:
        common = _common_dir(git)
        files += [os.path.join(common, "config"), os.path.join(git, "config.worktree")]
        legacy = [os.path.join(common, "remotes"), os.path.join(common, "branches")]  # their files: when read
        watched = [*files, os.path.join(git, "commondir"), *legacy]
    variables = tuple(environ.get(name) for name in _CONFIG_VARIABLES)
    key = ("config", git and os.path.realpath(git), home, variables)
    return _remembered(key, watched, memo, lambda read: _load_config(git, home, files, read))


def gitmodules(work_tree: str, memo: Memo | None = None) -> Config:
    """The settings of a work tree's `.gitmodules` (git follows no include there): none where it has none."""
    path = os.path.join(work_tree, ".gitmodules")
    return _remembered(("gitmodules", os.path.realpath(path)), [path], memo, lambda read: _load_file(path, read))


# Settings read lately, by what they are and the files read (each with `_stat_key`), so that a
# `git push` costs a few stat calls once its settings are read; a file changed in the last second
# is not kept (as `_GITLINKS`).
_CONFIGS: SettledCache[Config] = SettledCache(32)


def _remembered(key: object, files: list[str], memo: Memo | None, load: Callable[[_Files], list[Entry]]) -> Config:
    """`load(read)` (it adds each file it reads to `read`), or what it gave before for `key`: in this
    command (`memo`), or while `files` and those it read stay the same. Raises _CannotTell again."""
    found = memo.get(key) if memo is not None else None
    if found is None:
        try:
            found = _CONFIGS.get(
                key,
                lambda read: config_of(load(read))._replace(files=tuple(dict.fromkeys(p for p, _ in read))),
                [(path, _stat_key(path)) for path in files],
            )
        except _CannotTell as why:
            found = str(why)
        if memo is not None:
            memo[key] = found
    if isinstance(found, str):
        raise _CannotTell(found)
    return found


def _load_config(git: str | None, home: str, files: list[str], read: _Files) -> list[Entry]:
    """`git_config`'s settings, and the remotes of git's older files."""
    for path in files:
        _check_file(path)
    legacy = _legacy_remotes(_common_dir(git), read) if git is not None else []
    entries: list[Entry] = []
    for path in files:
        _read_config_file(path, home, entries, read, 0)
    return entries + legacy


def _legacy_remotes(common: str, read: _Files) -> list[Entry]:
    """Remotes in the files git read before remotes were settings, and still reads for a remote its
    settings do not give: `remotes/NAME` (its `URL:` lines) and `branches/NAME` (a URL, then
    `#branch`), as `remote.NAME.url` settings."""
    entries: list[Entry] = []
    for kind in ("remotes", "branches"):
        folder = os.path.join(common, kind)
        names = sorted(_listing(folder))
        if len(read) + len(names) > MAX_CONFIG_FILES:
            raise _CannotTell(f"more than {MAX_CONFIG_FILES} files in {_short(folder)}")
        for name in names:
            path = os.path.join(folder, name)
            read.append((path, _stat_key(path)))
            _check_file(path)
            # lines at `\n` only, each cut at a NUL and trimmed of git's spaces only: as git's remote.c
            text = _config_text(path) if os.path.isfile(path) else ""
            lines = [line.partition("\0")[0] for line in text.split("\n")]
            if kind == "branches":
                urls = [lines[0].strip(GIT_SPACES).partition("#")[0]]
            else:
                urls = [line[4:].strip(GIT_SPACES) for line in lines if line.startswith("URL:")]
            entries += [(f"remote.{name}.url", url) for url in urls if url]
    return entries


def _load_file(path: str, read: _Files) -> list[Entry]:
    """The settings of one file, no include followed."""
    if not read[0][1]:
        return []
    _check_file(path)
    return config_entries(_config_text(path))


def _check_file(path: str) -> None:
    """Nothing where `path` is missing or a regular file; else (a FIFO git would wait on) _CannotTell."""
    if os.path.exists(path) and not os.path.isfile(path):
        raise _CannotTell(f"{_short(path)} is not a file")


def _config_text(path: str) -> str:
    """A config file's text, each byte git reads kept (one not UTF-8 as a surrogate, as a file's name
    is: `config_entries` joins them as git does). Its size in bytes: 256 KiB of `é` are 128 Ki
    characters, and a size in characters read such a file's first half only."""
    data = read_regular(path, MAX_SETTINGS_BYTES + 1)
    if data is None:
        raise _CannotTell(f"{_short(path)} is not a file")
    if len(data) > MAX_SETTINGS_BYTES:
        raise _CannotTell(f"{_short(path)} larger than {MAX_SETTINGS_BYTES >> 10} KiB")
    return data.decode("utf-8", "surrogateescape")


def _read_config_file(path: str, home: str, entries: list[Entry], read: _Files, depth: int) -> None:
    """The settings of `path` added to `entries`, and of each file it includes (at any condition)."""
    if all(was != path for was, _then in read):
        read.append((path, _stat_key(path)))
    if len(read) > MAX_CONFIG_FILES:
        raise _CannotTell(f"more than {MAX_CONFIG_FILES} config files")
    if not os.path.lexists(path):
        return  # git reads no file there, nor minds
    _check_file(path)
    for key, value in config_entries(_config_text(path)):
        entries.append((key, value))
        target = _include_target(value, path, home) if _GIT_INCLUDES.match(key) else None
        if target is not None and depth >= MAX_INCLUDE_DEPTH:
            raise _CannotTell(f"includes deeper than {MAX_INCLUDE_DEPTH}")
        if target is not None:
            _read_config_file(target, home, entries, read, depth + 1)


def _include_target(value: str, origin: str, home: str) -> str | None:
    """The file an include's `value` names, from the file `origin` it is in (git's: `~/` the home
    folder, relative to that file's folder); None for none, or `%(prefix)/` (git's own folder)."""
    if not value or value.startswith("%(prefix)/"):
        return None
    path = home + value[1:] if value == "~" or value.startswith("~/") else os.path.expanduser(value)
    return os.path.normpath(os.path.join(os.path.dirname(origin), path))


# A remote's settings, the keys that name a remote or a URL git uses as one, and a rewrite of URLs
# (`url.BASE.insteadOf PREFIX`): where a fetch or a push goes.
_REMOTE_KEY = re.compile(r"(?s)^remote\.(.*)\.([^.]*)$")
_CHOSEN = re.compile(r"(?is)^branch\..*\.remote$")
_CHOSEN_FOR_PUSH = re.compile(r"(?is)^(?:branch\..*\.pushremote|remote\.pushdefault)$")
_GROUP = re.compile(r"(?s)^remotes\.(.*)$")
_GROUP_SPACE = re.compile(r"[ \t\n]+")  # what parts a group's members, as git's fetch.c (a \v does not)
_REWRITE = re.compile(r"(?is)^url\.(.*)\.(push)?insteadof$")
_SUBMODULE_URL = re.compile(r"(?is)^submodule\..*\.url$")
_SUBMODULE_PATH = re.compile(r"(?is)^submodule\..*\.path$")


def remote_urls(config: Config, names: list[str] | None, *, push: bool, given: list[str] | None = None) -> list[str]:
    """Where a fetch (or a `push`) to the remotes `names` (None: any git may choose: every remote, and
    what `branch.B.remote`, `pushRemote` and `remote.pushDefault` name), and to the URLs `given`,
    goes, as `config` says: a group (`remotes.G`) as its members; a remote as its URLs (`pushurl` for
    a push), and as its name (git takes a name it has no URL for as one); each URL also as the
    longest `url.BASE.insteadOf` (`pushInsteadOf`) rewrites it (`_rewritten`)."""
    if names is None:
        chosen = [*config.urls, *(v for members in config.groups.values() for v in members), *config.chosen]
        chosen += config.chosen_for_push if push else []
    else:
        chosen = list(names)
    seen: dict[str, None] = {}
    for name in chosen:  # each group's members once (a group may hold itself)
        if name not in seen:
            seen[name] = None
            chosen += config.groups.get(name, [])
    urls = [*seen, *(url for name in seen for url in config.urls.get(name, []))]
    urls += [url for name in seen for url in config.push_urls.get(name, [])] if push else []
    urls += given or []
    return urls + [new for url in urls if config.rewrites for new in _rewritten(config, url, push=push)]


def _rewritten(config: Config, url: str, *, push: bool) -> list[str]:
    """`url` as `url.BASE.insteadOf PREFIX` rewrites it (a push: by `pushInsteadOf` too), as git's
    remote.c (alias_url): the longest PREFIX it starts with, an empty one too (it rewrites every URL:
    a differential fuzzer, 2026-12-05, had `insteadOf = ""` send each remote to this machine);
    where BASEs tie, git takes the first one given, each of them here (the order is easily misread)."""
    found: list[str] = []
    for kind in {False, push}:
        matches = [(len(prefix), base) for base, prefix, p in config.rewrites if p == kind and url.startswith(prefix)]
        longest = max((length for length, _base in matches), default=-1)
        found += [base + url[longest:] for length, base in dict.fromkeys(matches) if length == longest]
    return found


def submodule_urls(
    git: str,
    work_tree: str,
    environ: Mapping[str, str],
    home: str,
    memo: Memo | None = None,
    *,
    declared: bool,
    push: bool,
    settings: Sequence[Entry] = (),
    recursive: bool = False,
) -> list[str]:
    """Where git reaches the submodules of the repository `git` (its work tree `work_tree`, "" its own):
    each populated one's remotes and its own submodules'; with `declared` (`git submodule update
    --init`, `sync`), also each URL its `.gitmodules` and settings give (`submodule.NAME.url`), a
    relative one from each remote of the repository it is in (`relative_url`), each as the settings
    rewrite it (`insteadOf`), and what its `branch.B.remote` names (git 2.39 fetches a commit it
    misses from there). `settings`: those the command line adds (`git -c`), in each of them.
    Raises _CannotTell past MAX_SUBMODULES; with `declared`, where git reads a `.gitmodules` that
    is not in the work tree (the index's, HEAD's); and, `recursive` (`update --init --recursive`),
    where a submodule is not cloned yet: its own submodules come with it (a fuzzer, 2026-12-05)."""
    urls: list[str] = []
    todo, seen = [(git, work_tree)], set()
    while todo:
        folder, tree = todo.pop(0)
        real = os.path.realpath(folder)
        if real in seen:
            continue
        seen.add(real)
        if len(seen) > MAX_SUBMODULES + 1:
            raise _CannotTell(f"more than {MAX_SUBMODULES} submodules")
        config = with_settings(git_config(folder, environ, home, memo), settings)
        own = remote_urls(config, None, push=push)
        if len(seen) > 1:
            urls += own
        common = _common_dir(folder)
        top = tree or _work_tree(folder, common)
        listed = gitmodules(top, memo) if os.path.isdir(top) else config_of([])
        links = _gitlinks(folder, common)
        if declared and links and not os.path.lexists(os.path.join(top, ".gitmodules")):
            raise _CannotTell(f"the .gitmodules of {_short(top)} in its index")
        if declared:
            urls += remote_urls(config, [], push=push, given=config.chosen)
            for value in [*listed.submodules, *config.submodules]:
                # `../../../localhost/x` from `ssh://github.com/a/b` is `ssh://localhost/x` (a fuzzer, 2026-12-05)
                resolved = [relative_url(url, value) for url in own] if value.startswith(("./", "../")) else []
                urls += own if resolved else []
                urls += remote_urls(config, [], push=push, given=resolved or [value])
        for module in _module_folders(os.path.join(common, "modules")):
            todo.append((module, ""))
        for path in dict.fromkeys([*listed.paths, *links]):
            inner = os.path.join(top, path)
            found = git_dir(inner) if os.path.lexists(os.path.join(inner, ".git")) else None
            if found is not None:
                todo.append((found, inner))
            elif recursive and path in links:
                raise _CannotTell(f"the submodules of {_short(inner)}, not cloned yet")
    return urls


def with_settings(config: Config, settings: Sequence[Entry]) -> Config:
    """`config` with the settings the command line gives (`git -c`), read after all others."""
    return config_of([*config.entries, *settings])._replace(files=config.files) if settings else config


def relative_url(remote: str, url: str) -> str:
    """A submodule's URL `url` (`./x`, `../x`) from the URL `remote` of the repository it is in, as
    git's remote.c (relative_url): each `../` drops the last `/` part of `remote`, then its last
    `:` part, then leaves `.` (git stops there for a relative path). `ssh://a/b` and `../../c`
    make `ssh://c`: the host too may change (checked against `git submodule init`, 2026-12-05)."""
    remote = remote[:-1] if remote.endswith("/") else remote
    if not remote:
        return url
    relative = _local_not_ssh(remote) and not remote.startswith("/")
    if relative and not remote.startswith(("./", "../")):
        remote = "./" + remote
    colon = False
    while url.startswith(("./", "../")):
        if url.startswith("./"):
            url = url[2:]
            continue
        url = url[3:]
        if "/" in remote:
            remote = remote[: remote.rindex("/")]
        elif ":" in remote:
            remote, colon = remote[: remote.rindex(":")], True
        elif relative or remote == ".":
            return url  # git stops: "cannot strip one component off url"
        else:
            remote = "."
    joined = f"{remote}{':' if colon else '/'}{url}"
    joined = joined[:-1] if url.endswith("/") else joined
    return joined[2:] if joined.startswith("./") else joined


def _local_not_ssh(url: str) -> bool:
    """A path, not `host:path` (git's url_is_local_not_ssh): no `:`, or a `/` before the first."""
    colon, slash = url.find(":"), url.find("/")
    return colon < 0 or 0 <= slash < colon
