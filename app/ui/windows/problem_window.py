"""Why the tray app cannot start, in a window, for a person who started it from the desktop.

Started from a menu, a desktop icon or at login, the app has no terminal: the message the CLI prints
on stderr would reach nobody, and the app would seem not to start at all.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

from app.core.i18n import _


def shows_a_window(platform: str, environ: Mapping[str, str], stderr_is_terminal: bool) -> bool:
    """Whether a problem at start is shown in a window: when nobody reads stderr, and a window can
    be shown (Linux needs an X or Wayland display; Windows and macOS always have one)."""
    if stderr_is_terminal:
        return False
    if platform in ("win32", "darwin"):
        return True
    return bool(environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY"))


def stderr_is_terminal() -> bool:
    return sys.stderr is not None and sys.stderr.isatty()  # a windowed Windows build has no stderr


def show_problem(text: str) -> None:
    """The problem and an OK button; returns when the person closed it (or at once without Tk)."""
    try:
        import tkinter as tk
        from tkinter import ttk
    except ImportError:  # no tkinter: stderr (and the app's log) is all there is
        return
    from app.ui.windows.look import new_root, use_native_look

    try:
        root = new_root()
    except tk.TclError:
        return
    use_native_look(root)
    root.title(_("Cowork Terminal cannot start"))
    root.attributes("-topmost", True)
    frame = ttk.Frame(root, padding=16)
    frame.pack(fill="both", expand=True)
    ttk.Label(frame, text=text, wraplength=480, justify="left").pack(anchor="w", fill="x")
    ok = ttk.Button(frame, text=_("OK"), command=root.destroy)
    ok.pack(side="right", pady=(14, 0))
    ok.focus_set()
    for key in ("<Return>", "<Escape>"):
        root.bind(key, lambda _event: root.destroy())
    root.mainloop()
