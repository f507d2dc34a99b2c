"""One long-lived bash per server, so `cd`, exported variables and shell state carry across calls.

Why it is built this way:
- bash reads its commands from one pipe and the commands read their input from another, so text
  sent to a waiting prompt (`send_keys`) can never be taken by bash as a command to run;
- each command is sent as a quoted heredoc and `eval`ed, followed on the same line by a marker
  carrying its exit status: bash has read the whole line before the command runs, and a syntax
  error in the command is an error of `eval`, not the end of the session;
- stderr is merged into stdout, the way a person sees a terminal; no PTY and no rc files;
- bash traps SIGINT, so an interrupt ends the foreground job and the session lives on;
- no other process may read the commands or answer for the shell (a red team found: a job
  stopped the shell, read the next command, token and all, from `/proc/<shell>/fd/0` and printed a
  forged marker: the command never ran and was journaled as finished). On Linux bash reads its
  commands as a script from `/dev/stdin`: it keeps them on fd 255, which every process it forks
  closes at once (bash's own rule for its script), while its fd 0 is the commands' input pipe; so
  no job has the command pipe unless it opened it on purpose. Before each command the shell must
  be running bash, neither stopped nor traced, with no process of its container but its init
  holding that pipe, or the session is started anew first (`taken_over`); and a marker is taken as
  the shell's only when the shell has read at least the whole command since it was sent (its
  `rchar`), so a thief the look missed, outside the container, cannot answer for a command it took.
  Not covered: a process that has the pipe where the look cannot see it (outside the container, in
  a socket's queue, in a process that is not dumpable) or gets it between the look and the shell's
  read, and then copies the command without taking it (tee(2)) and answers before the shell, or
  takes it and writes the shell as many bytes of its own; and one that traces the shell (ptrace,
  `/proc/<pid>/mem`) where the kernel lets one user's processes trace each other.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import re
import secrets
import shlex
import signal
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import anyio
from anyio.abc import Process

from app.core.execution import container as containers
from app.core.execution import process_marks
from app.core.execution.container import Container
from app.core.execution.executor import READ_CHUNK_BYTES, end_tree, read_status, spawn_options
from app.core.execution.output import SCROLLBACK_MAX_LINES, CommandOutput
from app.core.execution.output_decoding import StreamDecoder
from app.core.execution.process_marks import MARK_ENV
from app.core.execution.run_result import InputNotRead
from app.core.paths import file_identity

SCROLLBACK_LINE_MAX_CHARS = 4096  # a longer line is cut in the scrollback (the result keeps it)
PARTIAL_LINE_MAX_CHARS = 64 * 1024  # output with no newline is passed on in pieces of this size
PENDING_PROMPT_MAX_CHARS = 1000  # of a line still being written, shown while the command runs
SEND_KEYS_SETTLE_S = 0.5  # how long send_keys waits for the program to answer
SEND_KEYS_WRITE_TIMEOUT_S = 1.0
SEND_KEYS_RETRY_S = 0.01
SHELL_END_DRAIN_S = 0.1  # after a contained shell ended: its last output is still in the pipe
PROC = "/proc"

# Why a shell was not trusted with the next command (`ShellSession.taken_over`), for the model.
SHELL_STOPPED = "a process had stopped the session's shell"
SHELL_TRACED = "a process was tracing the session's shell"
SHELL_REPLACED = "the session's shell process was running another program ({program})"
INPUT_HELD = "a process in the session ({name}) held the shell's command input open"
# taken_over_settled: a job just forked lets go of the input within milliseconds, but a loaded machine
# (CI's four test processes on two cores) took more than 0.5 s twice on 2026-12-06 to end one that let
# go after 0.3 s, and the shell was started anew for nothing; one that keeps holding waits this long once.
HOLDER_PATIENCE_S = 1.0
ANSWERED_FOR = "another process had answered for the session's shell"
# For the model, at the head of the next command's output: typed keys no command read are dropped.
KEYS_NOT_READ = (
    "[Cowork Terminal: {size} bytes typed with terminal_send_keys ({excerpt}) were never read by the command "
    "they were typed for, and were dropped rather than given to this command. Type them again while the "
    "program that should read them runs.]\n"
)
KEYS_EXCERPT_CHARS = 80


@dataclass
class SessionResult:
    output: str
    exit_code: int | None
    finished: bool  # False: still running in the session after the time limit
    restarted: bool  # a new shell was started: earlier cwd and variables are gone
    truncated: bool = False
    ended_session: bool = False  # the command ended the shell itself (`exit`)
    output_file: str | None = None  # the whole output, when some was left out of `output`


class SessionBusy(Exception):
    """A command is still running in the session."""


def replaces(old: Container | None, new: Container | None) -> bool:
    """Whether a session's shell in container `old` must give way to one in `new`: switched on or off,
    prepared anew, or hiding something now that it did not (a bus started since). Not when only a
    hidden socket has gone (a review: every `/tmp/dbus-*` that came or went restarted the session,
    its variables, venv and jobs lost)."""
    if old is None or new is None:
        return old is not new
    return dataclasses.replace(old, hidden=new.hidden) != new or bool(set(new.hidden) - set(old.hidden))


def newly_hidden(old: Container | None, new: Container | None) -> list[str] | None:
    """When the only reason `new` replaces `old` is what it hides now that `old` did not (a socket
    some program began listening on since, in /tmp or the runtime folder: anyone's, often another
    app's command's), those sockets' paths (none for a folder hidden since); None for any other
    reason (switched on or off, prepared anew).
    The model is told this, not that the user changed the protection (a red team, 2026-12-06)."""
    if old is None or new is None or dataclasses.replace(old, hidden=new.hidden) != new:
        return None

    # The sockets: bwrap's `--ro-bind /dev/null SOCKET` (hidden_args). A folder hidden since (a
    # `--tmpfs` over a runtime folder made later) is not something a program began listening on.
    def sockets(hidden: tuple[str, ...]) -> list[str]:
        return [hidden[i + 2] for i in range(len(hidden) - 2) if hidden[i : i + 2] == ("--ro-bind", "/dev/null")]

    if not set(new.hidden) - set(old.hidden):
        return None
    before = set(sockets(old.hidden))
    return [path for path in dict.fromkeys(sockets(new.hidden)) if path not in before]  # [] for a folder alone


def usable_container(container: Container | None) -> Container | None:
    """The container a session's shells start in: none where it is off, or on Windows. macOS's
    sandbox-exec (SEATBELT) too, which only wraps the shell: `_bwrap` is the one with an init."""
    if container is None or sys.platform == "win32":
        return None
    return container if container.on or container.state == containers.SEATBELT else None


class ShellSession:
    """A bash kept alive between calls. One command at a time; it may outlive the call that started it."""

    def __init__(
        self,
        bash: str,
        cwd: str,
        env: Mapping[str, str],
        mark: str | None = None,
        code_pages: tuple[str, ...] = (),
        container: Container | None = None,
    ) -> None:
        """`mark` (process_marks) is the shell's own; each command may bring its own to send_command.
        `code_pages`: how to read output that is not UTF-8 (output_decoding). `container`: the OS
        container the shell runs in (container.py), when there is one."""
        self.bash = bash
        self.container = usable_container(container)
        self.resume_in: str | None = None  # where the next shell starts, once, instead of `cwd`
        self.code_pages = code_pages
        self.cwd = cwd
        self.env = {**env, process_marks.MARK_ENV: mark} if mark else dict(env)
        self.process: Process | None = None
        self._input_write: int | None = None
        self._input_unread: int | None = None  # our copy of the input pipe's read end: what no command read
        # One spare line: the empty line a completion marker makes is taken back out after it arrives.
        self._scrollback: deque[str] = deque(maxlen=SCROLLBACK_MAX_LINES + 1)
        self._partial = ""
        self._current: RunningCommand | None = None
        self._reader_done = anyio.Event()
        self.ever_started = False
        self._command_pipe: str | None = None  # the pipe bash reads commands from, as /proc names it
        self._bash_identity: tuple[int, int] | None = None
        self._distrust: str | None = None  # why the shell must not get another command
        # Where the shell is, as its last command left it: shown to the user and used to judge
        # relative paths in the next command.
        self.current_dir = cwd

    @property
    def _bwrap(self) -> Container | None:
        """The container whose init, status pipe and pid namespace the shell has (not sandbox-exec's)."""
        return self.container if self.container is not None and self.container.on else None

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.returncode is None and not self._reader_done.is_set()

    @property
    def busy(self) -> bool:
        return self._current is not None and not self._current.done.is_set()

    @property
    def foreground(self) -> str | None:
        """The command line now running in the session (its first word names the program that reads
        typed input), or None when nothing runs."""
        return self._current.command if self.busy and self._current is not None else None

    async def start(self, task_group: anyio.abc.TaskGroup) -> bool:
        """Start bash if it is not running; True when a new shell replaced a dead one. It starts in
        `self.cwd`, or once in `folder` (the folder of a shell ended for its container's change)."""
        if self.alive:
            return False
        restarted = self.ever_started
        await self.close()
        folder, self.resume_in = self.resume_in or self.cwd, None
        self.current_dir = folder
        read_fd, self._input_write = os.pipe()
        os.set_inheritable(read_fd, True)
        os.set_blocking(self._input_write, False)
        # --norc/--noprofile: no rc-file surprises. On Linux the commands are a script read from
        # stdin (kept on fd 255, which forked jobs close), elsewhere `-s` reads them from stdin.
        as_script = sys.platform == "linux"
        argv = [self.bash, "--norc", "--noprofile", "/dev/stdin" if as_script else "-s"]
        status_read = status_write = -1
        if self._bwrap is not None:
            status_read, status_write = os.pipe()
            os.set_blocking(status_read, False)
            argv = self._bwrap.wrap(argv, status_write)
        elif self.container is not None:  # macOS's sandbox-exec: files only, no status fd
            argv = self.container.wrap(argv, -1)
        try:
            self.process = await anyio.open_process(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=folder,
                env=self.env,
                pass_fds=(read_fd, *containers.inherited(status_write, status_read, self.env.get(MARK_ENV)))
                if self._bwrap is not None
                else (read_fd,),
                **spawn_options(sys.platform),
            )
        finally:
            self._input_unread = _unread_end(read_fd)
            os.close(read_fd)
            if self._bwrap is not None:
                os.close(status_write)
        self._input_fd_in_child = read_fd
        self._reader_done = anyio.Event()
        self._current = None
        self.ever_started = True
        self._distrust = None
        # Read now, before anything runs in the container: bwrap's (or bash's) stdin is the pipe.
        self._command_pipe = containers.read_link(f"{PROC}/{self.process.pid}/fd/0") if as_script else None
        self._bash_identity = file_identity(self.bash)
        # As a script, bash's own fd 0 becomes the commands' input, so that what it starts never gets
        # the command pipe; $0 stays what `-s` made it.
        first = f"exec 0<&{read_fd}; BASH_ARGV0={shlex.quote(self.bash)}\n" if as_script else ""
        await self._send_raw(f"{first}trap ':' INT\n")
        self._reading = anyio.CancelScope()
        task_group.start_soon(self._read_loop, self._reading)
        if self._bwrap is not None:
            task_group.start_soon(self._watch_shell_end, status_read, self._reading)
        return restarted

    async def _watch_shell_end(self, status_fd: int, reading: anyio.CancelScope) -> None:
        """A contained shell's end is its status on `status_fd`, not the end of its output: bwrap
        keeps the pipe open while a background job the shell left lives on."""
        try:
            await read_status(status_fd)
        finally:
            os.close(status_fd)
        await anyio.sleep(SHELL_END_DRAIN_S)
        reading.cancel()

    def _group_leader(self) -> int | None:
        """Whose process group holds the shell's commands: bash's, or in a container its init's."""
        if self.process is None:
            return None
        if self._bwrap is None:
            return self.process.pid
        return containers.init_pid(self.process.pid)

    def _shell_pid(self) -> int | None:
        if self.process is None:
            return None
        if self._bwrap is None:
            return self.process.pid
        leader = containers.init_pid(self.process.pid)
        found = containers.children(leader) if leader else []
        return found[0] if found else None

    def taken_over(self) -> str | None:
        """Why the idle shell must not be given another command, or None. On Linux: it was stopped or
        traced, its process runs another program, or another process of its container (but its init)
        holds the pipe it reads commands from, so it could read the next command, token and all, and
        answer for it; or a marker already came from another process. Elsewhere nothing is looked at."""
        if self._distrust is not None:
            return self._distrust
        pipe, pid = self._command_pipe, self._shell_pid()
        if pipe is None or pid is None or not self.alive:
            return None
        state, tracer = _state(pid)
        if state in ("T", "t"):
            return SHELL_STOPPED
        if tracer:
            return SHELL_TRACED
        if self._bash_identity is not None and file_identity(f"{PROC}/{pid}/exe") != self._bash_identity:
            return SHELL_REPLACED.format(program=containers.read_link(f"{PROC}/{pid}/exe") or "unknown")
        holder = self._input_holder(pipe, pid)
        return None if holder is None else INPUT_HELD.format(name=_name(holder))

    async def taken_over_settled(self) -> str | None:
        """`taken_over`, asked again while the only reason is a process holding the command input, for
        at most HOLDER_PATIENCE_S: a job the shell has just forked (`( ... ) &`) holds it until it runs
        far enough to close it, as bash's children do, and on a loaded machine the model's next command
        came first (a coverage run): its shell was started anew for nothing. A process that lets go
        meanwhile cannot read the command, which is written only after this."""
        why = self.taken_over()
        deadline = time.monotonic() + HOLDER_PATIENCE_S
        while why is not None and time.monotonic() < deadline and self._holds_input():
            await anyio.sleep(0.02)
            why = self.taken_over()
        return why

    def _holds_input(self) -> bool:
        pipe, pid = self._command_pipe, self._shell_pid()
        return pipe is not None and pid is not None and self._input_holder(pipe, pid) is not None

    def _input_holder(self, pipe: str, pid: int) -> int | None:
        """A process of the session but the shell (and the container's init) that holds its command input."""
        root = self._group_leader() if self._bwrap is not None else pid
        for other in _descendants(root) if root is not None else []:
            if other not in (root, pid) and _holds(other, pipe):
                return other
        return None

    async def send_command(
        self, command: str, mark: str | None = None, output: CommandOutput | None = None
    ) -> RunningCommand:
        """Start one command and return at once; `RunningCommand.done` is set when it ends. Its
        output goes to `output` (one stream)."""
        if self.busy:
            raise SessionBusy()
        token = secrets.token_hex(8)
        running = RunningCommand(token, output, command)
        unread = self._drop_unread_keys()
        if unread:
            excerpt = unread[:KEYS_EXCERPT_CHARS].decode(errors="replace") + (
                "..." if len(unread) > KEYS_EXCERPT_CHARS else ""
            )
            running.append(KEYS_NOT_READ.format(size=len(unread), excerpt=repr(excerpt)))
        self._current = running
        delimiter = f"__COWORK_CMD_{secrets.token_hex(8)}__"  # not the marker's token: it is in the text
        # The marker is printed on the same line as eval, so bash has read it before the command runs.
        # Before bash reads that line, it stops keeping what it reads (history, `set -v`): a red team,
        # 2026-12-05, had a command turn history on, and the next one read its own marker's token back
        # from `history`, printed its end itself and went on running, so the server sent the next
        # command to a busy shell (it ran in another folder than the person allowed, or was answered
        # for by the shell itself with `read -u 255`). A function named `builtin` or `set` is held
        # in the session as lasting (admission.lasts_in_session), so these words are ours.
        # What this command starts carries its own mark (marks are [0-9a-f:] and a word).
        marking = f"export {process_marks.MARK_ENV}='{mark}'\n" if mark else ""
        script = (
            f"builtin set +o history +o verbose\n{marking}"
            f"__cowork_cmd=$(cat <<'{delimiter}'\n{command}\n{delimiter}\n)\n"
            f'eval "$__cowork_cmd" <&{self._input_fd_in_child}; '
            f"printf '\\n__COWORK_DONE_{token}__:%d:%.4096s\\n' \"$?\" \"${{PWD//$'\\n'/}}\"\n"
        )
        # What bash has read so far: its marker counts only once it has read the whole script since.
        pid = self._shell_pid() if self._command_pipe is not None else None
        before = _bytes_read(pid) if pid is not None else None
        if pid is not None and before is not None:
            running.read_check = (pid, before + len(script.encode()))
        await self._send_raw(script)
        return running

    def _drop_unread_keys(self) -> bytes:
        """Empty the input pipe before a command starts; what was in it. Keys typed for one program
        were judged in its language (classifier/typed.py): left unread, they would be read by the
        next command instead (red team, 2026-12-05: typed while `sleep` ran, read by `perl`)."""
        dropped = bytearray()
        while self._input_unread is not None:
            try:
                chunk = os.read(self._input_unread, 65536)
            except (BlockingIOError, OSError):
                break
            if not chunk:
                break
            dropped += chunk
        return bytes(dropped)

    async def send_keys(self, keys: str) -> str:
        """Write text to the running command's input; return what it printed within a short moment.

        The pipe is non-blocking: a program that does not read its input fills it, and then the
        rest is refused instead of freezing the server.
        """
        if self._input_write is None:
            raise SessionBusy()
        running = self._current
        before = running.output_len if running else 0
        data = keys.encode()
        deadline = anyio.current_time() + SEND_KEYS_WRITE_TIMEOUT_S
        while data:
            try:
                data = data[os.write(self._input_write, data) :]
            except BlockingIOError:
                if anyio.current_time() >= deadline:
                    raise InputNotRead() from None
                await anyio.sleep(SEND_KEYS_RETRY_S)
        with anyio.move_on_after(SEND_KEYS_SETTLE_S):
            if running is not None:
                await running.done.wait()
        return running.output_since(before) if running else ""

    def interrupt(self) -> bool:
        """Ctrl-C: SIGINT to the session's process group; bash's trap keeps the session alive."""
        leader = self._group_leader() if self.alive else None
        if leader is None:
            return False
        with contextlib.suppress(ProcessLookupError):
            os.killpg(leader, signal.SIGINT)
        return True

    def _real_dir(self) -> str | None:
        """The shell's folder as the OS knows it (Linux): `$PWD` is only what the shell says, and a
        command can set it. Elsewhere None, and the marker's `$PWD` is used."""
        pid = self._shell_pid()
        if pid is None:
            return None
        try:
            return os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            return None

    def folder_now(self) -> tuple[str, tuple[int, int] | None]:
        """Where the shell is now, with the folder's (device, inode): on Linux as the OS knows it,
        so a folder renamed since the last command ended is named as it is now (a review, 2026-12-05:
        `mv` in a job left the session's last path naming another folder, which the user was shown);
        elsewhere the folder the last command ended in. No identity when it cannot be read."""
        pid = self._shell_pid()
        if pid is not None and sys.platform == "linux":
            where = f"/proc/{pid}/cwd"
            with contextlib.suppress(OSError):
                if (identity := file_identity(where)) is not None:
                    return os.readlink(where), identity
        return self.current_dir, file_identity(self.current_dir)

    async def wait_idle(self, timeout_s: float) -> bool:
        """Wait up to `timeout_s` for the running command (if any) to end; True when none runs."""
        running = self._current
        if running is None:
            return True
        with anyio.move_on_after(timeout_s):
            await running.done.wait()
        return running.done.is_set()

    def scrollback(self, lines: int) -> str:
        lines = max(1, min(lines, SCROLLBACK_MAX_LINES))
        tail = list(self._scrollback)[-lines:]
        if self._partial:
            tail = [*tail[-(lines - 1) :], self._partial] if lines > 1 else [self._partial]
        return "\n".join(tail)

    async def close(self) -> None:
        # A pause and the server's end may close the session at once: each works on the process it found.
        process = self.process
        if process is not None:
            if process.returncode is None:
                with anyio.CancelScope(shield=True):  # the server may be shutting down around us
                    await end_tree(process, contained=self._bwrap is not None)
            with anyio.CancelScope(shield=True):
                await process.aclose()
            if self.process is process:
                self.process = None
        for fd in (self._input_write, self._input_unread):
            if fd is not None:
                os.close(fd)
        self._input_write = self._input_unread = None

    async def _send_raw(self, text: str) -> None:
        assert self.process is not None and self.process.stdin is not None
        await self.process.stdin.send(text.encode())

    async def _read_loop(self, reading: anyio.CancelScope) -> None:
        assert self.process is not None and self.process.stdout is not None
        stream = self.process.stdout
        decoder = StreamDecoder(self.code_pages)  # keeps a split character for the next chunk
        try:
            with reading:
                while True:
                    self._consume(decoder.decode(await stream.receive(READ_CHUNK_BYTES)))
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        finally:
            self._reader_done.set()
            if self._current is not None and not self._current.done.is_set():
                self._current.finish(None, ended_session=True)

    def _consume(self, text: str) -> None:
        running = self._current
        data = self._partial + text
        lines = data.split("\n")
        self._partial = lines.pop()
        for line in lines:
            if running is not None and not running.done.is_set():
                match = _DONE.fullmatch(line)
                if match and match.group(1) == running.token:
                    if running.trim_marker_newline() and self._scrollback and self._scrollback[-1] == "":
                        self._scrollback.pop()
                    if not _read_whole(running.read_check):
                        # Not the shell's: it has not read its command. Whoever printed it had.
                        self._distrust = ANSWERED_FOR
                        running.finish(None, answered_by_other=True)
                        continue
                    self.current_dir = self._real_dir() or match.group(3) or self.current_dir
                    running.finish(int(match.group(2)))
                    continue
                running.append(line + "\n")
            self._remember(line)
        if len(self._partial) > PARTIAL_LINE_MAX_CHARS:
            # Output without newlines (a progress bar, a binary) must not pile up: pass it on now.
            # A completion marker always starts a line, so it is never inside such a piece.
            if running is not None and not running.done.is_set():
                running.append(self._partial)
            self._remember(self._partial)
            self._partial = ""
        if running is not None and not running.done.is_set():
            # A prompt without a newline ("Continue? [y/N] ") must reach the model before Enter.
            running.pending_partial = self._partial

    def _remember(self, line: str) -> None:
        if len(line) > SCROLLBACK_LINE_MAX_CHARS:
            line = line[:SCROLLBACK_LINE_MAX_CHARS] + " [...]"
        self._scrollback.append(line)


def _unread_end(read_fd: int, proc: str = PROC) -> int | None:
    """A non-blocking read end of the input pipe of our own, to drop what no command read: on Linux the
    pipe opened anew through /proc (a duplicate would share bash's file status, and bash's `read`
    would fail at once on an empty pipe). Elsewhere none: a blocking read could freeze the server when
    a job takes the last byte first, so unread keys stay there (said in docs/security.md)."""
    if sys.platform != "linux":
        return None
    try:
        return os.open(f"{proc}/self/fd/{read_fd}", os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None


_DONE = re.compile(r"__COWORK_DONE_([0-9a-f]{16})__:(\d+):(.*)")


def _state(pid: int) -> tuple[str, int]:
    """A process's state letter (`T` stopped, `t` stopped by its tracer) and its tracer's pid (0: none)."""
    fields = dict(line.split(b":", 1) for line in _read(f"{PROC}/{pid}/status").splitlines() if b":" in line)
    try:
        return fields[b"State"].split()[0].decode(), int(fields[b"TracerPid"])
    except (KeyError, ValueError, IndexError):
        return "", 0


def _bytes_read(pid: int) -> int | None:
    """How many bytes the process has read (its `rchar`), or None when that cannot be read."""
    for line in _read(f"{PROC}/{pid}/io").splitlines():
        if line.startswith(b"rchar:"):
            with contextlib.suppress(ValueError, IndexError):
                return int(line.split()[1])
    return None


def _read_whole(check: tuple[int, int] | None) -> bool:
    """Whether the shell has read its whole command (`check`: its pid, and the count it must reach);
    True when it could not be told when the command was sent."""
    if check is None:
        return True
    pid, needed = check
    now = _bytes_read(pid)
    return now is not None and now >= needed


def _descendants(root: int) -> list[int]:
    """`root` and every process below it, the children of each of its threads too."""
    found: list[int] = []
    todo = [root]
    while todo:
        pid = todo.pop()
        if pid in found:
            continue
        found.append(pid)
        try:
            tasks = os.listdir(f"{PROC}/{pid}/task")
        except OSError:
            continue
        for task in tasks:
            todo += process_marks.children(pid, PROC, int(task)) if task.isdigit() else []
    return found


def _read(path: str) -> bytes:
    """A small /proc file's content, empty when it cannot be read (raw: this runs before every command)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return b""
    try:
        return os.read(fd, 65536)
    except OSError:
        return b""
    finally:
        os.close(fd)


# kcmp(2) on each machine, to tell a thread that shares its process's descriptor table (KCMP_FILES)
# from one with a table of its own: reading each thread's table cost about 1 ms per command beside a
# 20-thread job here, and a Java or Node server has more.
KCMP_CALLS = {"x86_64": 312, "aarch64": 272}
KCMP_FILES = 2


@functools.cache
def _kcmp() -> Callable[..., int] | None:
    call = KCMP_CALLS.get(os.uname().machine)
    if call is None:
        return None
    import ctypes  # here: only where a session's shell runs on Linux

    syscall = ctypes.CDLL(None, use_errno=True).syscall
    return lambda pid, task: int(syscall(call, pid, task, KCMP_FILES, 0, 0))


def _shares_table(pid: int, task: int) -> bool:
    """Whether thread `task` of `pid` uses the process's own descriptor table (False when unknown)."""
    compare = _kcmp()
    return compare is not None and compare(pid, task) == 0


def _holds(pid: int, target: str) -> bool:
    """Whether a descriptor of the process (of any of its threads: one may have a table of its own)
    is `target` (a /proc link, `pipe:[inode]`). A table that cannot be read counts as not holding."""
    try:
        tasks = os.listdir(f"{PROC}/{pid}/task")
    except OSError:
        return False
    for task in tasks:
        if task != str(pid) and task.isdigit() and _shares_table(pid, int(task)):
            continue
        folder = f"{PROC}/{pid}/task/{task}/fd"
        try:
            fds = os.listdir(folder)
        except OSError:
            continue
        if any(containers.read_link(f"{folder}/{fd}") == target for fd in fds):
            return True
    return False


def _name(pid: int) -> str:
    return _read(f"{PROC}/{pid}/comm").decode(errors="replace").strip() or str(pid)


class RunningCommand:
    """One command's output as it arrives, bounded, and its end."""

    def __init__(self, token: str, output: CommandOutput | None = None, command: str = "") -> None:
        self.token = token
        self.command = command  # what runs: typed input reaches its program (classifier.classify_typed)
        self.output = output or CommandOutput(labels=("output",))
        self._held_newline = False  # the last newline may be the marker's own: fed only when more comes
        self._last_was_empty_line = False
        self.pending_partial = ""
        self.exit_code: int | None = None
        self.ended_session = False
        self.answered_by_other = False  # its marker came from a process that had read it, not from the shell
        self.read_check: tuple[int, int] | None = None  # the shell's pid, and its rchar once it has read this
        self.done = anyio.Event()

    @property
    def output_len(self) -> int:
        """Bytes of output so far: where `output_since` starts."""
        return self.output.streams[0].total

    def append(self, text: str) -> None:
        self.pending_partial = ""
        if not text:
            return
        self._last_was_empty_line = text == "\n"
        if self._held_newline:
            text = "\n" + text
        self._held_newline = text.endswith("\n")
        if self._held_newline:
            text = text[:-1]
        self.output.feed(0, text.encode())

    def trim_marker_newline(self) -> bool:
        """The marker starts with its own newline: take it back out; True if it had made an empty line."""
        if not self._held_newline:
            return False
        self._held_newline = False
        return self._last_was_empty_line

    def finish(self, exit_code: int | None, *, ended_session: bool = False, answered_by_other: bool = False) -> None:
        if self._held_newline:  # not the marker's: the shell ended after it
            self._held_newline = False
            self.output.feed(0, b"\n")
        self.exit_code = exit_code
        self.ended_session = ended_session
        self.answered_by_other = answered_by_other
        self.done.set()

    def _pending(self) -> str:
        """What came after the fed output while the command runs: a held newline, a partial line."""
        if self.done.is_set():
            return ""
        return ("\n" if self._held_newline else "") + self.pending_partial[-PENDING_PROMPT_MAX_CHARS:]

    def output_since(self, offset: int) -> str:
        """What the command printed after `offset` (output_len at some moment), as far as it is
        kept, and no more than the output budget (the end of it)."""
        text = self.output.streams[0].since(offset).decode("utf-8", errors="replace") + self._pending()
        budget = self.output.budget.chars
        if budget is not None and len(text) > budget:
            whole = self.output.snapshot().output_file
            where = f"the whole output is in {whole}" if whole else "see terminal_read_scrollback"
            marker = f"[... the start of this output was left out; {where} ...]\n"
            text = marker + text[len(text) - (budget - len(marker)) :]
        return text

    def result(self, *, finished: bool, restarted: bool) -> SessionResult:
        fitted = self.output.finish() if self.done.is_set() else self.output.snapshot()
        return SessionResult(
            output=fitted.texts[0] + self._pending(),
            exit_code=self.exit_code if finished else None,
            finished=finished,
            restarted=restarted,
            truncated=fitted.output_file is not None,
            ended_session=self.ended_session,
            output_file=fitted.output_file,
        )
