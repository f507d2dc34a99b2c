"""`status`, `pause`, `resume` and `log`: the journal from the command line."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from app.core import liveness
from app.core.channel.client import current_tray_state, request_change
from app.core.data_folder import FULL, DataFolderError
from app.core.errors import UsageError
from app.core.execution.output_files import OUTPUT_RETENTION_DAYS, outputs_size
from app.core.i18n import N_, _, ngettext
from app.core.i18n.formats import format_date_time, format_number, format_time
from app.core.journal import opening, pause_file
from app.core.journal.store import CommandRecord, Journal, Status
from app.core.paths import AppPaths, protected_paths
from app.core.visible_text import visible

FOLLOW_POLL_S = 0.25
PAUSED_NOTE = N_("Host access is PAUSED: new commands are refused.")


def register(subparsers: argparse._SubParsersAction) -> None:
    status = subparsers.add_parser("status", help=_("show whether host access is on, and the live servers"))
    status.add_argument("--json", action="store_true", help=_("print one JSON object"))
    status.set_defaults(handler=run_status)

    pause = subparsers.add_parser("pause", help=_("pause host access: refuse new commands, stop running ones"))
    pause.set_defaults(handler=lambda _args: set_pause(True))
    resume = subparsers.add_parser("resume", help=_("resume host access"))
    resume.set_defaults(handler=lambda _args: set_pause(False))

    stop = subparsers.add_parser("stop", help=_("stop a running command (its whole process tree)"))
    stop.add_argument("command_id", type=int, help=_("the number `log` shows after #"))
    stop.set_defaults(handler=run_stop)

    log = subparsers.add_parser("log", help=_("show the newest commands from the journal"))
    log.add_argument("--limit", type=int, default=20, metavar=_("N"), help=_("how many (default 20)"))
    log.add_argument("--follow", "-f", action="store_true", help=_("keep printing commands as they start and end"))
    log.add_argument("--json", action="store_true", help=_("one JSON object per line"))
    log.set_defaults(handler=run_log)


def set_pause(paused: bool) -> int:
    """Pause at once, from anywhere; resume only after the user's click in the app."""
    paths = AppPaths.from_environment()
    if paused:

        def without_tray(journal: Journal) -> str:
            # Also run after a tray that could not be verified paused: its write is not written again,
            # which that tray would report as another program's change.
            if not journal.is_paused():
                journal.set_paused(True)
            return _(PAUSED_NOTE)

        try:
            # Written here too whoever answered (a look-alike may pass the checks: red team 13).
            print(request_change(paths, "pause", without_tray=without_tray, apply_here_too=True))
        except DataFolderError as problem:
            if problem.kind != FULL:
                raise
            # No tray, and the journal cannot even be opened on a full disk: the pause file needs no
            # free space, and headless servers read it (Journal.is_paused).
            try:
                pause_file.write(paths.pause_file, True)
            except OSError:
                raise problem from None
            print(_("Note: {problem}").format(problem=problem.for_person()), file=sys.stderr)
            print(_(PAUSED_NOTE))
        return 0
    print(request_change(paths, "resume", without_tray=None, announce=print))
    return 0


def run_stop(args: argparse.Namespace) -> int:
    def without_tray(journal: Journal) -> str:
        if not journal.request_stop(args.command_id):
            raise UsageError(_("Command #{id} is not running (see `cowork-terminal log`).").format(id=args.command_id))
        return _("Asked the server running command #{id} to stop it.").format(id=args.command_id)

    # Not written here after the tray answered, as a pause is: the tray's record of whose stop it was
    # (the person's, or an agent's from inside a container) and of a held command's denial stands.
    print(request_change(AppPaths.from_environment(), "stop", without_tray=without_tray, id=args.command_id))
    return 0


def open_for_reading(paths: AppPaths | None = None) -> Journal:
    """The journal for `log` and `status`. In a data folder this process cannot write (a command's
    container binds it read-only) it is opened only to read, where opening it to write would fail."""
    paths = paths or AppPaths.from_environment()
    if paths.journal.exists() and not opening.can_write(paths.data_dir):
        return Journal.open(paths, read_only=True)
    return Journal.open(paths)


def run_status(args: argparse.Namespace) -> int:
    paths = AppPaths.from_environment()
    tray_state = current_tray_state(paths)
    try:
        journal = open_for_reading(paths)
    except DataFolderError:
        held = tray_state["paused"] if tray_state else pause_file.read(paths.pause_file)  # readable still
        if held is not None:
            print(_("Host access: PAUSED") if held else _("Host access: on"))
        raise
    with journal:
        servers = journal.servers()
        info: dict[str, Any] = {
            "paused": tray_state["paused"] if tray_state else journal.is_paused(),
            "tray_running": tray_state is not None or liveness.is_held(journal.paths.tray_lock),
            "journal": str(journal.path),
            "journal_bytes": journal.size_bytes(),
            "commands": journal.count_commands(),
            "outputs": str(journal.paths.outputs),
            **dict(zip(("output_files", "output_bytes"), outputs_size(journal.paths.outputs), strict=True)),
            "servers": [
                {
                    "pid": s.pid,
                    "client": s.client_label,
                    "headless": s.headless,
                    "started_at": s.started_at,
                    "commands": s.command_count,
                }
                for s in servers
            ],
        }
    if args.json:
        print(json.dumps(info))
        return 0
    print(_("Host access: PAUSED") if info["paused"] else _("Host access: on"))
    print(_("Tray app: running") if info["tray_running"] else _("Tray app: not running"))
    if journal.read_only:  # a command's container, or a folder that became read-only
        print(_("Data folder: {folder} is read-only here, so the journal was only read.").format(folder=paths.data_dir))
    commands = ngettext("{count} command", "{count} commands", info["commands"]).format(
        count=format_number(info["commands"])
    )
    size = _("{size} KiB").format(size=format_number(info["journal_bytes"] / 1024))
    print(_("Journal: {path} ({size}, {commands})").format(path=info["journal"], size=size, commands=commands))
    files = ngettext("{count} file", "{count} files", info["output_files"]).format(
        count=format_number(info["output_files"])
    )
    print(
        _("Whole outputs: {outputs} ({size} in {files}, each kept {days} days)").format(
            outputs=info["outputs"],  # the folder they are kept in
            size=_("{size} KiB").format(size=format_number(info["output_bytes"] / 1024)),
            files=files,
            days=OUTPUT_RETENTION_DAYS,
        )
    )
    if not servers:
        print(_("Live servers: none"))
    for s in info["servers"]:
        since = format_date_time(datetime.fromtimestamp(s["started_at"]))
        commands = ngettext("{count} command", "{count} commands", s["commands"]).format(
            count=format_number(s["commands"])
        )
        line = (
            _("Live server: pid {pid}, {client}, since {since}, {commands}")
            if not s["headless"]
            else _("Live server: pid {pid}, {client}, since {since}, {commands}, headless")
        )
        # The client names itself: a terminal must not receive escapes from it either
        print(line.format(pid=s["pid"], client=visible(str(s["client"]), keep=""), since=since, commands=commands))
    return 0


def format_record(record: CommandRecord, protected: Sequence[str] = ()) -> str:
    """One line of `log`, in the user's language, as the activity log's list says it (`--json` keeps
    the values for scripts)."""
    from app.ui.windows.log_model import STATUS_STYLES, format_duration, one_line, status_label  # Tk-free

    when = format_time(datetime.fromtimestamp(record.created_at))
    label = status_label(record)
    head = (
        label
        if record.exit_code is None
        else _("{status}, exit code {code}").format(status=label, code=record.exit_code)
    )
    took = "" if record.duration_ms is None else f" {format_duration(record.duration_ms)}"
    style = STATUS_STYLES.get(record.status)  # None: a status this version does not know, said as written
    said_in_label = style is not None and label != _(style.label)  # "■ Stopped by the user" says why
    if record.reason and record.status is not Status.FINISHED and not said_in_label:
        from app.core.journal.reasons import reason_for_person  # judges held commands: loaded when shown

        reason = f" ({reason_for_person(record, protected)})"
    else:
        reason = ""
    line = f"{when} #{record.id} {head}{took} [{record.cwd or '-'}] {one_line(record.command, 120)}{reason}"
    return visible(line, keep="")  # a terminal must never receive the command's own escape sequences


def emit(record: CommandRecord, as_json: bool, protected: Sequence[str] = ()) -> None:
    print(json.dumps(record.to_json()) if as_json else format_record(record, protected), flush=True)


def run_log(args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise UsageError(_("--limit must be at least 1"))
    with open_for_reading() as journal:
        protected = protected_paths(journal.paths)
        records = journal.recent_commands(limit=args.limit)
        for record in reversed(records):
            emit(record, args.json, protected)
        if args.follow:
            follow(journal, records, args.json, protected)
    return 0


def follow(journal: Journal, shown: list[CommandRecord], as_json: bool, protected: Sequence[str] = ()) -> None:
    """Print new commands when they start and again when they end; cheap while nothing changes."""
    last_id = max((r.id for r in shown), default=0)
    active = {r.id for r in shown if r.status.is_active}
    # None, not the version now: a command that ended after `shown` was read and before this line
    # would leave the version unchanged, and its end would never be shown.
    version: int | None = None
    while True:
        time.sleep(FOLLOW_POLL_S)
        current = journal.data_version()
        if current == version:
            continue
        version = current
        for record in journal.commands_by_id(sorted(active)):
            if not record.status.is_active:
                active.discard(record.id)
                emit(record, as_json, protected)
        for record in reversed(journal.recent_commands(after_id=last_id, limit=1000)):
            last_id = max(last_id, record.id)
            emit(record, as_json, protected)
            if record.status.is_active:
                active.add(record.id)
        sys.stdout.flush()
