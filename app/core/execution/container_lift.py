"""Making members of the protected set writable inside a live container, and read-only again (Linux).

The session's shell lives in one container for many commands (issue 21). When the user allows a
session command that changes a protected member, the read-only bind of that member is taken off
inside that container for the command, and put back when it ends. A small helper process does it:
it joins the container's user and mount namespaces (`setns`, which wants a single-threaded caller:
a fresh interpreter, never the server) and unmounts, or binds and remounts read-only, each path
(checked here: `../shared/containment-notes.md`, section 1, "re-protect").
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Iterable, Sequence

log = logging.getLogger(__name__)

HELPER_TIMEOUT_S = 10.0
LIFT, PROTECT = "lift", "protect"
# Members made writable, by container (its init's pid): start_files.py leaves them writable there.
LIFTED: dict[int, set[str]] = {}

# Run as `python -I -c HELPER <lift|protect> <pid> [paths...] -- [nested paths...]`. `lift` unmounts
# each path (which detaches what is mounted under it too) and protects the nested paths again;
# `protect` binds each path onto itself and remounts it read-only, keeping the flags it had.
HELPER = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWUSER, CLONE_NEWNS = 0x10000000, 0x00020000
MNT_DETACH, MS_RDONLY, MS_REMOUNT, MS_BIND = 2, 1, 32, 4096
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

def protect(path):
    raw = path.encode()
    check(libc.mount(raw, raw, None, MS_BIND, None), f"bind {path}")
    flags = os.statvfs(path).f_flag & KEPT
    check(libc.mount(None, raw, None, MS_REMOUNT | MS_BIND | MS_RDONLY | flags, None), f"remount {path}")

action, pid, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
cut = rest.index("--")
paths, nested = rest[:cut], rest[cut + 1:]
join(pid, "user", CLONE_NEWUSER)
join(pid, "mnt", CLONE_NEWNS)
for path in paths:
    if action == "lift":
        check(libc.umount2(path.encode(), MNT_DETACH), f"umount {path}")
    else:
        protect(path)
for path in nested:
    protect(path)
print("ok")
"""


def nested_members(members: Iterable[str], protected: Iterable[str]) -> list[str]:
    """The protected paths under `members` (unmounting a member detaches their binds too), shallow
    before deep, so that they are bound again after it."""
    lifted = list(members)
    found = {path for path in protected if any(path.startswith(member.rstrip("/") + "/") for member in lifted)}
    return sorted(found - set(lifted), key=lambda path: (path.count("/"), path))


def helper_argv(action: str, pid: int, members: Sequence[str], nested: Sequence[str]) -> list[str]:
    return [sys.executable, "-I", "-c", HELPER, action, str(pid), *members, "--", *nested]


def change(action: str, pid: int, members: Sequence[str], protected: Iterable[str]) -> str | None:
    """LIFT or PROTECT `members` in the container whose process `pid` is (its init); None when done,
    else what went wrong (blocking: a fresh interpreter, some 30 ms). A member inside another
    protected folder has no bind of its own (container.mount_args): there is nothing to change."""
    protected = list(protected)
    members = [m for m in members if not any(m.startswith(p.rstrip("/") + "/") for p in protected if p != m)]
    absent = [m for m in members if not os.path.lexists(m)]  # no bind to change: start_files guards it
    if action == LIFT:
        LIFTED.setdefault(pid, set()).update(absent)
    else:
        LIFTED.get(pid, set()).difference_update(absent)
    members = [m for m in members if m not in absent]
    if not members:
        return None
    argv = helper_argv(action, pid, members, nested_members(members, protected))
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=HELPER_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    if done.returncode == 0 and done.stdout.strip() == "ok":
        if action == LIFT:
            LIFTED.setdefault(pid, set()).update(members)
        else:
            LIFTED.get(pid, set()).difference_update(members)
        return None
    problem = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
    log.warning("%s of %s in container %s failed: %s", action, members, pid, problem)
    return problem
