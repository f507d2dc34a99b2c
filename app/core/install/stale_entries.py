"""Entries that start an old copy of the app, pointed back at this one when the tray starts.

After a move (the .deb removed, the .tar.gz unpacked elsewhere, a venv rebuilt), the start-at-login
entry and Claude's configs may still name a program that no longer exists, or another copy of the
app: login then starts nothing, or the wrong copy, and Claude shows a failed server. The tray calls
`repair_stale_entries` from its first look: each such entry is rewritten to run this copy, keeping
the options the user gave it (`--headless`), with the usual backup, and each repair comes back as a
`Repair` whose `notice` tells the user. This copy's own entries as an older version wrote them
(without `-I`, issue 21) are brought up to date the same way. Entries of other programs under our
name are not ours to change.

Claude Code's entry is told, not rewritten: only its CLI writes its file, and the tray runs that
program only at the user's click (issue 21: `claude` lives in `~/.local/bin`, which commands can
write, so running it of the tray's own accord would run whatever a command put there).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from app.core.claude import config as cc
from app.core.claude import locations as cl
from app.core.errors import CoworkError
from app.core.i18n import _
from app.core.install import autostart
from app.core.install.installation import same_program
from app.core.paths import HOME_ENV
from app.core.self_command import app_argv

MISSING = "missing"  # the program the entry names does not exist
OTHER_COPY = "other copy"  # it exists, but is another copy of this app
ALTERED = "altered"  # this copy, with variables or arguments this app never writes (issue 21)
UPDATED = "updated"  # this copy, written by an older version: without what the app writes now (-I)


@dataclass(frozen=True)
class Repair:
    """One entry rewritten to run this copy, or (Claude Code's) found naming another and left to the user."""

    what: str  # "Start at login" (in the user's language), or the Claude client's name
    old_program: str
    new_program: str
    why: str  # MISSING, OTHER_COPY, ALTERED or UPDATED
    backup: str | None = None
    added: str = ""  # what was added to the entry (and the repair drops), as `autostart.added_to_command` names it
    left_to_user: bool = False  # Claude Code: not rewritten, the user connects it again (module docstring)

    @property
    def title(self) -> str:
        if self.left_to_user:
            return _("{what} starts another copy").format(what=self.what)
        return _("{what} updated").format(what=self.what)

    @property
    def notice(self) -> str:
        """The words the user reads: what it was, what it is now, where the old file went."""
        if self.left_to_user:
            if self.why == MISSING:
                text = _("{what} starts {old}, which no longer exists. Connect {what} again to start this copy, {new}.")
            else:
                text = _(
                    "{what} starts {old}, another copy of Cowork Terminal. "
                    "Connect {what} again to start this copy, {new}."
                )
            return text.format(what=self.what, old=self.old_program, new=self.new_program)
        if self.why == UPDATED:  # the same program, started as this version starts it: nothing else to say
            text = self.title + "."
            if self.backup:
                text += " " + _("The previous file is kept as {path}.").format(path=self.backup)
            return text
        if self.why == ALTERED:
            text = _(
                "{what} started {old} with settings Cowork Terminal did not write ({added}); "
                "it now starts {new} without them."
            ).format(what=self.what, old=self.old_program, new=self.new_program, added=self.added)
        else:
            if self.why == MISSING:
                text = _("{what} started {old} (which no longer exists); it now starts this copy, {new}.")
            else:
                text = _("{what} started {old} (another copy of Cowork Terminal); it now starts this copy, {new}.")
            text = text.format(what=self.what, old=self.old_program, new=self.new_program)
            if self.added:  # what the rewrite dropped, named (a red team, 2026-12-06: it went unsaid)
                text += " " + _("Settings Cowork Terminal did not write were left out: {added}.").format(
                    added=self.added
                )
        if self.backup:  # a Claude config's repair: what was dropped is in that backup
            text += " " + _("The previous file is kept as {path}.").format(path=self.backup)
        return text


def staleness(program: str, this_program: str, exists: Callable[[str], bool]) -> str | None:
    """MISSING, OTHER_COPY, or None when `program` is this copy's."""
    if same_program(program, this_program):
        return None
    return OTHER_COPY if exists(program) else MISSING


def _serve_options(entry: Mapping[str, object]) -> list[str]:
    """The options after `serve` in one of our entries (`--headless`...), kept across a repair;
    arguments `serve` does not have are not carried over (config.added_to_entry)."""
    return cc.serve_options(entry)[0]


def repair_stale_entries(
    *,
    frozen: bool,
    executable: str,
    platform: str,
    environ: Mapping[str, str],
    home: Path,
    exists: Callable[[str], bool] = os.path.exists,
) -> list[Repair]:
    """Rewrite our start-at-login entry and our Claude entries that run a missing program or another
    copy of the app, so that they run `executable`; returns what was repaired.

    An entry that cannot be read or written is left as it was (the tray's menu shows its state).
    """
    repairs = []
    launch = autostart.launch_command(frozen, executable)
    try:
        command = autostart.read_command(platform, environ, home)
        added = autostart.read_added(launch, platform, environ, home)
        why = staleness(command[0], launch[0], exists) if command else None
        if command and added:  # an `env` prefix or extra arguments: rewritten whatever it runs
            autostart.enable(platform, environ, home, command=launch)
            repairs.append(Repair(_("Start at login"), command[0], launch[0], ALTERED, added=", ".join(added)))
        elif command and why:
            autostart.enable(platform, environ, home, command=launch)
            repairs.append(Repair(_("Start at login"), command[0], launch[0], why))
        elif command and autostart.lacks(command, launch):  # an older version's entry, without -I
            autostart.enable(platform, environ, home, command=launch)
            repairs.append(Repair(_("Start at login"), command[0], launch[0], UPDATED))
    except CoworkError:
        pass
    for location in cl.locate_clients(platform, environ, home, cl.real_exists):
        try:
            repair = _repair_client(location, frozen, executable, environ, exists)
        except CoworkError:
            continue
        if repair is not None:
            repairs.append(repair)
    return repairs


def _repair_client(
    location: cl.ClientLocation,
    frozen: bool,
    executable: str,
    environ: Mapping[str, str],
    exists: Callable[[str], bool],
) -> Repair | None:
    if location.config_path is None and location.cli_path is None:
        return None  # Claude Code without its CLI, which alone writes its file
    entry = cc.location_entry(location)
    if not isinstance(entry, Mapping) or not cc.is_app_entry(entry):
        return None
    program = app_argv(frozen, executable)[0]
    override = environ.get(HOME_ENV)
    data_home = str(Path(override).expanduser().absolute()) if override else None
    wanted = cc.build_entry(frozen, executable, _serve_options(entry), data_home)
    why = staleness(str(entry["command"]), program, exists)
    if why is None:
        why = _outdated(entry, wanted)
        if why is None or location.config_path is None:  # Claude Code: the menu says "needs an update"
            return None
        wanted = cc.build_entry(frozen, executable, _serve_options(entry), _entry_home(entry))
    elif location.config_path is None:  # Claude Code: its CLI only at the user's click (module docstring)
        return Repair(location.name, str(entry["command"]), program, why, left_to_user=True)
    # What the rewrite drops (an `env` setting, an argument `serve` does not have) is named to the
    # user, as the start-at-login repair names it: only a backup would still have it.
    added = ", ".join(cc.added_to_entry(entry, wanted))
    change = cc.connect_client(location, wanted, replace=True)
    return Repair(location.name, str(entry["command"]), program, why, change.backup, added)


def _entry_home(entry: Mapping[str, object]) -> str | None:
    """The data folder an entry names, kept when only its start is brought up to date."""
    env = entry.get("env")
    home = env.get(HOME_ENV) if isinstance(env, Mapping) else None
    return str(home) if home else None


def _outdated(entry: Mapping[str, object], wanted: Mapping[str, object]) -> str | None:
    """UPDATED for this copy's own entry as an older version wrote it (without -I), else None.

    Only an entry with nothing added: one with settings added is the user's to repair (the menu
    says so), and rewriting it here would silently drop what they see named there.
    """
    if cc.added_to_entry(entry, wanted) or not cc.launch_outdated(entry, wanted):
        return None
    return UPDATED
