"""What a command a person let out of the container (to gain privileges: `sudo`) leaves running ends
with it, on Linux: it runs under a small Perl init that is its processes' subreaper.

Outside a container there is no PID namespace to end. A command's process group and the mark in its
environment (process_marks.py) find what it leaves, but `setsid env -i ...` sheds both: a red team,
2026-12-05, left a job that ran a script rewritten after the person's Allow, outside any container,
and kept running through a pause. A subreaper (prctl PR_SET_CHILD_SUBREAPER) adopts every orphan of
its descendants, however they detach, so the init can end them all when the command ends, and when it
is stopped (its group's SIGTERM: a pause, Stop, the time limit). What another user runs (root's
processes under `sudo`) it cannot end: the kernel refuses, and the init gives up on them after a few
rounds rather than wait.

Perl, as for the Landlock init (landlock.py): on hand where bwrap is, as fast as bash, and it has
`syscall`. prctl's number differs by machine (MACHINES); where it is not known here, or there is no
Perl, the command runs as before, ended by its group and its mark.
"""

from __future__ import annotations

from collections.abc import Sequence

# prctl(2) on each machine (asm/unistd_64.h, asm-generic/unistd.h), as seccomp.MACHINES names them.
PRCTL_CALLS = {"x86_64": 157, "aarch64": 167}
PR_SET_CHILD_SUBREAPER = 36

# argv: the prctl number, then the command. A stop (SIGTERM to the group, whose leader this is) or the
# command's end: every descendant is killed, the orphans it adopts as their parents die included, in
# at most 50 rounds (a process of another user stays). The command's exit status is passed on.
SCRIPT = r"""
use strict;
my $prctl = shift @ARGV;
syscall($prctl, 36, 1, 0, 0, 0) == 0 or print STDERR "cowork-reaper: no subreaper ($!)\n";
sub descendants {
    my @found;
    my @todo = ($$);
    while (defined(my $pid = shift @todo)) {
        opendir(my $tasks, "/proc/$pid/task") or next;
        for my $task (grep { /^\d+$/ } readdir($tasks)) {
            open(my $fh, '<', "/proc/$pid/task/$task/children") or next;
            my @kids = split(' ', scalar(<$fh>) // '');
            push @found, @kids;
            push @todo, @kids;
        }
    }
    return @found;
}
sub end_all {
    for my $round (1 .. 50) {
        my @left = descendants();
        last unless @left;
        kill('KILL', @left);
        1 while waitpid(-1, 1) > 0;  # WNOHANG: the adopted ones are ours to reap
        select(undef, undef, undef, 0.01);
    }
}
$SIG{TERM} = $SIG{INT} = $SIG{HUP} = sub { end_all(); exit 143 };
my $child = fork();
defined $child or die "cowork-reaper: fork: $!\n";
if ($child == 0) {
    $SIG{TERM} = $SIG{INT} = $SIG{HUP} = 'DEFAULT';
    exec { $ARGV[0] } @ARGV or exit 127;
}
my $status;
while (1) {
    my $done = waitpid(-1, 0);
    last if $done < 0;
    if ($done == $child) { $status = $?; last }
}
end_all();
exit(($status & 127) ? 128 + ($status & 127) : $status >> 8);
"""


def wrap(argv: Sequence[str], machine: str, perl: str | None) -> list[str]:
    """`argv` under the reaping init, or as it is where none can run (no Perl, prctl's number not
    known for `machine`)."""
    call = PRCTL_CALLS.get(machine)
    if perl is None or call is None:
        return list(argv)
    return [perl, "-e", SCRIPT, str(call), *argv]
