"""Options whose value a program runs as code, whatever else its rule says (red team, 2026-12-04:
`tar --checkpoint-action=exec='rm -rf DIR'`, `zip -TT`, `gdb -ex 'shell ...'`, `strace -o '|...'`,
`man -P`, `rsync -e`, `vim -c '!...'`, `apt-get -o APT::Update::Pre-Invoke::=...` each ran rm while
judged safe or moderate). Options are read as getopt reads them: a long one by any unambiguous
prefix of three letters or more (not one that is an option of its own: dpkg's `--status`), a short
one in a cluster (`tar -cvI CMD`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import NamedTuple

from .code import inline_code
from .findings import D, _snip
from .handoff import hands_off, may_write
from .hosts import included_files, ssh_line, ssh_values
from .rule import Analysis
from .scripts import library_file, script_text
from .stdin import _Stdin
from .words import _Word, _word_end


class _CodeOption(NamedTuple):
    option: str  # as written in full: `--to-command`, `-I`, `-ex` (gdb's one-dash long options), `+`
    lead: str = ""  # a regular expression for what starts the value before its code; no match: not code
    language: str = "bash"  # or "python", or "vim" (an Ex command: held unless it is `!` and bash)


_GDB_SHELL = r"\s*(?:shell\b|shel\b|she\b|!|pipe\b|\|)"  # gdb runs the rest in the shell
_GDB_PYTHON = r"\s*(?:python\b|py\b|pi\b)"
_GDB_SOURCE = r"\s*so(?:u(?:r(?:ce?)?)?)?\s+(?:-[sv]\s+)*"  # `source [-s] [-v] FILE`: its commands run
_GDB = tuple(
    entry
    for option in (
        "-ex",
        "--ex",
        "-iex",
        "--iex",
        "-eval-command",
        "--eval-command",
        "-init-eval-command",
        "--init-eval-command",
    )  # fmt: skip
    for entry in (
        _CodeOption(option, _GDB_SHELL),
        _CodeOption(option, _GDB_PYTHON, "python"),
        _CodeOption(option, _GDB_SOURCE, "gdb"),
    )
)
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
    "gdb": _GDB,
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
    "gdb": (("-command", "--command", "-init-command", "--init-command", "-ix", "--ix"), lambda *a: gdb_script(*a)),
    **dict.fromkeys(("emacs", "emacs-nox"), (("--load", "-load", "--script", "-script"), lambda *a: code_text(*a))),
    **dict.fromkeys(("scp", "sftp"), (("-F",), lambda *a: ssh_config(*a))),  # ssh's configuration, as `ssh -F`
}
_EXACT_FILES = {"gdb": ("-x",), "emacs": ("-l",), "emacs-nox": ("-l",)}  # one letter, not in a cluster (`-ex`)
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


def _judged() -> frozenset[str]:
    tables: tuple[Mapping[str, object], ...] = (_CODE_OPTIONS, _EACH_FILE, _CODE_FILES, _EXACT_FILES, _SETTINGS_OPTIONS)
    return frozenset(name for table in tables for name in table) | {"tar"}


_JUDGED = _judged()  # the programs any table above names


def judge_code_options(ctx: Analysis, name: str, args: list[_Word], depth: int) -> None:
    """The code in `name`'s options, and in the files of code they name, judged as what runs it
    would run it."""
    if name not in _JUDGED:  # most programs: nothing to look for (a pass over the words each, else)
        return
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
        for entry in _GDB[:3]:  # -ex's three readings: the shell's, Python's, another file's
            _judge_value(ctx, name, entry, _Word(line, line, line))


def code_text(ctx: Analysis, name: str, what: str, text: str) -> None:
    """A file of code in a language judged by the calls it names (Emacs Lisp, CMake)."""
    inline_code(ctx, what, text)


def ssh_setting(ctx: Analysis, name: str, where: str, setting: str) -> None:
    """One of ssh's settings (`-o`, or a line of its configuration): what its commands run, runs here."""
    if re.match(r"(?i)\s*(proxycommand|localcommand|knownhostscommand)\s*[=\s]", setting):  # a tab too
        ctx.sub_script((re.split(r"\s*=\s*|\s+", setting.strip(), maxsplit=1) + [""])[1], f"{name} {where}")
    elif match := re.match(r"(?i)\s*match\b.*?\bexec\s*[=\s]\s*(?:\"([^\"]*)\"|(\S+))", setting):
        ctx.sub_script(match[1] if match[1] is not None else match[2], f"{name} {where} Match exec")


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
