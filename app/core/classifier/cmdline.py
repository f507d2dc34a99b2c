"""cmd.exe's code, read simply: `cmd /c "..."`, and a .bat or .cmd file run by name (red team, Windows).

cmd is not bash: its built-in commands (`rd`, `del`, `for`, `call`, `start`, `if`...) are judged
here, switches in any spelling (`/S`, `/s/q`, Git Bash's `//s`, `rd/s/q`), `^` escapes removed; any
other program it names is judged as bash would judge that command (`schtasks /create`, `evil.bat`,
`powershell -c ...`), through `Analysis.sub_script`. A command whose name a variable decides
(`%x%`, `!x!`) cannot be told. The regular expressions of `tables._CODE_DELETES` still read the
whole text as well (`code.inline_code`).
"""

from __future__ import annotations

import posixpath
import re
import shlex

from .danger import Danger
from .findings import D, M, _snip
from .options import _command_name, windows_switch
from .rule import Analysis
from .tables import _names
from .words import _Word

# cmd's own commands that read, or change only cmd's own state
_QUIET = _names(
    "echo echo. rem :: cls title ver vol pause setlocal endlocal pushd popd cd chdir dir type goto shift exit "
    "set color prompt path verify break date time"
)
_WRITES = _names("copy move ren rename md mkdir mklink")  # cmd's own, that change files
_REMOVES = frozenset({"rd", "rmdir", "del", "erase"})
_ASSOCIATIONS = frozenset({"assoc", "ftype"})  # which program opens a kind of file: Windows' settings
_BUILTINS = _QUIET | _WRITES | _REMOVES | _ASSOCIATIONS | {"call", "start", "if", "for", "else"}
_OPERATORS = re.compile(r"&&|\|\||[&|()\n]")


class _Token(str):
    """A word of cmd code after its quotes and `^` escapes are removed; `quoted`: it had quotes."""

    quoted: bool = False


def tokens(code: str, written: list[str] | None = None) -> list[str]:
    """cmd's words and operators (`&`, `&&`, `||`, `|`, `(`, `)`, a line's end); a redirection and
    its file are left out of them, the file added to `written` (judged as bash's targets are)."""
    out: list[str] = []
    word: list[str] = []
    quoted = in_quotes = False
    i = 0

    def end_word() -> None:
        nonlocal quoted
        if word or quoted:
            token = _Token("".join(word))
            token.quoted = quoted
            out.append(token)
        word.clear()
        quoted = False

    while i < len(code):
        c = code[i]
        if c == '"':
            in_quotes = not in_quotes
            quoted = True
        elif in_quotes:
            word.append(c)
        elif c == "^" and i + 1 < len(code):
            i += 1
            word.append(code[i])
        elif c in " \t\r,;=" and not (c in ",;=" and word):
            end_word()
        elif c in "<>":
            end_word()
            writes = c == ">"
            i += 1
            while i < len(code) and code[i] in ">&0123456789 \t":
                writes = writes and code[i] != "&"  # `2>&1`: another handle, not a file
                i += 1
            start = i
            while i < len(code) and code[i] not in " \t\r\n&|()<>":
                i += 1
            target = code[start:i].strip('"').replace("^", "")
            if writes and written is not None and target and target.casefold() != "nul":
                written.append(target)
            continue
        else:
            operator = _OPERATORS.match(code, i)
            if operator is not None:
                end_word()
                out.append(operator[0])
                i += len(operator[0])
                continue
            word.append(c)
        i += 1
    end_word()
    return out


def commands(code: str, written: list[str] | None = None) -> list[tuple[list[str], bool]]:
    """Each command of cmd code, with whether a `for` runs it once per file or line (`bulk`); the
    files its redirections write go to `written`."""
    found: list[tuple[list[str], bool]] = []
    current: list[str] = []
    bulk = False
    depth = 0  # inside a `for`'s set, `(...)` is its list, not a block
    for token in tokens(code, written):
        if current and current[0].casefold() == "for" and token == "(" and depth == 0:
            depth = 1
            current.append(token)
        elif depth:
            depth += 1 if token == "(" else -1 if token == ")" else 0
            current.append(token)
        elif current and current[0].casefold() == "for" and token.casefold() == "do":
            current = []
            bulk = True  # the rest of the line is its body
        elif token in ("&", "&&", "||", "|", "(", ")", "\n"):
            if current:
                found.append((current, bulk))
            current = []
            if token == "\n":
                bulk = False
        else:
            current.append(token)
    if current:
        found.append((current, bulk))
    return found


def switches(words: list[str]) -> set[str]:
    """The letters of a command's switches: `/s /q`, `/S/Q`, `//s`, `-s` all give {"s", "q"}."""
    letters: set[str] = set()
    for w in words:
        spelled = windows_switch(w)
        if spelled.startswith("/"):
            letters.update(part for part in spelled.split("/") if part)
    return letters


def cmd_code(ctx: Analysis, code: str, what: str, script: str | None = None) -> None:
    """Judge `code` as cmd would run it: each of its commands, `call` and `start` followed, an
    `if`'s command after its condition."""
    for line in _logical_lines(code):
        stripped = line.strip().lstrip("@").lstrip()
        if stripped.casefold().startswith(("rem ", "::")) or stripped.casefold() == "rem" or stripped[:1] == ":":
            continue  # a remark, or a label
        written: list[str] = []
        for words, bulk in commands(stripped, written):
            command(ctx, words, bulk, what, script)
        for target in written:
            note_written(ctx, target)


def _logical_lines(code: str) -> list[str]:
    """cmd's lines: one that ends in `^` goes on with the next, and a `(` not closed on its line takes
    the lines up to its `)`, each a command of the block (a review, 2026-12-05: a `for ... do (`
    whose `del` was on the next line was judged as a lone `del`)."""
    lines: list[str] = []
    block, carry, depth = "", "", 0
    for raw in code.splitlines():
        line = carry + raw
        if line.rstrip().endswith("^") and not line.rstrip().endswith("^^"):
            carry = line.rstrip()[:-1]
            continue
        carry, stripped = "", line.strip()
        if depth == 0:
            block = line
        elif stripped:
            joined = block.rstrip().endswith("(") or stripped.startswith(")")
            block = f"{block.rstrip()}{' ' if joined else ' & '}{stripped}"
        depth = max(0, depth + _open_parentheses(stripped))
        if depth == 0:
            lines.append(block)
    if depth or carry:
        lines.append(block + carry)
    return lines


def _open_parentheses(line: str) -> int:
    """How many more `(` than `)` a line has outside quotes."""
    depth, quoted = 0, False
    for char in line:
        if char == '"':
            quoted = not quoted
        elif not quoted and char in "()":
            depth += 1 if char == "(" else -1
    return depth


def command(ctx: Analysis, words: list[str], bulk: bool, what: str, script: str | None) -> None:
    first = words[0].lstrip("@")
    joined = re.fullmatch(r"([a-zA-Z]+)(/.*)", first)  # `rd/s/q`: cmd ends a built-in's name at a slash
    if joined and joined[1].casefold() in _BUILTINS:
        words = [joined[1], joined[2], *words[1:]]
        first = joined[1]
    if not first:
        return
    name = _command_name(first)
    rest = words[1:]
    if "%" in first or "!" in first:
        ctx.add(D, "cannot tell what runs: the command name comes from {source}", source=_snip(first))
    elif name in ("call", "start", "else"):
        if name == "start":  # `start /b "title" /wait prog`: options, then a quoted title before a program
            while rest and rest[0].startswith("/"):
                rest = rest[1:]
            if len(rest) > 1 and getattr(rest[0], "quoted", False):
                rest = rest[1:]
            while rest and rest[0].startswith("/"):
                rest = rest[1:]
        if rest and not rest[0].startswith(":"):  # `call :label` jumps within the script
            command(ctx, rest, bulk, what, script)
    elif name == "if":
        condition = _if_command(rest)
        if condition:
            command(ctx, condition, bulk, what, script)
    elif name in _REMOVES:
        if "s" in switches(rest):
            ctx.add(D, "{name} /s: recursive removal", name=name, danger=Danger.LOSES_FILES)
        elif bulk:
            ctx.add(D, "{name} in a for loop: removes every file it is given", name=name, danger=Danger.LOSES_FILES)
        else:
            ctx.add(M, "{name}: removes files", name=name)
    elif name in _ASSOCIATIONS and any("=" in w for w in rest):
        ctx.add(D, "{name}: changes Windows settings that other programs read", name=name)
    elif name in _WRITES:
        ctx.add(M, "{value}: not known to be read-only", value=name)
        operands = [w for w in rest if not windows_switch(w).startswith("/")]
        if name in ("ren", "rename") and len(operands) == 2:  # `ren dir\old new`: new is beside old
            note_written(ctx, posixpath.join(posixpath.dirname(operands[0].replace("\\", "/")), operands[1]))
        elif name == "mklink" and operands:
            note_written(ctx, operands[0])
        elif name in ("copy", "move") and len(operands) > 1:
            note_written(ctx, operands[-1])
    elif name not in _QUIET:
        program = first if re.search(r"[/\\]", first) or not re.search(r"\.(?:bat|cmd)$", first, re.I) else f"./{first}"
        ctx.sub_script(" ".join(shlex.quote(w) for w in [program, *rest]), what, script)


def note_written(ctx: Analysis, target: str) -> None:
    """A file cmd writes, judged as a bash target is (a script run after it, git's hooks, Claude's
    settings: `Analysis.note_written`); C:\\x is Git Bash's /c/x."""
    path = target.replace("\\", "/")
    drive = re.match(r"([A-Za-z]):/(.*)", path)
    if drive:
        path = f"/{drive[1].lower()}/{drive[2]}"
    ctx.note_written(_Word(path, _snip(target), path), writes=True)


def _if_command(words: list[str]) -> list[str]:
    """The command an `if` runs: after `/i`, `not`, and `exist X`, `defined X`, `errorlevel N`,
    `A==B` or `A EQU B`."""
    i = 0
    while i < len(words) and words[i].casefold() in ("/i", "not"):
        i += 1
    if i < len(words) and words[i].casefold() in ("exist", "defined", "errorlevel", "cmdextversion"):
        i += 2
    elif i + 2 < len(words) and words[i + 1].casefold() in ("==", "equ", "neq", "lss", "leq", "gtr", "geq"):
        i += 3
    elif i < len(words) and "==" in words[i]:
        i += 1 if not words[i].endswith("==") else 2
    return words[i:]
