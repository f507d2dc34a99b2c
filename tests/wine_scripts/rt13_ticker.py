"""Red team 13 (wine lane): a background job a command leaves behind. Writes its pid, then a line
every 0.2 s to the file named by its first argument, for at most 300 s."""

from __future__ import annotations

import os
import sys
import time

path = sys.argv[1]
with open(path, "a", encoding="utf-8") as out:
    out.write(f"pid {os.getpid()}\n")
end = time.monotonic() + 300
while time.monotonic() < end:
    with open(path, "a", encoding="utf-8") as out:
        out.write(f"{time.monotonic():.2f}\n")
    time.sleep(0.2)
