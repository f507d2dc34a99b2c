"""What differs per platform and pystray backend: one small function per decision, plus notifications.

Pure functions where possible (platform and backend in, argv or words out), so every platform's
choice runs in tests on Linux. The tray (`tray.py`) is the only user.
"""

from __future__ import annotations

import contextlib
import glob
import html
import importlib.util
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from app.core.execution import bundle_runtime
from app.core.execution.bash_resolver import BashNotFoundError
from app.core.i18n import _
from app.core.system_programs import answer_uname_now, system_program
from app.core.visible_text import visible
from app.ui.tray.menu import APP_TITLE
from app.ui.tray.notice_actions import ActionNotices, action_argv, notify_send_help, supports_actions

log = logging.getLogger(__name__)

# Backends with a native notification; others fall back to `notify-send` where it exists.
NATIVE_NOTIFY_BACKENDS = ("win32", "darwin", "gtk", "appindicator")
NOTICES_KEPT = 50


def load_pystray(backend: str | None = None) -> ModuleType:
    """Import pystray with `backend` (else its own choice: appindicator, gtk, then xorg on Linux).

    Raises whatever the backend raises without a display (Xlib's DisplayNameError, ImportError).
    """
    if backend:
        os.environ["PYSTRAY_BACKEND"] = backend
    answer_uname_now()  # python-xlib asks it as it connects
    import pystray

    return pystray


def backend_of(pystray: ModuleType) -> str:
    """The backend pystray chose: "xorg", "gtk", "appindicator", "win32", "darwin" or "dummy"."""
    name = pystray.Icon.__module__.rsplit(".", 1)[-1].lstrip("_")
    return "dummy" if name == "base" else name  # the dummy backend re-exports the abstract base Icon


# Where Linux distributions put the system Python's GTK bindings (Debian/Ubuntu, Fedora/openSUSE, Arch).
SYSTEM_GI_PATTERNS = (
    "/usr/lib/python3/dist-packages/gi",
    "/usr/lib64/python3*/site-packages/gi",
    "/usr/lib/python3*/site-packages/gi",
)


def system_has_gi(matches: Callable[[str], list[str]] = glob.glob) -> bool:
    """Whether the system's own Python has the GTK bindings (`gi`) that the tray's menu needs."""
    return any(matches(pattern) for pattern in SYSTEM_GI_PATTERNS)


def missing_tray_support(
    platform: str, backend: str, *, executable: str = "", has_gi: bool = True, system_gi: bool = False
) -> str | None:
    """What this desktop lacks for a full tray icon, in words for the user; None when nothing is.

    When this Python cannot import `gi` but the system's can, the packages are there and the cause
    is the interpreter (pyenv, conda, Homebrew, uv): installing AppIndicator again would change nothing.
    """
    if platform.startswith("linux") and backend == "xorg" and not has_gi and system_gi:
        return _(
            "Cowork Terminal is running, but its tray icon has no menu: the Python it runs with "
            "({python}) cannot use this computer's GTK libraries, which the menu needs. Pythons from "
            "pyenv, conda, Homebrew or uv cannot. Make the virtual environment with the system's Python "
            "instead (/usr/bin/python3 -m venv --system-site-packages .venv), or install the .deb. "
            "Meanwhile the activity log window has the pause switch and the answers to waiting commands."
        ).format(python=executable)
    if platform.startswith("linux") and backend == "xorg":
        return _(
            "Cowork Terminal is running, but its tray icon has no menu on this desktop: AppIndicator "
            "support is missing. Install it (Debian/Ubuntu: gir1.2-ayatanaappindicator3-0.1; Fedora: "
            "libayatana-appindicator-gtk3; GNOME also needs the AppIndicator extension), then start "
            "Cowork Terminal again. Meanwhile the activity log window has the pause switch and the "
            "answers to waiting commands, and the Welcome window connects Claude."
        )
    return None


def tk_available() -> bool:
    """Whether this Python has Tk (the windows need it), found without importing it into the tray."""
    try:
        return importlib.util.find_spec("_tkinter") is not None and importlib.util.find_spec("tkinter") is not None
    except (ImportError, ValueError):
        return False


def missing_tk_message(platform: str, has_menu: bool) -> str:
    """What to install when this Python has no Tk, said once; and where to answer meanwhile."""
    if platform == "darwin":
        install = _("Install Python's Tk support (Homebrew: brew install python-tk), or use the app's installer")
    elif platform == "win32":
        install = _('Reinstall Python with the "tcl/tk and IDLE" option, or use the app\'s installer')
    else:
        install = _(
            "Install Python's Tk support (Debian/Ubuntu: sudo apt install python3-tk; Fedora: sudo dnf install "
            "python3-tkinter; Arch: sudo pacman -S tk)"
        )
    where = (
        _("Meanwhile, deny waiting commands from this icon's menu (the line under the status).")
        if has_menu
        else _("Meanwhile, commands that need your answer are denied when they time out.")
    )
    said = _("This Python has no Tk, so the activity log and approval windows cannot open.")
    return _("{problem} {install}, then start Cowork Terminal again. {meanwhile}").format(
        problem=said, install=install, meanwhile=where
    )


def connect_hint(has_menu: bool, windows: bool) -> str:
    """The next step when no Claude app is connected, naming only controls that exist. (With
    windows and no menu the tray opens the Welcome window instead of saying this.)"""
    if windows and has_menu:
        return _("No Claude app is connected yet. Open Getting started… in this icon's menu.")
    if has_menu:
        return _(
            "No Claude app is connected yet. Open Connect to Claude in this icon's menu and click your Claude app."
        )
    return _("No Claude app is connected yet. Once this app's windows can open (they need Tk), Welcome connects it.")


def looser_hint(has_menu: bool) -> str:
    """Where to set approvals back when they were loosened while no tray watched."""
    if has_menu:
        return _("Change it in this icon's menu (Ask before running) if you did not choose this.")
    return _(
        "If you did not choose this: Ask before running is in this icon's menu, which needs AppIndicator "
        "support on this desktop."
    )


def no_icon_message(platform: str, environ: Mapping[str, str], error: BaseException) -> str:
    """Why no tray icon can be shown, and what to do instead (pystray could not even load)."""
    graphical = environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY")
    if platform.startswith("linux") and not graphical:
        reason = _("no graphical session was found (DISPLAY is not set)")
    else:
        reason = _("the tray library failed to load ({error})").format(error=repr(error))
    return _(
        "cannot show the tray icon: {reason}. Start Cowork Terminal from your desktop session; for "
        "command-line use only, `cowork-terminal connect --headless` works without it."
    ).format(reason=reason)


FILE_MANAGER = "org.freedesktop.FileManager1"
SHOW_FOLDER_TIMEOUT_S = 10.0  # the file manager may be started for it (D-Bus activation)


def open_folder_argv(platform: str, folder: Path, find: Callable[[str], str | None] = system_program) -> list[str]:
    """The platform's "show this folder" command, never found through PATH (a command may write a
    folder early on it: core/system_programs.py). On Linux the desktop's file manager is asked
    over the session bus, as file managers offer: xdg-open would choose the program by file
    associations in the home folder, which a command may write (~/.config/mimeapps.list)."""
    if platform == "darwin":
        return ["/usr/bin/open", str(folder)]
    if platform == "win32":
        return ["explorer.exe", str(folder)]
    return [
        find("gdbus") or "/usr/bin/gdbus", "call", "--session", "--dest", FILE_MANAGER,
        "--object-path", "/org/freedesktop/FileManager1", "--method", f"{FILE_MANAGER}.ShowFolders",
        f"['{folder.as_uri()}']", "",
    ]  # fmt: skip


def bash_problem(error: BashNotFoundError, platform: str) -> str:
    """The status line for a missing bash: on Windows, Git for Windows comes before anything else."""
    if platform == "win32":
        return _("Git Bash is missing: install Git for Windows")
    return _("bash is missing: commands cannot run")


def main_thread_marshal(backend: str) -> Callable[[Callable[[], None]], None] | None:
    """How to run a call on the main thread, for backends that do not do it themselves (macOS)."""
    if backend == "darwin":
        from PyObjCTools import AppHelper  # ships with pyobjc, which pystray's darwin backend needs

        return AppHelper.callAfter
    return None


def spawn(argv: Sequence[str], *, stderr: Any = subprocess.DEVNULL) -> subprocess.Popen[bytes]:
    """The one place the tray starts a program: no stdin, no console window, never our stdout, and
    none of the variables a frozen app's runtime set for itself."""
    return subprocess.Popen(
        list(argv),
        env=bundle_runtime.child_environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
        creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),
    )


def run_captured(argv: Sequence[str], timeout_s: float) -> tuple[int, str, str]:
    """Run a helper program to its end: (exit code, stdout, stderr). No stdin, no console window.

    Past `timeout_s` it ends the helper with everything it started (its own process group on POSIX)
    and raises subprocess.TimeoutExpired.
    """
    process = subprocess.Popen(
        list(argv),
        env=bundle_runtime.child_environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        errors="replace",
        creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),
        start_new_session=os.name == "posix",
    )
    try:
        out, err = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        if os.name == "posix":
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
        process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()  # never wait for output a straggler in another group might still hold
        raise
    return process.returncode, out, err


class UiDispatcher:
    """Runs icon updates where the backend needs them, and keeps a failed update from killing a thread."""

    def __init__(self, marshal: Callable[[Callable[[], None]], None] | None = None) -> None:
        self.marshal = marshal

    def __call__(self, update: Callable[[], None]) -> None:
        def guarded() -> None:
            try:
                update()
            except Exception:  # the top of a UI callback: log it, keep the tray alive
                log.exception("updating the tray icon failed")

        if self.marshal is None:
            guarded()
        else:
            self.marshal(guarded)


# Windows notifications: NOTIFYICONDATAW holds the title in WCHAR[64] and the text in WCHAR[256];
# pystray raises ValueError for longer strings (found by the wine lane: "Git Bash is missing" was lost).
WINDOWS_NOTIFY_TITLE_MAX = 63
WINDOWS_NOTIFY_TEXT_MAX = 255


def fit_notification(platform: str, title: str, message: str) -> tuple[str, str]:
    """Title and text as the platform's notification can carry them: cut on Windows (the whole text is
    in the log), the text escaped on Linux, where libnotify's servers read it as markup (notice_actions)."""
    if platform.startswith("linux"):
        return title, html.escape(message, quote=False)
    if platform != "win32":
        return title, message

    def cut(text: str, limit: int) -> str:
        return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"

    return cut(title, WINDOWS_NOTIFY_TITLE_MAX), cut(message, WINDOWS_NOTIFY_TEXT_MAX)


class Notifier:
    """Notifications through the backend where it has them, `notify-send` on other Linux desktops,
    else only the app log: a missing notification service must never break the tray."""

    def __init__(self, icon: Any, backend: str, dispatch: UiDispatcher, *, platform: str = sys.platform) -> None:
        self._icon = icon
        self._dispatch = dispatch
        self._platform = platform
        self.native = backend in NATIVE_NOTIFY_BACKENDS and bool(getattr(icon, "HAS_NOTIFICATION", False))
        self.fallback = None if self.native or not platform.startswith("linux") else system_program("notify-send")
        self.history: list[tuple[str, str]] = []
        self._actions: ActionNotices | None | bool = False  # False: not looked for yet

    def notify(
        self,
        title: str,
        message: str,
        *,
        key: str = "",
        actions: Mapping[str, str] | None = None,
        on_action: Callable[[str], None] | None = None,
    ) -> None:
        """Tell the user; with `actions` (see notice_actions: never a loosening), buttons where the
        desktop has them, and `on_action` gets the one pressed."""
        title, message = visible(title), visible(message)  # a command or folder named in it shows whole
        log.info("notice: %s: %s", title, message)
        self.history = [*self.history[-(NOTICES_KEPT - 1) :], (title, message)]
        buttons = self._action_notices() if actions and on_action is not None else None
        if buttons is not None and actions and on_action is not None:
            try:
                buttons.show(key, title, message, actions, on_action)
                return
            except OSError as exc:
                log.warning("notify-send with buttons failed: %s", exc)
        if self.native:
            short_title, short_message = fit_notification(self._platform, title, message)
            self._dispatch(lambda: self._icon.notify(short_message, short_title))
        elif self.fallback:
            try:
                spawn(action_argv(self.fallback, APP_TITLE, title, message))
            except OSError as exc:
                log.warning("notify-send failed: %s", exc)

    def _action_notices(self) -> ActionNotices | None:
        """notify-send with buttons, looked for once (Linux only, also beside native notices)."""
        if self._actions is False:
            found = system_program("notify-send") if self._platform.startswith("linux") else None
            usable = found is not None and supports_actions(self._platform, notify_send_help(found))
            self._actions = ActionNotices(found, APP_TITLE) if usable and found else None
        return self._actions if isinstance(self._actions, ActionNotices) else None

    def withdraw(self, keep: set[str] | None = None) -> None:
        """Take back the buttons of notifications whose key is not in `keep` (all when None)."""
        if isinstance(self._actions, ActionNotices):
            self._actions.withdraw(keep)
