"""The tray menu model, state by state: what the user reads and what each click would do."""

from __future__ import annotations

from datetime import datetime

from app.core.client_config import ABSENT, CHANGED, CURRENT, FOREIGN, INVALID, STALE, UNKNOWN
from app.ui import menu
from app.ui.menu import ClientView, CrashView, MenuEntry, ServerView, TrayState

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


def test_the_menu_has_the_conventional_order_status_first_and_quit_last() -> None:
    items = entries(TrayState(clients=(DESKTOP_CONNECTED,)))
    assert items[0].key == "status" and items[0].enabled is False
    assert items[-1].text == "Quit Cowork Terminal" and items[-1].action == menu.QUIT
    assert items[-2].separator
    keys = [e.key for e in items if not e.separator]
    assert keys[-9:] == [
        "open-log", "pause", "connect", "approval", "output", "autostart", "data-folder", "uninstall", "quit"
    ]


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
    state = TrayState(clients=(DESKTOP_CONNECTED,), servers=(SERVER, ServerView("cli", STARTED, 1, headless=True)))
    assert entry(state, "server:0").text == "claude-ai 0.12.4 · since 14:02 · 12 commands"
    assert entry(state, "server:0").enabled is False
    assert entry(state, "server:1").text == "cli · since 14:02 · 1 command · headless"


def test_more_than_four_servers_collapse_into_a_count() -> None:
    state = TrayState(clients=(DESKTOP_CONNECTED,), servers=(SERVER,) * 6)
    keys = [e.key for e in entries(state)]
    assert "server:3" in keys and "server:4" not in keys
    assert entry(state, "servers-more").text == "and 2 more"


def test_a_server_from_an_earlier_day_shows_its_weekday() -> None:
    yesterday = datetime(2026, 8, 2, 9, 5).timestamp()
    state = TrayState(clients=(DESKTOP_CONNECTED,), servers=(ServerView("claude-ai", yesterday, 0),))
    assert "since Sun 09:05" in entry(state, "server:0").text


def test_no_client_connected_says_so_and_asks_for_attention() -> None:
    state = TrayState(clients=(ClientView("claude-desktop", "Claude Desktop", True, ABSENT), CODE_ABSENT))
    assert state.first_run
    assert menu.status_line(state) == "Not connected to Claude yet"
    assert menu.icon_state(state) == menu.ATTENTION
    check = entry(state, "check")
    assert check.enabled is False and "connect a Claude app first" in check.text


def test_before_the_first_look_for_clients_the_submenu_says_it_is_looking() -> None:
    state = TrayState()
    assert not state.first_run
    assert texts(entry(state, "connect").submenu) == ["Looking for Claude apps..."]
    assert menu.status_line(state) == "Host access on · no agent connected"


def test_connected_clients_are_ticked_and_clicking_them_disconnects() -> None:
    state = TrayState(clients=(DESKTOP_CONNECTED, CODE_ABSENT))
    desktop, code = entry(state, "client:claude-desktop"), entry(state, "client:claude-code")
    assert (desktop.text, desktop.checked, desktop.action, desktop.target) == (
        "Claude Desktop",
        True,
        menu.DISCONNECT,
        "claude-desktop",
    )
    assert (code.text, code.checked, code.action) == ("Claude Code", False, menu.CONNECT)
    assert entry(state, "check:claude-desktop").action == menu.CHECK
    assert menu.find_entry(entries(state), "check:claude-code") is None


def test_each_entry_state_names_what_a_click_will_do() -> None:
    def client(state: str, installed: bool = True) -> MenuEntry:
        view = ClientView("claude-desktop", "Claude Desktop", installed, state)
        return entry(TrayState(clients=(view,)), "client:claude-desktop")

    assert client(CHANGED).text == "Claude Desktop (update our entry)"
    assert client(STALE).text == "Claude Desktop (replace an older install's entry)"
    assert client(FOREIGN).text == "Claude Desktop (replace another program's entry)"
    assert client(INVALID).text == "Claude Desktop (its config file has an error)"
    assert client(ABSENT, installed=False).text == "Claude Desktop (not detected: adds the entry anyway)"
    for state in (CHANGED, STALE, FOREIGN, INVALID, ABSENT):
        assert client(state).action == menu.CONNECT and client(state).checked is False
    not_installed = ClientView("claude-code", "Claude Code", False, UNKNOWN)
    unknown = entry(TrayState(clients=(not_installed,)), "client:claude-code")
    assert unknown.text == "Claude Code (not installed)" and unknown.enabled is False


def test_a_stale_entry_is_not_a_first_run_and_can_be_checked() -> None:
    state = TrayState(clients=(ClientView("claude-desktop", "Claude Desktop", True, STALE),))
    assert not state.first_run
    assert entry(state, "check:claude-desktop").enabled


def test_a_server_that_died_shows_a_line_that_opens_the_log_and_asks_for_attention() -> None:
    crashed = datetime(2026, 8, 3, 15, 12).timestamp()
    state = TrayState(clients=(DESKTOP_CONNECTED,), crash=CrashView("claude-ai 0.12.4", crashed, 2))
    line = entry(state, "crash")
    assert line.text == "Server for claude-ai 0.12.4 crashed at 15:12, 2 commands interrupted"
    assert line.action == menu.OPEN_LOG and line.enabled
    assert menu.icon_state(state) == menu.ATTENTION
    assert "a server crashed (claude-ai 0.12.4)" in menu.tooltip(state)


def test_commands_waiting_for_approval_ask_for_attention_and_open_the_prompt() -> None:
    state = TrayState(clients=(DESKTOP_CONNECTED,), waiting=2, running=1)
    assert entry(state, "waiting").text == "2 commands waiting for you"
    assert entry(state, "waiting").action == menu.OPEN_APPROVALS
    assert menu.icon_state(state) == menu.ATTENTION


def test_the_approval_modes_are_radio_items_with_the_current_one_ticked() -> None:
    from app.core.approval import ApprovalMode

    state = TrayState(clients=(DESKTOP_CONNECTED,), approval_mode=ApprovalMode.ALL)
    modes = entry(state, "approval").submenu
    assert texts(modes) == ["Ask before dangerous commands", "Ask before every command", "Never ask (journal only)"]
    assert [m.checked for m in modes] == [False, True, False]
    assert {(m.action, m.target) for m in modes} == {
        (menu.SET_APPROVAL_MODE, "destructive"), (menu.SET_APPROVAL_MODE, "all"), (menu.SET_APPROVAL_MODE, "never")
    }


def test_the_output_budgets_are_radio_items_and_a_value_set_elsewhere_shows_ticked_first() -> None:
    from app.core.command_output import OutputBudget

    choices = entry(TrayState(clients=(DESKTOP_CONNECTED,)), "output").submenu
    assert texts(choices) == [
        "30,000 characters (default)", "100,000 characters", "1 MB per stream (like cowork-terminal-mcp)"
    ]
    assert [c.checked for c in choices] == [True, False, False]
    assert {(c.action, c.target) for c in choices} == {
        (menu.SET_OUTPUT_BUDGET, "30000"), (menu.SET_OUTPUT_BUDGET, "100000"), (menu.SET_OUTPUT_BUDGET, "seed")
    }
    custom = entry(TrayState(output_budget=OutputBudget(5_000)), "output").submenu
    assert texts(custom)[0] == "5,000 characters" and [c.checked for c in custom] == [True, False, False, False]


def test_a_problem_beats_pause_and_shows_the_error_icon() -> None:
    state = TrayState(paused=True, problem="Git Bash is missing: install Git for Windows")
    assert menu.status_line(state) == "Git Bash is missing: install Git for Windows"
    assert menu.icon_state(state) == menu.ERROR


def test_a_busy_action_shows_under_the_status_line() -> None:
    state = TrayState(clients=(DESKTOP_CONNECTED,), busy="Checking Claude Desktop...")
    assert entries(state)[1] == MenuEntry("busy", "Checking Claude Desktop...", enabled=False)


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
