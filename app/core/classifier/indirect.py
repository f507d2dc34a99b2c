"""Programs a command runs by a name it gives another way than as the program's operand (a red team,
2026-12-05): `python3 -m cProfile x.py`, `__import__("x")`, `node --require=./x.js`, `perl -Mx`, Java
typed into `jshell`. Each file is read as the direct form (`python3 x.py`) reads it (`scripts`), and
one named by what is only known when it runs cannot be told.
"""

from __future__ import annotations

import base64
import binascii
import os
import posixpath
import re
import urllib.parse
from collections.abc import Iterable
from typing import NamedTuple

from .automation import attaches
from .code import code_from_expansion, inline_code, judge_code
from .findings import LOADS_LIBRARY, D, _snip
from .modules import module_files, python_module_files
from .rule import Analysis
from .scripts import run_script, runs_project_files, script_path, script_text, typed_commands
from .stdin import _Stdin
from .tables import _PERL, _PYTHON
from .words import _Word, _word_end

# A module or file named by what is only known when the code runs: `__import__(name)`, `require(p)`
_LOADS_COMPUTED = {
    "python": re.compile(r"\b(?:__import__|import_module|run_path|run_module)\s*\(\s*(?![rRuU]?['\"])"),
    "node": re.compile(r"\b(?:require|import)\s*\(\s*(?:(?!['\"`])|`[^`]*\$\{)"),
    "perl": re.compile(r"\b(?:do|require)\s*\(?\s*\$"),
}
_RUN_PATH = re.compile(r"\brun_path\s*\(\s*[rRuU]?(['\"])([^'\"\n]+)\1")
_RUN_MODULE = re.compile(r"\brun_module\s*\(\s*[rRuU]?(['\"])([\w.]+)\1")
_JS_NAMES = frozenset({"node", "nodejs", "bun", "deno"})


def _language(name: str) -> tuple[str, str] | None:
    """The language of code `name` runs, and the program that reads its files: ("python",
    "python3") for `python3`, `python3 -m timeit`, gdb's `python`; None for one not read here."""
    words = name.split()
    first = words[0] if words else ""
    if _PYTHON.match(first) or (words and words[-1] in ("python", "script")):  # gdb's python, lldb's script
        return "python", first if _PYTHON.match(first) else "python3"
    if _PERL.match(first):
        return "perl", first
    if first in _JS_NAMES:
        return "node", first
    return ("ruby", first) if first == "ruby" else None


def code_loads(ctx: Analysis, name: str, code: str) -> None:
    """The files inline code loads by a name written in it, each read as `name`'s program (then its
    content decides); one named by what is only known when it runs cannot be told."""
    language = _language(name)
    if language is None:
        return
    kind, program = language
    computed = _LOADS_COMPUTED.get(kind)
    if computed is not None and computed.search(code):
        ctx.add(D, "cannot tell what runs: {name} code calls functions by names made when it runs", name=name)
    if ctx.cwd is None:
        return
    found = module_files(program, code, posixpath.join(ctx.cwd, "-"), [ctx.cwd])
    if kind == "python":  # runpy's
        found += [p for m in _RUN_PATH.finditer(code) if (p := script_path(ctx.cwd, m[2])) is not None]
        found += [f for m in _RUN_MODULE.finditer(code) for f in python_module_files(ctx.cwd, m[2])]
    for path in dict.fromkeys(found):
        run_script(ctx, program, _Word(path, path, path), "program")


class _Runner(NamedTuple):
    """What a module that runs another program (`python3 -m cProfile x.py`) takes: its options that
    take a value, its other options, the one that says the target is a module, and whether every
    word after the options is a target (doctest's files, unittest's tests) or only the first is."""

    values: frozenset[str]
    flags: frozenset[str]
    module: str = ""
    every: bool = False


_HELP = frozenset({"-h", "--help"})
_PROFILER = _Runner(frozenset({"-o", "--outfile", "-s", "--sort"}), _HELP | {"-m"}, "-m")
_TRACE_FLAGS = _HELP | {"-c", "--count", "-t", "--trace", "-l", "--listfuncs", "-T", "--trackcalls", "-r", "--report",
                        "-R", "--no-report", "-m", "--missing", "-s", "--summary", "-g", "--timing", "--module",
                        "--version"}  # fmt: skip
_UNITTEST_FLAGS = _HELP | {"-v", "--verbose", "-q", "--quiet", "--locals", "--no-locals", "-f", "--failfast", "-c",
                           "--catch", "-b", "--buffer"}  # fmt: skip
_RUNNERS = {
    "cProfile": _PROFILER,
    "profile": _PROFILER,
    # pdb's -c commands are Python where they are not pdb's; -p attaches to a running program (3.14)
    "pdb": _Runner(frozenset({"-c", "--command", "-p", "--pid"}), _HELP | {"-m"}, "-m"),
    "trace": _Runner(
        frozenset({"-f", "--file", "-C", "--coverdir", "--ignore-module", "--ignore-dir"}), _TRACE_FLAGS, "--module"
    ),
    "doctest": _Runner(frozenset({"-o", "--option"}), _HELP | {"-v", "--verbose", "-f", "--fail-fast"}, every=True),
    "unittest": _Runner(frozenset({"-k", "--durations"}), _UNITTEST_FLAGS, every=True),
    "runpy": _Runner(frozenset(), frozenset(), "", False),
    # they import (so run) the module or file they are given, from the command's folder first: read as the
    # program it names (a red team, 2026-12-05: `python3 -m pydoc ./evil.py` ran it, judged moderate)
    "pydoc": _Runner(frozenset({"-k", "-p", "-n"}), frozenset({"-b", "-w"}), every=True),
    "inspect": _Runner(frozenset(), _HELP | {"-d", "--details"}),
    "pyclbr": _Runner(frozenset(), frozenset(), every=True),
    "modulefinder": _Runner(frozenset({"-p", "-x"}), frozenset({"-d", "-m", "-q"})),
}
# Runners whose target is a module unless it names a file (`unittest tests.x`, `pydoc json`)
_BY_NAME = frozenset({"unittest", "pydoc", "inspect", "pyclbr"})
# Modules that run what a file or their input holds, not read here: unpickling calls what the pickle
# names (`python3 -m pickle x.pkl`), idlelib runs files and code (`-r`, `-c`, its start-up file)
_UNREAD_RUNNERS = frozenset({"pickle", "idlelib"})  # and idlelib's modules (`idlelib.idle`, `idlelib.pyshell`)
_DOCTEST_EXAMPLE = re.compile(r"^[ \t]*(?:>>>|\.\.\.)[ \t]?(.*)$", re.M)


def python_module_runs(ctx: Analysis, name: str, args: list[_Word]) -> None:
    """`python3 -m MOD WORDS`, where MOD runs a program WORDS name: the profilers, pdb, trace,
    doctest, unittest and runpy run the script or module they are given, pydoc, inspect, pyclbr and
    modulefinder import it, read here as `python3 x.py` or `python3 -m x` would be (timeit's code:
    inline_code); pickle and idlelib run what they read, which is not read here (held)."""
    module = _python_m(args)
    if module is not None and (module[0].value or "").split(".")[0] in _UNREAD_RUNNERS:
        given = _snip(" ".join(w.source for w in module[1])) or "-"
        ctx.add(D, "cannot tell what runs: {name} reads {source}", name=f"{name} -m {module[0].value}", source=given)
    if module is None or module[0].value not in _RUNNERS:
        return
    word, rest = module
    what = f"{name} -m {word.value}"
    runner = _RUNNERS[word.value or ""]
    targets = _runner_targets(ctx, name, what, rest, runner)
    if targets is None:
        return
    words, as_module = targets
    if word.value == "runpy":
        as_module = True
    if word.value == "unittest" and words and words[0].value == "discover":
        return  # the project's tests, found as pytest finds them: not read (runs_project_files)
    for target in words if runner.every else words[:1]:
        value = target.value
        if value is not None and word.value == "inspect":  # `inspect MOD:QUALNAME`
            value = value.partition(":")[0]
        if value is not None and (as_module or (word.value in _BY_NAME and not _names_a_file(value))):
            found = python_module_files(ctx.cwd, value) if ctx.cwd is not None and _dotted(value) else []
            for path in found:
                run_script(ctx, name, _Word(path, path, path), "program")
            if not found and ctx.cwd is not None and _dotted(value):
                runs_project_files(ctx, [posixpath.join(ctx.cwd, *value.split(".")) + ".py"])
        elif word.value == "doctest" and value is not None and not value.endswith(".py"):
            read = script_text(ctx, name, target)  # a text file: its examples are what runs
            if read is not None:
                examples = "\n".join(m[1] for m in _DOCTEST_EXAMPLE.finditer(read[1]))
                if examples.strip():
                    judge_code(ctx, name, examples, read[0])
        else:
            run_script(ctx, name, target, "program")


def _names_a_file(value: str) -> bool:
    return value.endswith(".py") or "/" in value


def _dotted(value: str) -> bool:
    return bool(re.fullmatch(r"\w+(?:\.\w+)*", value))


def _python_m(args: list[_Word]) -> tuple[_Word, list[_Word]] | None:
    """The module word of `python3 ... -m MOD ...` and the words after it, as python reads its
    options (a cluster: `-Bm cProfile`, `-mcProfile`); None without one."""
    for i, a in enumerate(args):
        v = a.value
        if v is None or not v.startswith("-") or v == "-" or v == "--":
            return None
        if v.startswith("--"):
            continue  # --check-hash-based-pycs's value is never `-m`
        cluster = v[1:]
        k = next((k for k, ch in enumerate(cluster) if ch in "cmWX"), len(cluster))
        if k < len(cluster) and cluster[k] == "m":
            attached = cluster[k + 1 :]
            if attached:
                return _Word(attached, a.source, attached), args[i + 1 :]
            return (args[i + 1], args[i + 2 :]) if i + 1 < len(args) else None
        if k < len(cluster) and cluster[k] == "c":
            return None
    return None


def _runner_targets(
    ctx: Analysis, name: str, what: str, words: list[_Word], runner: _Runner
) -> tuple[list[_Word], bool] | None:
    """The words a runner takes for its targets, and whether they are modules, read as argparse
    and optparse read options (a long one by a unique prefix, short ones in a cluster); None, and
    the command held, for an option it does not know (whether it takes the next word is unknown)."""
    targets: list[_Word] = []
    as_module = False
    longs = sorted(o for o in runner.values | runner.flags if o.startswith("--"))
    i = 0
    while i < len(words):
        w = words[i]
        v = w.value
        if v is None or not v.startswith("-") or v == "-":
            targets.append(w)
            if not runner.every or (v == "discover" and len(targets) == 1):  # unittest's: its own options follow
                break
            i += 1
            continue
        if v == "--":
            targets += words[i + 1 : i + 2] if not runner.every else words[i + 1 :]
            break
        if v.startswith("--"):
            key, equals, _ = v.partition("=")
            known = [o for o in longs if o == key] or [o for o in longs if o.startswith(key)]
            if len(known) != 1:
                ctx.add(D, "cannot tell what runs: {name} {option}", name=what, option=_snip(v))
                return None
            taken = _runner_option(ctx, what, known[0], words, i, len(v) - len(key) - 1 if equals else None, runner)
            as_module = as_module or known[0] == runner.module
            i += taken
            continue
        for j in range(1, len(v)):
            letter = "-" + v[j]
            if letter not in runner.values | runner.flags:
                ctx.add(D, "cannot tell what runs: {name} {option}", name=what, option=_snip(v))
                return None
            as_module = as_module or letter == runner.module
            if letter in runner.values:
                i += _runner_option(ctx, what, letter, words, i, len(v) - j - 1 or None, runner)
                break
        else:
            i += 1
    return targets, as_module


def _runner_option(
    ctx: Analysis, what: str, option: str, words: list[_Word], i: int, joined: int | None, runner: _Runner
) -> int:
    """One option of a runner at words[i] (its value the last `joined` characters of the word, or
    the next word): pdb's commands judged as Python, its -p held as attaching. The words it took."""
    if option not in runner.values:
        return 1
    value = _word_end(words[i], joined) if joined else words[i + 1] if i + 1 < len(words) else None
    if option in ("-p", "--pid") and what.endswith("pdb"):
        attaches(ctx, what)
    elif option in ("-c", "--command") and what.endswith("pdb") and value is not None:
        inline_code(ctx, f"{what} -c", value.literal)
    return 1 if joined else 2


# Node's options that load a module before the program (bun's --preload too): a path, a `file:` URL
# or a `data:` URL is the project's code or code given here; a package's name is installed software.
_NODE_PRELOADS = frozenset({"-r", "--require", "--import", "--loader", "--experimental-loader", "--preload"})


def node_preloads(ctx: Analysis, name: str, args: list[_Word]) -> None:
    """`node --require=./x.js`, `--import ./x.mjs`, `--experimental-loader=./x.mjs`: the module runs
    first, read as `node x.js` reads it (a red team, 2026-12-05: the `=` forms were not read)."""
    for k, a in enumerate(args):
        key, equals, _ = (a.value if a.value is not None else a.pattern).partition("=")
        if key not in _NODE_PRELOADS:
            continue
        if a.value is None:
            code_from_expansion(ctx, name)
            continue
        value = _word_end(a, len(a.value) - len(key) - 1) if equals else args[k + 1] if k + 1 < len(args) else None
        if value is not None:
            _node_module(ctx, name, value)


def _node_module(ctx: Analysis, name: str, word: _Word) -> None:
    value = word.value
    if value is None:
        code_from_expansion(ctx, name)
    elif value.startswith("data:"):  # the module's code itself, percent- or base64-encoded
        head, _, body = value.partition(",")
        try:
            code = base64.b64decode(body).decode() if head.endswith(";base64") else urllib.parse.unquote(body)
        except (binascii.Error, UnicodeDecodeError):
            code_from_expansion(ctx, name)
            return
        inline_code(ctx, name, code)
    elif value.startswith("file:"):
        path = urllib.parse.unquote(urllib.parse.urlparse(value).path)
        run_script(ctx, name, _Word(path, word.source, path), "program")
    elif value.startswith(("./", "../", "/")):
        run_script(ctx, name, word, "program")


def perl_modules(ctx: Analysis, name: str, args: list[_Word]) -> None:
    """The modules perl's -M and -m (and -d:NAME, Devel::NAME) load before its code, found in its -I
    folders or the command's, read as `perl x.pm` would be; PERL5OPT set by the command line gives
    perl options not seen here (a red team, 2026-12-05: `perl -I. -Mx -e 1`, `PERL5OPT=-Mx`)."""
    if ctx.report.sets_one_of(["PERL5OPT"]):
        ctx.add(D, "cannot tell what runs: {value} gives {name} options that load code", value="PERL5OPT", name=name)
    modules: list[_Word] = []
    folders: list[str] = []
    debugger = False
    i = 0
    while i < len(args):
        a = args[i]
        v = a.value
        if v is None or not v.startswith("-") or v in ("-", "--"):
            break
        for j in range(1, len(v)):
            letter, rest = v[j], v[j + 1 :]
            if letter in "eE":  # its code: the next word unless joined
                i += 0 if rest else 1
            elif letter in "mM":
                modules.append(_word_end(a, len(rest)) if rest else _Word("", "", ""))
            elif letter == "I":
                folder = rest or (args[i + 1].value if i + 1 < len(args) else None)
                i += 0 if rest else 1
                if folder is not None:
                    folders.append(folder)
            elif letter == "d" and rest.lstrip("t").startswith(":"):
                devel = "Devel::" + rest.lstrip("t")[1:]
                modules.append(_Word(devel, devel, devel))
            elif letter == "d":  # `-d`, `-dt`, `-de 1`: the debugger, which runs its settings file
                debugger = True
                continue
            elif letter not in "0ClixFD":
                continue
            break
        i += 1
    where = [p for f in folders if (p := script_path(ctx.cwd, f)) is not None] + ([ctx.cwd] if ctx.cwd else [])
    for module in modules:
        _perl_module(ctx, name, module, where)
    if debugger:
        _perl_debugger(ctx, name)


# The debugger's settings file, Perl it runs at its start: `.perldb`, or `perldb.ini` where it finds no
# /dev/tty (perl5db.pl), from the command's folder, else from the home folder.
_PERLDB_FILES = (".perldb", "perldb.ini")


def _perl_debugger(ctx: Analysis, name: str) -> None:
    """`perl -d` runs perl5db.pl, which runs its settings file as Perl (a red team, 2026-12-05: a
    `./.perldb` deleted ~/Documents under `perl -d -e 1`): read as `perl FILE` would be, held when it
    cannot be read or the command line writes it; PERL5DB (the debugger's own code), HOME or LOGDIR
    set by the command line decide what runs in a way not seen here."""
    if ctx.report.sets_one_of(["PERL5DB"]):
        ctx.add(D, "cannot tell what runs: {value} gives {name} -d the code it runs", value="PERL5DB", name=name)
    if ctx.report.sets_one_of(["HOME", "LOGDIR"]):  # where the home folder's file is
        ctx.add(D, "cannot tell what runs: {name} runs {value}, a script in a folder not known here", name=name,
                value="~/.perldb")  # fmt: skip
    for file in _PERLDB_FILES:
        here = script_path(ctx.cwd, file)
        if here is None:  # after `cd "$dir"`: held, a script in a folder not known here
            run_script(ctx, name, _Word(file, file, file), "program")
            continue
        for path in (here, posixpath.join(ctx.home, file)):
            if os.path.isfile(path) or ctx.written_here(path):  # perl5db.pl's `-f`, or made before it runs
                run_script(ctx, name, _Word(path, path, path), "program")
                break


def _perl_module(ctx: Analysis, name: str, word: _Word, where: Iterable[str]) -> None:
    if word.value is None:
        code_from_expansion(ctx, name)
        return
    module = re.split(r"[=\s]", word.value.lstrip("-"), maxsplit=1)[0]
    if not re.fullmatch(r"\w+(?:::\w+)*", module):
        return
    relative = module.replace("::", "/") + ".pm"
    for path in dict.fromkeys(posixpath.join(base, relative) for base in where):
        if os.path.isfile(path):
            run_script(ctx, name, _Word(path, path, path), "program")


# ---- jshell: Java code typed into it, in its files (operands, `--startup`, `/open`), and options
# for the Java machine it runs (`-J`, `-R`). Judged as code in another language is (code.py).

_JSHELL_VALUES = frozenset({"--class-path", "-cp", "--module-path", "--add-modules", "--add-exports", "--startup",
                            "--feedback", "--execution"})  # fmt: skip
_JSHELL_OWN = frozenset({"DEFAULT", "PRINTING", "JAVASE", "TOOLING"})  # its own scripts
_JSHELL_OPEN = re.compile(r"^[ \t]*/o(?:p(?:en?)?)?[ \t]+(\S+)", re.M)
_JSHELL_EDITOR = re.compile(r"^[ \t]*/(?:edi?t?\b|set?[ \t]+e\w*)", re.M)  # `/set editor CMD`, then `/edit`
_JVM_RUNS = re.compile(r"^-XX:On(?:Error|OutOfMemoryError)=(.*)", re.S)
_JVM_LOADS = re.compile(r"^-agentpath:")


def cmd_jshell(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """jshell runs the Java it reads: code that starts programs (ProcessBuilder,
    Runtime.getRuntime().exec) or deletes (Files.delete) is held as other languages' is (a red team,
    2026-12-05: `jshell <<< 'new ProcessBuilder("rm", ...).start()'` was moderate)."""
    files: list[_Word] = []
    i = 0
    while i < len(args):
        a = args[i]
        v = a.value
        if v is None:
            ctx.add(D, "cannot tell what runs: {name} with arguments from an expansion", name=name)
            return
        if v[:2] in ("-J", "-R") and len(v) > 2:
            java_machine_option(ctx, name, _word_end(a, len(v) - 2))
        elif v.split("=", 1)[0] == "--startup":
            files.append(_word_end(a, len(v) - 10) if "=" in v else args[i + 1] if i + 1 < len(args) else a)
            i += 0 if "=" in v else 1
        elif v in _JSHELL_VALUES:
            i += 1
        elif not v.startswith("-"):
            files.append(a)
        i += 1
    typed = typed_commands(ctx, name, stdin)
    if typed is not None:
        files += [_Word(f, f, f) for f in _JSHELL_OPEN.findall(typed)]
        if _JSHELL_EDITOR.search(typed):
            ctx.add(D, "cannot tell what runs: {name} {option} may start a program", name=name, option="/set editor")
    for file in files:
        if file.value not in _JSHELL_OWN and (read := script_text(ctx, name, file)) is not None:
            judge_code(ctx, name, read[1], read[0])
    inline_code(ctx, name, typed or "")


def java_machine_option(ctx: Analysis, name: str, word: _Word) -> None:
    """An option for a Java machine: `-XX:OnError=CMD` runs CMD (split at `;`) as the shell would;
    `-agentpath:LIB` loads a compiled library into it."""
    value = word.literal
    if value is None:
        ctx.add(D, "cannot tell what runs: {name} with arguments from an expansion", name=name)
    elif (runs := _JVM_RUNS.match(value)) is not None:
        ctx.sub_script(runs[1], f"{name} {value.partition('=')[0]}")
    elif _JVM_LOADS.match(value):
        ctx.add(D, LOADS_LIBRARY, name=name, value=_snip(value[11:]))
