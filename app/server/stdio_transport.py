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
import logging
import os
import re
import signal
import stat
import sys
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from types import FrameType
from typing import Any, NoReturn, TextIO

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

log = logging.getLogger(__name__)

UNENCODABLE_META = "cowork-terminal/unencodable"  # labels of the arguments that held a lone surrogate
NOT_UTF8_META = "cowork-terminal/not-utf8"  # the line held bytes that are not UTF-8 (decoded as surrogates)
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
UNREADABLE = ("json_invalid", "string_unicode")  # the SDK's errors that carry the line itself
RAW_SURROGATE = re.compile("[\ud800-\udfff]")
NOT_UTF8_PROBLEM = (
    "bytes that are not UTF-8 (or a lone UTF-16 surrogate escape), which are not text. Send proper UTF-8 "
    "text; to produce such bytes, write them with printf escapes inside the command"
)
# A line longer than this is dropped as it comes: no message the server takes is near it (a command
# is at most 100 KiB, request.MAX_COMMAND_BYTES; the tray takes 1 MiB from a server, wire.TO_TRAY_FRAME_BYTES),
# and a call far past those limits (a 5 MB command) still reaches the argument gate, refused and journaled.
LINE_LIMIT = 16 << 20
CUT_HEAD = 4096  # what is kept of a dropped line, to read its id from
CUT_MARK = "\x00cowork-terminal/cut\x00"  # starts the head of a dropped line (no JSON line starts so)
# The id of a line that could not be parsed whole: a member of the top object, after string members only.
LEADING_ID = re.compile(r'\s*\{(?:\s*"[^"\\]*"\s*:\s*"[^"\\]*"\s*,)*\s*"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')
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
    """The message of a line the SDK rejected only for its lone surrogates (escaped, or bytes that are
    not UTF-8, which `LoopLines` decodes as surrogates), marked; else None."""
    raw = RAW_SURROGATE.search(line) is not None
    if not raw and not SURROGATE_ESCAPE.search(line):
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
        if raw:
            params["_meta"][NOT_UTF8_META] = True
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_python(cleaned, by_name=False))
    except ValidationError:
        return None


def unencodable_labels(meta: Any) -> list[str]:
    """The arguments the transport found lone surrogates in (see `repair_line`)."""
    labels = meta.get(UNENCODABLE_META) if isinstance(meta, dict) else None
    return [str(label) for label in labels] if isinstance(labels, list) else []


def not_utf8(meta: Any) -> bool:
    """Whether the transport found bytes that are not UTF-8 in the call's line (see `repair_line`)."""
    return isinstance(meta, dict) and meta.get(NOT_UTF8_META) is True


def surrogate_message(labels: list[str], raw_bytes: bool = False) -> str:
    from app.core.commands.request import SURROGATE_PROBLEM

    problem = NOT_UTF8_PROBLEM if raw_bytes else SURROGATE_PROBLEM
    return f"{' and '.join(labels)} contain{'s' if len(labels) == 1 else ''} {problem}."


def _readable_id(value: Any) -> int | str | None:
    return value if isinstance(value, int | str) and not isinstance(value, bool) else None


def _invalid(request_id: int | str, message: str, code: int = types.INVALID_REQUEST) -> SessionMessage:
    error = types.ErrorData(code=code, message=message)
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


def _parsed(problem: ValidationError) -> tuple[Any, str | None, str]:
    """The message the SDK could not validate, as Python reads it (None when it cannot), the line
    when it is at hand, and what is wrong at the line's level: "deep", "not JSON", or ""."""
    for error in problem.errors():
        given = error.get("input")
        if error.get("type") in UNREADABLE and isinstance(given, str):
            deep = "recursion limit" in str(error.get("msg"))
            try:
                return json.loads(given), given, "deep" if deep else ""
            except RecursionError:
                return None, given, "deep"
            except ValueError:
                return None, given, "not JSON"
        if len(error.get("loc", ())) <= 1 or error.get("type") == "missing":  # the whole message
            return given, None, ""
    return None, None, ""


def _leading_id(line: str, start: int = 0) -> int | str | None:
    found = LEADING_ID.match(line, start)
    try:
        return _readable_id(json.loads(found.group(1))) if found else None
    except ValueError:
        return None


def invalid_answers(problem: ValidationError) -> list[SessionMessage]:
    """JSON-RPC's Invalid Request for each request in a line the SDK refused whose id can be read
    (none for a line whose id cannot be: it may be a notification, which gets no answer)."""
    message, line, wrong = _parsed(problem)
    deep = "The request nests too deeply to be read. Send arguments that nest less deeply."
    if isinstance(line, str) and line.startswith(CUT_MARK):
        request_id = _leading_id(line, len(CUT_MARK))
        limit = f"{LINE_LIMIT >> 20} MiB"
        reason = (
            f"The message is longer than the {limit} the server reads on one line; it was dropped. Send it shorter."
        )
        return [] if request_id is None else [_invalid(request_id, reason)]
    if message is None and isinstance(line, str):  # not JSON, or nested past Python's stack: its id, if it leads
        request_id = _leading_id(line)
        if request_id is None:
            return []
        if wrong == "deep":
            return [_invalid(request_id, deep)]
        reason = "Parse error: the line is not JSON. Send one JSON-RPC message a line, as JSON text."
        return [_invalid(request_id, reason, types.PARSE_ERROR)]
    if isinstance(message, list):  # a batch: MCP has none since 2025-06-18
        reason = "Batches (JSON arrays of requests) are not supported. Send each request on its own line."
        return [
            _invalid(request_id, reason)
            for item in message
            if isinstance(item, dict) and "method" in item and (request_id := _readable_id(item.get("id"))) is not None
        ]
    if not isinstance(message, dict) or (request_id := _readable_id(message.get("id"))) is None:
        return []
    if "method" not in message and ("result" in message or "error" in message):
        return []  # a malformed answer to one of our requests: answering it would start a loop
    if wrong == "deep":
        reason = deep
    elif message.get("jsonrpc") != "2.0":
        reason = 'Invalid Request: the message must have "jsonrpc": "2.0" (JSON-RPC 2.0). Send it with that member.'
    elif not isinstance(message.get("method"), str):
        reason = "Invalid Request: the message has no method (a string). Send it with one."
    elif "params" in message and not isinstance(message["params"], dict):
        reason = "Invalid Request: params must be an object of named members, not a list. Send them by name."
    else:
        reason = (
            "Invalid Request: the message is not a valid JSON-RPC 2.0 request. Check its members and send it again."
        )
    return [_invalid(request_id, reason)]


class Ending:
    """Whether serving is ending: stdin ended, the client closed stdout, or a stop signal came. The
    SDK then cancels the calls in flight, and those are not the client's cancellations (the tray lets
    such a call run on, as it does a job: forwarding.py)."""

    def __init__(self) -> None:
        self.now = False

    def set(self) -> None:
        self.now = True


class InFlight:
    """The ids of the client's requests not yet answered, keyed as the SDK's dispatcher keys them
    (`coerce_request_id`: "7" is 7). The dispatcher overwrites its record of a request whose id is
    reused while it runs, so that a cancellation reaches the newer only: such a request is refused
    before the dispatcher sees it."""

    def __init__(self) -> None:
        self.ids: dict[int | str, int | str] = {}  # key -> the id as the client sent it

    def key(self, request_id: int | str) -> int | str:
        return coerce_request_id(request_id)


class AnsweringWriter:
    """The SDK's write stream; an answer sent for a request ends its id's time in flight."""

    def __init__(self, inner: Any, in_flight: InFlight) -> None:
        self._inner = inner
        self._in_flight = in_flight

    async def send(self, item: SessionMessage) -> None:
        message = getattr(item, "message", None)
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and message.id is not None:
            self._in_flight.ids.pop(self._in_flight.key(message.id), None)  # before the client can reuse it
        await self._inner.send(item)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def __aenter__(self) -> AnsweringWriter:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)


class RepairingReader:
    """The SDK's read stream, with the lines its parser rejected for lone surrogates repaired, the
    other requests it rejected answered with JSON-RPC's Invalid Request (through `answer`; the
    dispatcher would drop them unanswered), and a request reusing the id of one in flight refused;
    `ending` is set at its end."""

    def __init__(
        self,
        inner: Any,
        ending: Ending | None = None,
        answer: Callable[[SessionMessage], Awaitable[None]] | None = None,
        in_flight: InFlight | None = None,
    ) -> None:
        self._inner = inner
        self._ending = ending
        self._answer = answer
        self._in_flight = in_flight

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        while True:
            try:
                item = await self._inner.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                if self._ending is not None:
                    self._ending.set()
                raise
            if isinstance(item, ValidationError):
                errors = item.errors()
                line = errors[0].get("input") if errors and errors[0].get("type") in UNREADABLE else None
                repaired = repair_line(line) if isinstance(line, str) else None
                if repaired is not None:
                    item = repaired
                elif self._answer is not None:
                    answers = invalid_answers(item)
                    log.warning("a message from the client is not valid JSON-RPC (%d answered): %s", len(answers), item)
                    for answer in answers:
                        await self._answer(answer)
                    continue
            if await self._refused(item):
                continue
            return item

    async def _refused(self, item: Any) -> bool:
        """Keep the ids in flight; False when `item` may go on to the dispatcher, else answered here."""
        message = getattr(item, "message", None)
        if self._in_flight is None or self._answer is None:
            return False
        if isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            cancelled = _readable_id((message.params or {}).get("requestId"))
            taken = self._in_flight.ids.get(self._in_flight.key(cancelled)) if cancelled is not None else None
            # the dispatcher would end the call with "7" for a cancel of 7 (or "07"): dropped instead
            if taken is not None and (type(taken) is not type(cancelled) or taken != cancelled):
                return True
            if cancelled is not None:  # a cancelled request is never answered: its id is free again
                self._in_flight.ids.pop(self._in_flight.key(cancelled), None)
            return False
        if not isinstance(message, types.JSONRPCRequest):
            return False
        key = self._in_flight.key(message.id)
        if key not in self._in_flight.ids:
            self._in_flight.ids[key] = message.id
            return False
        taken = json.dumps(self._in_flight.ids[key])
        reason = (
            f"Invalid Request: request id {json.dumps(message.id)} is taken by request {taken}, which is still "
            f'running (this server reads "7" and 7 as one id). Send this request with an id not in use.'
        )
        log.warning("refused request %s: its id is taken by a request in flight", json.dumps(message.id))
        await self._answer(_invalid(message.id, reason))
        return True

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
        self._head: bytes | None = None  # the start of a line being dropped (longer than LINE_LIMIT)

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
            if len(self._buffer) > LINE_LIMIT:  # too long for any message: keep its head, drop the rest
                self._cut()
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
                if not self._buffer and self._head is None:
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
        if self._head is not None:  # the end of a dropped line: the SDK gets its marked head
            head, self._head = self._head, None
            return cut_line(head)
        return read_line(line)

    def _cut(self) -> None:
        if self._head is None:
            self._head = bytes(self._buffer[:CUT_HEAD])
            log.warning("a line from the client passed %d bytes without its end: dropping it", LINE_LIMIT)
        self._buffer.clear()
        self._searched = 0


def read_line(line: bytes) -> str:
    """A line as the SDK is given it: bytes that are not UTF-8 become lone surrogates, which the SDK
    refuses and `repair_line` names (the call is refused, not run with U+FFFD in their place)."""
    return line.decode("utf-8", errors="surrogateescape")


def cut_line(head: bytes) -> str:
    """What the SDK is given of a line dropped for its length: its head, marked (`invalid_answers`)."""
    return CUT_MARK + read_line(head) + "\n"


class CappedLines:
    """A blocking binary stdin's lines for the SDK's reader thread, where the loop cannot serve
    (Windows, a file, a terminal), read as `LoopLines` reads them: bytes that are not UTF-8 decoded
    as surrogates, a line past LINE_LIMIT dropped as it comes and its head marked."""

    def __init__(self, binary: Any) -> None:
        self._binary = binary

    def readline(self) -> str:
        line = self._binary.readline(LINE_LIMIT)
        if len(line) < LINE_LIMIT or line.endswith(b"\n"):
            return read_line(line)
        log.warning("a line from the client passed %d bytes without its end: dropping it", LINE_LIMIT)
        while (rest := self._binary.readline(LINE_LIMIT)) and not rest.endswith(b"\n"):
            pass
        return cut_line(line[:CUT_HEAD])


@contextmanager
def sdk_stdin(wanted: bool) -> Iterator[Any]:
    """stdin for the SDK's transport, claimed as it claims it (fd 0 pointed away while serving), read
    by `CappedLines`; None (the SDK's own, which decodes with errors="replace" and has no bound) when
    not `wanted` or when this SDK has no such claim."""
    try:
        from mcp.server.stdio import _claim_fd, _open_stdin_diversion
    except ImportError:  # pragma: no cover - another SDK version
        wanted = False
    if not wanted or _wire_fd(sys.stdin) is None:
        yield None
        return
    binary, release = _claim_fd(0, sys.stdin, "rb", _open_stdin_diversion)
    try:
        yield anyio.wrap_file(CappedLines(binary))  # type: ignore[arg-type]  # only readline is used
    finally:
        if release is not None:
            release()


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

    with signals_cancel(stop), loop_streams(on_gone=end_serving) as on_loop, sdk_stdin(on_loop is None) as stdin:
        # duck-typed as the SDK's AsyncFile[str]
        streams: tuple[Any, Any] = (on_loop.lines, on_loop.writer) if on_loop else (stdin, None)
        async with stdio_server(*streams) as (read_stream, write_stream):
            with anyio.CancelScope() as scope:
                serving.append(scope)
                if stopped_by:
                    scope.cancel()
                in_flight = InFlight()
                reader = RepairingReader(read_stream, ending, write_stream.send, in_flight)
                await lowlevel_server.run(
                    reader, AnsweringWriter(write_stream, in_flight), lowlevel_server.create_initialization_options()
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
