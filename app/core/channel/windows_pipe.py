"""The tray channel on Windows: a named pipe only this user can open, and who is at its other end.

The pipe's name carries the user's SID and the data folder's key; its security descriptor admits
only that user and SYSTEM; remote clients are refused; the tray creates it as the first instance, so
a program that took the name before the tray is found out (the tray refuses to start). Clients
open it at the identification level only, so the tray cannot act as them. Who is at the other end
comes from the OS (the pipe's client or server process id), never from what the peer says. The
user's own processes can still add instances of the pipe (full access includes creating them), and
a client reaches whichever instance waits: that is why servers check who answered (channel/peer.py).

Messages are JSON bytes through `send_bytes` and `recv_bytes(maxlength=MAX_MESSAGE_BYTES)`;
never `recv()`, which unpickles whatever the peer sent.

Threads, not asyncio: asyncio's pipe server takes no security descriptor and no reject-remote flag.
Only the pure functions run off Windows; the rest is tested under Wine, which does not enforce
FILE_FLAG_FIRST_PIPE_INSTANCE nor the pipe's DACL (Wine 8): those two need real Windows.
"""

from __future__ import annotations

import re
import threading
import time
from typing import TYPE_CHECKING, Any

from app.core.channel.wire import MAX_FRAME_BYTES

if TYPE_CHECKING:
    from multiprocessing.connection import PipeConnection

PIPE_PREFIX = "\\\\.\\pipe\\cowork-terminal-"
MAX_MESSAGE_BYTES = MAX_FRAME_BYTES
PIPE_BUFFER_BYTES = 64 * 1024
CONNECT_RETRY_S = 0.05  # between attempts while the tray creates its next pipe instance
_SID_PATTERN = re.compile(r"S-1(-\d+)+")
_KEY_PATTERN = re.compile(r"[0-9A-Za-z]+")

# Win32 constants (winbase.h, winnt.h, winerror.h).
PIPE_ACCESS_DUPLEX = 0x00000003
FILE_FLAG_FIRST_PIPE_INSTANCE = 0x00080000
FILE_FLAG_OVERLAPPED = 0x40000000
PIPE_TYPE_MESSAGE = 0x00000004
PIPE_READMODE_MESSAGE = 0x00000002
PIPE_WAIT = 0x00000000
PIPE_REJECT_REMOTE_CLIENTS = 0x00000008
PIPE_UNLIMITED_INSTANCES = 255
SECURITY_SQOS_PRESENT = 0x00100000
SECURITY_IDENTIFICATION = 0x00010000  # SecurityIdentification << 16
GENERIC_READ = 0x80000000
GENERIC_WRITE = 0x40000000
OPEN_EXISTING = 3
PROCESS_QUERY_LIMITED_INFORMATION = 0x1000
TOKEN_QUERY = 0x0008
PROCESS_COMMAND_LINE_INFORMATION = 60
PROCESS_BASIC_INFORMATION = 0
PROCESS_QUERY_INFORMATION = 0x0400
PROCESS_VM_READ = 0x0010
TOKEN_USER_CLASS = 1
SDDL_REVISION_1 = 1
ERROR_FILE_NOT_FOUND = 2
ERROR_ACCESS_DENIED = 5
ERROR_PIPE_BUSY = 231
ERROR_NO_DATA = 232
ERROR_PIPE_CONNECTED = 535
ERROR_OPERATION_ABORTED = 995
WAIT_TIMEOUT = 0x102
INFINITE = 0xFFFFFFFF


class PipeNameTaken(OSError):
    """Another process already created the tray's pipe: it may be posing as the tray."""


def pipe_name(user_sid: str, data_dir_key: str) -> str:
    r"""`\\.\pipe\cowork-terminal-<SID>-<key>`: one pipe per user and data folder."""
    if not _SID_PATTERN.fullmatch(user_sid):
        raise ValueError(f"not a SID: {user_sid!r}")
    if not _KEY_PATTERN.fullmatch(data_dir_key):
        raise ValueError(f"not a data folder key: {data_dir_key!r}")
    return f"{PIPE_PREFIX}{user_sid}-{data_dir_key}"


def pipe_sddl(user_sid: str) -> str:
    """Full access for this user and SYSTEM, nobody else; `P`: no inherited entries widen it."""
    if not _SID_PATTERN.fullmatch(user_sid):
        raise ValueError(f"not a SID: {user_sid!r}")  # an SDDL fragment here would add entries
    return f"D:P(A;;GA;;;{user_sid})(A;;GA;;;SY)"


# -- thin wrappers over the Windows API (Windows only, imported lazily) -------------------------


def _api() -> Any:
    """ctypes bindings with argument types (64-bit handles must not be truncated to int)."""
    global _API
    if _API is None:
        import ctypes
        from ctypes import wintypes

        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        advapi32 = ctypes.WinDLL("advapi32", use_last_error=True)
        kernel32.OpenProcess.argtypes = [wintypes.DWORD, wintypes.BOOL, wintypes.DWORD]
        kernel32.OpenProcess.restype = wintypes.HANDLE
        kernel32.CloseHandle.argtypes = [wintypes.HANDLE]
        kernel32.GetCurrentProcess.restype = wintypes.HANDLE
        kernel32.QueryFullProcessImageNameW.argtypes = [
            wintypes.HANDLE,
            wintypes.DWORD,
            wintypes.LPWSTR,
            ctypes.POINTER(wintypes.DWORD),
        ]
        kernel32.GetNamedPipeClientProcessId.argtypes = [wintypes.HANDLE, ctypes.POINTER(wintypes.ULONG)]
        kernel32.GetNamedPipeServerProcessId.argtypes = [wintypes.HANDLE, ctypes.POINTER(wintypes.ULONG)]
        kernel32.LocalFree.argtypes = [wintypes.HLOCAL]
        kernel32.LocalFree.restype = wintypes.HLOCAL
        advapi32.OpenProcessToken.argtypes = [wintypes.HANDLE, wintypes.DWORD, ctypes.POINTER(wintypes.HANDLE)]
        advapi32.GetTokenInformation.argtypes = [
            wintypes.HANDLE,
            ctypes.c_int,
            ctypes.c_void_p,
            wintypes.DWORD,
            ctypes.POINTER(wintypes.DWORD),
        ]
        advapi32.ConvertSidToStringSidW.argtypes = [ctypes.c_void_p, ctypes.POINTER(wintypes.LPWSTR)]
        advapi32.ConvertStringSecurityDescriptorToSecurityDescriptorW.argtypes = [
            wintypes.LPCWSTR,
            wintypes.DWORD,
            ctypes.POINTER(ctypes.c_void_p),
            ctypes.POINTER(wintypes.ULONG),
        ]
        _API = (ctypes, wintypes, kernel32, advapi32)
    return _API


_API: Any = None


def _raise_last_error(what: str) -> None:
    import ctypes

    code = ctypes.get_last_error()
    raise ctypes.WinError(code, f"{what}: {ctypes.FormatError(code).strip()}")


def _token_sid(token: int) -> str:
    ctypes, wintypes, kernel32, advapi32 = _api()
    size = wintypes.DWORD(0)
    advapi32.GetTokenInformation(token, TOKEN_USER_CLASS, None, 0, ctypes.byref(size))
    buffer = ctypes.create_string_buffer(size.value)
    if not advapi32.GetTokenInformation(token, TOKEN_USER_CLASS, buffer, size, ctypes.byref(size)):
        _raise_last_error("GetTokenInformation")
    sid_pointer = ctypes.c_void_p.from_buffer(buffer).value  # TOKEN_USER starts with the SID's address
    text = wintypes.LPWSTR()
    if not advapi32.ConvertSidToStringSidW(sid_pointer, ctypes.byref(text)):
        _raise_last_error("ConvertSidToStringSidW")
    try:
        return str(text.value)
    finally:
        kernel32.LocalFree(ctypes.cast(text, ctypes.c_void_p))


def _process_token_sid(process: int) -> str:
    ctypes, wintypes, kernel32, advapi32 = _api()
    token = wintypes.HANDLE()
    if not advapi32.OpenProcessToken(process, TOKEN_QUERY, ctypes.byref(token)):
        _raise_last_error("OpenProcessToken")
    try:
        return _token_sid(token)
    finally:
        kernel32.CloseHandle(token)


def current_user_sid() -> str:
    """The SID of the user this process runs as, e.g. `S-1-5-21-...-1001`."""
    _ctypes, _wintypes, kernel32, _advapi32 = _api()
    return _process_token_sid(kernel32.GetCurrentProcess())


def process_user_sid(pid: int) -> str | None:
    """The SID of the user a process runs as; None when the OS will not say (gone, or not ours)."""
    _ctypes, _wintypes, kernel32, _advapi32 = _api()
    process = kernel32.OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, False, pid)
    if not process:
        return None
    try:
        return _process_token_sid(process)
    except OSError:
        return None
    finally:
        kernel32.CloseHandle(process)


def process_image(pid: int) -> str:
    """The full path of a process's executable (QueryFullProcessImageNameW)."""
    ctypes, wintypes, kernel32, _advapi32 = _api()
    process = kernel32.OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, False, pid)
    if not process:
        _raise_last_error(f"OpenProcess({pid})")
    try:
        size = wintypes.DWORD(32768)
        buffer = ctypes.create_unicode_buffer(size.value)
        if not kernel32.QueryFullProcessImageNameW(process, 0, buffer, ctypes.byref(size)):
            _raise_last_error("QueryFullProcessImageNameW")
        return buffer.value
    finally:
        kernel32.CloseHandle(process)


def process_command_line(pid: int) -> tuple[str, ...] | None:
    """A process's arguments as Windows parses them, or None when the OS will not say.

    A source install's peer is python.exe: only its arguments show that it runs this app. Asked
    with NtQueryInformationProcess(ProcessCommandLineInformation) (Windows 8.1+); where that class
    is missing (Wine 8), read from the process's PEB, as tools did before it existed.
    """
    ctypes, wintypes, kernel32, _advapi32 = _api()
    line = _command_line_by_class(pid)
    if line is None:
        line = _command_line_from_peb(pid)
    if line is None:
        return None
    shell32 = ctypes.WinDLL("shell32", use_last_error=True)
    shell32.CommandLineToArgvW.argtypes = [wintypes.LPCWSTR, ctypes.POINTER(ctypes.c_int)]
    shell32.CommandLineToArgvW.restype = ctypes.POINTER(wintypes.LPWSTR)
    count = ctypes.c_int(0)
    argv = shell32.CommandLineToArgvW(line, ctypes.byref(count))
    if not argv:
        return None
    try:
        return tuple(argv[i] for i in range(count.value))
    finally:
        kernel32.LocalFree(ctypes.cast(argv, ctypes.c_void_p))


def _ntdll() -> Any:
    import ctypes
    from ctypes import wintypes

    ntdll = ctypes.WinDLL("ntdll")
    ntdll.NtQueryInformationProcess.argtypes = [
        wintypes.HANDLE,
        ctypes.c_int,
        ctypes.c_void_p,
        wintypes.ULONG,
        ctypes.POINTER(wintypes.ULONG),
    ]
    ntdll.NtQueryInformationProcess.restype = ctypes.c_long
    return ntdll


def _command_line_by_class(pid: int) -> str | None:
    ctypes, wintypes, kernel32, _advapi32 = _api()
    process = kernel32.OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, False, pid)
    if not process:
        return None
    try:
        ntdll = _ntdll()
        size = wintypes.ULONG(0)
        ntdll.NtQueryInformationProcess(process, PROCESS_COMMAND_LINE_INFORMATION, None, 0, ctypes.byref(size))
        if not size.value:
            return None
        buffer = ctypes.create_string_buffer(size.value)
        if ntdll.NtQueryInformationProcess(process, PROCESS_COMMAND_LINE_INFORMATION, buffer, size, ctypes.byref(size)):
            return None  # an NTSTATUS other than STATUS_SUCCESS
        length = int.from_bytes(buffer.raw[0:2], "little")
        address = int.from_bytes(buffer.raw[8:16], "little")  # UNICODE_STRING.Buffer (64-bit)
        return ctypes.wstring_at(address, length // 2) if address else ""
    finally:
        kernel32.CloseHandle(process)


def _command_line_from_peb(pid: int) -> str | None:
    """64-bit layouts: PEB.ProcessParameters at 0x20, RTL_USER_PROCESS_PARAMETERS.CommandLine at 0x70."""
    ctypes, wintypes, kernel32, _advapi32 = _api()
    kernel32.ReadProcessMemory.argtypes = [
        wintypes.HANDLE,
        ctypes.c_void_p,
        ctypes.c_void_p,
        ctypes.c_size_t,
        ctypes.POINTER(ctypes.c_size_t),
    ]
    process = kernel32.OpenProcess(PROCESS_QUERY_INFORMATION | PROCESS_VM_READ, False, pid)
    if not process:
        return None

    def read(address: int, size: int) -> bytes | None:
        buffer = ctypes.create_string_buffer(size)
        done = ctypes.c_size_t(0)
        if not kernel32.ReadProcessMemory(process, address, buffer, size, ctypes.byref(done)) or done.value != size:
            return None
        return buffer.raw

    try:
        basic = ctypes.create_string_buffer(48)  # PROCESS_BASIC_INFORMATION
        if _ntdll().NtQueryInformationProcess(process, PROCESS_BASIC_INFORMATION, basic, 48, None):
            return None
        peb = int.from_bytes(basic.raw[8:16], "little")
        parameters = read(peb + 0x20, 8)
        if parameters is None:
            return None
        command_line = read(int.from_bytes(parameters, "little") + 0x70, 16)
        if command_line is None:
            return None
        length, address = int.from_bytes(command_line[0:2], "little"), int.from_bytes(command_line[8:16], "little")
        text = read(address, length) if address and length else b""
        return None if text is None else text.decode("utf-16-le", errors="replace")
    finally:
        kernel32.CloseHandle(process)


def peer_pid(conn: PipeConnection, *, we_are_server: bool) -> int:
    """The process id at the other end of a connected pipe, as the OS knows it."""
    ctypes, wintypes, kernel32, _advapi32 = _api()
    pid = wintypes.ULONG(0)
    call = kernel32.GetNamedPipeClientProcessId if we_are_server else kernel32.GetNamedPipeServerProcessId
    if not call(conn.fileno(), ctypes.byref(pid)):
        _raise_last_error(call.__name__)
    return int(pid.value)


class _SecurityAttributes:
    """A SECURITY_ATTRIBUTES built from SDDL, kept alive (and freed) with the listener."""

    def __init__(self, sddl: str) -> None:
        ctypes, wintypes, kernel32, advapi32 = _api()

        class SECURITY_ATTRIBUTES(ctypes.Structure):  # type: ignore[name-defined]  # noqa: N801 - the Win32 name
            _fields_ = [
                ("nLength", wintypes.DWORD),
                ("lpSecurityDescriptor", ctypes.c_void_p),
                ("bInheritHandle", wintypes.BOOL),
            ]

        self._descriptor = ctypes.c_void_p()
        if not advapi32.ConvertStringSecurityDescriptorToSecurityDescriptorW(
            sddl, SDDL_REVISION_1, ctypes.byref(self._descriptor), None
        ):
            _raise_last_error("ConvertStringSecurityDescriptorToSecurityDescriptorW")
        self._struct = SECURITY_ATTRIBUTES(ctypes.sizeof(SECURITY_ATTRIBUTES), self._descriptor.value, False)
        self.address = ctypes.addressof(self._struct)
        self._free = kernel32.LocalFree

    def free(self) -> None:
        if self._descriptor.value:
            self._free(self._descriptor)
            self._descriptor.value = None


class PipeListener:
    """The tray's end: the first instance of the pipe, then one waiting instance per accept."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._lock = threading.Lock()
        self._closed = False
        self._pending_io: Any = None
        self._security = _SecurityAttributes(pipe_sddl(current_user_sid()))
        try:
            self._handle: int | None = self._new_instance(first=True)
        except OSError as exc:
            self._security.free()
            if getattr(exc, "winerror", None) in (ERROR_ACCESS_DENIED, ERROR_PIPE_BUSY):
                raise PipeNameTaken(
                    exc.errno, f"another program already created the pipe {name}: it may pose as Cowork Terminal"
                ) from None
            raise

    def _new_instance(self, *, first: bool) -> int:
        import _winapi

        open_mode = PIPE_ACCESS_DUPLEX | FILE_FLAG_OVERLAPPED | (FILE_FLAG_FIRST_PIPE_INSTANCE if first else 0)
        pipe_mode = PIPE_TYPE_MESSAGE | PIPE_READMODE_MESSAGE | PIPE_WAIT | PIPE_REJECT_REMOTE_CLIENTS
        return _winapi.CreateNamedPipe(
            self.name,
            open_mode,
            pipe_mode,
            PIPE_UNLIMITED_INSTANCES,
            PIPE_BUFFER_BYTES,
            PIPE_BUFFER_BYTES,
            _winapi.NMPWAIT_WAIT_FOREVER,
            self._security.address,
        )

    def accept(self, timeout_s: float | None = None) -> PipeConnection:
        """The next client's connection. TimeoutError after `timeout_s`; OSError once closed (even
        when `close()` comes from another thread while this waits)."""
        import _winapi
        from multiprocessing.connection import PipeConnection

        with self._lock:
            if self._closed or self._handle is None:
                raise OSError("the pipe listener is closed")
            handle = self._handle
            try:
                io = _winapi.ConnectNamedPipe(handle, overlapped=True)
            except OSError as exc:
                if exc.winerror != ERROR_NO_DATA:  # a client came and went already: hand it over
                    raise
                io = None
            self._pending_io = io
        error = 0
        if io is not None:
            try:
                wait_ms = INFINITE if timeout_s is None else max(0, int(timeout_s * 1000))
                if _winapi.WaitForMultipleObjects([io.event], False, wait_ms) == WAIT_TIMEOUT:
                    io.cancel()
            finally:
                _transferred, error = io.GetOverlappedResult(True)
        with self._lock:
            self._pending_io = None
            if self._closed:  # close() left the handle to us while we waited
                _winapi.CloseHandle(handle)
                raise OSError("the pipe listener is closed")
            if error == ERROR_OPERATION_ABORTED:
                raise TimeoutError(f"no client connected to {self.name} within {timeout_s} s")
            if error != 0:
                raise OSError(None, f"ConnectNamedPipe failed with error {error}")
            # The next client finds a waiting instance; this one is the client's now.
            self._handle = self._new_instance(first=False)
        return PipeConnection(handle)

    def close(self) -> None:
        """Stop listening; an accept waiting in another thread ends with OSError."""
        import _winapi

        with self._lock:
            if self._closed:
                return
            self._closed = True
            handle, self._handle = self._handle, None
            if self._pending_io is not None:
                self._pending_io.cancel()  # the waiting accept wakes, sees closed, closes the handle
            elif handle is not None:
                _winapi.CloseHandle(handle)
            self._security.free()


def connect(name: str, timeout_s: float) -> PipeConnection:
    """Open the tray's pipe (waiting up to `timeout_s` for a free instance); OSError when nobody listens."""
    import _winapi
    from multiprocessing.connection import PipeConnection

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            handle = _winapi.CreateFile(
                name,
                GENERIC_READ | GENERIC_WRITE,
                0,
                _winapi.NULL,
                OPEN_EXISTING,
                FILE_FLAG_OVERLAPPED | SECURITY_SQOS_PRESENT | SECURITY_IDENTIFICATION,
                _winapi.NULL,
            )
            break
        except OSError as exc:
            if exc.winerror not in (ERROR_PIPE_BUSY, ERROR_FILE_NOT_FOUND) or time.monotonic() >= deadline:
                raise
            time.sleep(CONNECT_RETRY_S)
    _winapi.SetNamedPipeHandleState(handle, PIPE_READMODE_MESSAGE, None, None)
    return PipeConnection(handle)
