"""A process that lives for hours keeps what it loaded at start-up out of the garbage collector's walks.

Python's cyclic collector walks every object it tracks at each full collection. The tray and `serve`
load about 100,000 objects at start-up (the MCP SDK, the classifier's tables, the windows' modules) that
live as long as the process, and a full collection walked them all again, once in some hundreds of
calls, holding every thread of the process for 0.05-0.3 s while a command's call waited
(docs/benchmarks.md, "Start-up objects out of the collector's walks").
"""

from __future__ import annotations

import gc
import logging
import time

log = logging.getLogger(__name__)


def settle() -> int:
    """Once start-up has loaded what the process keeps: collect what is already garbage, then move
    every object left into the collector's permanent generation (`gc.freeze`), which full collections
    skip. Objects frozen so are still freed when nothing refers to them any more; only a cycle among
    them is kept. Returns how many were frozen."""
    began = time.monotonic()
    gc.collect()
    gc.freeze()
    frozen = gc.get_freeze_count()
    log.info("start-up objects kept out of the garbage collector's walks: %d (%.0f ms)", frozen,
             (time.monotonic() - began) * 1000)  # fmt: skip
    return frozen
