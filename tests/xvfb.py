"""A private Xvfb display, for the tests' windows and trays and for the benches.

Each start names its own display number (from this process's pid, then the next ones) rather than
letting Xvfb scan for a free one: several workers starting Xvfb at once then never reach for the
same number, and one that is taken fails at once and the next is tried. Xvfb's own words go to a
log file, so a display that does not come up says why (CI once saw three of four workers' Xvfb
give no display within 10 s, with nothing to read).
"""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import time
from pathlib import Path

SCREEN = "1280x800x24"
APT_HINT = "apt-get install -y xvfb xauth x11-utils xdotool imagemagick"
READY_TIMEOUT_S = 20.0  # one start; about 0.1-1 s on an idle machine
ATTEMPTS = 5
FIRST_NUMBER = 100  # below are the numbers people's own X servers take
NUMBERS = 3000


class XvfbError(RuntimeError):
    """Xvfb is missing or gave no display; the message says what each try saw."""


def start(log: Path, screen: str = SCREEN) -> tuple[subprocess.Popen[bytes], str]:
    """Start Xvfb on a free display; returns the process and its display name (":123")."""
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        raise XvfbError(f"Xvfb is not installed, so windows and the tray cannot be tested. Install it: {APT_HINT}")
    tries: list[str] = []
    first = os.getpid() % NUMBERS
    for attempt in range(ATTEMPTS):
        number = FIRST_NUMBER + (first + attempt) % NUMBERS
        process, seen = _start_one(xvfb, number, screen, log)
        if process is not None:
            return process, f":{number}"
        tries.append(f":{number} {seen}")
    raise XvfbError(f"Xvfb gave no display in {ATTEMPTS} tries (its output: {log}): " + "; ".join(tries))


def _start_one(xvfb: str, number: int, screen: str, log: Path) -> tuple[subprocess.Popen[bytes] | None, str]:
    """One start on `number`: the running process, or None and what was seen."""
    reader, writer = os.pipe()
    with log.open("ab") as output:
        output.write(f"--- Xvfb :{number}\n".encode())
        output.flush()
        started = time.monotonic()
        # -displayfd: Xvfb writes the number there once it accepts clients.
        process = subprocess.Popen(
            [xvfb, f":{number}", "-displayfd", str(writer), "-screen", "0", screen, "-nolisten", "tcp"],
            pass_fds=(writer,),
            stdout=subprocess.DEVNULL,
            stderr=output,
        )
    os.close(writer)
    try:
        answer = read_line(reader, READY_TIMEOUT_S)
    except BaseException:  # interrupted (Ctrl-C): no Xvfb left behind
        process.kill()
        process.wait()
        raise
    finally:
        os.close(reader)
    if answer == str(number):
        return process, ""
    process.kill()
    code = process.wait()
    waited = time.monotonic() - started
    said = _last_line(log)
    if answer:
        return None, f"answered {answer!r}"
    if waited >= READY_TIMEOUT_S:
        return None, f"no answer in {READY_TIMEOUT_S:g} s ({said})"
    return None, f"exited with {code} after {waited:.1f} s ({said})"


def read_line(fd: int, timeout_s: float) -> str:
    """Read up to a newline. Xvfb writes the number and the newline separately, and dies if the
    pipe is closed in between (it treats the failed write as fatal)."""
    data = b""
    deadline = time.monotonic() + timeout_s
    while b"\n" not in data:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(fd, 32) if ready else b""
        if not chunk:
            break
        data += chunk
    return data.decode().strip()


def _last_line(log: Path) -> str:
    """Xvfb's last words that say something (its fatal errors end with a bare "(EE)")."""
    lines = [line.strip() for line in log.read_text(errors="replace").splitlines()]
    words = [line for line in lines if line and line != "(EE)" and not line.startswith("---")]
    return words[-1] if words else "it said nothing"


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
