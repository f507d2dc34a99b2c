"""Red team 13 (wine lane): a job left behind by a command. Writes its pid to the file named by its
first argument plus `.pid`, waits (at most 300 s) for the file named by its second argument, then
asks the tray to open the log, resume, tell its state and quit, and writes what it was answered to
the file named by its first argument."""

from __future__ import annotations

import json
import os
import sys
import time

from app.core.channel.client import NoTray, TrayRefused, ask_tray
from app.core.paths import AppPaths

paths = AppPaths.from_environment()
with open(sys.argv[1] + ".pid.part", "w", encoding="utf-8") as told:
    told.write(str(os.getpid()))
os.replace(sys.argv[1] + ".pid.part", sys.argv[1] + ".pid")
deadline = time.monotonic() + 300
while not os.path.exists(sys.argv[2]) and time.monotonic() < deadline:
    time.sleep(0.1)
answers: dict[str, str] = {"pid": str(os.getpid())}
for op in ("open_log", "resume", "state", "quit"):
    try:
        answers[op] = "accepted: " + str(ask_tray(paths, op, wait_s=30.0).get("message"))
    except (NoTray, TrayRefused) as exc:
        answers[op] = f"{type(exc).__name__}: {exc}"
with open(sys.argv[1] + ".part", "w", encoding="utf-8") as out:
    json.dump(answers, out)
os.replace(sys.argv[1] + ".part", sys.argv[1])
