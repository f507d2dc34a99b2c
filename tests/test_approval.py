"""Held commands: only the person at the keyboard answers, through the tray's own interface.

A real tray process holds the commands of real `serve` processes. Denying goes through the CLI
(a tightening, applied at once); allowing is a click on Allow in the tray's approval prompt, under
Xvfb, which is the only way a held command can be allowed. What a deny, no answer or a withdrawal
does to a held command is tested with the tray's hub in this process (`hub`, and a server bound to
it as the tray's runners are), denied through the hub's own call for the CLI's deny.

Held commands' other edges (a deny, confirm after a deny, cancel, the app's own folder, the approval
mode of a headless server) are tested in this process: tests/test_command_service_inprocess.py.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from app.core.authority.hub import Hub
from app.core.authority.state import with_changes
from app.core.channel.protocol import StatePush
from app.core.journal.store import Journal, Status
from app.core.messages import CANCEL_REASON, PAUSED_MESSAGE, PROMPT_DECIDED_BY, SETTINGS_CHANGED_MESSAGE
from app.core.paths import AppPaths
from app.core.policy.approval import HOLD_LIFETIME_S
from tests.in_process_server import allow, allow_when_held, came, deny, held_by, holds_shown, ids_given_again, serving
from tests.stdio_client import connect, run
from tests.test_authority import cli, click_allow_when_held, holds
from tests.tray_process import running_tray

pytestmark = pytest.mark.anyio


@pytest.fixture
def tray(home: Path) -> Iterator[subprocess.Popen]:
    """The tray app, running for real (no display: it holds commands; answers come from the CLI)."""
    with running_tray(home) as process:
        yield process


@pytest.fixture
def tray_with_windows(home: Path, display: str) -> Iterator[str]:
    """The tray app on Xvfb: its approval prompt is a real window the test clicks in."""
    with running_tray(home, display=display):
        yield display


def set_window(home: Path, seconds: float) -> None:
    """A shorter approval wait asks the user sooner: a tightening, applied by the tray at once."""
    done = cli(home, "approval-mode", "--window", str(seconds))
    assert done.returncode == 0, done.stderr


def rows(paths: AppPaths) -> list:
    with Journal.open(paths) as journal:
        return journal.recent_commands()


def held_id(error: str) -> str:
    assert "confirmation_id" in error, error
    return error.split("confirmation_id ")[1].split()[0]


@pytest.mark.gui
async def test_an_allowed_destructive_command_runs_and_the_journal_says_who_approved(
    home: Path, paths: AppPaths, tray_with_windows: str, tmp_path: Path
) -> None:
    (tmp_path / "victim" / "sub").mkdir(parents=True)
    seen: list = []

    async def allow_it() -> None:  # the user clicks Allow in the prompt the tray opened
        seen.append(await click_allow_when_held(paths, tray_with_windows))

    async with connect(home, headless=False) as client, anyio.create_task_group() as group:
        group.start_soon(allow_it)
        result = await run(client, {"command": "rm -rf victim", "cwd": str(tmp_path)})
    assert result["exitCode"] == 0
    assert not (tmp_path / "victim").exists()
    assert seen[0]["command"] == "rm -rf victim" and "recursive removal" in seen[0]["reasons"]
    [row] = rows(paths)
    assert row.status is Status.FINISHED and row.decision == "allowed"
    assert row.decided_by == "user (approval prompt)"
    assert row.tier == "destructive"


async def test_a_denied_command_does_not_run_and_the_model_is_told(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path
) -> None:
    (tmp_path / "keep").mkdir()

    async def deny_it() -> None:
        [held] = await held_by(hub)
        deny(hub, held.command_id)

    async with serving(home, bound=True) as client, anyio.create_task_group() as group:
        group.start_soon(deny_it)
        result = await run(client, {"command": "rm -rf keep", "cwd": str(tmp_path)})
    denied = json.loads(result["error"])  # an error result, whose JSON says why
    assert denied["status"] == "denied" and "The user denied this command" in denied["note"]
    assert (tmp_path / "keep").exists()
    [row] = rows(paths)
    assert row.status is Status.REFUSED and row.reason == "denied by a request (command line or a window)"
    assert row.decision == "denied"


async def test_a_held_command_allowed_after_the_call_returned_runs_at_the_click_and_command_wait_reads_it(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path
) -> None:
    hub.set_settings(approval_window_s=1.0)
    (tmp_path / "later").mkdir()
    async with serving(home, bound=True) as client:
        started = time.monotonic()
        first = await run(client, {"command": "rm -rf later && echo gone", "cwd": str(tmp_path)})
        assert 0.9 < time.monotonic() - started < 20, "held after the 1 s window, not the default one"
        assert first["status"] == "waiting" and first["exitCode"] is None
        assert "command_wait" in first["note"] and "to answer" in first["note"]
        assert (tmp_path / "later").exists()
        await allow_when_held(hub)  # the user answers after the call returned
        assert await came(lambda: not (tmp_path / "later").exists()), "it ran at the click, unasked"
        done = json.loads((await client.call_tool("command_wait", {"jobId": first["jobId"]})).content[0].text)
    assert done["status"] == "finished" and done["exitCode"] == 0 and done["stdout"] == "gone\n"
    [row] = rows(paths)
    assert row.status is Status.FINISHED and row.decided_by == "user (approval prompt)"


async def wait_until_seen(paths: AppPaths, command: str) -> dict:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        shown = [h for h in await anyio.to_thread.run_sync(holds, paths) if h["command"] == command and h["seen"]]
        if shown:
            return shown[0]
        await anyio.sleep(0.1)
    raise AssertionError(f"{command!r} was never shown")


@pytest.mark.gui
async def test_two_held_commands_each_get_their_full_time_on_screen(
    home: Path, paths: AppPaths, tray_with_windows: str
) -> None:
    set_window(home, 1)
    async with connect(home, headless=False) as client:
        first = await run(client, {"command": "sudo true"})
        second = await run(client, {"command": "sudo false"})
        shown = await wait_until_seen(paths, "sudo true")
        assert shown["expires_at"] - time.time() > HOLD_LIFETIME_S - 30, "its 5 minutes run from when it was shown"
        [hidden] = [h for h in holds(paths) if h["command"] == "sudo false"]
        assert not hidden["seen"] and hidden["expires_at"] - time.time() > HOLD_LIFETIME_S, "its clock has not started"
        behind = json.loads(
            (await client.call_tool("command_wait", {"jobId": second["jobId"], "timeout": 1})).content[0].text
        )
        assert behind["status"] == "waiting" and behind["secondsToAnswer"] is None
        assert "once the commands before it are answered" in behind["note"]
        await anyio.to_thread.run_sync(cli, home, "deny", str(first["jobId"]))  # the first is answered
        now_shown = await wait_until_seen(paths, "sudo false")
        assert HOLD_LIFETIME_S - 30 < now_shown["expires_at"] - time.time() <= HOLD_LIFETIME_S
        waited = json.loads(
            (await client.call_tool("command_wait", {"jobId": second["jobId"], "timeout": 1})).content[0].text
        )
    assert waited["status"] == "waiting" and HOLD_LIFETIME_S - 30 < waited["secondsToAnswer"] <= HOLD_LIFETIME_S
    assert "left to answer" in waited["note"]


async def test_no_answer_then_denied_makes_command_wait_say_denied(home: Path, paths: AppPaths, hub: Hub) -> None:
    hub.set_settings(approval_window_s=1.0)
    async with serving(home, bound=True) as client:
        first = await run(client, {"command": "sudo true"})
        assert first["status"] == "waiting"
        deny(hub, (await held_by(hub))[0].command_id)
        waited = await client.call_tool("command_wait", {"jobId": first["jobId"]})
    result = json.loads(waited.content[0].text)
    assert waited.is_error and result["status"] == "denied" and "denied" in result["note"]


async def test_an_expired_hold_ends_denied_and_its_prompt_disappears(
    home: Path, paths: AppPaths, hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hold the user was shown and left unanswered for its 5 minutes ends denied, at the tray and
    for the model. The wall clock of this process (the tray's hub and the server bound to it) moves
    on 6 minutes; the tray's monitor's tick then expires the hold."""
    hub.set_settings(approval_window_s=1.0)
    async with serving(home, bound=True) as client:
        first = await run(client, {"command": "sudo true"})
        assert first["status"] == "waiting"
        [held] = await held_by(hub)
        hub.seen(held.command_id)  # the prompt or the menu shows it: its clock starts
        [shown] = holds_shown(hub)
        assert shown["seen"] and shown["expires_at"] - time.time() <= HOLD_LIFETIME_S
        real_time = time.time
        monkeypatch.setattr(time, "time", lambda: real_time() + HOLD_LIFETIME_S + 60)  # its 5 minutes pass
        hub.tick()
        assert holds_shown(hub) == [], "the user is no longer asked about it"
        waited = await client.call_tool("command_wait", {"jobId": first["jobId"]})
    result = json.loads(waited.content[0].text)
    assert result["status"] == "denied" and "expired" in result["note"]
    [row] = rows(paths)
    assert row.status is Status.REFUSED and row.reason == "the hold expired before it was confirmed"


async def test_a_hold_past_its_time_is_not_run_by_the_server_even_before_the_tray_expires_it(
    home: Path, paths: AppPaths, hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server keeps its own count of a hold's 5 minutes: when the tray has not expired it yet
    (its monitor ticks now and then), the job still ends refused, not waiting for an answer that can
    no longer count."""
    hub.set_settings(approval_window_s=1.0)
    async with serving(home, bound=True) as client:
        first = await run(client, {"command": "sudo true"})
        assert first["status"] == "waiting"
        [held] = await held_by(hub)
        hub.seen(held.command_id)
        real_time = time.time
        monkeypatch.setattr(time, "time", lambda: real_time() + HOLD_LIFETIME_S + 60)  # no tick follows
        waited = await client.call_tool("command_wait", {"jobId": first["jobId"]})
    result = json.loads(waited.content[0].text)
    assert result["status"] == "denied" and "expired" in result["note"], result
    [row] = rows(paths)
    assert row.status is Status.REFUSED and row.reason == "the hold expired before it was confirmed"


async def test_an_allow_that_comes_after_a_pause_runs_nothing(home: Path, paths: AppPaths, hub: Hub) -> None:
    """A prompt still on the screen when the user paused: its Allow is not taken, and the command
    ends refused for the pause (a pause stops host access at once, held commands too)."""
    hub.set_settings(approval_window_s=1.0)
    marker = paths.data_dir.parent / "ran-after-pause"
    async with serving(home, bound=True) as client:
        first = await run(client, {"command": f"sudo true; touch {marker}"})
        assert first["status"] == "waiting"
        [held] = await held_by(hub)
        hub.seen(held.command_id)
        # The click lands between the pause taking effect and the pause dropping what waits (the
        # hub's lock, held here, keeps the pause at that point).
        with hub.lock:
            pausing = threading.Thread(target=hub.set_paused, args=(True,))
            pausing.start()
            assert await came(lambda: hub.paused), "the pause is in force"
            assert not hub.decide(held.command_id, allowed=True, by=PROMPT_DECIDED_BY), "the click is not taken"
        pausing.join()
        waited = await client.call_tool("command_wait", {"jobId": first["jobId"]})
    result = json.loads(waited.content[0].text)
    assert waited.is_error and result["status"] == "denied" and "paused" in result["note"], result
    assert not marker.exists()
    [row] = rows(paths)
    assert row.status is Status.REFUSED and row.decided_by is None, row


async def test_command_stop_withdraws_a_held_command_and_its_prompt_disappears(
    home: Path, paths: AppPaths, hub: Hub
) -> None:
    hub.set_settings(approval_window_s=1.0)
    async with serving(home, bound=True) as client:
        first = await run(client, {"command": "sudo reboot"})
        assert [h.command for h in hub.pending_holds()] == ["sudo reboot"], "the tray asks the user about it"
        stopped = await client.call_tool("command_stop", {"jobId": first["jobId"]})
        unknown = await client.call_tool("command_wait", {"jobId": 987654})
        # The withdrawal reaches the tray on the link's sending thread, after the answer.
        assert await came(lambda: hub.pending_holds() == []), "nothing is left to ask the user"
    result = json.loads(stopped.content[0].text)
    assert result["status"] == "denied" and "withdrawn" in result["note"]
    assert unknown.is_error and "There is no job 987654" in unknown.content[0].text
    [row] = rows(paths)
    assert row.status is Status.REFUSED and "withdrawn" in row.reason


async def test_a_cancelled_call_withdraws_its_held_command_and_says_so_not_that_command_stop_did(
    home: Path, paths: AppPaths, hub: Hub
) -> None:
    """Claude's stop button cancels the call: the hold is withdrawn as cancelled, in the log and in
    what a later command_wait says (both said command_stop did it, a review of 2026-12-04)."""
    hub.set_settings(approval_window_s=30.0)
    async with serving(home, bound=True) as client:
        with pytest.raises(Exception):  # noqa: B017 - the SDK's timeout error, which cancels the call
            await client.call_tool("execute_command", {"command": "sudo reboot"}, read_timeout_seconds=1.0)
        assert await came(lambda: hub.pending_holds() == []), "nothing is left to ask the user"
        [row] = rows(paths)
        waited = await client.call_tool("command_wait", {"jobId": row.id})
    result = json.loads(waited.content[0].text)
    assert result["status"] == "denied" and result["note"].startswith("The call was cancelled before"), result
    assert "command_stop" not in result["note"]
    [row] = rows(paths)
    assert row.status is Status.REFUSED and row.reason == CANCEL_REASON, row


async def test_without_the_tray_a_command_needing_approval_is_refused_and_says_why(home: Path, paths: AppPaths) -> None:
    async with serving(home) as client:
        result = await run(client, {"command": "git push --force origin main"})
        harmless = await run(client, {"command": "echo fine"})
    assert "needs the user's approval" in result["error"] and "not running" in result["error"]
    assert harmless["stdout"] == "fine\n"


async def test_no_tool_or_argument_lets_the_model_approve_its_own_command(
    home: Path, paths: AppPaths, tray: subprocess.Popen
) -> None:
    set_window(home, 1)
    async with connect(home, headless=False) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        for tool in tools.values():
            assert not {"approve", "approved", "allow", "decision", "tier"} & set(tool.input_schema["properties"])
        sneaky = await run(client, {"command": "sudo true", "tier": "safe", "approved": True})
        assert "`tier` is not an argument of execute_command, so nothing was run" in sneaky["error"]
        held = await run(client, {"command": "sudo true"})
        again = await client.call_tool("command_wait", {"jobId": held["jobId"], "timeout": 500})
        assert json.loads(again.content[0].text)["status"] == "waiting"
        waiting, refused = rows(paths)
        assert refused.status is Status.REFUSED and refused.decision is None
        assert waiting.status is Status.WAITING and waiting.decision is None
    # The tray holds the job, not the server (issue 21): the user can still answer it after the server
    # is gone, and another server of the same app reads the answer. Deny is a tightening: from anywhere.
    [still_held] = holds(paths)
    assert still_held["command"] == "sudo true"
    waiting, _refused = rows(paths)
    assert waiting.status is Status.WAITING, "a held job outlives its server"
    assert cli(home, "deny", str(waiting.id)).returncode == 0
    with anyio.fail_after(10):
        while rows(paths)[0].status is Status.WAITING:
            await anyio.sleep(0.05)
    assert rows(paths)[0].status is Status.REFUSED


async def test_a_held_session_command_runs_only_in_the_folder_it_was_shown_in(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path
) -> None:
    for folder in ("shown", "elsewhere"):
        (tmp_path / folder / "victim").mkdir(parents=True)
    hub.set_settings(approval_window_s=1.0)
    async with serving(home, bound=True) as client:
        await client.call_tool("terminal_run", {"command": f"cd {tmp_path / 'shown'}"})
        held = await client.call_tool("terminal_run", {"command": "rm -rf victim"})
        await client.call_tool("terminal_run", {"command": f"cd {tmp_path / 'elsewhere'}"})  # harmless alone
        [pending] = holds_shown(hub)
        assert pending["cwd"] == str(tmp_path / "shown"), "the user is shown where it would run"
        await allow_when_held(hub)
        confirmed = await client.call_tool("terminal_confirm", {"confirmation_id": held_id(held.content[0].text)})
    assert confirmed.is_error and "not in" in confirmed.content[0].text and "Run it again" in confirmed.content[0].text
    assert (tmp_path / "elsewhere" / "victim").exists() and (tmp_path / "shown" / "victim").exists()


async def test_one_allow_runs_a_held_command_once_however_many_calls_wait_for_it(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path
) -> None:
    """2026-12-05: a model that read a job's hold id from the journal called terminal_confirm beside
    the job, and the user's one Allow ran `rm -rf later && echo ran >> count.txt` twice. The same
    with two terminal_confirm calls for one terminal_run hold."""
    hub.set_settings(approval_window_s=1.0)
    (tmp_path / "later").mkdir()
    async with serving(home, bound=True) as client:
        job = await run(client, {"command": "rm -rf later && echo ran >> count.txt", "cwd": str(tmp_path)})
        assert job["status"] == "waiting"
        [row] = rows(paths)
        beside = await client.call_tool("terminal_confirm", {"confirmation_id": row.confirmation_id})
        assert beside.is_error and "Another call is already waiting" in beside.content[0].text
        assert "command_wait" in beside.content[0].text
        await allow_when_held(hub)
        done = json.loads((await client.call_tool("command_wait", {"jobId": job["jobId"]})).content[0].text)
        assert done["status"] == "finished", done

        await client.call_tool("terminal_run", {"command": f"cd {tmp_path}"})
        held = await client.call_tool("terminal_run", {"command": "rm -rf count.txt && echo again >> again.txt"})
        said: list[str] = []

        async def confirm() -> None:
            answer = await client.call_tool("terminal_confirm", {"confirmation_id": held_id(held.content[0].text)})
            said.append(answer.content[0].text)

        async with anyio.create_task_group() as group:
            group.start_soon(confirm)
            group.start_soon(confirm)
            await anyio.sleep(0.5)  # both calls came before the answer
            await allow_when_held(hub)
    assert (tmp_path / "again.txt").read_text() == "again\n", "one Allow, one run"
    assert sum("Another call is already waiting" in text for text in said) == 1, said
    assert not (tmp_path / "count.txt").exists()


async def test_a_session_command_never_runs_in_a_folder_other_than_the_one_shown_after_a_rename(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path
) -> None:
    """A review, 2026-12-05: the session's folder was the path its last command ended in. A job
    renamed that folder and put another under its name; the user was shown the other one, and
    `rm -rf victim` ran in the renamed folder the shell was really in."""
    (tmp_path / "precious" / "victim").mkdir(parents=True)
    (tmp_path / "scratch" / "victim").mkdir(parents=True)
    hub.set_settings(approval_window_s=1.0)
    async with serving(home, bound=True) as client:
        await client.call_tool("terminal_run", {"command": f"cd {tmp_path / 'precious'}"})
        moved = await run(client, {"command": "mv precious moved && mv scratch precious", "cwd": str(tmp_path)})
        assert moved["status"] == "finished", moved
        held = await client.call_tool("terminal_run", {"command": "rm -rf victim"})
        [pending] = holds_shown(hub)
        assert pending["cwd"] == str(tmp_path / "moved"), "the user is shown where the shell really is"
        await allow_when_held(hub)
        confirmed = await client.call_tool("terminal_confirm", {"confirmation_id": held_id(held.content[0].text)})
        assert not confirmed.is_error, confirmed.content[0].text
    assert not (tmp_path / "moved" / "victim").exists() and (tmp_path / "precious" / "victim").exists()


async def test_an_allow_given_before_a_pause_does_not_run_the_command_after_the_resume(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path
) -> None:
    """A review, 2026-12-05: a terminal_run hold allowed while no call waited for it, then a pause
    and a resume; terminal_confirm ran it. A pause ends every held command (security.md)."""
    (tmp_path / "victim").mkdir()
    hub.set_settings(approval_window_s=1.0)
    async with serving(home, bound=True) as client:
        await client.call_tool("terminal_run", {"command": f"cd {tmp_path}"})
        held = await client.call_tool("terminal_run", {"command": "rm -rf victim"})
        assert held.is_error and "confirmation_id" in held.content[0].text
        await allow_when_held(hub)  # nobody waits for it now
        hub.set_paused(True)
        await came(lambda: hub.state.paused)
        hub.set_paused(False)
        await client.call_tool("terminal_run", {"command": f"cd {tmp_path}"})  # the pause ended the shell
        confirmed = await client.call_tool("terminal_confirm", {"confirmation_id": held_id(held.content[0].text)})
    assert confirmed.is_error and "a pause ends every held command" in confirmed.content[0].text
    assert (tmp_path / "victim").exists()
    row = next(r for r in rows(paths) if r.command == "rm -rf victim")
    assert row.status is Status.REFUSED and row.reason == PAUSED_MESSAGE


async def test_an_allow_answers_only_its_own_hold_even_when_a_later_one_reuses_its_id(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path
) -> None:
    """A review, 2026-12-05: after the user allowed `rm -rf victim && ...` once and cleared the
    history, the same command got the same id again, and the Allow kept for that id ran it unasked.
    Clear history no longer gives an id again (tests/test_ids_never_reused.py); a program that edits
    the file still can, and nothing kept by id may outlive its command."""
    (tmp_path / "victim").mkdir()
    hub.set_settings(approval_window_s=1.0)
    command = {"command": "rm -rf victim && echo ran >> count.txt", "cwd": str(tmp_path)}
    async with serving(home, bound=True) as client:
        first = await run(client, command)
        await allow_when_held(hub)
        done = json.loads((await client.call_tool("command_wait", {"jobId": first["jobId"]})).content[0].text)
        assert done["status"] == "finished", done
        assert await came(lambda: rows(paths)[0].status is Status.FINISHED)
        ids_given_again(paths)
        (tmp_path / "victim").mkdir()
        second = await run(client, command)
        assert second["jobId"] == first["jobId"], "the id is given again"
        assert second["status"] == "waiting", second
        [held] = await held_by(hub)
        deny(hub, held.command_id)
    assert (tmp_path / "count.txt").read_text() == "ran\n" and (tmp_path / "victim").exists()


async def test_a_job_stopped_between_the_allow_and_its_start_leaves_no_row_waiting_or_running(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path
) -> None:
    """A review, 2026-12-05: command_stop came after the user's Allow and before the command started;
    the job's task was cancelled as it recorded the start, and its row said running for good."""
    (tmp_path / "victim").mkdir()
    hub.set_settings(approval_window_s=1.0)
    async with serving(home, bound=True) as client:
        job = await run(client, {"command": "rm -rf victim", "cwd": str(tmp_path)})
        [held] = await held_by(hub)
        with hub.lock:  # the hub takes nothing meanwhile: the server waits for its `started` to be taken
            allow(hub, held.command_id)
            await anyio.sleep(0.5)  # the server took the Allow and asked to record the start
            stopped = json.loads((await client.call_tool("command_stop", {"jobId": job["jobId"]})).content[0].text)
        assert stopped["status"] in ("denied", "finished") and stopped["exitCode"] is None, stopped
        assert "the user answered" not in json.dumps(stopped), "the user had answered: it was stopped before it ran"
        assert await came(lambda: rows(paths)[0].status is not Status.WAITING)
        await anyio.sleep(0.3)
    [row] = rows(paths)
    assert row.status is Status.REFUSED and row.reason == "stopped by the agent (command_stop)", row
    assert (tmp_path / "victim").exists()


async def test_a_held_session_command_whose_confirm_is_cancelled_after_the_allow_says_the_client_cancelled_it(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path
) -> None:
    """A review, 2026-12-05: a terminal_confirm cancelled between the Allow and the command's start was
    recorded as "the server exited", which it had not: the client cancelled its call."""
    (tmp_path / "victim").mkdir()
    hub.set_settings(approval_window_s=0.5)
    async with serving(home, bound=True) as client:
        await client.call_tool("terminal_run", {"command": f"cd {tmp_path}"})
        first = await client.call_tool("terminal_run", {"command": "rm -rf victim"})
        confirmation_id = held_id(first.content[0].text)
        [held] = await held_by(hub)
        with hub.lock:  # the hub takes nothing meanwhile: the server waits for its `started` to be taken
            async with anyio.create_task_group() as group:
                group.start_soon(client.call_tool, "terminal_confirm", {"confirmation_id": confirmation_id})
                await anyio.sleep(0.2)
                allow(hub, held.command_id)
                await anyio.sleep(0.5)  # the server took the Allow and asked to record the start
                group.cancel_scope.cancel()
        assert await came(lambda: rows(paths)[0].status not in (Status.WAITING, Status.RUNNING))
        still = await client.call_tool("terminal_run", {"command": "echo still"})
        assert "still" in still.content[0].text, "the session goes on"
    row = next(row for row in rows(paths) if row.command == "rm -rf victim")
    assert row.status is Status.REFUSED and row.reason == CANCEL_REASON, row
    assert (tmp_path / "victim").exists()


@pytest.mark.parametrize("tool", ["execute_command", "terminal_run"])
async def test_a_call_cancelled_as_its_held_row_is_written_leaves_no_prompt_and_no_row_waiting(
    tool: str, home: Path, paths: AppPaths, hub: Hub, tmp_path: Path
) -> None:
    """A review, 2026-12-05: a call cancelled while the tray wrote its held row left the prompt up
    (its Allow ran nothing: no server waited for it) and the row waiting for good."""
    (tmp_path / "victim").mkdir()
    hub.set_settings(approval_window_s=1.0)
    async with serving(home, bound=True) as client:
        await client.call_tool("terminal_run", {"command": f"cd {tmp_path}"})
        arguments = {"command": "rm -rf victim"} | ({"cwd": str(tmp_path)} if tool == "execute_command" else {})
        with hub.lock:  # the hub takes nothing meanwhile: the server waits for its row to be written
            async with anyio.create_task_group() as group:
                group.start_soon(client.call_tool, tool, arguments)
                await anyio.sleep(0.5)
                group.cancel_scope.cancel()
        assert await came(lambda: rows(paths)[0].status is Status.REFUSED)
        assert not hub.pending_holds(), "no prompt is left whose answer nobody waits for"
    assert rows(paths)[0].reason == CANCEL_REASON and (tmp_path / "victim").exists()


async def test_a_jobs_hold_withdrawn_with_terminal_cancel_ends_the_job_at_once(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path
) -> None:
    """A review, 2026-12-05: the journal said refused, but the job went on waiting for an answer
    that could no longer come (command_list said waiting, for up to an hour)."""
    (tmp_path / "victim").mkdir()
    hub.set_settings(approval_window_s=1.0)
    async with serving(home, bound=True) as client:
        job = await run(client, {"command": "rm -rf victim", "cwd": str(tmp_path)})
        [row] = rows(paths)
        withdrawn = await client.call_tool("terminal_cancel", {"confirmation_id": row.confirmation_id})
        assert not withdrawn.is_error, withdrawn.content[0].text
        with anyio.fail_after(5):
            ended = json.loads((await client.call_tool("command_wait", {"jobId": job["jobId"]})).content[0].text)
    assert ended["status"] == "denied" and "withdrawn" in ended["note"], ended
    assert (tmp_path / "victim").exists() and not hub.pending_holds()


async def test_a_stop_the_user_gave_one_command_does_not_stop_a_later_one_given_its_id_again(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path
) -> None:
    """A review, 2026-12-05: what the tray said about an id (a Stop, an Allow) outlived the
    command; after the history was cleared, the next command given that id was stopped at once (now
    only another program's edit of the file gives an id again)."""
    async with serving(home, bound=True) as client:
        job = await run(client, {"command": "sleep 30", "cwd": str(tmp_path), "background": True})
        assert await came(lambda: rows(paths)[0].status is Status.RUNNING)
        hub.stop(job["jobId"])
        await client.call_tool("command_wait", {"jobId": job["jobId"]})
        assert await came(lambda: rows(paths)[0].status is Status.KILLED)
        ids_given_again(paths)
        (tmp_path / "victim").mkdir()
        hub.set_settings(approval_window_s=1.0)
        again = await run(client, {"command": "rm -rf victim", "cwd": str(tmp_path)})
        assert again["jobId"] == job["jobId"], "the id was given again"
        assert again["status"] == "waiting", again  # not denied by the old Stop: the user is asked
        await allow_when_held(hub)
        done = json.loads((await client.call_tool("command_wait", {"jobId": again["jobId"]})).content[0].text)
    assert done["status"] == "finished" and done["exitCode"] == 0, done
    assert not (tmp_path / "victim").exists()


async def test_a_pause_and_a_resume_while_a_call_waits_for_the_answer_end_the_hold(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path
) -> None:
    """The waiting call saw neither the pause nor the hold's end at the hub: the count of pauses
    ends it all the same, in words."""
    (tmp_path / "victim").mkdir()
    hub.set_settings(approval_window_s=5.0)
    async with serving(home, bound=True) as client:
        await client.call_tool("terminal_run", {"command": f"cd {tmp_path}"})
        said: list[str] = []

        async def held_call() -> None:
            answer = await client.call_tool("terminal_run", {"command": "rm -rf victim"})
            said.append(answer.content[0].text)

        async with anyio.create_task_group() as group:
            group.start_soon(held_call)
            await held_by(hub)
            hub.set_paused(True)  # and at once, before the waiting call looks again
            hub.set_paused(False)
    assert "a pause ends every held command" in said[0], said
    assert (tmp_path / "victim").exists() and not hub.pending_holds()


async def sent_until_judged_anew(client: Any, arguments: dict[str, Any]) -> dict[str, Any]:
    """What the model reads once it sent the call again until it was judged under the newest settings
    (the push reaches the tray's runner a moment after the hub)."""
    with anyio.fail_after(20):
        while SETTINGS_CHANGED_MESSAGE in (answer := await run(client, arguments)).get("error", ""):
            await anyio.sleep(0.02)
    return answer


async def test_a_command_judged_before_a_tightening_reached_its_runner_is_refused_and_then_held(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path
) -> None:
    """The user's click changes the tray's settings, then pushes them to its runners: a command judged
    in between, under the older settings, must not run as judged. The instant between the two is made
    to last here: the hub's state changes, and its push is sent only after the command was asked."""
    hub.set_settings(approval_window_s=1.0)
    marker = tmp_path / "ran"
    command = {"command": f"touch {marker}"}
    async with serving(home, bound=True) as client:
        assert (await run(client, {"command": "echo ready"}))["stdout"] == "ready\n"
        hub.state = with_changes(hub.state, approval_mode="all")  # the click: its push not sent yet
        refused = await run(client, command)
        hub.connections.push_all(StatePush(hub.state.to_wire()))
        again = await sent_until_judged_anew(client, command)
    assert refused["error"].endswith(f": {SETTINGS_CHANGED_MESSAGE}"), refused
    assert again["status"] == "waiting", again  # judged under the new settings: held for the user
    assert not marker.exists(), "it never ran unasked"
    first, *_, held = [row for row in reversed(rows(paths)) if row.command == command["command"]]
    assert (first.status, first.reason) == (Status.REFUSED, SETTINGS_CHANGED_MESSAGE)
    assert held.decision is None and held.started_at is None, "the held one never started"


async def test_a_command_judged_before_a_loosening_reached_its_runner_is_judged_as_strictly_as_it_was(
    home: Path, paths: AppPaths, hub: Hub
) -> None:
    hub.set_settings(approval_mode="all", approval_window_s=1.0)
    async with serving(home, bound=True) as client:
        assert (await run(client, {"command": "true"}))["status"] == "waiting"  # its runner was told "all"
        hub.state = with_changes(hub.state, approval_mode="destructive")  # the click: its push not sent yet
        answer = await run(client, {"command": "echo judged"})
    assert answer["status"] == "waiting", answer  # held, as the settings it was judged under say


async def test_a_sixth_command_waiting_for_the_user_is_refused_in_words_that_say_what_to_do_and_logged(
    home: Path, paths: AppPaths, hub: Hub
) -> None:
    hub.set_settings(approval_window_s=1.0)
    async with serving(home, bound=True) as client:
        waiting = [await run(client, {"command": f"sudo true # {n}", "background": True}) for n in range(5)]
        sixth = await run(client, {"command": "sudo true # 5", "background": True})
    assert all(answer["status"] == "waiting" for answer in waiting), waiting
    assert "Not run: 5 commands from this server already wait for the user" in sixth["error"], sixth
    assert "command_wait" in sixth["error"] and "command_stop" in sixth["error"]
    [row] = [row for row in rows(paths) if row.command == "sudo true # 5"]
    assert (row.status, row.reason) == (Status.REFUSED, "5 commands from this server already wait for the user")


async def test_a_shorter_approval_wait_in_flight_does_not_refuse_a_command_that_runs_now(
    home: Path, paths: AppPaths, hub: Hub
) -> None:
    """How long a hold waits decides nothing of a command that is not held (a review, 2026-12-05)."""
    async with serving(home, bound=True) as client:
        assert (await run(client, {"command": "true"}))["exitCode"] == 0
        hub.state = with_changes(hub.state, approval_window_s=5.0)  # the click; its push not sent yet
        answer = await run(client, {"command": "echo runs"})
    assert answer["stdout"] == "runs\n", answer
