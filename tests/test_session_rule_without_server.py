"""A session rule ("Allow these until Claude Code quits") for a server the activity log has no row of.

A journal renewed under a live server (deleted, replaced or damaged under the tray: Hub.reopen_journal)
writes that server's row again; when the new file refuses it (a full disk), the server is left without
an id until its next command registers it again. What went wrong: `Hub.add_rule(peer=)` made the rule
for session "None", which answers no server, and the person still read "Rule made". What should
happen: no rule is stored, the person is told it could not be made for this conversation, and their
click still allows the command it was made on.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from app.core.authority.hub import Hub, RuleNotMade
from app.core.journal.store import Journal
from app.core.paths import AppPaths
from app.core.policy.rules import SESSION_SCOPE, build_folders_kind, describe
from app.ui.tray.windows import TrayWindows
from tests.channel_peers import FakePeer, fake_peers, running_hub
from tests.test_red_team_twelve_apps import delete_journal

KIND = build_folders_kind(["node_modules"])


@pytest.fixture
def peers(paths: AppPaths):
    """Servers bound to the hub (FakePeers), each by its lock key."""
    with fake_peers(paths) as make:
        yield lambda lock_key, **hello: make("server", headless=False, lock_key=lock_key, **hello)


@pytest.fixture
def folder(tmp_path: Path) -> str:
    project = tmp_path / "project"
    (project / "node_modules").mkdir(parents=True)
    return str(project.resolve())


@pytest.fixture
def running(paths: AppPaths) -> Iterator[Hub]:
    with running_hub(paths) as (hub, _seen):
        yield hub


def held_then_renewed_without_its_row(
    hub: Hub, paths: AppPaths, server: FakePeer, folder: str, monkeypatch: pytest.MonkeyPatch
) -> int:
    """`server` holds `rm -rf node_modules`; the activity log is deleted and started anew, and the new
    file refuses the server's row (a full disk). The held command's id."""
    held = server.begin("rm -rf node_modules", status="waiting", cwd=folder, client_name="claude-code")["id"]
    hold = hub.held(held)
    assert hold is not None and hold.peer.server_id is not None

    def full_disk(*_args: Any, **_kwargs: Any) -> int:
        raise sqlite3.OperationalError("database or disk is full")

    with monkeypatch.context() as patched:
        patched.setattr(Journal, "register_server", full_disk)
        delete_journal(paths)
        hub.tick()
    assert hold.peer.server_id is None, "the renewal was expected to leave the server without a row"
    assert hub.held(held) is not None
    return held


def rules_in_file(paths: AppPaths) -> list[Any]:
    with Journal(paths) as journal:
        return journal.rules()


def test_no_session_rule_is_stored_for_a_server_without_a_row_and_the_click_still_decides(
    running: Hub, paths: AppPaths, peers, folder: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub = running
    server = peers("claude-code")
    held = held_then_renewed_without_its_row(hub, paths, server, folder, monkeypatch)
    hold = hub.held(held)
    assert hold is not None
    with pytest.raises(RuleNotMade):
        hub.add_rule(KIND, folder, SESSION_SCOPE, describe(KIND, folder, SESSION_SCOPE), peer=hold.peer)
    assert hub.rules() == [] and rules_in_file(paths) == []
    # The click's Allow is the person's all the same.
    assert hub.decide(held, allowed=True, by="prompt")
    assert server.next_push("decision")["allowed"] is True
    server.ask("finish", id=held, outcome={"status": "finished", "exit_code": 0})
    # Its next one asks again (no rule answers it); and, registered again by that command's row, a
    # rule for this conversation can be made now, and answers the one after.
    again = server.begin("rm -rf node_modules", status="waiting", cwd=folder, client_name="claude-code")["id"]
    assert not [push for push in server.quiet_for(0.3) if push.get("op") == "decision"]
    hold = hub.held(again)
    assert hold is not None and hold.peer.server_id is not None
    rule = hub.add_rule(KIND, folder, SESSION_SCOPE, describe(KIND, folder, SESSION_SCOPE), peer=hold.peer)
    assert rule.session == str(hold.peer.server_id) and [r.id for r in hub.rules()] == [rule.id]
    hub.decide(again, allowed=True, by="prompt")
    assert server.next_push("decision")["allowed"] is True
    server.ask("finish", id=again, outcome={"status": "finished", "exit_code": 0})
    third = server.begin("rm -rf node_modules", status="waiting", cwd=folder, client_name="claude-code")["id"]
    answered = server.next_push("decision")
    assert answered["id"] == third and answered["allowed"] is True


def test_the_person_reads_that_the_rule_was_not_made_and_their_allow_still_runs_the_command(
    running: Hub, paths: AppPaths, peers, folder: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The approval prompt's "Allow these until Claude Code quits", as the tray takes it
    (TrayWindows._prompt_said): the notice it shows, and the decision the server gets."""
    hub = running
    server = peers("claude-code")
    held = held_then_renewed_without_its_row(hub, paths, server, folder, monkeypatch)
    notices: list[tuple[str, str]] = []
    app = SimpleNamespace(
        hub=hub, paths=paths, notifier=SimpleNamespace(notify=lambda title, body, **_kw: notices.append((title, body)))
    )
    windows = TrayWindows(cast(Any, app))
    windows._prompt_said({"op": "decide", "id": held, "allowed": True, "rule": {"scope": SESSION_SCOPE}})
    assert server.next_push("decision")["allowed"] is True
    assert [title for title, _body in notices] == ["Rule not made"], notices
    assert notices[0][1] == (
        "The activity log could not record this conversation, so your rule for it was not made. "
        "Commands like this one will ask you again."
    )
    assert hub.rules() == [] and rules_in_file(paths) == []
