"""The approval prompt: a small always-on-top Tk window, in its own process, that asks the user.

The tray starts it and is its only source: held commands arrive on its stdin exactly as their
server described them to the tray (never read back from the journal, which a command could
rewrite), and the user's answers leave on its stdout, which only the tray reads. It shows the
oldest command first (the exact command, where it would run, which client asks, and why it is
held) with Allow and Deny; a command answered elsewhere, withdrawn or expired disappears; the
window closes when nothing is left to answer, or when the tray closes its stdin.
"""

from __future__ import annotations

import sys
import time
import tkinter as tk
from tkinter import ttk
from typing import Any

from app.ui.window_link import TrayLine

POLL_MS = 100
# Allow and Deny stay disabled this long whenever the shown command changes (the window opens, or the
# one shown was answered elsewhere and the next replaced it): a click aimed at the previous command
# must never approve one the user has not read; nor can a program's keystroke sent the moment it opens.
ARM_DELAY_MS = 1000


class ApprovalPrompt:
    """One window that walks through pending approvals, oldest first."""

    def __init__(self, root: tk.Tk, line: TrayLine) -> None:
        self.root = root
        self.line = line
        self.pending: dict[int, dict[str, Any]] = {}
        self.current: dict[str, Any] | None = None
        self._arming: str | None = None  # the pending `after` that enables the buttons
        self._synthetic = False  # the last press on Allow was sent by a program (XSendEvent)
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
        for sequence in ("<ButtonPress-1>", "<KeyPress>"):
            self.allow_button.bind(sequence, self._note_origin, add="+")
        root.bind("<Escape>", lambda _e: self.answer(False))

    def _note_origin(self, event: tk.Event) -> None:
        """Events a program sends to our window (XSendEvent) carry send_event; a user's never do."""
        self._synthetic = bool(getattr(event, "send_event", False))

    def take(self, message: dict[str, Any]) -> None:
        """One message from the tray: a command to ask about, or one that no longer waits."""
        if message.get("op") == "show" and isinstance(message.get("hold"), dict):
            hold = message["hold"]
            if isinstance(hold.get("id"), int):
                self.pending[hold["id"]] = hold
        elif message.get("op") == "gone" and isinstance(message.get("id"), int):
            self.pending.pop(message["id"], None)

    def refresh(self) -> bool:
        """Show the oldest pending command; False when there is nothing left to ask."""
        now = time.time()
        for command_id in [i for i, h in self.pending.items() if float(h.get("expires_at") or 0) <= now]:
            del self.pending[command_id]
        if not self.pending:
            self.current = None
            return False
        oldest = self.pending[min(self.pending)]
        if self.current is None or self.current["id"] != oldest["id"]:
            self.show(oldest, len(self.pending))
        self._show_remaining()
        return True

    def show(self, hold: dict[str, Any], count: int) -> None:
        self.current = hold
        client = hold.get("client") or "An AI agent"
        more = f" ({count - 1} more waiting)" if count > 1 else ""
        self.heading.configure(text=f"{client} wants to run this command on your computer{more}:")
        self.reason.configure(text=f"Why you are asked: {hold.get('reasons') or 'every command needs approval'}")
        self.command.configure(state="normal")
        self.command.delete("1.0", "end")
        self.command.insert("1.0", str(hold.get("command", "")))
        self.command.configure(state="disabled")  # selectable and copyable, not editable
        env_keys = hold.get("env_keys") or []
        extra = f"    Extra environment: {', '.join(map(str, env_keys))}" if env_keys else ""
        where = hold.get("cwd") or "the shell session"
        self.details.configure(text=f"In folder: {where}    Tool: {hold.get('tool')}{extra}")
        self._disarm()
        self.root.deiconify()
        self.root.lift()
        self.deny_button.focus_set()  # a key pressed by habit lands on Deny; Allow takes a Tab first

    def _show_remaining(self) -> None:
        if self.current is None:
            return
        left = max(0, int(float(self.current.get("expires_at") or 0) - time.time()))
        self.remaining.configure(
            text=f"Allow only if you know what it does. It runs with your full permissions. "
            f"The request expires in {left // 60}:{left % 60:02d}."
        )

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
        # once the buttons are armed, and never from an event another program sent to this window.
        if self.current is None or (allowed and (not self.armed or self._synthetic)):
            self._synthetic = False
            return
        self.line.send({"op": "decide", "id": self.current["id"], "allowed": allowed})
        self.pending.pop(self.current["id"], None)
        self.current = None
        if not self.refresh():
            self.root.withdraw()

    def poll(self) -> None:
        """Take the tray's messages; close when it closed our stdin or nothing waits any more."""
        for message in self.line.drain():
            if message is None:
                self.root.destroy()
                return
            self.take(message)
        if not self.refresh():
            self.root.withdraw()
        self.root.after(POLL_MS, self.poll)


def main(argv: list[str] | None = None) -> int:
    """Run the prompt for the tray that started it (held commands on stdin, answers on stdout)."""
    if sys.stdin is None or sys.stdin.isatty():
        print("cowork-terminal: the Cowork Terminal app opens this window when a command waits for you.",
              file=sys.stderr)
        return 2
    try:
        root = tk.Tk()
    except tk.TclError as exc:
        print(f"cowork-terminal: cannot open the approval prompt: {exc}", file=sys.stderr)
        return 1
    prompt = ApprovalPrompt(root, TrayLine())
    root.withdraw()
    prompt.poll()
    root.mainloop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
