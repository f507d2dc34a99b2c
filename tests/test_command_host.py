"""The tray's command host in this process: the runners' modules are loaded once a server binds, and
a load that fails costs nothing but the head start. The host's runners here answer at once; the real
runners (app/server/tray_side.py) are tested with a real tray in tests/test_tray_side.py."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

import pytest

from app.core.authority.command_host import CommandHost, ProgressSink
from app.core.channel.call_messages import Call, CallResult
from tests.desktop_env import wait_for


class EchoRunner:
    async def call(self, call: Call, progress: ProgressSink | None) -> Mapping[str, Any]:
        return {"content": [{"type": "text", "text": f"ran {call.arguments['command']}"}]}

    def busy(self) -> bool:
        return False

    def closing(self) -> None:
        pass

    async def aclose(self) -> None:
        pass


async def open_echo(call: Call, group: Any) -> EchoRunner:
    return EchoRunner()


class Peer:
    def __init__(self) -> None:
        self.pushed: list[Any] = []

    def push(self, message: Any) -> None:
        self.pushed.append(message)


def results(peer: Peer) -> list[str]:
    return [m.result["content"][0]["text"] for m in peer.pushed if isinstance(m, CallResult)]


def test_the_runners_load_once_at_the_first_server_that_binds_and_calls_are_taken_meanwhile() -> None:
    """The load runs beside the host's loop: every call waits for that loop to take it, so a load on
    the loop made a call wait for it, past the server's 5 s on a loaded machine."""
    loads: list[str] = []
    release = threading.Event()

    def slow_load() -> None:
        loads.append(threading.current_thread().name)
        release.wait(10)

    host = CommandHost(open_echo, warm=slow_load)
    host.start()
    try:
        assert loads == [], "nothing binds yet: the tray stays without the MCP layer"
        host.expect_calls()
        host.expect_calls()  # a second server, or the first one again
        wait_for(lambda: loads)
        peer = Peer()
        host.submit(peer, Call("c1", "execute_command", {"command": "echo hi"}))  # returns once taken
        wait_for(lambda: results(peer), timeout_s=5)
        assert not release.is_set(), "answered while the load still ran"
    finally:
        release.set()
        host.close()
    assert len(loads) == 1 and loads[0] != "tray-command-host", "once, beside the host's own thread"
    assert results(peer) == ["ran echo hi"]


def test_a_load_that_fails_is_logged_and_the_calls_still_run(caplog: pytest.LogCaptureFixture) -> None:
    def broken() -> None:
        raise ImportError("no module named mcp")

    host = CommandHost(open_echo, warm=broken)
    host.start()
    try:
        with caplog.at_level(logging.ERROR, logger="app.core.authority.command_host"):
            host.expect_calls()
            wait_for(lambda: "loading the command runners ahead failed" in caplog.text)
        peer = Peer()
        host.submit(peer, Call("c1", "execute_command", {"command": "echo still"}))
        wait_for(lambda: results(peer))
    finally:
        host.close()
    assert results(peer) == ["ran echo still"]


def test_a_server_that_binds_while_the_tray_quits_loads_nothing_more() -> None:
    loads: list[str] = []
    host = CommandHost(open_echo, warm=lambda: loads.append("loaded"))
    host.start()
    host.close()
    host.expect_calls()  # its hello was read just as the app quit
    assert loads == [], "the quit does not wait for a load nobody will use"
