"""What a command printed, in a form the model can use: a budget of characters for the answer,
the whole output one read away in a private file, and the newest line while it runs.

Why it is built this way:
- Claude Code refuses tool results over 25,000 tokens and keeps 30,000 characters of its own Bash
  tool's output; a megabyte floods any conversation. So a call returns at most `OutputBudget.chars`
  characters of output in all, shared fairly between the streams, the start and (more of) the end
  of each, cut at line boundaries, with a marker that says which lines were left out;
- whatever was left out is one `tail`, `grep` or `sed -n` away: the whole output goes to a
  private file outside the app's guarded folders (`output_files`);
- memory stays bounded whatever a command prints: each stream keeps only a head and a tail, and
  the spool sends the whole output to its file once it passes a megabyte;
- the seed's 1 MB per stream (head and tail) stays available as a setting.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.core.execution.output_decoding import (
    complete_utf8_prefix,
    decode_output,
    json_length,
    json_prefix,
    json_suffix,
    skip_utf8_continuation,
    visible_controls,
)
from app.core.execution.output_files import KeptStart, OutputSpool
from app.core.i18n import _, ngettext
from app.core.i18n.formats import format_number
from app.core.settings import OUTPUT_BUDGET, SettingsStore
from app.core.visible_text import visible

BUDGET_SETTING = OUTPUT_BUDGET
BUDGET_ENV = "COWORK_TERMINAL_OUTPUT_BUDGET"
DEFAULT_BUDGET_CHARS = 30_000  # Claude Code's own Bash tool keeps this much
MIN_BUDGET_CHARS = 2_000  # room for the markers and a few lines of each stream
MAX_BUDGET_CHARS = 2_000_000
SEED_BUDGET = "seed"  # the cowork-terminal-mcp package's 1 MB per stream, head and tail
SEED_STREAM_BYTES = 1024 * 1024
SEED_TAIL_SHARE = 0.25
HEAD_SHARE = 1 / 3  # of a stream's share, kept from its start; the rest from its end (errors are there)
SCROLLBACK_MAX_LINES = 500  # of a session shell's output, kept for terminal_scrollback (shell_session.py)
BYTES_PER_CHAR_MAX = 4  # UTF-8: a stream keeps 4 bytes per character it may show, so a cut never starves
LINE_CUT_REACH = 0.5  # look this far back (share of the room) for a line boundary to cut at
LATEST_LINE_WINDOW_BYTES = 4096
LATEST_LINE_MAX_CHARS = 200


# -- the budget: a setting ---------------------------------------------------------------------


@dataclass(frozen=True)
class OutputBudget:
    """How much output a call returns: `chars` in all, or (None) the seed's 1 MB per stream."""

    chars: int | None = DEFAULT_BUDGET_CHARS

    @property
    def label(self) -> str:
        """What the user reads for this budget (the tray's menu, the CLI), in their language."""
        if self.chars is None:
            return _("Up to 1 MB of output and 1 MB of error messages")
        return ngettext("{count} character", "{count} characters", self.chars).format(count=format_number(self.chars))

    @property
    def setting(self) -> str | int:
        return SEED_BUDGET if self.chars is None else self.chars


BUDGET_CHOICES = (OutputBudget(DEFAULT_BUDGET_CHARS), OutputBudget(100_000), OutputBudget(None))  # the tray's


def _not_a_budget(value: object) -> str:
    return _("the output budget is a number of characters or {seed}, not {value}").format(
        seed=repr(SEED_BUDGET), value=repr(value)
    )


def parse_budget(value: object) -> OutputBudget:
    """A budget from a setting, the CLI or the environment: a number of characters, or "seed"."""
    if isinstance(value, str):
        text = value.strip().lower().replace(",", "").replace("_", "")
        if text == SEED_BUDGET:
            return OutputBudget(None)
        if not text.isdigit():
            raise ValueError(_not_a_budget(value))
        value = int(text)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(_not_a_budget(value))
    if not MIN_BUDGET_CHARS <= value <= MAX_BUDGET_CHARS:
        raise ValueError(
            _("the output budget must be from {low} to {high} characters").format(
                low=format_number(MIN_BUDGET_CHARS), high=format_number(MAX_BUDGET_CHARS)
            )
        )
    return OutputBudget(value)


def budget_from(stored: object, environ: Mapping[str, str]) -> OutputBudget:
    """The budget in force: the server's environment (set in Claude's config) over the user's
    setting, over the default; a value that does not parse counts as not set."""
    for value in (environ.get(BUDGET_ENV), stored):
        if value is None or value == "":
            continue
        with contextlib.suppress(ValueError):
            return parse_budget(value)
    return OutputBudget()


def output_budget(journal: SettingsStore, environ: Mapping[str, str] | None = None) -> OutputBudget:
    return budget_from(journal.get_setting(BUDGET_SETTING), os.environ if environ is None else environ)


def set_output_budget(journal: SettingsStore, budget: OutputBudget) -> None:
    journal.set_setting(BUDGET_SETTING, budget.setting)


# -- one stream, bounded ------------------------------------------------------------------------


class StreamCapture:
    """Keeps the first and the last bytes of a stream, counts all of them and their lines."""

    def __init__(self, label: str, head_bytes: int, tail_bytes: int) -> None:
        self.label = label
        self.head_limit = head_bytes
        self.tail_limit = tail_bytes
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.newlines = 0
        self.ends_with_newline = False

    def feed(self, chunk: bytes) -> None:
        if not chunk:
            return
        self.total += len(chunk)
        self.newlines += chunk.count(b"\n")
        self.ends_with_newline = chunk.endswith(b"\n")
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk and self.tail_limit:
            self.tail += chunk
            if len(self.tail) > self.tail_limit:
                del self.tail[: len(self.tail) - self.tail_limit]

    @property
    def whole(self) -> bool:
        """True while nothing was dropped from memory: head and tail are the whole stream."""
        return self.total == len(self.head) + len(self.tail)

    @property
    def lines(self) -> int:
        return self.newlines + (1 if self.total and not self.ends_with_newline else 0)

    def raw(self) -> bytes:
        """What was kept, as bytes (for the journal's preview)."""
        return bytes(self.head + self.tail)

    def since(self, offset: int) -> bytes:
        """The bytes from `offset` on, or as many of the last ones as are kept."""
        if self.whole:
            return bytes(self.head + self.tail)[offset:]
        start = max(offset - (self.total - len(self.tail)), 0)
        return bytes(self.tail[start:])

    def kept_after(self, offset: int) -> tuple[bytes, bytes]:
        """What memory kept of the stream from its byte `offset` on, in whole characters: the part
        that follows `offset` without a gap, and the part after the bytes not kept (b"" when none)."""
        if self.whole:
            first, last = bytes(self.head + self.tail)[offset:], b""
        else:
            head_end, tail_start = len(self.head), self.total - len(self.tail)
            first = bytes(self.head[offset:]) if offset < head_end else b""
            last = bytes(self.tail[max(offset - tail_start, 0) :])
            if offset >= tail_start:
                first, last = last, b""
            else:
                first = first[: complete_utf8_prefix(first)]
                last = last[skip_utf8_continuation(last) :]
        return first[skip_utf8_continuation(first) :], last

    def view(self, code_pages: Sequence[str] = ()) -> Kept:
        if self.whole:
            text = decode_output(bytes(self.head + self.tail), code_pages)
            return Kept(self.label, text, "", True, self.total, self.lines)
        head = bytes(self.head)
        tail = bytes(self.tail)
        return Kept(
            self.label,
            decode_output(head[: complete_utf8_prefix(head)], code_pages),
            decode_output(tail[skip_utf8_continuation(tail) :], code_pages),
            False,
            self.total,
            self.lines,
        )


@dataclass(frozen=True)
class Kept:
    """A stream's text as far as it was kept: `head` is all of it when `whole`."""

    label: str
    head: str
    tail: str
    whole: bool
    total_bytes: int
    total_lines: int

    @property
    def size(self) -> int | None:
        """Characters it takes in the model's JSON text, when known (a stream not kept whole is longer
        than any budget)."""
        return json_length(self.head) if self.whole else None


# -- fitting streams into the budget: pure functions ------------------------------------------------


def fair_shares(sizes: Sequence[int | None], budget: int) -> list[int]:
    """Split `budget` so that a stream needing less than an equal share gives the rest to the
    others (None: needs more than any share)."""
    shares = [0] * len(sizes)
    remaining = budget
    order = sorted(range(len(sizes)), key=lambda i: (sizes[i] is None, sizes[i] or 0))
    for done, index in enumerate(order):
        equal = remaining // (len(sizes) - done)
        size = sizes[index]
        shares[index] = equal if size is None else min(size, equal)
        remaining -= shares[index]
    return shares


def _marker(label: str, first: int, last: int, omitted_bytes: int, where: str) -> str:
    lines = f"line {first:,}" if first == last else f"lines {first:,}-{last:,}"
    return f"[... {label} {lines} ({omitted_bytes:,} bytes) left out here; {where} ...]\n"


def _line_count(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def clip(kept: Kept, room: int, where: str) -> str:
    """At most `room` characters of a stream in the model's JSON text (output_decoding.json_length):
    its start and its end, cut at line boundaries where one is near, and between them a marker naming
    the lines left out and `where` to find them; its controls as pictures (`visible_controls`)."""
    if kept.whole and json_length(kept.head) <= room:
        return visible_controls(kept.head)
    widest = _marker(kept.label, kept.total_lines, kept.total_lines, kept.total_bytes, where)
    space = max(room - json_length(widest) - json_length("\n"), 0)  # the newline before the marker, if needed
    head, tail = cut_ends(kept.head, kept.head if kept.whole else kept.tail, space)
    first = head.count("\n") + 1
    last = max(kept.total_lines - _line_count(tail), first)
    omitted = max(kept.total_bytes - len(head.encode()) - len(tail.encode()), 0)
    return joined_ends(head, _marker(kept.label, first, last, omitted, where), tail)


def cut_ends(start: str, end: str, space: int) -> tuple[str, str]:
    """The start of `start` and the end of `end` in `space` characters of JSON text together: a
    HEAD_SHARE of it for the start, the rest for the end; each cut at a line boundary where one is
    within LINE_CUT_REACH, so the model reads whole lines."""
    head = start[: json_prefix(start, int(space * HEAD_SHARE))]
    if len(start) > len(head):
        cut = head.rfind("\n") + 1
        if cut > len(head) * (1 - LINE_CUT_REACH):
            head = head[:cut]
    tail_room = space - json_length(head)
    tail = end[json_suffix(end, tail_room) :] if tail_room > 0 else ""
    if len(end) > len(tail):
        cut = tail.find("\n") + 1
        if 0 < cut < len(tail) * LINE_CUT_REACH:
            tail = tail[cut:]
    return head, tail


def joined_ends(head: str, marker: str, tail: str) -> str:
    """`head`, the marker on a line of its own, `tail`; controls as pictures (`visible_controls`)."""
    lead = "\n" if head and not head.endswith("\n") else ""
    return f"{visible_controls(head)}{lead}{marker}{visible_controls(tail)}"


def seed_clip(kept: Kept, where: str) -> str:
    """The seed's shape, for the `seed` budget: 1 MiB per stream, 3/4 from the start, and its marker;
    controls as pictures, as in `clip`."""
    if kept.whole:
        return visible_controls(kept.head)
    omitted = max(kept.total_bytes - len(kept.head.encode()) - len(kept.tail.encode()), 0)
    return (
        f"{visible_controls(kept.head)}\n[... {omitted:,} bytes of {kept.label} omitted here: kept the first and "
        f"the last of {kept.total_bytes:,} bytes; {where} ...]\n{visible_controls(kept.tail)}\n"
        f"[{kept.label} truncated at 1MB]"
    )


def fit(views: Sequence[Kept], budget: OutputBudget, where: str) -> list[str]:
    """Each stream's text for the model, all of them within the budget."""
    if budget.chars is None:
        return [seed_clip(view, where) for view in views]
    shares = fair_shares([v.size for v in views], budget.chars)
    return [clip(view, share, where) for view, share in zip(views, shares, strict=True)]


def is_cut(views: Sequence[Kept], budget: OutputBudget) -> bool:
    if budget.chars is None:
        return not all(v.whole for v in views)
    sizes = [v.size for v in views]
    return None in sizes or sum(s or 0 for s in sizes) > budget.chars


# -- one call's output ------------------------------------------------------------------------------


@dataclass(frozen=True)
class FittedOutput:
    texts: list[str]  # one per stream, within the budget together
    output_file: str | None  # the whole output, when anything was left out and it could be kept


class CommandOutput:
    """Everything one call prints: its streams kept within bounds, the spool with all of it, and
    the newest line (for progress). The executor and the shell session feed it."""

    def __init__(
        self,
        budget: OutputBudget | None = None,
        folder: Path | None = None,
        name: str = "output",
        labels: Sequence[str] = ("stdout", "stderr"),
        code_pages: Sequence[str] = (),
    ) -> None:
        self.budget = budget or OutputBudget()
        if self.budget.chars is None:
            head = int(SEED_STREAM_BYTES * (1 - SEED_TAIL_SHARE))
            tail = SEED_STREAM_BYTES - head
        else:
            head = tail = self.budget.chars * BYTES_PER_CHAR_MAX
        self.streams = [StreamCapture(label, head, tail) for label in labels]
        self.spool = OutputSpool(folder, name, len(labels))
        self.code_pages = tuple(code_pages)
        self._recent = bytearray()  # the last bytes of any stream, for the newest line
        self._fitted: FittedOutput | None = None
        self._keep_whole = False

    def keep_whole(self) -> None:
        """Keep the whole output in its file even when nothing is cut: the command outlived its call,
        and later calls (or another server) read it there."""
        self._keep_whole = True
        self.spool.live = True
        self.spool.open()
        self.spool.flush()

    def feed(self, stream: int, chunk: bytes) -> None:
        self.streams[stream].feed(chunk)
        self.spool.write(stream, chunk)
        self._recent += chunk
        if len(self._recent) > LATEST_LINE_WINDOW_BYTES:
            del self._recent[: len(self._recent) - LATEST_LINE_WINDOW_BYTES]

    @property
    def total_bytes(self) -> int:
        return sum(s.total for s in self.streams)

    def latest_line(self) -> str:
        """The newest line that is not blank (a progress bar's newest state after `\\r`), shortened,
        its control and invisible characters written out as in results: a client shows it in its own
        terminal, where an escape could set the clipboard (a red team, 2026-12-05: OSC 52)."""
        text = decode_output(bytes(self._recent[skip_utf8_continuation(self._recent) :]), self.code_pages)
        for line in reversed(text.replace("\r", "\n").split("\n")):
            if line.strip():
                line = visible(visible_controls(line.strip()), keep="")
                return line if len(line) <= LATEST_LINE_MAX_CHARS else line[: LATEST_LINE_MAX_CHARS - 3] + "..."
        return ""

    def snapshot(self) -> FittedOutput:
        """The texts as they stand (the command may still run); the file is made now if needed,
        and keeps growing."""
        views = [s.view(self.code_pages) for s in self.streams]
        cut = is_cut(views, self.budget)
        path = self.spool.open() if cut else None
        return FittedOutput(fit(views, self.budget, self._where(path)), str(path) if path else None)

    def finish(self) -> FittedOutput:
        """The final texts; keeps the file when anything was left out, else removes it. Idempotent."""
        if self._fitted is None:
            fitted = self.snapshot()
            keep = fitted.output_file is not None or self._keep_whole
            self.spool.close(keep, [(s.label, bytes(s.tail)) for s in self.streams])
            self._fitted = fitted
        return self._fitted

    def kept_bytes(self) -> bytes:
        """The output as memory keeps it, for when its file does not hold it all: each stream in turn
        (the order they came in is the file's alone), its start and end with a marker between them
        that names the bytes left out and the stream's true size."""
        parts: list[bytes] = []
        for stream in self.streams:
            if stream.whole:
                parts.append(stream.raw())
                continue
            head = bytes(stream.head)
            head = head[: complete_utf8_prefix(head)]
            tail = bytes(stream.tail)
            tail = tail[skip_utf8_continuation(tail) :]
            omitted = stream.total - len(head) - len(tail)
            lead = b"\n" if head and not head.endswith(b"\n") else b""
            marker = (
                f"[... {omitted:,} bytes of {stream.label} left out here, not kept anywhere; {stream.label} had "
                f"{stream.total:,} bytes in all ...]\n"
            )
            parts.append(head + lead + marker.encode() + tail)
        return b"".join(parts)

    def rest_after(self, kept: KeptStart) -> bytes:
        """What memory kept of the output after `kept` (the start of it a failed write left, in the
        order it came): a marker that says where that start ends and why, then the rest of each stream
        in turn, with a marker where bytes of it were not kept anywhere."""
        lead = b"\n" if kept.size and not _ends_a_line(kept) else b""
        where = "outputFile" if kept.path is not None else "the output kept in the order it came"
        labels = ", then of ".join(
            s.label for s, done in zip(self.streams, kept.per_stream, strict=False) if s.total > done
        )
        parts = [
            lead,
            f"[... {where} stops here ({self.spool.problem}); what follows is what memory kept of the rest of "
            f"{labels or 'the output'} ...]\n".encode(),
        ]
        for stream, done in zip(self.streams, kept.per_stream, strict=False):
            if stream.total <= done:
                continue
            first, last = stream.kept_after(done)
            omitted = stream.total - done - len(first) - len(last)
            parts.append(first)
            if omitted:
                gap_lead = b"\n" if first and not first.endswith(b"\n") else b""
                marker = (
                    f"[... {omitted:,} bytes of {stream.label} left out here, not kept anywhere; {stream.label} had "
                    f"{stream.total:,} bytes in all ...]\n"
                )
                parts += [gap_lead, marker.encode(), last]
        return b"".join(parts)

    def _where(self, path: Path | None) -> str:
        problem = self.spool.problem
        if path is not None and problem is None:
            return "the whole output is in outputFile"
        if path is not None:  # a write failed (a full disk): the file stops where it did
            return f"outputFile holds only the start of the output ({problem})"
        return f"the whole output could not be kept ({problem})"


def _ends_a_line(kept: KeptStart) -> bool:
    """Whether the kept start in its file ends with a line end (or cannot be read: no line end added)."""
    if kept.path is None or not kept.size:
        return kept.data.endswith(b"\n")
    try:
        fd = os.open(kept.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0))
    except OSError:
        return True
    try:
        os.lseek(fd, kept.size - 1, os.SEEK_SET)
        return os.read(fd, 1) in (b"\n", b"")
    except OSError:
        return True
    finally:
        os.close(fd)


OutputHook = Callable[[CommandOutput], None]  # told of a call's output as its command starts
