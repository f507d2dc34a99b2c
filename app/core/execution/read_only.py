"""How execute_read_only_command keeps its promise: the operating system forbids writes and the
network where it can, and elsewhere only commands the classifier proves read-only run (issue 22).

- Linux with bwrap: the whole filesystem read-only, a private /tmp, no network (a new network
  namespace has only loopback, and abstract sockets such as X11's are per namespace), its own
  process ids, and no sockets to other programs: a path socket on a read-only mount can still be
  connected to, so /run (the system bus, whose logind powers off for an active user; docker.sock;
  screen) and $XDG_RUNTIME_DIR (the session bus, dconf, systemd --user, agents) are hidden under
  empty tmpfs mounts, as /tmp hides X11's and tmux's (../shared/containment-notes.md, section 5);
  and a seccomp filter lets no Unix socket be made at all (seccomp.py: a daemon's socket elsewhere,
  Docker Desktop's in the home folder, would write for it), nor a vsock one, nor a kernel key
  touched (keyrings are not namespaced), nor a terminal typed into, nor a file's mode, owner,
  attributes or given times set; where there is Perl, a Landlock ruleset besides (PERL_READ_ONLY_CHECK:
  it judges writes and makes), at most MAX_TASKS tasks, and the first to go when memory runs out;
- macOS: a sandbox-exec profile that denies every write but to the null devices and its own terminal,
  all network, Apple events and opening apps (another app would write for it); not tested here (no Mac);
- elsewhere (no bwrap, Windows): only what the classifier proves read-only ("safe"); anything it
  cannot prove is refused, naming execute_command (fail closed).

Everywhere, every command runs with ENVIRONMENT (git takes no optional lock).

The choices are pure functions of the platform, the environment and what exists, tested with each
platform's values.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from enum import Enum

from app.core.execution.landlock import TASKS_ABI
from app.core.paths import runtime_dir

BWRAP = "bwrap"
SANDBOX_EXEC = "/usr/bin/sandbox-exec"

# What a command says when the read-only container stopped it: the model is told to switch tools.
BLOCKED_MARKERS = (
    "Read-only file system",
    "[Errno 30]",
    "couldn't open temporary file",
    "Operation not permitted",
    "Network is unreachable",
    "Could not resolve host",
    "Failed to connect",
    "Couldn't connect",
    "Connection refused",
    "Temporary failure in name resolution",
)
BLOCKED_NOTE = (
    "execute_read_only_command cannot create, change or delete files or reach the network, and this "
    "command tried to (see stderr). If the change is wanted, run it with execute_command."
)
NOT_PROVEN_MESSAGE = (
    "execute_read_only_command runs only commands that can be proven read-only on this computer, and this one "
    "cannot ({reasons}). Run it with execute_command instead (the user may be asked to approve it)."
)


# What every read-only command's environment holds, in a container or not (commands/running.py's
# run_read_only): git's `status` takes .git/index.lock and writes a new index when a file's times
# changed but not its content, unless optional locks are off (red team, 2026-12-05: with no container,
# `git status --short` rewrote the index). A command that sets or takes it away is not proven
# read-only (the classifier's tables.TOOL_VARIABLES).
ENVIRONMENT = {"GIT_OPTIONAL_LOCKS": "0"}


def environment(env: Mapping[str, str]) -> dict[str, str]:
    """The variables a read-only command is given on top of the server's: `env`, then ENVIRONMENT."""
    return {**env, **ENVIRONMENT}


class Containment(str, Enum):
    BWRAP = "bwrap"  # the kernel enforces it
    SANDBOX_EXEC = "sandbox-exec"  # macOS's sandbox enforces it
    CLASSIFIER = "classifier"  # only commands proven read-only run


def containment(platform: str, which: Callable[[str], str | None], exists: Callable[[str], bool]) -> Containment:
    """Which way this computer keeps a command read-only."""
    if platform.startswith("linux") and which(BWRAP):
        return Containment.BWRAP
    if platform == "darwin" and exists(SANDBOX_EXEC):
        return Containment.SANDBOX_EXEC
    return Containment.CLASSIFIER


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


# Landlock's file system rights the read-only check handles, by the ABI that brought them: 1 the writes
# and makes (0x1FF2), 2 renames across folders (REFER), 3 truncation, 5 device ioctls (IOCTL_DEV). A
# handled right is refused everywhere but under the folders a rule names (the private ones).
IOCTL_DEV = 1 << 15
LANDLOCK_RIGHTS = ((1, 0x1FF2), (2, 1 << 13), (3, 1 << 14), (5, IOCTL_DEV))


def landlock_rights(abi: int) -> int:
    """The rights the check's ruleset handles on a kernel of Landlock ABI `abi` (0: no Landlock).
    The check computes the same inside the container from the same table (PERL_READ_ONLY_CHECK)."""
    rights = 0
    for since, right in LANDLOCK_RIGHTS:
        rights |= right if abi >= since else 0
    return rights


# The most tasks (processes and threads) a read-only command may have at once: its fork bomb stops
# there instead of at the user's own limit (often tens of thousands). RLIMIT_NPROC counts the tasks of
# one user in one user namespace (since Linux 5.14: measured here, a user with 300 processes outside
# still made 98 of 100 inside), so the limit is set only where the container has a user namespace of
# its own (bwrap without setuid; not for root, whom the kernel exempts anyway) and the kernel is new
# enough: Landlock ABI 2 means Linux 5.19. Elsewhere it would count every process of the user.
MAX_TASKS = 1024
# prlimit64(2) on each machine, which the check calls through Perl's `syscall`.
PRLIMIT_CALLS = {"x86_64": 302, "aarch64": 261}
OOM_SCORE_ADJ = 1000  # memory runs out: the kernel ends the read-only command before the user's programs

# The check bwrap runs first where there is Perl: the lifeline's (container.LIFELINE_CHECK), then a
# Landlock file system ruleset that lets the command write only under the private folders named before
# `--` (/tmp, /dev, /run, the runtime folder's tmpfs), whatever else is mounted or opened: a read-only
# mount did not stop a named pipe of the host being written, nor a file system the host mounted while
# the command ran (a review, 2026-12-05; bwrap remounts read-only only what is there as it starts).
# Device ioctls too (ABI 5) are allowed only on what is opened under those: bwrap's own /dev (null,
# zero, random, tty, its own pseudo-terminals); elsewhere a terminal the host mounted later would have
# its settings changed. Before the ruleset: a terminal the check was started with stops being its
# controlling one (a new session, as the init does: no TIOCSTI typing into the user's shell; the
# seccomp filter refuses TIOCSTI as well), the out-of-memory killer is told to pick the command
# first, and its tasks are limited (MAX_TASKS). A kernel without Landlock runs the command as before;
# one with it that refuses the ruleset runs nothing (exit 126, said on stderr). A pipe reached through
# /proc/self/fd is not Landlock's to judge.
PERL_READ_ONLY_CHECK = r"""
delete $ENV{PERL_BADLANG};
my $life = shift @ARGV;
open(my $alive, "<&=", $life) or do { print STDERR "cowork-init: no lifeline on fd $life\n"; exit 126 };
my $gone = ""; vec($gone, fileno($alive), 1) = 1;
exit 137 if select(my $now = $gone, undef, undef, 0) > 0;
close $alive;
my @writable;
push @writable, shift @ARGV while @ARGV && $ARGV[0] ne "--";
shift @ARGV;
sub refuse { print STDERR "cowork-check: Landlock could not be applied ($_[0]): $!\n"; exit 126 }
if (open(my $tty, "<", "/dev/tty")) { close $tty; require POSIX; POSIX::setsid() }
if (open(my $oom, ">", "/proc/self/oom_score_adj")) { print $oom "@OOM@\n"; close $oom }
my $abi = syscall(444, 0, 0, 1);
my $uids = "";
if (open(my $map, "<", "/proc/self/uid_map")) { $uids = <$map>; close $map }
if (@PRLIMIT@ > 0 && $abi >= @TASKS_ABI@ && $uids =~ /\d/ && $uids !~ /^\s*0\s+0\s+4294967295\s*$/) {
    my $was = "\0" x 16;
    if (syscall(@PRLIMIT@, 0, 6, 0, $was) == 0) {
        my ($soft, $hard) = unpack("QQ", $was);
        $soft = @TASKS@ if $soft > @TASKS@;
        $hard = @TASKS@ if $hard > @TASKS@;
        my $limit = pack("QQ", $soft, $hard);
        syscall(@PRLIMIT@, 0, 6, $limit, 0);
    }
}
if ($abi >= 1) {
    my $rights = 0;
    $rights |= $_->[1] for grep { $abi >= $_->[0] } (@RIGHTS@);
    my $ruleset = syscall(444, pack("Q", $rights), 8, 0);
    refuse("ruleset") if $ruleset < 0;
    for my $folder (@writable) {
        sysopen(my $handle, $folder, 0x200000 | 0x80000) or next;
        refuse($folder) if syscall(445, $ruleset, 1, pack("Ql", $rights, fileno($handle)), 0) != 0;
        close $handle;
    }
    refuse("restrict") if syscall(446, $ruleset, 0) != 0;
}
exec { $ARGV[0] } @ARGV;
print STDERR "cowork-check: $ARGV[0]: $!\n";
exit 127;
"""
for _name, _value in (
    ("@RIGHTS@", ", ".join(f"[{since}, {right}]" for since, right in LANDLOCK_RIGHTS)),
    ("@OOM@", str(OOM_SCORE_ADJ)),
    ("@TASKS_ABI@", str(TASKS_ABI)),
    ("@TASKS@", str(MAX_TASKS)),
):
    PERL_READ_ONLY_CHECK = PERL_READ_ONLY_CHECK.replace(_name, _value)


def read_only_check(machine: str) -> str:
    """PERL_READ_ONLY_CHECK for `machine` (os.uname): its prlimit64 call; no task limit where it is
    not known here."""
    return PERL_READ_ONLY_CHECK.replace("@PRLIMIT@", str(PRLIMIT_CALLS.get(machine, 0)))


# The command's temporary folder where /tmp is not writable (a folder is bound back under it): in
# bwrap's own /dev, which nothing is ever bound back under, so it is there even when the folder
# bound back is /tmp itself (a command run in /tmp could not start when it was /tmp/.cowork-scratch).
SCRATCH = "/dev/shm/.cowork-scratch"


def writable_places(hidden: Sequence[str], bound: Sequence[str]) -> tuple[list[str], str | None]:
    """The private folders Landlock lets the command write under, and the scratch folder that takes
    /tmp's place (TMPDIR) when a folder bound back read-only lies under /tmp: Landlock's rules reach
    across mounts, so a writable /tmp made a named pipe in a working folder under it writable (a
    review, 2026-12-05). A hidden place with a folder bound back under it is left out: /run too,
    under which a USB stick's folder is (/run/media). /dev is never hidden nor bound back under."""
    clear = [place for place in hidden if not any(_under(folder, place) for folder in bound)]
    scratch = SCRATCH if "/tmp" in hidden and "/tmp" not in clear else None
    return [*clear, *([scratch] if scratch else [])], scratch


def bwrap_prefix(
    bwrap: str,
    cwd: str,
    sockets: str | None,
    visible: Sequence[str] = (),
    *,
    lifeline_fd: int,
    seccomp_fd: int | None = None,
    perl: str | None = None,
    locks: Sequence[str] = (),
    shown: Sequence[str] = (),
) -> list[str]:
    """bwrap's arguments before `bash -c COMMAND`. Folders the command needs (its cwd, the user's
    home) that lie under a hidden place (/tmp, /run, the runtime folder) are bound back, read-only.
    The command starts only while its starter lives (container.lifeline: bwrap 0.8 may miss its death).
    `seccomp_fd`: the filter that makes no Unix socket (seccomp.py) is read from it. `perl`: the
    check that also applies a Landlock ruleset (PERL_READ_ONLY_CHECK); without it, bash's check.
    `locks`: the app's folders of lock files and its outputs folder, hidden under empty ones, with the
    folders of `shown` (this app's own outputs) bound back read-only."""
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/run"]
    hidden = ["/tmp", "/run", *([sockets] if sockets else [])]
    bound: list[str] = []
    for folder in dict.fromkeys([cwd, *visible]):
        if folder and any(_under(folder, place) for place in hidden) and not (sockets and _under(folder, sockets)):
            argv += ["--ro-bind", folder, folder]
            bound.append(folder)
    if sockets:  # last: a folder bound back above may hold it (a cwd above the runtime folder)
        argv += ["--tmpfs", sockets]
    # Here, not at the top: admission and the jobs read this module in every server, and the container
    # module is only for one that runs its commands itself (issue 21's idle memory).
    from app.core.execution.container import KERNEL_SETTINGS, LIFELINE_CHECK, capability_args, hidden_locks
    from app.core.execution.landlock import INIT_ENV

    argv += hidden_locks(locks, shown, os.path.isdir)  # no flock on ours, no other app's outputs

    if perl:
        writable, scratch = writable_places(hidden, bound)
        argv += ["--dir", scratch, "--setenv", "TMPDIR", scratch] if scratch else []
        check = [perl, "-e", read_only_check(os.uname().machine), "--", str(lifeline_fd), "/dev", *writable, "--"]
    else:
        check = ["/bin/bash", "--norc", "--noprofile", "-c", f'life=$1; shift\n{LIFELINE_CHECK}exec "$@"']
        check += ["cowork-check", str(lifeline_fd)]
    return [
        *argv,
        *KERNEL_SETTINGS,
        *capability_args(os.geteuid(), read_only=True),
        "--unshare-net",
        "--unshare-ipc",  # System V's shared memory, queues and semaphores: a host program's (red team)
        "--unshare-pid",
        "--die-with-parent",
        *(["--seccomp", str(seccomp_fd)] if seccomp_fd is not None else []),
        *(INIT_ENV if perl else ()),  # no locale warning
        "--chdir",
        cwd,
        "--",
        *check,
    ]


def macos_profile(writable: Sequence[str] = ()) -> str:
    """A sandbox-exec profile: everything but writes (other than to the null devices, its own
    terminal and descriptors, and under `writable`) and the network. Later rules win over earlier ones."""
    lines = [
        "(version 1)",
        "(allow default)",
        "(deny file-write*)",
        # its own terminal only: /dev/ttys001 is another's (red team, 2026-12-05: OSC 52 set the clipboard)
        '(allow file-write-data (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty") (regex #"^/dev/fd/"))',
        "(deny network*)",
        "(deny appleevent-send)",
        "(deny lsopen)",
    ]
    if writable:
        lines.append(f"(allow file-write* {' '.join(f'(subpath {json.dumps(path)})' for path in writable)})")
    return "\n".join(lines)


def sandbox_exec_prefix(sandbox_exec: str = SANDBOX_EXEC, writable: Sequence[str] = ()) -> list[str]:
    return [sandbox_exec, "-p", macos_profile(writable)]


def macos_temp_folders(environ: Mapping[str, str], realpath: Callable[[str], str] = os.path.realpath) -> list[str]:
    """Where a shell writes its temporary files on macOS (zsh's here-documents: /tmp/zsh*), which the
    login-shell probe may write in its container: /private/tmp and the user's $TMPDIR."""
    folders = ["/private/tmp"]
    tmpdir = environ.get("TMPDIR", "")
    if tmpdir.startswith("/"):
        folders.append(realpath(tmpdir).rstrip("/"))
    return folders


def prefix_for(
    way: Containment,
    cwd: str,
    home: str,
    environ: Mapping[str, str],
    which: Callable[[str], str | None],
    lifeline_fd: int,
    visible: Sequence[str] = (),
    temp_writable: bool = False,
    seccomp_fd: int | None = None,
    locks: Sequence[str] = (),
    shown: Sequence[str] = (),
) -> list[str]:
    """What to run before `bash -c COMMAND` for `way` (nothing: the classifier already proved it).
    `visible`: folders besides the home one that the program needs, where bwrap hides them (/tmp).
    `temp_writable`: the temporary folders may be written (bwrap's /tmp is a private one anyway).
    `seccomp_fd`: bwrap's filter (seccomp.py), read once. `locks`: the app's lock folders, hidden (and
    its outputs folder, but for the folders of `shown`)."""
    if way is Containment.BWRAP:
        bwrap = which(BWRAP) or f"/usr/bin/{BWRAP}"  # never a PATH search: system_programs.py
        uid = os.getuid() if hasattr(os, "getuid") else None
        sockets = runtime_dir(environ, uid, os.path.isdir)
        from app.core.execution.landlock import find_perl  # here: the container's modules load lazily

        return bwrap_prefix(
            bwrap,
            cwd,
            sockets,
            [home, *visible],
            lifeline_fd=lifeline_fd,
            seccomp_fd=seccomp_fd,
            perl=find_perl(environ),
            locks=locks,
            shown=shown,
        )
    if way is Containment.SANDBOX_EXEC:
        return sandbox_exec_prefix(writable=macos_temp_folders(environ) if temp_writable else ())
    return []


def bwrap_here(_name: str = BWRAP) -> str | None:
    """The bwrap this process starts (container.bwrap_program), where it is there to run."""
    from app.core.execution import container

    found = container.bwrap_program(os.environ)
    return found if os.access(found, os.X_OK) else None


def wrapped_here(
    platform: str, cwd: str, home: str, environ: Mapping[str, str], visible: Sequence[str] = ()
) -> tuple[list[str], tuple[int, ...]]:
    """What runs a program in this computer's read-only container (its temporary folders writable),
    and the descriptors it must pass on (bwrap's lifeline); nothing where there is none."""
    way = containment(platform, bwrap_here, os.path.exists)
    life = -1
    if way is Containment.BWRAP:
        from app.core.execution.container import lifeline

        life = lifeline()
    prefix = prefix_for(way, cwd, home, environ, bwrap_here, life, visible, temp_writable=True)
    return prefix, (life,) if life >= 0 else ()


def blocked(stderr: str, exit_code: int | None) -> bool:
    """Whether a command failed because it tried to write or reach the network."""
    return exit_code != 0 and any(marker in stderr for marker in BLOCKED_MARKERS)
