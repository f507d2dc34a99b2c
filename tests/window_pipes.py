"""The tray's end of a window's private line: JSON lines to the window's stdin, from its stdout.

Over real pipes: to a window built in the test's process (`TrayEnd.with_line()` also gives the
window's `TrayLine`), or to a window process the test started with `stdin`/`stdout` pipes.
"""

from __future__ import annotations

import json
import os
import select
from typing import IO, Any

from app.ui.windows.link import TrayLine

HEARD_WAIT_S = 10.0
QUIET_S = 0.3  # how long "the window said nothing" is listened for


class TrayEnd:
    def __init__(self, to_window: IO[bytes], from_window: IO[bytes]) -> None:
        self.to_window = to_window
        self.from_window = from_window

    @classmethod
    def with_line(cls) -> tuple[TrayEnd, TrayLine]:
        """Two pipes: this end for the test, a `TrayLine` for a window built in this process."""
        window_in, tray_out = os.pipe()
        tray_in, window_out = os.pipe()
        line = TrayLine(stdin=os.fdopen(window_in, "rb"), stdout=os.fdopen(window_out, "wb"))
        return cls(os.fdopen(tray_out, "wb"), os.fdopen(tray_in, "rb")), line

    def tell(self, message: dict[str, Any]) -> None:
        self.to_window.write(json.dumps(message).encode() + b"\n")
        self.to_window.flush()

    def heard(self, timeout_s: float = HEARD_WAIT_S) -> dict[str, Any] | None:
        """The window's next message, or None if it said nothing within `timeout_s`."""
        ready, _, _ = select.select([self.from_window], [], [], timeout_s)
        return json.loads(self.from_window.readline()) if ready else None

    def close(self) -> None:
        """Close both pipes: a window whose stdin closes closes itself."""
        for end in (self.to_window, self.from_window):
            if not end.closed:
                end.close()
