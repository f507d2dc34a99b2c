"""Landlock scopes in the container: a command cannot reach an abstract Unix socket made outside
(the tray's `\\0cowork-terminal/...`, X11's, a bus on an abstract address) nor signal a process
outside its domain, while the network stays up (issue 21, ../shared/containment-notes.md).

Why here and how: the domain must be applied inside the container, to the command only (not to
the server or the tray, which need their sockets), before it runs; it is inherited by all it
starts. `preexec_fn` is unsafe in a threaded server, nothing may be compiled at install time, and
a Python helper costs an interpreter start (about 25 ms here). So the container's init, which
already forks the command, is a short Perl program when the kernel has scopes: Perl starts as
fast as bash (the init it replaces) and has `syscall`, so the scoping costs one fork's worth of
nothing. Perl is on every Debian and Ubuntu system (`perl-base` is essential); where it is
missing the bash init runs, unscoped, and the tray says so once.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Mapping

from app.core.i18n import _

SCOPE_ABI = 6  # LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET and LANDLOCK_SCOPE_SIGNAL: Linux 6.12
CREATE_RULESET = 444  # the same number on every architecture (added after the syscall table merge)
CREATE_RULESET_VERSION = 1

SCOPED = "scoped"  # commands are scoped
OLD_KERNEL = "old-kernel"  # the kernel has no scopes (Landlock ABI < 6, or Landlock off)
NO_PERL = "no-perl"  # no Perl to apply them
FAILED = "failed"  # the probe failed with them, and passed without
NOT_LINUX = "not-linux"

# The container's init with scopes: the bash init's job (containers.INIT_SCRIPT) in Perl. It forks
# the command, scopes it (create a ruleset that handles no access right but both scopes, 3, and
# restrict to it: bwrap already set no_new_privs), writes its status to the fd named first, then
# reaps until the namespace is empty so a finished command's background job lives on. The init
# itself stays outside the domain, so the command cannot signal it either. Empty handlers (not
# IGNORE, which exec would pass on) keep Ctrl-C and a polite SIGTERM for the command. The init leads
# the command's process group (Stop and Ctrl-C signal it), made with setpgid rather than bwrap's
# --new-session: every caller starts bwrap in a session of its own without a terminal already
# (executor.spawn_options), and each further setsid cost some 3-6 ms here (a scheduler autogroup
# per session); where a terminal is still there (TIOCSTI), it takes a new session. A scope that
# fails fails the command (exit 126, said on its stderr): it never runs unscoped by surprise. Before all
# that it reads the lifeline named second (container.lifeline: nothing is ever written to it, so
# end of file means whoever started the container is gone) and then starts nothing. A spare
# container (spare.py) is given `--orders=FD` instead of a command: it waits for its command on that
# pipe, as NUL-ended fields (the folder, the number of variables, the number of arguments, the
# variables as NAME=value, the arguments), or for the end of its lifeline; end of file without a whole
# command (ended unused) starts nothing. Once its command runs, a spare's init names it in its own command line.
# The init keeps the status fd open until it ends: its end tells start_files.py the container is gone.
PERL_INIT = r"""
$SIG{$_} = sub {} for qw(INT TERM HUP QUIT);
if (open(my $tty, "<", "/dev/tty")) { close $tty; require POSIX; POSIX::setsid() } else { setpgrp(0, 0) }
my $fd = shift @ARGV;
my $life = shift @ARGV;
open(my $status, ">&=", $fd) or die "cowork-init: status fd $fd: $!\n";
open(my $alive, "<&=", $life) or die "cowork-init: no lifeline on fd $life: $!\n";
my $gone = ""; vec($gone, fileno($alive), 1) = 1;
exit 137 if select(my $now = $gone, undef, undef, 0) > 0;
my ($cwd, %env, @argv);
if (@ARGV == 1 && $ARGV[0] =~ /^--orders=(\d+)$/) {
    open(my $order, "<&=", $1) or die "cowork-init: no command pipe on fd $1: $!\n";
    my $either = $gone; vec($either, fileno($order), 1) = 1;
    my $ready;
    1 while select($ready = $either, undef, undef, undef) < 0;
    exit 137 if vec($ready, fileno($alive), 1);
    my $text = do { local $/; <$order> };
    close $order;
    exit 0 unless defined $text && length $text;
    my @field = split /\0/, $text, -1;
    pop @field;
    ($cwd, my $vars, my $args) = splice(@field, 0, 3);
    exit 125 unless substr($text, -1) eq "\0" && $args > 0 && @field == $vars + $args;
    %env = map { split /=/, $_, 2 } @field[0 .. $vars - 1];
    @argv = @field[$vars .. $#field];
} else {
    %env = %ENV;
    delete $env{PERL_BADLANG};
    @argv = @ARGV;
}
close $alive;
my $pid = fork;
defined $pid or die "cowork-init: fork: $!\n";
if ($pid == 0) {
    close $status;
    %ENV = %env;
    if (defined $cwd) { chdir $cwd or do { print STDERR "cowork-init: $cwd: $!\n"; exit 127 } }
    my $attr = pack("QQQ", 0, 0, 3);
    my $ruleset = syscall(444, $attr, 24, 0);
    if ($ruleset < 0 || syscall(446, $ruleset, 0) != 0) {
        print STDERR "cowork-init: Landlock scopes could not be applied: $!\n";
        exit 126;
    }
    exec { $argv[0] } @argv;
    print STDERR "cowork-init: $argv[0]: $!\n";
    exit 127;
}
$0 = join(" ", "cowork-init", @argv) if defined $cwd;
waitpid($pid, 0);
my $code = ($? & 127) ? 128 + ($? & 127) : $? >> 8;
syswrite($status, "$code\n");
open(STDIN, "<", "/dev/null");
open(STDOUT, ">", "/dev/null");
open(STDERR, ">", "/dev/null");
1 while wait() != -1;
exit $code;
"""

# Landlock ABI 2 means Linux 5.19, past 5.14, where RLIMIT_NPROC counts the tasks of one user in one user
# namespace alone: the kernel from which a container's tasks can be limited (read_only.py, container.py).
TASKS_ABI = 2


def plan(platform: str, abi: int, perl: str | None) -> str:
    """Whether commands get scopes here: SCOPED, or why not (the kernel's Landlock ABI, from
    `kernel_abi`; 0 when it has none)."""
    if not platform.startswith("linux"):
        return NOT_LINUX
    if abi < SCOPE_ABI:
        return OLD_KERNEL
    if not perl:
        return NO_PERL
    return SCOPED


# What a Perl init of ours is started with: no warning of Perl's about a locale that is not installed
# (five lines on every command's stderr); the Landlock init takes it out of the command's environment.
# The same as bwrap's flags.
INIT_VARIABLES = {"PERL_BADLANG": "0"}
INIT_ENV = tuple(arg for name, value in INIT_VARIABLES.items() for arg in ("--setenv", name, value))


def init_argv(perl: str) -> list[str]:
    """The scoping init's argv, before the status fd and the command."""
    return [perl, "-e", PERL_INIT]


@functools.cache
def kernel_abi() -> int:
    """The running kernel's Landlock ABI version, 0 without Landlock (asking changes nothing). Asked
    once a process: the task limit reads it at each container's start and each command's result."""
    if not sys.platform.startswith("linux"):
        return 0
    import ctypes  # here: a server whose tray runs its commands never asks (ctypes is ~0.3 MB)

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        found = libc.syscall(CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(int(found), 0)


def find_perl(environ: Mapping[str, str] | None = None) -> str | None:
    """Perl where no command can change it (a `perl` a command put on PATH must not be our init)."""
    from app.core.system_programs import system_program  # here: a tray-bound `serve` reads TASKS_ABI only

    return system_program("perl", environ)


def person_message(state: str) -> str | None:
    """What the tray says once when commands are contained but not scoped; None when they are."""
    if state == OLD_KERNEL:
        return _(
            "Commands can still talk to other programs on this computer, this app included. "
            "Closing that needs Linux 6.12 or newer."
        )
    if state == NO_PERL:
        return _(
            "Commands can still talk to other programs on this computer, this app included. "
            "To close that, install Perl (sudo apt install perl) and restart Cowork Terminal."
        )
    if state == FAILED:
        return _("Commands can still talk to other programs on this computer, this app included. The log says why.")
    return None


def log_message(state: str) -> str:
    """The English line for the log: whether commands are scoped, and why not."""
    return {
        SCOPED: "abstract sockets and signals are scoped with Landlock",
        OLD_KERNEL: "no Landlock scopes: the kernel is older than 6.12 (Landlock ABI < 6)",
        NO_PERL: "no Landlock scopes: perl is missing (the scoping init is a Perl program)",
        FAILED: "no Landlock scopes: the container did not start with them",
        NOT_LINUX: "no Landlock here",
    }.get(state, state)
