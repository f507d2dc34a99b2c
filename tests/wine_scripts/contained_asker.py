"""Runs under Windows Python as a command the tray started (the wine lane), so inside the tray's job:
asks the tray over its pipe to resume, quit and open the log (each must be refused), then to pause
(accepted). Writes what the tray answered to the file named by its first argument, before the pause
ends it. With a second argument it is a job left behind: its command has ended, it waits for that
file to appear, asks the same, and does not pause."""

from __future__ import annotations

import json
import os
import sys
import time

from app.core.channel.client import NoTray, TrayRefused, ask_tray
from app.core.paths import AppPaths

GO_WAIT_S = 120.0

paths = AppPaths.from_environment()
left_behind = len(sys.argv) > 2
if left_behind:
    deadline = time.monotonic() + GO_WAIT_S
    while not os.path.exists(sys.argv[2]) and time.monotonic() < deadline:
        time.sleep(0.1)
answers: dict[str, str] = {}
for op in ("resume", "quit", "open_log", "state"):
    try:
        answers[op] = "accepted: " + str(ask_tray(paths, op, wait_s=30.0).get("message"))
    except (NoTray, TrayRefused) as exc:
        answers[op] = f"{type(exc).__name__}: {exc}"
with open(sys.argv[1], "w", encoding="utf-8") as out:
    json.dump(answers, out)
print(json.dumps(answers), flush=True)
if not left_behind:
    try:
        ask_tray(paths, "pause", wait_s=30.0)
    except (NoTray, TrayRefused) as exc:
        print(f"pause: {type(exc).__name__}: {exc}", flush=True)
