"""The user's rules as the tray holds them: in memory, with the journal as their copy for the next start.

A rule counts only when the tray knows it: made by the user's click in this run, or read from the
file once, at start, and told to the user as "from a previous run" (core/policy/rules.py says what a
rule allows). A row another program inserts while the tray runs is never read back, so it never
allows anything; a row it deletes stays in force until the user removes the rule. A row of a kind
this version does not know is not read at all. The tray tells its log window these rules, never the
file's rows.
"""

from __future__ import annotations

from collections.abc import Collection

from app.core.journal.store import Journal
from app.core.policy.rules import KINDS, SCOPES, SESSION_SCOPE, Rule


class RuleBook:
    """The rules in force. Not thread-safe on its own: the hub calls it under its lock."""

    def __init__(self, journal: Journal) -> None:
        # A row of a kind or scope this version does not know (a newer version's, or one another
        # program wrote) is no rule here: it allows nothing, is listed nowhere, and stays in the file.
        self._rules: dict[int, Rule] = {
            rule.id: rule for rule in journal.rules() if rule.kind in KINDS and rule.scope in SCOPES
        }
        self.from_before: frozenset[int] = frozenset(self._rules)  # read from the file at start

    def in_force(self, live_sessions: Collection[str]) -> list[Rule]:
        """Every folder rule, and the session rules of servers connected now, oldest first."""
        return [
            rule
            for _, rule in sorted(self._rules.items())
            if rule.scope != SESSION_SCOPE or (rule.session is not None and rule.session in live_sessions)
        ]

    def add(self, journal: Journal, kind: str, folder: str, scope: str, description: str, session: str | None) -> Rule:
        """A rule the user just made with a click: in force at once, and copied to the file."""
        rule = journal.add_rule(kind, folder, scope, description, session)
        self._rules[rule.id] = rule
        return rule

    def remove(self, journal: Journal, rule_id: int) -> bool:
        """Remove a rule from memory and from the file; False when the tray knows no such rule."""
        known = self._rules.pop(rule_id, None) is not None
        journal.remove_rule(rule_id)
        return known

    def copy_to(self, journal: Journal) -> None:
        """Write every rule into a new file (the old one was deleted or replaced); ids change with it."""
        old = sorted(self._rules.values(), key=lambda rule: rule.id)
        self._rules.clear()
        before = set()
        for rule in old:
            copy = journal.add_rule(rule.kind, rule.folder, rule.scope, rule.description, rule.session)
            self._rules[copy.id] = copy
            if rule.id in self.from_before:
                before.add(copy.id)
        self.from_before = frozenset(before)

    def carried_over(self) -> list[Rule]:
        """The rules read from the file at start that are still in force."""
        return [rule for rule_id, rule in sorted(self._rules.items()) if rule_id in self.from_before]
