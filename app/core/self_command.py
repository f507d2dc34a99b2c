"""How this app starts itself with a subcommand: the one rule every launcher follows.

A bundle is one executable whose first argument picks the role; a source install is this Python
running the package. Claude's config entry, start at login and the tray's windows all use it.

A source install runs with `-I` (issue 21): the caller's folder is not put on the module path (a
command could plant `app/__main__.py` in `$HOME`, where Claude and the login start us), nor are
PYTHONPATH, PYTHON* and the user's site-packages read. An editable install still works: its `.pth`
lives in the interpreter's own site-packages.
"""

from __future__ import annotations

from collections.abc import Sequence


def app_argv(frozen: bool, executable: str, *args: str) -> list[str]:
    """The argv that runs `cowork-terminal ARGS...` from `executable`."""
    return [executable, *args] if frozen else [executable, *ISOLATED, "-m", "app", *args]


def runs_this_program(argv: Sequence[str], frozen: bool, executable: str) -> bool:
    """Whether `argv` starts this app from `executable` (what `app_argv` gives): the tray checks
    the files of such a window's program against its own (core/program_identity.py)."""
    prefix = app_argv(frozen, executable)
    return len(argv) > len(prefix) and list(argv[: len(prefix)]) == prefix


ISOLATED = ("-I",)
