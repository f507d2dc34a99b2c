"""The activity log's toolbar and its dialogs: the text and status filters, "Back to newest",
Clear history (after the user's Yes) and the list of the user's rules (each removable)."""

from __future__ import annotations

import tkinter as tk
from functools import partial
from tkinter import font as tkfont
from tkinter import ttk
from typing import Protocol

from app.core.i18n import _, ngettext
from app.core.i18n.formats import format_number
from app.core.journal.store import CommandRecord, Journal
from app.ui.windows.controls import Controls
from app.ui.windows.log_model import STATUS_FILTERS, Filter, RowWindow, filter_label

FILTER_DEBOUNCE_MS = 250  # typing in the filter box re-queries once the user pauses
STATUS_GAP_PX = 14  # between the filter and "Show:"


def _packed_width(widget: tk.Widget) -> int:
    """The width `widget` asks for in its row, with its padding."""
    padx = widget.pack_info().get("padx", 0)
    pads = padx if isinstance(padx, tuple | list) else (padx, padx)
    return widget.winfo_reqwidth() + sum(int(p) for p in pads)


class ToolbarHost(Protocol):
    """What the toolbar reaches of its window (log_window.LogWindow): its rows, journal and controls."""

    @property
    def model(self) -> RowWindow: ...
    @property
    def journal(self) -> Journal: ...
    @property
    def controls(self) -> Controls: ...
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
        self.rules_button.pack(side="right", padx=(0, 6), before=self.filter_caption)
        self.newest_button = ttk.Button(bar, text=_("↑ Back to newest"), command=window.reload)
        self._one_row: bool | None = None
        outer.bind("<Configure>", lambda event: self._place_status(event.width), add="+")
        self._place_status(0)
        self.rules_window: tk.Toplevel | None = None
        self._removed_rules: set[int] = set()
        self.rules_intro: ttk.Label | None = None
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
        """A small window listing the user's rules, each with Remove (removing tightens: no question)."""
        if self.rules_window is not None and self.rules_window.winfo_exists():
            self.rules_window.destroy()
        window = self.rules_window = tk.Toplevel(self.root)
        window.title(_("Cowork Terminal: your rules"))
        frame = ttk.Frame(window, padding=12)
        frame.pack(fill="both", expand=True)
        rules = [rule for rule in self.window.journal.rules() if rule.id not in self._removed_rules]
        intro = (
            _("Commands these rules cover run without asking you. Only you make rules, from the approval window.")
            if rules
            else _("You have no rules. When a command waits for you, the approval window may offer one.")
        )
        self.rules_intro = ttk.Label(frame, text=intro, wraplength=460, justify="left")
        self.rules_intro.pack(anchor="w", pady=(0, 8))
        self.rule_rows = {}
        for rule in rules:
            row = ttk.Frame(frame)
            row.pack(fill="x", pady=2)
            text = _("Rule {number}: {description}").format(number=rule.id, description=rule.shown())
            label = ttk.Label(row, text=text, wraplength=360, justify="left")
            label.pack(side="left")
            remove = ttk.Button(row, text=_("Remove"), command=partial(self.remove_rule, rule.id))
            remove.pack(side="right")
            self.rule_rows[rule.id] = (label, remove)
        ttk.Button(frame, text=_("Close"), command=window.destroy).pack(anchor="e", pady=(10, 0))
        return window

    def remove_rule(self, rule_id: int) -> None:
        """Removing a rule tightens control: the tray applies it at once, so the list drops it now."""
        self.window.controls.remove_rule(rule_id)
        self._removed_rules.add(rule_id)
        self.show_rules()
