"""Windows programs Git Bash can start that change the machine beyond the command (red team, Windows):
the registry and the variables every later program reads, programs started through another service
(WMI, BITS, remote shells, Explorer), tools that mirror, zero or wipe files and backups, script
hosts whose code is not read here, and certutil's output files. What WSL's Linux system, a running
Windows Terminal, WinRM or a service runs is outside the job the command runs in: held as a hand-off.
Git Bash's own `start` is cmd's (`cmd //c start ...`), read as cmd code.

Their switches are read in every spelling (`/MIR`, `-mir`, Git Bash's `//MIR`: `options.windows_switch`).
Reading (`reg query`, `robocopy src dst`, `explorer .`) is not held; what these programs are not
known to do stays "not known to be read-only", as before they had a rule.
"""

from __future__ import annotations

import dataclasses
import re
import shlex

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
from .shells import stdin_code
from .stdin import _Stdin
from .words import _Word

_REGISTRY_WRITES = frozenset({"add", "delete", "import", "restore", "load", "unload", "copy"})
# What Explorer starts when it is given a file of one of these kinds: a program, not a folder's window.
_RUNNABLE = re.compile(
    r"\.(?:exe|com|bat|cmd|ps1|vbs|vbe|js|jse|wsf|wsh|hta|msi|msc|scr|pif|cpl|lnk|url|jar|py|pyw|reg|inf)$", re.I
)


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
        ctx.as_unknown_program(name, args, depth)


def cmd_regedit(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`regedit /s file.reg` (or any file named) imports it into the registry; `/e` exports."""
    switches = _switches(args)
    files = [a for a in args if not windows_switch(a.value).startswith("/")]
    if files and not switches & {"/e", "/a"}:
        ctx.add(D, WINDOWS_SETTINGS, name=name, sub=_snip(files[0].source))
    else:
        ctx.as_unknown_program(name, args, depth)


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
    ctx.as_unknown_program(name, args, depth)


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
    ctx.as_unknown_program(name, args, depth)


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
    ctx.as_unknown_program(name, args, depth)


_INSTALLS = frozenset({"/i", "/a", "/x", "/p", "/f", "/fa", "/update", "/uninstall", "/package", "/j"})


def cmd_msiexec(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`msiexec /i x.msi` (or /x, /p, /a...) runs a Windows installer, whose own actions may do anything."""
    if {s.split(":")[0] for s in _switches(args)} & _INSTALLS or any(a.value is None for a in args):
        ctx.add(D, "{name}: installs or removes a program", N_("Installs or removes a program on this computer"),
                name=name)  # fmt: skip
    else:
        ctx.as_unknown_program(name, args, depth)


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


# wsl's options that take a value, and those that manage WSL rather than run a command in it
_WSL_VALUES = frozenset({"-d", "--distribution", "--distribution-id", "-u", "--user", "--cd", "--shell-type"})
_WSL_MANAGES = frozenset(
    {"-l", "--list", "--status", "-v", "--version", "--help", "--shutdown", "-t", "--terminate", "-s",
     "--set-default", "--set-version", "--set-default-version", "--update", "--export", "--import",
     "--import-in-place", "--mount", "--unmount", "--uninstall", "--manage", "--unregister", "--install",
     "--debug-shell"}
)  # fmt: skip


def cmd_wsl(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`wsl CMD`, `wsl -e CMD`, `wsl -d DISTRO -- CMD`, a bare `wsl` reading its input: WSL's Linux
    system runs it, outside the job the command runs in, with the Windows drives writable under /mnt.
    Held, and what it runs judged too (as its shell's code; `-e` as a command). Managing WSL starts
    nothing (`--list`, `--status`, `--shutdown`), but `--install` starts the system it installs
    (unless `--no-launch`), `--debug-shell` is a shell in it, and `--unregister` deletes one."""
    i = 0
    while i < len(args) and args[i].value is not None:
        value = args[i].value or ""
        option = _long_folded(value)
        if option in ("-e", "--exec"):
            hands_off(ctx, f"{name} {value}")
            ctx.inner(args[i + 1 :], stdin, bulk, depth)
            return
        if option == "--":
            i += 1
            break
        if option in _WSL_MANAGES:
            manages(ctx, name, args, depth)
            return
        if option in _WSL_VALUES:
            i += 2
        elif value.startswith("-") or value == "~":  # `--system`; `~`: starts in the Linux home folder
            i += 1
        else:
            break
    hands_off(ctx, _snip(" ".join([name, *(a.source for a in args[: i + 1])])))
    if args[i:]:
        ctx.code_words(args[i:], name)
    else:
        stdin_code(ctx, name, stdin, shell=True)


def cmd_wsl_launcher(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """A WSL distribution's own launcher (`ubuntu.exe`, `ubuntu2204`, `debian`, `kali`): `run CMD` and
    `-c CMD` run CMD in its Linux system as `wsl` does, bare it opens a shell there reading its input,
    `config` and `install` start that system too: each held, and what it runs judged as its shell's code."""
    first = (args[0].value or "").casefold() if args else ""
    if args and args[0].value is not None and first not in ("run", "-c", "install", "config"):
        ctx.as_unknown_program(name, args, depth)  # `help`, or not a launcher's word (`mkosi -d debian -r x`)
        return
    hands_off(ctx, _snip(" ".join([name, *(a.source for a in args[:1])])))
    if args and first in ("run", "-c"):
        ctx.code_words(args[1:], name)
    elif not args:
        stdin_code(ctx, name, stdin, shell=True)


_CONHOST_VALUES = frozenset({"--width", "--height", "--signal", "--server", "--feature", "--vtmode"})


def cmd_conhost(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`conhost [--headless] CMD ARGS`: the console host starts CMD as its child; CMD is judged."""
    i = 0
    while i < len(args) and (args[i].value or "").startswith("-"):
        i += 2 if (args[i].value or "").casefold() in _CONHOST_VALUES else 1
    if args[i:]:
        ctx.inner(args[i:], stdin, bulk, depth)
    else:
        ctx.as_unknown_program(name, args, depth)


def cmd_pcalua(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """The Program Compatibility Assistant: `pcalua -a PROGRAM [-c ARGS...] [-d FOLDER]` starts PROGRAM
    with ARGS, judged as that command."""
    program = next((k + 1 for k, a in enumerate(args[:-1]) if windows_switch(a.value) == "/a"), None)
    if program is None:
        ctx.as_unknown_program(name, args, depth)
        return
    given = next((k + 1 for k, a in enumerate(args) if windows_switch(a.value) == "/c"), len(args))
    ctx.inner([args[program], *args[given:]], stdin, bulk, depth)


def manages(ctx: Analysis, name: str, args: list[_Word], depth: int) -> None:
    """wsl's options that manage WSL itself."""
    options = {(a.value or "").casefold() for a in args}
    if "--unregister" in options:
        ctx.add(D, "{name} --unregister: deletes a Linux system and all its files", name=name,
                danger=Danger.LOSES_FILES)  # fmt: skip
    if "--debug-shell" in options or ("--install" in options and not options & {"--no-launch", "-n"}):
        hands_off(ctx, f"{name} {'--debug-shell' if '--debug-shell' in options else '--install'}")
    ctx.as_unknown_program(name, args, depth)


# Windows Terminal's options that take a value: before its first subcommand, and a tab's or a pane's
_WT_GLOBAL_VALUES = frozenset({"-w", "--window", "--pos", "--size"})
_WT_VALUES = frozenset({"-p", "--profile", "-d", "--startingdirectory", "--title", "--tabcolor", "--colorscheme",
                        "-s", "--size"})  # fmt: skip
_WT_SUBCOMMANDS = frozenset(
    {"nt", "new-tab", "sp", "split-pane", "ft", "focus-tab", "mf", "move-focus", "mp", "move-pane", "swap-pane",
     "fp", "focus-pane"}
)  # fmt: skip


def cmd_wt(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`wt -w 0 nt CMD`, `wt new-tab cmd /c CMD`, `wt sp CMD`: Windows Terminal (the one already
    running, when there is one) starts CMD, or its profile's shell, as its own child: outside the job
    the command runs in. Held, and each command (`;` between them) judged as a command of its own."""
    if args and all(a.value in ("-h", "--help", "-?", "/?", "-v", "--version") for a in args):
        ctx.as_unknown_program(name, args, depth)
        return
    hands_off(ctx, _snip(" ".join([name, *(a.source for a in args)])))
    for k, words in enumerate(_wt_commands(args)):
        i = 0
        while k == 0 and i < len(words) and (words[i].value or "").startswith("-"):
            i += 2 if _long_folded(words[i].value or "") in _WT_GLOBAL_VALUES else 1
        sub = (words[i].value or "").casefold() if i < len(words) else "nt"
        if sub in _WT_SUBCOMMANDS:
            i += 1
        if sub not in ("nt", "new-tab", "sp", "split-pane") and sub in _WT_SUBCOMMANDS:
            continue  # focus or move what is open
        while i < len(words) and (words[i].value or "").startswith("-"):
            if words[i].value == "--":
                i += 1
                break
            i += 2 if _long_folded(words[i].value or "") in _WT_VALUES else 1
        if words[i:]:
            ctx.inner(words[i:], None, bulk, depth)


def _long_folded(option: str) -> str:
    """A long option in lower case (`--startingDirectory`); a short one as given (`-d` is not `-D`)."""
    return option.casefold() if option.startswith("--") else option


def _wt_commands(args: list[_Word]) -> list[list[_Word]]:
    """wt's commands: its words split at a `;` alone or ending a word (`\\;` is a `;` of the command)."""
    commands: list[list[_Word]] = [[]]
    for a in args:
        value = a.value
        if value == ";":
            commands.append([])
        elif value is not None and value.endswith(";") and not value.endswith("\\;"):
            commands[-1].append(dataclasses.replace(a, value=value[:-1], pattern=a.pattern[:-1]))
            commands.append([])
        elif value is not None and value.endswith("\\;"):
            commands[-1].append(dataclasses.replace(a, value=value[:-2] + ";"))
        else:
            commands[-1].append(a)
    return [words for words in commands if words]


def cmd_winrm(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`winrm invoke Create wmicimv2/Win32_Process @{CommandLine="CMD"}` has the WMI service start
    CMD, through the WinRM service (`create` makes a resource's instance the same way)."""
    if args and (args[0].value is None or windows_switch(args[0].value) in ("invoke", "i", "create", "c")):
        hands_off(ctx, f"{name} {_snip(args[0].source)}")
    ctx.as_unknown_program(name, args, depth)


def cmd_net(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`net start SERVICE` has the service manager start it, as `sc start` does; `net start` alone
    lists the services that run."""
    words = _words(args)
    if any(a.value is None for a in args) or (words[:1] == ["start"] and len(words) > 1):
        hands_off(ctx, f"{name} {_snip(' '.join(words[:2]))}")
    ctx.as_unknown_program(name, args, depth)


def cmd_start(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """Git Bash's `start` is a script that runs `cmd //c start "$@"` (each `&` escaped): judged as that
    cmd code (`start x.bat` reads x.bat, as `cmd /c start x.bat` does). A web address alone opens the browser."""
    values = [a.literal for a in args]
    if any(v is None for v in values):
        ctx.add(D, "cannot tell what runs: {what} of an expansion", what=name)
        return
    words = [(v or "").replace("&", "^&") for v in values]
    shown = [w for w in words if w and not w.startswith("/")]
    if len(shown) == 1 and re.fullmatch(r"[a-z][\w+.-]*://[^\s\"%!^]+", shown[0], re.I):
        ctx.as_unknown_program(name, args, depth)
        return
    code = " ".join(["start", *(f'"{w}"' if not w or re.search(r"\s", w) else w for w in words)])
    ctx.sub_script(f"cmd //c {shlex.quote(code)}", name)


def cmd_fsutil(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`fsutil file setzerodata` writes zeros over a file's contents."""
    if "setzerodata" in _words(args):
        ctx.add(D, "{name} file setzerodata: destroys file contents beyond recovery", name=name,
                danger=Danger.LOSES_FILES)  # fmt: skip
    ctx.as_unknown_program(name, args, depth)


def backups(ctx: Analysis, name: str) -> None:
    ctx.add(D, "{name} delete: deletes the backups Windows keeps", name=name, danger=Danger.LOSES_FILES)


def cmd_backup_tool(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """vssadmin and wbadmin: `delete` (and vssadmin's `resize`, which drops the oldest) lose backups."""
    words = _words(args)
    if "delete" in words or (name == "vssadmin" and "resize" in words):
        backups(ctx, name)
    ctx.as_unknown_program(name, args, depth)


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
        ctx.as_unknown_program(name, args, depth)
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
