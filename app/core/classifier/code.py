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


def code_from_expansion(ctx: Analysis, name: str) -> None:
    """Program text for `name` that comes from an expansion: it may do anything, so it is held."""
    ctx.add(D, "cannot tell what runs: {name} code from an expansion", name=name)


def _names_protected(ctx: Analysis, name: str, code: str) -> bool:
    """Whether code names one of the protected paths: PowerShell's by `$PROFILE` too, and where no
    container guards them, code run in the home folder by its name alone (`open(".bashrc", "a")`)."""
    if ctx.protected.mentioned_in(code) or (name in ("powershell", "pwsh") and ctx.protected.names_profile(code)):
        return True
    at_home = ctx.protected.guarding and ctx.cwd is not None and _norm_path(ctx.cwd) == _norm_path(ctx.home)
    return at_home and ctx.protected.at_home().mentioned_in(code)


def inline_code(ctx: Analysis, name: str, code: str | None) -> None:
    if code is None:
        code_from_expansion(ctx, name)
        return
    if _names_protected(ctx, name, code):
        ctx.add(D, TOUCHES_APP_DATA)
    if _PYTHON.match(name) and code_runs_itself(ctx, code):
        return
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
    elif _CODE_RUNS.search(code) or ("`" in code and (_PERL.match(name) or name in ("ruby", "php"))):
        ctx.add(D, "cannot tell what runs: {name} code starts other programs", name=name)
    else:
        ctx.add(M, "{name}: runs inline code", name=name)


def judge_code(ctx: Analysis, name: str, code: str, path: str) -> None:
    """A program file `name` would run (`python3 tool.py`, `./tool.js` with its #! line)."""
    if _names_protected(ctx, name, code):
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
    elif _CODE_RUNS.search(code) or ("`" in code and (_PERL.match(name) or name in ("ruby", "php"))):
        ctx.add(D, "cannot tell what runs: {path} starts other programs", path=shown)
    else:
        ctx.add(M, "{name} {path}: runs a program (checked)", N_("Runs the program {path}"), name=name, path=shown)


def deletes(name: str, code: str) -> bool:
    """The code names a call that deletes files or stops the machine (PowerShell's `rm -r` too)."""
    powershell = name in ("powershell", "pwsh")
    return bool(_CODE_DELETES.search(code) or (powershell and _POWERSHELL_DELETES.search(code)))


def hides(name: str, code: str) -> bool:
    """The code calls what it names only when it runs: PowerShell's `& ('ws'+'l')` too."""
    powershell = name in ("powershell", "pwsh")
    return bool(_CODE_HIDES.search(code) or (powershell and _POWERSHELL_COMPUTED.search(code)))


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
