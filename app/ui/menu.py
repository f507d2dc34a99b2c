"""The tray menu as data: the app's state in, item descriptions out, with no UI library in sight.

The tray turns these descriptions into pystray items each time the menu is built; tests read
them directly. Keeping every wording and every "which action does this click mean now" decision
here means one pure function decides what the user sees in each state, and the glue in `tray.py`
only looks items up by their stable `key`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime

from app.core.approval import ApprovalMode
from app.core.client_config import ABSENT, CHANGED, CURRENT, FOREIGN, INVALID, STALE, UNKNOWN
from app.core.command_output import BUDGET_CHOICES, OutputBudget

APP_TITLE = "Cowork Terminal"
QUIT_TEXT = f"Quit {APP_TITLE}"
MAX_SERVER_LINES = 4  # more live servers than this collapse into "and N more"
TOOLTIP_MAX_CHARS = 127  # Windows truncates a tray tooltip at 128 characters, including the NUL

# Action ids: what a click asks the tray to do.
OPEN_LOG = "open-log"
TOGGLE_PAUSE = "toggle-pause"
CONNECT = "connect"
DISCONNECT = "disconnect"
CHECK = "check"
TOGGLE_AUTOSTART = "toggle-autostart"
OPEN_DATA_FOLDER = "open-data-folder"
OPEN_APPROVALS = "open-approvals"
SET_APPROVAL_MODE = "set-approval-mode"
SET_OUTPUT_BUDGET = "set-output-budget"
UNINSTALL = "uninstall"
QUIT = "quit"
ACTIONS = (
    OPEN_LOG, TOGGLE_PAUSE, CONNECT, DISCONNECT, CHECK, TOGGLE_AUTOSTART, OPEN_DATA_FOLDER, OPEN_APPROVALS,
    SET_APPROVAL_MODE, SET_OUTPUT_BUDGET, UNINSTALL, QUIT,
)

# Icon states, named as app.ui.icons names its files.
IDLE, RUNNING, PAUSED, ATTENTION, ERROR = "idle", "running", "paused", "attention", "error"

# Our entry's state in a client's config (client_config) -> what the menu item adds to the name.
_CLIENT_SUFFIX = {
    CURRENT: "",
    ABSENT: "",
    CHANGED: " (update our entry)",
    STALE: " (replace an older install's entry)",
    FOREIGN: " (replace another program's entry)",
    INVALID: " (its config file has an error)",
    UNKNOWN: " (not installed)",
}
_HAS_ENTRY = (CURRENT, CHANGED, STALE, FOREIGN)


@dataclass(frozen=True)
class ServerView:
    """One live server: which client started it, since when, how many commands it ran."""

    client_label: str
    started_at: float
    command_count: int
    headless: bool = False


@dataclass(frozen=True)
class ClientView:
    """One Claude client and the state of our entry in its config (a `client_config` state)."""

    client_id: str
    name: str
    installed: bool
    state: str
    problem: str = ""

    @property
    def connected(self) -> bool:
        return self.state == CURRENT

    @property
    def has_entry(self) -> bool:
        return self.state in _HAS_ENTRY


@dataclass(frozen=True)
class CrashView:
    client_label: str
    at: float
    interrupted: int = 0


@dataclass(frozen=True)
class TrayState:
    """Everything the icon, its tooltip and its menu show."""

    paused: bool = False
    servers: tuple[ServerView, ...] = ()
    running: int = 0
    waiting: int = 0
    clients: tuple[ClientView, ...] | None = None  # None until the first look for Claude apps ends
    crash: CrashView | None = None  # a server crash the user has not looked at yet
    autostart: bool | None = False  # None when the setting cannot be read
    problem: str | None = None  # something that stops every command (no bash): one short line
    busy: str | None = None  # an action in progress, e.g. "Checking Claude Desktop..."
    approval_mode: ApprovalMode = ApprovalMode.DESTRUCTIVE
    output_budget: OutputBudget = OutputBudget()

    @property
    def any_connected(self) -> bool:
        return any(c.has_entry for c in self.clients or ())

    @property
    def first_run(self) -> bool:
        """No Claude app has our entry and none is talking to us: the user still has to connect."""
        return self.clients is not None and not self.any_connected and not self.servers


@dataclass(frozen=True)
class MenuEntry:
    """One menu item as data. `key` is stable across states, so the tray can find an item again."""

    key: str
    text: str = ""
    action: str | None = None  # one of ACTIONS; None for information lines and submenus
    target: str | None = None  # the client id, for client actions
    enabled: bool = True
    checked: bool | None = None  # None: not a checkbox
    default: bool = False  # the click-on-icon action, where the platform has one
    submenu: tuple[MenuEntry, ...] | None = None
    separator: bool = False


def _separator(key: str) -> MenuEntry:
    return MenuEntry(key, separator=True, enabled=False)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _clock_time(at: float, now: float) -> str:
    moment = datetime.fromtimestamp(at)
    if moment.date() == datetime.fromtimestamp(now).date():
        return moment.strftime("%H:%M")
    return moment.strftime("%a %H:%M")


def status_line(state: TrayState) -> str:
    """The first, disabled line: the one thing the user needs to know right now."""
    if state.problem:
        return state.problem
    if state.paused:
        return "Paused: Claude's commands are refused"
    agents = _plural(len(state.servers), "agent") + " connected" if state.servers else "no agent connected"
    if state.running:
        return f"Running {_plural(state.running, 'command')} · {agents}"
    if state.first_run:
        return "Not connected to Claude yet"
    return f"Host access on · {agents}"


def icon_state(state: TrayState) -> str:
    """Which icon shows: a problem beats the user's pause, which beats anything asking for attention."""
    if state.problem:
        return ERROR
    if state.paused:
        return PAUSED
    if state.waiting or state.crash is not None or state.first_run:
        return ATTENTION
    if state.running:
        return RUNNING
    return IDLE


def tooltip(state: TrayState) -> str:
    text = f"{APP_TITLE}: {status_line(state)}"
    if state.crash is not None and not state.problem:
        text += f" · a server crashed ({state.crash.client_label})"
    return text if len(text) <= TOOLTIP_MAX_CHARS else text[: TOOLTIP_MAX_CHARS - 3] + "..."


def _client_entry(client: ClientView) -> MenuEntry:
    key = f"client:{client.client_id}"
    if client.state == UNKNOWN:
        return MenuEntry(key, client.name + _CLIENT_SUFFIX[UNKNOWN], enabled=False, checked=False)
    suffix = _CLIENT_SUFFIX.get(client.state, "")
    if client.state == ABSENT and not client.installed:
        suffix = " (not detected: adds the entry anyway)"
    return MenuEntry(
        key,
        client.name + suffix,
        action=DISCONNECT if client.connected else CONNECT,
        target=client.client_id,
        checked=client.connected,
    )


def connect_submenu(state: TrayState) -> tuple[MenuEntry, ...]:
    """Each client as a checkbox (ticked when our entry is current), then "Check connection"."""
    if state.clients is None:
        return (MenuEntry("clients-loading", "Looking for Claude apps...", enabled=False),)
    entries = [_client_entry(c) for c in state.clients]
    if not entries:
        entries.append(MenuEntry("clients-none", "No Claude app found on this computer", enabled=False))
    entries.append(_separator("clients-separator"))
    checkable = [c for c in state.clients if c.has_entry]
    if not checkable:
        entries.append(MenuEntry("check", "Check connection (connect a Claude app first)", enabled=False))
    for client in checkable:
        entries.append(
            MenuEntry(f"check:{client.client_id}", f"Check connection: {client.name}", CHECK, client.client_id)
        )
    return tuple(entries)


def approval_submenu(state: TrayState) -> tuple[MenuEntry, ...]:
    """The approval modes as radio items: which commands wait for the user's answer."""
    return tuple(
        MenuEntry(
            f"approval:{mode.value}",
            mode.label,
            SET_APPROVAL_MODE,
            target=mode.value,
            checked=state.approval_mode is mode,
        )
        for mode in ApprovalMode
    )


def output_submenu(state: TrayState) -> tuple[MenuEntry, ...]:
    """How much of a command's output Claude gets back, as radio items (a value set with the CLI too)."""
    choices = BUDGET_CHOICES if state.output_budget in BUDGET_CHOICES else (state.output_budget, *BUDGET_CHOICES)
    return tuple(
        MenuEntry(
            f"output:{budget.setting}",
            budget.label + (" (default)" if budget == OutputBudget() else ""),
            SET_OUTPUT_BUDGET,
            target=str(budget.setting),
            checked=state.output_budget == budget,
        )
        for budget in choices
    )


def build_menu(state: TrayState, now: float | None = None) -> list[MenuEntry]:
    """The whole tray menu for `state`, top to bottom (the conventional order of tray apps)."""
    now = time.time() if now is None else now
    entries = [MenuEntry("status", status_line(state), enabled=False)]
    if state.busy:
        entries.append(MenuEntry("busy", state.busy, enabled=False))
    if state.crash is not None:
        lost = f", {_plural(state.crash.interrupted, 'command')} interrupted" if state.crash.interrupted else ""
        entries.append(
            MenuEntry(
                "crash",
                f"Server for {state.crash.client_label} crashed at {_clock_time(state.crash.at, now)}{lost}",
                OPEN_LOG,
            )
        )
    if state.waiting:
        entries.append(
            MenuEntry("waiting", f"{_plural(state.waiting, 'command')} waiting for you", OPEN_APPROVALS)
        )
    for index, server in enumerate(state.servers[:MAX_SERVER_LINES]):
        mode = " · headless" if server.headless else ""
        entries.append(
            MenuEntry(
                f"server:{index}",
                f"{server.client_label} · since {_clock_time(server.started_at, now)} · "
                f"{_plural(server.command_count, 'command')}{mode}",
                enabled=False,
            )
        )
    if len(state.servers) > MAX_SERVER_LINES:
        entries.append(MenuEntry("servers-more", f"and {len(state.servers) - MAX_SERVER_LINES} more", enabled=False))
    entries += [
        _separator("top-separator"),
        MenuEntry("open-log", "Open activity log", OPEN_LOG, default=True),
        MenuEntry("pause", "Pause host access", TOGGLE_PAUSE, checked=state.paused),
        MenuEntry("connect", "Connect to Claude", submenu=connect_submenu(state)),
        MenuEntry("approval", "Ask before running", submenu=approval_submenu(state)),
        MenuEntry("output", "Output Claude gets back", submenu=output_submenu(state)),
        MenuEntry(
            "autostart",
            "Start at login",
            TOGGLE_AUTOSTART,
            enabled=state.autostart is not None,
            checked=bool(state.autostart),
        ),
        MenuEntry("data-folder", "Open data folder", OPEN_DATA_FOLDER),
        MenuEntry("uninstall", "Uninstall…", UNINSTALL),
        _separator("quit-separator"),
        MenuEntry("quit", QUIT_TEXT, QUIT),
    ]
    return entries


def find_entry(entries: list[MenuEntry] | tuple[MenuEntry, ...], key: str) -> MenuEntry | None:
    """The entry with `key`, searching submenus too."""
    for entry in entries:
        if entry.key == key:
            return entry
        if entry.submenu:
            found = find_entry(entry.submenu, key)
            if found is not None:
                return found
    return None
