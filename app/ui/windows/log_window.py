"""The live activity log window: what agents run on this computer, with the pause switch and Stop at hand.

It runs in its own process (`cowork-terminal log-window`), never in the tray's, because Tk and the
tray each need their process's main thread (pystray #138). It talks to the rest of the app only
through the journal: it reads rows, and writes the user's decisions (pause, stop, clear history),
which the servers pick up on their own. Closing it stops nothing else.

Staying live without busy work: every POLL_INTERVAL_MS it asks SQLite's `data_version` whether any
other connection committed; only then does it fetch rows newer than the newest it knows and
re-read the commands that were active. It holds at most MAX_HELD_ROWS rows, paging older ones in as
the user scrolls and dropping the far end, so a journal of 100,000 rows opens as fast as one of 10.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import sys
import time
import tkinter as tk
from collections.abc import Callable, Iterable, Sequence
from tkinter import font as tkfont
from tkinter import messagebox, ttk

from app.core import app_log
from app.core.claude.names import CLIENT_NAMES
from app.core.i18n import N_, _, ngettext
from app.core.i18n.formats import format_number
from app.core.journal.store import CommandRecord, Journal, ServerRecord, Status
from app.core.paths import AppPaths, protected_paths
from app.core.visible_text import visible
from app.ui.windows.controls import Controls, RequestControls, TrayLineControls
from app.ui.windows.link import TrayLine
from app.ui.windows.log_model import (
    COLUMNS,
    MAX_HELD_ROWS,
    PAGE_SIZE,
    STATUS_FILTERS,
    STATUS_STYLES,
    Diff,
    Filter,
    Row,
    RowWindow,
    describe_activity,
    describe_agents,
    detail_lines,
    filter_label,
    outcome_text,
    size_text,
    status_tag,
)
from app.ui.windows.real_input import ArmedButtons, ask_armed, protect_window

log = logging.getLogger(__name__)

WINDOW_TITLE = N_("Cowork Terminal: activity")
WINDOW_SIZE = (1180, 760)  # pixels, at open
POLL_INTERVAL_MS = 250  # new and finished commands show up within this, plus one query's time
FILTER_DEBOUNCE_MS = 250  # typing in the filter box re-queries once the user pauses
DURATION_REFRESH_S = 1.0  # running rows count their seconds up
LIVENESS_CHECK_S = 5.0  # how often to notice a server that died without a word
LOAD_OLDER_AT = 0.92  # scrolled past this fraction of the held rows: fetch the next older page

# The window's words, in English and marked: `_()` gives them in the user's language where shown.
ON_TITLE = N_("Host access is ON")
ON_HINT = N_("Agents can run commands on this computer. Everything they run is listed below.")
PAUSED_TITLE = N_("PAUSED: new commands are refused")
PAUSED_HINT = N_("Nothing runs while paused; commands that were running have been stopped.")
PAUSE_BUTTON = N_("❚❚  Pause host access")
RESUME_BUTTON = N_("▶  Resume host access")
STOP_BUTTON = N_("■  Stop this command")
EMPTY_LIST = N_("No commands yet. When an agent runs a command on this computer, it appears here.")
EMPTY_FILTERED = N_("No command matches the filter.")
NO_SELECTION = N_("Select a command above to see everything about it: the full command, folder, timings and output.")

ON_COLOURS = ("#e7f5ea", "#14532d", "#2f6b3f")  # background, title, hint
PAUSED_COLOURS = ("#b3261e", "#ffffff", "#fde7e4")

# Another engineer adds Allow/Deny for waiting commands: this callback fills the frame under the
# details header whenever a waiting command is selected (see issue 5).
WaitingActions = Callable[[ttk.Frame, CommandRecord, "LogWindow"], None]
# Asks the user a yes/no question (title, message); tests answer for the user.
Confirm = Callable[[str, str], bool]


class LogWindow:
    """The activity log in a Tk root (or Toplevel). Public methods are what the buttons call."""

    def __init__(
        self,
        root: tk.Tk | tk.Toplevel,
        journal: Journal,
        *,
        waiting_actions: WaitingActions | None = None,
        confirm: Confirm | None = None,
        page_size: int = PAGE_SIZE,
        max_rows: int = MAX_HELD_ROWS,
        controls: Controls | None = None,
    ) -> None:
        self.root = root
        self.journal = journal
        self.protected = protected_paths(journal.paths)  # to judge a held command again (its "Why")
        # The window only reads the journal; what its buttons change goes to the tray.
        self.from_tray = controls is not None
        self.controls: Controls = controls or RequestControls(journal.paths, self._problem_later)
        self.waiting_actions = waiting_actions or approval_buttons
        # Yes in the question is armed and deaf to sent clicks, like the prompt's Allow.
        self.confirm = confirm or (lambda title, text: ask_armed(self.root, title, text, _("Yes"), _("No")))
        self.switch_arming = ArmedButtons(root)  # Resume: only the user's own click, once armed
        self.decision_arming = ArmedButtons(root)  # Allow and Deny of the waiting command shown
        self.page_size = page_size
        self.model = RowWindow(max_rows=max_rows)
        self.paused: bool | None = None
        self.servers: list[ServerRecord] = []
        self.active: list[CommandRecord] = []
        self.total_commands = 0
        self._version = -1
        self._newest_seen = 0
        self._active_ids: set[int] = set()
        self._shown_record: CommandRecord | None = None
        self._after_poll: str | None = None
        self._after_filter: str | None = None
        self._loading_older = False
        self._last_durations = 0.0
        self._last_liveness = time.monotonic()
        self._closed = False

        self._setup_style()
        self._build()
        self.reload()
        self._after_poll = self.root.after(POLL_INTERVAL_MS, self._tick)

    # -- layout -----------------------------------------------------------------------------

    def _setup_style(self) -> None:
        self.style = ttk.Style(self.root)
        x11 = self.root.tk.call("tk", "windowingsystem") == "x11"
        if x11 and "clam" in self.style.theme_names():
            self.style.theme_use("clam")  # Tk's X11 'default' theme looks dated; Windows and macOS keep native
        base = tkfont.nametofont("TkDefaultFont")
        if x11:
            for name in ("TkDefaultFont", "TkTextFont", "TkHeadingFont", "TkMenuFont"):
                tkfont.nametofont(name).configure(size=10)
            tkfont.nametofont("TkFixedFont").configure(size=10)
        family = base.actual("family")
        size = base.actual("size")
        self.fonts = {
            "title": tkfont.Font(self.root, family=family, size=size + 7, weight="bold"),
            "hint": tkfont.Font(self.root, family=family, size=size),
            "bold": tkfont.Font(self.root, family=family, size=size, weight="bold"),
            "switch": tkfont.Font(self.root, family=family, size=size + 2, weight="bold"),
            "details_title": tkfont.Font(self.root, family=family, size=size + 2, weight="bold"),
            "link": tkfont.Font(self.root, family=family, size=size, weight="bold", underline=True),
            "mono": tkfont.nametofont("TkFixedFont"),
        }
        line = base.metrics("linespace")
        self.style.configure("Treeview", rowheight=int(line * 1.6))
        self.style.configure("Treeview.Heading", font=self.fonts["bold"], padding=(6, 4))
        self.style.configure("Switch.TButton", font=self.fonts["switch"], padding=(18, 10))
        self.style.configure("Small.TButton", padding=(2, 1))
        self.style.configure("Stop.TButton", foreground="#b3261e", font=self.fonts["bold"])
        self.style.configure("Status.TLabel", foreground="#555555", padding=(10, 4))
        self.style.configure("Muted.TLabel", foreground="#666666")

    def _build(self) -> None:
        root = self.root
        root.title(_(WINDOW_TITLE))
        root.minsize(760, 480)
        root.protocol("WM_DELETE_WINDOW", self.close)
        self._set_icon()

        # The switch and the state in words sit on a coloured band that changes with the state.
        self.banner = tk.Frame(root, padx=18, pady=12, highlightthickness=0)
        self.banner.pack(fill="x")
        texts = tk.Frame(self.banner, highlightthickness=0)
        texts.pack(side="left", fill="x", expand=True)
        self.state_label = tk.Label(texts, font=self.fonts["title"], anchor="w")
        self.state_label.pack(fill="x")
        self.hint_label = tk.Label(texts, font=self.fonts["hint"], anchor="w", justify="left")
        self.hint_label.pack(fill="x")
        self.agents_label = tk.Label(texts, font=self.fonts["hint"], anchor="w", justify="left")
        self.agents_label.pack(fill="x", pady=(6, 0))
        activity = tk.Frame(texts, highlightthickness=0)
        activity.pack(fill="x")
        self.activity_label = tk.Label(activity, font=self.fonts["bold"], anchor="w")
        self.activity_label.pack(side="left")
        self.show_link = tk.Label(activity, text=_("Show"), font=self.fonts["link"], cursor="hand2")
        self.show_link.bind("<Button-1>", lambda _e: self.show_active())
        self._banner_parts = (
            self.banner,
            texts,
            activity,
            self.state_label,
            self.hint_label,
            self.agents_label,
            self.activity_label,
            self.show_link,
        )
        self.pause_button = ttk.Button(self.banner, style="Switch.TButton")
        self.switch_arming.guard(self.pause_button, self.toggle_pause, loosens=lambda: bool(self.paused))
        self.pause_button.pack(side="right", padx=(12, 0))

        bar = ttk.Frame(root, padding=(12, 10, 12, 6))
        bar.pack(fill="x")
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
        self.filter_entry.pack(side="left", padx=(6, 4))
        self.filter_text.trace_add("write", lambda *_: self._filter_changed_later())
        self.clear_filter_button = ttk.Button(bar, text="✕", width=2, style="Small.TButton", command=self.clear_filter)
        self.clear_filter_button.pack(side="left")
        ttk.Label(bar, text=_("Show:")).pack(side="left", padx=(14, 6))
        self.status_choice = tk.StringVar(value=filter_label(STATUS_FILTERS[0]))
        self.status_box = ttk.Combobox(
            bar,
            textvariable=self.status_choice,
            values=choices,
            state="readonly",
            width=box_width,
        )
        self.status_box.pack(side="left")
        self.status_box.bind("<<ComboboxSelected>>", lambda _e: self.apply_filter())
        self.clear_button = ttk.Button(bar, text=_("Clear history…"), command=self.clear_history)
        # Packed before the filters: when a translation makes the bar too long, the filter box
        # gives way, not these buttons.
        self.clear_button.pack(side="right", before=self.filter_caption)
        self.rules_button = ttk.Button(bar, text=_("Your rules…"), command=self.show_rules)
        self.rules_button.pack(side="right", padx=(0, 6), before=self.filter_caption)
        self.rules_window: tk.Toplevel | None = None
        self._removed_rules: set[int] = set()
        self.newest_button = ttk.Button(bar, text=_("↑ Back to newest"), command=self.reload)

        # Packed before the panes so that a small window squeezes the panes, never the status line.
        self.status_bar = ttk.Label(root, style="Status.TLabel", anchor="w")
        self.status_bar.pack(side="bottom", fill="x", padx=4, pady=(2, 4))

        self.panes = panes = ttk.PanedWindow(root, orient="vertical")
        panes.pack(fill="both", expand=True, padx=12)

        list_frame = ttk.Frame(panes)
        self.tree = ttk.Treeview(
            list_frame, columns=[c[0] for c in COLUMNS], show="headings", selectmode="browse", height=12
        )
        scale = max(1.0, self.root.winfo_fpixels("1i") / 96)  # widths are given at 96 dpi
        # A translated heading ("Exit-Code", "Длительность") may need more room than the English one:
        # the command column gives it up, so the columns still fit the window.
        heading_font = tkfont.nametofont("TkHeadingFont")
        widths = {c[0]: max(int(c[2] * scale), heading_font.measure(_(c[1])) + 16) for c in COLUMNS}
        # The agents are named as people know them ("Claude Desktop"): the longest known name fits whole.
        row_font = tkfont.nametofont("TkDefaultFont")
        widths["client"] = max(widths["client"], max(row_font.measure(n) for n in CLIENT_NAMES.values()) + 16)
        widths["command"] -= sum(widths[c[0]] - int(c[2] * scale) for c in COLUMNS)
        for column, heading, _width, stretch in COLUMNS:
            self.tree.heading(column, text=_(heading), anchor="w")
            self.tree.column(column, width=widths[column], minwidth=40, stretch=stretch, anchor="w")
        self.tree.column("exit", anchor="e")
        self.tree.column("duration", anchor="e")
        for status, look in STATUS_STYLES.items():
            options = {"foreground": look.foreground}
            if look.background:
                options["background"] = look.background
            self.tree.tag_configure(status_tag(status), **options)
        scroll = ttk.Scrollbar(list_frame, orient="vertical", command=self.tree.yview)
        self.tree.configure(yscrollcommand=lambda first, last: self._tree_scrolled(scroll, first, last))
        self.tree.pack(side="left", fill="both", expand=True)
        scroll.pack(side="right", fill="y")
        self.tree.bind("<<TreeviewSelect>>", lambda _e: self._selection_changed())
        self.tree.bind("<Delete>", lambda _e: self.stop_selected())
        self.tree.bind("<Control-c>", lambda _e: self.copy_command())
        self.row_menu = tk.Menu(self.tree, tearoff=False)
        self.row_menu.add_command(label=_("Stop this command"), command=self.stop_selected)
        self.row_menu.add_command(label=_("Copy command"), command=self.copy_command)
        right_click = "<Button-2>" if self.root.tk.call("tk", "windowingsystem") == "aqua" else "<Button-3>"
        self.tree.bind(right_click, self._open_row_menu)
        self.empty_label = ttk.Label(list_frame, text=_(EMPTY_LIST), style="Muted.TLabel")
        panes.add(list_frame, weight=3)

        details = ttk.Frame(panes, padding=(0, 10, 0, 0))
        head = ttk.Frame(details)
        head.pack(fill="x")
        self.details_title = ttk.Label(head, text=_("Details"), font=self.fonts["details_title"])
        self.details_title.pack(side="left")
        self.stop_button = ttk.Button(head, text=_(STOP_BUTTON), style="Stop.TButton", command=self.stop_selected)
        self.copy_button = ttk.Button(head, text=_("Copy command"), command=self.copy_command)
        # The hook for Allow / Deny on waiting commands: `waiting_actions` fills this frame.
        self.actions_frame = ttk.Frame(head)
        body = ttk.Frame(details)
        body.pack(fill="both", expand=True, pady=(6, 0))
        self.details = tk.Text(
            body,
            wrap="word",
            height=12,
            relief="flat",
            borderwidth=1,
            highlightthickness=1,
            highlightbackground="#c9c9c9",
            padx=10,
            pady=8,
            font=self.fonts["hint"],
            cursor="xterm",
        )
        details_scroll = ttk.Scrollbar(body, orient="vertical", command=self.details.yview)
        self.details.configure(yscrollcommand=details_scroll.set)
        self.details.pack(side="left", fill="both", expand=True)
        details_scroll.pack(side="right", fill="y")
        labels = (_("Why"), _("Stop"), _("Folder"), _("Agent"), _("When"), _("Settings"))
        label_width = max(self.fonts["bold"].measure(label + "  ") for label in labels) + 12
        self.details.configure(tabs=(label_width,))
        self.details.tag_configure("label", foreground="#555555")
        self.details.tag_configure("heading", font=self.fonts["bold"], spacing1=10, spacing3=4)
        self.details.tag_configure("mono", font=self.fonts["mono"], background="#f5f5f5", lmargin1=4, lmargin2=4)
        self.details.tag_configure("muted", foreground="#666666")
        self.details.tag_configure("gap", spacing1=2)
        # Read-only yet selectable and copyable: a disabled Text only takes focus this way.
        self.details.bind("<Button-1>", lambda _e: self.details.focus_set(), add="+")
        self.details.configure(state="disabled")
        panes.add(details, weight=2)

        root.bind("<Control-f>", lambda _e: self.filter_entry.focus_set())
        root.bind("<Control-w>", lambda _e: self.close())
        root.bind("<F5>", lambda _e: self.reload())
        self._show_details(None)

    def _open_row_menu(self, event: tk.Event) -> None:
        iid = self.tree.identify_row(event.y)
        if not iid:
            return
        self.tree.selection_set(iid)
        self._selection_changed()
        row = self.model.row(int(iid))
        can_stop = row is not None and row.status.is_active and not row.stop_requested
        self.row_menu.entryconfigure(0, state="normal" if can_stop else "disabled")
        self.row_menu.tk_popup(event.x_root, event.y_root)

    def _set_icon(self) -> None:
        try:
            from app.ui.icons import icon_path

            self._icon = tk.PhotoImage(master=self.root, file=str(icon_path("app", 64)))
            self.root.iconphoto(True, self._icon)
        except (ImportError, ValueError, OSError, tk.TclError):
            log.debug("no window icon", exc_info=True)  # cosmetic: the window works without it

    # -- reading the journal ----------------------------------------------------------------

    def reload(self) -> None:
        """Show the newest page for the current filter, keeping the selection when it is still there."""
        selected = self.selected_id()
        now = time.time()
        self._version = self.journal.data_version()
        records = self._as_held(self.journal.recent_commands(limit=self.page_size + 1, **self.model.filter.query()))
        newest = self.journal.recent_commands(limit=1)
        self._newest_seen = newest[0].id if newest else 0
        rows = self.model.reset(records, page_size=self.page_size, now=now)
        self.tree.delete(*self.tree.get_children())
        for row in rows:
            self._insert("end", row)
        self.tree.yview_moveto(0)
        self.active = self._as_held(self.journal.active_commands())
        self._active_ids = {r.id for r in self.active}
        self.total_commands = self.journal.count_commands()
        self._read_state()
        if selected is not None and selected in self.model:
            self.select(selected)
        else:
            self._show_details(None)
        self._update_chrome()

    def refresh(self) -> None:
        """Bring the window up to date with the journal now (after our own writes, or a change)."""
        self._version = self.journal.data_version()
        self._read_state()
        new = self._as_held(self.journal.recent_commands(after_id=self._newest_seen, limit=self.page_size + 1))
        if len(new) > self.page_size:  # a burst bigger than a page: cheaper to start over
            self.reload()
            return
        active = self._as_held(self.journal.active_commands())
        active_ids = {r.id for r in active}
        # Commands active when last seen (or in the new rows) and no longer active have ended:
        # read them again after `active`, so their final state wins over any older read.
        was_active = self._active_ids | {r.id for r in new if r.status.is_active}
        ended = self._as_held(self.journal.commands_by_id(sorted(was_active - active_ids)))
        records = {r.id: r for r in new}
        records.update({r.id: r for r in active})
        records.update({r.id: r for r in ended})
        self.active = active
        self._active_ids = active_ids
        if new:
            self._newest_seen = max(self._newest_seen, max(r.id for r in new))
        total = self.journal.count_commands()
        deleted = total < self.total_commands + len(new)
        self.total_commands = total
        if deleted and self._held_rows_deleted():
            self.reload()
            return
        diff = self.model.merge(records.values())
        self._apply(diff)
        selected = self.selected_id()
        if selected is not None and selected in records:
            self._show_details(records[selected])
        self._update_chrome()

    def _as_held(self, records: Iterable[CommandRecord]) -> list[CommandRecord]:
        """Waiting commands as the tray holds them, in a window the tray started: any program can
        rewrite the journal's text of a waiting row, and the tray's copy is what Allow runs."""
        holds = self.controls.told_holds()
        if holds is None:
            return list(records)
        shown = []
        for record in records:
            held = holds.get(record.id) if record.status is Status.WAITING else None
            shown.append(record if held is None else dataclasses.replace(record, command=held.command, cwd=held.cwd))
        return shown

    def _held_rows_deleted(self) -> bool:
        """Whether rows the list holds were deleted (history cleared, or old rows expired)."""
        held = self.model.ids
        if not held:
            return False
        # Deletion takes all finished rows or the oldest ones: checking these two answers for both.
        finished = [i for i in held if i not in self._active_ids]
        probe = sorted({held[-1], *(finished[:1])})
        return len(self.journal.commands_by_id(probe)) < len(probe)

    def _read_state(self) -> None:
        # Started by the tray, the window shows the tray's own pause (the journal's copy could
        # have been rewritten by another program); started by hand, the journal's.
        told = self.controls.told_paused()
        paused = self.journal.is_paused() if told is None else told
        if paused != self.paused:
            self.paused = paused
            self._paint_banner()
        self.servers = self.journal.servers()

    def load_older(self) -> None:
        """Fetch the page below the oldest held row (the user scrolled near the end)."""
        if not self.model.has_older or self.model.oldest_id is None:
            return
        anchor = self._first_visible()
        records = self._as_held(
            self.journal.recent_commands(
                limit=self.page_size + 1, before_id=self.model.oldest_id, **self.model.filter.query()
            )
        )
        diff = self.model.append_older(records, page_size=self.page_size)
        self._apply(diff, anchor=anchor)
        self._update_chrome()

    # -- the poll loop ----------------------------------------------------------------------

    def _tick(self) -> None:
        # Scheduled first: an error in one round (logged by Tk's handler) never stops the updates.
        self._after_poll = self.root.after(POLL_INTERVAL_MS, self._tick)
        told = self.controls.news()
        if told:  # the tray's pause or holds changed: the details (and their Allow) are drawn again
            self._shown_record = None
        if told or self.journal.data_version() != self._version:
            self.refresh()
        now = time.monotonic()
        if now - self._last_durations >= DURATION_REFRESH_S:
            self._last_durations = now
            for row in self.model.refresh_durations():
                self.tree.set(str(row.id), "duration", row.values[-1])
        if now - self._last_liveness >= LIVENESS_CHECK_S:
            self._last_liveness = now
            self._notice_dead_servers()

    def _notice_dead_servers(self) -> None:
        """A server that died mid-command leaves it 'running': let the journal mark it interrupted."""
        if self.servers and not self.from_tray and self.journal.recover_dead_servers():
            self.refresh()

    # -- applying changes to the widgets ----------------------------------------------------

    def _insert(self, index: int | str, row: Row) -> None:
        self.tree.insert("", index, iid=str(row.id), values=row.values, tags=(row.tag,))

    def _first_visible(self) -> str | None:
        children = self.tree.get_children()
        if not children:
            return None
        first = float(self.tree.yview()[0])
        if first <= 0.0:
            return None  # at the top: stay at the top, so new rows come into view
        return children[min(len(children) - 1, round(first * len(children)))]

    def _apply(self, diff: Diff, *, anchor: str | None = None) -> None:
        if not diff:
            return
        anchor = anchor if anchor is not None else self._first_visible()
        gone = [str(i) for i in diff.removed if self.tree.exists(str(i))]
        if gone:
            self.tree.delete(*gone)
        for row in diff.updated:
            self.tree.item(str(row.id), values=row.values, tags=(row.tag,))
        for index, row in diff.inserted:
            self._insert(index, row)
        if anchor is not None and self.tree.exists(anchor):
            # Rows added or dropped above the view must not move what the user is reading.
            count = len(self.tree.get_children())
            self.tree.yview_moveto(self.tree.index(anchor) / count)

    def _tree_scrolled(self, scrollbar: ttk.Scrollbar, first: str, last: str) -> None:
        scrollbar.set(first, last)
        if float(last) >= LOAD_OLDER_AT and self.model.has_older and not self._loading_older:
            self._loading_older = True
            self.root.after_idle(self._load_older_idle)
        elif float(first) <= 0.0 and self.model.has_newer:
            self.root.after_idle(self.reload)  # back at the top of a slice far in the past: show the newest

    def _load_older_idle(self) -> None:
        try:
            self.load_older()
        finally:
            self._loading_older = False

    def _paint_banner(self) -> None:
        background, title, hint = PAUSED_COLOURS if self.paused else ON_COLOURS
        for part in self._banner_parts:
            part.configure(background=background)
        self.state_label.configure(text=_(PAUSED_TITLE if self.paused else ON_TITLE), foreground=title)
        self.hint_label.configure(text=_(PAUSED_HINT if self.paused else ON_HINT), foreground=hint)
        self.agents_label.configure(foreground=hint)
        self.activity_label.configure(foreground=title)
        self.show_link.configure(foreground=title)
        self.pause_button.configure(text=_(RESUME_BUTTON if self.paused else PAUSE_BUTTON))
        if self.paused:  # Resume loosens: a click aimed at Pause (or sent by a program) does nothing
            self.switch_arming.disarm()
        else:  # Pause tightens: always at hand
            self.switch_arming.arm_now()

    def _update_chrome(self) -> None:
        """Everything around the list: agents, activity, the empty message, the status bar."""
        self.agents_label.configure(text=describe_agents(self.servers))
        self.activity_label.configure(text=describe_activity(self.active))
        if self.active:
            self.show_link.pack(side="left", padx=(10, 0))
        else:
            self.show_link.pack_forget()
        held = len(self.model)
        if held:
            self.empty_label.place_forget()
        else:
            self.empty_label.configure(text=_(EMPTY_LIST if self.model.filter.is_empty else EMPTY_FILTERED))
            self.empty_label.place(relx=0.5, rely=0.45, anchor="center")
        if self.model.has_newer:
            self.newest_button.pack(side="right", padx=(0, 8))
        else:
            self.newest_button.pack_forget()
        total = ngettext(
            "{count} command in the history", "{count} commands in the history", self.total_commands
        ).format(count=format_number(self.total_commands))
        if not self.model.filter.is_empty:
            count = format_number(held) + ("+" if self.model.has_older else "")
            shown = ngettext("{count} matching the filter", "{count} matching the filter", held).format(count=count)
        else:
            shown = _("showing {count}").format(count=format_number(held))
        more = " · " + _("scroll down for older ones") if self.model.has_older else ""
        self.status_bar.configure(text=f"{total}, {shown}{more}")

    # -- details ----------------------------------------------------------------------------

    def selected_id(self) -> int | None:
        selection = self.tree.selection()
        return int(selection[0]) if selection else None

    def select(self, command_id: int) -> None:
        iid = str(command_id)
        if self.tree.exists(iid):
            self.tree.selection_set(iid)
            self.tree.see(iid)
            self._selection_changed()

    def _selection_changed(self) -> None:
        command_id = self.selected_id()
        record = None if command_id is None else self.journal.get_command(command_id)
        self._show_details(None if record is None else self._as_held([record])[0])

    def _show_details(self, record: CommandRecord | None) -> None:
        if record is not None and record == self._shown_record:
            return  # unchanged: keep the user's text selection and scroll position
        self._shown_record = record
        text = self.details
        text.configure(state="normal")
        text.delete("1.0", "end")
        for widget in self.actions_frame.winfo_children():
            widget.destroy()
        self.stop_button.pack_forget()
        self.copy_button.pack_forget()
        self.actions_frame.pack_forget()
        if record is None:
            self.details_title.configure(text=_("Details"))
            text.insert("end", _(NO_SELECTION), "muted")
            text.configure(state="disabled")
            return
        self.details_title.configure(
            text=_("Command #{id}: {outcome}").format(id=record.id, outcome=outcome_text(record))
        )
        self.copy_button.pack(side="right")
        if record.status.is_active:
            self.stop_button.pack(side="right", padx=(0, 8))
            stopping = record.stop_requested_at is not None
            self.stop_button.configure(
                state="disabled" if stopping else "normal", text=_("Stopping…") if stopping else _(STOP_BUTTON)
            )
        if record.status is Status.WAITING and self.waiting_actions is not None:
            self.actions_frame.pack(side="right", padx=(0, 8))
            self.waiting_actions(self.actions_frame, record, self)
        text.insert("end", visible(record.command.rstrip("\n")) + "\n", "mono")
        text.insert("end", "\n", "gap")
        for line in detail_lines(record, protected=self.protected, rules=self.journal.rules()):
            text.insert("end", f"{line.label}\t", "label")
            text.insert("end", f"{line.value}\n")
        self._insert_stream(record, _("Output"), record.stdout_preview, record.stdout_bytes)
        self._insert_stream(record, _("Error messages"), record.stderr_preview, record.stderr_bytes)
        text.configure(state="disabled")

    def _insert_stream(self, record: CommandRecord, title: str, preview: str | None, size: int | None) -> None:
        text = self.details
        heading = title if size is None else f"{title}, {size_text(size)}"
        text.insert("end", heading + "\n", "heading")
        if record.status.is_active and preview:  # the output so far, sent each second while it runs
            text.insert("end", preview.rstrip("\n") + "\n", "mono")
            text.insert("end", _("Still running: more may follow.") + "\n", "muted")
        elif record.status.is_active:
            text.insert("end", _("Nothing yet.") + "\n", "muted")
        elif preview:
            text.insert("end", preview.rstrip("\n") + "\n", "mono")
        else:
            text.insert("end", _("(empty)") + "\n", "muted")

    def details_text(self) -> str:
        return self.details.get("1.0", "end-1c")

    # -- the user's actions -----------------------------------------------------------------

    def toggle_pause(self) -> None:
        self.set_paused(not self.paused)

    def set_paused(self, paused: bool) -> None:
        """The switch, applied by the tray (which pushes it to every server at once)."""
        self.controls.set_paused(paused)

    def stop(self, command_id: int) -> bool:
        """Ask the server running the command to end its whole tree; the row follows its outcome."""
        if not any(c.id == command_id for c in self.active):
            return False
        self.controls.stop(command_id)
        return True

    def _problem_later(self, text: str) -> None:
        """A refusal from the tray, said from another thread: shown on Tk's own thread."""
        if not self._closed:
            self.root.after(0, lambda: messagebox.showinfo("Cowork Terminal", text, parent=self.root))

    def stop_selected(self) -> None:
        command_id = self.selected_id()
        if command_id is not None:
            self.stop(command_id)

    def show_active(self) -> None:
        """Bring the newest running or waiting command into view (the banner's "show")."""
        if not self.active:
            return
        if self.model.has_newer or not self.model.filter.is_empty:
            self.clear_filter(reload=False)
            self.reload()
        self.select(self.active[0].id)

    def copy_command(self) -> None:
        record = self._shown_record
        if record is not None:
            self.root.clipboard_clear()
            self.root.clipboard_append(record.command)

    def clear_history(self) -> int:
        """Delete the journal's finished rows after the user confirms; running ones stay."""
        finished = self.total_commands - len(self.active)
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
        if not self.confirm(_("Clear history"), question):
            return 0
        self.controls.clear_history()
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
        rules = [rule for rule in self.journal.rules() if rule.id not in self._removed_rules]
        intro = (
            _("Commands these rules cover run without asking you. Only you make rules, from the approval window.")
            if rules
            else _("You have no rules. When a command waits for you, the approval window may offer one.")
        )
        self.rules_intro = ttk.Label(frame, text=intro, wraplength=460, justify="left")
        self.rules_intro.pack(anchor="w", pady=(0, 8))
        self.rule_rows: dict[int, tuple[ttk.Label, ttk.Button]] = {}
        for rule in rules:
            row = ttk.Frame(frame)
            row.pack(fill="x", pady=2)
            text = _("Rule {number}: {description}").format(number=rule.id, description=rule.shown())
            label = ttk.Label(row, text=text, wraplength=360, justify="left")
            label.pack(side="left")
            remove = ttk.Button(row, text=_("Remove"), command=lambda r=rule.id: self.remove_rule(r))
            remove.pack(side="right")
            self.rule_rows[rule.id] = (label, remove)
        ttk.Button(frame, text=_("Close"), command=window.destroy).pack(anchor="e", pady=(10, 0))
        return window

    def remove_rule(self, rule_id: int) -> None:
        """Removing a rule tightens control: the tray applies it at once, so the list drops it now."""
        self.controls.remove_rule(rule_id)
        self._removed_rules.add(rule_id)
        self.show_rules()

    # -- filters ----------------------------------------------------------------------------

    def _filter_changed_later(self) -> None:
        if self._after_filter is not None:
            self.root.after_cancel(self._after_filter)
        self._after_filter = self.root.after(FILTER_DEBOUNCE_MS, self.apply_filter)

    def apply_filter(self) -> None:
        self._after_filter = None
        label = self.status_choice.get()
        choice = next((f for f in STATUS_FILTERS if filter_label(f) == label), STATUS_FILTERS[0])
        wanted = Filter(text=self.filter_text.get().strip(), statuses=choice.statuses)
        if wanted != self.model.filter:
            self.model.filter = wanted
            self.reload()

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
        if self._after_filter is not None:
            self.root.after_cancel(self._after_filter)
            self._after_filter = None
        self.model.filter = Filter()
        if reload:
            self.reload()

    # -- lifetime ---------------------------------------------------------------------------

    def close(self) -> None:
        """Close this window only: servers, the tray and running commands carry on."""
        if self._closed:
            return
        self._closed = True
        for pending in (self._after_poll, self._after_filter):
            if pending is not None:
                self.root.after_cancel(pending)
        self.switch_arming.cancel()
        self.decision_arming.cancel()
        self.journal.close()
        self.root.destroy()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cowork-terminal log-window",
        description=_(
            "Open the live activity log: every command agents run on this computer, "
            "with the pause switch and a Stop button."
        ),
    )
    # For bench/log_window_open.py and the tests: "ready <seconds> <rows> <window id>" on stderr
    # once the first rows show.
    parser.add_argument("--report-ready", action="store_true", help=argparse.SUPPRESS)
    # The tray starts the window with this: its clicks then go to the tray over stdin/stdout.
    parser.add_argument("--tray-line", action="store_true", help=argparse.SUPPRESS)
    return parser


def approval_buttons(frame: ttk.Frame, record: CommandRecord, window: LogWindow) -> None:
    """Allow and Deny for a command held for the user's approval: the same answer as the prompt's."""
    for child in frame.winfo_children():
        child.destroy()

    def answer(allowed: bool) -> None:
        window.controls.decide(record.id, allowed, record.command)  # the text shown: the tray's own copy

    holds = window.controls.told_holds()
    if holds is None or record.id in holds:  # a row the tray does not hold has nothing to allow
        allow = ttk.Button(frame, text=_("Allow once"))
        allow.pack(side="left", padx=(0, 6))
        window.decision_arming.guard(allow, lambda: answer(True))
        window.decision_arming.disarm()  # a new command shown: its Allow arms after a moment
    deny = ttk.Button(frame, text=_("Deny"), command=lambda: answer(False))  # tightens: always at hand
    deny.pack(side="left")


def main(argv: Sequence[str] | None = None) -> int:
    """Open the window and run it until the user closes it (the `log-window` command)."""
    started = time.perf_counter()
    args = build_parser().parse_args(argv)
    paths = AppPaths.from_environment()
    # Its own rotating file beside the tray's; stderr too, for a terminal or the tray's capture of it.
    app_log.configure(paths, "log-window", level=logging.WARNING, echo_to_stderr=True)
    try:
        root = tk.Tk(className="cowork-terminal")
    except tk.TclError as exc:
        problem = _("cannot open the activity log window: {error}").format(error=exc)
        print(f"cowork-terminal: {problem}", file=sys.stderr)
        return 1
    protect_window(root)
    root.report_callback_exception = _log_callback_error
    # Big enough for every column, yet never taller or wider than a small laptop's screen.
    width = min(WINDOW_SIZE[0], root.winfo_screenwidth() - 40)
    height = min(WINDOW_SIZE[1], root.winfo_screenheight() - 80)
    root.geometry(f"{width}x{height}")
    journal = Journal.open(paths)
    controls = TrayLineControls(TrayLine()) if args.tray_line else None
    window = LogWindow(root, journal, controls=controls)
    if args.report_ready:

        def report() -> None:  # runs once the first idle round has drawn the window
            took = time.perf_counter() - started
            # The X window id lets a test talk to exactly this window, not another one on the display.
            print(f"ready {took:.4f} {len(window.model)} {root.wm_frame()}", file=sys.stderr, flush=True)

        root.after_idle(report)
    root.mainloop()
    return 0


def _log_callback_error(exc_type: type[BaseException], exc: BaseException, tb: object) -> None:
    # The top level of every Tk callback: log the traceback, keep the window alive.
    log.error("error in the activity log window", exc_info=(exc_type, exc, tb))  # type: ignore[arg-type]


if __name__ == "__main__":
    raise SystemExit(main())
