"""Room for many commands at once: the soft limit on open files is raised, within the hard one.

Why: each command the tray runs holds about five descriptors there (its output pipes, its
container's status pipe and lifeline, a spare's), and desktops start programs with a soft limit of
1,024: 180 background jobs of one agent left the tray unable to start any other app's command ("Too
many open files", a red team, 2026-12-05). The hard limit is the user's own ceiling. Commands
inherit the raised limit, so it stays modest (a program that walks every possible descriptor, or
uses select(), is not slowed by a huge one). POSIX only: Windows has no such limit on handles.
"""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)

WANTED = 8192


def wanted_limit(soft: int, hard: int, infinity: int) -> int:
    """The soft limit to ask for: WANTED, within `hard` (`infinity`: no hard limit), never lower than `soft`."""
    ceiling = WANTED if hard == infinity else min(WANTED, hard)
    return max(soft, ceiling)


def raise_limit() -> None:
    """Raise this process's soft limit on open files (see the module); a refusal is logged, never fatal."""
    try:
        import resource
    except ImportError:  # Windows
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = wanted_limit(soft, hard, resource.RLIM_INFINITY)
    if wanted == soft:
        return
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    except (ValueError, OSError) as exc:
        log.info("could not raise the open files limit from %s to %s: %s", soft, wanted, exc)
