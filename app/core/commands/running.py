"""The commands one server runs now: start them in their container, apply pause and Stop to them,
and report their output so far to the record while they run."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import os
import re
import shutil
import sqlite3
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import anyio

from app.core.channel import local_link
from app.core.classifier import Classification, Tier, names_protected, writes_into
from app.core.commands.authority import ServerAuthority
from app.core.commands.cancellation import why_cancelled
from app.core.commands.request import ClientInfo, CommandRefused, ValidRequest
from app.core.data_folder import is_corrupt
from app.core.errors import CoworkError
from app.core.execution import (
    PAUSE_BACKSTOP_S,
    end_what_a_pause_left,
    end_what_finished_commands_left,
    jobs_left_behind,
    lingering_containers,
    process_marks,
    read_only,
)
from app.core.execution.output import CommandOutput, OutputBudget, OutputHook, budget_from, output_budget
from app.core.execution.output_decoding import console_code_pages
from app.core.execution.run_result import ExecutionResult, StopSignal
from app.core.hop_times import mark
from app.core.journal import pause_file
from app.core.journal.store import Journal, Outcome, Status
from app.core.messages import (
    AGENT_STOP_REASON,
    APP_GONE_STOP_REASON,
    BASH_NOT_STARTED_REASON,
    CONTAINER_SLOW_MESSAGE,
    KILLED_BY_REASON,
    LET_OUT_PATH_NOTE,
    MAKES_WRITABLE_PLAIN,
    PAUSE_STOP_REASON,
    PRIVILEGED_PLAIN,
    PROTECTED_UNGUARDED_PLAIN,
    PROTECTED_WRITE_PLAIN,
    SERVER_EXITED_REASON,
    TIMED_OUT_REASON,
    UNPROTECTED_REASON,
    USER_STOP_REASON,
)
from app.core.paths import AppPaths, hidden_folders, make_private_dirs, protected_paths
from app.core.policy.approval import ApprovalMode
from app.core.policy.rules import short_folder

# The container and the executor are imported where a command starts, not here: every server holds
# a Runs, and one whose tray runs its commands never starts one (0.6 MB of its idle memory, issue 21).
if TYPE_CHECKING:
    from app.core.execution.container import Container, ProtectedSet

log = logging.getLogger(__name__)

_LEADING_CD = re.compile(r"\s*cd\s+([^\s;&|()`$<>\\'\"]+)\s*&&")
_CHANGES_FOLDER = re.compile(r"(?:^|[\s;&|(`])(?:cd|pushd|popd)(?=$|[\s;&|)`])")
WATCH_INTERVAL_S = 0.2  # how often a busy headless server looks for pause and Stop in the journal
LIVE_OUTPUT_S = 1.0  # how often a running command's output so far goes to the record (the live log)
# A headless server's last word on a pause, as the tray's (authority/hub.py): what still runs this long
# after the pause file was written is ended from a thread of its own; it looks at the file this often.
BACKSTOP_POLL_S = 0.1
# How long it lives on once nothing runs: calls a model's turn apart do not start a thread each.
BACKSTOP_IDLE_S = 30.0
# Why a command that ran outside the container, while the user had switched it off, was ended (English).
PROTECTION_ON_STOP_REASON = (
    "stopped because the user switched the container back on (Protect my settings from commands): it ran "
    "outside it. Run it again if it is still needed: it runs in the container now"
)


def unguarded_folders(paths: AppPaths) -> list[str]:
    """Our own folders as the container protects them (container.for_paths): the data and log folders
    and the outputs folder, whose files the answers tell a model to read (a red team, 2026-12-06)."""
    return sorted({*protected_paths(paths), *unguarded_outputs(paths)})


def unguarded_outputs(paths: AppPaths) -> tuple[str, ...]:
    """The outputs folder, as named and real: held where no container runs only for what a command
    writes there (`writes_into`), as the container keeps it read-only; the answers tell the model to
    read its files (`grep -c error <outputFile>`, `cp <outputFile> build.log`: a review, 2026-12-06)."""
    return tuple(sorted({str(paths.outputs), os.path.realpath(paths.outputs)}))


def unguarded_members(protected: ProtectedSet) -> tuple[str, ...]:
    """The members names_protected is given where no container guards the protected set: all but the
    program's venv and base Python (`unguarded_program`), which commands name to run their Python."""
    from app.core.execution.container import hold_members

    return (*hold_members(protected), *protected.program[:1])


def unguarded_program(protected: ProtectedSet) -> tuple[str, ...]:
    """The program's venv and the base Python it runs on, held where no container guards them only
    for what a command writes there (`writes_into`): a `.pth` or `sitecustomize.py` in their
    site-packages, an edit of the standard library, runs at every start of ours (a red team, 2026-12-06)."""
    return protected.program[1:]


def names_unguarded(
    command: str, protected: ProtectedSet, *, cwd: str | None, bare: bool, outputs: Sequence[str] = ()
) -> bool:
    """Whether a command is held for the protected set where no container guards it: it names a
    member (names_protected), or writes into the program's venv or base Python (inline code naming
    them too: what it does with the name is not read), or into `outputs` (`unguarded_outputs`:
    members of `protected` that a command, or its code, may name to read)."""
    members = tuple(member for member in unguarded_members(protected) if member not in outputs)
    named = names_protected(command, members, cwd=cwd, bare=bare)
    program = unguarded_program(protected)
    return named or writes_into(command, (*program, *outputs), cwd=cwd, code=program)


class ContainerSlow(CommandRefused):
    """The command's container could not be started in time (containers.SLOW): nothing ran, and it is
    not run unprotected either."""


class RunsService(Protocol):
    """What the running commands reach of their command service (service.CommandService)."""

    @property
    def authority(self) -> ServerAuthority: ...
    @property
    def journal(self) -> Journal: ...
    @property
    def paths(self) -> AppPaths: ...
    @property
    def home(self) -> str: ...
    @property
    def run_mark(self) -> str | None: ...
    @property
    def repairs_journal(self) -> bool: ...
    @property
    def client(self) -> ClientInfo: ...
    def environment(self, env: Mapping[str, str]) -> dict[str, str]: ...
    def session_alive(self) -> bool: ...
    def session_uncontained(self) -> bool: ...
    def end_session(self) -> None: ...


class Runs:
    """What runs now on one server, each with its stop signal and its output so far."""

    def __init__(self, service: RunsService) -> None:
        self.service = service
        self.running: dict[int, StopSignal] = {}
        self._live: dict[int, CommandOutput] = {}  # running commands' output, reported while they run
        self._live_bytes: dict[int, int] = {}  # how much of each was reported
        self._live_reported_at = 0.0
        self._wake = anyio.Event()
        self._containment: read_only.Containment | None = None
        self._made: set[Path] = set()  # the apps' folders of whole outputs made (container)
        self.unbound: dict[int, list[str]] = {}  # allowed by the user to change these protected members
        self._privileged: set[int] = set()  # allowed by the user to gain privileges: run outside
        self._unguarded: ProtectedSet | None = None  # the protected set, where no container guards it
        self._swept = False  # what finished commands left was ended for the pause in force
        self._may_have_left = False  # a command ran without a container: a process it left may live on
        # The user switched the container off (their click): the marks of the commands run meanwhile,
        # ended with what they left when it is switched on again (apply_user_stops).
        self._switched_off = False
        self._run_while_off: set[str] = set()
        # Headless with no tray: the thread that ends what a pause left when the loop is held up
        # (_backstop_pauses); one while something may run, none when idle.
        self._backstop_lock = threading.Lock()
        self._backstop: threading.Thread | None = None
        self._closed = threading.Event()  # the server ends (watch's end): so does its backstop

    # -- where a command runs -------------------------------------------------------------------

    def container(self) -> Container:
        """The OS container for this process's commands, probed once (container.py); none when
        the user switched it off in the app."""
        from app.core.execution import container as containers

        if not self.service.authority.contained():
            self._switched_off = True  # whatever starts now starts outside: ended when it is on again
            return containers.Container(containers.OFF)
        # The tray's own process (its hub is here): a `serve` that runs its commands itself is not,
        # whether headless or not, and its containers do not end with the tray (a review, 2026-12-05).
        found = containers.for_paths(self.service.paths, in_tray=local_link.hub_dial() is not None)
        if not found.on:  # SLOW among them: its callers that start a command refuse it (ContainerSlow)
            return found
        # Of the outputs folder, only this app's own (output_files.py): read as each command starts,
        # since the app names itself with its first request. Made now, so that the container stays
        # the same when its first kept file comes (a spare, the session's shell, are kept).
        paths = self.service.paths
        own = paths.app_outputs(self.service.client.name)
        if own not in self._made:
            with contextlib.suppress(OSError):
                make_private_dirs(own)
            self._made.add(own)
        return found.showing_outputs(str(paths.outputs), str(own))

    def container_for(self, command_id: int, base: Container) -> Container:
        """The container one command runs in (`base`: this process's, read as it starts): none when
        the user allowed it to gain privileges; with the members it names writable when the user
        allowed it to change them."""
        from app.core.execution import container as containers

        if command_id in self._privileged:
            return containers.Container(containers.PRIVILEGED)
        return base.without(self.unbound[command_id]) if command_id in self.unbound else base

    async def unprotected_asks(
        self, command: str, verdict: Classification, cwd: str | None = None, *, on_thread: bool = False
    ) -> tuple[str, ...]:
        """What a command asks of the container that only a person's Allow may give, said for the
        approval window (issue 21): to write a member of the protected set (it may write and names
        one), to gain privileges (sudo, as parsed: no container allows it). Where no container guards
        the protected set, naming a member of it is asked the same way. Empty: nothing."""
        from app.core.execution import container as containers

        if verdict.tier is Tier.SAFE:
            return ()
        found = self.container()
        if found.state == containers.OFF:  # the user's click in the app: commands may change them
            return ()
        if not found.on:  # `on_thread`: a long command, read while the loop runs other calls
            from app.core.commands.admission import judged_alone  # one long judgement at a time

            named = functools.partial(self._names_unguarded, command, cwd)
            names = await judged_alone(named) if on_thread else named()
            return (PROTECTED_UNGUARDED_PLAIN,) if names else ()
        home = self.service.home
        lifted = containers.members_to_lift(command, containers.hold_members(found.protected), home)
        shown = ", ".join(short_folder(member, home) for member in lifted)
        writes = (PROTECTED_WRITE_PLAIN, MAKES_WRITABLE_PLAIN.format(names=shown)) if lifted else ()
        return writes + (PRIVILEGED_PLAIN,) * verdict.gains_privileges

    def _names_unguarded(self, command: str, cwd: str | None) -> bool:
        """Whether a command names a member of this OS's protected set where no container keeps it
        read-only (Windows, where a job protects no file; Linux without bwrap): then only the
        approval rules guard it (`unguarded_members`). A member's name under home alone (`.claude`) counts
        only in the home folder, in a command that stays there: elsewhere it is a project's own
        (`git add .claude/commands/x.md`), and the classifier follows a `cd` word by word."""
        from app.core.execution import container as containers

        if self._unguarded is None:
            self._unguarded = containers.this_protected_set(unguarded_folders(self.service.paths))
        home = os.path.realpath(self.service.home)
        in_home = cwd is None or os.path.realpath(cwd) == home
        # One that first moves into a named folder is followed word by word from there (`cd site && git
        # add .claude/x` in home); one that may stay in home (a `cd` in a subshell, an `if`, after `;`) is not.
        first = _LEADING_CD.match(command)
        moves = (
            first is not None
            and _CHANGES_FOLDER.search(command, first.end()) is None
            and os.path.realpath(os.path.join(home, os.path.expanduser(first[1]))) != home  # not `cd . &&`
        )
        outputs = unguarded_outputs(self.service.paths)
        return names_unguarded(command, self._unguarded, cwd=cwd, bare=in_home and not moves, outputs=outputs)

    def allowed_by_user(self, command_id: int, command: str, asks: tuple[str, ...]) -> None:
        """A person allowed a held command that `asks` (unprotected_asks): let it out of the container
        as far as it must go (sudo cannot work inside; a named member becomes writable)."""
        from app.core.execution import container as containers

        found = self.container()
        if found.on and PRIVILEGED_PLAIN in asks:
            self._privileged.add(command_id)
        elif found.on and PROTECTED_WRITE_PLAIN in asks:
            # The members it was held for naming, as the window named them: never the program's own folders,
            # nor one the window did not name (a set prepared again since the hold may hold more).
            home = self.service.home
            lead = MAKES_WRITABLE_PLAIN.split("{names}", 1)[0]
            shown = {name for ask in asks if ask.startswith(lead) for name in ask[len(lead) :].split(", ")}
            named = [
                member
                for member in containers.members_to_lift(command, containers.hold_members(found.protected), home)
                if short_folder(member, home) in shown  # a name with ", " in it is not lifted: the OS says no
            ]
            named += containers.linked_from(found.protected, named)  # a stowed file: what its link points to
            if named:
                self.unbound[command_id] = named
        elif found.state == containers.SEATBELT and PROTECTED_UNGUARDED_PLAIN in asks:
            # macOS: held as where nothing guards the set (it is not `on`), but sandbox-exec would refuse
            # what the person allowed: the members it names, or each one when none is named as prepared.
            members = containers.hold_members(found.protected)
            named = containers.members_to_lift(command, members, self.service.home)
            named += containers.linked_from(found.protected, named)
            self.unbound[command_id] = named or list(members)

    def forget_allowed(self, command_id: int) -> bool:
        """Its run is over, or it never came: what a person's Allow let out goes with it (ids start
        again after the history is cleared: a review, 2026-12-05, found a refused command's Allow
        letting a later command with its id out). Whether it was let out to gain privileges."""
        self.unbound.pop(command_id, None)
        privileged = command_id in self._privileged
        self._privileged.discard(command_id)
        return privileged

    def lets_out(self, command_id: int) -> bool:
        """Whether a person allowed this command to run without some of the container's protection."""
        return command_id in self.unbound or command_id in self._privileged

    def watch_uncontained(self, container: Container | None) -> None:
        """A headless server about to run a command outside any container (none here, switched off,
        or let out): killed without a word, what that command still runs ends with this process all
        the same (orphans.watch_server), not when the next server or tray starts."""
        authority = self.service.authority
        uncontained = container is None or not container.on
        if uncontained and self.service.run_mark and authority.headless and not authority.tethered:
            from app.core.execution import orphans

            orphans.watch_server(self.service.run_mark)

    def read_only_containment(self) -> read_only.Containment:
        if self._containment is None:
            self._containment = read_only.containment(sys.platform, read_only.bwrap_here, os.path.exists)
        return self._containment

    def mark(self, what: str) -> str | None:
        run_mark = self.service.run_mark
        return f"{run_mark}:{what}" if run_mark else None

    # -- output ---------------------------------------------------------------------------------

    def new_output(self, command_id: int, labels: tuple[str, ...]) -> CommandOutput:
        """Where a command's output goes: the user's budget, the app's private folder for whole outputs."""
        outputs = self.service.paths.app_outputs(self.service.client.name)
        return CommandOutput(self.output_budget(), outputs, f"cmd{command_id}", labels, console_code_pages())

    def output_budget(self) -> OutputBudget:
        """The user's output budget. A journal damaged under this server (SQLite finds it only as it
        reads) is opened again, which moves it aside for a new one; the budget is no control, so
        the command runs on with the default if even that fails."""
        journal = self.service.journal
        try:
            return output_budget(journal)
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, CoworkError) or not is_corrupt(exc):
                raise
            if not self.service.repairs_journal:  # in the tray: its hub moves the file aside, not this thread
                log.warning("the journal is damaged (%s): the default output budget is used", exc)
                return budget_from(None, os.environ)
            log.warning("the journal is damaged (%s): opening it again", exc)
        try:
            journal.reopen()
            return output_budget(journal)
        except (CoworkError, sqlite3.Error) as exc:
            log.warning("the output budget could not be read (%s): the default is used", exc)
            return budget_from(None, os.environ)

    def show_live(self, command_id: int, output: CommandOutput) -> None:
        """Report this command's output while it runs (report_live_output), until `hide_live`."""
        self._live[command_id] = output

    def hide_live(self, command_id: int) -> None:
        self._live.pop(command_id, None)

    def report_live_output(self) -> None:
        """While commands run, their output so far goes to the record each LIVE_OUTPUT_S (from the
        watch loop), so the activity log shows it live, not "Shown when the command ends" (issue 24)."""
        now = time.monotonic()
        if now - self._live_reported_at < LIVE_OUTPUT_S:
            return
        self._live_reported_at = now
        for command_id, output in list(self._live.items()):
            if output.total_bytes != self._live_bytes.get(command_id):
                self._live_bytes[command_id] = output.total_bytes
                out = output.streams[0]
                err = output.streams[1] if len(output.streams) > 1 else None  # a session's one stream
                self.service.authority.progress(
                    command_id, out.raw(), b"" if err is None else err.raw(), out.total, 0 if err is None else err.total
                )
        for gone in set(self._live_bytes) - set(self._live):
            del self._live_bytes[gone]

    # -- running --------------------------------------------------------------------------------

    def track(self, command_id: int) -> StopSignal:
        """Register a command that is about to run, so that pause and Stop reach it; whoever calls
        this must also remove it when the command ends."""
        stop = self.running[command_id] = StopSignal()
        self._wake.set()
        self._start_backstop()
        return stop

    def _start_backstop(self) -> None:
        """Headless with no tray, a command starts: the pause's backstop watches until nothing runs."""
        authority = self.service.authority
        if not authority.headless or authority.tethered:  # a tray's hub has its own (hub.py)
            return
        with self._backstop_lock:
            if self._backstop is None and not self._closed.is_set():
                self._backstop = threading.Thread(target=self._backstop_pauses, name="pause backstop", daemon=True)
                self._backstop.start()

    def _may_run(self) -> bool:
        """Whether anything of this server's may still run: a command, what a finished one left (no
        container), the session's shell, a container that outlived its command. From any thread."""
        return (
            bool(self.running)
            or self._may_have_left
            or self.service.session_alive()
            or lingering_containers() is not None
        )

    def _backstop_pauses(self) -> None:
        """A headless server's pause backstop, on a thread of its own, as the tray's hub has one
        (`Hub._end_what_a_pause_left`): the watch that stops commands gently (`watch`) runs on the
        server's event loop, which a command can hold up (red team, tenth: the walk of a container's
        1.9 million open files held it for 18-27 s, and a loop went on writing after the pause).
        It looks at the pause file (written first by every pause: `Journal.set_paused`; a stat each
        BACKSTOP_POLL_S) and PAUSE_BACKSTOP_S after a pause was written ends whatever still runs.
        It ends when nothing has run for BACKSTOP_IDLE_S, the server ends, or it binds to a tray
        (whose hub has its own)."""
        path = self.service.paths.pause_file
        seen: int | None = None
        was_paused = False  # a pause already written as it starts is one to end what runs after
        idle_since: float | None = None
        while True:
            with self._backstop_lock:
                idle_since = None if self._may_run() else idle_since or time.monotonic()
                idle = idle_since is not None and time.monotonic() - idle_since >= BACKSTOP_IDLE_S
                if self._closed.is_set() or idle or self.service.authority.tethered:
                    self._backstop = None
                    return
            stamp = pause_file.stamp(path)
            if stamp != seen:
                seen = stamp
                paused = pause_file.read(path) is True
                if paused and not was_paused:
                    if self._closed.wait(max(0.0, stamp / 1e9 + PAUSE_BACKSTOP_S - time.time())):
                        continue  # the server ended meanwhile: what runs now is not its own
                    if pause_file.read(path) is True and not self.service.authority.tethered:
                        end_what_a_pause_left(self.service.run_mark)
                was_paused = paused
            self._closed.wait(BACKSTOP_POLL_S)

    async def run_read_only(
        self, command_id: int, valid: ValidRequest, bash: str, on_output: OutputHook | None = None
    ) -> ExecutionResult:
        """Run a command of execute_read_only_command: inside bwrap or sandbox-exec where there is one
        (where there is none, `admit` let only commands proven read-only through)."""
        from app.core.execution import container as containers
        from app.core.execution import seccomp

        way = self.read_only_containment()
        life = containers.lifeline()
        contained = way is read_only.Containment.BWRAP
        outputs, own = self.service.paths.outputs, self.service.paths.app_outputs(self.service.client.name)
        rules = seccomp.filter_fd() if contained else None  # no Unix socket: a daemon could write for it
        try:
            prefix = read_only.prefix_for(
                way,
                valid.cwd,
                self.service.home,
                os.environ,
                read_only.bwrap_here,
                life,
                seccomp_fd=rules,
                locks=(*hidden_folders(self.service.paths), os.path.realpath(outputs)),
                shown=(os.path.realpath(own),),  # of the outputs, only this app's (where it exists)
            )
            inherit = (life, *([rules] if rules is not None else [])) if contained else ()
            valid = dataclasses.replace(valid, env=read_only.environment(valid.env))  # no optional git locks
            return await self.run(command_id, valid, bash, on_output, prefix=tuple(prefix), inherit=inherit)
        finally:
            if rules is not None:
                os.close(rules)

    async def run(
        self,
        command_id: int,
        valid: ValidRequest,
        bash: str,
        on_output: OutputHook | None = None,
        prefix: tuple[str, ...] = (),
        inherit: tuple[int, ...] = (),
    ) -> ExecutionResult:
        """Run an admitted command to its end and journal how it ended."""
        from app.core.execution import container as containers
        from app.core.execution import lone_files
        from app.core.execution.executor import CommandSpec, run_command

        authority = self.service.authority
        stop = self.track(command_id)
        self.apply_user_stops()  # a pause that landed after check_allowed, while another command ran
        base = self.container()  # read once: the journal says what it ran in, whatever the user switches meanwhile
        if base.state == containers.SLOW:  # never taken for "bwrap failed", which runs commands unprotected
            authority.finish(command_id, Outcome(status=Status.FAILED, reason=CONTAINER_SLOW_MESSAGE))
            self.running.pop(command_id, None)
            self.forget_allowed(command_id)
            authority.forget(command_id)
            raise ContainerSlow(CONTAINER_SLOW_MESSAGE)
        env, passed_over = self.service.environment(valid.env), ""
        if self.lets_out(command_id):
            env, passed_over = let_out_environment(valid.command, env)
        spec = CommandSpec(
            command=valid.command,
            cwd=valid.cwd,
            env=env,
            timeout_s=valid.timeout_ms / 1000,
            bash=bash,
            mark=self.mark(str(command_id)),
            prefix=prefix,
            inherit=inherit,
            container=None if prefix else self.container_for(command_id, base),
            # the default container may have been started ahead (spare.py); one a person let out never
            spare=not prefix and not self.lets_out(command_id),
            ends_whole=self.lets_out(command_id),
        )
        if not prefix:  # the read-only tool's prefix is its own container
            self.watch_uncontained(spec.container)
            if base.state == containers.OFF and spec.mark:
                self._run_while_off.add(spec.mark)
        output = self.new_output(command_id, ("stdout", "stderr"))
        if on_output is not None:
            on_output(output)
        self.show_live(command_id, output)
        try:
            mark("exec: start")
            result = await run_command(spec, stop, output)
            mark("exec: end")
        except OSError as exc:
            message = BASH_NOT_STARTED_REASON.format(bash=bash, error=exc.strerror or exc)
            authority.finish(command_id, Outcome(status=Status.FAILED, reason=message))
            raise CommandRefused(message) from None
        except BaseException:  # its task was cancelled: Jobs.end, or the server ends (jobs.why_cancelled)
            reason = why_cancelled()
            status = Status.INTERRUPTED if reason == SERVER_EXITED_REASON else Status.KILLED
            with anyio.CancelScope(shield=True):
                authority.finish(command_id, Outcome(status=status, reason=reason))
            raise
        finally:
            self.running.pop(command_id, None)
            self.hide_live(command_id)
            privileged = self.forget_allowed(command_id)
            authority.forget(command_id)
        if self._stopping():  # a pause swept while it ran, and spared what it left: ended now
            end_what_finished_commands_left(self.service.run_mark)
            if spec.mark:
                with anyio.CancelScope(shield=True):
                    await anyio.to_thread.run_sync(process_marks.end_marked, spec.mark)
        used = containers.Container(containers.PRIVILEGED) if privileged else base
        # Watched for a pause (which ends it) only by a headless server, where /proc tells marks: a
        # tray's pushes reach apply_user_stops at once, and elsewhere no mark can be read.
        sweepable = not result.contained and bool(self.service.run_mark) and not authority.tethered
        # Windows: a job it left is watched too (so that a pause reaches `apply_user_stops`).
        left = process_marks.reads_marks(sys.platform) or jobs_left_behind()
        self._may_have_left = self._may_have_left or (sweepable and left)
        if not prefix:  # the read-only tool runs in its own container (read_only.py)
            if result.contained:  # a start-up file it made as it ended: moved and noted first
                await lone_files.handled()
            asked = self.service.authority.approval_mode() is not ApprovalMode.NEVER
            # what it ran in: one let out of macOS's profile (or of some members) was not refused there
            result.protection_note = protection_note(result, spec.container or used, asked=asked)
        if passed_over:
            result.protection_note = " ".join(n for n in (result.protection_note, passed_over) if n)
        authority.finish(command_id, outcome_of(result, used))
        return result

    # -- pause and Stop -------------------------------------------------------------------------

    def stop_running(self, command_id: int, reason: str) -> bool:
        """End a command this server runs, whole tree; False when it runs nothing by that id."""
        stop = self.running.get(command_id)
        if stop is None:
            return False
        stop.set(reason)
        return True

    def _stopping(self) -> bool:
        """Whether what this server's commands run must end: the user paused, or the tray went away."""
        return self.service.authority.paused() or self._tray_gone()

    def _tray_gone(self) -> bool:
        """The tray this server is bound to went away: nobody watches what it runs."""
        authority = self.service.authority
        return authority.tethered and not authority.present()

    def apply_user_stops(self) -> None:
        """End what runs when the tray went away or the user paused, and what the user stopped; a
        pause ends the background jobs finished commands left too."""
        authority = self.service.authority
        if self._switched_off and authority.contained():
            self._end_run_while_off()
        gone = self._tray_gone()
        stopping = self._stopping()
        if stopping:
            end_what_finished_commands_left(self.service.run_mark)
        if stopping and not self._swept and self.service.run_mark:
            # Without a container (no bwrap, Windows' own jobs aside) nothing else ends what finished
            # commands left running: each carries this server's mark (red team, 2026-12-04: `nohup`
            # and `setsid` loops went on writing through a pause). Once per pause: it reads /proc.
            running_now = {given for command_id in self.running if (given := self.mark(str(command_id)))}
            process_marks.end_marked_under(self.service.run_mark, running_now)
            self._may_have_left = False
        self._swept = stopping
        if stopping and self.service.session_alive():
            self.service.end_session()  # the session's shell, and its background jobs (red team, 2026-12-04)
        running = dict(self.running)
        if not running:
            return
        if gone:
            for stop in running.values():
                stop.set(APP_GONE_STOP_REASON)
            return
        if authority.paused():
            for stop in running.values():
                stop.set(PAUSE_STOP_REASON)
            return
        stopped = authority.stop_requests(list(running))
        by_agents = authority.stops_by_agents(list(stopped)) if stopped else set()
        for command_id in stopped:  # another agent's command_stop is never said to be the user's Stop
            running[command_id].set(AGENT_STOP_REASON if command_id in by_agents else USER_STOP_REASON)

    def _end_run_while_off(self) -> None:
        """The user switched the container on again (a tightening): what runs outside it since it was
        off ends, as at a pause (red team, ninth: a finished command's `nohup` loop went on writing
        ~/.bashrc): the commands run meanwhile, what they left, and the session's shell if it runs
        outside. Commands in the container go on."""
        marks, self._run_while_off, self._switched_off = self._run_while_off, set(), False
        for command_id, stop in list(self.running.items()):
            if self.mark(str(command_id)) in marks:
                stop.set(PROTECTION_ON_STOP_REASON)
        if marks:
            process_marks.end_marked_any(marks)
        if self.service.session_uncontained():
            self.service.end_session()  # its shell and background jobs; the next terminal_run starts a new one

    async def watch(self) -> None:
        """While commands run, or a finished one's background job, apply pause and Stop: a headless
        server polls the journal; a tray's pushes arrive through `pushed` at once, and this loop is
        only a backstop for them."""
        try:
            await self._watch()
        finally:
            self._closed.set()  # the server ends: its pause backstop with it

    async def _watch(self) -> None:
        seen_version = -1
        while True:
            idle = not self.running and not self._may_have_left and not self.service.session_alive()
            if idle and lingering_containers() is None:
                self._wake = anyio.Event()
                await self._wake.wait()
                seen_version = -1
            version = self.service.authority.version()
            if version != seen_version:
                seen_version = version
                self.apply_user_stops()
            self.report_live_output()
            await anyio.sleep(WATCH_INTERVAL_S)


def let_out_environment(command: str, env: Mapping[str, str]) -> tuple[dict[str, str], str]:
    """The environment of a command a person let out of the container, and what the model is told:
    PATH keeps only folders no command can change (system_programs.trusted_path), so the Allow runs
    the programs the prompt names, not ones a command put first on PATH; a program found only in a
    dropped folder is said."""
    from app.core import system_programs
    from app.core.commands.pins.programs import programs_named

    path = env.get("PATH", "")
    trusted = system_programs.trusted_path(path, sys.platform, system_programs.user_may_change)
    if trusted is None:
        return dict(env), ""
    passed = {}  # program: the dropped folder PATH would have found it in
    for program in programs_named(command):
        if (found := shutil.which(program, path=path)) is not None and shutil.which(program, path=trusted) is None:
            passed[program] = os.path.dirname(found)
    note = ""
    if passed:
        note = LET_OUT_PATH_NOTE.format(
            programs=", ".join(f"`{p}`" for p in passed), folders=", ".join(dict.fromkeys(passed.values()))
        )
    return {**env, "PATH": trusted}, note


def protection_note(result: ExecutionResult, container: Container, *, asked: bool = True) -> str | None:
    """What the model reads when a command failed on the protected set or on a message bus hidden in
    the container (container.py); `asked`: whether such a command would wait for the user's Allow
    (not in the Never ask mode). macOS's sandbox-exec refuses writes only: the hint alone."""
    from app.core.execution import container as containers

    seatbelt = container.state == containers.SEATBELT
    if not result.contained and not seatbelt:
        return None
    stderr = result.stderr.raw().decode("utf-8", "replace")
    hint = containers.protected_hint(
        stderr, result.exit_code, container.protected.all(), asked=asked, seatbelt=seatbelt
    )
    if seatbelt:
        return hint
    from app.core.execution import start_files

    moved = start_files.model_note(result.started, asked=asked)  # start_files.py
    bus = containers.bus_hint(stderr, result.exit_code)
    tasks = containers.tasks_hint(stderr)
    return " ".join(note for note in (hint, moved, bus, tasks) if note) or None


def unprotected_reason(container: Container | None, *, contained: bool) -> str | None:
    """What the journal adds to the reason of a command that ran outside the container where one is
    wanted (bwrap missing, switched off, let out): the log says so command by command (issue 21)."""
    from app.core.execution import container as containers

    # macOS's sandbox-exec (SEATBELT) is the normal state there, as no container is on Windows: the
    # activity log would read "Ran without protection" on every row, and its files are protected.
    if container is None or contained or container.state in (containers.UNSUPPORTED, containers.SEATBELT):
        return None
    return UNPROTECTED_REASON.format(why=containers.log_message(container.state))


def outcome_of(result: ExecutionResult, container: Container | None = None) -> Outcome:
    """The journal's record of how a command ended (and whether it ran outside the container)."""
    if result.timed_out:
        status, reason = Status.TIMED_OUT, TIMED_OUT_REASON
    elif result.stopped_reason:
        status, reason = Status.KILLED, result.stopped_reason
    elif result.exit_code == 0:
        status, reason = Status.FINISHED, None
    else:
        status = Status.FAILED
        reason = KILLED_BY_REASON.format(signal=result.signal_name) if result.signal_name else None
    unprotected = unprotected_reason(container, contained=result.contained)
    if unprotected:
        reason = f"{reason}; {unprotected}" if reason else unprotected
    return Outcome(
        status=status,
        exit_code=result.exit_code,
        timed_out=result.timed_out,
        reason=reason,
        stdout=result.stdout.raw(),
        stderr=result.stderr.raw(),
        stdout_bytes=result.stdout.total,
        stderr_bytes=result.stderr.total,
        duration_ms=result.duration_ms,
    )
