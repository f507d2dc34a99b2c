"""A result, list or answer too big for one message between the tray and its server (20 MiB; 1 MiB
until 2026-12-05, when the menu's largest output budget could not carry 600 KB).

Found by calling a real tray: such a result made the tray close its server's connection, and the
model then read that the app went away and stopped every command (it had not: the tray lived on,
its jobs too), and the next call was refused as if no tray ran; `approvals` said nothing waited
while five commands did. Now the call that is too big gets an error result saying so and what to
ask instead, the link goes on, lists and the session's lines are fitted, and the CLI says when it
could not ask.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from app.core import liveness
from app.core.authority.hub import Hub
from app.core.channel.wire import MAX_FRAME_BYTES
from app.core.execution.output import parse_budget
from app.core.journal.store import Journal
from app.core.paths import AppPaths
from tests.in_process_server import serving
from tests.stdio_client import connect, run
from tests.test_authority import cli
from tests.tray_process import running_tray

pytestmark = pytest.mark.anyio

TOO_BIG = "more than Cowork Terminal can pass on (20 MiB)"
WENT_AWAY = ("went away", "not running", "stopped because the Cowork Terminal app stopped")


def reasons(paths: AppPaths) -> list[str]:
    with Journal.open(paths) as journal:
        return [row.reason or "" for row in journal.recent_commands()]


def nothing_says_the_app_went_away(paths: AppPaths, log: Path) -> None:
    said = [reason for reason in reasons(paths) if any(words in reason for words in WENT_AWAY)]
    assert said == [], said
    # A send to a server that left is closed too (a line with "closing"): only the frame's limit counts.
    closed = [line for line in log.read_text(errors="replace").splitlines() if "byte limit); closing" in line]
    assert closed == [], closed


async def text_of(client: Any, tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    result = await client.call_tool(tool, arguments)
    return bool(result.is_error), result.content[0].text


async def test_the_largest_results_the_menus_biggest_budget_makes_arrive_whole_and_the_jobs_go_on(
    home: Path, paths: AppPaths, tmp_path: Path
) -> None:
    """Under the menu's "Up to 1 MB of output", 700 KB printed was 1.4 MB once in the result twice:
    the model got an error instead of its output (a frame was 1 MiB). The worst the budget makes, a
    megabyte of quotes and one of control characters (each 6 bytes in the frame), arrives too."""
    log, marker = tmp_path / "tray.log", tmp_path / "other-done"
    with running_tray(home, log=log) as tray:
        assert cli(home, "output-budget", "seed").returncode == 0
        async with connect(home, headless=False) as client:
            other = await run(client, {"command": f"sleep 4; echo done > {marker}", "background": True})
            assert other["status"] == "running", other

            plain = await run(client, {"command": "head -c 700000 /dev/zero | tr '\\0' a"})
            assert plain.get("stdout") == "a" * 700_000, str(plain)[:300]

            worst = "head -c 2000000 /dev/zero | tr '\\0' '\"'; head -c 2000000 /dev/zero | tr '\\0' '\\1' >&2"
            error, text = await text_of(client, "execute_command", {"command": worst})
            assert not error, text[:500]
            result = json.loads(text)
            assert result["stdout"].startswith('"' * 1000) and result["stdout"].endswith("[stdout truncated at 1MB]")
            assert result["stderr"].startswith("\u2401" * 1000) and "bytes of stderr omitted" in result["stderr"]
            big = result["jobId"]

            error, text = await text_of(client, "command_output", {"jobId": big, "offset": 0, "limit": 10_000_000})
            said = json.loads(text)["output"] if not error else text[:300]
            assert said == '"' * (1024 * 1024 // 2), said[:300]  # the budget's 1 MiB: a quote counts twice
            error, text = await text_of(client, "command_output", {"jobId": big, "offset": 0, "limit": 1000})
            assert not error and json.loads(text)["output"] == '"' * 1000

            # The session's 500 lines of 4 KB: 2 MB, fitted to what its scrollback keeps.
            lines = "for i in $(seq 1 500); do head -c 4096 /dev/zero | tr '\\0' a; echo; done"
            error, text = await text_of(client, "terminal_run", {"command": lines})
            assert not error, text[:500]
            error, text = await text_of(client, "terminal_read_scrollback", {"lines": 500})
            assert not error and 50_000 < len(text) <= 101_000 and "left out here" in text, (error, len(text))

            waited = json.loads((await client.call_tool("command_wait", {"jobId": other["jobId"]})).content[0].text)
            assert (waited["status"], waited["exitCode"]) == ("finished", 0), waited
        assert tray.poll() is None
    assert marker.read_text() == "done\n"
    nothing_says_the_app_went_away(paths, log)


async def test_command_list_of_many_jobs_in_a_long_folder_fits_and_the_jobs_run_on(
    home: Path, paths: AppPaths, tmp_path: Path
) -> None:
    """51 jobs whose folder is 3,900 bytes of quotes: 1.2 MB of JSON as they were listed whole (31 run:
    a server may have 32 going, and one more is run after)."""
    deep = tmp_path
    while len(str(deep).encode()) + 256 < 4000:
        deep = deep / ('"' * 255)
    deep.mkdir(parents=True)
    log = tmp_path / "tray.log"
    with running_tray(home, log=log) as tray:
        async with connect(home, headless=False) as client:
            for i in range(20):
                assert (await run(client, {"command": f"true {i}", "cwd": str(deep)}))["status"] == "finished"
            for i in range(31):
                started = await run(client, {"command": f"sleep 60 # {i}", "cwd": str(deep), "background": True})
                assert started["status"] == "running", started
            error, text = await text_of(client, "command_list", {})
            assert not error, text[:500]
            listed = json.loads(text)["jobs"]
            assert len(listed) == 51 and all(len(job["cwd"]) < 400 for job in listed), len(listed)
            assert sum(job["status"] == "running" for job in listed) == 31
            again = await run(client, {"command": "echo again"})
            assert again.get("stdout") == "again\n", again
            error, text = await text_of(client, "command_list", {})
            assert sum(job["status"] == "running" for job in json.loads(text)["jobs"]) == 31, "untouched"
            stopped = await client.call_tool("command_stop", {"jobId": started["jobId"]})
            assert not stopped.is_error

            # The red team's first repro, under the default budget (30,000 characters).
            lines = "for i in $(seq 1 500); do head -c 4096 /dev/zero | tr '\\0' a; echo; done"
            error, text = await text_of(client, "terminal_run", {"command": lines})
            assert not error, text[:300]
            error, text = await text_of(client, "terminal_read_scrollback", {"lines": 500})
            assert not error and len(text) <= 30_000 and "left out here" in text, (error, len(text), text[:300])
        assert tray.poll() is None
        # Looked at while the tray runs: its 30 jobs still running end, rightly, "because the app
        # stopped" when it quits below (CI once read them after the quit).
        nothing_says_the_app_went_away(paths, log)


async def test_the_scrollback_is_fitted_to_the_users_output_budget(home: Path, hub: Hub) -> None:
    hub.set_output_budget(parse_budget(3000))
    async with serving(home, bound=True) as client:
        lines = "for i in $(seq 1 300); do echo line-$i-$(head -c 200 /dev/zero | tr '\\0' x); done"
        error, text = await text_of(client, "terminal_run", {"command": lines})
        assert not error, text[:300]
        error, text = await text_of(client, "terminal_read_scrollback", {"lines": 300})
    assert not error and len(text) <= 3000, len(text)
    assert "left out here" in text and "fewer lines" in text, text
    assert text.rstrip().endswith("x"), "the last lines are kept"
    assert "line-300-" in text


async def test_approvals_lists_commands_whose_holds_are_over_one_message(
    home: Path, paths: AppPaths, tmp_path: Path
) -> None:
    """Five holds of 100,000 quotes each: 2 MB as the tray answered `holds` whole."""
    log = tmp_path / "tray.log"
    with running_tray(home, log=log) as tray:
        async with connect(home, headless=False) as client:
            ids = []
            for i in range(5):
                held = await run(client, {"command": f"sudo true # {i} " + '"' * 100_000, "background": True})
                assert held.get("status") == "waiting", str(held)[:300]
                ids.append(held["jobId"])
            done = cli(home, "approvals")
            assert done.returncode == 0, done.stderr
            assert "Nothing is waiting" not in done.stdout
            assert [line.split()[0] for line in done.stdout.splitlines() if line.startswith("#")] == [
                f"#{i}" for i in ids
            ]
            assert "characters of" in done.stdout, "each command cut, with a marker"
            again = await run(client, {"command": "echo again"})
            assert again.get("stdout") == "again\n", again
            for job in ids:
                await client.call_tool("command_stop", {"jobId": job})
        assert tray.poll() is None
    nothing_says_the_app_went_away(paths, log)


def test_approvals_says_it_could_not_ask_a_tray_that_runs_but_does_not_answer(paths: AppPaths, home: Path) -> None:
    """A tray holds its lock but is not listening (starting, or stuck): nothing is known to wait."""
    lock = liveness.try_hold(paths.tray_lock)
    assert lock is not None
    try:
        started = time.monotonic()
        done = cli(home, "approvals")
    finally:
        lock.release()
    assert done.returncode == 1 and "Nothing is waiting" not in done.stdout, (done.stdout, done.stderr)
    assert "Could not ask Cowork Terminal" in done.stderr, done.stderr
    assert time.monotonic() - started < 30
    assert cli(home, "approvals").stdout == "Nothing is waiting for your approval.\n", "no tray: none can wait"


def test_a_message_too_big_for_a_frame_is_answered_or_dropped_and_the_connection_stays() -> None:
    """Under the command host's check, the hub's own: whatever it pushes or answers too big (a call's
    result, an answer, a push) costs that message only, never the connection (a real socket pair)."""
    from multiprocessing import Pipe

    from app.core.authority.connection import Peer
    from app.core.channel.call_messages import CallProgress, CallResult
    from app.core.channel.peer import PeerFacts
    from app.core.channel.protocol import Ack
    from app.core.channel.transport import Accepted
    from app.core.channel.wire import Channel

    ours, theirs = Pipe()
    peer = Peer(Accepted(Channel(ours, tray_end=True), PeerFacts(pid=None, uid=None, executable=None)))
    writer = threading.Thread(target=peer.write_loop, daemon=True)
    writer.start()
    far = Channel(theirs, tray_end=False)
    try:
        peer.push(CallResult("c1", {"content": [{"type": "text", "text": "a" * MAX_FRAME_BYTES}]}))
        peer.push(CallProgress("c2", 1.0, None, "b" * MAX_FRAME_BYTES))  # dropped: nobody waits for it
        peer.push(CallProgress("c2", 2.0))
        peer.answer(Ack(7, {"message": '"' * (MAX_FRAME_BYTES // 2)}))
        came = [far.receive(5.0) for _ in range(3)]  # the answer goes at once, the pushes queued
    finally:
        peer.stop_writing()
        writer.join(5)
    by_op = {message["op"]: message for message in came if message is not None}
    result, progress, answer = by_op.get("call_result"), by_op.get("call_progress"), by_op.get("error")
    assert result is not None and result["op"] == "call_result" and result["result"]["isError"] is True
    assert TOO_BIG in result["result"]["content"][0]["text"]
    assert progress is not None and (progress["op"], progress["progress"]) == ("call_progress", 2.0)
    assert answer is not None and answer["op"] == "error" and answer["seq"] == 7, answer
    assert "nothing changed" in answer["message"]
    assert not peer.channel.closed


async def test_a_call_too_big_for_one_message_to_the_tray_says_so_and_not_to_try_again_as_it_was(
    home: Path, paths: AppPaths
) -> None:
    """A red team, 2026-12-05: a 5 MB `env` value was answered "could not be reached ... Try again in a
    moment", which no retry could pass. The tray reads at most 1 MiB from any peer (it sends up to 20)."""
    with running_tray(home):
        async with connect(home, headless=False) as client:
            big = await text_of(client, "execute_command", {"command": "true", "env": {"NOTE": "x" * 2_000_000}})
            after = await run(client, {"command": "echo fine"})
    assert big[0] and "this call is 2,0" in big[1] and "can pass on (1 MiB)" in big[1] and "Send less" in big[1], big
    assert "Try again in a moment" not in big[1]
    assert after["stdout"] == "fine\n", after


def test_the_largest_output_budget_fits_one_message_whatever_the_command_printed() -> None:
    """The budget's 2,000,000 characters, half emoji (4 bytes in each copy) and half quotes (escaped
    twice in the text copy), as the tools return them: under the frame's limit, so no result the
    budgets make is ever refused (raising the budget's maximum fails here first)."""
    from app.core.authority.oversized import frame_size
    from app.core.channel.call_messages import CallResult
    from app.core.execution.output import MAX_BUDGET_CHARS
    from app.server.tools import CommandResult, reply

    half = MAX_BUDGET_CHARS // 2
    result = reply(CommandResult.model_construct(stdout="\U0001f600" * half, stderr='"' * half, exitCode=0))
    size = frame_size(CallResult("call-1", result.model_dump(by_alias=True, mode="json", exclude_none=True)))
    assert 14_000_000 < size <= MAX_FRAME_BYTES, size


def test_a_result_too_big_names_its_job_and_the_limit() -> None:
    from app.core.authority.oversized import too_big_result

    said = too_big_result("command_wait", 25_000_000, {"structuredContent": {"jobId": 4, "status": "running"}})
    text = said["content"][0]["text"]
    assert said["isError"] and text.startswith("Error executing tool command_wait: the result of this call was 25,0")
    assert TOO_BIG in text and "the command is job 4 (running)" in text and "command_output" in text, text
