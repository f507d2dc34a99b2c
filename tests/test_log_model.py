"""The log window's pure logic: how rows read, which rows the window holds, and where changes go."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import datetime, timedelta

import pytest

from app.core.journal.store import CommandRecord, Journal, Outcome, ServerRecord, Status
from app.core.messages import CANCEL_REASON, MODEL_STOP_REASON, PAUSE_STOP_REASON, PAUSED_MESSAGE, USER_STOP_REASON
from app.core.paths import AppPaths
from app.ui.windows.log_model import (
    STATUS_FILTERS,
    STATUS_STYLES,
    Diff,
    Filter,
    RowWindow,
    describe_activity,
    describe_agents,
    detail_lines,
    format_duration,
    format_time,
    one_line,
    outcome_text,
    row_for,
    short_path,
    size_text,
    status_label,
)

NOW = datetime(2026, 3, 14, 15, 9, 26).timestamp()


def record(command_id: int = 1, **changes: object) -> CommandRecord:
    base = CommandRecord(
        id=command_id,
        server_id=1,
        server_pid=4242,
        client_name="claude-ai",
        client_version="0.14.2",
        tool="execute_command",
        command=f"echo {command_id}",
        cwd="/home/ana/project",
        env_keys=[],
        timeout_ms=30_000,
        tier=None,
        status=Status.FINISHED,
        reason=None,
        exit_code=0,
        timed_out=False,
        created_at=NOW - 10,
        started_at=NOW - 10,
        ended_at=NOW - 9,
        duration_ms=1000.0,
        stdout_bytes=3,
        stderr_bytes=0,
        stdout_preview="hi\n",
        stderr_preview="",
        stop_requested_at=None,
        confirmation_id=None,
        decision=None,
        decided_by=None,
        decided_at=None,
        hold_expires_at=None,
    )
    return replace(base, **changes)


def records(ids: range | list[int], **changes: object) -> list[CommandRecord]:
    return [record(i, **changes) for i in sorted(ids, reverse=True)]


def apply(view: list[int], diff: Diff) -> list[int]:
    """What the window does with a diff, on a plain list of ids."""
    removed = set(diff.removed)
    view = [i for i in view if i not in removed]
    for row in diff.updated:
        assert row.id in view, "an update must name a row the view holds"
    for index, row in diff.inserted:
        view.insert(index, row.id)
    return view


def test_every_status_has_its_own_words_and_colours() -> None:
    assert set(STATUS_STYLES) == set(Status)
    looks = {(s.foreground, s.background) for s in STATUS_STYLES.values()}
    labels = {s.label for s in STATUS_STYLES.values()}
    assert len(looks) == len(Status) and len(labels) == len(Status)


def test_a_stopped_row_says_who_stopped_it() -> None:
    assert status_label(record(status=Status.KILLED, reason=USER_STOP_REASON)) == "■ Stopped by the user"
    assert status_label(record(status=Status.KILLED, reason=PAUSE_STOP_REASON)) == "■ Stopped by pause"
    assert status_label(record(status=Status.KILLED, reason=CANCEL_REASON)) == "■ Cancelled by the agent"
    assert status_label(record(status=Status.KILLED, reason=MODEL_STOP_REASON)) == "■ Stopped by the agent"
    assert status_label(record(status=Status.KILLED, reason="something else")) == "■ Stopped"
    assert status_label(record(status=Status.REFUSED, reason=PAUSED_MESSAGE)) == "⊘ Refused: paused"
    assert status_label(record(status=Status.RUNNING, stop_requested_at=NOW)) == "● Stopping…"


def test_a_deny_reads_denied_by_you_and_an_unanswered_hold_reads_not_answered_in_time() -> None:
    from app.core.messages import DENIED_BY_REASON, HOLD_EXPIRED_REASON, PROMPT_DECIDED_BY, REQUEST_DECIDED_BY

    by_you = DENIED_BY_REASON.format(who=PROMPT_DECIDED_BY)  # as the server records the user's Deny
    assert status_label(record(status=Status.REFUSED, reason=by_you)) == "⊘ Denied by you"
    by_request = DENIED_BY_REASON.format(who=REQUEST_DECIDED_BY)
    assert status_label(record(status=Status.REFUSED, reason=by_request)) == "⊘ Denied"
    assert status_label(record(status=Status.REFUSED, reason=HOLD_EXPIRED_REASON)) == "◷ Not answered in time"


def test_details_speak_plainly_no_pid_no_exit_code_for_a_success_and_bytes_in_words() -> None:
    lines = {line.label: line.value for line in detail_lines(record(server_pid=4242), now=NOW)}
    assert "pid" not in lines["Agent"] and "4242" not in lines["Agent"]
    assert outcome_text(record()) == "✓ Finished"
    assert outcome_text(record(status=Status.FAILED, exit_code=2)) == "✗ Failed: the program reported error 2"
    assert (size_text(1), size_text(3)) == ("1 byte", "3 bytes")


def test_a_multi_line_command_reads_on_one_line_and_a_long_one_is_cut() -> None:
    assert one_line("cat <<'EOF'\nhello\nEOF\n") == "cat <<'EOF' ⏎ hello ⏎ EOF"
    long = one_line("x" * 500, limit=50)
    assert len(long) == 50 and "…" in long


def test_a_long_command_keeps_its_dangerous_end_in_the_list() -> None:
    """Cut at its end, `curl ... | sh` read as a harmless download (issue 24, item 5)."""
    command = "curl -fsSL https://example.com/" + "a" * 120 + "/install.sh | sh"
    shown = one_line(command, limit=80)
    assert (
        len(shown) == 80 and shown.startswith("curl -fsSL https://example.com/") and shown.endswith("install.sh | sh")
    )


@pytest.mark.parametrize(
    ("ms", "text"),
    [(None, ""), (41, "41 ms"), (8310, "8.3 s"), (94_200, "1 min 34 s"), (3_725_000, "1 h 02 min")],
)
def test_durations_read_in_the_unit_a_person_would_use(ms: float | None, text: str) -> None:
    assert format_duration(ms) == text


def test_times_from_another_day_carry_their_date() -> None:
    assert format_time(NOW - 60, NOW) == "15:08:26"
    yesterday = (datetime.fromtimestamp(NOW) - timedelta(days=1)).timestamp()
    assert format_time(yesterday, NOW) == "13 Mar 15:09"
    assert format_time(datetime(2025, 12, 31, 23, 0).timestamp(), NOW) == "2025-12-31 23:00"


def test_the_home_folder_shows_as_a_tilde_but_a_lookalike_does_not() -> None:
    assert short_path("/home/ana/project", "/home/ana") == "~/project"
    assert short_path("/home/ana", "/home/ana") == "~"
    assert short_path("/home/anabel/x", "/home/ana") == "/home/anabel/x"
    assert short_path(None, "/home/ana") == ""


def test_a_running_row_counts_its_seconds_and_a_finished_one_shows_its_duration() -> None:
    running = row_for(
        record(status=Status.RUNNING, started_at=NOW - 12.34, duration_ms=None, exit_code=None),
        now=NOW,
        home="/home/ana",
    )
    assert running.values[-1] == "12.3 s" and running.values[-2] == ""
    window = RowWindow(home="/home/ana")
    window.reset([record(1, status=Status.RUNNING, started_at=NOW - 1, exit_code=None)], page_size=10, now=NOW)
    changed = window.refresh_durations(now=NOW + 5)
    assert [r.values[-1] for r in changed] == ["6.0 s"]
    assert window.refresh_durations(now=NOW + 5) == [], "an unchanged text costs no widget update"
    finished = row_for(record(), now=NOW, home="/home/ana")
    assert finished.values == ("15:09:16", "Claude Desktop", "✓ Finished", "echo 1", "~/project", "", "1.0 s")


def test_the_filter_agrees_with_the_journal_query_on_the_same_rows(paths: AppPaths) -> None:
    commands = [("Echo HELLO", "/srv/app"), ("ls", "/home/ÉMILE/hello"), ("make", None), ("npm test", "/x/Héllo")]
    with Journal.open(paths) as journal:
        for index, (command, cwd) in enumerate(commands):
            cid = journal.begin_command(command=command, cwd=cwd)
            status = Status.FINISHED if index % 2 else Status.FAILED
            journal.finish_command(cid, Outcome(status=status, exit_code=index % 2))
        everything = journal.recent_commands(limit=100)
        for text in ("hello", "HELLO", "émile", "ÉMILE", "héllo", "srv", "", "nothing"):
            for statuses in ((), ("failed",), ("finished", "failed")):
                wanted = Filter(text=text, statuses=statuses)
                from_sql = [r.id for r in journal.recent_commands(limit=100, **wanted.query())]
                assert [r.id for r in everything if wanted.matches(r)] == from_sql, (text, statuses)


def test_opening_holds_one_page_and_knows_whether_older_rows_exist() -> None:
    window = RowWindow()
    window.reset(records(range(1, 12)), page_size=10, now=NOW)
    assert window.ids == list(range(11, 1, -1)) and window.has_older and not window.has_newer
    window.reset(records(range(1, 5)), page_size=10, now=NOW)
    assert window.ids == [4, 3, 2, 1] and not window.has_older


def test_scrolling_far_back_drops_the_newest_rows_so_memory_stays_bounded() -> None:
    window = RowWindow(max_rows=25)
    view = [r.id for r in window.reset(records(range(90, 101)), page_size=10, now=NOW)]
    assert view == list(range(100, 90, -1))
    for _ in range(5):
        older = records(range(window.oldest_id - 11, window.oldest_id))
        view = apply(view, window.append_older(older, page_size=10, now=NOW))
        assert view == window.ids and len(view) <= 25
    assert window.has_newer and window.has_older
    assert view == list(range(65, 40, -1))
    assert window.merge([record(101)], now=NOW) == Diff(), "a live row above a slice of the past waits"


def test_live_rows_go_in_order_and_the_oldest_fall_off_past_the_cap() -> None:
    window = RowWindow(max_rows=6)
    view = [r.id for r in window.reset(records([10, 8, 6, 4]), page_size=10, now=NOW)]
    diff = window.merge([record(12), record(11), record(9, status=Status.RUNNING, exit_code=None)], now=NOW)
    view = apply(view, diff)
    assert view == window.ids == [12, 11, 10, 9, 8, 6]
    assert window.has_older, "rows that fell off come back by scrolling"
    assert set(diff.removed) == {4}


def test_a_row_that_changes_is_updated_and_one_that_leaves_the_filter_is_removed() -> None:
    window = RowWindow()
    window.filter = Filter(statuses=("running",))
    running = record(5, status=Status.RUNNING, exit_code=None, duration_ms=None)
    view = [r.id for r in window.reset([running], page_size=10, now=NOW)]
    diff = window.merge([replace(running, stop_requested_at=NOW)], now=NOW)
    assert [r.values[2] for r in diff.updated] == ["● Stopping…"]
    assert window.merge([replace(running, stop_requested_at=NOW)], now=NOW) == Diff()
    view = apply(view, window.merge([replace(running, status=Status.KILLED)], now=NOW))
    assert view == window.ids == []


def test_the_status_filter_offers_groups_and_each_status() -> None:
    labels = [f.label for f in STATUS_FILTERS]
    assert labels[0] == "All commands" and len(set(labels)) == len(labels)
    singles = {f.statuses[0] for f in STATUS_FILTERS if len(f.statuses) == 1}
    assert singles == {s.value for s in Status}
    assert all(f.keeps(Status.FAILED) for f in STATUS_FILTERS if not f.statuses)


def test_connected_agents_and_activity_read_as_sentences() -> None:
    def server(sid: int, name: str | None, started: float) -> ServerRecord:
        return ServerRecord(
            id=sid,
            pid=100 + sid,
            client_name=name,
            client_version="1.0" if name else None,
            headless=False,
            lock_key=None,
            started_at=started,
            last_seen=started,
            ended_at=None,
            state="live",
        )

    assert describe_agents([], NOW) == "No agent is connected right now."
    text = describe_agents(
        [server(1, "claude-ai", NOW - 60), server(2, "claude-ai", NOW - 30), server(3, None, NOW)], NOW
    )
    assert text == "Connected agents: Claude Desktop 1.0 ×2 (since 15:08:26), an agent starting up (since 15:09:26)"
    active = [record(1, status=Status.RUNNING), record(2, status=Status.WAITING), record(3, status=Status.RUNNING)]
    assert describe_activity(active) == "2 commands running · 1 waiting for your approval"
    assert describe_activity([]) == "Nothing running."


def test_details_name_the_env_keys_the_reason_and_the_timings() -> None:
    failed = record(status=Status.FAILED, exit_code=None, reason="killed by SIGSEGV", env_keys=["CI", "TOKEN"])
    lines = {line.label: line.value for line in detail_lines(failed, now=time.time())}
    assert lines["Why"] == "Ended by the signal SIGSEGV"
    assert "extra environment: CI, TOKEN" in lines["Settings"]
    assert "took 1.0 s" in lines["When"]
    held = record(status=Status.RUNNING, created_at=NOW - 30, started_at=NOW - 5, ended_at=None)
    when = {line.label: line.value for line in detail_lines(held, now=NOW)}["When"]
    assert "waited 25.0 s for approval" in when and "running for 5.0 s" in when


def test_russian_says_one_agent_in_the_singular_and_starts_the_running_line_with_a_capital() -> None:
    from app.core import i18n

    one = ServerRecord(
        id=1, pid=101, client_name="claude-ai", client_version="0.14", headless=False, lock_key=None,
        started_at=NOW - 60, last_seen=NOW, ended_at=None, state="live",
    )  # fmt: skip
    i18n.use_language("ru")
    try:
        assert describe_agents([one], now=NOW).startswith("Подключённый агент: Claude Desktop 0.14")
        running = record(status=Status.RUNNING, ended_at=None)
        assert describe_activity([running]) == "Выполняется 1 команда"
    finally:
        i18n.use_language("en")


def test_a_waiting_row_shows_the_trays_copy_and_one_nobody_vouches_for_shows_why_not_the_journals_text() -> None:
    from app.ui.windows.controls import HeldText, as_told

    rewritten = record(7, status=Status.WAITING, command="ls -la", cwd="/tmp", reason="harmless, allow it")
    said = "Nobody can answer this command now"
    held = as_told(rewritten, {7: HeldText("rm -rf cache", "/home/a/p", "Deletes a folder")}, lambda: said)
    assert (held.command, held.cwd, held.reason) == ("rm -rf cache", "/home/a/p", "Deletes a folder")
    for holds in (None, {}, {8: HeldText("rm -rf other", "/")}):
        shown = as_told(rewritten, holds, lambda: said)
        assert (shown.command, shown.cwd, shown.reason, shown.status) == (said, None, None, Status.WAITING)
    finished = record(9, status=Status.FINISHED, command="ls -la")
    assert as_told(finished, None, lambda: said) is finished, "only waiting rows are the tray's to vouch for"


def test_the_status_line_says_the_historys_size_what_shows_and_that_older_rows_follow() -> None:
    from app.ui.windows.log_list import list_status

    assert list_status(1, 1, False, True) == "1 command in the history, showing 1"
    assert (
        list_status(1500, 200, True, True) == "1,500 commands in the history, showing 200 · scroll down for older ones"
    )
    assert (
        list_status(1500, 3, True, False)
        == "1,500 commands in the history, 3+ matching the filter · scroll down for older ones"
    )
