"""The makefiles and package.json a build tool in the command reads: `-f`, `-C`, `-I`, MAKEFILES and
what they `include`, where make looks for them.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Mapping, Sequence

from app.core.commands.pins.command_words import MODULE_BYTES, commands_here, file_head, literal_name

# The files a build tool or package manager runs from the working folder: pinned with the command.
PROJECT_FILES = {"make": ("GNUmakefile", "makefile", "Makefile"), "gmake": ("GNUmakefile", "makefile", "Makefile"),
                 **dict.fromkeys(("npm", "yarn", "pnpm", "bun"), ("package.json",))}  # fmt: skip
MAKE_VALUES = "CEfIoW"  # make's short options that take a value (`-f FILE`, `-fFILE`, `-sf FILE`)
# The shortest prefix getopt takes of each long option
MAKE_LONG = {"--file": "--fi", "--makefile": "--mak", "--directory": "--di", "--include-dir": "--in"}
MAKE_SHORT = {"f": "--file", "C": "--directory", "I": "--include-dir"}
MAX_MAKEFILES = 16  # included ones, followed from those make reads first; as many again named by MAKEFILES
INCLUDE = re.compile(r"^ *(?:-include|sinclude|include)\s+(.+)")


def project_files(command: str, folder: str, env: Mapping[str, str] | None = None) -> list[str]:
    """The makefiles or package.json of each build tool `command` runs in `folder` with `env` (red
    team, 2026-12-04: a Makefile's recipe rewritten after the prompt ran; 2026-12-05: one named by
    `-f`, in a `-C` folder, included by the Makefile, found in an `-I` folder or named by MAKEFILES)."""
    found: list[str] = []
    for words, here, assigned in commands_here(command, folder):
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
        if not option or not literal_name(value) or value == "-":
            continue
        if option == "--directory":  # make moves first: -f and -I name files in the folder it moves to
            where = posixpath.normpath(posixpath.join(where, value or ""))
        else:
            (folders if option == "--include-dir" else files).append(value or "")
    found = [posixpath.normpath(posixpath.join(where, name)) for name in files]
    read = found if given else [posixpath.join(where, name) for name in PROJECT_FILES["make"]]
    folders = [posixpath.normpath(posixpath.join(where, name)) for name in folders]
    first = [path for name in (variable or "").split() if literal_name(name) for path in _looked(name, where, folders)]
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
        text = file_head(todo.pop(0), MODULE_BYTES)
        for line in (text or "").replace("\\\n", " ").splitlines():
            directive = INCLUDE.match(line)  # a recipe's line starts with a tab: bash's, not make's
            for name in directive[1].split("#", 1)[0].split() if directive else ():
                for path in _looked(name, where, folders) if literal_name(name) else ():
                    if path not in found and path not in makefiles:
                        found.append(path)
                        todo.append(path)
    return found[:MAX_MAKEFILES]
