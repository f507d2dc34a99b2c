"""Keep other programs of the same user out of the tray's and the windows' memory (Linux).

A process is "dumpable" by default: any program running as the same user may attach a debugger to
it (`gdb -p`), read its memory or its environment (/proc/<pid>/environ, /proc/<pid>/mem) and so
press a window's button or answer a held command from inside. PR_SET_DUMPABLE 0 makes the kernel
refuse all of that to anything without CAP_SYS_PTRACE (it also turns off core dumps, which is
fine: the tray's crashes are in its log). Other systems have no such switch here.

The kernel then hides the tray's program (/proc/<pid>/exe) from its servers too, so they judge it
by its arguments and its pid namespace (core/channel/peer.py says what that gives up, and why it is
little). Yama (ptrace_scope 1, most distributions' default) already kept a command off the tray,
its ancestor; this closes the door where Yama is off or missing, without the container.
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
    window. A failure is logged, never fatal: the app still works, only less shut."""
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
