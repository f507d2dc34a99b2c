"""Only the user's own input decides: how every window of ours guards the buttons that decide.

Another program on the same display can reach a Tk window two ways without the user: X events it
sends to the window (XSendEvent: they carry `send_event`, a person's never do) and Tk's own `send`
command, which runs any Tcl in any Tk process on the display (it could call a button's `invoke`).
So each window closes `send` as it opens (`close_tk_send`), and each deciding button goes through
`ArmedButtons`: disabled for ARM_DELAY_MS whenever what it decides on shows or changes (a click
aimed at the previous question never answers the new one), and deaf to sent events. No button is
the default and Enter does nothing: a person picks one with the mouse, or Tab and Space. Tick boxes
and choices that decide (start at login, a setting) are guarded the same way: Tk flips their value
before their command runs, so a refused click puts the value back (`guard`'s `refused`).
"""

from __future__ import annotations

import contextlib
import logging
import tkinter as tk
from collections.abc import Callable
from tkinter import ttk
from typing import Any, TypeAlias

from app.core.private_process import forbid_dumps

log = logging.getLogger(__name__)

ARM_DELAY_MS = 1000
IGNORED_SENT_EVENT = "ignored a click another program sent to the window"  # in the window's log
IGNORED_SENT_TYPING = "ignored keys or clicks another program sent to a text box"  # in the window's log


def protect_window(root: tk.Misc) -> None:
    """What every window process of ours does first: shut Tk's `send` and other programs' debuggers out."""
    close_tk_send(root)
    forbid_dumps()


def close_tk_send(root: tk.Misc) -> None:
    """Unregister the window from Tk's `send` (deleting the command is Tk's documented way): no
    other program on the display can then run code in this process."""
    with contextlib.suppress(tk.TclError):  # a Tk built without send (Windows, macOS): nothing to close
        root.tk.call("rename", "send", "")


def close_window(root: tk.Misc) -> None:
    """Take the window off the screen now, then destroy it. Without `send`, nothing in Tk's destroy
    flushes the display any more, so the window stayed drawn until the process ended (about 1 s)."""
    root.withdraw()  # type: ignore[attr-defined]
    root.update_idletasks()
    root.destroy()


# What ArmedButtons can guard: anything ttk invokes from a click or a key, with a `command`.
Deciding: TypeAlias = ttk.Button | ttk.Checkbutton | ttk.Radiobutton


def deaf_to_sent_input(entry: tk.Misc) -> None:
    """Let only the user type in `entry` (a confirm word, a name): keys and clicks another program
    sends to it (XSendEvent: typing, a paste with Ctrl+V or the middle button) stop before Tk's own
    bindings see them."""

    def refuse(event: tk.Event) -> str | None:
        if getattr(event, "send_event", False):
            log.warning(IGNORED_SENT_TYPING)
            return "break"
        return None

    for sequence in ("<KeyPress>", "<ButtonPress>", "<ButtonRelease>"):
        entry.bind(sequence, refuse, add="+")


class ArmedButtons:
    """The deciding buttons of one window: armed together, after a delay, and only for real input."""

    def __init__(self, root: tk.Misc, delay_ms: int = ARM_DELAY_MS) -> None:
        self.root = root
        self.delay_ms = delay_ms
        self.buttons: list[Deciding] = []
        self._arming: str | None = None
        self._sent = False  # the last press on a guarded button came from another program
        self._greyed = True
        self.on_armed: Callable[[], None] | None = None  # the window's own states, set as they arm

    def watch(self, button: Deciding) -> None:
        """Note where each press on `button` comes from, and arm and disarm it with the others."""
        for sequence in ("<ButtonPress-1>", "<ButtonRelease-1>", "<KeyPress>"):
            button.bind(sequence, self._note_origin, add="+")
        if button not in self.buttons:
            self.buttons.append(button)
        if self._arming is not None and self._greyed:
            button.state(["disabled"])

    def guard(
        self,
        button: Deciding,
        action: Callable[[], Any],
        *,
        loosens: Callable[[], bool] | None = None,
        refused: Callable[[], Any] | None = None,
    ) -> None:
        """Make `action` the button's command, run only for the user's own armed click. With `loosens`,
        the guard holds only while it says True (a tightening, such as Pause, may come from anywhere).
        `refused` runs instead for a click that does not count (a tick box puts its tick back)."""
        self.watch(button)

        def run() -> None:
            if (loosens is None or loosens()) and not self.allows():
                if refused is not None:
                    refused()
                return
            action()

        button.configure(command=run)

    def allows(self) -> bool:
        """Whether the press being handled may decide: armed, and not sent by another program."""
        sent, self._sent = self._sent, False
        if sent:
            log.warning(IGNORED_SENT_EVENT)
            return False
        return self.armed

    def _note_origin(self, event: tk.Event) -> None:
        sent = bool(getattr(event, "send_event", False))
        if str(event.type) in ("ButtonRelease", "5"):  # a press sent by a program taints its release
            self._sent = self._sent or sent
        else:
            self._sent = sent

    def disarm(self, *, greyed: bool = True) -> None:
        """Refuse clicks for the delay, counted from now (call it whenever the question changes); the
        buttons show it greyed out unless the window manages their state itself (`greyed` False)."""
        if self._arming is not None:
            self.root.after_cancel(self._arming)
        self._greyed = greyed
        self.buttons = [b for b in self.buttons if b.winfo_exists()]
        for button in self.buttons if greyed else ():
            button.state(["disabled"])
        self._arming = self.root.after(self.delay_ms, self._arm)

    def _arm(self) -> None:
        self._arming = None
        self.buttons = [b for b in self.buttons if b.winfo_exists()]
        for button in self.buttons if self._greyed else ():
            button.state(["!disabled"])
        if self.on_armed is not None:  # in the same callback: no moment shows a button the window greys
            self.on_armed()

    def disarm_when_shown(self) -> None:
        """Disarm again each time the window is shown anew (mapped): a prompt that came back after
        being closed or hidden had Allow live under the pointer, and a click meant for the window
        below approved the command (a review, 2026-12-05)."""
        top = self.root.winfo_toplevel()

        def shown(event: tk.Event) -> None:
            if event.widget is top:
                self.disarm(greyed=self._greyed)

        top.bind("<Map>", shown, add="+")

    def cancel(self) -> None:
        """Forget the pending arming (the window closes)."""
        if self._arming is not None:
            self.root.after_cancel(self._arming)
            self._arming = None

    def arm_now(self) -> None:
        """Enable the buttons at once: what they do now tightens, which may come from anywhere."""
        self.cancel()
        self._arm()

    @property
    def armed(self) -> bool:
        return self._arming is None


def ask_armed(parent: tk.Misc, title: str, message: str, yes: str, no: str) -> bool:
    """A modal yes/no question whose Yes is armed like the prompt's (Tk's own message box takes sent
    clicks and Enter): No has the focus, Escape and closing say no. True only for the user's Yes."""
    window = tk.Toplevel(parent)
    window.title(title)
    window.transient(parent.winfo_toplevel())
    answer = {"yes": False}
    frame = ttk.Frame(window, padding=16)
    frame.pack(fill="both", expand=True)
    ttk.Label(frame, text=message, wraplength=460, justify="left").pack(anchor="w", fill="x")
    buttons = ttk.Frame(frame)
    buttons.pack(fill="x", side="bottom", pady=(14, 0))
    no_button = ttk.Button(buttons, text=no, command=window.destroy)
    no_button.pack(side="right")
    yes_button = ttk.Button(buttons, text=yes)
    yes_button.pack(side="right", padx=(0, 8))

    def said_yes() -> None:
        answer["yes"] = True
        window.destroy()

    arming = ArmedButtons(window)
    arming.guard(yes_button, said_yes)
    arming.disarm()
    window.protocol("WM_DELETE_WINDOW", window.destroy)
    window.bind("<Escape>", lambda _e: window.destroy())
    no_button.focus_set()
    window.wait_visibility()
    window.grab_set()
    window.wait_window()
    return answer["yes"]
