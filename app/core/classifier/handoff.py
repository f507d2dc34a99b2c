"""Commands that ask another service to start a program later or elsewhere: systemd, D-Bus, cron,
at, launchd, the Windows task scheduler, ssh to this same machine (issue 21).

What they start is not a child of the command, so Cowork Terminal (and its container) can neither
see, pause nor stop it: each is held, in plain words. Read-only uses (listing jobs) stay safe, and
what the scheduled command would run is still judged where it is known.
"""

from __future__ import annotations

import ipaddress
import re
import socket

from app.core.i18n import N_

from .danger import Danger
from .findings import D, M, _snip
from .options import _operands, _short_flags, _split_options, windows_switch
from .rule import Analysis
from .stdin import _Stdin
from .tables import _names
from .words import _Word

HANDOFF_WORDS = N_("Asks the system to start a program later or elsewhere, outside Cowork Terminal's watch")
_LAUNCHCTL_READ = _names(
    "list print print-cache print-disabled blame dumpstate help version getenv managerpid manageruid managername "
    "error hostinfo resolveport"
) | {""}
_LOCAL_HOSTS = re.compile(
    r"^(?:[^@]*@)?(?:localhost(?:\.localdomain)?|127(?:\.\d{1,3}){3}|::1|\[::1\]|0\.0\.0\.0|0)$", re.I
)


def hands_off(ctx: Analysis, what: str) -> None:
    """The finding every command of this module gives when it would start a program out of our sight."""
    ctx.add(D, "{what}: starts a program outside Cowork Terminal's watch", HANDOFF_WORDS, what=what,
            danger=Danger.OUTSIDE_WATCH)  # fmt: skip


def cmd_systemd_run(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    hands_off(ctx, "systemd-run")
    values = _names("-u --unit -p --property -d --description --slice -E --setenv --uid --gid "
                    "--on-calendar --on-active --on-boot --on-startup --on-unit-active --working-directory -M "
                    "--machine -H --host --nice")  # fmt: skip
    _, i = _split_options(args, values)
    ctx.inner(args[i:], stdin, bulk, depth)  # what it starts is judged too


def cmd_busctl(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """A D-Bus call may ask any service (systemd, a session service) to start something; listing is safe."""
    values = frozenset({"-H", "--host", "-M", "--machine", "--address", "--match", "--size", "--timeout",
                        "--destination", "--json", "--verbose"})  # fmt: skip
    sub = next((a.value for a in _operands(args, values)), "list")
    if sub in ("list", "status", "monitor", "capture", "tree", "introspect", "get-property", "help", "--version"):
        return
    hands_off(ctx, f"{name} {_snip(sub or '')}")


def cmd_gdbus(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    sub = next((a.value for a in args), "")
    if sub in ("introspect", "monitor", "help", "wait"):
        return
    hands_off(ctx, f"{name} {_snip(sub or '')}")


def cmd_dbus_send(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """Every dbus-send sends a message: a method call or a signal, to anything on the bus."""
    hands_off(ctx, name)


def cmd_crontab(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    flags = _short_flags(args)
    if "r" in flags:
        ctx.add(D, "crontab -r: removes all your scheduled jobs")
        return
    if "l" in flags:
        return
    hands_off(ctx, "crontab")
    reads_input = not _operands(args, frozenset({"-u"})) or [a.value for a in _operands(args)] == ["-"]
    if reads_input and stdin is not None and stdin.kind == "text":
        for line in stdin.text.splitlines():  # a job runs later: judge its command now
            fields = line.split(None, 1 if line.lstrip().startswith("@") else 5)
            if fields and not fields[0].startswith("#") and "=" not in fields[0]:
                ctx.sub_script(fields[-1], "crontab")


def cmd_at(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """at and batch run the commands on their input later: held, and those commands judged now."""
    if name == "atq" or {"l", "c"} & _short_flags(args):
        return
    if name == "atrm" or {"r", "d"} & _short_flags(args):
        ctx.add(M, "{name}: changes scheduled jobs", name=name)
        return
    hands_off(ctx, name)
    if stdin is not None and stdin.kind == "text":
        ctx.sub_script(stdin.text, name)
    elif stdin is not None and stdin.kind in ("pipe", "unknown"):
        ctx.add(D, "cannot tell what runs: {name} schedules commands it reads from its input", name=name)


def cmd_launchctl(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    sub = (next((a.value for a in args), "") or "").casefold()
    if sub in _LAUNCHCTL_READ:
        return
    if sub in ("unload", "stop", "remove", "bootout", "disable", "kill"):
        ctx.add(M, "{name} {sub}: stops or removes services", name=name, sub=_snip(sub))
        return
    hands_off(ctx, f"{name} {_snip(sub)}")  # load, bootstrap, submit, start, kickstart, enable, asuser, setenv...


def cmd_schtasks(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`/create`, `/run`, `/change` hand a program to the task scheduler; Git Bash's `//create` is
    the same switch (red team, Windows: `schtasks //create ... //sc onlogon` was judged safe)."""
    values = {windows_switch(a.value) for a in args}
    if values & {"/create", "/run", "/change", "/xml"} or any(a.value is None for a in args):
        hands_off(ctx, name)
    elif values & {"/delete", "/end"}:
        ctx.add(M, "{name}: changes scheduled tasks", name=name)


def local_host(word: _Word) -> bool:
    """ssh to this same machine (localhost, 127.x, ::1, its own host name, with or without a user)."""
    if word.value is None:
        return False
    host = word.value.rsplit("@", 1)[-1].casefold().removeprefix("[").removesuffix("]").rstrip(".")
    own = socket.gethostname().casefold()
    return (
        bool(_LOCAL_HOSTS.match(word.value))
        or host in (own, own.split(".")[0], f"{own}.local", "localhost", "localhost.localdomain")
        or loopback(host)
    )


def loopback(host: str) -> bool:
    """An address of this machine in any spelling the system's resolver takes: 127.1, 0x7f000001,
    2130706433, 0, ::ffff:127.0.0.1 (red team, Windows: each passed as another machine)."""
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        try:  # inet_aton reads the short, hexadecimal and octal forms (127.1, 0x7f.1, 017700000001)
            address = ipaddress.ip_address(socket.inet_aton(host))
        except (OSError, ValueError):
            return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback or address.is_unspecified
