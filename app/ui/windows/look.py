"""One look for every window: on X11 the 'clam' theme (Tk's 'default' looks dated next to the
desktop's own apps); Windows and macOS keep their native themes. The log window does the same.
Every window's Tk root is made with CLASS_NAME: without it the desktop's dock and window list name
the app "Tk"."""

from __future__ import annotations

import tkinter as tk
from tkinter import ttk

SCREEN_MARGIN_PX = 40  # kept free on each side of the screen (window borders, a panel, a title bar)
CLASS_NAME = "cowork-terminal"  # the X window class (WM_CLASS) of every window of the app


# Widget options whose value Tk runs as a script, and their defaults: X resources (the display's,
# or `~/.Xdefaults`) fill every option a widget is not given, and a command may have written them.
SCRIPT_OPTIONS = ("command", "xScrollCommand", "yScrollCommand", "validateCommand", "invalidCommand",
                  "postCommand", "tearOffCommand")  # fmt: skip
TTK_TAKES_FOCUS = ("TButton", "TEntry", "TCheckbutton", "TRadiobutton", "TCombobox", "Treeview", "TNotebook",
                   "TScale", "TSpinbox", "TMenubutton")  # fmt: skip
NO_FOCUS = ("Label", "Frame", "Toplevel", "Menu", "Message")
# A variable named for a label or button shows its value instead of the app's words (every label
# and button of the prompt read "Linux" with `*TLabel.textVariable: ::tcl_platform(os)`).
NAMED_VARIABLES = ("textVariable", "listVariable")


class _Root(tk.Tk):
    def readprofile(self, baseName: str, className: str) -> None:  # noqa: N803 - tkinter's names
        """Never: tkinter runs `~/.<class>.py` and `~/.<class>.tcl` (and the program name's) unless
        Python ignores the environment, which `cowork-terminal log-window` typed in a terminal does
        not, and a command may write the home folder."""


def new_root(class_name: str = CLASS_NAME) -> tk.Tk:
    """Every window's Tk root: named CLASS_NAME, without Tk's profiles in the home folder, and with
    no script or variable from X resources: each option Tk runs as a script (`-takefocus` too, on
    Tab) or reads a variable's value from gets its built-in default at the highest priority, above
    whatever the resources say. (Colours and fonts still come from them: said in docs/security.md.)"""
    root = _Root(className=class_name)
    for name in (*SCRIPT_OPTIONS, *NAMED_VARIABLES):
        root.option_add(f"*{name}", "", "interactive")
    root.option_add("*takeFocus", "", "interactive")
    for widget_class in TTK_TAKES_FOCUS:
        root.option_add(f"*{widget_class}.takeFocus", "ttk::takefocus", "interactive")
    for widget_class in NO_FOCUS:
        root.option_add(f"*{widget_class}.takeFocus", "0", "interactive")
    root.configure(takefocus=0)  # the root itself was made before these: as the resources said
    return root


def use_native_look(root: tk.Misc) -> ttk.Style:
    style = ttk.Style(root)
    if root.tk.call("tk", "windowingsystem") == "x11" and "clam" in style.theme_names():
        style.theme_use("clam")
    return style


def keep_within_screen(root: tk.Tk | tk.Toplevel) -> tuple[int, int]:
    """Never bigger than the screen, less SCREEN_MARGIN_PX on each side: a window's buttons (Allow,
    Deny, Done, Close) must stay where the person can click them. The room left, width and height."""
    room = (root.winfo_screenwidth() - 2 * SCREEN_MARGIN_PX, root.winfo_screenheight() - 2 * SCREEN_MARGIN_PX)
    root.maxsize(*room)
    return room
