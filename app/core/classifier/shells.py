"""Shells, interpreters and code in strings: text that bash or another language would run."""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re
import shlex

from .cmdline import cmd_code
from .code import inline_code
from .code_options import judge_code_options, option_values, vim_script
from .danger import Danger
from .files import MAKE_FLAGS_VARIABLES, make_flags
from .findings import ALIASES_ON, LOADS_LIBRARY, MAX_PROBED_WORDS, D, M, _snip
from .itself import python_module
from .options import _operands, _split_options
from .piped import piped_commands, runs_download
from .project_settings import MAX_PLACES
from .repository import work_top
from .rule import Analysis
from .scripts import (
    installed_program,
    looked_up,
    run_script,
    runs_project_files,
    script_path,
    typed_text,
)
from .stdin import _STDIN_FILES, _Stdin
from .tables import (
    _CODE_VARIABLES,
    _DOWNLOADS,
    _INLINE_CODE_FLAGS,
    _LOADS_LIBRARIES,
    _PERL,
    _PROMPTS,
    _PYTHON,
    _SCRIPT_VARIABLES,
    _SELF_MODULE,
    _SETTINGS_FILES,
    _SUBSCRIPT_CODE,
    _VIM_INIT_VARIABLES,
    COMMAND_TABLES,
    code_prefix,
    is_code_variable,
    sets_git_config,
    special_variable,
)
from .words import _Word, brace_group, is_glob


def shell(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None) -> None:
    i = 0
    inline = False
    from_input = False
    while i < len(args):
        v = args[i].value
        if v is None:
            break
        if v in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            option = args[i + 1].value if i + 1 < len(args) else ""
            if (v, option) in (("-o", "keyword"), ("-o", None)):  # `bash -o keyword -c CODE`
                ctx.report.keyword_mode()
            if (v, option) in (("-O", "expand_aliases"), ("-o", "posix"), ("-O", None), ("-o", None)):
                aliases_on(ctx, name)  # a shell that may stay (`exec bash -O expand_aliases`) expands them
            if v == "-O" and (option is None or _may_name(option, "cdable_vars")):  # `cd NAME` may be `cd $NAME`
                ctx.report.cdpath, ctx.report.cdpaths = True, [ANYWHERE]
            if v in ("--rcfile", "--init-file"):  # read as `bash x.sh` is (a red team, 2026-12-05: ran unjudged)
                run_script(ctx, name, args[i + 1] if i + 1 < len(args) else _Word(None, v, "*"), "shell")
            i += 2
            continue
        if v == "--posix":
            aliases_on(ctx, name)
        if v == "--":
            i += 1
            break
        if v.startswith("--") or (v[:1] in "-+" and len(v) > 1):
            if v[:2] != "--" and v[0] == "-" and "k" in v[1:]:  # `bash -k -c CODE`: keyword mode
                ctx.report.keyword_mode()
            if not v.startswith("--") and "c" in v[1:]:
                inline = True
            if not v.startswith("--") and "s" in v[1:]:
                from_input = True  # `-s`: the commands come from its input, the words are arguments
            i += 1
            continue
        break
    rest = args[i:]
    reads_input = (from_input and not inline) or not (inline or (rest and rest[0].value not in _STDIN_FILES))
    if reads_input and stdin is None and name in _ALIASING_SHELLS:
        aliases_on(ctx, name)  # `exec sh` in the session: later calls are read by a shell that expands aliases
    if from_input and not inline:
        stdin_code(ctx, name, stdin, shell=True)
        return
    if inline:
        if not rest:
            ctx.add(D, "cannot tell what runs: {name} -c without a command", name=name)
        else:
            ctx.code_words(rest[:1], f"{name} -c")
        return
    if rest and rest[0].value not in _STDIN_FILES:
        script = rest[0]
        if script.procsub or script.value is None:
            if _DOWNLOADS.search(script.source):
                runs_download(ctx, name)
            else:
                ctx.add(D, "cannot tell what runs: {name} runs the output of another command", name=name)
        else:
            run_script(ctx, name, script, "shell")
        return
    stdin_code(ctx, name, stdin, shell=True)


def stdin_code(ctx: Analysis, name: str, stdin: _Stdin | None, *, shell: bool) -> None:
    if stdin is None:
        ctx.add(
            M,
            "{name}: starts an interactive shell" if shell else "{name}: starts an interactive interpreter",
            name=name,
        )
    elif stdin.kind == "pipe":
        piped_commands(ctx, name, stdin)
    elif stdin.kind == "unknown" and (shell or not stdin.text):
        ctx.add(D, "cannot tell what runs: {name} reads {source}", name=name, source=stdin.source)
    elif stdin.kind == "file":  # `bash < x.sh`, `python3 < x.py`: the file is read like a script
        run_script(ctx, name, _Word(stdin.text, stdin.source, stdin.text), "shell" if shell else "program")
    elif shell:
        ctx.sub_script(stdin.text, name)
    else:
        inline_code(ctx, name, stdin.text)


def cmd_eval(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    if args:
        ctx.code_words(args, "eval")


def cmd_source(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    if not args:
        return
    ctx.report.sourced = True  # it may set PATH: which `pip` runs after it is not told (packages)
    script = args[0]
    if ctx.protected.guarding and not ctx.own_source and ctx.relation_of(script) == "inside":
        return  # `source ~/.bashrc`: the user's own file, only read (names_protected)
    if script.value in _STDIN_FILES:
        stdin_code(ctx, name, stdin, shell=True)
    elif script.procsub or script.value is None:
        if _DOWNLOADS.search(script.source):
            runs_download(ctx, name)
        else:
            ctx.add(D, "cannot tell what runs: {name} of another command's output", name=name)
    elif "/" not in script.value:  # bash looks for it on the PATH first, then in the folder
        found = sourced_from_path(ctx, script.value)
        run_script(ctx, name, script if found is None else _Word(found, script.source, found), "shell")
    else:
        run_script(ctx, name, script, "shell")


def sourced_from_path(ctx: Analysis, file: str) -> str | None:
    """The file `source NAME` reads from the PATH (this process's: commands get it with a few
    folders more), or None when none is there. Each place before it this user may write is listed
    with the scripts, so that an approval pins it absent too: one planted on the PATH after the
    prompt is refused (red team, 2026-12-04: a `lib.sh` in ~/.local/bin ran instead of the project's)."""
    before, found = looked_up(file, os.environ.get("PATH", ""))
    ctx.report.scripts.extend(before)
    return found


def cmd_trap(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    options, i = _split_options(args)
    if len(args) - i >= 2 and args[i].value != "-":
        ctx.report.repeating += 1  # it runs as often as its signal comes (DEBUG: before each command)
        try:
            ctx.code_words(args[i : i + 1], "trap")
        finally:
            ctx.report.repeating -= 1


def cmd_alias(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """Its value is judged, and remembered: a later command named after it in the same command line
    is judged as the value too (`alias zap=rm` then `zap -rf DIR`; see `aliases_on`)."""
    for a in args:
        if a.value is None:
            ctx.add(D, "cannot tell what runs: alias of an expansion")
        elif "=" in a.value:
            alias, value = a.value.split("=", 1)
            ctx.sub_script(value, "alias")
            ctx.report.aliases[alias] = value


# Shells that expand aliases where no terminal is (bash does only in POSIX mode): dash, zsh, ksh...
_ALIASING_SHELLS = frozenset({"sh", "dash", "ash", "zsh", "ksh", "mksh", "pdksh", "yash", "posh"})


# PowerShell's options that take a value (and their short forms).
_POWERSHELL_VALUES = frozenset({
    "-executionpolicy", "-ep", "-ex", "-windowstyle", "-w", "-workingdirectory", "-wd", "-outputformat", "-o",
    "-of", "-inputformat", "-inp", "-if", "-version", "-v", "-configurationname", "-config", "-psconsolefile",
    "-settingsfile", "-settings", "-custompipename", "-configurationfile",
})  # fmt: skip


def _encoded(option: str) -> bool:
    """PowerShell's -EncodedCommand (or -EncodedArguments) in any spelling it takes: `-e`, `-ec`, or a
    prefix from `-en` (`-ExecutionPolicy`, which also starts with -e, is not one)."""
    spelled = "-" + option.lstrip("-/")
    full = ("-encodedcommand", "-encodedarguments")
    return spelled in ("-e", "-ec", "-ea") or (len(spelled) >= 3 and any(f.startswith(spelled) for f in full))


def aliases_on(ctx: Analysis, name: str) -> None:
    """Aliases, off where bash runs a command line, are turned on (`shopt -s expand_aliases`, POSIX
    mode): from then on, in this session, `zap -rf DIR` may be `rm -rf DIR` (red team, 2026-12-04:
    `alias zap=rm` in one call, `zap -rf D` in a later one, judged alone, deleted D)."""
    ctx.add(D, ALIASES_ON, name=name)


def _may_name(value: str, option: str) -> bool:
    """Whether an option's operand may be `option`: a glob bash expands to it (`expand_alias[e]s`
    with a file of that name: a red team, 2026-12-05, turned aliases on so)."""
    return value == option or (is_glob(value) and fnmatch.fnmatchcase(option, value))


# shopt options a session may turn on or off and its later commands, judged alone, are still read
# right: how globs match (the classifier takes a glob for any name it may match, app folders by their
# case-folded spelling), errors, history and the terminal's size. Any other (`cdable_vars`: `cd docs`
# goes to $docs, shown as ./docs; `sourcepath`, `xpg_echo`, `extdebug`, `globskipdots` off: `.*`
# matches `..`), on or off, changes what a later command does: it lasts (a red team, 2026-12-05).
_HARMLESS_SHOPT = frozenset(
    {"globstar", "extglob", "nullglob", "dotglob", "nocaseglob", "failglob", "globasciiranges", "nocasematch",
     "lastpipe", "inherit_errexit", "checkwinsize", "histappend", "cmdhist", "lithist",
     "shift_verbose", "gnu_errfmt", "checkjobs", "huponexit"}
)  # fmt: skip


def cmd_shopt(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`shopt -s expand_aliases` (or `-so posix`) turns aliases on, `shopt -so keyword` keyword mode
    (`_Report.keyword_mode`); the rest set how bash matches and shows things, and those not known to
    be harmless (`_HARMLESS_SHOPT`) last in the session."""
    sets = posix = changes = False
    for a in args:
        v = a.value
        if v is None:  # `shopt -s "$opt"`, `shopt "$o" expand_aliases`, `shopt $OPTS`: cannot tell which
            ctx.report.keyword_mode()
            aliases_on(ctx, name)
            return
        if v.startswith("-") and len(v) > 1:
            sets = sets or "s" in v
            changes = changes or bool({"s", "u"} & set(v))
            posix = posix or "o" in v
        elif sets and posix and _may_name(v, "keyword"):
            ctx.report.keyword_mode()
        elif sets and not posix and _may_name(v, "cdable_vars"):  # `cd NAME` may then be `cd $NAME`
            ctx.report.cdpath, ctx.report.cdpaths = True, [ANYWHERE]
        if changes and not posix and not v.startswith("-") and v not in _HARMLESS_SHOPT:  # `-o`: set's options
            ctx.lasts(f"sets the shell option {v}")
        if sets and not v.startswith("-") and (_may_name(v, "expand_aliases") or (posix and _may_name(v, "posix"))):
            aliases_on(ctx, name)
            return


def cmd_set(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`set -o posix` turns aliases on (POSIX mode expands them in scripts), `set -k` (`-o keyword`)
    makes NAME=value words anywhere in a command its environment (`_Report.keyword_mode`); other
    options change how errors and expansions behave."""
    i = 0
    while i < len(args):
        v = args[i].value
        if v is None:  # `set "$opt"`, `set -$flags`: it may be any option
            ctx.report.keyword_mode()
            return
        if v in ("--", "-") or v[:1] not in "-+" or len(v) < 2 or v.startswith(("--", "++")):
            return
        on = v.startswith("-")
        if on and "k" in v[1:]:
            ctx.report.keyword_mode()
        if "o" in v[1:]:  # its value is the next word
            i += 1
            following = args[i].value if i < len(args) else ""
            if on and (following is None or _may_name(following, "keyword")):
                ctx.report.keyword_mode()
            if on and (following is None or _may_name(following, "posix")):
                aliases_on(ctx, name)
                return
        i += 1


def cmd_hash(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`hash -p FILE NAME` makes NAME run FILE from then on (`hash -p /bin/rm ls; ls -rf ~/x`, review
    2026-12-04); listing or forgetting (`hash`, `hash -r`) changes nothing that runs."""
    if any(a.value is None or (a.value.startswith("-") and "p" in a.value) for a in args):
        ctx.add(D, "cannot tell what runs: hash -p makes a name run another program")


def python_m(ctx: Analysis, name: str, module: _Word | None, rest: list[_Word], stdin: _Stdin | None = None) -> None:
    """`python -m MODULE`: one in the command's folder is what runs (python puts it first), read as
    a script is, and listed so that one the command line writes first is held; `timeit` runs its
    words as Python, `venv --clear` empties the folder (fifth red team, 2026-12-04); `code` runs its
    input as the interpreter does (`python3 -m code < x.py`: a red team, 2026-12-05)."""
    value = None if module is None else module.value
    if value == "code" and stdin is not None:
        stdin_code(ctx, name, stdin, shell=False)
    if value == "timeit":
        code = [w.literal for w in rest]
        inline_code(ctx, f"{name} -m timeit", None if None in code else "\n".join(c for c in code if c))
        return
    if value in ("venv", "virtualenv") and any(w.value == "--clear" for w in rest):
        ctx.add(D, "{name} -m venv --clear: deletes what the folder holds", name=name, danger=Danger.LOSES_FILES)
    own = value is not None and _SELF_MODULE.match(value)  # Cowork Terminal itself, wherever it is found
    if value is not None and not own and re.fullmatch(r"\w+(?:\.\w+)*", value) and ctx.cwd is not None:
        here = posixpath.join(ctx.cwd, *value.split("."))
        found = [p for p in (f"{here}.py", f"{here}/__init__.py", f"{here}/__main__.py") if os.path.isfile(p)]
        for path in found:  # a package runs its __init__ too (`python3 -m pip` with ./pip/: second pass)
            run_script(ctx, name, _Word(path, path, path), "program")
        if found:
            return
        runs_project_files(ctx, [f"{here}.py"])
    python_module(ctx, name, module, rest)


def local_imports(ctx: Analysis, name: str, code: str | None) -> None:
    """`python3 -c 'import x'` imports the command's folder's x.py first: read as a script is
    (second pass of the fifth red team)."""
    if code is None or ctx.cwd is None:
        return
    modules = re.findall(r"(?:^|[;\s])import\s+([\w.]+)", code)
    for package, names in re.findall(r"(?:^|[;\s])from\s+([\w.]+)\s+import\s+([\w ,]+)", code):
        modules += [package] + [f"{package}.{n.strip()}" for n in names.split(",") if n.strip()]
    for module in dict.fromkeys(modules):  # `import a.b`: a/__init__.py, then a/b.py or a/b/__init__.py
        parts = module.split(".")
        for k in range(1, len(parts) + 1):
            here = posixpath.join(ctx.cwd, *parts[:k])
            for path in (f"{here}.py", f"{here}/__init__.py"):
                if os.path.isfile(path):
                    run_script(ctx, name, _Word(path, path, path), "program")


def cmd_mapfile(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`mapfile -C CALLBACK`: bash runs `CALLBACK INDEX 'LINE'` as code for the lines it reads
    (`readarray -C eval -c 1 a <<< ';rm -rf DIR'` ran rm: fifth red team)."""
    for _option, callback in option_values(args, ["-C"], "dnOsuCc"):
        typed = typed_text(ctx, name, stdin)
        lines = [] if typed is None else typed.splitlines()
        said = callback.literal
        if said is not None:  # each line runs the callback's words again: bounded as a guess's words are
            ctx.report.probed_words += len(lines) * len(said.split())
        nested = said is not None and re.search(r"\b(?:mapfile|readarray)\b", said)  # they multiply: held
        if said is None:
            ctx.add(D, "cannot tell what runs: {name} code from an expansion", name=name)
        elif typed is None or nested or len(lines) > MAX_CALLBACK_LINES or ctx.report.probed_words > MAX_PROBED_WORDS:
            ctx.add(D, "cannot tell what runs: {name} reads its commands from a pipe", name=name)
        else:
            calls = [f"{said} 0 {shlex.quote(line)}" for line in lines]
            ctx.sub_script("\n".join(calls), f"{name} -C")


MAX_CALLBACK_LINES = 50  # lines of a mapfile -C judged one by one; more are held
# node's options that take the next word as their value (a preloaded module, a condition, a file of
# settings): the script it runs is the first word that is none of them
_NODE_VALUES = frozenset({
    "-r", "--require", "--import", "--loader", "--experimental-loader", "-C", "--conditions", "--env-file",
    "--env-file-if-exists", "--input-type", "--title", "--inspect-port", "--debug-port", "--inspect-publish-uid",
    "--watch-path", "--test-name-pattern", "--test-skip-pattern", "--test-reporter", "--test-reporter-destination",
    "--test-concurrency", "--test-shard", "--test-timeout", "--disable-warning", "--disable-proto",
    "--redirect-warnings", "--icu-data-dir", "--openssl-config", "--unhandled-rejections", "--diagnostic-dir",
    "--report-dir", "--report-directory", "--report-filename", "--report-signal", "--heapsnapshot-signal",
    "--heapsnapshot-near-heap-limit", "--cpu-prof-dir", "--cpu-prof-name", "--cpu-prof-interval", "--heap-prof-dir",
    "--heap-prof-name", "--heap-prof-interval", "--secure-heap", "--secure-heap-min", "--max-http-header-size",
    "--dns-result-order", "--trace-event-categories", "--trace-event-file-pattern", "--trace-require-module",
    "--tls-cipher-list", "--tls-keylog", "--use-largepages", "--experimental-default-type", "--experimental-policy",
    "--policy-integrity", "--allow-fs-read", "--allow-fs-write", "--localstorage-file",
})  # fmt: skip


def interpreter(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None) -> None:
    python = bool(_PYTHON.match(name))
    perl = bool(_PERL.match(name))
    flags = _INLINE_CODE_FLAGS.get(name, frozenset())
    i = 0
    while i < len(args):
        a = args[i]
        v = a.value
        if v is None and a.procsub:  # `python3 <(curl ...)`: the code is another command's output
            if _DOWNLOADS.search(a.source):
                runs_download(ctx, name)
            else:
                ctx.add(D, "cannot tell what runs: {name} runs the output of another command", name=name)
            return
        if v is None:
            ctx.add(D, "cannot tell what runs: {name} with arguments from an expansion", name=name)
            return
        lowered = v.casefold()
        if python and v.startswith("-") and not v.startswith("--") and len(v) > 1:
            # a cluster of short options: -c and -m take the rest of it or the next word, -W/-X a value
            cluster = v[1:]
            k = next((k for k, ch in enumerate(cluster) if ch in "cmWX"), len(cluster))
            attached = cluster[k + 1 :]
            if k < len(cluster) and cluster[k] == "c":
                following = args[i + 1].literal if i + 1 < len(args) else ""
                inline_code(ctx, name, attached or following)
                local_imports(ctx, name, attached or following)
                return
            if k < len(cluster) and cluster[k] == "m":
                if attached:
                    python_m(ctx, name, _Word(attached, a.source, attached), args[i + 1 :], stdin)
                else:
                    python_m(ctx, name, args[i + 1] if i + 1 < len(args) else None, args[i + 2 :], stdin)
                return
            i += 2 if k < len(cluster) and not attached else 1
            continue
        if perl and v.startswith("-") and not v.startswith("--"):
            # a cluster (-ne, -pi): -e/-E take the code; -M, -I, -i... take the rest of the cluster as a value
            cluster = v[1:]
            k = next((k for k, ch in enumerate(cluster) if ch in "eEMmIixdDlC0"), len(cluster))
            if k < len(cluster) and cluster[k] in "eE":
                following = args[i + 1].literal if i + 1 < len(args) else ""
                inline_code(ctx, name, cluster[k + 1 :] or following)
                return
        flag, equals, joined = lowered.partition("=")
        if equals and flag in flags and flag.startswith("--"):  # `node --eval='...'` (fourth red team)
            inline_code(ctx, name, v.partition("=")[2])
            return
        if lowered in flags:
            rest = args[i + 1 :] if name in ("cmd", "pwsh", "powershell") else args[i + 1 : i + 2]
            literal = [w.literal for w in rest]
            code = None if any(x is None for x in literal) else " ".join(x for x in literal if x)
            if code == "-" and name != "cmd":  # `... | powershell -Command -`: the code comes from its input
                break
            inline_code(ctx, name, code)
            if name == "cmd" and code is not None:  # its commands, as cmd runs them (cmdline.py)
                cmd_code(ctx, code, f"{name} {lowered}")
            return
        if name in ("pwsh", "powershell") and _encoded(lowered):
            ctx.add(D, "cannot tell what runs: {name} with encoded code", name=name)
            return
        if name in ("pwsh", "powershell") and "-" + lowered.lstrip("-/") in _POWERSHELL_VALUES:
            i += 2  # `-ExecutionPolicy Bypass -File x.ps1`: the value is not the script
            continue
        if name in ("node", "nodejs") and lowered in _NODE_VALUES:
            i += 2  # `node -r dotenv/config app.js`: the module preloaded (indirect.node_preloads) is not the script
            continue
        if v.startswith("-") and v != "-":
            i += 1
            continue
        if v in _STDIN_FILES:
            break
        run_script(ctx, name, a, "program")
        return
    stdin_code(ctx, name, stdin, shell=False)


def cmd_cd(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """Follow `cd` within one command line, so `cd ~/x && rm y` is checked as ~/x/y."""
    operands = _operands(args)
    stack = ctx.pushed  # pushd's folders, as far as they are told here
    if name == "pushd" and operands and not re.fullmatch(r"[+-]\d+", operands[0].value or ""):
        stack.append(ctx.cwd)
        ctx.cwd = move_to(ctx, operands[0], name)
    elif name == "popd" and stack and not operands:
        ctx.cwd = stack.pop()  # a folder it was in: one of the places already
    elif name in ("pushd", "popd"):  # swapped or rotated, or popped past what is told here
        ctx.cwd = None
        ctx.report.lost = ctx.report.lost or _snip(" ".join([name, *(a.source for a in args)]))
    else:
        ctx.cwd = move_to(ctx, operands[0], name) if operands else move_to(ctx, _Word(ctx.home, "~", ctx.home), name)


def move_to(ctx: Analysis, word: _Word, what: str) -> str | None:
    """Where `cd WORD` (`env -C WORD`) leads from the folder analysed (`folder_after`), with each
    folder it may lead to from any the shell may be in kept for project_settings.judge. A `cd` that
    only bash can resolve (`cd "$X"`, `cd -`; `cd NAME` once CDPATH is set; a relative one that may
    run again, in a loop) loses the folder: where the shell is cannot be told from then on, and no
    place is added. Each `cd` may fail, so the places may double with each: past MAX_PLACES the
    folder is lost too (a review, 2026-12-05: eighteen `cd`s took 8 s to judge, each adding a real
    folder for every place). A target with `..` is kept as bash's `cd -P` (`set -P`, or a plain `cd`
    whose logical folder does not exist) resolves it too: `link/..` is the folder above the one
    `link` leads to, not the one `link` is in (a review, 2026-12-05). Real folders: in judge."""
    report, target = ctx.report, cd_target(word)
    relative = target is not None and not re.match(r"^/|^[A-Za-z]:[/\\]", target)
    into = _lost_into(ctx, word, target, relative)
    if report.lost is not None:
        return into or folder_after(ctx, word)
    if target is None and _TOP_LEVEL.fullmatch(word.source):  # the top of the repository it is in
        tops = [work_top(place) for place in report.places]
        if None not in tops and len({*report.places, *tops}) <= MAX_PLACES:
            report.places.update(dict.fromkeys(top for top in tops if top is not None))
            return None
    if (
        target is None
        or (relative and report.repeating)
        or (relative and report.cdpath and (target or ".").split("/")[0] not in (".", ".."))
    ):
        report.lost = _snip(f"{what} {word.source}".strip())
        if into is not None:
            return into
    else:
        target = target.replace("\\", "/")
        physical = ".." in target.split("/")  # without `..`, bash's two ways lead to the same folder
        added: dict[str, None] = {}
        for base in list(report.places) if relative else [""]:
            joined = posixpath.join(base, target)
            for folder in [posixpath.normpath(joined)] + ([os.path.realpath(joined).replace("\\", "/")] * physical):
                if folder not in report.places:
                    added[folder] = None
            if len(report.places) + len(added) > MAX_PLACES:
                report.lost = _snip(f"{what} {word.source}".strip())
                break
        else:
            report.places.update(added)
    return folder_after(ctx, word)


_TOP_LEVEL = re.compile(r'"?(?:\$\(|`)\s*git\s+rev-parse\s+--show-toplevel\s*(?:\)|`)"?')


def _lost_into(ctx: Analysis, word: _Word, target: str | None, relative: bool) -> str | None:
    """Where no container guards the protected set (names_protected), the folder a lost `cd` may
    lead into, as a pattern, when it may be one of the set or above one: a glob or an expansion
    (`cd ~/.config/auto*`), a name CDPATH may find (`CDPATH=~/.config cd autostart`). Relative
    names written after it are then judged there (a red team: `echo ... > evil.desktop` made an
    autostart entry). None elsewhere: `CDPATH=~/code cd site`, `cd src/*` stay as lost as before."""
    if not ctx.protected.guarding or word.pattern == "-":
        return None
    if target is None and ("*" in word.pattern or word.glob):
        pattern = word.pattern.replace("\\", "/")
        if not re.search(r"[$`]", word.source):  # globs alone: bash's dotglob off (`cd ~/*/` is no ~/.config)
            pattern = "/".join(_NO_DOT.sub(lambda m: "[!.]" + m[0].replace("?", ""), p) for p in pattern.split("/"))
        if not re.match(r"^/|^[A-Za-z]:/|^\*", pattern):
            pattern = posixpath.join(ctx.cwd if ctx.cwd is not None else "*", pattern)
        places = [pattern]
    elif relative and target is not None and ctx.report.cdpath and target.split("/")[0] not in (".", ".."):
        if ANYWHERE in ctx.report.cdpaths:  # any member: two stand for all, each relative name written is in them
            # as patterns (`/home/ann/.bashr[c]`): a name only read there is no member's (written_into)
            some = [f"{m[:-1]}[{m[-1]}]" if m[-1].isalnum() else m for m in sorted(ctx.protected.named)[:2]]
            return "{" + ",".join(some * (3 - len(some))) + "}" if some else None
        places = [posixpath.join(folder, target.replace("\\", "/")) for folder in ctx.report.cdpaths]
    else:
        return None
    found = [p for p in places if ctx.protected.relation(_Word(None, p, p, glob=True)) in ("inside", "above")]
    if len(found) > 1:  # `CDPATH=~/.config:~/.local/share cd fish`: either, as a brace pattern
        return "{" + ",".join(dict.fromkeys(found)) + "}"
    return found[0] if found else None


# A glob's part that does not start with a dot: matches no name that does (bash's dotglob off).
_NO_DOT = re.compile(r"^(?:\*|\?)")
# In report.cdpaths: `cd NAME` may lead to any folder (a CDPATH an expansion makes, `shopt -s
# cdable_vars`: `cd HOME` is `cd $HOME`). CDPATH from the user's own environment is not seen here.
ANYWHERE = "*"


def cdpath_folders(ctx: Analysis, value: _Word) -> list[str]:
    """CDPATH's folders, as patterns: `~` at the start of each is the home folder (bash expands it
    after each `:` of an assignment), a drive's `C:` stays with its path; `ANYWHERE` alone where an
    expansion makes one (`CDPATH=$C`, `CDPATH=$(echo ~/.config)`: a review, 2026-12-06)."""
    folders = []
    for folder in re.findall(r"(?:[A-Za-z]:(?=[/\\]))?[^:]+", value.pattern):
        folder = folder.replace("\\", "/")
        if "*" in folder:
            return [ANYWHERE]
        if folder == "~" or folder.startswith("~/"):
            folder = ctx.home + folder[1:]
        if not re.match(r"^/|^[A-Za-z]:/|^\*", folder):
            folder = posixpath.join(ctx.cwd if ctx.cwd is not None else "*", folder)
        folders.append(folder)
    return folders


def cd_target(word: _Word) -> str | None:
    """The folder `cd WORD` names, None when only bash can tell (`cd "$X"`, `cd -`)."""
    target = word.literal
    if target is None and not word.glob and "*" not in word.pattern:
        target = word.pattern  # `cd $HOME/.config`: only the home folder was expanded
    return None if target == "-" else target


def folder_after(ctx: Analysis, word: _Word) -> str | None:
    """Where `cd WORD` (or `env -C WORD`) leads from the folder analysed; None when it cannot be told."""
    target = cd_target(word)
    if target is None:
        return None
    if target.startswith("/") or re.match(r"^[A-Za-z]:[/\\]", target):
        return posixpath.normpath(target.replace("\\", "/"))
    if ctx.cwd is not None:
        return posixpath.normpath(posixpath.join(ctx.cwd, target))
    return None


def cmd_shell(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """A shell: `-c` code, a script file, or commands from its input."""
    shell(ctx, name, args, stdin)


def cmd_interpreter(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """Python, Perl, node, ruby...: inline code, a module, a program file, or code from its input."""
    interpreter(ctx, name, args, stdin)


def variable_set(ctx: Analysis, name: str, value: _Word, *, lasting: bool = True) -> None:
    """`NAME=VALUE`, alone, before a command or given to env: a value run as code is judged as that
    code (`GIT_EDITOR=...`), a script it names by what the script says (`BASH_ENV=./x.sh`,
    `GIT_SSH=./x`: both ran `rm` judged moderate, 2026-12-04); git's configuration cannot be told;
    the others change how later commands run (`lasting`), or, before a command, that command's."""
    base = name.split("[")[0]
    ctx.report.variables.add(base)
    ctx.report.forget(base)  # its value known only as analyzer.assignment records it, after this
    if value.literal is not None and value.literal.isidentifier():
        ctx.report.forget(value.literal)  # `declare -n r=depth`: setting r sets depth
    ctx.report.cdpath = ctx.report.cdpath or base == "CDPATH"  # `export CD''PATH=...`: `cd NAME` may lead elsewhere
    if base == "CDPATH" and ANYWHERE not in ctx.report.cdpaths:  # cdable_vars, once set, stays
        ctx.report.cdpaths = cdpath_folders(ctx, value)
    if base == "SHELLOPTS" and (value.literal is None or "keyword" in value.literal):
        ctx.report.keyword_mode()  # `env SHELLOPTS=keyword bash -c CODE`: the bash it starts is in keyword mode
    if base in COMMAND_TABLES:
        # bash's command and alias tables: `BASH_CMDS[ls]=/bin/rm` makes `ls` run rm (review, 2026-12-04)
        ctx.add(D, "cannot tell what runs: {value} makes a name run another program", value=name)
    if sets_git_config(name, value.literal):
        ctx.add(D, "cannot tell what runs: {value} sets git's configuration", value=name)
    elif special_variable(base) and lasting:
        ctx.add(M, "sets {value}: changes how later commands run", value=name)
        if base == "IFS":  # the session's later commands, judged alone, split words where bash does not
            ctx.lasts("sets IFS", unless_subshell=True)  # (red team, 2026-12-05: `IFS=:`, then `find -name $f`)
    elif special_variable(base):  # `PATH=./bin:$PATH jest`: for jest alone (a session's next commands keep theirs)
        ctx.add(M, "sets {value}: changes how the command after it runs", value=name)
    if base in _LOADS_LIBRARIES and value.value != "" and foreign_library(ctx, value):  # `LD_PRELOAD=./x.so ls`
        ctx.add(D, LOADS_LIBRARY, name=name, value=_snip(value.source if value.literal is None else value.literal))
    if base in MAKE_FLAGS_VARIABLES and value.literal:
        make_flags(ctx, base, value.literal)
    prefix = code_prefix(name, value.literal) if name in _CODE_VARIABLES else None
    if prefix is not None:
        ctx.code_words([value], name, prefix)
    if name.startswith("BASH_FUNC_"):  # `env 'BASH_FUNC_ls%%=() { rm -rf DIR; }' bash -c ls`: a function
        if value.literal is None:
            ctx.add(D, "cannot tell what runs: {name} code from an expansion", name=name)
        elif value.literal.startswith("()"):
            ctx.sub_script("f" + value.literal, name)
    elif base in _PROMPTS or _SUBSCRIPT_CODE.search(value.literal or ""):
        ctx.later_expanded(value.literal or "")  # shown, a prompt runs it; `x='a[$(rm ...)]'`: so does `$((x))`
    how = _SCRIPT_VARIABLES.get(name)
    relative = value.value not in ("", None) and not value.value.startswith("/")
    if how is not None and relative and (how == "shell" or "/" in (value.value or "")):  # GIT_SSH=plink: by name
        # bash reads BASH_ENV where each later bash starts (`env -C sub`, `cd sub; bash -c`), not here
        ctx.add(D, "cannot tell what runs: {name} runs {value}, a script in a folder not known here", name=name,
                value=_snip(value.value or ""))  # fmt: skip
    elif how is not None and value.value != "":
        path = None if value.value is None else script_path(ctx.cwd, value.value)
        by_name = value.value is not None and "/" not in value.value  # GIT_SSH=plink: found on PATH
        if how == "shell" or value.value is None or not (by_name or (path and installed_program(path))):
            run_script(ctx, name, value, how)  # GIT_SSH=/usr/bin/ssh: a program, by its name
    other_settings(ctx, name, value)


def foreign_library(ctx: Analysis, value: _Word) -> bool:
    """Whether a value may name a library that is not installed software (a red team, 2026-12-05:
    `LD_PRELOAD=./x.so ls` ran x.so's code, judged moderate, where `./a.out` is held): an expansion, a
    path outside the system's folders (one the agent may have compiled), or a name alone, which the
    loader (or bash's `enable -f`) looks for in folders a variable may name, `.` too."""
    if value.literal is None:
        return True
    for library in re.split(r"[\s:]+", value.literal):
        path = script_path(ctx.cwd, library) if "/" in library else None
        if library and (path is None or not installed_program(path)):
            return True
    return False


def sets_any_variable(ctx: Analysis, source: str, value: str | None) -> None:
    """A variable whose name is only known when it runs (`declare "$v=/tmp"`, `read "${v}ATH"`,
    `printf -v "$v" ...`): it may be PATH, LD_PRELOAD or BASH_ENV, so it is judged as setting one
    (a review, 2026-12-05: `v=PA; v+=TH; declare "$v=/tmp"` was safe). `value`: what it is set to,
    None when that is only known when it runs too."""
    ctx.report.variables.add("*")
    if value is None:
        ctx.add(D, "cannot tell what runs: {source} may set any variable, to a value only known when it runs",
                source=_snip(source))  # fmt: skip
        return
    ctx.add(M, "sets {value}: changes how later commands run", value=_snip(source))
    ctx.later_expanded(value)  # a prompt's `$(...)` (PS4 under `set -x`)


# `NAME=VALUE` as a word of `export`, `declare`...: bash takes it for an assignment once quotes are gone
DECLARED = re.compile(r"([A-Za-z_]\w*)(?:\[[^\]]*\])?\+?=(.*)", re.S)
MAX_DECLARED_WORDS = 64  # words one brace expression of a declaration makes; more stay one word


def declaration_words(word: _Word) -> list[_Word]:
    """The words bash makes of a declaration's word: one that is no assignment as written is
    brace-expanded first (`export {PATH,X}=./bin` is `export PATH=./bin X=./bin`: a red team,
    2026-12-05, set PATH so, judged safe); an assignment's value is not (`export A=x{1,2}`)."""
    if DECLARED.match(word.pattern) or brace_group(word.pattern) is None:
        return [word]
    patterns = [word.pattern]
    while (at := next((k for k, p in enumerate(patterns) if brace_group(p) is not None), None)) is not None:
        found = brace_group(patterns[at])
        if found is None or "," not in found[1] or len(patterns) > MAX_DECLARED_WORDS:
            return [word]  # `{a..z}`: left as it is
        p = patterns[at]
        patterns[at : at + 1] = [p[: found.start()] + a + p[found.end() :] for a in found[1].split(",")]
    return [_Word(None if word.value is None else p, word.source, p, is_glob(p)) for p in patterns if p]


def cmd_declare(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`builtin export PATH=/x`, `command declare "$v=/x"`: a declaration behind a wrapper, whose words
    the parser took for a plain command's; judged as bash sees them (the parser's own declarations:
    `_Analyzer.declared`)."""
    shows = nameref = False
    for a in [w for word in args for w in declaration_words(word)]:
        if a.value is not None and re.fullmatch(r"[-+]\w+", a.value):
            nameref = nameref or ("n" in a.value and a.value[0] == "-")
            shows = shows or bool({"p", "f", "F"} & set(a.value))  # `declare -p "$v"` only shows it
            continue
        found = DECLARED.match(a.pattern)
        if shows or (found is None and a.value is not None and not nameref):
            continue
        if found is None or (nameref and a.value is None):  # `export "$line"`, `declare -n p="$v"`
            sets_any_variable(ctx, a.source, "" if nameref else None)
        elif nameref and found[2].split("[")[0] in COMMAND_TABLES:  # a later `r[ls]=./x` sets BASH_CMDS[ls]
            variable_set(ctx, found[2], _Word(None, a.source, "*"))
        elif nameref and (special_variable(found[2]) or is_code_variable(found[2])):
            ctx.add(M, "sets {value}: changes how later commands run", value=found[2])
        elif not nameref:
            variable_set(ctx, found[1], _Word(found[2] if a.value is not None else None, a.source, found[2]))


def other_settings(ctx: Analysis, name: str, value: _Word) -> None:
    """Variables that make a program run what another place says (fifth red team's second pass,
    2026-12-04): vim's start-up commands, tar's options, a file of settings or a module that can run
    commands (psql's, less's, node's `--require ./x.js`)."""
    literal = value.literal
    if name in _VIM_INIT_VARIABLES:
        vim_script(ctx, "vim", name, "" if literal is None else literal.replace("|", "\n"))
    elif name == "TAR_OPTIONS":  # tar splits it as the shell would
        try:
            words = shlex.split(literal or "")
        except ValueError:
            words = (literal or "").split()
        judge_code_options(ctx, "tar", [_Word(w, w, w) for w in words], 0)
    elif name in _SETTINGS_FILES and literal not in ("", "/dev/null"):
        ctx.add(D, "cannot tell what runs: {value} names a file of settings that can run commands", value=name)
    elif name == "NODE_OPTIONS":  # `--require ./tracing.js`: the module it preloads, read as a script is
        for module in _NODE_LOADS.findall(value.source):
            run_script(ctx, "node", _Word(module, module, module), "program")
    elif _BUS_ADDRESS.fullmatch(name) and (literal is None or "unixexec" in literal.lower()):
        # D-Bus's `unixexec:` address runs the program it names to reach the bus (a red team, 2026-12-05:
        # `systemctl --user is-active x` ran `rm -rf`), each argument %-escaped: not read here.
        ctx.add(D, "cannot tell what runs: {value} names a program to run as the message bus", value=name)


_BUS_ADDRESS = re.compile(r"DBUS_(?:SESSION|SYSTEM|STARTER)_BUS_ADDRESS")


# a module of the folder's (`--require ./x.js`); a package's name (`--import tsx`) is installed software
_NODE_LOADS = re.compile(
    r"(?:^|[\s'\"=])(?:-r|--require|--import|--loader|--experimental-loader)[=\s]+['\"]?(\.{0,2}/[^\s'\"]+)"
)
