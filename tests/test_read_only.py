"""execute_read_only_command (issue 22): it looks around and cannot change anything.

The platform decisions are pure functions, tested with each platform's values; the promise is
tested for real on Linux, through the headless server (in this process, tests/in_process_server.py,
or one shared `serve` for the write attempts), with bwrap (the kernel enforces it), and with no bwrap
on PATH (only what the classifier proves read-only runs). Commands run in a real bash in the real
containers; they inherit this process's environment, so a test sets a variable (XDG_RUNTIME_DIR,
PATH) with monkeypatch. Each attack is shown to have run (its own error in stderr) before the test
checks that nothing changed.
"""

from __future__ import annotations

import ctypes
import http.server
import json
import os
import platform
import shutil
import socket
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from app.core import paths
from app.core.classifier import Tier, classify
from app.core.execution import landlock, read_only, seccomp
from app.core.execution.read_only import Containment
from app.core.journal.store import Journal, Status
from app.core.paths import AppPaths
from tests.in_process_server import serving
from tests.kernel_filters import late_mount_folder, verdict

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module scope: the write attempts share one server (conftest's `shared_server`), each in its own repo."""
    return "asyncio"


BWRAP = shutil.which("bwrap")
needs_bwrap = pytest.mark.skipif(BWRAP is None, reason="bwrap is not installed (apt-get install -y bubblewrap)")


# -- pure decisions ---------------------------------------------------------------------------------


def test_linux_with_bwrap_is_contained_by_the_kernel_and_without_it_by_the_classifier() -> None:
    assert read_only.containment("linux", lambda name: f"/usr/bin/{name}", lambda p: False) is Containment.BWRAP
    assert read_only.containment("linux", lambda name: None, lambda p: False) is Containment.CLASSIFIER


def test_macos_uses_sandbox_exec_and_windows_the_classifier() -> None:
    on_mac = read_only.containment("darwin", lambda name: None, lambda p: p == "/usr/bin/sandbox-exec")
    assert on_mac is Containment.SANDBOX_EXEC
    assert read_only.containment("darwin", lambda name: None, lambda p: False) is Containment.CLASSIFIER
    assert read_only.containment("win32", lambda name: "C:/x.exe", lambda p: True) is Containment.CLASSIFIER


def test_the_runtime_folder_is_found_even_when_the_client_did_not_pass_its_variable() -> None:
    exists = {"/run/user/1000", "/run/user/1001"}.__contains__
    assert paths.runtime_dir({"XDG_RUNTIME_DIR": "/run/user/1001"}, 1000, exists) == "/run/user/1001"
    assert paths.runtime_dir({}, 1000, exists) == "/run/user/1000"
    assert paths.runtime_dir({"XDG_RUNTIME_DIR": "relative"}, 7, exists) is None


def test_bwrap_makes_everything_read_only_hides_tmp_the_network_and_the_session_sockets() -> None:
    argv = read_only.bwrap_prefix("/usr/bin/bwrap", "/home/ana/project", "/run/user/1000", ["/home/ana"], lifeline_fd=9)
    joined = " ".join(argv)
    assert argv[:5] == ["/usr/bin/bwrap", "--ro-bind", "/", "/", "--dev"]
    for part in (
        "--tmpfs /tmp",
        "--tmpfs /run ",
        "--tmpfs /run/user/1000",
        "--unshare-net",
        "--unshare-pid",
        "--unshare-ipc",
    ):  # System V's objects of host programs (red team, 2026-12-04)
        assert part in joined
    tail = argv[argv.index("--") - 2 :]
    assert tail[:3] == ["--chdir", "/home/ana/project", "--"]
    assert tail[-2:] == ["cowork-check", "9"], "the command starts only while its starter lives (the lifeline)"
    assert "--bind" not in argv, "nothing is bound writable"
    kernel = ["--ro-bind", "/proc/sys", "/proc/sys"]  # read-only anyway: root writes it without a capability
    assert any(argv[k : k + 3] == kernel for k in range(len(argv))), "the kernel's settings stay read-only"
    assert argv.count("--ro-bind") == 3, "/, the kernel's settings and sysfs: folders outside /tmp need no binding back"


def test_a_folder_under_tmp_is_bound_back_read_only_and_the_sockets_are_hidden_after_it() -> None:
    argv = read_only.bwrap_prefix("bwrap", "/tmp/work", "/tmp/work/run", [], lifeline_fd=9)
    assert argv.index("--ro-bind", 1) < argv.index("/tmp/work/run"), "the runtime folder is hidden last"
    assert argv[argv.index("/tmp/work") - 1 : argv.index("/tmp/work") + 2] == ["--ro-bind", "/tmp/work", "/tmp/work"]


def test_the_macos_profile_denies_writes_and_the_network() -> None:
    profile = read_only.macos_profile()
    assert "(deny file-write*)" in profile and "(deny network*)" in profile
    assert "(deny appleevent-send)" in profile, "no other app may write for it"
    assert read_only.sandbox_exec_prefix()[:2] == ["/usr/bin/sandbox-exec", "-p"]


# -- real servers -----------------------------------------------------------------------------------


async def look(client: Client, command: str, cwd: Path, **extra: Any) -> dict[str, Any]:
    result = await client.call_tool("execute_read_only_command", {"command": command, "cwd": str(cwd), **extra})
    text = result.content[0].text
    return {"error": text} if result.is_error else json.loads(text)


def git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    git(folder, "init", "-q")
    (folder / "notes.txt").write_text("alpha\nbeta\n")
    (folder / "sub").mkdir()
    (folder / "sub" / "deep.txt").write_text("beta deep\n")
    git(folder, "add", ".")
    git(folder, "commit", "-qm", "first")
    (folder / "notes.txt").write_text("alpha\nbeta\ngamma\n")  # a change for git status and diff
    return folder


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@needs_bwrap
@pytest.mark.xdist_group("read-only-shared-serve")
async def test_the_tool_is_offered_as_read_only_and_not_destructive(shared_server: Client) -> None:
    tools = {t.name: t for t in (await shared_server.list_tools()).tools}
    tool = tools["execute_read_only_command"]
    assert tool.annotations.read_only_hint is True and tool.annotations.destructive_hint is False
    assert set(tool.input_schema["properties"]) == {"command", "cwd", "timeout"}
    assert "execute_read_only_command" in tools["execute_command"].description, "it points the model here"


@needs_bwrap
async def test_looking_around_works_ls_cat_grep_git_and_find(home: Path, paths: AppPaths, repo: Path) -> None:
    async with serving(home) as client:
        listed = await look(client, "ls", repo)
        shown = await look(client, "cat notes.txt", repo)
        found = await look(client, "grep -rn beta . --exclude-dir=.git | sort", repo)
        status = await look(client, "git status --short", repo)
        logged = await look(client, "git log --format=%s", repo)
        diff = await look(client, "git diff --stat", repo)
        files = await look(client, "find . -name '*.txt' -not -path './.git/*' | sort", repo)
    assert listed["stdout"] == "notes.txt\nsub\n" and listed["exitCode"] == 0
    assert shown["stdout"] == "alpha\nbeta\ngamma\n"
    assert found["stdout"] == "./notes.txt:2:beta\n./sub/deep.txt:1:beta deep\n"
    assert status["stdout"] == " M notes.txt\n" and logged["stdout"] == "first\n"
    assert "notes.txt | 1 +" in diff["stdout"]
    assert files["stdout"] == "./notes.txt\n./sub/deep.txt\n"
    assert not (repo / ".git" / "index.lock").exists()
    with Journal.open(paths) as journal:
        tools = {row.tool for row in journal.recent_commands()}
    assert tools == {"execute_read_only_command"}, "each is journaled (and shown in the log) as this tool"


WRITES = [
    ("echo new > made.txt", "Read-only file system"),
    ("echo more >> notes.txt", "Read-only file system"),
    ("echo x | tee made.txt", "Read-only file system"),
    ("python3 -c \"open('made.txt', 'w')\"", "Errno 30"),
    ("sed -i s/alpha/omega/ notes.txt", "sed"),
    ("rm notes.txt", "Read-only file system"),
    ("mkdir made", "Read-only file system"),
    ("git commit -qam sneaky", "index.lock"),
    ("git branch other", "Read-only file system"),
    ("mv notes.txt moved.txt", "Read-only file system"),
    ("cp notes.txt sub/copy.txt", "Read-only file system"),
]


@needs_bwrap
@pytest.mark.parametrize(("command", "evidence"), WRITES, ids=[c for c, _ in WRITES])
@pytest.mark.xdist_group("read-only-shared-serve")
async def test_no_route_creates_changes_or_deletes_a_file(
    shared_server: Client, repo: Path, command: str, evidence: str
) -> None:
    before = snapshot(repo)
    result = await look(shared_server, command, repo)
    assert result["status"] == "finished" and evidence in result["stderr"], f"the attack ran: {result}"
    assert result["exitCode"] != 0
    assert snapshot(repo) == before
    assert "execute_command" in result["note"], "the model is told which tool can write"


@pytest.fixture
def listener() -> Iterator[list[str]]:
    """An HTTP server on the host's loopback that records every request it gets."""
    got: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            got.append(self.path)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    got.append(str(server.server_address[1]))  # the port, first
    yield got
    server.shutdown()


@needs_bwrap
async def test_the_network_is_out_of_reach_even_on_loopback(home: Path, repo: Path, listener: list[str]) -> None:
    port = listener[0]
    post = f"curl -sS -X POST -d x http://127.0.0.1:{port}/leak"
    async with serving(home) as client:
        blocked = await look(client, post, repo)
        control = await client.call_tool("execute_command", {"command": post})
    assert not control.is_error and listener[1:] == ["/leak"], "the same request reaches it from execute_command"
    assert blocked["exitCode"] != 0 and "Failed to connect" in blocked["stderr"], blocked
    assert listener[1:] == ["/leak"], "nothing more arrived"
    assert "execute_command" in blocked["note"]


@needs_bwrap
async def test_a_session_socket_in_the_runtime_folder_cannot_be_reached(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    bus = socket.socket(socket.AF_UNIX)
    bus.bind(str(runtime / "bus"))
    bus.listen()
    bus.settimeout(0.5)
    # 1 is AF_UNIX: code that names it is held as a hand-off by the classifier; this is the container's test.
    # AF_UNIX as a sum: the classifier holds it by its name and its number, and the container alone is tested
    reach = f"python3 -c \"import socket; socket.socket(0 + 1).connect('{runtime / 'bus'}')\""
    try:
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
        async with serving(home) as client:
            result = await look(client, reach, tmp_path)
            seen = await look(client, f"test -e {runtime / 'bus'} && echo there || echo hidden", tmp_path)
        assert result.get("exitCode", 0) != 0, result  # no such file, and no Unix socket either (seccomp)
        assert seen.get("stdout") == "hidden\n", seen
        with pytest.raises(TimeoutError):
            bus.accept()
    finally:
        bus.close()


IO_URING_SETUP = (
    'python3 -c "import ctypes; libc = ctypes.CDLL(None, use_errno=True); params = (ctypes.c_char * 120)(); '
    'print(libc.syscall(425, 8, params), ctypes.get_errno())"'
)


def test_the_seccomp_filter_refuses_unix_and_vsock_sockets_io_uring_and_keyrings_and_nothing_else() -> None:
    """A classic BPF program, 8 bytes an instruction, read by bwrap `--seccomp FD`, run here as the
    kernel runs it. Keyrings: a review (2026-12-05) read, invalidated and planted the host's keys."""
    refused, missing = seccomp.ERRNO | seccomp.EACCES, seccomp.ERRNO | seccomp.ENOSYS
    for machine, arch, socket_call, keyrings, read in (
        ("x86_64", 0xC000003E, 41, (248, 249, 250), 0),
        ("aarch64", 0xC00000B7, 198, (217, 218, 219), 63),
    ):
        code = seccomp.program(machine)
        assert code is not None
        numbers = [socket_call] + ([socket_call | seccomp.X32] if machine == "x86_64" else [])
        for number in numbers:
            assert verdict(code, arch, number, 1) == refused, "AF_UNIX"
            assert verdict(code, arch, number, 40) == refused, "AF_VSOCK: to the hypervisor's host"
            assert verdict(code, arch, number, 2) == seccomp.ALLOW, "AF_INET: only loopback in its namespace"
        for number in (425, 426, 427, *keyrings):
            assert verdict(code, arch, number) == missing, number
        assert verdict(code, arch, read, 1) == seccomp.ALLOW, "read(1, ...): the first argument matters only to socket"
        assert verdict(code, 0x40000003, socket_call) == refused, "another architecture's calls cannot be read"
    assert verdict(seccomp.program("x86_64"), 0xC000003E, 250 | seccomp.X32) == missing, "x32's keyctl"
    assert seccomp.program("riscv64") is None, "unknown table: no filter rather than a wrong one"
    argv = read_only.bwrap_prefix("bwrap", "/w", None, lifeline_fd=9, seccomp_fd=11)
    assert argv[argv.index("--seccomp") + 1] == "11"


@needs_bwrap
@pytest.mark.skipif(landlock.find_perl() is None, reason="the Landlock check is Perl's")
@pytest.mark.parametrize("place", ["/var/tmp", "/tmp", "/run"])
async def test_a_named_pipe_of_the_host_cannot_be_written_while_the_private_folders_still_can(
    place: str, home: Path, tmp_path: Path
) -> None:
    """A review, 2026-12-05: opening a named pipe to write is allowed on a read-only mount, so a host
    program reading one received what the read-only tool wrote. A Landlock ruleset now lets the
    command write only under its private /tmp, /dev and /run; and since Landlock's rules reach across
    mounts, a working folder bound back under /tmp (pytest's own) leaves /tmp unwritable and TMPDIR a
    scratch folder of the command's own (a review of the fix). So with a working folder under /run (a
    USB stick's, /run/media/...): /run is not writable then."""
    if place == "/run" and os.geteuid() != 0:
        pytest.skip("a folder under /run needs root")
    under_tmp = place == "/tmp"
    folder = tmp_path if under_tmp else Path(tempfile.mkdtemp(prefix="ct-test-", dir=place))
    fifo = folder / "ctl"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # the host program, listening
    try:
        async with serving(home) as client:
            written = await look(client, "echo 'from the read-only tool' > ctl", folder)
            private = await look(client, 'f=$(mktemp) && echo kept > "$f" && cat "$f" && echo gone > /dev/null', folder)
        assert written.get("exitCode") != 0 and "Permission denied" in written.get("stderr", ""), written
        assert os.read(reader, 100) == b"", "nothing came through the pipe"
        assert private.get("stdout") == "kept\n" and private.get("exitCode") == 0, private
    finally:
        os.close(reader)
        if not under_tmp:
            shutil.rmtree(folder)


@needs_bwrap
@pytest.mark.skipif(landlock.find_perl() is None, reason="the Landlock check is Perl's")
@pytest.mark.skipif(os.geteuid() != 0, reason="mounting needs root")
async def test_a_file_system_the_host_mounts_while_a_read_only_command_runs_cannot_be_written(home: Path) -> None:
    """A review, 2026-12-05: bwrap remounts read-only only what is mounted as it starts; a file system
    the host mounted meanwhile (a USB stick, sshfs) reached the command writable, through a shared
    mount (systemd's `/` is shared). Landlock's ruleset judges the path, whatever is mounted there."""
    with late_mount_folder() as shared:
        folder = shared.folder
        async with serving(home) as client, anyio.create_task_group() as group:
            results: list[dict[str, Any]] = []

            async def write_later() -> None:
                command = "sleep 1.5; echo pwned > m/written; echo $?"
                results.append(await look(client, command, folder))

            group.start_soon(write_later)
            await anyio.sleep(0.7)  # the command runs: the host mounts a file system under it
            shared.mount_later("-t", "tmpfs", "tmpfs")
        assert not (folder / "m" / "written").exists(), results
        assert "Permission denied" in results[0].get("stderr", ""), results


def test_the_read_only_check_is_perls_landlock_one_where_there_is_perl_and_bashs_without() -> None:
    with_perl = read_only.bwrap_prefix("bwrap", "/w", "/run/user/1000", lifeline_fd=9, perl="/usr/bin/perl")
    check = with_perl[with_perl.index("--", with_perl.index("--chdir")) + 1 :]
    assert check[:2] == ["/usr/bin/perl", "-e"]
    assert check[3:] == ["--", "9", "/dev", "/tmp", "/run", "/run/user/1000", "--"], "the lifeline, what may be written"
    assert with_perl[with_perl.index("--setenv") + 1 : with_perl.index("--setenv") + 3] == ["PERL_BADLANG", "0"]
    under_tmp = read_only.bwrap_prefix("bwrap", "/tmp/w", None, lifeline_fd=9, perl="/usr/bin/perl")
    check = under_tmp[under_tmp.index("--", under_tmp.index("--chdir")) + 1 :]
    assert check[3:] == ["--", "9", "/dev", "/run", read_only.SCRATCH, "--"], "not /tmp, where /tmp/w is bound back"
    assert under_tmp[under_tmp.index("TMPDIR") - 1 :][:3] == ["--setenv", "TMPDIR", read_only.SCRATCH]
    without = read_only.bwrap_prefix("bwrap", "/w", None, lifeline_fd=9)
    assert without[-2:] == ["cowork-check", "9"] and "--setenv" not in without


KEYRINGS = (
    'python3 -c "import ctypes; libc = ctypes.CDLL(None, use_errno=True); '
    "added = libc.syscall(248, b'user', b'ro-planted', b'x', 1, -3); print(added, ctypes.get_errno()); "
    "found = libc.syscall(250, 10, -3, b'user', b'{name}', 0); print(found, ctypes.get_errno()); "
    'import socket; socket.socket(40, socket.SOCK_STREAM)"'
)


@needs_bwrap
@pytest.mark.skipif(platform.machine() != "x86_64", reason="the call numbers are x86-64's")
async def test_a_read_only_command_neither_reads_nor_plants_a_key_nor_makes_a_vsock_socket(
    home: Path, tmp_path: Path
) -> None:
    """A review, 2026-12-05: keyrings are not namespaced, so the read-only tool read a secret the host
    kept in its session keyring, invalidated it and planted a key the host saw afterwards."""
    libc = ctypes.CDLL(None, use_errno=True)
    name = f"ro-victim-{os.getpid()}".encode()
    key = libc.syscall(248, b"user", name, b"host secret", 11, -3)  # KEY_SPEC_SESSION_KEYRING
    if key < 0:
        pytest.skip(f"no session keyring here (errno {ctypes.get_errno()})")
    try:
        async with serving(home) as client:
            said = await look(client, KEYRINGS.format(name=name.decode()), tmp_path)
        lines = said.get("stdout", "").splitlines()
        assert lines[:2] == ["-1 38", "-1 38"], said
        assert "PermissionError" in said.get("stderr", ""), said
        assert libc.syscall(250, 10, -3, b"user", b"ro-planted", 0) < 0, "nothing was planted"
        assert libc.syscall(250, 10, -3, b"user", name, 0) == key, "the host's key is still there"
    finally:
        libc.syscall(250, 21, key)  # KEYCTL_INVALIDATE


@needs_bwrap
async def test_a_socket_in_the_home_folder_cannot_be_reached_and_a_socket_pair_still_works(
    home: Path, tmp_path: Path
) -> None:
    """Red team, 2026-12-04: a read-only mount does not stop connect(): a daemon listening in the home
    folder (Docker Desktop's) wrote a file for the read-only tool. No Unix socket can be made in it now."""
    daemon = socket.socket(socket.AF_UNIX)
    daemon.bind(str(tmp_path / "daemon.sock"))
    daemon.listen()
    daemon.settimeout(0.5)
    reach = "python3 -c \"import socket; socket.socket(0 + 1).connect('daemon.sock')\""
    pair = "python3 -c \"import socket; a, b = socket.socketpair(); a.send(b'ok'); print(b.recv(2).decode())\""
    try:
        async with serving(home) as client:
            control = await client.call_tool("execute_command", {"command": reach, "cwd": str(tmp_path)})
            daemon.accept()[0].close()  # execute_command reaches it: the route is real
            result = await look(client, reach, tmp_path)
            paired = await look(client, pair, tmp_path)
            ring = await look(client, IO_URING_SETUP, tmp_path)
        assert not control.is_error and json.loads(control.content[0].text)["exitCode"] == 0
        assert result.get("exitCode", 0) != 0 and "Permission denied" in result.get("stderr", ""), result
        with pytest.raises(TimeoutError):
            daemon.accept()
        assert paired.get("stdout") == "ok\n", paired
        # io_uring's own socket and connect operations pass by socket(): a red team reached the
        # daemon that way (2026-12-04); the ring cannot be made.
        assert ring.get("stdout") == "-1 38\n", ring
    finally:
        daemon.close()


@needs_bwrap
@pytest.mark.skipif(shutil.which("ipcmk") is None, reason="util-linux's ipcmk is not installed")
async def test_a_host_programs_shared_memory_cannot_be_removed(home: Path, tmp_path: Path) -> None:
    """Red team, 2026-12-04: `ipcrm -m ID` from the read-only tool removed a host program's System V
    segment (X's MIT-SHM, a database's); it runs in an IPC namespace of its own now."""
    made = subprocess.run(["ipcmk", "-M", "4096"], capture_output=True, text=True, check=True)
    segment = made.stdout.split(":")[-1].strip()
    try:
        async with serving(home) as client:
            seen = await look(client, f"ipcs -m | grep -c ' {segment} ' || true", tmp_path)
            await look(client, f"ipcrm -m {segment}", tmp_path)
        listed = subprocess.run(["ipcs", "-m"], capture_output=True, text=True, check=True).stdout
        assert f" {segment} " in listed, "the host's segment is still there"
        assert seen.get("stdout", "").strip() == "0", seen
    finally:
        subprocess.run(["ipcrm", "-m", segment], capture_output=True)


@needs_bwrap
async def test_a_system_socket_under_run_cannot_be_reached(home: Path, tmp_path: Path) -> None:
    if os.geteuid() != 0 and not os.access("/run", os.W_OK):
        pytest.skip("this test puts a socket in /run, which only root may write")
    path = Path(f"/run/cowork-terminal-test-{os.getpid()}.sock")  # where the system bus and docker.sock live
    daemon = socket.socket(socket.AF_UNIX)
    daemon.bind(str(path))
    daemon.listen()
    daemon.settimeout(0.5)
    reach = f"python3 -c \"import socket; socket.socket(0 + 1).connect('{path}')\""
    try:
        async with serving(home) as client:
            control = await client.call_tool("execute_command", {"command": reach})
            daemon.accept()[0].close()  # execute_command reaches it: the route is real
            result = await look(client, reach, tmp_path)
            seen = await look(client, f"test -e {path} && echo there || echo hidden", tmp_path)
        assert not control.is_error and json.loads(control.content[0].text)["exitCode"] == 0
        assert result.get("exitCode", 0) != 0, result  # no such file, and no Unix socket either (seccomp)
        assert seen.get("stdout") == "hidden\n", seen
        with pytest.raises(TimeoutError):
            daemon.accept()
    finally:
        daemon.close()
        path.unlink(missing_ok=True)


async def test_without_bwrap_only_what_the_classifier_proves_read_only_runs(
    home: Path, paths: AppPaths, repo: Path, no_container: None
) -> None:
    before = snapshot(repo)
    async with serving(home) as client:
        listed = await look(client, "ls", repo)
        refused = [await look(client, c, repo) for c in ("touch made.txt", "sed -i s/a/b/ notes.txt", "python3 -c 1")]
    assert listed["stdout"] == "notes.txt\nsub\n"
    for result in refused:
        assert "cannot" in result["error"] and "execute_command" in result["error"], result
    assert snapshot(repo) == before
    with Journal.open(paths) as journal:
        assert [r.status for r in journal.recent_commands()][:3] == [Status.REFUSED] * 3


async def test_without_bwrap_git_and_cargo_whose_project_settings_name_a_program_are_not_proven_read_only(
    home: Path, repo: Path, tmp_path: Path, no_container: None
) -> None:
    """A review, 2026-12-05: a repository's own `.git/config` (from a tarball, a copied folder) made
    `git status` run its core.fsmonitor, and a crate's `.cargo/config.toml` its rustc-wrapper, from
    the read-only tool proven read-only. Git's built-in monitor (`true`) is not a program."""
    pwned = tmp_path / "pwned"
    git(repo, "config", "core.fsmonitor", "true")
    async with serving(home) as client:
        plain = await look(client, "git status --short", repo)
        git(repo, "config", "core.fsmonitor", f"touch {pwned}; false")
        planted = await look(client, "git status --short", repo)
        elsewhere = await look(client, f"git -C {repo} log --oneline", tmp_path)
    assert plain.get("stdout") == " M notes.txt\n", plain
    for refused in (planted, elsewhere):
        assert "core.fsmonitor" in refused.get("error", "") and "execute_command" in refused["error"], refused
    assert not pwned.exists()
    (repo / "sub" / ".cargo").mkdir()
    (repo / ".cargo").mkdir()
    (repo / ".cargo" / "config.toml").write_text('[target.x86_64-unknown-linux-gnu]\nrunner = "sh -c"\n')
    assert "runner" in classify("cargo metadata --format-version 1", cwd=str(repo / "sub")).reasons[0]
    (repo / ".cargo" / "config.toml").write_text("[build]\njobs = 2\n")
    assert classify("cargo metadata --format-version 1", cwd=str(repo / "sub")).tier is Tier.SAFE


def test_no_spelling_of_a_projects_settings_and_no_way_of_naming_its_repository_passes_for_read_only(
    repo: Path, tmp_path: Path
) -> None:
    """A review of the fix, 2026-12-05: each of these was still judged read-only and git or cargo ran
    the program its settings named (where no container runs)."""

    def judged(command: str, cwd: Path) -> Tier:
        return classify(command, cwd=str(cwd)).tier

    config = repo / ".git" / "config"
    original = config.read_bytes()
    config.write_bytes(b"\xef\xbb\xbf[core]\n\tfsmonitor = /tmp/evil.sh\n" + original)
    assert judged("git status", repo) is not Tier.SAFE, "git skips a byte-order mark"
    config.write_bytes(b"\xef\xbb\xbf[core]\n\tfsmonitor = false\n" + original)
    assert judged("git status", repo) is Tier.SAFE
    bare = tmp_path / "b.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(bare, "config", "diff.external", "/tmp/evil.sh")
    assert judged("git diff HEAD~1 HEAD", bare) is not Tier.SAFE, "a bare repository is one"
    assert judged(f"GIT_DIR={bare} git status", tmp_path) is not Tier.SAFE, "GIT_DIR names the repository"
    assert judged(f'X={repo}; git -C "$X" status', tmp_path) is not Tier.SAFE, "which one, only bash knows"
    assert judged('git -C "" status', repo) is Tier.SAFE, "-C '' stays where it is"
    crate = tmp_path / "crate"
    (crate / ".cargo").mkdir(parents=True)
    for spelling in ('[build]\n"rustc-wrapper" = "/tmp/w"\n', 'build = { rustc-wrapper = "/tmp/w" }\n',
                     'build . rustc-wrapper = "/tmp/w"\n'):  # fmt: skip
        (crate / ".cargo" / "config.toml").write_text(spelling)
        assert judged("cargo metadata --format-version 1", crate) is not Tier.SAFE, spelling
    (crate / ".cargo" / "config.toml").write_text("[build]\njobs = 2\n")
    (crate / "rust-toolchain.toml").write_text('[toolchain]\npath = "/tmp/toolchain"\n')
    assert judged("cargo tree", crate) is not Tier.SAFE, "rustup runs that folder's cargo"
    assert judged("file --comp -m magic", tmp_path) is not Tier.SAFE, "getopt takes --comp for --compile"


def test_the_login_shell_probes_profile_lets_it_write_only_the_temporary_folders() -> None:
    """zsh writes its here-documents under /tmp: denied, an rc file's PATH edits would be lost."""
    temp = read_only.macos_temp_folders({"TMPDIR": "/var/folders/ab/cd/T/"}, lambda p: "/private" + p)
    assert temp == ["/private/tmp", "/private/var/folders/ab/cd/T"]
    assert read_only.macos_temp_folders({"TMPDIR": "relative"}) == ["/private/tmp"]
    profile = read_only.macos_profile(temp)
    assert profile.splitlines()[-1] == (
        '(allow file-write* (subpath "/private/tmp") (subpath "/private/var/folders/ab/cd/T"))'
    ), "last: it wins over the denial above"
    assert "(allow file-write* " not in read_only.macos_profile(), "the read-only tool writes nowhere"
    prefix = read_only.prefix_for(
        read_only.Containment.SANDBOX_EXEC, "/Users/ann", "/Users/ann", {}, lambda _n: None, -1, temp_writable=True
    )
    assert prefix[:2] == ["/usr/bin/sandbox-exec", "-p"] and '(subpath "/private/tmp")' in prefix[2]
