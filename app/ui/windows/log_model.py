"""What the activity log window shows, as pure logic: row text, status looks, filters and paging.

Kept apart from Tk so every rule (how a status reads, which rows a window holds, where a new row
goes) is tested without a display; `log_window` only turns the diffs computed here into widget calls.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TypedDict

from app.core.claude.names import client_named, friendly_client_name
from app.core.i18n import N_, _, ngettext
from app.core.i18n.formats import format_date_time, format_day_month_time, format_number, shorten_command
from app.core.i18n.formats import format_time as format_clock
from app.core.journal.reasons import reason_for_person, who_for_person
from app.core.journal.store import CommandRecord, ServerRecord, Status
from app.core.messages import (
    CANCEL_REASON,
    DENIED_BY_REASON,
    HOLD_EXPIRED_REASON,
    MODEL_STOP_REASON,
    PAUSE_STOP_REASON,
    PAUSED_MESSAGE,
    REQUEST_DECIDED_BY,
    TIMED_OUT_REASON,
    USER_STOP_REASON,
)
from app.core.policy.rules import Rule
from app.core.visible_text import visible

PAGE_SIZE = 200  # rows fetched at open and per scroll step: fills any screen, costs a few ms
MAX_HELD_ROWS = 2_000  # rows kept in the list at once; scrolling further drops the far end
COMMAND_CELL_CHARS = 160  # a command cell shows one line; the details pane shows all of it


@dataclass(frozen=True)
class StatusStyle:
    """How one status looks in the list: words a non-technical user reads, and its colours."""

    label: str  # English, marked: `_()` where shown
    foreground: str
    background: str = ""  # empty: the list's own background


STATUS_STYLES: dict[Status, StatusStyle] = {
    Status.WAITING: StatusStyle(N_("⚑ Waiting for you"), "#7a4f00", "#fff1c7"),
    Status.RUNNING: StatusStyle(N_("● Running"), "#0b4f9c", "#e1edff"),
    Status.FINISHED: StatusStyle(N_("✓ Finished"), "#1f1f1f"),
    Status.FAILED: StatusStyle(N_("✗ Failed"), "#b3261e"),
    Status.TIMED_OUT: StatusStyle(N_("◷ Timed out"), "#a14f00"),
    Status.KILLED: StatusStyle(N_("■ Stopped"), "#6b3fa0"),
    Status.REFUSED: StatusStyle(N_("⊘ Refused"), "#6b6b6b"),
    Status.INTERRUPTED: StatusStyle(N_("⚠ Interrupted"), "#8a5a00"),
}

# Killed and refused rows say why in the list itself, so "stopped by the user" is visible at a glance.
KILLED_LABELS = {
    USER_STOP_REASON: N_("■ Stopped by the user"),
    PAUSE_STOP_REASON: N_("■ Stopped by pause"),
    CANCEL_REASON: N_("■ Cancelled by the agent"),
    MODEL_STOP_REASON: N_("■ Stopped by the agent"),
}
REFUSED_PAUSED_LABEL = N_("⊘ Refused: paused")
# What the person did, in their words: a Deny is "Denied by you", never the "Refused" of a timeout.
DENIED_BY_YOU_LABEL = N_("⊘ Denied by you")
DENIED_LABEL = N_("⊘ Denied")
NOT_ANSWERED_LABEL = N_("◷ Not answered in time")
STOPPING_LABEL = N_("● Stopping…")
# A status written by a later version or another program: as written, never taken for one we know.
UNKNOWN_STATUS_LABEL = N_("? “{status}” (unknown to this version)")


@dataclass(frozen=True)
class StatusFilter:
    """One choice of the status filter: a name the user reads and the statuses it keeps."""

    label: str  # English, marked: `_()` where shown
    statuses: tuple[str, ...] = ()  # empty: every status

    def keeps(self, status: Status) -> bool:
        return not self.statuses or status.value in self.statuses


STATUS_FILTERS: tuple[StatusFilter, ...] = (
    StatusFilter(N_("All commands")),
    StatusFilter(N_("Running or waiting"), (Status.RUNNING.value, Status.WAITING.value)),
    StatusFilter(
        N_("Problems (failed, timed out, interrupted)"),
        (Status.FAILED.value, Status.TIMED_OUT.value, Status.INTERRUPTED.value),
    ),
    *(StatusFilter(STATUS_STYLES[s].label, (s.value,)) for s in Status),
)


def filter_label(choice: StatusFilter) -> str:
    """A filter's name in the user's language; a single status's without its symbol."""
    text = _(choice.label)
    return text[2:] if choice.label[:1] in SYMBOLS else text


SYMBOLS = {style.label[0] for style in STATUS_STYLES.values()}


def status_label(record: CommandRecord) -> str:
    """The status cell: the status in words, with the reason when it is short and useful."""
    if not record.status.known:
        return _(UNKNOWN_STATUS_LABEL).format(status=record.status.shown)
    if record.status is Status.RUNNING and record.stop_requested_at is not None:
        return _(STOPPING_LABEL)
    if record.status is Status.KILLED and record.reason in KILLED_LABELS:
        return _(KILLED_LABELS[record.reason])
    if record.status is Status.REFUSED and record.reason == PAUSED_MESSAGE:
        return _(REFUSED_PAUSED_LABEL)
    if record.status is Status.REFUSED and record.reason == HOLD_EXPIRED_REASON:
        return _(NOT_ANSWERED_LABEL)
    denied = DENIED_BY_REASON.split("{")[0]
    if record.status is Status.REFUSED and (record.reason or "").startswith(denied):
        who = (record.reason or "")[len(denied) :]
        return _(DENIED_LABEL) if who == REQUEST_DECIDED_BY else _(DENIED_BY_YOU_LABEL)
    return _(STATUS_STYLES[record.status].label)


def status_tag(status: Status) -> str:
    """The Treeview tag that gives a row its status colours."""
    return f"status-{status.value}" if status.known else "status-unknown"  # its text is not a tag's


def one_line(text: str, limit: int = COMMAND_CELL_CHARS) -> str:
    """A command on one line: newlines shown as ⏎, characters that do not show written out
    (core/visible_text.py), long ones cut in the middle, keeping the end."""
    shown = visible(text, keep="\n").strip()
    flat = " ⏎ ".join(part.strip() for part in shown.split("\n")) or shown
    return shorten_command(flat, limit)


def format_duration(ms: float | None) -> str:
    if ms is None:
        return ""
    seconds = ms / 1000
    if seconds < 1:
        return _("{ms} ms").format(ms=format_number(ms))
    if seconds < 60:
        return _("{seconds} s").format(seconds=format_number(seconds, 1))
    if seconds < 3600:
        minutes, rest = divmod(int(seconds), 60)
        return _("{minutes} min {seconds} s").format(minutes=minutes, seconds=f"{rest:02d}")
    hours, rest = divmod(int(seconds), 3600)
    return _("{hours} h {minutes} min").format(hours=hours, minutes=f"{rest // 60:02d}")


def format_time(timestamp: float, now: float) -> str:
    """Today's times as 14:03:22; older ones with their day, so yesterday never looks like today.

    In the user's language: "30. Nov. 14:03", "30 нояб. 14:03"."""
    moment = datetime.fromtimestamp(timestamp)
    today = datetime.fromtimestamp(now).date()
    if moment.date() == today:
        return format_clock(moment)
    if moment.year == today.year:
        return format_day_month_time(moment)
    return format_date_time(moment)[:-3]  # no seconds


def format_timestamp(timestamp: float | None) -> str:
    return "" if timestamp is None else format_date_time(datetime.fromtimestamp(timestamp))


def format_clock_time(timestamp: float) -> str:
    return format_clock(datetime.fromtimestamp(timestamp))


def short_path(path: str | None, home: str | None = None) -> str:
    """A folder as the user knows it: the home folder as ~."""
    if not path:
        return ""
    home = home if home is not None else str(Path.home())
    if home and (path == home or path.startswith(home.rstrip("/\\") + ("\\" if "\\" in home else "/"))):
        return "~" + path[len(home.rstrip("/\\")) :]
    return path


def client_label(record: CommandRecord) -> str:
    """The app the user knows ("Claude Desktop" for "claude-ai"); other clients by their own name."""
    return friendly_client_name(record.client_name) if record.client_name else _("unknown agent")


def elapsed_ms(record: CommandRecord | Row, now: float) -> float | None:
    started = record.started_at
    return None if started is None else max(0.0, (now - started) * 1000)


COLUMNS: tuple[tuple[str, str, int, bool], ...] = (
    # id, heading (English, marked: `_()` where shown), width in pixels at 100 % scale, stretches
    ("time", N_("Time"), 96, False),
    ("client", N_("Agent"), 110, False),
    ("status", N_("Status"), 180, False),
    ("command", N_("Command"), 380, True),
    ("cwd", N_("Folder"), 180, True),
    ("exit", N_("Error code"), 50, False),  # empty for a success: "0" means nothing to most people
    ("duration", N_("Duration"), 86, False),
)


@dataclass(frozen=True)
class Row:
    """One list row: what the Treeview shows, and what the view needs to keep it up to date."""

    id: int
    status: Status
    values: tuple[str, ...]
    started_at: float | None = None
    stop_requested: bool = False

    @property
    def tag(self) -> str:
        return status_tag(self.status)

    @property
    def is_running(self) -> bool:
        return self.status is Status.RUNNING


def row_for(record: CommandRecord, now: float | None = None, home: str | None = None) -> Row:
    now = time.time() if now is None else now
    if record.status.is_active:
        duration = format_duration(elapsed_ms(record, now))
    else:
        duration = format_duration(record.duration_ms)
    values = (
        format_time(record.created_at, now),
        client_label(record),
        status_label(record),
        one_line(record.command),
        short_path(record.cwd, home),
        "" if not record.exit_code else str(record.exit_code),
        duration,
    )
    return Row(
        id=record.id,
        status=record.status,
        values=values,
        started_at=record.started_at,
        stop_requested=record.stop_requested_at is not None,
    )


def _ascii_lower(text: str) -> str:
    # SQLite's lower() folds ASCII only; folding the same way keeps live rows and fetched pages in agreement.
    return text.translate(_ASCII_LOWER)


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


class RecentQuery(TypedDict):
    """A filter as Journal.recent_commands takes it."""

    text: str | None
    statuses: list[str] | None


@dataclass(frozen=True)
class Filter:
    """What the user asked to see; `matches` agrees with Journal.recent_commands(text, statuses)."""

    text: str = ""
    statuses: tuple[str, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not self.text and not self.statuses

    def matches(self, record: CommandRecord) -> bool:
        if self.statuses and record.status.value not in self.statuses:
            return False
        if self.text:
            needle = _ascii_lower(self.text)
            return needle in _ascii_lower(record.command) or needle in _ascii_lower(record.cwd or "")
        return True

    def query(self) -> RecentQuery:
        """Keyword arguments for Journal.recent_commands."""
        return {"text": self.text or None, "statuses": list(self.statuses) or None}


@dataclass
class Diff:
    """What changed in the held rows, in the order the view must apply it."""

    removed: list[int] = field(default_factory=list)
    updated: list[Row] = field(default_factory=list)
    inserted: list[tuple[int, Row]] = field(default_factory=list)  # (index after the removals, row)

    def __bool__(self) -> bool:
        return bool(self.removed or self.updated or self.inserted)


class RowWindow:
    """The slice of the journal the list holds: newest first, at most `max_rows`, pageable both ways.

    `has_older` says rows older than the last held one exist (scrolling down fetches them);
    `has_newer` says the newest rows were dropped to keep memory bounded while the user read far
    back, so live rows are not inserted until the view returns to the newest page.
    """

    def __init__(self, *, max_rows: int = MAX_HELD_ROWS, home: str | None = None) -> None:
        self.max_rows = max_rows
        self.home = home
        self.filter = Filter()
        self._ids_desc_neg: list[int] = []  # negated ids, ascending: bisect keeps newest first
        self._rows: dict[int, Row] = {}
        self.has_older = False
        self.has_newer = False

    def __len__(self) -> int:
        return len(self._ids_desc_neg)

    def __contains__(self, command_id: object) -> bool:
        return command_id in self._rows

    @property
    def ids(self) -> list[int]:
        return [-neg for neg in self._ids_desc_neg]

    def row(self, command_id: int) -> Row | None:
        return self._rows.get(command_id)

    def rows(self) -> list[Row]:
        return [self._rows[-neg] for neg in self._ids_desc_neg]

    def running_rows(self) -> list[Row]:
        return [row for row in self._rows.values() if row.is_running]

    @property
    def newest_id(self) -> int | None:
        return -self._ids_desc_neg[0] if self._ids_desc_neg else None

    @property
    def oldest_id(self) -> int | None:
        return -self._ids_desc_neg[-1] if self._ids_desc_neg else None

    def reset(self, records: Sequence[CommandRecord], *, page_size: int, now: float | None = None) -> list[Row]:
        """Hold the newest page (fetched with page_size + 1 rows to learn whether older ones exist)."""
        self._ids_desc_neg = []
        self._rows = {}
        self.has_newer = False
        self.has_older = len(records) > page_size
        for record in sorted(records[:page_size], key=lambda r: -r.id):
            self._ids_desc_neg.append(-record.id)
            self._rows[record.id] = row_for(record, now, self.home)
        return self.rows()

    def append_older(self, records: Sequence[CommandRecord], *, page_size: int, now: float | None = None) -> Diff:
        """Add a page below the oldest held row; past the cap, drop the newest rows (the far end)."""
        diff = Diff()
        self.has_older = len(records) > page_size
        for record in sorted(records[:page_size], key=lambda r: -r.id):
            if record.id in self._rows or (self.oldest_id is not None and record.id > self.oldest_id):
                continue
            self._ids_desc_neg.append(-record.id)
            self._rows[record.id] = row = row_for(record, now, self.home)
            diff.inserted.append((len(self._ids_desc_neg) - 1, row))
        overflow = len(self._ids_desc_neg) - self.max_rows
        if overflow > 0:
            dropped = [-neg for neg in self._ids_desc_neg[:overflow]]
            del self._ids_desc_neg[:overflow]
            for command_id in dropped:
                del self._rows[command_id]
            self.has_newer = True
            # Indices of rows inserted above were computed before the drop: shift them.
            diff.inserted = [(index - overflow, row) for index, row in diff.inserted]
            diff.removed = dropped
        return diff

    def merge(self, records: Iterable[CommandRecord], *, now: float | None = None) -> Diff:
        """Apply fresh journal rows: update held ones, insert new matches in order, drop non-matches.

        A row newer than the held slice is inserted only while the slice reaches the newest end;
        one older than the slice only when nothing older exists (else paging brings it later).
        """
        diff = Diff()
        for record in sorted(records, key=lambda r: -r.id):
            held = record.id in self._rows
            if not self.filter.matches(record):
                if held:
                    self._remove(record.id)
                    diff.removed.append(record.id)
                continue
            row = row_for(record, now, self.home)
            if held:
                if row != self._rows[record.id]:
                    self._rows[record.id] = row
                    diff.updated.append(row)
                continue
            if not self._in_range(record.id):
                continue
            index = bisect.bisect_left(self._ids_desc_neg, -record.id)
            self._ids_desc_neg.insert(index, -record.id)
            self._rows[record.id] = row
            diff.inserted.append((index, row))
        # Inserted indices must hold in application order after removals: recompute them finally.
        if diff.inserted:
            positions = {-neg: i for i, neg in enumerate(self._ids_desc_neg)}
            diff.inserted = sorted(((positions[row.id], row) for _, row in diff.inserted), key=lambda p: p[0])
        overflow = len(self._ids_desc_neg) - self.max_rows
        if overflow > 0 and not self.has_newer:
            # Live rows arrived at the top: forget the oldest ones, paging brings them back on demand.
            dropped = [-neg for neg in self._ids_desc_neg[-overflow:]]
            for command_id in dropped:
                self._remove(command_id)
            dropped_set = set(dropped)
            diff.inserted = [(i, r) for i, r in diff.inserted if r.id not in dropped_set]
            diff.removed.extend(dropped)
            self.has_older = True
        return diff

    def _in_range(self, command_id: int) -> bool:
        newest, oldest = self.newest_id, self.oldest_id
        if newest is None:
            return not self.has_newer
        if command_id > newest:
            return not self.has_newer
        return not (oldest is not None and command_id < oldest and self.has_older)

    def _remove(self, command_id: int) -> None:
        index = bisect.bisect_left(self._ids_desc_neg, -command_id)
        if index < len(self._ids_desc_neg) and self._ids_desc_neg[index] == -command_id:
            del self._ids_desc_neg[index]
        self._rows.pop(command_id, None)

    def refresh_durations(self, now: float | None = None) -> list[Row]:
        """Running rows whose live duration text changed (the view updates one cell each)."""
        now = time.time() if now is None else now
        changed = []
        for row in self.running_rows():
            text = format_duration(elapsed_ms(row, now))
            if text != row.values[-1]:
                self._rows[row.id] = new = Row(
                    row.id, row.status, (*row.values[:-1], text), row.started_at, row.stop_requested
                )
                changed.append(new)
        return changed


def describe_agents(servers: Sequence[ServerRecord], now: float | None = None) -> str:
    """The connected agents in one line: which clients, since when."""
    now = time.time() if now is None else now
    if not servers:
        return _("No agent is connected right now.")
    groups: dict[str, list[ServerRecord]] = {}
    for server in servers:
        # "Claude Desktop 0.14.2": the app the user knows, and its version.
        name = friendly_client_name(server.client_name) if server.client_name else _("an agent starting up")
        label = f"{name} {server.client_version or ''}".strip() if server.client_name else name
        groups.setdefault(label, []).append(server)
    parts = []
    for label, members in groups.items():
        since = format_time(min(s.started_at for s in members), now)
        count = f" ×{len(members)}" if len(members) > 1 else ""
        parts.append(_("{agent} (since {time})").format(agent=f"{label}{count}", time=since))
    return ngettext("Connected agent: {agents}", "Connected agents: {agents}", len(servers)).format(
        agents=", ".join(parts)
    )


def describe_activity(active: Sequence[CommandRecord]) -> str:
    """Running and waiting commands in words, so none is ever out of sight while the list scrolls."""
    running = sum(1 for r in active if r.status is Status.RUNNING)
    waiting = sum(1 for r in active if r.status is Status.WAITING)
    parts = []
    if running:
        parts.append(ngettext("{count} command running", "{count} commands running", running).format(count=running))
    if waiting:
        parts.append(
            ngettext("{count} waiting for your approval", "{count} waiting for your approval", waiting).format(
                count=waiting
            )
        )
    return " · ".join(parts) if parts else _("Nothing running.")


def size_text(count: int | None) -> str:
    if count is None:
        return ""
    if count < 1024:
        return ngettext("{count} byte", "{count} bytes", count).format(count=count)
    if count < 1024 * 1024:
        return _("{size} KB").format(size=format_number(count / 1024, 1))
    return _("{size} MB").format(size=format_number(count / 1024 / 1024, 1))


@dataclass(frozen=True)
class DetailLine:
    """One labelled line of the details pane (in the user's language)."""

    label: str
    value: str


def outcome_text(record: CommandRecord) -> str:
    """The status in a sentence: "✗ Failed: the program reported error 1", "■ Stopped by the user".
    A success says nothing more: "exit code 0" is a programmer's word for it."""
    text = status_label(record)
    if record.exit_code is not None and record.status is not Status.FINISHED:
        text = _("{status}: the program reported error {code}").format(status=text, code=record.exit_code)
    return text


def timing_text(record: CommandRecord, now: float | None = None) -> str:
    """When it was asked for, how long it waited for approval, and how long it ran."""
    now = time.time() if now is None else now
    parts = [format_timestamp(record.created_at)]
    if record.started_at is not None and record.started_at - record.created_at >= 1:
        waited = format_duration((record.started_at - record.created_at) * 1000)
        parts.append(_("waited {duration} for approval").format(duration=waited))
    if record.status.is_active and record.started_at is not None:
        parts.append(_("running for {duration}").format(duration=format_duration(elapsed_ms(record, now))))
    elif record.duration_ms is not None:
        parts.append(_("took {duration}").format(duration=format_duration(record.duration_ms)))
        if record.ended_at is not None:
            parts.append(_("ended {time}").format(time=format_clock_time(record.ended_at)))
    return ", ".join(parts)


def rule_words(rule: Rule) -> str | None:
    """A rule as the user reads it, what does not show in its folder written out; None for a kind this
    version cannot say (a newer version's, or a row another program wrote into the file)."""
    try:
        return visible(rule.shown())
    except ValueError:
        return None


def detail_lines(
    record: CommandRecord, now: float | None = None, protected: Sequence[str] = (), rules: Iterable[Rule] = ()
) -> list[DetailLine]:
    """The facts of one command, in the order a user asks them: how it ended, where, who, when.
    `protected`: the app's own paths, with which a held command is judged again to say why it was
    held in the user's language (`journal.reasons`). Each value is one line, its newlines and tabs
    written out (`^J`): the pane lists "label<Tab>value" lines, and a folder or plain words with a
    newline wrote lines of their own there ("Answer<Tab>allowed by you")."""
    client = client_label(record)
    if record.client_name:  # in full here: what the client calls itself, and its version
        client = client_named(record.client_name, f"{record.client_name} {record.client_version or ''}".strip())
    lines: list[DetailLine] = []  # the status itself heads the pane
    shown_reason = record.reason and record.reason not in KILLED_LABELS and record.reason != TIMED_OUT_REASON
    if shown_reason:
        lines.append(DetailLine(_("Why"), visible(reason_for_person(record, protected), keep="")))
    if record.decision is not None:
        who = who_for_person(record.decided_by)
        if record.allowed_by_rule is not None:  # by its words, as the user clicked it; a removed one by number
            words = next((rule_words(rule) for rule in rules if rule.id == record.allowed_by_rule), None)
            who = (
                _("your rule “{rule}”").format(rule=words)
                if words
                else _("your rule {number}").format(number=record.allowed_by_rule)
            )
        answer = _("allowed by {who}") if record.decision == "allowed" else _("denied by {who}")
        lines.append(DetailLine(_("Answer"), answer.format(who=who)))
    if record.stop_requested_at is not None and record.status.is_active:
        asked = _("asked at {time}, ending it now").format(time=format_clock_time(record.stop_requested_at))
        lines.append(DetailLine(_("Stop"), asked))
    lines += [
        DetailLine(_("Folder"), visible(record.cwd, keep="") if record.cwd else _("(not given)")),
        DetailLine(_("Agent"), client),
        DetailLine(_("When"), timing_text(record, now)),
    ]
    limits = []
    if record.timeout_ms is not None:
        limits.append(_("time limit {duration}").format(duration=format_duration(record.timeout_ms)))
    names = visible(", ".join(record.env_keys), keep="") if record.env_keys else _("none")
    limits.append(_("extra environment: {names}").format(names=names))
    lines.append(DetailLine(_("Settings"), "; ".join(limits)))
    return lines
