"""Runs under Windows Python as a command the tray started (the wine lane): is it in a job, may it
leave it, and who are its parents? Prints one JSON line, which the model reads as the command's output."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from ctypes import wintypes

from app.core.channel import windows_pipe

# This Windows Python (the embeddable one) does not put a script's folder on sys.path.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from toolhelp import processes  # noqa: E402 - beside this script

kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
kernel32.GetCurrentProcess.restype = wintypes.HANDLE
kernel32.IsProcessInJob.argtypes = [wintypes.HANDLE, wintypes.HANDLE, ctypes.POINTER(wintypes.BOOL)]
kernel32.IsProcessInJob.restype = wintypes.BOOL

inside = wintypes.BOOL(False)
called = bool(kernel32.IsProcessInJob(kernel32.GetCurrentProcess(), None, ctypes.byref(inside)))


parents = {pid: (parent, image) for pid, parent, image in processes()}

chain = []  # (pid, image, arguments) from this process up
pid = os.getpid()
while pid in parents and len(chain) < 10:
    chain.append([pid, parents[pid][1], list(windows_pipe.process_command_line(pid) or ())])
    pid = parents[pid][0]

CREATE_BREAKAWAY_FROM_JOB = 0x01000000
try:  # a job that allows no breakaway refuses this: access denied
    subprocess.run([sys.executable, "-c", "pass"], creationflags=CREATE_BREAKAWAY_FROM_JOB, timeout=60)
    breakaway = "started"
except OSError as exc:
    breakaway = f"{type(exc).__name__}: winerror {getattr(exc, 'winerror', None)}"

report = {"pid": os.getpid(), "in_job_call_ok": called, "in_job": bool(inside.value), "chain": chain}
print(json.dumps({**report, "breakaway": breakaway}))
