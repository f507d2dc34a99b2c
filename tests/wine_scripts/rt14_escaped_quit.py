"""Red team 14 (wine lane): started by a command of the tray under another parent (rt14_spoof.py), so in
none of the tray's jobs, it asks the tray to quit as the CLI's `tray --quit` does, and writes what the
tray answered as JSON to the file named by its argument (written aside, then renamed)."""

from __future__ import annotations

import json
import os
import sys

from app.core.channel.client import NoTray, TrayRefused, ask_tray
from app.core.paths import AppPaths

try:
    answer: object = ask_tray(AppPaths.from_environment(), "quit", wait_s=20.0)
except (NoTray, TrayRefused) as exc:
    answer = f"{type(exc).__name__}: {exc}"
with open(sys.argv[1] + ".part", "w", encoding="utf-8") as out:
    json.dump({"answer": answer if isinstance(answer, str) else json.loads(json.dumps(answer, default=str))}, out)
os.replace(sys.argv[1] + ".part", sys.argv[1])
