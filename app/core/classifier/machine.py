"""Processes, services and the machine itself: kill, systemctl, disks, cron; and the desktop's
openers (open, xdg-open, gio, gtk-launch...), which have what they open started out of our sight."""

from __future__ import annotations

import os
import posixpath
import re

from .danger import Danger
from .findings import D, M, _snip
from .handoff import hands_off, may_write
from .options import _operands, expanded, getopt, subcommand
from .rule import Analysis
from .scripts import script_text
from .stdin import _Stdin
from .tables import (
    _DISK_LISTING,
    _SYSTEMCTL_POWER,
    _SYSTEMCTL_SAFE,
    _names,
)
from .words import _Word


def cmd_kill(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    i = 0
    if args and args[0].value in ("-l", "-L", "--list", "--table"):
        return
    if args and args[0].value in ("-s", "-n", "--signal"):
        i = 2
    elif args and args[0].value is not None and args[0].value.startswith("-") and args[0].value != "--":
        i = 1
    if i < len(args) and args[i].value == "--":
        i += 1
    for pid in args[i:]:
        v = pid.value
        if v == "-1":
            ctx.add(D, "kill -1: kills every process you own")
        elif v is not None and re.fullmatch(r"-\d+|0|1", v):
            ctx.add(D, "kill {v}: kills a whole process group or init", v=v)
    ctx.add(M, "kill: stops processes")


def cmd_killall(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    ctx.add(D, "{name}: kills every process with that name", name=name)


def cmd_pkill(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    selectors = {"-u", "-U", "-G", "-g", "-s", "-P", "-t", "--uid", "--euid", "--group", "--pgroup",
                 "--session", "--parent", "--terminal"}  # fmt: skip
    values = frozenset(selectors | {"-F", "--pidfile", "--signal", "--ns", "--nslist"})
    used = {a.value for a in args} & selectors
    patterns = _operands(args, values)
    broad = [p for p in patterns if p.value is None or len(p.value.strip(".*^$")) < 3]
    if used or broad or not patterns:
        ctx.add(D, "{name}: kills many processes at once", name=name)
    ctx.add(M, "{name}: stops processes", name=name)


# Verbs that have systemd (PID 1, or the user's manager) start a unit's programs now (start; reload
# runs ExecReload=) or at the next boot or login (enable, link, set-default), or change what and how
# they run (edit, set-environment, daemon-reload): systemd's children, outside the container.
_SYSTEMCTL_STARTS = _names(
    "start restart reload try-restart reload-or-restart try-reload-or-restart reload-or-try-restart condrestart "
    "condreload force-reload enable reenable preset preset-all link add-wants add-requires edit set-environment "
    "import-environment daemon-reload daemon-reexec set-default default"
)
_SYSTEMCTL_VALUES = frozenset({"-H", "--host", "-M", "--machine", "-t", "--type", "--state", "-p", "--property",
                               "-n", "--lines", "-o", "--output", "-s", "--signal", "--kill-whom", "--kill-value",
                               "--root", "--image", "--preset-mode", "--job-mode", "--what", "--timestamp",
                               "--message", "--when", "--drop-in", "--reboot-argument", "--boot-loader-entry",
                               "--boot-loader-menu", "--image-policy", "--check-inhibitors"})  # fmt: skip


def cmd_systemctl(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    first = next(iter(_operands(args, _SYSTEMCTL_VALUES)), None)
    if expanded(ctx, first, name):  # `systemctl --user "$v" x.service`: may be `start`
        return
    sub = first.value if first is not None else None
    if sub in _SYSTEMCTL_POWER:
        ctx.add(D, "systemctl {sub}: shuts down, restarts or suspends the machine", sub=sub)
    elif sub is None and not args:
        return
    elif sub in _SYSTEMCTL_STARTS:
        hands_off(ctx, f"systemctl {sub}")
    elif sub not in _SYSTEMCTL_SAFE:
        ctx.add(M, "systemctl {sub}: changes services", sub=sub or "")


def cmd_loginctl(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    first = next(iter(_operands(args, frozenset({"-H", "--host", "-M", "--machine"}))), None)
    if expanded(ctx, first, name):  # may be `enable-linger`
        return
    sub = (first.value if first is not None else "") or ""
    if sub == "enable-linger":  # the user's manager then runs from boot, and the units it starts
        hands_off(ctx, "loginctl enable-linger")
    elif sub in _SYSTEMCTL_POWER or sub.startswith(("terminate", "kill")):
        ctx.add(D, "loginctl {sub}: ends sessions or stops the machine", sub=sub)
    elif not sub.startswith(("list", "show", "session-status", "user-status", "seat-status")):
        ctx.add(M, "loginctl {sub}: changes sessions", sub=sub)


def cmd_init(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    if any(a.value in ("0", "6", "1", "s", "S") for a in args):
        ctx.add(D, "{name}: changes the machine's run level (shutdown, reboot)", name=name)
    else:
        ctx.add(M, "{name}: talks to the init system", name=name)


# A whole disk or partition, by the names the kernels give them (not /dev/null, a tty, a pipe...).
_DISK_DEVICE = re.compile(r"/dev/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|r?disk\d|md\d|dm-\d|mapper/|loop\d)")


def _disk_named(values: list[str | None]) -> str | None:
    """The first whole disk or partition among `values` (`of=/dev/sdb` for dd), or None."""
    for value in values:
        device = (value or "").removeprefix("of=")
        if _DISK_DEVICE.match(device):
            return device
    return None


def _disk_danger(disk: str | None) -> Danger:
    """Erasing a disk named as one is the strongest class (confirmed by typing its name); a file,
    or a device the command does not name, stays a loss of files."""
    return Danger.ERASES_DISK if disk is not None else Danger.LOSES_FILES


def cmd_dd(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    disk = _disk_named([a.value for a in args if (a.value or "").startswith("of=")] if name != "ddrescue" else
                       [a.value for a in _operands(args)][1:])  # fmt: skip
    ctx.add(D, "{name}: writes raw data, can overwrite disks", None, None, disk, _disk_danger(disk), name=name)


def cmd_diskutil(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    if expanded(ctx, next(iter(_operands(args)), None), name):
        return
    sub = (next((a.value for a in _operands(args)), "") or "").casefold()
    if sub in ("list", "info", "information", "activity", "listfilesystems", ""):
        return
    if re.match(r"(erase|partition|reformat|zero|secure|random|apfs|resize|merge|split|cs)", sub):
        ctx.add(D, "diskutil {sub}: can erase disks", sub=sub, danger=Danger.LOSES_FILES)
    else:
        ctx.add(M, "diskutil {sub}: changes disks or volumes", sub=sub)


def disk_tool(ctx: Analysis, name: str, args: list[_Word]) -> None:
    listing = _DISK_LISTING.get(name, set())
    values = [a.value for a in args]
    if any(v in listing for v in values) and all(v in listing or (v or "").startswith("/dev/") for v in values):
        return  # fdisk -l and the like only print the partition table
    disk = _disk_named([a.value for a in _operands(args)])
    ctx.add(D, "{name}: can erase or repartition disks", None, None, disk, _disk_danger(disk), name=name)


def cmd_zpool(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    if expanded(ctx, next(iter(_operands(args)), None), name):
        return
    sub = next((a.value for a in _operands(args)), "") or ""
    # rollback: everything written since the snapshot is lost (with -r, the later snapshots too)
    if sub in ("destroy", "labelclear", "remove", "detach", "offline", "split", "rollback"):
        ctx.add(D, "{name} {sub}: destroys storage", name=name, sub=sub, danger=Danger.LOSES_FILES)
    elif sub not in ("list", "status", "get", "iostat", "history", "events", ""):
        ctx.add(M, "{name} {sub}: changes storage", name=name, sub=sub)


def cmd_disk_tool(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    disk_tool(ctx, name, args)


def cmd_mkfs(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    disk = _disk_named([a.value for a in _operands(args)])
    ctx.add(D, "{name}: creates a filesystem, erasing the device", None, None, disk, _disk_danger(disk), name=name)


# stty's words that only show a terminal's settings, and its options naming the terminal (GNU's -F,
# BSD's -f); any other word is a setting, for the terminal named or the one on stdin (`< /dev/pts/3`):
# red team, 2026-12-05, `stty -F /dev/pts/N -echo` turned off another terminal's echo.
_STTY_SHOWS = frozenset({"-a", "--all", "-g", "--save", "-e", "size", "speed", "--help", "--version"})


def cmd_stty(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    i = 0
    while i < len(args):
        v = args[i].value
        if v in ("-F", "--file", "-f"):
            i += 2
        elif v is not None and (v in _STTY_SHOWS or v.startswith(("--file=", "-F"))):
            i += 1
        else:
            ctx.add(M, "{name}: changes a terminal's settings", name=name)
            return


def cmd_tput(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """ncurses' tput prints a capability's string, but `init` and `reset` (or either read by `-S`
    from stdin) set the terminal on stderr, stdout or stdin (`tput reset < /dev/pts/3`) too."""
    given, i, unknown = getopt(args, "T", {})
    capability = args[i] if i < len(args) else None
    if unknown or "S" in given or (capability is not None and capability.value in (None, "init", "reset")):
        ctx.add(M, "{name}: changes a terminal's settings", name=name)


def cmd_power(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    ctx.add(D, "{name}: shuts down or restarts the machine", name=name)


# ---- Openers: the desktop starts what they open (LaunchServices, an application D-Bus starts, the
# one instance of one already running), outside the container (a red team, 2026-12-05: `open
# x.command`, `open -a Terminal x.sh`, `gtk-launch` ran unasked). A folder named as one and a web
# page are shown, not run: those stay as for a program no rule knows.

_WEB_PAGE = re.compile(r"(?i)https?://")
# Documents a viewer shows and no program of the file runs (a page's scripts stay in the browser's
# sandbox): opening one is not held. Any other kind may be a program, a script, a desktop entry,
# a `.command` or `.terminal` file, or a kind whose opener runs it: held.
_DOCUMENT = re.compile(r"(?i)[^/]\.(?:html?|pdf|png|jpe?g|gif|svg|webp|txt|md|csv|json|log|xml)$")
_OPEN_QUIET = frozenset("RgjWF")  # reveal in the Finder, in the background, hidden, wait, fresh
_OPEN_QUIET_LONG = {"--reveal": "R", "--background": "g", "--hide": "j", "--wait-apps": "W", "--fresh": "F"}


def _shown_not_run(ctx: Analysis, word: _Word) -> bool:
    """A web page, or a folder named as one (`.`, `src/`) that is no application's bundle: `x.app/`,
    or `.` inside one, starts the application as `x.app` does."""
    value = word.literal
    if value is None or _WEB_PAGE.match(value) or _DOCUMENT.search(value):
        return value is not None
    if value not in (".", "..") and not value.endswith("/"):
        return False
    last = posixpath.normpath(posixpath.join(ctx.cwd or "", value)).rsplit("/", 1)[-1]
    return "." not in last.lstrip(".")


def cmd_open(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """macOS's open: LaunchServices starts the application for what it opens (`x.command` runs in
    Terminal, `x.app` starts, `-a APP`, `-b ID`); revealing in the Finder (`-R`), a folder and a web
    page are shown, not run. (Where `open` is Linux's openvt, it starts a program on another console.)"""
    may_write(ctx, args)
    letters: set[str] = set()
    operands: list[_Word] = []
    other = False  # an option that names the application, or one only known when it runs
    k = 0
    while k < len(args):
        v = args[k].value
        if v is not None and v.startswith("--"):
            letters.add(_OPEN_QUIET_LONG.get(v, "?"))
        elif v == "-u" and k + 1 < len(args):  # `-u URL`
            operands.append(args[k + 1])
            k += 1
        elif v is not None and v.startswith("-") and len(v) > 1:
            letters |= set(v[1:])
        else:
            operands.append(args[k])
            other = other or v is None
        k += 1
    other = other or not letters <= _OPEN_QUIET
    if not other and ("R" in letters or all(_shown_not_run(ctx, w) for w in operands)):
        ctx.as_unknown_program(name, args, depth, noted=False)
    else:
        hands_off(ctx, name)
        ctx.may_run(args, depth)


_OPENER_VALUES = frozenset({"--working-directory", "--launch"})


def cmd_opener(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """xdg-open, `gio open`, exo-open, `kioclient exec`, kde-open: the desktop opens each with the
    program it names for it, which may be the one instance of an application already running, or one
    D-Bus starts: outside the container. `exo-open --launch TYPE` starts the kind of program named
    (a terminal running its words). A folder or a web page is shown, not run."""
    reads_sub = name == "gio" or name.startswith(("kioclient", "kfmclient"))
    sub, rest = subcommand(ctx, name, args, frozenset()) if reads_sub else ("", args)
    if name == "gio" and sub == "launch":
        cmd_desktop_launcher(ctx, "gio launch", rest, stdin, bulk, depth)
        return
    may_write(ctx, args)
    words, what = args, name
    if reads_sub:
        if sub is not None and sub not in ("open", "exec", "openURL", "openProfile"):
            ctx.as_unknown_program(name, args, depth)
            return
        words, what = rest, f"{name} {sub or ''}".strip()
    operands = _operands(words, _OPENER_VALUES)
    if all(_shown_not_run(ctx, w) for w in operands) and all(a.value is not None for a in words):
        ctx.as_unknown_program(name, args, depth)
    else:
        hands_off(ctx, what)
        ctx.may_run(words, depth)


_DEX_VALUES = frozenset({"-e", "--environment", "-s", "--search-paths", "-t", "--target-directory", "--term"})
_DEX_NOT_RUN = frozenset({"-a", "--autostart", "-d", "--dry-run", "-c", "--create", "-h", "--help", "-V"})
_APPLICATIONS = (".local/share/applications", "/usr/local/share/applications", "/usr/share/applications")


def cmd_desktop_launcher(
    ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int
) -> None:
    """gtk-launch, dex, `gio launch`: start the program of a desktop entry (its Exec= line), or have
    the one instance of an application already running, or D-Bus, start it (DBusActivatable=true):
    held, and the Exec= line judged where the entry can be read (red team: `gio launch x.desktop`
    ran its Exec= line unjudged)."""
    if name == "dex" and any(a.value in _DEX_NOT_RUN for a in args):
        may_write(ctx, args)
        ctx.as_unknown_program(name, args, depth)  # autostart entries, a dry run, a new entry: as before
        return
    operands = _operands(args, _DEX_VALUES if name == "dex" else frozenset())
    hands_off(ctx, name)
    entries = operands if name == "dex" else operands[:1]  # gio launch ENTRY FILE...; gtk-launch ID URI...
    read = [] if name == "gtk-launch" else entries  # gtk-launch names an application, not a file
    may_write(ctx, [a for a in args if not any(a is e for e in read)])
    for entry in entries:
        found = _installed_entry(ctx, entry) if name == "gtk-launch" else entry
        if found is not None:
            _judge_exec_lines(ctx, name, found)


def _installed_entry(ctx: Analysis, app: _Word) -> _Word | None:
    """The desktop entry of an application's id (`firefox`, `firefox.desktop`), where the desktop
    looks first; None when none is found (the launch is held all the same)."""
    if app.value is None:
        return None
    file = app.value if app.value.endswith(".desktop") else f"{app.value}.desktop"
    for folder in _APPLICATIONS:
        path = posixpath.join(ctx.home, folder) + "/" + file
        if os.path.isfile(path):
            return _Word(path, path, path)
    return None


def _judge_exec_lines(ctx: Analysis, name: str, entry: _Word) -> None:
    """Each Exec= line of a desktop entry, judged as the command it is: its field codes (`%f`, `%U`)
    are the files it is given, `%%` a percent sign. One that cannot be read is held (script_text)."""
    found = script_text(ctx, name, entry)
    for line in found[1].splitlines() if found is not None else ():
        key, equals, value = line.partition("=")
        if equals and key.strip() == "Exec":
            ctx.sub_script(re.sub(r"%[fFuUdDnNickvm]", "", value).replace("%%", "%"), f"{name} Exec")


# The desktop's settings (GSettings, in dconf's database `~/.config/dconf/user`): a custom key binding's
# command, the X settings' `Gtk/Modules` that loads a library into every GTK program. Cowork Terminal's
# container hides the session bus, so writes fail there; where none runs, dconf's service writes the
# file for them, noted so that a person is asked (names_protected; red team 13, 2026-12-06). Reads
# are safe; `dconf compile` writes the file it names; `dconf update` the system's databases.
_DCONF_WRITES = frozenset({"write", "reset", "load"})
_DCONF_READS = frozenset({"read", "list", "dump", "watch", "help", "blame", "--help", "--version"})
_GSETTINGS_WRITES = frozenset({"set", "reset", "reset-recursively"})
_GSETTINGS_READS = frozenset({"get", "monitor", "writable", "range", "describe", "list-schemas", "help",
                              "list-relocatable-schemas", "list-keys", "list-children", "list-recursively",
                              "--help", "--version", "-h"})  # fmt: skip


def cmd_dconf(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`dconf` and `gsettings`: writes change the user's desktop settings (held where no container
    hides the session bus), reads are safe."""
    sub, rest = subcommand(ctx, name, args, frozenset({"--schemadir"}))
    if not sub:  # None: an expansion (held); "": options alone, `gsettings --version`, `dconf`: help
        return
    reads, writes = (_GSETTINGS_READS, _GSETTINGS_WRITES) if name == "gsettings" else (_DCONF_READS, _DCONF_WRITES)
    if sub in reads:
        return
    if name == "dconf" and sub == "compile" and rest:  # `dconf compile OUTPUT KEYFILEDIR`: a file of its own
        ctx.add(M, "writes to {source}", source=_snip(rest[0].source))
        ctx.note_written(rest[0], writes=True)
        return
    ctx.add(M, "{name} {sub}: changes your desktop's settings, which can name programs it starts", name=name, sub=sub)
    if sub in writes:
        config = os.environ.get("XDG_CONFIG_HOME", "")
        for folder in dict.fromkeys([f"{ctx.home}/.config", *([config] if config.startswith("/") else [])]):
            ctx.note_written(_Word(None, "~/.config/dconf/user", f"{folder}/dconf/user"))
    elif name == "dconf" and sub == "update":
        ctx.note_written(_Word(None, "/etc/dconf/db", "/etc/dconf/db/*", glob=True))


# Programs a container asks to run a command outside every container: flatpak-spawn through the
# session bus's Flatpak portal (held though that bus is hidden in Cowork Terminal's container:
# Flatpak may reach it otherwise), host-spawn and distrobox-host-exec through the host's.
_HOST_SPAWN_VALUES = frozenset({"-cwd", "-env"})  # host-spawn's; flatpak-spawn's take theirs after `=`


def cmd_host_spawn(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`flatpak-spawn --host CMD`, `host-spawn CMD`, `distrobox-host-exec CMD`: held, and CMD judged."""
    may_write(ctx, args)
    i = 0
    while i < len(args) and (args[i].value or "").startswith("-") and args[i].value != "--":
        i += 2 if args[i].value in _HOST_SPAWN_VALUES else 1
    if i < len(args) and args[i].value == "--":
        i += 1
    if [a.value for a in args] in (["--help"], ["-h"], ["--version"], ["-V"]):
        ctx.as_unknown_program(name, args, depth, noted=False)
        return
    hands_off(ctx, name)
    if args[i:]:
        ctx.inner(args[i:], stdin, bulk, depth)
