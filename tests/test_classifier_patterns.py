"""The classifier's regular expressions run over whole scripts (up to 256 KB each, 64 of them a
command). One that starts a try at each newline and then lets `\\s*` run over the lines after it
scans every blank line again from every one: a review (2026-12-05) measured a sqlite3 file of
100,000 blank lines at 23 s and a sed file of 1,600 at 10 s (minutes before this sitting's fixes).
Blanks within a line (`[^\\S\\n]*`) after a line's start keep each try to its own line."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from pathlib import Path

import app.core.classifier as classifier

# `[...\n])\s*`, `(?<=[...\n]))\s*`: a newline starts the try and `\s*` runs on over the next lines.
AFTER_NEWLINE = re.compile(r"\\n\]\)+\\s\*")
LINE_START = re.compile(r"\^\\s\*")  # `^\s*` where `^` is each line's start (re.M)


def patterns() -> list[tuple[str, re.Pattern[str]]]:
    found = []
    for module in pkgutil.iter_modules(classifier.__path__):
        loaded = importlib.import_module(f"{classifier.__name__}.{module.name}")
        found += [
            (f"{module.name}.{name}", value)
            for name, value in vars(loaded).items()
            if isinstance(value, re.Pattern) and isinstance(value.pattern, str)
        ]
    return found


def test_no_pattern_lets_blanks_after_a_line_start_run_over_the_lines_after_it() -> None:
    assert len(patterns()) > 100, "the classifier's patterns were found"
    runs_on = [name for name, pattern in patterns() if AFTER_NEWLINE.search(pattern.pattern)]
    runs_on += [name for name, pattern in patterns() if pattern.flags & re.M and LINE_START.search(pattern.pattern)]
    assert runs_on == []


def patterns_in_functions() -> list[tuple[str, str, bool]]:
    """The literal patterns given to `re.match`, `re.sub` and the like inside the classifier's
    functions (module-level ones are in `patterns`): where, the pattern, and whether it reads `^` as
    each line's start."""
    found = []
    for path in sorted(Path(classifier.__path__[0]).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if not (isinstance(node.func.value, ast.Name) and node.func.value.id == "re" and node.args):
                continue
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                flags = " ".join(ast.unparse(a) for a in [*node.args[2:], *(k.value for k in node.keywords)])
                multiline = "re.M" in flags or "MULTILINE" in flags or bool(re.match(r"\(\?[aiLmsux]*m", first.value))
                found.append((f"{path.name}:{node.lineno}", first.value, multiline))
    return found


def test_no_pattern_in_a_function_lets_blanks_after_a_line_start_run_over_the_lines_after_it() -> None:
    """A review (2026-12-05): `^\\s*worktree` (a repository's config) and `(?m)^\\s*[!%]` (IPython
    code) took 1.5 s and 2 s on 20,000 blank lines, minutes on a 256 KB file."""
    found = patterns_in_functions()
    assert len(found) > 100, "the classifier's patterns in functions were found"
    runs_on = [where for where, text, multiline in found if AFTER_NEWLINE.search(text)]
    runs_on += [where for where, text, multiline in found if multiline and LINE_START.search(text)]
    assert runs_on == []
