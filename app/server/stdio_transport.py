"""How `serve` speaks over stdio and how it stops: repaired lines, stop signals, a prompt exit.

Two things the SDK's stdio server leaves to us (issue 11):

- A JSON line with a lone UTF-16 surrogate escape (`"\\ud800"`) is valid JSON to Python's parser
  but not to the SDK's (jiter), which drops the line without an answer: the model would wait for
  its call forever. Such a line is parsed here instead, each lone surrogate replaced by U+FFFD, and
  the request carries in its `_meta` which arguments held one, so the argument gate refuses the
  call with a message naming them.
- The SDK's transport hands every read, write and flush to a worker thread: about 0.5 ms a call
  here (issue 21's targets). Where stdin and stdout are pipes or sockets on POSIX, as from every
  client, the lines are read and written on the event loop instead (`loop_streams`), with fds 0
  and 1 pointed away from the wire while serving, as the SDK does. Elsewhere (Windows, whose loop
  cannot wait on a pipe; a file or a terminal) the SDK's own transport serves.
- Clients stop servers with a signal (Claude Code's `claude mcp list` does so after `initialize`).
  SIGTERM, SIGINT and SIGHUP (Windows: Ctrl+C, Ctrl+Break and the console's close, logoff and
  shutdown events, which the C runtime raises as SIGINT and SIGBREAK) cancel the serving scope, as
  the end of stdin does: running commands end as on a disconnect and their rows are closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import stat
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import FrameType
from typing import Any, NoReturn, TextIO

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

UNENCODABLE_META = "cowork-terminal/unencodable"  # labels of the arguments that held a lone surrogate
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
POSIX_STOP_SIGNALS = ("SIGTERM", "SIGINT", "SIGHUP")
WINDOWS_STOP_SIGNALS = ("SIGINT", "SIGBREAK")
READ_BYTES = 64 * 1024


def stop_signal_names(platform: str) -> tuple[str, ...]:
    """The signals that mean "stop now" on `platform` (a `sys.platform` value)."""
    return WINDOWS_STOP_SIGNALS if platform == "win32" else POSIX_STOP_SIGNALS


def stop_signals(platform: str = sys.platform) -> list[signal.Signals]:
    return [getattr(signal, name) for name in stop_signal_names(platform) if hasattr(signal, name)]


class ServerStopped(BaseException):
    """A stop signal arrived before the event loop took the signals over (start-up)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.signal_name = name


def _raise_stopped(number: int, _frame: FrameType | None) -> None:
    raise ServerStopped(signal.Signals(number).name)


def stop_on_signals_at_start() -> None:
    """Until serving begins, a stop signal unwinds start-up through `serve`'s cleanup."""
    for number in stop_signals():
        signal.signal(number, _raise_stopped)


def ignore_stop_signals() -> None:
    """While the rows are being closed: a second signal must not cut that short."""
    for number in stop_signals():
        signal.signal(number, signal.SIG_IGN)


def _clean(value: Any, path: tuple[str, ...], found: list[str]) -> Any:
    """`value` with each lone surrogate replaced by U+FFFD; appends a label per string that had one."""
    from app.core.commands.request import argument_label  # with the host side, after the handshake

    in_arguments = path[:2] == ("params", "arguments")

    def label(where: tuple[str, ...], *, key: bool = False) -> str:
        return argument_label(where[2:], key=key) if in_arguments and len(where) > 2 else f"`{'.'.join(where)}`"

    if isinstance(value, str):
        cleaned = re.sub("[\ud800-\udfff]", "\ufffd", value)
        if cleaned != value:
            found.append(label(path))
        return cleaned
    if isinstance(value, dict):
        result = {}
        for key, item in value.items():
            clean_key = _clean(key, (*path, key), []) if isinstance(key, str) else key
            if clean_key != key:
                found.append(label((*path, clean_key), key=True) if in_arguments else label((*path, clean_key)))
            result[clean_key] = _clean(item, (*path, clean_key), found)
        return result
    if isinstance(value, list):
        return [_clean(item, (*path, str(index)), found) for index, item in enumerate(value)]
    return value


def repair_line(line: str) -> SessionMessage | None:
    """The message of a line the SDK rejected only for its lone surrogates, marked; else None."""
    if not SURROGATE_ESCAPE.search(line):
        return None
    found: list[str] = []
    try:
        cleaned = _clean(json.loads(line), (), found)
    except (ValueError, RecursionError):  # nested past Python's stack (a red team: 600 arrays deep wedged
        return None  # the server, 1,000 ended it): the SDK's own answer to a line it cannot read stands
    if not found:
        return None
    params = cleaned.get("params") if isinstance(cleaned, dict) else None
    if isinstance(params, dict):
        meta = params.get("_meta")
        params["_meta"] = {**(meta if isinstance(meta, dict) else {}), UNENCODABLE_META: found}
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_python(cleaned, by_name=False))
    except ValidationError:
        return None


def unencodable_labels(meta: Any) -> list[str]:
    """The arguments the transport found lone surrogates in (see `repair_line`)."""
    labels = meta.get(UNENCODABLE_META) if isinstance(meta, dict) else None
    return [str(label) for label in labels] if isinstance(labels, list) else []


def surrogate_message(labels: list[str]) -> str:
    from app.core.commands.request import SURROGATE_PROBLEM

    return f"{' and '.join(labels)} contain{'s' if len(labels) == 1 else ''} {SURROGATE_PROBLEM}."


class Ending:
    """Whether serving is ending: stdin ended, the client closed stdout, or a stop signal came. The
    SDK then cancels the calls in flight, and those are not the client's cancellations (the tray lets
    such a call run on, as it does a job: forwarding.py)."""

    def __init__(self) -> None:
        self.now = False

    def set(self) -> None:
        self.now = True


class RepairingReader:
    """The SDK's read stream, with the lines its parser rejected for lone surrogates repaired;
    `ending` is set at its end."""

    def __init__(self, inner: Any, ending: Ending | None = None) -> None:
        self._inner = inner
        self._ending = ending

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        try:
            item = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            if self._ending is not None:
                self._ending.set()
            raise
        if isinstance(item, ValidationError):
            errors = item.errors()
            line = errors[0].get("input") if errors and errors[0].get("type") == "json_invalid" else None
            repaired = repair_line(line) if isinstance(line, str) else None
            if repaired is not None:
                return repaired
        return item

    def close(self) -> None:
        self._inner.close()

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> RepairingReader:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> RepairingReader:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def loop_fits(platform: str, modes: Sequence[int]) -> bool:
    """Whether the event loop can serve stdio whose files have these `st_mode`s: pipes and sockets
    on POSIX. Not a regular file or a terminal (epoll refuses the one; making the other
    non-blocking would leave the person's shell so after we exit), nor any Windows handle."""
    return platform != "win32" and all(stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) for mode in modes)


class LoopLines:
    """stdin's lines (str, as the SDK's reader yields them) read on the event loop from `fd`."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buffer = bytearray()
        self._searched = 0  # no newline before this offset
        self._ended = False
        self._waiting: anyio.CancelScope | None = None

    def end(self) -> None:
        """Read nothing more: the lines end here, as at the end of the client's stdin."""
        self._ended = True
        if self._waiting is not None:
            self._waiting.cancel()

    def __aiter__(self) -> LoopLines:
        return self

    async def __anext__(self) -> str:
        while (end := self._buffer.find(b"\n", self._searched)) < 0:
            self._searched = len(self._buffer)
            if self._ended:
                raise StopAsyncIteration
            try:
                chunk = os.read(self._fd, READ_BYTES)
            except BlockingIOError:  # nothing yet: wait for the client's next line
                with anyio.CancelScope() as self._waiting:
                    await anyio.wait_readable(self._fd)
                self._waiting = None
                continue
            if not chunk:  # end of file: a last line without its newline still counts, as in the SDK
                if not self._buffer:
                    # The SDK cancels what is in flight at end of file: let the last requests'
                    # handlers start and answer first, as its reader thread's hand-over let them.
                    await anyio.wait_all_tasks_blocked()
                    raise StopAsyncIteration
                end = len(self._buffer) - 1
                break
            self._buffer += chunk
        line = bytes(self._buffer[: end + 1])
        del self._buffer[: end + 1]
        self._searched = 0
        return line.decode("utf-8", errors="replace")


class LoopWriter:
    """stdout for the SDK's writer: each line written on the event loop to `fd` (non-blocking).
    A client that closed its end gets nothing more, and `on_gone` runs once: serving ends as at the
    end of stdin, not in a traceback."""

    def __init__(self, fd: int, on_gone: Callable[[], None]) -> None:
        self._fd = fd
        self._on_gone: Callable[[], None] | None = on_gone

    async def write(self, text: str) -> None:
        view = memoryview(text.encode("utf-8"))
        while view and self._on_gone is not None:
            try:
                view = view[os.write(self._fd, view) :]
            except BlockingIOError:  # the client reads slower than we write: wait for room
                await anyio.wait_writable(self._fd)
            except (BrokenPipeError, ConnectionResetError):
                gone, self._on_gone = self._on_gone, None
                gone()

    async def flush(self) -> None:
        """Nothing is buffered: each line went out whole in `write`."""


def _wire_fd(stream: TextIO) -> int | None:
    try:
        return stream.buffer.fileno()
    except (AttributeError, OSError, ValueError):
        return None


class LoopStdio:
    """The wire's private duplicates, served on the loop, and how to give fds 0 and 1 back."""

    def __init__(
        self, wire: tuple[int, int], private: list[int], blocking: list[bool], on_gone: Callable[[], None]
    ) -> None:
        self.wire, self.private, self._blocking = wire, private, blocking
        self.diverted: list[int] = []
        self.lines = LoopLines(private[0])

        def gone() -> None:  # no more answers can reach the client: no more questions are read
            self.lines.end()
            on_gone()

        self.writer = LoopWriter(private[1], gone)

    def unblock(self) -> None:
        """The wire's blocking mode as we found it: the pipe may be another process's too (a wrapper
        script's), which must not be left non-blocking when this process exits, by a signal too."""
        for duplicate, blocking in zip(self.private, self._blocking, strict=True):
            with contextlib.suppress(OSError):
                os.set_blocking(duplicate, blocking)

    def give_back(self) -> None:
        """The wire on fds 0 and 1 again, as we found it. Once; each step on its own."""
        self.unblock()
        for fd, duplicate in zip(self.wire, self.private, strict=True):
            if fd in self.diverted:
                with contextlib.suppress(OSError):
                    os.dup2(duplicate, fd)
            with contextlib.suppress(OSError):
                os.close(duplicate)
        self.private, self._blocking, self.diverted = [], [], []


def _claim(wire: tuple[int, int], on_gone: Callable[[], None]) -> LoopStdio | None:
    """Take the wire for the loop: private non-blocking duplicates, fds 0 and 1 pointed away. None
    (nothing changed) when the OS refuses a step: the SDK's transport serves instead."""
    import fcntl  # POSIX only, as loop_fits is

    private: list[int] = []
    stdio: LoopStdio | None = None
    try:
        for fd in wire:
            private.append(fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3))
        stdio = LoopStdio(wire, private, [os.get_blocking(fd) for fd in private], on_gone)
        for fd, flags in zip(wire, (os.O_RDONLY, os.O_WRONLY), strict=True):
            if fd in (0, 1):
                away = os.open(os.devnull, flags) if fd == 0 else os.dup(2)
                os.dup2(away, fd)
                os.close(away)
                stdio.diverted.append(fd)
        for fd in private:
            os.set_blocking(fd, False)
    except OSError:
        if stdio is not None:
            stdio.give_back()
        for fd in private if stdio is None else ():
            os.close(fd)
        return None
    return stdio


@contextmanager
def loop_streams(on_gone: Callable[[], None] = lambda: None) -> Iterator[LoopStdio | None]:
    """stdin and stdout served on the loop while the context lasts, when `loop_fits`; else None.
    `on_gone`: the client closed its end of stdout.

    The wire is used through private duplicates, and fds 0 and 1 read the null device and write to
    stderr meanwhile (as the SDK's transport arranges): what a handler prints cannot tear a frame."""
    found = (_wire_fd(sys.stdin), _wire_fd(sys.stdout))
    if found[0] is None or found[1] is None:
        return (yield None)
    wire = (found[0], found[1])
    try:
        fits = loop_fits(sys.platform, [os.fstat(fd).st_mode for fd in wire])
    except OSError:
        fits = False
    stdio = _claim(wire, on_gone) if fits else None
    try:
        yield stdio
    finally:
        if stdio is not None:
            stdio.give_back()


@contextmanager
def signals_cancel(stop: Callable[[str], None]) -> Iterator[None]:
    """Route the stop signals to `stop(name)` on the running event loop, for the duration."""
    loop = asyncio.get_running_loop()
    numbers = stop_signals()
    if sys.platform == "win32":
        for number in numbers:  # no add_signal_handler on Windows; the loop's wakeup fd wakes it
            signal.signal(number, lambda n, _f: loop.call_soon_threadsafe(stop, signal.Signals(n).name))
    else:  # add_signal_handler wakes the loop even when a worker thread took the signal
        for number in numbers:
            loop.add_signal_handler(number, stop, number.name)
    try:
        yield
    finally:
        if sys.platform == "win32":
            ignore_stop_signals()
        else:
            for number in numbers:
                loop.remove_signal_handler(number)


async def serve_stdio(
    lowlevel_server: Any, on_stopped: Callable[[str], NoReturn], ending: Ending | None = None
) -> None:
    """Serve until stdin ends or the client closes stdout (on the loop), or until a stop signal
    arrives: then `on_stopped(name)`. `ending` is set as any of these comes, before the calls in
    flight are cancelled.

    The loop takes the signals over first thing, so a signal that comes while the transport
    starts is kept and acted on as soon as serving begins. `on_stopped` runs inside the stdio
    transport: leaving the SDK's would wait for its stdin reader, a thread blocked on a read that
    only the client can end, so `on_stopped` ends the process.
    """
    stopped_by: list[str] = []
    serving: list[anyio.CancelScope] = []

    ending = ending or Ending()

    def end_serving() -> None:
        ending.set()
        for scope in serving:
            scope.cancel()

    def stop(name: str) -> None:
        stopped_by.append(name)
        end_serving()

    with signals_cancel(stop), loop_streams(on_gone=end_serving) as on_loop:
        # duck-typed as the SDK's AsyncFile[str]
        streams: tuple[Any, Any] = (on_loop.lines, on_loop.writer) if on_loop else (None, None)
        async with stdio_server(*streams) as (read_stream, write_stream):
            with anyio.CancelScope() as scope:
                serving.append(scope)
                if stopped_by:
                    scope.cancel()
                await lowlevel_server.run(
                    RepairingReader(read_stream, ending), write_stream, lowlevel_server.create_initialization_options()
                )
            if stopped_by:
                if on_loop is not None:
                    on_loop.unblock()  # on_stopped ends the process: give_back would not run
                on_stopped(stopped_by[0])


def stop_signal_in(problem: BaseException) -> str | None:
    """The stop signal behind `problem`, also inside an exception group (a signal that came while
    the event loop started, before it took the signals over); None when there is none."""
    if isinstance(problem, ServerStopped):
        return problem.signal_name
    for inner in getattr(problem, "exceptions", ()):
        found = stop_signal_in(inner)
        if found:
            return found
    return None
