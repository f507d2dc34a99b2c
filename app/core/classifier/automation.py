"""Programs that act inside other programs: synthetic input (typing and clicking as if the user did)
and debuggers or tracers attaching to a running process (issue 23).

Either can answer Cowork Terminal's own approval prompt, hide it, or call into the tray: each is
held, in plain words. A debugger that starts its own program (`gdb ./a.out`) only runs it.
"""

from __future__ import annotations

import re

from app.core.i18n import N_

from .danger import Danger
from .findings import D, M, _snip
from .handoff import hands_off
from .options import _split_options
from .rule import Analysis
from .stdin import _Stdin
from .words import _Word

INPUT_WORDS = N_("Types, clicks or changes windows in other programs as if it were you")
ATTACH_WORDS = N_("Attaches to a running program and can read or change what it does")


def synthetic_input(ctx: Analysis, what: str) -> None:
    ctx.add(D, "{what}: sends keys, clicks or window changes to other programs", INPUT_WORDS, what=what,
            danger=Danger.CONTROLS_PROGRAMS)  # fmt: skip


def attaches(ctx: Analysis, what: str) -> None:
    ctx.add(D, "{what}: attaches to a running process", ATTACH_WORDS, what=what, danger=Danger.CONTROLS_PROGRAMS)


def cmd_input(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """xdotool, ydotool, wtype, xte, cliclick: every use may drive another window, reading ones too
    (`xdotool search` is the first half of `xdotool search … windowunmap`), so all are held."""
    synthetic_input(ctx, name)


_TYPES_INTO_A_SHELL = frozenset({"send-keys", "send", "stuff", "paste-buffer", "pasteb"})


def _types_into_a_shell(value: str | None) -> bool:
    """tmux takes a command by any unambiguous prefix (`send-ke`, `paste-b`): third red team."""
    v = value or ""
    return v in _TYPES_INTO_A_SHELL or (len(v) >= 6 and ("send-keys".startswith(v) or "paste-buffer".startswith(v)))


_KEY_NAMES = {"Enter": "\n", "C-m": "\n", "C-j": "\n", "KPEnter": "\n", "Space": " ", "Tab": "\t"}
_TMUX_GLOBAL_VALUES = frozenset({"-L", "-S", "-f", "-c", "-T"})  # tmux's own options that take a value
# Options a server runs: the program of every new window, and formats' `#(command)`.
_TMUX_RUNS = re.compile(r"#\(|\bdefault-(?:command|shell)\b")
_SCREEN_STARTS = re.compile(r"^-\w*[dD]\w*m")  # `-dm`, `-dmS`, `-Dm`: a session started detached
_SCREEN_QUIET_X = frozenset({"quit", "kill", "detach", "hardcopy", "info", "select", "windows"})


def _starts_a_program(name: str, args: list[_Word]) -> bool:
    """Whether tmux or screen is asked to start a program (in a server that may be outside)."""
    values = [a.value for a in args]
    if None in values:
        return True
    if name == "screen":
        if any(_SCREEN_STARTS.match(v or "") for v in values) or any(_TMUX_RUNS.search(v or "") for v in values):
            return True
        if "-X" in values:
            told = values[values.index("-X") + 1 :]
            return not told or told[0] not in _SCREEN_QUIET_X
        # `-c FILE` reads commands; a program word starts a window running it
        return "-c" in values or any(not (v or "").startswith("-") for v in _screen_operands(values))
    if any(_TMUX_RUNS.search(v or "") for v in values):
        return True
    return any(map(_tmux_starts, _tmux_commands([v or "" for v in values])))


_SCREEN_VALUES = frozenset({"-S", "-r", "-R", "-x", "-d", "-D", "-p", "-T", "-t", "-e", "-h", "-s", "-L", "-Logfile"})


def _screen_operands(values: list[str | None]) -> list[str | None]:
    """screen's words that are not an option nor an option's value (`-r dev`, `-S work`)."""
    operands, skip = [], False
    for v in values:
        if skip:
            skip = False
        elif v in _SCREEN_VALUES:
            skip = True
        elif not (v or "").startswith("-"):
            operands.append(v)
    return operands


def _tmux_commands(values: list[str]) -> list[str]:
    """The name of each tmux command in its arguments (past tmux's own options, split at `;`); ""
    for none (`tmux` alone, which starts a session)."""
    i = 0
    while i < len(values) and values[i].startswith("-"):
        if values[i] in ("-V", "-h", "-?"):
            return []  # its version, its usage
        if values[i].startswith("-f"):
            return [""]  # a file of tmux commands, run by the server (`run-shell` in it): unread here
        i += 2 if values[i] in _TMUX_GLOBAL_VALUES else 1
    names, expect = [], True
    for v in values[i:]:
        if v in (";", "\\;"):
            expect = True
        elif expect:
            names.append(v)
            expect = False
    return names or [""]


# tmux commands that only look, or end or leave what runs; any other may run a program in the
# server (new-window, send-keys, bind-key, set-environment, display-menu...), which may be the
# user's own, outside the container: what it starts runs there (red team, 2026-12-04: `tmux
# new-window -d 'cd; echo ... >> .bashrc'` wrote ~/.bashrc, which the container keeps read-only).
_TMUX_LOOKS = frozenset({
    "ls", "list-sessions", "list-windows", "lsw", "list-panes", "lsp", "list-clients", "lsc", "list-buffers", "lsb",
    "list-keys", "lsk", "list-commands", "lscm", "has-session", "has", "capture-pane", "capturep", "show-options",
    "show", "show-window-options", "showw", "show-environment", "showenv", "show-buffer", "showb",
    "display-message", "display", "kill-session", "kill-server", "kill-window", "killw", "kill-pane", "killp",
    "attach-session", "attach", "a", "at", "detach-client", "detach", "info", "server-info", "start-server", "start",
    "select-window", "selectw", "select-pane", "selectp", "rename-session", "rename", "rename-window", "renamew",
    "resize-pane", "resizep", "clear-history", "clearhist", "wait-for", "wait",
})  # fmt: skip


def _tmux_starts(command: str) -> bool:
    return command not in _TMUX_LOOKS


def cmd_multiplexer(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """tmux and screen: typing into a shell in one (`tmux send-keys -H 72 6d ...`, `screen -X
    stuff`) runs whatever it types (second red team, 2026-12-04); what else they are given may be a
    command they run (`tmux new -d 'rm -rf DIR'`). tmux runs each of its commands split by `;`."""
    ctx.add(M, "{name}: runs programs in a terminal of its own", name=name)
    if _starts_a_program(name, args):
        hands_off(ctx, name)
    part: list[_Word] = []
    for a in [*args, None]:
        if a is not None and a.value not in (";", "\\;"):
            part.append(a)
            continue
        at = next((i for i, w in enumerate(part) if _types_into_a_shell(w.value)), None)
        if at is None:
            ctx.may_run(part, depth, shell_strings=True)  # tmux runs a command string with `sh -c`
        elif (
            part[at].value == "pasteb"
            or "paste-buffer".startswith(part[at].value or "")
            or (typed := _typed_text(part[at + 1 :])) is None
        ):
            synthetic_input(ctx, f"{name} {part[at].value}")  # hexadecimal keys, an expansion: unseen here
        else:  # what a shell in it would read, judged as what it would run
            ctx.sub_script(typed, f"{name} {part[at].value}")
        part = []


def _typed_text(words: list[_Word]) -> str | None:
    """The text `tmux send-keys` or `screen -X stuff` types, keys named as tmux names them (`Enter`),
    or None when it cannot be told (`-H` hexadecimal, an expansion). Options read as getopt reads
    them: in `-lt x`, `x` is the target."""
    text: list[str] = []
    skip = False
    for w in words:
        v = w.literal
        if v is None or (v.startswith("-") and "H" in v and not skip):
            return None
        if skip:
            skip = False
        elif v.startswith("-") and len(v) > 1:
            skip = v[-1] in "tcNT"  # the last letter of a cluster takes the next word
        else:
            text.append(_KEY_NAMES.get(v, v))
    return "".join(text).replace("\\n", "\n").replace("^M", "\n")


def cmd_osascript(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """AppleScript exists to drive other applications (Apple Events, System Events' keystrokes and
    clicks); what it would do cannot be told from outside, so every run is held."""
    synthetic_input(ctx, name)


def _pid_option(args: list[_Word], options: frozenset[str]) -> bool:
    """An option that names a process to attach to: `-p 12`, `-p12`, `--pid=12`, `--attach-pid 12`."""
    for a in args:
        v = a.value
        if v is None:
            continue
        key = v.split("=", 1)[0]
        if key in options or any(v.startswith(o) and len(v) > len(o) for o in options if len(o) == 2):
            return True
    return False


def cmd_gdb(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`gdb -p PID`, `gdb PROGRAM PID`, or an `attach` command given with -ex: attaching; otherwise
    it runs a program under the debugger."""
    values = frozenset({"-ex", "-iex", "-x", "-ix", "-cd", "-d", "-s", "-e", "-se", "-c", "--args", "-b"})
    if _pid_option(args, frozenset({"-p", "--pid", "-pid"})):
        attaches(ctx, name)
        return
    commands = [args[i + 1] for i, a in enumerate(args[:-1]) if a.value in ("-ex", "-iex", "--eval-command")]
    commands += [a for a in args if (a.value or "").startswith("--eval-command=")]
    if any(c.value is None or "attach" in c.value for c in commands):
        attaches(ctx, name)
        return
    operands: list[_Word] = []
    i = 0
    while i < len(args):
        v = args[i].value
        if v is not None and v.startswith("-") and v != "-":
            i += 2 if v in values else 1
            continue
        operands.append(args[i])
        i += 1
    if len(operands) >= 2 and (operands[1].value is None or operands[1].value.isdigit()):
        attaches(ctx, name)  # gdb PROGRAM PID
    elif any(a.value in ("-x", "-ix", "--command") or (a.value or "").startswith("--command=") for a in args):
        attaches(ctx, name)  # a command file may attach: cannot tell, held as attaching
    else:
        ctx.add(M, "{name}: runs a program under a debugger", name=name)


def cmd_lldb(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    attach = frozenset({"-p", "--attach-pid", "-n", "--attach-name", "-w", "--wait-for"})
    if _pid_option(args, attach) or any("attach" in (a.value or "attach") for a in args if a.value != "--"):
        attaches(ctx, name)
    else:
        ctx.add(M, "{name}: runs a program under a debugger", name=name)


_TRACER_FLAGS = frozenset(
    {"--follow-forks", "--output-separately", "--summary-only", "--summary", "--summary-wall-clock", "--no-abbrev",
     "--seccomp-bpf", "--kill-on-exit", "--instruction-pointer", "--stack-trace", "--daemonize", "--demangle"}
)  # fmt: skip


# The short options that take the next word, each program's own: ltrace's -S and -b are flags.
_TRACER_VALUES = {
    "strace": frozenset({"-o", "-e", "-p", "-s", "-u", "-E", "-a", "-P", "-I", "-b", "-X", "-O", "-S"}),
    "ltrace": frozenset({"-a", "-A", "-D", "-e", "-F", "-l", "-n", "-o", "-p", "-s", "-u", "-w", "-x"}),
}


def cmd_tracer(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """strace and ltrace: attaching with -p is held; tracing a program they start runs it, judged too."""
    if _pid_option(args, frozenset({"-p", "--attach"})):
        attaches(ctx, name)
        return
    ctx.add(M, "{name}: traces a program", name=name)
    options, i = _split_options(args, _TRACER_VALUES.get(name, _TRACER_VALUES["strace"]))
    # A long option written without `=` may take the next word or not (`--trace file`, `--quiet`):
    # read the wrong way, the program it traces was never seen (review, 2026-12-04).
    unclear = [o.value for o in options if o.value and o.value.startswith("--") and "=" not in o.value]
    unclear = [option for option in unclear if option not in _TRACER_FLAGS]
    if unclear:
        ctx.add(D, "cannot tell what runs: {name} {option}", name=name, option=_snip(unclear[0]))
        return
    ctx.inner(args[i:], stdin, bulk, depth)


def cmd_perf(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`perf stat|record|trace [-p PID] [COMMAND]`: attaching is held; a command it starts is judged."""
    if _pid_option(args, frozenset({"-p", "--pid", "-t", "--tid"})):
        attaches(ctx, name)
        return
    ctx.add(M, "{name}: measures a program", name=name)
    values = frozenset({"-e", "--event", "-o", "--output", "-c", "-F", "-C", "--cpu", "-G", "-r", "--repeat",
                        "-x", "-I", "--call-graph", "-m", "-u", "--uid"})  # fmt: skip
    _, i = _split_options(args, values)
    if args[i:]:
        _, j = _split_options(args[i + 1 :], values)  # after the subcommand (stat, record, trace...)
        ctx.inner(args[i + 1 + j :], stdin, bulk, depth)


def cmd_attach_always(
    ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int
) -> None:
    """Tools whose job is to get into a running process: gdbserver, gcore, pyrasite, frida, reptyr..."""
    attaches(ctx, name)


def cmd_py_spy(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    if _pid_option(args, frozenset({"-p", "--pid"})) or any(a.value == "dump" for a in args):
        attaches(ctx, name)
    else:
        ctx.add(M, "{name}: measures a program", name=name)
