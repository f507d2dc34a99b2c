"""The user's rules as the tray holds them: in memory, with the journal as their copy for the next start.

A rule counts only when the tray knows it: made by the user's click in this run, or read from the
file once, at start, and told to the user as "from a previous run" (core/policy/rules.py says what a
rule allows). A row another program inserts while the tray runs is never read back, so it never
allows anything; a row it deletes stays in force until the user removes the rule. A row of a kind
this version does not know is not read at all. The tray tells its log window these rules, never the
file's rows.

A session rule belongs to one server (its connection, `Peer`), not to its row id: ids start again
from 1 in a new journal, so after a renewal another app's server could hold the id the person gave
(a red team, 2026-12-06). The rule waits for its server by row id and pid (the pair a server claims
its row with when it connects again), is bound to that connection, follows it into a new journal
under its new id, and ends with it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from typing import TYPE_CHECKING

from app.core.journal.store import Journal
from app.core.policy.rules import KINDS, SCOPES, SESSION_SCOPE, Rule

if TYPE_CHECKING:
    from app.core.authority.connection import Peer


class RuleBook:
    """The rules in force. Not thread-safe on its own: the hub calls it under its lock."""

    def __init__(self, journal: Journal) -> None:
        # A row of a kind or scope this version does not know (a newer version's, or one another
        # program wrote) is no rule here: it allows nothing, is listed nowhere, and stays in the file.
        self._rules: dict[int, Rule] = {
            rule.id: rule for rule in journal.rules() if rule.kind in KINDS and rule.scope in SCOPES
        }
        self.from_before: frozenset[int] = frozenset(self._rules)  # read from the file at start
        self._owners: dict[int, Peer] = {}  # session rule -> the connection it was given to
        self._awaited: dict[int, tuple[int, int]] = {}  # session rule -> (row id, pid) of its server
        for rule in list(self._rules.values()):
            self._await(journal, rule)

    def _await(self, journal: Journal, rule: Rule) -> None:
        """A session rule waits for the server whose live row its session names, by that row's pid."""
        if rule.scope != SESSION_SCOPE:
            return
        row = int(rule.session) if rule.session is not None and rule.session.isdecimal() else None
        pid = None if row is None else journal.live_server_pid(row)
        if row is None or pid is None:  # no live server of that id: the rule answers no one
            self._rules.pop(rule.id, None)
            return
        self._awaited[rule.id] = (row, pid)

    def bind(self, servers: Collection[Peer]) -> None:
        """Tie each waiting session rule to the connected server with its row id and pid; drop the
        rules of servers that ended; a rule whose connection is gone (not ended) waits for it again."""
        connected = {id(peer) for peer in servers}
        for rule_id, owner in list(self._owners.items()):
            if owner.ended:
                del self._owners[rule_id]
                self._rules.pop(rule_id, None)
            elif id(owner) not in connected:
                del self._owners[rule_id]
                if owner.server_id is not None and owner.facts.pid is not None:
                    self._awaited[rule_id] = (owner.server_id, owner.facts.pid)
                else:
                    self._rules.pop(rule_id, None)
        for rule_id, (row, pid) in list(self._awaited.items()):
            peer = next((p for p in servers if p.server_id == row and p.facts.pid == pid and not p.ended), None)
            if peer is not None:
                del self._awaited[rule_id]
                self._owners[rule_id] = peer

    def in_force(self, servers: Collection[Peer], *, for_peer: Peer | None = None) -> list[Rule]:
        """Every folder rule, and the session rules of the servers connected now (`servers`), each
        under its server's id now, oldest first. `for_peer`: only that server's session rules, by its
        connection: two servers can carry one id (another program deleted the first one's row, and
        SQLite gave the next server the same id: a review, 2026-12-06)."""
        self.bind(servers)
        rules = []
        for rule_id, rule in sorted(self._rules.items()):
            if rule.scope == SESSION_SCOPE:
                owner = self._owners.get(rule_id)
                if owner is None or owner.server_id is None or (for_peer is not None and owner is not for_peer):
                    continue
                if rule.session != str(owner.server_id):  # its row was made again (deleted under it)
                    rule = self._rules[rule_id] = dataclasses.replace(rule, session=str(owner.server_id))
            rules.append(rule)
        return rules

    def add(self, journal: Journal, kind: str, folder: str, scope: str, description: str, session: str | None) -> Rule:
        """A rule the user just made with a click: in force at once, and copied to the file. A session
        rule is for the server whose live row `session` names now (by its pid), and no other."""
        rule = journal.add_rule(kind, folder, scope, description, session)
        self._rules[rule.id] = rule
        self._await(journal, rule)
        return rule

    def remove(self, journal: Journal, rule_id: int) -> bool:
        """Remove a rule from memory and from the file; False when the tray knows no such rule."""
        known = self._rules.pop(rule_id, None) is not None
        self._owners.pop(rule_id, None)
        self._awaited.pop(rule_id, None)
        journal.remove_rule(rule_id)
        return known

    def copy_to(self, journal: Journal, servers: Collection[Peer]) -> None:
        """Write every rule into a new file (the old one was deleted or replaced); ids change with it.
        Called after `bind` (under the old ids) and after `servers` were registered in the new file: a
        session rule goes over under its server's new id; one whose server is not connected, or has
        no row in the new file, is dropped (the old file's ids name no one in the new one)."""
        connected = {id(peer) for peer in servers}
        old = sorted(self._rules.values(), key=lambda rule: rule.id)
        owners, self._owners, self._awaited = self._owners, {}, {}
        self._rules.clear()
        before = set()
        for rule in old:
            owner = owners.get(rule.id)
            session = rule.session
            if rule.scope == SESSION_SCOPE:
                if owner is None or id(owner) not in connected or owner.ended or owner.server_id is None:
                    continue
                session = str(owner.server_id)
            copy = journal.add_rule(rule.kind, rule.folder, rule.scope, rule.description, session)
            self._rules[copy.id] = copy
            if owner is not None and rule.scope == SESSION_SCOPE:
                self._owners[copy.id] = owner
            if rule.id in self.from_before:
                before.add(copy.id)
        self.from_before = frozenset(before)

    def carried_over(self) -> list[Rule]:
        """The rules read from the file at start that are still in force."""
        return [rule for rule_id, rule in sorted(self._rules.items()) if rule_id in self.from_before]
