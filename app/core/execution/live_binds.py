"""Binding a path read-only inside a live container (Linux): a lone member of the protected set
that appeared or was replaced by rename after the container started (start_files.py).

A small helper process does it: it joins the container's user and mount namespaces (`setns`, which
wants a single-threaded caller: a fresh interpreter, never the server), binds each path onto itself
and remounts it read-only (checked here: `../shared/containment-notes.md`, section 1, "re-protect").
Nothing is ever made writable inside a live container: a command a person allowed to change a
member runs in a container of its own without that bind (commands/session_shell.py).
"""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Sequence

log = logging.getLogger(__name__)

HELPER_TIMEOUT_S = 10.0

# Run as `python -I -c HELPER <pid> paths...`: binds each path onto itself and remounts it
# read-only, keeping the flags it had.
HELPER = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWUSER, CLONE_NEWNS = 0x10000000, 0x00020000
MS_RDONLY, MS_REMOUNT, MS_BIND = 1, 32, 4096
KEPT = 2 | 4 | 8 | 1024 | 2048  # nosuid, nodev, noexec, noatime, nodiratime (statvfs = mount flags)

def check(ret, what):
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")

def join(pid, kind, flag):
    path = f"/proc/{pid}/ns/{kind}"
    if os.stat(path).st_ino == os.stat(f"/proc/self/ns/{kind}").st_ino:
        return  # already there (a container started by root shares the user namespace)
    fd = os.open(path, os.O_RDONLY)
    try:
        check(libc.setns(fd, flag), f"setns {kind}")
    finally:
        os.close(fd)

pid, paths = sys.argv[1], sys.argv[2:]
join(pid, "user", CLONE_NEWUSER)
join(pid, "mnt", CLONE_NEWNS)
for path in paths:
    raw = path.encode()
    check(libc.mount(raw, raw, None, MS_BIND, None), f"bind {path}")
    flags = os.statvfs(path).f_flag & KEPT
    check(libc.mount(None, raw, None, MS_REMOUNT | MS_BIND | MS_RDONLY | flags, None), f"remount {path}")
print("ok")
"""


def helper_argv(pid: int, paths: Sequence[str]) -> list[str]:
    return [sys.executable, "-I", "-c", HELPER, str(pid), *paths]


def protect(pid: int, paths: Sequence[str]) -> str | None:
    """Bind `paths` read-only in the container whose process `pid` is (its init); None when done,
    else what went wrong (blocking: a fresh interpreter, some 30 ms)."""
    try:
        done = subprocess.run(
            helper_argv(pid, paths), capture_output=True, text=True, timeout=HELPER_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    if done.returncode == 0 and done.stdout.strip() == "ok":
        return None
    problem = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
    log.warning("binding %s read-only in container %s failed: %s", list(paths), pid, problem)
    return problem
