"""Red team 14 (wine lane): run as a command of the tray (so inside its named job), it opens the tray's
named job by name with full access and gives it an empty DACL (no one may open it any more: a
"tightening"), then prints one JSON line: what it could open and set."""

from __future__ import annotations

import ctypes
import json
from ctypes import wintypes

from app.core.channel.transport import address_for
from app.core.execution import windows_jobs
from app.core.paths import AppPaths

NAME = windows_jobs.umbrella_name(address_for(AppPaths.from_environment()).name)  # the tray's
JOB_OBJECT_ALL_ACCESS = 0x1F003F
DACL_SECURITY_INFORMATION = 4

kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
advapi32 = ctypes.WinDLL("advapi32", use_last_error=True)
kernel32.OpenJobObjectW.argtypes = [wintypes.DWORD, wintypes.BOOL, wintypes.LPCWSTR]
kernel32.OpenJobObjectW.restype = wintypes.HANDLE
advapi32.ConvertStringSecurityDescriptorToSecurityDescriptorW.argtypes = [
    wintypes.LPCWSTR, wintypes.DWORD, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p
]  # fmt: skip
advapi32.SetKernelObjectSecurity.argtypes = [wintypes.HANDLE, wintypes.DWORD, ctypes.c_void_p]

report: dict = {}
job = kernel32.OpenJobObjectW(JOB_OBJECT_ALL_ACCESS, False, NAME)
report["opened_with_full_access"] = bool(job)
report["open_error"] = 0 if job else ctypes.get_last_error()
if job:
    descriptor = ctypes.c_void_p()
    advapi32.ConvertStringSecurityDescriptorToSecurityDescriptorW("D:", 1, ctypes.byref(descriptor), None)
    report["dacl_set"] = bool(advapi32.SetKernelObjectSecurity(job, DACL_SECURITY_INFORMATION, descriptor))
    again = kernel32.OpenJobObjectW(0x4, False, NAME)
    report["query_open_after"] = bool(again)
    report["query_open_error_after"] = 0 if again else ctypes.get_last_error()
print(json.dumps(report), flush=True)
