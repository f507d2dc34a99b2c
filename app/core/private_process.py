"""Keep other programs of the same user out of the windows' memory (Linux).

A process is "dumpable" by default: any program running as the same user may attach a debugger to
it (`gdb -p`), read its memory or its environment (/proc/<pid>/environ, /proc/<pid>/mem) and so
press a window's button from inside. PR_SET_DUMPABLE 0 makes the kernel refuse all of that to
anything without CAP_SYS_PTRACE (it also turns off core dumps, which is fine: the windows hold no
work of the user's). Other systems have no such switch here.

The tray itself stays dumpable, on purpose: each server makes sure the process at the tray's
address runs this app by reading /proc/<pid>/exe, and the kernel hides that link of a
non-dumpable process from every process without CAP_SYS_PTRACE, so servers would refuse the
genuine tray (and an impostor could hide the same way). Yama (ptrace_scope 1, the default on most
distributions) keeps a debugger off the tray unless it started it; with Yama off it remains open.
"""

from __future__ import annotations

import ctypes
import logging
import sys
from collections.abc import Callable

log = logging.getLogger(__name__)

PR_SET_DUMPABLE = 4  # <linux/prctl.h>
PR_GET_DUMPABLE = 3


def can_forbid_dumps(platform: str) -> bool:
    """Whether `platform` (sys.platform) has the switch."""
    return platform.startswith("linux")


def _libc_prctl() -> Callable[..., int]:
    return ctypes.CDLL(None, use_errno=True).prctl


def forbid_dumps(platform: str = sys.platform, prctl: Callable[..., int] | None = None) -> bool:
    """Make this process non-dumpable; True when done. Called first thing by the tray and by every
    window it starts. A failure is logged, never fatal: the app still works, only less shut."""
    if not can_forbid_dumps(platform):
        return False
    try:
        call = prctl or _libc_prctl()
        done = call(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0
    except (OSError, AttributeError):
        done = False
    if not done:
        log.warning("could not keep other programs out of this process (prctl PR_SET_DUMPABLE failed)")
    return done
