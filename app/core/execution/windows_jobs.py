"""Windows: a job object per started bash, so that ending a command ends every process it started.

`taskkill /T` walks parent process ids, so it misses a descendant whose parent already exited
(`sleep 60 &` after its shell returned), and Wine's taskkill has no /T at all (found by the wine
lane: a timed-out command ran on to its end). Every process bash starts joins bash's job unless it
asks to break away, and TerminateJobObject ends them all. Closing the job leaves them running: a
command that ends normally may leave a background job (a dev server) on purpose, as on POSIX.
Windows only; ctypes, no extra dependency.
"""

from __future__ import annotations

import contextlib
from typing import Any

PROCESS_SET_QUOTA = 0x0100
PROCESS_TERMINATE = 0x0001
KILLED_EXIT_CODE = 1

_API: Any = None


def _api() -> Any:
    global _API
    if _API is None:
        import ctypes
        from ctypes import wintypes

        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        kernel32.CreateJobObjectW.argtypes = [ctypes.c_void_p, wintypes.LPCWSTR]
        kernel32.CreateJobObjectW.restype = wintypes.HANDLE
        kernel32.OpenProcess.argtypes = [wintypes.DWORD, wintypes.BOOL, wintypes.DWORD]
        kernel32.OpenProcess.restype = wintypes.HANDLE
        kernel32.AssignProcessToJobObject.argtypes = [wintypes.HANDLE, wintypes.HANDLE]
        kernel32.TerminateJobObject.argtypes = [wintypes.HANDLE, wintypes.UINT]
        kernel32.CloseHandle.argtypes = [wintypes.HANDLE]

        _API = (ctypes, kernel32)
    return _API


class ProcessJob:
    """The job bash and its descendants live in; `terminate()` ends them all."""

    def __init__(self, pid: int) -> None:
        ctypes, kernel32 = _api()
        self._handle = kernel32.CreateJobObjectW(None, None)
        if not self._handle:
            raise ctypes.WinError(ctypes.get_last_error())
        process = kernel32.OpenProcess(PROCESS_SET_QUOTA | PROCESS_TERMINATE, False, pid)
        if not process:
            self.close()
            raise ctypes.WinError(ctypes.get_last_error())
        try:
            if not kernel32.AssignProcessToJobObject(self._handle, process):
                error = ctypes.get_last_error()
                self.close()
                raise ctypes.WinError(error)
        finally:
            kernel32.CloseHandle(process)

    def terminate(self) -> None:
        if self._handle:
            _api()[1].TerminateJobObject(self._handle, KILLED_EXIT_CODE)

    def close(self) -> None:
        """Forget the job; what still runs in it runs on."""
        handle, self._handle = self._handle, None
        if handle:
            _api()[1].CloseHandle(handle)


def job_for(pid: int) -> ProcessJob | None:
    """A job holding `pid`, or None when the OS refuses (the process already belongs to a job that
    forbids nesting, or is gone): then taskkill /T is all there is."""
    with contextlib.suppress(OSError):
        return ProcessJob(pid)
    return None
