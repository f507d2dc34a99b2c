"""An agent's detached background job, for attack tests: started through execute_command, it does
what the test orders, as the agent's own program would (tests/test_window_attacks.py)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio

from tests.desktop_env import wait_for
from tests.stdio_client import STOP_DEADLINE_S
from tests.test_container import agent_script

# An agent's detached background job, started through execute_command without the container (with
# it, a command sees no display and may not ask for a loosening at all). It drops its run mark, as a
# person's program has none, and does what the test orders in a folder, one numbered file at a time:
# "app ARGS" runs `cowork-terminal ARGS` as a person would (`app resume`: a confirm window then asks),
# "click W" sends a click to window W (XSendEvent: `xdotool click --window`), "unmap W" hides it
# (and says its map state at once), "kill P" ends process P, "sql {...}" writes into an SQLite file.
# The test names the window, process or row, as a job finds them as easily (`xwininfo -tree`,
# `pgrep`, a SELECT).
AGENT_JOB = """
import json, os, subprocess, sys, time
folder, display, home = FOLDER, DISPLAY, HOME
env = {k: v for k, v in os.environ.items() if k != "COWORK_TERMINAL_RUN"}
env.update(DISPLAY=display, COWORK_TERMINAL_HOME=home)
asked, n, deadline = [], 0, time.monotonic() + 300
while time.monotonic() < deadline and not os.path.exists(os.path.join(folder, "stop")):
    order = os.path.join(folder, str(n))
    if not os.path.exists(order):
        time.sleep(0.05)
        continue
    what, _, target = open(order).read().partition(" ")
    said = ""
    if what == "app":
        asked.append(subprocess.Popen([sys.executable, "-m", "app", *target.split()], env=env, text=True,
                                      stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      start_new_session=True))
        code = 0
    elif what == "kill":
        os.kill(int(target), 15)
        code = 0
    elif what == "sql":
        import sqlite3
        query = json.loads(target)
        with sqlite3.connect(query["file"]) as db:
            code = 0 if db.execute(query["statement"], query["values"]).rowcount == 1 else 1
    elif what == "click":
        code = subprocess.run(["xdotool", "click", "--window", target, "1"], env=env).returncode
    else:  # unmap
        code = subprocess.run(["xdotool", "windowunmap", target], env=env).returncode
        said = subprocess.run(["xwininfo", "-id", target], env=env, capture_output=True, text=True).stdout
    with open(order + ".done", "w") as out:
        json.dump({"code": code, "said": said}, out)
    n += 1
answers = []
for asking in asked:
    said, why = asking.communicate(timeout=120)
    answers.append({"code": asking.returncode, "out": said, "err": why})
with open(os.path.join(folder, "answers.json"), "w") as out:
    json.dump(answers, out)
"""


class AgentJob:
    """The test's handle on AGENT_JOB: what it orders, and what the job said it did."""

    def __init__(self, folder: Path, display: str, home: Path) -> None:
        self.folder = folder
        self.folder.mkdir()
        self.script = AGENT_JOB
        for name, value in {"FOLDER": folder, "DISPLAY": display, "HOME": home}.items():
            self.script = self.script.replace(name, repr(str(value)), 1)
        self.orders = 0

    def command(self) -> str:
        return agent_script(self.script, background=True)

    async def order(self, what: str) -> str:
        """Have the job do `what`; what it saw right after."""
        order = self.folder / str(self.orders)
        self.orders += 1
        order.write_text(what)
        done = order.with_name(order.name + ".done")
        await anyio.to_thread.run_sync(lambda: wait_for(done.exists, timeout_s=30))
        report = json.loads(await anyio.to_thread.run_sync(wait_for, done.read_text))
        assert report["code"] == 0, f"the job could not do {what!r}"
        return str(report["said"])

    async def click(self, window: str) -> None:
        await self.order(f"click {int(window, 16)}")

    def stop(self) -> None:
        (self.folder / "stop").touch()

    async def answers(self) -> list[dict]:
        """What each `app ...` it ran said, once they ended (after `stop`)."""
        said = self.folder / "answers.json"
        await anyio.to_thread.run_sync(lambda: wait_for(said.exists, timeout_s=STOP_DEADLINE_S))
        return json.loads(await anyio.to_thread.run_sync(wait_for, said.read_text))
