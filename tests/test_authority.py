"""The tray is the authority: what an agent runs cannot approve, resume or relax anything.

Every attack goes through `execute_command`, the way an agent would try it: of a real server while a
real tray runs where the attack is on the processes (a killed or look-alike tray, the CLI run by
the agent, what the tray notices of Claude's configuration), and otherwise of a server bound to the
tray's hub in this process, as the tray's runners are (tests/in_process_server.py), where a click on
Allow is the hub's own call for it. What the tray notices of its journal (written, replaced or
deleted under it) is its monitor's poll of that hub (`hub.tick()`), and what it tells the user the
hub's notices (tests/channel_peers.py `running_hub`). The servers here run without the OS container
(issue 21, tests/test_container.py), which now stops most of these attacks before they reach the
tray: these tests show the second line.
Since the classifier reads scripts, an attack script is held like any command it cannot judge: the
tests allow it as the user would, then show that even an allowed command cannot loosen a control.
Each test checks that the attack really ran.

The authority's edge cases that need no real process (hold limits, cooldowns, a locked journal, a
pause reaching a held call, a headless server bound to a tray) are tested in this process, in
milliseconds: tests/test_hub_inprocess.py and tests/test_command_service_inprocess.py.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from app.core.authority.hub import Hub
from app.core.channel.client import NoTray, ask_tray, current_tray_state
from app.core.channel.transport import address_for
from app.core.channel.wire import TO_TRAY_FRAME_BYTES
from app.core.execution import container
from app.core.journal.store import Journal, Status
from app.core.messages import PAUSED_MESSAGE
from app.core.paths import AppPaths
from app.core.policy.approval import ApprovalMode, set_approval_mode
from tests.agent_scripts import agent_script
from tests.channel_peers import FakePeer, monitor, running_hub
from tests.clicks import PROMPT_TITLE, click_yes
from tests.desktop_env import wait_for
from tests.in_process_server import allow_when_held, deny, held_by, holds_shown, serving
from tests.stdio_client import FIRST_CALL_DEADLINE_S, STOP_DEADLINE_S, run, running_with
from tests.stdio_client import connect as connect_server
from tests.tray_process import TRAY_STOP_S, running_tray

pytestmark = pytest.mark.anyio
PY = sys.executable
# What the tray tells the user (its notices' titles and texts).
DELETED_TOLD = (
    "Another program deleted or replaced Cowork Terminal's activity log. A new one was started; "
    "your settings are unchanged."
)
NEW_JOURNAL_TOLD = "Cowork Terminal started a new activity journal"
FOREIGN_CHANGE_TOLD = "Cowork Terminal did not make this change. Your settings and answers are unaffected."


def connect(home: Path, *, headless: bool = True) -> Any:
    """A server whose commands run without the container: what the tray alone must stop."""
    return connect_server(home, headless=headless, env={container.BWRAP_ENV: str(home / "no-bwrap")})


@pytest.fixture(autouse=True)
def trays_without_the_container(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tray runs the commands of a server bound to it (issue 21): it runs them without the
    container too, so that these attacks reach the tray itself (the container stops them first)."""
    monkeypatch.setenv(container.BWRAP_ENV, str(home / "no-bwrap"))


def users_earlier_choice_never(paths: AppPaths) -> None:
    """The user chose, before the tray started, never to be asked: the agent's attack scripts then run
    unheld, as any command the user allowed (the attacks must still loosen nothing)."""
    with Journal.open(paths) as journal:
        set_approval_mode(journal, ApprovalMode.NEVER)


async def click_allow_when_held(paths: AppPaths, display: str) -> dict:
    """The user clicks Allow in a real tray's approval prompt once it holds a command: the hold, as
    the tray told it."""
    shown = await wait_until_held(paths)
    await anyio.to_thread.run_sync(click_yes, display, PROMPT_TITLE)
    return shown


async def allow_the_held_command(paths: AppPaths, display: str) -> None:
    """The user clicks Allow in the approval prompt for the one command held now, then it runs."""
    await click_allow_when_held(paths, display)
    with anyio.fail_after(STOP_DEADLINE_S):
        while await anyio.to_thread.run_sync(holds, paths):
            await anyio.sleep(0.05)


async def run_allowed(agent: Any, paths: AppPaths, display: str, arguments: dict) -> dict:
    """The agent's command, held (the classifier cannot read its script), allowed by the user's click."""
    async with anyio.create_task_group() as group:
        group.start_soon(allow_the_held_command, paths, display)
        return await run(agent, arguments)


def hidden(path: Path) -> str:
    """A path the script rebuilds at run time: the command line never names the app's folder."""
    return f"base64.b64decode({base64.b64encode(str(path).encode())!r}).decode()"


def cli(home: Path, *args: str, timeout_s: float = 30.0) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COWORK_TERMINAL_HOME": str(home), "PYSTRAY_BACKEND": "dummy"}
    return subprocess.run([PY, "-m", "app", *args], env=env, capture_output=True, text=True, timeout=timeout_s)


def holds(paths: AppPaths) -> list[dict]:
    return json.loads(ask_tray(paths, "holds")["message"])


async def wait_until_held(paths: AppPaths) -> dict:
    deadline = time.monotonic() + FIRST_CALL_DEADLINE_S
    while time.monotonic() < deadline:
        try:
            pending = await anyio.to_thread.run_sync(holds, paths)
        except NoTray:  # a tray busy with the hold it is making answered the hello late: ask again
            pending = []
        if pending:
            return pending[0]
        await anyio.sleep(0.05)
    raise AssertionError("no command was held")


async def test_a_journal_write_by_an_allowed_command_cannot_approve_a_held_rm_rf(
    home: Path, paths: AppPaths, tmp_path: Path, hub: Hub
) -> None:
    (tmp_path / "victim" / "sub").mkdir(parents=True)
    outcome: dict = {}
    attack: dict = {}
    async with serving(home, bound=True) as held_client, serving(home, bound=True) as agent:

        async def ask() -> None:
            outcome.update(await run(held_client, {"command": "rm -rf victim", "cwd": str(tmp_path)}))

        async def write_the_journal() -> None:  # waits for the held rm -rf, then "approves" it
            attack.update(
                await run(
                    agent,
                    {
                        "command": agent_script(f"""
import base64, sqlite3, sys, time
db = sqlite3.connect({hidden(paths.journal)}, timeout=5)
deadline = time.time() + 30
while not db.execute("select 1 from commands where status='waiting'").fetchall():
    if time.time() > deadline:
        sys.exit("nothing was held")
    time.sleep(0.05)
for _ in range(10):
    db.execute("update commands set decision='allowed', decided_by='user', decided_at=1 where status='waiting'")
    db.commit()
    time.sleep(0.1)
print("approved in the file")
""")
                    },
                )
            )

        async with anyio.create_task_group() as group:
            group.start_soon(write_the_journal)
            await allow_when_held(hub)  # the attack, held alone, allowed by the user
            group.start_soon(ask)
            [hold] = await held_by(hub)
            with anyio.fail_after(STOP_DEADLINE_S + 30):
                while not attack:
                    await anyio.sleep(0.05)
            assert attack.get("stdout") == "approved in the file\n", attack
            await anyio.sleep(1.0)
            assert (tmp_path / "victim" / "sub").exists(), "the journal's 'allowed' must not run it"
            assert hub.pending_holds(), "it still waits for the user"
            deny(hub, hold.command_id)
    assert "The user denied this command" in outcome["error"]
    assert (tmp_path / "victim" / "sub").exists()


async def test_a_held_row_rewritten_in_the_file_is_still_shown_as_the_server_sent_it(
    home: Path, paths: AppPaths, tmp_path: Path, hub: Hub
) -> None:
    (tmp_path / "victim").mkdir()
    attack: dict = {}

    async def rewrite(agent: Any) -> None:  # waits for the held rm -rf, then rewrites its row
        attack.update(
            await run(
                agent,
                {
                    "command": agent_script(f"""
import base64, sqlite3, sys, time
db = sqlite3.connect({hidden(paths.journal)}, timeout=5)
deadline = time.time() + 30
while not db.execute("select 1 from commands where status='waiting'").fetchall():
    if time.time() > deadline:
        sys.exit("nothing was held")
    time.sleep(0.05)
db.execute("update commands set command='ls' where status='waiting'")
db.commit()
print("rewritten")
""")
                },
            )
        )

    async with (
        serving(home, bound=True) as held_client,
        serving(home, bound=True) as agent,
        anyio.create_task_group() as group,
    ):
        group.start_soon(rewrite, agent)
        await allow_when_held(hub)  # the attack, held alone, allowed by the user
        group.start_soon(run, held_client, {"command": "rm -rf victim", "cwd": str(tmp_path)})
        [hold] = await held_by(hub)
        with anyio.fail_after(STOP_DEADLINE_S + 30):
            while not attack:
                await anyio.sleep(0.05)
        assert attack.get("stdout") == "rewritten\n", attack
        with Journal(paths) as journal:
            assert journal.get_command(hold.command_id).command == "ls", "the file says ls"
        [shown] = holds_shown(hub)
        assert shown["command"] == "rm -rf victim", "what the user is asked about is the real command"
        deny(hub, hold.command_id)
        group.cancel_scope.cancel()


async def test_a_loop_writing_paused_false_cannot_undo_the_users_pause(home: Path, paths: AppPaths) -> None:
    users_earlier_choice_never(paths)
    with running_hub(paths) as (hub, _seen):
        async with serving(home, bound=True) as agent:
            started = await run(
                agent,
                {
                    "command": agent_script(
                        f"""
import base64, sqlite3, time
db = sqlite3.connect({hidden(paths.journal)}, timeout=5)
for _ in range(40):
    db.execute("insert or replace into settings(key, value, updated_at) values ('paused', 'false', 0)")
    db.commit()
    time.sleep(0.2)
""",
                        background=True,
                    )
                },
            )
            assert started.get("exitCode") == 0
            assert cli(home, "pause").returncode == 0
            for _ in range(6):  # three seconds of the loop "resuming" five times a second
                refused = await run(agent, {"command": "echo still here"})
                assert refused.get("error", "").endswith(PAUSED_MESSAGE), refused
                await anyio.sleep(0.5)
            # Since 2026-12-04 the pause also ends the loop (what a finished command left); whether it
            # wrote the row first or not, the tray's own state stays paused.
            assert hub.state.paused, "the tray's own state is still paused"


async def test_a_killed_tray_restarted_over_an_unpaused_file_keeps_the_servers_paused(
    home: Path, paths: AppPaths
) -> None:
    async with connect(home, headless=False) as agent:
        with running_tray(home) as first:
            await wait_until_bound(agent)
            assert cli(home, "pause").returncode == 0
            await wait_for_refusal(agent, PAUSED_MESSAGE)
            first.send_signal(signal.SIGKILL)
            first.wait()
        with Journal(paths) as journal:  # a program edits the file while no tray watches
            journal.set_paused(False)
        with running_tray(home):
            await wait_for_refusal(agent, PAUSED_MESSAGE)  # once the server is back with the tray
            assert current_tray_state(paths)["paused"] is True


async def wait_until_bound(client) -> None:
    """A server started before the tray finds it within its reconnect interval (0.5 s)."""
    deadline = time.monotonic() + STOP_DEADLINE_S
    while "error" in await run(client, {"command": "true"}):
        if time.monotonic() > deadline:
            raise AssertionError("the server never found the tray")
        await anyio.sleep(0.1)


async def wait_for_refusal(client, message: str) -> None:
    deadline = time.monotonic() + STOP_DEADLINE_S
    while True:
        answer = await run(client, {"command": "echo hello"})
        if answer.get("error", "").endswith(message):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"still not refused with {message!r}: {answer}")
        await anyio.sleep(0.2)


FAKE_TRAY = """
import base64, json, os, socket, struct, sys, time
address, home, marker = sys.argv[1], sys.argv[2], sys.argv[3]
open(marker, "a").write(f"pid {os.getpid()}\\n")
deadline = time.time() + 30
while True:  # wait until the real tray is gone, then take its address
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(address)
        break
    except OSError:
        sock.close()
        if time.time() > deadline:
            sys.exit(1)
        time.sleep(0.05)
sock.listen(4)
sock.settimeout(0.5)  # never blocked in accept() past its deadline
while time.time() < deadline:
    try:
        conn, _ = sock.accept()
    except socket.timeout:
        continue
    open(marker, "a").write("connected\\n")
    size = struct.unpack("!i", conn.recv(4))[0]
    conn.recv(size)
    reply = json.dumps({"op": "ack", "seq": None, "data_dir": home, "server_id": 1,
                        "state": {"paused": False, "approval_mode": "never", "approval_window_s": 55,
                                  "tools": "all"}}).encode()
    conn.sendall(struct.pack("!i", len(reply)) + reply)
    conn.close()
"""


def end_fake_tray(marker: Path) -> None:
    """The fake tray started by the agent ends with the test (it said its pid as it started)."""
    said = marker.read_text().split() if marker.exists() else []
    for pid in [int(said[i + 1]) for i, word in enumerate(said) if word == "pid"]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


async def test_a_fake_tray_started_by_the_agent_is_refused_by_the_server(
    home: Path, paths: AppPaths, tmp_path: Path
) -> None:
    marker = tmp_path / "fake-tray-was-asked"
    address = "\0" + address_for(paths).name
    real_home = os.path.realpath(paths.data_dir)
    users_earlier_choice_never(paths)
    try:
        async with connect(home, headless=False) as agent:
            with running_tray(home) as tray:
                await wait_until_bound(agent)
                script = FAKE_TRAY.replace(
                    "sys.argv[1], sys.argv[2], sys.argv[3]", f"{address!r}, {real_home!r}, {str(marker)!r}"
                )
                # unmarked: else the server ends it with what the lost tray left running, and the
                # knock below may come after that (it did on CI), so the refusal would go untested
                started = await run(agent, {"command": agent_script(script, background=True, unmarked=True)})
                assert started.get("exitCode") == 0
                wait_for(marker.exists, timeout_s=STOP_DEADLINE_S)  # the fake runs, waiting for the address
                tray.send_signal(signal.SIGKILL)  # the agent (or a crash) ends the real tray
                tray.wait()
            wait_for(lambda: "connected" in marker.read_text(), timeout_s=STOP_DEADLINE_S)  # the server knocked
            # Its verdict on what answered comes a moment after the knock: until then the refusal is
            # the plain "not running" one. No call runs meanwhile.
            deadline = time.monotonic() + STOP_DEADLINE_S
            while True:
                answer = await run(agent, {"command": "echo should not run"})
                assert "Cowork Terminal is not running" in answer.get("error", ""), answer
                if "not Cowork Terminal" in answer["error"] or time.monotonic() > deadline:
                    break
                await anyio.sleep(0.1)
    finally:
        end_fake_tray(marker)
    assert "not Cowork Terminal" in answer["error"] or "does not run Cowork Terminal" in answer["error"]


def test_a_tray_refuses_to_start_when_another_program_holds_its_address(home: Path, paths: AppPaths) -> None:
    """Where no window can be shown (no display), stderr says why (with one, the test below)."""
    squatter = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    squatter.bind("\0" + address_for(paths).name)
    squatter.listen(1)
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.update({"COWORK_TERMINAL_HOME": str(home), "PYSTRAY_BACKEND": "dummy"})
    try:
        tray = subprocess.run([PY, "-m", "app", "tray"], env=env, capture_output=True, text=True, timeout=30)
    finally:
        squatter.close()
    assert tray.returncode == 1
    assert "another program already listens at Cowork Terminal's address" in tray.stderr
    assert "Traceback" not in tray.stderr


def test_a_tray_started_from_the_desktop_says_in_a_window_that_another_program_holds_its_address(
    home: Path, paths: AppPaths, display: str
) -> None:
    """Started from a menu or at login nobody reads stderr: the words are shown in a window, as for
    every problem at start (problem_window), and the app ends once the person read them."""
    from tests.clicks import press, shown_window

    squatter = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    squatter.bind("\0" + address_for(paths).name)
    squatter.listen(1)
    env = {**os.environ, "DISPLAY": display, "PYSTRAY_BACKEND": "dummy"}
    app = subprocess.Popen(
        [sys.executable, "-m", "app", "tray"], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip  # no terminal, as a launcher
    try:
        window = shown_window(display, "Cowork Terminal cannot start")
        assert app.poll() is None, "the app waits until the person has read it"
        press(display, window, "Return")
        _, stderr = app.communicate(timeout=30)
    finally:
        app.kill()
        squatter.close()
    assert app.returncode == 1
    assert "another program already listens at Cowork Terminal's address" in stderr and "Traceback" not in stderr


@pytest.mark.gui
async def test_the_cli_run_by_the_agent_cannot_relax_approvals_even_without_its_mark(
    home: Path, paths: AppPaths, display: str
) -> None:
    relax = (
        "import sys; sys.argv = ['cowork-terminal', 'approval-mode', 'never']; "
        "m = __import__('ap' + 'p.cli.main', fromlist=['main']); sys.exit(m.main())"
    )
    # Both attempts in one command, so the user allows both with one click: with the mark every
    # command of an agent carries, and without it (an agent that knows of it sheds it).
    both = f"{agent_script(relax)}; echo marked $?; env -u COWORK_TERMINAL_RUN {agent_script(relax)}; echo unmarked $?"
    with running_tray(home, display=display):
        async with connect(home, headless=False) as agent:
            answer = await run_allowed(agent, paths, display, {"command": both})
        state = current_tray_state(paths)
    said = answer["stdout"] + answer["stderr"]
    codes = dict(line.split() for line in answer["stdout"].splitlines() if line.startswith(("marked ", "unmarked ")))
    assert set(codes) == {"marked", "unmarked"} and "0" not in codes.values(), answer
    assert said.count("comes from a command an AI agent runs") == 2, answer
    assert state["approval_mode"] == "destructive"


async def test_a_job_the_agent_left_behind_to_ask_for_a_resume_is_ended_by_the_pause(
    home: Path, paths: AppPaths, tmp_path: Path
) -> None:
    """A job left running to act once the user has paused: it used to ask to resume, and was refused
    (the provenance tests above still show that); since 2026-12-04 the pause ends it first."""
    go, told = tmp_path / "paused-now", tmp_path / "resume-answer.json"
    resume = f"""
import base64, contextlib, io, json, pathlib, sys, time
go, told = pathlib.Path({hidden(go)}), pathlib.Path({hidden(told)})
while not go.exists():  # a job left running: it acts once the user has paused
    time.sleep(0.05)
said = io.StringIO()
with contextlib.redirect_stderr(said), contextlib.redirect_stdout(said):
    code = __import__('ap' + 'p.cli.main', fromlist=['main']).main(['resume'])
told.write_text(json.dumps({{"code": code, "said": said.getvalue()}}))
"""
    users_earlier_choice_never(paths)
    with running_tray(home):
        async with connect(home, headless=False) as agent:
            started = await run(agent, {"command": agent_script(resume, background=True)})
            assert started.get("exitCode") == 0
            assert cli(home, "pause").returncode == 0
            time.sleep(1.0)  # the pause reaches the tray's runner
            go.touch()
            time.sleep(2.0)  # what the job would have done by now
            answer = await run(agent, {"command": "echo hello"})
    assert not told.exists(), json.loads(told.read_text())
    assert answer["error"].endswith(PAUSED_MESSAGE)


async def cut_short(agent, paths: AppPaths, act, command: str = "sleep 41000") -> dict:
    """Start a command that would run for hours, do `act()` once it runs, return what the model got."""
    result: dict = {}
    async with anyio.create_task_group() as group:

        async def long() -> None:
            result.update(await run(agent, {"command": command}))

        group.start_soon(long)
        await wait_until_running(paths)
        await act()
        with anyio.fail_after(STOP_DEADLINE_S):
            while not result:
                await anyio.sleep(0.05)
    return result


@pytest.mark.parametrize("contained", [True, False], ids=["in its container", "without a container"])
async def test_commands_stop_within_moments_when_the_tray_dies_and_the_model_is_told_why(
    home: Path, paths: AppPaths, monkeypatch: pytest.MonkeyPatch, contained: bool
) -> None:
    """The tray runs the command. In its container, the container ends with the tray
    (--die-with-parent); without one, the server the tray ran it for ends it (tray_link)."""
    if contained:
        monkeypatch.delenv(container.BWRAP_ENV)
    command = f"sleep 41000; : tray-dies-{os.getpid()}"  # not the last command: bash keeps this line
    async with connect(home, headless=False) as agent:
        with running_tray(home) as tray:
            await wait_until_bound(agent)

            async def kill() -> None:
                wait_for(lambda: running_with(command), timeout_s=STOP_DEADLINE_S)  # it runs
                tray.send_signal(signal.SIGKILL)

            result = await cut_short(agent, paths, kill, command)
        assert "Cowork Terminal app went away during this call" in result["error"]
        assert "every command it ran was stopped with it" in result["error"]
        wait_for(lambda: not running_with(command), timeout_s=STOP_DEADLINE_S)
        refused = await run(agent, {"command": "echo after"})
    assert "Cowork Terminal is not running" in refused["error"]


async def test_pause_reaches_a_running_server_after_its_data_folder_was_deleted(home: Path, paths: AppPaths) -> None:
    import shutil

    with running_hub(paths) as (hub, seen):
        async with serving(home, bound=True) as agent:
            assert (await run(agent, {"command": "echo first"})).get("stdout") == "first\n"
            shutil.rmtree(home)
            assert cli(home, "pause").returncode == 0
            await wait_for_refusal(agent, PAUSED_MESSAGE)  # before the tray's monitor looked at the folder
            hub.tick()  # the tray's monitor, at its next poll
            assert paths.journal.exists(), "the tray started a new journal"
            assert ("The activity log was deleted", DELETED_TOLD) in seen.notices, seen.notices
            assert hub.state.paused, "and the pause lives on in it"


async def test_a_damaged_file_put_in_place_of_the_journal_is_told_once(home: Path, paths: AppPaths) -> None:
    """The tray's hub in this process, polled as the tray's monitor polls it; `seen` is what the
    tray tells the user."""
    users_earlier_choice_never(paths)
    with running_hub(paths) as (hub, seen):
        supervisor = hub.new_supervisor(has_menu=True)
        async with serving(home, bound=True) as agent:
            await run(agent, {"command": "echo first"})
            monitor(hub, supervisor, seen)
            attack = await run(
                agent,
                {
                    "command": agent_script(f"""
import base64, pathlib
journal = pathlib.Path({hidden(paths.journal)})
forged = journal.with_name("forged")
forged.write_bytes(b"SQLite format 3\\0" + b"\\xff" * 4096)
forged.replace(journal)  # a new file in its place
print("replaced")
""")
                },
            )
            assert attack.get("stdout") == "replaced\n", attack
            with anyio.fail_after(STOP_DEADLINE_S):
                while NEW_JOURNAL_TOLD not in monitor(hub, supervisor, seen):
                    await anyio.sleep(0.05)
            after = await run(agent, {"command": "echo after"})
            assert after.get("stdout") == "after\n", "the tray registered its live server in the new journal"
            with Journal(paths) as journal:
                assert [row.client_name for row in journal.servers()] == ["mcp"], "with its client's name"
            for _ in range(3):
                told = monitor(hub, supervisor, seen)
    assert told.count(NEW_JOURNAL_TOLD) == 1, told
    assert "The activity log was deleted" not in told, "one notice for one event"
    [kept] = home.glob("journal.corrupt-*.sqlite3")
    assert kept.read_bytes().startswith(b"SQLite format 3\0" + b"\xff" * 16), "the forged file is kept aside"


async def test_an_agent_damaging_the_journal_in_place_under_a_real_tray_cannot_lose_its_next_commands_row(
    home: Path, paths: AppPaths
) -> None:
    """A real tray and `serve`: an agent's command (no container here) overwrites the journal's pages
    where they are, and calls again at once, before the tray's monitor looks. That next command runs
    and its row is in a new journal, not in the damaged file the tray's connection reads from its
    cache; the user is told once."""
    users_earlier_choice_never(paths)
    damage = f"""
import base64, os, pathlib
for path, keep in ((pathlib.Path({hidden(paths.journal)}), 100), (pathlib.Path({hidden(paths.journal)} + "-wal"), 32)):
    if path.exists():
        size = path.stat().st_size
        with open(path, "r+b") as file:
            file.seek(keep)
            file.write(os.urandom(size - keep))
print("damaged")
"""
    with running_tray(home):
        async with connect(home, headless=False) as agent:
            assert (await run(agent, {"command": "echo first"})).get("stdout") == "first\n"
            inode = paths.journal.stat().st_ino
            attack = await run(agent, {"command": agent_script(damage)})
            assert attack.get("stdout") == "damaged\n", attack
            after = await run(agent, {"command": "echo after"})
            assert after.get("stdout") == "after\n", after
            assert paths.journal.stat().st_ino != inode, "a new journal"
            with Journal(paths) as journal:
                assert "echo after" in [row.command for row in journal.recent_commands()], "its row is in it"
            wait_for(lambda: "started a new activity journal" in tray_log(home), timeout_s=STOP_DEADLINE_S)
    assert tray_log(home).count("started a new activity journal") == 1


async def test_an_agent_rewriting_our_claude_entry_is_told_to_the_user_by_the_running_tray(
    home: Path, paths: AppPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.core.claude import config as cc
    from tests.desktop_env import make_fake_desktop

    desktop = make_fake_desktop(tmp_path, monkeypatch)  # the tray and the agent's server share this home
    desktop.desktop_config.write_text(json.dumps({"mcpServers": {"cowork-terminal": cc.this_app_entry()}}))
    config = desktop.desktop_config
    users_earlier_choice_never(paths)
    with running_tray(home):
        async with connect(home, headless=False) as agent:
            for change, told in (
                ('entry["args"] = entry["args"] + ["--headless"]', "Claude Desktop can run commands without this app"),
                (
                    'entry.update(command="/tmp/agent-server", args=[])',
                    "Claude Desktop no longer starts Cowork Terminal",
                ),
            ):
                attack = await run(
                    agent,
                    {
                        "command": agent_script(f"""
import base64, json, pathlib
config = pathlib.Path({hidden(config)})
data = json.loads(config.read_text())
entry = data["mcpServers"]["cowork-terminal"]
{change}
config.write_text(json.dumps(data))
print("rewritten")
""")
                    },
                )
                assert attack.get("stdout") == "rewritten\n", attack
                wait_for(lambda told=told: told in tray_log(home), timeout_s=STOP_DEADLINE_S)


def test_bad_frames_close_that_connection_and_the_tray_lives_on(home: Path, paths: AppPaths, hub: Hub) -> None:
    import pickle

    address = "\0" + address_for(paths).name
    frames = [
        struct.pack("!i", TO_TRAY_FRAME_BYTES + 1),  # announces more than the tray reads
        struct.pack("!i", 100) + b"{",  # truncated
        struct.pack("!i", len(pickle.dumps({"op": "x"}))) + pickle.dumps({"op": "x"}),
        struct.pack("!i", 15) + b'{"op": "pause"}',  # a request before hello
    ]
    for frame in frames:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(address)
            sock.sendall(frame)
            sock.settimeout(STOP_DEADLINE_S)
            sock.shutdown(socket.SHUT_WR) if frame.endswith(b"{") else None
            assert sock.recv(16) == b"", "the tray closes the connection"
    assert hub.state.paused is False
    server = FakePeer(paths)
    try:
        assert server.hello("server")["op"] == "ack", "and still answers the next connection"
    finally:
        server.close()


def test_without_a_tray_the_cli_changes_nothing_that_loosens(home: Path, paths: AppPaths) -> None:
    assert cli(home, "pause").returncode == 0
    resumed = cli(home, "resume")
    assert resumed.returncode != 0
    assert "not running, so nobody can confirm this and nothing changed" in resumed.stderr
    relaxed = cli(home, "approval-mode", "never")
    assert relaxed.returncode != 0
    with Journal(paths) as journal:
        assert journal.is_paused() is True
        assert journal.get_setting("approval_mode", "destructive") == "destructive"
    stricter = cli(home, "approval-mode", "all")
    assert stricter.returncode == 0, stricter.stderr
    with pytest.raises(NoTray):
        ask_tray(paths, "state")


async def test_a_held_command_answered_while_paused_does_not_run(
    home: Path, paths: AppPaths, tmp_path: Path, hub: Hub
) -> None:
    (tmp_path / "victim").mkdir()
    async with serving(home, bound=True) as held_client, anyio.create_task_group() as group:
        outcome: dict = {}

        async def ask() -> None:
            outcome.update(await run(held_client, {"command": "rm -rf victim", "cwd": str(tmp_path)}))

        group.start_soon(ask)
        await held_by(hub)
        assert cli(home, "pause").returncode == 0
    refused = json.loads(outcome["error"])  # a held command is a job: it ends denied, with the reason
    assert refused["status"] == "denied" and refused["note"] == PAUSED_MESSAGE
    assert (tmp_path / "victim").exists()
    with Journal(paths) as journal:
        [row] = [r for r in journal.recent_commands() if r.command == "rm -rf victim"]
    assert row.status is Status.REFUSED


async def test_quitting_the_tray_ends_what_runs_and_tells_the_model(home: Path, paths: AppPaths) -> None:
    result: dict = {}
    async with connect(home, headless=False) as agent:
        with running_tray(home) as tray:
            await wait_until_bound(agent)
            async with anyio.create_task_group() as group:

                async def long() -> None:
                    result.update(await run(agent, {"command": "sleep 41000"}))

                group.start_soon(long)
                await wait_until_running(paths)
                quit_ = await anyio.to_thread.run_sync(cli, home, "tray", "--quit")
                assert quit_.returncode == 0, quit_.stderr
                # The tray ends by itself: its quit is bounded (QUIT_TIMEOUT_S), not this test's patience.
                code = await anyio.to_thread.run_sync(tray.wait, TRAY_STOP_S)
                assert code == 0
                with anyio.fail_after(STOP_DEADLINE_S):  # from the tray's end: the server ends what runs
                    while not result:
                        await anyio.sleep(0.02)
    assert result["exitCode"] is None
    assert "Cowork Terminal app stopped" in result["note"]


async def wait_until_running(paths: AppPaths) -> None:
    """The tray wrote the command's row as running: the command has started (no fixed sleep)."""

    def running() -> bool:
        with Journal(paths) as journal:
            return any(row.status is Status.RUNNING for row in journal.active_commands())

    with anyio.fail_after(FIRST_CALL_DEADLINE_S):
        while not await anyio.to_thread.run_sync(running):
            await anyio.sleep(0.05)


def tray_log(home: Path) -> str:
    """What the tray told the user (the dummy backend logs each notification)."""
    log = home.parent / "tray.log"
    return log.read_text(errors="replace") if log.exists() else ""


async def test_a_program_writing_the_journal_under_the_tray_is_reported(home: Path, paths: AppPaths) -> None:
    """The tray's hub in this process: `hub.tick()` is its monitor's look at the file, `seen` what it
    tells the user."""
    with running_hub(paths) as (hub, seen):
        async with serving(home, bound=True) as agent:
            recorded = await run(agent, {"command": "echo recorded by the tray"})
            assert recorded.get("stdout") == "recorded by the tray\n"
            assert cli(home, "pause").returncode == 0  # the tray's own pause rewrites the pause file too
            hub.tick()
            assert hub.state.paused
            assert seen.notices == [], "the tray's own writes are not news"
            with Journal(paths) as journal:
                journal.set_setting("approval_mode", "never")
            hub.tick()
            assert seen.notices == [("The activity log was changed by another program", FOREIGN_CHANGE_TOLD)]
            assert hub.approval_mode == "destructive"


async def test_a_lost_link_to_a_tray_that_still_runs_is_not_said_to_have_stopped_anything() -> None:
    """A red team, 2026-12-05: the tray closed one server's connection (a result too big for it) and
    the model read that the app had gone away and its commands were stopped, while both ran on."""
    from app.server.forwarding import LINK_LOST_DURING_CALL, TRAY_GONE_DURING_CALL, why_link_lost

    alive = subprocess.Popen(["sleep", "30"])
    gone = subprocess.Popen(["true"])
    gone.wait()
    try:
        assert await why_link_lost(alive.pid, None, "linux") == LINK_LOST_DURING_CALL
        assert await why_link_lost(alive.pid, "Cowork Terminal (the app) stopped", "linux") == TRAY_GONE_DURING_CALL
        assert await why_link_lost(gone.pid, None, "linux") == TRAY_GONE_DURING_CALL
        assert await why_link_lost(alive.pid, None, "darwin") == TRAY_GONE_DURING_CALL  # no /proc to tell
        assert await why_link_lost(None, None, "linux") == TRAY_GONE_DURING_CALL
    finally:
        alive.kill()
        alive.wait()
    assert "nothing was stopped" in LINK_LOST_DURING_CALL and "command_list" in LINK_LOST_DURING_CALL
