"""The tray and its windows keep other programs of the same user out of their memory (Linux): no
debugger attaches, /proc/<pid>/environ and mem stay closed (core/private_process.py); servers,
which can no longer read the tray's program, still know it and work through it.

The tests run as root, and root's CAP_SYS_PTRACE passes every such check; so the tray, the server
and the attacker here run without any capability (`setpriv`), as a user's programs do."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp.client.stdio import StdioServerParameters

from app.core.private_process import PR_SET_DUMPABLE, can_forbid_dumps, forbid_dumps
from tests.clicks import shown_window
from tests.desktop_env import wait_for
from tests.stdio_client import Client, run, server_params
from tests.tray_process import running_tray

AS_A_USER = ["setpriv", "--bounding-set=-all", "--inh-caps=-all"]  # root's name, none of its powers


def as_a_user(params: StdioServerParameters) -> StdioServerParameters:
    """A server started as Claude would start it, without root's powers."""
    return StdioServerParameters(command=AS_A_USER[0], args=[*AS_A_USER[1:], params.command, *params.args],
                                 env=params.env)  # fmt: skip


def read_environ(pid: int) -> subprocess.CompletedProcess[str]:
    """What a program of the same user (an agent's background job) would try: read the environment."""
    return subprocess.run([*AS_A_USER, "cat", f"/proc/{pid}/environ"], capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize(("platform", "switch"), [("linux", True), ("win32", False), ("darwin", False)])
def test_only_linux_has_the_switch(platform: str, switch: bool) -> None:
    assert can_forbid_dumps(platform) is switch
    called: list[tuple[int, ...]] = []
    assert forbid_dumps(platform, lambda *args: called.append(args) or 0) is switch
    assert called == ([(PR_SET_DUMPABLE, 0, 0, 0, 0)] if switch else [])


def test_a_failing_prctl_is_said_and_not_fatal(caplog: pytest.LogCaptureFixture) -> None:
    assert forbid_dumps("linux", lambda *args: -1) is False
    assert "PR_SET_DUMPABLE failed" in caplog.text


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_DUMPABLE is Linux's")
@pytest.mark.gui
@pytest.mark.anyio
async def test_a_program_of_the_same_user_cannot_read_the_trays_or_the_windows_memory_and_servers_still_know_the_tray(
    home: Path, display: str
) -> None:
    neighbour = subprocess.Popen([*AS_A_USER, "sleep", "60"])  # an ordinary process of the same user
    try:
        time.sleep(0.2)
        assert read_environ(neighbour.pid).returncode == 0, "the attack works on an ordinary process"
        log = home.parent / "tray.log"
        with running_tray(home, display=display, log=log, wrapper=AS_A_USER) as tray:
            shown_window(display, "Cowork Terminal: activity")  # the tray opens its log window at start
            found = wait_for(lambda: re.search(r"log window started \(pid (\d+)\)", log.read_text()))
            refused = read_environ(int(found.group(1)))
            assert refused.returncode != 0 and "Permission denied" in refused.stderr
            refused = read_environ(tray.pid)
            assert refused.returncode != 0 and "Permission denied" in refused.stderr
            hidden = subprocess.run([*AS_A_USER, "readlink", f"/proc/{tray.pid}/exe"], capture_output=True, text=True)
            assert hidden.returncode != 0, "a server cannot read which program the tray runs"
            # So it judges the tray by its arguments and pid namespace, and takes it.
            async with Client(as_a_user(server_params(home)), mode="legacy") as client:
                ran = await run(client, {"command": "echo through the tray"})
            assert ran.get("stdout") == "through the tray\n", ran
    finally:
        neighbour.kill()
        neighbour.wait()
