"""The tray menu model, state by state: what the user reads and what each click would do."""

from __future__ import annotations

import json
import re
import sys
from datetime import datetime
from pathlib import Path

import anyio
import pytest

from app.core import liveness
from app.core.channel.transport import address_for
from app.core.channel.transport import connect as channel_connect
from app.core.claude.config import ABSENT, ALTERED, CHANGED, CURRENT, FOREIGN, INVALID, STALE, UNKNOWN
from app.core.paths import AppPaths
from app.ui.tray import menu, tray_state
from app.ui.tray import platforms as tray_platform
from app.ui.tray.app import TrayApp
from app.ui.tray.menu import MenuEntry
from app.ui.tray.tray_state import ClientView, CrashView, ServerView, TrayState
from tests.clicks import shown_window
from tests.desktop_env import make_fake_desktop, wait_for
from tests.stdio_client import connect, run

NOW = datetime(2026, 8, 3, 15, 30).timestamp()
STARTED = datetime(2026, 8, 3, 14, 2).timestamp()
DESKTOP_CONNECTED = ClientView("claude-desktop", "Claude Desktop", True, CURRENT)
CODE_ABSENT = ClientView("claude-code", "Claude Code", True, ABSENT)
SERVER = ServerView("claude-ai 0.12.4", STARTED, 12)


def entries(state: TrayState) -> list[MenuEntry]:
    return menu.build_menu(state, now=NOW)


def entry(state: TrayState, key: str) -> MenuEntry:
    found = menu.find_entry(entries(state), key)
    assert found is not None, key
    return found


def texts(items: list[MenuEntry] | tuple[MenuEntry, ...]) -> list[str]:
    return [e.text for e in items if not e.separator]


def test_the_menu_has_the_status_first_then_the_actions_and_quit() -> None:
    items = entries(TrayState(clients=(DESKTOP_CONNECTED,)))
    assert items[0].key == "status" and items[0].enabled is False
    assert items[-1].text == "Quit Cowork Terminal" and items[-1].action == menu.QUIT
    assert items[-2].separator
    keys = [e.key for e in items if not e.separator]
    assert keys == [
        "status", "waiting", "open-log", "pause", "pause-for", "connect", "approval", "output", "rules", "autostart",
        "data-folder", "settings", "welcome", "language", "recent", "help", "about", "uninstall", "quit",
    ]  # fmt: skip


def test_open_activity_log_is_the_default_action() -> None:
    defaults = [e for e in entries(TrayState()) if e.default]
    assert [(e.key, e.action) for e in defaults] == [("open-log", menu.OPEN_LOG)]


def test_idle_state_with_a_connected_client_says_host_access_is_on() -> None:
    state = TrayState(clients=(DESKTOP_CONNECTED,))
    assert menu.status_line(state) == "Host access on · no agent connected"
    assert menu.icon_state(state) == menu.IDLE
    assert entry(state, "pause").checked is False
    assert menu.tooltip(state) == "Cowork Terminal: Host access on · no agent connected"


def test_paused_state_ticks_pause_and_shows_the_paused_icon() -> None:
    state = TrayState(paused=True, clients=(DESKTOP_CONNECTED,), servers=(SERVER,), running=0)
    assert menu.status_line(state) == "Paused: Claude's commands are refused"
    assert menu.icon_state(state) == menu.PAUSED
    pause = entry(state, "pause")
    assert pause.checked is True and pause.action == menu.TOGGLE_PAUSE


def test_running_state_counts_commands_and_agents() -> None:
    state = TrayState(clients=(DESKTOP_CONNECTED,), servers=(SERVER, SERVER), running=1)
    assert menu.status_line(state) == "Running 1 command · 2 agents connected"
    assert menu.icon_state(state) == menu.RUNNING
    three = TrayState(clients=(DESKTOP_CONNECTED,), servers=(SERVER,), running=3)
    assert menu.status_line(three) == "Running 3 commands · 1 agent connected"


def test_live_servers_are_listed_with_client_start_time_and_command_count() -> None:
    state = TrayState(clients=(DESKTOP_CONNECTED,), servers=(SERVER, ServerView("cli", STARTED, 1)))
    assert entry(state, "server:0").text == "claude-ai 0.12.4 · since 14:02 · 12 commands"
    assert entry(state, "server:0").enabled is False
    assert entry(state, "server:1").text == "cli · since 14:02 · 1 command"


def test_a_server_not_linked_to_the_app_says_what_that_means_and_one_started_headless_but_linked_says_nothing() -> None:
    servers = (
        ServerView("Claude Code", STARTED, 1, headless=True, linked=False),
        ServerView("Claude Desktop", STARTED, 2, headless=False, linked=False),
        ServerView("Claude Code", STARTED, 3, headless=True, linked=True),  # it obeys the app: like any other
    )
    state = TrayState(clients=(DESKTOP_CONNECTED,), servers=servers)
    assert (
        entry(state, "server:0").text
        == "Claude Code · since 14:02 · 1 command · not linked to this app: it cannot ask you"
    )
    assert entry(state, "server:1").text == (
        "Claude Desktop · since 14:02 · 2 commands · not linked to this app: it refuses commands"
    )
    assert entry(state, "server:2").text == "Claude Code · since 14:02 · 3 commands"
    assert not any("headless" in text for text in every_text(entries(state))), "a word people do not use"


def test_more_than_four_servers_collapse_into_a_count() -> None:
    state = TrayState(clients=(DESKTOP_CONNECTED,), servers=(SERVER,) * 6)
    keys = [e.key for e in entries(state)]
    assert "server:3" in keys and "server:4" not in keys
    assert entry(state, "servers-more").text == "and 2 more"


def test_a_server_from_an_earlier_day_shows_its_weekday() -> None:
    yesterday = datetime(2026, 8, 2, 9, 5).timestamp()
    state = TrayState(clients=(DESKTOP_CONNECTED,), servers=(ServerView("claude-ai", yesterday, 0),))
    assert "since Sun 09:05" in entry(state, "server:0").text


def test_no_client_connected_says_so_without_the_waiting_for_you_icon() -> None:
    state = TrayState(clients=(ClientView("claude-desktop", "Claude Desktop", True, ABSENT), CODE_ABSENT))
    assert state.first_run
    assert menu.status_line(state) == "Not connected to Claude yet"
    assert menu.icon_state(state) == menu.IDLE, "the waiting-for-you icon means a command waits, nothing else"
    assert texts(entry(state, "connect").submenu) == [
        "Claude Desktop: not connected · click to connect",
        "Claude Code: not connected · click to connect",
    ]


def test_before_the_first_look_for_clients_the_submenu_says_it_is_looking() -> None:
    state = TrayState()
    assert not state.first_run
    assert texts(entry(state, "connect").submenu) == ["Looking for Claude apps..."]
    assert menu.status_line(state) == "Host access on · no agent connected"


def test_a_connected_app_offers_check_and_disconnect_never_a_silent_toggle() -> None:
    state = TrayState(clients=(DESKTOP_CONNECTED, CODE_ABSENT))
    desktop, code = entry(state, "client:claude-desktop"), entry(state, "client:claude-code")
    assert desktop.text == "Claude Desktop: connected" and desktop.action is None and desktop.checked is None
    assert desktop.submenu is not None
    assert [(e.text, e.action, e.target) for e in desktop.submenu] == [
        ("Check connection", menu.CHECK, "claude-desktop"),
        ("Disconnect Claude Desktop…", menu.ASK_DISCONNECT, "claude-desktop"),
    ]
    assert (code.text, code.action) == ("Claude Code: not connected · click to connect", menu.CONNECT)
    assert menu.find_entry(entries(state), "check:claude-code") is None
    assert all(e.action != menu.DISCONNECT for e in desktop.submenu), "only a confirmed question disconnects"


def test_each_entry_state_names_what_a_click_will_do() -> None:
    def client(state: str, installed: bool = True) -> MenuEntry:
        view = ClientView("claude-desktop", "Claude Desktop", installed, state)
        return entry(TrayState(clients=(view,)), "client:claude-desktop")

    def items(state: str) -> list[tuple[str, str | None]]:
        return [(e.text, e.action) for e in client(state).submenu or ()]

    assert client(CHANGED).text == "Claude Desktop: connected, its entry needs an update"
    assert items(CHANGED) == [
        ("Update its entry", menu.CONNECT), ("Check connection", menu.CHECK),
        ("Disconnect Claude Desktop…", menu.ASK_DISCONNECT),
    ]  # fmt: skip
    assert client(ALTERED).text == "Claude Desktop: not connected: settings were added to its entry"
    assert items(ALTERED) == [
        ("Repair its entry", menu.CONNECT), ("Check connection", menu.CHECK),
        ("Disconnect Claude Desktop…", menu.ASK_DISCONNECT),
    ]  # fmt: skip
    assert not ClientView("claude-desktop", "Claude Desktop", True, ALTERED).connected, "Welcome's step too"
    assert client(STALE).text == "Claude Desktop: an older install's entry"
    assert items(STALE) == [("Replace it with this install", menu.CONNECT), ("Check connection", menu.CHECK)]
    assert client(FOREIGN).text == "Claude Desktop: another program's entry"
    assert items(FOREIGN) == [("Replace it with this app", menu.CONNECT), ("Check connection", menu.CHECK)]
    assert client(INVALID).text == "Claude Desktop: its config file has an error"
    assert client(ABSENT, installed=False).text == "Claude Desktop: not found · click to add the entry anyway"
    for state in (INVALID, ABSENT):
        assert client(state).action == menu.CONNECT and client(state).submenu is None
    not_installed = ClientView("claude-code", "Claude Code", False, UNKNOWN)
    unknown = entry(TrayState(clients=(not_installed,)), "client:claude-code")
    assert unknown.text == "Claude Code: not installed" and unknown.enabled is False


def test_a_stale_entry_is_not_a_first_run() -> None:
    state = TrayState(clients=(ClientView("claude-desktop", "Claude Desktop", True, STALE),))
    assert not state.first_run


def test_a_server_that_died_shows_a_line_under_quit_that_opens_the_log_and_the_problem_icon() -> None:
    crashed = datetime(2026, 8, 3, 15, 12).timestamp()
    state = TrayState(clients=(DESKTOP_CONNECTED,), crash=CrashView("claude-ai 0.12.4", crashed, 2))
    line = entry(state, "crash")
    assert line.text == "Server for claude-ai 0.12.4 crashed at 15:12, 2 commands interrupted"
    assert line.action == menu.OPEN_LOG and line.enabled
    keys = [e.key for e in entries(state)]
    assert keys.index("crash") > keys.index("quit")
    assert menu.icon_state(state) == menu.PROBLEM
    assert "a server crashed (claude-ai 0.12.4)" in menu.tooltip(state)


def test_commands_waiting_for_approval_ask_for_attention_and_open_the_prompt() -> None:
    state = TrayState(clients=(DESKTOP_CONNECTED,), waiting=2, running=1)
    assert entry(state, "waiting").text == "2 commands waiting for you"
    assert entry(state, "waiting").action == menu.OPEN_APPROVALS
    assert menu.icon_state(state) == menu.WAITING


def test_the_approval_modes_are_radio_items_with_the_current_one_ticked() -> None:
    from app.core.policy.approval import ApprovalMode

    state = TrayState(clients=(DESKTOP_CONNECTED,), approval_mode=ApprovalMode.ALL)
    modes = entry(state, "approval").submenu[:3]  # then the container checkbox (test_container_pure)
    assert texts(modes) == [
        "Ask before dangerous commands",
        "Ask before every command",
        "Never ask (everything is still recorded)",
    ]
    assert [m.checked for m in modes] == [False, True, False]
    assert {(m.action, m.target) for m in modes} == {
        (menu.SET_APPROVAL_MODE, "destructive"),
        (menu.SET_APPROVAL_MODE, "all"),
        (menu.SET_APPROVAL_MODE, "never"),
    }


def test_the_output_budgets_are_radio_items_and_a_value_set_elsewhere_shows_ticked_first() -> None:
    from app.core.execution.output import OutputBudget

    choices = entry(TrayState(clients=(DESKTOP_CONNECTED,)), "output").submenu
    assert texts(choices) == [
        "30,000 characters (default)",
        "100,000 characters",
        "Up to 1 MB of output and 1 MB of error messages",
    ]
    assert [c.checked for c in choices] == [True, False, False]
    assert {(c.action, c.target) for c in choices} == {
        (menu.SET_OUTPUT_BUDGET, "30000"),
        (menu.SET_OUTPUT_BUDGET, "100000"),
        (menu.SET_OUTPUT_BUDGET, "seed"),
    }
    custom = entry(TrayState(output_budget=OutputBudget(5_000)), "output").submenu
    assert texts(custom)[0] == "5,000 characters" and [c.checked for c in custom] == [True, False, False, False]


def test_a_problem_beats_pause_and_shows_the_error_icon() -> None:
    state = TrayState(paused=True, problem="Git Bash is missing: install Git for Windows")
    assert menu.status_line(state) == "Git Bash is missing: install Git for Windows"
    assert menu.icon_state(state) == menu.PROBLEM


def test_a_busy_action_shows_under_quit() -> None:
    state = TrayState(clients=(DESKTOP_CONNECTED,), busy="Checking Claude Desktop...")
    items = entries(state)
    assert items[-1] == MenuEntry("busy", "Checking Claude Desktop...", enabled=False)


def test_start_at_login_reflects_the_setting_and_is_disabled_when_unreadable() -> None:
    assert entry(TrayState(autostart=True), "autostart").checked is True
    assert entry(TrayState(autostart=False), "autostart").checked is False
    unreadable = entry(TrayState(autostart=None), "autostart")
    assert unreadable.enabled is False and unreadable.checked is False


def test_the_tooltip_fits_the_windows_limit() -> None:
    state = TrayState(problem="x" * 300)
    assert len(menu.tooltip(state)) == menu.TOOLTIP_MAX_CHARS
    assert menu.tooltip(state).endswith("...")


def test_every_clickable_entry_names_a_known_action() -> None:
    state = TrayState(clients=(DESKTOP_CONNECTED, CODE_ABSENT), servers=(SERVER,), crash=CrashView("x", NOW), waiting=1)

    def walk(items: list[MenuEntry] | tuple[MenuEntry, ...]) -> list[MenuEntry]:
        return [leaf for e in items for leaf in ([e] + (walk(e.submenu) if e.submenu else []))]

    for item in walk(entries(state)):
        assert item.action is None or item.action in menu.ACTIONS
        assert not (item.submenu and item.action), item.key
    keys = [e.key for e in walk(entries(state))]
    assert len(keys) == len(set(keys)), "keys identify items: they must be unique"


# ---- every action keeps its place, whatever the state (issue 12)

HELD = (tray_state.HeldView(7, "rm -rf build", "Claude Desktop"), tray_state.HeldView(8, "sudo reboot", "Claude Code"))
STATES = {
    "before the first look": TrayState(),
    "first run": TrayState(clients=(CODE_ABSENT,)),
    "idle": TrayState(clients=(DESKTOP_CONNECTED,)),
    "running": TrayState(clients=(DESKTOP_CONNECTED,), servers=(SERVER,) * 6, running=3),
    "paused": TrayState(paused=True, clients=(DESKTOP_CONNECTED,), servers=(SERVER,)),
    "waiting": TrayState(clients=(DESKTOP_CONNECTED,), waiting=2, held=HELD),
    "waiting, no Tk": TrayState(clients=(DESKTOP_CONNECTED,), waiting=2, held=HELD, windows=False),
    "crash": TrayState(clients=(DESKTOP_CONNECTED,), crash=CrashView("x", NOW, 1)),
    "busy": TrayState(clients=(DESKTOP_CONNECTED,), busy="Checking Claude Desktop..."),
    "problem": TrayState(problem="bash is missing: commands cannot run", waiting=1),
    "rules": TrayState(clients=(DESKTOP_CONNECTED,), rules=(tray_state.RuleView(3, "deleting build folders in ~/p"),)),
    "a long job": TrayState(
        clients=(DESKTOP_CONNECTED,), running=1, jobs=(tray_state.JobView(9, "npm ci", "Cowork", STARTED),)
    ),
}
ACTION_KEYS = (
    "open-log", "pause", "connect", "approval", "output", "rules", "autostart", "data-folder", "welcome", "language",
    "uninstall", "quit",
)  # fmt: skip


def _positions(state: TrayState) -> dict[str, int]:
    keys = [e.key for e in entries(state)]
    return {key: keys.index(key) for key in ACTION_KEYS}


def test_every_action_is_at_the_same_position_in_every_state() -> None:
    expected = _positions(TrayState())
    for name, state in STATES.items():
        assert _positions(state) == expected, name


def test_status_lines_that_come_and_go_are_listed_below_every_action() -> None:
    for name, state in STATES.items():
        keys = [e.key for e in entries(state)]
        for key in keys[keys.index("quit") + 1 :]:
            assert key == "information-separator" or key.startswith(("server", "crash", "busy", "job")), (name, key)
        assert not any(k.startswith(("server", "crash", "busy", "job")) for k in keys[: keys.index("quit")]), name


def test_nothing_waiting_shows_a_disabled_line_in_the_same_place() -> None:
    line = entry(TrayState(), "waiting")
    assert (line.text, line.enabled, line.action) == ("No command is waiting for you", False, None)


def test_without_tk_each_waiting_command_can_be_denied_from_the_menu_and_allowed_only_in_the_window() -> None:
    """A menu line shows too little of a command to allow it on (a red team, 2026-12-06): only Deny,
    and a disabled line that says where it can be allowed."""
    state = STATES["waiting, no Tk"]
    waiting = entry(state, "waiting")
    assert waiting.action is None and waiting.submenu is not None
    assert texts(waiting.submenu) == ["Claude Desktop: rm -rf build", "Claude Code: sudo reboot"]
    assert [(e.text, e.action, e.target, e.enabled) for e in entry(state, "held:7").submenu or ()] == [
        ("Can be allowed only in the approval window, once Tk is installed", None, None, False),
        ("Deny", menu.DENY, "7", True),
    ]
    assert "allow" not in every_action(entries(state)), "only the approval prompt allows a held command"
    assert entry(state, "welcome").enabled is False


def test_with_tk_the_waiting_line_opens_the_approval_window() -> None:
    waiting = entry(STATES["waiting"], "waiting")
    assert (waiting.text, waiting.action) == ("2 commands waiting for you", menu.OPEN_APPROVALS)


def test_the_users_rules_are_listed_and_each_can_be_removed() -> None:
    rules = entry(STATES["rules"], "rules").submenu
    assert rules is not None and texts(rules) == ["deleting build folders in ~/p"]
    remove = entry(STATES["rules"], "remove-rule:3")
    assert (remove.text, remove.action, remove.target) == ("Remove this rule", menu.REMOVE_RULE, "3")
    assert texts(entry(TrayState(), "rules").submenu or ()) == ["No rules yet: the approval window offers them"]


def test_one_icon_per_state_waiting_and_not_connected_differ() -> None:
    assert menu.icon_state(STATES["first run"]) == menu.IDLE
    assert menu.icon_state(STATES["idle"]) == menu.IDLE
    assert menu.icon_state(STATES["running"]) == menu.RUNNING
    assert menu.icon_state(STATES["paused"]) == menu.PAUSED
    assert menu.icon_state(STATES["waiting"]) == menu.WAITING
    assert menu.icon_state(STATES["problem"]) == menu.PROBLEM
    assert menu.icon_state(STATES["crash"]) == menu.PROBLEM


def test_the_language_menu_offers_the_systems_language_and_each_language_named_in_itself() -> None:
    language = menu.find_entry(entries(TrayState()), "language")
    assert language is not None and language.text == "Language"
    choices = [(e.text, e.target, e.checked) for e in language.submenu or () if not e.separator]
    assert choices == [
        ("Same as the system", menu.FOLLOW_SYSTEM, True),
        ("English", "en", False),
        ("Español", "es", False),
        ("Deutsch", "de", False),
        ("Русский", "ru", False),
    ]
    picked = menu.find_entry(entries(TrayState(language="ru")), "language:ru")
    assert picked is not None and picked.checked and picked.action == menu.SET_LANGUAGE


def test_in_another_language_the_menu_still_says_language_in_english_too() -> None:
    from app.core import i18n

    i18n.use_language("de")
    try:
        items = entries(TrayState(clients=(DESKTOP_CONNECTED,), running=3))
        assert menu.find_entry(items, "language").text == "Sprache (Language)"
        assert items[0].text.startswith("3 Befehle laufen")
        assert items[-1].text == "Cowork Terminal beenden"
    finally:
        i18n.use_language("en")


# ---- commands that outlive a Claude call (issue 22)


def test_a_command_running_longer_than_a_claude_call_is_listed_under_quit_with_stop() -> None:
    job = tray_state.JobView(
        9, "npm ci   --no-audit && npm run build:all -- --verbose --watch=false", "Cowork", STARTED
    )
    state = TrayState(clients=(DESKTOP_CONNECTED,), running=1, jobs=(job,))
    line = entry(state, "job:9")
    # shortened in the middle, its end kept (as Recent activity shows a command)
    assert line.text == "npm ci --no-audit && npm…e --watch=false · running since 14:02 · Cowork"
    [stop] = line.submenu or ()
    assert (stop.text, stop.action, stop.target) == ("Stop", menu.STOP_JOB, "9")


def test_only_commands_older_than_the_shortest_claude_patience_are_listed_oldest_first() -> None:
    young = tray_state.JobView(3, "make", "Claude Code", NOW - 10)
    old = tray_state.JobView(2, "pytest", "Cowork", NOW - 300)
    older = tray_state.JobView(1, "npm ci", "Cowork", NOW - 600)
    assert tray_state.long_jobs((young, old, older), NOW) == (older, old)


def test_a_long_command_that_ended_gets_one_notice_naming_its_agent() -> None:
    job = tray_state.JobView(2, "pytest  -x", "Cowork", NOW - 300)
    other = tray_state.JobView(3, "make", "Claude Code", NOW - 100)
    assert tray_state.ended_jobs((job, other), (other,)) == (job,)
    assert tray_state.ended_jobs((other,), (other,)) == ()
    assert tray_state.job_notice(job, "✓ Finished, exit code 0") == (
        "Cowork's long command ended",
        "pytest -x\n✓ Finished, exit code 0",
    )


def test_pause_for_offers_half_an_hour_an_hour_and_until_tomorrow_morning() -> None:
    from datetime import datetime

    choices = entry(TrayState(clients=(DESKTOP_CONNECTED,)), "pause-for").submenu
    assert texts(choices) == ["30 minutes", "1 hour", "Until tomorrow morning"]
    assert {(c.action, c.target) for c in choices} == {(menu.PAUSE_FOR, "30m"), (menu.PAUSE_FOR, "1h"),
                                                       (menu.PAUSE_FOR, "tomorrow")}  # fmt: skip
    evening = datetime(2026, 3, 14, 22, 40, 5)
    assert menu.resume_time("30m", evening) == datetime(2026, 3, 14, 23, 10, 5)
    assert menu.resume_time("1h", evening) == datetime(2026, 3, 14, 23, 40, 5)
    assert menu.resume_time("tomorrow", evening) == datetime(2026, 3, 15, 8, 0)
    assert menu.resume_time("tomorrow", datetime(2026, 12, 31, 1, 0)) == datetime(2027, 1, 1, 8, 0)


def test_a_timed_pause_says_until_when_in_the_status_line() -> None:
    from datetime import datetime

    soon = datetime.now().replace(hour=23, minute=50, second=0, microsecond=0).timestamp()
    state = TrayState(paused=True, paused_until=soon, clients=(DESKTOP_CONNECTED,))
    assert menu.status_line(state) == "Paused until 23:50: Claude's commands are refused"


def test_recent_activity_lists_the_newest_commands_in_plain_words_and_opens_the_log() -> None:
    recent = tuple(tray_state.RecentView(i, "✓ Finished", STARTED, f"npm test --shard {i}") for i in range(7, 0, -1))
    items = entry(TrayState(clients=(DESKTOP_CONNECTED,), recent=recent), "recent").submenu
    assert len(items) == menu.RECENT_SHOWN
    assert items[0].text == "14:02  ✓ Finished  npm test --shard 7" and items[0].action == menu.OPEN_LOG
    empty = entry(TrayState(clients=(DESKTOP_CONNECTED,)), "recent").submenu
    assert texts(empty) == ["Nothing yet"] and empty[0].enabled is False


def every_text(items: list[MenuEntry] | tuple[MenuEntry, ...]) -> list[str]:
    """The texts of the menu and of all its submenus."""
    found = []
    for item in items:
        found.append(item.text)
        found += every_text(item.submenu or ())
    return found


@pytest.mark.parametrize("language", ["en", "de", "es", "ru"])
def test_help_is_in_the_menu_and_names_each_control_as_the_menu_does(language: str) -> None:
    from app.core import i18n

    i18n.use_language(language)
    try:
        state = TrayState(clients=(DESKTOP_CONNECTED,), version="0.1.0")
        help_item = entry(state, "help")
        assert help_item.action == menu.SHOW_HELP and help_item.text
        title, text = menu.help_notice()
        lines = [line for line in text.splitlines() if line]
        assert title and len(lines) == len(menu.HELP_LINES)
        shown = every_text(entries(state))
        for line in lines[1:]:  # "• Name: what it does": Name is what the person clicks
            assert line.startswith("• ")
            named = line.removeprefix("• ").split(": ")[0]
            if named != line.removeprefix("• "):
                assert named in shown, (language, named)
        assert i18n._("Check connection") in text, "where to go when Claude cannot connect"
    finally:
        i18n.use_language("en")


def test_about_shows_the_version_in_the_menu() -> None:
    about = entry(TrayState(clients=(DESKTOP_CONNECTED,), version="0.1.0"), "about")
    assert about.text == "About Cowork Terminal 0.1.0" and about.action == menu.SHOW_ABOUT
    assert "Cowork Terminal 0.1.0 lets Claude run commands" in menu.about_text("0.1.0")


def every_action(items: list[MenuEntry] | tuple[MenuEntry, ...]) -> set[str]:
    found = set()
    for item in items:
        if item.action is not None:
            found.add(item.action)
        found |= every_action(item.submenu or ())
    return found


def test_every_click_the_menu_can_ask_for_has_a_function_in_the_trays_action_table() -> None:
    from app.ui.tray.actions import ACTIONS

    connected = (DESKTOP_CONNECTED, CODE_ABSENT)
    busy = TrayState(
        clients=connected, servers=(SERVER,), running=1, waiting=1,
        jobs=(tray_state.JobView(7, "make", "Claude", STARTED),),
        rules=(tray_state.RuleView(3, "deleting build folders"),),
        recent=(tray_state.RecentView(9, "Finished", NOW, "ls"),),
        crash=CrashView("claude-ai", STARTED, 1),
    )  # fmt: skip
    without_windows = TrayState(
        clients=connected, windows=False, waiting=1, held=(tray_state.HeldView(5, "rm -rf x", "Claude"),),
        confirm_disconnect="claude-desktop",
    )  # fmt: skip
    asked = every_action(entries(busy)) | every_action(entries(without_windows)) | every_action(entries(TrayState()))
    assert {menu.DENY, menu.STOP_JOB, menu.REMOVE_RULE, menu.DISCONNECT, menu.CHECK} <= asked
    assert "allow" not in asked, "only the approval prompt allows a held command"
    assert sorted(asked - set(ACTIONS) - {menu.QUIT}) == []  # Quit asks first, on the UI thread


NO_WINDOW = [sys.executable, "-c", ""]  # the Welcome window's process, for tests that do not look at it
# The notice window's process, replaced by one that keeps what the tray asks it to show.
RECORDER = "import sys; open(sys.argv[1], 'w').write(sys.stdin.readline())"


@pytest.mark.gui
def test_help_in_the_trays_menu_opens_a_window_that_shows_the_help(
    paths: AppPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path, display: str
) -> None:
    make_fake_desktop(tmp_path, monkeypatch)
    monkeypatch.setenv("PYSTRAY_BACKEND", "dummy")
    app = TrayApp(paths, liveness.try_hold(paths.tray_lock), tray_platform.load_pystray())
    app.start()
    try:
        assert app.settle()
        item = app.pystray_item("help")
        assert item.text == "Help"
        real_window, heard = app.confirm_command, tmp_path / "heard.json"
        app.confirm_command = [sys.executable, "-c", RECORDER, str(heard)]
        item(app.icon)
        told = json.loads(wait_for(lambda: heard.exists() and heard.read_text()))
        assert (told["title"], told["text"]) == ("Cowork Terminal: help", menu.help_text())
        assert told["allow"] == "", "a notice: OK only"

        app.confirm_command = real_window
        item(app.icon)
        assert shown_window(display, "Cowork Terminal: help")
    finally:
        app.shutdown()


@pytest.mark.gui
@pytest.mark.anyio
async def test_a_headless_server_the_app_cannot_link_is_told_apart_in_the_menu_and_truly_cannot_ask(
    paths: AppPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path, display: str
) -> None:
    """This tray runs in pytest: a real server checks the tray's program, finds it is not Cowork
    Terminal, and runs on its own (`--headless`), as it would beside an impostor."""
    make_fake_desktop(tmp_path, monkeypatch)
    monkeypatch.setenv("PYSTRAY_BACKEND", "dummy")
    app = TrayApp(paths, liveness.try_hold(paths.tray_lock), tray_platform.load_pystray(), welcome_command=NO_WINDOW)
    app.start()
    # A server speaking to this tray, started `--headless` too (it holds its lock, as servers do): linked.
    lock = liveness.try_hold(paths.server_lock("linked-test"))
    linked, _peer = channel_connect(address_for(paths))
    try:
        linked.send({"op": "hello", "role": "server", "seq": 0, "headless": True, "lock_key": "linked-test"})
        assert linked.receive(5)["op"] == "ack"
        linked.send({"op": "client", "seq": 1, "name": "claude-ai", "version": "0.14"})
        async with connect(home, headless=True) as client:
            (tmp_path / "victim").mkdir()
            said = await run(client, {"command": "rm -rf victim", "cwd": str(tmp_path)})
            assert (tmp_path / "victim").exists() and app.hub.pending_holds() == [], "it could not ask: refused"
            assert "error" in said or said.get("exitCode") != 0, said

            def lines() -> list[str]:
                if not app.settle():
                    return []
                texts = [e.text for e in app.entries() if e.key.startswith("server:")]
                return [re.sub(r"since [\d:]+", "since …", text) for text in texts]  # a minute may turn

            want = {
                "Claude Desktop · since … · 0 commands",  # linked: started --headless, it obeys the app
                "mcp · since … · 1 command · not linked to this app: it cannot ask you",
            }
            shown = await anyio.to_thread.run_sync(lambda: wait_for(lambda: want <= set(lines()) and lines(), 20))
            assert not any("headless" in line for line in shown), shown
            # One line per server: the refused tray never registered the server that refused it.
            assert len(shown) == 2, shown
    finally:
        linked.close()
        app.shutdown()
        if lock is not None:
            lock.release()


def test_a_hidden_character_in_a_held_command_shows_in_the_menu_and_in_a_notice() -> None:
    held = (tray_state.HeldView(5, "rm -rf bu\u200bild\x1b[8m", "Claude"),)
    state = TrayState(clients=(DESKTOP_CONNECTED,), windows=False, waiting=1, held=held)
    assert texts(entry(state, "waiting").submenu or ()) == ["Claude: rm -rf bu\\u200bild^[[8m"]
    notifier = tray_platform.Notifier(object(), "dummy", tray_platform.UiDispatcher(), platform="test")
    notifier.notify("Cowork\u200b Terminal", "Waiting: rm -rf bu\u200bild")
    assert notifier.history == [("Cowork\\u200b Terminal", "Waiting: rm -rf bu\\u200bild")]
