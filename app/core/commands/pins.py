"""What a held command runs, fixed when the user is asked, and checked again right before it starts.

A prompt shows text; what runs also depends on the folder the text names, the scripts it runs by
path and the environment it runs with. Each can change while the prompt is up (a symlink
re-pointed, a script rewritten), so the approval pins them: the folder by identity (resolved path,
device and inode), each script by a hash of its content, the environment by a digest of every
value. The command starts in the pinned folder, and only if nothing changed.

Scripts are the files the classifier read to judge the command (behind wrappers, in conditions, and
those a script sources or runs), and those found in the simple commands of the text: a program named
by path (`./x.sh`), and the words given to an interpreter (`bash x.sh`, `python3 x.py`, `source x`).
A script made by the command itself (absent when asked) must still be absent at start.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
import shlex
from collections.abc import Mapping, Sequence

from app.core.channel.protocol import MAX_ENV_SHOWN, MAX_PIN_SCRIPTS, Pin
from app.core.messages import (
    ENV_CHANGED_REASON,
    FOLDER_GONE_REASON,
    FOLDER_REPLACED_REASON,
    SCRIPT_CHANGED_REASON,
)

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
    r"^(PATH|HOME|CDPATH|XDG_.+|GIT_(?:DIR|WORK_TREE|COMMON_DIR|INDEX_FILE|OBJECT_DIRECTORY"
    r"|ALTERNATE_OBJECT_DIRECTORIES|NAMESPACE|CEILING_DIRECTORIES))$",
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


def project_files(command: str, folder: str) -> list[str]:
    """The makefile or package.json of each build tool `command` runs in `folder` (red team,
    2026-12-04: a Makefile's recipe rewritten after the prompt ran)."""
    words = (_program_of(simple) for simple in _simple_commands(command))
    names = (n for w in words if w for n in PROJECT_FILES.get(posixpath.basename(w[0]), ()))
    return [posixpath.join(folder, name) for name in dict.fromkeys(names)]


def programs_named(command: str) -> list[str]:
    """The programs `command` names alone, wrappers (`sudo`, `env`) included: what PATH decides."""
    names: list[str] = []
    for words in _simple_commands(command):
        while words and ASSIGNMENT.match(words[0]):
            words = words[1:]
        while words and (words[0] in WRAPPERS or words[0].startswith("-") or ASSIGNMENT.match(words[0])):
            names += [words[0]] if words[0] in WRAPPERS else []
            words = words[1:]
        names += words[:1]
    return [n for n in dict.fromkeys(names) if re.fullmatch(r"[\w.+-]+", n) and n not in SHELL_WORDS]


def programs_on_path(command: str, path: str) -> list[str]:
    """For each program `command` names alone, where `path` (the command's PATH) finds it (`on_path`)."""
    words = (_program_of(simple) for simple in _simple_commands(command))
    return list(dict.fromkeys(p for w in words if w and "/" not in w[0] for p in on_path(w[0], path)))


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
        try:
            with open(path, "rb") as file:
                text = file.read(MODULE_BYTES).decode("utf-8", "replace")
        except OSError:
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


def on_path(program: str, path: str) -> list[str]:
    """Where a program named alone is looked for, in the folders of `path` (the command's PATH) this
    user may write, up to the first that has it: its file, and the places before it where one could
    be put after the prompt (red team, 2026-12-04: `deploy` in ~/.local/bin was rewritten after the
    user allowed the command, and the new one ran)."""
    if not re.fullmatch(r"[\w.+-]+", program) or program in SHELL_WORDS:
        return []
    from app.core.classifier.scripts import looked_up

    before, found = looked_up(program, path)
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


def content_hash(path: str) -> str:
    """The file's content as a hash; ABSENT when nothing is there, NOT_A_FILE for a folder or device."""
    try:
        info = os.stat(path)
    except OSError:
        return ABSENT
    if not os.path.isfile(path):
        return NOT_A_FILE
    if info.st_size > HASH_LIMIT_BYTES:
        return f"size {info.st_size} changed {info.st_mtime_ns} inode {info.st_ino}"
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as file:
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
    then the project's modules those programs load, and where `path` (the command's PATH; this
    process's when None) finds each program named alone. Beyond MAX_PIN_SCRIPTS the files that exist
    are kept before the places pinned absent."""
    folder = os.path.realpath(cwd)
    identity = folder_identity(folder)
    named = [*read, *script_paths(command, folder)]
    programs = programs_on_path(command, os.environ.get("PATH", "") if path is None else path)
    made = [*modules_of(named, folder), *project_files(command, folder), *programs]
    hashed = [(p, content_hash(p)) for p in dict.fromkeys([*named, *made])]
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
