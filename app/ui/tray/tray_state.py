"""What the tray knows and shows, as plain values: each live server, Claude app, held command,
long job, rule and recent command, and `TrayState`, all of them together. The monitor composes
one; `menu` turns it into items; tests build them directly.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.claude.config import ABSENT, ALTERED, CHANGED, CURRENT, FOREIGN, INVALID, STALE, UNKNOWN
from app.core.execution.output import OutputBudget
from app.core.i18n import N_, _
from app.core.i18n.formats import shorten_command
from app.core.policy.approval import ApprovalMode
from app.core.visible_text import visible

# A command running this long has outlived the call of the most impatient Claude app (Cowork's 45 s,
# issue 22): the menu lists it, so that it can be stopped without opening the activity log.
JOB_LINE_AFTER_S = 45.0

# Our entry's state in a client's config (core/claude/config.py) -> the app's state as the menu says it.
_CLIENT_STATE = {
    CURRENT: N_("connected"),
    ABSENT: N_("not connected · click to connect"),
    CHANGED: N_("connected, its entry needs an update"),
    ALTERED: N_("not connected: settings were added to its entry"),
    STALE: N_("an older install's entry"),
    FOREIGN: N_("another program's entry"),
    INVALID: N_("its config file has an error"),
    UNKNOWN: N_("not installed"),
}
_HAS_ENTRY = (CURRENT, CHANGED, ALTERED, STALE, FOREIGN)
# An entry under our name that is not the one this app writes: what the first item of its submenu does.
FIX_TEXT = {
    CHANGED: N_("Update its entry"),
    ALTERED: N_("Repair its entry"),
    STALE: N_("Replace it with this install"),
    FOREIGN: N_("Replace it with this app"),
}


def client_state_text(state: str, installed: bool) -> str:
    """What the menu and the Welcome window say of one Claude app."""
    if state == ABSENT and not installed:
        return _("not found · click to add the entry anyway")
    return _(_CLIENT_STATE[state]) if state in _CLIENT_STATE else state


@dataclass(frozen=True)
class ServerView:
    """One live server: which client started it, since when, how many commands it ran, and whether it
    is linked to this app (it then obeys the app, even if it was started `--headless`)."""

    client_label: str
    started_at: float
    command_count: int
    headless: bool = False
    linked: bool = True


@dataclass(frozen=True)
class ClientView:
    """One Claude client and the state of our entry in its config (a `claude.config` state)."""

    client_id: str
    name: str
    installed: bool
    state: str
    problem: str = ""

    @property
    def connected(self) -> bool:
        return self.state == CURRENT

    @property
    def has_entry(self) -> bool:
        return self.state in _HAS_ENTRY


@dataclass(frozen=True)
class CrashView:
    client_label: str
    at: float
    interrupted: int = 0


@dataclass(frozen=True)
class HeldView:
    """A command waiting for the user, as the menu lists it when no approval window can open."""

    id: int
    command: str
    client: str


@dataclass(frozen=True)
class JobView:
    """A command that has run longer than a Claude call lasts, as the menu lists it."""

    id: int
    command: str
    client: str
    started_at: float


def long_jobs(jobs: tuple[JobView, ...], now: float) -> tuple[JobView, ...]:
    """The commands the menu lists: those running longer than JOB_LINE_AFTER_S, oldest first."""
    return tuple(sorted((j for j in jobs if now - j.started_at >= JOB_LINE_AFTER_S), key=lambda j: j.started_at))


def ended_jobs(before: tuple[JobView, ...], after: tuple[JobView, ...]) -> tuple[JobView, ...]:
    """The long commands the menu listed and no longer lists: they ended (a notice says so)."""
    still = {job.id for job in after}
    return tuple(job for job in before if job.id not in still)


def job_notice(job: JobView, outcome: str) -> tuple[str, str]:
    """The notice for a long command that ended: it names the agent, so the user knows whose it was."""
    title = _("{client}'s long command ended").format(client=visible(job.client))
    return title, f"{short_command(job.command, 120)}\n{outcome}"


def short_command(command: str, limit: int) -> str:
    """A command on one line for the menu or a notice, at most `limit` characters (its end kept), each
    character that would not show written out: a right-to-left mark or an escape must not disguise it."""
    return shorten_command(" ".join(visible(command).split()), limit)


@dataclass(frozen=True)
class RecentView:
    """One recent command, as the Recent activity submenu shows it."""

    id: int
    status: str  # in the user's words: "✓ Finished", "⊘ Denied by you"
    at: float
    command: str


@dataclass(frozen=True)
class RuleView:
    """One of the user's rules (core/policy/rules.py), listed so it can be removed."""

    id: int
    description: str


@dataclass(frozen=True)
class TrayState:
    """Everything the icon, its tooltip and its menu show."""

    paused: bool = False
    servers: tuple[ServerView, ...] = ()
    running: int = 0
    waiting: int = 0
    clients: tuple[ClientView, ...] | None = None  # None until the first look for Claude apps ends
    crash: CrashView | None = None  # a server crash the user has not looked at yet
    autostart: bool | None = False  # None when the setting cannot be read
    problem: str | None = None  # something that stops every command (no bash): one short line
    busy: str | None = None  # an action in progress, e.g. "Checking Claude Desktop..."
    approval_mode: ApprovalMode = ApprovalMode.DESTRUCTIVE
    container: bool = True  # commands run in the OS container (off: the user's click)
    language: str | None = None  # picked in the Language submenu; None: the OS's language
    output_budget: OutputBudget = OutputBudget()
    held: tuple[HeldView, ...] = ()  # listed in the menu only when `windows` is False
    jobs: tuple[JobView, ...] = ()  # long-running commands (long_jobs), listed under Quit with Stop
    rules: tuple[RuleView, ...] = ()
    windows: bool = True  # False when Tk is missing: no approval or Welcome window can open
    confirm_disconnect: str | None = None  # without Tk, the app whose "Disconnect…" now asks in the menu
    paused_until: float | None = None  # a timed pause: when the tray itself resumes
    recent: tuple[RecentView, ...] = ()  # the newest commands, newest first
    version: str = ""

    @property
    def any_connected(self) -> bool:
        return any(c.has_entry for c in self.clients or ())

    @property
    def first_run(self) -> bool:
        """No Claude app has our entry and none is talking to us: the user still has to connect."""
        return self.clients is not None and not self.any_connected and not self.servers
