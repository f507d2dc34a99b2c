"""Windows: a job object per started bash, so that ending a command ends every process it started.

`taskkill /T` walks parent process ids, so it misses a descendant whose parent already exited
(`sleep 60 &` after its shell returned), and Wine's taskkill has no /T at all (found by the wine
lane: a timed-out command ran on to its end). Every process bash starts joins bash's job unless it
asks to break away, and TerminateJobObject ends them all. Closing the job leaves them running: a
command that ends normally may leave a background job (a dev server) on purpose, as on POSIX.
Windows only; ctypes, no extra dependency.

Race closed (issue 21): bash starts suspended (`CREATE_SUSPENDED`), joins the job, then resumes, so
nothing it starts can run before it is in the job. The job forbids breakaway (no BREAKAWAY_OK).
`in_any_job` tells the tray whether a peer runs inside one of our jobs: it opens the process with
PROCESS_QUERY_INFORMATION and checks IsProcessInJob's return, since under Wine a LIMITED handle
makes the call fail and leave "not in the job" in its out value.
"""

from __future__ import annotations

import contextlib
from typing import Any

PROCESS_SET_QUOTA = 0x0100
PROCESS_TERMINATE = 0x0001
PROCESS_SUSPEND_RESUME = 0x0800
PROCESS_QUERY_INFORMATION = 0x0400
CREATE_SUSPENDED = 0x00000004
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
        kernel32.IsProcessInJob.argtypes = [wintypes.HANDLE, wintypes.HANDLE, ctypes.POINTER(wintypes.BOOL)]
        kernel32.IsProcessInJob.restype = wintypes.BOOL
        ntdll = ctypes.WinDLL("ntdll")
        ntdll.NtResumeProcess.argtypes = [wintypes.HANDLE]
        ntdll.NtResumeProcess.restype = ctypes.c_long

        _API = (ctypes, kernel32, ntdll)
    return _API


class ProcessJob:
    """The job bash and its descendants live in; `terminate()` ends them all."""

    def __init__(self, pid: int, *, resume: bool = False) -> None:
        """Put `pid` in a new job; `resume`: it was started suspended, let it run now (also when
        the job could not be made: a command must never stay frozen)."""
        ctypes, kernel32, ntdll = _api()
        rights = PROCESS_SET_QUOTA | PROCESS_TERMINATE | (PROCESS_SUSPEND_RESUME if resume else 0)
        process = kernel32.OpenProcess(rights, False, pid)
        if not process:
            raise ctypes.WinError(ctypes.get_last_error())
        try:
            self._handle = kernel32.CreateJobObjectW(None, None)
            if not self._handle:
                raise ctypes.WinError(ctypes.get_last_error())
            if not kernel32.AssignProcessToJobObject(self._handle, process):
                error = ctypes.get_last_error()
                self.close()
                raise ctypes.WinError(error)
            _JOBS.add(self)
        finally:
            if resume:
                ntdll.NtResumeProcess(process)
            kernel32.CloseHandle(process)

    _handle: int | None = None

    def terminate(self) -> None:
        if self._handle:
            _api()[1].TerminateJobObject(self._handle, KILLED_EXIT_CODE)

    def holds(self, process: int) -> bool:
        """Whether the process behind the handle `process` runs in this job (False when unsure)."""
        if not self._handle:
            return False
        ctypes, kernel32, _ntdll = _api()
        from ctypes import wintypes

        inside = wintypes.BOOL(False)
        if not kernel32.IsProcessInJob(process, self._handle, ctypes.byref(inside)):
            return False  # the call failed: its out value means nothing
        return bool(inside.value)

    def close(self) -> None:
        """Forget the job; what still runs in it runs on."""
        _JOBS.discard(self)
        handle, self._handle = self._handle, None
        if handle:
            _api()[1].CloseHandle(handle)


_JOBS: set[ProcessJob] = set()  # the live jobs of this process, for in_any_job


def in_any_job(pid: int) -> bool:
    """Whether `pid` runs in one of this process's command jobs (its commands and all they started,
    detached ones too)."""
    if not _JOBS:
        return False
    ctypes, kernel32, _ntdll = _api()
    process = kernel32.OpenProcess(PROCESS_QUERY_INFORMATION, False, pid)
    if not process:
        return False
    try:
        return any(job.holds(process) for job in list(_JOBS))
    finally:
        kernel32.CloseHandle(process)


def job_for(pid: int, *, resume: bool = False) -> ProcessJob | None:
    """A job holding `pid`, or None when the OS refuses (the process already belongs to a job that
    forbids nesting, or is gone): then taskkill /T is all there is. `resume`: see ProcessJob."""
    try:
        return ProcessJob(pid, resume=resume)
    except OSError:
        if resume:  # never leave it frozen
            with contextlib.suppress(OSError):
                _resume(pid)
        return None


def _resume(pid: int) -> None:
    ctypes, kernel32, ntdll = _api()
    process = kernel32.OpenProcess(PROCESS_SUSPEND_RESUME, False, pid)
    if not process:
        raise ctypes.WinError(ctypes.get_last_error())
    try:
        ntdll.NtResumeProcess(process)
    finally:
        kernel32.CloseHandle(process)
