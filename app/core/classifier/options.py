"""Reading a command's name and its options (getopt and GNU style) from its words."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .findings import D, _snip
from .tables import is_interpreter
from .words import _Word, splits_into_words

if TYPE_CHECKING:
    from .rule import Analysis


def _command_name(value: str) -> str:
    """What a command name means, whatever its folder or case (macOS and Windows ignore case)."""
    path = value.replace("\\", "/")
    name = path.rsplit("/", 1)[-1].casefold()
    if name.endswith(".exe"):
        name = name[:-4]
    if name == "bash" and _WSL_LAUNCHER.search(path):
        return "wsl"  # Windows' own bash.exe starts WSL, outside the job (Git's is in its bin folder)
    return name


_WSL_LAUNCHER = re.compile(r"(?:^|/)(?:system32|sysnative)/bash(?:\.exe)?$", re.I)


def _split_options(
    args: list[_Word], with_value: frozenset[str] = frozenset(), *, clusters: bool = False
) -> tuple[list[_Word], int]:
    """Leading options (getopt style) and the index of the first operand after them. `clusters`:
    the program has no one-dash long options, so `-tF FILE` is -t and -F taking the next word."""
    i = 0
    while i < len(args):
        value = args[i].value
        if value is None or not value.startswith("-") or value == "-":
            break
        if value == "--":
            return args[:i], i + 1
        i += 2 if takes_value(value, with_value) or (clusters and _cluster_ends_wanting(value, with_value)) else 1
    return args[:i], i


def _cluster_ends_wanting(word: str, with_value: frozenset[str]) -> bool:
    """A cluster of short options (`-tF`) whose first letter taking a value is its last one."""
    if word.startswith("--") or len(word) < 3:
        return False
    first = next((k for k, letter in enumerate(word[1:], 1) if f"-{letter}" in with_value), None)
    return first == len(word) - 1


def long_option(word: str, names: Iterable[str]) -> str | None:
    """The long option `word` (`--ch=DIR`) names among `names` (without `--`), as getopt_long reads
    it: exactly, or the one name it is a prefix of; None when none or several are."""
    option = word[2:].partition("=")[0]
    found = [name for name in names if name == option] or [name for name in names if name.startswith(option)]
    return found[0] if len(found) == 1 else None


# An expansion that is always one number, never an option nor two words: the shell's process id, its
# parent's, the last background job's, the last status, the number of arguments.
ONE_NUMBER = re.compile(r'"?\$(?:\$|PPID|BASHPID|!|\?|#|\{(?:\$|PPID|BASHPID|!|\?|#)\})"?')


def getopt(args: list[_Word], values: str, longs: dict[str, str]) -> tuple[set[str], int, bool]:
    """The options getopt reads before the first operand (a `+` optstring: it stops there), as the
    letters given (a long option by the letter in `longs`, any unambiguous prefix of it), the index of
    the first operand, and whether an expansion stands where an option may be (`$OPTS`: which were
    given cannot be told). `values`: the letters that take a value (the rest of the word, or the next)."""
    given: set[str] = set()
    i = 0
    while i < len(args):
        v = args[i].value
        if v is None and ONE_NUMBER.fullmatch(args[i].source):
            break
        if v is None:
            return given, i, True
        if v == "--":
            return given, i + 1, False
        if not v.startswith("-") or v == "-":
            break
        if v.startswith("--"):
            known = long_option(v, longs)
            letter = longs[known] if known else ""
            given.add(letter)
            i += 2 if letter and letter in values and "=" not in v else 1
            continue
        i += 1
        for k, letter in enumerate(v[1:], 1):
            given.add(letter)
            if letter in values:
                i += 0 if k < len(v) - 1 else 1  # `-c3`, or `-c 3`
                break
    given.discard("")
    return given, min(i, len(args)), False


def takes_value(option: str, with_value: frozenset[str]) -> bool:
    """Whether the next word is this option's value: a long one also by any unambiguous prefix, as
    getopt reads it (`timeout --kill 1 5 rm ...` is `--kill-after 1`; read as a flag, its value was
    taken for the command: review, 2026-12-04). Short options only as listed: in a cluster a letter
    whose value is optional takes the rest of the word (`xargs -iL rm`), which a table cannot tell."""
    if option in with_value:
        return True
    return (
        option.startswith("--")
        and "=" not in option
        and any(o.startswith(option) for o in with_value if o.startswith("--"))
    )


def _short_flags(words: list[_Word]) -> set[str]:
    flags: set[str] = set()
    for w in words:
        v = w.value
        if v and v.startswith("-") and not v.startswith("--"):
            flags.update(v[1:])
    return flags


def _long_flags(words: list[_Word]) -> set[str]:
    return {w.value.split("=", 1)[0] for w in words if w.value and w.value.startswith("--")}


def options_end(args: list[_Word]) -> int:
    """Where `--` ends a command's options (len(args) when none does)."""
    return next((k for k, a in enumerate(args) if a.value == "--"), len(args))


def _operands(args: list[_Word], with_value: frozenset[str] = frozenset()) -> list[_Word]:
    """Words that are not options, GNU style: options may follow operands until `--`."""
    out: list[_Word] = []
    i = 0
    end = False
    while i < len(args):
        w = args[i]
        v = w.value
        if not end and v == "--":
            end = True
        elif not end and v is not None and v.startswith("-") and v != "-":
            if takes_value(v, with_value):
                i += 1
        else:
            out.append(w)
        i += 1
    return out


def expanded(ctx: Analysis, word: _Word | None, what: str) -> bool:
    """Whether `word`, the subcommand of `what`, comes from an expansion: it may then be any of them,
    the most dangerous included, so the command is held ("cannot tell")."""
    if word is None or word.value is not None:
        return False
    ctx.add(D, "cannot tell: {what} subcommand from {source}", what=what, source=_snip(word.source))
    return True


def subcommand(ctx: Analysis, name: str, args: list[_Word], values: frozenset[str]) -> tuple[str | None, list[_Word]]:
    """The subcommand after the options before it ("" when none) and the words after it. None for
    the subcommand when an expansion names it: held ("cannot tell"), since it may be any of them."""
    first = next(iter(_operands(args, values)), None)
    if first is None:
        return "", []
    at = next(k for k, word in enumerate(args) if word is first)
    return (None if expanded(ctx, first, name) else first.value or ""), args[at + 1 :]


_CODE_FLAG = re.compile(r"-[A-Za-z]*[ce]|--?(?:eval|command|exec|execute)|/[ck]", re.I)  # sh -c, node -e, pwsh -Command


def fills_code(args: list[_Word], marks: list[str]) -> bool:
    """Whether code a program is given (the word after `-c`, `-e`, `--eval`..., or after `=`) holds
    one of `marks`, which xargs -I or find -exec replace with the words they read or the files
    they find: `xargs -I{} sh -c '{}'` runs what it reads (fifth red team); `sh -c '...' _ {}` does not."""
    for k, a in enumerate(args):
        value = a.value or ""
        flag, equals, code = value.partition("=")
        given = code if equals and flag.startswith("--") and _CODE_FLAG.fullmatch(flag) else None
        if given is None and k and _CODE_FLAG.fullmatch(args[k - 1].value or ""):
            given = value
        runner = any(is_interpreter(_command_name(w.value or "")) for w in args[:k])  # not `grep -e {}`
        if given is not None and runner and any(mark in given for mark in marks):
            return True
    return False


def windows_switch(value: str | None) -> str:
    """A Windows program's switch in one spelling, folded: `/create`. Git Bash turns a leading `//`
    into `/` for native programs (`//create` is what a model writes so that MSYS does not read
    `/create` as a path), and most of these programs take `-create` too."""
    value = (value or "").casefold()
    if value.startswith("//"):
        return value[1:]
    if value.startswith("-") and not value.startswith("--"):
        return "/" + value[1:]
    return value


def options_from(ctx: Analysis, name: str, source: str) -> None:
    """Held: options a word an expansion decides gives `name` may be any, the most dangerous included."""
    ctx.add(D, "cannot tell: {name} takes options from {source}", name=name, source=_snip(source))


# `$NAME`, `${NAME}`; and what `$(pwd)`, `$(id -u)`, `$(id -g)` print: known to hold no blank
_VARIABLE_USE = re.compile(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))")
_STEADY_OUTPUT = re.compile(r"\$\((pwd|id -[ug])\)|`(pwd|id -[ug])`")


def splits_into_options(ctx: Analysis, word: _Word) -> bool:
    """Whether bash may split a word into several, options among them: an expansion outside double
    quotes (`-name x${IFS}-delete`, `-name $f`: a red team, 2026-12-05), unless each one's value is
    known to hold no blank (a review, 2026-12-06: `-v $HOME:/h`, `--user $(id -u):$(id -g)`,
    `depth=2; find . -maxdepth $depth` are everyday): `$UID`, the home and the shell's folder (when
    neither holds a blank), and a variable the command itself gave such a value (`_Report.known`).
    Not once the command sets IFS, or a variable only named when it runs."""
    if word.value is not None:
        return False
    report = ctx.report
    if "IFS" in report.variables or "*" in report.variables:
        return splits_into_words(word.source)
    places = not any(c.isspace() for c in f"{ctx.cwd or ' '}{ctx.home}")
    steady = {"UID": "0", "EUID": "0"} | ({"HOME": "/h", "PWD": "/p"} if places else {})
    known = {name: value for name, value in steady.items() if name not in report.variables}
    if ctx.nesting == 0 and not report.repeating:  # not in a loop or a function: set before it runs here
        known |= report.values
    text = _VARIABLE_USE.sub(lambda m: known.get(m[1] or m[2], m[0]), word.source)
    text = _STEADY_OUTPUT.sub(lambda m: m[0] if (m[1] or m[2]) == "pwd" and not places else "0", text)
    return splits_into_words(text)


def split_options(ctx: Analysis, name: str, source: str) -> None:
    """Held: a value bash may split into words, any option among them; quoted, it is one word (the
    model is told so: a review, 2026-12-06)."""
    ctx.add(
        D,
        "cannot tell: {name}: the value {source} is not quoted, and bash may split it into options: "
        'quote it ("$x") to run without asking',
        name=name,
        source=_snip(source),
    )
