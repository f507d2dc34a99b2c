"""What a held command runs, fixed when the user is asked, and checked again right before it starts.

A prompt shows text; what runs also depends on the folder the text names, the scripts it runs by
path and the environment it runs with. Each can change while the prompt is up (a symlink
re-pointed, a script rewritten), so the approval pins them: the folder by identity (resolved path,
device and inode), each script by a hash of its content, the environment by a digest of every
value. The command starts in the pinned folder, and only if nothing changed.

Scripts are the files the classifier read to judge the command (behind wrappers, in conditions, and
those a script sources or runs), and those found in the simple commands of the text: a program named
by path (`./x.sh`), and the words given to an interpreter (`bash x.sh`, `python3 x.py`, `source x`);
with them the files fed to a shell as its code (`cat a.sh | bash`, `bash <(cat a.sh)`, `exec 3<a.sh;
bash /dev/fd/3`) or read into its code by a command substitution (`bash -c "$(cat a.sh)"`,
`eval "$(< a.sh)"`, `bash <<< "$(cat a.sh)"`), the interpreters their `#!` lines name, the makefiles
make reads (`-f`, `-C`, `include`, found in an `-I` folder too, and those MAKEFILES names) and the
hooks a git verb runs, with the template `git init` or `git clone` copies into the repository it
makes (`--template`, GIT_TEMPLATE_DIR, init.templateDir). A script made by the command itself
(absent when asked) must still be absent at start.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
import shlex
import stat
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from app.core.channel.protocol import MAX_ENV_SHOWN, MAX_PIN_SCRIPTS, Pin
from app.core.classifier.tables import GIT_PLACES
from app.core.messages import (
    ENV_CHANGED_REASON,
    FOLDER_GONE_REASON,
    FOLDER_REPLACED_REASON,
    SCRIPT_CHANGED_REASON,
)

if TYPE_CHECKING:
    from tree_sitter import Node

ABSENT = "absent"
NOT_A_FILE = "not a file"
HASH_LIMIT_BYTES = 64 * 1024 * 1024  # beyond this a script is pinned by size and change time
# Programs that run the file named by their first argument.
INTERPRETERS = re.compile(
    r"^(source|\.|sh|bash|dash|zsh|ksh|mksh|fish|busybox|python[0-9.]*|pypy[0-9.]*|perl[0-9.]*|ruby[0-9.]*|node|nodejs"
    r"|deno|bun|php[0-9.]*|lua[0-9.]*|Rscript|tclsh|osascript|pwsh)$"
)
# Options after which an interpreter runs no file (code inline, a module, a command string).
NO_SCRIPT_OPTIONS = frozenset({"-c", "-m", "-e", "-E", "--eval", "-p", "--print", "-r", "--command"})
WRAPPERS = frozenset({"exec", "nohup", "command", "builtin", "time", "nice", "env", "sudo", "doas", "stdbuf"})
SEPARATORS = frozenset({"&&", "||", ";", "|", "&", "|&", ";;", "(", ")", "{", "}", "!", "then", "do", "else"})
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# The prompt shows every environment value the model sends: many change which program runs (PATH,
# GIT_DIR, CC, RUSTC_WRAPPER, npm_config_script_shell...), and no list of them is complete. A value
# whose name says it is a secret is masked, unless the name is one that picks a program.
SHOWN_ENV = re.compile(r"^(PATH|HOME|CDPATH|TMPDIR|SHELL|EDITOR|VISUAL|PAGER|MANPAGER|XDG_.+|GIT_.+|.*_ASKPASS)$")
# Of those, what makes a command wait for the user (admission): the folders programs, repositories and
# settings files are found in, and a program named by its path; a program named alone (`PAGER=cat`)
# is found on the PATH as before (red team, 2026-12-04: a planted `ls` first on a PATH ran unasked).
# Any case: Windows' `Path` is the PATH.
PICKS_FOLDERS = re.compile(
    rf"^(PATH|HOME|CDPATH|XDG_.+|GIT_(?:DIR|{GIT_PLACES}))$",
    re.I,
)
NAMES_PROGRAM = re.compile(r"^(SHELL|EDITOR|VISUAL|PAGER|MANPAGER|.*_ASKPASS)$", re.I)
BY_PATH = re.compile(r"[/\\]|^[A-Za-z]:")  # a program named by its path, POSIX or Windows
SECRET_NAME = re.compile(r"(TOKEN|SECRET|PASSWORD|PASSWD|PASS$|CREDENTIAL|API_?KEY|PRIVATE|AUTH|COOKIE|SESSION)", re.I)
MASKED = "********"
SHOWN_VALUE_CHARS = 300  # the start of a value decides (PATH's first folders); the digest covers it all


def _simple_commands(command: str) -> list[list[str]]:
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


def script_paths(command: str, folder: str) -> list[str]:
    """The files `command` runs by path, resolved against `folder` (best effort, never raises)."""
    found = [script for simple in _simple_commands(command) for script in _scripts_of(simple)]
    paths = []
    for name in dict.fromkeys(found):
        if "$" in name or "`" in name or name.startswith("~"):
            continue  # expanded by bash: what it names is not known here
        paths.append(posixpath.normpath(posixpath.join(folder, name)))
    return paths[:MAX_PIN_SCRIPTS]


def _program_of(words: list[str]) -> list[str]:
    """A simple command's program and its arguments, past assignments and wrappers."""
    while words and (ASSIGNMENT.match(words[0]) or words[0] in WRAPPERS or words[0].startswith("-")):
        words = words[1:]
    return words


# The files a build tool or package manager runs from the working folder: pinned with the command.
PROJECT_FILES = {"make": ("GNUmakefile", "makefile", "Makefile"), "gmake": ("GNUmakefile", "makefile", "Makefile"),
                 **dict.fromkeys(("npm", "yarn", "pnpm", "bun"), ("package.json",))}  # fmt: skip
MAKE_VALUES = "CEfIoW"  # make's short options that take a value (`-f FILE`, `-fFILE`, `-sf FILE`)
# The shortest prefix getopt takes of each long option
MAKE_LONG = {"--file": "--fi", "--makefile": "--mak", "--directory": "--di", "--include-dir": "--in"}
MAKE_SHORT = {"f": "--file", "C": "--directory", "I": "--include-dir"}
MAX_MAKEFILES = 16  # included ones, followed from those make reads first; as many again named by MAKEFILES
INCLUDE = re.compile(r"^ *(?:-include|sinclude|include)\s+(.+)")
NOT_LITERAL = re.compile(r"[$`*?\[{\\%()]|^~")  # what bash or make would expand


def _literal_name(value: str | None) -> bool:
    return bool(value) and not NOT_LITERAL.search(value or "")


def _here(command: str, folder: str) -> Iterator[tuple[list[str], str, dict[str, str]]]:
    """Each simple command's program and arguments, the folder a literal `cd` before it moved to
    (`cd sub && make`), and the variables the text gives its environment (`MAKEFILES=x.mk make`,
    `env X=1 make`, `export X=1; make`), best effort."""
    here, exported = folder, dict[str, str]()
    for simple in _simple_commands(command):
        words = _program_of(simple)
        given = _assignments(simple[: len(simple) - len(words)])
        if words[:1] == ["cd"]:
            targets = [w for w in words[1:] if not w.startswith("-")]
            if len(targets) == 1 and _literal_name(targets[0]):
                here = posixpath.normpath(posixpath.join(here, targets[0]))
        elif words[:1] == ["export"]:
            exported.update(_assignments(words[1:]))
        elif words:
            yield words, here, {**exported, **given}


def _assignments(words: Sequence[str]) -> dict[str, str]:
    """The variables `words` set to a value bash expands nothing in (`X=1`, not `X=$Y`)."""
    pairs = (word.partition("=") for word in words if ASSIGNMENT.match(word))
    return {name: value for name, _equals, value in pairs if not NOT_LITERAL.search(value)}


def project_files(command: str, folder: str, env: Mapping[str, str] | None = None) -> list[str]:
    """The makefiles or package.json of each build tool `command` runs in `folder` with `env` (red
    team, 2026-12-04: a Makefile's recipe rewritten after the prompt ran; 2026-12-05: one named by
    `-f`, in a `-C` folder, included by the Makefile, found in an `-I` folder or named by MAKEFILES)."""
    found: list[str] = []
    for words, here, assigned in _here(command, folder):
        tool = posixpath.basename(words[0])
        for where in dict.fromkeys((folder, here)):
            if tool in ("make", "gmake"):
                found += makefiles(words[1:], where, {**(env or {}), **assigned}.get("MAKEFILES"))
            else:
                found += [posixpath.join(where, name) for name in PROJECT_FILES.get(tool, ())]
    return list(dict.fromkeys(found))


def makefiles(args: Sequence[str], where: str, variable: str | None = None) -> list[str]:
    """The makefiles `make ARGS` reads in `where`: first those MAKEFILES names (`variable`, or its
    value on the command line), then those `-f` names (else the default names), all in the folder
    the `-C`s move to, then those they include, at most MAX_MAKEFILES more. A name make searches
    for (one MAKEFILES or `include` names) is pinned where make looks, up to the first there: the
    folder, then each `-I` folder; its own include folders (/usr/include...) are not the project's."""
    files: list[str] = []
    folders: list[str] = []  # -I
    given = False  # a -f: the default names are not read
    i = 0
    while i < len(args) and args[i] != "--":
        arg, option, value = args[i], "", None
        if arg.startswith("--"):
            name, equals, rest = arg.partition("=")
            option = next((f for f, least in MAKE_LONG.items() if name.startswith(least) and f.startswith(name)), "")
            if option and not equals:
                i += 1
                rest = args[i] if i < len(args) else ""
            value = rest
        elif arg.startswith("-") and len(arg) > 1:
            at = next((k for k, letter in enumerate(arg) if k and letter in MAKE_VALUES), None)
            if at is not None:
                option = MAKE_SHORT.get(arg[at], "")
                value = arg[at + 1 :]
                if not value:
                    i += 1
                    value = args[i] if i < len(args) else ""
        elif arg.startswith("MAKEFILES="):  # a variable on the command line wins over the environment's
            variable = arg.partition("=")[2]
        i += 1
        given = given or option in ("--file", "--makefile")
        if not option or not _literal_name(value) or value == "-":
            continue
        if option == "--directory":  # make moves first: -f and -I name files in the folder it moves to
            where = posixpath.normpath(posixpath.join(where, value or ""))
        else:
            (folders if option == "--include-dir" else files).append(value or "")
    found = [posixpath.normpath(posixpath.join(where, name)) for name in files]
    read = found if given else [posixpath.join(where, name) for name in PROJECT_FILES["make"]]
    folders = [posixpath.normpath(posixpath.join(where, name)) for name in folders]
    first = [path for name in (variable or "").split() if _literal_name(name) for path in _looked(name, where, folders)]
    first = list(dict.fromkeys(first))[:MAX_MAKEFILES]
    return [*first, *read, *_included([*first, *read], where, folders)]


def _looked(name: str, where: str, folders: Sequence[str]) -> list[str]:
    """Where make looks for a makefile `include` or MAKEFILES names: in its folder, then in each `-I`
    folder, up to the first that has it (one put earlier after the prompt would be read instead)."""
    found = []
    for folder in [where, *folders] if not name.startswith("/") else ["/"]:
        found.append(posixpath.normpath(posixpath.join(folder, name)))
        if os.path.exists(found[-1]):
            break
    return found


def _included(makefiles: Sequence[str], where: str, folders: Sequence[str] = ()) -> list[str]:
    """The files `include`, `-include` and `sinclude` name literally in `makefiles` (and in those, in
    turn), where make looks for them from its folder `where` and the `-I` `folders`, at most
    MAX_MAKEFILES."""
    todo, found = list(makefiles), list[str]()
    while todo and len(found) < MAX_MAKEFILES:
        text = _head(todo.pop(0), MODULE_BYTES)
        for line in (text or "").replace("\\\n", " ").splitlines():
            directive = INCLUDE.match(line)  # a recipe's line starts with a tab: bash's, not make's
            for name in directive[1].split("#", 1)[0].split() if directive else ():
                for path in _looked(name, where, folders) if _literal_name(name) else ():
                    if path not in found and path not in makefiles:
                        found.append(path)
                        todo.append(path)
    return found[:MAX_MAKEFILES]


def _head(path: str, size: int) -> str | None:
    """The start of a regular file (never a FIFO or a device put in its place), or None."""
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return None
        return os.read(descriptor, size).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(descriptor)


def programs_named(command: str) -> list[str]:
    """The programs `command` names alone, wrappers (`sudo`, `env`) included: what PATH decides."""
    names: list[str] = []
    for words in _simple_commands(command):
        rest = _program_of(words)
        names += [word for word in words[: len(words) - len(rest)] if word in WRAPPERS] + rest[:1]
    return [n for n in dict.fromkeys(names) if re.fullmatch(r"[\w.+-]+", n) and n not in SHELL_WORDS]


def programs_on_path(command: str, path: str, folder: str | None = None) -> list[str]:
    """For each program `command` names alone, where `path` (the command's PATH) finds it (`on_path`)."""
    words = (_program_of(simple) for simple in _simple_commands(command))
    return list(dict.fromkeys(p for w in words if w and "/" not in w[0] for p in on_path(w[0], path, folder)))


def _scripts_of(words: list[str]) -> list[str]:
    words = _program_of(words)
    if not words:
        return []
    program, args = words[0], words[1:]
    scripts = [program] if "/" in program else []
    if INTERPRETERS.match(posixpath.basename(program)):
        # Every word up to inline code: which one is the script depends on each interpreter's
        # options (`bash -O extglob x.sh`), and pinning one too many costs nothing.
        for arg in args:
            if arg in NO_SCRIPT_OPTIONS:
                break
            if not arg.startswith("-"):
                scripts.append(arg)
    return scripts


# A program file's language by its name, for the modules it loads (classifier/modules.py).
LANGUAGES = {".py": "python3", ".js": "node", ".mjs": "node", ".cjs": "node", ".ts": "node", ".pl": "perl",
             ".pm": "perl", ".rb": "ruby"}  # fmt: skip
MODULE_BYTES = 256 * 1024  # of each file, read for the modules it loads


def modules_of(programs: Sequence[str], folder: str, most: int = MAX_PIN_SCRIPTS) -> list[str]:
    """The project's modules the program files among `programs` load, and theirs in turn, at most
    `most`: pinned with them, so that one rewritten after the prompt is refused."""
    from app.core.classifier.modules import module_files, python_top_names
    from app.core.classifier.scripts import shebang_program

    roots = list(dict.fromkeys([folder, *(posixpath.dirname(p) for p in programs[:1])]))  # as Python's path
    todo, found = list(programs), list[str]()
    while todo and len(found) < most:
        path = todo.pop(0)
        text = _head(path, MODULE_BYTES)  # never a FIFO's open, nor a descriptor's read, that waits forever
        if text is None:
            continue
        # By its name, or its `#!` line (`./tool` run by python3)
        language = LANGUAGES.get(posixpath.splitext(path)[1]) or posixpath.basename(shebang_program(text) or "")
        for module in module_files(language, text, path, roots):
            if module not in found and module not in programs:
                found.append(module)
                todo.append(module)
        if language.startswith("python") and path in programs:  # `json.py` put beside it shadows the real one
            beside = posixpath.dirname(path)
            found += [f"{beside}/{name}.py" for name in sorted(python_top_names(text))]
    return found[:most]


def on_path(program: str, path: str, folder: str | None = None) -> list[str]:
    """Where a program named alone is looked for, in the folders of `path` (the command's PATH) this
    user may write, up to the first that has it: its file, and the places before it where one could
    be put after the prompt (red team, 2026-12-04: `deploy` in ~/.local/bin was rewritten after the
    user allowed the command, and the new one ran). Relative and empty entries are searched from
    `folder`, where bash runs."""
    if not re.fullmatch(r"[\w.+-]+", program) or program in SHELL_WORDS:
        return []
    from app.core.classifier.scripts import looked_up

    before, found = looked_up(program, path, folder)
    return [*before, found] if found is not None and os.access(posixpath.dirname(found), os.W_OK) else before


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


SHEBANG_DEPTH = 4  # Linux runs a `#!` line's interpreter that is itself a script, this many deep
ENV_VALUES = frozenset({"-u", "--unset", "-C", "--chdir"})


def interpreters_of(files: Sequence[str], path: str, folder: str) -> list[str]:
    """The interpreters the `#!` lines of `files` name that this user may change (red team,
    2026-12-05: `./run.sh` began `#!tool/interp`, and `interp` was rewritten after the prompt): by
    path, or found on `path` for `#!/usr/bin/env tool` with the places before it (`on_path`); and
    theirs, if they are scripts too. A relative one is found from `folder`, as the kernel does."""
    found: list[str] = []
    todo = [(file, 0) for file in dict.fromkeys(files)]
    seen = {file for file, _depth in todo}
    while todo and len(found) < MAX_PIN_SCRIPTS:
        file, depth = todo.pop(0)
        line = _head(file, 256) or ""
        words = line[2:].split("\n", 1)[0].split() if line.startswith("#!") else []
        if not words:
            continue
        interpreter = posixpath.normpath(posixpath.join(folder, words[0]))
        places = [interpreter] if _may_change(interpreter) else []
        program = _env_program(words[1:]) if posixpath.basename(interpreter) == "env" else None
        if program is not None and "/" in program:
            places += [p for p in [posixpath.normpath(posixpath.join(folder, program))] if _may_change(p)]
        elif program is not None:
            places += on_path(program, path, folder)
        for place in places:
            if place not in seen:
                seen.add(place)
                found.append(place)
                if depth + 1 < SHEBANG_DEPTH:
                    todo.append((place, depth + 1))
    return found[:MAX_PIN_SCRIPTS]


def _env_program(words: Sequence[str]) -> str | None:
    """The program `env` runs, past its options and assignments (`-S` splits the rest)."""
    at = 0
    while at < len(words):
        if words[at] in ENV_VALUES:
            at += 2
        elif words[at].startswith("-") or ASSIGNMENT.match(words[at]):
            at += 1
        else:
            return words[at]
    return None


def _may_change(path: str) -> bool:
    """Whether this user may change the file at `path`, or put one there (also through a link)."""
    from app.core.classifier.scripts import may_write

    try:
        real = os.path.realpath(path)
        return may_write(posixpath.dirname(path)) or may_write(posixpath.dirname(real)) or os.access(real, os.W_OK)
    except (OSError, ValueError):  # ValueError: a NUL in the name, which no file has
        return False


# The hooks a git verb runs (githooks(5)): those not there when the user is asked are pinned absent.
COMMIT_HOOKS = ("pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "post-rewrite")
MERGE_HOOKS = ("pre-merge-commit", "prepare-commit-msg", "commit-msg", "post-merge")
GIT_HOOKS: dict[str, tuple[str, ...]] = {
    "commit": COMMIT_HOOKS, "cherry-pick": COMMIT_HOOKS, "revert": COMMIT_HOOKS, "merge": MERGE_HOOKS,
    "pull": (*MERGE_HOOKS, "pre-rebase", "post-rewrite", "post-checkout"),
    "rebase": ("pre-rebase", "post-checkout", *COMMIT_HOOKS),
    "am": ("applypatch-msg", "pre-applypatch", "post-applypatch", "post-rewrite"), "push": ("pre-push",),
    **dict.fromkeys(("checkout", "switch", "worktree", "bisect", "stash"), ("post-checkout",)),
    **dict.fromkeys(("reset", "restore", "add", "rm", "mv", "fetch", "branch", "tag", "update-ref", "gc",
                     "maintenance", "notes", "read-tree", "update-index"), ()),
    "send-email": ("sendemail-validate",),
}  # fmt: skip
ANY_CHANGE = ("reference-transaction", "post-index-change", "pre-auto-gc")  # a ref, the index, the objects
GIT_VALUES = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix",
                        "--attr-source", "--list-cmds"})  # fmt: skip
MAX_HOOKS = 32  # files of one hooks folder pinned
TEMPLATE_VERBS = ("init", "clone", "submodule")  # they copy a template's hooks into a repository they make
TEMPLATE_HOOKS = ("post-checkout", *ANY_CHANGE)  # what `git clone` runs of them at once


def git_files(command: str, folder: str, env: Mapping[str, str]) -> list[str]:
    """For each git verb `command` runs, the repository's configuration and the hooks folder's files
    (core.hooksPath where the configuration sets it literally, else .git/hooks), and the hooks of the
    verb absent now (red team, 2026-12-05: a pre-commit hook put in a repository while the prompt was
    up ran with `git commit`). The repository is the one in the folder git runs in (made by the
    command, perhaps: `git init g && git -C g commit`) and the one above it. With them the template
    `git init` and `git clone` copy into the repository they make (`_template_files`)."""
    runs = [(words[1:], where, {**env, **assigned}) for words, here, assigned in _here(command, folder)
            if posixpath.basename(words[0]) == "git" for where in dict.fromkeys((folder, here))]  # fmt: skip
    found = [path for args, where, given in runs for path in _git_verb_files(args, where, given)]
    verbs = [parsed[0] for args, where, given in runs if (parsed := _git_words(args, where, given)) is not None]
    names = [*TEMPLATE_HOOKS, *(name for verb in verbs for name in GIT_HOOKS.get(verb, ()))]
    found += [path for args, where, given in runs for path in _template_files(args, where, given, names)]
    return list(dict.fromkeys(found))


def _git_words(
    args: Sequence[str], where: str, env: Mapping[str, str]
) -> tuple[str, list[str], str, str | None, dict[str, str]] | None:
    """`git ARGS` run in `where`: its verb and the verb's arguments, the folder `-C` moves to, the
    repository `--git-dir` (or GIT_DIR) names, and the settings `-c` gives (by their names in lower
    case); None without a verb, or where bash alone knows the folder."""
    git_dir, settings = env.get("GIT_DIR"), dict[str, str]()
    at = 0
    while at < len(args):
        arg, value = args[at], ""
        if arg in GIT_VALUES:
            value = args[at + 1] if at + 1 < len(args) else ""
            at += 2
        elif arg.startswith("--") and "=" in arg:
            arg, value = arg.split("=", 1)
            at += 1
        elif arg.startswith("-"):
            at += 1
            continue
        else:
            return arg, list(args[at + 1 :]), where, git_dir, settings
        if arg in ("-C", "--git-dir") and not _literal_name(value):
            return None  # a folder only bash knows
        if arg == "-C":
            where = posixpath.normpath(posixpath.join(where, value))
        elif arg == "--git-dir":
            git_dir = value
        elif arg == "-c":
            name, _equals, setting = value.partition("=")
            settings[name.lower()] = setting
    return None


def _user_configs(env: Mapping[str, str]) -> tuple[str, list[str]]:
    """The home folder and the user's git configurations, ~/.gitconfig first (it wins)."""
    home = env.get("HOME") or os.environ.get("HOME", "")
    config = env.get("XDG_CONFIG_HOME") or posixpath.join(home, ".config")
    return home, [posixpath.join(home, ".gitconfig"), posixpath.join(config, "git", "config")] if home else []


def _hook_files(hooks: str, names: Sequence[str]) -> list[str]:
    """A hooks folder's files (at most MAX_HOOKS) and the hooks `names` there, absent perhaps."""
    try:
        there = sorted(n for n in os.listdir(hooks) if not n.endswith(".sample"))[:MAX_HOOKS]
    except (OSError, ValueError):
        there = []
    return [posixpath.join(hooks, name) for name in dict.fromkeys([*there, *names])]


def _git_verb_files(args: Sequence[str], where: str, env: Mapping[str, str]) -> list[str]:
    """What `git ARGS` run in `where` reads that runs code: configurations and hooks (`git_files`)."""
    parsed = _git_words(args, where, env)
    if parsed is None:
        return []
    verb, _rest, where, git_dir, settings = parsed
    hooks_path = settings.get("core.hookspath")
    repositories = [(posixpath.join(where, git_dir), where)] if git_dir else _repositories(where)
    home, user_configs = _user_configs(env)
    found: list[str] = []
    for dot_git, top in repositories:
        common = _common_dir(dot_git)
        configs = [posixpath.join(common, "config"), *user_configs]
        chosen = hooks_path if hooks_path is not None else next(filter(None, map(_hooks_path, configs)), None)
        if chosen and chosen.startswith("~/"):
            chosen = posixpath.join(home, chosen[2:])
        hooks = posixpath.normpath(posixpath.join(top, chosen)) if chosen else posixpath.join(common, "hooks")
        names = [*GIT_HOOKS.get(verb, ()), *(ANY_CHANGE if verb in GIT_HOOKS else ())]
        found += [*configs, *_hook_files(hooks, names)]
    return found


def _template_files(args: Sequence[str], where: str, env: Mapping[str, str], names: Sequence[str]) -> list[str]:
    """The template `git ARGS` copies into the repository it makes (`init`, `clone`, a submodule's
    clone): `--template`, else GIT_TEMPLATE_DIR, else init.templateDir (`-c`, then the user's
    configurations). Its hooks become the new repository's, and `git clone` runs its post-checkout
    at once; its configuration is copied too, and may name other hooks by core.hooksPath. Pinned:
    that configuration, the hooks there now and `names` (those the command's git verbs run) absent
    now, in the template and in a hooks folder its configuration names by an absolute path. Git's
    own template (/usr/share/git-core/templates) is not the project's."""
    parsed = _git_words(args, where, env)
    if parsed is None or parsed[0] not in TEMPLATE_VERBS:
        return []
    verb, rest, where, _git_dir, settings = parsed
    home, user_configs = _user_configs(env)
    chosen: str | None = None
    for k, arg in enumerate(rest if verb != "submodule" else ()):
        if arg == "--":
            break
        option, equals, value = arg.partition("=")
        if len(option) > 2 and "--template".startswith(option):  # git takes any prefix that is not ambiguous
            chosen = value if equals else rest[k + 1] if k + 1 < len(rest) else ""
    for setting in (env.get("GIT_TEMPLATE_DIR"), settings.get("init.templatedir")):
        chosen = setting if chosen is None else chosen
    if chosen is None:
        chosen = next(filter(None, (_config_setting(c, "init", "templatedir") for c in user_configs)), None)
    if chosen and chosen.startswith("~/") and home:  # as bash (`--template ~/t`) or git (a setting) expands it
        chosen = posixpath.join(home, chosen[2:])
    if not _literal_name(chosen):  # none (git's own), empty (no template), or one only bash knows
        return []
    template = posixpath.normpath(posixpath.join(where, chosen or ""))
    config = posixpath.join(template, "config")
    found = [config, *_hook_files(posixpath.join(template, "hooks"), names)]
    inner = _hooks_path(config)
    if inner and inner.startswith("~/") and home:
        inner = posixpath.join(home, inner[2:])
    if inner and inner.startswith("/"):  # a relative one is in a work tree the command makes
        found += _hook_files(posixpath.normpath(inner), names)
    return found


def _repositories(where: str) -> list[tuple[str, str]]:
    """The `.git` git would use in `where` (one the command may make yet) and the repository above
    it, with the folder hooks run in."""
    found = [(posixpath.join(where, ".git"), where)]
    folder = where
    while True:
        if os.path.lexists(posixpath.join(folder, ".git")):
            found.append((posixpath.join(folder, ".git"), folder))
            break
        if os.path.isfile(posixpath.join(folder, "HEAD")) and os.path.isdir(posixpath.join(folder, "objects")):
            found.append((folder, folder))  # a bare repository: its hooks run in it
            break
        parent = posixpath.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return list(dict.fromkeys(found))


def _common_dir(dot_git: str) -> str:
    """The folder with a repository's configuration and hooks: `.git`, or for a worktree (a `.git`
    file saying `gitdir: ...`) the main repository's, as its `commondir` says."""
    git_dir = dot_git
    pointer = _head(dot_git, 4096) if os.path.isfile(dot_git) else None
    if pointer is not None and pointer.startswith("gitdir:"):
        git_dir = posixpath.normpath(posixpath.join(posixpath.dirname(dot_git), pointer[7:].strip()))
    common = _head(posixpath.join(git_dir, "commondir"), 4096)
    return posixpath.normpath(posixpath.join(git_dir, common.strip())) if common and common.strip() else git_dir


def _hooks_path(config: str) -> str | None:
    """core.hooksPath as a git configuration file sets it (its last value), or None."""
    return _config_setting(config, "core", "hookspath")


def _config_setting(config: str, section: str, key: str) -> str | None:
    """A setting as a git configuration file sets it (its last value), or None; `section` and `key`
    in lower case."""
    current, found = "", None
    for raw in (_head(config, MODULE_BYTES) or "").splitlines():
        line = raw.strip()
        header = re.match(r'\[\s*([A-Za-z0-9.-]+)(?:\s+"[^"]*")?\s*\](.*)', line)
        if header:
            current, line = header[1].lower(), header[2].strip()
        setting = re.match(r"([A-Za-z][A-Za-z0-9-]*)\s*=\s*(.*)", line)
        if current == section and setting and setting[1].lower() == key:
            found = _config_value(setting[2])
    return found


def _config_value(text: str) -> str:
    """A git configuration value: quotes and escapes undone, a comment and trailing blanks cut."""
    value, quoted, escaped = "", False, False
    for char in text:
        if escaped:
            value += {"n": "\n", "t": "\t", "b": "\b"}.get(char, char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char in "#;" and not quoted:
            break
        else:
            value += char
    return value.strip()


# A descriptor of the process that opens it: the server's, not the command's (and one may never end).
PROCESS_OWN = re.compile(r"^/(?:proc/|dev/(?:fd/|stdin$|stdout$|stderr$))")
SELF_PLACES = re.compile(r"^/proc/(?:self|thread-self)/(cwd|root)(/.*)?$")  # the command's folder, or /


def _pinnable(paths: Sequence[str], folder: str) -> list[str]:
    """`paths` as the server can pin them: `/proc/self/cwd/x` as the folder's `x`, and without those
    only the process opening them could read (`/dev/fd/3`: a descriptor of the server's)."""
    found = []
    for path in paths:
        own = SELF_PLACES.match(path)
        if own is not None:
            path = posixpath.normpath(posixpath.join(folder if own[1] == "cwd" else "/", (own[2] or "").lstrip("/")))
        if not PROCESS_OWN.match(path):
            found.append(path)
    return list(dict.fromkeys(found))


def content_hash(path: str) -> str:
    """The file's content as a hash; ABSENT when nothing is there, NOT_A_FILE for a folder or device."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):  # ValueError: a NUL in the name, which no file has
        return ABSENT
    if not os.path.isfile(path):
        return NOT_A_FILE
    if info.st_size > HASH_LIMIT_BYTES:
        return f"size {info.st_size} changed {info.st_mtime_ns} inode {info.st_ino}"
    digest = hashlib.sha256()
    try:  # not blocking: a FIFO put there since the stat is not waited on
        with open(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)), "rb") as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                return NOT_A_FILE
            for block in iter(lambda: file.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        return f"unreadable ({exc.strerror})"
    return digest.hexdigest()


def env_digest(env: Mapping[str, str]) -> str:
    material = "\0".join(f"{key}={value}" for key, value in sorted(env.items()))
    return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()


def folder_identity(folder: str) -> tuple[int, int]:
    info = os.stat(folder)
    return info.st_dev, info.st_ino


def shown_value(key: str, value: str) -> str:
    """An environment value as the prompt shows it: masked when its name says it is a secret, cut
    when long (saying how long it is)."""
    if SECRET_NAME.search(key) and not SHOWN_ENV.match(key):
        return MASKED
    if len(value) <= SHOWN_VALUE_CHARS:
        return value
    return f"{value[:SHOWN_VALUE_CHARS]}... ({len(value):,} characters)"


def pin_command(
    command: str, cwd: str, env: Mapping[str, str], read: Sequence[str] = (), path: str | None = None
) -> Pin:
    """Fix what `command` runs in `cwd` with `env`, when the user is asked (OSError: the folder is gone).
    `read`: the files the classifier read to judge it (classify's `scripts`: those a script runs or
    sources too, and those behind a wrapper, `timeout 60 ./x.sh`), which the text alone does not show;
    with the files it feeds a shell as code; then the project's modules those programs load, the
    makefiles and git hooks its tools run, the `#!` interpreters of all these, and where `path` (the
    command's PATH; this process's when None) finds each program named alone. Beyond MAX_PIN_SCRIPTS
    the files that exist are kept before the places pinned absent."""
    folder = os.path.realpath(cwd)
    identity = folder_identity(folder)
    search = os.environ.get("PATH", "") if path is None else path
    named = _pinnable([*read, *script_paths(command, folder), *fed_to_interpreters(command, folder)], folder)
    programs = programs_on_path(command, search, folder)
    runs = [*project_files(command, folder, env), *git_files(command, folder, env)]
    interpreters = interpreters_of([*named, *programs, *runs], search, folder)
    made = [*modules_of(named, folder), *runs, *interpreters, *programs]
    hashed = [(p, content_hash(p)) for p in dict.fromkeys([*named, *made]) if not PROCESS_OWN.match(p)]
    hashed.sort(key=lambda pair: pair[1] == ABSENT)  # stable: what exists first, in order
    scripts = tuple(hashed[:MAX_PIN_SCRIPTS])
    # What picks a program first: whatever else comes, the user reads its value (red team, 2026-12-05).
    ordered = sorted(env.items(), key=lambda pair: (not picks_programs(*pair), pair[0]))
    shown = tuple((key, shown_value(key, value)) for key, value in ordered)[:MAX_ENV_SHOWN]
    return Pin(folder, identity, scripts, env_digest(env), shown)


def changed_since(pin: Pin, env: Mapping[str, str]) -> str | None:
    """What changed since the user was asked, in English for the model and the log; None: nothing.
    The folder is opened and checked by identity (a path re-pointed elsewhere does not pass)."""
    try:
        descriptor = os.open(pin.folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return FOLDER_GONE_REASON.format(folder=pin.folder)
    try:
        info = os.fstat(descriptor)
    finally:
        os.close(descriptor)
    if (info.st_dev, info.st_ino) != pin.folder_id:
        return FOLDER_REPLACED_REASON.format(folder=pin.folder)
    for path, digest in pin.scripts:
        if content_hash(path) != digest:
            return SCRIPT_CHANGED_REASON.format(script=path)
    if env_digest(env) != pin.env_digest:
        return ENV_CHANGED_REASON
    return None


def picks_programs(key: str, value: str) -> bool:
    """Whether an environment variable the model sends decides which program, repository or settings
    file a command uses, so the command waits for the user, who is shown its value."""
    if PICKS_FOLDERS.match(key):
        return value != "" or key.upper() != "CDPATH"  # an empty CDPATH only turns it off
    return bool(NAMES_PROGRAM.match(key)) and bool(BY_PATH.search(value))
