"""Commands that ask another service to start a program later or elsewhere: systemd, D-Bus, cron,
at, launchd, the Windows task scheduler, ssh to this same machine, daemons that run programs (pm2,
watchman, incron, supervisord, a Jupyter kernel, GnuPG's agent), Homebrew's and Shortcuts' (issue 21).

What they start is not a child of the command, so Cowork Terminal (and its container) can neither
see, pause nor stop it: each is held, in plain words. Read-only uses (listing jobs) stay safe, and
what the scheduled command would run is still judged where it is known.
"""

from __future__ import annotations

import json
import re

from app.core.i18n import N_

from .danger import Danger
from .findings import D, M, _snip
from .options import _long_flags, _operands, _short_flags, _split_options, options_end, subcommand, windows_switch
from .packages import cmd_package_manager
from .rule import Analysis
from .stdin import _Stdin
from .tables import _names
from .words import _Word

HANDOFF_WORDS = N_("Asks the system to start a program later or elsewhere, outside Cowork Terminal's watch")
_LAUNCHCTL_READ = _names(
    "list print print-cache print-disabled blame dumpstate help version getenv managerpid manageruid managername "
    "error hostinfo resolveport"
) | {""}


def hands_off(ctx: Analysis, what: str) -> None:
    """The finding every command of this module gives when it would start a program out of our sight."""
    ctx.add(D, "{what}: starts a program outside Cowork Terminal's watch", HANDOFF_WORDS, what=what,
            danger=Danger.OUTSIDE_WATCH)  # fmt: skip


def may_write(ctx: Analysis, args: list[_Word]) -> None:
    """A program no rule knew may write any file its words name (tables._MAY_WRITE): still noted so,
    for the protected set's checks, by the rules that now judge such programs."""
    for a in args:
        ctx.note_written(a)


def cmd_hands_off(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """Programs whose every use sets what a service starts: dbus-update-activation-environment
    gives D-Bus-started services and the user's systemd units the variables it names (LD_PRELOAD)."""
    may_write(ctx, args)
    hands_off(ctx, name)
    ctx.may_run(args, depth)


def cmd_systemd_run(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    hands_off(ctx, "systemd-run")
    values = _names("-u --unit -p --property -d --description --slice -E --setenv --uid --gid "
                    "--on-calendar --on-active --on-boot --on-startup --on-unit-active --working-directory -M "
                    "--machine -H --host --nice")  # fmt: skip
    _, i = _split_options(args, values)
    ctx.inner(args[i:], stdin, bulk, depth)  # what it starts is judged too


def bus_address_runs(ctx: Analysis, name: str, args: list[_Word]) -> None:
    """`--address unixexec:path=PROG,...` has sd-bus (busctl) or libdbus (dbus-monitor) start PROG to
    reach the bus, whatever the subcommand (a review, 2026-12-05: `busctl --address=unixexec:path=/bin/rm,
    argv1=-rf,... list` deleted a folder, judged safe); as the variables' address is (shells.py)."""
    for j, a in enumerate(args):
        value = a.value if a.value is not None else a.pattern
        if value == "--":
            return
        given: str | None
        if value.startswith("--address="):
            given = a.value.split("=", 1)[1] if a.value is not None else None
        elif value == "--address" and j + 1 < len(args):
            given = args[j + 1].value
        else:
            continue
        if given is None or "unixexec" in given.lower():
            ctx.add(D, "cannot tell what runs: {name} --address names a program to run as the message bus",
                    name=name)  # fmt: skip
            return


def cmd_dbus_monitor(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """It only watches the bus, but its address may name a program to start (bus_address_runs)."""
    bus_address_runs(ctx, name, args)
    ctx.as_unknown_program(name, args, depth, noted=False)


def cmd_busctl(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """A D-Bus call may ask any service (systemd, a session service) to start something; listing is safe."""
    bus_address_runs(ctx, name, args)
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


def cmd_brew(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """Homebrew, a package manager; `brew services start|run|restart` has launchd (or systemd) start
    the service, outside the container."""
    cmd_package_manager(ctx, name, args, stdin, bulk, depth)
    words = [a.value for a in _operands(args, frozenset({"--file", "--sudo-service-user"}))][:2]
    if words[:1] == ["services"] and len(words) == 2 and words[1] in (None, "start", "run", "restart"):
        hands_off(ctx, f"{name} services {words[1] or ''}".strip())


def cmd_shortcuts(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """macOS's `shortcuts run NAME`: the Shortcuts service runs it (a shortcut may run a shell script)."""
    may_write(ctx, args)
    sub = next((a.value for a in _operands(args, frozenset({"-i", "--input-path", "-o", "--output-path"}))), "")
    if sub is None or sub == "run":
        hands_off(ctx, f"{name} run")
    ctx.as_unknown_program(name, args, depth, noted=False)


_PM2_STARTS = frozenset({"start", "restart", "reload", "startOrRestart", "startOrReload", "startOrGracefulReload",
                         "gracefulReload", "resurrect", "startup", "scale", "serve", "expose", "trigger", "install",
                         "module:install", "update", "updatePM2"})  # fmt: skip
# pm2's options that take a value; not --watch-delay: `--watch`, a flag, would be read as it
_PM2_VALUES = frozenset({"--name", "-n", "-i", "--instances", "--interpreter", "--interpreter-args", "--node-args",
                         "-o", "--output", "-e", "--error", "-l", "--log", "--cwd", "--max-memory-restart", "-c",
                         "--cron", "--cron-restart", "--env", "--namespace", "--log-date-format", "--restart-delay",
                         "--exp-backoff-restart-delay", "--kill-timeout", "--listen-timeout", "--max-restarts", "-p",
                         "--pid", "--log-type", "--ignore-watch", "--user", "-u", "--uid", "--gid",
                         "--filter-env", "--instance-var", "--min-uptime", "--only"})  # fmt: skip
_PM2_SCRIPT = re.compile(r"\.(?:[cm]?js|json|ya?ml|ts|py)$")  # a file pm2 runs with an interpreter: not read here


def cmd_pm2(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """pm2's daemon, which may be the user's, outside the container, starts and restarts the programs
    it is given (and those of its saved list): held; a command it is given to start is judged."""
    may_write(ctx, args)
    sub, rest = subcommand(ctx, name, args, _PM2_VALUES)
    if sub is not None and sub not in _PM2_STARTS:
        ctx.as_unknown_program(name, args, depth, noted=False)
        return
    hands_off(ctx, f"{name} {_snip(sub or '')}".strip())
    end = options_end(rest)
    script = next(iter(_operands(rest[:end], _PM2_VALUES)), None) if sub == "start" else None
    if script is None or _PM2_SCRIPT.search(script.value or ""):
        ctx.may_run(rest, depth)
    elif script.literal is not None and len(script.literal.split()) > 1:  # `pm2 start "npm run dev"`: bash runs it
        ctx.sub_script(script.literal, f"{name} start")
    else:  # a program, and what follows `--`: its arguments
        ctx.inner([script, *rest[end + 1 :]], None, bulk, depth)


_WATCHMAN_VALUES = frozenset({"-U", "--sockname", "-o", "--logfile", "--pidfile", "--statefile", "--server-encoding",
                              "--output-encoding", "--named-pipe-path", "--unix-listener-path"})  # fmt: skip


def cmd_watchman(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """A trigger has the watchman server (the user's, outside the container) run its command each
    time files change: held, and its command (after the second `--`) judged. `-j` reads the request
    from the input: a trigger there is held too."""
    may_write(ctx, args)
    sub, rest = subcommand(ctx, name, args, _WATCHMAN_VALUES)
    typed = any(o.value in ("-j", "--json-command") for o in args[: len(args) - len(rest)])  # before the rest
    if sub is None or sub == "trigger":
        hands_off(ctx, f"{name} trigger")
        end = next((k for k, a in enumerate(rest) if a.value == "--"), None)
        if end is not None:
            ctx.inner(rest[end + 1 :], None, bulk, depth)
        else:
            ctx.may_run(rest, depth)
    elif typed and stdin is not None and (stdin.kind != "text" or "trigger" in stdin.text):
        hands_off(ctx, f"{name} -j")
        command = _json_trigger_command(stdin.text) if stdin.kind == "text" else None
        if command:
            ctx.inner([_Word(c, c, c) for c in command], None, bulk, depth)
    else:
        ctx.as_unknown_program(name, args, depth, noted=False)


def _json_trigger_command(text: str) -> list[str] | None:
    """The command of `["trigger", ROOT, {"command": [...]}]`, watchman's request as JSON."""
    try:
        request = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested past Python's stack
        return None
    spec = request[2] if isinstance(request, list) and len(request) > 2 else None
    command = spec.get("command") if isinstance(spec, dict) else None
    return command if isinstance(command, list) and all(isinstance(c, str) for c in command) else None


def cmd_jupyter(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`--existing` connects to a kernel already running (a notebook's, the user's, outside the
    container): `jupyter run` runs its file there, `console` and `qtconsole` what is typed."""
    may_write(ctx, args)
    if any(a.value is not None and a.value.partition("=")[0] == "--existing" for a in args):
        hands_off(ctx, f"{name} --existing")
    ctx.as_unknown_program(name, args, depth, noted=False)


_INCRONTAB_LOOKS = {"--list": "l", "--remove": "r", "--types": "t", "--reload": "d"}


def cmd_incrontab(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """incrond runs a table's commands when files change, as cron does its jobs: installing or
    editing one is held, and the commands of one typed in (`incrontab -`) judged."""
    may_write(ctx, args)
    given = _short_flags(args) | {_INCRONTAB_LOOKS.get(flag, "") for flag in _long_flags(args)}
    if given & {"l", "r", "t", "d"}:
        ctx.as_unknown_program(name, args, depth, noted=False)
        return
    hands_off(ctx, name)
    if stdin is not None and stdin.kind == "text":
        for line in stdin.text.splitlines():  # PATH MASK COMMAND
            fields = line.split(None, 2)
            if len(fields) == 3 and not fields[0].startswith("#"):
                ctx.sub_script(fields[2], name)


_SUPERVISOR_VALUES = frozenset({"-c", "--configuration", "-s", "--serverurl", "-u", "--username", "-p", "--password",
                                "-r", "--history-file"})  # fmt: skip
# supervisorctl's commands that start programs (update and add start new ones, reload restarts all)
# or attach to one (fg: what it reads is typed there); `supervisorctl` alone reads its commands.
_SUPERVISOR_STARTS = frozenset({"start", "restart", "update", "add", "reload", "fg"})


def cmd_supervisorctl(
    ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int
) -> None:
    """supervisord, the user's or the system's, outside the container, starts the programs of its
    configuration when told to."""
    may_write(ctx, args)
    sub, _ = subcommand(ctx, name, args, _SUPERVISOR_VALUES)
    if sub is None or sub in _SUPERVISOR_STARTS or (sub == "" and stdin is not None):
        hands_off(ctx, f"{name} {_snip(sub or '')}".strip())
    ctx.as_unknown_program(name, args, depth, noted=False)


# gpg-connect-agent's options that take a value
_AGENT_VALUES = frozenset({"-S", "--raw-socket", "-T", "--tcp-socket", "-r", "--run", "--homedir", "--agent-program",
                           "--dirmngr-program", "--keyboxd-program", "--chuid"})  # fmt: skip
# What gpg-connect-agent may send and still only read: its own `/bye` and `/echo` (case matters: `/BYE` is
# unknown to it, and it reads on), and the agent's BYE, NOP, HELP, GETINFO (any case).
_AGENT_READS = re.compile(r"\s*(?:/bye|/echo(?:\s.*)?|(?i:bye|nop|help|getinfo(?:\s+[\w-]+)?))\s*")


def _long_option(option: str, names: tuple[str, ...]) -> bool:
    """Whether `option` is one of `names` by any prefix past `--x`, as GnuPG's parser takes it (`--rel`)."""
    given = option.split("=", 1)[0]
    return given.startswith("--") and len(given) > 3 and any(n.startswith(given) for n in names)


def cmd_gpg_connect_agent(
    ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int
) -> None:
    """The user's gpg-agent (or dirmngr), a daemon outside the container, does what it is sent:
    `reloadagent` has it read a gpg-agent.conf whose `pinentry-program` it starts at the next
    passphrase asked (red team, 2026-12-05: it ran outside, and lived on past a pause). Held unless
    each command, given as a word or, without a `/bye` word, read from the input, only reads; and
    with `-E` (its words are a server's command line) or `-r FILE` (commands from a file)."""
    may_write(ctx, args)
    options, _ = _split_options(args, _AGENT_VALUES)
    runs = any(
        _long_option(v, ("--exec", "--run")) if v.startswith("--") else bool({"E", "r"} & set(v[1:]))
        for v in (o.value or "" for o in options)
    )
    lines: list[str | None] = [c.value for c in _operands(args, _AGENT_VALUES)]  # an expansion: None
    if "/bye" not in lines and stdin is not None:  # it reads its input after its words
        lines += stdin.text.splitlines() if stdin.kind == "text" else [None]
    if runs or not all(line is not None and _AGENT_READS.fullmatch(line) for line in lines):
        hands_off(ctx, name)
    ctx.as_unknown_program(name, args, depth, noted=False)


# gpgconf's commands that start a daemon outside the container or have it read its settings again
# (`--reload`, `--launch`), or that rewrite those settings (`--change-options`, `--apply-*`); not
# `--kill`, which only ends one.
_GPGCONF_STARTS = ("--reload", "--launch", "--change-options", "--apply-defaults", "--apply-profile")


def cmd_gpgconf(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """gpgconf manages GnuPG's daemons: held where it may start one or change what one starts."""
    may_write(ctx, args)
    for a in args:
        value = a.value
        if value is None or _long_option(value, _GPGCONF_STARTS) or (value[:1] == "-" != value[1:2] and "R" in value):
            hands_off(ctx, f"{name} {_snip(a.source)}")  # an expansion may be any of them
            break
    ctx.as_unknown_program(name, args, depth, noted=False)
