"""Runs under Windows Python (the wine lane): a command started suspended joins its job before it runs,
and the job tells our commands (and what they start, detached too) from other processes.

Prints one JSON line: what ran, and IsProcessInJob's verdicts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

from app.core.execution import windows_jobs
from app.core.execution.executor import spawn_options

NO_TRAY = windows_jobs.umbrella_name(r"\\.\pipe\cowork-terminal-no-tray")  # own jobs only

DETACHED_PROCESS = 0x00000008
folder = tempfile.mkdtemp()
started = os.path.join(folder, "started")
grandchild = os.path.join(folder, "grandchild")
# The command writes a file as its first act, then starts a detached grandchild that reports its pid.
child_code = (
    "import os, subprocess, sys, time\n"
    f"open({started!r}, 'w').write(str(os.getpid()))\n"
    "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(20)'], creationflags=0x8)\n"
    f"open({grandchild!r}, 'w').write(str(p.pid))\n"
    "time.sleep(20)\n"
)
command = subprocess.Popen([sys.executable, "-c", child_code], **spawn_options("win32", suspended=True))
time.sleep(1.0)
ran_while_suspended = os.path.exists(started)
job = windows_jobs.job_for(command.pid, resume=True)
deadline = time.monotonic() + 30
while not os.path.exists(grandchild) and time.monotonic() < deadline:
    time.sleep(0.1)
time.sleep(0.5)
outsider = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(20)"])
with open(grandchild) as handle:
    grandchild_pid = int(handle.read())
report = {
    "ran_while_suspended": ran_while_suspended,
    "ran_after_resume": os.path.exists(started),
    "job": job is not None,
    "command_in_job": windows_jobs.in_any_job(command.pid, NO_TRAY),
    "detached_grandchild_in_job": windows_jobs.in_any_job(grandchild_pid, NO_TRAY),
    "outsider_in_job": windows_jobs.in_any_job(outsider.pid, NO_TRAY),
    "self_in_job": windows_jobs.in_any_job(os.getpid(), NO_TRAY),
}
if job is not None:
    command.kill()  # its command is gone; the detached grandchild runs on in the job
    command.wait()
    job.close()
    report["grandchild_in_job_after_close"] = windows_jobs.in_any_job(grandchild_pid, NO_TRAY)
    job.terminate()  # the handle was kept for the leftover, so this still ends it
    time.sleep(1.0)
    windows_jobs.in_any_job(os.getpid(), NO_TRAY)  # each check first lets go of jobs nothing runs in
    report["jobs_after_leftover_ended"] = len(windows_jobs._JOBS)
outsider.kill()
print(json.dumps(report))
