"""Windows: a job object per started bash, so that ending a command ends every process it started.

`taskkill /T` walks parent process ids, so it misses a descendant whose parent already exited
(`sleep 60 &` after its shell returned), and Wine's taskkill has no /T at all (found by the wine
lane: a timed-out command ran on to its end). Every process bash starts joins bash's job unless it
asks to break away, and TerminateJobObject ends them all. A command that ends normally may leave a
background job (a dev server) on purpose, as on POSIX: it runs on until a pause (`end_jobs`) or
until this process exits. Each job is kill-on-close and only this process holds its handle, so
what a command left ends with the tray (or the headless server) that ran it, as bubblewrap's
--die-with-parent ends it on Linux (red team 13: a leftover of an earlier tray's command was in
none of the next tray's jobs and passed for the user). Windows only; ctypes, no extra dependency.

Race closed (issue 21): bash starts suspended (`CREATE_SUSPENDED`), joins the job, then resumes, so
nothing it starts can run before it is in the job. The job forbids breakaway (no BREAKAWAY_OK).
The tray also holds one named job (`umbrella_name` of its pipe, `gather_commands`) that every command
it starts joins first, its own job then nested in it: a server or the CLI, which hold none of the
tray's job handles, open it by name and ask whether the process at the tray's address is in it, so
that a look-alike of the tray a command started is refused there too (red team 13: it passed). A
command may only ask it (UMBRELLA_SDDL), and a tray that finds the name taken does not start. Job
membership is no proof against the user's own code: a command can start a process under another
parent outside every job (PROC_THREAD_ATTRIBUTE_PARENT_PROCESS; red team 14), which then passes
for the user and can take the tray's place after it quits (docs/security.md, "What remains"). Nested jobs
need Windows 8 or later; under Wine 8 a process assigned to the named job and then to a new one is in
both, and so is what it starts. A headless server's commands are not in it (it may run inside
Claude's own job, under which the first process to join would nest the named job).

`in_any_job` tells whether a peer runs inside one of our jobs: it opens the process with
PROCESS_QUERY_INFORMATION and checks IsProcessInJob's return, since under Wine a LIMITED handle
makes the call fail and leave "not in the job" in its out value; a call that fails counts as inside
(unsure: the peer may still pause and stop). A finished command's job keeps its handle while
processes it left behind (`sleep 600 &`, a detached helper) still run in it: else such a leftover
would pass for the user once its command ended (found by the wine lane's provenance test).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from typing import Any

log = logging.getLogger(__name__)

PROCESS_SET_QUOTA = 0x0100
PROCESS_TERMINATE = 0x0001
PROCESS_SUSPEND_RESUME = 0x0800
PROCESS_QUERY_INFORMATION = 0x0400
PROCESS_QUERY_LIMITED_INFORMATION = 0x1000  # enough for IsProcessInJob on Windows, not under Wine
JOB_OBJECT_BASIC_ACCOUNTING_INFORMATION = 1
JOB_OBJECT_EXTENDED_LIMIT_INFORMATION = 9
JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x00002000
CREATE_SUSPENDED = 0x00000004
KILLED_EXIT_CODE = 1
GATHER_PATIENCE_S = 3.0  # how long a starting tray waits for its named job's name to be free
JOB_OBJECT_QUERY = 0x0004
ERROR_FILE_NOT_FOUND = 2
ERROR_ALREADY_EXISTS = 183
# The tray's named job: everyone may ask whether a process is in it (query, synchronize), and nobody
# more, its owner included (OWNER RIGHTS): a command that opened it by name gave it an empty access
# list, and every server then refused the real tray (red team 14). The tray's own handle is full.
UMBRELLA_SDDL = "D:P(A;;0x100004;;;OW)(A;;0x100004;;;WD)"

_API: Any = None


def extended_limits(flags: int) -> Any:
    """JOBOBJECT_EXTENDED_LIMIT_INFORMATION with `flags` as its LimitFlags, the rest zero (no limit)."""
    import ctypes

    class BasicLimits(ctypes.Structure):
        _fields_ = [
            ("PerProcessUserTimeLimit", ctypes.c_int64),
            ("PerJobUserTimeLimit", ctypes.c_int64),
            ("LimitFlags", ctypes.c_uint32),
            ("MinimumWorkingSetSize", ctypes.c_size_t),
            ("MaximumWorkingSetSize", ctypes.c_size_t),
            ("ActiveProcessLimit", ctypes.c_uint32),
            ("Affinity", ctypes.c_size_t),
            ("PriorityClass", ctypes.c_uint32),
            ("SchedulingClass", ctypes.c_uint32),
        ]

    class ExtendedLimits(ctypes.Structure):
        _fields_ = [
            ("BasicLimitInformation", BasicLimits),
            ("IoInfo", ctypes.c_uint64 * 6),  # IO_COUNTERS
            ("ProcessMemoryLimit", ctypes.c_size_t),
            ("JobMemoryLimit", ctypes.c_size_t),
            ("PeakProcessMemoryUsed", ctypes.c_size_t),
            ("PeakJobMemoryUsed", ctypes.c_size_t),
        ]

    limits = ExtendedLimits()
    limits.BasicLimitInformation.LimitFlags = flags
    return limits


def security_attributes(descriptor: Any) -> Any:
    """SECURITY_ATTRIBUTES naming `descriptor`, its handle not inherited."""
    import ctypes
    from ctypes import wintypes

    class SecurityAttributes(ctypes.Structure):
        _fields_ = [("length", wintypes.DWORD), ("descriptor", ctypes.c_void_p), ("inherit", wintypes.BOOL)]

    return SecurityAttributes(ctypes.sizeof(SecurityAttributes), descriptor, False)


def _api() -> Any:
    global _API
    if _API is None:
        import ctypes
        from ctypes import wintypes

        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        kernel32.CreateJobObjectW.argtypes = [ctypes.c_void_p, wintypes.LPCWSTR]
        kernel32.CreateJobObjectW.restype = wintypes.HANDLE
        kernel32.LocalFree.argtypes = [ctypes.c_void_p]
        kernel32.OpenJobObjectW.argtypes = [wintypes.DWORD, wintypes.BOOL, wintypes.LPCWSTR]
        kernel32.OpenJobObjectW.restype = wintypes.HANDLE
        kernel32.OpenProcess.argtypes = [wintypes.DWORD, wintypes.BOOL, wintypes.DWORD]
        kernel32.OpenProcess.restype = wintypes.HANDLE
        kernel32.AssignProcessToJobObject.argtypes = [wintypes.HANDLE, wintypes.HANDLE]
        kernel32.TerminateJobObject.argtypes = [wintypes.HANDLE, wintypes.UINT]
        kernel32.CloseHandle.argtypes = [wintypes.HANDLE]
        kernel32.IsProcessInJob.argtypes = [wintypes.HANDLE, wintypes.HANDLE, ctypes.POINTER(wintypes.BOOL)]
        kernel32.IsProcessInJob.restype = wintypes.BOOL
        kernel32.QueryInformationJobObject.argtypes = [
            wintypes.HANDLE,
            ctypes.c_int,
            ctypes.c_void_p,
            wintypes.DWORD,
            ctypes.POINTER(wintypes.DWORD),
        ]
        kernel32.QueryInformationJobObject.restype = wintypes.BOOL
        kernel32.SetInformationJobObject.argtypes = [wintypes.HANDLE, ctypes.c_int, ctypes.c_void_p, wintypes.DWORD]
        kernel32.SetInformationJobObject.restype = wintypes.BOOL
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
            # The tray's named job first: a job of its own is then nested in it (the other order is refused).
            if _UMBRELLA and not kernel32.AssignProcessToJobObject(_UMBRELLA, process):
                log.warning(
                    "process %s could not join the tray's named job (%s): a look-alike of the tray it "
                    "started would pass with servers", pid, ctypes.WinError(ctypes.get_last_error())
                )  # fmt: skip
            self._handle = kernel32.CreateJobObjectW(None, None)
            if not self._handle:
                raise ctypes.WinError(ctypes.get_last_error())
            limits = extended_limits(JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE)
            if not kernel32.SetInformationJobObject(
                self._handle, JOB_OBJECT_EXTENDED_LIMIT_INFORMATION, ctypes.byref(limits), ctypes.sizeof(limits)
            ):
                # The job still ends the command's tree at a Stop or a pause; only what it leaves
                # outlives this process. Said in the log, as a command run with no job is.
                log.warning("job of process %s: no kill-on-close (%s)", pid, ctypes.WinError(ctypes.get_last_error()))
            if not kernel32.AssignProcessToJobObject(self._handle, process):
                error = ctypes.get_last_error()
                self._close_handle()
                raise ctypes.WinError(error)
            with _LOCK:
                _JOBS.add(self)
        finally:
            if resume:
                ntdll.NtResumeProcess(process)
            kernel32.CloseHandle(process)

    _handle: int | None = None
    _released = False

    def terminate(self) -> None:
        if self._handle:
            _api()[1].TerminateJobObject(self._handle, KILLED_EXIT_CODE)

    def holds(self, process: int) -> bool | None:
        """Whether the process behind the handle `process` runs in this job; None when the call
        failed (its out value then means nothing)."""
        return _holds(self._handle, process) if self._handle else False

    def active_processes(self) -> int | None:
        """How many processes run in the job now; None when the OS does not say."""
        if not self._handle:
            return 0
        ctypes, kernel32, _ntdll = _api()
        info = (ctypes.c_ulonglong * 6)()  # JOBOBJECT_BASIC_ACCOUNTING_INFORMATION: 4 times, then 4 counts
        if not kernel32.QueryInformationJobObject(
            self._handle, JOB_OBJECT_BASIC_ACCOUNTING_INFORMATION, info, ctypes.sizeof(info), None
        ):
            return None
        counts = (ctypes.c_uint32 * 4).from_buffer(info, 32)  # TotalPageFault, Total, Active, Terminated
        return int(counts[2])

    def close(self) -> None:
        """The command ended: what still runs in the job runs on (till a pause, or this process's
        exit: kill-on-close). Its handle is kept while something does, so that in_any_job still
        tells those processes (see the module's docstring)."""
        with _LOCK:
            self._released = True
            _prune(self)

    def _close_handle(self) -> None:
        with _LOCK:  # the command's thread and the tray's accept thread both prune
            _JOBS.discard(self)
            handle, self._handle = self._handle, None
        if handle:
            _api()[1].CloseHandle(handle)


_JOBS: set[ProcessJob] = set()  # this process's jobs: the running commands' and those with leftovers
_LOCK = threading.RLock()  # a handle is never closed while another thread asks about it
_UMBRELLA: int | None = None  # the tray's handle on its named job (gather_commands)


def _holds(job: int, process: int) -> bool | None:
    """Whether the process behind the handle `process` runs in `job` (or a job nested in it); None
    when the call failed (its out value then means nothing: under Wine, a limited handle)."""
    ctypes, kernel32, _ntdll = _api()
    from ctypes import wintypes

    inside = wintypes.BOOL(False)
    if not kernel32.IsProcessInJob(process, job, ctypes.byref(inside)):
        return None
    return bool(inside.value)


def umbrella_name(pipe_name: str) -> str:
    """The named job of the tray listening at `pipe_name`: one per user and data folder, as the pipe
    (`Local\\`: this logon session's), so that a server knows it from its own address."""
    return "Local\\" + pipe_name.rsplit("\\", 1)[-1] + "-commands"


def gather_commands(name: str) -> None:
    """The tray, as it starts to listen: make the named job every command it starts joins, with
    UMBRELLA_SDDL. Raises OSError when the name exists already, whatever holds it (fail closed: a
    program that took it first, outside the tray's jobs, would make servers trust a job that holds
    none of the tray's commands; red team 14), after GATHER_PATIENCE_S (a tray that just quit may
    still be ending), or when the job cannot be made."""
    deadline = time.monotonic() + GATHER_PATIENCE_S
    while True:
        try:
            _make_umbrella(name)
            return
        except FileExistsError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def let_go_of_commands() -> None:
    """The tray stops listening: the name of its named job is free for the next tray (one started
    right after `tray --quit`). What still runs ends with its own job, as the tray ends."""
    global _UMBRELLA
    with _LOCK:
        handle, _UMBRELLA = _UMBRELLA, None
    if handle:
        _api()[1].CloseHandle(handle)


def _make_umbrella(name: str) -> None:
    global _UMBRELLA
    ctypes, kernel32, _ntdll = _api()
    with _LOCK:
        if _UMBRELLA is not None:
            kernel32.CloseHandle(_UMBRELLA)  # a tray made anew in this process (another data folder)
            _UMBRELLA = None
        from ctypes import wintypes

        descriptor = ctypes.c_void_p()
        advapi32 = ctypes.WinDLL("advapi32", use_last_error=True)
        advapi32.ConvertStringSecurityDescriptorToSecurityDescriptorW.argtypes = [
            wintypes.LPCWSTR, wintypes.DWORD, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p
        ]  # fmt: skip
        if not advapi32.ConvertStringSecurityDescriptorToSecurityDescriptorW(
            UMBRELLA_SDDL, 1, ctypes.byref(descriptor), None
        ):
            raise ctypes.WinError(ctypes.get_last_error())
        try:
            handle = kernel32.CreateJobObjectW(ctypes.byref(security_attributes(descriptor)), name)
            error = ctypes.get_last_error()
        finally:
            kernel32.LocalFree(descriptor)
        if not handle:
            raise ctypes.WinError(error)
        if error == ERROR_ALREADY_EXISTS:
            kernel32.CloseHandle(handle)
            raise FileExistsError(error, f"another program holds {name}")
        _UMBRELLA = handle


def umbrella_answers(opened: bool, error: int) -> list[bool | None]:
    """What a process that does not hold the tray's named job adds to its questions about a peer when
    it opens it by name: nothing when there is none (no tray of this session runs), else an unsure
    answer when it cannot be opened (someone took the name: fail closed). Opened: asked in turn."""
    if opened or error == ERROR_FILE_NOT_FOUND:
        return []
    return [None]


def keeps_handle(released: bool, active_processes: int | None) -> bool:
    """Whether the tray keeps a job's handle: while its command runs, and after, while anything still
    runs in it or the OS will not say (unsure: keep telling its processes apart)."""
    return not released or active_processes is None or active_processes > 0


def peer_in_job(opened: bool, answers: list[bool | None]) -> bool:
    """The verdict on a peer from IsProcessInJob's answers, one per job (None: the call failed).
    Unsure counts as inside: such a peer may still pause and stop, and nothing else."""
    if not answers:
        return False  # no job: nothing can be in one
    return not opened or any(answer is not False for answer in answers)


def _prune(job: ProcessJob) -> None:
    if not keeps_handle(job._released, job.active_processes() if job._released else None):
        job._close_handle()


def end_jobs(*, running: bool = False) -> int:
    """A pause: end what finished commands left running in their jobs (`cmd &`), as
    start_files.end_lingering ends a lingering container on Linux (red team 13: a ticker left by a
    finished command wrote on after the pause). With `running`, the running commands' jobs too (the
    pause's backstop, when the loop that stops them gently, their output kept, is held up). How
    many jobs were ended."""
    with _LOCK:  # no handle is closed meanwhile
        jobs = [job for job in _JOBS if running or job._released]
        for job in jobs:
            job.terminate()
        for job in list(_JOBS):  # a headless server asks no in_any_job: ended jobs are let go here
            _prune(job)
    return len(jobs)


def left_behind() -> bool:
    """Whether a finished command's job is still held: something it left may run (a pause ends it)."""
    with _LOCK:
        for job in list(_JOBS):  # one whose last process ended is let go (else true for ever)
            _prune(job)
        return any(job._released for job in _JOBS)


def in_any_job(pid: int, umbrella: str) -> bool:
    """Whether `pid` runs in one of this process's command jobs or in the tray's named job `umbrella`
    (every command the tray started and all they started, detached ones too, also after their
    command ended): the tray asks its own handles, a server or the CLI opens the named job. A
    limited handle is tried after a full one (a peer of higher integrity); under Wine its call
    fails, which counts as inside."""
    with _LOCK:
        for job in list(_JOBS):
            _prune(job)
        ctypes, kernel32, _ntdll = _api()
        jobs = [job._handle for job in _JOBS if job._handle]
        held, opened_here, unsure = _UMBRELLA, None, []
        if held is None:
            opened_here = kernel32.OpenJobObjectW(JOB_OBJECT_QUERY, False, umbrella) or None
            error = ctypes.get_last_error()
            unsure = umbrella_answers(opened_here is not None, error)
            if unsure:  # another object took the name, or its rights were changed: said, not guessed
                log.warning("the tray's named job cannot be asked (%s): no peer is taken for the tray", error)
            held = opened_here
        try:
            if held is not None:
                jobs.append(held)
            if not jobs:
                return peer_in_job(True, unsure)
            process = kernel32.OpenProcess(PROCESS_QUERY_INFORMATION, False, pid) or kernel32.OpenProcess(
                PROCESS_QUERY_LIMITED_INFORMATION, False, pid
            )
            if not process:
                return peer_in_job(False, [None for _job in jobs])
            try:
                return peer_in_job(True, [*(_holds(job, process) for job in jobs), *unsure])
            finally:
                kernel32.CloseHandle(process)
        finally:
            if opened_here is not None:
                kernel32.CloseHandle(opened_here)


def job_for(pid: int, *, resume: bool = False) -> ProcessJob | None:
    """A job holding `pid`, or None when the OS refuses (the process already belongs to a job that
    forbids nesting, or is gone): then taskkill /T is all there is. `resume`: see ProcessJob."""
    try:
        return ProcessJob(pid, resume=resume)
    except OSError as exc:
        # It runs without a job: what it starts counts as the user's own (the tray then asks with a
        # confirm window instead of refusing), and Stop falls back to taskkill /T. Said in the log.
        log.warning("process %s could not join a job (%s): it runs without one", pid, exc)
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
