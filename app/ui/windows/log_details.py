"""The activity log's details pane: everything about the selected command (the full text, folder,
timings, output so far), with Stop, Copy, and Allow or Deny for a command that waits."""

from __future__ import annotations

import re
import tkinter as tk
from collections.abc import Callable
from tkinter import ttk
from typing import Protocol

from app.core.i18n import N_, _
from app.core.journal.store import CommandRecord, Journal, Status
from app.core.visible_text import visible
from app.ui.windows.controls import Controls
from app.ui.windows.log_banner import Fonts
from app.ui.windows.log_model import detail_lines, outcome_text, size_text
from app.ui.windows.real_input import ArmedButtons

STOP_BUTTON = N_("■  Stop this command")
ALLOW_IN_PROMPT = N_("Allow…")  # opens the approval prompt: the "…" of a button that asks more first
NO_SELECTION = N_("Select a command above to see everything about it: the full command, folder, timings and output.")

# A terminal's colour and cursor codes (CSI: `ESC [ 32 m`) and title codes (OSC: `ESC ] 0 ; title BEL`):
# a terminal acts on them and shows nothing; the pane shows no terminal, so they go.
_TERMINAL_CODES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|\x9b[0-?]*[ -/]*[@-~]")


def shown_output(preview: str) -> str:
    """A command's output as a terminal would leave it on the screen: colour codes gone, each line
    only what its last carriage return left (`50%\r100%` is `100%`), and any other character that
    does not show written out (`^@` for NUL, which would end the text in Tk)."""
    preview = _TERMINAL_CODES.sub("", preview)
    lines = (line.rstrip("\r").rsplit("\r", 1)[-1] for line in preview.split("\n"))
    return visible("\n".join(lines))


# Fills the frame under the details header whenever a waiting command is selected (Allow, Deny).
WaitingActions = Callable[[ttk.Frame, CommandRecord, "DetailsHost"], None]


class DetailsHost(Protocol):
    """What the pane reaches of its window (log_window.LogWindow): its journal, controls and buttons."""

    @property
    def journal(self) -> Journal: ...
    @property
    def controls(self) -> Controls: ...
    @property
    def protected(self) -> list[str]: ...
    @property
    def decision_arming(self) -> ArmedButtons: ...
    @property
    def waiting_actions(self) -> WaitingActions | None: ...
    def stop_selected(self) -> None: ...
    def copy_command(self) -> None: ...


class DetailsPane:
    """The lower pane; `show` draws a record (or the hint when nothing is selected)."""

    def __init__(self, parent: ttk.PanedWindow, fonts: Fonts, window: DetailsHost) -> None:
        self.window = window
        self.frame = details = ttk.Frame(parent, padding=(0, 10, 0, 0))
        head = ttk.Frame(details)
        head.pack(fill="x")
        self.title = ttk.Label(head, text=_("Details"), font=fonts["details_title"])
        self.title.pack(side="left")
        self.stop_button = ttk.Button(head, text=_(STOP_BUTTON), style="Stop.TButton", command=window.stop_selected)
        self.copy_button = ttk.Button(head, text=_("Copy command"), command=window.copy_command)
        # The hook for Allow / Deny on waiting commands: the window's `waiting_actions` fills this frame.
        self.actions_frame = ttk.Frame(head)
        body = ttk.Frame(details)
        body.pack(fill="both", expand=True, pady=(6, 0))
        self.text = tk.Text(
            body,
            wrap="word",
            height=12,
            relief="flat",
            borderwidth=1,
            highlightthickness=1,
            highlightbackground="#c9c9c9",
            padx=10,
            pady=8,
            font=fonts["hint"],
            cursor="xterm",
        )
        scroll = ttk.Scrollbar(body, orient="vertical", command=self.text.yview)
        self.text.configure(yscrollcommand=scroll.set)
        self.text.pack(side="left", fill="both", expand=True)
        scroll.pack(side="right", fill="y")
        labels = (_("Why"), _("Stop"), _("Folder"), _("Agent"), _("When"), _("Settings"))
        label_width = max(fonts["bold"].measure(label + "  ") for label in labels) + 12
        self.text.configure(tabs=(label_width,))
        self.text.tag_configure("label", foreground="#555555")
        self.text.tag_configure("heading", font=fonts["bold"], spacing1=10, spacing3=4)
        self.text.tag_configure("mono", font=fonts["mono"], background="#f5f5f5", lmargin1=4, lmargin2=4)
        self.text.tag_configure("muted", foreground="#666666")
        self.text.tag_configure("gap", spacing1=2)
        # Read-only yet selectable and copyable: a disabled Text only takes focus this way.
        self.text.bind("<Button-1>", lambda _e: self.text.focus_set(), add="+")
        self.text.configure(state="disabled")

    def show(self, record: CommandRecord | None, *, keep_view: bool = False) -> None:
        """Draw `record` anew (the window skips this when the record did not change). `keep_view`: the
        same command drawn again (its output grew): the text stays where the person scrolled it, and
        what they selected stays selected."""
        window = self.window
        text = self.text
        view = self._view() if keep_view else None
        text.configure(state="normal")
        text.delete("1.0", "end")
        for widget in self.actions_frame.winfo_children():
            widget.destroy()
        self.stop_button.pack_forget()
        self.copy_button.pack_forget()
        self.actions_frame.pack_forget()
        if record is None:
            self.title.configure(text=_("Details"))
            text.insert("end", _(NO_SELECTION), "muted")
            text.configure(state="disabled")
            return
        self.title.configure(text=_("Command #{id}: {outcome}").format(id=record.id, outcome=outcome_text(record)))
        # A waiting command the tray does not vouch for shows why, in place of the journal's text.
        unvouched = record.status is Status.WAITING and record.id not in (window.controls.told_holds() or {})
        if not unvouched:
            self.copy_button.pack(side="right")
        if record.status.is_active:
            self.stop_button.pack(side="right", padx=(0, 8))
            stopping = record.stop_requested_at is not None
            self.stop_button.configure(
                state="disabled" if stopping else "normal", text=_("Stopping…") if stopping else _(STOP_BUTTON)
            )
        if record.status is Status.WAITING and window.waiting_actions is not None:
            self.actions_frame.pack(side="right", padx=(0, 8))
            window.waiting_actions(self.actions_frame, record, window)
        text.insert("end", visible(record.command.rstrip("\n")) + "\n", "muted" if unvouched else "mono")
        text.insert("end", "\n", "gap")
        for line in detail_lines(record, protected=window.protected, rules=window.journal.rules()):
            text.insert("end", f"{line.label}\t", "label")
            text.insert("end", f"{line.value}\n")
        self._insert_stream(record, _("Output"), record.stdout_preview, record.stdout_bytes)
        self._insert_stream(record, _("Error messages"), record.stderr_preview, record.stderr_bytes)
        if view is not None:
            self._restore(view)
        text.configure(state="disabled")

    def _view(self) -> tuple[str, bool, tuple[str, ...]]:
        """Where the text is scrolled (its top line), whether it shows the end, and what is selected."""
        first, last = self.text.yview()
        return self.text.index("@0,0"), first > 0 and last >= 1.0, tuple(str(i) for i in self.text.tag_ranges("sel"))

    def _restore(self, view: tuple[str, bool, tuple[str, ...]]) -> None:
        top, at_end, selected = view
        if at_end:  # following the output as it grows
            self.text.yview_moveto(1.0)
        else:
            self.text.yview(top)
        if selected:
            self.text.tag_add("sel", *selected)

    def _insert_stream(self, record: CommandRecord, title: str, preview: str | None, size: int | None) -> None:
        text = self.text
        heading = title if size is None else f"{title}, {size_text(size)}"
        text.insert("end", heading + "\n", "heading")
        if record.status.is_active and preview:  # the output so far, sent each second while it runs
            text.insert("end", shown_output(preview.rstrip("\n")) + "\n", "mono")
            text.insert("end", _("Still running: more may follow.") + "\n", "muted")
        elif record.status.is_active:
            text.insert("end", _("Nothing yet.") + "\n", "muted")
        elif preview:
            text.insert("end", shown_output(preview.rstrip("\n")) + "\n", "mono")
        else:
            text.insert("end", _("(empty)") + "\n", "muted")

    def shown_text(self) -> str:
        return self.text.get("1.0", "end-1c")


def approval_buttons(frame: ttk.Frame, record: CommandRecord, window: DetailsHost) -> None:
    """Allow… and Deny for a command held for the user's approval. Deny answers at once; Allow… brings
    the approval prompt, the one window that shows the command whole (its environment's values, the
    folder to type for the most dangerous ones), where the person allows it."""
    for child in frame.winfo_children():
        child.destroy()

    def answer(allowed: bool) -> None:
        window.controls.decide(record.id, allowed, record.command)  # the text shown: the tray's own copy

    holds = window.controls.told_holds()
    if holds is None:  # no tray answers now: nobody could act on an answer (the row says so)
        return
    if record.id in holds:  # a row the tray does not hold has nothing to allow
        allow = ttk.Button(frame, text=_(ALLOW_IN_PROMPT))
        allow.pack(side="left", padx=(0, 6))
        window.decision_arming.guard(allow, lambda: answer(True))
        window.decision_arming.disarm()  # a new command shown: its Allow arms after a moment
    deny = ttk.Button(frame, text=_("Deny"), command=lambda: answer(False))  # tightens: always at hand
    deny.pack(side="left")
