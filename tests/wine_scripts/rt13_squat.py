"""Red team 13 (wine lane): a look-alike of the tray, left running by a command (so in the tray's job).

It rewrites its own command line in its PEB to `<this python.exe> -m app tray` (any process may write
its own memory), writes its pid to the file named by its first argument, and waits (at most 300 s)."""

from __future__ import annotations

import ctypes
import os
import sys
import time
from ctypes import wintypes

kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
ntdll = ctypes.WinDLL("ntdll")
ntdll.NtQueryInformationProcess.argtypes = [
    wintypes.HANDLE, ctypes.c_int, ctypes.c_void_p, wintypes.ULONG, ctypes.POINTER(wintypes.ULONG)
]  # fmt: skip
kernel32.GetCurrentProcess.restype = wintypes.HANDLE
basic = ctypes.create_string_buffer(48)
ntdll.NtQueryInformationProcess(kernel32.GetCurrentProcess(), 0, basic, 48, None)
peb = int.from_bytes(basic.raw[8:16], "little")
parameters = ctypes.c_uint64.from_address(peb + 0x20).value
line = f'"{sys.executable}" -m app tray'
wanted = (len(line) + 1) * 2
buffer = ctypes.create_unicode_buffer(line, len(line) + 1)  # kept alive: the PEB points at it
ctypes.c_uint16.from_address(parameters + 0x70).value = len(line) * 2  # CommandLine.Length
ctypes.c_uint16.from_address(parameters + 0x72).value = wanted  # MaximumLength
ctypes.c_uint64.from_address(parameters + 0x78).value = ctypes.addressof(buffer)  # Buffer
with open(sys.argv[1] + ".part", "w", encoding="utf-8") as out:
    out.write(str(os.getpid()))
os.replace(sys.argv[1] + ".part", sys.argv[1])
end = time.monotonic() + 300
while time.monotonic() < end:
    time.sleep(0.5)
