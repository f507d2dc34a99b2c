"""`uninstall`: take everything of ours out of the user's session, and say what is left to do.

A plan first (what `--dry-run` prints and the confirmation window lists), then the same plan
carried out, in an order that leaves nothing half-done behind: the tray quits first (so it cannot
write anything back), then our entries leave every Claude config and Claude Code, start at login
goes off, the user's menu entry goes, the servers of this install stop, and only when asked the
data and logs are deleted. The program itself is the package manager's or the user's to remove:
the last line says how, for the way this copy was installed.

Only entries that run this app (any copy of it) are removed; an entry of another program under
our name is left alone and named. Config files are changed through `client_config` (a backup
first, everything else kept); Claude Code only through its `claude` CLI.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from app.core.claude import config as cc
from app.core.claude import locations as cl
from app.core.errors import CoworkError
from app.core.i18n import _, ngettext
from app.core.i18n.formats import format_number
from app.core.install import app_processes, autostart, menu_entry
from app.core.install.installation import Install, removal_hint
from app.core.paths import APP_NAME, HOME_ENV, AppPaths

# What the app itself writes into its data folder: only these are deleted by `--data`, so a
# COWORK_TERMINAL_HOME pointed at a folder that holds other things loses nothing else.
DATA_NAMES = ("journal.sqlite3", "journal.sqlite3-wal", "journal.sqlite3-shm", "locks", "logs")


@dataclass(frozen=True)
class ClientEntry:
    """Our entry in one client: what it runs now."""

    location: cl.ClientLocation
    entry: object


@dataclass(frozen=True)
class UninstallPlan:
    install: Install
    clients: tuple[ClientEntry, ...] = ()  # our entry goes from these
    left_alone: tuple[str, ...] = ()  # entries under our name that run another program
    manual: tuple[str, ...] = ()  # what only the user can do (each line says how)
    autostart: str | None = None  # where our start-at-login entry is removed, when there is one (on or off)
    menu_files: tuple[Path, ...] = ()  # the user's menu entry and icons (install-desktop-entry)
    tray_running: bool = False
    servers: tuple[int, ...] = ()  # pids of this install's live servers
    data: tuple[Path, ...] = ()  # what --data deletes: the app's own files and folders
    data_folders: tuple[Path, ...] = ()  # the folders that hold them (what stays without --data)
    delete_data: bool = False  # the user asked for the data to go

    def steps(self) -> list[str]:
        """What will go, one line each, in the order it goes."""
        lines = []
        if self.tray_running:
            lines.append(_("Quit the Cowork Terminal tray app"))
        for client in self.clients:
            where = client.location.config_path or _("its `claude` CLI")
            remove = _("Remove Cowork Terminal from {client} ({where})")
            lines.append(remove.format(client=client.location.name, where=where))
        if self.autostart:
            lines.append(_("Turn off Start at login ({where})").format(where=self.autostart))
        if self.menu_files:
            count = len(self.menu_files)
            lines.append(
                ngettext(
                    "Remove the menu entry and icons ({count} file)",
                    "Remove the menu entry and icons ({count} files)",
                    count,
                ).format(count=count)
            )
        if self.servers:
            lines.append(_("Stop {servers} of this install").format(servers=_servers(self.servers)))
        if self.delete_data:
            lines += [_("Delete {path}").format(path=path) for path in self.data]
        return lines

    def stays(self, *, in_window: bool = False) -> list[str]:
        """What stays, and why: said before and after, so nobody is surprised. The window has a
        checkbox for the data, the command line `--data`: each says its own way."""
        lines = [_("Kept: {what}").format(what=text) for text in self.left_alone]
        if not self.delete_data:
            for path in self.data_folders:
                if in_window:
                    kept = _("Kept: your command history and logs in {path}")
                else:
                    kept = _("Kept: your command history and logs in {path} (delete them with --data)")
                lines.append(kept.format(path=path))
        return lines


@dataclass
class UninstallReport:
    done: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


def _servers(pids: tuple[int, ...]) -> str:
    """ "the running server (pid 12)", "2 running servers (pid 12, 13)"."""
    return ngettext("the running server (pid {pids})", "{count} running servers (pid {pids})", len(pids)).format(
        count=len(pids), pids=", ".join(str(pid) for pid in pids)
    )


def _is_ours(entry: object) -> bool:
    return isinstance(entry, Mapping) and cc.is_app_entry(entry)


def _another_program(location: cl.ClientLocation, entry: object) -> str:
    return _("{client}'s {name} entry runs another program: {entry}").format(
        client=location.name, name=repr(cc.SERVER_NAME), entry=json.dumps(entry)
    )


def plan_uninstall(
    paths: AppPaths,
    install: Install,
    *,
    delete_data: bool,
    platform: str | None = None,
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> UninstallPlan:
    """Look at the machine and list what `run_uninstall` would do; changes nothing."""
    platform = sys.platform if platform is None else platform
    environ = os.environ if environ is None else environ
    home = Path.home() if home is None else home
    clients, left_alone, manual = [], [], []
    for location in cl.locate_clients(platform, environ, home, cl.real_exists):
        try:
            entry = cc.location_entry(location)
            if location.config_path is None and location.cli_path is None:  # Claude Code, its CLI not found
                if _is_ours(entry):
                    manual.append(
                        _(
                            "{client} still lists Cowork Terminal in {path}, and its `claude` command was not found: "
                            "run `claude mcp remove --scope user {name}`."
                        ).format(client=location.name, path=location.servers_file, name=cc.SERVER_NAME)
                    )
                continue
        except CoworkError as exc:
            manual.append(f"{location.name}: {exc}")
            continue
        if entry is None:
            continue
        if _is_ours(entry):
            clients.append(ClientEntry(location, entry))
        else:
            left_alone.append(_another_program(location, entry))
    try:  # switched off in place, it still starts the app where the desktop ignores that switch
        autostart_on = autostart.is_present(platform, environ, home)
    except CoworkError as exc:
        autostart_on = False
        manual.append(_("Start at login could not be read: {error}").format(error=exc))
    menu_files = tuple(menu_entry.menu_entry_files(environ, home)) if platform.startswith("linux") else ()
    data, kept = _data_to_delete(paths, environ)
    try:
        servers = tuple(app_processes.live_servers(paths, install.executable))
    except app_processes.ServersUnknown:  # the journal cannot be read (a newer version's), and not Linux
        servers = ()
        manual.append(
            _(
                "The servers of this install that run now could not be listed, as the activity log could "
                "not be read: quit Claude Desktop and Claude Code to stop them."
            )
        )
    return UninstallPlan(
        install=install,
        clients=tuple(clients),
        left_alone=tuple(left_alone),
        manual=tuple(manual),
        autostart=str(autostart.autostart_location(platform, environ, home)) if autostart_on else None,
        menu_files=menu_files,
        tray_running=app_processes.tray_running(paths),
        servers=servers,
        data=tuple(data),
        data_folders=tuple(kept),
        delete_data=delete_data,
    )


def _data_to_delete(paths: AppPaths, environ: Mapping[str, str]) -> tuple[list[Path], list[Path]]:
    """(what `--data` deletes, the folders that hold it). The platform's own data and log folders
    are ours alone and go whole; in a COWORK_TERMINAL_HOME only the names the app writes go, so a
    home pointed at a folder that holds other things loses nothing else."""
    folders = [f for f in (paths.data_dir, paths.log_dir) if f.is_dir()]
    folders = [f for f in folders if not any(other in f.parents for other in folders)]
    if not environ.get(HOME_ENV):
        return folders, folders
    entries = [paths.data_dir / name for name in DATA_NAMES if (paths.data_dir / name).exists()]
    if paths.log_dir.is_dir() and paths.data_dir not in paths.log_dir.parents:
        entries.append(paths.log_dir)
    return entries, folders


def run_uninstall(
    plan: UninstallPlan,
    paths: AppPaths,
    *,
    platform: str | None = None,
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> UninstallReport:
    """Carry out `plan`; one step's failure is reported and the others still run."""
    report = UninstallReport()

    def attempt(done: str, action: Callable[[], str | None]) -> None:
        """Run one step; `action` may return a few words to add to `done` (where the backup went)."""
        try:
            detail = action()
        except _LeftAlone as kept:
            report.done.append(str(kept))
            return
        except (CoworkError, OSError) as exc:
            report.failed.append(_("{step}: failed: {error}").format(step=done, error=exc))
            return
        report.done.append(f"{done} {detail}" if detail else done)

    if plan.tray_running:
        attempt(_("Quit the tray app"), lambda: _quit_tray(paths))
    for client in plan.clients:
        removed = _("Removed Cowork Terminal from {client}").format(client=client.location.name)
        attempt(removed, functools.partial(_disconnect, client.location))
    if plan.autostart:
        attempt(_("Turned off Start at login"), lambda: autostart.disable(platform, environ, home))
    for path in plan.menu_files:
        attempt(_("Removed {path}").format(path=path), functools.partial(path.unlink, missing_ok=True))
    if plan.servers:
        stopped = _("Stopped {servers}").format(servers=_servers(plan.servers))
        attempt(stopped, lambda: _stop_servers(plan, paths))
    deleted = plan.data if plan.delete_data else ()
    for path in deleted:
        attempt(_("Deleted {path}").format(path=path), functools.partial(_delete, path))
    for folder in {p.parent for p in deleted}:  # an app folder left empty goes too
        if folder.name.lower() == APP_NAME and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
    return report


def _quit_tray(paths: AppPaths) -> None:
    if not app_processes.stop_tray(paths):
        raise CoworkError(
            _("it did not quit within {seconds} s; quit it from its menu").format(
                seconds=format_number(app_processes.TRAY_QUIT_WAIT_S, None)
            )
        )


class _LeftAlone(CoworkError):
    """Our entry became another program's after the plan was made: it is left, and said so."""


def _disconnect(location: cl.ClientLocation) -> str | None:
    try:  # disconnect looks again, on the read it writes from: only this app's entry goes
        change = cc.disconnect_client(location, cc.this_app_entry())
    except cc.EntryConflictError as taken:
        raise _LeftAlone(_("Kept: {what}").format(what=_another_program(location, taken.entry))) from taken
    return _("(previous file kept as {path})").format(path=change.backup) if change.backup else None


def _stop_servers(plan: UninstallPlan, paths: AppPaths) -> None:
    """Signal only the planned servers that still are (the tray quit meanwhile, and the window may
    have waited long): a pid freed since must not be signalled, nor ever the tray's."""
    try:
        now = set(app_processes.live_servers(paths, plan.install.executable))
    except app_processes.ServersUnknown:
        now = set(plan.servers)
    app_processes.stop_processes([pid for pid in plan.servers if pid in now])


def _delete(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def closing_words(plan: UninstallPlan, report: UninstallReport | None = None, *, in_window: bool = False) -> list[str]:
    """What the user reads last: what stays, what is left for them to do, how to remove the program."""
    lines = plan.stays(in_window=in_window) + list(plan.manual)
    if plan.clients and any(c.location.config_path is not None for c in plan.clients):
        lines.append(_("Quit Claude Desktop and open it again: it reads its config only at start."))
    if report is not None and report.failed:
        lines.append(_("Some steps failed (see above): fix what they say and run `cowork-terminal uninstall` again."))
    lines.append(removal_hint(plan.install))
    return lines
