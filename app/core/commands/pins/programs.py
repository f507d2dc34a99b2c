"""The programs a command runs by path or through PATH, the scripts given to interpreters, the
project's modules they load and the `#!` interpreters of all these.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Sequence

from app.core.channel.protocol import MAX_PIN_SCRIPTS
from app.core.commands.pins.command_words import (
    ASSIGNMENT,
    INTERPRETERS,
    MODULE_BYTES,
    NO_SCRIPT_OPTIONS,
    SHELL_WORDS,
    WRAPPERS,
    file_head,
    program_of,
    simple_commands,
)


def script_paths(command: str, folder: str) -> list[str]:
    """The files `command` runs by path, resolved against `folder` (best effort, never raises)."""
    found = [script for simple in simple_commands(command) for script in _scripts_of(simple)]
    paths = []
    for name in dict.fromkeys(found):
        if "$" in name or "`" in name or name.startswith("~"):
            continue  # expanded by bash: what it names is not known here
        paths.append(posixpath.normpath(posixpath.join(folder, name)))
    return paths[:MAX_PIN_SCRIPTS]


def programs_named(command: str) -> list[str]:
    """The programs `command` names alone, wrappers (`sudo`, `env`) included: what PATH decides."""
    names: list[str] = []
    for words in simple_commands(command):
        rest = program_of(words)
        names += [word for word in words[: len(words) - len(rest)] if word in WRAPPERS] + rest[:1]
    return [n for n in dict.fromkeys(names) if re.fullmatch(r"[\w.+-]+", n) and n not in SHELL_WORDS]


def programs_on_path(command: str, path: str, folder: str | None = None) -> list[str]:
    """For each program `command` names alone, where `path` (the command's PATH) finds it (`on_path`)."""
    words = (program_of(simple) for simple in simple_commands(command))
    return list(dict.fromkeys(p for w in words if w and "/" not in w[0] for p in on_path(w[0], path, folder)))


def _scripts_of(words: list[str]) -> list[str]:
    words = program_of(words)
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


def modules_of(programs: Sequence[str], folder: str, most: int = MAX_PIN_SCRIPTS) -> list[str]:
    """The project's modules the program files among `programs` load, and theirs in turn, at most
    `most`: pinned with them, so that one rewritten after the prompt is refused."""
    from app.core.classifier.modules import module_files, python_top_names
    from app.core.classifier.scripts import shebang_program

    roots = list(dict.fromkeys([folder, *(posixpath.dirname(p) for p in programs[:1])]))  # as Python's path
    todo, found = list(programs), list[str]()
    while todo and len(found) < most:
        path = todo.pop(0)
        text = file_head(path, MODULE_BYTES)  # never a FIFO's open, nor a descriptor's read, that waits forever
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
        line = file_head(file, 256) or ""
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
