"""A pause's backstop ends what runs of its own app home only. One process serves one app home in use
(a tray, or a headless `serve`), but the tests run many homes in one process, and a pause in one
ended another's command (`start_files.end_commands` took every container of the process): a flaky
failure of tests that had nothing to do with the pause. Each container now carries the mark its
command was given (`start_files.Guarded.mark`), and a pause ends those marked under its own."""

from __future__ import annotations

import shutil
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp_types import CallToolResult

from app.core.authority.hub import Hub
from app.core.execution import PAUSE_BACKSTOP_S
from app.core.journal.store import Journal
from app.core.paths import AppPaths
from tests.channel_peers import running_hub
from tests.in_process_server import came, serving
from tests.test_pause_backstop import last_tick

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("bwrap") is None, reason="bwrap (Linux)"),
]


def ticking(ticks: Path) -> str:
    """A loop that stamps the time into `ticks` whole (a rename: a read never meets it half written)."""
    return f"while :; do date +%s.%N > {ticks}.part && mv {ticks}.part {ticks}; sleep 0.05; done"


def pause_home(home: Path) -> None:
    """`cowork-terminal pause` for `home`."""
    with Journal(AppPaths.from_environment({"COWORK_TERMINAL_HOME": str(home)})) as cli:
        cli.set_paused(True)


async def paused_while_held_up(paused: Callable[[], None], ours: Path, theirs: Path) -> tuple[float, float, float]:
    """Pause (`paused`, on a thread, as a click or the CLI) while the loop that runs both servers'
    commands is held up, so that only the backstop can end a command. When each command last ticked,
    and when the pause came."""
    threading.Thread(target=paused, daemon=True).start()
    paused_at = time.time()
    time.sleep(PAUSE_BACKSTOP_S + 2.0)  # blocking on purpose: the gentle stop cannot run meanwhile
    return last_tick(ours), last_tick(theirs), paused_at


async def test_a_headless_servers_pause_ends_its_own_command_and_not_another_homes(tmp_path: Path) -> None:
    homes = {name: tmp_path / name / "cowork-home" for name in ("paused", "other")}
    ticks = {name: tmp_path / f"{name}.tick" for name in homes}
    results: dict[str, CallToolResult] = {}
    async with (
        serving(homes["paused"]) as paused,
        serving(homes["other"]) as other,
        anyio.create_task_group() as group,
    ):
        for name, client in (("paused", paused), ("other", other)):

            async def run(name: str = name, client: Client = client) -> None:
                arguments = {"command": ticking(ticks[name]), "timeout": 20_000}
                results[name] = await client.call_tool("execute_command", arguments)

            group.start_soon(run)
        assert await came(lambda: all(last_tick(t) > 0 for t in ticks.values()), 30.0)
        ours, theirs, paused_at = await paused_while_held_up(
            lambda: pause_home(homes["paused"]), ticks["paused"], ticks["other"]
        )
        assert ours < paused_at + PAUSE_BACKSTOP_S + 0.5, f"the paused home's command ran on {ours - paused_at:.2f} s"
        assert theirs > paused_at + PAUSE_BACKSTOP_S + 1.0, "the other home's command was ended by a pause not its own"
        assert await came(lambda: last_tick(ticks["other"]) > theirs), "the other home's command no longer runs"
        pause_home(homes["other"])  # its own pause ends it
    assert "stopped because the user paused host access" in str(results["paused"].content), results["paused"]


async def test_the_trays_pause_ends_its_commands_and_not_those_of_a_server_of_another_home(
    home: Path, hub: Hub, tmp_path: Path
) -> None:
    other = tmp_path / "other" / "cowork-home"
    ticks = {"bound": tmp_path / "bound.tick", "other": tmp_path / "other.tick"}
    async with (
        serving(home, bound=True) as bound,
        serving(other) as headless,
        anyio.create_task_group() as group,
    ):
        for name, client in (("bound", bound), ("other", headless)):
            arguments = {"command": ticking(ticks[name]), "timeout": 20_000}
            group.start_soon(client.call_tool, "execute_command", arguments)
        assert await came(lambda: all(last_tick(t) > 0 for t in ticks.values()), 30.0)
        ours, theirs, paused_at = await paused_while_held_up(
            lambda: hub.set_paused(True), ticks["bound"], ticks["other"]
        )
        assert ours < paused_at + PAUSE_BACKSTOP_S + 0.5, f"the tray's command ran on {ours - paused_at:.2f} s"
        assert theirs > paused_at + PAUSE_BACKSTOP_S + 1.0, "another home's command was ended by the tray's pause"
        pause_home(other)


async def test_a_pause_of_a_tray_that_quits_at_once_does_not_end_the_commands_of_the_tray_after_it(
    home: Path, paths: AppPaths
) -> None:
    """A hub paused and closed within PAUSE_BACKSTOP_S: its backstop goes with it (`Hub.close`), so the
    next hub of the same home (the tests' trays, one after another in one process) runs its command to
    its end. Before, the old hub's timer fired 1.2 s later and ended the new command's container."""
    with running_hub(paths) as (first, _seen):
        first.set_paused(True)
    with running_hub(paths) as (second, _seen):
        second.set_paused(False)
        async with serving(home, bound=True) as client:
            result = await client.call_tool("execute_command", {"command": "sleep 2; echo lived"})
    assert not result.is_error and "lived" in str(result.content), result
