"""Files a shell or interpreter is fed as its code: piped, redirected, substituted into it
(`cat a.sh | bash`, `bash <(cat a.sh)`, `bash -c "$(cat a.sh)"`); read from bash's syntax tree.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from app.core.commands.pins.command_words import ASSIGNMENT, INTERPRETERS, NO_SCRIPT_OPTIONS, NOT_LITERAL, WRAPPERS

if TYPE_CHECKING:
    from tree_sitter import Node


# What a shell or interpreter is fed as its code: a file piped, redirected or substituted into it.
SHELLS = re.compile(r"^(source|\.|sh|bash|dash|zsh|ksh|mksh|fish|busybox)$")
SHELL_VALUES = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})  # options that take a value
READ_FROM = re.compile(r"-|/dev/stdin|/dev/fd/([0-9]+)|/proc/self/fd/([0-9]+)")  # an operand naming a descriptor
MAY_FEED = re.compile(  # an interpreter (or `eval`) named anywhere: only then is the command parsed
    INTERPRETERS.pattern.replace("^(", r"(?:^|[\s;&|(`{!/\"'])(eval|").replace(")$", r")(?=[\s;&|)<>\"']|$)")
)
MAX_FED = 32  # files pinned as what a pipe, a redirect or a substitution feeds


def fed_to_interpreters(command: str, folder: str) -> list[str]:
    """The files `command` feeds to a shell or interpreter as its code, named literally (red team,
    2026-12-05: `cat a.sh | bash`, `bash <(cat a.sh)`, `exec 3<a.sh; bash /dev/fd/3` ran a script
    rewritten after the prompt): those the commands piped into it read (their words, and what `<`
    gives them), those of a process substitution it runs, and those a `<` redirect opens on the
    descriptor it reads its code from; and those a command substitution reads into its inline code,
    into `eval`'s words or into a here-string or here-document on its input (`bash -c "$(cat a.sh)"`,
    `eval "$(< a.sh)"`, `bash <<< "$(cat a.sh)"`)."""
    if not MAY_FEED.search(command):
        return []  # no interpreter named: no parse
    from app.core.classifier.parser import _parser

    nodes = _descendants(_parser().parse(command.encode("utf-8", "surrogateescape")).root_node)
    opened: dict[int, list[str]] = {}  # what a redirect that lasts (`exec 3<f`, `{ ...; } 3<f`) opens
    for node in nodes:
        if node.type == "file_redirect" and _own_command(node) is None:
            fd, operator, value = _redirect(node)
            if operator in ("<", "<>") and value is not None:
                opened.setdefault(fd, []).append(value)
    found = [name for node in nodes if node.type == "command" for name in _fed(node, opened)]
    names = (name for name in dict.fromkeys(found) if not name.startswith(("~", "-")))
    return [posixpath.normpath(posixpath.join(folder, name)) for name in names][:MAX_FED]


def _descendants(root: Node) -> list[Node]:
    """`root` and every node under it, in the text's order."""
    found, todo = [], [root]
    while todo:
        node = todo.pop()
        found.append(node)
        todo.extend(reversed(node.children))
    return found


def _literal(node: Node) -> str | None:
    """A word's value when bash expands nothing in it; None otherwise."""
    text = (node.text or b"").decode("utf-8", "surrogateescape")
    if node.type in ("word", "number"):
        return None if NOT_LITERAL.search(text) else text
    if node.type == "raw_string":
        return text[1:-1]
    if node.type == "string" and all(c.type in ('"', "string_content") for c in node.children):
        return None if re.search(r"[$`\\]", text[1:-1]) else text[1:-1]
    if node.type == "concatenation":
        parts = [_literal(child) for child in node.children]
        return None if None in parts else "".join(p for p in parts if p is not None)
    return None


def _redirect(node: Node) -> tuple[int, str, str | None]:
    """A file redirect's descriptor, operator and literal target."""
    operator = next((c.type for c in node.children if not c.is_named), "")
    given = next((c.text or b"" for c in node.children if c.type == "file_descriptor"), b"")
    fd = int(given) if given.isdigit() else -1  # `{name}<f`: a descriptor bash picks
    targets = node.children_by_field_name("destination")
    value = _literal(targets[0]) if targets else None
    return (fd if fd >= 0 else 0 if operator.startswith("<") else 1), operator, value


def _own_command(redirect: Node) -> Node | None:
    """The simple command a redirect belongs to alone (`bash < a.sh`); None for one that lasts past
    it (`exec 3<a.sh`) or belongs to a group (`{ ...; } 3<a.sh`)."""
    parent = redirect.parent
    if parent is not None and parent.type == "redirected_statement":
        parent = parent.child_by_field_name("body")
    if parent is None or parent.type != "command":
        return None
    name = parent.child_by_field_name("name")
    return None if name is not None and _literal(name.children[0] if name.children else name) == "exec" else parent


def _argv(command: Node) -> tuple[list[Node], list[tuple[int, str, str | None]]]:
    """A command's words and its own redirects (a number touching a redirect is its descriptor:
    tree-sitter reads `bash 0<a.sh` as the word 0 and `<a.sh`)."""
    parent = command.parent
    redirects = [c for c in command.children if c.type == "file_redirect"]
    if parent is not None and parent.type == "redirected_statement":
        redirects += [c for c in parent.children if c.type == "file_redirect"]
    starts = {r.start_byte: r for r in redirects}
    words: list[Node] = []
    own: list[tuple[int, str, str | None]] = []
    touching: dict[int, int] = {}
    for child in command.children:
        if child.type == "command_name":
            words += child.children[:1]
        elif child.type == "number" and child.end_byte in starts and (child.text or b"").isdigit():
            touching[starts[child.end_byte].start_byte] = int(child.text or b"0")
        elif child.is_named and child.type not in ("variable_assignment", "file_redirect", "herestring_redirect",
                                                   "heredoc_redirect", "comment"):  # fmt: skip
            words.append(child)
    for redirect in redirects:
        fd, operator, value = _redirect(redirect)
        own.append((touching.get(redirect.start_byte, fd), operator, value))
    return words, own


def _fed(command: Node, opened: Mapping[int, list[str]]) -> list[str]:
    """What an interpreter `command` runs is fed from files: the names of those files."""
    words, own = _argv(command)
    values = [_literal(word) for word in words]
    at = 0
    while at < len(values) and values[at] is not None:
        first = values[at] or ""
        if first == "timeout":  # and its duration
            at += 2
        elif first in WRAPPERS or first.startswith("-") or ASSIGNMENT.match(first):
            at += 1
        else:
            break
    if at < len(values) and values[at] == "eval":  # its words are the code, substitutions' output too
        return [name for word in words[at + 1 :] for name in _read_by(word)]
    if at >= len(values) or values[at] is None or not INTERPRETERS.match(posixpath.basename(values[at] or "")):
        return []
    shell = bool(SHELLS.match(posixpath.basename(values[at] or "")))
    reads: int | None = 0  # the descriptor it reads its code from; None: inline code or a script by name
    found: list[str] = []
    k = at + 1
    while k < len(words):
        word, value = words[k], values[k]
        if word.type == "process_substitution":
            found += _read_by(word)
            reads = None
            break
        if value is None:  # `bash -c"$(cat a.sh)"`, `bash "$(cat name)"`: what it reads makes the code
            found += _read_by(word)
            reads = None
            break
        if value in NO_SCRIPT_OPTIONS and not shell:  # `bash -e`: errexit
            found += _inline(words[k + 1 :])
            reads = None
            break
        if shell and value in SHELL_VALUES:
            k += 2
            continue
        if value[:1] in "-+" and len(value) > 1 and not READ_FROM.fullmatch(value):
            short = value[:2] != "--"
            if (short and ("c" in value[1:] if shell else value.endswith(("c", "e")))) or value == "--command":
                found += _inline(words[k + 1 :])
                reads = None  # `bash -ec CODE`, `perl -ne CODE`
                break
            if short and shell and "s" in value[1:]:
                break  # `sh -s ARGS`: the code comes from its input
            k += 1
            continue
        named = READ_FROM.fullmatch(value)
        reads = None if named is None else int(named[1] or named[2] or 0)
        break
    if reads is None:
        return found
    for fd, operator, target in own:
        if fd == reads and target is not None and operator in ("<", "<>"):
            found.append(target)
        elif fd == reads and operator == "<&" and target is not None and target.isdigit():
            found += opened.get(int(target), [])
    found += opened.get(reads, [])
    if reads == 0:  # a here-string's or an unquoted here-document's substitutions, read as its code
        found += [name for here in _here_texts(command) for name in _read_by(here)]
    element, parent = command, command.parent
    if parent is not None and parent.type == "redirected_statement":
        element, parent = parent, parent.parent
    if reads == 0 and parent is not None and parent.type == "pipeline":  # what the commands before it read
        found += [n for c in parent.children if c.is_named and c.end_byte <= element.start_byte for n in _read_by(c)]
        holder = parent.parent  # tree-sitter puts `cat <<EOF | bash`'s pipe in the here-document
        if holder is not None and holder.type == "heredoc_redirect" and holder.parent is not None:
            feeder = holder.parent.named_children[0]
            while feeder.type == "list":  # `a && cat <<EOF | bash`: cat's
                feeder = feeder.named_children[-1]
            found += [n for c in [feeder, *_here_bodies(holder)] for n in _read_by(c)]
    return found


def _inline(words: Sequence[Node]) -> list[str]:
    """What the command substitutions in an interpreter's inline code read (`bash -c "$(cat a.sh)"`):
    every word after the option, as where the code starts depends on each interpreter's options
    (`bash -c -e CODE`, `perl -e A -e B`), and pinning one too many costs nothing."""
    return [name for word in words for name in _read_by(word)]


def _here_texts(command: Node) -> list[Node]:
    """The here-strings and here-documents a command reads on its input (descriptor 0)."""
    nodes, element, parent = list(command.children), command, command.parent
    while parent is not None and parent.type == "list" and parent.named_children[-1].start_byte == element.start_byte:
        element, parent = parent, parent.parent  # tree-sitter gives `a && bash <<EOF`'s to the list
    if parent is not None and parent.type == "redirected_statement":
        nodes += parent.children
    ours = [n for n in nodes if all(c.type != "file_descriptor" or c.text == b"0" for c in n.children)]
    return [*(n for n in ours if n.type == "herestring_redirect"), *_here_bodies(*ours)]


def _here_bodies(*nodes: Node) -> list[Node]:
    """The text of the here-documents among `nodes` (not what tree-sitter puts beside it: `<<EOF | x`)."""
    return [c for n in nodes if n.type == "heredoc_redirect" for c in n.children if c.type == "heredoc_body"]


def _read_by(node: Node) -> list[str]:
    """The files the commands in `node` may read: their words past the program that name no option,
    and what `<` redirects give them (`$(< a.sh)` too: bash's way to read a file with no command)."""
    found: list[str] = []
    for inner in _descendants(node):
        if inner.type == "file_redirect" and inner.parent is not None and inner.parent.type == "command_substitution":
            _fd, operator, value = _redirect(inner)
            found += [value] if operator == "<" and value else []
        elif inner.type == "command":
            words, own = _argv(inner)
            if words and _literal(words[0]) not in ("echo", "printf"):  # their words are the text (judged)
                found += [v for v in map(_literal, words[1:]) if v and not v.startswith("-")]
            found += [value for _fd, operator, value in own if operator == "<" and value]
    return found[:MAX_FED]
