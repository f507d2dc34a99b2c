"""The private line between the tray and a window it started: JSON lines over the window's
stdin and stdout.

Only the tray holds the other end of these pipes, so what a window says there is the user's click
(no pid checks, no races with look-alike processes). A window started any other way has no such
line and can only ask, like the CLI.

The window says first which program it is (`{"op": "hello", "program": ...}`,
core/program_identity.py): the tray's files may have been replaced since it started (an update or a
downgrade while it runs), and a window of another version may show less than the tray sends (a
red team, 2026-12-06: an older approval prompt dropped what only a person may allow). The tray
tells such a window nothing and takes nothing from it: an older window, which says nothing of the
kind, is refused at its first message.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any

from app.core.program_identity import SAY_PROGRAM_ENV, program_identity

log = logging.getLogger(__name__)

MAX_LINE_BYTES = 1 << 20
# What the tray tells a window whole each time (the rules it applies): only the latest counts, and
# it is kept apart from `incoming`, so a reader that drains the queue for its own messages never eats it.
LATEST_ONLY = frozenset({"rules"})
READ_BYTES = 1 << 16
STOP_GRACE_S = 1.0
HELLO = "hello"  # the window's first message: which program it is
UNSENT_MAX = 1000  # messages held for a window until its hello; past them it is refused


def _decode(line: bytes) -> dict[str, Any] | None:
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) and isinstance(message.get("op"), str) else None


def _lines(fd: int) -> Iterator[bytes]:
    """The lines read from `fd` until its end; a line longer than MAX_LINE_BYTES is dropped whole."""
    pending, skipping = b"", False
    while chunk := os.read(fd, READ_BYTES):
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            if not skipping and len(line) <= MAX_LINE_BYTES:
                yield line
            skipping = False
        if len(pending) > MAX_LINE_BYTES:
            pending, skipping = b"", True
    if pending and not skipping:  # the last line, with no newline after it
        yield pending


def open_tk_root(problem: str, log_name: str | None = None) -> Any:
    """The window's Tk root, or None after printing `problem` (a "...: {error}" text, already in
    the user's language) on stderr when no display can be had: the tray shows it to the user.
    With `log_name`, the window's warnings (a click another program sent, a hidden prompt shown
    again) are kept in `<log dir>/<log_name>.log`, beside the tray's: its stderr goes nowhere."""
    import tkinter as tk

    if log_name is not None:
        from app.core import app_log
        from app.core.errors import CoworkError
        from app.core.paths import AppPaths

        with contextlib.suppress(OSError, CoworkError):  # a full disk: the window still opens, unlogged
            app_log.configure(AppPaths.from_environment(), log_name, level=logging.WARNING)

    from app.ui.windows.look import new_root
    from app.ui.windows.real_input import protect_window  # Tk: only in the window's own process

    try:
        root = new_root()
    except tk.TclError as exc:
        print(f"cowork-terminal: {problem.format(error=exc)}", file=sys.stderr)
        return None
    protect_window(root)
    return root


class PipedWindow:
    """The tray's end: a window process, what to tell it, and what it answers (on a reader thread)."""

    def __init__(
        self,
        argv: Sequence[str],
        on_message: Callable[[dict[str, Any]], None],
        *,
        stderr: Any = subprocess.DEVNULL,
        on_exit: Callable[[int], None] | None = None,
        program: str | None = None,
        on_refused: Callable[[str], None] | None = None,
    ) -> None:
        """With `program` (the tray's identity), the window must say that it is this program before
        it is told or heard anything; else it is ended and `on_refused` gets why."""
        self.process = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),
            env=None if program is None else {**os.environ, SAY_PROGRAM_ENV: "1"},
        )
        self._on_message = on_message
        self._on_exit = on_exit
        self._program = program
        self._on_refused = on_refused
        self._unsent: list[bytes] | None = None if program is None else []  # held until the window said who it is
        self.refused = False
        self._send_lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, name="tray-window-reader", daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def send(self, message: dict[str, Any]) -> bool:
        """Tell the window something; False when it is gone."""
        data = json.dumps(message, ensure_ascii=False).encode("utf-8", "replace") + b"\n"
        stdin = self.process.stdin
        if stdin is None or self.refused:
            return False
        with self._send_lock:
            waiting = self._unsent is not None
            if self._unsent is not None and len(self._unsent) < UNSENT_MAX:
                self._unsent.append(data)
                return True
            if not waiting:
                try:
                    stdin.write(data)
                    stdin.flush()
                except (OSError, ValueError):
                    return False
                return True
        # A window that has not said which program it is while this much waited for it never will
        # (a review, 2026-12-06: the log window's updates piled up for it without end).
        self.refuse(f"it did not say which program it is while {UNSENT_MAX} messages waited for it")
        return False

    def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            for line in iter(lambda: stdout.readline(MAX_LINE_BYTES), b""):
                message = _decode(line)
                if message is None:
                    log.warning("a window (pid %s) sent a line that is not a message", self.pid)
                    continue
                if self.refused:
                    break
                if self.awaiting_hello():
                    if not self._heard_hello(message):
                        break
                    continue
                try:
                    self._on_message(message)
                except Exception:  # the top of a thread: log it, keep reading
                    log.exception("handling a message from a window failed")
        except (OSError, ValueError):
            pass
        code = self.process.wait()
        if self._on_exit is not None:
            self._on_exit(code)

    def awaiting_hello(self) -> bool:
        """Whether the window has yet to say which program it is (never, without `program`)."""
        return self._unsent is not None and not self.refused

    def _heard_hello(self, message: dict[str, Any]) -> bool:
        """The window's first message: its program's identity, then what was held for it is sent."""
        if message["op"] != HELLO:
            self.refuse(f"it sent {message['op']!r} before saying which program it is (an older version)")
            return False
        if message.get("program") != self._program:
            self.refuse("it is another program than the tray's (its files were replaced since the tray started)")
            return False
        with self._send_lock:
            if self.refused:  # ended meanwhile (its files were replaced while it started)
                return False
            unsent, self._unsent = self._unsent or [], None
            stdin = self.process.stdin
            with contextlib.suppress(OSError, ValueError):
                if stdin is not None and unsent:
                    stdin.write(b"".join(unsent))
                    stdin.flush()
        return True

    def refuse(self, why: str) -> None:
        """A window that is not of the tray's program: told nothing more, heard no more, ended."""
        with self._send_lock:
            if self.refused:
                return
            self.refused = True
            self._unsent = []
        log.warning("a window (pid %s, %s) was refused: %s", self.pid, self.process.args, why)
        self.close()
        if self._on_refused is not None:
            self._on_refused(why)

    def close(self) -> None:
        """End the window: its stdin closes (it closes itself), then terminate, then kill."""
        with self._send_lock, contextlib.suppress(OSError, ValueError):
            if self.process.stdin is not None:
                self.process.stdin.close()
        if self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(STOP_GRACE_S)


class TrayLine:
    """The window's end: messages from the tray arrive on a queue (read on a thread), but for the
    latest of each op in LATEST_ONLY (`latest`); answers go to stdout. Tk polls `incoming` with
    `after`; EOF on stdin means the tray wants the window gone."""

    def __init__(self, stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> None:
        self._stdin = stdin or sys.stdin.buffer
        self._stdout = stdout or sys.stdout.buffer
        self.incoming: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._lock = threading.Lock()
        self._latest_lock = threading.Lock()  # not the writers': a tray slow to read stalls no reading
        self._latest: dict[str, dict[str, Any]] = {}  # by op, for the ops in LATEST_ONLY
        self._heard = 0  # how many of those came, and whether the line ended: what `latest` changes with
        self._ended = False
        if os.environ.pop(SAY_PROGRAM_ENV, None) is not None:  # the tray asks; not passed on to our children
            self.send({"op": HELLO, "program": program_identity()})
        threading.Thread(target=self._read, name="window-tray-line", daemon=True).start()

    def _read(self) -> None:
        """Reads the descriptor itself, not through `sys.stdin.buffer`: this thread waits in a read
        for as long as the window is open, and a buffered reader's lock held there makes the
        interpreter abort at exit (SIGABRT, a crash report on macOS) when the user closes the window."""
        try:
            for line in _lines(self._stdin.fileno()):
                message = _decode(line)
                if message is not None and message["op"] in LATEST_ONLY:
                    with self._latest_lock:
                        self._latest[message["op"]] = message
                        self._heard += 1
                elif message is not None:
                    self.incoming.put(message)
        except (OSError, ValueError):
            pass
        with self._latest_lock:
            self._ended = True
        self.incoming.put(None)  # the tray closed our stdin (or went away)

    def latest(self, op: str) -> tuple[dict[str, Any] | None, bool, int]:
        """The last message of `op` (one of LATEST_ONLY) the tray told, or None; whether the line has
        ended since (what the tray said then no longer holds); and a count that grows with each change."""
        with self._latest_lock:
            return self._latest.get(op), self._ended, self._heard + self._ended

    def send(self, message: dict[str, Any]) -> None:
        data = json.dumps(message, ensure_ascii=False).encode("utf-8", "replace") + b"\n"
        with self._lock, contextlib.suppress(OSError, ValueError):
            self._stdout.write(data)
            self._stdout.flush()

    def drain(self) -> list[dict[str, Any] | None]:
        items = []
        while True:
            try:
                items.append(self.incoming.get_nowait())
            except queue.Empty:
                return items
