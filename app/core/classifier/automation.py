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
from .handoff import hands_off, may_write
from .options import _operands, _split_options, getopt, subcommand
from .piped import piped_commands
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
    if name not in ("tmux", "screen"):  # byobu, tmate: programs no rule knew
        may_write(ctx, args)
    ctx.add(M, "{name}: runs programs in a terminal of its own", name=name)
    if _starts_a_program(_multiplexer_kind(name, args), args):
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


# byobu runs tmux or screen (tmux unless set otherwise) with the words it is given; tmate is tmux.
_MULTIPLEXER_KINDS = {"screen": "screen", "byobu-screen": "screen"}
_SCREEN_ONLY = frozenset({"-X", "-ls", "-list", "-r", "-R", "-RR", "-x", "-wipe"})


def _multiplexer_kind(name: str, args: list[_Word]) -> str:
    """The program whose words `name` takes, "screen" or "tmux": byobu given one of screen's own
    options first (`byobu -X stuff ...`, `byobu -ls`) is reading them for screen."""
    for a in args if name == "byobu" else ():
        if a.value is None or not a.value.startswith("-"):
            break
        if a.value in _SCREEN_ONLY or _SCREEN_STARTS.match(a.value):
            return "screen"
    return _MULTIPLEXER_KINDS.get(name, "tmux")


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


# ---- Terminals whose server, already running, is asked to start a program or to type: what it
# starts is the server's child, outside the container, whatever ran the asking command (a red team,
# 2026-12-05: `zellij run`, `wezterm cli spawn`, `kitty @ launch`, `footclient`... ran unasked).


def _typed(ctx: Analysis, what: str, text: str | None) -> None:
    """Text typed into a terminal's shell, judged as what that shell would run."""
    if text:
        ctx.sub_script(text, what)


def _runs_after(ctx: Analysis, args: list[_Word], values: frozenset[str], bulk: bool, depth: int) -> None:
    """The program a server is asked to start, after the request's own options (or `--`)."""
    _, i = _split_options(args, values)
    ctx.inner(args[i:], None, bulk, depth)


def _known_input(stdin: _Stdin | None) -> str | None:
    """The text a command reads, where the command line gives it (`<<< TEXT`, a here-document)."""
    return stdin.text if stdin is not None and stdin.kind == "text" else None


def _text(words: list[_Word]) -> str | None:
    """The words of a text given in several (`send-text a b`), or None when one is an expansion."""
    literals = [w.literal for w in words]
    return None if None in literals else " ".join(v for v in literals if v is not None)


_ZELLIJ_VALUES = frozenset({"-s", "--session", "-c", "--config", "--config-dir", "-l", "--layout", "--data-dir",
                            "--max-panes", "-n", "--new-session-with-layout"})  # fmt: skip
_ZELLIJ_PANE_VALUES = frozenset({"-d", "--direction", "--cwd", "-n", "--name", "--height", "--width", "-x", "-y",
                                 "--pinned", "-p", "--plugin", "--configuration", "-l", "--layout"})  # fmt: skip
_ZELLIJ_SERVER = frozenset({"run", "r", "edit", "e", "action", "ac", "plugin", "p", "pipe"})
# zellij actions that only look, move or close: any other may start a program or type (write, new-pane...)
_ZELLIJ_LOOKS = frozenset({
    "dump-screen", "dump-layout", "list-clients", "query-tab-names", "clear", "close-pane", "close-tab", "resize",
    "focus-next-pane", "focus-previous-pane", "move-focus", "move-focus-or-tab", "move-pane", "move-pane-backwards",
    "move-tab", "go-to-next-tab", "go-to-previous-tab", "go-to-tab", "next-swap-layout", "previous-swap-layout",
    "scroll-up", "scroll-down", "scroll-to-top", "scroll-to-bottom", "page-scroll-up", "page-scroll-down",
    "half-page-scroll-up", "half-page-scroll-down", "rename-pane", "rename-tab", "rename-session", "undo-rename-pane",
    "undo-rename-tab", "switch-mode", "toggle-fullscreen", "toggle-pane-frames", "toggle-active-sync-tab",
    "toggle-pane-embed-or-floating", "toggle-pane-pinned", "change-floating-pane-coordinates",
})  # fmt: skip


def cmd_zellij(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """zellij's `run`, `edit`, `action` and plugins are done by a session's server, which may be the
    user's, outside the container. Listing and ending sessions, and starting one (its server is
    then this command's child), stay as for a program no rule knows."""
    may_write(ctx, args)
    sub, rest = subcommand(ctx, name, args, _ZELLIJ_VALUES)
    action = (rest[0].value if rest else "") if sub in ("action", "ac") else None
    if (sub is not None and sub not in _ZELLIJ_SERVER) or action in _ZELLIJ_LOOKS:
        ctx.as_unknown_program(name, args, depth, noted=False)
        return
    hands_off(ctx, " ".join([name, _snip(sub or ""), _snip(action or "")]).strip())
    if sub in ("run", "r") or action == "new-pane":
        _runs_after(ctx, rest[1:] if action else rest, _ZELLIJ_PANE_VALUES, bulk, depth)
    elif action == "write-chars":
        _typed(ctx, f"{name} action write-chars", _text(rest[1:]))
    elif action == "write":  # the bytes typed, as numbers
        codes = [w.value or "" for w in rest[1:]]
        if all(c.isdigit() and len(c) < 7 and int(c) <= 0x10FFFF for c in codes):
            _typed(ctx, f"{name} action write", "".join(chr(int(c)) for c in codes))
    else:
        ctx.may_run(rest, depth)


_WEZTERM_VALUES = frozenset({"--config-file", "--config"})
_WEZTERM_SPAWN_VALUES = frozenset({"--pane-id", "--domain-name", "--window-id", "--cwd", "--workspace", "--cells",
                                   "--percent", "--move-pane-id", "--class", "--position", "--domain"})  # fmt: skip
_WEZTERM_LOOKS = frozenset({
    "list", "list-clients", "get-text", "get-pane-direction", "activate-pane", "activate-pane-direction",
    "activate-tab", "kill-pane", "set-tab-title", "set-window-title", "rename-workspace", "zoom-pane",
    "adjust-pane-size", "move-pane-to-new-tab", "help", "",
})  # fmt: skip


def _request(
    ctx: Analysis,
    name: str,
    args: list[_Word],
    depth: int,
    what: str,
    words: list[_Word],
    values: frozenset[str],
    looks: frozenset[str],
) -> tuple[str | None, list[_Word]] | None:
    """The request `what` (`kitty @`, `wezterm cli`) sends the running program, which is outside the
    container, and the words after it: held. None for one in `looks`, which only looks at or
    restyles its windows: judged as a program no rule knows."""
    request, rest = subcommand(ctx, what, words, values)
    if request in looks:
        ctx.as_unknown_program(name, args, depth, noted=False)  # its callers noted the words (may_write)
        return None
    hands_off(ctx, f"{what} {_snip(request or '')}".strip())
    return request, rest


def cmd_wezterm(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`wezterm cli` asks a running wezterm (its GUI or its multiplexer server) to spawn a program or
    type into a pane; `wezterm start` (`-e`, or nothing) asks a running GUI to start the program
    unless `--always-new-process`, and `connect` has a multiplexer server run it."""
    may_write(ctx, args)
    _, i = _split_options(args, _WEZTERM_VALUES)
    # wezterm's options alone (`--config-file x.lua`, `-n`) are `wezterm start` too; not --help, --version
    shows = any(a.value in ("-h", "--help", "-V", "--version") for a in args[:i])
    sub, rest = (args[i].value, args[i + 1 :]) if i < len(args) else ("" if shows else "start", [])
    e = next((k for k, a in enumerate(args[:i]) if a.value == "-e"), None)
    if e is not None:
        sub, rest = "start", args[e + 1 :]
    if sub == "cli":
        asked = _request(ctx, name, args, depth, f"{name} cli", rest, frozenset({"--class"}), _WEZTERM_LOOKS)
        if asked is None:
            return
        request, words = asked
        if request in ("spawn", "split-pane"):
            _runs_after(ctx, words, _WEZTERM_SPAWN_VALUES, bulk, depth)
        elif request == "send-text":
            text = _operands(words, frozenset({"--pane-id"}))
            _typed(ctx, f"{name} cli send-text", _text(text) if text else _known_input(stdin))
        else:
            ctx.may_run(words, depth)
    elif sub == "connect" or (sub == "start" and not any(a.value == "--always-new-process" for a in rest)):
        hands_off(ctx, f"{name} {sub}")
        _, j = _split_options(rest, _WEZTERM_SPAWN_VALUES)
        _runs_after(ctx, rest[j + 1 :] if sub == "connect" else rest, _WEZTERM_SPAWN_VALUES, bulk, depth)
    else:
        ctx.as_unknown_program(name, args, depth, noted=False)


_KITTY_VALUES = frozenset({"--class", "--name", "--title", "-T", "--config", "-c", "--override", "-o", "--directory",
                           "-d", "--working-directory", "--session", "--listen-on", "--start-as", "--instance-group",
                           "--position", "--app-id", "--detached-log", "--watcher", "-w"})  # fmt: skip
_KITTY_RC_VALUES = frozenset({"--to", "--password", "--password-file", "--password-env", "--use-password"})
_KITTY_LAUNCH_VALUES = frozenset({
    "--match", "-m", "--title", "--window-title", "--tab-title", "--type", "--window-type", "--cwd", "--env", "--var",
    "--location", "--remote-control-password", "--stdin-source", "--marker", "--os-window-class", "--os-window-name",
    "--os-window-title", "--os-window-state", "--logo", "--logo-position", "--logo-alpha", "--color", "--spacing",
    "--watcher", "-w", "--bias", "--next-to", "--source-window", "--os-panel",
})  # fmt: skip
_KITTY_SEND_VALUES = frozenset({"--match", "-m", "--match-tab", "-t", "--from-file", "--bracketed-paste"})
# Remote control commands that only look at, move, close or restyle windows: any other may start a
# program or type (launch, new-window, run, send-text, send-key, kitten, action, env, load-config...).
_KITTY_LOOKS = frozenset({
    "ls", "get-text", "get-colors", "focus-window", "focus-tab", "close-window", "close-tab", "detach-window",
    "detach-tab", "resize-window", "resize-os-window", "scroll-window", "set-font-size", "set-spacing", "set-colors",
    "set-background-opacity", "set-background-image", "set-tab-color", "set-tab-title", "set-window-title",
    "set-window-logo", "goto-layout", "last-used-layout", "set-enabled-layouts", "create-marker", "remove-marker",
    "disable-ligatures", "signal-child", "select-window", "set-user-vars",
})  # fmt: skip


def _python_escapes(text: str | None) -> str | None:
    """kitty reads send-text's text with Python's escapes: `\\r`, `\\n`, `\\x0d` end a line."""
    return None if text is None else re.sub(r"\\(?:[rn]|x0[aAdD]|u000[aAdD]|0?1[25])", "\n", text)


def cmd_kitty(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """kitty's remote control (`kitty @ ...`, `kitten @ ...`) is done by the running kitty, outside
    the container: `launch`, `run`, `send-text`, `action`... start programs or type in its windows.
    `kitty --single-instance` asks a running kitty to open the window."""
    may_write(ctx, args)
    words = args[1:] if name == "kitty" and args and args[0].value == "+kitten" else args
    if not (words and words[0].value == "@"):
        if name == "kitty" and any(a.value in ("-1", "--single-instance") for a in args):
            hands_off(ctx, f"{name} --single-instance")
            _runs_after(ctx, args, _KITTY_VALUES, bulk, depth)
        else:
            ctx.as_unknown_program(name, args, depth, noted=False)
        return
    asked = _request(ctx, name, args, depth, f"{name} @", words[1:], _KITTY_RC_VALUES, _KITTY_LOOKS)
    if asked is None:
        return
    request, rest = asked
    if request in ("launch", "new-window"):
        _runs_after(ctx, rest, _KITTY_LAUNCH_VALUES, bulk, depth)
    elif request == "run":
        _runs_after(ctx, rest, frozenset({"--env", "--remote-control-password"}), bulk, depth)
    elif request == "send-text":
        text = _operands(rest, _KITTY_SEND_VALUES)
        typed = _text(text) if text else _known_input(stdin) if any(a.value == "--stdin" for a in rest) else None
        _typed(ctx, f"{name} @ send-text", _python_escapes(typed))
    else:
        ctx.may_run(rest, depth)


_ALACRITTY_VALUES = frozenset({"--config-file", "--socket", "--working-directory", "-T", "--title", "--class", "-o",
                               "--option", "--embed"})  # fmt: skip


def cmd_alacritty(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`alacritty msg create-window` has a running alacritty open a window (running its `-e`), and
    `msg config` changes what its windows do (a key bound to a program); any other alacritty runs
    as this command's child."""
    may_write(ctx, args)
    _, i = _split_options(args, _ALACRITTY_VALUES)
    if i >= len(args) or args[i].value != "msg":
        ctx.as_unknown_program(name, args, depth, noted=False)
        return
    asked = _request(ctx, name, args, depth, f"{name} msg", args[i + 1 :], frozenset({"-s", "--socket"}),
                     frozenset({"get-config"}))  # fmt: skip
    if asked is None:
        return
    request, words = asked
    at = next((k for k, w in enumerate(words) if w.value in ("-e", "--command")), None)
    if at is not None:
        ctx.inner(words[at + 1 :], None, bulk, depth)
    else:
        ctx.may_run(words, depth)


_FOOT_VALUES = frozenset({"-t", "--term", "-T", "--title", "-a", "--app-id", "-w", "--window-size-pixels", "-W",
                          "--window-size-chars", "-s", "--server-socket", "-D", "--working-directory", "-o",
                          "--override", "-d", "--log-level"})  # fmt: skip
# Where the program of a terminal server's client starts: the rest of its words
_RUNS_REST = {
    "urxvtc": ("-e",),
    "urxvtcd": ("-e",),
    "gnome-terminal": ("--", "-x", "--execute"),
    **dict.fromkeys(("xfce4-terminal", "tilix", "terminator", "mate-terminal"), ("-x", "--execute")),
}
# Those whose `-e`/`--command` is one command line, split as a shell would
_COMMAND_LINE = frozenset({"gnome-terminal", "xfce4-terminal", "tilix", "terminator", "mate-terminal"})


def cmd_terminal_client(
    ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int
) -> None:
    """footclient, urxvtc, gnome-terminal: clients of a terminal's server (`foot --server`, urxvtd,
    gnome-terminal-server: the user's), which opens the window and starts its program; xfce4-terminal,
    tilix, terminator, mate-terminal: their instance already running (over D-Bus) does."""
    may_write(ctx, args)
    hands_off(ctx, name)
    if name == "footclient":
        _runs_after(ctx, args, _FOOT_VALUES, bulk, depth)
        return
    for k, a in enumerate(args):
        v = a.value or ""
        if v in _RUNS_REST.get(name, ()):
            ctx.inner(args[k + 1 :], None, bulk, depth)
            return
        if name in _COMMAND_LINE and (v in ("-e", "--command") or v.startswith("--command=")):
            command = v.partition("=")[2] if "=" in v else args[k + 1].literal if k + 1 < len(args) else None
            _typed(ctx, f"{name} --command", command)  # a command line, split as a shell would
            return
    ctx.may_run(args, depth)


def cmd_dtach(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`dtach -p SOCKET` types its input into a session, `-a` attaches to one (what it reads is
    typed there), `-A` does either: the session's program may be the user's, outside the container.
    `-c`, `-n`, `-N` start the program, as this command's child."""
    may_write(ctx, args)
    mode = args[0].value if args else ""
    command = args[2:]
    _, i = _split_options(command, frozenset({"-e", "-r"}))
    if mode in ("-c", "-n", "-N"):
        ctx.as_unknown_program(name, [], depth)
        ctx.inner(command[i:], stdin, bulk, depth)
    elif mode is None or mode in ("-p", "-a", "-A"):
        hands_off(ctx, f"{name} {mode or ''}".strip())
        if mode == "-p":
            _typed(ctx, f"{name} -p", _known_input(stdin))
        elif mode == "-A":
            ctx.inner(command[i:], None, bulk, depth)
    else:
        ctx.as_unknown_program(name, args, depth, noted=False)


def cmd_abduco(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """abduco's `-a` attaches to a session (what it reads is typed there; not with `-r`, read-only),
    `-A` attaches or starts it, `-p` types its input: the session may be the user's, outside the
    container. `-c` and `-n` start the program as this command's child; alone, it lists sessions."""
    may_write(ctx, args)
    given, i, unknown = getopt(args, "e", {})
    command = args[i + 1 :]
    if unknown or "p" in given or "A" in given or ("a" in given and "r" not in given):
        hands_off(ctx, name)
        if "p" in given:
            _typed(ctx, f"{name} -p", _known_input(stdin))
        elif "A" in given:
            ctx.inner(command, None, bulk, depth)
    elif given & {"c", "n"}:
        ctx.as_unknown_program(name, [], depth)
        ctx.inner(command, stdin, bulk, depth)
    else:
        ctx.as_unknown_program(name, args, depth, noted=False)


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
    it runs a program under the debugger. Its commands, and the program `run` starts, are judged
    with every command's options (code_options.gdb_commands)."""
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
    elif stdin is not None and not any(a.value in ("-batch", "--batch") for a in args):
        # Without -batch it runs what is typed into it (`echo 'shell CMD' | gdb -q` ran CMD: a review,
        # 2026-12-05): another command's output is held as a shell's is, other text (a file's) as code
        # it cannot check
        if stdin.kind == "pipe":
            piped_commands(ctx, name, stdin)
        elif stdin.text.strip() and stdin.text != "/dev/null":
            ctx.add(D, "cannot tell what runs: {name} runs code that cannot be checked here", name=name)
        else:
            ctx.add(M, "{name}: runs a program under a debugger", name=name)
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
