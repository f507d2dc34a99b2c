"""Options whose value a program runs as code, whatever else its rule says (red team, 2026-12-04:
`tar --checkpoint-action=exec='rm -rf DIR'`, `zip -TT`, `gdb -ex 'shell ...'`, `strace -o '|...'`,
`man -P`, `rsync -e`, `vim -c '!...'`, `apt-get -o APT::Update::Pre-Invoke::=...` each ran rm while
judged safe or moderate). Options are read as getopt reads them: a long one by any unambiguous
prefix of three letters or more (not one that is an option of its own: dpkg's `--status`), a short
one in a cluster (`tar -cvI CMD`)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping
from typing import NamedTuple

from .code import inline_code
from .findings import LOADS_LIBRARY, D, _snip
from .handoff import hands_off, may_write
from .hosts import included_files, ssh_line, ssh_values
from .indirect import java_machine_option, node_preloads, perl_modules, python_module_runs
from .rule import Analysis
from .scripts import library_file, script_text
from .stdin import _Stdin
from .tables import _PERL, _PYTHON
from .words import _Word, _word_end


class _CodeOption(NamedTuple):
    option: str  # as written in full: `--to-command`, `-I`, `-ex` (gdb's one-dash long options), `+`
    lead: str = ""  # a regular expression for what starts the value before its code; no match: not code
    language: str = "bash"  # or "python", or "vim" (an Ex command: held unless it is `!` and bash)


# gdb's commands that are code (gdb_command): the rest runs in the shell, as Python, or is a file of commands
_GDB_SHELL = r"\s*(?:shell\b|shel\b|she\b|!|pipe\b|\|)"
_GDB_PYTHON = r"\s*(?:python\b|py\b|pi\b)"
_GDB_SOURCE = r"\s*so(?:u(?:r(?:ce?)?)?)?\s+(?:-[sv]\s+)*"  # `source [-s] [-v] FILE`: its commands run
# nvr (neovim-remote) takes vim's -c, run in a server (vim_remote)
VIM_NAMES = ("vim", "vi", "nvim", "ex", "view", "vimdiff", "gvim", "rvim", "evim", "gview", "rview", "vim.basic",
              "vim.tiny", "nvim-qt", "nvr")  # fmt: skip
_VIM = tuple(_CodeOption(option, "", "vim") for option in ("-c", "--cmd", "+"))
_APT_HOOK = r"[\w:-]*(?:(?:Pre|Post)-Invoke|Pre-Install-Pkgs)[\w:-]*="  # `-o APT::Update::Pre-Invoke::=CMD`

_CODE_OPTIONS: dict[str, tuple[_CodeOption, ...]] = {
    "tar": tuple(_CodeOption(o) for o in ("--to-command", "-I", "--use-compress-program", "--info-script", "-F",
                                          "--new-volume-script")) + (_CodeOption("--checkpoint-action", "exec="),),
    "zip": (_CodeOption("-TT"), _CodeOption("--unzip-command")),
    # `... | sort -S 1K --compress-program=sh`: its temporary files go through the program, so the
    # lines sorted ran as shell code (a review, 2026-12-05)
    "sort": (_CodeOption("--compress-program"),),
    "rsync": (_CodeOption("-e"), _CodeOption("--rsh"), _CodeOption("--rsync-path")),
    "man": (_CodeOption("-P"), _CodeOption("--pager")),
    "bat": (_CodeOption("--pager"),),
    "hyperfine": tuple(_CodeOption(o) for o in ("--prepare", "-p", "--cleanup", "-c", "--setup", "-s")),
    "strace": (_CodeOption("-o", r"[|!]"), _CodeOption("--output", r"[|!]")),
    "ltrace": (_CodeOption("-o", r"[|!]"), _CodeOption("--output", r"[|!]")),
    "dc": (_CodeOption("-e", r"[^!]*!"), _CodeOption("--expression", r"[^!]*!")),  # `!`: the rest of its line
    # `less '+!rm -rf DIR'`: a command less runs at start; `!` and `|` hand the rest to the shell
    **dict.fromkeys(("less", "more"), (_CodeOption("+", r"[^!|]*[!|]"),)),
    **dict.fromkeys(("apt", "apt-get"), (_CodeOption("-o", _APT_HOOK), _CodeOption("--option", _APT_HOOK))),
    "dpkg": tuple(_CodeOption(o) for o in ("--pre-invoke", "--post-invoke", "--status-logger")),
    "lldb": tuple(
        entry
        for option in ("-o", "--one-line", "-O", "--one-line-before-file", "-k", "--one-line-on-crash")
        for entry in (_CodeOption(option, r"\s*(?:platform\s+)?shell\b"), _CodeOption(option, r"\s*script\b", "python"))
    ),
    # `cargo --config "target.X.runner=['sh','-c','...']" run`: a program given as TOML, not readable here
    "cargo": (_CodeOption("--config", r"(?s).*\b(?:runner|rustc[-_]wrapper|linker)\b"),),
    **dict.fromkeys(VIM_NAMES, _VIM),
    # `emacs --batch --eval '(delete-directory "DIR" t)'`: Emacs Lisp, judged by the calls it names
    # (emacsclient's, every word of which is code with -e, by its rule: cmd_emacsclient)
    **dict.fromkeys(("emacs", "emacs-nox"), tuple(
        _CodeOption(option, "", "elisp") for option in ("--eval", "-eval", "--execute", "-execute"))),
}  # fmt: skip
# Options of their own that are also prefixes of a code option above: getopt takes them whole.
_OPTIONS_OF_THEIR_OWN = frozenset({"--status", "--checkpoint", "--exec-path", "--info"})
# Letters that take a value in the programs above (tar's -f, -C, -T; rsync's -B; ...): in a cluster,
# what follows one is its value, not another option.
_TAKES_VALUE = frozenset("fCTBbgNtuoOkwx")
# rg --pre PROGRAM runs PROGRAM on every file it searches: as `xargs PROGRAM` would.
_EACH_FILE = {"rg": ("--pre",)}
# Files of commands a program runs (`vim -S FILE`, `vim -u VIMRC`, `gdb -x FILE`), read and judged as
# its commands are; vim's -u also takes names that are not files.
_Reader = Callable[[Analysis, str, str, str], None]  # (ctx, name, what, the file's text)
_CODE_FILES: dict[str, tuple[tuple[str, ...], _Reader]] = {  # the readers are defined below
    **dict.fromkeys(VIM_NAMES, (("-S", "-u", "-U"), lambda *a: vim_script(*a))),
    **dict.fromkeys(("emacs", "emacs-nox"), (("--load", "-load", "--script", "-script"), lambda *a: code_text(*a))),
    **dict.fromkeys(("scp", "sftp"), (("-F",), lambda *a: ssh_config(*a))),  # ssh's configuration, as `ssh -F`
}
_EXACT_FILES = {"emacs": ("-l",), "emacs-nox": ("-l",)}  # one letter, not in a cluster (`-ex`)
# Options naming a file of settings that can run commands (a lesskey file can set LESSOPEN)
_SETTINGS_OPTIONS = {"less": ("--lesskey-src", "--lesskey-file", "-k")}
_LIBRARY_OPTIONS = frozenset({"-l", "--load", "-load"})  # emacs's: a library's name, or a file
MAX_INCLUDED = 20  # files one ssh Include pattern may name: more are held
_NOT_A_FILE = frozenset({"NONE", "NORC", "DEFAULTS", "NOPLUGIN", "-", "none", "/dev/null"})
# tar's letters that take a value, in its old style: b, C, f, F, g, H, I, K, L, N, T, V, X
_TAR_VALUES = frozenset("bCfFgHIKLNTVX")
# `:so FILE`, `:source! FILE`: the file's Ex commands run
_VIM_SOURCE = re.compile(r"\s*:?\s*so(?:u(?:r(?:ce?)?)?)?!?\s+(\S.*)")
# An Ex command that may start a program: `!`, `:r !`, `%!`, system(), an interpreter, a terminal.
_VIM_RUNS = re.compile(
    r"!|\b(?:system|systemlist|delete|libcall|job_start|term_start|call|function|funcref)\s*\(|"
    r"\b(?:set?|setl(?:ocal)?|setg(?:lobal)?)\s+(?:rtp|runtimepath|pp|packpath)\s*[+^-]?=|"
    r"\b(?:exe|execute|py3?|python3?|pyx|pythonx|lua|luado|perl|ruby|term|terminal)\b"
)
# `!rm -rf DIR`, `%!sort`, `r !cmd`, `w !cmd`: the rest is for the shell.
_VIM_SHELL = re.compile(r"\s*:?\s*(?:sil(?:ent)?!?\s*)?(?:[%.$\d,]*\s*(?:r(?:ead)?|w(?:rite)?)?\s*)?!")


# Compiled libraries a program is told to load (a red team, 2026-12-05: `ssh-keygen -D ./x.so`,
# `ssh-add -s ./x.so`, `openssl engine -pre SO_PATH:./x.so` ran a library's code): held, as a
# compiled program run by its path is. PKCS#11 and security key providers; ssh-add's the agent loads.
_LIBRARIES = {"ssh-keygen": ("-D", "-w"), "ssh-add": ("-s", "-S"), "ssh": ("-I",)}
_LIBRARY_LETTERS = {  # the letters of each that take a value, as getopt reads a cluster
    "ssh-keygen": "CDEFIMNOPRVYZabfgjmnrstwz",
    "ssh-add": "EehHMmsSt",
    "ssh": "BbcDEeFIiJLlmOoPpQRSWw",
}


def _judged() -> frozenset[str]:
    tables: tuple[Mapping[str, object], ...] = (_CODE_OPTIONS, _EACH_FILE, _CODE_FILES, _EXACT_FILES, _SETTINGS_OPTIONS)
    return frozenset(name for table in tables for name in table) | {"tar", "gdb", "java", "openssl"} | set(_LIBRARIES)


_JUDGED = _judged()  # the programs any table above names


def judge_code_options(ctx: Analysis, name: str, args: list[_Word], depth: int) -> None:
    """The code in `name`'s options, and in the files of code they name, judged as what runs it
    would run it."""
    if _PYTHON.match(name):
        python_module_runs(ctx, name, args)
    elif _PERL.match(name):
        perl_modules(ctx, name, args)
    elif name in ("node", "nodejs", "bun"):
        node_preloads(ctx, name, args)
    if name not in _JUDGED:  # most programs: nothing to look for (a pass over the words each, else)
        return
    if name == "gdb":
        gdb_commands(ctx, name, args, depth)
    elif name == "java":  # `java -XX:OnError=CMD`: what the Java machine runs
        for a in args:
            if (a.value or "").startswith(("-XX:On", "-agentpath:")):
                java_machine_option(ctx, name, a)
    elif name == "openssl" and (named := _openssl_library(args)) is not None:
        ctx.add(D, LOADS_LIBRARY, name=name, value=_snip(named))
    for option, library in option_values(args, list(_LIBRARIES.get(name, ())), _LIBRARY_LETTERS.get(name, "")):
        ctx.add(D, LOADS_LIBRARY, name=f"{name} {option}",
                value=_snip(library.value or library.source))  # fmt: skip
    if name == "tar":
        args = tar_new_style(args)
    for entry, word in _values(args, _CODE_OPTIONS.get(name, ())):
        _judge_value(ctx, name, entry, word)
    for _entry, word in _values(args, tuple(_CodeOption(o) for o in _EACH_FILE.get(name, ()))):
        ctx.argv([word], None, bulk=True, depth=depth + 1)
    for option, _file in option_values(args, list(_SETTINGS_OPTIONS.get(name, ())), "bhjkKoOpPtTxyz#"):
        ctx.add(D, "cannot tell what runs: {value} names a file of settings that can run commands", value=option)
    options, read = _CODE_FILES.get(name, ((), None))
    files = _values(args, tuple(_CodeOption(o) for o in options))
    exact = _EXACT_FILES.get(name, ())
    files += [(_CodeOption(a.value or ""), args[j + 1]) for j, a in enumerate(args[:-1]) if a.value in exact]
    for entry, word in files:
        if read is not None and entry.option in _LIBRARY_OPTIONS and "/" not in (word.value or "/"):
            here = library_file(ctx.cwd, word.value, ".el")  # `emacs -l ert`: one of Emacs's own, unless here
            word = _Word(here, here, here) if here is not None else word
            if here is None:
                continue
        if read is not None and word.value not in _NOT_A_FILE:
            code_file(ctx, name, f"{name} {entry.option}", word, read)


def _judge_value(ctx: Analysis, name: str, entry: _CodeOption, word: _Word) -> None:
    literal = word.literal
    if entry.language == "vim":
        vim_command(ctx, name, entry.option, word)
        return
    start = None if literal is None else re.match(entry.lead, literal)
    if literal is not None and start is None:
        return  # `gdb -ex 'break main'`, `strace -o out.txt`: not code
    code = word if start is None else _word_end(word, len(literal or "") - start.end())
    if entry.language in ("python", "elisp"):
        inline_code(ctx, f"{name} {entry.option}" + (" python" if entry.language == "python" else ""), code.literal)
    elif entry.language == "gdb":
        file = (code.literal or "").strip()
        code_file(ctx, name, f"{name} {entry.option}", _Word(file, file, file), gdb_script)
    else:
        ctx.code_words([code], f"{name} {entry.option}")


def code_file(ctx: Analysis, name: str, what: str, word: _Word, read: _Reader) -> None:
    """A file of commands `name` runs (`vim -S FILE`, `gdb -x FILE`, `:source FILE`), read and judged
    line by line by `read` (see scripts.script_text for what cannot be read)."""
    value = word.value
    if value is not None and value.startswith("~/"):
        word = _Word(ctx.home + value[1:], word.source, ctx.home + value[1:])
    found = script_text(ctx, name, word)
    if found is not None:
        read(ctx, name, what, found[1])


def vim_command(ctx: Analysis, name: str, option: str, word: _Word) -> None:
    """An Ex command given to vim: `!CMD` is judged as bash, `source FILE` by what the file says;
    anything else that may start a program (`%!`, `w !`, `call system(...)`, `py3 ...`) cannot be
    told; the rest (`+10`, `set nu`) is not code."""
    literal = word.literal
    shell = None if literal is None else _VIM_SHELL.match(literal)
    sourced = None if literal is None else _VIM_SOURCE.match(literal)
    if shell is not None:
        ctx.code_words([_word_end(word, len(literal or "") - shell.end())], f"{name} {option}")
    elif sourced is not None:
        file = sourced[1].strip()
        code_file(ctx, name, f"{name} {option}", _Word(file, file, file), vim_script)
    elif literal is None or _VIM_RUNS.search(literal):
        ctx.add(D, "cannot tell what runs: {name} {option} may start a program", name=name, option=option)


# What a running vim or nvim (a server: `--servername`, `--server`, nvr's) is told to do there, outside
# the container: keys typed into it, an expression evaluated, a screen attached to it; nvr's -c and
# -cc run an Ex command there (a red team, 2026-12-05). Files opened there (`--remote FILE`) are opened.
_VIM_REMOTE_RUNS = frozenset({"--remote-send", "--remote-expr", "--remote-ui"})
_VIM_LINE_END = re.compile(r"(?i)<(?:cr|enter|return|nl|c-m|c-j)>|[\r\n]")
_VIM_TO_NORMAL = re.compile(r"(?i)^(?:\s|<(?:esc|c-\\|c-n|c-c|c-\[)>)*")  # <Esc>, <C-\><C-N>: to Normal mode
_VIM_SYSTEM = re.compile(r"\bsystem(?:list)?\s*\(\s*(['\"])(.*?)\1")  # system("CMD") in an expression


def vim_remote(ctx: Analysis, name: str, args: list[_Word]) -> None:
    """A vim or nvr told to have a server do something: held, and what it runs judged (an Ex command
    typed after `:`, a `system("...")`); `+CMD` with files for the server runs there too."""
    if name == "nvr":  # a program no rule knew
        may_write(ctx, args)
    remote = name == "nvr"  # nvr opens its files in the server
    for k, a in enumerate(args):
        v = (a.value or "").casefold()  # vim reads these options in any case
        value = args[k + 1] if k + 1 < len(args) else None
        literal = value.literal if value is not None else None
        if v in _VIM_REMOTE_RUNS or (name == "nvr" and v in ("-c", "-cc")):
            hands_off(ctx, f"{name} {v}")
            if v == "--remote-send" and literal is not None:
                for line in _VIM_LINE_END.split(literal):
                    typed = _VIM_TO_NORMAL.sub("", line)
                    if typed.startswith(":"):
                        vim_command(ctx, name, v, _Word(typed[1:], typed[1:], typed[1:]))
            elif v == "--remote-expr" and literal is not None:
                for call in _VIM_SYSTEM.finditer(literal):
                    ctx.sub_script(call[2], f"{name} {v}")
            elif v == "-cc" and value is not None:  # -c is judged as vim's (_CODE_OPTIONS)
                vim_command(ctx, name, v, value)
        elif v.startswith("--remote"):
            remote = True
        elif remote and v.startswith("+") and not (v[1:].isdigit() or v == "+"):  # `+12`: to line 12
            hands_off(ctx, f"{name} --remote +")


# emacsclient reads its options as getopt_long_only does (`-eval` is --eval); those taking a value
_EMACSCLIENT_LONG = {"no-wait": False, "quiet": False, "suppress-output": False, "eval": False, "help": False,
                     "version": False, "tty": False, "nw": False, "create-frame": False, "reuse-frame": False,
                     "alternate-editor": True, "frame-parameters": True, "socket-name": True, "server-file": True,
                     "display": True, "parent-id": True, "tramp": True, "timeout": True}  # fmt: skip
_EMACSCLIENT_VALUES = frozenset("asfdFwT")


def _emacsclient_words(args: list[_Word]) -> tuple[bool, list[_Word]]:
    """Whether emacsclient is told to evaluate (-e, --eval, -ne...), and its operands: then each is
    an expression."""
    evaluates, operands, skip, ended = False, [], False, False
    for a in args:
        v = a.value
        if skip:
            skip = False
            continue
        if ended or v is None or not v.startswith("-") or v == "-":
            operands.append(a)
            continue
        if v == "--":
            ended = True
            continue
        key = v.lstrip("-").partition("=")[0]
        known = [n for n in _EMACSCLIENT_LONG if n == key] or [n for n in _EMACSCLIENT_LONG if n.startswith(key)]
        if key and (v.startswith("--") or len(v) > 2) and len(known) == 1:
            evaluates = evaluates or known[0] == "eval"
            skip = _EMACSCLIENT_LONG[known[0]] and "=" not in v
            continue
        for j, letter in enumerate(v[1:] if not v.startswith("--") else ""):
            evaluates = evaluates or letter == "e"
            if letter in _EMACSCLIENT_VALUES:
                skip = j == len(v) - 2
                break
    return evaluates, operands


def cmd_emacsclient(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """Code given to a running Emacs (`-e`, `--eval`: every operand is then an expression) runs in
    it, the user's, outside the container: held, and judged by the calls it names. Opening a file
    in it stays as for a program no rule knows."""
    may_write(ctx, args)
    evaluates, operands = _emacsclient_words(args)
    if not evaluates:
        ctx.as_unknown_program(name, args, depth, noted=False)
        return
    hands_off(ctx, f"{name} --eval")
    for expression in operands:
        inline_code(ctx, f"{name} --eval", expression.literal)


def vim_script(ctx: Analysis, name: str, what: str, text: str) -> None:
    """Ex commands, one a line (a `-S` session, a vimrc, what is typed into `ex`); comments skipped."""
    for line in re.sub(r"\n\s*\\", " ", text).splitlines():  # a line starting with `\` continues the one before
        if line.strip() and not line.lstrip().startswith('"'):
            vim_command(ctx, name, what.rpartition(" ")[2] or "typed", _Word(line, line, line))


def gdb_script(ctx: Analysis, name: str, what: str, text: str) -> None:
    """gdb's commands, one a line (`gdb -x FILE`, `source FILE`): each judged as an `-ex` would be;
    a `python` ... `end` block as Python."""
    lines = iter(text.splitlines())
    for line in lines:
        if line.strip() in ("python", "py", "python-interactive", "pi"):
            block = "\n".join(iter(lambda: next(lines, "end"), "end"))  # up to its `end`
            inline_code(ctx, f"{what} python", block)
            continue
        gdb_command(ctx, name, what.rpartition(" ")[2] or "-x", line)


def code_text(ctx: Analysis, name: str, what: str, text: str) -> None:
    """A file of code in a language judged by the calls it names (Emacs Lisp, CMake)."""
    inline_code(ctx, what, text)


# A library ssh loads and runs: a PKCS#11 or security key provider (`-o PKCS11Provider=./x.so`)
_PROVIDER = re.compile(r"(?i)\s*(pkcs11provider|securitykeyprovider)\s*[=\s]\s*(\S+)")


def ssh_setting(ctx: Analysis, name: str, where: str, setting: str) -> None:
    """One of ssh's settings (`-o`, or a line of its configuration): what its commands run, runs here."""
    if re.match(r"(?i)\s*(proxycommand|localcommand|knownhostscommand)\s*[=\s]", setting):  # a tab too
        ctx.sub_script((re.split(r"\s*=\s*|\s+", setting.strip(), maxsplit=1) + [""])[1], f"{name} {where}")
    elif match := re.match(r"(?i)\s*match\b.*?\bexec\s*[=\s]\s*(?:\"([^\"]*)\"|(\S+))", setting):
        ctx.sub_script(match[1] if match[1] is not None else match[2], f"{name} {where} Match exec")
    elif (provider := _PROVIDER.match(setting)) and provider[2].casefold() not in ("none", "internal"):
        ctx.add(D, LOADS_LIBRARY, name=f"{name} {provider[1]}",
                value=_snip(provider[2]))  # fmt: skip


def ssh_config(ctx: Analysis, name: str, what: str, text: str) -> None:
    """An ssh configuration file (`ssh -F FILE`): its settings, and the files it includes (by a
    name alone: in ~/.ssh)."""
    for raw in text.split("\n"):  # as ssh reads a line (`ssh_line`): `"ProxyCommand" CMD` ran unjudged
        keyword = ssh_line(raw)
        if keyword is None:
            continue
        line = f"{keyword[0]} {keyword[1]}"
        include = keyword[0] == "include"
        try:  # its files as ssh splits them (`Include "a b"` is one)
            files = ssh_values(keyword[1]) if include else []
        except ValueError:  # ssh refuses the file
            files = ["*"]
        for file in files:
            found = included_files(file, f"{ctx.home}/.ssh", MAX_INCLUDED)  # `/*/*/*`: not walked
            if found is None or len(found) > MAX_INCLUDED:
                path = file if file.startswith(("/", "~")) else f"{ctx.home}/.ssh/{file}"
                ctx.add(D, "cannot tell what runs: {name} reads the files {value}", name=name, value=_snip(path))
                continue
            for one in found:  # `Include ~/.ssh/config.d/*`: each file it names
                code_file(ctx, name, what, _Word(one, one, one), ssh_config)
        if not include:
            ssh_setting(ctx, name, what.partition(" ")[2], line)


def tar_new_style(args: list[_Word]) -> list[_Word]:
    """tar's old style (`tar cIf CMD a.tar .`: letters with no dash, their values after them in
    order) as the same options with dashes (`-c -I CMD -f a.tar .`)."""
    first = (args[0].value or "") if args else ""
    if not re.fullmatch(r"[A-Za-z]+", first):
        return args
    out: list[_Word] = []
    rest = iter(args[1:])
    for letter in first:
        out.append(_Word("-" + letter, "-" + letter, "-" + letter))
        if letter in _TAR_VALUES and (value := next(rest, None)) is not None:
            out.append(value)
    return out + list(rest)


def option_values(
    args: list[_Word], options: list[str], takes_value: str | frozenset[str] | None = None
) -> list[tuple[str, _Word]]:
    """Each of `options` in `args` with its value, as getopt reads them (see `_values`); in a
    cluster, the letters in `takes_value` (the program's own) take the rest as their value: `psql
    -tf FILE` is -t and -f, `sed -if` is -i with the suffix `f`."""
    letters = _TAKES_VALUE if takes_value is None else frozenset(takes_value)
    return [(entry.option, word) for entry, word in _values(args, tuple(_CodeOption(o) for o in options), letters)]


def _values(
    args: list[_Word], options: tuple[_CodeOption, ...], takes_value: frozenset[str] = _TAKES_VALUE
) -> list[tuple[_CodeOption, _Word]]:
    """Each of `options` given in `args`, with its value: the next word, after `=` (`--opt=VALUE`),
    joined to a one-letter option (`-Pless`), or after a cluster of one-letter flags (`-cvI CMD`,
    `-aeCMD`)."""
    found: list[tuple[_CodeOption, _Word]] = []
    for j, a in enumerate(args):
        # An option whose value an expansion decides (`--output=$HOME/.bashrc`): by its pattern (a red team)
        v = a.value if a.value is not None else a.pattern if a.pattern.startswith("-") else ""
        if v == "--":
            break
        following = args[j + 1] if j + 1 < len(args) else None
        for entry in options:
            value = _value_of(entry.option, v, a, following, takes_value)
            if value is not None:
                found.append((entry, value))
    return found


def _value_of(
    option: str, v: str, word: _Word, following: _Word | None, takes_value: frozenset[str] = _TAKES_VALUE
) -> _Word | None:
    """The value of `option` in the word `v` (and the word after it), or None when it is not there."""
    if option == "+":  # vim's `+COMMAND`
        return _word_end(word, len(v) - 1) if v.startswith("+") and len(v) > 1 else None
    if v == option:
        return following
    if v.startswith(option + "=") and len(option) > 2:
        return _word_end(word, len(v) - len(option) - 1)
    if len(option) > 2:  # a long option, `--name` or gdb's `-name`: whole, or by a prefix of 3 letters or more
        dashes = len(option) - len(option.lstrip("-"))
        name, equals, _value = v.partition("=")
        given = name[dashes:]
        if not name.startswith(option[:dashes]) or name[dashes : dashes + 1] == "-" or len(given) < 3:
            return None
        if not option[dashes:].startswith(given) or name in _OPTIONS_OF_THEIR_OWN:
            return None  # `dpkg --status` is an option of its own, not `--status-logger`
        return _word_end(word, len(v) - len(name) - 1) if equals else following
    letter = option[1]
    if not v.startswith("-") or v.startswith("--") or letter not in v[1:]:
        return None
    at = v.index(letter, 1)
    if any(c in takes_value for c in v[1:at]):  # `tar -cfI x.tar`: `f` took `I` as its value
        return None
    rest = v[at + 1 :]
    return _word_end(word, len(rest)) if rest else following


# ---- Compiled libraries openssl is told to load (see _LIBRARIES).
_LIBRARY_FILE = re.compile(r"/|\.(?:so|dll|dylib)(?:\.[\d.]+)?$", re.I)


def _openssl_library(args: list[_Word]) -> str | None:
    """A library an openssl command loads by its path: an engine or provider named by a path
    (`-engine ./x.so`), a folder of providers, or an engine's control command (`engine dynamic
    -pre SO_PATH:./x.so`: the dynamic engine loads what it names)."""
    engine = bool(args) and args[0].value == "engine"
    for k, a in enumerate(args):
        v = a.value
        following = args[k + 1] if k + 1 < len(args) else None
        value = None if following is None else following.value
        if v is None:
            return a.source
        if v in ("-engine", "-provider", "-keygen_engine") and following is not None:
            if value is None or _LIBRARY_FILE.search(value):
                return following.source
        elif v == "-provider-path" or (engine and v in ("-pre", "-post")):
            return f"{v} {following.source if following is not None else ''}".strip()
        elif engine and k > 0 and not v.startswith("-") and _LIBRARY_FILE.search(v):
            return v
    return None


# ---- gdb's commands (`-ex`, `-iex`, a file's lines): each is read-only, runs the program it debugs
# (`run`, `start`), is code judged as such (`shell`, `python`, `source`), or may run anything
# (`alias`, `interpreter-exec`, `define`...): held. A red team, 2026-12-05: `-ex run --args rm -rf V`,
# `with confirm off -- shell ...`, `alias zz = shell`, `thread apply all shell ...` each ran rm.

# gdb's options, read as getopt_long_only reads them (one dash or two, any unique prefix): what each is, and
# whether it takes a value
_GDB_OPTIONS: dict[str, tuple[str, bool]] = {
    **{o: ("flag", False) for o in ("tui", "dbx", "readnow", "r", "readnever", "quiet", "q", "silent", "nh", "nx",
                                    "n", "batch-silent", "batch", "fullname", "f", "help", "version",
                                    "configuration", "nw", "nowindows", "w", "windows", "statistics", "write",
                                    "return-child-result")},
    **{o: ("value", True) for o in ("annotate", "symbols", "s", "core", "c", "pid", "p", "ui", "interpreter", "i",
                                    "directory", "d", "data-directory", "D", "cd", "tty", "baud", "b", "l")},
    "exec": ("exec", True), "e": ("exec", True), "se": ("exec", True),
    "ex": ("ex", True), "eval-command": ("ex", True),
    "iex": ("iex", True), "init-eval-command": ("iex", True),
    "eiex": ("eiex", True), "early-init-eval-command": ("eiex", True),
    "x": ("x", True), "command": ("x", True),
    "ix": ("ix", True), "init-command": ("ix", True),
    "eix": ("eix", True), "early-init-command": ("eix", True),
    "args": ("args", False),
}  # fmt: skip
_GDB_ORDER = {"eiex": 0, "eix": 0, "iex": 1, "ix": 1, "ex": 2, "x": 2}  # when gdb runs each


class _GdbWords(NamedTuple):
    options: list[tuple[str, _Word]]  # (what it is, its value) for those that take one
    operands: list[_Word]  # the program, a core file or a process
    inferior: list[_Word] | None  # after --args: the program and its words
    unknown: bool  # a word from an expansion: it may be any option


def _gdb_option(key: str) -> tuple[str, bool] | None:
    if key in _GDB_OPTIONS:
        return _GDB_OPTIONS[key]
    found = {_GDB_OPTIONS[o] for o in _GDB_OPTIONS if key and o.startswith(key)}
    return found.pop() if len(found) == 1 else None  # an ambiguous one: gdb stops


def gdb_words(args: list[_Word]) -> _GdbWords:
    """gdb's words as it reads them: options anywhere before `--args` or `--` (`-ex=CMD` too)."""
    options: list[tuple[str, _Word]] = []
    operands: list[_Word] = []
    i = 0
    while i < len(args):
        w, v = args[i], args[i].value
        if v is None:
            return _GdbWords(options, operands, None, True)
        if v == "--":
            operands += args[i + 1 :]
            break
        if not v.startswith("-") or v == "-":
            operands.append(w)
            i += 1
            continue
        key, equals, _ = v.lstrip("-").partition("=")
        found = _gdb_option(key)
        if found is not None and found[0] == "args":
            return _GdbWords(options, operands, args[i + 1 :], False)
        if found is not None and found[1]:
            value = _word_end(w, len(v) - v.index("=") - 1) if equals else args[i + 1] if i + 1 < len(args) else None
            i += 0 if equals else 1
            if value is not None:
                options.append((found[0], value))
        i += 1
    return _GdbWords(options, operands, None, False)


def gdb_commands(ctx: Analysis, name: str, args: list[_Word], depth: int) -> None:
    """gdb's commands and command files, and the program its `run` or `start` would start (the
    `--args` program, or its file operand with `run`'s words, which gdb's shell expands), judged as
    the same words would be without gdb, as wrappers' are. Code that may run it (`python`, `source`,
    a command file, a command held) judges it too; read-only commands (`bt`, `info`...) do not."""
    words = gdb_words(args)
    if words.unknown:
        ctx.add(D, "cannot tell what runs: {name} with arguments from an expansion", name=name)
        return
    ordered = sorted(words.options, key=lambda o: _GDB_ORDER.get(o[0], 3))
    inferior = words.inferior or []
    program = inferior[0] if inferior else words.operands[0] if words.operands else None
    program = program or next((w for kind, w in words.options if kind == "exec"), None)
    text: str | None = None  # the arguments `set args` or `run ARGS` gave, shell text; None: --args's words
    runs: list[str | None] = []
    reads: list[str] = []
    may_run = False
    for kind, word in ordered:
        if kind in ("x", "ix", "eix"):
            code_file(ctx, name, f"{name} -{kind}", word, gdb_script)
            may_run = True
        elif kind in ("ex", "iex", "eiex") and word.literal is not None:  # cmd_gdb holds an expansion
            said, value = gdb_command(ctx, name, f"-{kind}", word.literal)
            text = value if said == "args" or (said == "runs" and value) else text
            runs += [text] if said == "runs" else []
            reads += [word.literal] if said == "reads" else []
            may_run = may_run or said in ("code", "held")
    if runs:  # a started program's functions run in it: `print system("rm -rf DIR")`
        for called in (c for c in reads if _GDB_CALLS.search(c)):
            ctx.add(D, "cannot tell what runs: {name} {option} may start a program", name=name,
                    option=_snip(f"-ex {called}"))  # fmt: skip
    elif may_run:
        runs.append(text)
    for given in dict.fromkeys(runs):
        if program is None:
            continue  # gdb has no program to start
        if given is None:
            ctx.inner([program, *inferior[1:]], None, False, depth)
        elif program.value is None:
            ctx.add(D, "cannot tell what runs: {name} with arguments from an expansion", name=name)
        else:
            ctx.sub_script(f"{shlex.quote(program.value)} {given}", f"{name} run")


# gdb's commands that only look, or move a program it started (its start is judged): each by its
# full name, then the shortest prefix gdb takes for it and its aliases (`bt`, `where`; `i` for info)
_GDB_NAMES: dict[str, tuple[str, ...]] = {
    "backtrace": ("ba", "bt", "where"), "info": ("inf", "i"), "print": ("print", "p", "inspect"),
    "output": ("ou",), "printf": ("printf",), "echo": ("ec",), "list": ("l",), "disassemble": ("disas",),
    "x": ("x",), "ptype": ("pt",), "whatis": ("wha",), "frame": ("f",), "up": ("up",), "down": ("do",),
    "show": ("sho",), "help": ("h",), "quit": ("q", "exit"), "break": ("b",), "tbreak": ("tb",),
    "continue": ("cont", "c", "fg"), "next": ("next", "n"), "step": ("step", "s"), "finish": ("fin",),
    "kill": ("k",), "core-file": ("cor",), "thread": ("thr", "t"), "end": ("end",),
    # started: the program and its words are judged
    "run": ("run", "r"), "start": ("start",), "starti": ("starti",),
    # prefixes of another command, read for it; settings
    "taas": ("taas",), "faas": ("faas",), "tfaas": ("tfaas",), "with": ("with", "w"), "set": ("set",),
}  # fmt: skip
_GDB_STARTS = frozenset({"run", "start", "starti"})
# Settings that change only what gdb shows (`set pagination off`, `with print pretty on -- bt`)
_GDB_SETTINGS = frozenset({"pagination", "confirm", "print", "height", "width", "listsize", "verbose", "style",
                           "language", "disassembly-flavor", "max-value-size", "filename-display",
                           "backtrace"})  # fmt: skip
_GDB_APPLIED = re.compile(r"all|level|-?\d[\w.$*-]*|\$\w+|\*|-\w[\w-]*|--|on|off")  # threads, frames, flags
_GDB_CALLS = re.compile(r"[\w$)\]]\s*\(")
_GDB_CODE = ((_GDB_SHELL, "bash"), (_GDB_PYTHON, "python"), (_GDB_SOURCE, "gdb"))


def _gdb_name(word: str) -> str | None:
    for full, (shortest, *aliases) in _GDB_NAMES.items():
        if word in aliases or (full.startswith(word) and len(word) >= len(shortest)):
            return full
    return None


def gdb_command(ctx: Analysis, name: str, option: str, line: str) -> tuple[str, str | None]:
    """One gdb command, as gdb finds it (a name by its unique prefix or alias): "reads", "args"
    (`set args`, with them), "runs" (`run`, `start`, with its words), "code" (`shell`, `python`,
    `source`: judged here as that code), or "held": any other may start a program (`alias`,
    `interpreter-exec`, `eval`, `define`, `target`, `file`...) or runs one (`$_shell(...)`)."""
    if not line.strip() or line.lstrip().startswith("#"):
        return "reads", None
    for lead, language in _GDB_CODE:
        if re.match(lead, line):
            _judge_value(ctx, name, _CodeOption(option, lead, language), _Word(line, line, line))
            return "code", None
    found = re.match(r"\s*([\w.-]*)", line)
    full = _gdb_name(found[1]) if found and found[1] and "$_shell" not in line else None
    rest = line[found.end() :].strip() if found else ""
    inner = _gdb_inner(full, rest)
    if inner is not None:
        return gdb_command(ctx, name, option, inner)
    if full in _GDB_STARTS:
        return "runs", rest
    if full == "set":
        setting = rest.split(maxsplit=1) or [""]
        if setting[0] == "args":
            return "args", setting[1] if len(setting) > 1 else ""
        if setting[0] in _GDB_SETTINGS:
            return "reads", None
    elif full is not None and full not in ("taas", "faas", "tfaas", "with"):
        return "reads", None
    ctx.add(D, "cannot tell what runs: {name} {option} may start a program", name=name,
            option=_snip(f"{option} {line}"))  # fmt: skip
    return "held", None


def _gdb_inner(full: str | None, rest: str) -> str | None:
    """The command a prefix command runs (`thread apply all CMD`, `frame apply 2 CMD`, `tfaas CMD`,
    `with SETTING -- CMD`); None for any other (a `with` whose setting is not only shown, held)."""
    words = rest.split()
    if full in ("thread", "frame") and words and "apply".startswith(words[0]):
        words = words[1:]
    elif full == "with":
        if "--" not in words or not words or words[0] not in _GDB_SETTINGS:
            return None
        return " ".join(words[words.index("--") + 1 :]) or None
    elif full not in ("taas", "faas", "tfaas"):
        return None
    while words and _GDB_APPLIED.fullmatch(words[0]):
        words = words[1:]
    return " ".join(words) or None
