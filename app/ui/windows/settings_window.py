"""The Settings window: each choice with one plain sentence under it, instead of technical submenus.

The tray starts it with pipes, like the approval prompt: the settings as they stand arrive on stdin
({"op": "state", ...}), and each click leaves on stdout ({"op": "set", "key": ..., "value": ...}).
Only the tray applies them, and only from this pipe: asking less often is a loosening, so it counts
only from a window the tray itself started. Its choices are armed like the approval prompt's
buttons (`real_input.ArmedButtons`): greyed until the tray has said the settings, taking clicks a
moment later, and deaf to clicks another program sends (XSendEvent), which put the shown choice back.
"""

from __future__ import annotations

import sys
import tkinter as tk
from collections.abc import Callable
from tkinter import ttk
from typing import Any

from app.core.execution.output import BUDGET_CHOICES, OutputBudget
from app.core.i18n import N_, _
from app.core.policy.approval import ApprovalMode
from app.ui.windows.link import TrayLine, open_tk_root
from app.ui.windows.look import SCREEN_MARGIN_PX, keep_within_screen, use_native_look
from app.ui.windows.real_input import ArmedButtons

TITLE = N_("Cowork Terminal: settings")
POLL_MS = 100
WRAP_PX = 520
WIDE_WRAP_PX = 900  # the sentences' width on a screen too short for the window: one line each, mostly
APPROVAL_KEY = "approval_mode"
OUTPUT_KEY = "output_budget"
AUTOSTART_KEY = "autostart"

MODE_SENTENCES = {
    ApprovalMode.DESTRUCTIVE: N_(
        "Everyday commands run at once; anything that deletes, overwrites or changes the system waits for your OK."
    ),
    ApprovalMode.ALL: N_("Nothing runs until you say yes. The safest choice, and the most clicks."),
    ApprovalMode.NEVER: N_("Every command runs at once. You still see each one in the activity log, and can pause."),
}
BUDGET_SENTENCES = {
    BUDGET_CHOICES[0].setting: N_("Enough for most commands. Longer output is kept in a file that Claude can read."),
    BUDGET_CHOICES[1].setting: N_("More for Claude to read at once; it uses more of the conversation's room."),
    BUDGET_CHOICES[2].setting: N_("The most. Long logs can fill the conversation quickly."),
}
AUTOSTART_SENTENCE = N_("Claude can use this computer only while Cowork Terminal runs.")


class SettingsWindow:
    def __init__(self, root: tk.Tk, send: Callable[[dict[str, Any]], None]) -> None:
        self.root = root
        self.send = send
        self.arming = ArmedButtons(root)
        self._told: dict[str, Any] | None = None  # the settings as the tray last said them
        root.title(_(TITLE))
        root.minsize(560, 200)
        # Never taller than the screen: Close must stay where the person can click it.
        keep_within_screen(root)
        style = use_native_look(root)
        style.configure("Section.TLabel", font=("TkDefaultFont", 12, "bold"))
        style.configure("Hint.TLabel", foreground="#555555")
        self.frame = frame = ttk.Frame(root, padding=18)
        frame.pack(fill="both", expand=True)
        self.mode = tk.StringVar(root, value=ApprovalMode.DESTRUCTIVE.value)
        self.budget = tk.StringVar(root, value=str(OutputBudget().setting))
        self.autostart = tk.BooleanVar(root, value=False)
        self.choices: dict[tuple[str, str], ttk.Widget] = {}
        self.sentences: list[ttk.Label] = []

        first = ttk.Label(frame, text=_("Ask before running"), style="Section.TLabel")
        first.pack(anchor="w")
        for mode in ApprovalMode:
            self._choice(frame, APPROVAL_KEY, mode.value, mode.label, _(MODE_SENTENCES[mode]), self.mode)
        ttk.Label(frame, text=_("How much output Claude reads"), style="Section.TLabel").pack(anchor="w", pady=(12, 0))
        for budget in BUDGET_CHOICES:
            sentence = _(BUDGET_SENTENCES[budget.setting])
            self._choice(frame, OUTPUT_KEY, str(budget.setting), budget.label, sentence, self.budget)
        ttk.Label(frame, text=_("Start at login"), style="Section.TLabel").pack(anchor="w", pady=(12, 0))
        box = ttk.Checkbutton(frame, text=_("Start Cowork Terminal when I log in"), variable=self.autostart)
        box.pack(anchor="w", pady=(4, 0))
        self._guard(box, lambda: self._chosen(AUTOSTART_KEY, "on" if self.autostart.get() else "off"))
        self.choices[(AUTOSTART_KEY, "")] = box
        why = ttk.Label(frame, text=_(AUTOSTART_SENTENCE), style="Hint.TLabel", wraplength=WRAP_PX)
        why.pack(anchor="w", padx=(24, 0))
        self.sentences.append(why)
        # Made last (Tab reaches it last), packed first, at the bottom: on a short screen the sentences
        # give up room, never Close.
        self.bottom = bottom = ttk.Frame(frame)
        bottom.pack(side="bottom", fill="x", pady=(16, 0), before=first)
        self.close_button = ttk.Button(bottom, text=_("Close"), command=root.destroy)
        self.close_button.pack(side="right")
        root.bind("<Escape>", lambda _e: root.destroy())
        self._fit_screen()

    def _fit_screen(self) -> None:
        """On a screen too short for the window (1024x600, in a longer language), the sentences wrapped
        wider, in fewer lines: the window was taller than the screen and Close was out of sight."""
        self.root.update_idletasks()
        if self.root.winfo_reqheight() <= self.root.winfo_screenheight() - 2 * SCREEN_MARGIN_PX:
            return
        wide = min(WIDE_WRAP_PX, self.root.winfo_screenwidth() - 2 * SCREEN_MARGIN_PX - 80)
        for sentence in self.sentences:
            sentence.configure(wraplength=max(WRAP_PX, wide))
        self.frame.configure(padding=(18, 8))  # and less room above and below
        self.bottom.pack_configure(pady=(4, 0))

    def _choice(self, frame: ttk.Frame, key: str, value: str, label: str, sentence: str, var: tk.StringVar) -> None:
        button = ttk.Radiobutton(frame, text=label, value=value, variable=var)
        button.pack(anchor="w", pady=(4, 0))
        self._guard(button, lambda: self._chosen(key, value))
        said = ttk.Label(frame, text=sentence, style="Hint.TLabel", wraplength=WRAP_PX, justify="left")
        said.pack(anchor="w", padx=(24, 0))
        self.sentences.append(said)
        self.choices[(key, value)] = button

    def _guard(self, widget: ttk.Checkbutton | ttk.Radiobutton, action: Callable[[], None]) -> None:
        """Greyed until the tray says the settings; then only the user's own armed click counts."""
        self.arming.guard(widget, action, refused=self._put_back)
        widget.state(["disabled"])

    def _put_back(self) -> None:
        """A click that does not count: Tk already moved the choice, so show the tray's settings again."""
        if self._told is not None:
            self.show(self._told)

    def _chosen(self, key: str, value: str) -> None:
        self.send({"op": "set", "key": key, "value": value})

    def show(self, state: dict[str, Any]) -> None:
        """The settings as the tray holds them (after each change, and at the start)."""
        if self._told is None:  # the choices now show the truth: they take clicks a moment later
            self.arming.disarm()
        self._told = dict(state)
        if isinstance(state.get(APPROVAL_KEY), str):
            self.mode.set(state[APPROVAL_KEY])
        if state.get(OUTPUT_KEY) is not None:
            self.budget.set(str(state[OUTPUT_KEY]))
        self.autostart.set(state.get(AUTOSTART_KEY) is True)


def main(argv: list[str] | None = None) -> int:
    if sys.stdin is None or sys.stdin.isatty():
        print("cowork-terminal:", _("the Cowork Terminal app opens this window from its menu."), file=sys.stderr)
        return 2
    root = open_tk_root(_("cannot open the settings window: {error}"), "settings-window")
    if root is None:
        return 1
    line = TrayLine()  # after the root: a reader thread on stdin must not outlive a failed start
    window = SettingsWindow(root, line.send)

    def poll() -> None:
        for message in line.drain():
            if message is None:  # the tray closed our stdin
                root.destroy()
                return
            if message.get("op") == "state":
                window.show(message)
        root.after(POLL_MS, poll)

    poll()
    root.mainloop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
