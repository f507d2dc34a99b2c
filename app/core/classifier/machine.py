"""Processes, services and the machine itself: kill, systemctl, disks, cron."""

from __future__ import annotations

import re

from .findings import D, M
from .options import _operands, _short_flags
from .stdin import _Stdin
from .tables import (
    _DISK_LISTING,
    _SYSTEMCTL_POWER,
    _SYSTEMCTL_SAFE,
)
from .words import _Word


class _MachineRules:
    """Rules for what stops processes, powers off, erases disks or schedules jobs.

    Mixed into _Analyzer: `self` is the analyzer, which provides add, argv, inner, sub_script, code_words,
    wrapper, guard_parents and the rest. Each `cmd_<name>` handles a program, found by name in argv.
    """

    def cmd_kill(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
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
                self.add(D, "kill -1: kills every process you own")
            elif v is not None and re.fullmatch(r"-\d+|0|1", v):
                self.add(D, "kill {v}: kills a whole process group or init", v=v)
        self.add(M, "kill: stops processes")

    def cmd_killall(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.add(D, "{name}: kills every process with that name", name=name)

    cmd_killall5 = cmd_killall

    def cmd_pkill(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        selectors = {"-u", "-U", "-G", "-g", "-s", "-P", "-t", "--uid", "--euid", "--group", "--pgroup",
                     "--session", "--parent", "--terminal"}  # fmt: skip
        values = frozenset(selectors | {"-F", "--pidfile", "--signal", "--ns", "--nslist"})
        used = {a.value for a in args} & selectors
        patterns = _operands(args, values)
        broad = [p for p in patterns if p.value is None or len(p.value.strip(".*^$")) < 3]
        if used or broad or not patterns:
            self.add(D, "{name}: kills many processes at once", name=name)
        self.add(M, "{name}: stops processes", name=name)

    def cmd_systemctl(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        sub = next((a.value for a in _operands(args)), None)
        if sub in _SYSTEMCTL_POWER:
            self.add(D, "systemctl {sub}: shuts down, restarts or suspends the machine", sub=sub)
        elif sub is None and not args:
            return
        elif sub not in _SYSTEMCTL_SAFE:
            self.add(M, "systemctl {sub}: changes services", sub=sub or "")

    def cmd_loginctl(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        sub = next((a.value for a in _operands(args)), "") or ""
        if sub in _SYSTEMCTL_POWER or sub.startswith(("terminate", "kill")):
            self.add(D, "loginctl {sub}: ends sessions or stops the machine", sub=sub)
        elif not sub.startswith(("list", "show", "session-status", "user-status", "seat-status")):
            self.add(M, "loginctl {sub}: changes sessions", sub=sub)

    def cmd_init(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        if any(a.value in ("0", "6", "1", "s", "S") for a in args):
            self.add(D, "{name}: changes the machine's run level (shutdown, reboot)", name=name)
        else:
            self.add(M, "{name}: talks to the init system", name=name)

    cmd_telinit = cmd_init

    def cmd_dd(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.add(D, "{name}: writes raw data, can overwrite disks", name=name)

    cmd_ddrescue = cmd_dcfldd = cmd_dc3dd = cmd_dd

    def cmd_diskutil(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        sub = (next((a.value for a in _operands(args)), "") or "").casefold()
        if sub in ("list", "info", "information", "activity", "listfilesystems", ""):
            return
        if re.match(r"(erase|partition|reformat|zero|secure|random|apfs|resize|merge|split|cs)", sub):
            self.add(D, "diskutil {sub}: can erase disks", sub=sub)
        else:
            self.add(M, "diskutil {sub}: changes disks or volumes", sub=sub)

    def disk_tool(self, name: str, args: list[_Word]) -> None:
        listing = _DISK_LISTING.get(name, set())
        values = [a.value for a in args]
        if any(v in listing for v in values) and all(v in listing or (v or "").startswith("/dev/") for v in values):
            return  # fdisk -l and the like only print the partition table
        self.add(D, "{name}: can erase or repartition disks", name=name)

    def cmd_zpool(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        sub = next((a.value for a in _operands(args)), "") or ""
        if sub in ("destroy", "labelclear", "remove", "detach", "offline", "split"):
            self.add(D, "{name} {sub}: destroys storage", name=name, sub=sub)
        elif sub not in ("list", "status", "get", "iostat", "history", "events", ""):
            self.add(M, "{name} {sub}: changes storage", name=name, sub=sub)

    cmd_zfs = cmd_zpool

    def cmd_crontab(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        flags = _short_flags(args)
        if "r" in flags:
            self.add(D, "crontab -r: removes all your scheduled jobs")
        elif "l" not in flags:
            self.add(M, "crontab: changes scheduled jobs")
            reads_input = not _operands(args, frozenset({"-u"})) or [a.value for a in _operands(args)] == ["-"]
            if reads_input and stdin is not None and stdin.kind == "text":
                for line in stdin.text.splitlines():  # a job runs later: judge its command now
                    fields = line.split(None, 1 if line.lstrip().startswith("@") else 5)
                    if fields and not fields[0].startswith("#") and "=" not in fields[0]:
                        self.sub_script(fields[-1], "crontab")
