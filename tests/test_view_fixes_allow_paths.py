"""Only the approval prompt allows a held command (a red team, 2026-12-06: tests/test_red_team_nine_view.py).

It alone shows a held command whole (the environment's values, the folder typed for the most dangerous
ones). The log window's Allow and `cowork-terminal approve N` bring it; Deny from anywhere stays at once;
without Tk nothing can show it, so nothing else allows.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from app.core.authority.hub import Hub
from app.core.channel.protocol import IdRequest
from app.core.messages import LOG_WINDOW_DECIDED_BY
from app.core.paths import AppPaths
from app.ui.tray.platforms import missing_tk_message
from app.ui.tray.windows import TrayWindows
from tests.channel_peers import FakePeer, running_hub

SHOWN = "Command #{id} is shown in Cowork Terminal's approval window: allow or deny it there."


def person(told: list[Any]) -> Any:
    """The person's own CLI, as a peer the hub answers (no run mark, no server among its parents)."""
    return SimpleNamespace(facts=SimpleNamespace(run_mark=False, pid=None), push=told.append)


def held_one(paths: AppPaths, servers: list[FakePeer], command: str = "rm -rf build") -> int:
    server = FakePeer(paths)
    server.hello("server")
    servers.append(server)
    return int(server.begin(command, status="waiting")["id"])


def test_the_log_windows_allow_brings_the_prompt_and_decides_nothing_its_deny_decides_at_once(
    paths: AppPaths,
) -> None:
    servers: list[FakePeer] = []
    with running_hub(paths) as (hub, seen):
        held = held_one(paths, servers)
        said = SimpleNamespace(hub=hub)  # the tray's part that the log window's pipe reaches
        seen.holds_changed.clear()
        TrayWindows.log_window_said(said, {"op": "decide", "id": held, "allowed": True, "command": "rm -rf build"})  # type: ignore[arg-type]
        assert seen.holds_changed.is_set(), "the prompt is asked for (the tray's OPEN_APPROVALS)"
        assert hub.held(held) is not None, "the log window's Allow decides nothing"
        TrayWindows.log_window_said(said, {"op": "decide", "id": held, "allowed": False, "command": None})  # type: ignore[arg-type]
        assert hub.held(held) is None
        with hub.lock:
            row = hub.record.journal.get_command(held)
    for server in servers:
        server.close()
    assert row is not None and (row.decision, row.decided_by) == ("denied", LOG_WINDOW_DECIDED_BY)


def tray_part(hub: Hub, *, windows: bool) -> Any:
    """TrayWindows.ask_user as TrayApp wires it, on a tray with or without Tk."""
    app = SimpleNamespace(windows=windows, platform="linux", has_menu=True)
    tray = SimpleNamespace(hub=hub, app=app)
    return lambda question: TrayWindows.ask_user(tray, question)  # type: ignore[arg-type]


def test_approve_without_tk_is_refused_in_words_and_with_tk_brings_the_prompt(paths: AppPaths) -> None:
    servers: list[FakePeer] = []
    told: list[Any] = []
    with running_hub(paths) as (hub, seen):
        held = held_one(paths, servers)
        seen.holds_changed.clear()
        hub.questions.ask_user = tray_part(hub, windows=False)
        hub.questions.ask(person(told), "approve", IdRequest(held), 1)
        assert not seen.holds_changed.is_set(), "no prompt can open"
        hub.questions.ask_user = tray_part(hub, windows=True)
        hub.questions.ask(person(told), "approve", IdRequest(held), 2)
        assert seen.holds_changed.is_set(), "the prompt is asked for"
        still_held = hub.held(held) is not None
    for server in servers:
        server.close()
    assert [answer.to_wire() for answer in told] == [
        {"op": "error", "seq": 1, "message": missing_tk_message("linux", True)},
        {"op": "ack", "seq": 2, "done": True, "message": SHOWN.format(id=held)},
    ]
    assert still_held


def test_showing_a_held_command_neither_ends_a_streak_of_nos_nor_waits_out_a_quiet_time(paths: AppPaths) -> None:
    """A Yes ends the No streak (core/authority/no_streak.py): a program's `approve N`, shown at once,
    must not end it between the person's No's; and in the quiet time after them, `approve N` (which
    loosens nothing) still shows the command."""
    servers: list[FakePeer] = []
    told: list[Any] = []
    with running_hub(paths) as (hub, seen):
        held = held_one(paths, servers)
        for op in ("resume", "clear_history"):
            hub.questions.ask(person(told), op, None, 1)
            hub.answer(seen.questions[-1], False)
        hub.questions.ask(person(told), "approve", IdRequest(held), 2)
        hub.answer(seen.questions[-1], True)  # the tray showed it
        hub.questions.ask(person(told), "delete_data", None, 3)
        hub.answer(seen.questions[-1], False)
        assert "Cowork Terminal stops asking for a while" in seen.titles(), "three No's in a row"
        asked = len(seen.questions)
        hub.questions.ask(person(told), "approve", IdRequest(held), 4)
        assert len(seen.questions) == asked + 1 and seen.questions[-1].shows == held
        assert hub.held(held) is not None
    for server in servers:
        server.close()
