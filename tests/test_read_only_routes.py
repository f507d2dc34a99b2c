"""Five routes a red team (2026-12-05) found through execute_read_only_command, each shown real first.

With no container (tests/conftest.py `no_container`), only what the classifier proves read-only runs,
and it judged each safe: `ionice -c3 -p PID` changed a host process's I/O class, a redirect to
/dev/pts/N wrote to another terminal and `stty -F /dev/pts/N -echo` changed its settings, `flock FILE
true` made FILE, and `git status` on a tree whose file times changed rewrote .git/index. In the
container (root here, Landlock from Perl), a command that slept while the host mounted a file system
under its folder then changed a file's mode, times, owner, extended attributes and flags there:
Landlock judges only writes and makes, and the seccomp filter now refuses the rest.
"""

from __future__ import annotations

import fcntl
import json
import os
import platform
import shutil
import struct
import subprocess
import sys
import tempfile
import termios
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from app.core.classifier import Tier, classify
from app.core.execution import landlock, read_only, seccomp
from tests.in_process_server import serving
from tests.kernel_filters import late_mount_folder, verdict

pytestmark = pytest.mark.anyio

BWRAP = shutil.which("bwrap")


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


async def look(client: Client, command: str, cwd: Path) -> dict[str, Any]:
    result = await client.call_tool("execute_read_only_command", {"command": command, "cwd": str(cwd)})
    text = result.content[0].text
    return {"error": text} if result.is_error else json.loads(text)


def refused(result: dict[str, Any]) -> bool:
    """The classifier could not prove it read-only: the model is sent to execute_command."""
    return "cannot" in result.get("error", "") and "execute_command" in result["error"]


def safe(command: str) -> bool:
    return classify(command, cwd="/tmp").tier is Tier.SAFE


# -- 1. another process's scheduling ------------------------------------------------------------------


CHANGES_SCHEDULING = [
    "ionice -c3 -p 4242",
    "ionice -c3 -P 4242",
    "ionice -c3 -u 0",
    "ionice -n7 -u0",
    "ionice --class=idle --pid=4242",
    "ionice -tc3 -p4242",
    "ionice -p 4242 $MORE",  # `$MORE` may be `-c3`
    "chrt -f -p 5 4242",
    "chrt --pid 0 4242",
    "taskset -p 3 4242",
    "taskset -cp 0 4242",
    "taskset -p $PIDS",  # two words: a mask and a process
]
SHOWS_SCHEDULING = [
    "ionice -p 4242",
    "ionice -p 4242 4243",
    "ionice -c3 ls",  # its own command's
    "chrt -p 4242",
    "chrt -m",
    "taskset -p 4242",
    "taskset -p $$",
    "taskset -c 0 ls",
]


def test_changing_how_another_process_is_scheduled_is_not_read_only_showing_it_is() -> None:
    assert [command for command in CHANGES_SCHEDULING if safe(command)] == []
    assert [command for command in SHOWS_SCHEDULING if not safe(command)] == []


@pytest.mark.skipif(shutil.which("ionice") is None, reason="util-linux's ionice is not installed")
async def test_without_a_container_ionice_cannot_change_a_host_processs_io_class(
    home: Path, tmp_path: Path, no_container: None
) -> None:
    """Only processes this test starts are touched: the route is shown on one, refused on the other."""
    shown, target = (subprocess.Popen(["sleep", "60"]) for _ in range(2))
    try:
        before = subprocess.run(["ionice", "-p", str(target.pid)], capture_output=True, text=True).stdout
        subprocess.run(["ionice", "-c3", "-p", str(shown.pid)], check=True)
        changed = subprocess.run(["ionice", "-p", str(shown.pid)], capture_output=True, text=True).stdout
        assert changed.strip() == "idle" != before.strip(), "ionice -c3 -p really changes another process"
        async with serving(home) as client:
            result = await look(client, f"ionice -c3 -p {target.pid}", tmp_path)
        assert refused(result), result
        assert subprocess.run(["ionice", "-p", str(target.pid)], capture_output=True, text=True).stdout == before
    finally:
        for process in (shown, target):
            process.kill()
            process.wait()


# -- 2. another terminal ------------------------------------------------------------------------------


REACHES_A_TERMINAL = [
    "printf '\\033]52;c;cm0gLXJmIH4=\\a' > /dev/pts/7",  # OSC 52: sets the clipboard
    "echo hi > /dev/tty",
    "echo hi >> /dev/tty2",
    "echo hi > /dev/console",
    "echo hi | tee /dev/pts/7",
    "exec 3>/dev/pts/7",
    "tput clear > /dev/pts/7",
    "stty -F /dev/pts/7 -echo",
    "stty --file=/dev/pts/7 raw",
    "stty -echo < /dev/pts/7",
    "stty $SETTINGS",
    "tput reset < /dev/pts/7",
    "tput -Txterm init",
    "tput -S < caps.txt",
]
SHOWS_A_TERMINAL = [
    "stty -a",
    "stty -F /dev/pts/7 -a",
    "stty -F/dev/pts/7 -g",
    "stty size",
    "tput cols",
    "tput setaf 1",
    "echo hi > /dev/null",
    "echo hi >&2",
    "echo hi > /dev/stderr",
]


def test_writing_to_a_terminal_or_changing_its_settings_is_not_read_only() -> None:
    assert [command for command in REACHES_A_TERMINAL if safe(command)] == []
    assert [command for command in SHOWS_A_TERMINAL if not safe(command)] == []


def test_on_macos_the_read_only_tool_writes_to_its_own_terminal_and_no_other() -> None:
    """sandbox-exec's profile let every /dev/tty* be written: /dev/ttys001 is another terminal's."""
    profile = read_only.macos_profile()
    assert '(regex #"^/dev/tty")' not in profile and '(literal "/dev/tty")' in profile


@pytest.fixture
def terminals() -> Iterator[list[tuple[int, int, str]]]:
    """Two pseudo-terminals of the test's own (master, slave, the slave's name): one to show a
    route on, one for the read-only tool to try it on."""
    made = []
    for _ in range(2):
        master, slave = os.openpty()
        made.append((master, slave, os.ttyname(slave)))
    yield made
    for master, slave, _name in made:
        os.close(master)
        os.close(slave)


def pending(master: int) -> bytes:
    """What a program wrote to the terminal, as its master reads it (nothing: b"")."""
    os.set_blocking(master, False)
    try:
        return os.read(master, 1000)
    except BlockingIOError:
        return b""


def echoes(slave: int) -> bool:
    return bool(termios.tcgetattr(slave)[3] & termios.ECHO)


async def test_without_a_container_another_terminal_is_neither_written_to_nor_set(
    home: Path, tmp_path: Path, no_container: None, terminals: list[tuple[int, int, str]]
) -> None:
    (shown_master, shown_slave, shown), (master, slave, target) = terminals
    subprocess.run(["bash", "-c", f"printf pasted > {shown}; stty -F {shown} -echo"], check=True)
    assert pending(shown_master) == b"pasted" and not echoes(shown_slave), "both routes are real"
    async with serving(home) as client:
        written = await look(client, f"printf pasted > {target}", tmp_path)
        set_off = await look(client, f"stty -F {target} -echo", tmp_path)
        shown_settings = await look(client, f"stty -F {target} -a", tmp_path)
    assert refused(written) and refused(set_off), (written, set_off)
    assert pending(master) == b"" and echoes(slave)
    assert "echo" in shown_settings.get("stdout", ""), shown_settings


# -- 3. flock's lock file -----------------------------------------------------------------------------


def test_flock_naming_a_file_makes_it_and_is_not_read_only() -> None:
    names_a_file = ["flock made-by-flock true", "flock -x made -c true", "flock -w 5 /tmp/build.lock ls"]
    names_a_file.append("flock $ARGS")  # may be `FILE COMMAND`
    assert [command for command in names_a_file if safe(command)] == []
    assert safe("flock 3") and safe("flock -n 3") and safe("flock -u 3"), "a descriptor the shell opened"


@pytest.mark.skipif(shutil.which("flock") is None, reason="util-linux's flock is not installed")
async def test_without_a_container_flock_makes_no_lock_file(home: Path, tmp_path: Path, no_container: None) -> None:
    shown = tmp_path / "shown"
    shown.mkdir()
    subprocess.run(["flock", "made-by-flock", "true"], cwd=shown, check=True)
    assert (shown / "made-by-flock").exists(), "flock makes its lock file"
    async with serving(home) as client:
        result = await look(client, "flock made-by-flock true", tmp_path)
    assert refused(result), result
    assert not (tmp_path / "made-by-flock").exists()


# -- 4. git's optional locks --------------------------------------------------------------------------


def git(repo: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "GIT_OPTIONAL_LOCKS"}
    env |= {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def stat_dirty_repo(folder: Path) -> Path:
    """A repository whose one file has other times than its index says, and the same content: `git
    status` refreshes the index and, where it may take optional locks, writes it anew."""
    folder.mkdir()
    git(folder, "init", "-q")
    tracked = folder / "notes.txt"
    tracked.write_text("alpha\n")
    git(folder, "add", ".")
    git(folder, "commit", "-qm", "first")
    was = tracked.stat().st_mtime_ns
    os.utime(tracked, ns=(was - 60 * 10**9, was - 60 * 10**9))  # touched: its times change, not its content
    index = folder / ".git" / "index"
    os.utime(index, ns=(was - 3600 * 10**9, was - 3600 * 10**9))
    return folder


LIFTS_GIT_OPTIONAL_LOCKS = [
    "GIT_OPTIONAL_LOCKS=1 git status",
    "export GIT_OPTIONAL_LOCKS=1; git status",
    "env GIT_OPTIONAL_LOCKS=1 git status",
    "env -u GIT_OPTIONAL_LOCKS git status",
    "env --unset=GIT_OPTIONAL_LOCKS git status",
    "env -u $NAME git status",
    "env -i git status",
    "env - git status",
    "env --ignore-environment git status",
    "exec -c git status",
]


def test_a_command_that_sets_or_takes_away_git_optional_locks_is_not_read_only() -> None:
    assert [command for command in LIFTS_GIT_OPTIONAL_LOCKS if safe(command)] == []
    assert safe("git status --short") and safe("env -u PATH ls") and safe("exec git status")


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
async def test_without_a_container_git_status_leaves_the_index_of_a_stat_dirty_tree_alone(
    home: Path, tmp_path: Path, no_container: None
) -> None:
    shown = stat_dirty_repo(tmp_path / "shown")
    before = (shown / ".git" / "index").read_bytes()
    git(shown, "status", "--short")
    assert (shown / ".git" / "index").read_bytes() != before, "git status rewrites such an index"
    repo = stat_dirty_repo(tmp_path / "repo")
    index = repo / ".git" / "index"
    before, stamp = index.read_bytes(), index.stat().st_mtime_ns
    async with serving(home) as client:
        result = await look(client, "git status --short", repo)
    assert result.get("exitCode") == 0 and result["stdout"] == "", result
    assert index.read_bytes() == before and index.stat().st_mtime_ns == stamp
    assert not (repo / ".git" / "index.lock").exists()


# -- 5. a file's mode, owner, times and attributes, in the container ----------------------------------


# The calls by the kernel's tables: x86-64's (asm/unistd_64.h) and the generic one aarch64 uses
CHANGES_ATTRIBUTES = {
    "x86_64": {"chmod": 90, "fchmod": 91, "fchmodat": 268, "fchmodat2": 452, "chown": 92, "fchown": 93,
               "lchown": 94, "fchownat": 260, "setxattr": 188, "lsetxattr": 189, "fsetxattr": 190,
               "removexattr": 197, "lremovexattr": 198, "fremovexattr": 199, "setxattrat": 463,
               "removexattrat": 466, "file_setattr": 469},
    "aarch64": {"fchmod": 52, "fchmodat": 53, "fchmodat2": 452, "fchownat": 54, "fchown": 55, "setxattr": 5,
                "lsetxattr": 6, "fsetxattr": 7, "removexattr": 14, "lremovexattr": 15, "fremovexattr": 16,
                "setxattrat": 463, "removexattrat": 466, "file_setattr": 469},
}  # fmt: skip
SETS_TIMES = {"x86_64": {132: 1, 235: 1, 261: 2, 280: 2}, "aarch64": {88: 2}}  # the times argument
LEFT_ALONE = {"x86_64": {"read": 0, "getxattr": 191, "stat": 4, "openat": 257}, "aarch64": {"read": 63, "getxattr": 8}}
ARCHES = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}


def test_the_filter_refuses_a_files_mode_owner_attributes_and_given_times_and_allows_touching_it_now() -> None:
    eperm = seccomp.ERRNO | seccomp.EPERM
    pointer = 0x7FFD12345678
    for machine, arch in ARCHES.items():
        code = seccomp.program(machine)
        assert code is not None
        abis = [0, seccomp.X32] if machine == "x86_64" else [0]
        for abi in abis:
            for name, number in CHANGES_ATTRIBUTES[machine].items():
                assert verdict(code, arch, number | abi, pointer, 0o777) == eperm, (machine, abi, name)
            for number, at in SETS_TIMES[machine].items():
                args = [3, pointer, pointer, 0]
                args[at] = 0
                assert verdict(code, arch, number | abi, *args) == seccomp.ALLOW, "NULL: now (`touch FILE`)"
                args[at] = pointer
                assert verdict(code, arch, number | abi, *args) == eperm, "a time given (`touch -d`)"
                args[at] = 1 << 32
                assert verdict(code, arch, number | abi, *args) == eperm, "a pointer whose low half is 0"
            for name, number in LEFT_ALONE[machine].items():
                assert verdict(code, arch, number | abi, 3, pointer) == seccomp.ALLOW, (machine, name)
        ioctl = 16 if machine == "x86_64" else 29
        for request in (0x40086602, 0x40046602, 0x401C5820, 0x40087602, 0x40806685, 0xC0406618):
            assert verdict(code, arch, ioctl, 3, request) == eperm, hex(request)
            assert verdict(code, arch, ioctl, 3, 0xDEAD_BEEF_0000_0000 | request) == eperm, "the low 32 bits count"
        for request in (0x80086601, 0x801C581F, 0x5401):  # FS_IOC_GETFLAGS, FS_IOC_FSGETXATTR, TCGETS
            assert verdict(code, arch, ioctl, 3, request) == seccomp.ALLOW, hex(request)
        assert verdict(code, 0x40000003, CHANGES_ATTRIBUTES[machine]["fchmod"]) == seccomp.ERRNO | seccomp.EACCES
    assert verdict(seccomp.program("x86_64"), ARCHES["x86_64"], 514 | seccomp.X32, 3, 0x40046602) == eperm


FS_IOC_GETFLAGS = 0x80086601
FS_NODUMP_FL = 0x40
# What the command tries on the host's file, each said with its exit status. file_setattr (Linux
# 6.17, 469 on both machines) sets chattr's flags by path, with no ioctl.
CHANGES = (
    "chmod 0777 {f}; echo chmod=$?; touch -d 2001-01-01 {f}; echo touch=$?; chown 123:123 {f}; echo chown=$?; "
    "python3 -c \"import os; os.setxattr('{f}', 'user.x', b'1')\"; echo setxattr=$?; chattr +d {f}; echo chattr=$?; "
    'python3 -c "import ctypes, struct, sys; libc = ctypes.CDLL(None, use_errno=True); '
    "attr = ctypes.create_string_buffer(struct.pack('<QIIII', 0x80, 0, 0, 0, 0), 24); "
    "sys.exit(libc.syscall(469, -100, b'{f}', attr, 24, 0) != 0)\"; echo file_setattr=$?"
)
STEPS = ("chmod", "touch", "chown", "setxattr", "chattr", "file_setattr")


def state(path: Path) -> tuple[object, ...]:
    """Everything the command tried to change: mode, times, owner, extended attributes, flags."""
    info = path.stat()
    with open(path, "rb") as handle:
        flags = struct.unpack("<l", fcntl.ioctl(handle.fileno(), FS_IOC_GETFLAGS, b"\0" * 8)[:4])[0]
    return info.st_mode, info.st_mtime_ns, info.st_uid, info.st_gid, os.listxattr(path), flags & FS_NODUMP_FL


def statuses(stdout: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in stdout.splitlines() if "=" in line)


@pytest.mark.skipif(BWRAP is None, reason="bwrap is not installed")
@pytest.mark.skipif(landlock.find_perl() is None, reason="the Landlock check is Perl's")
@pytest.mark.skipif(os.geteuid() != 0, reason="mounting needs root")
@pytest.mark.skipif(platform.machine() not in seccomp.MACHINES, reason="no filter for this machine")
@pytest.mark.skipif(sys.platform != "linux" or shutil.which("chattr") is None, reason="e2fsprogs' chattr")
async def test_a_file_on_a_file_system_mounted_while_the_command_waits_keeps_its_mode_owner_times_and_attributes(
    home: Path,
) -> None:
    """The red team's route: the host mounted a tmpfs under the command's folder while it slept (a
    shared mount: systemd's `/` is), and what Landlock does not judge went through to the host's
    file. Shown real first: the same commands change a file there when the host runs them."""
    with late_mount_folder() as shared:
        folder = shared.folder
        async with serving(home) as client, anyio.create_task_group() as group:
            results: list[dict[str, Any]] = []

            async def change_later() -> None:
                results.append(await look(client, "sleep 1.5; " + CHANGES.format(f="m/f"), folder))

            group.start_soon(change_later)
            await anyio.sleep(0.7)  # the command runs: the host mounts a file system under it
            shared.mount_later("-t", "tmpfs", "tmpfs")
            for name in ("f", "g"):
                (folder / "m" / name).write_text("the host's\n")
            kept = state(folder / "m" / "f")
        shown = subprocess.run(["bash", "-c", CHANGES.format(f="m/g")], cwd=folder, capture_output=True, text=True)
        assert statuses(shown.stdout) == dict.fromkeys(STEPS, "0"), shown
        assert state(folder / "m" / "g") != kept, "on that file system, each route changes a file"
        said = statuses(results[0].get("stdout", ""))
        assert said.keys() == set(STEPS) and "0" not in said.values(), results
        assert "Operation not permitted" in results[0]["stderr"], results
        assert state(folder / "m" / "f") == kept


@pytest.mark.skipif(BWRAP is None, reason="bwrap is not installed")
@pytest.mark.skipif(platform.machine() not in seccomp.MACHINES, reason="no filter for this machine")
async def test_everyday_read_only_commands_still_run_in_the_filtered_container_and_touch_d_does_not(
    home: Path,
) -> None:
    """In a folder outside /tmp: one under it is bound back, which leaves /tmp unwritable (Landlock)."""
    repo = Path(tempfile.mkdtemp(dir="/var/tmp"))
    try:
        await everyday_commands(home, repo)
    finally:
        shutil.rmtree(repo)


async def everyday_commands(home: Path, repo: Path) -> None:
    git(repo, "init", "-q")
    (repo / "notes.txt").write_text("alpha\nbeta\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "first")
    node = "node -e 'console.log(6 * 7)'" if shutil.which("node") else "echo 42"
    everyday = (
        "git log --format=%s && grep -rn beta --exclude-dir=.git . && ls -la | grep -c notes && "
        f"python3 -c 'print(2 + 3)' && {node} && touch /tmp/x && ls /tmp/x && f=$(mktemp) && echo kept > $f && "
        "cat $f && d=$(mktemp -d) && test -d $d && echo done"
    )
    async with serving(home) as client:
        ran = await look(client, everyday, repo)
        dated = await look(client, "touch /tmp/y && touch -d 2001-01-01 /tmp/y", repo)
        made_runnable = await look(client, "touch /tmp/run.sh && chmod +x /tmp/run.sh", repo)
    assert ran.get("exitCode") == 0, ran
    assert ran["stdout"] == "first\n./notes.txt:2:beta\n1\n5\n42\n/tmp/x\nkept\ndone\n", ran
    for result in (dated, made_runnable):
        assert result.get("exitCode") != 0 and "Operation not permitted" in result.get("stderr", ""), result
        assert "execute_command" in result.get("note", ""), "the model is told which tool can"


# -- the host's audit log ---------------------------------------------------------------------------------

# A user message to the kernel's audit (AUDIT_USER, 1107), asking for its answer: the answer's error
# code is printed (0: written into the host's audit log; -1: EPERM).
AUDIT_SCRIPT = (
    "import socket, struct\n"
    "s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 9)\n"
    "text = b'cowork-terminal-test'\n"
    "s.sendto(struct.pack('=IHHII', 16 + len(text), 1107, 1 | 4, 1, 0) + text, (0, 0))\n"
    "answer = s.recv(4096)\n"
    "print(struct.unpack('=H', answer[4:6])[0], struct.unpack('=i', answer[16:20])[0])\n"
)


@pytest.mark.skipif(shutil.which("bwrap") is None or os.geteuid() != 0, reason="bwrap, and root's capabilities")
async def test_roots_read_only_command_cannot_write_into_the_hosts_audit_log(home: Path, tmp_path: Path) -> None:
    """A red team, 2026-12-05: as root, a read-only command sent audit records the host's kernel log
    showed (the audit socket is the host's in every network namespace), and could flood it."""
    (tmp_path / "audit.py").write_text(AUDIT_SCRIPT)
    async with serving(home) as client:
        said = await look(client, "python3 audit.py", tmp_path)
    assert said.get("stdout") == "2 -1\n", said  # NLMSG_ERROR, EPERM
