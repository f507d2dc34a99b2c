"""The approval prompt: a small always-on-top Tk window, in its own process, that asks the user.

The tray starts it and is its only source: held commands arrive on its stdin exactly as their
server described them to the tray (never read back from the journal, which a command could
rewrite), with what the classifier says they do in plain words ("Deletes the folder
/home/ana/project/build and everything in it"); the user's answers leave on its stdout, which only
the tray reads. It shows the oldest command first: what it does, the exact command, which agent
asks, the folder and a live countdown of the time left, with Allow once and Deny (Esc is Deny;
Allow is never the default and is armed only after ARM_DELAY_MS). Where the user may make a rule
(core/policy/rules.py) it offers "Always allow ... in this folder" and "... for this session only"; the
answer carries the rule chosen. A command answered elsewhere, withdrawn or expired disappears;
the window closes when nothing is left to answer, or when the tray closes its stdin.
"""

from __future__ import annotations

import logging
import re
import sys
import time
import tkinter as tk
from collections.abc import Callable, Sequence
from dataclasses import replace
from tkinter import font as tkfont
from tkinter import ttk
from typing import Any, Protocol

from app.core.commands.pins import PICKS_FOLDERS, picks_programs, whole_value
from app.core.i18n import N_, _, ngettext
from app.core.i18n.formats import shorten_command
from app.core.policy.approval import HOLD_LIFETIME_S
from app.core.policy.rules import FOLDER_SCOPE, SESSION_SCOPE, RuleProposal, short_folder
from app.core.visible_text import hidden_count, visible
from app.ui.windows.held_command import Decision, WaitingCommand, danger_words
from app.ui.windows.link import TrayLine, open_tk_root
from app.ui.windows.look import SCREEN_MARGIN_PX, keep_within_screen, use_native_look
from app.ui.windows.real_input import ARM_DELAY_MS, ArmedButtons, close_window, deaf_to_sent_input

log = logging.getLogger(__name__)

POLL_MS = 100
# Allow and Deny stay disabled ARM_DELAY_MS whenever the shown command changes (the window opens, or
# the one shown was answered elsewhere and the next replaced it): a click aimed at the previous command
# must never approve one the user has not read; nor can a program's keystroke sent the moment it opens.
__all__ = ["ARM_DELAY_MS", "ApprovalPrompt", "main"]
TITLE = N_("Cowork Terminal: approve a command?")
CONFIRM_WORD = N_("allow")  # typed, in the user's language, before a most dangerous command may run
# ... or, where it deletes a folder people can name (the whole home folder), that folder's path.
CONFIRM_FOLDER = N_("To allow it, type the folder it deletes, {folder}:")
CONFIRM_DISK = N_("To allow it, type the disk it erases, {disk}:")
REVEAL_AFTER_S = 0.5  # a hidden prompt comes back this soon: long enough for a close to be seen to work
WRAP_PX = 560
FRAME_PAD_PX = 14
MAX_TEXT_PX = 960  # the rule button's text at most: wider, its folder is shortened in the middle
MAX_PLAIN_LINES = 6  # what the command does, at most this many lines: more are counted ("and 3 more")
# ... and, wrapped, at most this many lines on the screen; the details (folder, environment) at most
# MAX_DETAILS_SCREEN_LINES: a path of 4,000 characters, or one with 60 newlines, took the whole window
# and squeezed the command, the countdown and the second folder it deletes out of it (a review).
MAX_PLAIN_SCREEN_LINES = 16
MIN_PLAIN_SCREEN_LINES = 4  # ... fewer on a screen too short for the window (`_fit_screen`), down to this
MAX_DETAILS_SCREEN_LINES = 5
MAX_PATH_CHARS = 100  # a word of the plain words (a path) at most: longer, shortened in the middle
MAX_LINE_CHARS = 300  # one line of plain words at most (a path with spaces), shortened in the middle
# One variable that picks no program as the window says it (NAME=value) at most, shortened in the middle:
# its value as the pin shows it (pins.shown_value: at most 300 characters, its length said) and a name.
MAX_ENV_CHARS = 400
COMMAND_LINES = 6  # the command box's height, in lines, where the screen has room
MIN_COMMAND_LINES = 2  # Allow waits while the box shows fewer lines (a window squeezed by the screen)
MIN_FOLDER_CHARS = 24  # a folder shortened in the middle keeps at least this many characters
MAX_NAME_CHARS = 60  # an agent's name as the window says it, at most (MCP lets a client give any length)
MIN_NAME_CHARS = 16  # ... and a name shortened to fit a button keeps at least this many
BUTTON_PAD_PX = 16  # a ttk button's padding and border around its text, each side


class Line(Protocol):
    """The tray's end as the window sees it (windows.link.TrayLine; a list in tests)."""

    def send(self, message: dict[str, Any]) -> None: ...

    def drain(self) -> list[dict[str, Any] | None]: ...


COMMAND_CUT = N_("The command is longer than the box shows: scroll to read all of it.")


def command_facts(command: str, cut: bool = False) -> str:
    """What the command box cannot say by itself: how many lines, whether the box shows less than the
    whole command (`cut`: more lines than it has room for, or one line wrapped into many) and whether
    characters that do not show are written out in it; empty for a plain command the box shows whole."""
    facts = []
    lines = len(command.rstrip("\n").split("\n"))
    if lines > 1:
        facts.append(ngettext("The command has {count} line.", "The command has {count} lines.", lines))
        facts[-1] = facts[-1].format(count=lines)
    if cut:
        facts.append(_(COMMAND_CUT))
    hidden = hidden_count(command)
    if hidden:
        said = ngettext(
            "It contains {count} character that does not show, written out here (like \\u200b or ^[).",
            "It contains {count} characters that do not show, written out here (like \\u200b or ^[).",
            hidden,
        )
        facts.append(said.format(count=hidden))
    return " ".join(facts)


def plain_lines(lines: Sequence[str], ranks: Sequence[int] = (), most: int = MAX_PLAIN_LINES) -> list[str]:
    """What the command does, at most `most` lines, the rest counted: forty folders listed one a line
    would push the command and the answers off the screen. The lines kept are those that matter most
    (`ranks`, one for each line: held_command.rank_of), in their own order: the `~/Documents` a command
    deletes after six build folders is said, not counted."""
    if len(lines) <= most:
        return list(lines)
    shown = max(1, most - 1)
    if len(ranks) != len(lines):
        ranks = (0,) * len(lines)
    kept = sorted(sorted(range(len(lines)), key=lambda i: -ranks[i])[:shown])
    return [*(lines[i] for i in kept), _("and {count} more").format(count=len(lines) - shown)]


_LONG_WORD = re.compile(rf"\S{{{MAX_PATH_CHARS + 1},}}")


def shown_words(line: str) -> str:
    """One line of plain words as the window says it: every character that does not show written out,
    newlines and tabs too (one line of text stays one line: a path with 60 newlines pushed the rest of
    the window out of it), each long word (a path) shortened in the middle and the whole line at most
    MAX_LINE_CHARS. The command box shows the command whole."""
    line = _LONG_WORD.sub(lambda word: shorten_command(word[0], MAX_PATH_CHARS), visible(line, keep=""))
    return shorten_command(line, MAX_LINE_CHARS)


def agent_name(client: str) -> str:
    """The agent's name as the window says it: what does not show written out, and a name longer than
    MAX_NAME_CHARS shortened in the middle (a client names itself, with any length)."""
    return shorten_command(visible(client, keep=""), MAX_NAME_CHARS)


def time_left(seconds: float) -> str:
    """ "4:05 left" / "12 s left": the countdown's words."""
    seconds = max(0, int(seconds + 0.999))
    if seconds < 60:
        return _("{seconds} s left").format(seconds=seconds)
    return _("{time} left").format(time=f"{seconds // 60}:{seconds % 60:02d}")


class ApprovalPrompt:
    """One window that walks through pending approvals, oldest first."""

    def __init__(self, root: tk.Tk, line: Line) -> None:
        self.root = root
        self.line = line
        self.pending: dict[int, WaitingCommand] = {}
        self.current: WaitingCommand | None = None
        self.arming = ArmedButtons(root)  # armed after a delay; deaf to events other programs send
        # ArmedButtons enables every button once armed; a most dangerous command's Allow stays greyed
        # until its confirm word is typed (answer() checks the word again either way).
        self.arming.on_armed = self._arm_allow
        self.arming.disarm_when_shown()  # shown again (_keep_in_sight): not armed under the pointer
        use_native_look(root)
        root.title(_(TITLE))
        root.attributes("-topmost", True)
        root.minsize(560, 340)
        # Never bigger than the screen: Allow and Deny must stay where the person can click them.
        keep_within_screen(root)
        # Closing or minimising hides it only for a moment while a command waits (`poll` brings it back):
        # a program can unmap or iconify any window, and a hidden question must not wait unseen.
        root.protocol("WM_DELETE_WINDOW", self.root.withdraw)
        self._hidden_since: float | None = None

        frame = ttk.Frame(root, padding=FRAME_PAD_PX)
        frame.pack(fill="both", expand=True)
        self.heading = ttk.Label(frame, font=("TkDefaultFont", 13, "bold"), wraplength=WRAP_PX, justify="left")
        self.what = ttk.Label(frame, font=("TkDefaultFont", 12), foreground="#9a3412", wraplength=WRAP_PX,
                              justify="left")  # fmt: skip
        self.reason = self.what  # the plain words are why the user is asked
        # The class of danger in one sentence: what would be lost, and whether it can be undone.
        self.danger_line = ttk.Label(frame, wraplength=WRAP_PX, justify="left")
        # Every line of the command, scrollable, with each character that does not show written out.
        command_box = ttk.Frame(frame)
        self.command = tk.Text(command_box, height=COMMAND_LINES, wrap="word", font=("TkFixedFont", 11),
                               relief="solid", borderwidth=1)  # fmt: skip
        self.command_scroll = ttk.Scrollbar(command_box, orient="vertical", command=self.command.yview)
        self.command.configure(yscrollcommand=self.command_scroll.set)
        self.command_scroll.pack(side="right", fill="y")  # first: a narrow box loses text, never its scrollbar
        self.command.pack(side="left", fill="both", expand=True)
        # Whether it shows the whole command depends on its size (one long line wraps into many): said
        # again whenever that changes, and once it shows (it has its size before it is mapped).
        for event in ("<Configure>", "<Map>"):
            self.command.bind(event, lambda _e: self._say_command_facts(), add="+")
        self.command_facts = ttk.Label(frame, foreground="#9a3412", wraplength=WRAP_PX, justify="left")
        self.details = ttk.Label(frame, wraplength=WRAP_PX, justify="left")
        self.remaining = ttk.Label(frame, font=("TkDefaultFont", 11, "bold"))
        self.advice = ttk.Label(
            frame, foreground="#555555", wraplength=WRAP_PX, justify="left",
            text=_("Allow only if you know what it does: it runs with your full permissions. Esc denies."),
        )  # fmt: skip
        # The most dangerous class (said as such by its danger line, in red and bold): Allow waits until
        # the folder it deletes, or a word, is typed (like the "type the name to delete" of the apps
        # people trust), so no habit click can allow it.
        self.severe_row = ttk.Frame(frame)
        typing = ttk.Frame(self.severe_row)
        typing.pack(anchor="w", pady=(4, 0))
        self.confirm_label = ttk.Label(typing, text=_("To allow it, type {word}:").format(word=_(CONFIRM_WORD)))
        self.confirm_label.pack(side="left")
        self.typed = tk.StringVar(root)
        self.confirm_entry = ttk.Entry(typing, textvariable=self.typed, width=24)
        self.confirm_entry.pack(side="left", padx=(6, 0))
        deaf_to_sent_input(self.confirm_entry)  # a program typing the word would make the click a habit again
        self.typed.trace_add("write", lambda *_a: self._arm_allow())

        self.buttons = buttons = ttk.Frame(frame)
        # Created in this order for the keyboard: Deny has the focus, Tab leads to Allow once.
        self.deny_button = ttk.Button(buttons, text=_("Deny"), command=lambda: self.answer(False))
        self.deny_button.pack(side="right")
        # Allow is deliberately not the default button: Enter must never approve by accident.
        self.allow_button = ttk.Button(buttons, text=_("Allow once"), command=lambda: self.answer(True))
        self.allow_button.pack(side="right", padx=(0, 8))
        self.rules_row = ttk.Frame(frame)
        self.rule_button = ttk.Button(self.rules_row, command=lambda: self.answer(True, FOLDER_SCOPE))
        self.rule_button.pack(side="top", fill="x")
        self.session_button = ttk.Button(self.rules_row, command=lambda: self.answer(True, SESSION_SCOPE))
        self.session_button.pack(side="top", fill="x", pady=(4, 0))
        self.allowing = (self.allow_button, self.rule_button, self.session_button)
        # Packed from the bottom up, the answers first and the plain words last: where the screen cuts the
        # window short, Tk squeezes what was packed last, so never the answers, the countdown, the folder,
        # the command or its class of danger (`danger_line`, packed just above the command when shown).
        # The plain words and the details have a most height (`_plain_text`, `_details_text`), and
        # Allow waits while any of it does not show whole (`_in_sight`).
        buttons.pack(side="bottom", fill="x", pady=(10, 0))
        self.advice.pack(side="bottom", anchor="w", pady=(2, 0))
        self.remaining.pack(side="bottom", anchor="w")
        self.details.pack(side="bottom", anchor="w", pady=(8, 4))
        command_box.pack(side="bottom", fill="both", expand=True)
        self.heading.pack(side="top", anchor="w")
        self.what.pack(side="top", anchor="w", pady=(6, 8))
        # Measures a text's height, wrapped as the window wraps its texts now (`_wrap_at`); never shown.
        self._ruler = ttk.Label(frame, justify="left", wraplength=WRAP_PX)
        self._plain_room = MAX_PLAIN_SCREEN_LINES  # the plain words' most lines on the screen now
        border_px = sum(int(str(self.command.cget(option))) for option in ("borderwidth", "highlightthickness"))
        line_px = tkfont.Font(font=self.command.cget("font")).metrics("linespace")
        self._least_command_px = 2 * border_px + MIN_COMMAND_LINES * line_px  # the box at its least (`_in_sight`)
        for widget in (self.command, *self._deciding_texts(every=True)):
            for event in ("<Configure>", "<Map>", "<Unmap>"):
                widget.bind(event, lambda _e: self._arm_allow(), add="+")
        for button in (*self.allowing, self.deny_button):
            self.arming.watch(button)
        root.bind("<Escape>", lambda _e: self.answer(False))
        # The texts use the window's whole width (the rule buttons make it wider than WRAP_PX), instead
        # of a column of text beside an empty band.
        self._wrapping = (self.heading, self.what, self.danger_line, self.command_facts, self.details,
                          self.advice)  # fmt: skip
        frame.bind("<Configure>", self._rewrap, add="+")

    def _rewrap(self, event: tk.Event) -> None:
        self._wrap_at(event.width)

    def _wrap_at(self, frame_width: int) -> None:
        width = min(max(WRAP_PX, frame_width - 2 * FRAME_PAD_PX), self._widest_text_px())
        for label in self._wrapping:
            if int(str(label.cget("wraplength")) or 0) != width:
                label.configure(wraplength=width)
        if int(str(self._ruler.cget("wraplength")) or 0) != width:  # as many lines as fit at this width
            self._ruler.configure(wraplength=width)
            self._say_fitted()

    def _fit_texts(self) -> None:
        """Wrap the texts at the width the rest of the window needs now. Wrapped at the window's
        width, a text holds that width: after a command whose rule buttons made the window wide,
        the next one, with none, kept it (a review)."""
        for label in self._wrapping:
            label.configure(wraplength=WRAP_PX)
        self.root.update_idletasks()  # the frame's requested width, with the texts at their narrowest
        self._wrap_at(self.heading.master.winfo_reqwidth())

    def _widest_text_px(self) -> int:
        """How wide a text may make the window: never wider than the screen (less its margins)."""
        screen = self.root.winfo_screenwidth() - 2 * (SCREEN_MARGIN_PX + FRAME_PAD_PX)
        return max(WRAP_PX, min(MAX_TEXT_PX, screen))

    def _rule_text(self, proposal: RuleProposal) -> str:
        """ "Always allow deleting build folders ... in ~/a/…/z": a long folder is shortened in the middle
        so that the button, which sets the window's width, keeps Allow and Deny on the screen. The whole
        folder stays in the "In folder" line (unless longer than its MAX_DETAILS_SCREEN_LINES)."""
        description = visible(proposal.description(), keep="")  # one line: a folder's newline shows as ^J
        folder = visible(short_folder(proposal.folder), keep="")
        if folder not in description:
            return _("Always allow {what}").format(what=description)
        return self._fitted(
            lambda part: _("Always allow {what}").format(what=description.replace(folder, part)),
            folder,
            MIN_FOLDER_CHARS,
        )

    def _session_text(self, client: str) -> str:
        """ "Allow these until Claude Code quits", a long agent name shortened in the middle to fit."""
        return self._fitted(
            lambda part: _("Allow these until {client} quits").format(client=part), client, MIN_NAME_CHARS
        )

    def _fitted(self, say: Callable[[str], str], part: str, least: int) -> str:
        """A button's text `say(part)`, `part` shortened in the middle (never below `least` characters)
        until the text fits the window's widest: the button sets the window's width."""
        font = tkfont.nametofont(str(ttk.Style(self.root).lookup("TButton", "font") or "TkDefaultFont"))
        limit = self._widest_text_px() - 2 * BUTTON_PAD_PX
        text, keep = say(part), len(part)
        while font.measure(text) > limit and keep > least:
            keep -= 4
            text = say(shorten_command(part, keep))
        return text

    def _say_fitted(self) -> None:
        """The plain words and the details of the command shown, fitted to their most lines at the width
        the window wraps them now."""
        if self.current is not None:
            self.what.configure(text=self._plain_text(self.current))
            self.details.configure(text=self._details_text(self.current))

    def _height(self, label: ttk.Label, text: str) -> int:
        """How tall `label` would be with `text`, wrapped as the window wraps it now."""
        self._ruler.configure(text=text, font=label.cget("font"))
        return self._ruler.winfo_reqheight()

    def _fits(self, label: ttk.Label, text: str, screen_lines: int) -> bool:
        return self._height(label, text) <= self._height(label, "\n".join(["X"] * screen_lines))

    def _plain_text(self, held: WaitingCommand) -> str:
        """What the command does, at most `_plain_room` lines on the screen: the lines that
        matter most (`plain_lines`), as many as fit, the others counted; where even one does not fit,
        it is shortened in the middle."""
        lines = [shown_words(line) for line in held.lines()]
        if not lines:
            return _("It needs your approval.")
        ranks = held.line_ranks()
        for most in range(MAX_PLAIN_LINES, 1, -1):
            text = "\n".join(plain_lines(lines, ranks, most))
            if self._fits(self.what, text, self._plain_room):
                return text
        first, *counted = plain_lines(lines, ranks, 2)
        while not self._fits(self.what, "\n".join([first, *counted]), self._plain_room) and len(first) > 40:
            first = shorten_command(first, len(first) * 4 // 5)
        return "\n".join([first, *counted])

    def _details_text(self, held: WaitingCommand) -> str:
        """The folder and the extra environment. Each variable that picks programs whole, one a line (a
        PATH too long for a line, one folder a line): which `ls` runs may hang on the one folder a cut
        would take (a red team, 2026-12-06), and where they do not fit the screen Allow waits
        (`_in_sight`). Then, within MAX_DETAILS_SCREEN_LINES more lines on the screen, the others, each
        at most MAX_ENV_CHARS, as many as fit (the first always) and the rest counted; a folder too
        long for the rest, shortened in the middle."""
        folder = visible(short_folder(held.cwd), keep="") if held.cwd else _("the agent's shell session")
        programs: list[str] = []
        names: list[str] = []
        for entry in held.env_keys:
            name, equals, value = entry.partition("=")
            if equals and picks_programs(name, value):
                programs.append(self._program_variable(name, value))
            else:
                names.append(shorten_command(visible(entry, keep=""), MAX_ENV_CHARS))

        def said(folder: str, shown: int) -> str:
            details = [_("In folder: {folder}").format(folder=folder)]
            if programs or names:
                listed = names[:shown]
                if shown < len(names):
                    listed.append(_("and {count} more").format(count=len(names) - shown))
                lines = [*programs, *([", ".join(listed)] if listed else [])]
                details.append(_("Extra environment: {names}").format(names="\n".join(lines)))
            return "\n".join(details)

        room = self._height(self.details, "\n".join(["X"] * MAX_DETAILS_SCREEN_LINES))
        if programs:  # shown whole, beside the room the others have
            room += self._height(self.details, "\n".join(programs))

        def fits(text: str) -> bool:
            return self._height(self.details, text) <= room

        least, most = (0 if programs else min(1, len(names))), len(names)  # the most that fit: a binary search
        while least < most:
            middle = (least + most + 1) // 2
            least, most = (middle, most) if fits(said(folder, middle)) else (least, middle - 1)
        while not fits(said(folder, least)) and len(folder) > MIN_FOLDER_CHARS:
            folder = shorten_command(folder, max(MIN_FOLDER_CHARS, len(folder) * 4 // 5))
        return said(folder, least)

    def _program_variable(self, name: str, value: str) -> str:
        """A variable that picks programs as the details say it: `NAME=value` whole, every character
        that does not show written out; a list of folders too long for a line, one folder a line."""
        whole = visible(f"{name}={value}", keep="")
        separator = ";" if ";" in value else ":"
        folders = value.split(separator)
        line = _("Extra environment: {names}").format(names=whole)  # the longest it may be said in
        if not PICKS_FOLDERS.match(name) or len(folders) < 2 or self._fits(self.details, line, 1):
            return whole
        said = [visible(f"{name}={folders[0]}{separator}", keep="")]
        said += [f"    {visible(part, keep='')}{separator}" for part in folders[1:-1]]
        return "\n".join([*said, f"    {visible(folders[-1], keep='')}"])

    def _fit_screen(self) -> None:
        """A screen too short for the whole window: the command box gives up lines first (it scrolls,
        and says when it shows less than the whole command), down to MIN_COMMAND_LINES + 1; then the
        plain words, down to MIN_PLAIN_SCREEN_LINES. Squeezed by Tk instead, the texts packed last
        would go, and Allow would wait (`_in_sight`)."""
        room = self.root.winfo_screenheight() - 2 * SCREEN_MARGIN_PX
        while True:  # each turn gives up a line, or ends
            self.root.update_idletasks()
            over = self.heading.master.winfo_reqheight() - room
            lines = int(str(self.command.cget("height")))
            if over <= 0:
                return
            if lines > MIN_COMMAND_LINES + 1:
                line_px = tkfont.Font(font=self.command.cget("font")).metrics("linespace")
                self.command.configure(height=max(MIN_COMMAND_LINES + 1, lines + (over // -line_px)))
            elif self._plain_room > MIN_PLAIN_SCREEN_LINES:
                self._plain_room -= 1
                self._say_fitted()
            else:
                return

    def _deciding_texts(self, every: bool = False) -> list[tk.Misc]:
        """The texts the person decides on (with the command box): those shown now, or `every` one."""
        texts: list[tk.Misc] = [self.heading, self.what, self.danger_line, self.command_facts, self.details,
                                self.remaining, self.severe_row]  # fmt: skip
        return texts if every else [t for t in texts if t.winfo_manager()]

    def _in_sight(self) -> bool:
        """Whether the question shows whole: the command box with at least MIN_COMMAND_LINES lines, and
        every text the person decides on at its full height. A window the screen or the person made
        too small squeezes some of them out (Tk unmaps what has no room): then Allow waits."""
        box = self.command
        if not box.winfo_ismapped() or box.winfo_height() < self._least_command_px:
            return False
        return all(t.winfo_ismapped() and t.winfo_height() >= t.winfo_reqheight() for t in self._deciding_texts())

    def take(self, message: dict[str, Any]) -> None:
        """One message from the tray: a command to ask about, or one that no longer waits."""
        if message.get("op") == "show" and isinstance(message.get("hold"), dict):
            try:
                held = WaitingCommand.from_json(message["hold"])
            except (KeyError, TypeError, ValueError):
                return
            self.pending[held.id] = held
        elif message.get("op") == "gone" and isinstance(message.get("id"), int):
            self.pending.pop(message["id"], None)

    def refresh(self) -> bool:
        """Keep the command on screen until it is answered or gone, then show the oldest pending one;
        False when there is nothing left to ask. A lower id arriving later (two servers racing) waits
        its turn: it replaced the command being read, whose own time ran on unseen (a review)."""
        now = time.time()
        for command_id in [i for i, h in self.pending.items() if h.expires_at <= now]:
            del self.pending[command_id]
        if not self.pending:
            self.current = None
            return False
        if self.current is None or self.current.id not in self.pending:
            self.show(self.pending[min(self.pending)])
        self._more(len(self.pending))
        self.tick()
        return True

    def _more(self, count: int) -> None:
        assert self.current is not None
        client = agent_name(self.current.client)
        heading = _("{client} wants to run this command on your computer:").format(client=client)
        if count > 1:
            more = ngettext("{count} more waiting", "{count} more waiting", count - 1).format(count=count - 1)
            heading = _("{client} wants to run this command on your computer ({more}):")
            heading = heading.format(client=client, more=more)
        self.heading.configure(text=heading)

    def show(self, held: WaitingCommand) -> None:
        if held.expires_at - time.time() > HOLD_LIFETIME_S:  # shown for the first time: its clock starts now
            held = self.pending[held.id] = replace(held, expires_at=time.time() + HOLD_LIFETIME_S)
            self.line.send({"op": "seen", "id": held.id})
        self.current = held
        if held.severe:  # the font first: the plain words' height is measured in it
            self.what.configure(foreground="#b3261e", font=("TkDefaultFont", 13, "bold"))
        else:
            self.what.configure(foreground="#9a3412", font=("TkDefaultFont", 12))
        self._plain_room = MAX_PLAIN_SCREEN_LINES
        self._say_fitted()
        self.command.configure(state="normal", height=COMMAND_LINES)
        self.command.delete("1.0", "end")
        self.command.insert("1.0", visible(held.command))
        self.command.configure(state="disabled")  # selectable and copyable, not editable
        self.command.yview_moveto(0)
        self.command.xview_moveto(0)
        said = danger_words(held.danger)
        if said is not None:
            self.danger_line.configure(
                text=f"{said[0]}. {said[1]}",  # the sentence has its own colon: a full stop between
                foreground="#b3261e" if held.severe else "#9a3412",
                font=("TkDefaultFont", 11, "bold") if held.severe else ("TkDefaultFont", 11),
            )
            self.danger_line.pack(side="bottom", anchor="w", pady=(0, 8), after=self.command.master)
        else:
            self.danger_line.pack_forget()
        if held.severe:
            self.typed.set("")
            name = shorten_command(visible(held.confirm_name or "", keep=""), MAX_LINE_CHARS)
            if held.confirm_name and held.danger == "erases_disk":
                self.confirm_label.configure(text=_(CONFIRM_DISK).format(disk=name))
            elif held.confirm_name:
                self.confirm_label.configure(text=_(CONFIRM_FOLDER).format(folder=name))
            else:
                self.confirm_label.configure(text=_("To allow it, type {word}:").format(word=_(CONFIRM_WORD)))
            self.severe_row.pack(side="bottom", anchor="w", fill="x", pady=(6, 0), after=self.advice)
        else:
            self.severe_row.pack_forget()
        if held.proposal is not None and not held.severe:
            self.rule_button.configure(text=self._rule_text(held.proposal))
            # A session rule lasts while this agent's server runs: said as the person sees it.
            self.session_button.configure(text=self._session_text(agent_name(held.client)))
            self.rules_row.pack(side="bottom", fill="x", pady=(8, 0), before=self.buttons)  # under Allow, Deny
        else:
            self.rules_row.pack_forget()
        self._fit_texts()
        self._fit_screen()
        self._say_command_facts()  # at the size the texts now leave its box
        self._disarm()
        self.root.deiconify()
        self.root.lift()
        self.deny_button.focus_set()  # a key pressed by habit lands on Deny; Allow takes a Tab first

    def _say_command_facts(self) -> None:
        if self.current is None:
            return
        facts = command_facts(self.current.command, cut=self._command_cut())
        grew = False
        if self.command_facts.cget("text") != facts:
            self.command_facts.configure(text=facts)
            grew = bool(facts)
        if facts and not self.command_facts.winfo_manager():
            self.command_facts.pack(side="bottom", anchor="w", pady=(4, 0), before=self.command.master)
            grew = True
        elif not facts and self.command_facts.winfo_manager():
            self.command_facts.pack_forget()
        if grew:  # on a short screen, the box and the plain words give way (they only ever shrink)
            self._fit_screen()

    def _command_cut(self) -> bool:
        """Whether the command box shows less than the whole command, as Tk lays it out now: lines
        below its bottom (more lines than it has room for, or a long line wrapped into many) or text
        beyond its side. Before the box has its size, its lines are counted (`command_facts` says so)."""
        if not self.command.winfo_ismapped():
            return False
        self.command.count("1.0", "end", "update", "displaylines")  # every line's height measured now
        return self.command.yview() != (0.0, 1.0) or self.command.xview() != (0.0, 1.0)

    def tick(self) -> None:
        """The live countdown: how long the command still waits for an answer."""
        if self.current is not None:
            left = self.current.expires_at - time.time()
            said = _("Waiting for your answer: {left}. With no answer, it does not run.").format(left=time_left(left))
            self.remaining.configure(text=said)

    def _disarm(self) -> None:
        """Disable the answers for ARM_DELAY_MS, counted from the newest change of command."""
        self.arming.disarm()

    def _typed_ok(self) -> bool:
        """A most dangerous command needs the folder it deletes typed (exactly, a final / aside), or
        the confirm word where it names no folder; any other command needs nothing."""
        if self.current is None or not self.current.severe:
            return True
        typed = self.typed.get().strip()
        if self.current.confirm_name:
            return typed != "" and typed.rstrip("/") == self.current.confirm_name
        return typed.casefold() == _(CONFIRM_WORD).casefold()

    def _programs_whole(self) -> bool:
        """Whether every variable that picks programs is shown whole: one the pin cut (past
        SHOWN_PROGRAM_VALUE_CHARS) may hide, past its cut, the folder its `ls` comes from (a review,
        2026-12-06): Allow waits for good, Deny answers."""
        for entry in self.current.env_keys if self.current else ():
            name, equals, value = entry.partition("=")
            if equals and picks_programs(name, value) and whole_value(value) is None:
                return False
        return True

    def _arm_allow(self) -> None:
        ready = self.arming.armed and self._typed_ok() and self._in_sight() and self._programs_whole()
        for button in self.allowing:
            button.state(["!disabled"] if ready else ["disabled"])

    @property
    def armed(self) -> bool:
        return self.arming.armed

    def answer(self, allowed: bool, rule_scope: str | None = None) -> None:
        # Escape (Deny) is a deliberate key press and the safe answer, so it works at once; Allow only
        # once the buttons are armed, and never from an event another program sent to this window.
        if self.current is None or (
            allowed
            and (not self.arming.allows() or not self._typed_ok() or not self._in_sight() or not self._programs_whole())
        ):
            return
        self.line.send(Decision(self.current, allowed, rule_scope if allowed else None).to_message())
        self.pending.pop(self.current.id, None)
        self.current = None
        if not self.refresh():
            self.root.withdraw()

    def poll(self) -> None:
        """Take the tray's messages; close when it closed our stdin or nothing waits any more."""
        for message in self.line.drain():
            if message is None:
                close_window(self.root)
                return
            self.take(message)
        if not self.refresh():
            self.root.withdraw()
        else:
            self._keep_in_sight()
            self._arm_allow()  # a text grown where the window cannot grow sends no event: looked at again
        self.root.after(POLL_MS, self.poll)

    def _keep_in_sight(self) -> None:
        """Bring the window back REVEAL_AFTER_S after it was hidden, minimised or unmapped while a
        command waits (by the user's close, or by another program: `xdotool windowunmap`)."""
        if self.root.winfo_ismapped() and self.root.state() == "normal":
            self._hidden_since = None
            return
        now = time.monotonic()
        if self._hidden_since is None:
            self._hidden_since = now
        elif now - self._hidden_since >= REVEAL_AFTER_S:
            self._hidden_since = None
            log.warning("the approval prompt was hidden while a command waits: shown again")
            self.root.deiconify()
            self.root.lift()
            self.root.attributes("-topmost", True)


def main(argv: list[str] | None = None) -> int:
    """Run the prompt for the tray that started it (held commands on stdin, answers on stdout)."""
    if sys.stdin is None or sys.stdin.isatty():
        print("cowork-terminal:", _("the Cowork Terminal app opens this window when a command waits for you."),
              file=sys.stderr)  # fmt: skip
        return 2
    root = open_tk_root(_("cannot open the approval prompt: {error}"), "approval-prompt")
    if root is None:
        return 1
    prompt = ApprovalPrompt(root, TrayLine())
    root.withdraw()
    prompt.poll()
    root.mainloop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
