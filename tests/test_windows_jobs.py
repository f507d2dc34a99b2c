"""Windows job decisions as values (app/core/execution/windows_jobs.py); the wine lane runs the real
calls (tests/test_wine.py)."""

from __future__ import annotations

from app.core.channel.peer import OwnFacts, PeerFacts, from_container
from app.core.execution.process_marks import reads_marks
from app.core.execution.windows_jobs import ERROR_FILE_NOT_FOUND, keeps_handle, peer_in_job, umbrella_answers

TRAY = OwnFacts("S-1-5-21-1", "C:\\python\\python.exe", False, "C:\\users\\me\\.cowork-terminal")


def test_a_running_commands_job_keeps_its_handle_whatever_the_count_says() -> None:
    assert keeps_handle(False, 0) and keeps_handle(False, None) and keeps_handle(False, 3)


def test_a_finished_commands_job_keeps_its_handle_while_a_process_it_left_behind_runs() -> None:
    assert keeps_handle(True, 1)


def test_a_finished_commands_job_keeps_its_handle_when_the_os_does_not_say_how_many_run() -> None:
    assert keeps_handle(True, None)


def test_a_finished_commands_empty_job_lets_go_of_its_handle() -> None:
    assert not keeps_handle(True, 0)


def test_with_no_job_no_peer_is_inside_one() -> None:
    assert not peer_in_job(True, []) and not peer_in_job(False, [])


def test_a_peer_in_any_of_the_jobs_is_inside() -> None:
    assert peer_in_job(True, [False, True, False])


def test_a_peer_every_job_says_no_to_is_outside() -> None:
    assert not peer_in_job(True, [False, False])


def test_a_failed_is_process_in_job_call_counts_as_inside_not_as_its_false_out_value() -> None:
    """Under Wine a limited-rights handle makes IsProcessInJob fail and leave FALSE in its out value."""
    assert peer_in_job(True, [False, None])


def test_a_peer_the_tray_cannot_open_counts_as_inside_while_the_tray_has_jobs() -> None:
    assert peer_in_job(False, [None])


def test_a_peer_inside_a_job_may_only_pause_and_stop_as_the_hub_reads_it() -> None:
    inside = PeerFacts(4, "S-1-5-21-1", "C:\\python\\python.exe", in_command_job=peer_in_job(True, [None]))
    outside = PeerFacts(5, "S-1-5-21-1", "C:\\python\\python.exe", in_command_job=peer_in_job(True, [False]))
    assert from_container(inside, TRAY) and not from_container(outside, TRAY)


def test_a_server_asks_nothing_more_when_no_tray_of_the_session_holds_the_named_job() -> None:
    """OpenJobObject finds no such name: no tray runs a command in this logon session."""
    assert umbrella_answers(False, ERROR_FILE_NOT_FOUND) == []
    assert not peer_in_job(True, umbrella_answers(False, ERROR_FILE_NOT_FOUND))


def test_a_named_job_a_server_cannot_open_makes_every_peer_unsure_so_inside() -> None:
    """The name exists but the job cannot be asked (access denied, or another object took the name):
    a server then takes no program at the tray's address for its tray (fail closed: a tightening)."""
    access_denied, wrong_kind = 5, 6
    for error in (access_denied, wrong_kind):
        assert umbrella_answers(False, error) == [None]
        assert peer_in_job(True, [False, *umbrella_answers(False, error)])


def test_an_opened_named_job_is_asked_in_turn_and_adds_no_answer_of_its_own() -> None:
    assert umbrella_answers(True, 0) == [] and umbrella_answers(True, ERROR_FILE_NOT_FOUND) == []


def test_marks_are_read_back_on_linux_only_not_from_the_hosts_proc_under_wine() -> None:
    """A Windows Python under Wine sees Linux's /proc: its pids are not Windows pids, so a headless
    server there watches a finished command's job (jobs_left_behind), never marks."""
    assert reads_marks("linux") and not reads_marks("win32") and not reads_marks("darwin")


def test_the_trays_named_job_is_named_after_its_pipe_one_per_user_and_data_folder() -> None:
    """A server knows the name from its own address; two data folders' trays never share one."""
    from app.core.channel.address import channel_address
    from app.core.execution.windows_jobs import umbrella_name

    one = umbrella_name(channel_address("win32", "S-1-5-21-1", "C:\\Users\\ann\\.cowork-terminal").name)
    assert one.startswith(r"Local\cowork-terminal-S-1-5-21-1-") and one.endswith("-commands"), one
    assert umbrella_name(channel_address("win32", "S-1-5-21-1", "D:\\other").name) != one
    assert umbrella_name(channel_address("win32", "S-1-5-21-2", "C:\\Users\\ann\\.cowork-terminal").name) != one
