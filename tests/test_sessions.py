"""The persistent shell session: state that carries across calls, prompts, interrupts, restarts.

What the session does is tested on the server in this process (tests/in_process_server.py); what
only a `serve` process shows (its session and container ending with it, the client leaving) on a
real one over stdio."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from app.core.authority.hub import Hub
from app.core.authority.state import with_changes
from app.core.channel.protocol import StatePush
from app.core.commands.session_shell import KEYS_PROGRAM_CHANGED_MESSAGE
from app.core.execution.output import DEFAULT_BUDGET_CHARS
from app.core.journal.store import Journal, Status
from app.core.messages import SETTINGS_CHANGED_MESSAGE
from app.core.paths import AppPaths
from app.core.policy import approval
from tests.in_process_server import serving
from tests.stdio_client import STOP_DEADLINE_S, connect, live_processes

LINUX = sys.platform.startswith("linux")
pytestmark = pytest.mark.anyio


async def call(client: Any, tool: str, arguments: dict[str, Any] | None = None) -> Any:
    result = await client.call_tool(tool, arguments or {})
    text = result.content[0].text
    if result.is_error:
        return {"error": text}
    return json.loads(text) if tool == "terminal_run" else text


async def running_in_the_journal(paths: AppPaths, command: str) -> None:
    """Wait until the server has journaled `command` as running (it may take a while under load)."""
    deadline = time.monotonic() + STOP_DEADLINE_S
    while time.monotonic() < deadline:
        if paths.journal.exists():
            with Journal.open(paths) as journal:
                if any(r.command == command and r.status is Status.RUNNING for r in journal.recent_commands()):
                    return
        await anyio.sleep(0.05)
    raise AssertionError(f"{command!r} was not running within {STOP_DEADLINE_S} s")


async def test_cd_and_exported_variables_persist_between_calls(home: Path, tmp_path: Path) -> None:
    async with serving(home) as client:
        await call(client, "terminal_run", {"command": f"cd {tmp_path} && export GREETING=hi"})
        second = await call(client, "terminal_run", {"command": "pwd; echo $GREETING; echo oops >&2; false"})
    assert second["output"] == f"{tmp_path}\nhi\noops\n"
    assert second["exitCode"] == 1 and second["timedOut"] is False


async def test_what_a_session_command_leaves_for_later_commands_waits_for_the_user(home: Path, tmp_path: Path) -> None:
    """Red team, 2026-12-04: later session commands are judged alone, so a PATH with a planted `ls`
    first, or a DEBUG trap sourcing a file rewritten afterwards, ran agent code under `ls` and `echo
    hi`. Such a change waits for the user (here no app runs: refused); what execute_command runs in
    a shell of its own is not asked for it."""
    planted = tmp_path / "bin"
    planted.mkdir()
    async with serving(home) as client:
        for command in (f"PATH={planted}:$PATH", f"trap 'source {tmp_path}/hook.sh' DEBUG", "ls() { echo mine; }"):
            refused = await call(client, "terminal_run", {"command": command})
            assert "Changes how the shell session runs later commands" in refused.get("error", ""), refused
        after = await call(client, "terminal_run", {"command": "echo $PATH; trap -p DEBUG; type -t ls"})
        once = await client.call_tool("execute_command", {"command": f"PATH={planted}:$PATH; echo set"})
    assert str(planted) not in after["output"] and "source" not in after["output"], after
    assert after["output"].rstrip().endswith("file"), "ls is still the program"
    assert not once.is_error and json.loads(once.content[0].text)["stdout"] == "set\n"


@pytest.mark.parametrize(
    ("command", "lasts"),
    [
        ("ls() if true; then . ./lib.sh; fi", True),  # a function's body needs no braces
        ("trap ''\". ./lib.sh\" DEBUG", True),
        ("\\trap '. ./lib.sh' DEBUG", True),
        ("eval 'PATH=/evil:$PATH'", True),
        ("printf -v PATH %s /evil:$PATH", True),
        ("PATH[0]=/evil", True),
        ('git commit -m "Add helper function for parsing"', False),  # words in a string
        ("grep -rn function src", False),
        ("ENV=production node app.js", False),  # an assignment before a command does not last
        ("PATH=$PWD/node_modules/.bin:$PATH jest", False),
        ("env PATH=/x ls", False),
        # red team, 2026-12-04: quoted or escaped names, a nameref, if/!, and code-loading variables
        ('export "PATH"=/x:$PATH', True),
        ("export PA\\TH=/x:$PATH", True),
        ("declare -n p=PATH; p=/x:$PATH", True),
        ("if PATH=/x; then :; fi", True),
        ("! PATH=/x", True),
        ("export LD_PRELOAD=/x.so", True),
        ("export PYTHONPATH=/x", True),
        ("export HOME=/x", True),
        ("export GIT_TEST_FSMONITOR=x", True),
        ("export NODE_ENV=production", False),
        ("trap '' INT; sleep 8", False),  # ignoring a signal runs nothing
        ("export FOO=bar", False),
        # red team, 2026-12-05: later `ls LD_PRELOAD=./x.so` passes it as environment
        ("set -k", True),
        ("set -ek; make", True),
        ("set -e -o keyword", True),
        ("set -e; set -o pipefail", False),
        ("set +k", False),
        # a review, 2026-12-05: the regex missed these
        ("builtin set -k", True),
        ("command set -k", True),
        ("shopt -so keyword", True),
        ("set -o 'keyword'", True),
        ("k=k; set -$k", True),
    ],
)
def test_what_lasts_in_the_session_is_read_where_commands_start_not_in_strings(command: str, lasts: bool) -> None:
    """A review, 2026-12-04: routes around the first reading, and everyday commands it held."""
    from app.core.classifier import classify
    from app.core.commands.admission import lasts_in_session

    assert lasts_in_session(command, classify(command, cwd="/tmp")) is lasts


async def test_session_commands_are_journaled_and_judged_in_the_folder_the_shell_is_in(
    home: Path, paths: AppPaths, tmp_path: Path
) -> None:
    data = str(paths.data_dir)
    # A spelling of the app's folder the classifier cannot read: the shell reports where it went.
    # It also tells the shell it is elsewhere: $PWD is the shell's word, the folder is the OS's (Linux).
    hidden_cd = f'cd "$(printf %s {data[:-1]}@ | tr @ {data[-1]})"' + ("; PWD=/tmp" if LINUX else "")
    async with serving(home) as client:
        await call(client, "terminal_run", {"command": f"cd {tmp_path}"})
        here = await call(client, "terminal_run", {"command": "touch made-here"})
        moved = await call(client, "terminal_run", {"command": hidden_cd})
        inside = await call(client, "terminal_run", {"command": "ls"})  # harmless anywhere else
    assert (tmp_path / "made-here").exists() and here["exitCode"] == 0 and moved["exitCode"] == 0
    assert "needs the user's approval" in inside["error"]
    with Journal.open(paths) as journal:
        rows = {r.command: r for r in journal.recent_commands()}
    assert rows["touch made-here"].cwd == str(tmp_path), "the journal and the prompt show where it runs"
    assert rows["ls"].cwd == data and "Cowork Terminal's own data" in rows["ls"].reason


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="escaped processes are found through /proc")
async def test_when_the_server_ends_its_session_the_running_commands_escapees_end_with_it(home: Path) -> None:
    """A finished command's detached job stays while the server lives (a dev server); the running
    one's ends with the session. In the bwrap container the finished one ends with its server too:
    a container dies with the process that started it (--die-with-parent)."""
    running, finished = f"38{os.getpid() % 1000}.5", f"39{os.getpid() % 1000}.5"
    contained = shutil.which("bwrap") is not None
    try:
        async with connect(home) as client:
            await call(client, "terminal_run", {"command": f"setsid sleep {finished} >/dev/null 2>&1 &"})
            still = await call(
                client, "terminal_run", {"command": f"setsid sleep {running} & sleep 60", "timeout": 500}
            )
            assert still["exitCode"] is None and live_processes(f"sleep {running}")
            assert live_processes(f"sleep {finished}") != []
        with anyio.fail_after(STOP_DEADLINE_S):
            while live_processes(f"sleep {running}"):
                await anyio.sleep(0.05)
        if contained:
            with anyio.fail_after(STOP_DEADLINE_S):
                while live_processes(f"sleep {finished}"):
                    await anyio.sleep(0.05)
        else:
            assert live_processes(f"sleep {finished}") != []
    finally:
        for marker in (running, finished):
            subprocess.run(["pkill", "-f", f"sleep {marker}"], check=False)


async def test_a_syntax_error_is_reported_without_losing_the_session(home: Path, paths: AppPaths) -> None:
    with Journal.open(paths) as journal:  # unparsable text is "cannot tell": it would ask the user first
        approval.set_approval_mode(journal, approval.ApprovalMode.NEVER)
    async with serving(home) as client:
        await call(client, "terminal_run", {"command": "export KEPT=yes"})
        broken = await call(client, "terminal_run", {"command": "if then fi ("})
        after = await call(client, "terminal_run", {"command": "echo $KEPT"})
    assert broken["exitCode"] != 0 and "syntax error" in broken["output"]
    assert after["output"] == "yes\n" and after["note"] is None


async def test_a_timed_out_command_keeps_running_and_its_output_can_be_read_later(home: Path, paths: AppPaths) -> None:
    async with serving(home) as client:
        first = await call(client, "terminal_run", {"command": "echo start; sleep 1.5; echo finish", "timeout": 300})
        assert first["timedOut"] is True and first["exitCode"] is None and first["output"] == "start\n"
        busy = await call(client, "terminal_run", {"command": "echo other"})
        assert "still running an earlier command" in busy["error"]
        await anyio.sleep(2.0)
        scrollback = await call(client, "terminal_read_scrollback", {"lines": 5})
    assert scrollback.splitlines()[-2:] == ["start", "finish"]
    with Journal.open(paths) as journal:
        rows = {r.command: r for r in journal.recent_commands()}
    slow = rows["echo start; sleep 1.5; echo finish"]
    assert slow.status is Status.FINISHED and slow.exit_code == 0 and slow.tool == "terminal_run"


async def test_a_session_commands_output_reaches_the_activity_log_while_it_runs(home: Path, paths: AppPaths) -> None:
    """The log shows what a session command printed so far, as for execute_command (issue 24)."""
    command = "echo first-line; sleep 30; echo never"
    async with serving(home) as client, anyio.create_task_group() as group:
        group.start_soon(call, client, "terminal_run", {"command": command, "timeout": 300})
        await running_in_the_journal(paths, command)
        deadline = time.monotonic() + STOP_DEADLINE_S
        preview = None
        while time.monotonic() < deadline and not preview:
            with Journal.open(paths) as journal:
                row = next(r for r in journal.recent_commands() if r.command == command)
            preview = row.stdout_preview
            await anyio.sleep(0.1)
        assert row.status is Status.RUNNING, row
        assert (preview or "").startswith("first-line"), row
        await call(client, "terminal_interrupt")
        group.cancel_scope.cancel()


async def test_send_keys_answers_a_program_waiting_for_input(home: Path) -> None:
    async with serving(home) as client:
        waiting = await call(client, "terminal_run", {"command": "read -r name; echo hello $name", "timeout": 300})
        assert waiting["timedOut"] is True
        answer = await call(client, "terminal_send_keys", {"keys": "Ada\n"})
        idle = await call(client, "terminal_send_keys", {"keys": "ls\n"})
    assert answer == "hello Ada\n"
    assert "Nothing in the session is waiting for input" in idle["error"]


async def test_keys_typed_after_a_program_ends_never_run_as_commands(home: Path, tmp_path: Path) -> None:
    target = tmp_path / "must-not-exist"
    async with serving(home) as client:
        await call(client, "terminal_run", {"command": "read -r one; echo got $one", "timeout": 300})
        await call(client, "terminal_send_keys", {"keys": f"first\ntouch {target}\n"})
        await call(client, "terminal_run", {"command": "true"})
    assert not target.exists()


async def test_keys_no_program_read_are_dropped_before_the_next_command_and_the_model_is_told(home: Path) -> None:
    """Keys typed while `sleep` ran (it reads no input) were judged for it, and waited in the input for
    the next command: `cat` (or `perl`, a red team's, 2026-12-05) read them instead."""
    async with serving(home) as client:
        await call(client, "terminal_run", {"command": "sleep 1", "timeout": 200})
        assert await call(client, "terminal_send_keys", {"keys": "secret words\n"}) == ""
        await anyio.sleep(1.2)
        after = await call(client, "terminal_run", {"command": "cat", "timeout": 500})
        await call(client, "terminal_interrupt")
        again = await call(client, "terminal_run", {"command": "echo ok"})
    assert "secret words" not in after["output"].split("]", 1)[1], after  # said in the note, not read by cat
    assert after["output"].startswith(
        "[Cowork Terminal: 13 bytes typed with terminal_send_keys ('secret words\\n') were never read"
    ), after
    assert again["output"] == "ok\n", again  # told once


async def test_keys_judged_before_a_tightening_reached_the_tray_runner_are_not_sent(
    home: Path, paths: AppPaths, hub: Hub
) -> None:
    async with serving(home, bound=True) as client:
        await call(client, "terminal_run", {"command": "read -r name; echo hello $name", "timeout": 300})
        hub.state = with_changes(hub.state, approval_mode="all")  # the click: its push not sent yet
        refused = await call(client, "terminal_send_keys", {"keys": "Ada\n"})
        hub.connections.push_all(StatePush(hub.state.to_wire()))
        with anyio.fail_after(20):
            while (
                SETTINGS_CHANGED_MESSAGE
                in (again := await call(client, "terminal_send_keys", {"keys": "Ada\n"}))["error"]
            ):
                await anyio.sleep(0.02)
        await call(client, "terminal_interrupt")
    assert refused["error"].endswith(SETTINGS_CHANGED_MESSAGE), refused
    assert "would need the user's approval" in again["error"], again  # typed keys cannot wait for it
    with Journal.open(paths) as journal:
        typed = [(r.status, r.reason) for r in journal.recent_commands() if r.tool == "terminal_send_keys"]
    assert typed[-1] == (Status.REFUSED, SETTINGS_CHANGED_MESSAGE)
    assert all(status is Status.REFUSED for status, _ in typed), "no keys were sent"


async def test_keys_judged_for_a_command_that_ended_meanwhile_are_not_typed_into_the_next(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A review, 2026-12-06: keys were judged for the program running then (`sleep`: as bash), and
    written after the awaits (their journal row) to whatever ran by then: the next command (`cat`
    here, `perl` or `python3` as well) read them."""
    from app.core.commands.service import CommandService

    journaled, go = anyio.Event(), anyio.Event()
    row = CommandService.journal_row

    async def slow_row(self: CommandService, **fields: Any) -> int:
        made = await row(self, **fields)
        if fields.get("tool") == "terminal_send_keys":  # judged for `sleep`: hold them till it ended
            journaled.set()
            await go.wait()
        return made

    monkeypatch.setattr(CommandService, "journal_row", slow_row)
    answers: list[Any] = []
    async with serving(home) as client:
        assert (await call(client, "terminal_run", {"command": "sleep 1", "timeout": 200}))["timedOut"]

        async def type_keys() -> None:
            answers.append(await call(client, "terminal_send_keys", {"keys": "hello from before\n"}))

        async with anyio.create_task_group() as group:
            group.start_soon(type_keys)
            with anyio.fail_after(STOP_DEADLINE_S):
                await journaled.wait()
                while "error" in (cat := await call(client, "terminal_run", {"command": "cat", "timeout": 300})):
                    await anyio.sleep(0.1)  # `sleep 1` still runs
            assert cat["timedOut"], cat
            go.set()
        await anyio.sleep(0.5)  # what `cat` would echo
        seen = await call(client, "terminal_read_scrollback", {"lines": 50})
        await call(client, "terminal_interrupt")
    assert "hello from before" not in seen, seen
    assert KEYS_PROGRAM_CHANGED_MESSAGE in str(answers[0]), answers


async def test_interrupt_stops_the_running_job_and_keeps_the_session(home: Path) -> None:
    marker = f"51{os.getpid() % 1000}.5"
    async with serving(home) as client:
        await call(client, "terminal_run", {"command": "export STAYS=here"})
        await call(client, "terminal_run", {"command": f"sleep {marker}", "timeout": 300})
        said = await call(client, "terminal_interrupt")
        after = await call(client, "terminal_run", {"command": "echo $STAYS"})  # at once: not "still running"
    assert said == "Sent Ctrl-C to the session; nothing is running in it now."
    assert live_processes(marker) == []
    assert after["output"] == "here\n" and after["note"] is None


async def test_interrupt_says_so_when_the_program_ignores_ctrl_c(home: Path) -> None:
    async with serving(home) as client:
        before = await call(client, "terminal_interrupt")
        await call(client, "terminal_run", {"command": "(trap '' INT; sleep 60)", "timeout": 300})
        said = await call(client, "terminal_interrupt")
    assert before == "No shell session is running."
    assert "still running" in said and "terminal_read_scrollback" in said


async def test_scrollback_is_limited_to_the_lines_asked_and_at_most_500(home: Path) -> None:
    async with serving(home) as client:
        await call(client, "terminal_run", {"command": "seq 1 700"})
        three = await call(client, "terminal_read_scrollback", {"lines": 3})
        everything = await call(client, "terminal_read_scrollback", {"lines": 500})
        too_many = await call(client, "terminal_read_scrollback", {"lines": 501})
    assert three.splitlines() == ["698", "699", "700"]
    assert len(everything.splitlines()) == 500 and everything.splitlines()[-1] == "700"
    assert "from 1 to 500" in too_many["error"]


async def test_after_exit_the_next_command_gets_a_new_session_and_is_told_state_was_lost(home: Path) -> None:
    async with serving(home) as client:
        await call(client, "terminal_run", {"command": "export GONE=soon"})
        ended = await call(client, "terminal_run", {"command": "exit 3"})
        fresh = await call(client, "terminal_run", {"command": "echo [$GONE]"})
    assert "session ended" in ended["note"]
    assert fresh["output"] == "[]\n"
    assert "new one was started" in fresh["note"]


async def test_pausing_stops_a_session_command_and_refuses_the_next(home: Path, paths: AppPaths) -> None:
    marker = f"52{os.getpid() % 1000}.5"
    async with serving(home) as client:
        await call(client, "terminal_run", {"command": f"sleep {marker}", "timeout": 300})
        with Journal.open(paths) as journal:
            journal.set_paused(True)
        deadline = time.monotonic() + STOP_DEADLINE_S
        while live_processes(marker) and time.monotonic() < deadline:
            await anyio.sleep(0.05)
        refused = await call(client, "terminal_run", {"command": "echo no"})
    assert live_processes(marker) == []
    assert "paused by the user" in refused["error"]
    with Journal.open(paths) as journal:
        row = next(r for r in journal.recent_commands() if r.command == f"sleep {marker}")
    assert row.status is Status.KILLED and "paused" in row.reason


async def test_the_one_tool_surface_offers_execute_command_alone(home: Path) -> None:
    async with serving(home, tools="execute") as client:  # serve --headless --tools execute
        names = {t.name for t in (await client.list_tools()).tools}
    assert "execute_command" in names and "terminal_run" not in names


async def test_settings_this_version_does_not_know_are_obeyed_as_the_strictest_by_a_headless_server(
    home: Path, paths: AppPaths
) -> None:
    """A tool set or approval mode written by a newer version (then the person went back to this one)
    is read by the tray as its strictest; a headless server offered every tool and asked about
    dangerous commands only."""
    with Journal.open(paths) as journal:
        journal.set_setting("tools", "from-a-newer-version")
        journal.set_setting("approval_mode", "from-a-newer-version")
    async with serving(home) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        said = await client.call_tool("execute_command", {"command": "echo hi"})
    assert "execute_command" in names and "terminal_run" not in names
    assert said.is_error and "needs the user's approval" in said.content[0].text, said


def test_the_server_offers_the_session_only_where_it_can_run_and_never_more_than_chosen() -> None:
    from app.core.policy.tool_sets import ALL_TOOLS, EXECUTE_ONLY, narrowest_tools, tools_on

    assert tools_on("linux", ALL_TOOLS) == ALL_TOOLS
    assert tools_on("darwin", ALL_TOOLS) == ALL_TOOLS
    assert tools_on("win32", ALL_TOOLS) == EXECUTE_ONLY, "no pass_fds or process groups on Windows"
    assert tools_on("linux", EXECUTE_ONLY) == EXECUTE_ONLY
    assert narrowest_tools(ALL_TOOLS, EXECUTE_ONLY) == EXECUTE_ONLY
    assert narrowest_tools(EXECUTE_ONLY, ALL_TOOLS) == EXECUTE_ONLY, "serve --tools never offers more"
    assert narrowest_tools(ALL_TOOLS, None) == ALL_TOOLS


async def test_the_tools_setting_chosen_with_the_cli_decides_what_a_new_server_offers(
    home: Path, cli_env: dict[str, str]
) -> None:
    import subprocess
    import sys

    said = subprocess.run(
        [sys.executable, "-m", "app", "tools", "execute"], env=cli_env, capture_output=True, text=True, check=True
    ).stdout
    assert "execute_command alone" in said
    async with serving(home) as client:
        names = {t.name for t in (await client.list_tools()).tools}
    assert names == {  # the execute set: execute_command and what follows its jobs (issue 22)
        "execute_command", "execute_read_only_command", "command_wait", "command_output", "command_stop",
        "command_list",
    }  # fmt: skip


async def test_keys_typed_in_pieces_are_judged_as_one_line_and_journaled(home: Path, paths: AppPaths) -> None:
    async with serving(home) as client:
        await call(client, "terminal_run", {"command": "read -r a; read -r b; echo done", "timeout": 300})
        first = await call(client, "terminal_send_keys", {"keys": "r"})
        second = await call(client, "terminal_send_keys", {"keys": "m -rf /tmp/somewhere\n"})
        await call(client, "terminal_interrupt")
    assert first == ""
    assert "would need the user's approval" in second["error"]
    with Journal.open(paths) as journal:
        typed = [r for r in journal.recent_commands() if r.tool == "terminal_send_keys"]
    assert [(r.command, r.status) for r in typed] == [
        ("m -rf /tmp/somewhere\n", Status.REFUSED),
        ("r", Status.FINISHED),
    ]


async def test_pausing_stops_a_session_command_while_its_call_is_still_waiting(home: Path, paths: AppPaths) -> None:
    async with serving(home) as client:
        outcome: dict = {}

        async def long_call() -> None:
            outcome.update(await call(client, "terminal_run", {"command": "sleep 30; echo ran", "timeout": 60_000}))

        async with anyio.create_task_group() as group:
            group.start_soon(long_call)
            await running_in_the_journal(paths, "sleep 30; echo ran")  # a pause before it would refuse it
            paused_at = time.monotonic()
            with Journal.open(paths) as journal:
                journal.set_paused(True)
        took = time.monotonic() - paused_at
    assert took < STOP_DEADLINE_S and "ran" not in outcome["output"]
    assert "paused host access" in outcome["note"]
    with Journal.open(paths) as journal:
        row = next(r for r in journal.recent_commands() if r.command == "sleep 30; echo ran")
    assert row.status is Status.KILLED


async def test_a_program_that_does_not_read_its_input_cannot_freeze_the_server(home: Path) -> None:
    async with serving(home) as client:
        await call(client, "terminal_run", {"command": "sleep 20", "timeout": 300})
        started = time.monotonic()
        answers = [await call(client, "terminal_send_keys", {"keys": "x" * 60_000}) for _ in range(3)]
        took = time.monotonic() - started
        too_long = await call(client, "terminal_send_keys", {"keys": "x" * 70_000})
        await call(client, "terminal_interrupt")
        alive = await client.call_tool("execute_command", {"command": "echo alive"})
    assert "not reading its input" in answers[-1]["error"]
    assert took < 20, "each call gives up after about 1.5 s instead of waiting for the reader"
    assert "longer than 65,536 bytes" in too_long["error"]
    assert json.loads(alive.content[0].text)["stdout"] == "alive\n"


async def test_session_output_without_newlines_is_cut_to_the_budget_and_kept_whole_in_its_file(home: Path) -> None:
    async with serving(home) as client:
        started = time.monotonic()
        command = "head -c 8000000 /dev/zero | tr '\\0' a; echo; echo end"
        result = await call(client, "terminal_run", {"command": command})
        took = time.monotonic() - started
        tail = await call(client, "terminal_read_scrollback", {"lines": 2})
    assert result["exitCode"] == 0 and took < 10
    assert len(result["output"]) <= DEFAULT_BUDGET_CHARS
    assert "left out here; the whole output is in outputFile" in result["output"]
    assert Path(result["outputFile"]).stat().st_size == 8_000_000 + len("\nend\n")
    assert tail.splitlines()[-1] == "end"


async def test_two_first_session_calls_at_once_share_one_shell(home: Path) -> None:
    results: list = []
    async with serving(home) as client:

        async def one(i: int) -> None:
            results.append(await call(client, "terminal_run", {"command": f"echo {i}", "timeout": 5000}))

        async with anyio.create_task_group() as group:
            group.start_soon(one, 1)
            group.start_soon(one, 2)
    outputs = sorted(r.get("output") or r.get("error") for r in results)
    assert outputs[0] in ("1\n", "2\n")
    assert "still running an earlier command" in outputs[1] or outputs[1] in ("1\n", "2\n")


async def test_a_session_command_left_running_is_closed_in_the_journal_when_the_client_leaves(
    home: Path, paths: AppPaths
) -> None:
    async with connect(home) as client:
        await call(client, "terminal_run", {"command": "sleep 30", "timeout": 300})
    with Journal.open(paths) as journal:
        row = next(r for r in journal.recent_commands() if r.command == "sleep 30")
    # The SDK's client ends the server's process tree, the shell first or the server first.
    assert row.status in (Status.INTERRUPTED, Status.FAILED) and row.reason


async def test_a_session_command_still_running_when_its_server_stops_is_journaled_as_interrupted(
    home: Path, paths: AppPaths
) -> None:
    # Not "failed: the shell session ended": the shell ended because its server did (Claude quit).
    async with serving(home) as client:
        result = await call(client, "terminal_run", {"command": "sleep 30", "timeout": 300})
        assert result["exitCode"] is None and result["note"].startswith("Still running in the session"), result
    with Journal.open(paths) as journal:
        row = next(r for r in journal.recent_commands() if r.command == "sleep 30")
    assert (row.status, row.reason) == (Status.INTERRUPTED, "the server stopped while it ran")


async def test_lines_typed_into_a_python_prompt_in_the_session_are_judged_as_python(home: Path, tmp_path: Path) -> None:
    # Read as bash, `print(6*7)` was "cannot tell" and held; as Python it is harmless and runs, while
    # a deletion through Python's library is held in Python's words (issue 23).
    notes = tmp_path / "notes.txt"
    notes.write_text("keep")
    async with serving(home) as client:
        started = await call(client, "terminal_run", {"command": "python3 -i -q", "timeout": 300})
        assert started.get("timedOut") is True, started
        answer = await call(client, "terminal_send_keys", {"keys": "print(6*7)\n"})
        # Under load the prompt may answer after send_keys stopped waiting: the scrollback shows it then.
        deadline = time.monotonic() + STOP_DEADLINE_S
        while isinstance(answer, str) and "42" not in answer and time.monotonic() < deadline:
            await anyio.sleep(0.2)
            answer += await call(client, "terminal_read_scrollback", {"lines": 20})
        deletion = await call(client, "terminal_send_keys", {"keys": f"import os; os.remove({str(notes)!r})\n"})
        await call(client, "terminal_interrupt")
    assert "42" in answer
    assert (
        "would need the user's approval" in deletion["error"] and "python3 code that deletes files" in deletion["error"]
    )
    assert notes.read_text() == "keep"


@pytest.mark.parametrize("then", [";", "&&", "||"])
async def test_keys_for_a_shell_started_after_a_python_prompt_are_judged_as_bash(
    home: Path, tmp_path: Path, then: str
) -> None:
    """A red team, 2026-12-05: the session's line `python3 -i -q;bash` was read as a bare Python
    prompt, so keys typed after `exit()` were judged as Python while bash ran them."""
    victim = tmp_path / "victim"
    victim.mkdir()
    async with serving(home) as client:
        started = await call(client, "terminal_run", {"command": f"python3 -i -q{then}bash", "timeout": 300})
        assert started.get("timedOut") is True, started
        await call(client, "terminal_send_keys", {"keys": "exit(1)\n" if then == "||" else "exit()\n"})
        deletion = await call(client, "terminal_send_keys", {"keys": f"rm -rf {victim}; echo GONE\n"})
        await call(client, "terminal_interrupt")
    assert "would need the user's approval" in deletion["error"], deletion
    assert victim.exists()


def test_a_session_command_that_ran_apart_tells_the_model_why_it_ended_and_where_it_ran() -> None:
    """`apart`: what terminal_run says of a command a person let out of the container (it ran in one
    of its own): a time limit reads as the command's end, never as "still running in the session"."""
    from app.core.commands.session_shell import APART_NOTE, SHELL_ENDED_FIRST_NOTE, apart
    from app.core.execution.output import CommandOutput
    from app.core.execution.run_result import ExecutionResult
    from app.core.messages import TIMED_OUT_REASON
    from app.server.tools import session_result

    output = CommandOutput()
    output.feed(0, b"out\n")
    output.feed(1, b"err\n")
    timed_out = ExecutionResult(output, None, True, None, None, 10.0, 0.0, contained=True)
    said = session_result(apart(timed_out, ended=True))
    assert said.exitCode is None and not said.timedOut and said.output == "out\nerr\n"
    assert f"The command was {TIMED_OUT_REASON}." in (said.note or "")
    assert APART_NOTE in (said.note or "") and SHELL_ENDED_FIRST_NOTE in (said.note or "")
    finished = session_result(apart(ExecutionResult(CommandOutput(), 0, False, None, None, 1.0, 0.0)))
    assert finished.exitCode == 0 and SHELL_ENDED_FIRST_NOTE not in (finished.note or "")


async def test_a_pause_ends_what_the_session_left_running_and_the_next_call_starts_a_new_shell(home: Path) -> None:
    """Controls red team, 2026-12-04: a loop `terminal_run` left in the background went on after a
    pause until the app quit. A pause now ends the session's shell, and what it started."""
    marker = f"37{os.getpid() % 1000}.5"
    paths = AppPaths.from_environment()
    async with serving(home) as client:
        started = await call(client, "terminal_run", {"command": f"(sleep {marker} &) ; export KEPT=1; echo started"})
        assert "started" in started["output"], started
        assert live_processes(marker), "the job outlives its command"
        paused_at = time.monotonic()
        with Journal.open(paths) as journal:
            journal.set_paused(True)
        while live_processes(marker) and time.monotonic() - paused_at < 3 * STOP_DEADLINE_S:
            await anyio.sleep(0.05)
        ended_after = time.monotonic() - paused_at
        with Journal.open(paths) as journal:
            journal.set_paused(False)
        again = await call(client, "terminal_run", {"command": "echo ${KEPT:-new}"})
    assert live_processes(marker) == [] and ended_after < STOP_DEADLINE_S, ended_after
    assert "new" in again["output"], again  # a new shell: what the old one set is gone


async def test_keys_refused_as_the_settings_changed_do_not_count_as_typed(
    home: Path, paths: AppPaths, hub: Hub
) -> None:
    """A review, 2026-12-05: `echo ` refused (settings changed) still counted as typed, so the next
    keys, `rm -rf DIR`, were judged as `echo rm -rf DIR` and bash deleted DIR."""
    victim = paths.data_dir.parent / "victim"
    victim.mkdir()
    hub.set_settings(approval_mode=approval.ApprovalMode.NEVER.value)  # the user's own earlier click: never asked
    async with serving(home, bound=True) as client:
        await call(client, "terminal_run", {"command": "bash", "timeout": 300})
        # The click asking again; its push not sent yet. (Not the container switched back on: that now
        # ends an uncontained session, a ninth red team's route.)
        hub.state = with_changes(hub.state, approval_mode=approval.ApprovalMode.DESTRUCTIVE.value)
        refused = await call(client, "terminal_send_keys", {"keys": "echo "})
        hub.connections.push_all(StatePush(hub.state.to_wire()))
        with anyio.fail_after(20):  # until the tray's runner has the push: a command judged anew runs
            while (await client.call_tool("execute_command", {"command": "true"})).is_error:
                await anyio.sleep(0.02)
        later = await call(client, "terminal_send_keys", {"keys": f"rm -rf {victim}\n"})
        await call(client, "terminal_interrupt")
    assert SETTINGS_CHANGED_MESSAGE in refused["error"], refused
    assert "would need the user's approval" in later["error"], later
    assert victim.exists()
