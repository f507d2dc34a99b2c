"""What a command a person let out of the container (to gain privileges: `sudo`) leaves running ends
with it, on Linux: it runs under a small Perl init that is its processes' subreaper.

Outside a container there is no PID namespace to end. A command's process group and the mark in its
environment (process_marks.py) find what it leaves, but `setsid env -i ...` sheds both: a red team,
2026-12-05, left a job that ran a script rewritten after the person's Allow, outside any container,
and kept running through a pause. A subreaper (prctl PR_SET_CHILD_SUBREAPER) adopts every orphan of
its descendants, however they detach, so the init can end them all when the command ends, and when it
is stopped (its group's SIGTERM: a pause, Stop, the time limit). What another user runs (root's
processes under `sudo`) it cannot end: the kernel refuses. Nor what the command does to the init
itself, which is the user's process as the command is (`kill -9 $PPID`: the person saw that text in
the approval window, or in a script the hold pinned).

Perl, as for the Landlock init (landlock.py): on hand where bwrap is, as fast as bash, and it has
`syscall`. prctl's number differs by machine (PRCTL_CALLS); where it is not known here, or there is no
Perl, the command runs as before, ended by its group and its mark.
"""

from __future__ import annotations

from collections.abc import Sequence

# prctl(2) on each machine (asm/unistd_64.h, asm-generic/unistd.h), as seccomp.MACHINES names them.
PRCTL_CALLS = {"x86_64": 157, "aarch64": 167}

# argv: the prctl number, then the command. A stop (SIGTERM to the group, whose leader this is: the
# command gets 0.3 s of it first) or the command's end: every descendant is killed with its process
# group, the orphans it adopts as their parents die included, until none is left it may signal
# (another user's stay). The command's exit status is passed on, and a signal that ended it ends the
# init too.
SCRIPT = r"""
use strict;
my $prctl = shift @ARGV;
syscall($prctl, 36, 1, 0, 0, 0) == 0 or print STDERR "cowork-reaper: no subreaper ($!)\n";  # PR_SET_CHILD_SUBREAPER
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
sub group_of {
    open(my $fh, '<', "/proc/$_[0]/stat") or return 0;
    my $stat = <$fh> // '';
    return $stat =~ /\)\s+\S+\s+\d+\s+(\d+)/ ? $1 : 0;
}
sub reap_until {  # every adopted process that ended (WNOHANG): whether `$_[0]` was one of them
    my $found = 0;
    while ((my $done = waitpid(-1, 1)) > 0) { $found = 1 if $done == $_[0] }
    return $found;
}
sub end_all {
    my $own = getpgrp();
    for my $round (1 .. 50) {
        reap_until(0);  # a fork chain leaves thousands of ended orphans: listed, they took seconds
        my @left = descendants();
        # their process groups whole, each at once (a fork chain's new process is in its parent's
        # group: a red team's chains outran a kill by pid), then each process
        my %groups = map { (group_of($_) => 1) } @left;
        kill('KILL', map { -$_ } grep { $_ > 1 && $_ != $own } keys %groups);
        last unless @left && kill('KILL', @left);  # none it may signal left (another user's)
        select(undef, undef, undef, 0.01);
    }
}
my ($child, $status);
sub finish {
    end_all();
    my $signal = $status & 127;
    if ($signal) {  # ended by a signal: so is this init, so that its starter reads which
        $SIG{TERM} = $SIG{INT} = $SIG{HUP} = 'DEFAULT';
        kill($signal, $$);
    }
    exit($signal ? 128 + $signal : $status >> 8);
}
$SIG{TERM} = $SIG{INT} = $SIG{HUP} = sub {
    # its group had the same signal: the command's grace first (0.3 s, within the executor's 0.5)
    for (1 .. 30) { last if !kill(0, $child) || reap_until($child); select(undef, undef, undef, 0.01) }
    $status = 15;
    finish();
};
$child = fork();
defined $child or die "cowork-reaper: fork: $!\n";
if ($child == 0) {
    $SIG{TERM} = $SIG{INT} = $SIG{HUP} = 'DEFAULT';
    exec { $ARGV[0] } @ARGV or exit 127;
}
while (1) {
    my $done = waitpid(-1, 0);
    if ($done < 0) { $status = 0; last }
    if ($done == $child) { $status = $?; last }
}
finish();
"""


def wrap(argv: Sequence[str], machine: str, perl: str | None) -> list[str]:
    """`argv` under the reaping init, or as it is where none can run (no Perl, prctl's number not
    known for `machine`)."""
    call = PRCTL_CALLS.get(machine)
    if perl is None or call is None:
        return list(argv)
    return [perl, "-e", SCRIPT, str(call), *argv]
