"""The activity log's look and its coloured banner: the state in words, the agents, what runs now,
and the pause switch (which loosens only from the user's own click, once armed)."""

from __future__ import annotations

import logging
import tkinter as tk
from collections.abc import Callable, Sequence
from tkinter import font as tkfont
from tkinter import ttk

from app.core.i18n import N_, _
from app.core.journal.store import CommandRecord, ServerRecord
from app.ui.windows.log_model import describe_activity, describe_agents
from app.ui.windows.real_input import ArmedButtons

log = logging.getLogger(__name__)

# The window's words, in English and marked: `_()` gives them in the user's language where shown.
ON_TITLE = N_("Host access is ON")
ON_HINT = N_("Agents can run commands on this computer. Everything they run is listed below.")
PAUSED_TITLE = N_("PAUSED: new commands are refused")
PAUSED_HINT = N_("Nothing runs while paused; commands that were running have been stopped.")
PAUSE_BUTTON = N_("❚❚  Pause host access")
RESUME_BUTTON = N_("▶  Resume host access")

ON_COLOURS = ("#e7f5ea", "#14532d", "#2f6b3f")  # background, title, hint
PAUSED_COLOURS = ("#b3261e", "#ffffff", "#fde7e4")

Fonts = dict[str, tkfont.Font]


def setup_style(root: tk.Tk | tk.Toplevel) -> tuple[ttk.Style, Fonts]:
    """The window's theme and fonts: Tk's X11 defaults look dated, Windows and macOS keep native."""
    style = ttk.Style(root)
    x11 = root.tk.call("tk", "windowingsystem") == "x11"
    if x11 and "clam" in style.theme_names():
        style.theme_use("clam")
    base = tkfont.nametofont("TkDefaultFont")
    if x11:
        for name in ("TkDefaultFont", "TkTextFont", "TkHeadingFont", "TkMenuFont"):
            tkfont.nametofont(name).configure(size=10)
        tkfont.nametofont("TkFixedFont").configure(size=10)
    family = base.actual("family")
    size = base.actual("size")
    fonts = {
        "title": tkfont.Font(root, family=family, size=size + 7, weight="bold"),
        "hint": tkfont.Font(root, family=family, size=size),
        "bold": tkfont.Font(root, family=family, size=size, weight="bold"),
        "switch": tkfont.Font(root, family=family, size=size + 2, weight="bold"),
        "details_title": tkfont.Font(root, family=family, size=size + 2, weight="bold"),
        "link": tkfont.Font(root, family=family, size=size, weight="bold", underline=True),
        "mono": tkfont.nametofont("TkFixedFont"),
    }
    line = base.metrics("linespace")
    style.configure("Treeview", rowheight=int(line * 1.6))
    style.configure("Treeview.Heading", font=fonts["bold"], padding=(6, 4))
    style.configure("Switch.TButton", font=fonts["switch"], padding=(18, 10))
    style.configure("Small.TButton", padding=(2, 1))
    style.configure("Stop.TButton", foreground="#b3261e", font=fonts["bold"])
    style.configure("Status.TLabel", foreground="#555555", padding=(10, 4))
    style.configure("Muted.TLabel", foreground="#666666")
    return style, fonts


def set_icon(root: tk.Tk | tk.Toplevel) -> tk.PhotoImage | None:
    """The app's icon on the window (keep the image: Tk drops it when Python does)."""
    try:
        from app.ui.icons import icon_path

        icon = tk.PhotoImage(master=root, file=str(icon_path("app", 64)))
        root.iconphoto(True, icon)
    except (ImportError, ValueError, OSError, tk.TclError):
        log.debug("no window icon", exc_info=True)  # cosmetic: the window works without it
        return None
    return icon


class Banner:
    """The band at the top, in the state's colours; the switch calls `toggle` when armed."""

    def __init__(
        self,
        root: tk.Tk | tk.Toplevel,
        fonts: Fonts,
        arming: ArmedButtons,
        *,
        toggle: Callable[[], None],
        show_active: Callable[[], None],
        paused: Callable[[], bool | None],
    ) -> None:
        self.arming = arming
        self.frame = tk.Frame(root, padx=18, pady=12, highlightthickness=0)
        self.frame.pack(fill="x")
        texts = tk.Frame(self.frame, highlightthickness=0)
        texts.pack(side="left", fill="x", expand=True)
        self.state_label = tk.Label(texts, font=fonts["title"], anchor="w", justify="left")
        self.state_label.pack(fill="x")
        self.hint_label = tk.Label(texts, font=fonts["hint"], anchor="w", justify="left")
        self.hint_label.pack(fill="x")
        self.agents_label = tk.Label(texts, font=fonts["hint"], anchor="w", justify="left")
        self.agents_label.pack(fill="x", pady=(6, 0))
        activity = tk.Frame(texts, highlightthickness=0)
        activity.pack(fill="x")
        self.activity_label = tk.Label(activity, font=fonts["bold"], anchor="w")
        self.activity_label.pack(side="left")
        self.show_link = tk.Label(activity, text=_("Show"), font=fonts["link"], cursor="hand2")
        self.show_link.bind("<Button-1>", lambda _e: show_active())
        self._parts: tuple[tk.Frame | tk.Label, ...] = (
            self.frame,
            texts,
            activity,
            self.state_label,
            self.hint_label,
            self.agents_label,
            self.activity_label,
            self.show_link,
        )
        self.pause_button = ttk.Button(self.frame, style="Switch.TButton")
        arming.guard(self.pause_button, toggle, loosens=lambda: bool(paused()))
        # Packed before the texts: a narrow window (or a longer language) wraps the texts, and the switch
        # keeps its whole text ("Resume" squeezed to a few letters could not be read, nor found).
        self.pause_button.pack(side="right", padx=(12, 0), before=texts)
        self._wrapped = (self.state_label, self.hint_label, self.agents_label)
        texts.bind("<Configure>", self._rewrap, add="+")

    def _rewrap(self, event: tk.Event) -> None:
        """The texts wrap at the width the switch leaves them."""
        width = max(1, event.width - 8)  # the labels' own border and padding
        for label in self._wrapped:
            if int(str(label.cget("wraplength")) or 0) != width:
                label.configure(wraplength=width)

    def paint(self, paused: bool) -> None:
        """The state's colours and words; Resume is armed only after a moment, Pause at once."""
        background, title, hint = PAUSED_COLOURS if paused else ON_COLOURS
        for part in self._parts:
            part.configure(background=background)
        self.state_label.configure(text=_(PAUSED_TITLE if paused else ON_TITLE), foreground=title)
        self.hint_label.configure(text=_(PAUSED_HINT if paused else ON_HINT), foreground=hint)
        self.agents_label.configure(foreground=hint)
        self.activity_label.configure(foreground=title)
        self.show_link.configure(foreground=title)
        self.pause_button.configure(text=_(RESUME_BUTTON if paused else PAUSE_BUTTON))
        if paused:  # Resume loosens: a click aimed at Pause (or sent by a program) does nothing
            self.arming.disarm()
        else:  # Pause tightens: always at hand
            self.arming.arm_now()

    def describe(self, servers: Sequence[ServerRecord], active: Sequence[CommandRecord]) -> None:
        """The agents connected and what runs or waits now, with "Show" when something does."""
        self.agents_label.configure(text=describe_agents(servers))
        self.activity_label.configure(text=describe_activity(active))
        if active:
            self.show_link.pack(side="left", padx=(10, 0))
        else:
            self.show_link.pack_forget()
