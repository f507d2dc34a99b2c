"""The approval prompt: a small always-on-top Tk window, in its own process, that asks the user.

It shows the oldest command waiting for approval (the exact command, where it would run, which
client asks, and why it is held) with Allow and Deny. It follows the journal: a command answered
elsewhere (log window, CLI), withdrawn by the model or expired disappears; the window closes when
nothing is left to answer. The tray starts it; one runs at a time (its own lock).
"""

from __future__ import annotations

import sys
import time
import tkinter as tk
from tkinter import ttk

from app.core import liveness
from app.core.journal import CommandRecord, Journal
from app.core.paths import AppPaths

POLL_MS = 250
# Allow and Deny stay disabled this long whenever the shown command changes (the window opens, or the
# one shown was answered elsewhere and the next replaced it): a click aimed at the previous command
# must never approve one the user has not read.
ARM_DELAY_MS = 1000
DECIDED_BY = "user (approval prompt)"


class ApprovalPrompt:
    """One window that walks through pending approvals, oldest first."""

    def __init__(self, root: tk.Tk, journal: Journal) -> None:
        self.root = root
        self.journal = journal
        self.current: CommandRecord | None = None
        self._seen_version = -1
        self._arming: str | None = None  # the pending `after` that enables the buttons
        self._polling: str | None = None  # the pending `after` of the next poll
        root.title("Cowork Terminal: approve a command?")
        root.attributes("-topmost", True)
        root.minsize(520, 300)
        root.protocol("WM_DELETE_WINDOW", self.root.withdraw)  # closing hides it; the question stays open

        frame = ttk.Frame(root, padding=14)
        frame.pack(fill="both", expand=True)
        self.heading = ttk.Label(frame, font=("TkDefaultFont", 13, "bold"), wraplength=560, justify="left")
        self.heading.pack(anchor="w")
        self.reason = ttk.Label(frame, foreground="#9a3412", wraplength=560, justify="left")
        self.reason.pack(anchor="w", pady=(4, 8))
        self.command = tk.Text(frame, height=6, wrap="word", font=("TkFixedFont", 11), relief="solid", borderwidth=1)
        self.command.pack(fill="both", expand=True)
        self.details = ttk.Label(frame, wraplength=560, justify="left")
        self.details.pack(anchor="w", pady=(8, 8))
        self.remaining = ttk.Label(frame, foreground="#555555")
        self.remaining.pack(anchor="w")
        buttons = ttk.Frame(frame)
        buttons.pack(fill="x", pady=(10, 0))
        self.deny_button = ttk.Button(buttons, text="Deny", command=lambda: self.answer(False))
        self.deny_button.pack(side="right")
        # Allow is deliberately not the default button: Enter must never approve by accident.
        self.allow_button = ttk.Button(buttons, text="Allow", command=lambda: self.answer(True))
        self.allow_button.pack(side="right", padx=(0, 8))
        root.bind("<Escape>", lambda _e: self.answer(False))

    def refresh(self) -> bool:
        """Show the oldest pending command; False when there is nothing left to ask."""
        version = self.journal.data_version()
        still_valid = self.current is not None and (self.current.hold_expires_at or 0) > time.time()
        if version == self._seen_version and still_valid:
            return True
        self._seen_version = version
        pending = self.journal.pending_approvals()
        if not pending:
            self.current = None
            return False
        if self.current is None or self.current.id != pending[0].id:
            self.show(pending[0], len(pending))
        return True

    def show(self, record: CommandRecord, count: int) -> None:
        self.current = record
        client = record.client_name or "An AI agent"
        more = f" ({count - 1} more waiting)" if count > 1 else ""
        self.heading.configure(text=f"{client} wants to run this command on your computer{more}:")
        self.reason.configure(text=f"Why you are asked: {record.reason or 'every command needs approval'}")
        self.command.configure(state="normal")
        self.command.delete("1.0", "end")
        self.command.insert("1.0", record.command)
        self.command.configure(state="disabled")  # selectable and copyable, not editable
        extra = f"    Extra environment: {', '.join(record.env_keys)}" if record.env_keys else ""
        self.details.configure(text=f"In folder: {record.cwd or 'the shell session'}    Tool: {record.tool}{extra}")
        self.remaining.configure(text="Allow only if you know what it does. It runs with your full permissions.")
        self._disarm()
        self.root.deiconify()
        self.root.lift()

    def _disarm(self) -> None:
        """Disable Allow and Deny for ARM_DELAY_MS, counted from the newest change of command."""
        if self._arming is not None:
            self.root.after_cancel(self._arming)
        for button in (self.allow_button, self.deny_button):
            button.state(["disabled"])
        self._arming = self.root.after(ARM_DELAY_MS, self._arm)

    def _arm(self) -> None:
        self._arming = None
        for button in (self.allow_button, self.deny_button):
            button.state(["!disabled"])

    @property
    def armed(self) -> bool:
        return self._arming is None

    def answer(self, allowed: bool) -> None:
        # Escape (Deny) is a deliberate key press and the safe answer, so it works at once; Allow only
        # once the buttons are armed, whatever calls it.
        if self.current is None or (allowed and not self.armed):
            return
        self.journal.decide(self.current.id, allowed=allowed, by=DECIDED_BY)
        self.current = None
        self._seen_version = -1
        if self._polling is not None:  # one loop at a time: poll() below starts the next round
            self.root.after_cancel(self._polling)
        self.poll()

    def poll(self) -> None:
        """Follow the journal until nothing waits any more, then close."""
        self._polling = None
        if not self.refresh():
            self.root.destroy()
            return
        self.poll_later()

    def poll_later(self) -> None:
        self._polling = self.root.after(POLL_MS, self.poll)


def main(argv: list[str] | None = None) -> int:
    """Run the prompt until nothing waits for an answer; exits at once if another prompt is open."""
    paths = AppPaths.from_environment().ensure()
    lock = liveness.try_hold(paths.locks_dir / "approval-prompt.lock")
    if lock is None:
        return 0
    try:
        try:
            root = tk.Tk()
        except tk.TclError as exc:
            print(f"cowork-terminal: cannot open the approval prompt: {exc}", file=sys.stderr)
            return 1
        with Journal.open(paths) as journal:
            prompt = ApprovalPrompt(root, journal)
            if not prompt.refresh():
                root.destroy()
                return 0
            prompt.poll_later()
            root.mainloop()
    finally:
        lock.release()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
