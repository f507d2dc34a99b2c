"""How this app starts itself with a subcommand: the one rule every launcher follows.

A bundle is one executable whose first argument picks the role; a source install is this Python
running the package. Claude's config entry, start at login and the tray's windows all use it.
"""

from __future__ import annotations


def app_argv(frozen: bool, executable: str, *args: str) -> list[str]:
    """The argv that runs `cowork-terminal ARGS...` from `executable`."""
    return [executable, *args] if frozen else [executable, "-m", "app", *args]
