"""The tray runs a bound server's tools through the SDK's in-process path; what the client reads is
what `serve` itself would have made, without that path's server stamp.

A real tray and real `serve` processes: a server hands its calls to a tray only when that tray is
another process, and only Cowork Terminal's tray (tests/in_process_server.py's hub is pytest's).
One tray serves both checks of a bound server's calls (a tray costs 2 s of CPU to start)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.server.tray_side import SERVER_INFO_META, as_forwarded
from tests.desktop_env import wait_for
from tests.stdio_client import connect
from tests.tray_process import running_tray

pytestmark = pytest.mark.anyio


def test_the_in_process_server_stamp_is_taken_off_and_any_other_meta_kept() -> None:
    stamp = {SERVER_INFO_META: {"name": "cowork-terminal", "version": "1"}}
    content = [{"type": "text", "text": "{}"}]
    assert as_forwarded({"_meta": stamp, "content": content}) == {"content": content}
    kept = as_forwarded({"_meta": {**stamp, "other/key": 1}, "content": content})
    assert kept == {"_meta": {"other/key": 1}, "content": content}
    assert as_forwarded({"content": content, "isError": True}) == {"content": content, "isError": True}


async def test_a_server_that_binds_has_the_tray_load_its_runners_before_its_first_call_whose_result_has_no_stamp(
    home: Path,
) -> None:
    """The MCP layer takes most of a second to load: the tray loads it once a server binds, while
    Claude is still starting, so that the first command does not wait for it (once per tray). What
    the client reads of a result the tray ran is what `serve` would have made: no server stamp."""
    log = home / "logs" / "tray.log"
    loaded = "command runners loaded ahead of the first call"
    with running_tray(home):
        async with connect(home, headless=False) as agent:
            wait_for(lambda: loaded in log.read_text(), timeout_s=30)  # no call sent yet
            first = await agent.call_tool("execute_command", {"command": "echo first"})
        async with connect(home, headless=False) as again:
            second = await again.call_tool("execute_command", {"command": "echo second"})
    assert not first.is_error and "first" in first.content[0].text, first
    assert not second.is_error and "second" in second.content[0].text, second
    for result in (first, second):
        assert result.meta is None or SERVER_INFO_META not in result.meta, result.meta
    told = log.read_text()
    assert told.count(loaded) == 1, told
    assert "loading the command runners ahead failed" not in told, told
    # What the tray keeps for its life is out of the collector's walks (heap.py).
    settled = "start-up objects kept out of the garbage collector's walks: "
    assert told.count(settled) == 1, told
