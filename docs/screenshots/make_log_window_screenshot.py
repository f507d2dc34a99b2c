"""Regenerates docs/screenshots/log-window.png: the activity log with a few realistic commands.

Run on Linux with Xvfb installed (`apt-get install -y xvfb`; Pillow, a dependency, takes the picture):
    python docs/screenshots/make_log_window_screenshot.py [LANGUAGE]
LANGUAGE (es, de, ru) shows the window in that language and saves log-window-LANGUAGE.png.
It fills a throw-away journal through the Journal's own methods, holds the locks a live server
would (so the running command stays running), opens the window on a private Xvfb display and
saves that display.
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
os.environ["HOME"] = "/home/ana"  # a typical user's home in the picture, whoever renders it

from app.core import i18n, liveness  # noqa: E402
from app.core.journal import commands_table, side_tables  # noqa: E402
from app.core.journal.store import Journal, Outcome, Status  # noqa: E402
from app.core.messages import PAUSED_MESSAGE, USER_STOP_REASON  # noqa: E402
from app.core.paths import HOME_ENV, AppPaths  # noqa: E402

OUTPUT = REPO / "docs" / "screenshots" / "log-window.png"
SIZE = (1180, 760)
PROJECT = "/home/ana/projects/recipes-app"


class Clock:
    """Lets the journal stamp rows as if they were written over the last few minutes."""

    def __init__(self) -> None:
        self.now = time.time()

    def time(self) -> float:
        return self.now


def fill(journal: Journal, holders: list) -> int:
    clock = Clock()
    for stamping in (commands_table, side_tables):  # the modules that stamp rows and servers
        stamping.time = clock  # type: ignore[assignment]  # stamps only; restored below
    start = time.time() - 9 * 60
    clock.now = start - 60  # the agents connected a minute before their first command
    desktop = journal.register_server(4242, headless=False, lock_key="screenshot-desktop")
    code = journal.register_server(5151, headless=False, lock_key="screenshot-code")
    for server_id, key, name, version in (
        (desktop, "screenshot-desktop", "claude-ai", "0.14.2"),
        (code, "screenshot-code", "claude-code", "2.0.14"),
    ):
        journal.set_server_client(server_id, name, version)
        holders.append(liveness.try_hold(journal.paths.server_lock(key)))

    def run(offset_s, command, *, server=desktop, client=("claude-ai", "0.14.2"), cwd=PROJECT, **outcome):
        clock.now = start + offset_s
        cid = journal.begin_command(
            command=command,
            cwd=cwd,
            env_keys=outcome.pop("env_keys", []),
            timeout_ms=30_000,
            server_id=server,
            server_pid=4242 if server == desktop else 5151,
            client_name=client[0],
            client_version=client[1],
            status=outcome.pop("initial", Status.RUNNING),
            reason=outcome.pop("initial_reason", None),
        )
        if outcome:
            clock.now += outcome.get("duration_ms", 0) / 1000
            journal.finish_command(cid, Outcome(**outcome))
        return cid

    code_client = {"server": code, "client": ("claude-code", "2.0.14")}
    run(
        0,
        "git status --short",
        status=Status.FINISHED,
        exit_code=0,
        duration_ms=41,
        stdout=b" M src/App.tsx\n?? src/components/RecipeCard.tsx\n",
        stdout_bytes=48,
    )
    run(
        20,
        "npm install",
        status=Status.FINISHED,
        exit_code=0,
        duration_ms=12_420,
        stdout=b"added 312 packages, and audited 313 packages in 12s\n\nfound 0 vulnerabilities\n",
        stdout_bytes=79,
    )
    failed = run(
        65,
        "npm test -- --watchAll=false",
        env_keys=["CI"],
        status=Status.FAILED,
        exit_code=1,
        duration_ms=8_310,
        stdout=b"> recipes-app@0.3.0 test\n> react-scripts test --watchAll=false\n\n"
        b"PASS src/utils/units.test.ts\nFAIL src/components/RecipeCard.test.tsx\n",
        stderr=b"  \xe2\x97\x8f RecipeCard \xe2\x80\xba shows the cooking time\n\n"
        b"    expect(received).toHaveTextContent(expected)\n\n"
        b"    Expected element to have text content:\n      25 min\n    Received:\n      25\n\n"
        b"      at Object.<anonymous> (src/components/RecipeCard.test.tsx:18:37)\n\n"
        b"Tests:       1 failed, 23 passed, 24 total\n",
        stdout_bytes=151,
        stderr_bytes=262,
    )
    run(
        130,
        "curl -sS https://registry.npmjs.org/react | head -c 200",
        status=Status.TIMED_OUT,
        timed_out=True,
        reason="timed out",
        duration_ms=30_000,
        **code_client,
    )
    run(
        170,
        "python3 -m http.server 8000",
        cwd=PROJECT + "/build",
        status=Status.KILLED,
        reason=USER_STOP_REASON,
        duration_ms=94_200,
        stderr=b"Serving HTTP on 0.0.0.0 port 8000 ...\n",
        stderr_bytes=39,
        **code_client,
    )
    run(300, "rm -rf node_modules/.cache", initial=Status.REFUSED, initial_reason=PAUSED_MESSAGE)
    run(
        395,
        "git diff --stat",
        status=Status.FINISHED,
        exit_code=0,
        duration_ms=37,
        stdout=b" src/components/RecipeCard.tsx | 4 ++--\n 1 file changed, 2 insertions(+), 2 deletions(-)\n",
        **code_client,
    )
    run(430, "npx tsc --noEmit", status=Status.FINISHED, exit_code=0, duration_ms=4_870, **code_client)
    clock.now = time.time() - 14
    run(9 * 60 - 14, "npm run build && cp -r build ~/Sites/recipes", **code_client)
    for stamping in (commands_table, side_tables):
        stamping.time = time  # type: ignore[assignment]
    return failed


def main() -> int:
    global OUTPUT
    language = sys.argv[1] if len(sys.argv) > 1 else "en"
    i18n.use_language(language)
    if language != "en":
        OUTPUT = OUTPUT.with_name(f"log-window-{language}.png")
    with tempfile.TemporaryDirectory() as folder:
        os.environ[HOME_ENV] = folder
        holders: list = []
        with Journal.open(AppPaths.from_environment()) as journal:
            failed = fill(journal, holders)
        display_reader, display_writer = os.pipe()
        xvfb = subprocess.Popen(
            ["Xvfb", "-displayfd", str(display_writer), "-screen", "0", f"{SIZE[0]}x{SIZE[1]}x24", "-nolisten", "tcp"],
            pass_fds=(display_writer,),
            stderr=subprocess.DEVNULL,
        )
        os.close(display_writer)
        data = b""
        while b"\n" not in data:  # Xvfb writes the number, then the newline; it dies if we close early
            chunk = os.read(display_reader, 16)
            if not chunk:
                raise SystemExit("Xvfb did not start")
            data += chunk
        display = ":" + data.decode().strip()
        os.environ["DISPLAY"] = display
        try:
            import tkinter as tk

            from app.ui.windows.log_window import LogWindow

            root = tk.Tk(className="cowork-terminal")
            root.geometry(f"{SIZE[0]}x{SIZE[1]}+0+0")
            window = LogWindow(root, Journal.open(AppPaths.from_environment()))
            window.select(failed)
            root.update()
            window.panes.sashpos(0, 280)  # the nine rows fit: give the rest to the details and their output
            deadline = time.monotonic() + 2
            while time.monotonic() < deadline:
                root.update()
                time.sleep(0.02)
            from PIL import ImageGrab  # Pillow reads the X display itself: no ImageMagick needed

            ImageGrab.grab(bbox=(0, 0, *SIZE), xdisplay=display).save(OUTPUT)
            window.close()
        finally:
            xvfb.terminate()
            xvfb.wait(5)
            for holder in holders:
                if holder is not None:
                    holder.release()
    print(f"saved {OUTPUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
