"""The words of a command's text as pins reads them: its simple commands, the program of each
(past assignments and wrappers), the folder a literal `cd` moved to, and names bash expands nothing in.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterator, Sequence

from app.core.classifier.regular_files import read_regular

# Programs that run the file named by their first argument.
INTERPRETERS = re.compile(
    r"^(source|\.|sh|bash|dash|zsh|ksh|mksh|fish|busybox|python[0-9.]*|pypy[0-9.]*|perl[0-9.]*|ruby[0-9.]*|node|nodejs"
    r"|deno|bun|php[0-9.]*|lua[0-9.]*|Rscript|tclsh|osascript|pwsh)$"
)
# Options after which an interpreter runs no file (code inline, a module, a command string).
NO_SCRIPT_OPTIONS = frozenset({"-c", "-m", "-e", "-E", "--eval", "-p", "--print", "-r", "--command"})
WRAPPERS = frozenset(
    {"exec", "nohup", "command", "builtin", "time", "nice", "env", "sudo", "doas", "gsudo", "sudo-rs", "stdbuf"}
)
SEPARATORS = frozenset({"&&", "||", ";", "|", "&", "|&", ";;", "(", ")", "{", "}", "!", "then", "do", "else"})
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def simple_commands(command: str) -> list[list[str]]:
    """The words of each simple command of `command` (best effort: none where the quotes do not close)."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        words = list(lexer)
    except ValueError:  # unbalanced quotes: bash refuses it too
        return []
    simples: list[list[str]] = []
    simple: list[str] = []
    for word in [*words, ";"]:
        if word in SEPARATORS or word.strip("\n") == "":
            simples.append(simple)
            simple = []
        else:
            simple.append(word)
    return [s for s in simples if s]


def program_of(words: list[str]) -> list[str]:
    """A simple command's program and its arguments, past assignments and wrappers."""
    while words and (ASSIGNMENT.match(words[0]) or words[0] in WRAPPERS or words[0].startswith("-")):
        words = words[1:]
    return words


NOT_LITERAL = re.compile(r"[$`*?\[{\\%()]|^~")  # what bash or make would expand


def literal_name(value: str | None) -> bool:
    return bool(value) and not NOT_LITERAL.search(value or "")


def commands_here(command: str, folder: str) -> Iterator[tuple[list[str], str, dict[str, str]]]:
    """Each simple command's program and arguments, the folder a literal `cd` before it moved to
    (`cd sub && make`), and the variables the text gives its environment (`MAKEFILES=x.mk make`,
    `env X=1 make`, `export X=1; make`), best effort."""
    here, exported = folder, dict[str, str]()
    for simple in simple_commands(command):
        words = program_of(simple)
        given = assignments(simple[: len(simple) - len(words)])
        if words[:1] == ["cd"]:
            targets = [w for w in words[1:] if not w.startswith("-")]
            if len(targets) == 1 and literal_name(targets[0]):
                here = posixpath.normpath(posixpath.join(here, targets[0]))
        elif words[:1] == ["export"]:
            exported.update(assignments(words[1:]))
        elif words:
            yield words, here, {**exported, **given}


def assignments(words: Sequence[str]) -> dict[str, str]:
    """The variables `words` set to a value bash expands nothing in (`X=1`, not `X=$Y`)."""
    pairs = (word.partition("=") for word in words if ASSIGNMENT.match(word))
    return {name: value for name, _equals, value in pairs if not NOT_LITERAL.search(value)}


def file_head(path: str, size: int) -> str | None:
    """The start of a regular file (never a FIFO or a device put in its place), or None."""
    data = read_regular(path, size)
    return None if data is None else data.decode("utf-8", "replace")


MODULE_BYTES = 256 * 1024  # of each file, read for the modules it loads
# Words bash runs itself (its keywords and builtins), never from the PATH.
SHELL_WORDS = frozenset(
    [
        "if",
        "then",
        "else",
        "elif",
        "fi",
        "case",
        "esac",
        "for",
        "while",
        "until",
        "do",
        "done",
        "in",
        "function",
        "select",
        "time",
        "coproc",
        "echo",
        "printf",
        "cd",
        "pwd",
        "export",
        "unset",
        "set",
        "shopt",
        "read",
        "test",
        "true",
        "false",
        "exit",
        "return",
        "source",
        "alias",
        "eval",
        "exec",
        "command",
        "type",
        "hash",
        "declare",
        "local",
        "readonly",
        "let",
        "trap",
        "wait",
        "kill",
        "jobs",
        "fg",
        "bg",
        "umask",
        "ulimit",
        "getopts",
        "shift",
        "break",
        "continue",
    ]
)
