"""Processes, services and the machine itself: kill, systemctl, disks, cron."""

from __future__ import annotations

import re

from .danger import Danger
from .findings import D, M
from .options import _operands
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


def cmd_dd(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    ctx.add(D, "{name}: writes raw data, can overwrite disks", name=name, danger=Danger.LOSES_FILES)


def cmd_diskutil(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
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
    ctx.add(D, "{name}: can erase or repartition disks", name=name, danger=Danger.LOSES_FILES)


def cmd_zpool(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    sub = next((a.value for a in _operands(args)), "") or ""
    if sub in ("destroy", "labelclear", "remove", "detach", "offline", "split"):
        ctx.add(D, "{name} {sub}: destroys storage", name=name, sub=sub, danger=Danger.LOSES_FILES)
    elif sub not in ("list", "status", "get", "iostat", "history", "events", ""):
        ctx.add(M, "{name} {sub}: changes storage", name=name, sub=sub)


def cmd_disk_tool(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    disk_tool(ctx, name, args)


def cmd_mkfs(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    ctx.add(D, "{name}: creates a filesystem, erasing the device", name=name, danger=Danger.LOSES_FILES)


def cmd_power(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    ctx.add(D, "{name}: shuts down or restarts the machine", name=name)
