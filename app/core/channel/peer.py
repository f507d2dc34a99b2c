"""Who is at the other end of the channel, as the operating system tells it, and whether to trust it.

The facts come from the OS (SO_PEERCRED and /proc on Linux, LOCAL_PEERPID on macOS, the named
pipe's process id on Windows), never from anything the peer says. The verdicts are pure functions
of those facts and our own, so tests call them with every platform's values.

What a check proves is limited: a source install's tray is the same Python as any script, and a
program can run our own executable with any arguments. The checks stop a script posing as the
tray; the data folder in the tray's hello stops our genuine program run for another folder. No
loosening is ever based on them: loosening needs a click in the tray.

The tray is not dumpable (core/private_process.py), so the kernel hides its program (/proc/<pid>/exe)
from a server without root's powers: for such a peer its arguments are what is checked. Little is
given up: a same-user process outside a container passes the program check anyway (our own Python
with its module first on PYTHONPATH, our frozen program with LD_PRELOAD), and one inside a container
is told by its pid namespace, which /proc/<pid>/status gives for a process that is not dumpable too.

Provenance (issue 21) is the exception, because a process cannot shed it: a command runs in its own
pid namespace (Linux, bwrap), so does all it starts, detached or not; a peer whose pid namespace is
not ours is inside a command container (nested namespaces differ too). Windows: a peer in one of our
command jobs; macOS: a sandboxed peer. Such a peer may only pause and stop.
"""

from __future__ import annotations

import os
import socket
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

SO_PEERCRED_FORMAT = "iII"  # pid, uid, gid (Linux struct ucred)
MACOS_SOL_LOCAL = 0
MACOS_LOCAL_PEERPID = 2
RUN_MARK_VARIABLE = "COWORK_TERMINAL_RUN"  # every process a server starts carries it (process_marks)
DELETED_MARK = " (deleted)"  # what Linux adds to /proc/<pid>/exe once the program's file is unlinked


@dataclass(frozen=True)
class PeerFacts:
    pid: int | None
    uid: int | str | None  # a uid, or a SID on Windows
    executable: str | None  # resolved path, when the OS tells it
    argv: tuple[str, ...] = ()
    run_mark: bool = False  # started by one of our servers (a label, not a boundary)
    pid_namespace: str | None = None  # Linux: `pid:[...]` of /proc/<pid>/ns/pid
    in_command_job: bool = False  # Windows: in one of this process's command jobs
    sandboxed: bool = False  # macOS: sandbox_check says so
    pid_depth: int | None = None  # Linux: how many pid namespaces deep (NSpid in /proc/<pid>/status)
    hidden: bool = False  # Linux: not dumpable, so the kernel keeps its program from us (our tray)


@dataclass(frozen=True)
class OwnFacts:
    uid: int | str
    executable: str  # resolved
    frozen: bool
    data_dir: str  # resolved
    pid_namespace: str | None = None  # Linux: ours, to tell a peer inside a command container
    pid_depth: int | None = None  # Linux: ours (NSpid), likewise


def own_facts(real_data_dir: str) -> OwnFacts:
    uid: int | str = os.getuid() if hasattr(os, "getuid") else _windows_sid()
    frozen = bool(getattr(sys, "frozen", False))
    return OwnFacts(
        uid, os.path.realpath(sys.executable), frozen, real_data_dir, pid_namespace("self"), _pid_depth("self")
    )


def pid_namespace(pid: int | str, proc: Path = Path("/proc")) -> str | None:
    try:
        return os.readlink(proc / str(pid) / "ns" / "pid")
    except OSError:
        return None


def _pid_depth(pid: int | str, proc: Path = Path("/proc")) -> int | None:
    """How many pid namespaces deep a process is, seen from this /proc: the count of its NSpid
    entries. /proc/<pid>/status is readable even for a process that is not dumpable (our tray and windows),
    whose /proc/<pid>/ns/pid link is not, to a tray without root's powers."""
    try:
        for line in (proc / str(pid) / "status").read_text().splitlines():
            if line.startswith("NSpid:"):
                return len(line.split()) - 1
    except OSError:
        return None
    return None


def from_container(peer: PeerFacts, own: OwnFacts) -> bool:
    """Whether the peer runs inside a command container. Linux: it is deeper in pid namespaces than
    we are, or in another namespace of our depth, or neither can be read while ours can (it left:
    fail closed). A process cannot leave its pid namespace, so detaching changes nothing."""
    if peer.in_command_job or peer.sandboxed:
        return True
    if own.pid_depth is not None and peer.pid_depth is not None:
        if peer.pid_depth != own.pid_depth:
            return True
        # Same depth: the same namespace, unless both links can be read and differ (a sibling).
        return peer.pid_namespace is not None and own.pid_namespace not in (None, peer.pid_namespace)
    if own.pid_namespace is None:
        return False
    return peer.pid_namespace != own.pid_namespace


def _windows_sid() -> str:  # pragma: no cover - Windows only (tested under Wine)
    from app.core.channel import windows_pipe

    return windows_pipe.current_user_sid()


def started_as_this_app(argv: tuple[str, ...], own: OwnFacts) -> bool:
    """What the arguments say of a process whose program the OS does not tell: our frozen program by
    name, or our Python running this app. Any program can write its own arguments."""
    if own.frozen:
        return bool(argv) and Path(argv[0]).name == Path(own.executable).name
    return runs_this_app(argv)


def runs_this_app(argv: tuple[str, ...]) -> bool:
    """A source install's tray: our interpreter running `-m app` or the `cowork-terminal` script."""
    rest = list(argv[1:])
    while rest:
        arg = rest.pop(0)
        if arg == "-m":
            return rest[:1] == ["app"]
        if arg == "-c":
            return False
        if arg in ("-X", "-W"):  # options that take a value
            rest = rest[1:]
        elif not arg.startswith("-"):
            return Path(arg).name in ("cowork-terminal", "cowork-terminal.exe", "cowork-terminal-script.py")
    return False


def same_path(first: object, second: object, platform: str) -> bool:
    """Paths as the OS compares them: Windows ignores case (and may spell the drive either way)."""
    if not isinstance(first, str) or not isinstance(second, str):
        return False
    return first.casefold() == second.casefold() if platform == "win32" else first == second


def tray_refusal(peer: PeerFacts, own: OwnFacts, hello_data_dir: object, platform: str = sys.platform) -> str | None:
    """Why a server must not take orders from this peer as its tray; None when it may."""
    if peer.uid is None or peer.uid != own.uid:
        return f"the process at the tray's address belongs to another user ({peer.uid})"
    if from_container(peer, own):  # a look-alike started by a command: it would allow anything
        return "the process at the tray's address runs inside a command's container, so it is not the user's tray"
    if peer.executable is None and not peer.hidden:
        return "the operating system did not tell which program is at the tray's address"
    if peer.executable is not None and not same_path(peer.executable, own.executable, platform):
        return f"the process at the tray's address is not Cowork Terminal ({peer.executable})"
    if (peer.hidden or not own.frozen) and not started_as_this_app(peer.argv, own):
        return f"the process at the tray's address does not run Cowork Terminal ({' '.join(peer.argv)[:200]})"
    if not same_path(hello_data_dir, own.data_dir, platform):
        return f"the tray there keeps its data in another folder ({hello_data_dir})"
    return None


def client_refusal(peer: PeerFacts, own: OwnFacts) -> str | None:
    """Why the tray closes a connection at once; None when the peer may talk (as an untrusted peer)."""
    if peer.uid is None or peer.uid != own.uid:
        return f"a process of another user ({peer.uid}) tried to connect"
    return None


# -- facts from the OS ------------------------------------------------------------------------


def socket_peer(sock: socket.socket, platform: str = sys.platform) -> PeerFacts:
    """The facts about the process at the other end of a connected Unix socket."""
    if platform == "darwin":  # pragma: no cover - macOS only
        pid = struct.unpack("i", sock.getsockopt(MACOS_SOL_LOCAL, MACOS_LOCAL_PEERPID, 4))[0]
        uid = os.getuid()  # getpeereid: a socket in a 0700 folder admits only its owner
        return PeerFacts(pid, uid, _macos_executable(pid), sandboxed=_macos_sandboxed(pid))
    pid, uid, _gid = struct.unpack(
        SO_PEERCRED_FORMAT, sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("iII"))
    )
    return linux_process_facts(pid, uid)


def linux_process_facts(pid: int, uid: int, proc: Path = Path("/proc")) -> PeerFacts:
    base = proc / str(pid)
    hidden = False
    try:
        executable: str | None = program_path(base / "exe")
    except PermissionError:  # not dumpable (as our tray), or a security module's rule
        executable, hidden = None, not_dumpable(pid, proc)
    except OSError:  # gone meanwhile
        executable = None
    try:
        argv = tuple(a.decode("utf-8", "replace") for a in (base / "cmdline").read_bytes().split(b"\0") if a)
    except OSError:
        argv = ()
    try:
        environ = (base / "environ").read_bytes().split(b"\0")
        marked = any(v.startswith(RUN_MARK_VARIABLE.encode() + b"=") for v in environ)
    except OSError:
        marked = False
    return PeerFacts(
        pid, uid, executable, argv, marked, pid_namespace(pid, proc), pid_depth=_pid_depth(pid, proc), hidden=hidden
    )


def program_path(exe_link: Path) -> str:
    """A process's program, from its /proc/<pid>/exe. When an update renamed a new file over the
    program (apt, pyenv, a reinstall) the kernel names it "<path> (deleted)": a program replaced at
    the same path is the same program, so that is <path>. Only the kernel's path is stripped, never
    resolved again: a look-alike run from a copy it then deleted keeps its own path (which is not
    ours), whatever link it put there since. A file whose name merely ends so still has links."""
    text = os.readlink(exe_link)
    if text.endswith(DELETED_MARK) and os.stat(exe_link).st_nlink == 0:
        return text[: -len(DELETED_MARK)]
    return os.path.realpath(text)


def not_dumpable(pid: int | str, proc: Path = Path("/proc")) -> bool:
    """The kernel's own sign of a process that is not dumpable: the files under /proc/<pid> belong
    to root (proc(5)). For a root process it tells nothing: taken as hidden, as only a reader
    without root's powers is refused its program."""
    try:
        return (proc / str(pid) / "status").stat().st_uid == 0
    except OSError:
        return False


def _macos_sandboxed(pid: int) -> bool:  # pragma: no cover - macOS only
    from app.core.execution import seatbelt

    try:
        return seatbelt.is_sandboxed(pid)
    except (OSError, AttributeError):
        return False


def _macos_executable(pid: int) -> str | None:  # pragma: no cover - macOS only
    import ctypes

    buffer = ctypes.create_string_buffer(4096)
    libproc = ctypes.CDLL("/usr/lib/libproc.dylib")
    if libproc.proc_pidpath(pid, buffer, 4096) <= 0:
        return None
    return os.path.realpath(buffer.value.decode())
