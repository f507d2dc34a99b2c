"""Pipes of ours for a command's output (POSIX), and what becomes of them when the command leaves a
background job holding them.

A job started with `&` keeps the command's stdout and stderr. Once the command has returned, closing
our read ends would kill such a job at its next write (SIGPIPE: a dev server dies at its first log
line; on Windows a broken pipe, which busybox's bash answers by exiting 141), and leaving them unread
would stop it as soon as the pipe is full (about 200 kB: a dev server hangs). So `discard` reads them
to their end in a thread of its own and throws away what comes; on Windows, where the pipes are
asyncio's and only its loop can read them, `discard_on_loop` does the same in a task of that loop.
"""

from __future__ import annotations

import asyncio
import os
import threading

import anyio
from anyio.abc import ByteReceiveStream, Process

READ_BYTES = 65536


class PipeStream(ByteReceiveStream):
    """The read end of a pipe of ours (non-blocking), read on the loop."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        os.set_blocking(fd, False)

    async def receive(self, max_bytes: int = READ_BYTES) -> bytes:
        while self.fd >= 0:
            await anyio.wait_readable(self.fd)
            try:
                data = os.read(self.fd, max_bytes)
            except BlockingIOError:
                continue
            if not data:
                raise anyio.EndOfStream
            return data
        raise anyio.ClosedResourceError

    def rest(self) -> bytes:
        """What the pipe holds now, without waiting: the whole rest once nothing can write to it.
        At most one pipe's worth, all it can hold: a writer missed by output_held goes on unread."""
        import fcntl  # here: this module is imported on Windows too, where no pipe of ours is made

        left = fcntl.fcntl(self.fd, fcntl.F_GETPIPE_SZ) if self.fd >= 0 else 0
        chunks = []
        while left > 0:
            try:
                data = os.read(self.fd, left)
            except BlockingIOError:
                break
            if not data:
                break
            chunks.append(data)
            left -= len(data)
        return b"".join(chunks)

    def take(self) -> int:
        """The read end, which this stream no longer owns (-1 when it was closed)."""
        fd, self.fd = self.fd, -1
        return fd

    async def aclose(self) -> None:
        fd = self.take()
        if fd >= 0:
            os.close(fd)


def output_pipe() -> tuple[PipeStream, int]:
    """A pipe for a command's stdout or stderr: our read end, and the write end to hand the command
    (the caller closes it once the command has it). Both close-on-exec, as os.pipe makes them."""
    read_end, write_end = os.pipe()
    return PipeStream(read_end), write_end


def discard(*fds: int) -> None:
    """Read these pipes to their end in a thread, throwing away what comes, then close them."""
    fds = tuple(fd for fd in fds if fd >= 0)
    if fds:
        threading.Thread(target=_read_to_end, args=fds, name="late-output", daemon=True).start()


def _read_to_end(*fds: int) -> None:
    import selectors

    with selectors.DefaultSelector() as selector:
        for fd in fds:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            for key, _events in selector.select():
                try:
                    data = os.read(key.fd, READ_BYTES)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    data = b""
                if not data:  # every writer is gone
                    selector.unregister(key.fd)
                    os.close(key.fd)


_late_readers: set[asyncio.Task[None]] = set()  # held here: the loop keeps only weak references


def discard_on_loop(process: Process) -> None:
    """Read the process's stdout and stderr (asyncio's pipes) to their end in a task of the running
    loop, throwing away what comes, then close them. The task lives as long as the loop does (the
    server's or the tray's), as `discard`'s thread lives as long as the process."""
    task = asyncio.get_running_loop().create_task(_drain_and_close(process))
    _late_readers.add(task)
    task.add_done_callback(_late_readers.discard)


async def _drain_and_close(process: Process) -> None:
    try:
        async with anyio.create_task_group() as group:
            for stream in (process.stdout, process.stderr):
                if stream is not None:
                    group.start_soon(_drain, stream)
    finally:
        with anyio.CancelScope(shield=True):
            await process.aclose()


async def _drain(stream: ByteReceiveStream) -> None:
    try:
        while True:
            await stream.receive(READ_BYTES)
    except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        return
