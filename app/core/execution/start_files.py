"""Lone members of the protected set (`~/.claude.json`, shell start-up files, Claude Desktop's
folder), and above all those that do not exist yet: one a command creates is moved aside (issue 21).

Why: a container cannot bind a missing file read-only without creating a mount point on the host
(an empty `~/.bash_profile` makes bash skip `~/.profile` at every login), and Landlock cannot deny
one name in a folder. So lone members are passed to bwrap with GUARD_FLAG (`--ro-bind-try`): bound
where they exist when a container starts, guarded where they do not. The thread of lone_files.py
watches their folders; when one appears while a container that guards it runs a command, the new
file is renamed to `<name>.cowork-terminal-moved-<UTC time>` in the same folder (nothing is lost)
and the user is told. A file that appears while no command runs is the user's: it stays, and is
bound read-only in the containers that live then, as in every one started after. A file replaced
by rename outside (Claude and editors save so) loses its bind in the containers that had it: it
is bound there again.

Which containers guard a member: those whose bwrap command line names it with GUARD_FLAG (a
command a person allowed to change it runs without, container.Container.without), unless it
existed when the container started (it is bound there). An idle spare (spare.py) waiting for its
command does not count; a session's shell runs in its container for as long as it lives, so that
container always counts. Each container is known from its start (`register`, before bwrap runs)
to the end of its init, which holds the command's status pipe until it ends: a file created by a
command that ended at once is seen while that container is still counted, however late the
watching thread reads the event. The pipe's end comes as the init's descriptors close, before the
kernel has killed the rest of the container: a container we end ourselves (`_end`, `closing`) is
counted on until its init has really exited (a pidfd of it), when no process of it is left.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import signal
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from app.core.execution import live_binds
from app.core.execution.process_marks import children
from app.core.i18n import _
from app.core.messages import NEVER_ASKED_PROTECTED
from app.core.paths import file_identity

log = logging.getLogger(__name__)

GUARD_FLAG = "--ro-bind-try"  # bwrap binds the path read-only if it exists, else skips it
MOVED_MARK = ".cowork-terminal-moved-"
NOTICE_INTERVAL_S = 60.0  # one notice per file in this time: a command that loops does not flood the desktop

MOVE, KEEP = "move", "keep"

# What the user is told; set by the tray (its notifier). Without one (a headless server) the log says it.
tell_user: Callable[[str, str], None] | None = None


@dataclass
class Guarded:
    """One container of ours, from its start to its init's end."""

    status_fd: int  # the status pipe's write end as numbered in the container (pass_fds keeps it)
    pipe: int  # that pipe's inode, to find the container's init
    guards: tuple[str, ...]  # the lone members its command line binds or guards (GUARD_FLAG)
    existed: set[str]  # those bound there: they existed when it started, or were bound since
    init: int | None = None  # its init's pid, once found
    done: bool = False  # its command ended; it lives on while a background job does (`end_lingering`)
    folders: tuple[str, ...] = ()  # the protected folders it binds read-only (`remember_folders`)
    # Each protected folder's (device, inode) as last prepared before it started: which it binds.
    identities: Mapping[str, tuple[int, int] | None] = field(default_factory=dict)
    # The process mark its command was given (process_marks), as we gave it, never read from the
    # container: a pause's sweep ends only the containers of its own app home or server.
    mark: str | None = None
    pidfd: int = -1  # a pidfd of its init, held from when we end it (or find its init), else -1
    closing: bool = False  # its status pipe has ended: counted until `pidfd` says the init exited
    killed: bool = False  # `_end` killed its init: not ended, nor counted, again


@dataclass(frozen=True)
class Seen:
    """What the watching thread knows of one container when a member appears (see `verdict`)."""

    guards: bool  # its command line guards the member
    existed: bool  # the member existed when it started
    waiting: bool  # a spare not given its command yet (known in this process: awaiting_orders)


def verdict(seen: Iterable[Seen]) -> str:
    """MOVE when a container that guards the member may have run a command when it appeared (one
    whose init is already gone counts: it may have ended right after), else KEEP."""
    for one in seen:
        if one.guards and not one.existed and not one.waiting:
            return MOVE
    return KEEP


def guards_in(mounts: Sequence[str]) -> tuple[str, ...]:
    """The lone members a container's mount arguments bind or guard (`GUARD_FLAG path path`)."""
    return tuple(
        mounts[i + 1] for i in range(len(mounts) - 2) if mounts[i] == GUARD_FLAG and mounts[i + 1] == mounts[i + 2]
    )


def moved_name(path: str, now: float, taken: Callable[[str], bool] = lambda _path: False) -> str:
    """Where a member created by a command goes: beside it, named with the UTC time, and a number
    when that name is `taken` (a command that made it twice in a second loses neither)."""
    base = f"{path}{MOVED_MARK}{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime(now))}"
    name, number = base, 1
    while taken(name):
        number += 1
        name = f"{base}-{number}"
    return name


def person_notice(path: str, moved: str) -> tuple[str, str]:
    """What the user reads when a command's start-up file was moved aside: title and message."""
    title = _("Start-up file moved aside")
    message = _(
        "A command created {name}, which would run or set up programs outside Cowork Terminal. "
        "It was renamed to {moved}. If you made it yourself, rename it back when no command runs."
    ).format(name=path, moved=os.path.basename(moved))
    return title, message


# -- the containers of this process ----------------------------------------------------------------

_guarded: dict[int, Guarded] = {}  # by our duplicate of the status pipe's read end
# What bwrap_argv guards for a status fd, and the protected folders it binds, until register.
_mounts_by_fd: dict[int, tuple[tuple[str, ...], tuple[str, ...]]] = {}
_lock = threading.Lock()
_wake: Callable[[], None] | None = None  # set by the watching thread (lone_files): look at new fds
_awaiting: set[int] = set()  # status pipes (inodes) of spares not given their command yet (spare.py)
_told: dict[tuple[str, str], float] = {}
_recent: list[tuple[float, str, str]] = []  # (monotonic time, path, moved to): the last RECENT_KEPT moves
RECENT_KEPT = 20
_links: dict[str, tuple[str, str]] = {}  # protected members that are symlinks: link -> (its text, real path)
# The protected folders (real paths) by their (device, inode) as last prepared, watched for one made
# anew (`remember_folders`): replaced, never changed, so that each container keeps the one of its start.
_folders: Mapping[str, tuple[int, int] | None] = {}


def remember_links(links: Iterable[tuple[str, str]]) -> None:
    """Members that are symlinks (container.ProtectedSet.links): a command that replaces or deletes
    one, which the bind of what it points to cannot stop, finds the link put back. Each container
    that binds what a link points to guards the link's name."""
    found = {link: (text, os.path.realpath(link)) for link, text in links}
    with _lock:
        _links.update(found)


def remember_folders(folders: Iterable[str], identities: Iterable[tuple[int, int] | None]) -> None:
    """The protected folders (container.ProtectedSet.folders): one deleted or renamed away outside
    takes its read-only bind along in every live container, and the one made anew in its place was
    writable there (a red team, 2026-12-05: a job a command had left wrote `~/.claude/settings.json`
    after the user's `mv ~/.claude ~/.claude-old; mkdir ~/.claude`). lone_files' thread watches
    their names, and `bind_folder` ends the containers that bound the old one and only keep a job
    (a helper that binds the new one takes some 30 ms, which a job's loop outran), and binds it in
    those whose command still runs. `identities`: each folder's (device, inode) as prepared."""
    global _folders
    with _lock:
        _folders = {**_folders, **dict(zip(folders, identities, strict=True))}


def follow(wake: Callable[[], None]) -> None:
    """From now on, containers are followed (lone_files' thread watches the lone members; `wake`
    tells it to poll a new container's end). Each container's command line says what it guards."""
    global _wake
    with _lock:
        _wake = wake


def awaiting_orders(pipe: int) -> None:
    """A spare whose status pipe is `pipe` (its inode) was started and runs nothing until `ordered`.
    Known here, in the process that gives it its command, not read from the container: a command
    there could make its init's command line look like a waiting one."""
    with _lock:
        _awaiting.add(pipe)


def ordered(pipe: int, mark: str | None = None) -> None:
    """That spare is given its command now, marked `mark` (or ended): from now on it counts as
    running one."""
    with _lock:
        _awaiting.discard(pipe)
        for entry in _guarded.values():
            if entry.pipe == pipe:
                entry.mark = mark


def note_guards(status_fd: int, mounts: Sequence[str]) -> None:
    """bwrap_argv's note of what the container it describes guards, for `register` (same status fd)."""
    read_only = {
        mounts[i + 1] for i in range(len(mounts) - 2) if mounts[i] == "--ro-bind" and mounts[i + 1] == mounts[i + 2]
    }
    with _lock:
        bound = set(mounts)
        found = (*guards_in(mounts), *(link for link, (_text, real) in _links.items() if _leads_to(real, bound)))
        folders = tuple(sorted(read_only & _folders.keys()))
        if found or folders:
            _mounts_by_fd[status_fd] = (found, folders)
        else:
            _mounts_by_fd.pop(status_fd, None)


def _leads_to(real: str, bound: set[str]) -> bool:
    """Whether a link's real path is bound, or holds something bound (a link on the way to a member)."""
    prefix = real.rstrip("/") + "/"  # once per link, not once per bound path
    return real in bound or any(path.startswith(prefix) for path in bound)


def register(status_fd: int, read_fd: int, mark: str | None = None) -> None:
    """A container is about to start with `status_fd`, its status pipe's write end (`read_fd` its
    read end), for a command marked `mark`: track it until its init ends. A duplicate of the read
    end is held here: it reports POLLHUP once the last writer is gone, the container's init (never
    read from here). A no-op where nothing is watched; a few syscalls (some 0.1 ms) where something is."""
    with _lock:
        guards, folders = _mounts_by_fd.pop(status_fd, ((), ()))
        wake, identities = _wake, _folders
    if not (guards or folders) or wake is None:
        return
    try:
        inode = os.fstat(status_fd).st_ino
        read_end = os.dup(read_fd)
    except OSError:
        log.warning("cannot follow a container's end: its status pipe is closed")
        return
    with _lock:
        links = set(_links)
    existed = {path for path in guards if os.path.lexists(path) and path not in links}  # a link is never bound
    with _lock:
        _guarded[read_end] = Guarded(
            status_fd, inode, guards, existed, folders=folders, identities=identities, mark=mark
        )
    wake()


def command_done(status_read: int) -> None:
    """The command of the container whose status pipe's read end is `status_read` ended; its
    container lives on while a background job it left runs (`end_lingering` ends it)."""
    try:
        inode = os.fstat(status_read).st_ino
    except OSError:
        return
    with _lock:
        for entry in _guarded.values():
            entry.done = entry.done or entry.pipe == inode


def lingering() -> bool:
    """Whether a container of this process lives on after its command ended."""
    with _lock:
        return any(entry.done for entry in _guarded.values())


def end_lingering(under: str | None = None) -> int:
    """End the containers whose command ended but whose background job runs on (`npm run dev &`):
    a pause stops everything the agent started, not only what runs in a call (red team, 2026-12-04:
    a loop left by `nohup ... &` kept writing after the pause). Only those whose command's mark is
    `under` a server's or an app home's (`_under`). How many were ended."""
    with _lock:
        entries = [entry for entry in _guarded.values() if entry.done and _under(entry, under)]
    return _end(entries)


def end_commands(under: str | None = None) -> int:
    """End every container of this process but the idle spares (those of commands marked `under`
    only): a pause's backstop (hub.py), when the loop that stops the commands gently is held up.
    How many were ended."""
    with _lock:
        entries = [entry for entry in _guarded.values() if entry.pipe not in _awaiting and _under(entry, under)]
    return _end(entries)


def _under(entry: Guarded, under: str | None) -> bool:
    """Whether `entry`'s command was marked under `under` (a server's mark, or an app home's tag,
    orphans.py); every container when `under` is None. One process serves one app home, so this
    changes what a pause ends only where several share a process (the tests: one test's pause
    ended another's command)."""
    return under is None or (entry.mark is not None and entry.mark.startswith(f"{under}:"))


def end_all() -> int:
    """End every container of this process by its init (the kernel then ends the rest of its pid
    namespace): at the app's exit, before the watching thread goes. How many were ended."""
    with _lock:
        entries = list(_guarded.values())
    return _end(entries)


def _end(entries: list[Guarded]) -> int:
    """Kill each container's init; how many. One already ending (its init's descriptors closed, or
    killed here before) is not counted again: a container stays followed until its init has exited
    (`ended`), and a second pause within that moment counted it twice."""
    count = 0
    for entry in entries:
        if entry.closing or entry.killed:
            continue
        init = _init_of(entry)  # its pidfd held from here (`_hold`): counted until the init is gone
        if init is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(init, signal.SIGKILL)
                entry.killed = True
                count += 1
    return count


def live() -> list[int]:
    """The containers still counted, by our duplicate of their status pipe's read end."""
    with _lock:
        return list(_guarded)


def watched() -> list[tuple[int, int]]:
    """What the watching thread polls for the end of each container, and for which events: its
    status pipe (POLLHUP, with no event asked), then, once that ended, its init's pidfd (POLLIN)."""
    with _lock:
        return [(entry.pidfd, select.POLLIN) if entry.closing else (fd, 0) for fd, entry in _guarded.items()]


def ended(fds: Iterable[int]) -> None:
    """These fds of `watched` reported their end (after the events read with them). A status pipe
    ends as its init's descriptors close, which the kernel does before it kills the rest of the
    container (a review, 2026-12-06: a job's `ln` in that moment made a file the app kept): where
    the init's pidfd is held, the container counts on until that pidfd reports the init exited,
    which it does once every other process of the container is gone. Else it ends here."""
    with _lock:
        for fd in fds:
            # A status pipe's read end (our key), or the pidfd of one whose status pipe ended before.
            key = fd if fd in _guarded else next((k for k, one in _guarded.items() if one.pidfd == fd), None)
            if key is None:
                continue
            entry = _guarded[key]
            if entry.pidfd >= 0 and not entry.closing:
                entry.closing = True  # from the next turn, its pidfd is polled (never ended in this one)
                continue
            del _guarded[key]
            os.close(key)
            if entry.pidfd >= 0:
                os.close(entry.pidfd)


def closing(bwrap_pid: int) -> None:
    """container.kill_bwrap is about to end the container bwrap `bwrap_pid` runs: its init, which
    dies of bwrap's death (--die-with-parent) and is no longer bwrap's child then, is found now and
    its pidfd held (`_hold`), so that the container counts until the init is gone. A few syscalls,
    on a Stop's path only; none where no counted container's init is unknown."""
    with _lock:
        unknown = [entry for entry in _guarded.values() if entry.pidfd < 0 and entry.pipe not in _awaiting]
    if not unknown:
        return
    for init in children(bwrap_pid)[:1]:
        for entry in unknown:
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{init}/fd/{entry.status_fd}") == f"pipe:[{entry.pipe}]":
                    entry.init = init
                    entry.killed = True  # by kill_bwrap, now: a pause's `_end` need not count it
                    _hold(entry, init)
                    return


def _hold(entry: Guarded, init: int) -> None:
    """Hold a pidfd of `entry`'s init, found alive just now (pids are not reused that soon), for as
    long as the container is counted. None where the kernel has no pidfd (before Linux 5.3): the
    container then ends with its status pipe, as it did before."""
    if entry.pidfd >= 0:
        return
    try:
        pidfd = os.pidfd_open(init)
    except (AttributeError, OSError):  # no pidfd here, or the init was reaped meanwhile
        return
    with _lock:
        if entry.pidfd < 0 and any(one is entry for one in _guarded.values()):
            entry.pidfd = pidfd
            return
    os.close(pidfd)  # held already (another thread found it too), or no longer counted


def _init_of(entry: Guarded, proc: str = "/proc") -> int | None:
    """The pid of the container's init: the child of one of our bwrap processes (each thread's
    children: a container may be started from any of them) that holds its status pipe (under the
    number it was passed as)."""
    if entry.init is not None and os.path.exists(f"{proc}/{entry.init}"):
        if proc == "/proc":
            _hold(entry, entry.init)
        return entry.init
    me = os.getpid()
    try:
        tasks = [int(task) for task in os.listdir(f"{proc}/{me}/task")]
    except (OSError, ValueError):
        return None
    for bwrap in (pid for task in tasks for pid in children(me, proc, task)):
        for init in children(bwrap, proc)[:1]:
            with contextlib.suppress(OSError):
                if os.readlink(f"{proc}/{init}/fd/{entry.status_fd}") == f"pipe:[{entry.pipe}]":
                    entry.init = init
                    if proc == "/proc":
                        _hold(entry, init)
                    return init
    return None


# -- a member appeared ---------------------------------------------------------------------------


def appeared(path: str) -> str | None:
    """Called by the watching thread for each new file (or folder) named like a lone member, in
    the order the kernel saw them: move it aside when a guarding container may have run a command
    then, else bind it in the live containers that guard it. Returns the moved name, or None."""
    if not os.path.lexists(path):
        return None  # gone already (moved by us, or by whoever made it)
    with _lock:
        folder = path in _folders
    if folder:  # a protected folder made anew, bound in the live containers; and judged as a member
        bind_folder(path)  # below too: one missing since (guarded now) must be moved aside (a review)
    with _lock:
        target = _links.get(path, (None, None))[0]
    if target is not None and _is_link_to(path, target):
        return None  # the link itself, as it was (put back here, or by the user)
    decided, bind_in = _judge(path)
    if decided == MOVE:
        moved = move_aside(path)
        if target is not None:
            _put_back(path, target)
        return moved
    for entry, init in bind_in:  # a user's new file, or one replaced by rename: read-only there from now on
        if live_binds.protect(init, [path]) is None:
            entry.existed.add(path)
    if bind_in:
        close_the_gap(path, [entry for entry, _init in bind_in])
    return None


# -- a way to a lone member kept from while it was not bound -------------------------------------

RENAME_EXCHANGE = 2  # renameat2's flag: the two names swap their files, atomically
AT_FDCWD = -100
SEPARATE_TRIES = 3  # reads of the member that must agree with its size and time (a save in place)
SEPARATE_WAIT_S = 0.25  # between them


def close_the_gap(path: str, had_it: Sequence[Guarded]) -> str | None:
    """A lone member replaced by rename outside (Claude saves `~/.claude.json` so) is unbound in the
    containers that had it until the watching thread binds it again, some 30 ms. A process there can
    keep a way to it past that: a second name (`ln`, an eighth red team, 2026-12-05), or a descriptor or
    a mapping (written through later, or opened again for writing through /proc/self/fd: a review,
    2026-12-06). Containers whose processes hold it are ended; with a second name, which is nobody's,
    every container that had it unbound and ran a command is, and then the member gets a file of its
    own with the same bytes (the name keeps the old one). The user is told. What was done: "held",
    "separated" or "linked" (not separated), or None."""
    with _lock:  # an idle spare runs nothing
        running = [entry for entry in had_it if entry.pipe not in _awaiting]
    try:
        info = os.stat(path)
    except OSError:
        return None
    if not running or not stat.S_ISREG(info.st_mode):
        return None
    linked = info.st_nlink > 1
    holding = running if linked else [entry for entry in running if _holds(entry, info)]
    if not holding:
        return None
    ended = _end(holding)  # first: a job still there could open the copy made below
    log.warning("a command kept a way to %s while it was unbound: %d container(s) ended", path, ended)
    if not linked:
        _tell(path, "held", *gap_notice(path, "held"))
        return "held"
    done = "separated" if _separate_when_still(path) else "linked"
    _tell(path, done, *gap_notice(path, done))
    return done


def gap_notice(path: str, done: str) -> tuple[str, str]:
    """What the user reads when a command kept a way to a protected file (`close_the_gap`)."""
    title = _("A command was stopped")
    if done == "held":
        message = _(
            "An agent's command opened {name} in the moment it was being saved, and could have changed "
            "it later through what it kept open. The command was stopped."
        )
    elif done == "separated":
        message = _(
            "{name} got a second name (a hard link) while an agent's command ran, through which commands "
            "could change it. The commands were stopped, and the file now has a file of its own, with the "
            "same content. If you linked it yourself, link it again when no command runs."
        )
    else:
        message = _(
            "{name} got a second name (a hard link) while an agent's command ran. The commands were stopped, "
            "but commands could still change the file through that name. Find it with: find ~ -samefile {name}"
        )
    return title, message.format(name=path)


def _holds(entry: Guarded, info: os.stat_result, proc: str = "/proc") -> bool:
    """Whether a process of the container has the file open or mapped (inode alone in the maps: their
    device number is the file system's, which differs from `st_dev` on btrfs; a false match only ends
    a container)."""
    init = _init_of(entry, proc)
    if init is None:
        return False
    try:
        namespace = os.readlink(f"{proc}/{init}/ns/pid")
    except OSError:
        return False
    inode = str(info.st_ino)
    for name in os.listdir(proc):
        if not name.isdigit():
            continue
        try:
            if os.readlink(f"{proc}/{name}/ns/pid") != namespace:
                continue
            for fd in os.listdir(f"{proc}/{name}/fd"):
                with contextlib.suppress(OSError):
                    held = os.stat(f"{proc}/{name}/fd/{fd}")
                    if (held.st_dev, held.st_ino) == (info.st_dev, info.st_ino):
                        return True
            with open(f"{proc}/{name}/maps") as maps:
                if any(line.split()[4:5] == [inode] for line in maps):
                    return True
        except OSError:  # gone meanwhile
            continue
    return False


def _separate_when_still(path: str) -> bool:
    """`_separate` once the member reads the same twice: a program outside caught saving it in place
    (truncated, not yet written) would leave the copy empty (a review, 2026-12-06)."""
    for turn in range(SEPARATE_TRIES):
        if turn:
            time.sleep(SEPARATE_WAIT_S)
        try:
            info = os.stat(path)
        except OSError:
            return False
        if info.st_nlink <= 1:
            return True  # separated meanwhile (Claude saved it by rename again)
        if _separate(path, info):
            return True
    return False


def _separate(path: str, info: os.stat_result) -> bool:
    """Swap `path`'s file for a copy of it (renameat2's exchange: never a moment without the file);
    put back what the swap took out unless it is the file copied, unchanged (a program outside saved
    or wrote it meanwhile: theirs stays, and nothing of it is lost)."""
    import ctypes  # here: only the watching thread of a process that starts containers gets here

    folder, name = os.path.split(path)
    try:
        with open(path, "rb") as source:
            copied = os.fstat(source.fileno())
            data = source.read()
            after = os.fstat(source.fileno())
        if (copied.st_dev, copied.st_ino) != (info.st_dev, info.st_ino):
            return False  # replaced again meanwhile: its own event looks at it
        if not data or len(data) != after.st_size or after.st_mtime_ns != copied.st_mtime_ns:
            return False  # empty, or written while read: read again (_separate_when_still)
        fd, temp = tempfile.mkstemp(prefix=f".{name}.", suffix=".cowork-terminal", dir=folder)
    except OSError as exc:
        log.error("cannot separate %s from its second name: %s", path, exc)
        return False
    libc = ctypes.CDLL(None, use_errno=True)

    def exchange() -> None:
        if libc.renameat2(AT_FDCWD, temp.encode(), AT_FDCWD, path.encode(), RENAME_EXCHANGE) != 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))

    ours = -1  # the inode of the copy, where the name `temp` holds something ours to delete
    try:
        with os.fdopen(fd, "wb") as out:
            if os.geteuid() == 0 and (copied.st_uid, copied.st_gid) != (0, 0):
                os.fchown(out.fileno(), copied.st_uid, copied.st_gid)
            os.fchmod(out.fileno(), stat.S_IMODE(copied.st_mode))
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        ours = os.lstat(temp).st_ino
        exchange()
        taken = os.lstat(temp)  # what was at `path`: the file copied, unchanged since it was read?
        if (taken.st_ino, taken.st_size, taken.st_mtime_ns) == (copied.st_ino, copied.st_size, copied.st_mtime_ns):
            ours = taken.st_ino  # the second name keeps it; under `temp` it is ours to delete
            return True
        exchange()  # theirs goes back to `path`; the copy to `temp`
        return False
    except (OSError, AttributeError) as exc:  # renameat2 needs glibc 2.28 and a file system that swaps
        log.error("cannot separate %s from its second name: %s", path, exc)
        return False
    finally:
        with contextlib.suppress(OSError):
            if os.lstat(temp).st_ino == ours:  # never a file of another program's, left at `temp`
                os.unlink(temp)


def bind_folder(path: str) -> int:
    """A protected folder made anew (`remember_folders`): end each container that bound the old one
    whose command ended (a job it left lives there, as a pause ends it: `end_lingering`), and bind
    the new one read-only in each whose command still runs (the session's shell, a call in the
    background), which goes on. An idle spare is ended unused at its take (its value is older).
    Never moved aside: only a program outside can make it (a command cannot rename the old one
    away: it is a mount point there). How many containers were ended or bound."""
    now = file_identity(path)
    if not os.path.isdir(path) or os.path.islink(path):
        return 0
    with _lock:  # not those that bind this one (started since, or an event for a folder that is not new)
        entries = [
            entry
            for entry in _guarded.values()
            if path in entry.folders and entry.pipe not in _awaiting and entry.identities.get(path) != now
        ]
    lingering = [entry for entry in entries if entry.done]
    count = _end(lingering)  # first, at once: a helper takes some 30 ms per container, and a job's loop less
    for entry in entries:
        init = None if entry.done else _init_of(entry)
        if init is not None and live_binds.protect(init, [path]) is None:
            count += 1
    return count


def _judge(path: str) -> tuple[str, list[tuple[Guarded, int]]]:
    """`verdict` for `path` over this process's containers, and those that guard it (their init
    found)."""
    with _lock:
        entries = list(_guarded.values())
        awaiting = set(_awaiting)
    seen: list[Seen] = []
    bind_in: list[tuple[Guarded, int]] = []
    for entry in entries:
        init = _init_of(entry) if path in entry.guards else None
        one = Seen(guards=path in entry.guards, existed=path in entry.existed, waiting=entry.pipe in awaiting)
        seen.append(one)
        if init is not None and one.guards:
            bind_in.append((entry, init))
    return verdict(seen), bind_in


def _is_link_to(path: str, target: str) -> bool:
    try:
        return os.readlink(path) == target
    except OSError:
        return False


def _put_back(link: str, target: str) -> None:
    """The user's symlink, as it was (the command's file was moved aside, or it only deleted it)."""
    try:
        os.symlink(target, link)
    except FileExistsError:  # made again at once: the next event moves it aside and puts the link back
        return
    except OSError as exc:
        log.error("putting back the link %s -> %s failed: %s", link, target, exc)
        return
    log.warning("a command replaced or deleted the link %s: put back (-> %s)", link, target)


def vanished(path: str) -> None:
    """A lone member was deleted outside (or moved aside here): no container has it bound any more
    (the kernel detached the binds), so from now on each one that guards it counts if it comes back.
    One renamed away is not taken as gone: editors that keep a backup save so, and the file they
    write next is bound again, not moved aside."""
    with _lock:
        for entry in _guarded.values():
            entry.existed.discard(path)
        target = _links.get(path, (None, None))[0]
    if target is not None and not os.path.lexists(path) and _judge(path)[0] == MOVE:
        _put_back(path, target)  # a command deleted the user's link (rm ~/.bashrc)


def move_aside(path: str, now: float | None = None) -> str | None:
    """Rename `path` beside itself, log it and tell the user (once per file in NOTICE_INTERVAL_S)."""
    moved = moved_name(path, time.time() if now is None else now, os.path.lexists)
    try:
        _rename(path, moved)
    except OSError as exc:
        log.error("a command created %s; moving it aside failed: %s", path, exc)
        return None
    vanished(path)
    log.warning(
        "a command created %s (a protected start-up file or folder that did not exist): moved to %s", path, moved
    )
    with _lock:
        _recent[:] = [*_recent[-(RECENT_KEPT - 1) :], (time.monotonic(), path, moved)]
    _tell(path, "moved", *person_notice(path, moved))
    return moved


def _tell(path: str, kind: str, title: str, message: str) -> None:
    """Tell the user, once per file and kind of notice in NOTICE_INTERVAL_S (a command that loops does
    not flood them; one kind does not silence another)."""
    last = _told.get((path, kind))
    if last is not None and time.monotonic() - last < NOTICE_INTERVAL_S:
        return
    _told[(path, kind)] = time.monotonic()
    if tell_user is not None:
        try:
            tell_user(title, message)
        except Exception:  # the watching thread must go on
            log.exception("telling the user failed")


def _rename(path: str, moved: str) -> None:
    """Rename, also where the command took the write right off the folder after making the file
    (the user owns it: the right is given back for the rename, then the folder is left as found)."""
    try:
        os.rename(path, moved)
        return
    except PermissionError:
        folder = os.path.dirname(path)
        mode = stat.S_IMODE(os.stat(folder).st_mode)
    os.chmod(folder, mode | stat.S_IWUSR | stat.S_IXUSR)
    try:
        os.rename(path, moved)
    finally:
        os.chmod(folder, mode)


def model_note(since: float, *, asked: bool = True) -> str | None:
    """English for the model: the start-up files moved aside since `since` (monotonic), made by the
    command that ran then or by another one running at the same time; None when none was. `asked`:
    whether the user's approval mode lets such a command wait for their Allow."""
    with _lock:
        moved = [(path, to) for at, path, to in _recent if at >= since]
    if not moved:
        return None
    said = "; ".join(f"{path} was moved to {to}" for path, to in moved)
    why = (
        f"{said}. Cowork Terminal moves aside a protected start-up file or folder that did not exist when a "
        "command creates it (it would run at the user's next login, or configure Claude or a shell)."
    )
    if not asked:
        return f"{why} {NEVER_ASKED_PROTECTED}"
    return (
        f"{why} If it is needed, ask the user, then call execute_command again with its path written "
        "out plainly in the command: the user is asked to allow it."
    )
