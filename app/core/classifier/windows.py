"""Windows programs Git Bash can start that change the machine beyond the command (red team, Windows):
the registry and the variables every later program reads, programs started through another service
(WMI, BITS, remote shells, Explorer), tools that mirror, zero or wipe files and backups, script
hosts whose code is not read here, and certutil's output files.

Their switches are read in every spelling (`/MIR`, `-mir`, Git Bash's `//MIR`: `options.windows_switch`).
Reading (`reg query`, `robocopy src dst`, `explorer .`) is not held; what these programs are not
known to do stays "not known to be read-only", as before they had a rule.
"""

from __future__ import annotations

import re

from app.core.i18n import N_

from .cmdline import command as cmd_command
from .cmdline import note_written as cmd_note_written
from .cmdline import tokens as cmd_tokens
from .danger import Danger
from .files import SYNC_WORDS
from .findings import WINDOWS_SETTINGS, D, M, _snip
from .handoff import hands_off
from .options import windows_switch
from .rule import Analysis
from .stdin import _Stdin
from .words import _Word

_REGISTRY_WRITES = frozenset({"add", "delete", "import", "restore", "load", "unload", "copy"})
# What Explorer starts when it is given a file of one of these kinds: a program, not a folder's window.
_RUNNABLE = re.compile(
    r"\.(?:exe|com|bat|cmd|ps1|vbs|vbe|js|jse|wsf|wsh|hta|msi|msc|scr|pif|cpl|lnk|url|jar|py|pyw|reg|inf)$", re.I
)


def not_known(ctx: Analysis, name: str, args: list[_Word], depth: int) -> None:
    """What a program no rule knows is judged as (the analyzer's own words for one)."""
    ctx.add(M, "{value}: not known to be read-only", value=name)
    ctx.may_run(args, depth)


def _switches(args: list[_Word]) -> set[str]:
    return {windows_switch(a.value) for a in args if a.value is not None}


def _words(args: list[_Word]) -> list[str]:
    return [(a.value or "").casefold() for a in args]


def cmd_reg(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`reg add|delete|import|restore|load|unload|copy` writes the registry, which programs read
    as they start (`...\\CurrentVersion\\Run`, cmd's AutoRun, a file kind's open command, the
    user's PATH); `reg query`, `reg export` only read it."""
    sub = windows_switch(args[0].value) if args else ""
    if (args and args[0].value is None) or sub in _REGISTRY_WRITES:
        ctx.add(D, WINDOWS_SETTINGS, name=name, sub=_snip(args[0].source if sub not in _REGISTRY_WRITES else sub))
    else:
        not_known(ctx, name, args, depth)


def cmd_regedit(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`regedit /s file.reg` (or any file named) imports it into the registry; `/e` exports."""
    switches = _switches(args)
    files = [a for a in args if not windows_switch(a.value).startswith("/")]
    if files and not switches & {"/e", "/a"}:
        ctx.add(D, WINDOWS_SETTINGS, name=name, sub=_snip(files[0].source))
    else:
        not_known(ctx, name, args, depth)


def cmd_setx(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`setx NAME VALUE` stores a variable every program started later reads (PATH, PYTHONSTARTUP...)."""
    if args and _switches(args) != {"/?"}:
        ctx.add(D, "{name}: sets a variable for every program started later", name=name)


def cmd_wmic(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`wmic process call create CMD` asks the WMI service to start CMD; `wmic shadowcopy delete`
    deletes the backups Windows keeps."""
    words = _words(args)
    if "call" in words and "create" in words[words.index("call") :]:
        hands_off(ctx, f"{name} call create")
    if "shadowcopy" in words and "delete" in words:
        backups(ctx, name)
    not_known(ctx, name, args, depth)


def cmd_explorer(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`explorer calc.exe` starts the program as Explorer's child; `explorer .` opens a folder."""
    for a in args:
        parts = (a.value or "").split(",")
        if a.value is None or any(
            "://" not in part and _RUNNABLE.search(part.strip().strip('"')) for part in parts
        ):  # a web address opens the browser (`explorer https://example.com`)
            hands_off(ctx, f"{name} {_snip(a.source)}")
            return
    ctx.add(M, "{value}: not known to be read-only", value=name)


def cmd_bitsadmin(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`bitsadmin /SetNotifyCmdLine JOB PROGRAM ARGS`: the BITS service runs PROGRAM when the job ends."""
    if "/setnotifycmdline" in _switches(args) or any(a.value is None for a in args):
        hands_off(ctx, f"{name} /SetNotifyCmdLine")
    not_known(ctx, name, args, depth)


def cmd_remote_shell(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """winrs, psexec, paexec: a command run by a service, on this machine or another one."""
    hands_off(ctx, name)
    ctx.may_run(args, depth)


_SERVICE_CHANGES = frozenset({"create", "config", "start", "failure", "delete", "sdset", "triggerinfo"})


def cmd_sc(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`sc create NAME binPath= CMD` (or `config`, `failure ... command=`, `start`): the service manager
    runs CMD, as the system, outside our watch; `sc query` and `sc qc` only read."""
    words = _words(args)
    if any(a.value is None for a in args) or set(words[:2]) & _SERVICE_CHANGES:  # `sc \\host create ...`
        hands_off(ctx, f"{name} {_snip(' '.join(words[:2]))}")
    not_known(ctx, name, args, depth)


_INSTALLS = frozenset({"/i", "/a", "/x", "/p", "/f", "/fa", "/update", "/uninstall", "/package", "/j"})


def cmd_msiexec(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`msiexec /i x.msi` (or /x, /p, /a...) runs a Windows installer, whose own actions may do anything."""
    if {s.split(":")[0] for s in _switches(args)} & _INSTALLS or any(a.value is None for a in args):
        ctx.add(D, "{name}: installs or removes a program", N_("Installs or removes a program on this computer"),
                name=name)  # fmt: skip
    else:
        not_known(ctx, name, args, depth)


def cmd_robocopy(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`/MIR` and `/PURGE` delete what the source does not have, `/MOV` and `/MOVE` what was copied."""
    switches = _switches(args)
    for switch in sorted(switches & {"/mir", "/purge"}):
        ctx.add(D, "{name} {value}: deletes files", SYNC_WORDS, danger=Danger.LOSES_FILES, name=name, value=switch)
    for switch in sorted(switches & {"/mov", "/move"}):
        ctx.add(D, "{name} {value}: deletes files", N_("Deletes the files it copies, once copied"),
                danger=Danger.LOSES_FILES, name=name, value=switch)  # fmt: skip
    ctx.add(M, "{name}: copies files", name=name)
    operands = [a for a in args if not windows_switch(a.value).startswith("/")]
    if len(operands) > 1 and operands[1].value is not None:  # `robocopy hooks .git/hooks`: what lands there
        cmd_note_written(ctx, operands[1].value.rstrip("/\\") + "/*")


def cmd_wsl(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`wsl --unregister DISTRO` deletes that Linux system with every file in it."""
    if any((a.value or "").casefold() == "--unregister" for a in args):
        ctx.add(D, "{name} --unregister: deletes a Linux system and all its files", name=name,
                danger=Danger.LOSES_FILES)  # fmt: skip
    not_known(ctx, name, args, depth)


def cmd_fsutil(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`fsutil file setzerodata` writes zeros over a file's contents."""
    if "setzerodata" in _words(args):
        ctx.add(D, "{name} file setzerodata: destroys file contents beyond recovery", name=name,
                danger=Danger.LOSES_FILES)  # fmt: skip
    not_known(ctx, name, args, depth)


def backups(ctx: Analysis, name: str) -> None:
    ctx.add(D, "{name} delete: deletes the backups Windows keeps", name=name, danger=Danger.LOSES_FILES)


def cmd_backup_tool(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """vssadmin and wbadmin: `delete` (and vssadmin's `resize`, which drops the oldest) lose backups."""
    words = _words(args)
    if "delete" in words or (name == "vssadmin" and "resize" in words):
        backups(ctx, name)
    not_known(ctx, name, args, depth)


def cmd_script_host(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """cscript, wscript, mshta, regsvr32, rundll32: they run VBScript, JScript, an HTML application or
    a library's code, none of which is read here (`regsvr32 /i:URL scrobj.dll` runs a downloaded script)."""
    if [windows_switch(a.value) for a in args] not in ([], ["/?"]):
        ctx.add(D, "cannot tell what runs: {name} runs code that cannot be checked here", name=name)


_CERTUTIL_WRITES = frozenset({"/decode", "/decodehex", "/encode", "/encodehex", "/urlcache"})


def cmd_certutil(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`certutil -decode IN OUT` and `-urlcache -f URL OUT` write OUT: noted as written, so that a
    script or a file of git's it writes before the command line runs it is held."""
    if not _switches(args) & _CERTUTIL_WRITES:
        not_known(ctx, name, args, depth)
        return
    operands = [a for a in args if not windows_switch(a.value).startswith("/")]
    if len(operands) > 1:
        ctx.add(M, "{name}: writes its output file", name=name)
        ctx.note_written(operands[-1], writes=True)
    else:
        ctx.add(M, "{value}: not known to be read-only", value=name)


def cmd_forfiles(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`forfiles /s /c "cmd /c del @path"` runs its /c command once for each file it finds."""
    ctx.add(M, "{value}: not known to be read-only", value=name)
    for k, a in enumerate(args[:-1]):
        if windows_switch(a.value) == "/c":
            code = args[k + 1].literal
            if code is None:
                ctx.add(D, "cannot tell what runs: {name} code from an expansion", name=name)
                continue
            words = [w for w in cmd_tokens(code) if w not in ("&", "&&", "||", "|", "(", ")")]
            while len(words) > 1 and words[0].casefold() in ("cmd", "cmd.exe") and windows_switch(words[1]) == "/c":
                words = words[2:]
            if words:
                cmd_command(ctx, words, True, f"{name} /c", None)
