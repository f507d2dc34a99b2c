"""The activity log's toolbar and its dialogs: the text and status filters, "Back to newest",
Clear history (after the user's Yes) and the list of the user's rules (each removable).

The rules listed are those the tray applies, as it tells them (core/channel/protocol.RulesTold): on
the line of a window it started (`LineRules`), or in its answer to a window started by hand
(`AskedRules`). Only with no tray is the journal read, and the list says that nothing applies them.
"""

from __future__ import annotations

import threading
import time
import tkinter as tk
from dataclasses import dataclass
from functools import partial
from tkinter import font as tkfont
from tkinter import ttk
from typing import Protocol

from app.core.channel.client import HELLO_TIMEOUT_S, NoTray, TrayRefused, ask_tray
from app.core.channel.protocol import BadValue, RulesTold, RuleTold
from app.core.i18n import N_, _, ngettext
from app.core.i18n.formats import format_number
from app.core.journal.store import CommandRecord, Journal
from app.core.paths import AppPaths
from app.core.policy.rules import SCOPES, describe
from app.core.visible_text import visible
from app.ui.windows.controls import Controls
from app.ui.windows.link import TrayLine
from app.ui.windows.log_model import STATUS_FILTERS, Filter, RowWindow, filter_label

FILTER_DEBOUNCE_MS = 250  # typing in the filter box re-queries once the user pauses
STATUS_GAP_PX = 14  # between the filter and "Show:"
BUTTON_GAP_PX = 10  # between what is left of "Your rules..." and it
RULES_REFRESH_S = 2.0  # a window started by hand asks the tray for its rules this often while they show

RULES_ASKING = N_("Asking Cowork Terminal for your rules…")
RULES_NO_APP = N_("Cowork Terminal (the app) is not running, so no rule applies now.")
RULES_FROM_FILE = N_("These are the rules it will read when it starts.")
RULES_NO_ANSWER = N_("Cowork Terminal did not tell its rules ({error}).")
UNKNOWN_RULE = N_("Rule {number} (of a kind this version does not know)")


def rule_line(rule: RuleTold) -> str:
    """A rule as its row in the list says it; one of a kind (or scope) this version does not know
    (a newer version's, or a row another program wrote) by its number only."""
    if rule.scope in SCOPES:
        try:
            words = visible(describe(rule.kind, rule.folder, rule.scope))
        except ValueError:
            pass
        else:
            return _("Rule {number}: {description}").format(number=rule.id, description=words)
    return _(UNKNOWN_RULE).format(number=rule.id)


@dataclass(frozen=True)
class RulesView:
    """What the list shows: the rules (None when nobody told them), a line on where they come from
    (empty when the tray told them), and a value that changes whenever what was told changed."""

    rules: tuple[RuleTold, ...] | None
    note: str
    version: object


class RulesSource(Protocol):
    def ask(self) -> None:
        """The user opens the list: learn the rules anew where asking is how they are learned."""

    def follow(self) -> None:
        """While the list shows (at each poll): ask again, off the UI thread, when that is due."""

    def view(self) -> RulesView: ...


class LineRules:
    """For a window the tray started: the rules the tray told on its line (at open, and at each change)."""

    def __init__(self, line: TrayLine) -> None:
        self.line = line

    def ask(self) -> None:
        pass  # the tray tells them without being asked

    def follow(self) -> None:
        pass

    def view(self) -> RulesView:
        message, ended, version = self.line.latest(RulesTold.OP)
        if ended:  # what the tray said no longer holds
            return RulesView(None, _(RULES_NO_APP), version)
        if message is None:
            return RulesView(None, _(RULES_ASKING), version)
        try:
            return RulesView(RulesTold.from_wire(message).rules, "", version)
        except BadValue as bad:
            return RulesView(None, _(RULES_NO_ANSWER).format(error=bad), version)


class AskedRules:
    """For a window started by hand: asks the tray (its answer to `holds` names its rules). With no
    tray, the journal's rules, saying that nothing applies them (read on the UI thread, which owns
    the journal's connection)."""

    def __init__(self, paths: AppPaths, journal: Journal) -> None:
        self.paths = paths
        self.journal = journal
        self._lock = threading.Lock()
        self._told: tuple[RuleTold, ...] | None = None
        self._why = _(RULES_ASKING)
        self._no_tray = False
        self._version = 0
        self._asked_at: float | None = None
        self._asking = False

    def ask(self) -> None:
        """Asked on the UI thread: a tray answers at once (a read, in milliseconds); one that does not
        is waited for HELLO_TIMEOUT_S at most."""
        self._take(*self._asked())

    def follow(self) -> None:
        with self._lock:
            due = self._asked_at is None or time.monotonic() - self._asked_at >= RULES_REFRESH_S
            if not due or self._asking:
                return
            self._asking = True
        threading.Thread(target=lambda: self._take(*self._asked()), name="window-rules", daemon=True).start()

    def _asked(self) -> tuple[tuple[RuleTold, ...] | None, str, bool]:
        """The tray's rules, or why there are none, and whether no tray runs."""
        try:
            reply = ask_tray(self.paths, "holds", wait_s=HELLO_TIMEOUT_S)
        except NoTray:
            return None, "", True
        except TrayRefused as refused:
            return None, _(RULES_NO_ANSWER).format(error=refused), False
        try:  # a tray that names no rules (another version) tells nothing
            return RulesTold.from_wire(reply).rules, "", False
        except BadValue as bad:
            return None, _(RULES_NO_ANSWER).format(error=bad), False

    def _take(self, told: tuple[RuleTold, ...] | None, why: str, no_tray: bool) -> None:
        with self._lock:
            if (told, why, no_tray) != (self._told, self._why, self._no_tray):
                self._told, self._why, self._no_tray = told, why, no_tray
                self._version += 1
            self._asked_at = time.monotonic()
            self._asking = False

    def view(self) -> RulesView:
        with self._lock:
            told, why, no_tray, version = self._told, self._why, self._no_tray, self._version
        if no_tray:
            rules = RulesTold.of(self.journal.rules()).rules
            return RulesView(rules, f"{_(RULES_NO_APP)} {_(RULES_FROM_FILE)}", version)
        return RulesView(told, why, version)


def _packed_width(widget: tk.Widget) -> int:
    """The width `widget` asks for in its row, with its padding."""
    padx = widget.pack_info().get("padx", 0)
    pads = padx if isinstance(padx, tuple | list) else (padx, padx)
    return widget.winfo_reqwidth() + sum(int(p) for p in pads)


class ToolbarHost(Protocol):
    """What the toolbar reaches of its window (log_window.LogWindow): its rows, controls and rules."""

    @property
    def model(self) -> RowWindow: ...
    @property
    def controls(self) -> Controls: ...
    @property
    def rules_source(self) -> RulesSource: ...
    @property
    def active(self) -> list[CommandRecord]: ...
    @property
    def total_commands(self) -> int: ...
    def reload(self) -> None: ...
    def clear_history(self) -> int: ...
    def show_rules(self) -> tk.Toplevel: ...
    def confirm(self, title: str, text: str) -> bool: ...


class Toolbar:
    """The bar above the list. The window owns the rows; this sets its filter and asks for reloads."""

    def __init__(self, root: tk.Tk | tk.Toplevel, window: ToolbarHost) -> None:
        self.root = root
        self.window = window
        self._after_filter: str | None = None
        self.frame = outer = ttk.Frame(root, padding=(12, 10, 12, 6))
        outer.pack(fill="x")
        self.bar = bar = ttk.Frame(outer)
        bar.pack(fill="x")
        # "Show:" and its choices, in the bar's row where they fit, else in a row of their own under
        # it: a narrow window (or a longer language) must not squeeze the choice out of sight.
        self.status_part = ttk.Frame(outer)
        self.filter_caption = ttk.Label(bar, text=_("Filter:"))
        self.filter_caption.pack(side="left")
        self.filter_text = tk.StringVar()
        choices = [filter_label(f) for f in STATUS_FILTERS]
        text_font = tkfont.nametofont("TkTextFont")
        widest = max(text_font.measure(choice) for choice in choices)
        # In characters ("0"s): the status box as wide as its longest choice in this language, at
        # least the English size; the filter box gives up what the status box needs beyond that.
        box_width = max(34, -(-widest // text_font.measure("0")) + 3)
        self.filter_entry = ttk.Entry(bar, textvariable=self.filter_text, width=max(16, 36 - (box_width - 34)))
        self.filter_entry.pack(side="left", padx=(6, 4), fill="x", expand=True)
        self.filter_text.trace_add("write", lambda *_: self._filter_changed_later())
        self.clear_filter_button = ttk.Button(bar, text="✕", width=2, style="Small.TButton", command=self.clear_filter)
        self.clear_filter_button.pack(side="left")
        self.show_caption = ttk.Label(self.status_part, text=_("Show:"))
        self.show_caption.pack(side="left", padx=(0, 6))
        self.status_choice = tk.StringVar(value=filter_label(STATUS_FILTERS[0]))
        self.status_box = ttk.Combobox(
            self.status_part,
            textvariable=self.status_choice,
            values=choices,
            state="readonly",
            width=box_width,
        )
        self.status_box.pack(side="left")
        self.status_box.bind("<<ComboboxSelected>>", lambda _e: self.apply_filter())
        self.clear_button = ttk.Button(bar, text=_("Clear history…"), command=window.clear_history)
        # Packed before the filters: when a translation makes the bar too long, the filter box
        # gives way, not these buttons.
        self.clear_button.pack(side="right", before=self.filter_caption)
        self.rules_button = ttk.Button(bar, text=_("Your rules…"), command=window.show_rules)
        # Its own room on the left: the filter box takes the row's spare width, and "Show:"'s choice
        # beside it touched this button.
        self.rules_button.pack(side="right", padx=(BUTTON_GAP_PX, 6), before=self.filter_caption)
        self.newest_button = ttk.Button(bar, text=_("↑ Back to newest"), command=window.reload)
        self._one_row: bool | None = None
        outer.bind("<Configure>", lambda event: self._place_status(event.width), add="+")
        self._place_status(0)
        self.rules_window: tk.Toplevel | None = None
        self._rules_frame: ttk.Frame | None = None
        self._rules_shown: object = None  # the version of what the list shows
        self._removed_rules: set[int] = set()  # removed here, until what is told no longer lists them
        self.rules_intro: ttk.Label | None = None
        self.rules_note: ttk.Label | None = None
        self.rule_rows: dict[int, tuple[ttk.Label, ttk.Button]] = {}

    def _place_status(self, width: int) -> None:
        """The status choice in the bar's row when the whole row fits in `width` (1 or less: not drawn yet),
        else in a row of its own."""
        row = [w for w in self.bar.pack_slaves() if w is not self.status_part]
        needed = sum(_packed_width(w) for w in row) + self.status_part.winfo_reqwidth() + STATUS_GAP_PX
        one_row = width <= 1 or needed <= width - 24  # the bar's own padding, both sides
        if one_row == self._one_row:
            return
        self._one_row = one_row
        if one_row:
            self.status_part.pack(in_=self.bar, side="left", padx=(STATUS_GAP_PX, 0), after=self.clear_filter_button)
        else:
            self.status_part.pack(in_=self.frame, side="top", anchor="w", pady=(6, 0), after=self.bar)

    def show_newest_button(self, shown: bool) -> None:
        if shown:
            self.newest_button.pack(side="right", padx=(0, 8))
        else:
            self.newest_button.pack_forget()
        if self._one_row is not None:  # the row's width changed: the choice may move
            self._one_row = None
            self._place_status(self.frame.winfo_width())

    # -- filters --------------------------------------------------------------------------------

    def _filter_changed_later(self) -> None:
        if self._after_filter is not None:
            self.root.after_cancel(self._after_filter)
        self._after_filter = self.root.after(FILTER_DEBOUNCE_MS, self.apply_filter)

    def cancel_pending(self) -> None:
        if self._after_filter is not None:
            self.root.after_cancel(self._after_filter)
            self._after_filter = None

    def apply_filter(self) -> None:
        self._after_filter = None
        label = self.status_choice.get()
        choice = next((f for f in STATUS_FILTERS if filter_label(f) == label), STATUS_FILTERS[0])
        wanted = Filter(text=self.filter_text.get().strip(), statuses=choice.statuses)
        if wanted != self.window.model.filter:
            self.window.model.filter = wanted
            self.window.reload()

    def set_filter(self, text: str = "", status_label: str | None = None) -> None:
        """Set both filters at once (what typing and picking do, without the typing delay)."""
        self.filter_text.set(text)
        self.status_choice.set(status_label or filter_label(STATUS_FILTERS[0]))
        if self._after_filter is not None:
            self.root.after_cancel(self._after_filter)
        self.apply_filter()

    def clear_filter(self, *, reload: bool = True) -> None:
        self.filter_text.set("")
        self.status_choice.set(filter_label(STATUS_FILTERS[0]))
        self.cancel_pending()
        self.window.model.filter = Filter()
        if reload:
            self.window.reload()

    # -- Clear history --------------------------------------------------------------------------

    def clear_history(self) -> int:
        """Ask the tray to delete the journal's finished rows after the user's Yes; running ones stay."""
        window = self.window
        finished = window.total_commands - len(window.active)
        if finished <= 0:
            return 0
        question = ngettext(
            "Delete the history of {count} finished command?",
            "Delete the history of {count} finished commands?",
            finished,
        ).format(count=format_number(finished))
        question += "\n\n" + _(
            "Running and waiting commands stay. Only this list is cleared: no file or program on "
            "your computer is touched. This cannot be undone."
        )
        if not window.confirm(_("Clear history"), question):
            return 0
        window.controls.clear_history()
        return finished

    # -- the user's rules (core/policy/rules.py): listed here, removable; only the approval window makes them --

    def show_rules(self) -> tk.Toplevel:
        """A small window listing the rules the tray applies, each with Remove (removing tightens: no question)."""
        if self.rules_window is not None and self.rules_window.winfo_exists():
            self.rules_window.destroy()
        self.window.rules_source.ask()
        window = self.rules_window = tk.Toplevel(self.root)
        window.title(_("Cowork Terminal: your rules"))
        self._rules_frame = ttk.Frame(window, padding=12)
        self._rules_frame.pack(fill="both", expand=True)
        self._fill_rules()
        return window

    def follow_rules(self) -> None:
        """At each poll of the window: an open list follows what the tray tells (a rule made or removed)."""
        if self.rules_window is None or not self.rules_window.winfo_exists():
            return
        source = self.window.rules_source
        source.follow()
        if source.view().version != self._rules_shown:
            self._fill_rules()

    def _fill_rules(self) -> None:
        frame = self._rules_frame
        if frame is None:
            return
        for child in frame.winfo_children():
            child.destroy()
        view = self.window.rules_source.view()
        self._rules_shown = view.version
        rules: list[RuleTold] = []
        if view.rules is not None:
            self._removed_rules &= {rule.id for rule in view.rules}  # gone from what is told: forgotten
            rules = [rule for rule in view.rules if rule.id not in self._removed_rules]
        if view.rules is None:
            intro = view.note
        elif rules:
            intro = _(
                "Commands these rules cover run without asking you. Only you make rules, from the approval window."
            )
        else:
            intro = _("You have no rules. When a command waits for you, the approval window may offer one.")
        self.rules_intro = ttk.Label(frame, text=intro, wraplength=460, justify="left")
        self.rules_intro.pack(anchor="w", pady=(0, 8))
        self.rules_note = None
        if view.rules is not None and view.note:
            self.rules_note = ttk.Label(frame, text=view.note, wraplength=460, justify="left", style="Muted.TLabel")
            self.rules_note.pack(anchor="w", pady=(0, 8))
        self.rule_rows = {}
        for rule in rules:
            row = ttk.Frame(frame)
            row.pack(fill="x", pady=2)
            label = ttk.Label(row, text=rule_line(rule), wraplength=360, justify="left")
            label.pack(side="left", padx=(0, BUTTON_GAP_PX))  # a long line in Russian touched Remove
            remove = ttk.Button(row, text=_("Remove"), command=partial(self.remove_rule, rule.id))
            remove.pack(side="right")
            self.rule_rows[rule.id] = (label, remove)
        window = self.rules_window
        if window is not None:
            ttk.Button(frame, text=_("Close"), command=window.destroy).pack(anchor="e", pady=(10, 0))

    def remove_rule(self, rule_id: int) -> None:
        """Removing a rule tightens control: the tray applies it at once, so the list drops it now."""
        self.window.controls.remove_rule(rule_id)
        self._removed_rules.add(rule_id)
        self.show_rules()
