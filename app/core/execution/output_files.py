"""The whole output of a call in a private file, and how long such files are kept.

The file lives outside the app's data and log folders (`AppPaths.outputs`), because the
classifier guards those and the model must read this one with `tail`, `grep` or `sed -n` without
asking the user. Only the user can read it (0600 in a 0700 folder), it is never opened through a
link someone put in the folder, and a server that starts removes those past the retention period.
Each app's files are in a folder of its own (`AppPaths.app_outputs`), the only one its commands see
(container.showing_outputs): one agent read another app's whole outputs with `grep -r` (a red team,
2026-12-05). Clearing the history removes the files of the rows it deletes (`remove_outputs_of`).

All the files together stay within OUTPUTS_MAX_BYTES as they are written, not only at the hourly
upkeep (two calls of `yes` wrote 1.5 GiB in seconds: a red team, 2026-12-06): each process keeps a
running total of what they hold (`_Ledger`), and a write past the cap removes files at once, never one
still being written; a file that is itself over stops growing. Past the cap, files go from the app
whose files hold the most, oldest first, never from an app that holds less than the one writing: one
app's flood deleted the output another app's model was told to read (a red team, 2026-12-06), and now
each app keeps what it holds up to about an equal share of the cap (`_make_room`).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
import threading
import time
from array import array
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from app.core.paths import PRIVATE_FILE_MODE, make_private_dirs

try:
    import fcntl
except ImportError:  # Windows: a file being written cannot be deleted there anyway
    fcntl = None  # type: ignore[assignment]

FILE_CAP_BYTES = 64 * 1024 * 1024  # per stream, in the output file
SPOOL_MEMORY_BYTES = 1024 * 1024  # whole output kept in memory before it goes to the file
OUTPUT_FILE_SUFFIX = ".log"
OUTPUT_RETENTION_DAYS = 7
OUTPUTS_MAX_BYTES = 1024 * 1024 * 1024  # all output files together; the oldest go first
DAY_S = 86_400.0


@dataclass(frozen=True)
class KeptStart:
    """What a spool kept of the output in the order it came once a write failed: the first `size`
    bytes, in its file (`path`) or, when no file could be made, in memory (`data`); `per_stream`: how
    many bytes of each stream they hold. Offsets read before the failure mean these same bytes."""

    path: Path | None
    data: bytes
    size: int
    per_stream: tuple[int, ...]


class OutputSpool:
    """The whole output of one call in the order it came, in memory while small, then in a file
    private to the user. It never raises: a file that cannot be written leaves a `problem`, and what
    was kept up to then stays readable where it was read before (`kept_start`).

    The file is written unbuffered, so that what it holds is known to the byte, stream by stream."""

    def __init__(self, folder: Path | None, name: str, streams: int, cap_bytes: int = FILE_CAP_BYTES) -> None:
        self.folder = folder
        self.cap_bytes = cap_bytes
        self.name = name
        self.path: Path | None = None
        self.problem: str | None = None if folder is not None else "no folder for output files"
        self._memory: bytearray | None = bytearray()
        # `_memory`'s runs of one stream, in order: which stream, how many bytes (compact: a run a line)
        self._run_streams = array("B")
        self._run_sizes = array("Q")
        self._file: BinaryIO | None = None
        self._written = [0] * streams
        self._dropped = [0] * streams
        self._in_file = [0] * streams  # bytes of each stream kept in order: in the file, or `_unsaved`
        self._file_bytes = 0  # bytes the file holds, notes included
        self._ledger: _Ledger | None = None  # the folder's running total, once the file exists
        self._full = False  # the outputs folder reached its cap: the file takes no more output
        self._unsaved = b""  # the memory's output when no file could be made for it
        self.live = False  # others read the file while it grows (it is written unbuffered anyway)

    def write(self, stream: int, chunk: bytes) -> None:
        room = 0 if self._full else self.cap_bytes - self._written[stream]
        if len(chunk) > room:
            self._dropped[stream] += len(chunk) - max(room, 0)
            chunk = chunk[: max(room, 0)]
        if not chunk:
            return
        self._written[stream] += len(chunk)
        if self._memory is not None:
            self._memory += chunk
            if self._run_streams and self._run_streams[-1] == stream:
                self._run_sizes[-1] += len(chunk)
            else:
                self._run_streams.append(stream)
                self._run_sizes.append(len(chunk))
            if len(self._memory) > SPOOL_MEMORY_BYTES:
                self.open()
            return
        self._append(chunk, [(stream, len(chunk))])

    def in_memory(self) -> bytes | None:
        """The whole output so far while it is still in memory (no file yet), else None."""
        return None if self._memory is None else bytes(self._memory)

    def flush(self) -> None:
        """Make what was written readable by others (a job followed from another server)."""
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.flush()

    def kept_start(self) -> KeptStart | None:
        """Once a write failed (`problem`), what is kept of the output in the order it came: what
        the file holds, or the memory's output when no file could be made; None before any failure."""
        if self.problem is None:
            return None
        if self.path is not None:
            return KeptStart(self.path, b"", self._file_bytes, tuple(self._in_file))
        return KeptStart(None, self._unsaved, len(self._unsaved), tuple(self._in_file))

    def open(self) -> Path | None:
        """Make sure the file exists and holds everything so far; its path, or None (see `problem`)."""
        if self._memory is None or self.problem is not None:
            return self.path
        assert self.folder is not None
        data, self._memory = bytes(self._memory), None
        runs = list(zip(self._run_streams, self._run_sizes, strict=True))
        self._run_streams, self._run_sizes = array("B"), array("Q")
        try:
            self.path, self._file = _create_private_file(self.folder, self.name)
            self._ledger = _ledger_for(self.folder)
            self._ledger.opened(self.path)
        except OSError as exc:
            self.problem = f"could not create a file in {self.folder}: {exc.strerror or exc}"
            # Kept (at most a MiB): what command_output read so far, at the offsets it read it.
            self._unsaved = data
            self._count(runs, len(data))
            return None
        self._append(data, runs)
        return self.path

    def _append(self, data: bytes, runs: Sequence[tuple[int, int]] = (), *, note: bool = False) -> None:
        """Write `data` to the file; `runs`: (stream, bytes) of it in order (none for a note). Past
        the outputs folder's cap, only what fits is written, counted as left out (`_cut`); a `note`
        (what was left out, and the streams' ends: a few MiB at most) is written all the same."""
        if self._file is None:
            return
        if self._ledger is not None and self.path is not None:
            room = self._ledger.take(self.path, len(data), always=note)
            if room < len(data):
                self._cut(runs, room)
                data = data[:room]
        done = 0
        try:
            while done < len(data):  # unbuffered: a full disk may take only part of a write
                written = self._file.write(memoryview(data)[done:])
                if not written:
                    raise OSError(f"the file took no more bytes after {self._file_bytes + done:,}")
                done += written
        except OSError as exc:  # a full disk: keep what was written, say so, write no more
            self.problem = f"the output file could not be completed: {exc.strerror or exc}"
            self._close_file()
        finally:
            self._file_bytes += done
            self._count(runs, done)
            if self._ledger is not None and self.path is not None and done < len(data):
                self._ledger.give_back(self.path, len(data) - done)

    def _cut(self, runs: Sequence[tuple[int, int]], kept: int) -> None:
        """The outputs folder is full and this file is what is over: it takes no more output; what
        did not fit counts as left out of its stream (the note at the end says how much, then the
        stream's last bytes, as past FILE_CAP_BYTES)."""
        self._full = True
        for stream, size in runs:
            taken = min(size, kept)
            kept -= taken
            self._dropped[stream] += size - taken

    def _count(self, runs: Sequence[tuple[int, int]], kept: int) -> None:
        """Count the first `kept` bytes of `runs` as kept, stream by stream."""
        for stream, size in runs:
            taken = min(size, kept)
            self._in_file[stream] += taken
            kept -= taken
            if kept <= 0:
                break

    def close(self, keep: bool, tails: Sequence[tuple[str, bytes]] = ()) -> None:
        """End of the call: keep the file (with the end of each stream that passed the cap), or
        remove it when nothing was left out."""
        if keep:
            self.open()
            full = self._full
            for (label, tail), dropped in zip(tails, self._dropped, strict=False):
                if dropped:
                    why = (
                        f"the outputs folder reached its cap of {_size_label(OUTPUTS_MAX_BYTES)}"
                        if full
                        else f"it keeps the first {_size_label(self.cap_bytes)} of each stream"
                    )
                    note = (
                        f"\n[... {dropped:,} bytes of {label} not kept in this file ({why}); "
                        f"its last {len(tail):,} bytes follow ...]\n"
                    )
                    self._append(note.encode() + tail, note=True)
        # A spool still in memory stays when small: it is the output in the order it came, which
        # command_output reads for a job that ended within its call.
        if self._memory is not None and len(self._memory) > SPOOL_MEMORY_BYTES:
            self._memory = None
        self._close_file()
        ledger, self._ledger = self._ledger, None
        if not keep and self.path is not None:
            with contextlib.suppress(OSError):
                self.path.unlink()
        if ledger is not None and self.path is not None:
            ledger.closed(self.path, kept=keep)
        if not keep:
            self.path = None

    def _close_file(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None


# How often a ledger measures its folder again as it writes: other servers' files grow there too (a
# review, 2026-12-06: measured once, the cap held for each process, not for the folder).
REMEASURE_S = 5.0


class _Ledger:
    """What the output files of one outputs folder hold, as this process knows it: measured once
    (as prune_outputs measures it), then counted at each write; measured again only when a write
    passes the cap, as the oldest files are removed. `open` holds the files this process is writing
    (their bytes as written here): never removed while written, on Linux their bytes would stay."""

    def __init__(self, root: Path, max_bytes: int) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self.lock = threading.Lock()
        self.open: dict[Path, int] = {}
        self.others = outputs_size(root)[1]  # the files not written here now
        self.measured = time.monotonic()

    def total(self) -> int:
        return self.others + sum(self.open.values())

    def opened(self, path: Path) -> None:
        with self.lock:
            self.open.setdefault(path, 0)

    def take(self, path: Path, size: int, *, always: bool = False) -> int:
        """How many of `size` bytes `path` may take now (all of them `always`), counted as written;
        past the cap other files go (to a file's cap below it): the oldest of the app that holds
        the most, never of an app holding less than `path`'s (_make_room); what still does not fit
        is refused: a folder walk only then."""
        with self.lock:
            if path not in self.open:
                return size  # not ours to count (closed meanwhile)
            app = path.parent  # room is made from the apps that hold the most (_make_room)
            if time.monotonic() - self.measured > REMEASURE_S:  # other servers write into it too
                self.others = _prune(self.root, max_bytes=self.max_bytes, writing=self.open, writer=app)
                self.measured = time.monotonic()
            over = self.total() + size - self.max_bytes
            if over > 0 and not always:
                # Down to a file's cap below it: a flood over old small files walks the folder
                # once per 64 MiB it writes, not at every write.
                room_made = self.max_bytes - FILE_CAP_BYTES
                self.others = _prune(self.root, max_bytes=room_made, writing=self.open, writer=app, adding=size)
                over = self.total() + size - self.max_bytes
            room = size if always else min(size, max(size - over, 0))
            self.open[path] += room
            return room

    def give_back(self, path: Path, size: int) -> None:
        """Bytes taken but not written (a full disk)."""
        with self.lock:
            if path in self.open:
                self.open[path] = max(self.open[path] - size, 0)

    def closed(self, path: Path, *, kept: bool) -> None:
        with self.lock:
            size = self.open.pop(path, 0)
            if kept:
                self.others += size


_ledgers: dict[Path, _Ledger] = {}
_ledgers_lock = threading.Lock()


def outputs_root(folder: Path) -> Path:
    """The outputs folder whose cap covers files written in `folder`: an app's folder's parent."""
    return folder.parent if folder.name.startswith("app-") else folder


def _ledger_for(folder: Path) -> _Ledger:
    root = outputs_root(folder)
    with _ledgers_lock:
        ledger = _ledgers.get(root)
        if ledger is None:
            ledger = _ledgers[root] = _Ledger(root, OUTPUTS_MAX_BYTES)
        return ledger


def _size_label(size: int) -> str:
    return f"{size // (1024 * 1024)} MiB" if size >= 1024 * 1024 else f"{size:,} bytes"


def _create_private_file(folder: Path, name: str) -> tuple[Path, BinaryIO]:
    """A new file only the user can read, in a folder only the user can enter; never through a
    symlink someone put there (O_EXCL, O_NOFOLLOW, and the folder must be a real one of ours)."""
    make_private_dirs(folder)
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or (hasattr(os, "getuid") and info.st_uid != os.getuid()):
        raise OSError(f"{folder} is not a folder of this user")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = folder / f"{stamp}-{name}-{secrets.token_hex(3)}{OUTPUT_FILE_SUFFIX}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags, PRIVATE_FILE_MODE)
    if fcntl is not None:  # held while written: another process's prune leaves it (`_unlink_unless_written`)
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    return path, os.fdopen(fd, "wb", buffering=0)


def _unlink_unless_written(path: Path) -> bool:
    """Remove an output file unless a process (this one or another: every server writes its own) is
    writing it, which holds a lock on it (`_create_private_file`); whether it went."""
    if fcntl is None:
        path.unlink()
        return True
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # being written
        return False
    else:
        path.unlink()
        return True
    finally:
        os.close(fd)


def _output_entries(folder: Path) -> Iterator[os.DirEntry[str]]:
    """The output files in `folder` and in its apps' folders (never through a link): regular files only."""
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            if entry.name.endswith(OUTPUT_FILE_SUFFIX) and entry.is_file(follow_symlinks=False):
                yield entry
            elif entry.name.startswith("app-") and entry.is_dir(follow_symlinks=False):
                with contextlib.suppress(OSError), os.scandir(entry.path) as inner:
                    yield from (
                        file
                        for file in inner
                        if file.name.endswith(OUTPUT_FILE_SUFFIX) and file.is_file(follow_symlinks=False)
                    )


_COMMAND_ID = re.compile(r"-cmd(\d+)-[0-9a-f]+" + re.escape(OUTPUT_FILE_SUFFIX) + "$")


def remove_outputs_of(folder: Path, command_ids: Collection[int]) -> int:
    """Remove the output files of these commands (`<time>-cmd<id>-<random>.log`), in every app's
    folder; returns how many went."""
    removed = 0
    if not command_ids:
        return 0
    for entry in list(_output_entries(folder)):
        found = _COMMAND_ID.search(entry.name)
        if found and int(found.group(1)) in command_ids:
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
                removed += 1
    return removed


def prune_outputs(
    folder: Path,
    *,
    max_age_days: float = OUTPUT_RETENTION_DAYS,
    max_bytes: int = OUTPUTS_MAX_BYTES,
    now: float | None = None,
) -> int:
    """Remove output files older than the retention period, then, until all together fit in
    `max_bytes`, the oldest of the app that holds the most (_make_room); returns how many went. Only
    our own regular files, never a link, never one this process is writing."""
    ledger = _ledgers.get(folder)
    if ledger is None:
        removed: list[Path] = []
        _prune(folder, max_age_days=max_age_days, max_bytes=max_bytes, now=now, removed=removed)
        return len(removed)
    with ledger.lock:
        removed = []
        ledger.others = _prune(
            folder, max_age_days=max_age_days, max_bytes=max_bytes, now=now, writing=ledger.open, removed=removed
        )
    return len(removed)


def _prune(
    folder: Path,
    *,
    max_age_days: float = OUTPUT_RETENTION_DAYS,
    max_bytes: int = OUTPUTS_MAX_BYTES,
    now: float | None = None,
    writing: Mapping[Path, int] | None = None,
    removed: list[Path] | None = None,
    writer: Path | None = None,
    adding: int = 0,
) -> int:
    """prune_outputs' rule, sparing the files in `writing` (counted at their sizes there); returns
    the bytes the other files left hold. `writer`: the app folder about to write `adding` more bytes
    (counted in the total and in its share): see `_make_room`."""
    writing = writing or {}
    cutoff = (now or time.time()) - max_age_days * DAY_S
    files = []
    held: dict[Path, int] = {}  # what each app's folder holds, files being written included
    for path, size in writing.items():
        held[path.parent] = held.get(path.parent, 0) + size
    for entry in _output_entries(folder):
        with contextlib.suppress(OSError):
            path = Path(entry.path)
            if path not in writing:
                info = entry.stat(follow_symlinks=False)
                files.append((info.st_mtime, info.st_size, path))
                held[path.parent] = held.get(path.parent, 0) + info.st_size
    files.sort()
    others = sum(size for _, size, _ in files)
    total = others + sum(writing.values()) + adding
    if writer is not None:
        held[writer] = held.get(writer, 0) + adding
    kept = []
    for mtime, size, path in files:  # past the retention period, every app's
        if mtime >= cutoff or not _remove(path, removed):
            kept.append((mtime, size, path))
            continue
        total -= size
        others -= size
        held[path.parent] -= size
    if total > max_bytes:
        others -= _make_room(kept, held, total - max_bytes, writer, removed)
    return others


def _make_room(
    files: Sequence[tuple[float, int, Path]],
    held: dict[Path, int],
    over: int,
    writer: Path | None,
    removed: list[Path] | None,
) -> int:
    """Remove `over` bytes of `files` (oldest first, none being written), each time from the app folder
    that holds the most (`held`); a writing app's from its own first when it holds as much as any,
    and never from an app that holds less than it (one app's flood of output deleted the outputs
    another app's model was told to read: a red team, 2026-12-06). So an app keeps what it holds up
    to about an equal share of the cap whatever another app writes, and a writer that holds the most and
    has nothing left to remove is what stops (its file, `OutputSpool._cut`). Returns the bytes removed."""
    queues: dict[Path, list[tuple[int, Path]]] = {}
    for _, size, path in files:  # `files` are sorted oldest first
        queues.setdefault(path.parent, []).append((size, path))
    for queue in queues.values():
        queue.reverse()  # the oldest at the end, popped first
    freed = 0
    while freed < over:
        mine = held.get(writer, 0) if writer is not None else -1
        # On a tie the writer's own files go first: its flood never costs an app that holds as much.
        apps = [app for app, queue in queues.items() if queue and (app == writer or held.get(app, 0) > mine)]
        if not apps:
            break
        app = max(apps, key=lambda folder: (held.get(folder, 0), folder == writer))
        size, path = queues[app].pop()
        if _remove(path, removed):  # another server's, being written: counted, left
            freed += size
            held[app] -= size
    return freed


def _remove(path: Path, removed: list[Path] | None) -> bool:
    """Remove an output file unless it is being written; whether it went."""
    try:
        if not _unlink_unless_written(path):
            return False
    except OSError:
        return False
    if removed is not None:
        removed.append(path)
    return True


def outputs_size(folder: Path) -> tuple[int, int]:
    """(files, bytes) of the output files kept in `folder`."""
    count = size = 0
    for entry in _output_entries(folder):
        with contextlib.suppress(OSError):
            size += entry.stat(follow_symlinks=False).st_size
            count += 1
    return count, size
