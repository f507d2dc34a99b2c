"""A container started ahead of the next command, so that a call does not wait for bwrap to set up.

Why (issue 21's targets): bwrap with the protected set's binds costs 5-35 ms per command here,
most of it before the command runs (namespaces, mounts, the init). So after each command, the
thread that starts commands starts one spare container whose init (the Perl one of landlock.py,
scoping as it does) waits for its command on a pipe; the next command is written to that pipe
(argv, folder, environment with its process mark) and the init forks it as it would have. The
status fd, the lifeline, Landlock, the process group and the output pipes are the cold start's.

Only the default container gets a spare: one with members made writable (`Container.without`), one
without the read-only binds, the session shell and the bash init (no Perl or no Landlock) start as
before.
One spare per thread, for the last container value asked for: a command that asks for another
value (the user switched the container off, the protected set changed, another app's command, which
sees another folder of outputs: container.outputs_args) ends it unused. A spare
older than SPARE_MAX_AGE_S is ended unused too: its mount namespace is a copy of the host's from
when it started, and a drive mounted since may not show in it (containment-notes.md, section 1).
A spare waiting for its command ends with its starter: at end of file of its lifeline or of its
command pipe (its starter's end is close-on-exec), and by --die-with-parent.

Its process is started with `subprocess.Popen` and its output pipes are made here, not by asyncio:
a spare is started by a task of its own, which a closing loop may cancel while asyncio is still
starting the process, and the loop's shutdown then hangs on Python 3.11 (popen_process.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import anyio
from anyio.abc import Process

from app.core.execution import container as containers
from app.core.execution import process_marks, start_files
from app.core.execution.container import Container
from app.core.execution.pipes import PipeStream, output_pipe
from app.core.execution.popen_process import PopenProcess

log = logging.getLogger(__name__)

SPARE_MAX_AGE_S = 60.0
REFILL_DELAY_S = 0.02  # after the call's result went back: the next spare's fork does not delay it

ORDERS_ARG = "--orders="  # instead of a command: the init waits for it on this fd (landlock.PERL_INIT)


def order(argv: Sequence[str], cwd: str, env: Mapping[str, str]) -> bytes | None:
    """The command as the spare's init reads it; None when a part cannot pass (a NUL in it, a
    variable name with `=`): such a command starts as before, where the OS says what is wrong."""
    variables = [f"{name}={value}" for name, value in env.items()]
    if any("=" in name or not name for name in env):
        return None
    fields = [cwd, str(len(variables)), str(len(argv)), *variables, *argv]
    encoded = [os.fsencode(field) for field in fields]
    if any(b"\0" in field for field in encoded) or not argv:
        return None
    return b"".join(field + b"\0" for field in encoded)


def usable(found: Container | None, read_only_binds: bool) -> bool:
    """Whether commands in this container can run in a spare: the default, scoped one."""
    return found is not None and found.on and read_only_binds and bool(found.init)


@dataclass
class Spare:
    """A started container whose init waits for its command."""

    container: Container
    process: Process
    status_read: int  # the command's exit code, written by the init (non-blocking)
    order_write: int  # where the command goes; closing it unused ends the spare
    started: float
    stdout: PipeStream
    stderr: PipeStream
    pipe: int = 0  # the status pipe's inode: start_files counts the container once it has its command

    async def hand(self, argv: Sequence[str], cwd: str, env: Mapping[str, str]) -> bool:
        """Give the spare its command; False when it cannot take it (it is then ended)."""
        start_files.ordered(self.pipe, env.get(process_marks.MARK_ENV))
        message = order(argv, cwd, env)
        if message is None or self.process.returncode is not None:
            await self.end()
            return False
        try:
            while message:
                try:  # a command fits the empty pipe at once, mostly: no wait first
                    message = message[os.write(self.order_write, message) :]
                except BlockingIOError:  # longer than the pipe holds: the init reads as we write
                    await anyio.wait_writable(self.order_write)
        except OSError:  # its init is gone (BrokenPipeError)
            await self.end()
            return False
        os.close(self.order_write)
        self.order_write = -1
        return True

    async def end(self) -> None:
        """End it unused: its init reads end of file and exits, and bwrap with it."""
        start_files.ordered(self.pipe)
        for fd in (self.order_write, self.status_read):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.order_write = self.status_read = -1
        with anyio.CancelScope(shield=True):
            with anyio.move_on_after(1.0):
                await self.process.wait()
            if self.process.returncode is None:
                containers.kill_bwrap(self.process.pid)
            await self.stdout.aclose()
            await self.stderr.aclose()


async def start(found: Container, environ: Mapping[str, str] | None = None) -> Spare:
    """Start a spare of `found` (must be `usable`) from this thread, which it dies with."""
    assert found.bwrap is not None and found.init
    status_read, status_write = os.pipe()
    order_read, order_write = os.pipe()  # both close-on-exec: only this spare gets the read end
    stdout, out_write = output_pipe()
    stderr, err_write = output_pipe()
    os.set_blocking(status_read, False)
    os.set_blocking(order_write, False)
    pipe = os.fstat(status_read).st_ino
    start_files.awaiting_orders(pipe)
    orders = [f"{ORDERS_ARG}{order_read}"]
    argv = containers.bwrap_argv(found.bwrap, found.mounts, found.hidden, orders, status_write, found.init)
    try:
        popen = subprocess.Popen(  # not asyncio's: see popen_process.py
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out_write,
            stderr=err_write,
            cwd="/",
            env=dict(os.environ if environ is None else environ),
            pass_fds=(*containers.inherited(status_write, status_read), order_read),
            start_new_session=True,
        )
    except BaseException:
        start_files.ordered(pipe)
        for fd in (status_read, order_write, stdout.take(), stderr.take()):
            os.close(fd)
        raise
    finally:
        for fd in (status_write, order_read, out_write, err_write):
            os.close(fd)
    process = PopenProcess(popen)
    return Spare(found, process, status_read, order_write, time.monotonic(), stdout, stderr, pipe)


class _Slot:
    """One thread's spare, and whether one is being started, for the loop that runs there now."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.spare: Spare | None = None
        self.starting = False
        self.tasks: set[asyncio.Future[None]] = set()


_slots: dict[int, _Slot] = {}
_slots_lock = threading.Lock()


def _slot() -> _Slot:
    """This thread's slot; a new one when another loop runs here now (a spare's pipes belong to the
    loop that started it, which ended it as it closed)."""
    loop = asyncio.get_running_loop()
    with _slots_lock:
        slot = _slots.get(threading.get_ident())
        if slot is None or slot.loop is not loop:
            slot = _slots[threading.get_ident()] = _Slot(loop)
        return slot


async def take(found: Container | None) -> Spare | None:
    """This thread's spare for `found`, taken out of its slot; a spare of another container value,
    or too old, or gone, is ended (None: the command starts as before)."""
    slot = _slot()
    spare, slot.spare = slot.spare, None
    if spare is None:
        return None
    fresh = time.monotonic() - spare.started < SPARE_MAX_AGE_S
    if found is None or spare.container != found or not fresh or spare.process.returncode is not None:
        await spare.end()
        return None
    return spare


def refill_soon(found: Container) -> None:
    """Start the next spare of `found` in the background, on this thread's loop, shortly."""
    slot = _slot()
    if slot.starting or (slot.spare is not None and slot.spare.container == found):
        return
    slot.starting = True
    # A task from now, not a timer that makes one later: a loop that ends meanwhile cancels its tasks,
    # but a task a timer made during that shutdown would start a container after the end.
    task = slot.loop.create_task(_refill(slot, found))
    slot.tasks.add(task)
    task.add_done_callback(slot.tasks.discard)


async def _refill(slot: _Slot, found: Container) -> None:
    try:
        await asyncio.sleep(REFILL_DELAY_S)
        spare = await start(found)
    except OSError as problem:  # bwrap went missing: the next command says so, cold
        log.debug("no spare container: %s", problem)
        return
    finally:
        slot.starting = False
    old, slot.spare = slot.spare, spare
    if old is not None:
        await old.end()
    try:  # kept on the loop while it lives: a loop that ends cancels this, and the unused spare ends
        await spare.process.wait()
    finally:
        if slot.spare is spare:
            slot.spare = None
            await spare.end()
