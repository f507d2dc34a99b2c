"""The "Uninstall..." window: lists what will go, asks, then does it (a small Tk window in its own process).

The tray starts it (`cowork-terminal uninstall-window`) and is itself one of the things that go: the
work runs here, in `app.core.install.uninstall`, exactly as `cowork-terminal uninstall` does it. Looking at
the machine can take a moment (every Claude config, start at login, the data folders), so it runs
on a worker thread and the window says it is looking.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import queue
import threading
import tkinter as tk
from collections.abc import Callable
from tkinter import ttk

from app.core.errors import CoworkError
from app.core.i18n import N_, _
from app.core.install import uninstall
from app.core.install.installation import this_install
from app.core.paths import AppPaths
from app.ui.windows.link import open_tk_root
from app.ui.windows.look import use_native_look
from app.ui.windows.real_input import ArmedButtons

log = logging.getLogger(__name__)

TITLE = N_("Uninstall Cowork Terminal")
POLL_MS = 100
WRAP_PX = 520


class UninstallWindow:
    """Looking -> the list and the question -> working -> what was done and what is left."""

    def __init__(self, root: tk.Tk, paths: AppPaths) -> None:
        self.root = root
        self.paths = paths
        self.plan: uninstall.UninstallPlan | None = None
        self._results: queue.Queue[Callable[[], None]] = queue.Queue()
        use_native_look(root)
        root.title(_(TITLE))
        root.minsize(480, 260)
        frame = ttk.Frame(root, padding=14)
        frame.pack(fill="both", expand=True)
        self.heading = ttk.Label(frame, text=_("Looking at what Cowork Terminal set up..."),
                                 font=("TkDefaultFont", 12, "bold"), wraplength=WRAP_PX, justify="left")  # fmt: skip
        self.heading.pack(anchor="w")
        self.body = ttk.Label(frame, wraplength=WRAP_PX, justify="left")
        self.body.pack(anchor="w", fill="x", pady=(8, 8))
        self.delete_data = tk.BooleanVar(value=False)
        self.data_box = ttk.Checkbutton(
            frame, text=_("Also delete my command history and logs"), variable=self.delete_data
        )
        # Whether the record goes too: the user's own click only, a moment after the list shows; a
        # program's click puts the tick back.
        self.box_arming = ArmedButtons(root)
        self.box_arming.guard(self.data_box, self._show_plan, refused=self._untick)
        buttons = ttk.Frame(frame)
        buttons.pack(side="bottom", fill="x", pady=(10, 0))
        self.cancel_button = ttk.Button(buttons, text=_("Cancel"), command=root.destroy)
        self.cancel_button.pack(side="right")
        # Not the default button: Enter must not uninstall by accident.
        self.uninstall_button = ttk.Button(buttons, text=_("Uninstall"), state="disabled")
        self.arming = ArmedButtons(root)  # armed a moment after the list shows or changes; deaf to sent clicks
        self.arming.guard(self.uninstall_button, self.uninstall)
        self.uninstall_button.pack(side="right", padx=(0, 8))
        root.bind("<Escape>", lambda _e: self.cancel_button.invoke())

    def start(self) -> None:
        self._in_background(lambda: uninstall.plan_uninstall(self.paths, this_install(), delete_data=False),
                            self._planned)  # fmt: skip
        self._poll()

    def _in_background(self, work: Callable[[], object], then: Callable[[object], None]) -> None:
        def run() -> None:
            try:
                result = work()
            except Exception as exc:  # the top of a worker thread: log it, and the window shows it
                log.exception("uninstall failed")
                self._results.put(functools.partial(self._failed, exc))
                return
            self._results.put(lambda: then(result))

        threading.Thread(target=run, name="uninstall", daemon=True).start()

    def _poll(self) -> None:
        while not self._results.empty():
            self._results.get_nowait()()
        if self.root.winfo_exists():
            self.root.after(POLL_MS, self._poll)

    def _planned(self, plan: object) -> None:
        assert isinstance(plan, uninstall.UninstallPlan)
        self.plan = plan
        if plan.data:
            self.data_box.pack(anchor="w", after=self.body)
            self.box_arming.disarm()
        self._show_plan()

    def _untick(self) -> None:
        """A click that does not count: Tk already flipped the tick, so flip it back."""
        self.delete_data.set(not self.delete_data.get())

    def _show_plan(self) -> None:
        if self.plan is None:
            return
        self.plan = dataclasses.replace(self.plan, delete_data=self.delete_data.get())
        steps = self.plan.steps()
        if not steps:
            self.heading.configure(text=_("Nothing of Cowork Terminal is set up for you here."))
            self.body.configure(text="\n".join(uninstall.closing_words(self.plan, in_window=True)))
            self.arming.cancel()
            self.uninstall_button.state(["disabled"])
            self.cancel_button.configure(text=_("Close"))
            return
        self.heading.configure(text=_("Uninstall will:"))
        self.cancel_button.configure(text=_("Cancel"))
        lines = [f"•  {step}" for step in steps] + [""] + self.plan.stays(in_window=True) + list(self.plan.manual)
        self.body.configure(text="\n".join(lines).strip())
        self.arming.disarm()  # what the button does changed: the user reads it first

    def uninstall(self) -> None:
        plan = self.plan
        if plan is None or not self.uninstall_button.instate(["!disabled"]):
            return
        self.arming.cancel()
        self.box_arming.cancel()
        self.uninstall_button.state(["disabled"])
        self.cancel_button.state(["disabled"])
        self.data_box.state(["disabled"])
        self.heading.configure(text=_("Uninstalling..."))
        self._in_background(lambda: uninstall.run_uninstall(plan, self.paths), self._done)

    def _done(self, report: object) -> None:
        assert isinstance(report, uninstall.UninstallReport) and self.plan is not None
        failed = bool(report.failed)
        self.heading.configure(text=_("Some steps failed.") if failed else _("Cowork Terminal is uninstalled."))
        lines = report.done + report.failed + [""] + uninstall.closing_words(self.plan, report, in_window=True)
        self.body.configure(text="\n".join(lines))
        self.cancel_button.configure(text=_("Close"))
        self.cancel_button.state(["!disabled"])

    def _failed(self, exc: BaseException) -> None:
        self.heading.configure(text=_("Uninstall could not go on."))
        said = exc.for_person() if isinstance(exc, CoworkError) else str(exc)
        self.body.configure(text=f"{said}\n\n" + _("`cowork-terminal uninstall` in a terminal says more."))
        self.cancel_button.configure(text=_("Close"))
        self.cancel_button.state(["!disabled"])


def main(argv: list[str] | None = None) -> int:
    paths = AppPaths.from_environment()
    root = open_tk_root(_("cannot open the uninstall window: {error}"))
    if root is None:
        return 1
    window = UninstallWindow(root, paths)
    window.start()
    root.mainloop()
    return 0
