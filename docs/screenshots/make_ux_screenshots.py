"""Regenerates docs/screenshots/{welcome,approval-window,menu}.png from the app's own windows and model.

Run on Linux with Xvfb installed (`apt-get install -y xvfb`; Pillow, a dependency, takes the picture):
    python docs/screenshots/make_ux_screenshots.py [LANGUAGE [PICTURE ...]]
LANGUAGE is en (default), es, de or ru; another language's pictures are named with it (menu-de.png).
PICTURE picks some of welcome, approval, menu (default: all three).
- welcome.png: the Welcome window after "Connect Claude Desktop" and a real connection check (a fake
  home where Claude Desktop's config folder exists; the check starts our server as Claude would), then
  Claude Desktop itself connecting (an MCP client named claude-ai), so the live step shows "✓ connected".
- approval-window.png: the approval window for `rm -rf build dist` in a project folder.
- approval-danger.png (picture `danger`, not made by default): the same window for `rm -rf ~/`, the
  most dangerous class, which waits for the folder's path to be typed.
- menu.png: the tray menu as `app.ui.tray.menu.build_menu` describes it while a command waits, drawn as a
  Tk menu with its "Pause for…" submenu open (a tray's own menu cannot be captured on Xvfb).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
OUT = REPO / "docs" / "screenshots"
PROJECT = "/home/ana/projects/recipes-app"


def start_xvfb(size: str = "1100x800x24") -> subprocess.Popen[bytes]:
    reader, writer = os.pipe()
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(writer), "-screen", "0", size, "-nolisten", "tcp"],
        pass_fds=(writer,), stderr=subprocess.DEVNULL,
    )  # fmt: skip
    os.close(writer)
    data = b""
    while b"\n" not in data:
        chunk = os.read(reader, 16)
        if not chunk:
            raise SystemExit("Xvfb did not start")
        data += chunk
    os.environ["DISPLAY"] = ":" + data.decode().strip()
    return xvfb


def settle(root, seconds: float, until=lambda: True) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline or not until():
        root.update()
        time.sleep(0.02)


LANGUAGE = "en"


def capture(root, name: str, width: int | None = None, height: int | None = None) -> None:  # type: ignore[no-untyped-def]
    root.update()
    width = width or root.winfo_width()
    height = height or root.winfo_height()
    stem, suffix = name.rsplit(".", 1)
    target = OUT / (name if LANGUAGE == "en" else f"{stem}-{LANGUAGE}.{suffix}")
    from PIL import ImageGrab  # Pillow reads the X display itself: no ImageMagick needed

    ImageGrab.grab(bbox=(0, 0, width, height), xdisplay=os.environ["DISPLAY"]).save(target)
    print(f"saved {target}")


def welcome(tk) -> None:  # type: ignore[no-untyped-def]
    from app.core import data_folder
    from app.core.paths import AppPaths
    from app.ui.windows.welcome import WelcomeWindow

    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        (home / ".config" / "Claude").mkdir(parents=True)
        os.environ.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), COWORK_TERMINAL_HOME=str(home / "ct"))
        os.environ["PATH"] = "/usr/bin:/bin"  # no real `claude` on this machine shows up in the picture
        data_folder.ensure(AppPaths.from_environment())
        display = os.environ.pop("DISPLAY")  # the tray runs without an icon here: only its channel is needed
        tray = subprocess.Popen([sys.executable, "-m", "app", "tray"], env={**os.environ, "PYSTRAY_BACKEND": "dummy"},
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        os.environ["DISPLAY"] = display
        time.sleep(3)
        root = tk.Tk(className="cowork-terminal")
        root.geometry("+0+0")
        window = WelcomeWindow(
            root, check_command=[sys.executable, "-m", "app", "check"],
            restart_command=[sys.executable, "-m", "app", "restart-claude"], first_run=True,
        )  # fmt: skip
        settle(root, 0.5, lambda: window.apps is not None and window.real_input.armed)
        window.connect_buttons["claude-desktop"].invoke()
        settle(root, 0.5, lambda: window.busy == 0 and window.step_input.armed)
        window.check_buttons.winfo_children()[0].invoke()
        settle(root, 0.5, lambda: window.busy == 0)
        claude = claude_desktop_connects(home / "ct")  # Claude restarted: its own server connects
        settle(root, 0.5, lambda: "✓" in str(window.live.cget("text")))
        capture(root, "welcome.png")
        root.destroy()
        claude.terminate()
        claude.wait(10)
        tray.terminate()
        tray.wait(10)


CLAUDE_CONNECTS = """
import os, sys, anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import Implementation

async def main():
    params = StdioServerParameters(command=sys.executable, args=["-m", "app", "serve"], env=dict(os.environ))
    async with Client(params, client_info=Implementation(name="claude-ai", version="0.14.10"), mode="legacy"):
        await anyio.sleep(3600)

anyio.run(main)
"""


def claude_desktop_connects(app_home: Path) -> subprocess.Popen[bytes]:
    """Claude Desktop after its restart, as our server sees it: an MCP client named claude-ai."""
    env = {**os.environ, "COWORK_TERMINAL_HOME": str(app_home)}
    env.pop("DISPLAY", None)
    return subprocess.Popen([sys.executable, "-c", CLAUDE_CONNECTS], env=env, cwd=REPO)


def approval(tk, command: str = "rm -rf build dist", name: str = "approval-window.png") -> None:  # type: ignore[no-untyped-def]
    from app.ui.windows.approval_prompt import ApprovalPrompt
    from app.ui.windows.held_command import judged

    os.environ["HOME"] = "/home/ana"
    held = judged(7, command, PROJECT, client="Claude Code", expires_at=time.time() + 287, protected=())

    class Line:  # what the tray writes to the window's stdin
        def __init__(self) -> None:
            self.incoming = [{"op": "show", "hold": held.to_json()}]

        def send(self, message: dict) -> None:
            pass

        def drain(self) -> list:
            items, self.incoming = self.incoming, []
            return items

    root = tk.Tk(className="cowork-terminal")
    root.geometry("+0+0")
    prompt = ApprovalPrompt(root, Line())
    prompt.poll()
    settle(root, 1.3)
    capture(root, name)
    root.destroy()


def danger(tk) -> None:  # type: ignore[no-untyped-def]
    """The most dangerous class: deleting the whole home folder waits for its path, typed."""
    approval(tk, "rm -rf ~/", "approval-danger.png")


def tray_menu(tk) -> None:  # type: ignore[no-untyped-def]
    from app import __version__
    from app.core.claude.config import ABSENT, CURRENT
    from app.ui.tray import menu
    from app.ui.tray.tray_state import ClientView, RecentView, RuleView, ServerView, TrayState

    now = time.time()
    state = TrayState(
        clients=(ClientView("claude-desktop", "Claude Desktop", True, CURRENT),
                 ClientView("claude-code", "Claude Code", True, ABSENT)),
        servers=(ServerView("Claude Desktop", now - 3600, 12),),
        running=1, waiting=1, autostart=True,
        rules=(RuleView(1, "deleting build folders (build, dist, node_modules...) in ~/projects"),),
        recent=(RecentView(12, "● Running", now - 20, "npm test"),
                RecentView(11, "⊘ Denied by you", now - 300, "git push --force origin main"),
                RecentView(10, "✓ Finished", now - 420, "ls ~/Downloads")),
        version=__version__,
    )  # fmt: skip
    root = tk.Tk(className="cowork-terminal")
    root.geometry("700x600+0+0")  # a light desktop behind the menus, instead of the display's black
    root.configure(background="#f4f4f2")
    settle(root, 0.3)  # shown before the menus, so that they open on top of it

    kept: list = []

    def build(parent, entries):  # type: ignore[no-untyped-def]
        widget = tk.Menu(parent, tearoff=False)
        for entry in entries:
            if entry.separator:
                widget.add_separator()
            elif entry.submenu is not None:
                widget.add_cascade(label=entry.text, menu=build(widget, entry.submenu))
            elif entry.checked is not None:
                variable = tk.BooleanVar(value=entry.checked)
                state = "normal" if entry.enabled else "disabled"
                widget.add_checkbutton(label=entry.text, variable=variable, state=state)
                kept.append(variable)  # a Tk variable Python forgets loses its tick
            else:
                widget.add_command(label=entry.text, state="normal" if entry.enabled else "disabled")
        return widget

    entries = menu.build_menu(state)
    top = build(root, entries)
    top.post(0, 0)
    settle(root, 0.5)
    [pause_for] = [entry.text for entry in entries if entry.key == "pause-for"]
    connect_index = next(i for i in range(top.index("end") + 1) if top.type(i) == "cascade" and
                         top.entrycget(i, "label") == pause_for)  # fmt: skip
    top.activate(connect_index)
    top.tk.call(top._w, "postcascade", connect_index)
    settle(root, 0.5)
    submenu = root.nametowidget(top.entrycget(connect_index, "menu"))
    width = max(top.winfo_rootx() + top.winfo_width(), submenu.winfo_rootx() + submenu.winfo_width())
    capture(root, "menu.png", width, top.winfo_reqheight())  # the menus and nothing beside them
    root.destroy()


def main() -> int:
    global LANGUAGE
    from app.core import i18n

    LANGUAGE = sys.argv[1] if len(sys.argv) > 1 else "en"
    i18n.use_language(LANGUAGE)
    os.environ["LANGUAGE"] = LANGUAGE  # the tray and the check the Welcome window starts speak it too
    wanted = sys.argv[2:] or ["approval", "menu", "welcome"]
    xvfb = start_xvfb()
    try:
        import tkinter as tk

        pictures = {"approval": approval, "menu": tray_menu, "welcome": welcome, "danger": danger}
        for name in wanted:
            pictures[name](tk)
    finally:
        xvfb.terminate()
        xvfb.wait(5)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
