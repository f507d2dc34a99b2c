"""Code in another language (Python, Node, Perl, Ruby, PowerShell...), inline or in a file: it cannot be
parsed here, so it is judged by the calls it names that delete files, start programs, drive other
programs, call functions by computed names, or import Cowork Terminal itself. Fail closed: a match
anywhere holds it, a comment included."""

from __future__ import annotations

import re

from app.core.i18n import N_

from .automation import synthetic_input
from .cmdline import cmd_code
from .danger import Danger
from .findings import TOUCHES_APP_DATA, D, M, _snip
from .handoff import hands_off
from .itself import code_runs_itself
from .protected import _norm_path
from .rule import Analysis
from .tables import (
    _CODE_CONTROLS,
    _CODE_DELETES,
    _CODE_HANDS_OFF,
    _CODE_HIDES,
    _CODE_RUNS,
    _CODE_SETTINGS,
    _PERL,
    _POWERSHELL_CMD,
    _POWERSHELL_COMPUTED,
    _POWERSHELL_DELETES,
    _PYTHON,
)
from .words import _Word

# Code that loads a compiled library by its path, or by a name made when it runs (Python's ctypes and
# cffi, Java's System.load, Perl's DynaLoader, Ruby's Fiddle, Node's process.dlopen): the library's
# code runs, unread here, as a compiled program run by its path does (a red team, 2026-12-05:
# `ctypes.CDLL('./x.so')` deleted a folder). One of the system's by its name (`CDLL(None)`,
# `CDLL("libc.so.6")`, `find_library("c")`) is installed software: its calls are judged by their names.
_LOADS_LIBRARY = re.compile(
    r"\b(?:CDLL|PyDLL|WinDLL|OleDLL|LoadLibrary\w*|dlopen|dl_load_file|System\.load(?:Library)?|ffi\.load)\s*\(\s*"
    r"(?!\)|None\b|(?:ctypes\.util\.)?find_library\s*\(|[rRbBuU]?(['\"])[^'\"/\\\n]*\1)"
)
# Calls that start a program that _CODE_RUNS (tables.py) does not name: os.posix_spawn[p] (a red team,
# 2026-12-05), libc's exec family called through ctypes (`libc.execvp(...)`), and Windows' own through
# ctypes, which may name another parent and so start it outside every job of the tray (red team 14)
_STARTS_MORE = re.compile(
    r"\bposix_spawnp?\b|\bexec[lv]p?e?\s*\(|"
    # any CreateProcess* (Internal too), the native calls under it, and a thread started in another process
    r"\bCreateProcess\w*|\b(?:Nt|Rtl)CreateUserProcess\w*|\bCreateRemoteThread\w*|"
    r"\bShellExecute(?:Ex)?[AW]?\b|\bWinExec\b"
)
# Java's ways to call what it names only when it runs: reflection, a script engine
_JAVA_HIDES = re.compile(r"\bforName\s*\(|\.getMethod\s*\(|\.invoke\s*\(|\bMethodHandles\b|\bScriptEngine")


def code_from_expansion(ctx: Analysis, name: str) -> None:
    """Program text for `name` that comes from an expansion: it may do anything, so it is held."""
    ctx.add(D, "cannot tell what runs: {name} code from an expansion", name=name)


def _names_protected(ctx: Analysis, name: str, code: str, path: str | None = None) -> bool:
    """Whether code names one of the protected paths: PowerShell's by `$PROFILE` too, and where no
    container guards them, code run in the home folder by its name alone (`open(".bashrc", "a")`).
    There what it does with the name cannot be read: it is kept for `writes_into(code=...)` (a red
    team, 2026-12-06: `python3 -c "open('<our venv>/.../x.pth', 'w')..."` was not held)."""
    at_home = ctx.protected.guarding and ctx.cwd is not None and _norm_path(ctx.cwd) == _norm_path(ctx.home)
    named = (
        ctx.protected.mentioned_in(code)
        or (name in ("powershell", "pwsh") and ctx.protected.names_profile(code))
        or (at_home and ctx.protected.at_home().mentioned_in(code))
    )
    if named and ctx.protected.guarding and (path is None or ctx.protected.relation(_Word(path, path, path)) is None):
        # a program file's `#!` line names the Python that runs it (`<our venv>/bin/pip`'s names the venv)
        ctx.report.code_naming.append(code.partition("\n")[2] if path is not None and code[:2] == "#!" else code)
    return named


def inline_code(ctx: Analysis, name: str, code: str | None) -> None:
    if code is None:
        code_from_expansion(ctx, name)
        return
    if _names_protected(ctx, name, code):
        ctx.add(D, TOUCHES_APP_DATA)
    if _PYTHON.match(name) and code_runs_itself(ctx, code):
        return
    # the files it loads by a name written in it (`__import__("x")`, `require("./x.js")`): read as they
    # run (a red team, 2026-12-05: each ran a file that deleted a folder); the analyzer hands them to
    # indirect.code_loads, which judges with this module
    ctx.code_loads(name, code)
    if _CODE_CONTROLS.search(code):
        synthetic_input(ctx, f"{name} code")
    changes_settings(ctx, name, code)
    if name in ("powershell", "pwsh"):
        powershell_cmd(ctx, name, code)
    if deletes(name, code):
        ctx.add(D, "{name} code that deletes files or stops the machine", name=name, danger=Danger.LOSES_FILES)
    elif hides(name, code):
        ctx.add(D, "cannot tell what runs: {name} code calls functions by names made when it runs", name=name)
    elif _CODE_HANDS_OFF.search(code):
        hands_off(ctx, f"{name} code")
    elif starts_programs(name, code):
        ctx.add(D, "cannot tell what runs: {name} code starts other programs", name=name)
    elif _LOADS_LIBRARY.search(code):
        ctx.add(D, "cannot tell what runs: {name} code loads a compiled library", name=name)
    else:
        ctx.add(M, "{name}: runs inline code", name=name)


def judge_code(ctx: Analysis, name: str, code: str, path: str) -> None:
    """A program file `name` would run (`python3 tool.py`, `./tool.js` with its #! line)."""
    if _names_protected(ctx, name, code, path):
        ctx.add(D, TOUCHES_APP_DATA)
    if _PYTHON.match(name) and code_runs_itself(ctx, code):
        return
    shown = _snip(path)
    if _CODE_CONTROLS.search(code):
        synthetic_input(ctx, f"{name} {shown}")
    changes_settings(ctx, name, code)
    if deletes(name, code):
        ctx.add(D, "{name} {path}: the program deletes files or stops the machine",
                N_("Runs {path}, a program that can delete files or stop the machine"), danger=Danger.LOSES_FILES,
                name=name, path=shown)  # fmt: skip
    elif hides(name, code):
        ctx.add(D, "cannot tell what runs: {path} calls functions by names made when it runs", path=shown)
    elif _CODE_HANDS_OFF.search(code):
        hands_off(ctx, f"{name} {shown}")
    elif starts_programs(name, code):
        ctx.add(D, "cannot tell what runs: {path} starts other programs", path=shown)
    elif _LOADS_LIBRARY.search(code):
        ctx.add(D, "cannot tell what runs: {path} loads a compiled library", path=shown)
    else:
        ctx.add(M, "{name} {path}: runs a program (checked)", N_("Runs the program {path}"), name=name, path=shown)


def starts_programs(name: str, code: str) -> bool:
    """The code names a call that starts another program (Perl's, Ruby's and PHP's backquotes too)."""
    backquotes = "`" in code and bool(_PERL.match(name) or name in ("ruby", "php"))
    return bool(_CODE_RUNS.search(code) or _STARTS_MORE.search(code) or backquotes)


def deletes(name: str, code: str) -> bool:
    """The code names a call that deletes files or stops the machine (PowerShell's `rm -r` too)."""
    powershell = name in ("powershell", "pwsh")
    return bool(_CODE_DELETES.search(code) or (powershell and _POWERSHELL_DELETES.search(code)))


def hides(name: str, code: str) -> bool:
    """The code calls what it names only when it runs: PowerShell's `& ('ws'+'l')` too."""
    powershell = name in ("powershell", "pwsh")
    java = (name.split() or [""])[0] in ("java", "jshell")
    return bool(
        _CODE_HIDES.search(code)
        or (powershell and _POWERSHELL_COMPUTED.search(code))
        or (java and _JAVA_HIDES.search(code))
    )


def powershell_cmd(ctx: Analysis, name: str, code: str) -> None:
    """cmd started by PowerShell code (`cmd /c wsl ls`): the rest of its line judged as cmd code, as
    `cmd /c` given to bash is, its quotes around the whole taken off as cmd does."""
    for found in _POWERSHELL_CMD.finditer(code):
        rest = found[1].strip()
        if len(rest) > 1 and rest[0] in "\"'" and rest.count(rest[0]) > 1:
            rest = rest[1 : rest.rindex(rest[0])] + rest[rest.rindex(rest[0]) + 1 :]
        cmd_code(ctx, rest, f"{name} cmd /c")


def changes_settings(ctx: Analysis, name: str, code: str) -> None:
    """Code that writes the registry or stores a variable for every later program (red team, Windows)."""
    found = _CODE_SETTINGS.search(code)
    if found is None:
        return
    if re.search(r"SetEnvironmentVariable|setx", found[0], re.I):
        ctx.add(D, "{name} code: sets a variable for every program started later", name=name)
    else:
        ctx.add(D, "{name} code: changes Windows settings that other programs read", name=name)
