"""Red team 14 (wine lane): takes the tray's named job's name before the tray starts, as a command of a
headless server (in no named job) could: `Local\\CoworkTerminal-tray-commands`, created as a job whose
DACL lets anyone QUERY it (so servers and the CLI open and ask it) and nothing else (so the tray, which
asks CreateJobObjectW for full access, cannot open it). Writes what it did as JSON to the file named
by its first argument (written aside, then renamed) and holds the handle until the file named by its
second argument exists (at most 300 s)."""

from __future__ import annotations

import ctypes
import json
import os
import sys
import time
from ctypes import wintypes

from app.core.channel.transport import address_for
from app.core.execution import windows_jobs
from app.core.paths import AppPaths

NAME = windows_jobs.umbrella_name(address_for(AppPaths.from_environment()).name)  # the tray's
SDDL = "D:(A;;0x4;;;WD)"  # JOB_OBJECT_QUERY for Everyone, nothing more (owner rights need no ACE here)

kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
advapi32 = ctypes.WinDLL("advapi32", use_last_error=True)
advapi32.ConvertStringSecurityDescriptorToSecurityDescriptorW.argtypes = [
    wintypes.LPCWSTR, wintypes.DWORD, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p
]  # fmt: skip


class SecurityAttributes(ctypes.Structure):
    _fields_ = [
        ("nLength", wintypes.DWORD),
        ("lpSecurityDescriptor", ctypes.c_void_p),
        ("bInheritHandle", wintypes.BOOL),
    ]


kernel32.CreateJobObjectW.argtypes = [ctypes.c_void_p, wintypes.LPCWSTR]
kernel32.CreateJobObjectW.restype = wintypes.HANDLE
kernel32.OpenJobObjectW.argtypes = [wintypes.DWORD, wintypes.BOOL, wintypes.LPCWSTR]
kernel32.OpenJobObjectW.restype = wintypes.HANDLE

descriptor = ctypes.c_void_p()
report: dict = {
    "sddl": bool(advapi32.ConvertStringSecurityDescriptorToSecurityDescriptorW(SDDL, 1, ctypes.byref(descriptor), None))
}
attributes = SecurityAttributes(ctypes.sizeof(SecurityAttributes), descriptor, False)
handle = kernel32.CreateJobObjectW(ctypes.byref(attributes), NAME)
report["created"] = bool(handle)
report["error"] = ctypes.get_last_error()  # 183: the name existed already
full = kernel32.OpenJobObjectW(0x1F001F, False, NAME)
report["full_access_open_error"] = 0 if full else ctypes.get_last_error()
query = kernel32.OpenJobObjectW(0x4, False, NAME)
report["query_open"] = bool(query)
with open(sys.argv[1] + ".part", "w", encoding="utf-8") as out:
    json.dump(report, out)
os.replace(sys.argv[1] + ".part", sys.argv[1])
end = time.monotonic() + 300
while time.monotonic() < end and not os.path.exists(sys.argv[2]):
    time.sleep(0.2)
