"""A project's own settings that name programs its tool runs: a repository's `.git/config`
(`core.fsmonitor`, `diff.external`, a filter's `clean`), cargo's `.cargo/config.toml`
(`build.rustc-wrapper`, a target's `runner`) and yarn's `.yarnrc.yml` (`yarnPath`, `plugins`). Such
a file arrives with the project (a tarball, a copied folder), and then `git status`, `cargo
metadata` or `yarn --version` runs what it names (a review, 2026-12-05: each wrote a file from the
read-only tool where no container runs). Read where the command runs:
in every folder its shell may be in (the one given and each `cd`'s, whether or not the `cd` runs or
succeeds), and nowhere once a `cd` leads where only bash can tell (`cd "$X" && git status`: a
review, 2026-12-05); so once the whole command is read (`judge`), a `git status` in a trap or a
loop before the `cd` it meets again included."""

from __future__ import annotations

import os
import re
import struct
import threading
import time
from collections.abc import Mapping

from .findings import GitSettings, M, _Report, _snip
from .regular_files import read_regular
from .tables import _GIT_EXEC_CONFIG

MAX_SETTINGS_BYTES = 256 * 1024  # larger is not a settings file a person wrote: read as naming one
_SECTION = re.compile(r'\s*\[\s*([-\w.]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\](.*)')
_KEY = re.compile(r"\s*([A-Za-z][-\w]*)\s*(?:=\s*(.*))?$")
# git's own values for core.fsmonitor: its built-in daemon, or none; anything else is a program
_FSMONITOR_BUILT_IN = frozenset({"", "true", "false", "yes", "no", "on", "off", "1", "0"})
_GIT_INCLUDES = re.compile(r"^(include\.path|includeif\..*\.path)$", re.I)
# Any mention counts, quoted or dotted or in an inline table (`build = { rustc-wrapper = "x" }`,
# `"rustc-wrapper" = ...`: a review, 2026-12-05): reading TOML's every spelling is not needed to say no.
_CARGO_RUNS = re.compile(
    r"(?<![\w-])(rustc-wrapper|rustc-workspace-wrapper|rustc_wrapper|rustc|rustdoc|runner|linker)(?![\w-])"
)
_YARN_RUNS = re.compile(r"(yarn-?path|plugins)", re.I)
# rustup runs the `cargo` of a toolchain folder a project's rust-toolchain file names (`path = ...`)
_TOOLCHAIN_PATH = re.compile(r"(?<![\w-])path\s*=|^[^\S\n]*/", re.M)
# rustup's proxies: each runs its namesake from the toolchain the folder's rust-toolchain file names,
# `--version` too (`rustc --version` with `path = "./tc"` ran ./tc/bin/rustc: a review, 2026-12-05)
RUSTUP_PROXIES = frozenset({"cargo", "rustc", "rustdoc", "rustfmt", "cargo-fmt", "cargo-clippy", "clippy-driver",
                            "rust-gdb", "rust-gdbgui", "rust-lldb", "rust-analyzer", "cargo-miri", "rls"})  # fmt: skip
MAX_PLACES = 64  # folders a command may `cd` to, each judged; past that, where it runs cannot be told
MAX_SUBMODULES = 64  # repositories within one whose settings are read; past that, it is held
MAX_INDEX_BYTES = 64 * 1024 * 1024


class _CannotTell(Exception):
    """Which repositories git runs in cannot be told (an index this does not read): held."""


def judge(report: _Report) -> None:
    """The settings of each project whose program the command runs (`report.settings`), read in
    every folder its shell may be in (`report.places`); where one cannot be told, moderate. Each
    folder is read as the program finds it, by its real path (`git -C link/..` leads to the folder
    above the one `link` names), and each repository once (`memo`)."""
    memo: dict[tuple[str | None, str, bool], tuple[str, str] | None] = {}  # (real git folder, work tree, submodules)
    for entry in dict.fromkeys(report.settings):
        program, named, git_folder = entry[0], entry[1], entry[2]
        tree, submodules = (entry.work_tree, entry.submodules) if isinstance(entry, GitSettings) else ("", True)
        relative = not os.path.isabs(named) or (tree != "" and not os.path.isabs(tree))
        if relative and report.lost is not None:
            report.add(M, "{name}: cannot tell which folder it runs in, nor the settings there ({source})",
                       name=program, source=report.lost)  # fmt: skip
            continue
        bases = list(report.places) if relative else [""]
        pairs = dict.fromkeys((_real(base, named), _real(base, tree) if tree else "") for base in bases)
        for folder, work_tree in pairs:
            found: tuple[str, str] | None
            if program == "git":
                git = folder if git_folder else git_dir(folder)
                key = (None if git is None else os.path.realpath(git), work_tree, submodules)
                if key not in memo:
                    try:
                        setting = git_runs(git, work_tree=work_tree, submodules=submodules)
                        memo[key] = None if setting is None else ("runs", setting)
                    except _CannotTell as why:
                        memo[key] = ("cannot tell", str(why))
                found = memo[key]
            elif program == "yarn":
                found = _runs(yarn_runs(folder))
            else:
                found = _runs(cargo_runs(folder) if program == "cargo" else toolchain_runs(folder))
            if found is not None and found[0] == "runs":
                report.add(M, "{name}: the project's settings name a program it runs ({setting})",
                           name=program, setting=found[1])  # fmt: skip
                break
            if found is not None:
                report.add(M, "{name}: cannot tell which repository's settings it reads ({source})",
                           name=program, source=_snip(found[1]))  # fmt: skip
                break


def _real(base: str, named: str) -> str:
    """The real folder `named` leads to from the shell's folder `base`, as the kernel resolves it: a
    link first, then the `..` after it."""
    return os.path.realpath(os.path.join(base, named) if named else base or ".").replace("\\", "/")


def _runs(setting: str | None) -> tuple[str, str] | None:
    return None if setting is None else ("runs", setting)


def git_dir(cwd: str | None) -> str | None:
    """The git folder of the repository around `cwd` (a worktree's or submodule's `gitdir:` file
    followed), or None outside one. git looks in the real folder's parents (`cd link` to a folder in
    another repository), so does this."""
    folder = os.path.realpath(cwd) if cwd else None
    while folder and not os.path.exists(os.path.join(folder, ".git")):
        if _bare(folder):  # git takes a folder that is a repository itself (`b.git`) for one
            return folder
        parent = os.path.dirname(folder)
        folder = None if parent == folder else parent
    if not folder:
        return None
    git = os.path.join(folder, ".git")
    if os.path.isfile(git):
        pointer = read_regular(git, MAX_SETTINGS_BYTES)
        if pointer is not None:
            git = os.path.join(folder, pointer.decode("utf-8", "replace").partition("gitdir:")[2].strip())
    return git


def work_top(folder: str) -> str | None:
    """Where `cd "$(git rev-parse --show-toplevel)"` leads from `folder`: the top of the work tree
    around it (`folder` itself outside one: the `cd` then fails); None where the repository's settings
    put it elsewhere (core.worktree)."""
    top = os.path.realpath(folder)
    while not os.path.exists(os.path.join(top, ".git")):
        parent = os.path.dirname(top)
        if parent == top or _bare(top):
            return folder
        top = parent
    git = git_dir(top) or top
    common = _read(os.path.join(git, "commondir"))
    common_dir = git if common is None else os.path.join(git, common.strip())
    return top if os.path.realpath(_work_tree(git, common_dir)) == top else None


def _bare(folder: str) -> bool:
    """A bare repository (or a .git folder named as one): its HEAD, objects and refs are there."""
    return os.path.isfile(os.path.join(folder, "HEAD")) and all(
        os.path.isdir(os.path.join(folder, part)) for part in ("objects", "refs")
    )


def _read(path: str) -> str | None:
    data = read_regular(path, MAX_SETTINGS_BYTES + 1)
    return None if data is None else data.decode("utf-8", "replace")


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
        text = _read(path)
        if text is None:
            continue
        if len(text) > MAX_SETTINGS_BYTES:
            return os.path.basename(path)
        found = _config_runs(text)
        if found:
            return found
    return _submodules_run(git, folders[-1], seen, work_tree) if submodules else None


def _submodules_run(git: str, common: str, seen: list[str], work_tree: str = "") -> str | None:
    """`git status` runs git in each submodule (a review, 2026-12-05: a submodule's core.fsmonitor
    ran): the repositories under `modules/`, and those a gitlink of the index finds in the work tree
    (`sub/.git`, added without .gitmodules; in the one `--work-tree` names: a review, 2026-12-05)."""
    modules = os.path.join(common, "modules")
    for folder, children, files in os.walk(modules):
        children.sort()
        if "config" in files and "HEAD" in files:  # a submodule's repository (its own, read there)
            children.clear()
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


def _work_tree(git: str, common: str) -> str:
    """The top of the work tree of the repository `git` (a submodule's names it: core.worktree)."""
    config = _read(os.path.join(common, "config")) or ""
    named = re.findall(r"^[^\S\n]*worktree[^\S\n]*=[^\S\n]*(.*?)[^\S\n]*$", config, re.M | re.I)
    if named:
        return os.path.normpath(os.path.join(git, named[-1].strip('"')))
    pointer = _read(os.path.join(git, "gitdir"))  # a linked worktree's: its .git file
    if pointer is not None:
        return os.path.dirname(os.path.join(git, pointer.strip()))
    return os.path.dirname(git)


# The gitlinks of the indexes read lately, by what their files are (device, inode, size, times) and
# the object names' size: an index of 200,000 entries takes 100 ms and more to read here, and
# `git status` is the command most often judged (a review, 2026-12-05). Each shared index a split
# one names is checked again, by the same. An index changed in the last second is read afresh: a
# change within one tick of the file system's clock may keep its size and times.
_Files = list[tuple[str, tuple[int, ...]]]  # shared indexes read, each with what its file was (_stat_key)
_GITLINKS: dict[tuple[object, ...], tuple[list[str] | str, _Files]] = {}
_GITLINKS_KEPT = 32
_GITLINKS_LOCK = threading.Lock()
_SETTLED_NS = 1_000_000_000


def _stat_key(path: str) -> tuple[int, ...]:
    try:
        st = os.stat(path)
    except OSError:
        return ()
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _gitlinks(git: str, common: str) -> list[str]:
    """The paths of the index's gitlinks (mode 160000: a submodule, or a repository added in place),
    those of the shared index a split index names included (core.splitIndex: a review, 2026-12-05);
    raises _CannotTell for an index this cannot read (a sparse index's folders, a version or a
    layout git's documentation does not give, larger than MAX_INDEX_BYTES)."""
    index = os.path.join(git, "index")
    stat = _stat_key(index)
    if not stat:
        return []
    sha256 = re.search(r"objectformat\s*=\s*sha256", _read(os.path.join(common, "config")) or "", re.I)
    size = 32 if sha256 else 20
    key = (os.path.realpath(index), *stat, size)
    with _GITLINKS_LOCK:
        kept = _GITLINKS.get(key)
    if kept is None or any(_stat_key(path) != then for path, then in kept[1]):
        shared: _Files = []
        try:
            found: list[str] | str = _read_gitlinks(index, git, common, size, shared)
        except _CannotTell as why:
            found = str(why)
        kept = (found, shared)
        if time.time_ns() - stat[3] > _SETTLED_NS and time.time_ns() - stat[4] > _SETTLED_NS:
            with _GITLINKS_LOCK:
                _GITLINKS[key] = kept
                while len(_GITLINKS) > _GITLINKS_KEPT:
                    _GITLINKS.pop(next(iter(_GITLINKS)), None)
    if isinstance(kept[0], str):
        raise _CannotTell(kept[0])
    return list(kept[0])


def _read_gitlinks(index: str, git: str, common: str, size: int, shared: _Files) -> list[str]:
    """`_gitlinks` read from the file `index` (`size`: the bytes of an object's name); the shared
    indexes it read are added to `shared`, with what their files were."""
    data = read_regular(index, MAX_INDEX_BYTES + 1)
    if data is None:
        return []
    split = b"link" in data and any(
        name.startswith("sharedindex.") for folder in dict.fromkeys([git, common]) for name in _listing(folder)
    )  # git writes a split index's shared one beside it, and cannot read the index without it
    if len(data) > MAX_INDEX_BYTES:  # a gitlink may be past what is read
        raise _CannotTell(f"{_short(index)} larger than {MAX_INDEX_BYTES >> 20} MiB")
    if b"\x00\x00\xe0\x00" not in data and b"sdir" not in data and not split:  # no entry has that mode: most indexes
        return []
    try:
        links, extensions = _parse_index(data, size)
    except (struct.error, IndexError, ValueError) as failed:
        raise _CannotTell(f"{_short(index)}: {failed or 'not an index git writes'}") from None
    if b"sdir" in extensions:  # a sparse index: a folder's entry stands for what is in it, gitlinks too
        raise _CannotTell(f"a sparse index, {_short(index)}")
    base = extensions.get(b"link", b"")[:size]
    if base.strip(b"\0"):  # a split index: the rest of its entries are in the shared index it names
        name = f"sharedindex.{base.hex()}"
        path = next((p for p in (os.path.join(f, name) for f in (git, common)) if os.path.isfile(p)), None)
        if path is None:
            raise _CannotTell(f"{_short(index)}: no {name[:20]}")
        shared.append((path, _stat_key(path)))
        try:
            read = read_regular(path, MAX_INDEX_BYTES + 1)
            if read is None:
                raise ValueError("not a file it reads")
            data = read
            if len(data) > MAX_INDEX_BYTES:
                raise ValueError(f"larger than {MAX_INDEX_BYTES >> 20} MiB")
            more, extensions = _parse_index(data, size)
        except (OSError, struct.error, IndexError, ValueError) as failed:
            raise _CannotTell(f"{_short(path)[:30]}: {failed or 'not an index git writes'}") from None
        if b"link" in extensions or b"sdir" in extensions:
            raise _CannotTell(f"a split or sparse shared index, {_short(path)[:20]}")
        links = list(dict.fromkeys([*links, *more]))  # its deletions are not read: more is held, not less
    return links


def _short(path: str) -> str:
    """`.git/index`: a file by its folder's name and its own, as a reason names it."""
    return "/".join(path.replace("\\", "/").split("/")[-2:])


def _listing(folder: str) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


def _parse_index(data: bytes, size: int) -> tuple[list[str], dict[bytes, bytes]]:
    """The gitlinks of an index file's content and its extensions, by signature (git's
    Documentation/gitformat-index.txt, versions 2 to 4); ValueError where it is not such a file.
    Each entry's path is as long as its flags say, as git reads it (a NUL inside does not end it)."""
    if data[:4] != b"DIRC":
        raise ValueError("not an index git writes")
    version, count = struct.unpack_from(">II", data, 4)
    if version not in (2, 3, 4):
        raise ValueError(f"index version {version}")
    at, path, found, flags_at = 12, b"", [], 40 + size
    for _ in range(count):
        flags = data[at + flags_at] << 8 | data[at + flags_at + 1]
        name = at + flags_at + 2 + (2 if version >= 3 and flags & 0x4000 else 0)
        if version >= 4:  # the path as a prefix of the previous one, then its own NUL-ended end
            drop, byte = data[name] & 127, data[name]
            name += 1
            while byte & 128:
                byte = data[name]
                drop = ((drop + 1) << 7) | (byte & 127)
                name += 1
            if drop > len(path):
                raise ValueError("a path shorter than it drops")
            length = flags & 0xFFF
            end = data.index(b"\0", name) if length == 0xFFF else name + length - (len(path) - drop)
            if end < name or data[end] != 0:
                raise ValueError("a path as long as its flags do not say")
            path = path[: len(path) - drop] + data[name:end]
            next_at = end + 1
        else:
            length = flags & 0xFFF
            end = data.index(b"\0", name) if length == 0xFFF else name + length
            path = data[name:end]
            next_at = at + ((end - at + 8) & ~7)
        if data[at + 26] >> 4 == 0xE and not data[at + 24] and not data[at + 25]:  # mode 160000
            found.append(path.decode("utf-8", "replace"))
        at = next_at
    if at > len(data) - size:
        raise ValueError("its entries overrun the file")
    extensions: dict[bytes, bytes] = {}
    while at < len(data) - size:  # each: a signature, its length, then what it holds; the checksum last
        (length,) = struct.unpack_from(">I", data, at + 4)
        extensions[data[at : at + 4]] = data[at + 8 : at + 8 + length]
        at += 8 + length
    if at != len(data) - size:
        raise ValueError("its extensions overrun the file")
    return found, extensions


def config_entries(text: str) -> list[tuple[str, str]]:
    """A git config's settings, in order, as (`section[.subsection].key`, value)."""
    entries: list[tuple[str, str]] = []
    section = ""
    for line in text.removeprefix("\ufeff").splitlines():  # git skips a byte-order mark, so must we
        line = line.split("#", 1)[0].split(";", 1)[0] if '"' not in line else line
        header = _SECTION.match(line)
        if header:
            name, sub, line = header.groups()
            section = f"{name}.{sub}" if sub is not None else name
        key = _KEY.match(line)
        if key and section:
            entries.append((f"{section}.{key.group(1)}", (key.group(2) or "").strip().strip('"')))
    return entries


def _config_runs(text: str) -> str | None:
    for setting, value in config_entries(text):
        if setting.lower() == "core.fsmonitor" and value.lower() in _FSMONITOR_BUILT_IN:
            continue
        if _GIT_EXEC_CONFIG.match(setting) or _GIT_INCLUDES.match(setting):
            return setting
    return None


# A remote's URL, and a rewrite of URLs (`url.BASE.insteadOf PREFIX`): where a fetch or a push goes.
_REMOTE_URL = re.compile(r"(?is)^remote\.(.*)\.(?:push)?url$")
_REWRITE = re.compile(r"(?is)^url\.(.*)\.(push)?insteadof$")


def git_config_files(environ: Mapping[str, str], home: str) -> list[str]:
    """The user's and the system's git config files git reads (where the variables say, else its own places)."""
    config_home = environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    user = [environ["GIT_CONFIG_GLOBAL"]] if environ.get("GIT_CONFIG_GLOBAL") else [
        os.path.join(config_home, "git", "config"), os.path.join(home, ".gitconfig")]  # fmt: skip
    system = [] if environ.get("GIT_CONFIG_NOSYSTEM") else [environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig"]
    return user + system


def remote_urls(
    git: str | None, names: list[str] | None, user_files: list[str], *, push: bool, given: list[str] | None = None
) -> list[str]:
    """Where a fetch (or a `push`) to the remotes `names` (every remote when None) of the repository
    whose git folder is `git`, and to the URLs `given`, goes: each remote's `url` and `pushurl`, and
    each URL rewritten as the `url.BASE.insteadOf` (`pushInsteadOf`) settings of the repository or
    the user say."""
    texts = [_read(path) or "" for path in user_files]
    if git is not None:
        common = _read(os.path.join(git, "commondir"))
        texts.append(
            _read(os.path.join(git, common.strip(), "config") if common else os.path.join(git, "config")) or ""
        )
        texts.append(_read(os.path.join(git, "config.worktree")) or "")
    entries = [entry for text in texts for entry in config_entries(text)]
    wanted = None if names is None else set(names)
    urls = [value for key, value in entries if (m := _REMOTE_URL.match(key)) and (wanted is None or m[1] in wanted)]
    urls += given or []
    rewrites = [(m[1], value) for key, value in entries if (m := _REWRITE.match(key)) and (push or not m[2])]
    rewritten = []
    for url in urls:
        prefixes = [(len(prefix), base) for base, prefix in rewrites if prefix and url.startswith(prefix)]
        if prefixes:
            length, base = max(prefixes)
            rewritten.append(base + url[length:])
    return urls + rewritten


def cargo_runs(cwd: str | None) -> str | None:
    """The first program-naming setting (`rustc-wrapper`, `runner`, ...) of the cargo settings that
    apply in `cwd` (`.cargo/config.toml` or `.cargo/config` there and in every folder above), or a
    rust-toolchain file there that names a toolchain's folder (its own `cargo` then runs)."""
    for folder in _up_from(cwd):
        for name in ("config.toml", "config"):
            text = _read(os.path.join(folder, ".cargo", name))
            found = _CARGO_RUNS.search(text) if text is not None else None
            if found:
                return found.group(1)
    return toolchain_runs(cwd)


def toolchain_runs(cwd: str | None) -> str | None:
    """A rust-toolchain file in `cwd` or a folder above that names a toolchain's folder: rustup's
    proxies (`cargo`, `rustc`...) run the program of that name there."""
    for folder in _up_from(cwd):
        for name in ("rust-toolchain.toml", "rust-toolchain"):
            text = _read(os.path.join(folder, name))
            if text is not None and _TOOLCHAIN_PATH.search(text):
                return f"{name} path"
    return None


def yarn_runs(cwd: str | None) -> str | None:
    """A yarn settings file in `cwd` or a folder above that names a release of yarn to run instead of
    the one installed (`yarnPath` in `.yarnrc.yml`, `yarn-path` in classic yarn's `.yarnrc`: classic
    yarn reads both since 1.17) or plugins to load: every yarn command runs it, `yarn --version` too
    (a review, 2026-12-05; tried with yarn 1.22.22 and 4.18.1: `--cwd` does not move where they look).
    Any mention counts, a comment's too."""
    for folder in _up_from(cwd):
        for name in (".yarnrc.yml", ".yarnrc"):
            text = _read(os.path.join(folder, name))
            found = _YARN_RUNS.search(text) if text is not None else None
            if found:
                return f"{name} {found[1]}"
    return None


def _up_from(cwd: str | None) -> list[str]:
    """The real folder `cwd` and each above it, as cargo and rustup look."""
    folders, folder = [], os.path.realpath(cwd) if cwd else None
    while folder:
        folders.append(folder)
        parent = os.path.dirname(folder)
        folder = None if parent == folder else parent
    return folders
