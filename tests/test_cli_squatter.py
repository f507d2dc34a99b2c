"""A program squatting on the tray's address while no tray runs (a red team, 2026-12-05): a process a
command left behind binds the abstract socket and acknowledges every frame. The user's `pause` and
`stop` must still reach the headless servers, through the journal and the pause file, and say that
the program there could not be verified as the app.

The squatter is a real process of this user (a script, below); the CLI is a process, run as the user
runs it; the headless server it must reach runs in this one (tests/in_process_server.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from app.core.channel.transport import address_for
from app.core.journal.store import Journal
from app.core.messages import PAUSED_MESSAGE
from app.core.paths import AppPaths
from tests.in_process_server import came, serving
from tests.stdio_client import run

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the tray's abstract socket (Linux)"),
]

# Binds the tray's address, claims the right data folder, and answers every frame with an ack that
# says what the user hopes to read; each frame it gets goes to its log, one JSON object a line.
SQUATTER = r"""
import json, socket, sys, threading
from multiprocessing.connection import Connection

name, data_dir, log_path = sys.argv[1:4]
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind("\0" + name)
listener.listen(8)
print("ready", flush=True)

def serve(sock):
    connection = Connection(sock.detach())
    try:
        while True:
            message = json.loads(connection.recv_bytes())
            with open(log_path, "a") as log:
                log.write(json.dumps(message) + "\n")
            connection.send_bytes(json.dumps({
                "op": "ack", "seq": message.get("seq"), "data_dir": data_dir,
                "message": "Host access is PAUSED: new commands are refused.",
            }).encode())
    except (EOFError, OSError, ValueError):
        pass

while True:
    sock, _ = listener.accept()
    threading.Thread(target=serve, args=(sock,), daemon=True).start()
"""


@contextmanager
def squatting(paths: AppPaths, log: Path) -> Iterator[subprocess.Popen[str]]:
    """The squatter, listening at the tray's address for `paths` until the block ends."""
    address = address_for(paths)
    assert address.kind == "abstract"
    program = subprocess.Popen(
        [sys.executable, "-c", SQUATTER, address.name, os.path.realpath(paths.data_dir), str(log)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert program.stdout is not None and program.stdout.readline() == "ready\n"
        yield program
    finally:
        program.kill()
        program.wait()


def cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COWORK_TERMINAL_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "app", *args], env=env, capture_output=True, text=True, timeout=60)


def heard(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


async def test_pause_reaches_a_headless_server_past_a_program_squatting_on_the_trays_address(
    home: Path, paths: AppPaths, tmp_path: Path
) -> None:
    log = tmp_path / "squatter.log"
    async with serving(home) as client:
        assert (await run(client, {"command": "echo before"}))["stdout"] == "before\n"
        with squatting(paths, log):
            paused = await anyio.to_thread.run_sync(cli, home, "pause")
            after = await run(client, {"command": "echo after the pause"})
    with Journal(paths) as journal:
        assert journal.is_paused(), f"the squatter heard {heard(log)}; the CLI said {paused.stdout!r}"
    assert after.get("error", "").endswith(PAUSED_MESSAGE), after
    assert paused.returncode == 0, paused.stderr
    assert "could not be verified" in paused.stdout and "written directly" in paused.stdout, paused.stdout
    assert "Host access is PAUSED" in paused.stdout


async def test_stop_reaches_a_headless_server_past_a_program_squatting_on_the_trays_address(
    home: Path, paths: AppPaths, tmp_path: Path
) -> None:
    log = tmp_path / "squatter.log"
    result: dict = {}
    async with serving(home) as client, anyio.create_task_group() as group:

        async def call() -> None:
            result.update(await run(client, {"command": "sleep 30"}))

        group.start_soon(call)
        with Journal(paths) as journal, anyio.fail_after(10):
            while not journal.active_commands():
                await anyio.sleep(0.05)
            command_id = journal.active_commands()[0].id
        with squatting(paths, log):
            stopped = await anyio.to_thread.run_sync(cli, home, "stop", str(command_id))
        # The server ends it at its next look at the journal.
        assert await came(lambda: bool(result)), f"not stopped; the squatter heard {heard(log)}; the CLI said {stopped}"
    assert stopped.returncode == 0, stopped.stderr
    assert "could not be verified" in stopped.stdout and "written directly" in stopped.stdout, stopped.stdout
    assert f"Asked the server running command #{command_id} to stop it." in stopped.stdout
    assert result["exitCode"] is None and "stopped by the user" in result["note"], result


def test_stop_of_a_command_that_is_not_running_is_not_taken_from_a_squatters_ack(
    home: Path, paths: AppPaths, tmp_path: Path
) -> None:
    """The squatter acknowledges a stop the journal cannot apply: the CLI says it failed, and why."""
    with squatting(paths, tmp_path / "squatter.log"):
        stopped = cli(home, "stop", "999")
    assert stopped.returncode == 2, stopped
    assert "Command #999 is not running" in stopped.stderr and "could not be verified" in stopped.stderr, stopped
    assert "may not have taken effect" in stopped.stderr and stopped.stdout == "", stopped
