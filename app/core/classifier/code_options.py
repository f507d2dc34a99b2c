"""Options whose value a program runs as code, whatever else its rule says (red team, 2026-12-04:
`tar --checkpoint-action=exec='rm -rf DIR'`, `zip -TT`, `gdb -ex 'shell ...'`, `strace -o '|...'`,
`man -P`, `rsync -e`, `vim -c '!...'`, `apt-get -o APT::Update::Pre-Invoke::=...` each ran rm while
judged safe or moderate). Options are read as getopt reads them: a long one by any unambiguous
prefix of three letters or more (not one that is an option of its own: dpkg's `--status`), a short
one in a cluster (`tar -cvI CMD`)."""

from __future__ import annotations

import re
from typing import NamedTuple

from .code import inline_code
from .findings import D
from .rule import Analysis
from .words import _Word, _word_end


class _CodeOption(NamedTuple):
    option: str  # as written in full: `--to-command`, `-I`, `-ex` (gdb's one-dash long options), `+`
    lead: str = ""  # a regular expression for what starts the value before its code; no match: not code
    language: str = "bash"  # or "python", or "vim" (an Ex command: held unless it is `!` and bash)


_GDB_SHELL = r"\s*(?:shell\b|shel\b|she\b|!|pipe\b|\|)"  # gdb runs the rest in the shell
_GDB_PYTHON = r"\s*(?:python\b|py\b|pi\b)"
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
    for entry in (_CodeOption(option, _GDB_SHELL), _CodeOption(option, _GDB_PYTHON, "python"))
)
_VIM = tuple(_CodeOption(option, "", "vim") for option in ("-c", "--cmd", "+"))
_APT_HOOK = r"[\w:-]*(?:(?:Pre|Post)-Invoke|Pre-Install-Pkgs)[\w:-]*="  # `-o APT::Update::Pre-Invoke::=CMD`

_CODE_OPTIONS: dict[str, tuple[_CodeOption, ...]] = {
    "tar": tuple(_CodeOption(o) for o in ("--to-command", "-I", "--use-compress-program", "--info-script", "-F",
                                          "--new-volume-script")) + (_CodeOption("--checkpoint-action", "exec="),),
    "zip": (_CodeOption("-TT"), _CodeOption("--unzip-command")),
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
    **dict.fromkeys(("vim", "vi", "nvim", "ex", "view", "vimdiff", "gvim", "rvim", "evim", "gview", "rview",
                     "vim.basic", "vim.tiny", "nvim-qt"), _VIM),
}  # fmt: skip
# Options of their own that are also prefixes of a code option above: getopt takes them whole.
_OPTIONS_OF_THEIR_OWN = frozenset({"--status", "--checkpoint", "--exec-path", "--info"})
# Letters that take a value in the programs above (tar's -f, -C, -T; rsync's -B; ...): in a cluster,
# what follows one is its value, not another option.
_TAKES_VALUE = frozenset("fCTBbgNtuoOkwx")
# rg --pre PROGRAM runs PROGRAM on every file it searches: as `xargs PROGRAM` would.
_EACH_FILE = {"rg": ("--pre",)}
# An Ex command that may start a program: `!`, `:r !`, `%!`, system(), an interpreter, a terminal.
_VIM_RUNS = re.compile(
    r"!|\b(?:system|systemlist|delete|libcall|job_start|term_start)\s*\(|"
    r"\b(?:exe|execute|py3?|python3?|pyx|pythonx|lua|luado|perl|ruby|term|terminal)\b"
)
# `!rm -rf DIR`, `%!sort`, `r !cmd`, `w !cmd`: the rest is for the shell.
_VIM_SHELL = re.compile(r"\s*:?\s*(?:sil(?:ent)?!?\s*)?(?:[%.$\d,]*\s*(?:r(?:ead)?|w(?:rite)?)?\s*)?!")


def judge_code_options(ctx: Analysis, name: str, args: list[_Word], depth: int) -> None:
    """The code in `name`'s options, judged as what runs it would run it."""
    options = _CODE_OPTIONS.get(name, ())
    for entry, word in _values(args, options):
        literal = word.literal
        if entry.language == "vim":
            vim_command(ctx, name, entry.option, word)
            continue
        start = None if literal is None else re.match(entry.lead, literal)
        if literal is not None and start is None:
            continue  # `gdb -ex 'break main'`, `strace -o out.txt`: not code
        code = word if start is None else _word_end(word, len(literal or "") - start.end())
        if entry.language == "python":
            inline_code(ctx, f"{name} {entry.option} python", code.literal)
        else:
            ctx.code_words([code], f"{name} {entry.option}")
    for _entry, word in _values(args, tuple(_CodeOption(o) for o in _EACH_FILE.get(name, ()))):
        ctx.argv([word], None, bulk=True, depth=depth + 1)


def vim_command(ctx: Analysis, name: str, option: str, word: _Word) -> None:
    """An Ex command given to vim: `!CMD` is judged as bash; anything else that may start a program
    (`%!`, `w !`, `call system(...)`, `py3 ...`) cannot be told; the rest (`+10`, `set nu`) is not code."""
    literal = word.literal
    shell = None if literal is None else _VIM_SHELL.match(literal)
    if shell is not None:
        ctx.code_words([_word_end(word, len(literal or "") - shell.end())], f"{name} {option}")
    elif literal is None or _VIM_RUNS.search(literal):
        ctx.add(D, "cannot tell what runs: {name} {option} may start a program", name=name, option=option)


def option_values(args: list[_Word], options: list[str]) -> list[tuple[str, _Word]]:
    """Each of `options` in `args` with its value, as getopt reads them (see `_values`)."""
    return [(entry.option, word) for entry, word in _values(args, tuple(_CodeOption(o) for o in options))]


def _values(args: list[_Word], options: tuple[_CodeOption, ...]) -> list[tuple[_CodeOption, _Word]]:
    """Each of `options` given in `args`, with its value: the next word, after `=` (`--opt=VALUE`),
    joined to a one-letter option (`-Pless`), or after a cluster of one-letter flags (`-cvI CMD`,
    `-aeCMD`)."""
    found: list[tuple[_CodeOption, _Word]] = []
    for j, a in enumerate(args):
        v = a.value or ""
        if v == "--":
            break
        following = args[j + 1] if j + 1 < len(args) else None
        for entry in options:
            value = _value_of(entry.option, v, a, following)
            if value is not None:
                found.append((entry, value))
    return found


def _value_of(option: str, v: str, word: _Word, following: _Word | None) -> _Word | None:
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
    if any(c in _TAKES_VALUE for c in v[1:at]):  # `tar -cfI x.tar`: `f` took `I` as its value
        return None
    rest = v[at + 1 :]
    return _word_end(word, len(rest)) if rest else following
