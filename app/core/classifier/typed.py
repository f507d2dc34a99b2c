"""Input typed into a program that runs in the persistent session (terminal_send_keys): judged as
the language of that program, or held when it cannot be judged (issue 23).

A shell reads typed lines as commands, so they are judged as bash; a Python, Node, Perl, Ruby...
prompt runs them as its own code, judged like inline code (`python -c`); IPython's `!cmd` lines
are shell commands. Any other program (a pager, an editor, a database prompt, a debugger) may turn
keys into anything (`!` in less runs a shell): held, except a few filters that only read their input.
"""

from __future__ import annotations

import re
import shlex

from .code import inline_code
from .findings import D, _snip
from .options import _command_name
from .rule import Analysis
from .tables import _INLINE_CODE_FLAGS, _PERL, _PYTHON, _SHELLS

# Programs whose typed input is only data they print or count: typing into them runs nothing.
_FILTERS = frozenset({"cat", "sort", "wc", "tr", "uniq", "base64", "md5sum", "sha256sum", "rev", "nl", "fold"})
_REPLS = frozenset(set(_INLINE_CODE_FLAGS) - {"cmd", "osascript"}) | {
    "irb",
    "ipython",
    "ipython3",
    "bpython",
    "ptpython",
}


def typed_language(program: str | None) -> str | None:
    """How typed text is read by `program` (a command name or path, as the session knows it):
    "bash", an interpreter's name, "data" (a filter), or None when it cannot be judged."""
    if program is None:
        return "bash"  # what runs is not known: it may be a shell, so the text is judged as bash
    name = _command_name(program.strip().split(" ", 1)[0] if program.strip() else "")
    if name in _SHELLS:
        return "bash"
    if _PYTHON.match(name) or _PERL.match(name) or name in _REPLS:
        return name
    if name in _FILTERS:
        return "data"
    return None


_OPERATOR_CHARS = "();<>|&"


def repl_program(command: str | None) -> str | None:
    """The interpreter whose prompt reads typed input when `command` (the line running in the
    session) is an interpreter started bare (`python3`, `node -i`, `irb`): its name; else None, and
    the text is judged as bash, as before (a script reading its input gets data, a shell commands)."""
    if not command:
        return None
    try:  # bash's operators apart: `python3 -q;bash` runs a shell once Python exits (a red team, 2026-12-05)
        words = list(shlex.shlex(command, posix=True, punctuation_chars=True))
    except ValueError:
        return None
    if not words or any(not word.strip(_OPERATOR_CHARS) for word in words):
        return None  # more than one command, a pipe or a redirection: what reads the keys is not told
    language = typed_language(words[0])
    if language in (None, "bash", "data"):
        return None
    if any(not word.startswith("-") or word in ("-c", "-m", "-e", "-E", "-r", "-p") for word in words[1:]):
        return None  # a script, a module or inline code runs: its input is data, not code
    return words[0]


def judge_typed(ctx: Analysis, text: str, program: str | None, language: str | None) -> None:
    """Add the findings on `text` typed into `program`, read as `language` (see `typed_language`);
    bash is judged by the caller, as a command."""
    if language is None:
        ctx.add(D, "cannot tell what runs: typing into {program}, which may run what it is given",
                program=_snip(program or "a program"))  # fmt: skip
    elif language == "data":
        return
    elif language.startswith("ipython"):
        for line in text.splitlines():
            stripped = line.lstrip()
            if stripped.startswith("!"):
                ctx.sub_script(stripped[1:], "an IPython ! line")
            elif stripped.startswith("%"):
                ctx.add(D, "cannot tell what runs: an IPython magic command ({line})", line=_snip(stripped))
        inline_code(ctx, "python", re.sub(r"(?m)^[^\S\n]*[!%].*$", "", text))
    else:
        inline_code(ctx, language, text)
