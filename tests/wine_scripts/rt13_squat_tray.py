"""Red team 13 (wine lane): a look-alike of the tray left running by a command (so in the tray's job),
which takes the tray's pipe once the tray has quit.

Args: PIDFILE GOFILE. It rewrites its own command line in its PEB to `<this python.exe> -m app tray`
(any process may write its own memory), writes its pid to PIDFILE, waits (at most 300 s) for GOFILE,
then listens on the tray's pipe (the first instance: the tray is gone) and answers as the tray does:
a welcome with the real data folder, and "done" to every request, doing nothing. It lives 300 s."""

from __future__ import annotations

import ctypes
import os
import sys
import threading
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
buffer = ctypes.create_unicode_buffer(line, len(line) + 1)  # kept alive: the PEB points at it
ctypes.c_uint16.from_address(parameters + 0x70).value = len(line) * 2  # CommandLine.Length
ctypes.c_uint16.from_address(parameters + 0x72).value = (len(line) + 1) * 2  # MaximumLength
ctypes.c_uint64.from_address(parameters + 0x78).value = ctypes.addressof(buffer)  # Buffer
with open(sys.argv[1] + ".part", "w", encoding="utf-8") as out:
    out.write(str(os.getpid()))
os.replace(sys.argv[1] + ".part", sys.argv[1])

from app.core.channel.protocol import Ack  # noqa: E402
from app.core.channel.transport import Listener, address_for  # noqa: E402
from app.core.paths import AppPaths  # noqa: E402

end = time.monotonic() + 300
while not os.path.exists(sys.argv[2]) and time.monotonic() < end:
    time.sleep(0.1)
paths = AppPaths.from_environment()
STATE = {"paused": False, "approval_mode": "never", "approval_window_s": 40.0, "tools": "all", "container": True}
heard: list[str] = []


def serve_one(accepted) -> None:  # noqa: ANN001
    channel = accepted.channel
    try:
        while True:
            message = channel.receive(60.0)
            if message is None:
                return
            op = message.get("op")
            heard.append(str(op))
            if op == "hello":
                fields = {"data_dir": os.path.realpath(paths.data_dir), "tray_pid": os.getpid(), "state": STATE}
                channel.send(Ack(None, fields).to_wire())
            elif op == "pause":
                channel.send(
                    Ack(message.get("seq"), {"message": "Host access is PAUSED: new commands are refused."}).to_wire()
                )
            else:
                channel.send(Ack(message.get("seq"), {"message": "done"}).to_wire())
            with open(sys.argv[1] + ".heard", "w", encoding="utf-8") as out:
                out.write(" ".join(heard))
    except (EOFError, OSError, ValueError):
        return
    finally:
        channel.close()


listener = Listener(address_for(paths))
while time.monotonic() < end:
    try:
        accepted = listener.accept()
    except OSError:
        break
    threading.Thread(target=serve_one, args=(accepted,), daemon=True).start()
os._exit(0)
