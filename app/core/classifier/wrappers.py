"""Wrappers: commands that run another command after some options (env, nohup, xargs, sudo, ssh...)."""

from __future__ import annotations

import os
import posixpath
import re
import stat
import sys
from collections.abc import Mapping

from app.core.i18n import N_

from .code_options import code_file, option_values, ssh_config, ssh_setting
from .findings import BULK_COMMAND, GAINS_PRIVILEGES, LOADS_LIBRARY, XARGS_READS, D, M, _snip
from .handoff import hands_off
from .hosts import (
    aliased_here,
    command_reaches_here,
    host_name_here,
    local_host,
    names_this_machine,
    read_ssh_file,
    remote_here,
    remote_host,
    shared_control_path,
    ssh_line,
    ssh_urls,
    ssh_values,
    this_machine,
    word_names_this_machine,
)
from .options import (
    ONE_NUMBER,
    _command_name,
    _long_flags,
    _operands,
    _short_flags,
    _split_options,
    fills_code,
    getopt,
    long_option,
)
from .rule import Analysis, Rule
from .scripts import installed_program, run_script, script_path, settings_text
from .shells import foreign_library, move_to, stdin_code, variable_set
from .stdin import _STDIN_FILES, _Stdin
from .tables import TOOL_VARIABLES, _names
from .words import _Word, _word_end


def wrapper(ctx: Analysis, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int,
            with_value: frozenset[str] = frozenset(), skip: int = 0) -> None:  # fmt: skip
    _, i = _split_options(args, with_value)
    ctx.inner(args[i + skip :], stdin, bulk, depth)


def cmd_nohup(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    wrapper(ctx, args, stdin, bulk, depth)


def cmd_exec(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    given, i, _unknown = getopt(args, "a", {})  # `exec $OPTS ...`: what runs cannot be told (wrapper)
    if "c" in given and args[i:]:  # `exec -c git status`: without the read-only tool's variables
        ctx.add(M, "exec -c: changes how the command after it runs")
    wrapper(ctx, args, stdin, bulk, depth, frozenset({"-a"}))


def cmd_command(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    options, _ = _split_options(args)
    if {"v", "V"} & _short_flags(options):
        return  # `command -v x` only looks x up
    wrapper(ctx, args, stdin, bulk, depth)


def cmd_time(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    options = frozenset({"-f", "--format", "-o", "--output"})
    own = args[: next((i for i, a in enumerate(args) if not (a.value or "-").startswith("-") and (
        i == 0 or args[i - 1].value not in options)), len(args))]  # fmt: skip
    for _option, output in option_values(own, ["-o", "--output"], "fo"):  # GNU time's report, appended with -a
        ctx.add(M, "writes to {source}", source=_snip(output.value or output.source))
        ctx.note_written(output, writes=True)
    wrapper(ctx, args, stdin, bulk, depth, options)


def cmd_nice(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    wrapper(ctx, args, stdin, bulk, depth, frozenset({"-n", "--adjustment"}))


# Programs that run a command with a scheduling of its own, or change another process's (`-p PID`):
# ionice's `-c`/`-n` with `-p`, `-P` or `-u` changed the I/O class of a host process (red team,
# 2026-12-05); chrt's and taskset's `-p` with two operands (a priority or a mask, then the process)
# change it, with one they only show it. Their getopt letters that take a value, and long options.
_IONICE_LONG = {"classdata": "n", "class": "c", "help": "h", "ignore": "t", "pid": "p", "pgid": "P", "uid": "u",
                "version": "V"}  # fmt: skip
_CHRT_LONG = {"all-tasks": "a", "batch": "b", "deadline": "d", "ext": "e", "fifo": "f", "idle": "i", "pid": "p",
              "help": "h", "max": "m", "other": "o", "rr": "r", "sched-runtime": "T", "sched-period": "P",
              "sched-deadline": "D", "reset-on-fork": "R", "verbose": "v", "version": "V"}  # fmt: skip
_TASKSET_LONG = {"all-tasks": "a", "pid": "p", "cpu-list": "c", "help": "h", "version": "V"}


def cmd_ionice(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    given, _i, unknown = getopt(args, "ncpPu", _IONICE_LONG)
    if {"p", "P", "u"} & given:  # `ionice [-c CLASS] -p PID...`: processes named, no command
        if {"c", "n"} & given or unknown:
            ctx.add(M, "{name}: changes how other processes are scheduled", name=name)
        return
    values = frozenset({"-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"})
    wrapper(ctx, args, stdin, bulk, depth, values)


def cmd_timeout(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    values = frozenset({"-s", "--signal", "-k", "--kill-after"})
    wrapper(ctx, args, stdin, bulk, depth, values, skip=1)


def cmd_taskset(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """taskset and chrt: `-p [SETTING] PID` shows (one operand) or changes (two) a process's; without
    `-p`, a mask or priority and the command run with it."""
    chrt = name == "chrt"
    given, i, unknown = getopt(args, "DPT" if chrt else "", _CHRT_LONG if chrt else _TASKSET_LONG)
    if "p" in given or unknown:
        operands = args[i:]
        if unknown or len(operands) != 1 or not (operands[0].value or ONE_NUMBER.fullmatch(operands[0].source)):
            ctx.add(M, "{name}: changes how other processes are scheduled", name=name)
        if "p" in given:
            return
    wrapper(ctx, args, stdin, bulk, depth, frozenset({"-D", "-P", "-T"}) if chrt else frozenset(), skip=1)


# Programs that run a command in a changed setting (namespaces, limits, CPUs, a debugger), and their
# options that take the next word: judged moderate themselves, and the command they run is judged
# too (review, 2026-12-04: `unshare rm -rf ~/Documents` ran unheld, `rm` never looked at). The
# number: words before the options (setarch's architecture).
RUNNERS: dict[str, tuple[frozenset[str], int]] = {
    "unshare": (frozenset({"-S", "--setuid", "-G", "--setgid", "-R", "--root", "-w", "--wd", "--map-user",
                           "--map-group", "--map-users", "--map-groups", "--propagation", "--monotonic",
                           "--boottime"}), 0),
    "nsenter": (frozenset({"-t", "--target", "-S", "--setuid", "-G", "--setgid"}), 0),
    "setpriv": (frozenset(), 0),  # its options are --name=value
    "prlimit": (frozenset({"-p", "--pid"}), 0),
    "setarch": (frozenset(), 1),  # the architecture comes first
    "numactl": (frozenset({"-C", "--physcpubind", "-m", "--membind", "-N", "--cpunodebind", "-i", "--interleave",
                           "-p", "--preferred", "-P", "--preferred-many", "-w", "--weighted-interleave"}), 0),
    "eatmydata": (frozenset(), 0),
    "firejail": (frozenset(), 0),  # its options are --name=value
    "cgexec": (frozenset({"-g"}), 0),
    "valgrind": (frozenset(), 0),  # its options are --name=value
}  # fmt: skip


def cmd_runner(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """One of RUNNERS: itself moderate, and the command it runs judged as if run alone."""
    ctx.add(M, "{name}: runs a program in a changed setting", name=name)
    values, lead = RUNNERS[name]
    wrapper(ctx, args[lead:], stdin, bulk, depth, values)


# The dynamic loader run as a program (`/lib64/ld-linux-x86-64.so.2 ./a.out`, `ld.so`, musl's): its
# options, and those whose value is the next word; the first other word is the program it runs
LOADER = re.compile(r"^ld(?:64)?(?:-(?:linux|musl)[\w.-]*?)?\.so(?:\.\d+)*$")
_LOADER_VALUES = frozenset({"--library-path", "--inhibit-rpath", "--audit", "--preload", "--argv0",
                            "--glibc-hwcaps-prefix", "--glibc-hwcaps-mask"})  # fmt: skip
_LOADER_FLAGS = frozenset(
    {"--list", "--verify", "--inhibit-cache", "--list-tunables", "--list-diagnostics", "--help", "--version"}
)


def cmd_loader(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """The loader runs the file it is given (a red team, 2026-12-05: `ld-linux-x86-64.so.2 ./a.out` ran
    a.out, judged moderate, where `./a.out` is held): judged as that file run alone, a bare name as one
    in the folder (the loader does not look on PATH); `--preload`/`--audit` as LD_PRELOAD/LD_AUDIT are."""
    ctx.add(M, "{name}: runs a program in a changed setting", name=name)
    i = 0
    while i < len(args) and args[i].value in _LOADER_VALUES | _LOADER_FLAGS:
        option = args[i].value or ""
        if option in _LOADER_VALUES and i + 1 < len(args):
            value = args[i + 1]
            if option in ("--preload", "--audit") and foreign_library(ctx, value):
                ctx.add(D, LOADS_LIBRARY, name=f"{name} {option}", value=_snip(value.literal or value.source))
            elif option == "--library-path":
                variable_set(ctx, "LD_LIBRARY_PATH", value, lasting=False)
            i += 1
        i += 1
    if i >= len(args):
        return
    program = args[i]
    if program.value is not None and "/" not in program.value:  # `ld.so a.out`: ./a.out
        program = _Word(f"./{program.value}", f"./{program.source}", f"./{program.pattern}", program.glob)
    ctx.inner([program, *args[i + 1 :]], stdin, bulk, depth)


def cmd_stdbuf(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    values = frozenset({"-i", "-o", "-e", "--input", "--output", "--error"})
    wrapper(ctx, args, stdin, bulk, depth, values)


def cmd_caffeinate(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    wrapper(ctx, args, stdin, bulk, depth, frozenset({"-t", "-w"}))


# GNU env's long options (getopt_long takes any unambiguous prefix: `--ch=DIR`, `--sp='...'`), and
# the short option each value-taking one is; None: it takes no value of its own.
_ENV_LONG = {
    "ignore-environment": None, "null": None, "unset": "u", "chdir": "C", "split-string": "S",
    "block-signal": None, "default-signal": None, "ignore-signal": None, "list-signal-handling": None,
    "debug": None, "help": None, "version": None, "argv0": "a",
}  # fmt: skip
_ENV_SHORT = re.compile(r"^-[^-]*?([uCSaP])(.*)$", re.S)  # -u NAME, -C DIR, -S TEXT, -a NAME, -P PATH (BSD)


def cmd_env(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    i = 0
    chdir: _Word | None = None  # env -C DIR: the command runs there (red team: `env -C ~/.local rm -rf bin`)
    options = True  # until `--`; NAME=VALUE words are read after it too, and any word with `=` is one
    cleared = False  # env -i: none of the read-only tool's variables (tables.TOOL_VARIABLES) either
    while i < len(args):
        v = args[i].value
        if v is None and options and args[i].pattern.startswith("-"):  # `--chdir=$HOME`: by its pattern
            v = args[i].pattern
        if v is None:
            break
        if v == "--" and options:
            options = False
            i += 1
            continue
        letter, attached = None, None  # the option taking a value, and that value when in this word
        if not options or not v.startswith("-"):
            if "=" not in v:
                break  # the command
        elif v.startswith("--"):
            _option, equals, value = v[2:].partition("=")
            known = long_option(v, _ENV_LONG)
            if known is None:  # env refuses it, or a newer env knows it: what runs cannot be told
                ctx.add(D, "cannot tell what runs: env {option}", option=_snip(v))
                return
            letter = _ENV_LONG[known]
            attached = _word_end(args[i], len(value)) if equals and letter else None
            cleared = cleared or known == "ignore-environment"
        elif short := _ENV_SHORT.match(v):
            letter = short[1]
            attached = _word_end(args[i], len(short[2])) if short[2] else None
        if options and v.startswith("-") and not v.startswith("--"):  # `-i`, `-`, `-iu NAME`: an empty environment
            cleared = cleared or v == "-" or "i" in re.match(r"-[^uCSaP]*", v)[0]  # type: ignore[index]
        if letter is None:  # -i, -0, -v, a flag; NAME=VALUE
            name_part, equals, _value = v.partition("=")
            if equals:
                variable_set(ctx, name_part, _word_end(args[i], len(v) - len(name_part) - 1), lasting=False)
            i += 1
            continue
        value_word = attached or (args[i + 1] if i + 1 < len(args) else None)
        i += 1 if attached else 2
        if letter in "aP" or (letter == "S" and not _plain_split_string(value_word)):
            # -a names what the program is told it is (busybox runs that applet); BSD's -P is where
            # the program is looked for; -S text env reads by rules of its own: `-S'-i'` and
            # `-S' '` ran the words after them (review, 2026-12-04).
            ctx.add(D, "cannot tell what runs: env {option}", option=_snip(v))
            return
        if letter == "S" and value_word is not None:  # env splits the text at blanks, newlines too, into
            # words (no shell: `;` is a letter), and adds the words after it (a fuzzer against bash,
            # 2026-12-05: `env -S'find x;y -delete'` deleted, read as two commands)
            split = [_Word(w, w, w) for w in (value_word.literal or "").split()]
            inner_in(ctx, chdir, [*split, *args[i:]], stdin, bulk, depth)
            return
        if letter == "C":
            chdir = value_word
        if letter == "u" and (value_word is None or value_word.value is None or value_word.value in TOOL_VARIABLES):
            named = value_word.value or value_word.source if value_word else "-u"
            ctx.add(M, "unsets {value}: changes how the command after it runs", value=_snip(named))
    if cleared and args[i:]:
        ctx.add(M, "env -i: changes how the command after it runs")
    inner_in(ctx, chdir, args[i:], stdin, bulk, depth)


def inner_in(ctx: Analysis, folder: _Word | None, args: list[_Word], stdin: _Stdin | None, bulk: bool,
             depth: int) -> None:  # fmt: skip
    """The command a wrapper runs in another folder (`env -C DIR`, `sudo -D DIR`): its relative
    paths lead there, and what it deletes is said there."""
    if folder is None:
        ctx.inner(args, stdin, bulk, depth)
        return
    here, ctx.cwd = ctx.cwd, move_to(ctx, folder, "")  # a place its git may read settings in too
    try:
        ctx.inner(args, stdin, bulk, depth)
    finally:
        ctx.cwd = here


def _plain_split_string(word: _Word | None) -> bool:
    """Whether env -S text splits into words as the shell would split it: no option of env's own
    first, nothing blank, none of the escapes, comments or variables env reads by its own rules."""
    text = "" if word is None else word.literal or ""
    return bool(text.strip()) and not text.lstrip().startswith("-") and not re.search(r"[\\#$]", text)


def cmd_xargs(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    values = frozenset({"-a", "--arg-file", "-d", "--delimiter", "-E", "-I", "-L", "--max-lines", "-n",
                        "--max-args", "-P", "--max-procs", "-s", "--max-chars", "--process-slot-var"})  # fmt: skip
    options, i = _split_options(args, values)
    replace = [v or "{}" for v in _replace_strings(options)]  # -I{} / -i: each word read goes where it is
    program = _command_name(args[i].value or "") if i < len(args) else ""
    into_text = any(r in (w.value or "") for w in program_text(program, args[i + 1 :]) for r in replace)
    if (replace and (fills_code(args[i:], replace) or into_text)) or (bulk and not args[i:]):
        ctx.add(D, BULK_COMMAND)  # `xargs -I{} sh -c '{}'`; `xargs xargs`: the words read are the command
    if args[i:]:  # the words it reads come after the program's own (`echo clean -fdx | xargs git`)
        read = [] if replace else [_Word(None, XARGS_READS, "*")]
        ctx.argv([*args[i:], *read], None, bulk=True, depth=depth + 1)


def program_text(program: str, args: list[_Word]) -> list[_Word]:
    """The words that are `program`'s own program text (what xargs -I puts there is code): sed's and
    awk's script (its -e, else its first operand), sqlite3's statements (after the database),
    psql's -c and mysql's -e; not a file or a database they are given (final review, 2026-12-04)."""
    expressions = {"sed": ["-e", "--expression"], "gsed": ["-e", "--expression"], "psql": ["-c", "--command"],
                   "mysql": ["-e", "--execute"]}  # fmt: skip
    expression = expressions.get(program, ["-e", "--source"] if program in _AWKS else [])
    given = [w for _option, w in option_values(args, expression, "efClLvFEWdDhpU")]
    operands = [a for a in args if not (a.value or "-").startswith("-")]
    if given or program in ("psql", "mysql"):
        return given
    if program in ("sed", "gsed") or program in _AWKS:
        return operands[:1]
    return operands[1:] if program in ("sqlite3", "duckdb") else []


_AWKS = frozenset({"awk", "gawk", "mawk", "nawk"})


def _replace_strings(options: list[_Word]) -> list[str | None]:
    """xargs's replace strings: `-I R`, `-IR`, `-i[R]`, `--replace[=R]` (None: the default `{}`)."""
    found: list[str | None] = []
    for j, o in enumerate(options):
        v = o.value or ""
        if v == "-I" and j + 1 < len(options):
            found.append(options[j + 1].value)
        elif v.startswith("-I") or v.startswith("-i"):
            found.append(v[2:] or None)
        elif v.startswith("--replace"):
            found.append(v.partition("=")[2] or None)
    return found


# GNU parallel's options that take the next word (not those with an optional value: -i, -e, -l)
_PARALLEL_VALUES = _names(
    "-a --arg-file --arg-file-sep --arg-sep -C --colsep -d --delimiter -E -I --replace --extensionreplace --er "
    "--basenamereplace --bnr --dirnamereplace --dnr --basenameextensionreplace --bner --seqreplace -j -P --jobs "
    "--max-procs -J --profile -n --max-args -N --max-replace-args -L --max-lines -s --max-chars -S --sshlogin "
    "--slf --sshloginfile --sshdelay --ssh --basefile --bf --return --transferfile --tf --workdir --wd --tmpdir "
    "--tempdir --results --res --joblog --resume-failed-joblog --timeout --delay --retries --load --memfree "
    "--memsuspend --nice --halt --halt-on-error --tag-string --tagstring --env --block --block-size --recstart "
    "--recend --regexp --header --limit --termseq --trim --compress-program --decompress-program --rpl --parens "
    "--semaphorename --id --semaphoretimeout --st --sqlmaster --sqlandworker --sqlworker --template --tmux-length "
    "--shard --bin --group-by --match --ctag-string --plus-string --filter --hostgroups --hgrp"
)


def cmd_parallel(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    cut = next((i for i, a in enumerate(args) if a.value in (":::", "::::", ":::+")), len(args))
    options, i = _split_options(args[:cut], _PARALLEL_VALUES)
    _ssh_logins(ctx, name, options)  # its own options: `parallel rg -S localhost ::: x` logs in nowhere
    if i >= cut:  # no command: each argument is one (`parallel ::: 'rm -rf DIR'`, red team)
        files = [w for _option, w in option_values(options, ["-a", "--arg-file"])]
        mode = ""
        for a in args[cut:]:
            if a.value in (":::", "::::", ":::+"):
                mode = a.value
            elif mode == "::::":  # `:::: FILE`: its lines are
                files.append(a)
            else:
                ctx.code_words([a], "parallel")
        for file in files:  # each line a command, as a script's (a review, 2026-12-05: `parallel -a f` was safe)
            if file.value in _STDIN_FILES:
                stdin_code(ctx, name, stdin, shell=True)
            else:
                run_script(ctx, name, file, "shell")
        if cut == len(args) and not files and stdin is not None:  # so is each line it reads
            stdin_code(ctx, name, stdin, shell=True)  # (`echo 'rm -rf ~' | parallel` was safe)
        return
    ctx.code_words(args[i:cut], "parallel")


def cmd_watch(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    options, i = _split_options(args, frozenset({"-n", "--interval", "-q", "--equexit"}))
    if bulk and not args[i:]:  # `... | xargs watch`: the words read are the command
        ctx.add(D, BULK_COMMAND)
    elif "x" in _short_flags(options) or "--exec" in _long_flags(options):
        ctx.inner(args[i:], None, bulk, depth)
    else:
        ctx.code_words(args[i:], "watch")


def cmd_flock(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`flock FILE COMMAND` opens FILE with O_CREAT (red team, 2026-12-05: `flock made true` made it)
    and locks it for as long as COMMAND runs; `flock FD` locks what the shell opened (one operand: a
    descriptor's number, unless an expansion splits into more)."""
    values = frozenset({"-w", "--timeout", "--wait", "-E", "--conflict-exit-code"})
    _, i = _split_options(args, values)
    rest = args[i + 1 :]
    if i < len(args) and (rest or args[i].value is None):
        ctx.add(M, "flock {source}: makes the file if it is missing, and locks it", source=_snip(args[i].source))
        ctx.note_written(args[i], writes=True)
    if rest and rest[0].value in ("-c", "--command"):
        ctx.code_words(rest[1:2], "flock -c")
    else:
        ctx.inner(rest, stdin, bulk, depth)


def cmd_busybox(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    ctx.inner(args, stdin, bulk, depth)


def cmd_chroot(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    ctx.add(D, "chroot: runs as root in another root folder")
    _, i = _split_options(args, frozenset({"--userspec", "--groups"}))
    ctx.inner(args[i + 1 :], stdin, bulk, depth)


def privileged(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    other = name == "su" or any(a.value in ("-u", "--user") or (a.value or "").startswith("--user=") for a in args)
    ctx.add(
        D, "{name}: runs as another user", None if other else N_("Runs as administrator"), GAINS_PRIVILEGES, name=name
    )
    if name == "su":
        for i, a in enumerate(args):
            if a.value in ("-c", "--command") and i + 1 < len(args):
                ctx.code_words([args[i + 1]], "su -c")
            elif a.value is not None and a.value.startswith("--command="):
                ctx.code_words([a], "su -c", strip_prefix="--command=")
        return
    values = frozenset({"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-T", "-U", "--user", "--group",
                        "--host", "--prompt", "--chdir", "--role", "--type", "--other-user",
                        "--close-from", "--command-timeout", "--setenv", "--property", "--machine"})  # fmt: skip
    options, i = _split_options(args, values)
    inner_in(ctx, _chdir_of(options), args[i:], stdin, bulk, depth)


def _chdir_of(options: list[_Word]) -> _Word | None:
    """The folder `sudo -D DIR` or `run0 --chdir=DIR` runs its command in (the last one given)."""
    given = option_values(options, ["-D", "--chdir"])
    return given[-1][1] if given else None


_SSH_VALUES = _names("-b -c -D -E -e -F -I -i -J -L -l -m -O -o -p -Q -R -S -W -w -B")
_SSH_TAKES = "BbcDEeFIiJLlmOoPpQRSWw"  # the letters of ssh's options that take a value


def cmd_ssh(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """OpenSSH 9.4's `-P TAG` takes a value, an older ssh's `-P` none (9.2 here), so a line with -P
    is judged as each reads it: `ssh -P x localhost CMD` reaches this machine with a newer ssh."""
    if _ssh_as(ctx, name, args, depth, _SSH_VALUES):
        _ssh_as(ctx, name, args, depth, _SSH_VALUES | {"-P"})


def _ssh_as(ctx: Analysis, name: str, args: list[_Word], depth: int, values: frozenset[str]) -> bool:
    """Judges ssh's words split by `values`; True when a `-P` was read as taking none."""
    options, i = _split_options(args, values, clusters=True)
    remote: list[_Word] = []
    if i < len(args):  # ssh reads options after the host too, up to its command (`ssh h -o HostName=x id`)
        more, j = _split_options(args[i + 1 :], values, clusters=True)
        options, remote = options + more, args[i + 1 + j :]
    settings: list[str] = []
    if any(o.value is None for o in options):  # `ssh $OPTS host`: a -o among them, maybe
        ctx.add(D, "cannot tell what runs: {name} -o from an expansion", name=name)
    for _option, given in option_values(options, ["-o"], _SSH_TAKES):  # ProxyCommand, LocalCommand run here
        setting = given.literal
        if setting is None:
            ctx.add(D, "cannot tell what runs: {name} -o from an expansion", name=name)
        elif setting:
            settings.append(setting)
            ssh_setting(ctx, name, "-o", setting)
    files = [f for _o, f in option_values(options, ["-F"], _SSH_TAKES) if f.value != "none"]
    for file in files:  # `ssh -F FILE`: the same, in a file
        code_file(ctx, name, f"{name} -F", file, ssh_config)
    host = args[i] if i < len(args) else None
    named = _reached_here(ctx, settings, host, options)
    if "G" in _short_flags(options):  # `ssh -G host`: prints its settings, connects nowhere
        pass
    elif named is not None:  # `-o HostName=localhost`: the machine reached, whatever host is given
        hands_off(ctx, f"{name} {_snip(named)}")
    elif any((ssh_line(s) or ("",))[0] == "hostname" for s in settings):  # `-o HostName=x.example`: no alias
        ctx.add(M, "{name}: runs on another machine", name=name)
    elif (aliased := _aliased_in(ctx, files, host)) is not None:  # `Host build` / `HostName localhost` in it
        hands_off(ctx, f"{name} -F {_snip(aliased.value or aliased.source)}")  # (host-less: another client's)
    elif i < len(args) and (local_host(args[i]) or args[i].value is None):
        hands_off(ctx, f"{name} {_snip(args[i].source)}")  # this machine (or maybe), outside the command's reach
    else:
        ctx.add(M, "{name}: runs on another machine", name=name)
    if remote:
        ctx.code_words(remote, "ssh")
    return "-P" not in values and "P" in _short_flags(options)


# ---- ssh to this same machine through other programs (issue 21)
#
# On this machine, the ssh server starts what the client asks for (scp's or rsync's server,
# sftp-server, git-upload-pack or what --upload-pack names, mosh-server, a shell) outside the
# command's container: held as `ssh localhost` is. To another machine, as before. Which host is
# this machine, and where a word names one: hosts.py.


def hands_off_remote(
    ctx: Analysis, name: str, words: list[_Word], *, daemon: bool = False, urls_only: bool = False
) -> bool:
    """Holds the command when one of `words` is an ssh remote on this machine (see `hosts.remote_host`)."""
    here = remote_here(words, daemon=daemon, urls_only=urls_only)
    if here is not None:
        hands_off(ctx, f"{name} {_snip(here.source)}")
    return here is not None


def _given(words: list[_Word], names: tuple[str, ...]) -> list[_Word]:
    """The values of the options `names`, each as written (`-H X`, `-HX`, `--host X`, `--host=X`):
    not by a prefix, since `--host` is not `--hosts` here."""
    found: list[_Word] = []
    for k, w in enumerate(words):
        v = w.value if w.value is not None else w.pattern
        for option in names:
            joined = option + "=" if option.startswith("--") else option
            if v == option and k + 1 < len(words):
                found.append(words[k + 1])
            elif v.startswith(joined) and v != option:
                found.append(_word_end(w, len(v) - len(joined)))
    return found


MAX_HOSTS_FILE = 64 * 1024  # a longer file of hosts is not read: which machines cannot be told


def _hosts_file(ctx: Analysis, word: _Word) -> list[str] | None:
    """The lines of a file of hosts (pssh -h, parallel --slf), without comments; None when it cannot be
    read here, or when this command line writes it first (`echo localhost > h; pssh -h h`)."""
    if word.value is None or (ctx.cwd is None and not word.value.startswith("/")):
        return None
    path = posixpath.normpath(posixpath.join(ctx.cwd or "/", word.value))
    text = None if ctx.written_here(path) else settings_text(ctx, path, MAX_HOSTS_FILE)
    if text is None:  # a FIFO, /dev/stdin, a file too long: not read (a review, 2026-12-05)
        return None
    lines = [line.strip() for line in text.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


_SCP_VALUES = _names("-c -D -F -i -J -l -o -P -S -X")
_SSHFS_VALUES = _names("-o -p -F")
_SFTP_VALUES = _names("-B -b -c -D -F -i -J -l -o -P -R -S -s -X")
_MOSH_VALUES = _names("--client --server --predict --family -p --port --bind-server --ssh --experimental-remote-ip")


def _aliased_in(ctx: Analysis, files: list[_Word], host: _Word | None) -> _Word | None:
    """The first of ssh's `-F` files whose settings may make `host` (None: the one another client
    adds, `rsync -e 'ssh -F cfg'`) this machine (the default files: `hosts.is_this_machine`). One
    that cannot be read is held by `code_file` already."""
    if host is not None and host.value is None:
        return None  # an expansion: held as such
    for file in files:
        value = file.value or ""
        path = script_path(ctx.cwd, ctx.home + value[1:] if value.startswith("~/") else value)
        text = None if path is None else read_ssh_file(path)
        if text is not None and aliased_here(None if host is None else host.value, text):
            return file
    return None


def _reached_here(ctx: Analysis, settings: list[str], host: _Word | None, options: list[_Word]) -> str | None:
    """What among ssh's `-o` settings (or sshfs's, passed on) and `-S` makes the machine reached
    this one: `HostName=localhost` (whatever host is given, `%h` read as ssh does), a ProxyCommand
    whose connection goes to it (`nc 127.0.0.1 22`), a master connection's socket that is not the
    host's own (`-S ~/.ssh/cm-localhost`: any host then reuses that one; a path with `%h` or `%C`
    is each host's)."""
    given = None if host is None else host.value or "*"
    for setting in settings:
        key, rest = ssh_line(setting) or ("", "")
        if key == "hostname" and host_name_here(rest, given):
            return f"-o {setting}"
        if key == "proxycommand" and command_reaches_here(rest, given):
            return f"-o {setting}"
        if key == "controlpath" and _shared_setting(rest):
            return f"-o {setting}"
    sockets = [w for _option, w in option_values(options, ["-S"], _SSH_TAKES)]
    return next((f"-S {w.source}" for w in sockets if w.value is None or shared_control_path(w.value)), None)


def _shared_setting(rest: str) -> bool:
    """`-o ControlPath=...`'s value, read as ssh reads it, is a path any host's connection reuses."""
    try:
        values = ssh_values(rest)
    except ValueError:  # ssh refuses it: the safe side
        return True
    return bool(values) and shared_control_path(values[0])


def cmd_scp(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """scp and sshfs: ssh starts scp's or sftp's server on the machine of a `host:path` (or of an
    `-o HostName=`); sshfs's `-o ssh_command=CMD` runs CMD here, as ssh."""
    given = [w.literal or "" for _option, w in option_values(args, ["-o"], "cDFiJlPSXop")]
    settings = [part for text in given for part in text.split(",")] if name == "sshfs" else given
    for text in given if name == "sshfs" else []:
        command = re.search(r"(?:^|,)ssh_command=(.*)", text)
        if command is not None:
            ctx.sub_script(command[1], f"{name} -o ssh_command")
    _ssh_options(ctx, name, args, "cDFiJlPSXop", settings)
    for option, program in option_values(args, ["-S"], "cDFiJlPSXop") if name == "scp" else ():
        _ssh_program(ctx, name, option, program)
    operands = _operands(args, _SSHFS_VALUES if name == "sshfs" else _SCP_VALUES)
    files = [f for _o, f in option_values(args, ["-F"], "cDFiJlPSXop") if f.value != "none"]
    hosts = [_Word(h, h, h) for w in operands if (h := remote_host(w)) is not None]
    named = _reached_here(ctx, settings, hosts[0] if hosts else None, [])
    aliased = next((f for h in hosts if (f := _aliased_in(ctx, files, h)) is not None), None)
    if named is not None:
        hands_off(ctx, f"{name} {_snip(named)}")
    elif aliased is not None:
        hands_off(ctx, f"{name} -F {_snip(aliased.value or aliased.source)}")
    else:
        hands_off_remote(ctx, name, operands)
    ctx.as_unknown_program(name, args, depth)


def _ssh_options(
    ctx: Analysis, name: str, options: list[_Word], letters: str, settings: list[str] | None = None
) -> None:
    """The `-o` settings scp, sftp and sshfs pass on to ssh, read as cmd_ssh reads its own: glued to
    `-o` or in a cluster too (`scp -qoProxyCommand='rm -rf DIR' h:a b` ran rm, judged moderate: a red
    team, 2026-12-05). `settings`: what they are once the program has split them (sshfs's commas)."""
    given = option_values(options, ["-o"], letters)
    if any(w.literal is None for _option, w in given):
        ctx.add(D, "cannot tell what runs: {name} -o from an expansion", name=name)
    for setting in [w.literal or "" for _option, w in given] if settings is None else settings:
        if setting:
            ssh_setting(ctx, name, "-o", setting)


def _ssh_program(ctx: Analysis, name: str, option: str, word: _Word) -> None:
    """`scp -S PROGRAM`, `sftp -S PROGRAM`, `sftp -D PROGRAM`: a program run here in ssh's place (each
    ran the agent's ./x.sh, judged moderate: 2026-12-05), judged by what it holds, as `./x.sh` is; a
    program by name is found on the PATH, one by path in a system folder is installed software."""
    value = word.value
    if value is not None and "/" not in value:
        return
    path = None if value is None else script_path(ctx.cwd, value)
    if path is None or not installed_program(path):
        run_script(ctx, f"{name} {option}", word, "exec")


def cmd_sftp(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`sftp [user@]host[:path]`: ssh starts sftp-server there (`-D PROGRAM` is a server run here instead)."""
    options, i = _split_options(args, _SFTP_VALUES, clusters=True)
    _ssh_options(ctx, name, options, "BbcDFiJloPRSsX")
    for option, program in option_values(options, ["-S", "-D"], "BbcDFiJloPRSsX"):
        _ssh_program(ctx, name, option, program)
    files = [f for _o, f in option_values(options, ["-F"], "BbcDFiJloPRSsX") if f.value != "none"]
    if i < len(args) and not option_values(options, ["-D"], "BbcDFiJloPRSsX") and word_names_this_machine(args[i]):
        hands_off(ctx, f"{name} {_snip(args[i].source)}")
    elif i < len(args) and (aliased := _aliased_in(ctx, files, args[i])) is not None:
        hands_off(ctx, f"{name} -F {_snip(aliased.value or aliased.source)}")
    ctx.as_unknown_program(name, args, depth)


def cmd_mosh(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """mosh starts mosh-server through ssh (with `--local`, here: its own child)."""
    options, i = _split_options(args, _MOSH_VALUES)
    if i < len(args) and "--local" not in _long_flags(options) and word_names_this_machine(args[i]):
        hands_off(ctx, f"{name} {_snip(args[i].source)}")
    ctx.as_unknown_program(name, args, depth)


def cmd_autossh(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """autossh runs ssh with the same words, less its own `-M PORT`: judged as that ssh (`-M 0` is no host)."""
    options, i = _split_options(args, _SSH_VALUES | {"-M"}, clusters=True)
    kept: list[_Word] = []
    j = 0
    while j < len(options):
        v = options[j].value or ""
        cluster = re.match(r"-([^-]*?)M(.*)", v)  # `-M 0`, `-M0`, `-fM 0`; not `-oMACs=...` (-o's value)
        if cluster is None or any(f"-{letter}" in _SSH_VALUES for letter in cluster[1]):
            kept.append(options[j])
            j += 1
            continue
        if cluster[1]:
            kept.append(_Word(f"-{cluster[1]}", options[j].source, f"-{cluster[1]}"))
        j += 1 if cluster[2] else 2
    cmd_ssh(ctx, name, kept + args[i:], stdin, bulk, depth)


def _ssh_logins(ctx: Analysis, name: str, words: list[_Word]) -> None:
    """GNU parallel's `-S`/`--sshlogin` (`[N/]host,...`; `:` is this machine without ssh) and
    `--slf FILE` (`..`: its own file): each command runs through ssh on those machines."""
    own = _Word(f"{ctx.home}/.parallel/sshloginfile", "", "")  # what `..` names
    logins: list[tuple[str, str]] = []  # each login, and how it was given
    for w in _given(words, ("-S", "--sshlogin")):
        if w.value is None:  # an expansion decides which machines: as `ssh "$h"`
            logins.append(("*", f"-S {w.source}"))
        given = [] if w.value is None else w.value.split(",")
        logins += [(login, f"-S {login}") for login in given if login.strip() != ".."]
        if ".." in (login.strip() for login in given):
            logins += [(login, f"-S .. {login}") for login in _hosts_file(ctx, own) or ["*"]]
    for w in _given(words, ("--slf", "--sshloginfile")):
        listed = _hosts_file(ctx, own if w.value == ".." else w)
        if listed is None:
            logins.append(("*", f"--slf {w.source}"))
        else:
            logins += [(login, f"--slf {login}") for login in listed]
    remote = False
    for login, shown in logins:
        host = re.sub(r"^(?:@[^/]*/)?(?:\d+/)?", "", login.strip()).split()
        if host and host[-1] != ":" and names_this_machine(host[-1]):
            hands_off(ctx, f"{name} {_snip(shown)}")
            return
        remote = remote or bool(host and host[-1] != ":")
    if remote:
        ctx.add(M, "{name}: runs on another machine", name=name)


PSSH_NAMES = ("pssh", "parallel-ssh", "pscp", "pscp.pssh", "parallel-scp", "prsync", "parallel-rsync", "pslurp",
              "parallel-slurp", "pnuke", "parallel-nuke")  # fmt: skip


def cmd_pssh(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """pssh and its kin run ssh to each host of `-H "HOST..."` and of `-h FILE` (`[user@]host[:port]` a line)."""
    hosts = [h for w in _given(args, ("-H", "--host")) for h in (w.value.split() if w.value is not None else ["*"])]
    for w in _given(args, ("-h", "--hosts")):
        listed = _hosts_file(ctx, w)
        hosts += ["*"] if listed is None else [line.split()[0] for line in listed]
    local = next((h for h in hosts if names_this_machine(h)), None)
    if local is not None:
        hands_off(ctx, f"{name} -H {_snip(local)}")
    ctx.as_unknown_program(name, args, depth)  # after: the files it is given are noted as written


_ANSIBLE_VALUES = _names(
    "-i --inventory --inventory-file -c --connection -m --module-name -a --args -e --extra-vars -u --user -T "
    "--timeout -f --forks -l --limit -M --module-path -B --background -P --poll -t --tree --private-key --key-file "
    "--ssh-common-args --sftp-extra-args --scp-extra-args --ssh-extra-args --become-method --become-user "
    "--vault-id --vault-password-file --vault-pass-file --playbook-dir --task-timeout"
)
_SSH_CONNECTIONS = frozenset({"ssh", "paramiko", "paramiko_ssh", "smart", "*"})


def cmd_ansible(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """ansible reaches a host through ssh unless the connection is another: a host its inventory names
    (`-i 'localhost,'`) is reached so, this machine too; only the implicit localhost, named in no
    inventory, has a local connection, run inside the container."""
    local = _ansible_host_here(name, args)
    if local is not None:
        hands_off(ctx, f"{name} {_snip(local)}")
    ctx.as_unknown_program(name, args, depth)


def _ansible_host_here(name: str, args: list[_Word]) -> str | None:
    """The host on this machine that ansible reaches through ssh: named by an inventory given inline,
    or by the host pattern when the connection is given as ssh (`ansible localhost -c ssh`)."""
    given = _given(args, ("-c", "--connection"))
    kind = (given[-1].value or "*").rsplit(".", 1)[-1] if given else None  # `ansible.builtin.ssh`
    extra = " ".join(w.value or "" for w in _given(args, ("-e", "--extra-vars")))
    if re.search(r"ansible_connection\W+local\b", extra) or (kind is not None and kind not in _SSH_CONNECTIONS):
        return None  # local, docker, winrm...: not through ssh
    inventories = _given(args, ("-i", "--inventory", "--inventory-file"))
    listed = [w.value if w.value is not None else w.pattern for w in inventories]
    hosts = [h for text in listed if "," in text for h in text.split(",")]  # a file of hosts is not read
    operands = _operands(args, _ANSIBLE_VALUES)
    if kind is not None and name == "ansible" and operands:
        hosts += re.split(r"[:,]", operands[0].value or "*")  # `web:&staging:!localhost`
    targets = [h.strip().lstrip("&") for h in hosts if not h.strip().startswith("!")]  # `!h` leaves h out
    return next((h for h in targets if h and names_this_machine(h)), None)


# Other ssh clients, and programs that reach a machine through ssh: each by how it names the machine.
# To this one, held as `ssh localhost` is; to another, judged as before (a red team, 2026-12-05).
_URL_CLIENTS = frozenset({"curl", "hg", "svn", "bzr", "brz", "unison", "duplicity"})  # `sftp://`, `svn+ssh://`...
_HOST_LISTS = {"pdsh": ("-w",), "clush": ("-w", "--nodes"), "fab": ("-H", "--hosts")}  # `-w a,user@b`
_SSH_COPY_ID_VALUES = _names("-i -p -o -F -t")


def _remote_here_of(name: str, args: list[_Word]) -> str | None:
    """What names this machine (or a machine an expansion decides) among a client's words, as shown."""
    if name in _URL_CLIENTS:
        here = remote_here(args, urls_only=True)
        return here.source if here is not None else None
    if name == "lftp":  # its URL, or one in the commands it is given (`-c 'open sftp://host'`)
        found = next((w for w in args if any(this_machine(h) for h in ssh_urls(w.value or w.pattern))), None)
        return found.source if found is not None else None
    if name in _HOST_LISTS:
        hosts = [h for w in _given(args, _HOST_LISTS[name]) for h in (w.value or "*").split(",")]
        return next((h for h in hosts if names_this_machine(h)), None)
    if name == "restic":  # `-r sftp:[user@]host:/path`, `-r sftp://host/path`
        for w in _given(args, ("-r", "--repo", "--repo2", "--from-repo")):
            text = w.value if w.value is not None else w.pattern
            spec = text[5:] if text[:5].casefold() == "sftp:" and not text[5:].startswith("//") else text
            if this_machine(remote_host(_Word(spec, spec, spec), urls_only=spec == text)):
                return w.source
        return None
    if name == "ssh-copy-id":
        _, i = _split_options(args, _SSH_COPY_ID_VALUES)
        return args[i].source if i < len(args) and word_names_this_machine(args[i]) else None
    here = remote_here(args, daemon=name == "rdiff-backup")  # darcs, borg: `host:path`; rdiff-backup `host::path`
    return here.source if here is not None else None


def cmd_ssh_remotes(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """Holds a client whose words name this machine as the one it reaches through ssh (for programs
    with a rule of their own, run before it: borg, restic, rdiff-backup, duplicity)."""
    here = _remote_here_of(name, args)
    if here is not None:
        hands_off(ctx, f"{name} {_snip(here)}")


def over_ssh(rule: Rule) -> Rule:
    """`rule`, after `cmd_ssh_remotes`: for a program with a rule of its own that may reach this machine."""

    def judged(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        cmd_ssh_remotes(ctx, name, args, stdin, bulk, depth)
        rule(ctx, name, args, stdin, bulk, depth)

    return judged


def cmd_ssh_client(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """A program no rule knew that reaches machines through ssh: held to this one, else as before."""
    cmd_ssh_remotes(ctx, name, args, stdin, bulk, depth)
    ctx.as_unknown_program(name, args, depth)


def cmd_sshpass(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """sshpass types a password into the command it runs (ssh, scp, rsync): judged as that command."""
    _, i = _split_options(args, _names("-p -f -d -P"))
    ctx.inner(args[i:], stdin, bulk, depth)


def cmd_npx(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    ctx.add(M, "{name}: runs a package from a registry", name=name)
    options, i = _split_options(args, frozenset({"-p", "--package", "--from", "--with", "--python"}))
    for j, o in enumerate(args[:i]):
        if o.value in ("-c", "--call") and j + 1 < len(args):
            ctx.code_words([args[j + 1]], f"{name} -c")
    ctx.inner(args[i:], None, bulk, depth)


# ---- daemons' sockets (issue 21)
#
# A request sent to a daemon's socket may start programs outside the container, with the daemon's
# powers: docker.sock and podman.sock start containers, the D-Bus buses and systemd's private socket
# start services, snapd, libvirt, LXD, pm2, a terminal's or tmux's socket run commands. Which
# daemon listens cannot be told from a path, so any socket outside the command's folder is held;
# a socket of the project's own (a dev server's) is not.

_NC_VALUES = _names(
    "-I -i -M -m -O -P -p -q -s -T -V -w -X -x -e -c -g -G -o -d --proxy --proxy-type --proxy-auth --proxy-dns "
    "--allow --allowfile --deny --denyfile --sh-exec --exec --lua-exec --ssl-cert --ssl-key --ssl-trustfile "
    "--ssl-ciphers --ssl-servername --ssl-alpn --output --hex-dump --wait --idle-timeout --source "
    "--source-port --max-conns --delay"
)
_SOCAT_VALUES = _names("-b -t -T -lf -L -W -r -R")
# socat's addresses that connect to (or send to) a socket by its file, or an abstract name
_SOCAT_UNIX = frozenset({"unix-connect", "unix-client", "unix-sendto", "unix", "local"})
_SOCAT_ABSTRACT = frozenset({"abstract-connect", "abstract-client", "abstract-sendto", "abstract"})
_SOCAT_SOCKET = frozenset({"socket-connect", "socket-sendto", "socket-datagram"})  # `:1:...`: AF_UNIX, in hex
_SOCKET_NAME = re.compile(r"sock(?:et)?$|^/(?:var/)?run/|/bus$|/private$")


def in_folder(ctx: Analysis, word: _Word) -> bool:
    """Whether a socket is the project's own (`Analysis.in_project`): a known path that exists in the
    project, and that this command line does not make (`ln -s /var/run/docker.sock d.sock && curl
    --unix-socket d.sock ...`); not after `cd /var/run`, nor a Windows path, nor an empty path: its
    address is then a lone NUL, the abstract socket of the empty name, which curl 7.88 reaches (a
    differential fuzzing against curl, 2026-12-05: `unix-socket ""`)."""
    return bool(word.value) and not word.glob and ctx.in_project(word.value or "") is not None


def cmd_nc(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    flags, longs = _short_flags(args), _long_flags(args)
    if {"e", "c"} & flags or {"--exec", "--sh-exec", "--lua-exec"} & longs:
        ctx.add(D, "cannot tell what runs: {name} gives a network peer a program to drive", name=name)
    if ("U" in flags or "--unixsock" in longs) and not ("l" in flags or "--listen" in longs):
        socket = next((w for w in _operands(args, _NC_VALUES) if not in_folder(ctx, w)), None)
        if socket is not None:  # `nc -U /run/docker.sock`: a daemon's socket
            hands_off(ctx, f"{name} -U {_snip(socket.source)}")
    ctx.add(M, "{name}: opens a network connection", name=name)


def cmd_socat(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    if any(re.match(r"^(exec|system):", (a.value or "exec:").casefold()) for a in args):
        ctx.add(D, "cannot tell what runs: socat starts a program for a network peer")
    socket = next((a for a in _operands(args, _SOCAT_VALUES) if _socat_socket(ctx, a)), None)
    if socket is not None:
        hands_off(ctx, f"socat {_snip(socket.source)}")
    ctx.add(M, "socat: opens a connection")


def _socat_socket(ctx: Analysis, address: _Word) -> bool:
    """Whether a socat address (or either half of `A!!B`) connects to a socket out of the project:
    UNIX-CONNECT and its kin by file, an ABSTRACT name, SOCKET-CONNECT to domain 1 (AF_UNIX), or
    GOPEN (a bare path) of a socket."""
    known = address.value is not None
    text = address.value if address.value is not None else address.pattern
    for part in text.split("!!"):
        keyword, colon, rest = part.partition(":")
        if not colon and "/" in keyword:  # a bare path is GOPEN
            keyword, rest = "gopen", part
        kind, target = keyword.casefold(), rest.split(",", 1)[0]
        file = _Word(target if known else None, target, target)
        if kind in _SOCAT_ABSTRACT or (kind in _SOCAT_SOCKET and target.split(":", 1)[0].strip() in ("1", "*")):
            return True
        if kind in _SOCAT_UNIX and not in_folder(ctx, file):
            return True
        if kind == "gopen" and not in_folder(ctx, file) and _socket_like(ctx, target):
            return True
    return False


def _socket_like(ctx: Analysis, path: str) -> bool:
    """A path that is a socket now, or is named like one (`*.sock`, `/run/...`, a bus), or is not known."""
    try:
        return stat.S_ISSOCK(os.stat(posixpath.join(ctx.cwd or "/", path)).st_mode)
    except (OSError, ValueError):  # ValueError: a NUL in the name
        return "*" in path or bool(_SOCKET_NAME.search(path))


def cmd_curl(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """curl's `--unix-socket PATH` and `--abstract-unix-socket NAME` send its request to a daemon on
    this machine, given on the command line or in a file of options it reads (`-K FILE`, ~/.curlrc);
    otherwise curl is judged as a program no rule knows, as before it had a rule."""
    options = _curl_words(args)
    for option, socket in option_values(options, ["--unix-socket", "--abstract-unix-socket"], ""):
        if option == "--abstract-unix-socket" or not in_folder(ctx, socket):
            hands_off(ctx, f"{name} {option} {_snip(socket.source)}")
            break
    else:
        _curl_config_sockets(ctx, name, options)
    cmd_ssh_remotes(ctx, name, args, stdin, bulk, depth)  # `curl sftp://localhost/x`: sftp-server there
    ctx.as_unknown_program(name, args, depth)  # after: the words it is given are noted as written


# The long options read here. curl takes a long option in any case and by any prefix that is not
# ambiguous (`--UNIX-S`, `conf`), in a file or on the command line; a prefix of two letters or more
# counts here (curl refuses an ambiguous one). `no-` and curl 8.3's `expand-` (its value's `{{name}}`
# is a variable's) in front are read through (a red team, 2026-12-05: each reached a socket).
_CURL_OPTIONS = ("unix-socket", "abstract-unix-socket", "config")
_CURL_VALUES = "AbcCdDeEFhHKmoPQrtTuUwxXyYz"  # curl's short options that take a value
_CURL_BLANKS = " \t\n\v\f\r"  # C's isspace(), which curl's parser takes for blanks
_CURL_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "v": "\v"}  # in a quoted value; `\x` is x
# The start of a line that may name one of them (only those lines are read further): the rest of a
# file costs no more than a regular expression's scan of it
_CURL_LINE = re.compile(r"^[ \t\v\f\r]*(?:-[^- \t\n\v\f\r]*K|(?:--)?(?:expand-)?(?:no-)?(?:un|ab|co))", re.I | re.M)
MAX_CURL_LINES = 256  # such lines in the files one curl reads (a few in a real one); more: held (each costs a stat)
MAX_CURL_CONFIG = 64 * 1024
CURL_CONFIG_DEPTH = 4  # files a config file names in turn, followed this deep; deeper, held
_MOVES_CURLRC = ("CURL_HOME", "XDG_CONFIG_HOME", "HOME", "*")  # where curl looks for its files


def _curl_option(given: str) -> tuple[str, bool] | None:
    """Which of `_CURL_OPTIONS` a long option's name (without its dashes) is, as curl finds it, and
    whether it takes its value with `{{variables}}` (`expand-`); None for another option."""
    name = given.casefold()
    expand = name.startswith("expand-")
    name = name.removeprefix("expand-").removeprefix("no-")
    found = next((option for option in _CURL_OPTIONS if len(name) >= 2 and option.startswith(name)), None)
    return None if found is None else (found, expand)


def _curl_words(args: list[_Word]) -> list[_Word]:
    """curl's words with the long options read here spelled in full (`--UNIX-S` as --unix-socket,
    curl 8.16's `--expand-config=V` as `--config=V`); the value of an `--expand-` one is not known
    when it names a variable."""
    words: list[_Word] = []
    expand = False
    for a in args:
        if expand and "{{" in a.pattern:  # `--expand-config {{HOME}}/x`: a variable's value
            a = _Word(None, a.source, a.pattern.replace("{{", "*"), a.glob, a.procsub)
        v = a.value or ""
        name, equals, value = v[2:].partition("=")
        found = _curl_option(name) if v.startswith("--") else None
        expand = found is not None and found[1] and not equals
        if found is not None and equals:  # curl 8.16 takes `--name=value` (7.88 refuses it)
            spelled = f"--{found[0]}={value}"
            known = not (found[1] and "{{" in value)
            a = _Word(spelled if known else None, a.source, spelled.replace("{{", "*"), a.glob, a.procsub)
        elif found is not None:
            a = _Word(f"--{found[0]}", a.source, f"--{found[0]}", a.glob, a.procsub)
        words.append(a)
        if a.value == "--":  # after it, words are not options
            return words + args[len(words) :]
    return words


def curl_config_files(platform: str, environ: Mapping[str, str], home: str) -> list[str]:
    """Every default config file curl may read (it takes the first of them that exists): `.curlrc`
    and `curlrc` in $CURL_HOME, $XDG_CONFIG_HOME, the home folder ($HOME, else the account's) and
    the `.config` folder of $CURL_HOME and of the home; on Windows `_curlrc` too, in %USERPROFILE%,
    %APPDATA% and %USERPROFILE%/Application Data. Which ones, with a dot or without, changed between
    curl's versions (7.88 reads $XDG_CONFIG_HOME/.curlrc, later ones $XDG_CONFIG_HOME/curlrc): each
    is read. An empty variable is skipped, as curl does."""
    curl_home, home_variable = environ.get("CURL_HOME", ""), environ.get("HOME", "")
    folders = [curl_home, environ.get("XDG_CONFIG_HOME", ""), home_variable, home]
    names = [".curlrc", "curlrc"]
    if platform == "win32":
        profile = environ.get("USERPROFILE", "")
        folders += [profile, environ.get("APPDATA", ""), profile and f"{profile.rstrip('/')}/Application Data"]
        names.append("_curlrc")
    folders += [folder and f"{folder.rstrip('/')}/.config" for folder in (curl_home, home_variable, home)]
    return list(dict.fromkeys(f"{f.rstrip('/')}/{n}" for f in folders if f for n in names))


def _curl_config_sockets(ctx: Analysis, name: str, args: list[_Word]) -> None:
    """A daemon's socket named in a file of options curl reads (a review, 2026-12-05: `echo
    unix-socket=/run/docker.sock >> ~/.curlrc`, then `curl -d @c.json http://x/containers/create`).
    curl reads its default file unless its first word is `-q...` or `--disable` (in any case)."""
    given = [w for _option, w in option_values(args, ["-K", "--config"], _CURL_VALUES)]
    for word in given:
        if word.value is None:  # `-K "$f"`: a file known when it runs
            _curl_cannot_tell(ctx, name, word.source)
            return
    first = args[0].value if args else ""
    default = first is None or not (first.startswith("-q") or first.casefold() == "--disable")
    moved = _curl_places_moved(ctx) if default else None
    if moved is not None:  # `CURL_HOME=. curl ...`: the files are not the ones this process would find
        _curl_cannot_tell(ctx, name, moved)
        return
    files = curl_config_files(sys.platform, os.environ, ctx.home) if default else []
    lines = [MAX_CURL_LINES]  # left to read, in all of them
    for path in [w.value or "" for w in given] + files:
        if _curl_config_socket(ctx, name, path, CURL_CONFIG_DEPTH, lines):
            return


def _curl_places_moved(ctx: Analysis) -> str | None:
    """A variable the command line sets that moves curl's default files (CURL_HOME, XDG_CONFIG_HOME,
    HOME: the classifier's environment is not the command's), as `$NAME`; a name only known when it
    runs may be any of them (`declare "$v=."`: `$*` here). None when none is set."""
    moved = ctx.report.sets_one_of(_MOVES_CURLRC)
    return None if moved is None else f"${moved}"


def _curl_cannot_tell(ctx: Analysis, name: str, value: str) -> None:
    ctx.add(D, "cannot tell what runs: {name} reads its options from {value}", name=name, value=_snip(value))


def _curl_config_socket(ctx: Analysis, name: str, given: str, depth: int, lines: list[int]) -> bool:
    """Whether a curl config file sends the request to a socket outside the project, or what it says
    cannot be told (held here, as either). `given`: the file as curl is given it, from the folder
    the command runs in (a nested `config FILE` too, not from the file's folder); `depth`: how many
    more files may be followed; `lines`: how many more lines that may name an option may be read
    (`_curl_options`). A file that does not exist is not read (curl refuses a named one)."""
    path = script_path(ctx.cwd, given) if given != "-" else None
    if path is None or depth < 1:  # `-K -`: standard input; a relative name in a folder not known here
        _curl_cannot_tell(ctx, name, given)
        return True
    folders = [path[:i] for i, c in enumerate(path) if c == "/" and i > 0]  # `ln -s ~/x ~/.config`
    if any(ctx.written_here(p) for p in [path, *folders]):  # `echo unix-socket=... > ~/.curlrc; curl ...`
        ctx.add(D, "cannot tell what runs: {name} reads options from {value}, which this command writes",
                name=name, value=_snip(path))  # fmt: skip
        return True
    text = _curl_config_text(ctx, path)
    options = None if text is None else _curl_options(text, lines)
    if options is None:  # `-K /dev/stdin`, a FIFO, a file too long
        _curl_cannot_tell(ctx, name, given)
        return True
    for option, value, known in options:
        if option == "abstract-unix-socket" or (
            option == "unix-socket" and not (known and in_folder(ctx, _Word(value, value, value)))
        ):
            hands_off(ctx, f"{name} {option} {_snip(value)} ({_snip(path)})")
            return True
        if option == "config" and not known:
            _curl_cannot_tell(ctx, name, value)
            return True
        if option == "config" and _curl_config_socket(ctx, name, value, depth - 1, lines):
            return True
    return False


def _curl_config_text(ctx: Analysis, path: str) -> str | None:
    """The text of a curl config file ("" when there is none, or /dev/null); None when what curl
    reads from it cannot be told: `/dev/stdin`, `/proc/self/fd/0` (this process's, not curl's), a
    FIFO, a file too long or unreadable, one with a NUL (curl's line then runs on into the next)."""
    if _through_devices(path):
        return None
    try:
        if os.path.realpath(path) == "/dev/null":
            return ""
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
    except FileNotFoundError:  # a default file curl does not find, a named one it refuses
        return ""
    except (OSError, ValueError):  # a loop of links, a NUL in the name
        return None
    text = settings_text(ctx, path, MAX_CURL_CONFIG)
    return None if text is None or "\0" in text else text


def _through_devices(path: str) -> bool:
    """Whether an absolute path leads through /dev or /proc, but to /dev/null: itself or by a link
    (`ln -s /dev/stdin k`). Its links are followed one at a time, as realpath() would go on through
    /proc's own (`/proc/self/fd/0` is this process's standard input, not curl's)."""
    parts, done, links = [p for p in path.split("/") if p], "", 0
    while parts:
        part = parts.pop(0)
        if part in (".", ".."):
            done = posixpath.dirname(done).rstrip("/") if part == ".." else done
            continue
        here = f"{done}/{part}"
        if here in ("/dev", "/proc") and not (here == "/dev" and parts == ["null"]):
            return True
        try:
            target = os.readlink(here)
        except (OSError, ValueError):  # not a link
            done = here
            continue
        links += 1
        if links > 40:  # the system's limit: curl cannot open it
            return True
        parts = [p for p in target.split("/") if p] + parts
        done = "" if target.startswith("/") else done
    return False


def _curl_options(text: str, lines: list[int]) -> list[tuple[str, str, bool]] | None:
    """The options read here in a curl config file, each with its value and whether that is known,
    as curl's parseconfig() reads a line: blanks, `name`, blanks or `=`/`:` (not after a dashed
    `--name`), then a value quoted (to its closing quote, backslash escapes) or to the next blank.
    A one-letter cluster (`-sKfile`, `-sK file`) gives -K its value. An option without a value is
    refused by curl: not read. curl 8.16's `--name=value` too: its value to a space or a tab (its
    word ends there, a form feed is in it). None when more lines may name one than are `lines` left."""
    found: list[tuple[str, str, bool]] = []
    for start in _CURL_LINE.finditer(text):
        lines[0] -= 1
        if lines[0] < 0:
            return None
        end = text.find("\n", start.start()) + 1  # a quoted value not closed ends with the `\n`
        line = text[start.start() : end or len(text)].lstrip(_CURL_BLANKS)
        head, equals, after = re.split(r"[ \t\n]", line, maxsplit=1)[0].partition("=")
        joined = _curl_option(head[2:]) if head.startswith("--") and equals else None
        if joined is not None:  # `--unix-socket=/run/docker.sock`: 7.88 refuses it, 8.16 reaches the socket
            found.append((joined[0], after, not (joined[1] and "{{" in after)))
        ends = _CURL_BLANKS if line[0] == "-" else _CURL_BLANKS + "=:"
        cut = next((i for i, c in enumerate(line) if c in ends), len(line))
        name, rest = line[:cut], line[cut:].lstrip(ends)
        value = _curl_unquoted(rest[1:]) if rest[:1] == '"' else re.split(r"[ \t\n\v\f\r]", rest)[0] or None
        if re.fullmatch(r"-[^-].*", name):  # `-sKk5`: letters, the first that takes a value takes the rest
            at = next((i for i, c in enumerate(name[1:], 1) if c in _CURL_VALUES), len(name))
            value = name[at + 1 :] or value if name[at : at + 1] == "K" else None
            option: tuple[str, bool] | None = ("config", False)
        else:
            option = _curl_option(name.removeprefix("--"))
        if option is not None and value is not None:
            found.append((option[0], value, not (option[1] and "{{" in value)))
    return found


def _curl_unquoted(text: str) -> str:
    """A quoted value of a curl config file, after its opening quote: to the closing one."""
    out: list[str] = []
    escaped = False
    for c in text:
        if escaped:
            out.append(_CURL_ESCAPES.get(c, c))
            escaped = False
        elif c == "\\":
            escaped = True
        elif c == '"':
            break
        else:
            out.append(c)
    return "".join(out)


_SCRIPT_LONG = (
    "append",
    "command",
    "echo",
    "return",
    "flush",
    "force",
    "log-in",
    "log-out",
    "log-io",
    "log-timing",
    "logging-format",
    "output-limit",
    "quiet",
    "timing",
    "help",
    "version",
)


def cmd_script(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """script runs a shell (its -c command's, else $SHELL) in a terminal whose input is its own: what
    is typed into it runs as a shell's commands (a review, 2026-12-05: `... | script -q /dev/null`)."""
    ctx.add(M, "script: records a terminal session")
    if stdin is not None:
        stdin_code(ctx, name, stdin, shell=True)
    for i, a in enumerate(args):
        v = a.value or ""
        short = re.match(r"^-[^-]*?c(.*)$", v)  # -c, -qc, -qc'CODE' (review, 2026-12-04)
        long = v.startswith("--") and long_option(v, _SCRIPT_LONG) == "command"
        if (short and not short[1]) or (long and "=" not in v):
            if i + 1 < len(args):
                ctx.code_words([args[i + 1]], "script -c")
        elif short or long:
            ctx.code_words([_word_end(a, len(short[1]) if short else len(v) - v.index("=") - 1)], "script -c")
