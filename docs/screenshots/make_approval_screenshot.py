"""Regenerates docs/screenshots/approval-window-LANGUAGE.png: the approval prompt with a held command.

Run on Linux with Xvfb installed (`apt-get install -y xvfb`; Pillow, a dependency, takes the picture):
    python docs/screenshots/make_approval_screenshot.py [LANGUAGE]
LANGUAGE is en (default), es, de or ru. It gives the prompt two held commands judged as the tray
judges them (what they do, in that language), opens it on a private Xvfb display and saves the window.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from app.core import i18n  # noqa: E402

SCREEN = (1024, 768)
HELD = ("rm -rf ~/projects/recipes-app/node_modules ~/projects/recipes-app/dist", "git push --force origin main")
FOLDER = "/home/ana/projects/recipes-app"


def start_xvfb() -> tuple[subprocess.Popen, str]:
    reader, writer = os.pipe()
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(writer), "-screen", "0", f"{SCREEN[0]}x{SCREEN[1]}x24", "-nolisten", "tcp"],
        pass_fds=(writer,), stderr=subprocess.DEVNULL,
    )  # fmt: skip
    os.close(writer)
    data = b""
    while b"\n" not in data:  # Xvfb writes the number, then the newline
        chunk = os.read(reader, 16)
        if not chunk:
            raise SystemExit("Xvfb did not start")
        data += chunk
    return xvfb, ":" + data.decode().strip()


def main() -> int:
    language = sys.argv[1] if len(sys.argv) > 1 else "en"
    i18n.use_language(language)
    output = REPO / "docs" / "screenshots" / f"approval-window-{language}.png"
    xvfb, display = start_xvfb()
    os.environ["DISPLAY"] = display
    try:
        import tkinter as tk

        from app.ui.windows.approval_prompt import ApprovalPrompt
        from app.ui.windows.held_command import judged
        from app.ui.windows.link import TrayLine

        os.environ["HOME"] = "/home/ana"  # `~` in the commands, as on Ana's computer

        root = tk.Tk(className="cowork-terminal")
        root.geometry("+0+0")
        reader, writer = os.pipe()  # the tray's end of the prompt's stdin: open and silent
        prompt = ApprovalPrompt(root, TrayLine(stdin=os.fdopen(reader, "rb"), stdout=io.BytesIO()))
        for number, command in enumerate(HELD, 1):
            held = judged(number, command, FOLDER, client="Claude Desktop", expires_at=time.time() + 272, protected=())
            prompt.take({"op": "show", "hold": held.to_json()})
        prompt.refresh()
        deadline = time.monotonic() + 1.5  # past the arming delay: the buttons as the user clicks them
        while time.monotonic() < deadline:
            root.update()
            time.sleep(0.02)
        from PIL import ImageGrab  # Pillow reads the X display itself: no ImageMagick needed

        box = (root.winfo_rootx(), root.winfo_rooty(), root.winfo_rootx() + root.winfo_width(),
               root.winfo_rooty() + root.winfo_height())  # fmt: skip
        ImageGrab.grab(bbox=box, xdisplay=display).save(output)
        root.destroy()
        os.close(writer)
    finally:
        xvfb.terminate()
        xvfb.wait(5)
    print(f"saved {output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
