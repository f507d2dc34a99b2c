"""The MCP server's edges and the journal's, each at the cheapest level that reaches it: the stdio
transport's repair of lone surrogates and its stop signals as pure functions and on the transport in
this process (stdin and stdout are pipes the test holds, the signal a real one); the tools on the
headless server in this process (tests/in_process_server.py), with requests the SDK's typed client
would not send written as raw JSON-RPC; the journal and the move of the old Windows folder on real
SQLite files in the test's own folders."""

from __future__ import annotations

import io
import json
import os
import signal
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp_types import Implementation
from pydantic import ValidationError

from app.core import data_folder, liveness
from app.core.journal import migration, opening, pause_file
from app.core.journal.store import Journal, Outcome, Status
from app.core.paths import AppPaths, LegacySources
from app.server import stdio_transport
from app.server.argument_gate import CallGate, ServiceUnavailable
from app.server.host_side import HostSide
from app.server.mcp_server import PushRelay, build_server
from app.server.stdio_transport import (
    UNENCODABLE_META,
    RepairingReader,
    ServerStopped,
    repair_line,
    serve_stdio,
    stop_signal_in,
)
from tests.in_process_server import serving
from tests.raw_stdio import RawServer
from tests.test_data_folder import LINUX_ROOT, fill
from tests.test_paths import old_journal

if sys.version_info >= (3, 11):
    from builtins import BaseExceptionGroup
else:  # pragma: no cover - the app's oldest Python
    from exceptiongroup import BaseExceptionGroup

CLAUDE_CODE = Implementation(name="claude-code", version="2.1.0")
RawRequest = types.Request[dict[str, Any], str]  # params sent as written: what a client may put on the wire


def call_line(arguments: str) -> str:
    params = f'{{"name":"execute_command","arguments":{arguments}}}'
    return f'{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{params}}}'


# The stdio transport: lines with lone surrogates, and the signals that stop a server.


def test_a_lone_surrogate_inside_a_list_argument_is_replaced_and_named_for_the_model() -> None:
    repaired = repair_line(call_line(r'{"command":"echo","env":{"A":["ok","\ud800"]},"cwd":["\udc01"]}'))
    assert repaired is not None, "the call must reach the argument gate, not be dropped unanswered"
    params = repaired.message.model_dump(by_alias=True, exclude_unset=True)["params"]
    assert params["arguments"]["env"] == {"A": ["ok", "\ufffd"]} and params["arguments"]["cwd"] == ["\ufffd"]
    assert params["_meta"][UNENCODABLE_META] == ["`env` value for A", "`cwd.0`"]


@pytest.mark.parametrize(
    "line",
    [
        call_line('{"command":"echo plain"}'),  # nothing to repair: the SDK read it already
        call_line(r'{"command":"echo \ud800"'),  # not JSON at all, surrogate or not
        call_line(r'{"command":"echo \ud83d\ude00"}'),  # a whole pair: an emoji, valid for every parser
        r'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":["\ud800"]}',  # params that are no object
        r'["\ud800"]',  # no JSON-RPC message at all
    ],
    ids=["no-escape", "broken-json", "surrogate-pair", "params-list", "not-a-message"],
)
def test_a_line_the_repair_cannot_help_is_left_as_the_sdk_judged_it(line: str) -> None:
    assert repair_line(line) is None


def rejected(line: str) -> ValidationError:
    """What the SDK's stdio reader hands on for a line its parser rejects."""
    with pytest.raises(ValidationError) as caught:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    return caught.value


@pytest.mark.anyio
async def test_the_repairing_reader_repairs_what_it_can_and_hands_on_every_other_error() -> None:
    send, receive = anyio.create_memory_object_stream[Any](4)
    broken = rejected('{"jsonrpc":"2.0","id":1,"method":')
    await send.send(rejected(call_line(r'{"command":"echo \ud800"}')))
    await send.send(broken)
    async with RepairingReader(receive) as reader:
        first = await reader.receive()
        assert isinstance(first, SessionMessage) and first.message.model_dump()["params"]["arguments"] == {
            "command": "echo \ufffd"
        }
        assert await reader.receive() is broken, "a line that is not JSON stays the SDK's error (it answers it)"
        send.close()
        assert [item async for item in reader] == []
    with pytest.raises(anyio.ClosedResourceError):
        await receive.receive()
    other_send, other_receive = anyio.create_memory_object_stream[Any](1)
    RepairingReader(other_receive).close()
    with pytest.raises(anyio.BrokenResourceError):
        other_send.send_nowait("nobody reads this")


def test_a_stop_signal_at_start_up_is_found_even_inside_nested_exception_groups() -> None:
    with pytest.raises(ServerStopped) as caught:
        stdio_transport._raise_stopped(signal.SIGHUP, None)  # the handler serve installs until serving begins
    stopped = caught.value
    assert stopped.signal_name == "SIGHUP" and stop_signal_in(stopped) == "SIGHUP"
    nested = BaseExceptionGroup("loop", [ValueError("other"), BaseExceptionGroup("inner", [stopped])])
    assert stop_signal_in(nested) == "SIGHUP"
    assert stop_signal_in(BaseExceptionGroup("loop", [ValueError("no signal here")])) is None
    assert stop_signal_in(RuntimeError("a real failure")) is None, "a failure is not taken for a stop"


def test_the_loop_serves_stdio_only_from_pipes_and_sockets_on_posix() -> None:
    fifo, sock, regular, tty = stat.S_IFIFO, stat.S_IFSOCK, stat.S_IFREG | 0o644, stat.S_IFCHR | 0o620
    assert stdio_transport.loop_fits("linux", [fifo, fifo]) and stdio_transport.loop_fits("darwin", [sock, fifo])
    assert not stdio_transport.loop_fits("win32", [fifo, fifo]), "Windows' loop cannot wait on a pipe"
    assert not stdio_transport.loop_fits("linux", [fifo, regular]), "epoll refuses a regular file"
    assert not stdio_transport.loop_fits("linux", [tty, tty]), "a terminal is left blocking, as the shell wants it"


def test_stdio_without_a_file_behind_it_is_left_to_the_sdks_transport(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO())  # no fd at all (an embedding host, pythonw)
    with stdio_transport.loop_streams() as streams:
        assert streams is None
    read_end, write_end = os.pipe()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.FileIO(read_end, "rb", closefd=False)))
    os.close(write_end)
    os.close(read_end)  # an fd that is no longer open: fstat fails
    with stdio_transport.loop_streams() as streams:
        assert streams is None


# fds 0 and 1 are pipes here, as from a client: what the child's code prints must not reach the wire.
LOOP_CHILD = r"""
import os, sys, anyio
from app.server.stdio_transport import loop_streams

async def main():
    with loop_streams() as stdio:
        lines, writer = stdio.lines, stdio.writer
        print("stray print", flush=True)
        os.write(1, b"stray write\n")
        got = [line async for line in lines]
        await writer.write(f"{[len(line) for line in got]} {got[-1]!r} {os.read(0, 8)!r}\n")
        await writer.write("x" * 300_000 + "\n")
    print("restored", os.get_blocking(1), os.get_blocking(0), flush=True)

anyio.run(main)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="the loop serves stdio on POSIX only")
def test_stdio_on_the_loop_reads_long_and_unfinished_lines_writes_past_a_full_pipe_and_keeps_strays_off_the_wire(
    cli_env: dict[str, str],
) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", LOOP_CHILD],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**cli_env, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)},
    )
    assert child.stdin is not None and child.stdout is not None
    long_line = b"a" * 200_000 + b"\n"
    for start in range(0, len(long_line), 50_000):  # arrives in pieces, as a big request does
        child.stdin.write(long_line[start : start + 50_000])
        child.stdin.flush()
        time.sleep(0.05)
    child.stdin.write(b'{"jsonrpc":"2.0"}\r\nlast line, no newline')
    child.stdin.close()
    time.sleep(0.5)  # the child's 300 kB line waits for room in the pipe meanwhile
    assert child.stderr is not None
    out, err = child.stdout.read(), child.stderr.read()
    assert child.wait(timeout=30) == 0, err.decode()
    first, second, third = out.decode().split("\n", 2)
    assert first == "[200001, 19, 21] 'last line, no newline' b''", "fd 0 read the null device while serving"
    assert second == "x" * 300_000
    assert third == "restored True True\n", "the wire is back on fds 0 and 1, blocking as it was"
    assert "stray print" in err.decode() and "stray write" in err.decode()


# With every fd but `free` taken, a step of the claim fails: 1 free, the second duplicate; 2 free, the
# null device for fd 0.
CLAIM_CHILD = r"""
import json, os, resource, sys
from app.server.stdio_transport import loop_streams
resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
report = []
for free in (1, 2):
    taken = []
    while True:
        try:
            taken.append(os.open(os.devnull, os.O_RDONLY))
        except OSError:
            break
    for fd in taken[:free]:
        os.close(fd)
    with loop_streams() as stdio:
        report.append(stdio is None)
    for fd in taken[free:]:
        os.close(fd)
    report.append(len(os.listdir("/proc/self/fd")))
report += [os.path.realpath("/proc/self/fd/0") != os.devnull, os.get_blocking(0), os.get_blocking(1)]
print(json.dumps(report))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc, and the loop serves stdio on POSIX only")
def test_when_the_os_refuses_a_step_of_taking_stdio_for_the_loop_it_is_left_as_it_was(cli_env: dict[str, str]) -> None:
    child = subprocess.run(
        [sys.executable, "-c", CLAIM_CHILD],
        input=b"",
        capture_output=True,
        env={**cli_env, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)},
        timeout=30,
        check=False,
    )
    assert child.returncode == 0, child.stderr.decode()
    refused_dup, fds_after_dup, refused_null, fds_after_null, wire_on_0, *blocking = json.loads(child.stdout)
    assert refused_dup and refused_null, "the SDK's transport serves instead"
    assert fds_after_dup == fds_after_null, "no duplicate was left open"
    assert wire_on_0 and blocking == [True, True], "fds 0 and 1 as they were"


HELLO = json.dumps(
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "edge", "version": "1"}}}
)  # fmt: skip


def serve_process(cli_env: dict[str, str], stdin: int, stdout: int) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "app", "serve", "--headless"]
    return subprocess.Popen(argv, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, env=cli_env)


@pytest.mark.skipif(sys.platform == "win32", reason="the loop serves stdio on POSIX only")
@pytest.mark.parametrize("last", ["\n", ""], ids=["last line ends", "last line unfinished"])
def test_requests_sent_just_before_the_client_closes_stdin_are_answered(cli_env: dict[str, str], last: str) -> None:
    """The SDK cancels what is in flight at end of file; a quick request that came with it still
    gets its answer (on the loop, end of file once came before its handler had started)."""
    server = serve_process(cli_env, subprocess.PIPE, subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None and server.stderr is not None
    server.stdin.write(f"{HELLO}\n".encode())
    server.stdin.flush()
    assert json.loads(server.stdout.readline())["id"] == 1
    requests = ['{"jsonrpc":"2.0","method":"notifications/initialized"}', '{"jsonrpc":"2.0","id":2,"method":"ping"}']
    requests.append('{"jsonrpc":"2.0","id":3,"method":"tools/list"}')
    server.stdin.write(("\n".join(requests) + last).encode())
    server.stdin.close()  # at once, with the requests
    answers = {message["id"]: message for message in map(json.loads, server.stdout.read().splitlines())}
    assert server.wait(timeout=30) == 0, server.stderr.read()
    server.stdout.close()
    server.stderr.close()
    assert "result" in answers[2] and "result" in answers[3], answers


@pytest.mark.skipif(sys.platform == "win32", reason="the loop serves stdio on POSIX only")
def test_a_client_that_stops_reading_answers_ends_serving_as_the_end_of_stdin_does(cli_env: dict[str, str]) -> None:
    server = serve_process(cli_env, subprocess.PIPE, subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None and server.stderr is not None
    server.stdin.write(f"{HELLO}\n".encode())
    server.stdin.flush()
    assert json.loads(server.stdout.readline())["id"] == 1
    server.stdout.close()  # the client closes its end of the answers, and asks once more
    server.stdin.write(b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n')
    server.stdin.flush()
    try:
        assert server.wait(timeout=30) == 0
        assert "Traceback" not in server.stderr.read().decode()
    finally:
        server.stdin.close()
        server.stderr.close()


@pytest.mark.skipif(sys.platform == "win32", reason="the loop serves stdio on POSIX only")
def test_serve_reads_its_pipes_on_the_loop_and_leaves_them_blocking_when_a_signal_stops_it(
    cli_env: dict[str, str],
) -> None:
    """A wrapper script that starts `serve` without `exec` shares its pipes: their mode is the
    pipes' own, so `serve` must give them back blocking, also when a signal ends it."""
    into_read, into_write = os.pipe()
    out_read, out_write = os.pipe()  # the test keeps the server's ends too, as such a wrapper does
    server = serve_process(cli_env, into_read, out_write)
    try:
        os.write(into_write, f"{HELLO}\n".encode())
        with os.fdopen(os.dup(out_read), "rb") as answers:
            assert json.loads(answers.readline())["id"] == 1
        assert not os.get_blocking(into_read) and not os.get_blocking(out_write), "served on the loop"
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=30) == 0
        assert os.get_blocking(into_read) and os.get_blocking(out_write), "given back as it found them"
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        assert server.stderr is not None
        server.stderr.close()
        for fd in (into_read, into_write, out_read, out_write):
            os.close(fd)


@pytest.mark.parametrize("ending", ["stdin closed", "SIGTERM"])
def test_a_server_whose_stdout_is_a_file_is_served_by_the_sdks_transport_and_answers(
    home: Path, tmp_path: Path, ending: str
) -> None:
    server = RawServer(home, "--headless", output=tmp_path / "answers.jsonl")
    try:
        assert server.initialize()["result"]["serverInfo"]["name"] == "cowork-terminal"
        answer = server.call("execute_command", '{"command": "echo from a file"}')
        assert answer is not None and json.loads(answer)["stdout"] == "from a file\n"
        if ending == "SIGTERM" and sys.platform != "win32":
            server.process.send_signal(signal.SIGTERM)
            assert server.wait(30) == 0
            assert "stopped by SIGTERM" in server.stderr()
    finally:
        server.close()
    assert server.process.returncode == 0


@pytest.mark.anyio
async def test_the_gate_keeps_each_tools_parameters_until_its_service_changes_and_no_invented_name() -> None:
    asked: list[str] = []

    async def declared(tool: str) -> list[str] | None:  # as the SDK's server lists its tools
        asked.append(tool)
        return ["command", "cwd"] if tool == "execute_command" else None

    gate = CallGate()
    gate.declared = declared
    for _ in range(3):
        assert await gate.parameters_of("execute_command") == ["command", "cwd"]
        assert await gate.parameters_of("made_up_tool") is None
    assert asked == ["execute_command", *["made_up_tool"] * 3], "a tool's parameters are listed once"
    gate.serve_with(ServiceUnavailable("the disk is full"))  # a service (re)opens: its tools may differ
    assert await gate.parameters_of("execute_command") == ["command", "cwd"]
    assert asked[-1] == "execute_command" and len(asked) == 5


@pytest.fixture
def signal_handlers() -> Iterator[None]:
    """The test's process keeps its own signal handlers whatever the server did with them."""
    names = [n for n in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, n)]
    saved = {name: signal.getsignal(getattr(signal, name)) for name in names}
    yield
    for name, handler in saved.items():
        signal.signal(getattr(signal, name), handler)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigterm_while_serving_ends_serving_at_once_though_stdin_stays_open(
    home: Path, monkeypatch: pytest.MonkeyPatch, signal_handlers: None
) -> None:
    """What `claude mcp list` does: initialize, then SIGTERM, the pipe left open. serve's own
    `on_stopped` ends the process (os._exit, which coverage cannot follow); here it hands the name on."""
    read_in, write_in = os.pipe()
    read_out, write_out = os.pipe()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.FileIO(read_in, "rb")))
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.FileIO(write_out, "wb")))
    answers = os.fdopen(read_out, "rb")
    paths = AppPaths.from_environment()
    hosts: list[HostSide] = []
    stopped_by: list[str] = []

    def open_host() -> HostSide:
        hosts.append(HostSide(paths, headless=True, tools=None))
        return hosts[0]

    stdin_open = [True]
    closing = threading.Lock()

    def end_stdin() -> None:
        """Lets the transport's stdin thread end, as the process's exit would."""
        with closing:
            if stdin_open[0]:
                stdin_open[0] = False
                os.close(write_in)

    signalled_at: list[float] = []

    def on_stopped(name: str) -> Any:
        stopped_by.append(name)
        assert time.monotonic() - signalled_at[0] < 10, "serving ended on the signal, not when stdin ended"
        end_stdin()
        raise ServerStopped(name)

    server = build_server(open_host)

    async def client_then_signal() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(serve_stdio, server._lowlevel_server, on_stopped)
            hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": CLAUDE_CODE.model_dump()}
            os.write(
                write_in, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}).encode()
            )
            os.write(write_in, b"\n")
            answer = json.loads(await anyio.to_thread.run_sync(answers.readline))
            assert answer["result"]["serverInfo"]["name"] == "cowork-terminal"
            signalled_at.append(time.monotonic())
            os.kill(os.getpid(), signal.SIGTERM)

    watchdog = threading.Timer(20, end_stdin)  # a serve that ignored the signal ends with its stdin
    watchdog.start()
    try:
        with pytest.raises(BaseException) as caught:
            anyio.run(client_then_signal)
        assert stop_signal_in(caught.value) == "SIGTERM"
        assert stopped_by == ["SIGTERM"], "serving ended on the signal, with stdin still open"
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL, "the loop gave the signal back"
    finally:
        watchdog.cancel()
        end_stdin()
        answers.close()
        os.close(write_out)
        for host in hosts:
            host.leave()


def test_news_from_the_tray_after_the_servers_loop_ended_ends_the_relay_quietly() -> None:
    handed: list[str] = []

    async def token() -> Any:
        return anyio.lowlevel.current_token()

    ended_loop = anyio.run(token)
    relay = PushRelay(ended_loop, lambda: handed.append("pushed"))
    before = {t.ident for t in threading.enumerate() if t.name == "tray-push-relay"}
    relay.start()
    relay.kick()  # the link's reader thread, as the server stops
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(
        t.name == "tray-push-relay" and t.ident not in before for t in threading.enumerate()
    ):
        time.sleep(0.01)
    assert not [t for t in threading.enumerate() if t.name == "tray-push-relay" and t.ident not in before]
    assert handed == [], "nothing runs on a loop that has ended"


# The move of the old Windows folder: nothing lost, nothing damaged overwritten.


def new_paths(tmp_path: Path) -> AppPaths:
    folder = tmp_path / "profile" / ".cowork-terminal"
    return AppPaths(data_dir=folder, log_dir=folder / "logs")


def test_an_old_folder_without_an_msix_copy_comes_over_whole_and_no_newer_log_is_overwritten(tmp_path: Path) -> None:
    local = tmp_path / "Local" / "cowork-terminal"
    with old_journal(local) as old:
        old.begin_command(command="echo old history", cwd=None, status=Status.FINISHED)
        old.set_paused(True)
    (local / "Logs" / "tray.log").write_text("old tray log\n")
    (local / "Logs" / "server.log").write_text("old server log\n")
    (local / "Logs" / "crash-dumps").mkdir()
    new = new_paths(tmp_path)
    data_folder.ensure(new)
    (new.log_dir / "server.log").write_text("this install's own log\n")

    report = migration.migrate(new, LegacySources(local=local, msix_local=tmp_path / "no-msix"))

    assert report is not None and report.copied_journal and report.imported_commands == 0
    assert report.copied_logs == 1 and report.problems == []
    with Journal(new) as journal:
        assert [c.command for c in journal.recent_commands()] == ["echo old history"]
        assert journal.is_paused()
    assert (new.log_dir / "tray.log").read_text() == "old tray log\n"
    assert (new.log_dir / "server.log").read_text() == "this install's own log\n", "never overwritten"
    assert not (new.log_dir / "crash-dumps").exists()


def test_an_msix_copy_alone_brings_its_history_even_from_a_folder_whose_name_reads_as_a_uri_escape(
    tmp_path: Path,
) -> None:
    # `%41` in a URI is "A": SQLite's read-only URI finds no such file, and the plain path is used.
    msix = tmp_path / "Packages" / "Claude" / "Ann%41" / "cowork-terminal"
    with old_journal(msix) as redirected:
        redirected.begin_command(command="echo from the msix copy", cwd=None, status=Status.FINISHED)
        redirected.begin_command(command="sleep 100", cwd=None)  # running when the app was updated
        redirected.set_paused(False)
    new = new_paths(tmp_path)

    report = migration.migrate(new, LegacySources(local=tmp_path / "no-local", msix_local=msix))

    assert report is not None and report.imported_commands == 2 and not report.copied_journal
    assert report.copied_logs == 0 and report.problems == []
    with Journal(new) as journal:
        assert {c.command: c.status for c in journal.recent_commands()} == {
            "echo from the msix copy": Status.FINISHED,
            "sleep 100": Status.INTERRUPTED,
        }
        assert journal.get_setting(migration.NOTICE_SETTING) == "Cowork Terminal moved its data to a new folder."
    assert sorted(p.name for p in msix.parent.iterdir()) == ["cowork-terminal"], "nothing created beside it"


def test_a_damaged_old_journal_is_left_as_it_was_and_the_new_one_starts_empty_and_says_so(tmp_path: Path) -> None:
    local = tmp_path / "Local" / "cowork-terminal"
    local.mkdir(parents=True)
    damaged = b"this is not SQLite" * 200
    (local / "journal.sqlite3").write_bytes(damaged)
    new = new_paths(tmp_path)

    report = migration.migrate(new, LegacySources(local=local, msix_local=tmp_path / "no-msix"))

    problem = "The old activity log could not be read (file is not a database); it starts empty."
    assert report is not None and not report.copied_journal
    assert report.problems == [problem]
    assert (local / "journal.sqlite3").read_bytes() == damaged, "the old file is kept as it was"
    assert not list(new.data_dir.glob("*.moving")), "no half-made journal left"
    with Journal(new) as journal:  # the user is told once (the tray's notice), not only the log
        assert journal.recent_commands() == []
        assert (
            journal.get_setting(migration.NOTICE_SETTING)
            == f"Cowork Terminal moved its data to a new folder. {problem}"
        )


def test_a_damaged_store_copy_keeps_the_old_journals_commands_and_pause_and_says_what_was_lost(
    tmp_path: Path,
) -> None:
    local, msix = tmp_path / "Local" / "cowork-terminal", tmp_path / "msix" / "cowork-terminal"
    with old_journal(local) as old:
        old.begin_command(command="echo kept", cwd=None, status=Status.FINISHED)
        old.set_paused(True)
    msix.mkdir(parents=True)
    (msix / "journal.sqlite3").write_bytes(b"not SQLite" * 200)
    new = new_paths(tmp_path)

    report = migration.migrate(new, LegacySources(local=local, msix_local=msix))

    assert report is not None and report.copied_journal
    with Journal(new) as journal:
        assert [c.command for c in journal.recent_commands()] == ["echo kept"]
        assert journal.is_paused(), "a pause never gets lost on the way"
        notice = journal.get_setting(migration.NOTICE_SETTING)
    assert "The commands run from Claude's Store version could not be read (file is not a database)." in notice


def test_a_store_copy_in_a_folder_whose_name_holds_a_hash_or_question_mark_comes_along(tmp_path: Path) -> None:
    """A Windows user name may hold `#`: unquoted in SQLite's URI it ended the path there."""
    local = tmp_path / "Local" / "cowork-terminal"
    msix = tmp_path / "Ann#1?x" / "msix" / "cowork-terminal"
    with old_journal(msix) as redirected:
        redirected.begin_command(command="echo from the store", cwd=None, status=Status.FINISHED)
    new = new_paths(tmp_path)

    report = migration.migrate(new, LegacySources(local=local, msix_local=msix))

    assert report is not None and report.problems == []
    with Journal(new) as journal:
        assert [c.command for c in journal.recent_commands()] == ["echo from the store"]
    assert sorted(p.name for p in (tmp_path / "Ann#1?x").parent.iterdir()) == ["Ann#1?x", "profile"]


def waits_for_a_lock(thread: threading.Thread) -> bool:
    """Whether `thread` is inside liveness's patient lock attempt (it retries there until the holder lets go)."""
    frame = sys._current_frames().get(thread.ident or -1)
    while frame is not None:
        if frame.f_code is liveness._hold.__code__:
            return True
        frame = frame.f_back
    return False


def test_a_journal_another_process_moved_in_while_we_waited_for_the_lock_is_not_overwritten(tmp_path: Path) -> None:
    local = tmp_path / "Local" / "cowork-terminal"
    with old_journal(local) as old:
        old.begin_command(command="echo old", cwd=None, status=Status.FINISHED)
    new = new_paths(tmp_path)
    data_folder.ensure(new)
    lock_path = new.locks_dir / migration.MIGRATION_LOCK
    results: list[Any] = []
    other = liveness.try_hold(lock_path)  # the other process, moving the folder
    assert other is not None
    try:
        mover = threading.Thread(
            target=lambda: results.append(migration.migrate(new, LegacySources(local=local, msix_local=tmp_path / "x")))
        )
        mover.start()
        deadline = time.monotonic() + 10
        while not waits_for_a_lock(mover) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert waits_for_a_lock(mover), "the second process waits for the lock"
        with Journal(new) as theirs:  # what the other process wrote meanwhile
            theirs.begin_command(command="echo written by the other process", cwd=None, status=Status.FINISHED)
    finally:
        other.release()
    mover.join(10)
    assert results == [None]
    with Journal(new) as journal:
        assert [c.command for c in journal.recent_commands()] == ["echo written by the other process"]


# Opening the journal: what is at its path decides, and the user reads why in words.


def test_a_link_planted_at_the_journals_path_is_not_followed_to_create_a_file_elsewhere(tmp_path: Path) -> None:
    paths = AppPaths(tmp_path / "home", tmp_path / "home" / "logs")
    data_folder.ensure(paths)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    paths.journal.symlink_to(elsewhere / "journal.sqlite3")
    with pytest.raises(data_folder.DataFolderError) as refused:
        Journal(paths)
    assert "commands are refused" in str(refused.value)
    assert list(elsewhere.iterdir()) == [], "nothing written through the link"


@pytest.mark.parametrize("what", ["folder", "dangling link"])
def test_a_journal_reopened_after_its_file_was_replaced_by_something_unusable_says_why(
    tmp_path: Path, what: str
) -> None:
    paths = AppPaths(tmp_path / "home", tmp_path / "home" / "logs")
    journal = Journal(paths)
    journal.begin_command(command="echo before", cwd=None, status=Status.FINISHED)
    aside = tmp_path / "aside"
    aside.mkdir()
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{paths.journal}{suffix}").exists():
            os.rename(f"{paths.journal}{suffix}", aside / f"journal.sqlite3{suffix}")
    if what == "folder":
        paths.journal.mkdir()
    else:
        paths.journal.symlink_to(tmp_path / "nowhere" / "journal.sqlite3")
    try:
        with pytest.raises(data_folder.DataFolderError) as refused:
            journal.reopen()
        assert "commands are refused" in str(refused.value)
    finally:
        journal.close()
    with Journal(AppPaths(aside, aside / "logs")) as kept:
        assert [c.command for c in kept.recent_commands()] == ["echo before"], "the moved file kept its rows"


def test_looks_at_a_journal_that_is_missing_or_whole_find_no_damage(tmp_path: Path) -> None:
    missing = tmp_path / "journal.sqlite3"
    assert opening.damage_on_disk(missing) is None and not missing.exists(), "a look creates no journal"
    watch = opening.DamageWatch(missing)
    assert watch.damage() is None and watch.damage() is None
    with Journal(AppPaths(tmp_path, tmp_path / "logs")) as journal:
        journal.begin_command(command="echo whole", cwd=None)
    assert opening.still_damaged(missing) is False, "replaced already by another process: not moved aside again"


def test_a_set_up_step_is_retried_while_another_process_holds_the_write_lock(tmp_path: Path) -> None:
    path = tmp_path / "fresh.sqlite3"
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("CREATE TABLE t (x)")
    other.execute("BEGIN EXCLUSIVE")  # another process creating the same fresh journal
    mine = sqlite3.connect(path, timeout=0, isolation_level=None)
    tries: list[float] = []

    def switch_to_wal() -> None:
        tries.append(time.monotonic())
        if len(tries) == 3:
            other.execute("COMMIT")
        mine.execute("PRAGMA journal_mode=WAL")

    try:
        opening.retry_while_locked(switch_to_wal)
        assert len(tries) == 3
        assert mine.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        with pytest.raises(sqlite3.OperationalError, match="no such table"):
            opening.retry_while_locked(lambda: mine.execute("SELECT * FROM missing"))
    finally:
        mine.close()
        other.close()


@LINUX_ROOT
def test_a_reader_in_a_read_only_folder_does_not_read_the_file_alone_while_its_newest_rows_live_in_the_wal(
    tmp_path: Path, small_disk: Path
) -> None:
    paths = AppPaths(tmp_path / "home", tmp_path / "home" / "logs")
    copy = small_disk / "home"
    copy.mkdir()
    with Journal(paths) as journal:
        journal.begin_command(command="echo committed", cwd=None)
        for suffix in ("", "-wal"):  # the files of a journal a writer had open, without the -shm
            (copy / f"journal.sqlite3{suffix}").write_bytes(Path(f"{paths.journal}{suffix}").read_bytes())
    assert (copy / "journal.sqlite3-wal").stat().st_size > 0
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    with pytest.raises(sqlite3.OperationalError):  # not the file's older rows, read as if they were all
        opening.connect_read_only(copy / "journal.sqlite3")


def test_a_held_command_is_found_by_its_confirmation_id_and_an_empty_look_for_stops_asks_nothing(
    paths: AppPaths,
) -> None:
    with Journal(paths) as journal:
        held = journal.begin_command(
            command="rm -rf build",
            cwd=None,
            status=Status.WAITING,
            confirmation_id="c-1",
            hold_expires_at=time.time() + 60,
        )
        found = journal.find_held("c-1")
        assert found is not None and found.id == held and found.command == "rm -rf build"
        assert journal.find_held("c-unknown") is None
        assert journal.stop_requests([]) == set()


def test_a_pause_file_that_is_missing_reads_as_never_written(tmp_path: Path) -> None:
    assert pause_file.stamp(tmp_path / "pause") == 0
    pause_file.write(tmp_path / "pause", True)
    assert pause_file.stamp(tmp_path / "pause") > 0


# The argument gate and what the tools answer, on the headless server in this process.


async def raw(client: Client, method: str, params: dict[str, Any], result: Any = types.CallToolResult) -> Any:
    return await client.session.send_request(RawRequest(method=method, params=params), result)


@pytest.mark.anyio
async def test_a_call_whose_name_or_arguments_have_the_wrong_shape_is_answered_not_left_hanging(home: Path) -> None:
    async with serving(home, client_info=CLAUDE_CODE) as client:
        for params in ({"name": "execute_command", "arguments": ["echo hi"]}, {"name": 5, "arguments": {}}):
            with anyio.fail_after(10), pytest.raises(MCPError, match="Invalid request parameters"):
                await raw(client, "tools/call", params)
        again = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "cowork", "version": "9"}}
        await raw(client, "initialize", again, types.InitializeResult)
        with Journal(AppPaths.from_environment()) as journal:  # at once, before any other request
            assert [(s.client_name, s.client_version) for s in journal.servers(live_only=False)] == [("cowork", "9")]
        with pytest.raises(MCPError, match="Invalid request parameters"):  # no name: the one it said stays
            await raw(client, "initialize", {**again, "clientInfo": "nobody"}, types.InitializeResult)
        echoed = await client.call_tool("execute_command", {"command": "echo still serving"})
    assert not echoed.is_error and echoed.structured_content["stdout"] == "still serving\n"
    with Journal.open(AppPaths.from_environment()) as journal:
        [server] = journal.servers(live_only=False)
        assert (server.client_name, server.client_version) == ("cowork", "9"), "the client it says it is now"


@pytest.mark.anyio
async def test_with_no_room_for_a_data_folder_the_tools_are_listed_and_each_call_says_why(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the data folder's parent should be\n")
    home = blocker / "cowork-home"
    async with serving(home) as client:
        listed = {tool.name for tool in (await client.list_tools()).tools}
        refused = await client.call_tool("execute_command", {"command": "echo hi"})
    assert {"execute_command", "command_wait", "terminal_run"} <= listed
    assert refused.is_error and f"data folder {home} does not exist and cannot be created" in refused.content[0].text


@LINUX_ROOT
def test_a_server_started_on_a_full_disk_answers_the_handshake_and_says_why_it_cannot_run_commands(
    small_disk: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    home = small_disk / "home"
    monkeypatch.setenv("COWORK_TERMINAL_HOME", str(home))
    keeper = Journal(AppPaths(home, home / "logs"))  # another server has the journal open (its WAL is there)
    keeper.begin_command(command="echo yesterday", cwd=None, status=Status.FINISHED)
    filler = fill(small_disk)

    async def scenario() -> tuple[types.CallToolResult, types.CallToolResult]:
        async with serving(home, client_info=CLAUDE_CODE) as client:
            during = await client.call_tool("execute_command", {"command": "echo during"})
            filler.unlink()
            after = await client.call_tool("execute_command", {"command": "echo after"})
        return during, after

    try:
        during, after = anyio.run(scenario)
    finally:
        keeper.close()
    assert during.is_error and "commands are refused until space is freed" in during.content[0].text
    assert not after.is_error and after.structured_content["stdout"] == "after\n"
    assert "the disk that holds Cowork Terminal's data is full" in capfd.readouterr().err, "said on serve's stderr"


@LINUX_ROOT
def test_a_client_that_names_itself_again_once_the_disk_is_full_still_gets_its_handshake(
    small_disk: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    home = small_disk / "home"
    monkeypatch.setenv("COWORK_TERMINAL_HOME", str(home))
    again = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "cowork", "version": "9"}}

    async def scenario() -> tuple[Any, types.CallToolResult]:
        async with serving(home, client_info=CLAUDE_CODE) as client:
            await client.call_tool("execute_command", {"command": "echo registered"})
            filler = fill(small_disk)
            with anyio.fail_after(10):
                hello = await raw(client, "initialize", again, types.InitializeResult)
            filler.unlink()
            return hello, await client.call_tool("execute_command", {"command": "echo after"})

    hello, after = anyio.run(scenario)
    assert hello.server_info.name == "cowork-terminal"
    assert "could not record the client's name in the journal" in caplog.text
    assert not after.is_error and after.structured_content["stdout"] == "after\n"


# Progress notifications: a refusal stays a refusal, a client whose handler fails still gets its result.


@pytest.mark.anyio
async def test_a_paused_session_command_asked_with_progress_is_refused_in_words(home: Path, paths: AppPaths) -> None:
    with Journal(paths) as journal:
        journal.set_paused(True)
    seen: list[str | None] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(message)

    async with serving(home, client_info=CLAUDE_CODE) as client:
        refused = await client.call_tool("terminal_run", {"command": "echo hi"}, progress_callback=on_progress)
        with Journal(paths) as journal:
            journal.set_paused(False)
        ran = await client.call_tool("terminal_run", {"command": "echo ran"}, progress_callback=on_progress)
    assert refused.is_error and "paused" in refused.content[0].text
    assert not ran.is_error and ran.structured_content["output"] == "ran\n"


# Jobs: another server's rows as the journal holds them, and this server's own output.


def another_servers_row(paths: AppPaths, command: str, status: Status, **fields: Any) -> int:
    with Journal(paths) as journal:
        return journal.begin_command(
            command=command, cwd=None, status=status, client_name=CLAUDE_CODE.name, client_version="2.1.0", **fields
        )


@pytest.mark.anyio
async def test_another_servers_jobs_read_from_the_journal_say_what_the_model_can_do(
    home: Path, paths: AppPaths
) -> None:
    running = another_servers_row(paths, "sleep 1000", Status.RUNNING)
    held = another_servers_row(
        paths, "rm -rf build", Status.WAITING, confirmation_id="c-9", hold_expires_at=time.time() + 60,
        reason="it deletes files",
    )  # fmt: skip
    refused = another_servers_row(paths, "sudo true", Status.REFUSED, reason="it asks for root")
    finished = another_servers_row(paths, "echo done", Status.RUNNING)
    with Journal(paths) as journal:
        journal.finish_command(finished, Outcome(status=Status.FINISHED, exit_code=0, stdout=b"done\n"))
    async with serving(home, client_info=CLAUDE_CODE) as client:

        async def tool(name: str, arguments: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
            result = await client.call_tool(name, arguments)
            return bool(result.is_error), json.loads(result.content[0].text)

        still = await tool("command_wait", {"jobId": running, "timeout": 50})
        waiting = await tool("command_wait", {"jobId": held, "timeout": 50})
        denied = await tool("command_wait", {"jobId": refused, "timeout": 50})
        output = await tool("command_output", {"jobId": finished})
        stopped = await tool("command_stop", {"jobId": finished})
    assert still == (False, still[1]) and still[1]["status"] == "running"
    assert still[1]["note"].startswith("Still running (in another server of this app); it goes on.")
    assert waiting[1]["status"] == "waiting" and "it deletes files" in waiting[1]["note"]
    assert denied[0] and denied[1]["status"] == "denied" and denied[1]["note"] == "it asks for root"
    assert output[1]["output"] == "done\n" and output[1]["status"] == "finished", "the journal kept its output"
    assert not stopped[0] and stopped[1]["status"] == "finished" and stopped[1]["exitCode"] == 0
    with Journal(paths) as journal:
        assert journal.stop_requests([finished]) == set(), "a job that had ended is not asked to stop"


@pytest.mark.anyio
async def test_a_jobs_output_is_read_while_its_call_waits_and_after_it_ended(home: Path, paths: AppPaths) -> None:
    async with serving(home, client_info=CLAUDE_CODE) as client:
        answers: list[types.CallToolResult] = []
        async with anyio.create_task_group() as group:

            async def run_it() -> None:
                answers.append(await client.call_tool("execute_command", {"command": "echo first; sleep 2; echo last"}))

            group.start_soon(run_it)
            with anyio.fail_after(20):
                while True:  # the call still waits for its command: the output is in memory
                    listed = json.loads((await client.call_tool("command_list", {})).content[0].text)["jobs"]
                    if listed:
                        read = json.loads(
                            (await client.call_tool("command_output", {"jobId": listed[0]["jobId"]})).content[0].text
                        )
                        if read["output"] == "first\n":
                            break
                    await anyio.sleep(0.05)
            assert read["status"] == "running"
        job = answers[0].structured_content["jobId"]
        after = json.loads((await client.call_tool("command_output", {"jobId": job})).content[0].text)
    assert after == {**after, "status": "finished", "output": "first\nlast\n"}


@pytest.mark.anyio
async def test_ctrl_c_to_a_session_command_that_ignores_it_says_it_still_runs(home: Path) -> None:
    async with serving(home, client_info=CLAUDE_CODE) as client:
        started = await client.call_tool("terminal_run", {"command": "trap '' INT; sleep 8; echo woke", "timeout": 300})
        interrupted = await client.call_tool("terminal_interrupt", {})
        cancelled = await client.call_tool("terminal_cancel", {"confirmation_id": "c-nobody-knows"})
    assert started.structured_content["timedOut"] is True
    assert interrupted.content[0].text.startswith("Sent Ctrl-C to the session, but its command is still running")
    assert cancelled.is_error and "No command is held as 'c-nobody-knows'" in cancelled.content[0].text


# The host side, the tray's runner and the connection check, at their edges.


def test_a_host_side_never_opened_has_nothing_to_prepare_and_one_opened_twice_is_the_same(home: Path) -> None:
    paths = AppPaths.from_environment()
    unopened = HostSide(paths, headless=True, tools=None)
    unopened.prepare()
    unopened.warm_up()
    assert not paths.journal.exists(), "nothing was opened or written"
    host = HostSide(paths, headless=True, tools=None)
    server = build_server(lambda: host)
    try:
        first = host.open(server)
        assert host.open(server) is first
    finally:
        host.leave()
    with Journal(paths) as journal:
        assert [s.state for s in journal.servers(live_only=False)] == ["exited"], "registered once, left once"


@pytest.mark.anyio
async def test_the_tray_runs_a_held_session_command_once_allowed_and_a_withdrawn_one_never(
    home: Path, paths: AppPaths, hub: Any, tmp_path: Path
) -> None:
    from tests.in_process_server import allow_when_held, came, held_by
    from tests.test_approval import held_id

    for name in ("kept", "removed"):
        (tmp_path / name).mkdir()
    progress: list[str | None] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(message)

    hub.set_settings(approval_window_s=1.0)  # a held terminal_run answers after this window
    async with serving(home, bound=True, client_info=CLAUDE_CODE) as client:
        await client.call_tool("terminal_run", {"command": f"cd {tmp_path}"})
        held = await client.call_tool("terminal_run", {"command": "rm -rf removed"})
        await allow_when_held(hub)
        confirmed = await client.call_tool(
            "terminal_confirm", {"confirmation_id": held_id(held.content[0].text)}, progress_callback=on_progress
        )
        withdrawn_hold = await client.call_tool("terminal_run", {"command": "rm -rf kept"})
        [pending] = await held_by(hub)
        withdrawn = await client.call_tool(
            "terminal_cancel", {"confirmation_id": held_id(withdrawn_hold.content[0].text)}
        )
        assert await came(lambda: hub.pending_holds() == []), "the user's prompt for it is gone"
        job = await client.call_tool("execute_command", {"command": "rm -rf kept", "background": True})
        waiting = json.loads(job.content[0].text)
        read = json.loads((await client.call_tool("command_output", {"jobId": waiting["jobId"]})).content[0].text)
        await client.call_tool("command_stop", {"jobId": waiting["jobId"]})
    assert not confirmed.is_error and confirmed.structured_content["result"]["exitCode"] == 0
    assert not (tmp_path / "removed").exists()
    assert pending.command == "rm -rf kept"
    assert withdrawn.content[0].text == "Withdrawn: the held command will not run ('rm -rf kept')."
    assert waiting["status"] == "waiting" and (read["status"], read["output"]) == ("waiting", "")
    assert (tmp_path / "kept").exists()


@pytest.mark.anyio
async def test_the_trays_runner_for_a_server_whose_data_folder_cannot_exist_answers_with_the_reason(
    tmp_path: Path, hub: Any
) -> None:
    from app.core.channel.call_messages import Call
    from app.server.tray_side import TrayRunner

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x\n")
    broken = AppPaths(blocker / "home", blocker / "home" / "logs")
    call = Call("call-1", "execute_command", {"command": "echo hi"}, CLAUDE_CODE.name, CLAUDE_CODE.version)
    runner = TrayRunner(broken, call)
    assert runner.busy() is False, "a runner not started yet runs nothing"
    async with anyio.create_task_group() as group:
        await runner.start(group)
        try:
            answer = await runner.call(call, None)
            assert runner.busy() is False
        finally:
            await runner.aclose()
    assert answer["isError"] is True
    assert f"data folder {blocker / 'home'} does not exist and cannot be created" in answer["content"][0]["text"]


def test_the_check_of_a_client_not_installed_says_so_without_starting_anything() -> None:
    from app.core.claude import locations as cl
    from app.server import connection_check as check

    nowhere = cl.ClientLocation(cl.CLAUDE_CODE, "Claude Code", False, None, None, "`claude` not found on PATH")
    result = check.check_client(nowhere, {})
    assert result.kind == check.CONFIG_UNREADABLE
    assert result.message == "Claude Code: Claude Code is not installed here: `claude` not found on PATH"


def test_the_check_keeps_the_servers_own_words_when_bash_is_found_here_and_there() -> None:
    from app.server import connection_check as check

    assert check._bash_problem(None, "bash could not be started: exec format error") == (
        "bash could not be started: exec format error"
    )


def test_a_server_that_does_not_answer_in_time_is_reported_as_timed_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path
) -> None:
    from desktop_env import make_fake_desktop

    from app.core.claude import config as cc
    from app.core.claude import locations as cl
    from app.server import connection_check as check

    make_fake_desktop(tmp_path, monkeypatch)
    entry = cc.this_app_entry()
    result = check.check_entry(cl.CLAUDE_DESKTOP, "Claude Desktop", entry, entry, timeout_s=0.05)
    assert result.kind == check.TIMED_OUT
    assert result.message.startswith("The server for Claude Desktop did not answer within 0.05 s")
