"""What running a command gives back and what stops it: what the commands layer holds of a run
without loading the executor and the container (a server whose tray runs its commands never
starts one, and keeps their modules out of its memory: issue 21's idle target)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio

from app.core.execution.output import CommandOutput, StreamCapture
from app.core.messages import STOP_NEXT_STEPS

# For the model, when the command returned while a process it started in the background still held
# its output (executor.py, pipes.py). On Windows a job whose output goes to a file is told this too:
# a new process inherits every inheritable handle, the command's pipes with the rest.
LEFT_RUNNING_NOTE = (
    "A process this command started in the background is still running, and what it prints from now "
    "on is not kept. To read its output later, start it with the output going to a file "
    "(`cmd > out.log 2>&1 &`), or run the command with `background: true`."
)

# When a command a person let out of some of the container's protection left processes running.
LEFTOVERS_ENDED_NOTE = (
    "Processes this command left running were ended with it: it ran with some of Cowork Terminal's "
    "protection lifted by the user's approval, which covers this command alone. Start a program that must "
    "keep running with a command of its own."
)


@dataclass
class ExecutionResult:
    output: CommandOutput
    exit_code: int | None
    timed_out: bool
    stopped_reason: str | None  # set when something other than the timeout ended it
    signal_name: str | None
    duration_ms: float
    started: float  # time.monotonic() as it started: what happened since is this command's doing
    contained: bool = False  # ran in the OS container
    protection_note: str | None = None  # for the model: a write hit the protected set (container.py)
    left_running: bool = False  # a background process of the command still held its output at the end
    ended_leftovers: bool = False  # what it left running was ended with it (CommandSpec.ends_whole)
    # Whether its container lives on after the command, for a background job it left (`nohup x &`)
    lingers: Callable[[], bool] = field(default=lambda: False, compare=False, repr=False)

    def model_note(self) -> str | None:
        """What the model reads beside the output: why the command ended early, a write the container
        refused, a background process left running."""
        stopped = self.stopped_reason
        if stopped in STOP_NEXT_STEPS:
            stopped = f"{stopped}. {STOP_NEXT_STEPS[stopped]}"
        leftovers = LEFTOVERS_ENDED_NOTE if self.ended_leftovers else None
        notes = (stopped, self.protection_note, LEFT_RUNNING_NOTE if self.left_running else None, leftovers)
        return " ".join(note for note in notes if note) or None

    @property
    def stdout(self) -> StreamCapture:
        return self.output.streams[0]

    @property
    def stderr(self) -> StreamCapture:
        return self.output.streams[1]

    def to_model(self) -> dict[str, Any]:
        """The seed's result shape, `{stdout, stderr, exitCode, timedOut}`, plus a few extras."""
        fitted = self.output.finish()
        return {
            "stdout": fitted.texts[0],
            "stderr": fitted.texts[1],
            "exitCode": self.exit_code,
            "timedOut": self.timed_out,
            "durationMs": round(self.duration_ms, 1),
            "outputFile": fitted.output_file,
        }


class StopSignal:
    """Set from elsewhere (pause, the user's Stop button) to end a running command with a reason."""

    def __init__(self) -> None:
        self._event = anyio.Event()
        self.reason: str | None = None
        self._scopes: set[anyio.CancelScope] = set()

    def set(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason
        self._event.set()
        for scope in list(self._scopes):
            scope.cancel()

    async def wait(self) -> None:
        await self._event.wait()

    @contextmanager
    def cancels(self) -> Iterator[anyio.CancelScope]:
        """A scope that this stop cancels, now or later: no task of its own waits for the stop (a
        task per command, and its cancellation, cost about 0.1 ms a call)."""
        with anyio.CancelScope() as scope:
            self._scopes.add(scope)
            try:
                if self._event.is_set():
                    scope.cancel()
                yield scope
            finally:
                self._scopes.discard(scope)


class InputNotRead(Exception):
    """The program in the session does not read its input: the pipe stayed full."""
