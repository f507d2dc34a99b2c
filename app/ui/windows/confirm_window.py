"""The confirm window: the tray asks the user one yes/no question it cannot answer alone.

A program on this computer (the CLI, or anything else) asked the tray to loosen control: resume
host access, allow a held command, ask less often. Nothing changes until the user clicks here. The
question arrives on stdin from the tray, the answer leaves on stdout to the tray; closing the
window or Escape says no. Like the approval prompt, its buttons arm after a moment, Enter does
nothing, and clicks another program sends to the window (XSendEvent) are ignored.
"""

from __future__ import annotations

import sys
import tkinter as tk
from tkinter import ttk

from app.core.i18n import _
from app.core.visible_text import visible
from app.ui.windows.link import TrayLine, open_tk_root
from app.ui.windows.look import use_native_look
from app.ui.windows.real_input import ARM_DELAY_MS, ArmedButtons, close_window

POLL_MS = 100
__all__ = ["ARM_DELAY_MS", "ConfirmWindow", "main"]


class ConfirmWindow:
    def __init__(self, root: tk.Tk, line: TrayLine, question: dict[str, str]) -> None:
        self.root = root
        self.line = line
        self._answered = False
        use_native_look(root)
        root.title(question.get("title") or _("Cowork Terminal: confirm"))
        root.attributes("-topmost", True)
        root.minsize(460, 180)
        root.protocol("WM_DELETE_WINDOW", lambda: self.answer(False))
        frame = ttk.Frame(root, padding=16)
        frame.pack(fill="both", expand=True)
        shown = visible(question.get("text", ""))  # a command in the question shows every character
        self.text = ttk.Label(frame, text=shown, wraplength=520, justify="left")
        self.text.pack(anchor="w", fill="x")
        if question.get("yours") != "True":  # Quit, Disconnect: the person reading this just asked for it
            ttk.Label(frame, text=_("If you did not ask for this, say no."), foreground="#555555", wraplength=520).pack(
                anchor="w", pady=(10, 0)
            )
        buttons = ttk.Frame(frame)
        buttons.pack(fill="x", side="bottom", pady=(14, 0))
        self.no_button = ttk.Button(buttons, text=question.get("deny", _("No")), command=lambda: self.answer(False))
        self.no_button.pack(side="right")
        self.yes_button = ttk.Button(buttons, text=question.get("allow", _("Yes")))
        if question.get("allow") != "":  # no yes-label: a notice, with only its OK
            self.yes_button.pack(side="right", padx=(0, 8))
        self.arming = ArmedButtons(root)
        self.arming.guard(self.yes_button, lambda: self.answer(True))
        self.arming.disarm()
        self.arming.disarm_when_shown()
        root.bind("<Escape>", lambda _e: self.answer(False))
        self.no_button.focus_set()  # a key pressed by habit lands on No; Yes takes a Tab first

    def answer(self, yes: bool) -> None:
        """Say the answer to the tray (Yes only through the armed button: see real_input)."""
        if self._answered:
            return
        self._answered = True
        self.line.send({"op": "answer", "yes": yes})
        close_window(self.root)

    def poll(self) -> None:
        for message in self.line.drain():
            if message is None:  # the tray closed our stdin: the question is withdrawn
                close_window(self.root)
                return
        self.root.after(POLL_MS, self.poll)


def main(argv: list[str] | None = None) -> int:
    if sys.stdin is None or sys.stdin.isatty():
        print("cowork-terminal:", _("the Cowork Terminal app opens this window to ask you something."), file=sys.stderr)
        return 2
    line = TrayLine()
    question = line.incoming.get()
    if question is None or question.get("op") != "ask":
        return 0
    root = open_tk_root(_("cannot open the confirm window: {error}"), "confirm-window")
    if root is None:
        return 1
    window = ConfirmWindow(root, line, {k: str(v) for k, v in question.items()})
    window.poll()
    root.mainloop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
