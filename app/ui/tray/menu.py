"""The tray menu as data: the app's state in, item descriptions out, with no UI library in sight.

The tray turns these descriptions into pystray items each time the menu is built; tests read
them directly. Keeping every wording and every "which action does this click mean now" decision
here means one pure function decides what the user sees in each state, and the tray
(`pystray_menu`) only looks items up by their stable `key`. The state it reads is `tray_state`.

Every action keeps its place whatever the state: the menu opens with exactly two lines (the
status, and what waits for the user), then the actions, then Quit; what comes and goes (servers,
a crash, an action in progress) is listed under Quit. A user who learnt where "Pause host access"
is must never click the activity log because a command started.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from app.core.claude.config import ALTERED, CHANGED, CURRENT, UNKNOWN
from app.core.execution.output import BUDGET_CHOICES, OutputBudget
from app.core.i18n import LANGUAGE_NAMES, LANGUAGES, N_, _, ngettext
from app.core.i18n.formats import format_time, format_weekday_time
from app.core.policy.approval import ApprovalMode
from app.core.visible_text import visible
from app.ui.tray.tray_state import (
    FIX_TEXT,
    ClientView,
    TrayState,
    client_state_text,
    short_command,
)

APP_TITLE = "Cowork Terminal"  # a name: the same in every language
MAX_SERVER_LINES = 4  # more live servers than this collapse into "and N more"
MAX_JOB_LINES = 5  # long-running commands listed under Quit, each with Stop
JOB_COMMAND_CHARS = 40
# A server not linked to this app. Started `--headless`, it reads the pause from the journal but has
# nobody to ask, so a command that needs the user's OK is refused; otherwise it refuses every command.
NOT_LINKED_HEADLESS = N_("not linked to this app: it cannot ask you")
NOT_LINKED = N_("not linked to this app: it refuses commands")
TOOLTIP_MAX_CHARS = 127  # Windows truncates a tray tooltip at 128 characters, including the NUL

# Action ids: what a click asks the tray to do.
OPEN_LOG = "open-log"
TOGGLE_PAUSE = "toggle-pause"
SHOW_ABOUT = "show-about"
SHOW_HELP = "show-help"
OPEN_SETTINGS = "open-settings"
PAUSE_FOR = "pause-for"  # a timed pause: target is one of PAUSE_CHOICES' keys
CONNECT = "connect"
DISCONNECT = "disconnect"
CHECK = "check"
TOGGLE_AUTOSTART = "toggle-autostart"
OPEN_DATA_FOLDER = "open-data-folder"
OPEN_APPROVALS = "open-approvals"
SET_APPROVAL_MODE = "set-approval-mode"
TOGGLE_CONTAINER = "toggle-container"  # commands in the OS container, or not (a click only: issue 21)
SET_OUTPUT_BUDGET = "set-output-budget"
UNINSTALL = "uninstall"
ASK_DISCONNECT = "ask-disconnect"  # "Disconnect…": asks first; DISCONNECT is what a "yes" does
DENY = "deny"
STOP_JOB = "stop-job"  # Stop one long-running command (a tightening)
REMOVE_RULE = "remove-rule"
OPEN_WELCOME = "open-welcome"
SET_LANGUAGE = "set-language"
QUIT = "quit"
ACTIONS = (
    OPEN_LOG,
    TOGGLE_PAUSE,
    PAUSE_FOR,
    SHOW_ABOUT,
    SHOW_HELP,
    OPEN_SETTINGS,
    CONNECT,
    DISCONNECT,
    CHECK,
    TOGGLE_AUTOSTART,
    OPEN_DATA_FOLDER,
    OPEN_APPROVALS,
    SET_APPROVAL_MODE,
    TOGGLE_CONTAINER,
    SET_OUTPUT_BUDGET,
    UNINSTALL,
    ASK_DISCONNECT,
    DENY,
    STOP_JOB,
    REMOVE_RULE,
    OPEN_WELCOME,
    SET_LANGUAGE,
    QUIT,
)
FOLLOW_SYSTEM = "system"  # the Language submenu's target for "follow the OS"

# Icon states, named as app.ui.icons names its files: one per state, distinct at 16 px.
IDLE, RUNNING, PAUSED, WAITING, PROBLEM = "idle", "running", "paused", "attention", "error"
ATTENTION, ERROR = WAITING, PROBLEM  # the files' names


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


def _commands(count: int) -> str:
    return ngettext("{count} command", "{count} commands", count).format(count=count)


def _clock_time(at: float, now: float) -> str:
    moment = datetime.fromtimestamp(at)
    if moment.date() == datetime.fromtimestamp(now).date():
        return format_time(moment, seconds=False)
    return format_weekday_time(moment)


def status_line(state: TrayState) -> str:
    """The first, disabled line: the one thing the user needs to know right now."""
    if state.problem:
        return state.problem
    if state.paused and state.paused_until is not None:
        until = _clock_time(state.paused_until, time.time())
        return _("Paused until {time}: Claude's commands are refused").format(time=until)
    if state.paused:
        return _("Paused: Claude's commands are refused")
    if state.servers:
        count = len(state.servers)
        agents = ngettext("{count} agent connected", "{count} agents connected", count).format(count=count)
    else:
        agents = _("no agent connected")
    if state.running:
        running = ngettext("Running {count} command", "Running {count} commands", state.running)
        return f"{running.format(count=state.running)} · {agents}"
    if state.first_run:
        return _("Not connected to Claude yet")
    return _("Host access on · {agents}").format(agents=agents)


def icon_state(state: TrayState) -> str:
    """Which icon shows: a problem (or a crash) beats the user's pause, which beats a question."""
    if state.problem or state.crash is not None:
        return PROBLEM
    if state.paused:
        return PAUSED
    if state.waiting:
        return WAITING
    if state.running:
        return RUNNING
    return IDLE


def tooltip(state: TrayState) -> str:
    text = f"{APP_TITLE}: {status_line(state)}"
    if state.crash is not None and not state.problem:
        text += " · " + _("a server crashed ({client})").format(client=state.crash.client_label)
    return text if len(text) <= TOOLTIP_MAX_CHARS else text[: TOOLTIP_MAX_CHARS - 3] + "..."


def _client_entry(client: ClientView, confirming: bool = False) -> MenuEntry:
    """One app with its state. An app with an entry under our name opens a submenu (fix it, check,
    "Disconnect…"): a click on the app itself never changes or removes anything silently."""
    key = f"client:{client.client_id}"
    text = f"{client.name}: {client_state_text(client.state, client.installed)}"
    if client.state == UNKNOWN:
        return MenuEntry(key, text, enabled=False)
    if not client.has_entry:
        return MenuEntry(key, text, action=CONNECT, target=client.client_id)
    target = client.client_id
    items = []
    if not client.connected:
        items.append(MenuEntry(f"fix:{target}", _(FIX_TEXT[client.state]), CONNECT, target))
    items.append(MenuEntry(f"check:{target}", _("Check connection"), CHECK, target))
    if client.state in (CURRENT, CHANGED, ALTERED):  # ours: removable; another program's entry is not ours to remove
        items.append(
            MenuEntry(
                f"disconnect:{target}", _("Yes, disconnect {client}").format(client=client.name), DISCONNECT, target
            )
            if confirming
            else MenuEntry(
                f"disconnect:{target}", _("Disconnect {client}…").format(client=client.name), ASK_DISCONNECT, target
            )
        )
    return MenuEntry(key, text, submenu=tuple(items))


def connect_submenu(state: TrayState) -> tuple[MenuEntry, ...]:
    """Each Claude app with its state: a click connects it; a connected one offers check and disconnect."""
    if state.clients is None:
        return (MenuEntry("clients-loading", _("Looking for Claude apps..."), enabled=False),)
    entries = [_client_entry(c, state.confirm_disconnect == c.client_id) for c in state.clients]
    if not entries:
        entries.append(MenuEntry("clients-none", _("No Claude app found on this computer"), enabled=False))
    return tuple(entries)


PAUSE_CHOICES = {"30m": N_("30 minutes"), "1h": N_("1 hour"), "tomorrow": N_("Until tomorrow morning")}
MORNING_HOUR = 8  # "until tomorrow" resumes at 8:00, the start of a working day


RECENT_SHOWN = 5


def recent_submenu(state: TrayState, now: float) -> tuple[MenuEntry, ...]:
    """What Claude ran lately, at a glance: each opens the activity log."""
    if not state.recent:
        return (MenuEntry("recent-none", _("Nothing yet"), enabled=False),)
    return tuple(
        MenuEntry(
            f"recent:{item.id}",
            f"{_clock_time(item.at, now)}  {item.status}  {_short(item.command, 48)}",
            OPEN_LOG,
        )
        for item in state.recent[:RECENT_SHOWN]
    )


def about_text(version: str) -> str:
    """What About says: the version, what the app does, and where help is."""
    return _(
        "Cowork Terminal {version} lets Claude run commands on this computer while you stay in charge. "
        "Getting started… in the menu connects Claude step by step; the activity log shows everything "
        "it ran and lets you pause it."
    ).format(version=version)


HELP_TITLE = N_("Cowork Terminal: help")
# One short line per thing a person can do, named as the menu names it (tests check the names exist).
HELP_LINES = (
    N_("Claude runs commands on this computer through Cowork Terminal. You stay in charge:"),
    N_("• Open activity log: every command Claude ran, what it printed, and what waits for you."),
    N_("• A command that could delete or change something important waits in a window until you allow or deny it."),
    N_("• Pause host access: Claude's commands are refused until you resume. Pause for… resumes by itself."),
    N_("• Settings…: which commands wait for you, how much output Claude reads, and starting at login."),
    N_("• Getting started…: connect a Claude app, step by step."),
    N_("• Claude says it cannot reach this computer? Connect to Claude, then your Claude app, then Check connection."),
)


def help_text() -> str:
    """What Help says: what the app does for the person, by the menu's own words."""
    first, *points = (_(line) for line in HELP_LINES)
    return first + "\n\n" + "\n".join(points)


def help_notice() -> tuple[str, str]:
    """Help's title and text, as the tray shows them (a window, or a notification without Tk)."""
    return _(HELP_TITLE), help_text()


def pause_for_submenu(state: TrayState) -> tuple[MenuEntry, ...]:
    """Like Dropbox's or Tailscale's: pause now, and the app resumes by itself at the time chosen."""
    return tuple(MenuEntry(f"pause-for:{key}", _(text), PAUSE_FOR, key) for key, text in PAUSE_CHOICES.items())


def resume_time(choice: str, now: datetime) -> datetime:
    """When a timed pause chosen at `now` ends: in 30 minutes, in an hour, or tomorrow at 8:00."""
    if choice == "30m":
        return now + timedelta(minutes=30)
    if choice == "1h":
        return now + timedelta(hours=1)
    if choice == "tomorrow":
        return (now + timedelta(days=1)).replace(hour=MORNING_HOUR, minute=0, second=0, microsecond=0)
    raise ValueError(f"unknown pause choice {choice!r}")


def rules_submenu(state: TrayState) -> tuple[MenuEntry, ...]:
    """The user's rules, each removable (removing one tightens control: no question asked)."""
    if not state.rules:
        return (MenuEntry("rules-none", _("No rules yet: the approval window offers them"), enabled=False),)
    return tuple(
        MenuEntry(
            f"rule:{rule.id}",
            rule.description,
            submenu=(MenuEntry(f"remove-rule:{rule.id}", _("Remove this rule"), REMOVE_RULE, str(rule.id)),),
        )
        for rule in state.rules
    )


# Without Tk a held command can only be denied from the menu: its label says too little to allow it on.
ALLOW_NEEDS_PROMPT = N_("Can be allowed only in the approval window, once Tk is installed")


def waiting_entry(state: TrayState) -> MenuEntry:
    """Always the second line. With windows it opens the approval window; without (no Tk), each
    held command is a submenu with Deny, and a line that says where it can be allowed: a menu line
    (the command cut to 60 characters) shows too little of it to allow it on."""
    if not state.waiting:
        return MenuEntry("waiting", _("No command is waiting for you"), enabled=False)
    text = ngettext("{count} command waiting for you", "{count} commands waiting for you", state.waiting).format(
        count=state.waiting
    )
    if state.windows or not state.held:
        return MenuEntry("waiting", text, OPEN_APPROVALS, enabled=state.windows)
    return MenuEntry(
        "waiting",
        text,
        submenu=tuple(
            MenuEntry(
                f"held:{held.id}",
                f"{held.client}: {_short(held.command)}",
                submenu=(
                    MenuEntry(f"allow:{held.id}", _(ALLOW_NEEDS_PROMPT), enabled=False),
                    MenuEntry(f"deny:{held.id}", _("Deny"), DENY, str(held.id)),
                ),
            )
            for held in state.held
        ),
    )


def _short(command: str, limit: int = 60) -> str:
    return short_command(command, limit)  # a hidden character shows, even here


def approval_submenu(state: TrayState) -> tuple[MenuEntry, ...]:
    """The approval modes as radio items: which commands wait for the user's answer; then whether
    commands run in the protected container."""
    modes = tuple(
        MenuEntry(
            f"approval:{mode.value}",
            mode.label,
            SET_APPROVAL_MODE,
            target=mode.value,
            checked=state.approval_mode is mode,
        )
        for mode in ApprovalMode
    )
    protect = MenuEntry("container", _("Protect my settings from commands"), TOGGLE_CONTAINER, checked=state.container)
    return (*modes, _separator("approval-separator"), protect)


def output_submenu(state: TrayState) -> tuple[MenuEntry, ...]:
    """How much of a command's output Claude gets back, as radio items (a value set with the CLI too)."""
    choices = BUDGET_CHOICES if state.output_budget in BUDGET_CHOICES else (state.output_budget, *BUDGET_CHOICES)
    return tuple(
        MenuEntry(
            f"output:{budget.setting}",
            _("{choice} (default)").format(choice=budget.label) if budget == OutputBudget() else budget.label,
            SET_OUTPUT_BUDGET,
            target=str(budget.setting),
            checked=state.output_budget == budget,
        )
        for budget in choices
    )


def language_submenu(state: TrayState) -> tuple[MenuEntry, ...]:
    """ "Same as the system", then each language named in itself, as radio items."""
    return (
        MenuEntry(
            f"language:{FOLLOW_SYSTEM}", _("Same as the system"), SET_LANGUAGE, FOLLOW_SYSTEM,
            checked=state.language is None,
        ),
        _separator("language-separator"),
        *(
            MenuEntry(f"language:{code}", LANGUAGE_NAMES[code], SET_LANGUAGE, code, checked=state.language == code)
            for code in LANGUAGES
        ),
    )  # fmt: skip


def quit_text() -> str:
    return _("Quit {app}").format(app=APP_TITLE)


def language_item_text() -> str:
    """Named in both words when the app speaks another language than English, so that someone who
    cannot read the current one still finds the way back."""
    text = _("Language")
    return text if text == "Language" else f"{text} (Language)"


def build_menu(state: TrayState, now: float | None = None) -> list[MenuEntry]:
    """The whole tray menu for `state`, top to bottom. The actions' positions never change."""
    now = time.time() if now is None else now
    entries = [
        MenuEntry("status", status_line(state), enabled=False),
        waiting_entry(state),
        _separator("top-separator"),
        MenuEntry("open-log", _("Open activity log"), OPEN_LOG, default=True),
        MenuEntry("pause", _("Pause host access"), TOGGLE_PAUSE, checked=state.paused),
        MenuEntry("pause-for", _("Pause for…"), submenu=pause_for_submenu(state)),
        MenuEntry("connect", _("Connect to Claude"), submenu=connect_submenu(state)),
        MenuEntry("approval", _("Ask before running"), submenu=approval_submenu(state)),
        MenuEntry("output", _("How much output Claude reads"), submenu=output_submenu(state)),
        MenuEntry("rules", _("Your rules"), submenu=rules_submenu(state)),
        MenuEntry(
            "autostart",
            _("Start at login"),
            TOGGLE_AUTOSTART,
            enabled=state.autostart is not None,
            checked=bool(state.autostart),
        ),
        MenuEntry("data-folder", _("Open data folder"), OPEN_DATA_FOLDER),
        MenuEntry("settings", _("Settings…"), OPEN_SETTINGS, enabled=state.windows),
        MenuEntry("welcome", _("Getting started…"), OPEN_WELCOME, enabled=state.windows),
        MenuEntry("language", language_item_text(), submenu=language_submenu(state)),
        MenuEntry("recent", _("Recent activity"), submenu=recent_submenu(state, now)),
        MenuEntry("help", _("Help"), SHOW_HELP),
        MenuEntry("about", _("About Cowork Terminal {version}").format(version=state.version), SHOW_ABOUT),
        MenuEntry("uninstall", _("Uninstall…"), UNINSTALL),
        _separator("quit-separator"),
        MenuEntry("quit", quit_text(), QUIT),
    ]
    return entries + _information(state, now)


def _information(state: TrayState, now: float) -> list[MenuEntry]:
    """What comes and goes, listed under Quit so that no action ever moves."""
    lines: list[MenuEntry] = []
    if state.busy:
        lines.append(MenuEntry("busy", state.busy, enabled=False))
    if state.crash is not None:
        crash = state.crash
        at = _clock_time(crash.at, now)
        if crash.interrupted:
            text = ngettext(
                "Server for {client} crashed at {time}, {count} command interrupted",
                "Server for {client} crashed at {time}, {count} commands interrupted",
                crash.interrupted,
            ).format(client=crash.client_label, time=at, count=crash.interrupted)
        else:
            text = _("Server for {client} crashed at {time}").format(client=crash.client_label, time=at)
        lines.append(MenuEntry("crash", text, OPEN_LOG))
    for job in state.jobs[:MAX_JOB_LINES]:
        text = _("{command} · running since {time} · {client}").format(
            command=_short(job.command, JOB_COMMAND_CHARS), time=_clock_time(job.started_at, now),
            client=visible(job.client),
        )  # fmt: skip
        stop = MenuEntry(f"stop-job:{job.id}", _("Stop"), STOP_JOB, str(job.id))
        lines.append(MenuEntry(f"job:{job.id}", text, submenu=(stop,)))
    for index, server in enumerate(state.servers[:MAX_SERVER_LINES]):
        parts = [
            server.client_label,
            _("since {time}").format(time=_clock_time(server.started_at, now)),
            _commands(server.command_count),
        ]
        if not server.linked:  # it does not take this app's orders: say what that means for the person
            parts.append(_(NOT_LINKED_HEADLESS if server.headless else NOT_LINKED))
        lines.append(MenuEntry(f"server:{index}", " · ".join(parts), enabled=False))
    if len(state.servers) > MAX_SERVER_LINES:
        more = _("and {count} more").format(count=len(state.servers) - MAX_SERVER_LINES)
        lines.append(MenuEntry("servers-more", more, enabled=False))
    return [_separator("information-separator"), *lines] if lines else []


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
