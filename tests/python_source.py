"""Reading the app's source with `ast`, safe from a garbage collection in the middle.

CPython 3.11 before 3.11.8 raises "SystemError: AST constructor recursion depth mismatch" when a
collection during `ast.parse` runs a finalizer (an earlier test's asyncio subprocess transport, in
the same pytest worker): gh-106905. Which test runs before which changes with `pytest -n`, so the
tests that read source parse with the collector off.
"""

from __future__ import annotations

import ast
import gc
from pathlib import Path


def parse_file(path: Path) -> ast.Module:
    """The module's syntax tree, parsed with the garbage collector paused."""
    source = path.read_text(encoding="utf-8")
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return ast.parse(source)
    finally:
        if was_enabled:
            gc.enable()
