"""The tray's supervision rules against a real journal: crashes, crash loops, first connections, refusals."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

from app.core import liveness
from app.core.authority.supervisor import (
    CHECK_CLIENT_NAME,
    CRASH_LOOP,
    CRASH_WINDOW_S,
    EXPIRE_HOLDS_EVERY_S,
    FIRST_CONNECTION,
    REFUSAL_NOTICE_GAP_S,
    REFUSED_WHILE_PAUSED,
    SERVER_CRASHED,
    CrashWindow,
    Supervisor,
)
from app.core.journal.store import Journal, Outcome, Status
from app.core.messages import PAUSED_MESSAGE
from app.core.paths import AppPaths
from app.core.policy import approval


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def start_server(journal: Journal, client: str | None = "claude-ai") -> tuple[int, liveness.HeldLock]:
    """Register a server as `serve` does. Pass a connection other than the supervisor's, as real
    servers are other processes: a connection does not see its own commits in `data_version`."""
    lock_key = secrets.token_hex(8)
    lock = liveness.try_hold(journal.paths.server_lock(lock_key))
    server_id = journal.register_server(os.getpid(), headless=False, lock_key=lock_key)
    assert lock is not None
    if client:
        journal.set_server_client(server_id, client, "0.12")
    return server_id, lock


def kinds(notices: list) -> list[str]:
    return [n.kind for n in notices]


def test_the_crash_window_forgets_events_older_than_the_window() -> None:
    window = CrashWindow(60)
    assert window.record(0) == 1
    assert window.record(30) == 2
    assert window.count(59) == 2
    assert window.count(60) == 1
    assert window.count(91) == 0


def test_a_server_that_dies_mid_command_is_reported_once_with_its_interrupted_command(paths: AppPaths) -> None:
    clock = Clock()
    with Journal(paths) as journal:
        supervisor = Supervisor(journal, clock=clock)
        server_id, lock = start_server(journal)
        command_id = journal.begin_command(command="sleep 100", cwd="/", server_id=server_id)
        snapshot, notices = supervisor.poll()
        assert [s.id for s in snapshot.servers] == [server_id] and snapshot.running == 1
        lock.release()  # the process "dies": the OS drops its lock

        snapshot, notices = supervisor.poll()
        assert kinds(notices) == [SERVER_CRASHED]
        assert "claude-ai 0.12" in notices[0].message and "1 running command was interrupted" in notices[0].message
        assert snapshot.servers == () and snapshot.running == 0
        assert snapshot.last_crash is not None and snapshot.last_crash.interrupted == 1
        assert journal.get_command(command_id).status is Status.INTERRUPTED
        assert supervisor.poll()[1] == []


def test_a_crash_another_process_noticed_first_is_still_reported(paths: AppPaths) -> None:
    with Journal(paths) as journal, Journal(paths) as other:
        supervisor = Supervisor(journal)
        _, lock = start_server(journal)
        supervisor.poll()
        lock.release()
        assert other.recover_dead_servers() != []  # e.g. the CLI's Journal.open
        assert kinds(supervisor.poll()[1]) == [SERVER_CRASHED]


def test_a_server_that_exits_normally_is_no_news(paths: AppPaths) -> None:
    with Journal(paths) as journal, Journal(paths) as servers:
        supervisor = Supervisor(journal)
        server_id, lock = start_server(servers)
        supervisor.poll()
        servers.end_server(server_id)
        lock.release()
        snapshot, notices = supervisor.poll()
        assert notices == [] and snapshot.servers == () and snapshot.last_crash is None


def test_a_server_that_just_registered_is_never_called_crashed(paths: AppPaths) -> None:
    with Journal(paths) as journal, Journal(paths) as servers:
        supervisor = Supervisor(journal)
        supervisor.poll()
        server_id, lock = start_server(servers, client=None)  # takes its lock before it writes its row, as serve does
        snapshot, notices = supervisor.poll()
        lock.release()
    assert [s.id for s in snapshot.servers] == [server_id] and notices == []


def test_repeated_crashes_give_one_keeps_crashing_notice_per_window(paths: AppPaths) -> None:
    clock = Clock()
    with Journal(paths) as journal, Journal(paths) as servers:
        supervisor = Supervisor(journal, clock=clock)
        supervisor.poll()
        seen: list[str] = []
        texts: list[str] = []
        for _ in range(4):
            _, lock = start_server(servers, client=None)
            supervisor.poll()
            lock.release()
            clock.now += 10
            notices = supervisor.poll()[1]
            seen += kinds(notices)
            texts += [n.message for n in notices if n.kind == CRASH_LOOP]
        assert seen == [SERVER_CRASHED] * 3 + [CRASH_LOOP] + [SERVER_CRASHED]
        assert str(paths.log_dir) in texts[0], "the notice says where the app log is"
        snapshot, _ = supervisor.poll()
        assert snapshot.crashes_in_window == 4 and snapshot.last_crash is not None

        clock.now += CRASH_WINDOW_S
        snapshot, _ = supervisor.poll()
        assert snapshot.crashes_in_window == 0 and snapshot.last_crash is None, "old crashes stop asking for attention"


def test_opening_the_log_acknowledges_the_last_crash(paths: AppPaths) -> None:
    with Journal(paths) as journal:
        supervisor = Supervisor(journal)
        _, lock = start_server(journal)
        supervisor.poll()
        lock.release()
        assert supervisor.poll()[0].last_crash is not None
        supervisor.acknowledge()
        assert supervisor.poll()[0].last_crash is None


def test_a_client_is_announced_the_first_time_only_even_across_restarts(paths: AppPaths) -> None:
    with Journal(paths) as journal, Journal(paths) as servers:
        supervisor = Supervisor(journal)
        held = [start_server(servers, "claude-ai"), start_server(servers, CHECK_CLIENT_NAME)]  # keep the locks
        notices = supervisor.poll()[1]
        assert kinds(notices) == [FIRST_CONNECTION]
        assert "Claude Desktop (claude-ai 0.12) connected for the first time" in notices[0].message
        held.append(start_server(servers, "claude-ai"))
        assert supervisor.poll()[1] == []
        assert Supervisor(journal).poll()[1] == [], "the tray remembers across restarts"


def test_refusals_while_paused_are_told_at_most_once_per_gap_with_their_count(paths: AppPaths) -> None:
    clock = Clock()
    with Journal(paths) as journal, Journal(paths) as server:

        def refuse(reason: str = PAUSED_MESSAGE) -> None:
            server.begin_command(command="ls", cwd="/", status=Status.REFUSED, reason=reason)

        supervisor = Supervisor(journal, clock=clock)
        supervisor.poll()
        refuse()
        notices = supervisor.poll()[1]
        assert kinds(notices) == [REFUSED_WHILE_PAUSED] and "refused 1 command from Claude" in notices[0].message
        refuse()
        refuse()
        refuse("`cwd` does not exist: /nope")  # other refusals are the model's business, not the user's
        clock.now += 1
        assert supervisor.poll()[1] == []
        clock.now += REFUSAL_NOTICE_GAP_S
        notices = supervisor.poll()[1]
        assert kinds(notices) == [REFUSED_WHILE_PAUSED] and "refused 2 commands" in notices[0].message


def test_the_snapshot_counts_running_and_paused_from_the_journal(paths: AppPaths) -> None:
    with Journal(paths) as journal, Journal(paths) as other:
        supervisor = Supervisor(journal)
        first = other.begin_command(command="sleep 1", cwd="/")
        other.begin_command(command="sleep 2", cwd="/")
        other.set_paused(True)
        snapshot, _ = supervisor.poll()
        assert (snapshot.running, snapshot.paused) == (2, True)
        other.finish_command(first, Outcome(status=Status.FINISHED, exit_code=0))
        other.set_paused(False)
        snapshot, _ = supervisor.poll()
        assert (snapshot.running, snapshot.paused) == (1, False)


def test_the_trays_two_journal_connections_keep_seeing_other_processes_writes(paths: AppPaths) -> None:
    """Regression: opening a second journal in one process used to open and close the database file,
    which dropped the process's SQLite locks; the next process to close its connection then thought it
    was the last one and deleted the WAL, and the tray never saw a write again (`tray --quit` hung)."""
    Journal(paths).close()  # the tray creates the journal first, then each thread opens its own
    with Journal(paths) as monitor, Journal(paths) as actions:
        post = (
            "import sys; from app.core.journal.store import Journal; from app.core.paths import AppPaths\n"
            "with Journal(AppPaths.from_environment()) as j: j.set_setting('probe', sys.argv[1])"
        )
        seen = []
        for value in ("first", "second"):  # two other processes write, one after the other
            before = monitor.data_version()
            subprocess.run([sys.executable, "-c", post, value], check=True, timeout=30)
            assert Path(f"{paths.journal}-wal").exists(), "another process deleted the WAL under live connections"
            assert monitor.data_version() != before
            seen.append(monitor.get_setting("probe"))
        assert seen == ["first", "second"]
        assert actions.is_paused() is False


def hold(journal: Journal, command: str, expires_at: float) -> int:
    """A command held for approval, as `serve` writes it."""
    return journal.begin_command(
        command=command,
        cwd="/",
        status=Status.WAITING,
        reason="rm -r: recursive removal",
        confirmation_id=approval.new_confirmation_id(),
        hold_expires_at=expires_at,
        client_name="claude-ai",
    )


def test_a_hold_the_user_already_answered_no_longer_counts_as_waiting(paths: AppPaths) -> None:
    with Journal(paths) as journal, Journal(paths) as server:
        supervisor = Supervisor(journal)
        answered = hold(server, "rm -rf build", time.time() + 300)
        hold(server, "rm -rf dist", time.time() + 300)
        assert supervisor.poll()[0].waiting == 2
        server.decide(answered, allowed=True, by="user (log window)")  # the model never calls terminal_confirm
        snapshot, _ = supervisor.poll()
        assert server.get_command(answered).status is Status.WAITING, "the row itself stays waiting"
        assert snapshot.waiting == 1


def test_an_expired_hold_stops_counting_at_once_and_is_closed_by_the_next_sweep(paths: AppPaths) -> None:
    clock = Clock()
    clock.now = time.time()
    with Journal(paths) as journal, Journal(paths) as server:
        supervisor = Supervisor(journal, clock=clock)
        held = hold(server, "rm -rf build", clock.now + 10)
        assert supervisor.poll()[0].waiting == 1

        clock.now += 11  # the hold ran out, and the last sweep is more than EXPIRE_HOLDS_EVERY_S ago
        snapshot, _ = supervisor.poll()
        assert snapshot.waiting == 0
        assert server.get_command(held).status is Status.REFUSED, "the sweep closed it"

        late = hold(server, "rm -rf dist", clock.now + 1)
        assert supervisor.poll()[0].waiting == 1
        clock.now += 2  # expired, and the last sweep was 2 s ago: not swept on every poll
        snapshot, _ = supervisor.poll()
        assert snapshot.waiting == 0, "an expired hold stops counting without waiting for the sweep"
        assert server.get_command(late).status is Status.WAITING
        clock.now += EXPIRE_HOLDS_EVERY_S
        supervisor.poll()
        assert server.get_command(late).status is Status.REFUSED
        assert "expired" in (server.get_command(late).reason or "")


def test_notices_without_a_menu_send_the_user_to_the_log_windows_pause_switch(paths: AppPaths) -> None:
    with Journal(paths) as journal, Journal(paths) as server:
        supervisor = Supervisor(journal, has_menu=False)
        held = [start_server(server, "claude-ai")]
        notices = supervisor.poll()[1]
        assert notices[0].title == "Claude Desktop connected to Cowork Terminal"
        assert "activity log window" in notices[0].message and "menu" not in notices[0].message
        server.begin_command(command="ls", cwd="/", status=Status.REFUSED, reason=PAUSED_MESSAGE)
        notices = supervisor.poll()[1]
        assert "Pause in the activity log window" in notices[0].message and "menu" not in notices[0].message
        assert held


def age(paths: AppPaths, command_id: int, days: float) -> None:
    import sqlite3

    with sqlite3.connect(paths.journal) as db:
        db.execute("UPDATE commands SET created_at = created_at - ? WHERE id = ?", (days * 86400, command_id))


def finished(journal: Journal, command: str) -> int:
    command_id = journal.begin_command(command=command, cwd="/")
    journal.finish_command(command_id, Outcome(status=Status.FINISHED, exit_code=0))
    return command_id


def test_the_tray_forgets_old_history_and_whole_outputs_at_its_start_and_then_hourly(paths: AppPaths) -> None:
    from app.core.authority.supervisor import UPKEEP_EVERY_S

    clock = Clock()
    clock.now = time.time()
    paths.outputs.mkdir(parents=True, exist_ok=True)
    old_output = paths.outputs / "old-command.log"
    old_output.write_text("the whole output of a command from last month")
    os.utime(old_output, (clock.now - 8 * 86400, clock.now - 8 * 86400))
    with Journal(paths) as journal:
        age(paths, finished(journal, "echo from last month"), days=40)
        finished(journal, "echo today")
        supervisor = Supervisor(journal, clock=clock)
        supervisor.poll()
        assert [r.command for r in journal.recent_commands()] == ["echo today"]
        assert not old_output.exists(), "whole outputs are kept 7 days"

        age(paths, finished(journal, "echo aged since"), days=40)
        clock.now += UPKEEP_EVERY_S / 2
        supervisor.poll()
        assert len(journal.recent_commands()) == 2, "not at every poll: the deletes hold the servers' rows"
        clock.now += UPKEEP_EVERY_S / 2
        supervisor.poll()
        assert [r.command for r in journal.recent_commands()] == ["echo today"]


def test_a_running_tray_applies_retention_which_servers_bound_to_it_leave_to_it(home: Path, paths: AppPaths) -> None:
    from tests.desktop_env import wait_for
    from tests.tray_process import running_tray

    with Journal(paths) as journal:
        age(paths, finished(journal, "echo from last month"), days=40)
        finished(journal, "echo today")
    with running_tray(home):

        def commands() -> list[str]:
            with Journal(paths) as journal:
                return [r.command for r in journal.recent_commands()]

        wait_for(lambda: commands() == ["echo today"], timeout_s=10)
