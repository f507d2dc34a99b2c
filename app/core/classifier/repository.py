"""Where a repository is and what its own files say: its git folder, its work tree, its common
folder, the folders of its submodules and the gitlinks of its index. The rules of git and the
reader of git's settings (git_settings.py) find repositories here; each file is read as a regular
file only (regular_files.py) and within its limits, past which which repositories a command runs
in cannot be told (`_CannotTell`)."""

from __future__ import annotations

import contextlib
import os
import stat
import struct
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

from .git_config_text import config_entries
from .regular_files import read_regular

MAX_SETTINGS_BYTES = 256 * 1024  # larger is not a settings file a person wrote: read as naming one
MAX_SUBMODULES = 64  # repositories within one whose settings are read; past that, it is held
MAX_INDEX_BYTES = 64 * 1024 * 1024
# What of an index is read at most, each entry and extension a step of pure Python (~0.4 µs here):
# 64 MiB of 8-byte empty "optional" extensions held the classifier 3.5 s an index (red team eight,
# 2026-12-05), and a long version 4 path copied for each entry after it, minutes. git writes a
# handful of extensions; past any of these, which repositories the command runs in cannot be told
# (_CannotTell, as for any index this does not read: `git status` moderate, a fetch into submodules held).
# What 64 MiB holds (an entry takes 64 bytes or more): a big repository's `git status` is read, not
# moderate (a review, 2026-12-06: 100_000 held `git fetch` in one with a submodule); ~0.35 s here
MAX_INDEX_ENTRIES = 1_000_000
MAX_INDEX_EXTENSIONS = 64
MAX_INDEX_PATH = 4096  # PATH_MAX: git checks out no longer path (each of a version 4 index's is built on the last)
MAX_INDEX_GITLINKS = 1000  # each is looked for in the work tree


class _CannotTell(Exception):
    """Which repositories git runs in cannot be told (an index this does not read): held."""


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


def _work_tree(git: str, common: str) -> str:
    """The top of the work tree of the repository `git` (a submodule's names it: core.worktree)."""
    config = _read(os.path.join(common, "config")) or ""
    named = [value for key, value in config_entries(config) if key == "core.worktree"]
    if named:
        return os.path.normpath(os.path.join(git, named[-1]))
    pointer = _read(os.path.join(git, "gitdir"))  # a linked worktree's: its .git file
    if pointer is not None:
        return os.path.dirname(os.path.join(git, pointer.strip()))
    return os.path.dirname(git)


_Files = list[tuple[str, tuple[int, ...]]]  # files read, each with what it was when read (_stat_key)
_SETTLED_NS = 1_000_000_000
T = TypeVar("T")


def _stat_key(path: str) -> tuple[int, ...]:
    try:
        st = os.stat(path)
    except OSError:
        return ()
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class SettledCache(Generic[T]):
    """What was read of some files, by a key, kept while each file it read stays what it was (device,
    inode, size, times), the last `kept` keys: an index of 200,000 entries takes 100 ms and more to
    read here, and `git status` is the command most often judged (a review, 2026-12-05). What a file
    changed in the last second gave is not kept: a change within one tick of the file system's clock
    may keep its size and times. A file dated in the future (`touch -d 2030-01-01`: red team eight,
    2026-12-05, so that nothing was kept) is kept all the same: a write dates it now, and changes its
    ctime, which no command sets. A _CannotTell is kept as a value is."""

    def __init__(self, kept: int) -> None:
        self._items: dict[object, tuple[T | None, str | None, _Files]] = {}
        self._kept = kept
        self._lock = threading.Lock()

    def get(self, key: object, load: Callable[[_Files], T], files: _Files | None = None) -> T:
        """`load(read)`, which adds each file it reads to `read` (`files` there first), or what it gave
        before for `key`."""
        with self._lock:
            kept = self._items.get(key)
        if kept is None or any(_stat_key(path) != then for path, then in kept[2]):
            read: _Files = list(files or [])
            try:
                kept = (load(read), None, read)
            except _CannotTell as why:
                kept = (None, str(why), read)
            now = time.time_ns()
            if all(not then or (abs(now - then[3]) > _SETTLED_NS and now - then[4] > _SETTLED_NS) for _, then in read):
                with self._lock:
                    self._items.pop(key, None)
                    self._items[key] = kept
                    while len(self._items) > self._kept:
                        self._items.pop(next(iter(self._items)), None)
        value, cannot_tell, _read_then = kept
        if cannot_tell is not None:
            raise _CannotTell(cannot_tell)
        return value  # type: ignore[return-value]  # None only with cannot_tell


_GITLINKS: SettledCache[list[str]] = SettledCache(32)  # by the index's real path and object names' size


def _gitlinks(git: str, common: str) -> list[str]:
    """The paths of the index's gitlinks (mode 160000: a submodule, or a repository added in place),
    those of the shared index a split index names included (core.splitIndex: a review, 2026-12-05);
    raises _CannotTell for an index this cannot read (a sparse index's folders, a version or a
    layout git's documentation does not give, larger than MAX_INDEX_BYTES or past the other
    MAX_INDEX_ bounds)."""
    index = os.path.join(git, "index")
    if not _stat_key(index):
        return []
    settings = config_entries(_read(os.path.join(common, "config")) or "")
    size = 32 if ("extensions.objectformat", "sha256") in settings else 20

    def load(read: _Files) -> list[str]:
        read.append((index, _stat_key(index)))
        return _read_gitlinks(index, git, common, size, read)

    return list(_GITLINKS.get((os.path.realpath(index), size), load))


def _read_gitlinks(index: str, git: str, common: str, size: int, shared: _Files) -> list[str]:
    """`_gitlinks` read from the file `index` (`size`: the bytes of an object's name); the shared
    indexes it read are added to `shared`, with what their files were."""
    larger = _CannotTell(f"{_short(index)} larger than {MAX_INDEX_BYTES >> 20} MiB")  # a gitlink may be past it
    with contextlib.suppress(OSError):
        known = os.stat(index)
        if stat.S_ISREG(known.st_mode) and known.st_size > MAX_INDEX_BYTES:  # told without reading 64 MiB first
            raise larger
    data = read_regular(index, MAX_INDEX_BYTES + 1)
    if data is None:
        return []
    if len(data) > MAX_INDEX_BYTES:
        raise larger
    # Most indexes hold no entry of that mode: passed over. Each look is a pass over up to 64 MiB, so
    # the next only where the one before found nothing. git writes a split index's shared one beside
    # it, and cannot read the index without it.
    if (
        b"\x00\x00\xe0\x00" not in data
        and b"sdir" not in data
        and not (b"link" in data and any(_has_shared_index(folder) for folder in dict.fromkeys([git, common])))
    ):
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


def _has_shared_index(folder: str) -> bool:
    """A `sharedindex.*` in `folder`, or more names there than MAX_MODULE_FOLDERS (read as one: the
    index is then read through, not passed over; a git folder of a million files is not listed)."""
    try:
        with os.scandir(folder) as names:
            return any(looked >= MAX_MODULE_FOLDERS or entry.name.startswith("sharedindex.")
                       for looked, entry in enumerate(names))  # fmt: skip
    except OSError:
        return False


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
    if count > MAX_INDEX_ENTRIES:
        raise ValueError(f"more than {MAX_INDEX_ENTRIES} entries")
    at, path, flags_at = 12, bytearray(), 40 + size
    found: list[str] = []
    for _ in range(count):
        flags = data[at + flags_at] << 8 | data[at + flags_at + 1]
        name = at + flags_at + 2 + (2 if version >= 3 and flags & 0x4000 else 0)
        if version >= 4:  # the path as a prefix of the previous one, then its own NUL-ended end
            drop, byte = data[name] & 127, data[name]
            name += 1
            while byte & 128:
                if drop > len(path):  # within the loop: a run of 0xff bytes made it a number of megabytes
                    raise ValueError("a path shorter than it drops")
                byte = data[name]
                drop = ((drop + 1) << 7) | (byte & 127)
                name += 1
            if drop > len(path):
                raise ValueError("a path shorter than it drops")
            length = flags & 0xFFF
            end = data.index(b"\0", name) if length == 0xFFF else name + length - (len(path) - drop)
            if end < name or data[end] != 0:
                raise ValueError("a path as long as its flags do not say")
            # changed in place: a copy of the whole path each entry made a long one cost its length squared
            del path[len(path) - drop :]
            path += data[name:end]
            long, next_at = len(path), end + 1
        else:
            length = flags & 0xFFF
            end = data.index(b"\0", name) if length == 0xFFF else name + length
            long, next_at = end - name, at + ((end - at + 8) & ~7)
        if long > MAX_INDEX_PATH:
            raise ValueError(f"a path longer than {MAX_INDEX_PATH} bytes")
        if data[at + 26] >> 4 == 0xE and not data[at + 24] and not data[at + 25]:  # mode 160000
            if len(found) >= MAX_INDEX_GITLINKS:
                raise ValueError(f"more than {MAX_INDEX_GITLINKS} submodules")
            found.append((path if version >= 4 else data[name:end]).decode("utf-8", "replace"))
        at = next_at
    if at > len(data) - size:
        raise ValueError("its entries overrun the file")
    extensions: dict[bytes, bytes] = {}
    seen = 0  # extensions read, the same signature again counted too
    while at < len(data) - size:  # each: a signature, its length, then what it holds; the checksum last
        if seen >= MAX_INDEX_EXTENSIONS:
            raise ValueError(f"more than {MAX_INDEX_EXTENSIONS} extensions")
        seen += 1
        (length,) = struct.unpack_from(">I", data, at + 4)
        extensions[data[at : at + 4]] = data[at + 8 : at + 8 + length]
        at += 8 + length
    if at != len(data) - size:
        raise ValueError("its extensions overrun the file")
    return found, extensions


def _common_dir(git: str) -> str:
    """The folder of what a repository's worktrees share (its config), where `commondir` says."""
    common = _read(os.path.join(git, "commondir"))
    return os.path.join(git, common.strip()) if common else git


MAX_MODULE_FOLDERS = 2000  # folders looked at under `modules`: `ln -s ~ .git/modules` walked the home folder


def _module_folders(modules: str) -> list[str]:
    """The repositories under a `modules` folder (each has its own, read in turn). Raises
    _CannotTell past MAX_MODULE_FOLDERS (a second red team, 2026-12-05: a `modules` linked to the
    home folder made every `git status` walk it, seconds on the server's loop)."""
    found = []
    for looked, (folder, children, files) in enumerate(os.walk(modules), 1):
        if looked > MAX_MODULE_FOLDERS:
            raise _CannotTell(f"more than {MAX_MODULE_FOLDERS} folders in {_short(modules)}")
        children.sort()
        if "config" in files and "HEAD" in files:
            children.clear()
            found.append(folder)
    return found
