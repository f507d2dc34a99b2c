"""Runs under Windows Python (the wine lane): import every module of the installed app, report failures."""

from __future__ import annotations

import importlib
import json
import pkgutil
import sys
import traceback

import app

imported: list[str] = []
failed: dict[str, str] = {}
for module in pkgutil.walk_packages(app.__path__, "app."):
    try:
        importlib.import_module(module.name)
        imported.append(module.name)
    except Exception:  # report every failure, not just the first
        failed[module.name] = traceback.format_exc(limit=3)
print(json.dumps({"platform": sys.platform, "imported": imported, "failed": failed}))
