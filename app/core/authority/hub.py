"""The tray's end of the channel: the user's authority over every server, and the journal's writer.

While a tray runs it alone writes the journal. Servers send their rows here and start a command
only after the row is written; the hub pushes pause, Stop, the user's decisions and settings to
them as messages. Nothing that controls a command is read back from a file: the journal is the
record, the hub's memory is the authority.

The hub is a facade over its parts, each with one job: `peers` (connections, their threads, which
handler a message goes to), `server_rows` (what servers send), `requests` (what anyone may ask),
`holds` (commands waiting for the user, and the rules that answer them), `questions` (confirm
windows and their words) and `record` (the journal connection). The tray calls only the public
methods below; it never touches the lock, the journal or the state directly. The hub knows nothing
of windows: the tray passes it callbacks (notify, ask the user, show holds).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from app.core import data_folder, settings
from app.core.authority import server_rows
from app.core.authority.connection import Peer
from app.core.authority.errors import RequestError
from app.core.authority.holds import MAX_HOLDS_PER_PEER, HeldCommand, Holds, rule_for
from app.core.authority.peers import Connections
from app.core.authority.questions import ASK_COOLDOWN_S, Question, Questions, describe_changes
from app.core.authority.record import CLOSING_REASON, UNWRITTEN_RETRY_S, WRITE_BUSY_TIMEOUT_S, Record
from app.core.authority.rule_book import RuleBook
from app.core.authority.state import DEFAULTS, ControlState, loosened, strictest, with_changes
from app.core.authority.supervisor import Notice, Snapshot, Supervisor
from app.core.channel.peer import OwnFacts, own_facts
from app.core.channel.protocol import DecisionPush, HoldClock, StatePush, StopPush
from app.core.channel.transport import address_for
from app.core.data_folder import is_corrupt
from app.core.execution import (
    PAUSE_BACKSTOP_S,
    end_what_a_pause_left,
    end_what_finished_commands_left,
    orphans,
    output,
    process_marks,
)
from app.core.execution.output import OutputBudget
from app.core.i18n import _
from app.core.journal.store import JOURNAL_REPLACED_SETTING, CommandRecord, Journal, ServerRecord
from app.core.messages import AGENT_STOP_BY
from app.core.paths import AppPaths, protected_paths
from app.core.policy.approval import HOLD_LIFETIME_S
from app.core.policy.rules import Rule

if TYPE_CHECKING:  # anyio loads with the command host, not with the tray's first import
    from app.core.authority.command_host import CommandHost

log = logging.getLogger(__name__)

T = TypeVar("T")
__all__ = [
    "ASK_COOLDOWN_S",
    "CLOSING_REASON",
    "MAX_HOLDS_PER_PEER",
    "WRITE_BUSY_TIMEOUT_S",
    "HeldCommand",
    "Hub",
    "Peer",
    "Question",
    "RequestError",
    "RuleNotMade",
    "describe_changes",
]


class RuleNotMade(Exception):
    """A session rule asked for a server the journal has no live row of (a renewed journal refused
    its row): stored, it would answer no server, while the person read that it was made."""


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
        open_log: Callable[[], None] = lambda: None,
        quit_app: Callable[[], None] = lambda: None,
    ) -> None:
        self.paths = data_folder.ensure(paths)
        self.real_data_dir = os.path.realpath(paths.data_dir)
        self.own: OwnFacts = own_facts(self.real_data_dir)
        self.notify = notify
        self.on_change = on_change
        self.on_holds = on_holds
        self.open_log = open_log
        self.quit_app = quit_app
        self.lock = threading.RLock()  # the hub's parts are called under it; the tray never takes it
        self._state_lock = threading.Lock()  # orders state changes and their pushes; never held over a write
        self.record = Record(self.paths, notify)
        self.state = self.record.stored_state()
        self.rule_book = RuleBook(self.record.journal)  # the rules in force live here; the file is their copy
        self.connections = Connections(self)
        self.holds = Holds()
        self.questions = Questions(self, ask_user)
        self.paused_by: str | None = None  # who set the pause in force (set_paused's `by`)
        # Each change from not paused to paused: a server's decision names the count it was made under
        # (`Begin.pauses`), and one made before the latest pause never runs after it (server_rows).
        self.pauses = 0
        self._told_of_pauses: weakref.WeakSet[Peer] = weakref.WeakSet()  # peers a pause was pushed to
        self._run_outside: set[str] = set()  # marks of commands started while the container was off
        self._backstops: list[threading.Timer] = []  # pauses' last words to come (`close` cancels them)
        self._closed = False
        # Runs the tool calls servers forward (issue 21); None: servers run their commands themselves.
        self.command_host: CommandHost | None = None

    # -- start and stop -----------------------------------------------------------------------

    def start(self) -> None:
        """Listen; raises AddressTaken when another process holds the tray's address."""
        self.connections.start(address_for(self.paths))

    def close(self, reason: str = CLOSING_REASON) -> None:
        """Tell every server the app stops (they end what runs), then close everything. A pause's
        backstop still to come goes too: closing ends what runs anyway, and a hub of the tests' that
        closed went on to end the next test's commands."""
        self.connections.close(reason)
        with self.lock:
            self._closed = True
            backstops, self._backstops = self._backstops, []
            self.record.close()
        for timer in backstops:
            timer.cancel()

    @property
    def peers(self) -> list[Peer]:
        """The peers connected now (a copy)."""
        return self.connections.snapshot()

    def forget(self, peer: Peer) -> None:
        """A peer went away: its holds go, its questions have nobody to answer."""
        if self.command_host is not None and peer.role == "server":
            self.command_host.peer_gone(peer)
        with self.lock:
            gone = self.holds.drop_peer(peer)
            self.questions.forget_peer(peer)
        if gone:
            self.on_holds()
        self.on_change()

    def server_pids(self) -> set[int | None]:
        return {p.facts.pid for p in self.connections.servers()}

    def register(self, peer: Peer) -> int:
        """Write a server's row (at its hello, or again in a new journal); its id. Under the lock."""
        made = peer.registration
        pid = peer.facts.pid or 0
        journal = self.record.journal
        server_id = journal.register_server(pid, headless=made["headless"], lock_key=made["lock_key"])
        if "client" in made:  # a journal started anew under live servers
            journal.set_server_client(server_id, *made["client"])
        return server_id

    # -- what the tray reads (its menu, icon and windows) -------------------------------------------

    @property
    def paused(self) -> bool:
        return self.state.paused

    @property
    def approval_mode(self) -> str:
        return self.state.approval_mode

    @property
    def container(self) -> bool:
        return self.state.container

    def data_version(self) -> tuple[int, int]:
        """Changes when anyone wrote the journal (another program's commit, or one of ours): the
        tray's views refresh when it moves."""
        with self.lock:
            return self.record.journal.data_version(), self.record.writes

    def recent_commands(self, limit: int) -> list[CommandRecord]:
        with self.lock:
            return self.record.journal.recent_commands(limit=limit)

    def get_setting(self, key: str, default: Any = None) -> Any:
        with self.lock:
            return self.record.journal.get_setting(key, default)

    def command(self, command_id: int) -> CommandRecord | None:
        """One command's row as the journal has it now (the tray tells how a long job ended)."""
        return self._with_journal(lambda journal: journal.get_command(command_id))

    def live_servers(self) -> list[ServerRecord]:
        """The servers whose rows say they run now (which Claude apps are connected)."""
        return self._with_journal(lambda journal: journal.servers(live_only=True))

    def output_budget(self) -> OutputBudget:
        """How much of a command's output the model reads, as stored (the Settings window shows it)."""
        return self._with_journal(output.output_budget)

    def looser_than_default(self) -> list[str]:
        """Settings the tray starts with that ask less than a fresh install: the user hears of them."""
        return loosened(DEFAULTS, self.state)

    def pending_holds(self) -> list[HeldCommand]:
        with self.lock:
            return self.holds.pending(time.time())

    def held(self, command_id: int) -> HeldCommand | None:
        """The command waiting under this id, if it still waits."""
        with self.lock:
            return self.holds.get(command_id)

    def running_count(self) -> int:
        """Commands that run now: a held one (answered or not, expired or not) runs nothing yet."""
        return sum(len(p.commands - p.waiting) for p in self.connections.servers())

    # -- the user's controls (the tray's menu and windows call these) -----------------------------

    def set_paused(self, paused: bool, *, by: str = "user") -> None:
        log.info("host access %s (%s)", "paused" if paused else "resumed", by)
        self.paused_by = by if paused else None  # a timed pause ends only if it is still the one in force
        self.change_state(lambda state: with_changes(state, paused=paused))

    def set_output_budget(self, budget: OutputBudget) -> None:
        """What the model reads of each output: no control over what runs, so anyone may set it."""
        self._with_journal(lambda journal: output.set_output_budget(journal, budget))

    def welcome_shown(self) -> None:
        """The Welcome window was shown: a later start does not open it again by itself."""
        self._with_journal(lambda journal: journal.set_setting(settings.WELCOME_SHOWN, True))

    def set_settings(self, **changes: Any) -> None:
        self.change_state(lambda state: with_changes(state, **changes))

    def change_state(self, change: Callable[[ControlState], ControlState]) -> None:
        """The one path every change of the settings takes: `change` is applied to the state in force
        (never to a copy read earlier, which could undo a pause made meanwhile), the result pushed to
        every server first, then copied to the file, so a pause never waits for the disk (nor for
        the journal's lock, which a locked journal holds for WRITE_BUSY_TIMEOUT_S). A pause drops
        what waits."""
        with self._state_lock:  # two changes at once reach every server in the order they were made
            before, state = self.state, change(self.state)
            if not state.paused and self.record.paused_outside():
                # The CLI's pause in the file, not yet taken at a tick: kept, not written over (a review).
                state = with_changes(state, paused=True)
            pausing = state.paused and not before.paused
            protecting = state.container and not before.container  # the container switched back on
            if pausing:  # counted before the state says paused: a row checked meanwhile is refused
                self.pauses += 1
                self._told_of_pauses.update(self.connections.snapshot())
            self.state = state
            self.connections.push_all(StatePush(state.to_wire(), self.pauses))
        if state.paused:  # also with no server bound to end them (red team, 2026-12-04)
            end_what_finished_commands_left(orphans.home_tag(self.paths))
        if pausing:
            self._end_what_closed_runners_left()
        if protecting:
            self._end_what_ran_outside()
        if state.paused and not self._closed:
            backstop = threading.Timer(PAUSE_BACKSTOP_S, self._end_what_a_pause_left)
            backstop.daemon = True
            with self.lock:
                self._backstops = [timer for timer in self._backstops if timer.is_alive()] + [backstop]
            backstop.start()
        with self.lock:
            dropped = self.holds.drop_all() if state.paused else []
            try:
                self.record.write_state(self.state)  # the newest: a change made meanwhile is not undone
            except sqlite3.OperationalError as exc:  # held in memory and pushed all the same
                log.warning("could not store the settings: %s", exc)
        if dropped:
            self.on_holds()
        self.on_change()

    def paused_since(self, peer: Peer, pauses: int | None) -> bool:
        """Whether a pause came after `peer` began a decision it names `pauses` (`Begin.pauses`, the
        count of the latest push it had): ours moved on since, or, with none named, a pause was pushed
        to it since it bound. Such a decision never runs, even after a resume (red team, ninth: eight
        commands judged through a pause ran after the resume)."""
        if pauses is None:
            return peer in self._told_of_pauses
        return pauses != self.pauses

    def _end_what_a_pause_left(self) -> None:
        """A pause's last word, from a thread of the hub's own: the command host stops each running
        command gently on its loop (its output kept, the model told), but that loop also judges
        every command, and a red team, 2026-12-05, held it for 9-17 s with a short `git status` on
        a crafted index: the commands ran on after the pause. Whatever still runs then is ended,
        and so is every process still carrying a mark of this app home's commands."""
        if self.state.paused and not self._closed:
            end_what_a_pause_left(orphans.home_tag(self.paths))  # Windows' jobs too

    def _end_what_closed_runners_left(self) -> None:
        """At a pause, what commands left running whose server is gone: each live server sweeps its
        own marks (`Runs.apply_user_stops`), but nobody sweeps those of a runner the tray closed (its
        client ended), nor of a server or tray before it. Red team, ninth: an uncontained `nohup`
        loop of a closed runner went on writing after the pause. Linux (marks are read from /proc)."""
        live, tag = self._live_marks(), orphans.home_tag(self.paths) + ":"
        self._end_marked(
            lambda mark: mark.startswith(tag) and not mark.startswith(live), "a pause", "servers gone before it left"
        )

    def _live_marks(self) -> tuple[str, ...]:
        """The mark prefixes of the servers connected now: each ends its own commands gently (their
        output kept, the model told why), where the hub's sweeps would only kill them."""
        return tuple(
            orphans.server_mark(self.paths, key) + ":"
            for peer in self.connections.servers()
            if isinstance(key := peer.registration.get("lock_key"), str) and key
        )

    def started_outside(self, peer: Peer, command_id: int) -> None:
        """A command of `peer` starts while the user has the container switched off: its mark is kept
        until it is switched on again, when what it runs, or left, is ended (under the hub's lock)."""
        key = peer.registration.get("lock_key")
        if not self.state.container and isinstance(key, str) and key:
            self._run_outside.add(f"{orphans.server_mark(self.paths, key)}:{command_id}")

    def _end_what_ran_outside(self) -> None:
        """The container is switched on again: what commands started while it was off still run, or
        left (a `nohup` loop writing ~/.bashrc: red team, ninth), ends where its server has gone (a
        server still there ends its own: `Runs.apply_user_stops`). Linux (marks are read from /proc)."""
        with self.lock:
            marks, self._run_outside = self._run_outside, set()
        live = self._live_marks()
        marks = {mark for mark in marks if not mark.startswith(live)}
        if marks:
            self._end_marked(marks.__contains__, "the container switched on", "started outside it")

    @staticmethod
    def _end_marked(chosen: Callable[[str], bool], by: str, which: str) -> None:
        """End the processes whose mark is `chosen`, said in the log; never in the way of the change
        (`by`) that asked for it. Linux (marks are read from /proc)."""
        try:
            ended = process_marks.end_marked_where(chosen)
        except Exception:
            log.exception("%s: ending the processes %s failed", by, which)
            return
        if ended:
            log.info("%s ended %d process(es) %s", by, len(ended), which)

    def merge_remembered(self, remembered: ControlState) -> None:
        """A server that outlived a tray says what it was last told: a new tray never loosens it."""
        if strictest(self.state, remembered) != self.state:
            log.info("a server remembered stricter settings than the stored ones: %s", remembered)
            self.change_state(lambda state: strictest(state, remembered))

    def held_arrived(self, hold: HeldCommand) -> None:
        """A new hold: one of the user's rules may answer it at once, or the user is shown it."""
        with self.lock:  # its own server's session rules only, by connection (RuleBook.in_force)
            rules = self.rule_book.in_force(self._live_servers(), for_peer=hold.peer)
        rule = rule_for(hold, rules, protected_paths(self.paths))
        if rule is not None:
            self.decide(hold.command_id, allowed=True, by=f"rule {rule}", rule_id=rule)
        else:
            self.on_holds()
        self.on_change()

    def decide(self, command_id: int, *, allowed: bool, by: str, rule_id: int | None = None) -> bool:
        """The user's answer to a held command (or a rule's): pushed to its server, then recorded. A
        Deny, a tightening, is taken and pushed before the hub's lock, which the hourly upkeep holds
        for seconds after a flood of rows (a red team, 2026-12-06: the Deny landed 2.5-5 s late)."""
        if not allowed:
            waiting = self.holds.get(command_id)
            if waiting is None or waiting.expires_at <= time.time():
                return False  # gone, or run out: `expire` tells its server
            hold = self.holds.pop(command_id)
            if hold is None:
                return False  # answered meanwhile (a pause, another click)
            hold.peer.push(DecisionPush(command_id, allowed, by, hold.digest))
        with self.lock:
            if allowed:
                waiting = self.holds.get(command_id)
                if waiting is None or waiting.expires_at <= time.time() or self.state.paused:
                    return False
                hold = self.holds.pop(command_id)  # the check: a Deny, outside this lock, may have taken it
                if hold is None:
                    return False
                # Pushed first: the server obeys it at once, whatever the disk does with the record.
                hold.peer.push(DecisionPush(command_id, allowed, by, hold.digest))
            if hold is not None:  # taken above, on either path: kept with its row (`reopen_journal`)
                server_rows.decided(hold.peer, command_id, allowed=allowed, by=by, rule_id=rule_id)
            try:
                self.record.journal.decide(command_id, allowed=allowed, by=by, rule_id=rule_id, taken=True)
                self.record.wrote()
            except sqlite3.OperationalError as exc:
                log.warning("could not record the decision on command %s: %s", command_id, exc)
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
                self.record.journal.set_hold_expiry(command_id, hold.expires_at)
                self.record.wrote()
            except sqlite3.OperationalError as exc:
                log.warning("could not record when command %s was shown: %s", command_id, exc)
        hold.peer.push(HoldClock(command_id, hold.expires_at))
        self.on_change()

    def stop(self, command_id: int | None, by: str = "user") -> str:
        """Stop a running command, or end a held one: the person's Stop (`by` the user, or where they
        clicked it), or another agent's command_stop through its server (`by` AGENT_STOP_BY), which
        its owner tells and records as an agent's, never the user's (a red team, 2026-12-06)."""
        agent = by if by == AGENT_STOP_BY else None
        owner = next((p for p in self.connections.snapshot() if command_id in p.commands), None)
        if command_id is not None and self.held(command_id) is not None:
            self.decide(command_id, allowed=False, by=by)  # the owner reads an agent's as withdrawn
            if agent is not None:  # only the asking server reads it (no person): in English
                return f"Withdrew command #{command_id}."
            return _("Denied command #{id}.").format(id=command_id)
        if owner is not None and command_id is not None:  # pushed before the record: never waits for the disk
            owner.push(StopPush(command_id, agent))
        with self.lock:
            asked = False
            with contextlib.suppress(sqlite3.OperationalError):  # a headless server reads it there
                asked = self.record.journal.request_stop(command_id or -1, by=agent)
                self.record.wrote()
        if owner is None and not asked:
            raise RequestError(_("Command #{id} is not running.").format(id=command_id))
        self.on_change()
        return _("Asked the server running command #{id} to stop it.").format(id=command_id)

    def clear_history(self) -> int:
        with self.lock:
            deleted = self.record.journal.clear_history()
            self.record.wrote()
        self.on_change()
        return deleted

    def answer(self, question: Question, yes: bool, *, why_not: str | None = None) -> None:
        """The user's click in the confirm window (called by the tray, for a window it started)."""
        self.questions.answer(question, yes, why_not=why_not)

    # -- the user's rules (core/authority/rule_book.py): in memory, the file is their copy ----------

    def rules(self) -> list[Rule]:
        """The rules in force now: made by the user's click, or carried over from a previous run."""
        with self.lock:
            return self.rule_book.in_force(self._live_servers())

    def _live_servers(self) -> list[Peer]:
        """The servers connected now that have a row and have not ended (a session rule's owners)."""
        return [p for p in self.connections.servers() if p.server_id is not None and not p.ended]

    def rules_from_before(self) -> list[Rule]:
        """The rules read from the file at start (the user is told of them once)."""
        with self.lock:
            return self.rule_book.carried_over()

    def add_rule(
        self,
        kind: str,
        folder: str,
        scope: str,
        description: str,
        session: str | None = None,
        *,
        peer: Peer | None = None,
    ) -> Rule:
        """A rule the user made with a click in the app's own window. `peer`: a session rule's server,
        whose id is read here under the lock (a journal renewal renumbers servers under it: an id read
        before could name another app's server by now). RuleNotMade when that server has no row
        in the journal (a renewed one refused it) or ended: nothing is stored."""
        with self.lock:
            if peer is not None:
                if peer.server_id is None or peer.ended:  # "None" would name no server: a rule for no one
                    raise RuleNotMade(f"{peer.label} has no row in the journal")
                session = str(peer.server_id)
            rule = self.rule_book.add(self.record.journal, kind, folder, scope, description, session)
            self.record.wrote()
        self.on_change()
        return rule

    def remove_rule(self, rule_id: int) -> bool:
        """The one path that removes a rule (the menu, the log window and a request all come here):
        removing one asks more, so it may come from anyone. False when no such rule is in force."""
        with self.lock:
            try:
                known = self.rule_book.remove(self.record.journal, rule_id)
                self.record.wrote()
            except sqlite3.OperationalError as exc:  # gone from memory all the same
                log.warning("could not remove rule %s from the file: %s", rule_id, exc)
                known = True
        self.on_change()
        return known

    # -- housekeeping (the tray's monitor calls it every poll) ----------------------------------

    def tick(self) -> None:
        """Expire holds, notice a journal changed or deleted under the tray, and write the ends of
        commands the file refused before."""
        with self.lock:
            expired = self.holds.expire(time.time())
            if self.renew_journal_if_gone():
                return
            self.record.write_unwritten()
            # A new file that refused them too: tried again as the record tries its ends.
            server_rows.write_back_ended(self, self.connections.servers(), retry_after_s=UNWRITTEN_RETRY_S)
            foreign = self.record.changed_by_others()
            paused_outside = foreign and self.record.paused_by_others and not self.state.paused
        if expired:
            self.on_holds()
        if paused_outside:
            # The CLI paused through the file while this tray did not answer it (stalled, suspended):
            # it told the person "paused", and a pause may come from anywhere (red team, eleventh).
            # Only a pause is taken from the file: a resume or a looser setting there is not.
            self.set_paused(True, by="the pause file")
        elif foreign:
            self.record.tell_foreign_change()

    def journal_refused(self, exc: sqlite3.OperationalError) -> None:
        """The journal refused the tray's own upkeep (locked by another program, a full disk): the
        user is told once, until a write succeeds again; commands are refused meanwhile."""
        with self.lock:
            self.record.problem(exc)

    def new_supervisor(self, *, has_menu: bool) -> Supervisor:
        """A watcher of the servers' rows (crashes, ended jobs, notices) on the hub's journal
        connection, the tray's only writer; poll it with `poll_servers`."""
        return self._with_journal(lambda journal: Supervisor(journal, version=self.data_version, has_menu=has_menu))

    def poll_servers(self, supervisor: Supervisor) -> tuple[Snapshot, list[Notice]]:
        """One round of `supervisor` under the hub's lock, on the journal in use now (the hub may
        have started a new one since the last round)."""

        def poll(journal: Journal) -> tuple[Snapshot, list[Notice]]:
            supervisor.journal = journal
            return supervisor.poll()

        return self._with_journal(poll)

    def renew_journal_if_gone(self) -> bool:
        """A new journal when the file was deleted, replaced or damaged in place since the last look
        (a stat or two when it was not: cheap enough before each command's row); True when renewed."""
        with self.lock:
            gone = self.record.gone_or_damaged()
            if gone:
                self.reopen_journal()
            return gone

    def highest_known_id(self) -> int:
        """The highest id of a command a server of this hub runs or holds: no new row may take it
        (a program that deleted rows under them would make the journal give it again)."""
        servers = [peer for peer in self.connections.servers() if peer.role == "server"]
        return max((i for peer in servers for i in (*peer.commands, *peer.waiting)), default=0)

    def reopen_journal(self) -> None:
        """Start a new journal (the old one was deleted, replaced or damaged) and write the hub's
        memory into it: the settings, the rules, a row for each server still connected, and one for
        each command its servers still run or hold, under its own id (a red team, 2026-12-06: a job
        ran on with no row, out of the log's and the CLI's sight and reach)."""
        with self.lock:
            server_rows.forget_written_ends(self)  # what the old file holds ends there
            self.record.reopen(known=self.highest_known_id())
            with contextlib.suppress(sqlite3.OperationalError):
                self.record.write_state(self.state)  # the settings live on in memory: into the new file
            # Session rules are tied to their servers under the old ids, before the ids change.
            self.rule_book.bind(self._live_servers())
            for peer in self.connections.servers():  # servers that still run get their rows again
                if peer.role != "server":
                    continue
                if peer.server_id is not None and not peer.ended:
                    try:
                        peer.server_id = self.register(peer)
                    except sqlite3.OperationalError as exc:  # registered again at its next command
                        log.warning("%s could not be registered in the new journal: %s", peer.label, exc)
                        peer.server_id = None
                server_rows.write_back(self, peer)  # and so do their commands' rows
            with contextlib.suppress(sqlite3.OperationalError):
                # And the rules: a session rule under its server's new id, never under an id that
                # now names another app's server.
                self.rule_book.copy_to(self.record.journal, self._live_servers())
            # And the rows of commands that ended while the file refused their ends: those ends are
            # still to be written, and would update no row.
            server_rows.write_back_ended(self, self.connections.servers())
            journal = self.record.journal
            moved_aside = journal.replaced is not None or journal.get_setting(JOURNAL_REPLACED_SETTING)
        if moved_aside:
            return  # a damaged file, moved aside by us or by another process: the supervisor tells, with its path
        self.notify(
            _("The activity log was deleted"),
            _(
                "Another program deleted or replaced Cowork Terminal's activity log. A new one was started; "
                "your settings are unchanged."
            ),
        )

    def _with_journal(self, work: Callable[[Journal], T]) -> T:
        """Run `work` on the hub's journal connection (the tray's only writer), under its lock; on a
        journal found damaged as it reads, once more on a new one."""
        with self.lock:
            try:
                result = work(self.record.journal)
            except sqlite3.DatabaseError as exc:
                if isinstance(exc, sqlite3.OperationalError) or not is_corrupt(exc):
                    raise
                self.reopen_journal()
                result = work(self.record.journal)
            self.record.wrote()
            return result
