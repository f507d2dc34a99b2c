"""Scripts named as a program's argument are judged by what they say (issue 23): `bash x.sh`, `sh x`,
`source x`, `python3 x.py`, `node x.js`, `./x.sh`.

The file is read (at most MAX_SCRIPT_BYTES, from the command's folder) and judged as the program
that would read it: shell scripts as bash, line by line like a command; a Python, Node, Perl, Ruby...
program by the calls in it that delete files, start programs or drive other programs. A script
that cannot be read or judged (missing, too big, compiled, an interpreter we do not know, a
relative path with no known folder) is held. Every script read is listed on the classification
(`Classification.scripts`), so that an approval can pin its content; a script the same command
line writes before it runs (`echo ... > x.sh; bash x.sh`, `cp a x.sh`) is held, since its content
is not known yet.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re

from app.core.i18n import N_

from .cmdline import cmd_code
from .code import judge_code
from .findings import D, JudgedTooLong, M, _snip
from .piped import piped_commands
from .regular_files import read_regular
from .rule import Analysis
from .stdin import _STDIN_FILES, _Stdin
from .tables import _INLINE_CODE_FLAGS, _PERL, _PYTHON, _SHELLS
from .words import _Word

MAX_SCRIPT_BYTES = 256 * 1024
# A longer script is never judged within a deadline (classify's): about 0.1 s of judging a 16 kB one
INLINE_SCRIPT_CHARS = 16 * 1024
MAX_SCRIPTS = 64  # read for one command, nested ones included
# Programs in these folders are installed software, not scripts the agent can have written: they are
# judged by their name. (Homebrew's /opt/homebrew and /usr/local are user-writable on macOS; kept here.)
_SYSTEM_FOLDERS = re.compile(
    r"^(?:/usr/|/bin/|/sbin/|/lib|/opt/|/snap/|/nix/store/|/run/current-system/|/System/|/Library/|"
    r"/Applications/|/[a-z]/windows/|/[a-z]/program files|[a-z]:/windows/|[a-z]:/program files)",
    re.I,
)
_SHEBANG = re.compile(r"^#!\s*(\S+)(?:[ \t]+(\S+))?(?:[ \t]+(\S+))?")


def script_path(cwd: str | None, value: str) -> str | None:
    """The absolute path of a script named `value`, run from `cwd`; None when it cannot be located."""
    value = value.replace("\\", "/")
    if not value.startswith("/") and not re.match(r"^[A-Za-z]:/", value):
        if cwd is None:
            return None
        value = posixpath.join(cwd, value)
    return posixpath.normpath(value)


def installed_program(path: str) -> bool:
    """A program by path that is installed software (its real location is a system folder)."""
    try:
        real = os.path.realpath(path).replace("\\", "/")
    except (OSError, ValueError):
        return False
    return bool(_SYSTEM_FOLDERS.match(real))


def _compiled_interpreter(name: str) -> bool:
    """An interpreter or package manager by path that is a compiled program (a virtual environment's
    or pyenv's python, pip.exe on Windows): its name's rule judges what it is given."""
    return bool(_PYTHON.match(name) or _PERL.match(name) or re.fullmatch(r"pip[0-9.]*", name)) or name in _KNOWN_CODE


def read_file(path: str, limit: int) -> bytes | None:
    """At most `limit` + 1 bytes of a regular file, or None when it is not one or cannot be read."""
    if path.startswith(("/proc/", "/sys/", "/dev/")):
        return None  # a reading that may never end (/dev/tty, /proc/kmsg, /dev/stdin)
    return read_regular(path, limit + 1)


def settings_text(ctx: Analysis, path: str, limit: int, *, whole: bool = True) -> str | None:
    """The text of a file a rule reads to judge a command (a kubeconfig, a file of hosts), read as
    a script is and counted with them (a review, 2026-12-05: `kubectl --kubeconfig FIFO` hung the
    classifier, and a thousand of a 1 MiB one took seconds). None when it cannot be read, is longer
    than `limit` (`whole`; else its first `limit` bytes are read), or too many files were read."""
    ctx.report.scripts_read += 1
    if ctx.report.scripts_read > MAX_SCRIPTS:  # each read costs up to `limit`
        ctx.add(D, "cannot tell what runs: the command runs too many scripts to check")
        return None
    data = read_file(path, limit)
    if data is None or (whole and len(data) > limit):
        return None
    return data[:limit].decode("utf-8", "replace")


def read_script(path: str) -> tuple[str | None, str]:
    """The script's text, or None and why it cannot be judged: unreadable, large, compiled, binary."""
    data = read_file(path, MAX_SCRIPT_BYTES)
    if data is None:
        return None, "unreadable"
    if len(data) > MAX_SCRIPT_BYTES:
        return None, "large"
    if b"\0" in data or data.startswith((b"\x7fELF", b"MZ", b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe")):
        return None, "compiled"
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError:
        return None, "binary"


def shebang_program(text: str) -> str | None:
    """The program a `#!` line names (`#!/usr/bin/env python3` -> python3); "" without one (bash
    then runs the file itself); None when the line cannot be read."""
    match = _SHEBANG.match(text)
    if not text.startswith("#!"):
        return ""
    if match is None:
        return None
    program = posixpath.basename(match[1])
    if program == "env":
        rest = [w for w in (match[2], match[3]) if w and not w.startswith("-")]
        program = rest[0] if rest else ""
    return program or None


def looked_up(name: str, path: str, cwd: str | None = None) -> tuple[list[str], str | None]:
    """Where the folders of `path` are searched for `name`, as bash searches them: the places this
    user may write (or make) before the first that has it, where one could be put later, and that
    file, or None. What an approval pins of a program or a sourced file named alone. A relative or
    empty entry is searched from the folder bash runs in, `cwd` (skipped without it): red team,
    2026-12-05, an `rm` put in the command's folder after the prompt ran with PATH ":/usr/bin"."""
    before: list[str] = []
    for folder in path.split(os.pathsep):
        if not folder.startswith("/"):
            if cwd is None or re.match(r"^[A-Za-z]:", folder) or "\\" in folder:  # Windows': not bash's
                continue
            folder = posixpath.normpath(posixpath.join(cwd, folder or "."))
        candidate = posixpath.join(folder, name)
        if os.path.isfile(candidate):
            return before, candidate
        if may_write(folder):
            before.append(candidate)
    return before, None


def may_write(folder: str) -> bool:
    """Whether this user may put a file in `folder`: it, or the nearest folder above it that exists
    (where it can be made), is writable."""
    while not os.path.isdir(folder):
        parent = posixpath.dirname(folder)
        if parent == folder:
            return False
        folder = parent
    return os.access(folder, os.W_OK)


def run_script(ctx: Analysis, name: str, word: _Word, how: str) -> None:
    """Judge the script `word` that `name` runs. `how`: "shell" (bash x, source x: read as bash
    whatever its first line), "program" (python3 x.py: read as `name`'s code), "exec" (./x: by its
    `#!` line)."""
    read = script_text(ctx, name, word, compiled_ok=how == "exec" and _compiled_interpreter(name))
    if read is None:
        return
    path, text = read
    shown = _snip(path)
    language = name if how == "program" else "bash" if how == "shell" else shebang_program(text)
    windows = _WINDOWS_SCRIPT.search(path) if how == "exec" and language == "" else None
    if windows is not None:  # Windows runs it by its extension: `./x.bat` is cmd's, not bash's (red team)
        windows_script(ctx, name, windows[1].casefold(), path, text)
        return
    if language == "" or language in _SHELLS:
        ctx.sub_script(text, f"the script {shown}", script=path)
        ctx.add(M, "{name} {path}: runs a script (checked)", N_("Runs the script {path}"), name=name, path=shown)
    elif language is not None and (_PYTHON.match(language) or _PERL.match(language) or language in _KNOWN_CODE):
        judge_code(ctx, language, text, path)
    elif language is None:
        ctx.add(D, "cannot tell what runs: the script {path} starts with a #! line that cannot be read", path=shown)
    else:
        ctx.add(D, "cannot tell what runs: the script {path} is run by {program}", path=shown, program=_snip(language))


_WINDOWS_SCRIPT = re.compile(r"\.(bat|cmd|ps1|vbs|vbe|js|jse|wsf|wsh|hta)$", re.I)


def windows_script(ctx: Analysis, name: str, extension: str, path: str, text: str) -> None:
    """A script Windows runs by its extension: a .bat or .cmd file is read as cmd reads it, a .ps1
    as PowerShell code; the Windows Script Host's (.vbs, .js...) cannot be told here."""
    shown = _snip(path)
    if extension in ("bat", "cmd"):
        cmd_code(ctx, text, f"the script {shown}", script=path)
        ctx.add(M, "{name} {path}: runs a script (checked)", N_("Runs the script {path}"), name=name, path=shown)
    elif extension == "ps1":
        judge_code(ctx, "powershell", text, path)
    else:
        ctx.add(D, "cannot tell what runs: the script {path} is run by {program}", path=shown,
                program="Windows Script Host")  # fmt: skip


def script_text(ctx: Analysis, name: str, word: _Word, *, compiled_ok: bool = False) -> tuple[str, str] | None:
    """The path and text of a file `name` reads as code (a script; an SQL, sed, awk, vim or gdb
    script; an ssh configuration), listed on the classification and counted like every script.
    None, and the command held, when it cannot be read; `compiled_ok`: a compiled program is not
    held here (its name's rule judges it)."""
    value = word.value
    if value is None:
        ctx.add(D, "cannot tell what runs: {name} code from an expansion", name=name)
        return None
    path = script_path(ctx.cwd, value)
    if path is None:
        ctx.add(D, "cannot tell what runs: {name} runs {value}, a script in a folder not known here", name=name,
                value=_snip(value))  # fmt: skip
        return None
    ctx.report.scripts.append(path)
    ctx.report.scripts_read += 1
    if ctx.report.scripts_read > MAX_SCRIPTS:  # each read costs up to MAX_SCRIPT_BYTES
        ctx.add(D, "cannot tell what runs: the command runs too many scripts to check")
        return None
    text, why = read_script(path)
    if text is not None and len(text) > INLINE_SCRIPT_CHARS and ctx.report.deadline is not None:
        raise JudgedTooLong  # before tree-sitter reads it all: judged off the loop from the start
    shown = _snip(path)
    if why == "compiled" and compiled_ok:
        return None
    if why == "unreadable":
        ctx.add(D, "cannot tell what runs: the script {path} cannot be read here", path=shown)
    elif why == "large":
        ctx.add(D, "cannot tell what runs: the script {path} is too large to check", path=shown)
    elif why == "compiled":
        ctx.add(D, "cannot tell what runs: the script {path} is a compiled program", path=shown)
    elif text is None:
        ctx.add(D, "cannot tell what runs: the script {path} is not text", path=shown)
    return None if text is None else (path, text)


def runs_project_files(ctx: Analysis, names: list[str], folder: str | None = None) -> None:
    """Files of the project a command runs without its words naming them (make's makefile, npm's
    package.json, `python -m MOD`'s module): not read (a project's own recipes may well delete its
    build folder), but one the command line wrote before is held (`echo ... > Makefile; make`:
    fifth red team, 2026-12-04). Only a file it surely wrote counts (`git diff package.json && npm
    install` names it, `cp package.json /tmp/x` reads it), and not one an expansion decides (`make >
    "$log"` is everyday) or an archive unpacked (`tar xzf pkg.tgz && cd pkg && make` builds what it
    brought, as `git clone URL && cd x && make` does)."""
    where = ctx.cwd if folder is None else script_path(ctx.cwd, folder)
    report = ctx.report
    written = [p for p in report.surely_written if not p.startswith("*") and p not in report.unpacked]
    for name in names:
        path = None if where is None else script_path(where, name)
        if path is not None and any(fnmatch.fnmatchcase(path, pattern) for pattern in written):
            ctx.add(D, "cannot tell what runs: the command changes the script {path} before running it",
                    path=_snip(path))  # fmt: skip


def library_file(cwd: str | None, library: str | None, suffix: str) -> str | None:
    """The file a library name loads from the command's folder (as named, or with `suffix`), if
    any: `awk -i LIB` and `emacs -l LIB` look there first, then in their own folders."""
    if library in _STDIN_FILES:  # `awk -i /dev/stdin`: what is typed into it (a review, 2026-12-05)
        return library
    if not library or cwd is None:
        return None
    for name in (library, f"{library}{suffix}"):
        path = script_path(cwd, name)
        if path is not None and os.path.isfile(path):
            return path
    return None


def typed_commands(ctx: Analysis, name: str, stdin: _Stdin | None) -> str | None:
    """`typed_text`, for a program that runs what is typed into it as commands (ed's `!`, vim's Ex
    commands, a database client's shell escape, gdb's): another command's output is held, as a
    shell's is (a review, 2026-12-05: `curl ... | ed f` ran its `!` lines, as `ed f < cmds` was judged)."""
    if stdin is not None and stdin.kind == "pipe":
        piped_commands(ctx, name, stdin)
        return None
    return typed_text(ctx, name, stdin)


def typed_text(ctx: Analysis, name: str, stdin: _Stdin | None) -> str | None:
    """What is typed into `name` (a database client, an editor, make -f -): known text, or the file
    `< FILE` names, read as a script is; None when nothing known is."""
    if stdin is None or stdin.kind == "pipe":
        return None
    if stdin.kind != "file":
        return stdin.text
    if stdin.text == "/dev/null":
        return ""
    read = script_text(ctx, name, _Word(stdin.text, stdin.source, stdin.text))
    return None if read is None else read[1]


_KNOWN_CODE = frozenset(_INLINE_CODE_FLAGS) - {"cmd", "osascript"} | {"java"}  # `java R.java`: its source
