"""Landlock's scopes in the container (issue 21): a command cannot reach an abstract Unix socket
made outside it (the tray's, X11's, a bus's) nor signal a process outside its domain, while the
network stays up. The decision is a pure function, tested with each platform's values; the attacks
run through `execute_command` (of a real `serve`, or of a server bound to the tray's hub in this
process), and each prints what it got, so it ran."""

from __future__ import annotations

import errno
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from app.core.channel.transport import address_for
from app.core.execution import container, landlock
from app.core.paths import AppPaths
from tests.agent_scripts import agent_script
from tests.channel_peers import running_hub
from tests.in_process_server import serving
from tests.stdio_client import connect, run
from tests.test_container import never_ask, user_home  # noqa: F401 (a fixture)

SCOPED = landlock.plan(sys.platform, landlock.kernel_abi(), landlock.find_perl()) == landlock.SCOPED
real = pytest.mark.skipif(
    not SCOPED or shutil.which("bwrap") is None, reason="needs bwrap, Landlock scopes (Linux 6.12) and perl"
)


def test_commands_are_scoped_on_linux_with_landlock_abi_6_or_newer_and_perl() -> None:
    assert landlock.plan("linux", 6, "/usr/bin/perl") == landlock.SCOPED
    assert landlock.plan("linux", 7, "/usr/bin/perl") == landlock.SCOPED


def test_an_older_kernel_or_no_landlock_or_no_perl_or_another_os_is_not_scoped_and_says_why() -> None:
    assert landlock.plan("linux", 5, "/usr/bin/perl") == landlock.OLD_KERNEL  # Linux 6.7 to 6.11
    assert landlock.plan("linux", 0, "/usr/bin/perl") == landlock.OLD_KERNEL  # no Landlock, or it is off
    assert landlock.plan("linux", 7, None) == landlock.NO_PERL
    assert landlock.plan("darwin", 0, "/usr/bin/perl") == landlock.NOT_LINUX
    assert landlock.plan("win32", 0, None) == landlock.NOT_LINUX


def test_the_tray_says_once_when_a_contained_command_can_still_reach_other_programs_sockets() -> None:
    assert container.person_message(container.ON, landlock.SCOPED) is None
    old = container.person_message(container.ON, landlock.OLD_KERNEL)
    assert old == (
        "Commands can still talk to other programs on this computer, this app included. "
        "Closing that needs Linux 6.12 or newer."
    )
    assert "apt install perl" in (container.person_message(container.ON, landlock.NO_PERL) or "")
    assert container.log_message(container.ON, "", landlock.OLD_KERNEL) == (
        "commands run in the bwrap container; no Landlock scopes: the kernel is older than 6.12 (Landlock ABI < 6)"
    )
    missing = container.person_message(container.MISSING, landlock.OLD_KERNEL) or ""
    assert "bubblewrap is missing" in missing, "no container says more than no scopes"


def test_the_scoping_init_is_pid_1_and_gets_the_status_fd_then_the_command() -> None:
    init = landlock.init_argv("/usr/bin/perl")
    argv = container.bwrap_argv("bwrap", [], [], ["bash", "-c", "ls"], status_fd=7, init=init, lifeline_fd=9)
    assert argv[argv.index("--") + 1 :] == ["/usr/bin/perl", "-e", landlock.PERL_INIT, "7", "9", "bash", "-c", "ls"]
    assert "--as-pid-1" in argv


PROBE = """
import json, os, socket, sys
tray, mine, port = TRAY, MINE, PORT
out = {}
for name, address in (("tray", tray), ("listener", mine), ("x11", b"\\0/tmp/.X11-unix/X0")):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(address)
        out[name] = "connected"
    except OSError as exc:
        out[name] = exc.errno
t = socket.create_connection(("127.0.0.1", port), timeout=5)
t.sendall(b"over tcp\\n")
out["tcp"] = t.recv(100).decode()
print(json.dumps(out))
"""


def abstract_listener(name: bytes) -> tuple[socket.socket, list[bytes]]:
    """An abstract socket the test listens on outside any container: who connected, it records."""
    server = socket.socket(socket.AF_UNIX)
    server.bind(name)
    server.listen()
    server.settimeout(0.2)
    seen: list[bytes] = []

    def accept() -> None:
        while server.fileno() != -1:
            try:
                conn, _ = server.accept()
            except (TimeoutError, OSError):
                continue
            seen.append(b"connection")
            conn.close()

    threading.Thread(target=accept, daemon=True).start()
    return server, seen


def tcp_echo() -> tuple[socket.socket, list[bytes]]:
    """A loopback TCP listener that answers what it is sent."""
    server = socket.create_server(("127.0.0.1", 0))
    got: list[bytes] = []

    def serve_one() -> None:
        conn, _ = server.accept()
        with conn:
            data = conn.recv(100)
            got.append(data)
            conn.sendall(b"answered " + data)

    threading.Thread(target=serve_one, daemon=True).start()
    return server, got


@real
@pytest.mark.anyio
async def test_a_command_cannot_connect_to_the_trays_or_any_abstract_socket_made_outside_but_tcp_works(
    home: Path,
    paths: AppPaths,
    user_home: Path,  # noqa: F811 (the fixture)
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The tray's hub listens at the tray's address from this process, and runs the command of a
    server bound to it (tests/in_process_server.py), as the tray runs its servers' calls."""
    tray_address = address_for(paths).sockaddr()
    mine = f"\0cowork-test-{os.getpid()}".encode()
    listener, connections = abstract_listener(mine)
    tcp, received = tcp_echo()
    port = tcp.getsockname()[1]
    never_ask(paths)
    monkeypatch.setenv("HOME", str(user_home))
    try:
        with running_hub(paths):
            probe = socket.socket(socket.AF_UNIX)
            probe.connect(tray_address)  # outside, the tray's address answers
            probe.close()
            connections_before = len(connections)
            code = PROBE.replace("TRAY", repr(tray_address)).replace("MINE", repr(mine)).replace("PORT", str(port))
            async with serving(home, bound=True) as client:
                result = await run(client, {"command": agent_script(code)})
    finally:
        listener.close()
        tcp.close()
    said = json.loads(result["stdout"])  # the attempts ran and reported back
    assert said["tray"] == errno.EPERM and said["listener"] == errno.EPERM, said
    assert said["x11"] in (errno.EPERM, errno.ECONNREFUSED), said  # refused whether or not an X server runs
    assert len(connections) == connections_before, "nothing reached the test's abstract listener"
    assert said["tcp"] == "answered over tcp\n" and received == [b"over tcp\n"], "the network stays up"


KILL = """
import json, os, signal, subprocess
out = {}
try:
    os.kill(1, signal.SIGTERM)
    out["init"] = "sent"
except OSError as exc:
    out["init"] = exc.errno
job = subprocess.Popen(["sleep", "30"])
try:
    os.kill(job.pid, signal.SIGTERM)
    out["own"] = "sent"
except OSError as exc:
    out["own"] = exc.errno
out["own_end"] = job.wait()
out["pid1"] = open("/proc/1/cmdline").read().split(chr(0))[0]
print(json.dumps(out))
"""


@real
@pytest.mark.anyio
async def test_a_command_cannot_signal_a_process_outside_its_domain_but_can_its_own(
    home: Path,
    paths: AppPaths,
    user_home: Path,  # noqa: F811 (the fixture)
) -> None:
    """The container's init (pid 1 inside) runs outside the command's domain: the one process
    outside that the command can name. Its own background job it may stop."""
    never_ask(paths)
    async with connect(home, env={"HOME": str(user_home)}) as client:
        result = await run(client, {"command": agent_script(KILL)})
    assert result.get("stdout"), result
    said = json.loads(result["stdout"])  # the attempts ran and reported back
    assert said["init"] == errno.EPERM, said
    assert said["own"] == "sent" and said["own_end"] == -15, said
    assert said["pid1"].endswith("perl"), "pid 1 is our init, and it lives on"


@real
def test_a_locale_that_is_not_installed_adds_no_warning_of_the_init_and_its_quieting_does_not_reach_the_command(
    tmp_path: Path,
) -> None:
    found = container.linux_container([str(tmp_path / "data")])
    assert found.init, found.scoping
    status_read, status_write = os.pipe()
    env = {**os.environ, "LC_ALL": "xx_YY.UTF-8"}
    look = ["bash", "-c", "echo ran; env | grep -c PERL_BADLANG"]
    done = subprocess.run(
        found.wrap(look, status_write),
        capture_output=True,
        text=True,
        env=env,
        pass_fds=container.inherited(status_write, status_read),
        timeout=30,
    )
    os.close(status_write)
    assert os.read(status_read, 16) == b"1\n" and done.stdout == "ran\n0\n", done  # it ran; grep found none
    os.close(status_read)
    assert "perl" not in done.stderr, done.stderr
