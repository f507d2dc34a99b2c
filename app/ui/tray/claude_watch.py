"""The Claude apps as the tray sees them: their config files, our entry in each, and what changed there.

The tray reads every client's config at start and after its own changes, notices edits made
outside it (by `connect`, by hand, by a program) by the files' stamps, and tells the user when
our entry was turned headless or taken over. Connect, Disconnect and Check connection run here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path

from app.core.claude import config as cc
from app.core.claude import locations as cl
from app.core.errors import CoworkError
from app.core.i18n import _
from app.ui.connection_probe import check_notice, run_check
from app.ui.tray import menu
from app.ui.tray.platforms import Notifier
from app.ui.tray.tray_state import ClientView

log = logging.getLogger(__name__)

FileStamp = tuple[float, int]


class ClaudeWatch:
    """What the tray knows of each Claude client. Its fields are replaced whole, never mutated in
    place: the actions thread writes them, the monitor thread reads them."""

    def __init__(
        self,
        notifier: Notifier,
        *,
        has_menu: bool,
        check_command: Sequence[str],
        check_timeout_s: float,
        kick: Callable[[], None],
        live_clients: Callable[[], set[str]],
    ) -> None:
        self._notifier = notifier
        self._has_menu = has_menu
        self.check_command = list(check_command)  # each check appends `--client ID --json`
        self.check_timeout_s = check_timeout_s
        self._kick = kick
        self._live_clients = live_clients  # the Claude apps whose own server runs now
        self.clients: tuple[ClientView, ...] | None = None  # None until the first look
        self.locations: dict[str, cl.ClientLocation] = {}
        self.busy: str | None = None  # "Checking ...", shown in the menu while a check runs
        self._watched_files: dict[Path, FileStamp | None] = {}  # config file -> stamp when read
        self._refresh_asked_for: object = None  # the reading an outside edit already asked to refresh
        self._entries_seen: dict[str, cc.EntrySeen] = {}  # each client's entry as the tray last read it

    def not_connected(self) -> bool:
        """True once the clients were read and none of them has our entry."""
        return self.clients is not None and not any(c.has_entry for c in self.clients)

    def edited_outside(self) -> bool:
        """Whether a watched config file changed since it was read (once per reading): a Claude
        Desktop config or Claude Code's file edited outside the tray, by `connect`, by hand or by
        Claude Code, is news for the menu."""
        watched = self._watched_files
        if watched is self._refresh_asked_for:
            return False  # a refresh for exactly this reading is already queued
        if any(file_stamp(path) != stamp for path, stamp in watched.items()):
            self._refresh_asked_for = watched
            return True
        return False

    def refresh(self) -> None:
        """Look at every Claude client's config again: Claude Desktop's files and Claude Code's own
        file are read, never its CLI (which would start every server it lists)."""
        _platform, locations = cl.clients_here()
        # Stamped before reading: an edit that lands while we read still counts as news.
        files = [Path(f) for loc in locations for f in (loc.config_path, loc.servers_file) if f is not None]
        stamps = {file: file_stamp(file) for file in files}
        wanted = cc.this_app_entry()
        views = []
        seen = dict(self._entries_seen)
        news: list[tuple[str, cc.ClientStatus]] = []
        for location in locations:
            status = cc.client_status(location, wanted)
            views.append(ClientView(status.client_id, status.name, status.installed, status.state, status.problem))
            said = cc.entry_news(seen.get(status.client_id), status)
            if said is not None:
                news.append((said, status))
            seen[status.client_id] = cc.EntrySeen(status.state, cc.starts_headless(status.entry))
        self.locations = {loc.client_id: loc for loc in locations}
        self.clients = tuple(views)
        self._watched_files = stamps
        self._entries_seen = seen
        for said, status in news:  # once the menu shows the entry's state
            self._tell_entry_news(said, status)

    def _tell_entry_news(self, said: str, status: cc.ClientStatus) -> None:
        """An entry that now starts `serve --headless` (at start too), or ours taken over by another
        program while the tray watched: quitting this app would no longer stop that client's
        commands, or nothing of this app would see them, and a program may have written it."""
        client = status.name
        if said == cc.HEADLESS_ENTRY:
            title = _("{client} can run commands without this app").format(client=client)
            text = _(
                "Its settings start Cowork Terminal with --headless: while this app is not running, commands "
                "from {client} run with no pause switch or approvals."
            ).format(client=client)
            fix = _("Update its entry")
        else:
            program = status.entry.get("command") if isinstance(status.entry, dict) else None
            title = _("{client} no longer starts Cowork Terminal").format(client=client)
            text = _(
                "Its settings now start {program} under Cowork Terminal's name: this app does not see or "
                "control what that program runs."
            ).format(program=program or _("another program"))
            fix = _("Replace it with this app")
        if self._has_menu:
            undo = _(
                "If you did not do this, open Connect to Claude in this icon's menu, then {client} and {fix}."
            ).format(client=client, fix=fix)
        else:
            undo = _("If you did not do this, connect {client} again in the Welcome window.").format(client=client)
        self._notifier.notify(title, text + " " + undo)

    def location(self, client_id: str) -> cl.ClientLocation:
        """Where the client `client_id` keeps its config; a CoworkError for an unknown one."""
        location = self.locations.get(client_id)
        if location is None:
            raise CoworkError(_("unknown Claude client {client}").format(client=repr(client_id)))
        return location

    def change(self, action: str, client_id: str) -> None:
        """Connect (menu.CONNECT) or disconnect one client, then say what the user must do next."""
        location = self.location(client_id)
        wanted = cc.this_app_entry()
        try:
            if action == menu.CONNECT:
                # The item's text said "replace ..." for a stale or foreign entry: the click is consent.
                change = cc.connect_client(location, wanted, replace=True)
                done = [_("Connected {client}.").format(client=location.name)]
            else:
                change = cc.disconnect_client(location, wanted)
                done = [_("Disconnected {client}.").format(client=location.name)]
        finally:
            self.refresh()
        log.info("%s %s: %s", action, client_id, change.action)
        if cc.needs_restart(location, change):
            done.append(_("Quit and reopen {client}: it reads its config only at start.").format(client=location.name))
        if change.backup:
            done.append(_("The previous file is kept as {path}.").format(path=change.backup))
        self._notifier.notify(menu.APP_TITLE, " ".join(done))

    def check(self, client_id: str) -> None:
        """Check connection: run `cowork-terminal check --client ID --json` and tell its verdict."""
        location = self.location(client_id)
        self.busy = _("Checking {client}...").format(client=location.name)
        self._kick()
        try:
            ok, message = run_check(self.check_command, location.client_id, location.name, self.check_timeout_s)
        finally:
            self.busy = None
        _connected, title, text = check_notice(
            location.client_id, location.name, ok, message,
            installed=location.installed, claude_connected=location.name in self._live_clients(),
        )  # fmt: skip
        self._notifier.notify(title, text)


def file_stamp(path: Path) -> FileStamp | None:
    """(modification time, size) of a file, None when it cannot be read."""
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_mtime, info.st_size
