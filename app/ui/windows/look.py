"""One look for every window: on X11 the 'clam' theme (Tk's 'default' looks dated next to the
desktop's own apps); Windows and macOS keep their native themes. The log window does the same.
Every window's Tk root is made with CLASS_NAME: without it the desktop's dock and window list name
the app "Tk"."""

from __future__ import annotations

import tkinter as tk
from tkinter import ttk

CLASS_NAME = "cowork-terminal"  # the X window class (WM_CLASS) of every window of the app


class _Root(tk.Tk):
    def readprofile(self, baseName: str, className: str) -> None:  # noqa: N803 - tkinter's names
        """Never: tkinter runs `~/.<class>.py` and `~/.<class>.tcl` (and the program name's) unless
        Python ignores the environment, which `cowork-terminal log-window` typed in a terminal does
        not, and a command may write the home folder."""


def new_root(class_name: str = CLASS_NAME) -> tk.Tk:
    """Every window's Tk root: named CLASS_NAME, and without Tk's profiles in the home folder."""
    return _Root(className=class_name)


def use_native_look(root: tk.Misc) -> ttk.Style:
    style = ttk.Style(root)
    if root.tk.call("tk", "windowingsystem") == "x11" and "clam" in style.theme_names():
        style.theme_use("clam")
    return style
