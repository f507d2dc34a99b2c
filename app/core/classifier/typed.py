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
    if any(c in program for c in _OPERATOR_CHARS + "\n"):
        return None  # a command line where several programs may read it (repl_program): held
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
    session) starts one that reads its code from its input: bare (`python3`, `node -i`, `irb`), given
    it as a file (`perl -`, `perl /dev/stdin`), behind a wrapper (`nice perl`, `env X=1 timeout 5
    perl`, `rlwrap perl`), after other commands (`cd x && perl`) or fed by a pipe (`cat | perl`): its
    name. The whole line when more than one language may read the keys (`bash; perl`: held, see
    `typed_language`). Else None, and the text is judged as bash, as before (a script reading its
    input gets data, a shell commands). A red team, 2026-12-05: keys typed into `nice perl` were
    judged as bash, and perl ran them."""
    if not command:
        return None
    try:  # bash's operators apart: `python3 -q;bash` runs a shell once Python exits (a red team, 2026-12-05)
        words = list(shlex.shlex(command.replace("\n", ";"), posix=True, punctuation_chars=True))
    except ValueError:
        words = []
    try:  # as the classifier reads the line (wrappers, lists, pipes), and by its words (`faketime 0 perl`)
        readers = [*_key_readers(command), *_named_readers(words)]
    except Exception:  # as classify: a line the analysis fails on may hide any reader (held)
        return f"({_snip(command)})"
    languages = set(readers)
    if not languages - {"bash"}:
        return None
    return readers[0] if len(languages) == 1 else command


# Words after an interpreter's name that still leave its code to its input: a file naming it, or an
# option that opens a prompt after a script or inline code (`python3 -i x.py`, `perl -d x.pl`'s debugger)
_INPUT_FILES = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})
_PROMPT_AFTER = frozenset({"-i", "--interactive", "-d"})


def _named_readers(words: list[str]) -> list[str]:
    """Interpreters named in the line's words (`shlex` tokens) with nothing but options after them, up
    to an operator, or given their input as a file: a program no rule knows may start them (`rlwrap
    perl`, `faketime 0 perl`), which the analysis does not read as a command."""
    found: list[str] = []
    segment: list[str] = []
    for word in [*words, ";"]:
        if word.strip(_OPERATOR_CHARS):
            segment.append(word)
            continue
        for k, name in enumerate(segment):
            language = typed_language(name)
            if language in (None, "bash", "data") or word.startswith("<"):  # `perl < x.pl` reads the file
                continue
            rest = segment[k + 1 :]
            bare = all(w.startswith("-") and w not in ("-c", "-m", "-e", "-E", "-r", "-p") for w in rest)
            if language is not None and (bare or (rest and rest[0] in _INPUT_FILES) or _PROMPT_AFTER & set(rest)):
                found.append(language)
        segment = []
    return found


# What the analysis says of a program that reads its code from the session's input (shells.stdin_code,
# piped_commands): the keys typed while the line runs reach it
_READS_KEYS = frozenset({
    "{name}: starts an interactive interpreter",
    "{name}: starts an interactive shell",
    "cannot tell what runs: {name} reads its commands from a pipe",
})  # fmt: skip


def _key_readers(command: str) -> list[str]:
    """The language of each program in `command` that reads its code from its input ("bash" for a
    shell), in order, as the classifier's analysis finds them: through wrappers, lists and pipes, and
    in what a program no rule knows may run (`faketime 0 perl`), though that guess is undone."""
    from .analyzer import _Analyzer  # the analyzer's rules import this module
    from .findings import _Report
    from .protected import _Protected

    report = _Report()
    readers: list[str] = []

    def heard(reason: str, values: dict[str, str]) -> None:
        if reason in _READS_KEYS:
            language = typed_language(values.get("name", ""))
            if language not in (None, "data"):
                readers.append(language)

    report.heard = heard
    _Analyzer(command, report, _Protected.build(()), nesting=0, cwd=None).run()
    return readers


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
