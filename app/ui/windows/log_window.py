"""The live activity log window: what agents run on this computer, with the pause switch and Stop at hand.

It runs in its own process (`cowork-terminal log-window`), never in the tray's, because Tk and the
tray each need their process's main thread (pystray #138). It reads the journal; what its buttons
change goes to the tray (controls.py), which the servers pick up. Closing it stops nothing else.

Staying live without busy work: every POLL_INTERVAL_MS it asks SQLite's `data_version` whether any
other connection committed; only then does it fetch rows newer than the newest it knows and
re-read the commands that were active. It holds at most MAX_HELD_ROWS rows, paging older ones in as
the user scrolls and dropping the far end, so a journal of 100,000 rows opens as fast as one of 10.

This module is the window's shell (the list, reading the journal, the poll loop); its parts are the
banner (log_banner.py), the toolbar and its dialogs (log_toolbar.py) and the details pane
(log_details.py).
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
import tkinter as tk
from collections.abc import Callable, Iterable, Sequence
from tkinter import messagebox, ttk
from typing import Literal

from app.core import app_log
from app.core.i18n import N_, _
from app.core.journal.store import CommandRecord, Journal, ServerRecord, Status
from app.core.paths import AppPaths, protected_paths
from app.ui.windows.controls import Controls, RequestControls, TrayLineControls, as_told
from app.ui.windows.link import TrayLine
from app.ui.windows.log_banner import ON_TITLE, PAUSED_TITLE, Banner, set_icon, setup_style
from app.ui.windows.log_details import DetailsPane, WaitingActions, approval_buttons
from app.ui.windows.log_list import apply_diff, build_tree, first_visible, insert_row, list_status, row_menu
from app.ui.windows.log_model import (
    MAX_HELD_ROWS,
    PAGE_SIZE,
    Diff,
    Row,
    RowWindow,
)
from app.ui.windows.log_toolbar import AskedRules, LineRules, RulesSource, Toolbar
from app.ui.windows.look import new_root
from app.ui.windows.real_input import ArmedButtons, ask_armed, protect_window

__all__ = ["EMPTY_FILTERED", "EMPTY_LIST", "ON_TITLE", "PAUSED_TITLE", "WINDOW_TITLE", "LogWindow", "main"]

log = logging.getLogger(__name__)

WINDOW_TITLE = N_("Cowork Terminal: activity")
WINDOW_SIZE = (1180, 760)  # pixels, at open
POLL_INTERVAL_MS = 250  # new and finished commands show up within this, plus one query's time
DURATION_REFRESH_S = 1.0  # running rows count their seconds up
LIVENESS_CHECK_S = 5.0  # how often to notice a server that died without a word
LOAD_OLDER_AT = 0.92  # scrolled past this fraction of the held rows: fetch the next older page

EMPTY_LIST = N_("No commands yet. When an agent runs a command on this computer, it appears here.")
EMPTY_FILTERED = N_("No command matches the filter.")

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
        # The rules listed are the tray's: told on its line, or asked for (log_toolbar.py).
        self.rules_source: RulesSource = (
            LineRules(self.controls.line)
            if isinstance(self.controls, TrayLineControls)
            else AskedRules(journal.paths, journal)
        )
        self.waiting_actions: WaitingActions = waiting_actions or approval_buttons
        # Yes in the question is armed and deaf to sent clicks, like the prompt's Allow.
        self.confirm: Confirm = confirm or (lambda title, text: ask_armed(self.root, title, text, _("Yes"), _("No")))
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
        self._shown_id: int | None = None  # the command the details show (`_shown_record` is reset to redraw)
        self._after_poll: str | None = None
        self._loading_older = False
        self._last_durations = 0.0
        self._last_liveness = time.monotonic()
        self._closed = False

        self.style, self.fonts = setup_style(root)
        self._build()
        self.reload()
        self._after_poll = self.root.after(POLL_INTERVAL_MS, self._tick)

    # -- layout -----------------------------------------------------------------------------

    def _build(self) -> None:
        root = self.root
        root.title(_(WINDOW_TITLE))
        root.minsize(760, 480)
        root.protocol("WM_DELETE_WINDOW", self.close)
        self._icon = set_icon(root)

        # The switch and the state in words sit on a coloured band that changes with the state.
        self.band = Banner(
            root,
            self.fonts,
            self.switch_arming,
            toggle=self.toggle_pause,
            show_active=self.show_active,
            paused=lambda: self.paused,
        )
        self.state_label, self.pause_button = self.band.state_label, self.band.pause_button
        self.agents_label, self.activity_label = self.band.agents_label, self.band.activity_label
        self.show_link, self.banner = self.band.show_link, self.band.frame

        self.toolbar = bar = Toolbar(root, self)
        self.filter_entry, self.status_box, self.status_choice = bar.filter_entry, bar.status_box, bar.status_choice
        self.clear_button, self.rules_button, self.newest_button = bar.clear_button, bar.rules_button, bar.newest_button
        self.clear_filter_button = bar.clear_filter_button

        # Packed before the panes so that a small window squeezes the panes, never the status line.
        self.status_bar = ttk.Label(root, style="Status.TLabel", anchor="w")
        self.status_bar.pack(side="bottom", fill="x", padx=4, pady=(2, 4))

        self.panes = panes = ttk.PanedWindow(root, orient="vertical")
        panes.pack(fill="both", expand=True, padx=12)

        list_frame = ttk.Frame(panes)
        self.tree = build_tree(list_frame, root)
        scroll = ttk.Scrollbar(list_frame, orient="vertical", command=self.tree.yview)
        self.tree.configure(yscrollcommand=lambda first, last: self._tree_scrolled(scroll, first, last))
        scroll.pack(side="right", fill="y")  # first: a narrow window squeezes the list, never its scrollbar
        self.tree.pack(side="left", fill="both", expand=True)
        self.tree.bind("<<TreeviewSelect>>", lambda _e: self._selection_changed())
        self.tree.bind("<Delete>", lambda _e: self.stop_selected())
        self.tree.bind("<Control-c>", lambda _e: self.copy_command())
        self.row_menu = row_menu(self.tree, root, self.stop_selected, self.copy_command, self._row_opened)
        self.empty_label = ttk.Label(list_frame, text=_(EMPTY_LIST), style="Muted.TLabel")
        panes.add(list_frame, weight=3)

        self.details_pane = pane = DetailsPane(panes, self.fonts, self)
        self.details, self.details_title, self.actions_frame = pane.text, pane.title, pane.actions_frame
        self.stop_button, self.copy_button = pane.stop_button, pane.copy_button
        panes.add(pane.frame, weight=2)

        root.bind("<Control-f>", lambda _e: self.filter_entry.focus_set())
        root.bind("<Control-w>", lambda _e: self.close())
        root.bind("<F5>", lambda _e: self.reload())
        self._show_details(None)

    def _row_opened(self, iid: str) -> bool:
        """A right click selected row `iid`: whether its menu may offer Stop."""
        self.tree.selection_set(iid)
        self._selection_changed()
        row = self.model.row(int(iid))
        return row is not None and row.status.is_active and not row.stop_requested

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
        """Waiting commands as the tray holds them: any program can rewrite the journal's text of a
        waiting row, and the tray's copy is what Allow runs. One the tray does not vouch for (it
        does not hold it, or no tray answers) shows why instead of the journal's text (issue 23)."""
        records = list(records)
        if not any(record.status is Status.WAITING for record in records):
            return records
        holds = self.controls.told_holds()
        return [as_told(record, holds, self.controls.unvouched) for record in records]

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
        self.toolbar.follow_rules()
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

    def _insert(self, index: int | Literal["end"], row: Row) -> None:
        insert_row(self.tree, index, row)

    def _first_visible(self) -> str | None:
        return first_visible(self.tree)

    def _apply(self, diff: Diff, *, anchor: str | None = None) -> None:
        if diff:
            apply_diff(self.tree, diff, anchor if anchor is not None else self._first_visible())

    def _tree_scrolled(self, scrollbar: ttk.Scrollbar, first: float | str, last: float | str) -> None:
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
        self.band.paint(bool(self.paused))

    def _update_chrome(self) -> None:
        """Everything around the list: agents, activity, the empty message, the status bar."""
        self.band.describe(self.servers, self.active)
        held = len(self.model)
        if held:
            self.empty_label.place_forget()
        else:
            self.empty_label.configure(text=_(EMPTY_LIST if self.model.filter.is_empty else EMPTY_FILTERED))
            self.empty_label.place(relx=0.5, rely=0.45, anchor="center")
        self.toolbar.show_newest_button(self.model.has_newer)
        model = self.model
        self.status_bar.configure(text=list_status(self.total_commands, held, model.has_older, model.filter.is_empty))

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
        # The same command drawn again (its live output grew): the person's scroll position stays.
        same = record is not None and record.id == self._shown_id
        self._shown_record = record
        self._shown_id = None if record is None else record.id
        self.details_pane.show(record, keep_view=same)

    def details_text(self) -> str:
        return self.details_pane.shown_text()

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
        return self.toolbar.clear_history()

    def show_rules(self) -> tk.Toplevel:
        return self.toolbar.show_rules()

    def remove_rule(self, rule_id: int) -> None:
        self.toolbar.remove_rule(rule_id)

    def apply_filter(self) -> None:
        self.toolbar.apply_filter()

    def set_filter(self, text: str = "", status_label: str | None = None) -> None:
        """Set both filters at once (what typing and picking do, without the typing delay)."""
        self.toolbar.set_filter(text, status_label)

    def clear_filter(self, *, reload: bool = True) -> None:
        self.toolbar.clear_filter(reload=reload)

    # -- lifetime ---------------------------------------------------------------------------

    def close(self) -> None:
        """Close this window only: servers, the tray and running commands carry on."""
        if self._closed:
            return
        self._closed = True
        if self._after_poll is not None:
            self.root.after_cancel(self._after_poll)
        self.toolbar.cancel_pending()
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


def main(argv: Sequence[str] | None = None) -> int:
    """Open the window and run it until the user closes it (the `log-window` command)."""
    started = time.perf_counter()
    args = build_parser().parse_args(argv)
    paths = AppPaths.from_environment()
    # Its own rotating file beside the tray's; stderr too, for a terminal or the tray's capture of it.
    app_log.configure(paths, "log-window", level=logging.WARNING, echo_to_stderr=True)
    try:
        root = new_root()
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
