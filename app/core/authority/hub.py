"""The tray's end of the channel: the user's authority over every server, and the journal's writer.

While a tray runs it alone writes the journal. Servers send their rows here and start a command
only after the row is written; the hub pushes pause, Stop, the user's decisions and settings to
them as messages. Nothing that controls a command is read back from a file: the journal is the
record, the hub's memory is the authority.

Threads: one accepts; each connection has a reader (requests, answered in order) and a writer fed
by a queue, so a peer that stops reading never blocks the hub. Journal writes share one
connection under one lock: a change of `PRAGMA data_version` on it can then only mean that
another program wrote the file, which the tray reports.

The hub knows nothing of windows: the tray passes it callbacks (notify, ask the user, show holds).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core import data_folder, settings
from app.core.authority.no_streak import NoStreak
from app.core.authority.rule_book import RuleBook
from app.core.authority.state import DEFAULTS, ControlState, loosened, strictest, with_changes
from app.core.channel.peer import OwnFacts, PeerFacts, client_refusal, from_container, own_facts
from app.core.channel.protocol import (
    BadValue,
    BeginRow,
    ClientName,
    DecisionPush,
    Finish,
    Hello,
    IdRequest,
    Pin,
    decode_request,
    optional_text,
    whole,
)
from app.core.channel.transport import Accepted, Listener, address_for
from app.core.channel.wire import ProtocolError
from app.core.claude.names import friendly_client_name
from app.core.data_folder import DataFolderError, is_corrupt
from app.core.i18n import N_, _, ngettext
from app.core.journal import pause_file
from app.core.journal.store import JOURNAL_REPLACED_SETTING, Journal, Status, damage_on_disk
from app.core.messages import CONFIRMED_DECIDED_BY, REQUEST_DECIDED_BY
from app.core.paths import AppPaths, protected_paths
from app.core.policy.approval import HOLD_LIFETIME_S, HOLD_UNSEEN_MAX_S, MODE_SETTING, WINDOW_SETTING
from app.core.policy.direction import KNOWN_OPS, LOOSEN, REFUSE, classify_request
from app.core.policy.plain_words import held_reason_for_person
from app.core.policy.rules import Rule
from app.core.policy.tool_sets import TOOLS_SETTING

log = logging.getLogger(__name__)

WRITE_BUSY_TIMEOUT_S = 2.0  # a journal locked by another program: refuse, never hang the hub
OUTBOX_LIMIT = 1000  # messages queued for one peer that does not read: then it is dropped
MAX_HOLDS_PER_PEER = 5  # a server (or a program posing as one) cannot bury the user in questions
ASK_COOLDOWN_S = 10.0  # after the user says No to a request, the same request is refused at once
FOREIGN_WRITE_NOTICE_GAP_S = 60.0
DAMAGE_PROBE_EVERY_S = 1.0  # a journal damaged in place is found within this long, even with no write
CLOSING_REASON = "Cowork Terminal (the app) stopped"
# Why the journal could not be written: English in a server's answer (the model reads it), marked
# for the user's notice.
JOURNAL_LOCKED = N_("the activity log is locked by another program")
LIVE_OUTPUT_MAX_CHARS = 32 * 1024  # per stream: the journal keeps a preview, not the whole output
JOURNAL_DISK_FULL = N_("the disk that holds the activity log is full")
JOURNAL_NOT_WRITTEN = N_("the activity log cannot be written ({error})")
JOURNAL_DAMAGED = "the activity log was damaged ({error}), so a new one was started"  # English: servers pass it on
PREVIEW_FIELDS = ("stdout", "stderr")
ANCESTRY_DEPTH = 64
CONTAINER_OPS = frozenset({"hello", "pause", "stop"})  # all a peer inside a command container may ask
# English: only a command the agent ran (or what it started) reads it.
CONTAINED_REFUSAL = (
    "Refused: this request comes from inside a command's container (a command the AI agent ran, or "
    "something it started). From there only pause and stop are accepted; ask the user to do this in "
    "the Cowork Terminal app."
)


@dataclass
class HeldCommand:
    """A command waiting for the user, as its server described it to the hub (never from the file)."""

    command_id: int
    command: str
    cwd: str | None
    env_keys: list[str]
    tool: str
    reasons: str
    client: str
    expires_at: float
    digest: str
    peer: Peer
    explanation: str | None = None
    pin: Pin | None = None  # what runs: the real folder, the scripts' content, the environment
    seen_at: float | None = None  # when the user could first see it: its clock starts then

    @property
    def folder(self) -> str | None:
        """The folder the command runs in, resolved (what the user is shown)."""
        return self.pin.folder if self.pin is not None else self.cwd

    def env_shown(self) -> list[str]:
        """The environment as the user sees it: NAME=value for what changes which program runs."""
        shown = dict(self.pin.env_shown) if self.pin is not None else {}
        return [f"{key}={shown[key]}" if key in shown else key for key in self.env_keys]

    def to_window(self) -> dict[str, Any]:
        return {
            "id": self.command_id, "command": self.command, "cwd": self.cwd, "env_keys": self.env_keys,
            "tool": self.tool, "reasons": self.reasons, "client": self.client, "expires_at": self.expires_at,
            "explanation": self.explanation, "seen": self.seen_at is not None,
            "folder": self.folder, "env_shown": self.env_shown(),
        }  # fmt: skip


@dataclass
class Question:
    """A loosening asked for by a peer (the CLI), waiting for the user's click in a confirm window."""

    key: str
    text: str
    allow_label: str
    deny_label: str
    apply: Callable[[], str]
    waiting: list[tuple[Peer, int]] = field(default_factory=list)  # who to answer, with their seq
    yours: bool = False  # the person asked it by a click in the menu (Quit): no "if you did not ask" warning


class Peer:
    """One connection: a server, the CLI, or something pretending; all untrusted until proven."""

    def __init__(self, hub: Hub, accepted: Accepted) -> None:
        self.hub = hub
        self.channel = accepted.channel
        self.facts: PeerFacts = accepted.peer
        self.role: str | None = None
        self.server_id: int | None = None
        self.registration: dict[str, Any] = {}  # what its row was made from, to make it again
        self.commands: set[int] = set()
        self.waiting: set[int] = set()  # held for the user, not running: Quit does not count them
        self.remembered: ControlState | None = None
        self.ended = False
        self._outbox: queue.Queue[dict[str, Any] | None] = queue.Queue(OUTBOX_LIMIT)

    @property
    def label(self) -> str:
        return f"{self.role or 'peer'} pid {self.facts.pid}"

    def push(self, message: dict[str, Any]) -> None:
        try:
            self._outbox.put_nowait(message)
        except queue.Full:
            log.warning("%s does not read its messages: disconnecting it", self.label)
            self.channel.close()

    def answer(self, message: dict[str, Any]) -> None:
        """An answer to the request just read, sent from the reader's own thread: the caller waits
        for it (a server starts its command only then), so no hop through the outbox. A peer that
        stops reading its answers blocks only its own reader, for at most the send timeout."""
        try:
            self.channel.send(message)
        except (OSError, ProtocolError) as exc:
            log.info("%s: answer failed (%s); closing", self.label, exc)
            self.channel.close()

    def write_loop(self) -> None:
        while True:
            message = self._outbox.get()
            if message is None or self.channel.closed:
                return
            try:
                self.channel.send(message)
            except (OSError, ProtocolError) as exc:
                log.info("%s: send failed (%s); closing", self.label, exc)
                self.channel.close()
                return

    def stop_writing(self) -> None:
        with contextlib.suppress(queue.Full):
            self._outbox.put_nowait(None)


class RequestError(Exception):
    """A request the hub answers with an error message (the peer's problem, not the hub's)."""


class Hub:
    """Everything the tray decides, reachable over the channel."""

    def __init__(
        self,
        paths: AppPaths,
        *,
        notify: Callable[[str, str], None] = lambda _t, _m: None,
        on_change: Callable[[], None] = lambda: None,
        ask_user: Callable[[Question], None] | None = None,
        on_holds: Callable[[], None] = lambda: None,
        rule_for_hold: Callable[[HeldCommand], int | None] | None = None,  # the user's rule that allows it
        open_log: Callable[[], None] = lambda: None,
        quit_app: Callable[[], None] = lambda: None,
    ) -> None:
        self.paths = data_folder.ensure(paths)
        self.real_data_dir = os.path.realpath(paths.data_dir)
        self.own: OwnFacts = own_facts(self.real_data_dir)
        self.notify = notify
        self.on_change = on_change
        self.ask_user = ask_user
        self.on_holds = on_holds
        self.rule_for_hold = rule_for_hold
        self.open_log = open_log
        self.quit_app = quit_app
        self.lock = threading.RLock()
        self.journal = self._open_journal()
        self.state = self._stored_state()
        self.rule_book = RuleBook(self.journal)  # the rules in force live here; the file is their copy
        self.peers: list[Peer] = []
        self.holds: dict[int, HeldCommand] = {}
        self.paused_by: str | None = None  # who set the pause in force (set_paused's `by`)
        self.questions: dict[str, Question] = {}
        self._refused_at: dict[str, float] = {}
        self._nos = NoStreak()  # a few No's in a row: questions stop for some minutes
        self._listener: Listener | None = None
        self._threads: list[threading.Thread] = []
        self._closing = False
        self._last_foreign_notice = 0.0
        self._problem_told: str | None = None
        self._next_damage_probe = 0.0

    # -- start and stop -----------------------------------------------------------------------

    def _open_journal(self) -> Journal:
        journal = Journal(self.paths, check_same_thread=False, busy_timeout_s=WRITE_BUSY_TIMEOUT_S)
        self._journal_inode = _inode(self.paths.journal)
        # Another program's commit moves SQLite's data_version, which our own writes never do: it is
        # never reset by them. The pause file is also written by our own pause: seen after each write.
        self._seen_commits = journal.others_commits()
        self._seen_pause_stamp = pause_file.stamp(self.paths.pause_file)
        self.writes = getattr(self, "writes", 0)
        return journal

    def _stored_state(self) -> ControlState:
        journal = self.journal
        return ControlState.from_wire(
            {
                "paused": bool(journal.get_setting("paused", False)),
                "approval_mode": journal.get_setting(MODE_SETTING, DEFAULTS.approval_mode),
                "approval_window_s": journal.get_setting(WINDOW_SETTING, DEFAULTS.approval_window_s),
                "tools": journal.get_setting(TOOLS_SETTING, DEFAULTS.tools),
                "container": journal.get_setting(settings.CONTAINER, DEFAULTS.container),
            }
        )

    def looser_than_default(self) -> list[str]:
        """Settings the tray starts with that ask less than a fresh install: the user hears of them."""
        return loosened(DEFAULTS, self.state)

    def start(self) -> None:
        """Listen; raises AddressTaken when another process holds the tray's address."""
        self._listener = Listener(address_for(self.paths))
        self._spawn("tray-hub-accept", self._accept_loop)

    def close(self, reason: str = CLOSING_REASON) -> None:
        """Tell every server the app stops (they end what runs), then close everything."""
        self._closing = True
        for peer in list(self.peers):
            peer.push({"op": "closing", "reason": reason})
            peer.stop_writing()
        deadline = time.monotonic() + 1.0
        for thread in self._threads:
            if thread.name.startswith("tray-hub-send"):
                thread.join(max(0.0, deadline - time.monotonic()))
        if self._listener is not None:
            self._listener.close()
        for peer in list(self.peers):
            peer.channel.close()
        with self.lock:
            self.journal.close()

    def _spawn(self, name: str, target: Callable[..., None], *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)
        thread.start()
        self._threads = [t for t in self._threads if t.is_alive()] + [thread]

    def _accept_loop(self) -> None:
        assert self._listener is not None
        while not self._closing:
            try:
                accepted = self._listener.accept()
            except OSError:
                if self._closing:
                    return
                log.exception("the hub could not accept a connection")
                time.sleep(0.1)
                continue
            refusal = client_refusal(accepted.peer, self.own)
            if refusal:
                log.warning("refused a connection: %s", refusal)
                accepted.channel.close()
                continue
            peer = Peer(self, accepted)
            with self.lock:
                self.peers.append(peer)
            self._spawn(f"tray-hub-send-{accepted.peer.pid}", peer.write_loop)
            self._spawn(f"tray-hub-read-{accepted.peer.pid}", self._read_loop, peer)

    def _read_loop(self, peer: Peer) -> None:
        try:
            while not self._closing:
                message = peer.channel.receive()
                if message is None:
                    continue
                self._handle(peer, message)
        except (EOFError, OSError):
            pass
        except ProtocolError as exc:
            log.warning("%s sent a bad message (%s): disconnected", peer.label, exc)
        except Exception:  # the top of a thread: log it; the peer is dropped, the hub lives on
            log.exception("handling a message from %s failed", peer.label)
        finally:
            peer.channel.close()
            peer.stop_writing()
            self._forget(peer)

    def _forget(self, peer: Peer) -> None:
        with self.lock:
            if peer in self.peers:
                self.peers.remove(peer)
            gone = [i for i, hold in self.holds.items() if hold.peer is peer]
            for command_id in gone:
                del self.holds[command_id]
            for question in self.questions.values():
                question.waiting = [(p, s) for p, s in question.waiting if p is not peer]
        if gone:
            self.on_holds()
        self.on_change()

    # -- requests -------------------------------------------------------------------------------

    def _handle(self, peer: Peer, message: dict[str, Any]) -> None:
        op = message["op"]
        seq = message.get("seq")
        if peer.role is None and op != "hello":
            raise ProtocolError("the first message must be hello")
        if op not in CONTAINER_OPS and from_container(peer.facts, self.own):
            # A command (or anything it started, detached or not) cannot leave its container: from
            # there only tightening that needs no window; no window is shown, nothing else is done.
            log.warning("refused %r from %s: it runs inside a command's container", op, peer.label)
            peer.answer({"op": "error", "seq": seq, "message": CONTAINED_REFUSAL})
            return
        try:
            if op == "hello":
                reply = self._hello(peer, message)
            elif peer.role == "server" and op in SERVER_OPS:
                reply = SERVER_OPS[op](self, peer, message)
            elif op in KNOWN_OPS:
                try:  # every value checked before any comparison (a NaN would pass for a tightening)
                    typed = decode_request(op, message)
                except BadValue as bad:
                    raise RequestError(_("Refused: {problem}. Nothing changed.").format(problem=bad)) from None
                reply = self._request(peer, op, message, seq, typed)
                if reply is None:  # answered later, after the user's click
                    return
            else:
                raise RequestError(f"unknown request {op!r}")
        except RequestError as problem:
            peer.answer({"op": "error", "seq": seq, "message": str(problem)})
            return
        except (ValueError, TypeError, KeyError) as exc:  # a value no server of ours sends
            raise ProtocolError(f"malformed {op!r}: {exc}") from None
        except sqlite3.OperationalError as exc:
            english, person = self._journal_problem(exc)
            # A server passes the answer on to the model (English); the CLI prints it to a person.
            peer.answer({"op": "error", "seq": seq, "message": person if peer.role == "cli" else english})
            return
        except sqlite3.DatabaseError as exc:  # damage SQLite found only now, as it read a page
            if not is_corrupt(exc):
                raise
            with self.lock:
                self._reopen_journal()
            peer.answer({"op": "error", "seq": seq, "message": JOURNAL_DAMAGED.format(error=exc)})
            return
        peer.answer({"op": "ack", "seq": seq, **reply})

    def _journal_problem(self, exc: sqlite3.OperationalError) -> tuple[str, str]:
        """Why a write failed: in English (what a server tells the model) and in the user's words;
        the user is told once, until a write succeeds again."""
        text = str(exc)
        if isinstance(exc, DataFolderError):
            english, why = text, exc.for_person()
        elif "locked" in text or "busy" in text:
            english = JOURNAL_LOCKED
            why = _(JOURNAL_LOCKED)
        elif "full" in text:
            english = JOURNAL_DISK_FULL
            why = _(JOURNAL_DISK_FULL)
        else:
            english = JOURNAL_NOT_WRITTEN.format(error=text)
            why = _(JOURNAL_NOT_WRITTEN).format(error=text)
        log.warning("journal write failed: %s", text)
        if self._problem_told != why:  # once, until a write succeeds again
            self._problem_told = why
            self.notify(_("Cowork Terminal cannot record commands"), _("Commands are refused: {why}.").format(why=why))
        return english, why

    def _hello(self, peer: Peer, message: dict[str, Any]) -> dict[str, Any]:
        if peer.role is not None:
            raise ProtocolError("hello twice")
        try:
            hello = Hello.from_wire(message)
        except BadValue as bad:
            raise ProtocolError(str(bad)) from None
        peer.role = hello.role
        reply: dict[str, Any] = {"data_dir": self.real_data_dir, "tray_pid": os.getpid()}
        if hello.role == "server":
            if hello.remembered is not None:
                peer.remembered = ControlState.from_wire(dict(hello.remembered))
                self._merge_remembered(peer.remembered)
            with self.lock:
                server_id = hello.server_id
                peer.registration = {"headless": hello.headless, "lock_key": hello.lock_key}
                if server_id is not None and self.journal.live_server_pid(server_id) == peer.facts.pid:
                    peer.server_id = server_id
                else:
                    # A full disk must not turn the tray into "a program that is not Cowork Terminal":
                    # the server is welcomed, and registered at its first command (which the disk
                    # refuses in words until there is room).
                    with contextlib.suppress(sqlite3.OperationalError):
                        peer.server_id = self._register(peer)
                self._wrote()
            reply["server_id"] = peer.server_id
            self.on_change()
        reply["state"] = self.state.to_wire()
        return reply

    def _merge_remembered(self, remembered: ControlState) -> None:
        """A server that outlived a tray says what it was last told: a new tray never loosens it."""
        merged = strictest(self.state, remembered)
        if merged != self.state:
            log.info("a server remembered stricter settings than the stored ones: %s", merged)
            self._set_state(merged)

    # -- what servers send ------------------------------------------------------------------------

    def _begin(self, peer: Peer, message: dict[str, Any]) -> dict[str, Any]:
        row = BeginRow.from_wire(message.get("row"))  # BadValue: a malformed row, the peer is dropped
        status = row.status
        with self.lock:
            if status in (Status.RUNNING, Status.WAITING) and self.state.paused:
                raise RequestError("host access is paused")
            if status is Status.WAITING and sum(h.peer is peer for h in self.holds.values()) >= MAX_HOLDS_PER_PEER:
                raise RequestError(f"{MAX_HOLDS_PER_PEER} commands from this server already wait for the user")
            if peer.server_id is None:  # its row was not written at its hello (a full disk)
                peer.server_id = self._register(peer)

            def write_row() -> int:
                return self.journal.begin_command(
                    command=row.command, cwd=row.cwd, env_keys=list(row.env_keys), timeout_ms=row.timeout_ms,
                    server_id=peer.server_id, server_pid=peer.facts.pid, client_name=row.client_name,
                    client_version=row.client_version, tool=row.tool, tier=row.tier, status=status,
                    reason=row.reason, confirmation_id=row.confirmation_id,
                    hold_expires_at=time.time() + HOLD_UNSEEN_MAX_S if status is Status.WAITING else None,
                )  # fmt: skip

            try:
                command_id = write_row()
            except sqlite3.IntegrityError:  # its server's row was deleted by another program: made again
                log.warning("the row of %s vanished from the journal: registering it again", peer.label)
                peer.server_id = self._register(peer)
                command_id = write_row()
            self._wrote()
            if status.is_active:
                peer.commands.add(command_id)
            if status is Status.WAITING:
                peer.waiting.add(command_id)
            hold = None
            if status is Status.WAITING:
                hold = HeldCommand(
                    command_id, row.command, row.cwd, list(row.env_keys), row.tool, row.reason or "",
                    row.client_name or _("An AI agent"), time.time() + HOLD_UNSEEN_MAX_S, row.digest(), peer,
                    row.explanation, row.pin,
                )  # fmt: skip
                self.holds[command_id] = hold
        if hold is not None:
            rule = self.rule_for_hold(hold) if self.rule_for_hold else None
            if rule is not None:
                self.decide(command_id, allowed=True, by=f"rule {rule}", rule_id=rule)
            else:
                self.on_holds()
            self.on_change()
        # Plain rows wake nobody: the tray's icon follows them at its next poll (a quarter second),
        # and waking its monitor for each row would make every call wait for the journal's lock.
        return {"id": command_id}

    def _started(self, peer: Peer, message: dict[str, Any]) -> dict[str, Any]:
        command_id = self._owned(peer, message)
        with self.lock:
            if self.state.paused:
                raise RequestError("host access is paused")
            self.journal.mark_started(command_id)
            self._wrote()
            peer.waiting.discard(command_id)
        return {}

    def _finish(self, peer: Peer, message: dict[str, Any]) -> dict[str, Any]:
        command_id = self._owned(peer, message)
        outcome = Finish.from_wire(message).outcome  # BadValue: a malformed end, the peer is dropped
        with self.lock:
            self.journal.finish_command(command_id, outcome)
            self._wrote()
            peer.commands.discard(command_id)
            peer.waiting.discard(command_id)
            was_held = self.holds.pop(command_id, None) is not None
        if was_held:
            self.on_holds()
            self.on_change()
        return {}

    def _progress(self, peer: Peer, message: dict[str, Any]) -> dict[str, Any]:
        """A running command's output so far (a server sends it at most once a second)."""
        command_id = self._owned(peer, message)
        # Checked at the edge like every other message (BadValue: the peer is dropped).
        stdout, stderr = (optional_text(message.get(key), key) or "" for key in ("stdout", "stderr"))
        out_bytes, err_bytes = (whole(message.get(key, 0), key) for key in ("stdout_bytes", "stderr_bytes"))
        with self.lock:
            self.journal.set_live_output(
                command_id, stdout[:LIVE_OUTPUT_MAX_CHARS].encode(), stderr[:LIVE_OUTPUT_MAX_CHARS].encode(),
                out_bytes, err_bytes,
            )  # fmt: skip
            self._wrote()
        return {}

    def _register(self, peer: Peer) -> int:
        made = peer.registration
        pid = peer.facts.pid or 0
        server_id = self.journal.register_server(pid, headless=made["headless"], lock_key=made["lock_key"])
        if "client" in made:  # a journal started anew under live servers
            self.journal.set_server_client(server_id, *made["client"])
        return server_id

    def _client(self, peer: Peer, message: dict[str, Any]) -> dict[str, Any]:
        if peer.server_id is not None:
            with self.lock:
                named = ClientName.from_wire(message)
                client = (named.name, named.version)
                self.journal.set_server_client(peer.server_id, *client)
                peer.registration["client"] = client
                self._wrote()
            self.on_change()
        return {}

    def _end(self, peer: Peer, message: dict[str, Any]) -> dict[str, Any]:
        if peer.server_id is not None and not peer.ended:
            peer.ended = True
            with self.lock:
                self.journal.end_server(peer.server_id, state="exited")
                self._wrote()
            self.on_change()
        return {}

    def _owned(self, peer: Peer, message: dict[str, Any]) -> int:
        command_id = IdRequest.from_wire(message).id  # BadValue: not an id, the peer is dropped
        if command_id not in peer.commands:
            raise RequestError(f"command {command_id!r} is not one of this server's")
        return command_id

    # -- what anyone may ask --------------------------------------------------------------------

    def _request(self, peer: Peer, op: str, message: dict[str, Any], seq: object, typed: Any) -> dict[str, Any] | None:
        kind = classify_request(op, message, self.state)
        if kind == REFUSE:
            raise RequestError(_("Refused: a value is out of range. Nothing changed."))
        if kind != LOOSEN:
            return {"message": self._tighten(op, typed)}
        return self._ask(peer, op, typed, seq)

    def _tighten(self, op: str, typed: Any) -> str:
        if op == "state":
            return json.dumps(self.state.to_wire())
        if op == "holds":  # what the user is asked, exactly as the servers described it
            return json.dumps([hold.to_window() for hold in self.pending_holds()])
        if op == "pause":
            self.set_paused(True, by="a request")
            return _("Host access is PAUSED: new commands are refused.")
        if op == "stop":
            return self.stop(typed.id)
        if op == "deny":
            command_id = typed.id
            if not self.decide(command_id, allowed=False, by=REQUEST_DECIDED_BY):
                raise RequestError(_("Command #{id} is not waiting for approval.").format(id=command_id))
            return _("Denied command #{id}.").format(id=command_id)
        if op == "remove_rule":  # one of the user's rules (core/policy/rules.py): removing one asks more
            rule_id = typed.id
            if not self.remove_rule(rule_id):
                raise RequestError(_("There is no rule {number}.").format(number=rule_id))
            return _("Removed rule {number}.").format(number=rule_id)
        if op == "quit":
            self.quit_app()
            return _("Cowork Terminal is quitting.")
        if op == "output_budget":  # how much output the model reads: not a control
            from app.core.execution.output import parse_budget, set_output_budget

            try:
                budget = parse_budget(typed.budget)
            except ValueError as exc:
                raise RequestError(str(exc)) from None
            self.with_journal(lambda journal: set_output_budget(journal, budget))
            return _("Output budget changed.")
        if op == "open_log":
            self.open_log()
            return _("Opened the activity log.")
        if op == "settings":
            self._set_state(with_changes(self.state, **typed.changes))
            return _("Settings changed.")
        raise RequestError(f"unknown request {op!r}")

    def _ask(self, peer: Peer, op: str, typed: Any, seq: object) -> dict[str, Any] | None:
        if self.ask_user is None:
            raise RequestError(_("Cowork Terminal cannot show a window to ask you, so nothing changed."))
        if peer.facts.run_mark or self._descends_from_server(peer.facts.pid):
            raise RequestError(
                _(
                    "This request comes from a command an AI agent runs, so it was refused: only you can "
                    "loosen control, from the Cowork Terminal window or menu."
                )
            )
        quiet_s = self._nos.quiet_left_s()
        if quiet_s:
            raise RequestError(
                _(
                    "You said no to several requests in a row, so for {minutes} min Cowork Terminal asks "
                    "nothing more and nothing changed. Use the Cowork Terminal window or menu instead."
                ).format(minutes=max(1, round(quiet_s / 60)))
            )
        question = self._question(op, typed)
        refused = self._refused_at.get(question.key, 0.0)
        if time.monotonic() - refused < ASK_COOLDOWN_S:
            raise RequestError(_("You said no to this a moment ago; nothing changed."))
        with self.lock:
            existing = self.questions.get(question.key)
            if existing is not None:  # the same request again: one window answers them all
                existing.waiting.append((peer, seq))  # type: ignore[arg-type]
                return None
            question.waiting.append((peer, seq))  # type: ignore[arg-type]
            self.questions[question.key] = question
        self.ask_user(question)
        return None

    def _question(self, op: str, typed: Any) -> Question:
        if op == "resume":
            return Question(
                "resume", _("A program on this computer asks to resume host access, so that Claude can run "
                            "commands again."), _("Resume"), _("Keep paused"),
                lambda: self.set_paused(False, by=CONFIRMED_DECIDED_BY) or _("Host access is ON."),
            )  # fmt: skip
        if op == "approve":
            command_id = typed.id
            hold = self.holds.get(command_id)
            if hold is None:
                raise RequestError(_("Command #{id} is not waiting for approval.").format(id=command_id))
            # The server's words are English (the model read them): said again from the command.
            why = held_reason_for_person(hold.reasons, hold.command, hold.cwd, protected_paths(self.paths))
            return Question(
                f"approve-{command_id}",
                _("A program on this computer asks to allow this command from {client}:").format(
                    client=friendly_client_name(hold.client)
                )
                + f"\n\n{hold.command}\n\n"
                + _("In folder: {folder}. Why it waits: {reasons}").format(
                    folder=hold.folder or _("the shell session"), reasons=why or hold.reasons
                ),
                _("Allow"), _("Deny"),
                lambda: _("Allowed.") if self.decide(command_id, allowed=True, by=CONFIRMED_DECIDED_BY)
                else _("It no longer waits."),
            )  # fmt: skip
        if op == "settings":
            wanted = with_changes(self.state, **typed.changes)
            words = describe_changes(self.state, wanted)
            return Question(
                "settings-" + json.dumps(wanted.to_wire(), sort_keys=True),
                _("A program on this computer asks to change Cowork Terminal's settings: {changes}.").format(
                    changes=words
                ),
                _("Change"),
                _("Keep as is"),
                lambda: self._set_state(wanted) or _("Settings changed."),
            )
        if op == "delete_data":  # `uninstall --data`: the CLI deletes the record only after this Yes
            return Question(
                "delete_data", _("A program on this computer asks to uninstall Cowork Terminal and delete "
                                 "its command history and logs."),
                _("Delete them"), _("Keep them"), lambda: _("You allowed deleting the history and logs."),
            )  # fmt: skip
        if op == "clear_history":
            return Question(
                "clear_history", _("A program on this computer asks to delete the activity log's history."),
                _("Delete history"), _("Keep it"),
                lambda: self._cleared(self.clear_history()),
            )  # fmt: skip
        raise RequestError(f"unknown request {op!r}")

    def answer(self, question: Question, yes: bool, *, why_not: str | None = None) -> None:
        """The user's click in the confirm window (called by the tray, for a window it started)."""
        with self.lock:
            self.questions.pop(question.key, None)
        if yes:
            self._nos.said_yes()
            text, ok = question.apply(), True
        elif why_not:
            text, ok = why_not, False
        else:
            self._refused_at[question.key] = time.monotonic()
            text, ok = _("You said no; nothing changed."), False
            if self._nos.said_no():
                minutes = max(1, round(self._nos.quiet_s / 60))
                self.notify(
                    _("Cowork Terminal stops asking for a while"),
                    _(
                        "You said no to several requests in a row. For {minutes} min, requests to loosen "
                        "control are refused without asking you."
                    ).format(minutes=minutes),
                )
        for peer, seq in question.waiting:
            peer.push(
                {"op": "ack", "seq": seq, "message": text, "done": ok}
                if ok
                else {"op": "error", "seq": seq, "message": text}
            )

    def _descends_from_server(self, pid: int | None) -> bool:
        servers = {p.facts.pid for p in self.peers if p.role == "server"}
        for _step in range(ANCESTRY_DEPTH):
            if pid is None or pid <= 1:
                return False
            if pid in servers:
                return True
            pid = _parent_pid(pid)
        return False

    # -- the user's controls (the tray's menu and windows call these) -----------------------------

    def set_paused(self, paused: bool, *, by: str = "user") -> None:
        log.info("host access %s (%s)", "paused" if paused else "resumed", by)
        self.paused_by = by if paused else None  # a timed pause ends only if it is still the one in force
        self._set_state(with_changes(self.state, paused=paused))

    def set_settings(self, **changes: Any) -> None:
        self._set_state(with_changes(self.state, **changes))

    def _set_state(self, state: ControlState) -> None:
        with self.lock:
            self.state = state
            try:
                for key, value in (
                    ("paused", state.paused),
                    (MODE_SETTING, state.approval_mode),
                    (WINDOW_SETTING, state.approval_window_s),
                    (TOOLS_SETTING, state.tools),
                    (settings.CONTAINER, state.container),
                ):
                    self.journal.set_setting(key, value)
                self._wrote()
            except sqlite3.OperationalError as exc:  # held in memory and pushed all the same
                log.warning("could not store the settings: %s", exc)
            peers = list(self.peers)
            if state.paused:
                held = list(self.holds)
        for peer in peers:
            peer.push({"op": "state", "state": state.to_wire()})
        if state.paused and held:
            with self.lock:
                for command_id in held:
                    self.holds.pop(command_id, None)
            self.on_holds()
        self.on_change()

    def decide(self, command_id: int, *, allowed: bool, by: str, rule_id: int | None = None) -> bool:
        """The user's answer to a held command (or a rule's): recorded, then pushed to its server."""
        with self.lock:
            hold = self.holds.get(command_id)
            if hold is None or hold.expires_at <= time.time():
                return False
            if allowed and self.state.paused:
                return False
            del self.holds[command_id]
            try:  # the record; the server obeys the push below even if the file cannot take it
                self.journal.decide(command_id, allowed=allowed, by=by, rule_id=rule_id)
                self._wrote()
            except sqlite3.OperationalError as exc:
                log.warning("could not record the decision on command %s: %s", command_id, exc)
        hold.peer.push(DecisionPush(command_id, allowed, by, hold.digest).to_wire())
        self.on_holds()
        self.on_change()
        return True

    def seen(self, command_id: int) -> None:
        """The user can see this held command now (the approval prompt shows it, or the menu lists it):
        its HOLD_LIFETIME_S start now, in the record and at its server, so nothing expires unseen.
        Only the tray's own prompt and menu call this."""
        with self.lock:
            hold = self.holds.get(command_id)
            if hold is None or hold.seen_at is not None:
                return
            hold.seen_at = time.time()
            hold.expires_at = hold.seen_at + HOLD_LIFETIME_S
            try:
                self.journal.set_hold_expiry(command_id, hold.expires_at)
                self._wrote()
            except sqlite3.OperationalError as exc:
                log.warning("could not record when command %s was shown: %s", command_id, exc)
        hold.peer.push({"op": "hold_clock", "id": command_id, "expires_at": hold.expires_at})
        self.on_change()

    def stop(self, command_id: int | None, by: str = "user") -> str:
        owner = next((p for p in self.peers if command_id in p.commands), None)
        if command_id in self.holds:
            self.decide(command_id, allowed=False, by=by)
            return _("Denied command #{id}.").format(id=command_id)
        with self.lock:
            asked = False
            with contextlib.suppress(sqlite3.OperationalError):
                asked = self.journal.request_stop(command_id or -1)  # a headless server reads it there
                self._wrote()
        if owner is None and not asked:
            raise RequestError(_("Command #{id} is not running.").format(id=command_id))
        if owner is not None:
            owner.push({"op": "stop", "id": command_id})
        self.on_change()
        return _("Asked the server running command #{id} to stop it.").format(id=command_id)

    @staticmethod
    def _cleared(count: int) -> str:
        return ngettext("Deleted {count} finished command.", "Deleted {count} finished commands.", count).format(
            count=count
        )

    def clear_history(self) -> int:
        with self.lock:
            deleted = self.journal.clear_history()
            self._wrote()
        self.on_change()
        return deleted

    # -- the user's rules (core/authority/rule_book.py): in memory, the file is their copy ----------

    def rules(self) -> list[Rule]:
        """The rules in force now: made by the user's click, or carried over from a previous run."""
        with self.lock:
            live = {str(p.server_id) for p in self.peers if p.role == "server" and p.server_id is not None}
            return self.rule_book.in_force(live)

    def rules_from_before(self) -> list[Rule]:
        """The rules read from the file at start (the user is told of them once)."""
        with self.lock:
            return self.rule_book.carried_over()

    def add_rule(self, kind: str, folder: str, scope: str, description: str, session: str | None = None) -> Rule:
        """A rule the user made with a click in the app's own window."""
        with self.lock:
            rule = self.rule_book.add(self.journal, kind, folder, scope, description, session)
            self._wrote()
        self.on_change()
        return rule

    def remove_rule(self, rule_id: int) -> bool:
        """Removing a rule asks more: from anyone. False when no such rule is in force."""
        with self.lock:
            try:
                known = self.rule_book.remove(self.journal, rule_id)
                self._wrote()
            except sqlite3.OperationalError as exc:  # gone from memory all the same
                log.warning("could not remove rule %s from the file: %s", rule_id, exc)
                known = True
        self.on_change()
        return known

    def pending_holds(self) -> list[HeldCommand]:
        with self.lock:
            now = time.time()
            return [h for h in sorted(self.holds.values(), key=lambda h: h.command_id) if h.expires_at > now]

    def running_count(self) -> int:
        """Commands that run now: a held one (answered or not, expired or not) runs nothing yet."""
        with self.lock:
            return sum(len(p.commands - p.waiting) for p in self.peers if p.role == "server")

    # -- housekeeping (the tray's monitor calls it every poll) ----------------------------------

    def tick(self) -> None:
        """Expire holds, and notice a journal changed or deleted under the tray."""
        now = time.time()
        with self.lock:
            expired = [i for i, h in self.holds.items() if h.expires_at <= now]
            for command_id in expired:
                del self.holds[command_id]
            if _inode(self.paths.journal) != self._journal_inode or self._damaged_in_place():
                self._reopen_journal()
                return
            commits, stamp = self.journal.others_commits(), pause_file.stamp(self.paths.pause_file)
            foreign = commits != self._seen_commits or stamp != self._seen_pause_stamp
            self._seen_commits, self._seen_pause_stamp = commits, stamp
        if expired:
            self.on_holds()
        if foreign and time.monotonic() - self._last_foreign_notice > FOREIGN_WRITE_NOTICE_GAP_S:
            self._last_foreign_notice = time.monotonic()
            log.warning("the journal was changed by another program")
            self.notify(
                _("The activity log was changed by another program"),
                _("Cowork Terminal did not make this change. Your settings and answers are unaffected."),
            )

    def _damaged_in_place(self) -> bool:
        """A journal overwritten where it is (same file, garbage pages): our own connection reads
        its cached pages and would not notice, so a fresh one looks, once a second."""
        if time.monotonic() < self._next_damage_probe:
            return False
        self._next_damage_probe = time.monotonic() + DAMAGE_PROBE_EVERY_S
        damage = damage_on_disk(self.paths.journal)
        if damage:
            log.warning("the journal at %s is damaged (%s)", self.paths.journal, damage)
        return damage is not None

    def _reopen_journal(self) -> None:
        log.warning("the journal at %s was deleted or replaced: starting a new one", self.paths.journal)
        with contextlib.suppress(sqlite3.Error):
            self.journal.close()
        data_folder.ensure(self.paths)
        self.journal = self._open_journal()
        self._set_state(self.state)  # the settings live on in memory: write them into the new file
        with self.lock, contextlib.suppress(sqlite3.OperationalError):
            self.rule_book.copy_to(self.journal)  # and so do the rules
        for peer in list(self.peers):  # servers that still run get their rows again, or nothing could be recorded
            if peer.role == "server" and peer.server_id is not None and not peer.ended:
                peer.server_id = self._register(peer)
        if self.journal.replaced is not None or self.journal.get_setting(JOURNAL_REPLACED_SETTING):
            return  # a damaged file, moved aside by us or by another process: the supervisor tells, with its path
        self.notify(
            _("The activity log was deleted"),
            _(
                "Another program deleted or replaced Cowork Terminal's activity log. A new one was started; "
                "your settings are unchanged."
            ),
        )

    def with_journal(self, work: Callable[[Journal], Any]) -> Any:
        """Run `work` on the hub's journal connection (the tray's only writer), under its lock; on a
        journal found damaged as it reads, once more on a new one."""
        with self.lock:
            try:
                result = work(self.journal)
            except sqlite3.DatabaseError as exc:
                if isinstance(exc, sqlite3.OperationalError) or not is_corrupt(exc):
                    raise
                self._reopen_journal()
                result = work(self.journal)
            self._wrote()
            return result

    def _wrote(self) -> None:
        """After each of our own writes (under the lock): the pause file we may have rewritten is not
        someone else's change. (Our commits do not move data_version: that one is never reset here.)"""
        self.writes += 1
        self._problem_told = None
        self._seen_pause_stamp = pause_file.stamp(self.paths.pause_file)


def describe_changes(before: ControlState, after: ControlState) -> str:
    from app.core.policy.approval import ApprovalMode

    words = []
    from app.core.i18n.formats import format_number

    if after.approval_mode != before.approval_mode:
        words.append(
            _("approvals from '{before}' to '{after}'").format(
                before=ApprovalMode(before.approval_mode).label, after=ApprovalMode(after.approval_mode).label
            )
        )
    if after.approval_window_s != before.approval_window_s:
        words.append(
            _("the approval wait from {before} s to {after} s").format(
                before=format_number(before.approval_window_s, None), after=format_number(after.approval_window_s, None)
            )
        )
    if after.tools != before.tools:
        words.append(_("the tools offered from '{before}' to '{after}'").format(before=before.tools, after=after.tools))
    if after.container != before.container:
        words.append(_("commands run in a protected container") if after.container else _("commands run unprotected"))
    return "; ".join(words) or _("no change")


def _inode(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _parent_pid(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    try:
        return int(stat.rsplit(")", 1)[1].split()[1])
    except (IndexError, ValueError):
        return None


SERVER_OPS: dict[str, Callable[[Hub, Peer, dict[str, Any]], dict[str, Any]]] = {
    "begin": Hub._begin,
    "started": Hub._started,
    "finish": Hub._finish,
    "progress": Hub._progress,
    "client": Hub._client,
    "end": Hub._end,
}
