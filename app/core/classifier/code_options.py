"""Options whose value a program runs as a shell command, whatever else its rule says (red team,
2026-12-04: `tar --checkpoint-action=exec='rm -rf DIR'`, `zip -TT`, `gdb -ex 'shell ...'`, `strace
-o '|...'`, `man -P`, `rsync -e` each ran rm while judged safe or moderate). git's are in git.py."""

from __future__ import annotations

import re

from .rule import Analysis
from .words import _Word, _word_end

_VIM_SHELL = r"\s*:?\s*(?:silent!?\s*)?!"  # `vim -es -c '!rm -rf DIR'`, `+!...`: an Ex command run by the shell
# program: (option, what starts its value before the code: a regular expression, "" for nothing)
_CODE_OPTIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "tar": (("--to-command", ""), ("-I", ""), ("--use-compress-program", ""), ("--info-script", ""), ("-F", ""),
            ("--new-volume-script", ""), ("--checkpoint-action", r"exec=")),
    "zip": (("-TT", ""), ("--unzip-command", "")),
    "rsync": (("-e", ""), ("--rsh", ""), ("--rsync-path", "")),
    "man": (("-P", ""), ("--pager", "")),
    "bat": (("--pager", ""),),
    "hyperfine": (("--prepare", ""), ("-p", ""), ("--cleanup", ""), ("-c", ""), ("--setup", ""), ("-s", "")),
    "gdb": (("-ex", r"\s*(?:shell\b|!)"), ("-iex", r"\s*(?:shell\b|!)"), ("--eval-command", r"\s*(?:shell\b|!)"),
            ("--init-eval-command", r"\s*(?:shell\b|!)")),
    "strace": (("-o", r"[|!]"), ("--output", r"[|!]")),
    "dc": (("-e", r"[^!]*!"), ("--expression", r"[^!]*!")),  # `!` runs the rest of its line in the shell
    **dict.fromkeys(("vim", "vi", "nvim", "ex", "view", "vim.basic", "vim.tiny"),
                    (("-c", _VIM_SHELL), ("--cmd", _VIM_SHELL), ("+", _VIM_SHELL))),
    "ltrace": (("-o", r"[|!]"), ("--output", r"[|!]")),
}  # fmt: skip
# rg --pre PROGRAM runs PROGRAM on every file it searches: as `xargs PROGRAM` would.
_EACH_FILE = {"rg": ("--pre",)}


def judge_code_options(ctx: Analysis, name: str, args: list[_Word], depth: int) -> None:
    """The code in `name`'s options, judged as bash would run it."""
    leads = dict(_CODE_OPTIONS.get(name, ()))
    for option, word in _values(args, list(leads)):
        literal = word.literal
        start = None if literal is None else re.match(leads[option], literal)
        if literal is not None and start is None:
            continue  # `gdb -ex 'break main'`, `strace -o out.txt`: not code
        code = word if start is None else _word_end(word, len(word.literal or "") - start.end())
        ctx.code_words([code], f"{name} {option}")
    for _option, word in _values(args, list(_EACH_FILE.get(name, ()))):
        ctx.argv([word], None, bulk=True, depth=depth + 1)


def _values(args: list[_Word], options: list[str]) -> list[tuple[str, _Word]]:
    """Each of `options` given in `args`, with its value: the next word, after `=` (`--opt=VALUE`), or
    joined to a one-letter option (`-Pless`)."""
    found: list[tuple[str, _Word]] = []
    for j, a in enumerate(args):
        v = a.value or ""
        if v == "--":
            break
        for option in options:
            if v == option and j + 1 < len(args):
                found.append((option, args[j + 1]))
            elif v.startswith(option + "=") and option.startswith("--"):
                found.append((option, _word_end(a, len(v) - len(option) - 1)))
            elif len(option) == 2 and v.startswith(option) and len(v) > 2:
                found.append((option, _word_end(a, len(v) - 2)))
            elif option == "+" and v.startswith("+") and len(v) > 1:  # vim's `+COMMAND`
                found.append((option, _word_end(a, len(v) - 1)))
    return found
