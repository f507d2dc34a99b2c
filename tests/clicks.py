"""The user's clicks in the tray's own windows, as a person's keyboard makes them: xdotool under the
`display` fixture's Xvfb (XTEST events, not events sent to a window), after the buttons arm."""

from __future__ import annotations

import os
import re
import subprocess
import time

from tests.stdio_client import FIRST_CALL_DEADLINE_S, STOP_DEADLINE_S

ARMED_S = 1.8  # the windows' buttons arm 1 s after they show a question (a busy window's timer runs late)
PROMPT_TITLE = "approve a command"
CONFIRM_TITLE = "Cowork Terminal: confirm"


def xdotool(display: str, *args: str, timeout_s: float = STOP_DEADLINE_S) -> str:
    env = {**os.environ, "DISPLAY": display}
    return subprocess.run(
        ["xdotool", *args], env=env, capture_output=True, text=True, check=True, timeout=timeout_s
    ).stdout.strip()


def shown_window(display: str, name: str) -> str:
    """The first mapped window whose title contains `name` (waits until one shows). xdotool exits 1
    when a window it looks at is destroyed under it (a question just answered, still closing while
    the next one opens, slow on a loaded machine): it is asked again until the deadline, which allows
    for a fresh tray's first call (FIRST_CALL_DEADLINE_S)."""
    deadline = time.monotonic() + FIRST_CALL_DEADLINE_S
    while True:
        left = max(0.1, deadline - time.monotonic())
        try:
            found = xdotool(display, "search", "--sync", "--onlyvisible", "--name", name, timeout_s=left)
            return found.splitlines()[0]
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def on_screen(display: str, name: str) -> bool:
    """Whether a window whose title contains `name` is shown now (xdotool exits 1 when none is)."""
    try:
        return bool(xdotool(display, "search", "--onlyvisible", "--name", name))
    except subprocess.CalledProcessError:
        return False


def press(display: str, window: str, *keys: str) -> None:
    """Keys as from the keyboard: focus the window, then XTEST key events."""
    xdotool(display, "windowfocus", "--sync", window)
    xdotool(display, "key", "--delay", "50", *keys)


def click_yes(display: str, name: str) -> None:
    """Answer yes (Allow, Resume, ...) in the window titled `name`: from the focused No/Deny, Tab to
    the yes button and press it, once the buttons are armed."""
    window = shown_window(display, name)
    time.sleep(ARMED_S)
    press(display, window, "Tab", "space")


Box = tuple[int, int, int, int]  # x, y, width, height on the screen


def window_boxes(display: str, top: str) -> list[tuple[int, str, Box]]:
    """Every X window inside `top` (a Tk window's widgets each have one): depth, id and box."""
    env = {**os.environ, "DISPLAY": display}
    tree = subprocess.run(["xwininfo", "-tree", "-id", top], env=env, capture_output=True, text=True, check=True)
    found = []
    for line in tree.stdout.splitlines():
        match = re.match(r"^(\s*)(0x[0-9a-f]+) .*?(\d+)x(\d+)[+-]-?\d+[+-]-?\d+\s+\+(-?\d+)\+(-?\d+)\s*$", line)
        if match:
            w, h, x, y = (int(match.group(i)) for i in (3, 4, 5, 6))
            found.append((len(match.group(1)), match.group(2), (x, y, w, h)))
    return found


def deepest_at(boxes: list[tuple[int, str, Box]], x: int, y: int) -> tuple[str, Box]:
    """The innermost window holding the screen point (x, y): the widget a click there lands on."""
    best: tuple[int, str, Box] | None = None
    for depth, wid, (bx, by, w, h) in boxes:
        if bx <= x < bx + w and by <= y < by + h and (best is None or depth > best[0]):
            best = (depth, wid, (bx, by, w, h))
    assert best is not None, f"no window at {x},{y}"
    return best[1], best[2]


def buttons_along(boxes: list[tuple[int, str, Box]], y: int, x_from: int, x_to: int) -> list[tuple[str, Box]]:
    """The button-sized widgets a horizontal line at screen height y crosses, from x_from to x_to."""
    seen: list[tuple[str, Box]] = []
    step = 1 if x_to >= x_from else -1
    for x in range(x_from, x_to, 3 * step):
        wid, box = deepest_at(boxes, x, y)
        if 30 <= box[2] <= 400 and box[3] <= 60 and all(wid != s[0] for s in seen):
            seen.append((wid, box))

    def holds_another(box: Box) -> bool:  # a frame around buttons, met in a gap between them
        return any(o != box and box[0] <= o[0] and o[0] + o[2] <= box[0] + box[2] for _w, o in seen)

    return [(wid, box) for wid, box in seen if not holds_another(box)]


def click_at(display: str, box: Box) -> None:
    """A person's click (XTEST) in the middle of a window's box on the screen."""
    x, y, w, h = box
    xdotool(display, "mousemove", "--sync", str(x + w // 2), str(y + h // 2))
    xdotool(display, "click", "1")


def sent_click(display: str, window: str) -> None:
    """A click another program sends to one window (XSendEvent): what `xdotool click --window` does."""
    xdotool(display, "click", "--window", str(int(window, 16)), "1")
