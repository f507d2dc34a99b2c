"""Runs under Windows Python (the wine lane): where the app keeps its data; opens the journal there."""

from __future__ import annotations

import json
import os

from app.core.journal.store import Journal
from app.core.paths import AppPaths

paths = AppPaths.from_environment()
with Journal.open(paths) as journal:
    paused = journal.is_paused()
print(
    json.dumps(
        {
            "paused": paused,
            "data_dir": str(paths.data_dir),
            "written": [str(p) for p in paths.written_locations()],
            **{k: os.environ[k] for k in ("USERPROFILE", "APPDATA", "LOCALAPPDATA")},
        }
    )
)
