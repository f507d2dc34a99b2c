"""A started process as anyio's `Process`, without asyncio's subprocess machinery.

Why: on Python 3.11, an event loop that closes while one of its tasks is inside asyncio's process
start (the process forked, its transport not yet connected) cancels asyncio's own pipe-connecting
task with the rest; the process's exit is then queued behind that task forever and the loop's
shutdown hangs (a test's loop did, on CI). A spare container is started by a task of its own
(spare.py), which a closing loop may catch there. `subprocess.Popen` starts it without awaiting
anything. A thread of its own reaps it as soon as it ends, whether anyone awaits it or not (as
asyncio's child watcher did: a container outlives its command's call when a background job runs);
a task that awaits it wakes through a pidfd (Linux 5.3 and newer), else by polling.
"""

from __future__ import annotations

import _thread
import contextlib
import os
import signal
import subprocess

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process

POLL_S = 0.02  # where the kernel has no pidfd: how often a waiting task looks


class PopenProcess(Process):
    """`popen`, awaited on the running loop. Output is read from pipes of the caller's own."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self._popen = popen
        # Not threading.Thread: its start waits until the new thread runs, which held the loop for
        # about 1 ms a process on this 2-core machine.
        _thread.start_new_thread(popen.wait, ())

    async def wait(self) -> int:
        pidfd = -1
        if self._popen.returncode is None:
            with contextlib.suppress(AttributeError, OSError):  # no pidfd here, or reaped just now: poll
                pidfd = os.pidfd_open(self._popen.pid)
        try:
            while (code := self._popen.returncode) is None:
                if pidfd >= 0:
                    await anyio.wait_readable(pidfd)  # readable from the moment it has ended
                    return self._popen.wait()  # at once: reaped here, or by its thread just now
                await anyio.sleep(POLL_S)
            return code
        finally:
            if pidfd >= 0:
                os.close(pidfd)

    def terminate(self) -> None:
        self._popen.terminate()

    def kill(self) -> None:
        self._popen.kill()

    def send_signal(self, sig: signal.Signals) -> None:
        self._popen.send_signal(sig)

    @property
    def pid(self) -> int:
        return self._popen.pid

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode  # set by its thread as it reaps it

    @property
    def stdin(self) -> ByteSendStream | None:
        return None

    @property
    def stdout(self) -> ByteReceiveStream | None:
        return None

    @property
    def stderr(self) -> ByteReceiveStream | None:
        return None

    async def aclose(self) -> None:
        """As anyio's: the process is waited for (it has no streams of its own to close)."""
        await self.wait()
