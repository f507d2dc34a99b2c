"""execute_read_only_command's container: what a review left (writes under /run, device ioctls and
TIOCSTI, processes and memory).

Real containers: through the headless server in this process (tests/in_process_server.py) where the
tool's own path shows it, and through read_only.prefix_for, as running.run_read_only builds it, where
the server cannot: a caller that still has a terminal, and a user who is not root (the kernel exempts
root from the task limit; these tests run bwrap as `nobody` with setpriv). The decisions for kernels
this machine is not (Landlock ABIs, machines) are pure functions, tested with values.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile
import termios
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest

from app.core.execution import container, landlock, read_only, seccomp
from tests.in_process_server import serving
from tests.kernel_filters import late_mount_folder, verdict
from tests.test_read_only import look

pytestmark = pytest.mark.anyio

BWRAP = shutil.which("bwrap")
PERL = landlock.find_perl()
ABI = landlock.kernel_abi()
# The interpreter the venv was made from: a checkout under /tmp (CI's clone), its venv too, is
# hidden by the read-only tool's private /tmp.
PYTHON = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
needs_bwrap = pytest.mark.skipif(BWRAP is None, reason="bwrap is not installed (apt-get install -y bubblewrap)")
needs_check = pytest.mark.skipif(PERL is None or ABI < 1, reason="the Landlock check needs Perl and Landlock")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (a folder under /run, mount, setpriv)")
NOBODY = 65534
WAIT_S = 60


def contained(
    cwd: Path, command: str, *, user: int | None = None, launcher: Sequence[str] = (), **popen: Any
) -> subprocess.CompletedProcess[str]:
    """`command` in the read-only tool's container, its prefix built as running.run_read_only builds
    it, started through `launcher`; as `user` (setpriv) where given, with the prefix that user's
    server would build."""
    life = container.lifeline()
    rules = seccomp.filter_fd()
    assert rules is not None
    environ = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(cwd)}
    with pytest.MonkeyPatch.context() as patch:
        if user is not None:  # what os tells a server run by `user`: no capabilities to keep for root
            patch.setattr(os, "geteuid", lambda: user)
            patch.setattr(os, "getuid", lambda: user)
        prefix = read_only.prefix_for(
            read_only.Containment.BWRAP, str(cwd), str(cwd), environ, read_only.bwrap_here, life, seccomp_fd=rules
        )
    if user is not None:
        launcher = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *launcher]
    options: dict[str, Any] = {"stdin": subprocess.DEVNULL, "start_new_session": True, **popen}
    try:
        return subprocess.run(
            [*launcher, *prefix, "/bin/bash", "-c", command],
            capture_output=True,
            text=True,
            timeout=WAIT_S,
            pass_fds=(life, rules),
            cwd=cwd,
            env=environ,
            **options,
        )
    finally:
        os.close(rules)


@pytest.fixture
def shared_folder() -> Iterator[Path]:
    """A folder `nobody` can read (pytest's own are root's alone)."""
    folder = Path(tempfile.mkdtemp(dir="/var/tmp"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


# -- 1. A folder bound back under /run (or /tmp itself) ----------------------------------------------


@needs_bwrap
@needs_check
async def test_a_command_run_in_tmp_itself_starts_and_has_a_temporary_folder_of_its_own(home: Path) -> None:
    """With /tmp itself bound back (the working folder), the scratch folder that takes its place
    could not be made under it: bwrap said `Can't mkdir /tmp/.cowork-scratch` and nothing ran."""
    made = f"made-{uuid.uuid4().hex}"
    async with serving(home) as client:
        said = await look(client, f'f=$(mktemp) && echo kept > "$f" && cat "$f"; echo x > {made}', Path("/tmp"))
    assert said.get("stdout") == "kept\n", said
    assert "Read-only file system" in said.get("stderr", "") and not Path("/tmp", made).exists(), said


# -- 2. Device ioctls and TIOCSTI ---------------------------------------------------------------------


def test_the_ruleset_handles_device_ioctls_where_the_kernel_has_them() -> None:
    """Landlock ABI 5 (Linux 6.10) brought LANDLOCK_ACCESS_FS_IOCTL_DEV: handled, a device opened
    outside the private folders (bwrap's /dev among them) takes no device ioctl."""
    writes = 0x1FF2
    assert read_only.landlock_rights(0) == 0, "no Landlock: no ruleset"
    assert read_only.landlock_rights(1) == writes
    assert read_only.landlock_rights(2) == writes | 1 << 13, "renames across folders"
    assert read_only.landlock_rights(3) == read_only.landlock_rights(4) == writes | 1 << 13 | 1 << 14
    assert read_only.landlock_rights(5) == read_only.landlock_rights(7) == writes | 3 << 13 | read_only.IOCTL_DEV
    script = read_only.read_only_check("x86_64")
    assert "([1, 8178], [2, 8192], [3, 16384], [5, 32768])" in script, "the check computes the same rights"
    assert "syscall(302, 0, 6, 0, $was)" in script and "syscall(261, 0, 6" in read_only.read_only_check("aarch64")
    assert "if (0 > 0 &&" in read_only.read_only_check("riscv64"), "no task limit where prlimit64 is not known"
    assert "@" not in script.replace("@ARGV", "").replace("@writable", ""), "every value filled in"


def test_the_seccomp_filter_refuses_tiocsti_and_tioclinux_and_no_other_ioctl() -> None:
    """TIOCSTI types into a terminal, TIOCLINUX pastes into a console. The request is an unsigned int,
    so high bits set in the register must not pass (Flatpak's CVE-2019-10063)."""
    refused = seccomp.ERRNO | seccomp.EPERM
    for machine, arch, calls in (("x86_64", 0xC000003E, (16, 514 | seccomp.X32)), ("aarch64", 0xC00000B7, (29,))):
        code = seccomp.program(machine)
        assert code is not None
        for ioctl in calls:
            for request in (termios.TIOCSTI, termios.TIOCLINUX, termios.TIOCSTI | 1 << 32):
                assert verdict(code, arch, ioctl, 0, request) == refused, (machine, ioctl, hex(request))
            for request in (termios.TCGETS, termios.TCSETS, termios.TIOCGWINSZ, termios.FIONREAD):
                assert verdict(code, arch, ioctl, 0, request) == seccomp.ALLOW, (machine, hex(request))
        assert verdict(code, arch, 0, 0, termios.TIOCSTI) == seccomp.ALLOW, "only ioctl's second argument"


def legacy_tiocsti() -> bool:
    try:
        return Path("/proc/sys/dev/tty/legacy_tiocsti").read_text().strip() != "0"
    except OSError:
        return True  # older than Linux 6.2: always there


TYPE_INTO = (
    "import fcntl, os, termios\n"
    "for name in ('/dev/tty', 0):\n"
    "    try:\n"
    "        fd = os.open(name, os.O_RDONLY) if isinstance(name, str) else name\n"
    "        for c in b'typed\\n':\n"
    "            fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))\n"
    "        print(name, 'typed')\n"
    "    except OSError as e:\n"
    "        print(name, e.strerror)\n"
)


@needs_bwrap
@needs_check
@pytest.mark.skipif(not legacy_tiocsti(), reason="this kernel refuses TIOCSTI to everyone (dev.tty.legacy_tiocsti=0)")
def test_a_read_only_command_started_from_a_terminal_cannot_type_into_it(tmp_path: Path) -> None:
    """Both callers start the container in a session of its own; one that did not would hand the
    command the user's terminal, and TIOCSTI then typed into it (shown here without the fix: the
    terminal read `typed`). The check leaves the terminal's session and the filter refuses TIOCSTI."""
    master, slave = os.openpty()
    try:
        attributes = termios.tcgetattr(slave)
        attributes[3] &= ~(termios.ICANON | termios.ECHO)
        termios.tcsetattr(slave, termios.TCSANOW, attributes)
        command = f"{shlex.quote(PYTHON)} -c {shlex.quote(TYPE_INTO)}"
        launcher = ["setsid", "--ctty", "--wait"]  # the terminal becomes the container's controlling one
        done = contained(tmp_path, command, launcher=launcher, stdin=slave, start_new_session=False)
        os.set_blocking(slave, False)
        with contextlib.suppress(BlockingIOError):
            typed = os.read(slave, 100)
            pytest.fail(f"the command typed {typed!r} into the terminal: {done.stdout}")
        lines = done.stdout.splitlines()
        assert done.returncode == 0 and [line.split()[0] for line in lines] == ["/dev/tty", "0"], done
        assert "typed" not in done.stdout, done
    finally:
        os.close(master)
        os.close(slave)


PTY_UNLOCK = 0x40045431  # TIOCSPTLCK
PTY_NUMBER = 0x80045430  # TIOCGPTN


def running_with(token: str) -> bool:
    """Whether a process whose command line holds `token` runs (the container's bash, seen from here)."""
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if entry.name.isdigit() and token.encode() in (entry / "cmdline").read_bytes():
                return True
    return False


@needs_bwrap
@needs_check
@needs_root
@pytest.mark.skipif(ABI < 5, reason="device ioctls are Landlock's from ABI 5 (Linux 6.10)")
async def test_a_terminal_the_host_mounts_while_a_read_only_command_runs_keeps_its_settings(home: Path) -> None:
    """A file system the host mounts while the command runs is not remounted read-only nor nodev by
    bwrap (a review, 2026-12-05); opening a device there to read is no write for Landlock, and a
    device ioctl was not Landlock's to refuse: the command turned off the echo of a host program's
    terminal. Device ioctls are now allowed only under the private folders."""
    token = f"ct-{uuid.uuid4().hex}"
    change = (
        "import os, termios\n"
        "fd = os.open('m/0', os.O_RDONLY | os.O_NOCTTY)\n"
        "a = termios.tcgetattr(fd)\n"
        "a[3] &= ~termios.ECHO\n"
        "termios.tcsetattr(fd, termios.TCSANOW, a)\n"
        "print('changed')\n"
    )
    python = shlex.quote(PYTHON)
    command = f": {token}; until [ -e m/0 ]; do sleep 0.05; done; {python} -c {shlex.quote(change)}"
    fds: list[int] = []
    with late_mount_folder() as shared, contextlib.ExitStack() as closing:
        folder = shared.folder
        closing.callback(lambda: [os.close(fd) for fd in fds])
        async with serving(home) as client, anyio.create_task_group() as group:
            results: list[dict[str, Any]] = []

            async def change_later() -> None:
                results.append(await look(client, command, folder, timeout=30_000))

            group.start_soon(change_later)
            with anyio.fail_after(WAIT_S):
                while not running_with(token):  # the container is set up: what comes now is new to it
                    await anyio.sleep(0.05)
            options = "newinstance,ptmxmode=0666,mode=0600"
            shared.mount_later("-t", "devpts", "-o", options, "devpts")
            master = os.open(folder / "m" / "ptmx", os.O_RDWR | os.O_NOCTTY)  # a host program's terminal
            fds.append(master)
            fcntl.ioctl(master, PTY_UNLOCK, struct.pack("i", 0))
            number = struct.unpack("I", fcntl.ioctl(master, PTY_NUMBER, b"\0" * 4))[0]
            assert number == 0
            fds.append(os.open(folder / "m" / "0", os.O_RDWR | os.O_NOCTTY))
        said = results[0]
        assert termios.tcgetattr(fds[1])[3] & termios.ECHO, f"the terminal's echo was turned off: {said}"
        assert "changed" not in said.get("stdout", "") and "Permission denied" in said.get("stderr", ""), said


# -- 3. Processes and memory ------------------------------------------------------------------------


FORKS = (
    "import os, sys\n"
    "made = failed = 0\n"
    "r, w = os.pipe()\n"
    "for _ in range(int(sys.argv[1])):\n"
    "    try:\n"
    "        pid = os.fork()\n"
    "    except OSError:\n"
    "        failed += 1\n"
    "        continue\n"
    "    if pid == 0:\n"
    "        os.close(w)\n"
    "        os.read(r, 1)\n"  # each child waits for its parent's end
    "        os._exit(0)\n"
    "    made += 1\n"
    "print(made, failed)\n"
)
needs_nobody = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None or ABI < read_only.TASKS_ABI,
    reason="runs bwrap as nobody (setpriv, root) on Linux 5.19 or newer",
)


@needs_bwrap
@needs_check
@needs_nobody
def test_a_fork_bomb_stops_at_the_read_only_commands_own_limit_whatever_the_user_runs_outside(
    shared_folder: Path,
) -> None:
    """Nothing but the user's own limit (tens of thousands) and the time limit stopped a fork bomb.
    RLIMIT_NPROC, set inside the container's user namespace, counts that namespace's tasks only: the
    same user's processes outside do not use it up (300 here), and the command's own stop at it."""
    outside = subprocess.Popen(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "bash", "-c"]
        + ["for _ in $(seq 300); do sleep 60 & done; echo ready; wait"],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert outside.stdout is not None and outside.stdout.readline() == "ready\n"
        tries = read_only.MAX_TASKS + 200
        command = f"timeout 30 /usr/bin/python3 -c {shlex.quote(FORKS)} {tries}"
        done = contained(shared_folder, command, user=NOBODY)
    finally:
        os.killpg(outside.pid, 9)  # the group this test started: its bash and its 300 sleeps
        outside.wait()
    made, failed = (int(n) for n in done.stdout.split())
    assert read_only.MAX_TASKS - 10 <= made < read_only.MAX_TASKS, done
    assert failed == tries - made, done


@needs_bwrap
@needs_check
@needs_nobody
def test_everyday_read_only_commands_work_within_the_limits(shared_folder: Path) -> None:
    repo = shared_folder / "repo"
    repo.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    (repo / "notes.txt").write_text("alpha\nbeta\n")
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "first"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", str(repo)], check=True)
    node = "node -e 'console.log([1, 2].map(n => n * 2).join(\" \"))'; " if shutil.which("node") else ""
    commands = (
        "ulimit -u; cat /proc/self/oom_score_adj; git log --format=%s; grep -rn beta . --exclude-dir=.git; "
        f"{node}/usr/bin/python3 -c 'print(sum(range(5)))'"
    )
    done = contained(repo, commands, user=NOBODY)
    expected = [str(read_only.MAX_TASKS), "1000", "first", "./notes.txt:2:beta", *(["2 4"] if node else []), "10"]
    assert done.stdout.splitlines() == expected, done
    assert done.returncode == 0, done


@needs_bwrap
@needs_check
async def test_when_memory_runs_out_the_read_only_command_is_ended_first(home: Path, tmp_path: Path) -> None:
    """No memory limit is sound for one command (RLIMIT_AS and RLIMIT_DATA count reservations, which
    Go, the JVM and node make by the gigabyte, and bound one process, not its children); the
    out-of-memory killer is told to pick the read-only command before the user's programs."""
    async with serving(home) as client:
        said = await look(client, "cat /proc/self/oom_score_adj", tmp_path)
    assert said.get("stdout") == f"{read_only.OOM_SCORE_ADJ}\n", said
