"""An agent's detached background job, for attack tests: started through execute_command, it does
what the test orders, as the agent's own program would (tests/test_window_attacks.py)."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from tests.agent_scripts import agent_script
from tests.desktop_env import wait_for
from tests.stdio_client import STOP_DEADLINE_S, Client, run

# An agent's detached background job, started through execute_command without the container (with
# it, a command sees no display and may not ask for a loosening at all). It drops its run mark, as a
# person's program has none, and does what the test orders in a folder, one numbered file at a time:
# "app ARGS" runs `cowork-terminal ARGS` as a person would (`app resume`: a confirm window then asks),
# "click W" sends a click to window W (XSendEvent: `xdotool click --window`), "unmap W" hides it
# (and says its map state at once), "kill P" ends process P, "sql {...}" writes into an SQLite file.
# The test names the window, process or row, as a job finds them as easily (`xwininfo -tree`,
# `pgrep`, a SELECT).
SEEN_S = 3.0  # for a window to log a click it ignored

AGENT_JOB = """
import base64, json, os, subprocess, sys, time
folder, display, home = json.loads(base64.b64decode(sys.argv[1]))
env = {k: v for k, v in os.environ.items() if k != "COWORK_TERMINAL_RUN"}
env.update(DISPLAY=display, COWORK_TERMINAL_HOME=home)

def tell(name, what):  # whole or not at all: the test reads it as soon as it exists
    with open(os.path.join(folder, name + ".part"), "w") as out:
        json.dump(what, out)
    os.replace(os.path.join(folder, name + ".part"), os.path.join(folder, name))

tell("started", {"pid": os.getpid()})  # running, and without the mark (its caller waits for this)
asked, n, deadline = [], 0, time.monotonic() + 300
while time.monotonic() < deadline and not os.path.exists(os.path.join(folder, "stop")):
    order = os.path.join(folder, str(n))
    if not os.path.exists(order):
        time.sleep(0.05)
        continue
    what, _, target = open(order).read().partition(" ")
    said, code = "", 0
    if what == "app":
        asked.append(subprocess.Popen([sys.executable, "-m", "app", *target.split()], env=env, text=True,
                                      stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      start_new_session=True))
    elif what == "kill":
        os.kill(int(target), 15)
    elif what == "sql":
        import sqlite3
        query = json.loads(target)
        with sqlite3.connect(query["file"]) as db:
            code = 0 if db.execute(query["statement"], query["values"]).rowcount == 1 else 1
    elif what == "click":
        code = subprocess.run(["xdotool", "click", "--window", target, "1"], env=env).returncode
    elif what == "unmap":
        code = subprocess.run(["xdotool", "windowunmap", target], env=env).returncode
        said = subprocess.run(["xwininfo", "-id", target], env=env, capture_output=True, text=True).stdout
    else:
        code, said = 2, "no such order"
    tell(str(n) + ".done", {"code": code, "said": said})
    n += 1
answers = []
for asking in asked:
    out, err = asking.communicate(timeout=120)
    answers.append({"code": asking.returncode, "out": out, "err": err})
tell("answers.json", answers)
"""


class AgentJob:
    """The test's handle on AGENT_JOB: what it orders, and what the job said it did."""

    def __init__(self, folder: Path, display: str, home: Path) -> None:
        self.folder = folder
        self.folder.mkdir()
        # Encoded, as an agent hides the data folder's name from the approval rules: where no container
        # guards it, a command that names it is asked for (and refused in Never ask mode).
        self.values = base64.b64encode(json.dumps([str(folder), display, str(home)]).encode()).decode()
        self.orders = 0

    async def start(self, client: Client) -> None:
        """The agent sends the job through execute_command: written to a file, run detached."""
        command = agent_script(AGENT_JOB, background=True, args=(self.values,), unmarked=True)
        started = await run(client, {"command": command})
        assert started.get("exitCode") == 0, started
        # The command ends as soon as it has forked the job, whose processes carry the run mark until
        # Python starts (`env -u`): a pause before then ends it as the mark's (the hub's sweep of what
        # closed runners left). The tests pause only once it runs unmarked.
        running = self.folder / "started"
        await anyio.to_thread.run_sync(lambda: wait_for(running.exists, timeout_s=30))

    async def order(self, what: str, *, check: bool = True) -> str | None:
        """Have the job do `what`; what it saw right after (None when it could not and `check` is off)."""
        order = self.folder / str(self.orders)
        self.orders += 1
        part = order.with_name(order.name + ".part")
        part.write_text(what)
        part.replace(order)  # the job never reads half an order
        done = order.with_name(order.name + ".done")
        await anyio.to_thread.run_sync(lambda: wait_for(done.exists, timeout_s=30))
        report = json.loads(done.read_text())
        if report["code"] != 0 and not check:
            return None
        assert report["code"] == 0, f"the job could not do {what!r}"
        return str(report["said"])

    async def click(self, window: str | Callable[[], str], *, until: Callable[[], bool], tries: int = 5) -> None:
        """Send a click to `window` (hex id, or a function that finds it again before each try) until
        `until` says the window saw one: a button still greyed on a loaded machine takes none, one
        drawn again since it was found is gone (the click fails), and every retry is as sent as the first."""
        for _try in range(tries):
            target = await anyio.to_thread.run_sync(window) if callable(window) else window
            if await self.order(f"click {int(target, 16)}", check=False) is None:
                continue
            deadline = time.monotonic() + SEEN_S
            while time.monotonic() < deadline:
                if until():
                    return
                await anyio.sleep(0.05)
        raise AssertionError(f"the window never said it saw a click ({tries} sent)")

    def stop(self) -> None:
        (self.folder / "stop").touch()

    async def answers(self) -> list[dict[str, Any]]:
        """What each `app ...` it ran said, once they ended (after `stop`)."""
        said = self.folder / "answers.json"
        await anyio.to_thread.run_sync(lambda: wait_for(said.exists, timeout_s=STOP_DEADLINE_S))
        return list(json.loads(said.read_text()))
