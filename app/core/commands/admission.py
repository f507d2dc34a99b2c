"""Admission and holding: check, classify and journal a request, and keep a command that waits for
the user's answer until the tray says allowed, denied, paused or gone (then run exactly what the
user was shown, or refuse)."""

from __future__ import annotations

import functools
import logging
import os
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any, NamedTuple, Protocol, TypeVar

import anyio

from app.core.channel.protocol import Pin, command_digest
from app.core.classifier import Classification, JudgedTooLong, Tier, classify
from app.core.commands.authority import NotRecorded, ServerAuthority
from app.core.commands.cancellation import why_cancelled
from app.core.commands.request import (
    CODE_IN_ENVIRONMENT,
    CommandRefused,
    ExecuteRequest,
    ValidRequest,
    validate_request,
)
from app.core.commands.tray_link import Decision
from app.core.errors import CoworkError
from app.core.execution import read_only
from app.core.execution.output import OutputHook
from app.core.hop_times import mark
from app.core.journal.store import Outcome, Status
from app.core.messages import (
    AGENT_STOP_BY,
    AGENT_WITHDREW_MESSAGE,
    AGENT_WITHDREW_REASON,
    ALREADY_WAITING_MESSAGE,
    APP_GONE_HOLD_REASON,
    DENIED_BY_REASON,
    DENIED_MESSAGE,
    ENV_CHOSEN_PLAIN,
    HELD_MESSAGE,
    HOLD_ENDED_MESSAGE,
    HOLD_EXPIRED_REASON,
    NEVER_ASKED_UNGUARDED,
    NO_APPROVER_MESSAGE,
    OTHER_COMMAND_REASON,
    PAUSE_ENDED_HOLD_MESSAGE,
    PAUSED_HOLD_REASON,
    PAUSED_MESSAGE,
    PERSON_DECIDERS,
    PROTECTED_UNGUARDED_PLAIN,
    SESSION_STATE_PLAIN,
    UNKNOWN_DECIDER,
    WITHDRAWN_MESSAGE,
    WITHDRAWN_REASON,
    held_reason,
)
from app.core.policy.approval import (
    HOLD_LIFETIME_S,
    HOLD_UNSEEN_MAX_S,
    ApprovalMode,
    hold_expiry,
    needs_approval,
    new_confirmation_id,
)

T = TypeVar("T")

# A command longer than this is judged on a worker thread: a long one takes the classifier up to half a
# second (its word bound), while the loop runs every other call of this tray or server.
CLASSIFY_ON_A_THREAD_CHARS = 1024
# A shorter one is judged on the loop for at most this long, then again on a worker thread.
INLINE_JUDGING_S = 0.02
# One such judgement at a time, in this process: each holds the GIL, and forty at once (a red team,
# 2026-12-05) starved the loop, whose pause then took 5-16 s to reach a running command and its
# call. One beside the loop leaves it half the interpreter; the others wait their turn on the loop,
# where a cancellation reaches them, holding no worker thread (a review: a semaphore taken in the
# thread held anyio's 40 threads, behind which the pause's own calls waited).
_JUDGING: anyio.CapacityLimiter | None = None


async def judged_alone(judge: Callable[[], T]) -> T:
    """`judge()` on a worker thread, once no other long judgement of this process runs."""
    global _JUDGING
    if _JUDGING is None:
        _JUDGING = anyio.CapacityLimiter(1)
    return await anyio.to_thread.run_sync(judge, limiter=_JUDGING)


class ContainerGate(Protocol):
    """What admission asks of the running commands: whether a command touches a protected member,
    and letting one the user allowed out of the container as far as it must go."""

    async def unprotected_asks(
        self, command: str, verdict: Classification, cwd: str | None = None, *, on_thread: bool = False
    ) -> tuple[str, ...]: ...
    def allowed_by_user(self, command_id: int, command: str, asks: tuple[str, ...]) -> None: ...
    def forget_allowed(self, command_id: int) -> bool: ...


class AdmissionService(Protocol):
    """What admission reaches of its command service (service.CommandService)."""

    @property
    def authority(self) -> ServerAuthority: ...
    @property
    def home(self) -> str: ...
    @property
    def protected_paths(self) -> list[str]: ...
    @property
    def pulse(self) -> anyio.Event: ...
    @property
    def runs(self) -> ContainerGate: ...
    def bash(self) -> str: ...
    def check_allowed(self) -> None: ...
    def environment(self, env: Mapping[str, str]) -> dict[str, str]: ...
    async def journal_row(self, **row: Any) -> int: ...
    async def journal_refusal(self, request: ExecuteRequest, reason: str, tool: str) -> None: ...


log = logging.getLogger(__name__)

DECISION_POLL_S = 0.1  # a held call looks again at least this often (a tray's push wakes it at once)

Runner = Callable[[int, ValidRequest, str, "OutputHook | None"], Awaitable[Any]]


def reasons_text(reasons: tuple[str, ...]) -> str:
    return "; ".join(reasons) if reasons else "it needs the user's approval"


class CommandHeld(CommandRefused):
    """The command waits for the user's answer beyond this call; the model may confirm it later."""

    def __init__(self, message: str, *, confirmation_id: str) -> None:
        super().__init__(message)
        self.confirmation_id = confirmation_id


class Hold(NamedTuple):
    """A command waiting for the user's answer, with what is needed to run it (env values stay in memory)."""

    command_id: int
    request: ValidRequest
    runner: Runner
    expires_at: float
    reasons: str
    pin: Pin | None = None  # what the user is asked about: the folder, the scripts, the environment
    asks: tuple[str, ...] = ()  # what it asks of the container that only a person's Allow gives (running.py)
    pauses: int = 0  # the tray's pauses so far when it was judged: one more ends it (authority.pauses)
    tray_pauses: int | None = None  # the tray's own count then, for its `started` (authority.tray_pauses)


class Admitted(NamedTuple):
    """A journaled request that may run now, or waits for the user when `confirmation_id` is set."""

    command_id: int
    request: ValidRequest
    bash: str
    confirmation_id: str | None = None


SESSION_TOOL = "terminal_run"
# What a session command leaves for the later ones, which are judged alone (red team, 2026-12-04: a
# PATH that put a planted `ls` first, a DEBUG trap that sourced a file rewritten afterwards, an
# exported LD_PRELOAD, PYTHONPATH or HOME): a variable that picks programs or loads code set in the
# shell, a trap with code, a function, a builtin loaded from a file, an `eval`. Read on the text with
# quoted strings blanked (`git commit -m "fix trap"`), where a command starts; an assignment before a
# command (`PATH=./bin:$PATH jest`) does not last, unless `set -k` made it (red team, 2026-12-05).
# The classifier's own "sets PATH" counts too, and its parse (`Classification.lasting`): it unquotes command
# names and follows `builtin`, `command` and the code `eval` and `source` run (red team, 2026-12-05:
# `builtin trap '. ./t.sh' DEBUG`, `tr''ap ...`, `. /dev/stdin <<< 'ls() { ...; }'` passed the text's reading).
_QUOTED = re.compile(r"'[^']+'|\"(?:\\.|[^\"\\])+\"")
_AT = r"(?:^|[;&|(){}\n!]|\b(?:then|do|else|if|elif|while|until|time)\b)\s*\\?"
_EXPORTED = re.compile(rf"{_AT}(?:export|declare|typeset|local|readonly)\b([^;&|\n]*)")
_ALONE = re.compile(rf"{_AT}([A-Za-z_]\w*)(?:\[[^]]*\])?\+?=\S*\s*(?:$|[;&|\n)])")
_NAMED = re.compile(r"(?:^|\s)([A-Za-z_]\w*)(?:\[[^]]*\])?\+?=")
_LASTING = frozenset({"PATH", "CDPATH", "BASH_ENV", "ENV", "PROMPT_COMMAND", "PS0", "PS4", "BASH_LOADABLES_PATH",
                      "EXECIGNORE", "GLOBIGNORE", "HISTFILE"})  # fmt: skip
_SETS = re.compile(r"sets (\w+)(?:\[.*\])?: changes how later commands run")  # the classifier's words
LASTS_IN_SESSION = re.compile(
    rf"{_AT}trap\s+(?!(?:-[lp]|''|\"\"|-)(?:\s|$))"  # not `trap -p`, `trap '' INT` (ignores), `trap - INT`
    rf"|{_AT}(?:enable\s+-f|function\s+[\w.:-]+|eval\b|[\w.:-]+\s*\(\s*\))"
    # `set -k`: every later `NAME=value` word anywhere on a line becomes the program's environment
    rf"|{_AT}set\s+(?:[^;&|\n]*\s)?(?:-[a-zA-Z]*k|-o\s*keyword\b)"
    r"|\b(?:printf\s+-v\s*|(?:read|mapfile|readarray)\b[^;&|\n]*\s)(?:PATH|BASH_ENV|ENV|PROMPT_COMMAND|IFS)\b"
)


def _lasting(name: str) -> bool:
    from app.core.commands.pins import PICKS_FOLDERS  # see Holds.admit

    return name in _LASTING or bool(CODE_IN_ENVIRONMENT.match(name)) or bool(PICKS_FOLDERS.match(name))


def lasts_in_session(command: str, verdict: Classification | None = None, cwd: str | None = None) -> bool:
    """Whether a session command changes how the shell runs later commands (see LASTS_IN_SESSION):
    its text, and the classifier's reading of it (`verdict`, else classified here in `cwd`)."""
    verdict = verdict if verdict is not None else classify(command, cwd=cwd)
    said = (_SETS.fullmatch(reason) for reason in verdict.reasons)
    # its own reading: `export "PATH"=x`; IFS only where it outlives the command (`verdict.lasting`: not
    # in `x=$(IFS=,; echo ...)`; red team, 2026-12-05: `IFS=:` made a later `find -name $f` split there)
    if any(found is not None and found[1] != "IFS" for found in said):
        return True
    text = _QUOTED.sub("Q", command)
    exported = [name for found in _EXPORTED.finditer(text) for name in _NAMED.findall(found[1])]
    alone = [found[1] for found in _ALONE.finditer(text)]
    return any(map(_lasting, [*exported, *alone])) or bool(LASTS_IN_SESSION.search(text)) or bool(verdict.lasting)


class Holds:
    """One server's admission of requests and its commands waiting for the user."""

    def __init__(self, service: AdmissionService) -> None:
        self.service = service
        self._held: dict[str, Hold] = {}
        self._waiting: set[str] = set()  # holds a call waits for: one at a time, so one Allow runs once

    async def admit(
        self, request: ExecuteRequest, tool: str, runner: Runner, *, proven_read_only: bool = False
    ) -> Admitted:
        """Check, classify and journal a request: it may run now, or (`confirmation_id`) it waits for
        the user. Raises CommandRefused when it may not run at all (journaled as refused).
        `proven_read_only`: refuse what the classifier cannot prove read-only (no OS containment)."""
        service = self.service
        under = service.authority.settings()  # read first: the tray refuses a row judged under older ones
        # And the pauses so far: a pause while it is judged (seconds for a long one) ends it, even
        # after a resume (red team, ninth); here as its server heard them, at the tray as it made them.
        pauses, tray_pauses = service.authority.pauses(), service.authority.tray_pauses()
        try:
            valid = validate_request(request, service.home)
            service.check_allowed()
            bash = service.bash()
        except CoworkError as refusal:
            await service.journal_refusal(request, str(refusal), tool)
            raise CommandRefused(str(refusal)) from None
        mark("admission: checked")

        # The real folder: a symlink to the data folder must not pass for somewhere else.
        judge = functools.partial(
            classify, valid.command, cwd=os.path.realpath(valid.cwd), protected_paths=service.protected_paths
        )
        long = len(valid.command) > CLASSIFY_ON_A_THREAD_CHARS  # up to a second: other calls and a pause go on
        if not long:
            try:  # a short command may name a long script (2 s for 250 kB: a red team, 2026-12-06)
                verdict = judge(deadline=time.monotonic() + INLINE_JUDGING_S)
            except JudgedTooLong:
                long = True
        if long:
            verdict = await judged_alone(judge)
        if proven_read_only and verdict.tier is not Tier.SAFE:
            reason = read_only.NOT_PROVEN_MESSAGE.format(reasons=reasons_text(verdict.reasons))
            await service.journal_refusal(request, reason, tool)
            raise CommandRefused(reason)
        mark("admission: classified")
        asks: tuple[str, ...] = ()
        if not proven_read_only:  # where no container runs, a second reading: on a thread as the first
            asks = await service.runs.unprotected_asks(valid.command, verdict, valid.cwd, on_thread=long)
        # The pins (0.6 MB with the classifier's tables) load with a command's admission, never in a
        # tray-bound `serve`, which admits none (issue 21's idle memory); a headless one warms them.
        from app.core.commands.pins import picks_programs, pin_command

        if not proven_read_only and any(picks_programs(key, value) for key, value in valid.env.items()):
            asks = (*asks, ENV_CHOSEN_PLAIN)  # the prompt shows their values (red team, 2026-12-04)
        if tool == SESSION_TOOL and lasts_in_session(valid.command, verdict):
            asks = (*asks, SESSION_STATE_PLAIN)
        mark("admission: protected set checked")
        said = held_reason((*verdict.plain, *asks), verdict.reasons)
        mode = service.authority.approval_mode()
        if mode is ApprovalMode.NEVER and PROTECTED_UNGUARDED_PLAIN in asks:
            # As a container would have made the write fail: no Allow can come (a red team, 2026-12-04)
            reason = NEVER_ASKED_UNGUARDED
            await service.journal_refusal(request, reason, tool)
            raise CommandRefused(reason)
        if service.authority.pauses() != pauses:  # paused (and maybe resumed) while it was judged
            await service.journal_refusal(request, PAUSED_MESSAGE, tool)
            raise CommandRefused(PAUSED_MESSAGE)
        if not needs_approval(mode, verdict.tier is Tier.DESTRUCTIVE or bool(asks)):
            tier = verdict.tier.name.lower()
            return Admitted(await self._begin(valid, tool, tier, under=under, pauses=tray_pauses), valid, bash)

        if not service.authority.present():
            reason = NO_APPROVER_MESSAGE.format(reasons=said)
            await service.journal_refusal(request, reason, tool)
            raise CommandRefused(reason)
        try:  # what runs is fixed now, as the user is asked (core/commands/pins/)
            path = service.environment(valid.env).get("PATH")  # the command's, where its programs are found
            pin = await anyio.to_thread.run_sync(  # hashes files
                pin_command, valid.command, valid.cwd, valid.env, verdict.scripts, path
            )
        except OSError as exc:
            reason = f"`cwd` cannot be examined: {valid.cwd} ({exc.strerror}). Give a folder this user can open."
            await service.journal_refusal(request, reason, tool)
            raise CommandRefused(reason) from None
        confirmation_id = new_confirmation_id()
        expires_at = time.time() + HOLD_UNSEEN_MAX_S  # the tray starts the real clock when the user sees it
        command_id = await self._begin(
            valid,
            tool,
            verdict.tier.name.lower(),
            status=Status.WAITING,
            reason=said,
            confirmation_id=confirmation_id,
            pin=pin,
            unprotected=bool(asks),  # no rule of the user's answers it: a person must (the hub)
            under=under,
            pauses=tray_pauses,
        )
        self._held[confirmation_id] = Hold(command_id, valid, runner, expires_at, said, pin, asks, pauses, tray_pauses)
        return Admitted(command_id, valid, bash, confirmation_id)

    async def _begin(self, valid: ValidRequest, tool: str, tier: str, **row: object) -> int:
        if row.get("status") is Status.WAITING:
            row["hold_expires_at"] = hold_expiry()
        # Shielded: once the tray has the row (and shows a held one), the call's cancellation must
        # come after this server knows its id, so that the row is ended (a review, 2026-12-05: a
        # call cancelled here left a prompt whose Allow ran nothing, and a row waiting for good).
        with anyio.CancelScope(shield=True):
            command_id: int = await self.service.journal_row(
                command=valid.command, cwd=valid.cwd, env_keys=valid.env.keys(), timeout_ms=valid.timeout_ms,
                tool=tool, tier=tier, **row,
            )  # fmt: skip
        return command_id

    async def confirm(self, confirmation_id: str, on_output: OutputHook | None = None) -> Any:
        """The model asks again for a held command: run it if the user allowed it, else wait a while."""
        command_id = self._lookup(confirmation_id).command_id
        try:
            bash = self.service.bash()
        except CoworkError as problem:
            self._close(confirmation_id, command_id, str(problem))
            raise CommandRefused(str(problem)) from None
        return await self.wait_and_run(confirmation_id, bash, on_output)

    def cancel(self, confirmation_id: str) -> str:
        """The model withdraws a held command; the user's prompt for it disappears."""
        hold = self._lookup(confirmation_id)
        self._close(confirmation_id, hold.command_id, WITHDRAWN_REASON)
        return f"Withdrawn: the held command will not run ({hold.request.command[:80]!r})."

    def _lookup(self, confirmation_id: str) -> Hold:
        held = self._held.get(confirmation_id)
        if held is None:
            raise CommandRefused(
                f"No command is held as {confirmation_id!r} on this server: it already ran, or was denied, "
                "withdrawn or expired (the earlier result said which), or another server holds it. Run it "
                "again only if it did not run and the user still wants it."
            )
        if self.service.authority.pauses() != held.pauses:
            self._close(confirmation_id, held.command_id, PAUSED_MESSAGE)
            raise CommandRefused(PAUSE_ENDED_HOLD_MESSAGE)
        if self.expires_at(held) <= time.time():
            self._close(confirmation_id, held.command_id, HOLD_EXPIRED_REASON)
            raise CommandRefused(
                "The held command can no longer run: the hold expired before it was confirmed. Run it again to "
                "ask the user anew."
            )
        return held

    def _close(self, confirmation_id: str, command_id: int, reason: str) -> None:
        self._held.pop(confirmation_id, None)
        self.service.authority.forget(command_id)
        self.service.authority.finish(command_id, Outcome(status=Status.REFUSED, reason=reason))

    async def await_approval(self, confirmation_id: str, bash: str, on_output: OutputHook | None) -> Any:
        """A job's hold: wait for the user's answer until the hold expires (not only the approval
        window), and run the command at the click; raises CommandRefused when it will not run."""
        if confirmation_id not in self._held:  # withdrawn (command_stop) before its task started
            raise CommandRefused(WITHDRAWN_MESSAGE)
        return await self.wait_and_run(confirmation_id, bash, on_output, until_expiry=True)

    def expires_at(self, hold: Hold) -> float:
        """When a hold runs out: HOLD_LIFETIME_S after the user could first see it (the tray says when)."""
        return self.service.authority.hold_expiry(hold.command_id, hold.expires_at)

    def of(self, confirmation_id: str) -> Hold | None:
        return self._held.get(confirmation_id)

    def withdraw(self, confirmation_id: str, reason: str = WITHDRAWN_REASON) -> None:
        """The model withdraws a job's hold (command_stop, or a cancelled call): its prompt disappears."""
        hold = self._held.get(confirmation_id)
        if hold is not None:
            self._close(confirmation_id, hold.command_id, reason)

    async def wait_and_run(
        self, confirmation_id: str, bash: str, on_output: OutputHook | None, *, until_expiry: bool = False
    ) -> Any:
        """Wait for the user's answer to a hold and run the command if allowed; raises CommandHeld
        when the answer has not come within the approval window. One call waits at a time."""
        if confirmation_id in self._waiting:
            raise CommandRefused(ALREADY_WAITING_MESSAGE)
        self._waiting.add(confirmation_id)
        try:
            return await self._wait_and_run(confirmation_id, bash, on_output, until_expiry=until_expiry)
        finally:
            self._waiting.discard(confirmation_id)

    async def _wait_and_run(
        self, confirmation_id: str, bash: str, on_output: OutputHook | None, *, until_expiry: bool
    ) -> Any:
        authority = self.service.authority
        hold = self._held[confirmation_id]
        command_id, valid = hold.command_id, hold.request
        decision = await self._wait_for_decision(confirmation_id, hold, until_expiry=until_expiry)
        if self._held.get(confirmation_id) is not hold:  # withdrawn meanwhile: its row says so already
            raise CommandRefused(HOLD_ENDED_MESSAGE)
        if not authority.present() and decision is None:
            self._close(confirmation_id, command_id, APP_GONE_HOLD_REASON)
            raise CommandRefused(authority.absence_message())
        if authority.paused():
            self._close(confirmation_id, command_id, PAUSED_HOLD_REASON)
            raise CommandRefused(PAUSED_MESSAGE)
        if authority.pauses() != hold.pauses:  # a pause and a resume while it waited, or before this call
            self._close(confirmation_id, command_id, PAUSED_MESSAGE)
            raise CommandRefused(PAUSE_ENDED_HOLD_MESSAGE)
        stopped = command_id in authority.stop_requests([command_id])  # Stop on a held row = Deny
        if (
            decision.by == AGENT_STOP_BY
            if decision is not None and not decision.allowed
            else stopped and bool(authority.stops_by_agents([command_id]))
        ):  # another agent's command_stop withdrew it: the user denied nothing (a red team, 2026-12-06)
            self._close(confirmation_id, command_id, AGENT_WITHDREW_REASON)
            raise CommandRefused(AGENT_WITHDREW_MESSAGE)
        if stopped or (decision is not None and not decision.allowed):
            who = decision.by if decision else UNKNOWN_DECIDER
            self._close(confirmation_id, command_id, DENIED_BY_REASON.format(who=who))
            raise CommandRefused(DENIED_MESSAGE)
        if decision is not None:
            self._held.pop(confirmation_id, None)
            authority.forget(command_id)
            try:
                valid = await self._starting(confirmation_id, hold, decision)
            except anyio.get_cancelled_exc_class():  # a command_stop or the server's end, before it ran
                with anyio.CancelScope(shield=True):  # its row must not stay waiting or running
                    authority.finish(command_id, Outcome(status=Status.REFUSED, reason=why_cancelled()))
                raise
            if hold.asks and decision.by in PERSON_DECIDERS:  # a rule's Allow runs it in the container
                self.service.runs.allowed_by_user(command_id, valid.command, hold.asks)
            try:
                return await hold.runner(command_id, valid, bash, on_output)
            finally:  # run or refused (a session busy or moved): the Allow lets out this run only
                self.service.runs.forget_allowed(command_id)
        if self.expires_at(hold) <= time.time():
            self._close(confirmation_id, command_id, HOLD_EXPIRED_REASON)
            raise CommandRefused("The held command expired before the user answered. Run it again to ask anew.")
        raise CommandHeld(
            HELD_MESSAGE.format(
                confirmation_id=confirmation_id,
                minutes=int(HOLD_LIFETIME_S // 60),
                reasons=hold.reasons,
            ),
            confirmation_id=confirmation_id,
        )

    async def _starting(self, confirmation_id: str, hold: Hold, decision: Decision) -> ValidRequest:
        """An allowed hold checked once more and recorded as started: what runs, in the pinned folder."""
        command_id, valid, authority = hold.command_id, hold.request, self.service.authority
        # The tray sends a digest of what the user saw: run only that, never a row rewritten on disk.
        if decision.digest != command_digest(valid.command, valid.cwd, sorted(valid.env), hold.pin, confirmation_id):
            self._close(confirmation_id, command_id, OTHER_COMMAND_REASON)
            raise CommandRefused("The approval did not match this command, so it was not run. Run it again.")
        if hold.pin is not None:  # the folder, scripts and environment the user was asked about
            from app.core.commands.pins import changed_since  # see admit

            changed = await anyio.to_thread.run_sync(changed_since, hold.pin, valid.env)
            if changed is not None:
                log.warning("held command %s not run: %s", command_id, changed)
                self._close(confirmation_id, command_id, changed)
                raise CommandRefused(
                    f"The command was not run: {changed}. Check what changed, then run it again to ask the user anew."
                )
            valid = replace(valid, cwd=hold.pin.folder)  # that very folder, not where a link points now
        # The checks above take seconds on large pinned scripts: a pause meanwhile (red team, ninth:
        # resumed before they ended, and the command ran) ends the hold here, and at the tray's
        # `started` when its push is still on its way.
        self._end_if_paused_since(confirmation_id, hold)
        try:
            await authority.started(command_id, hold.tray_pauses)
        except NotRecorded as refused:
            self._end_if_paused_since(confirmation_id, hold)
            self._close(confirmation_id, command_id, str(refused))
            raise CommandRefused(str(refused)) from None
        self._end_if_paused_since(confirmation_id, hold)  # one that came as the tray recorded it
        return valid

    def _end_if_paused_since(self, confirmation_id: str, hold: Hold) -> None:
        """Refuse a hold (CommandRefused) when host access is paused, or was since it was judged."""
        authority = self.service.authority
        if authority.paused() or authority.pauses() != hold.pauses:
            self._close(confirmation_id, hold.command_id, PAUSED_MESSAGE)
            raise CommandRefused(PAUSE_ENDED_HOLD_MESSAGE)

    async def _wait_for_decision(
        self, confirmation_id: str, hold: Hold, *, until_expiry: bool = False
    ) -> Decision | None:
        """Wait up to the approval window (or the hold's expiry) for the user's answer, a pause, a
        Stop, the tray's absence, or the hold's end by another call (terminal_cancel)."""
        service = self.service
        authority = service.authority
        window_s = HOLD_UNSEEN_MAX_S if until_expiry else authority.approval_window_s()
        deadline = anyio.current_time() + window_s
        while True:
            decision = authority.decision(hold.command_id)
            if (
                decision is not None
                or self._held.get(confirmation_id) is not hold
                or authority.paused()
                or authority.pauses() != hold.pauses
                or not authority.present()
                or authority.stop_requests([hold.command_id])
                or self.expires_at(hold) <= time.time()
                or anyio.current_time() >= deadline
            ):
                return decision
            with anyio.move_on_after(min(DECISION_POLL_S, max(0.0, deadline - anyio.current_time()))):
                await service.pulse.wait()
