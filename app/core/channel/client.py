"""Asking the running tray from another process (the CLI, a window the user opened by hand).

Tightening requests take effect at once; loosening ones wait for the user's click in a window the
tray shows, so the caller waits up to ANSWER_WAIT_S for the answer. The tray is checked like a
server checks it: a program squatting on the tray's address is not told anything.
"""

from __future__ import annotations

import itertools
import json
import os
import time
from collections.abc import Callable
from typing import Any

from app.core.channel.peer import own_facts, tray_refusal
from app.core.channel.protocol import FROM_TRAY, Ack, BadValue, ErrorReply, Hello, Request, decode, encode
from app.core.channel.transport import ChannelUnavailable, address_for, connect
from app.core.channel.wire import ProtocolError
from app.core.errors import CoworkError
from app.core.i18n import N_, _
from app.core.i18n.formats import format_number
from app.core.journal.store import Journal
from app.core.paths import AppPaths

HELLO_TIMEOUT_S = 2.0
ANSWER_WAIT_S = 120.0  # the user reads the question and clicks


class TrayRefused(CoworkError):
    """The tray answered no (the user said no, or the request is not allowed from here)."""


class NoTray(CoworkError):
    """No genuine tray could be reached."""


class NobodyToConfirm(TrayRefused):
    """A loosening asked with no tray running: nothing changed (each caller words what to do)."""


_seq = itertools.count(1)
# Sent even to a tray that cannot be verified: they tell nothing and loosen nothing, and from inside a
# command's container the real tray cannot be verified at all (its pid is not visible there).
UNVERIFIED_OPS = frozenset({"pause", "stop"})


def ask_tray(paths: AppPaths, op: str, *, wait_s: float = ANSWER_WAIT_S, **fields: Any) -> dict[str, Any]:
    """Send one request to the tray and return its answer; NoTray or TrayRefused otherwise."""
    try:
        channel, peer = connect(address_for(paths))
    except ChannelUnavailable as exc:
        raise NoTray(str(exc)) from None
    try:
        channel.send(encode(Hello("cli", os.getpid())))
        welcome = _answer(channel.receive(HELLO_TIMEOUT_S))
        if not isinstance(welcome, Ack):
            raise NoTray(_("the program at Cowork Terminal's address did not answer as the app does"))
        refusal = tray_refusal(peer, own_facts(os.path.realpath(paths.data_dir)), welcome.fields.get("data_dir"))
        if refusal and op not in UNVERIFIED_OPS:
            raise NoTray(_("not asking the program at Cowork Terminal's address: {why}").format(why=refusal))
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


def request_change(
    paths: AppPaths,
    op: str,
    *,
    without_tray: Callable[[Journal], object] | None,
    announce: Callable[[str], None] | None = None,
    **fields: Any,
) -> str:
    """The CLI's way to change a control: the tray decides (at once for a tightening, after the
    user's click for a loosening). With no tray, `without_tray` applies a tightening to the journal
    (headless servers read it there); a loosening (`without_tray` None) is refused."""
    if announce is not None and without_tray is None:
        announce(_(ASKED_NOTE))
    try:
        reply = ask_tray(paths, op, **fields)
    except NoTray:
        if without_tray is None:
            raise NobodyToConfirm(_(NO_TRAY_TO_CONFIRM)) from None
        with Journal(paths) as journal:
            return str(without_tray(journal) or "")
    return str(reply.get("message") or _("Done."))
