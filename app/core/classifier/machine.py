"""Processes, services and the machine itself: kill, systemctl, disks, cron."""

from __future__ import annotations

import re

from .danger import Danger
from .findings import D, M
from .options import _operands, getopt
from .packages import expanded
from .rule import Analysis
from .stdin import _Stdin
from .tables import (
    _DISK_LISTING,
    _SYSTEMCTL_POWER,
    _SYSTEMCTL_SAFE,
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


def cmd_systemctl(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    sub = next((a.value for a in _operands(args)), None)
    if sub in _SYSTEMCTL_POWER:
        ctx.add(D, "systemctl {sub}: shuts down, restarts or suspends the machine", sub=sub)
    elif sub is None and not args:
        return
    elif sub not in _SYSTEMCTL_SAFE:
        ctx.add(M, "systemctl {sub}: changes services", sub=sub or "")


def cmd_loginctl(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    sub = next((a.value for a in _operands(args)), "") or ""
    if sub in _SYSTEMCTL_POWER or sub.startswith(("terminate", "kill")):
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
