"""The CLI's pause lands in the journal whoever answers at the tray's address (red team 13).

Under Wine a look-alike a command left behind passed for the tray, took the tray's pipe after the
tray quit and acknowledged the user's `pause`, which the CLI then trusted: the journal (what headless
servers and the next tray read) was not paused. A tightening may come from anywhere, so the CLI now
writes it itself too, wherever it can write the data folder. On Linux the same holds for the look-alike
the docs admit (docs/security.md, "What it costs"): our own Python running a module named `app` of
its own, outside any container, passes every check a server and the CLI make.

The CLI is a process, run as the user runs it; the look-alike and the tray are real processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from app.core.channel.peer import own_facts, tray_refusal
from app.core.channel.transport import address_for, connect
from app.core.journal.store import Journal
from app.core.messages import PAUSED_MESSAGE
from app.core.paths import AppPaths
from tests.in_process_server import serving
from tests.stdio_client import run
from tests.tray_process import running_tray

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the tray's abstract socket (Linux)"),
]

# `python -m app tray` where `app` is this module's package, not ours: it listens at the tray's
# address, claims the right data folder and acknowledges every frame with what the user hopes to read.
LOOK_ALIKE = r"""
import json, os, socket, threading
from multiprocessing.connection import Connection

listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind("\0" + os.environ["LOOK_ALIKE_ADDRESS"])
listener.listen(8)
print("ready", flush=True)

def serve(sock):
    connection = Connection(sock.detach())
    try:
        while True:
            message = json.loads(connection.recv_bytes())
            with open(os.environ["LOOK_ALIKE_LOG"], "a") as log:
                log.write(json.dumps(message) + "\n")
            words = "Host access is PAUSED: new commands are refused." if message.get("op") == "pause" else "done"
            connection.send_bytes(json.dumps({
                "op": "ack", "seq": message.get("seq"), "data_dir": os.environ["LOOK_ALIKE_DATA_DIR"],
                "message": words,
            }).encode())
    except (EOFError, OSError, ValueError):
        pass

while True:
    sock, _ = listener.accept()
    threading.Thread(target=serve, args=(sock,), daemon=True).start()
"""
FOREIGN_WRITE_LOGGED = "the journal was changed by another program"  # record.tell_foreign_change
TRAY_TICKS_S = 1.5  # the tray looks at the journal every 0.25 s (ui/tray/app.py POLL_S)


@contextmanager
def look_alike(paths: AppPaths, folder: Path, log: Path) -> Iterator[subprocess.Popen[str]]:
    """The look-alike, as `<our python> -m app tray` by its command line, until the block ends."""
    package = folder / "app"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(LOOK_ALIKE)
    env = {
        **os.environ,
        "LOOK_ALIKE_ADDRESS": address_for(paths).name,
        "LOOK_ALIKE_DATA_DIR": os.path.realpath(paths.data_dir),
        "LOOK_ALIKE_LOG": str(log),
    }
    env.pop("PYTHONPATH", None)
    program = subprocess.Popen(
        [sys.executable, "-m", "app", "tray"], cwd=folder, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert program.stdout is not None and program.stdout.readline() == "ready\n"
        yield program
    finally:
        program.kill()
        program.wait()


def passes_for_the_tray(paths: AppPaths) -> str | None:
    """What a server and the CLI conclude of the process at the tray's address (None: the tray)."""
    channel, peer = connect(address_for(paths))
    channel.close()
    real = os.path.realpath(paths.data_dir)
    return tray_refusal(peer, own_facts(real), real)


def cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COWORK_TERMINAL_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "app", *args], env=env, capture_output=True, text=True, timeout=60)


def heard(log: Path) -> list[str]:
    return [json.loads(line).get("op") for line in log.read_text().splitlines()] if log.exists() else []


def test_the_cli_pause_lands_in_the_journal_past_a_look_alike_that_passes_for_the_tray(
    home: Path, paths: AppPaths, tmp_path: Path
) -> None:
    log = tmp_path / "look_alike.log"
    with look_alike(paths, tmp_path / "look_alike", log):
        assert passes_for_the_tray(paths) is None, "the look-alike must pass the checks for this test to mean anything"
        paused = cli(home, "pause")
    assert "pause" in heard(log), (heard(log), paused)
    assert paused.returncode == 0, paused.stderr
    assert paused.stdout.strip() == "Host access is PAUSED: new commands are refused.", paused.stdout
    with Journal(paths) as journal:
        assert journal.is_paused(), f"the user's pause went only to the look-alike: {paused.stdout!r}"


async def test_the_cli_pause_with_the_real_tray_is_in_the_journal_and_written_once(home: Path, paths: AppPaths) -> None:
    """The tray writes the pause before it answers; the CLI's own write then finds it there and writes
    nothing (the tray would tell the user another program changed its journal)."""
    with running_tray(home):
        async with serving(home, headless=False) as client:
            paused = await anyio.to_thread.run_sync(cli, home, "pause")
            after = await run(client, {"command": "echo after the pause"})
            with Journal(paths) as journal:
                in_journal = journal.is_paused()
            time.sleep(TRAY_TICKS_S)
            state = cli(home, "status", "--json")
    tray_log = (home.parent / "tray.log").read_text(errors="replace")
    assert paused.returncode == 0, paused.stderr
    assert paused.stdout.strip() == "Host access is PAUSED: new commands are refused.", paused.stdout
    assert in_journal, paused.stdout
    assert after.get("error", "").endswith(PAUSED_MESSAGE), after
    assert json.loads(state.stdout)["paused"] is True, state.stdout
    assert "host access paused (a request)" in tray_log, tray_log[-2000:]
    assert FOREIGN_WRITE_LOGGED not in tray_log, tray_log[-2000:]
