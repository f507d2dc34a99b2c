"""Commands that are read-only unless asked otherwise (sed -i, awk system(), tee, sort -o...)."""

from __future__ import annotations

import re

from .code import code_from_expansion
from .code_options import option_values
from .findings import BULK_COMMAND, D, M, _snip
from .options import _long_flags, _operands, _short_flags
from .rule import Analysis
from .scripts import MAX_SCRIPTS, library_file, script_text, typed_commands
from .stdin import _STDIN_FILES, _Stdin
from .tables import (
    _HARMLESS_DEVICES,
    _SED_EXEC,
    _SED_TEXTS,
    _SED_WRITE,
    _SED_WRITE_COMMAND,
)
from .words import _Word, _word_end

_SED_VALUES = "efli"  # sed's letters that take a value (`-i` its suffix: `-if` is in place, suffix `f`)


def cmd_sed(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    scripts: list[str] = []
    inplace = False
    i = 0
    while i < len(args):
        v = args[i].value or ""
        if v in ("-e", "--expression") and i + 1 < len(args):
            if args[i + 1].value is None:
                code_from_expansion(ctx, name)
                return
            scripts.append(args[i + 1].value or "")
            i += 2
            continue
        joined = option_values([args[i]], ["-f", "--file"], _SED_VALUES)  # `-fFILE`, `-nfFILE`, `--file=FILE`
        pair = option_values(args[i : i + 2], ["-f", "--file"], _SED_VALUES)
        given = joined or [f for f in pair if f[1] is args[i + 1]]
        if given:  # `sed -f FILE`: its commands, read as a script is (`-f -`: what is typed into it)
            program = program_file(ctx, name, given[0][1], stdin)
            if program is None:
                return
            scripts.append(program)
            i += 1 if joined else 2
            continue
        if v.startswith("--expression="):
            scripts.append(v.split("=", 1)[1])
        elif v.startswith("--in-place") or (v.startswith("-") and not v.startswith("--") and "i" in v[1:]):
            inplace = True
        elif not v.startswith("-") and not scripts:  # the script, unless -e gave one
            if args[i].value is None:
                code_from_expansion(ctx, name)
                return
            scripts.append(v)
        i += 1
    if bulk and (not scripts or any("{}" in script for script in scripts)):  # `... | xargs -I{} sed -n {} f`
        ctx.add(D, BULK_COMMAND)
    for script in scripts:
        if _SED_EXEC.search(script):
            ctx.add(D, "cannot tell what runs: sed e runs shell commands")
        else:
            files = [found[2] for found in _SED_WRITE.finditer(script)]
            files += [found[1] for found in _SED_WRITE_COMMAND.finditer(_SED_TEXTS.sub(" ", script))]
            if files:
                ctx.add(M, "sed w: writes a file")
            for file in files:
                ctx.note_written(_Word(file.strip(), file, file.strip()), writes=True)
    if inplace:
        ctx.add(M, "sed -i: edits files in place")


def cmd_awk(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    programs: list[str] = []
    libraries: list[str] = []
    i = 0
    inplace = False
    while i < len(args):
        v = args[i].value or ""
        key, eq, attached = v.partition("=")
        long = v.startswith("--")
        # `-fprog.awk`: the value joined to the option (only an option: `'BEGIN{...}'` is the program)
        joined = v[2:] if v.startswith("-") and not long and len(v) > 2 else None
        following = args[i + 1] if i + 1 < len(args) else None
        if v == "-W" and following is not None and (following.value or "").startswith("e"):  # mawk -W exec FILE
            key, joined, following = "-f", None, args[i + 2] if i + 2 < len(args) else None
            i += 1
        if key in ("-f", "--file", "-E", "--exec") or (joined is not None and v[1] in "fE"):
            file = _word_end(args[i], len(attached)) if long and eq else _word_end(args[i], len(joined)) if joined \
                is not None else following  # fmt: skip
            program = None if file is None else program_file(ctx, name, file, stdin)
            if program is None:  # `awk -f /dev/stdin <<< 'BEGIN{system(...)}'` (fourth red team) is read
                return
            programs.append(program)
            i += 1 if (long and eq) or joined is not None else 2
            continue
        if key in ("-i", "--include") or (joined is not None and v[1] == "i"):
            library = attached if long and eq else joined if joined is not None else None if following is None \
                else following.value  # fmt: skip
            here = library_file(ctx.cwd, library, ".awk")  # AWKPATH starts with the current folder
            if here is not None:  # `awk -i ./wipe.awk 1 f`: read as -f's file is
                library_text = program_file(ctx, name, _Word(here, here, here), stdin)
                if library_text is None:
                    return
                libraries.append(library_text)  # the program is still the first operand
            elif library != "inplace":  # one of awk's own libraries, or one from an expansion
                ctx.add(M, "{name} -f: runs an awk program file", name=name)
                return
            inplace = inplace or library == "inplace"
            i += 1 if (long and eq) or joined is not None else 2
            continue
        if key in ("-e", "--source") or (joined is not None and v[1] == "e"):
            if (long and eq) or joined is not None:
                programs.append(attached if long else v[2:])
                i += 1
                continue
            if following is not None and following.value is None:
                code_from_expansion(ctx, name)
                return
            programs.append(following.value or "" if following is not None else "")
            i += 2
            continue
        if v in ("-v", "-F", "--assign", "--field-separator"):
            i += 2
            continue
        if v == "--" or not v.startswith("-"):
            word = args[i + 1] if v == "--" and i + 1 < len(args) else args[i] if v != "--" else None
            if not programs and word is not None:  # the program, unless -e or --source gave one
                if word.value is None:
                    code_from_expansion(ctx, name)
                    return
                programs.append(word.value or "")
            break
        i += 1
    program = awk_includes(ctx, name, "\n".join(programs + libraries), stdin)
    if program is None:
        return
    if bulk and not programs:  # `... | xargs -0 awk`: the words read are the program
        ctx.add(D, BULK_COMMAND)
    if re.search(r"\bsystem\s*\(|\|\s*getline|\|&|print[f]?\b(?:\"(?:[^\"\\]|\\.)*\"|[^;}\"])*\|", program):
        ctx.add(D, "cannot tell what runs: {name} starts shell commands", name=name)
    elif ">" in program:
        ctx.add(M, "{name}: may write files", name=name)
    if inplace:
        ctx.add(M, "{name} -i inplace: edits files in place", name=name)


def cmd_tee(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    # A disk device among them is caught for every writer (tables._WRITERS) in `argv`.
    files = [a for a in _operands(args) if a.value is None or not _HARMLESS_DEVICES.match(a.value)]
    if files:
        ctx.add(M, "tee: writes to {source}", source=_snip(files[0].source))


# Programs that write the file an option names, and their one-letter options that take a value:
# `tree -o`, `info -o` and `less -o` wrote ~/.bashrc judged read-only (a red team, 2026-12-04).
_OUTPUT_OPTIONS = {
    "sort": (["-o", "--output"], "koSTt"),
    "tree": (["-o"], "LPIoHT"),
    "info": (["-o", "--output"], "dfno"),
    "less": (["-o", "-O", "--log-file", "--LOG-FILE"], "bhjkoOpPtTxyz"),
}


def cmd_output_option(
    ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int
) -> None:
    options, takes_value = _OUTPUT_OPTIONS[name]
    for _option, output in option_values(args, options, takes_value):
        ctx.add(M, "writes to {source}", source=_snip(output.value or output.source))
        ctx.note_written(output, writes=True)


# Programs whose second operand is the file they write (`xxd in out`, `uniq in out`), and the options
# of theirs that take a value.
_OUTPUT_OPERAND = {"uniq": frozenset({"-f", "-s", "-w"}), "xxd": frozenset({"-c", "-g", "-l", "-n", "-o", "-s"})}


def cmd_output_operand(
    ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int
) -> None:
    operands = _operands(args, _OUTPUT_OPERAND[name])
    if len(operands) > 1:
        ctx.add(M, "{name}: writes its output file", name=name)
        ctx.note_written(operands[1], writes=True)


def cmd_expand(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """coreutils' `expand` reads; Windows' `expand.exe SRC DEST` (and `-F:*`, `-r`) writes: in Git Bash the
    two share a name, and `expand.exe x "$APPDATA/Claude/settings.json"` was judged read-only (a red team)."""
    operands = _operands(args, frozenset({"-t", "--tabs"}))
    windows = any((a.value or "").upper().startswith(("-F:", "/F:")) or a.value in ("-r", "/r", "-R") for a in args)
    if len(operands) > 1 or windows:
        ctx.add(M, "writes to {source}", source=_snip(operands[-1].source if operands else name))
        for target in operands[-1:]:
            ctx.note_written(target, writes=True)


def cmd_file(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    # `file -C -m x` writes x.mgc, and getopt takes `--comp` for --compile (a review, 2026-12-05)
    if "C" in _short_flags(args) or any(len(f) > 4 and "--compile".startswith(f) for f in _long_flags(args)):
        ctx.add(M, "{name} -C: writes a file", name=name)


def cmd_yq(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    if "i" in _short_flags(args) or "--in-place" in _long_flags(args):  # `yq -yi . f` rewrote f (fifth red team)
        ctx.add(M, "{name} -i: edits files in place", name=name)


def cmd_date(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    if "s" in _short_flags(args) or "--set" in _long_flags(args):
        ctx.add(M, "date -s: sets the clock")


def cmd_hostname(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    if _operands(args):
        ctx.add(M, "hostname: renames the machine")


def cmd_history(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    if {"c", "d", "w", "a", "r", "n"} & _short_flags(args):
        ctx.add(M, "history: changes the shell history")
    if {"w", "a"} & _short_flags(args):  # `history -w FILE` writes FILE (a red team: `history -w ~/.b?shrc`)
        for file in _operands(args, frozenset({"-d"})):
            ctx.note_written(file, writes=True)


def cmd_exit(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    ctx.add(M, "{name}: ends the shell session", name=name)


def program_file(ctx: Analysis, name: str, file: _Word, stdin: _Stdin | None) -> str | None:
    """The program `sed -f FILE` or `awk -f FILE` runs: the file, read as a script is (`-` and
    /dev/stdin: what is typed into it); None, and the command held, when it cannot be read."""
    if file.value in _STDIN_FILES:
        typed = typed_commands(ctx, name, stdin)
        if typed is None and (stdin is None or stdin.kind != "pipe"):  # a pipe's: held already
            ctx.add(D, "cannot tell what runs: {name} reads its commands from a pipe", name=name)
        return typed
    read = script_text(ctx, name, file)
    return None if read is None else read[1]


def awk_includes(ctx: Analysis, name: str, program: str, stdin: _Stdin | None) -> str | None:
    """The program with the files its `@include "FILE"` lines name (from the command's folder first,
    as gawk looks), read as -f's are; an `@load` of a library of the folder's is a compiled program
    (review of the fifth red team: neither was read). None, and the command held, when one cannot
    be read."""
    done: set[str] = set()
    while (wanted := [f for f in _AWK_INCLUDE.findall(program) if f not in done]) and len(done) <= MAX_SCRIPTS:
        for included in wanted:
            done.add(included)
            if ctx.cwd is None and not included.startswith("/"):  # after `cd "$X"`: it may be that folder's
                ctx.add(M, "{name} -f: runs an awk program file", name=name)  # as `-i`'s then
                continue
            here = library_file(ctx.cwd or "/", included, ".awk")
            if here is None:
                continue  # one of awk's own (AWKPATH), as `-i` names them
            text = program_file(ctx, name, _Word(here, here, here), stdin)
            if text is None:
                return None
            program += "\n" + text
    for loaded in _AWK_LOAD.findall(program):
        if "/" in loaded or library_file(ctx.cwd, loaded, ".so") is not None:
            ctx.add(D, "cannot tell what runs: the script {path} is a compiled program", path=_snip(loaded))
    return program


_AWK_INCLUDE = re.compile(r'^[^\S\n]*@include\s+"([^"]+)"', re.M)
_AWK_LOAD = re.compile(r'^[^\S\n]*@load\s+"([^"]+)"', re.M)
