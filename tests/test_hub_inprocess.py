"""The tray's hub, constructed in this process, against fake peers over the real channel.

Each test takes milliseconds: the hub's edge cases (hold limits, cooldowns, what a pause or a Stop
reaches, a lost server, a locked journal) need no tray process, no MCP server and no bash. What
only real processes can show (attacks through `execute_command`, the OS's facts about a peer, a
tray that dies) stays in tests/test_authority.py.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from app.core import liveness, settings
from app.core.authority.hub import (
    ASK_COOLDOWN_S,
    MAX_HOLDS_PER_PEER,
    WRITE_BUSY_TIMEOUT_S,
)
from app.core.channel.protocol import command_digest
from app.core.execution.output import OutputBudget, output_budget, parse_budget
from app.core.journal.store import Journal, Status
from app.core.messages import PAUSED_MESSAGE
from app.core.paths import HOME_ENV, AppPaths
from app.core.policy.rules import DELETE_BUILD_FOLDERS, FOLDER_SCOPE
from tests.channel_peers import ANSWER_S, FakePeer, fake_peers, running_hub, wait_until


@pytest.fixture
def peers(paths: AppPaths):
    with fake_peers(paths) as make:
        yield make


def row_of(paths: AppPaths, command_id: int):
    with Journal(paths) as journal:
        return journal.get_command(command_id)


def test_a_server_with_five_commands_waiting_has_its_sixth_refused(paths: AppPaths, peers) -> None:
    with running_hub(paths) as (hub, _seen):
        server = peers("server")
        held = [server.begin(f"rm -rf build{n}", status="waiting") for n in range(MAX_HOLDS_PER_PEER)]
        assert all(answer["op"] == "ack" for answer in held)
        sixth = server.begin("rm -rf build6", status="waiting")
        assert sixth["op"] == "error"
        assert sixth["message"] == f"{MAX_HOLDS_PER_PEER} commands from this server already wait for the user"
        with Journal(paths) as journal:  # refused, and said so in the log (a red team found no row)
            [refused] = [r for r in journal.recent_commands() if r.command == "rm -rf build6"]
        assert (refused.status, refused.reason) == (Status.REFUSED, sixth["message"])
        assert [h.command for h in hub.pending_holds()] == [f"rm -rf build{n}" for n in range(MAX_HOLDS_PER_PEER)]
        other = peers("server")
        assert other.begin("rm -rf elsewhere", status="waiting")["op"] == "ack", "the limit is per server"


def test_a_pause_reaches_every_server_at_once_and_drops_what_waits(paths: AppPaths, peers) -> None:
    with running_hub(paths) as (hub, seen):
        first, second = peers("server"), peers("server")
        held = first.begin("rm -rf victim", status="waiting")
        running = second.begin("sleep 100")
        seen.holds_changed.clear()
        hub.set_paused(True)
        for server in (first, second):
            assert server.next_push("state")["state"]["paused"] is True
        assert seen.holds_changed.is_set(), "the prompt is told its command no longer waits"
        assert hub.pending_holds() == []
        assert not hub.decide(held["id"], allowed=True, by="user"), "nothing left to allow"
        assert first.begin("echo new")["message"] == "host access is paused"
        assert first.begin("rm -rf again", status="waiting")["message"] == "host access is paused"
        assert second.ask("started", id=running["id"])["message"] == "host access is paused"
        with Journal(paths) as journal:  # a server that had not heard of the pause yet: its tries are shown
            refused = [(r.command, r.status, r.reason) for r in journal.recent_commands(limit=2)]
        assert refused == [
            ("rm -rf again", Status.REFUSED, PAUSED_MESSAGE),
            ("echo new", Status.REFUSED, PAUSED_MESSAGE),
        ]
        assert hub.pending_holds() == [], "a refused hold waits for nobody"
        assert [p["op"] for p in first.quiet_for(0.1)] == [], "no decision was ever pushed for the dropped hold"


def test_an_allow_carries_the_digest_of_the_command_its_server_sent_not_of_the_file(paths: AppPaths, peers) -> None:
    with running_hub(paths) as (hub, _seen):
        server = peers("server")
        held = server.begin("rm -rf victim", status="waiting", cwd="/srv/data", env_keys=["B", "A"])
        with sqlite3.connect(paths.journal) as db:  # another program rewrites the waiting row
            db.execute("UPDATE commands SET command = 'ls', cwd = '/' WHERE id = ?", (held["id"],))
        assert row_of(paths, held["id"]).command == "ls", "the file was rewritten"
        [hold] = hub.pending_holds()
        assert (hold.command, hold.cwd) == ("rm -rf victim", "/srv/data"), "the user is shown what the server sent"
        assert hub.decide(held["id"], allowed=True, by="user")
        decision = server.next_push("decision")
    assert decision == {
        "op": "decision",
        "id": held["id"],
        "allowed": True,
        "by": "user",
        "digest": command_digest("rm -rf victim", "/srv/data", ["A", "B"]),
    }
    assert decision["digest"] != command_digest("ls", "/", ["A", "B"])
    recorded = row_of(paths, held["id"])
    assert (recorded.decision, recorded.decided_by) == ("allowed", "user")


def test_stop_reaches_only_the_server_that_runs_the_command(paths: AppPaths, peers) -> None:
    with running_hub(paths):
        runner, bystander, cli = peers("server"), peers("server"), peers("cli")
        running = runner.begin("sleep 100")
        told = cli.ask("stop", id=running["id"])
        assert told["op"] == "ack"
        assert runner.next_push("stop") == {"op": "stop", "id": running["id"]}
        assert [p["op"] for p in bystander.quiet_for(0.1)] == []
        unknown = cli.ask("stop", id=running["id"] + 100)
    assert unknown == {
        "op": "error",
        "seq": unknown["seq"],
        "message": f"Command #{running['id'] + 100} is not running.",
    }


def test_an_end_that_reaches_the_hub_as_the_tray_quits_is_logged_and_quitting_twice_is_harmless(
    paths: AppPaths, peers, caplog: pytest.LogCaptureFixture
) -> None:
    """A server's end read just before the hub closed waits for the hub's lock while the journal
    closes: it is named in the log (the row stays running, as for a tray killed), never a traceback."""
    from app.core.journal.store import Outcome

    with running_hub(paths) as (hub, _seen):
        running = peers("server").begin("sleep 100")
        hub.close()
        with hub.lock:
            hub.record.finish(running["id"], Outcome(Status.FINISHED, exit_code=0))
        hub.close()
    assert f"the end of command {running['id']} could not be recorded" in caplog.text
    assert row_of(paths, running["id"]).status is Status.RUNNING


def test_a_request_read_just_before_the_tray_quit_is_answered_that_the_app_stopped_not_with_a_traceback(
    paths: AppPaths, peers, caplog: pytest.LogCaptureFixture
) -> None:
    """A server's `begin` (or any request) the hub's reader had read as the journal closed."""
    with running_hub(paths) as (hub, _seen):
        peers("server")
        server = next(peer for peer in hub.peers if peer.role == "server")
        hub.close()
        row = {"command": "echo late", "cwd": "/tmp", "env_keys": [], "status": "running", "tool": "execute_command"}
        hub.connections._handle(server, {"op": "begin", "seq": 7, "row": row})  # as its reader thread would
    assert "'begin' from" in caplog.text and "came as the app stopped" in caplog.text
    assert "Traceback" not in caplog.text and "failed" not in caplog.text


def test_stop_on_a_held_command_denies_it(paths: AppPaths, peers) -> None:
    with running_hub(paths) as (hub, _seen):
        server, cli = peers("server"), peers("cli")
        held = server.begin("rm -rf victim", status="waiting")
        assert cli.ask("stop", id=held["id"])["op"] == "ack"
        decision = server.next_push("decision")
        assert (decision["id"], decision["allowed"]) == (held["id"], False)
        assert hub.pending_holds() == []


def test_a_server_cannot_start_or_end_a_command_of_another_server(paths: AppPaths, peers) -> None:
    with running_hub(paths):
        owner, intruder = peers("server"), peers("server")
        running = owner.begin("sleep 100")
        outcome = {"status": "finished", "exit_code": 0}
        for op, fields in (("finish", {"outcome": outcome}), ("started", {})):
            refused = intruder.ask(op, id=running["id"], **fields)
            assert refused["message"] == f"command {running['id']} is not one of this server's"
    assert row_of(paths, running["id"]).status is Status.RUNNING


def test_a_server_that_goes_away_takes_its_held_commands_with_it(paths: AppPaths, peers) -> None:
    with running_hub(paths) as (hub, seen):
        leaving, staying = peers("server"), peers("server")
        leaving.begin("rm -rf one", status="waiting")
        staying.begin("rm -rf two", status="waiting")
        seen.holds_changed.clear()
        leaving.close()
        wait_until(lambda: [h.command for h in hub.pending_holds()] == ["rm -rf two"])
        assert seen.holds_changed.wait(1.0), "the prompt is told"


def test_repeats_of_one_loosening_share_one_window_and_a_no_answers_them_all(paths: AppPaths, peers) -> None:
    with running_hub(paths) as (hub, seen):
        hub.set_paused(True)
        first, second = peers("cli"), peers("cli")
        asked = [first.send("resume"), second.send("resume")]
        assert seen.asked.wait(1.0)
        # The second request reaches the hub on its own reader thread, and joins the first.
        wait_until(lambda: len(seen.questions) == 1 and len(seen.questions[0].waiting) == 2)
        [question] = seen.questions  # one window for both
        hub.answer(question, False)
        answers = [first.answer_to(asked[0]), second.answer_to(asked[1])]
        assert [a["message"] for a in answers] == ["You said no; nothing changed."] * 2
        assert hub.state.paused is True


def test_after_a_no_the_same_request_is_refused_at_once_and_another_still_asks(paths: AppPaths, peers) -> None:
    with running_hub(paths) as (hub, seen):
        hub.set_paused(True)
        cli = peers("cli")
        seq = cli.send("resume")
        assert seen.asked.wait(1.0)
        hub.answer(seen.questions[0], False)
        cli.answer_to(seq)
        started = time.monotonic()
        again = cli.ask("resume")
        assert again["message"] == "You said no to this a moment ago; nothing changed."
        assert time.monotonic() - started < ASK_COOLDOWN_S
        assert len(seen.questions) == 1, "no second window"
        seen.asked.clear()
        cli.send("settings", changes={"approval_mode": "never"})
        assert seen.asked.wait(1.0), "another loosening still asks the user"
        assert len(seen.questions) == 2
        assert hub.state.paused is True


def test_a_yes_in_the_confirm_window_resumes_and_every_server_hears_it(paths: AppPaths, peers) -> None:
    with running_hub(paths) as (hub, seen):
        hub.set_paused(True)
        cli = peers("cli")
        seq = cli.send("resume")
        assert seen.asked.wait(1.0)
        # Connected only now: a server from this same process would have made the request one
        # from inside a server (refused, see below).
        server = peers("server")
        assert server.welcome["state"]["paused"] is True
        hub.answer(seen.questions[0], True)
        assert cli.answer_to(seq)["done"] is True
        assert server.next_push("state")["state"]["paused"] is False
        assert hub.state.paused is False


def test_a_loosening_asked_from_a_server_process_is_refused_without_a_window(paths: AppPaths, peers) -> None:
    # Both peers are this test's process: to the hub, the CLI runs inside a server (as a command an
    # agent runs would).
    with running_hub(paths) as (hub, seen):
        hub.set_paused(True)
        peers("server")
        refused = peers("cli").ask("resume")
    assert "comes from a command an AI agent runs" in refused["message"]
    assert seen.questions == []
    assert hub.state.paused is True


def test_a_tray_that_cannot_show_a_window_refuses_every_loosening_and_changes_nothing(paths: AppPaths, peers) -> None:
    """No Tk (the tray asks through its menu only): a request to loosen cannot be confirmed by a
    click, so it is refused in words and nothing changes."""
    with running_hub(paths, ask_user=None) as (hub, _seen):
        hub.set_paused(True)
        cli = peers("cli")
        resumed = cli.ask("resume")
        relaxed = cli.ask("settings", changes={"approval_mode": "never"})
        assert hub.state.paused is True and hub.state.approval_mode != "never"
    for answer in (resumed, relaxed):
        assert answer["message"] == "Cowork Terminal cannot show a window to ask you, so nothing changed.", answer


def test_approving_a_command_that_is_not_held_is_refused_without_a_window(paths: AppPaths, peers) -> None:
    with running_hub(paths) as (_hub, seen):
        refused = peers("cli").ask("approve", id=4242)
    assert refused["message"] == "Command #4242 is not waiting for approval.", refused
    assert seen.questions == []


def test_a_tightening_from_anyone_takes_effect_at_once_and_reaches_the_servers(paths: AppPaths, peers) -> None:
    with running_hub(paths) as (hub, seen):
        server = peers("server")
        told = peers("cli").ask("settings", changes={"approval_mode": "all", "approval_window_s": 20})
        assert told["op"] == "ack"
        state = server.next_push("state")["state"]
    assert (state["approval_mode"], state["approval_window_s"]) == ("all", 20.0)
    assert seen.questions == []
    with Journal(paths) as journal:
        assert journal.get_setting("approval_mode") == "all", "kept for the next start"


def test_a_server_that_remembers_a_pause_keeps_a_new_tray_paused(paths: AppPaths, peers) -> None:
    with Journal(paths) as journal:  # the file says running, asking little
        journal.set_paused(False)
        journal.set_setting("approval_mode", "never")
    remembered = {"paused": True, "approval_mode": "all", "approval_window_s": 10, "tools": "all"}
    with running_hub(paths) as (hub, _seen):
        assert hub.state.paused is False
        welcome = peers("server", remembered=remembered).welcome
        assert welcome["state"]["paused"] is True
        assert (hub.state.paused, hub.state.approval_mode, hub.state.approval_window_s) == (True, "all", 10.0)
    with Journal(paths) as journal:
        assert journal.is_paused() is True


def test_a_journal_locked_by_another_program_refuses_a_command_in_moments_and_tells_the_user_once(
    paths: AppPaths, peers
) -> None:
    with running_hub(paths) as (_hub, seen):
        server = peers("server")
        blocker = sqlite3.connect(paths.journal, timeout=1)
        blocker.execute("BEGIN IMMEDIATE")
        try:
            started = time.monotonic()
            refusals = [server.begin("echo blocked") for _ in range(2)]
            took = time.monotonic() - started
        finally:
            blocker.rollback()
            blocker.close()
        assert [r["message"] for r in refusals] == ["the activity log is locked by another program"] * 2
        assert took < 2 * WRITE_BUSY_TIMEOUT_S + 1.0, "a refusal, not a hang"
        assert seen.notices == [
            (
                "Cowork Terminal cannot record commands",
                "Commands are refused: the activity log is locked by another program.",
            )
        ], "told once"
        assert server.begin("echo again")["op"] == "ack", "written once the lock is gone"


def test_while_paused_a_command_is_refused_for_the_pause_even_when_its_row_cannot_be_written(
    paths: AppPaths, peers
) -> None:
    with running_hub(paths) as (hub, _seen):
        server = peers("server")
        hub.set_paused(True)
        blocker = sqlite3.connect(paths.journal, timeout=1)
        blocker.execute("BEGIN IMMEDIATE")  # another program holds the write lock
        try:
            refused = server.begin("echo while paused and locked")
        finally:
            blocker.rollback()
            blocker.close()
        assert refused["message"] == "host access is paused", "the reason the model reads, not the disk's"
        with Journal(paths) as journal:
            assert [r.command for r in journal.recent_commands()] == [], "nothing could be recorded"


def test_a_pause_reaches_the_servers_while_the_journal_is_locked_and_is_written_after(paths: AppPaths, peers) -> None:
    with running_hub(paths) as (hub, _seen):
        server = peers("server")
        blocker = sqlite3.connect(paths.journal, timeout=1)
        blocker.execute("BEGIN IMMEDIATE")  # another program holds the write lock: every write waits
        returned = threading.Event()
        pausing = threading.Thread(target=lambda: (hub.set_paused(True), returned.set()))
        try:
            started = time.monotonic()
            pausing.start()
            pushed = server.next_push("state")
            pushed_after = time.monotonic() - started
            assert not returned.is_set(), "the pause is still waiting to write the file: the push came first"
        finally:
            blocker.rollback()
            blocker.close()
        pausing.join(2 * WRITE_BUSY_TIMEOUT_S)
        assert returned.is_set()
        assert pushed["state"]["paused"] is True
        assert pushed_after < WRITE_BUSY_TIMEOUT_S / 2, f"the pause waited {pushed_after:.2f} s for the disk"
        assert hub.paused
    with Journal(paths) as journal:
        assert journal.get_setting("paused", False) is True, "the file got its copy once the lock was gone"


def test_a_stop_reaches_its_server_while_the_journal_is_locked(paths: AppPaths, peers) -> None:
    with running_hub(paths) as (hub, _seen):
        server = peers("server")
        running = server.begin("sleep 100")
        blocker = sqlite3.connect(paths.journal, timeout=1)
        blocker.execute("BEGIN IMMEDIATE")
        returned = threading.Event()
        stopping = threading.Thread(target=lambda: (hub.stop(running["id"]), returned.set()))
        try:
            stopping.start()
            pushed = server.next_push("stop", timeout_s=WRITE_BUSY_TIMEOUT_S / 2)
            assert not returned.is_set(), "the Stop still waits to write the file: the push came first"
        finally:
            blocker.rollback()
            blocker.close()
        stopping.join(2 * WRITE_BUSY_TIMEOUT_S)
        assert pushed == {"op": "stop", "id": running["id"]}
        assert returned.is_set()


def test_a_settings_change_the_user_allows_after_a_pause_keeps_the_pause(paths: AppPaths, peers) -> None:
    with running_hub(paths) as (hub, seen):
        cli = peers("cli")
        seq = cli.send("settings", changes={"approval_mode": "never"})
        assert seen.asked.wait(1.0)
        hub.set_paused(True)  # the user pauses while the question is open
        hub.answer(seen.questions[0], True)
        assert cli.answer_to(seq)["done"] is True
        assert (hub.paused, hub.approval_mode) == (True, "never"), "the Yes changed the mode, not the pause"


def test_a_held_command_one_of_the_users_rules_covers_is_allowed_by_the_hub_at_once(
    paths: AppPaths, peers, tmp_path
) -> None:
    (tmp_path / "build").mkdir()
    with running_hub(paths) as (hub, _seen):
        rule = hub.add_rule(DELETE_BUILD_FOLDERS, str(tmp_path), FOLDER_SCOPE, "deleting build folders")
        server = peers("server")
        covered = server.begin("rm -rf build", status="waiting", cwd=str(tmp_path))
        decision = server.next_push("decision")
        assert (decision["id"], decision["allowed"], decision["by"]) == (covered["id"], True, f"rule {rule.id}")
        elsewhere = server.begin("rm -rf build", status="waiting", cwd="/tmp")
        assert [h.command_id for h in hub.pending_holds()] == [elsewhere["id"]], "outside its folder it waits"
    assert row_of(paths, covered["id"]).allowed_by_rule == rule.id


def test_the_trays_view_of_the_hub_moves_with_each_row_and_lists_it(paths: AppPaths, peers) -> None:
    with running_hub(paths) as (hub, _seen):
        server = peers("server")
        before = hub.data_version()
        written = server.begin("echo seen")
        assert hub.data_version() != before
        assert [r.id for r in hub.recent_commands(limit=5)] == [written["id"]]
        hub.set_settings(approval_mode="all")
        assert (hub.approval_mode, hub.get_setting("approval_mode")) == ("all", "all")


def test_the_output_budget_set_from_the_menu_or_asked_by_anyone_is_what_the_hub_and_the_file_say(
    paths: AppPaths, peers
) -> None:
    with running_hub(paths) as (hub, _seen):
        hub.set_output_budget(parse_budget("seed"))  # the menu's or the Settings window's click
        assert hub.output_budget() == OutputBudget(None)
        with Journal(paths) as journal:
            assert output_budget(journal, environ={}) == OutputBudget(None)
        cli = peers("cli")
        answer = cli.ask("output_budget", budget="30000")  # no control: anyone may set it
        assert answer["op"] == "ack", answer
        assert hub.output_budget() == parse_budget("30000")
        with Journal(paths) as journal:
            assert output_budget(journal, environ={}) == parse_budget("30000")


@pytest.mark.parametrize("deleted", [("", "-wal", "-shm"), ("",)], ids=["all its files", "the main file only"])
def test_the_trays_supervisor_follows_the_hub_to_a_new_journal_when_the_old_one_is_deleted(
    paths: AppPaths, peers, deleted: tuple[str, ...]
) -> None:
    """Deleting the main file alone leaves its write-ahead log, which SQLite would replay into the
    new file: the old rows (and a second row for each live server) came back."""
    # Like a real server it holds its lock: without it the supervisor calls it crashed at once.
    server_lock = liveness.try_hold(paths.server_lock("follows-the-journal"))
    assert server_lock is not None
    with running_hub(paths) as (hub, seen):
        supervisor = hub.new_supervisor(has_menu=True)
        server = peers("server", headless=False, lock_key="follows-the-journal")
        first, _notices = hub.poll_servers(supervisor)
        assert [s.pid for s in first.servers] == [os.getpid()]
        assert [s.pid for s in hub.live_servers()] == [os.getpid()]
        before = server.begin("echo before")
        # Ended: a command still running gets its row back in the new file (tests/test_journal_renewed_rows.py).
        assert server.ask("finish", id=before["id"], outcome={"status": "finished", "exit_code": 0})["op"] == "ack"
        old = supervisor.journal
        for suffix in deleted:  # another program deletes the activity log under the tray
            Path(f"{paths.journal}{suffix}").unlink(missing_ok=True)
        hub.tick()
        assert any(title == "The activity log was deleted" for title, _text in seen.notices), seen.notices
        after, _notices = hub.poll_servers(supervisor)  # it polls the new file, not the closed connection
        assert [s.pid for s in after.servers] == [os.getpid()], "the live server has its row again"
        assert supervisor.journal is not old
        written = server.begin("echo after")
        assert hub.command(written["id"]).command == "echo after"
        assert [s.pid for s in hub.live_servers()] == [os.getpid()]
        old_row = hub.command(before["id"])
        assert old_row is None or old_row.command != "echo before", "the deleted journal's rows stay gone"
    server_lock.release()


def test_the_users_rules_go_on_in_a_new_journal_when_the_old_one_is_deleted(paths: AppPaths, tmp_path: Path) -> None:
    """The rules live in the hub's memory: a deleted activity log takes none of them, and one made in
    an earlier run is still told apart (the tray lists those at start) under its new id."""
    earlier, later = tmp_path / "earlier", tmp_path / "later"
    with Journal(paths) as journal:
        journal.add_rule(DELETE_BUILD_FOLDERS, str(earlier), FOLDER_SCOPE, "deleting build folders")
    with running_hub(paths) as (hub, seen):
        hub.add_rule(DELETE_BUILD_FOLDERS, str(later), FOLDER_SCOPE, "deleting build folders")
        for suffix in ("", "-wal", "-shm"):  # another program deletes the activity log under the tray
            Path(f"{paths.journal}{suffix}").unlink(missing_ok=True)
        hub.tick()
        assert any(title == "The activity log was deleted" for title, _text in seen.notices), seen.notices
        assert [rule.folder for rule in hub.rules()] == [str(earlier), str(later)]
        assert [rule.folder for rule in hub.rules_from_before()] == [str(earlier)]
        in_force = {rule.id for rule in hub.rules()}
    with Journal(paths) as journal:
        assert {rule.id: rule.folder for rule in journal.rules()} == {
            rule_id: folder for rule_id, folder in zip(sorted(in_force), (str(earlier), str(later)), strict=True)
        }, "the new file holds them, with the ids the tray now knows them by"


def test_the_welcome_window_once_shown_is_recorded_through_the_hub(paths: AppPaths) -> None:
    with running_hub(paths) as (hub, _seen):
        assert not hub.get_setting(settings.WELCOME_SHOWN)
        hub.welcome_shown()
        with Journal(paths) as journal:
            assert journal.get_setting(settings.WELCOME_SHOWN) is True


# A peer in a pid namespace of its own, as a command in its container is: every request the hub
# refuses from there, and the two tightenings it takes. On a kernel with Landlock's scopes such a
# peer cannot even reach the hub (tests/test_container.py); this is the hub's own check behind them.
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap makes the pid namespace (CI installs it)")
def test_a_peer_in_another_pid_namespace_may_pause_and_stop_but_not_resume_quit_open_the_log_or_allow(
    paths: AppPaths, home: Path, tmp_path: Path
) -> None:
    from app.core.authority.peers import CONTAINED_REFUSAL
    from tests.test_container import DRIVER  # asks each request once, as an agent's detached job would

    report = tmp_path / "asked.json"
    quits: list[bool] = []
    with running_hub(paths, quit_app=lambda: quits.append(True)) as (hub, seen):
        hub.set_paused(False, by="the test")
        mode = hub.state.approval_mode
        inside = subprocess.run(
            ["bwrap", "--dev-bind", "/", "/", "--unshare-pid", "--die-with-parent",
             sys.executable, "-c", DRIVER, str(report)],
            capture_output=True, text=True, timeout=60, env={**os.environ, HOME_ENV: str(home)},
        )  # fmt: skip
        assert inside.returncode == 0, inside.stderr
        answers = json.loads(report.read_text())
        for op in ("resume", "approve", "quit", "open_log", "clear_history", "settings", "state"):
            assert answers[op] == {"op": "error", "seq": 1, "message": CONTAINED_REFUSAL}, op
        assert answers["pause"]["op"] == "ack", answers["pause"]
        assert "inside a command's container" not in answers["cli stop"][1], "stop reaches the hub from inside"
        assert hub.state.paused and hub.state.approval_mode == mode
        assert seen.questions == [] and quits == [], "no window was shown, nothing else was done"


def test_removing_a_rule_is_a_tightening_anyone_may_ask_and_what_is_not_there_is_named(
    paths: AppPaths, peers, tmp_path
) -> None:
    with running_hub(paths) as (hub, seen):
        rule = hub.add_rule(DELETE_BUILD_FOLDERS, str(tmp_path), FOLDER_SCOPE, "deleting build folders")
        cli = peers("cli")
        removed = cli.ask("remove_rule", id=rule.id)
        again = cli.ask("remove_rule", id=rule.id)
        not_held = cli.ask("deny", id=12345)
        budget = cli.ask("output_budget", budget="12")
        unknown = cli.ask("format_disk")
    assert removed == {**removed, "op": "ack", "message": f"Removed rule {rule.id}."}
    assert again == {**again, "op": "error", "message": f"There is no rule {rule.id}."}
    assert not_held == {**not_held, "op": "error", "message": "Command #12345 is not waiting for approval."}
    assert budget["op"] == "error" and "2,000" in budget["message"], budget
    assert unknown == {**unknown, "op": "error", "message": "unknown request 'format_disk'"}
    assert seen.questions == [], "none of them asks the user"
    with Journal(paths) as journal:
        assert journal.rules() == []


def test_a_setting_out_of_range_is_refused_by_the_requests_own_check_too(paths: AppPaths) -> None:
    """Decoding refuses such a value first (test_protocol.py); the direction check behind it refuses
    it as well, so no change of the decoder can let a NaN pass for a tightening."""
    from app.core.authority.requests import RequestError, handle_request

    with running_hub(paths) as (hub, seen):
        before = hub.state
        with pytest.raises(RequestError, match="out of range"):
            handle_request(hub, None, "settings", {"changes": {"approval_window_s": float("nan")}}, 1, None)  # type: ignore[arg-type]
        assert hub.state == before and seen.questions == []


def test_a_value_out_of_range_is_refused_in_words_and_a_message_no_program_of_ours_sends_drops_its_sender(
    paths: AppPaths, peers
) -> None:
    with running_hub(paths) as (hub, seen):
        hub.set_paused(False, by="the test")
        cli = peers("cli")
        nan = cli.ask("settings", changes={"approval_window_s": float("nan")})
        assert nan["op"] == "error" and nan["message"].startswith("Refused: ") and "Nothing changed" in nan["message"]
        window = hub.state.approval_window_s

        def dropped(first: dict, then: dict | None = None) -> bool:
            peer = FakePeer(paths)
            try:
                peer.channel.send(first)
                if then is not None:  # after a welcome: what is dropped is `then`
                    welcome = peer.channel.receive(ANSWER_S)
                    assert welcome is not None and welcome["op"] == "ack", welcome
                    peer.channel.send(then)
                while True:  # the hub's answers and pushes, until it closes the connection
                    if peer.channel.receive(ANSWER_S) is None:
                        return False
            except (EOFError, OSError):
                return True
            finally:
                peer.close()

        hello = {"op": "hello", "role": "cli", "pid": os.getpid(), "seq": 1}
        assert dropped({"op": "state", "seq": 1}), "the first message must be hello"
        assert dropped({**hello, "role": "root"}), "a hello no program of ours sends"
        assert dropped(hello, {**hello, "seq": 2}), "hello twice"
        assert dropped(hello, {"op": "state", "seq": "first"}), "a request number that is no whole number"
        server_hello = {"op": "hello", "role": "server", "pid": os.getpid(), "headless": False, "seq": 1}
        assert dropped(server_hello, {"op": "begin", "seq": 2, "row": {"command": 3}}), "a row no server sends"
        assert seen.questions == [] and not hub.state.paused and hub.state.approval_window_s == window


OTHER_USER_ASKS = """
import os, sys
from app.core.channel.address import channel_address
from app.core.channel.transport import connect
# The tray's own address, as its user's processes compute it (argv: that user's id, the data folder).
channel, _tray = connect(channel_address(sys.platform, sys.argv[1], sys.argv[2]))  # it is reached
try:
    channel.send({"op": "hello", "role": "cli", "pid": os.getpid(), "seq": 1})
    print("answered" if channel.receive(5) is not None else "no answer")
except (EOFError, OSError):
    print("closed")
"""


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root to become nobody")
def test_a_process_of_another_user_is_shut_out_before_a_word(paths: AppPaths, home: Path) -> None:
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    with running_hub(paths) as (hub, seen):
        hub.set_paused(True, by="the test")
        asked = subprocess.run(
            [*nobody, sys.executable, "-c", OTHER_USER_ASKS, str(os.getuid()), os.path.realpath(paths.data_dir)],
            capture_output=True, text=True, timeout=60, env={**os.environ, HOME_ENV: str(home)},
        )  # fmt: skip
        assert asked.stdout.strip() == "closed", (asked.stdout, asked.stderr)
        assert hub.state.paused and seen.questions == []


def test_approve_from_the_cli_asks_no_yes_no_it_names_the_held_command_the_approval_window_shows(
    paths: AppPaths, peers
) -> None:
    """`cowork-terminal approve N` opened a confirm window whose Yes allowed the command on less than the
    approval prompt shows (no environment's values, no typed folder: a red team, 2026-12-06). Now the
    question put to the tray names the held command to show (`Question.shows`); once the tray shows it,
    the CLI is told where, and nothing is decided, even by a Yes said to that question."""
    from types import SimpleNamespace

    from app.core.channel.protocol import IdRequest

    with running_hub(paths) as (hub, seen):
        held = peers("server").begin("rm -rf build", status="waiting")["id"]
        told: list = []
        cli = SimpleNamespace(facts=SimpleNamespace(run_mark=False, pid=None), push=told.append)  # the person's CLI
        hub.questions.ask(cli, "approve", IdRequest(held), 3)
        [question] = seen.questions
        assert question.shows == held
        hub.answer(question, True)  # even a Yes to it (no window asks one) only says where it is shown
        assert hub.held(held) is not None, "nothing was decided"
    assert [answer.to_wire() for answer in told] == [
        {"op": "ack", "seq": 3, "done": True,
         "message": f"Command #{held} is shown in Cowork Terminal's approval window: allow or deny it there."},
    ]  # fmt: skip


def test_the_log_windows_holds_message_fits_its_line_reader_however_long_the_commands() -> None:
    """The log window's line reader drops a line over 1 MiB: five holds of a 300 KB command made one,
    and the window then showed no held command (a review, 2026-12-05)."""
    import json

    from app.core.authority.holds import HeldCommand
    from app.ui.tray.windows import holds_message
    from app.ui.windows.link import MAX_LINE_BYTES

    holds = [
        HeldCommand(
            n,
            f"rm -rf build{n} # " + '"' * 300_000,
            "/tmp",
            [f"K{k}" for k in range(40)],
            "execute_command",
            "deletes",
            "claude-code",
            0.0,
            "d",
            None,  # type: ignore[arg-type]  (only its texts are read)
        )  # fmt: skip
        for n in range(5)
    ]
    line = json.dumps(holds_message(holds))
    assert len(line.encode()) < MAX_LINE_BYTES / 10, len(line)
    told = holds_message(holds)["holds"]
    assert [hold["id"] for hold in told] == list(range(5)) and all(
        h["command"].startswith("rm -rf build") for h in told
    )


def test_a_window_started_by_hand_does_not_say_the_app_is_not_running_when_it_runs_but_cannot_be_asked(
    paths: AppPaths,
) -> None:
    """A review, 2026-12-05: any failure to ask read as "the app is not running"."""
    from app.core import liveness
    from app.ui.windows.controls import RequestControls

    def why_unanswered() -> str:
        controls = RequestControls(paths)
        controls.told_holds()  # asks, off this thread
        deadline = time.monotonic() + 10
        while controls.unvouched().startswith("Asking") and time.monotonic() < deadline:
            time.sleep(0.05)
        return controls.unvouched()

    assert why_unanswered() == "Nobody can answer this command now: Cowork Terminal (the app) is not running."
    lock = liveness.try_hold(paths.tray_lock)  # a tray runs (it holds its lock) but nothing answers
    assert lock is not None and liveness.is_held(paths.tray_lock)
    try:
        said = why_unanswered()
    finally:
        lock.release()
    assert said.startswith("Nobody can answer this command now: Cowork Terminal did not answer ("), said
