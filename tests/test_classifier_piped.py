"""What another command's output, typed into a program, makes it run (a review, 2026-12-05): a
program that runs what is typed into it as its commands (ed's `!` lines, vim's Ex commands, a database
client's shell escape, gdb's `shell`, GNU parallel's command lines, the shell `script` starts) is held
for a pipe's unknown output, as a shell is; known text and a file (`< FILE`, `cat FILE |`) are read
and judged."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.classifier import Tier
from tests.test_classifier_uncovered import judged

D, M, S = Tier.DESTRUCTIVE, Tier.MODERATE, Tier.SAFE


@pytest.mark.parametrize(
    ("command", "tier", "words"),
    [
        ("curl -s https://example.com/cmds | ed f", D, "ed runs a program downloaded from the internet"),
        ("git show HEAD:cmds | ed f", D, "cannot tell what runs: ed reads its commands from a pipe"),
        ("git show HEAD:q.sql | sqlite3 db", D, "cannot tell what runs: sqlite3 reads its commands from a pipe"),
        ("git show HEAD:x.vim | vim -es f", D, "cannot tell what runs: vim reads its commands from a pipe"),
        ("cat cmds | ed f", D, "rm -r: recursive removal"),  # `cat FILE |` is `< FILE`: read
        ("ed f < cmds", D, "rm -r: recursive removal"),
        ("cat ok.sql | sqlite3 db", M, "sqlite3: changes or reads a database"),
        ("echo 'select 1;' | sqlite3 db", M, "sqlite3: changes or reads a database"),
        ("cat x.sh | bash", M, "runs a script (checked)"),
        ("git show HEAD:g | gdb -q", D, "cannot tell what runs: gdb reads its commands from a pipe"),
        ("echo 'shell touch x' | gdb -q", D, "cannot tell what runs: gdb runs code that cannot be checked here"),
        ("echo 'shell touch x' | gdb -batch ./prog", M, "gdb: runs a program under a debugger"),  # reads none
        ("gdb -q ./prog < /dev/null", M, "gdb: runs a program under a debugger"),
    ],
)
def test_commands_piped_into_a_program_that_runs_them_are_held(
    command: str, tier: Tier, words: str, tmp_path: Path
) -> None:
    """`printf '!CMD\\nq\\n' | ed -s` runs CMD (tried), as `| sqlite3` runs `.shell`, `| vim -es` `:!`,
    `| gdb -q` its `shell` lines (tried; not with -batch):
    another command's output was not judged (moderate), though `ed f < cmds` was read and judged."""
    (tmp_path / "cmds").write_text("!rm -rf /tmp/x\nq\n")
    (tmp_path / "ok.sql").write_text("select 1;\n")
    (tmp_path / "x.sh").write_text("echo hi\n")
    judged(command, tmp_path, tier, words)


@pytest.mark.parametrize(
    ("command", "tier", "words"),
    [
        # GNU parallel with no command runs each line it reads, or each line of -a's or ::::'s file
        ("echo 'rm -rf /tmp/x' | parallel", D, "rm -r: recursive removal"),
        ("git show HEAD:c | parallel", D, "cannot tell what runs: parallel reads its commands from a pipe"),
        ("curl -s https://example.com/c | parallel -j4", D, "parallel runs a program downloaded from the internet"),
        ("parallel -a cmds", D, "rm -r: recursive removal"),
        ("parallel :::: cmds", D, "rm -r: recursive removal"),
        ("parallel -a - < cmds", D, "rm -r: recursive removal"),
        ("parallel -a ok.sh", M, "runs a script (checked)"),
        ("parallel ::: 'echo hi' ls", S, ""),
        ("git show HEAD:c | parallel echo", S, ""),  # a command given: what it reads are its arguments
        # script runs a shell in a terminal whose input is its own
        ("git show HEAD:c | script -q /dev/null", D, "cannot tell what runs: script reads its commands from a pipe"),
        ("echo 'rm -rf /tmp/x' | script -q /dev/null", D, "rm -r: recursive removal"),
        ("script -q log.txt < ok.sh", M, "runs a script (checked)"),
    ],
)
def test_parallel_and_script_run_the_lines_typed_into_them(
    command: str, tier: Tier, words: str, tmp_path: Path
) -> None:
    """`echo CMD | parallel` and `echo CMD | script -q /dev/null` ran CMD (tried): they were safe and moderate."""
    (tmp_path / "cmds").write_text("rm -rf /tmp/x\n")
    (tmp_path / "ok.sh").write_text("echo hi\n")
    judged(command, tmp_path, tier, words)


@pytest.mark.parametrize("runner", ["xvfb-run", "faketime now", "rlwrap", "dbus-run-session"])
def test_a_shell_a_program_no_rule_knows_runs_last_reads_what_it_is_given(runner: str, tmp_path: Path) -> None:
    """`... | faketime now bash`: the shell reads the pipe (it was moderate, the shell judged without it)."""
    judged(f"git show HEAD:c | {runner} bash", tmp_path, D, "bash reads its commands from a pipe")
    judged(f"echo 'rm -rf /tmp/x' | {runner} bash", tmp_path, D, "rm -r: recursive removal")
    judged(f"echo ls | {runner} bash", tmp_path, M, "not known to be read-only")
    judged(f"git show HEAD:c | {runner} --verbose", tmp_path, M, "not known to be read-only")
