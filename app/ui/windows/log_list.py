"""The activity log's list of commands: its columns sized for the user's language, and the diffs
from the row model (log_model.RowWindow) applied without moving what the user is reading."""

from __future__ import annotations

import tkinter as tk
from collections.abc import Callable
from tkinter import font as tkfont
from tkinter import ttk
from typing import Any, Literal

from app.core.claude.names import CLIENT_NAMES
from app.core.i18n import _, ngettext
from app.core.i18n.formats import format_number
from app.ui.windows.log_model import COLUMNS, STATUS_STYLES, Diff, Row, status_tag

MIN_STRETCH_PX = 50  # the command's and the folder's columns at their narrowest


def build_tree(parent: ttk.Frame, root: tk.Tk | tk.Toplevel) -> ttk.Treeview:
    """The list's Treeview with its headings, widths and status colours."""
    tree = ttk.Treeview(parent, columns=[c[0] for c in COLUMNS], show="headings", selectmode="browse", height=12)
    scale = max(1.0, root.winfo_fpixels("1i") / 96)  # widths are given at 96 dpi
    # A translated heading ("Exit-Code", "Длительность") may need more room than the English one:
    # the command column gives it up, so the columns still fit the window.
    heading_font = tkfont.nametofont("TkHeadingFont")
    widths = {c[0]: max(int(c[2] * scale), heading_font.measure(_(c[1])) + 16) for c in COLUMNS}
    # The agents are named as people know them ("Claude Desktop"): the longest known name fits whole.
    row_font = tkfont.nametofont("TkDefaultFont")
    widths["client"] = max(widths["client"], max(row_font.measure(n) for n in CLIENT_NAMES.values()) + 16)
    widths["command"] -= sum(widths[c[0]] - int(c[2] * scale) for c in COLUMNS)
    for column, heading, _width, stretch in COLUMNS:
        tree.heading(column, text=_(heading), anchor="w")
        tree.column(column, width=widths[column], minwidth=40, stretch=stretch, anchor="w")
    tree.column("exit", anchor="e")
    tree.column("duration", anchor="e")
    # A window narrower than the columns (a 1024-pixel screen, or one the person made smaller) hid the
    # last columns past the list's edge: the command and the folder give up width instead (`fit_columns`).
    tree.bind("<Configure>", lambda event: fit_columns(tree, widths, event.width), add="+")
    for status, look in STATUS_STYLES.items():
        options: dict[str, Any] = {"foreground": look.foreground}
        if look.background:
            options["background"] = look.background
        tree.tag_configure(status_tag(status), **options)
    return tree


def fit_columns(tree: ttk.Treeview, widths: dict[str, int], width: int) -> None:
    """The columns at their `widths`, or, where the list is narrower than that, the columns that stretch
    (the command, the folder) narrower by what is missing, in proportion, down to MIN_STRETCH_PX each:
    every column stays in sight, the error code and the duration too."""
    stretching = [c[0] for c in COLUMNS if c[3]]
    fixed = sum(w for column, w in widths.items() if column not in stretching)
    wanted = sum(widths[column] for column in stretching)
    room = max(width - 4 - fixed, MIN_STRETCH_PX * len(stretching))  # 4: the list's border
    for column in stretching:
        fitted = widths[column] if room >= wanted else max(MIN_STRETCH_PX, widths[column] * room // wanted)
        if tree.column(column, "width") != fitted:
            tree.column(column, width=fitted)


def insert_row(tree: ttk.Treeview, index: int | Literal["end"], row: Row) -> None:
    tree.insert("", index, iid=str(row.id), values=row.values, tags=(row.tag,))


def first_visible(tree: ttk.Treeview) -> str | None:
    """The row at the top of the view, or None at the very top (new rows then come into view)."""
    children = tree.get_children()
    if not children:
        return None
    first = float(tree.yview()[0])
    if first <= 0.0:
        return None
    return children[min(len(children) - 1, round(first * len(children)))]


def apply_diff(tree: ttk.Treeview, diff: Diff, anchor: str | None) -> None:
    """Rows removed, updated and inserted; rows added or dropped above the view must not move
    what the user is reading (`anchor` stays where it was)."""
    gone = [str(i) for i in diff.removed if tree.exists(str(i))]
    if gone:
        tree.delete(*gone)
    for row in diff.updated:
        tree.item(str(row.id), values=row.values, tags=(row.tag,))
    for index, row in diff.inserted:
        insert_row(tree, index, row)
    if anchor is not None and tree.exists(anchor):
        count = len(tree.get_children())
        tree.yview_moveto(tree.index(anchor) / count)


def row_menu(
    tree: ttk.Treeview,
    root: tk.Tk | tk.Toplevel,
    stop: Callable[[], None],
    copy: Callable[[], None],
    opened: Callable[[str], bool],
) -> tk.Menu:
    """The right-click menu of a row: Stop (when `opened(iid)` says it may) and Copy command."""
    menu = tk.Menu(tree, tearoff=False)
    menu.add_command(label=_("Stop this command"), command=stop)
    menu.add_command(label=_("Copy command"), command=copy)

    def open_menu(event: tk.Event) -> None:
        iid = tree.identify_row(event.y)
        if not iid:
            return
        can_stop = opened(iid)
        menu.entryconfigure(0, state="normal" if can_stop else "disabled")
        menu.tk_popup(event.x_root, event.y_root)

    right_click = "<Button-2>" if root.tk.call("tk", "windowingsystem") == "aqua" else "<Button-3>"
    tree.bind(right_click, open_menu)
    return menu


def list_status(total: int, held: int, has_older: bool, unfiltered: bool) -> str:
    """The status line under the list: the history's size, what the list shows, and whether
    scrolling brings older rows."""
    whole = ngettext("{count} command in the history", "{count} commands in the history", total).format(
        count=format_number(total)
    )
    if not unfiltered:
        count = format_number(held) + ("+" if has_older else "")
        shown = ngettext("{count} matching the filter", "{count} matching the filter", held).format(count=count)
    else:
        shown = _("showing {count}").format(count=format_number(held))
    more = " · " + _("scroll down for older ones") if has_older else ""
    return f"{whole}, {shown}{more}"
