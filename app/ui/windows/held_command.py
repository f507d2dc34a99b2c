"""A held command as the approval window shows it, and the user's answer: plain data, no Tk.

The tray builds one `WaitingCommand` per command a server holds (from what the server told it,
never from the journal), adds what the classifier says in plain words and the rule the window may
offer, and sends it to the window as JSON; the window answers with a `Decision`. Both sides import
this module; only the window imports Tk.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.core.classifier import Classification, classify
from app.core.classifier.danger import Danger
from app.core.classifier.findings import Finding, Words
from app.core.commands.pins import whole_value
from app.core.i18n import _
from app.core.policy.plain_words import ask_for_person, for_person
from app.core.policy.rules import SESSION_SCOPE, RuleProposal, proposal_for

# The most dangerous classes (classifier.danger.Danger, by name): styled as such, allowed only after a
# typed word, and never covered by a rule offered in the window.
SEVERE_DANGERS = frozenset({"loses_everything", "erases_disk", "downloaded"})


def danger_of(verdict: Classification) -> str | None:
    """The worst class of danger of a classification, by its name (`loses_files`), or None below
    destructive: sent to the window as JSON, which names it back with `danger_words`."""
    return None if verdict.danger is None else verdict.danger.name.lower()


def confirm_name_of(verdict: Classification) -> str | None:
    """The folder or disk a most dangerous command deletes, as a person types it to allow the command
    (the "type the name to delete" of the apps people trust): the whole home folder's path, the
    disk's device. None where no name would be a real confirmation: every file on the computer ("/",
    one keystroke) or a class with no folder (a downloaded program); the window then asks for a word."""
    if verdict.danger not in (Danger.LOSES_EVERYTHING, Danger.ERASES_DISK):
        return None
    for finding in verdict.findings:  # of the worst class only: the window names the class it asks for
        if finding.danger is verdict.danger and finding.target:
            folder = finding.target.removesuffix("/*").removesuffix("/.*").rstrip("/")
            if folder and "*" not in folder:
                return folder
    return None


def rank_of(finding: Finding, cwd: str | None) -> int:
    """How much a finding's line matters when the window cannot show them all (more matters more): by
    the place it is about (`place_rank`: the person's own files first), then by its class of danger.
    Forty build folders, or eight folders in /tmp (a red team, 2026-12-05), must not hide the
    `~/Documents` the same command deletes."""
    place = max((place_rank(place, cwd) for place in _places(finding)), default=0)
    return (max(Danger) + 1) * place + (finding.danger or 0)


def place_rank(place: str, cwd: str | None) -> int:
    """0 inside the command's folder; outside it, 4 in the person's own folders (a folder of the home
    folder not hidden by a dot: Documents, Desktop, projects...) or at or above the home folder (`/`,
    `/home` hold them too), 3 elsewhere in it (its caches and dot folders), 1 in a temporary folder,
    2 anywhere else. Eight folders in ~/.cache must not hide the ~/Documents the same command deletes
    (a red team, 2026-12-06)."""
    if not _outside(place, cwd):
        return 0
    path = posixpath.normpath(os.path.expanduser(place).replace("\\", "/"))
    home = posixpath.normpath(os.path.expanduser("~").replace("\\", "/"))
    if _within(home, path):  # first: a home folder may be in /tmp
        return 4
    if _within(path, home):
        return 3 if path[len(home.rstrip("/")) + 1 :].startswith(".") else 4
    return 1 if any(_within(path, top) for top in _temporary_folders()) else 2


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _temporary_folders() -> tuple[str, ...]:
    tmpdir = os.environ.get("TMPDIR", "").replace("\\", "/").rstrip("/")
    return ("/tmp", "/var/tmp", *((tmpdir,) if tmpdir.startswith("/") and tmpdir.count("/") > 1 else ()))


def _places(finding: Finding) -> Iterator[str]:
    """The paths a finding names: its target, else the values of its words that are paths."""
    if finding.target:
        yield finding.target
        return
    stack = [finding.words] if finding.words is not None else []
    while stack:
        for _name, value in stack.pop().values:
            if isinstance(value, Words):
                stack.append(value)
            elif value.startswith(("/", "~", "\\")) or (value[1:3] in (":/", ":\\") and value[:1].isalpha()):
                yield value


def _outside(place: str, cwd: str | None) -> bool:
    """Whether `place` may lie outside the folder `cwd` (strictly inside it is not); with no folder
    known, every path is outside it."""
    place = os.path.expanduser(place) if place.startswith("~") else place
    if cwd is None or place.startswith("~"):
        return True
    path, folder = (posixpath.normpath(p.replace("\\", "/")) for p in (place, cwd))
    if os.name == "nt":
        path, folder = path.casefold(), folder.casefold()
    return not path.startswith(folder.rstrip("/") + "/")


def danger_words(name: str | None) -> tuple[str, str] | None:
    """The class's title and its one sentence (what would be lost, whether it can be undone), in the
    user's language; None for no class or one this version does not know."""
    danger = Danger.__members__.get((name or "").upper())
    return None if danger is None else (_(danger.title), _(danger.sentence))


@dataclass(frozen=True)
class WaitingCommand:
    """One command waiting for the user."""

    id: int
    command: str
    cwd: str | None
    client: str  # the agent's name, as people know it ("Claude Desktop")
    plain: tuple[str, ...]  # what it does, in plain words
    reasons: tuple[str, ...]  # the classifier's terse reasons
    expires_at: float  # when the hold runs out (epoch seconds)
    env_keys: tuple[str, ...] = ()
    tool: str = "execute_command"
    session: str | None = None  # the agent's session (its server), for a "this session" rule
    proposal: RuleProposal | None = None  # the rule the window may offer
    words: tuple[Words, ...] = ()  # `plain` as templates and values: the window says them in its language
    danger: str | None = None  # the classifier's danger class (danger_of), when it names one
    confirm_name: str | None = None  # what to type to allow a most dangerous command (confirm_name_of)
    # What only a person's Allow gives it (plain_words.asks_in, in English): to run without the container's
    # protection, to change a file the app guards, and which. Said after what it does.
    asks: tuple[str, ...] = ()
    # How much each line of `words` (of `plain` when there are none) matters (rank_of): the window keeps
    # the lines that matter most when it cannot show them all.
    ranks: tuple[int, ...] = ()
    # Not judged again for the window in time (`unjudged`): it may be of the most dangerous classes,
    # which a command could hide behind scripts slow to read (a fixer, 2026-12-06), so it is asked as one.
    unchecked: bool = False

    @property
    def severe(self) -> bool:
        """One of the most dangerous classes, or not checked: styled as such, and allowed only after
        typing a word."""
        return self.danger in SEVERE_DANGERS or self.unchecked

    def lines(self) -> tuple[str, ...]:
        """What it does, in the user's language; the English plain words when the tray sent no words."""
        return (*self._said(), *(ask_for_person(ask) or ask for ask in self.asks))

    def line_ranks(self) -> tuple[int, ...]:
        """How much each of `lines()` matters (`ranks`; 0 where the tray sent none): what only a
        person's Allow gives it (`asks`) matters most."""
        said = self._said()
        given = [for_person(w) for w in self.words] if self.words else list(self.plain)
        ranked: dict[str, int] = {}
        if len(self.ranks) == len(given):
            for line, rank in zip(given, self.ranks, strict=True):
                ranked[line] = max(rank, ranked.get(line, rank))
        top = max(ranked.values(), default=0) + 1
        return (*(ranked.get(line, 0) for line in said), *(top for _ask in self.asks))

    def _said(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(for_person(w) for w in self.words)) if self.words else self.plain

    def to_json(self) -> dict[str, Any]:
        proposal = self.proposal
        return {
            "id": self.id, "command": self.command, "cwd": self.cwd, "client": self.client,
            "plain": list(self.plain), "reasons": list(self.reasons), "expires_at": self.expires_at,
            "env_keys": list(self.env_keys), "tool": self.tool, "session": self.session,
            "proposal": None if proposal is None else {"kind": proposal.kind, "folder": proposal.folder},
            "words": [w.to_json() for w in self.words], "danger": self.danger, "confirm_name": self.confirm_name,
            "asks": list(self.asks), "ranks": list(self.ranks), "unchecked": self.unchecked,
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> WaitingCommand:
        """Read one held command; tolerant of a tray that sends only the basics (reasons as text,
        no plain words): then the reasons stand in for the plain words, and no rule is offered."""
        reasons = data.get("reasons") or ()
        if isinstance(reasons, str):
            reasons = tuple(r for r in reasons.split("; ") if r)
        plain = data.get("plain") or ([data["explanation"]] if data.get("explanation") else list(reasons))
        proposal = data.get("proposal")
        words = [Words.from_json(w) for w in data.get("words") or ()]
        ranks = data.get("ranks")
        return cls(
            id=int(data["id"]),
            command=str(data.get("command", "")),
            cwd=data.get("cwd"),
            client=str(data.get("client") or _("An AI agent")),
            plain=tuple(str(p) for p in plain),
            reasons=tuple(str(r) for r in reasons),
            expires_at=float(data.get("expires_at") or 0),
            env_keys=tuple(str(k) for k in data.get("env_keys") or ()),
            tool=str(data.get("tool") or "execute_command"),
            session=None if data.get("session") is None else str(data.get("session")),
            proposal=None if not proposal else RuleProposal(str(proposal["kind"]), str(proposal["folder"])),
            words=() if None in words else tuple(w for w in words if w is not None),
            danger=None if data.get("danger") is None else str(data["danger"]),
            confirm_name=None if data.get("confirm_name") is None else str(data["confirm_name"]),
            asks=tuple(ask for ask in data.get("asks") or () if isinstance(ask, str) and ask_for_person(ask)),
            ranks=tuple(ranks) if isinstance(ranks, list) and all(type(r) is int for r in ranks) else (),
            unchecked=data.get("unchecked") is True,
        )


def judged(
    command_id: int,
    command: str,
    cwd: str | None,
    *,
    client: str,
    expires_at: float,
    protected: Sequence[str],
    env_keys: Sequence[str] = (),
    tool: str = "execute_command",
    session: str | None = None,
    offer_rule: bool = True,
    asks: Sequence[str] = (),
    deadline: float | None = None,
) -> WaitingCommand:
    """A held command with the classifier's plain words and the rule the window may offer, judged
    here (in the tray) from the command and folder the server sent; `asks`: what only a person may
    give it, as its runner said (plain_words.asks_in). Raises JudgedTooLong once `time.monotonic()`
    passes `deadline` (classify's)."""
    real_cwd = os.path.realpath(cwd) if cwd else None
    verdict = classify(command, cwd=real_cwd, protected_paths=protected, deadline=deadline)
    # The classifier knows no variable's value, so `rm -rf "$T"/*` sent with T=<home> read as "a name
    # known only when it runs" (a red team, 2026-12-06). Judged again with the values sent (those the
    # window shows whole), the worse of the two counts: a value the command itself sets again can only
    # make it seem worse, never better. No rule is offered for what the text alone does not show.
    with_values = substituted(command, sent_values(env_keys))
    if with_values != command:
        valued = classify(with_values, cwd=real_cwd, protected_paths=protected, deadline=deadline)
        if (valued.danger or 0) > (verdict.danger or 0):
            verdict, offer_rule = valued, False
    ranks: dict[str, int] = {}  # each line of `verdict.plain` says one or more findings: the worst counts
    for finding in verdict.findings:
        ranks[finding.plain] = max(ranks.get(finding.plain, 0), rank_of(finding, real_cwd))
    return WaitingCommand(
        id=command_id, command=command, cwd=cwd, client=client, plain=verdict.plain, reasons=verdict.reasons,
        expires_at=expires_at, env_keys=tuple(env_keys), tool=tool, session=session,
        proposal=proposal_for(command, real_cwd, verdict) if offer_rule else None, words=verdict.words,
        danger=danger_of(verdict),
        confirm_name=confirm_name_of(verdict), asks=tuple(asks),
        ranks=tuple(ranks.get(line, 0) for line in verdict.plain),
    )  # fmt: skip


def unjudged(
    command_id: int,
    command: str,
    cwd: str | None,
    reasons: str,
    *,
    client: str,
    expires_at: float,
    env_keys: Sequence[str] = (),
    tool: str = "execute_command",
    session: str | None = None,
    asks: Sequence[str] = (),
) -> WaitingCommand:
    """A held command the tray could not judge again in time (`judged` past its deadline): shown with
    the reasons its runner gave as it held it (`; `-joined), as a command that cannot be checked here,
    allowed only after the confirm word is typed (it may be of the most dangerous classes), and with
    no rule offered (the tray makes none it has not judged)."""
    terse = tuple(r for r in reasons.split("; ") if r) or ("cannot tell what runs",)
    return WaitingCommand(
        id=command_id, command=command, cwd=cwd, client=client, plain=terse, reasons=terse,
        expires_at=expires_at, env_keys=tuple(env_keys), tool=tool, session=session, proposal=None,
        danger=Danger.CANNOT_TELL.name.lower(), asks=tuple(asks), unchecked=True,
    )  # fmt: skip


# A value put in the text as it is: bash does not parse an expanded value again, so only values whose
# characters mean the same where they are put (no quotes, `$`, backslashes, operators or braces).
SUBSTITUTABLE = re.compile(r"[\w ./~@%+,:=*?^\[\]-]*")
REFERENCE = re.compile(r"(?<!\\)\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))")


def sent_values(env_keys: Sequence[str]) -> dict[str, str]:
    """The environment the command was sent with, as the window shows it (`NAME=value`, pins.shown_value):
    the values shown whole (not masked, not cut) that may be put in the command's text."""
    values = {}
    for entry in env_keys:
        name, equals, shown = entry.partition("=")
        value = whole_value(shown) if equals else None
        if value is not None and SUBSTITUTABLE.fullmatch(value):
            values[name] = value
    return values


def substituted(command: str, values: Mapping[str, str]) -> str:
    """`command` with each `$NAME` and `${NAME}` of `values` replaced by its value (in single quotes
    too, where bash would not: that only makes a command seem worse)."""
    if not values:
        return command

    def value_of(match: re.Match[str]) -> str:
        name = match[1] or match[2]
        return values.get(name, match[0])

    return REFERENCE.sub(value_of, command)


@dataclass(frozen=True)
class Decision:
    """The user's answer. `rule_scope`: the rule the user chose with it (folder or session)."""

    held: WaitingCommand
    allowed: bool
    rule_scope: str | None = None

    def rule(self) -> dict[str, Any] | None:
        """The rule the user chose, as the window says it; the tray makes its own from the hold."""
        proposal = self.held.proposal
        if not (self.allowed and self.rule_scope and proposal is not None):
            return None
        return {
            "kind": proposal.kind,
            "folder": proposal.folder,
            "scope": self.rule_scope,
            "session": self.held.session if self.rule_scope == SESSION_SCOPE else None,
            "description": proposal.description(self.rule_scope),
        }

    def to_message(self) -> dict[str, Any]:
        """The line the window writes to the tray."""
        return {"op": "decide", "id": self.held.id, "allowed": self.allowed, "rule": self.rule()}
