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

kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
kernel32.GetCurrentProcess.restype = wintypes.HANDLE
kernel32.IsProcessInJob.argtypes = [wintypes.HANDLE, wintypes.HANDLE, ctypes.POINTER(wintypes.BOOL)]
kernel32.IsProcessInJob.restype = wintypes.BOOL

inside = wintypes.BOOL(False)
called = bool(kernel32.IsProcessInJob(kernel32.GetCurrentProcess(), None, ctypes.byref(inside)))


class PROCESSENTRY32W(ctypes.Structure):  # noqa: N801 - the Win32 name
    _fields_ = [
        ("dwSize", wintypes.DWORD),
        ("cntUsage", wintypes.DWORD),
        ("th32ProcessID", wintypes.DWORD),
        ("th32DefaultHeapID", ctypes.c_void_p),
        ("th32ModuleID", wintypes.DWORD),
        ("cntThreads", wintypes.DWORD),
        ("th32ParentProcessID", wintypes.DWORD),
        ("pcPriClassBase", ctypes.c_long),
        ("dwFlags", wintypes.DWORD),
        ("szExeFile", ctypes.c_wchar * 260),
    ]


kernel32.CreateToolhelp32Snapshot.restype = wintypes.HANDLE
kernel32.Process32FirstW.argtypes = [wintypes.HANDLE, ctypes.POINTER(PROCESSENTRY32W)]
kernel32.Process32NextW.argtypes = [wintypes.HANDLE, ctypes.POINTER(PROCESSENTRY32W)]
snapshot = kernel32.CreateToolhelp32Snapshot(0x2, 0)
entry = PROCESSENTRY32W()
entry.dwSize = ctypes.sizeof(entry)
parents: dict[int, tuple[int, str]] = {}
ok = kernel32.Process32FirstW(snapshot, ctypes.byref(entry))
while ok:
    parents[entry.th32ProcessID] = (entry.th32ParentProcessID, entry.szExeFile.lower())
    ok = kernel32.Process32NextW(snapshot, ctypes.byref(entry))

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
