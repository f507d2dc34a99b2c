"""Asking the running tray from another process (the CLI, a window the user opened by hand).

Tightening requests take effect at once; loosening ones wait for the user's click in a window the
tray shows, so the caller waits up to ANSWER_WAIT_S for the answer. The tray is checked like a
server checks it: a program squatting on the tray's address is not told anything but a pause or a
stop, and those `request_change` then applies itself as well, as with no tray (a red team,
2026-12-05: a squatter acknowledged a pause that nothing applied). The CLI's pause and stop are
applied so whoever answered (`apply_here_too`): a look-alike can pass the checks (red team 13).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import sqlite3
import time
from collections.abc import Callable
from typing import Any

from app.core.channel.peer import own_facts, tray_refusal
from app.core.channel.protocol import FROM_TRAY, Ack, BadValue, ErrorReply, Hello, Request, Welcome, decode, encode
from app.core.channel.transport import ChannelUnavailable, address_for, connect
from app.core.channel.wire import Channel, ProtocolError
from app.core.errors import CoworkError
from app.core.i18n import N_, _
from app.core.i18n.formats import format_number
from app.core.journal import opening
from app.core.journal.store import Journal
from app.core.paths import AppPaths
from app.core.visible_text import visible

HELLO_TIMEOUT_S = 2.0
UNVERIFIED_ANSWER_SHOWN = 300  # characters of an unverified program's answer (it may be anything)
ANSWER_WAIT_S = 120.0  # the user reads the question and clicks


class TrayRefused(CoworkError):
    """The tray answered no (the user said no, or the request is not allowed from here)."""


class NoTray(CoworkError):
    """No genuine tray could be reached."""


class NobodyToConfirm(TrayRefused):
    """A loosening asked with no tray running: nothing changed (each caller words what to do)."""


class NotVerified(TrayRefused):
    """A tightening went to a program at the tray's address that could not be verified, and applying
    it here failed: whether it took effect is unknown."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


_seq = itertools.count(1)
# Sent even to a tray that cannot be verified: they tell nothing and loosen nothing, and from inside a
# command's container the real tray cannot be verified at all (its pid is not visible there). Never
# only to it: request_change applies them itself too (a squatter acknowledges and does nothing).
UNVERIFIED_OPS = frozenset({"pause", "stop"})


def ask_tray(paths: AppPaths, op: str, *, wait_s: float = ANSWER_WAIT_S, **fields: Any) -> dict[str, Any]:
    """Send one request to the tray and return its answer; NoTray or TrayRefused otherwise."""
    return _ask(paths, op, fields, wait_s=wait_s)


def _ask(
    paths: AppPaths,
    op: str,
    fields: dict[str, Any],
    *,
    wait_s: float,
    unverified: list[str] | None = None,
    unverified_wait_s: float | None = None,
) -> dict[str, Any]:
    """ask_tray's work. When a pause or a stop goes to a peer that could not be verified, why is
    added to `unverified` and its answer is waited for only `unverified_wait_s` (the caller applies
    the change itself then: a squatter must not make it wait)."""
    try:
        channel, peer = connect(address_for(paths))
    except ChannelUnavailable as exc:
        raise NoTray(str(exc)) from None
    try:
        welcome = _say_hello(channel)
        if not isinstance(welcome, Ack):
            raise NoTray(_("the program at Cowork Terminal's address did not answer as the app does"))
        refusal = tray_refusal(peer, own_facts(os.path.realpath(paths.data_dir)), welcome.fields.get("data_dir"))
        if refusal and op not in UNVERIFIED_OPS:
            raise NoTray(_("not asking the program at Cowork Terminal's address: {why}").format(why=refusal))
        if refusal and unverified is not None:
            unverified.append(refusal)
            if unverified_wait_s is not None:
                wait_s = min(wait_s, unverified_wait_s)
        seq = next(_seq)
        channel.send({**encode(Request(op, fields)), "seq": seq})
        deadline = time.monotonic() + wait_s
        while True:
            received = channel.receive(max(0.0, deadline - time.monotonic()))
            if received is None:
                raise TrayRefused(
                    _("no answer within {seconds} s; nothing changed").format(seconds=format_number(wait_s, None))
                )
            reply = _answer(received)
            if reply is None or reply.seq != seq:
                continue  # pushes meant for servers are not ours
            if isinstance(reply, ErrorReply):
                raise TrayRefused(reply.message or _("refused"))
            return reply.to_wire()
    except (EOFError, OSError, ProtocolError) as exc:
        raise NoTray(_("the Cowork Terminal app went away ({error})").format(error=exc)) from None
    finally:
        channel.close()


def _say_hello(channel: Channel) -> Ack | ErrorReply | None:
    """Say hello as the CLI does; the tray's welcome (unverified: the caller checks who answered)."""
    channel.send(encode(Hello("cli", os.getpid())))
    return _answer(channel.receive(HELLO_TIMEOUT_S))


def tray_says_its_pid(paths: AppPaths) -> int | None:
    """The pid the program at the tray's address gives at its hello, or None when none answers. Not
    verified: only for leaving a pid out of those signalled (install/app_processes.py)."""
    try:
        channel, _peer = connect(address_for(paths))
    except ChannelUnavailable:
        return None
    try:
        welcome = _say_hello(channel)
        return Welcome.from_ack(welcome).tray_pid if isinstance(welcome, Ack) else None
    except (EOFError, OSError, ProtocolError, BadValue):
        return None
    finally:
        channel.close()


def _answer(received: dict[str, Any] | None) -> Ack | ErrorReply | None:
    """An answer from the tray, checked; None for anything else (a push, or a malformed message)."""
    if received is None:
        return None
    try:
        message = decode(received, FROM_TRAY)
    except BadValue:
        return None
    return message if isinstance(message, (Ack, ErrorReply)) else None


def current_tray_state(paths: AppPaths) -> dict[str, Any] | None:
    """The running tray's settings (the truth while it runs), or None when no tray answers."""
    try:
        reply = ask_tray(paths, "state", wait_s=HELLO_TIMEOUT_S)
    except (NoTray, TrayRefused):
        return None
    state = json.loads(str(reply.get("message") or "{}"))
    return state if isinstance(state, dict) else None


NO_TRAY_TO_CONFIRM = N_(
    "Cowork Terminal (the app) is not running, so nobody can confirm this and nothing changed. Start the "
    "app (run `cowork-terminal`), then run this again: the app will ask you to confirm it with a click."
)
ASKED_NOTE = N_("Cowork Terminal shows a window asking you to confirm; nothing changes until you click there.")
WRITTEN_DIRECTLY = N_(
    "The program at Cowork Terminal's address could not be verified as the app, so this was written "
    "directly where the servers read it (and sent to that program as well)."
)
NOT_WRITTEN_DIRECTLY = N_(
    "{problem} This was sent to the program at Cowork Terminal's address as well, but that program "
    "could not be verified as the app, so it may not have taken effect. It answered: {answer}"
)


def request_change(
    paths: AppPaths,
    op: str,
    *,
    without_tray: Callable[[Journal], object] | None,
    announce: Callable[[str], None] | None = None,
    apply_here_too: bool = False,
    **fields: Any,
) -> str:
    """The CLI's way to change a control: the tray decides (at once for a tightening, after the
    user's click for a loosening). With no tray, `without_tray` applies a tightening to the journal
    (headless servers read it there); a loosening (`without_tray` None) is refused. A tightening
    sent to a program at the tray's address that could not be verified is applied so as well: it
    may be a look-alike that answers and does nothing. `apply_here_too` (the CLI's pause and stop):
    applied so also after a verified tray answered, where this process can write; a check can be
    passed by a look-alike (red team 13: one a command left swallowed the user's pause), and a
    tightening may come from anywhere. `without_tray` must then write nothing the tray already did
    (the tray would report another program's change); its failure leaves the tray's answer."""
    if announce is not None and without_tray is None:
        announce(_(ASKED_NOTE))
    unverified: list[str] = []
    answer: str | None = None
    # Where this process cannot write (a command's container, where the real tray cannot be verified
    # either) the peer alone can apply it: its answer is what happened.
    writable = opening.can_write(paths.data_dir)
    try:
        quick = HELLO_TIMEOUT_S if writable else ANSWER_WAIT_S
        reply = _ask(
            paths,
            op,
            fields,
            wait_s=ANSWER_WAIT_S,
            unverified=unverified if without_tray is not None else None,
            unverified_wait_s=quick,
        )
        answer = str(reply.get("message") or _("Done."))
    except NoTray:
        if without_tray is None:
            raise NobodyToConfirm(_(NO_TRAY_TO_CONFIRM)) from None
    except TrayRefused:
        if not unverified:
            raise
    if answer is not None and not unverified and writable and apply_here_too and without_tray is not None:
        with contextlib.suppress(CoworkError, OSError, sqlite3.Error), Journal(paths) as journal:
            without_tray(journal)  # failing, the verified tray's answer stands
    if answer is not None and (not unverified or not writable):
        return answer
    assert without_tray is not None  # no tray, or an unverified one: only a tightening gets here
    try:
        with Journal(paths) as journal:
            done = str(without_tray(journal) or "")
    except (CoworkError, OSError, sqlite3.Error) as problem:
        if answer is None:
            raise
        words = problem.for_person() if isinstance(problem, CoworkError) else str(problem)
        told = visible(answer[:UNVERIFIED_ANSWER_SHOWN], keep="")
        raise NotVerified(
            _(NOT_WRITTEN_DIRECTLY).format(problem=words, answer=told), getattr(problem, "exit_code", 1)
        ) from problem
    if not unverified:
        return done
    return "\n".join(part for part in (done, _(WRITTEN_DIRECTLY)) if part)
