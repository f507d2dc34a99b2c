"""The container started ahead of the next command (app/core/execution/spare.py): what the command sees
must be what a container started for it would give it. The headless server runs in this process
(tests/in_process_server.py), so its spares are this process's children; a real tray for a spare's
life with the tray that started it."""

from __future__ import annotations

import asyncio
import base64
import gc
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import TypeVar

import anyio
import pytest

from app.core.execution import container, landlock, pipes, spare
from app.core.execution.executor import CommandSpec, run_command
from app.core.journal.store import Journal
from app.core.paths import AppPaths
from app.core.policy.approval import ApprovalMode, set_approval_mode
from tests.in_process_server import came, serving
from tests.stdio_client import connect, run
from tests.tray_process import running_tray

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("bwrap") is None, reason="bwrap (Linux)"),
    pytest.mark.skipif(
        landlock.plan(sys.platform, landlock.kernel_abi(), landlock.find_perl()) != landlock.SCOPED,
        reason="spares are started with the Perl init, which needs Landlock scopes",
    ),
]
WAIT_S = 10.0
T = TypeVar("T")
# The age of the container's init (pid 1 inside) when the command runs, in seconds.
# Its start time is the 22nd field of /proc/1/stat, the 20th after the name, which may hold spaces.
INIT_AGE = "echo $(sed 's/.*) //' /proc/1/stat | cut -d' ' -f20) $(cut -d' ' -f1 /proc/uptime)"


def init_age(stdout: str) -> float:
    started, now = stdout.split()[-2:]
    return float(now) - int(started) / os.sysconf("SC_CLK_TCK")


# Both figures INIT_AGE prints are to 10 ms (clock ticks, /proc/uptime's two decimals).
TICKS_S = 0.03


def started_during(stdout: str, took_s: float) -> bool:
    """Whether the container's init is younger than the call that ran in it: a container started for
    the command. Against the call's own length, not a fixed second: a cold start under the suite's
    parallel load has taken over a second here."""
    return init_age(stdout) <= took_s + TICKS_S


async def timed(work: Awaitable[T]) -> tuple[T, float]:
    began = time.monotonic()
    done = await work
    return done, time.monotonic() - began


def children(pid: int) -> list[int]:
    """Every child of `pid`, from each of its threads (the tray starts containers from one of them)."""
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found += [int(child) for child in handle.read().split()]
        except OSError:
            continue
    return found


def cmdline(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().decode(errors="replace").split("\0")
    except OSError:
        return []


def spares_of(pid: int) -> list[int]:
    """The spare containers (bwrap processes whose init is the spare's) that `pid` started."""
    return [child for child in children(pid) if any(arg.startswith(spare.ORDERS_ARG) for arg in cmdline(child))]


def wait_for(condition, timeout_s: float = WAIT_S) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


async def spare_waits(age_s: float = 1.2) -> None:
    """Until a spare waits for this test's server's next command, then `age_s` more (its init's age
    is what the tests read): a spare starts within tens of ms here, but over a second under load.
    The server runs in this process (tests/in_process_server.py): its spares are this process's."""
    pid = os.getpid()
    assert await came(lambda: len(spares_of(pid)) == 1, seconds=WAIT_S), "a spare waits for the next command"
    await anyio.sleep(age_s)


async def test_a_second_command_in_a_row_runs_in_a_container_started_before_it_was_called(home: Path) -> None:
    async with serving(home) as client:
        first, took = await timed(run(client, {"command": f"readlink /proc/self/ns/pid; {INIT_AGE}"}))
        await spare_waits()
        second = await run(client, {"command": f"readlink /proc/self/ns/pid; {INIT_AGE}"})
    assert first["exitCode"] == 0 and second["exitCode"] == 0
    assert started_during(first["stdout"], took), "the first command's container was started for it"
    assert init_age(second["stdout"]) >= 1.0, "the second one's was waiting for it"
    namespaces = {first["stdout"].split()[0], second["stdout"].split()[0], os.readlink("/proc/self/ns/pid")}
    assert len(namespaces) == 3, "each command has a pid namespace of its own, neither the host's"


async def test_a_command_longer_than_a_pipe_holds_reaches_its_spare_whole(home: Path) -> None:
    filler = "a" * 90_000  # the order pipe holds 64 kB: the rest is written as the init reads
    async with serving(home) as client:
        await run(client, {"command": "true"})
        await spare_waits()
        long = await run(client, {"command": f": {filler}; echo ${{#BASH_EXECUTION_STRING}}; {INIT_AGE}"})
    assert long["exitCode"] == 0, long
    assert int(long["stdout"].split()[0]) > 90_000, "the whole command arrived"
    assert init_age(long["stdout"].split("\n", 1)[1]) >= 1.0, "it ran in the spare"


async def test_the_init_of_a_spare_names_its_command_as_a_container_started_for_it_does(home: Path) -> None:
    show = "tr '\\0' ' ' < /proc/1/cmdline # named-in-ps"
    async with serving(home) as client:
        cold = await run(client, {"command": show})
        await spare_waits()
        warm = await run(client, {"command": show})
    assert "named-in-ps" in cold["stdout"] and "my $orders" not in cold["stdout"]
    assert warm["stdout"].startswith("cowork-init ") and f"-c {show}" in warm["stdout"]


async def test_a_command_in_a_spare_gets_exactly_its_folder_environment_and_process_mark(
    home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "a folder with spaces"
    folder.mkdir()
    env = {"ODD": "two\nlines = and spaces", "EMPTY": ""}
    show = f"pwd; env -0 | sort -z | base64 -w0; echo; {INIT_AGE}"
    async with serving(home) as client:
        cold, took = await timed(run(client, {"command": show, "cwd": str(folder), "env": env}))
        await spare_waits()
        warm = await run(client, {"command": show, "cwd": str(folder), "env": env})
    assert started_during(cold["stdout"], took), "the first one's container was started for it"
    assert init_age(warm["stdout"]) >= 1.0, "the second ran in a spare"

    def seen(result: dict) -> tuple[str, dict[str, str]]:
        where, encoded = result["stdout"].split("\n")[:2]
        pairs = [entry.split("=", 1) for entry in base64.b64decode(encoded).decode().split("\0") if entry]
        return where, dict(pairs)

    (cold_folder, cold_env), (warm_folder, warm_env) = seen(cold), seen(warm)
    assert cold_folder == warm_folder == str(folder)
    assert warm_env["ODD"] == env["ODD"] and warm_env["EMPTY"] == ""
    cold_mark, warm_mark = cold_env.pop("COWORK_TERMINAL_RUN"), warm_env.pop("COWORK_TERMINAL_RUN")
    assert cold_mark.rsplit(":", 1)[0] == warm_mark.rsplit(":", 1)[0] and cold_mark != warm_mark
    assert warm_env == cold_env, "the same variables as a container started for the command"


async def test_a_time_limit_ends_a_command_running_in_a_spare_with_its_background_jobs(home: Path) -> None:
    marker = f"31{os.getpid() % 1000}.5"
    async with serving(home) as client:
        await run(client, {"command": "true"})
        await spare_waits()
        began = time.monotonic()
        result = await run(client, {"command": f"{INIT_AGE}; sleep {marker} & sleep {marker}", "timeout": 1000})
    assert init_age(result["stdout"]) >= 1.0, "it ran in a spare"
    assert result["timedOut"] is True and time.monotonic() - began < WAIT_S
    assert wait_for(lambda: f"sleep {marker}" not in subprocess.run(["ps", "-eo", "args"], capture_output=True,
                                                                    text=True).stdout)  # fmt: skip


async def test_a_spare_started_before_the_container_was_switched_off_is_not_used_after_it(
    home: Path, paths: AppPaths
) -> None:
    async with serving(home) as client:
        await run(client, {"command": "true"})
        pid = os.getpid()
        assert await came(lambda: len(spares_of(pid)) == 1, seconds=WAIT_S), "a spare waits for the next command"
        [waiting] = spares_of(pid)
        with Journal.open(paths) as journal:  # what the tray stores after the user's click in its menu
            journal.set_setting("container", False)
        off = await run(client, {"command": "readlink /proc/self/ns/pid"})
        assert off["stdout"].strip() == os.readlink("/proc/self/ns/pid"), "it ran outside any container"
        assert await came(lambda: not os.path.exists(f"/proc/{waiting}"), seconds=WAIT_S), "the spare was ended unused"
        with Journal.open(paths) as journal:
            journal.set_setting("container", True)
        await anyio.sleep(1.2)
        on, took = await timed(run(client, {"command": INIT_AGE}))
        assert started_during(on["stdout"], took), "its container was started for it, not kept from before"


async def test_a_spare_ends_unused_when_its_command_pipe_is_closed(tmp_path: Path) -> None:
    found = container.linux_container([str(tmp_path / "data")])
    waiting = await spare.start(found)
    await anyio.sleep(0.5)
    assert waiting.process.returncode is None, "it waits for its command"
    await waiting.end()
    assert waiting.process.returncode == 0


def test_a_spare_does_not_outlive_the_tray_that_started_it(home: Path) -> None:
    async def one_command() -> None:
        async with connect(home, headless=False) as client:
            said = await run(client, {"command": "echo hi"})
            assert said["stdout"] == "hi\n"

    with running_tray(home) as tray:
        anyio.run(one_command)
        assert wait_for(lambda: len(spares_of(tray.pid)) == 1), "the tray keeps a spare for the next command"
        [waiting] = spares_of(tray.pid)
        inits = container.children(waiting)
        assert inits, "the spare's init runs"
        tray.send_signal(signal.SIGKILL)
        tray.wait()
        assert wait_for(lambda: not any(os.path.exists(f"/proc/{p}") for p in [waiting, *inits]), 3.0)


async def test_a_lone_protected_file_replaced_by_rename_while_a_spare_waits_stays_read_only_in_it(
    home: Path, paths: AppPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A spare started before Claude saved ~/.claude.json (a new file renamed over it, which takes
    the read-only bind out of every container) gets the bind back, as a running container does."""
    user_home = tmp_path / "user"
    (user_home / ".config").mkdir(parents=True)
    target = user_home / ".claude.json"
    target.write_text('{"mcpServers": {}}\n')
    with Journal.open(paths) as journal:  # the user's earlier choice: nothing waits for a click
        set_approval_mode(journal, ApprovalMode.NEVER)
    hidden = base64.b64encode(str(target).encode()).decode()
    attempt = f'{INIT_AGE}; echo x >> "$(echo {hidden} | base64 -d)" && echo WROTE'
    monkeypatch.setenv("HOME", str(user_home))  # the server in this process protects this user's files
    async with serving(home) as client:
        await run(client, {"command": "true"})
        await spare_waits(0.5)
        fresh = user_home / ".claude.json.tmp"
        fresh.write_text('{"saved": "by Claude"}\n')
        os.replace(fresh, target)  # as Claude and editors save
        await anyio.sleep(1.0)
        result = await run(client, {"command": attempt})
    assert init_age(result["stdout"]) >= 1.5, "it ran in the spare that waited through the rename"
    assert "WROTE" not in result["stdout"] and "Read-only file system" in result["stderr"], result
    assert target.read_text() == '{"saved": "by Claude"}\n'


def test_a_loop_that_ended_before_its_next_spare_started_leaves_the_next_loop_on_that_thread_its_own(
    tmp_path: Path,
) -> None:
    """The executor on one thread, two event loops in turn (as a test suite or a restarted host
    runs them): the first ends before its next spare's start is due; the second still gets spares."""
    found = container.linux_container([str(tmp_path / "data")])

    def spec(command: str) -> CommandSpec:
        env = {"PATH": os.environ["PATH"]}
        return CommandSpec(command, str(tmp_path), env, 10.0, "/bin/bash", container=found, spare=True)

    async def first_loop() -> None:
        assert (await run_command(spec("true"))).exit_code == 0  # and the loop ends at once

    async def second_loop() -> tuple[str, float, str]:
        cold, took = await timed(run_command(spec(INIT_AGE)))
        await anyio.sleep(1.5)
        warm = await run_command(spec(INIT_AGE))
        return cold.to_model()["stdout"], took, warm.to_model()["stdout"]

    anyio.run(first_loop)
    cold, took, warm = anyio.run(second_loop)
    assert started_during(cold, took), "the second loop's first command had a container started for it"
    assert init_age(warm) >= 1.0, "the second loop's second command ran in a spare"


def test_a_loop_that_ends_while_one_of_its_tasks_starts_a_spare_still_closes(tmp_path: Path) -> None:
    """A closing loop cancels its tasks. One caught starting a spare through asyncio's process start
    hung the loop's shutdown forever on Python 3.11 (CI: a test's loop, after a command's refill);
    the spare now starts without awaiting anything (popen_process.py)."""
    found = container.linux_container([str(tmp_path / "data")])
    started: list[spare.Spare] = []

    async def start_one() -> None:
        started.append(await spare.start(found))

    async def main() -> None:
        asyncio.get_running_loop().create_task(start_one())
        await asyncio.sleep(0)  # the task runs to its first wait, where asyncio's start waited

    closed = threading.Event()
    threading.Thread(target=lambda: (anyio.run(main), closed.set()), daemon=True).start()
    try:
        assert closed.wait(WAIT_S), "the loop's shutdown hung"
    finally:
        for waiting in started:
            anyio.run(waiting.end)
    assert [waiting.process.returncode is not None for waiting in started] == [True]


async def test_a_spare_whose_starter_went_away_in_the_middle_of_the_command_starts_nothing(tmp_path: Path) -> None:
    found = container.linux_container([str(tmp_path / "data")])
    touched = tmp_path / "ran"
    whole = spare.order(["/bin/bash", "-c", f"touch {touched}"], str(tmp_path), {"PATH": os.environ["PATH"]})
    assert whole is not None
    for cut in (len(whole), len(whole) - 1, len(whole) // 2):
        waiting = await spare.start(found)
        os.set_blocking(waiting.order_write, True)
        os.write(waiting.order_write, whole[:cut])
        os.close(waiting.order_write)  # as a starter that died while writing
        waiting.order_write = -1
        with anyio.fail_after(WAIT_S):
            await waiting.process.wait()
        if cut == len(whole):  # the same pipe, the whole command: it runs
            assert waiting.process.returncode == 0 and wait_for(touched.exists)
            touched.unlink()
        else:
            assert waiting.process.returncode == 125 and not touched.exists()
        await waiting.end()


def test_a_spare_waiting_for_its_command_ends_when_its_lifeline_reads_end_of_file(tmp_path: Path) -> None:
    """Its starter gone (the lifeline's write end closed), a waiting spare ends and starts nothing,
    even with its command pipe still open and --die-with-parent not firing (the starter lives here)."""
    found = container.linux_container([str(tmp_path / "data")])
    assert found.bwrap is not None and found.init
    life_read, life_write = os.pipe()
    order_read, order_write = os.pipe()
    orders = [f"{spare.ORDERS_ARG}{order_read}"]
    line = container.bwrap_argv(found.bwrap, found.mounts, found.hidden, orders, 2, found.init, life_read)
    waiting = subprocess.Popen(line, pass_fds=(life_read, order_read), stderr=subprocess.PIPE, start_new_session=True)
    os.close(life_read)
    os.close(order_read)
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            waiting.wait(1.0)  # it waits for its command while its lifeline is open
        os.close(life_write)
        assert waiting.wait(WAIT_S) == 137
    finally:
        os.close(order_write)
        if waiting.poll() is None:
            waiting.kill()
            waiting.wait()
        assert waiting.stderr is not None
        waiting.stderr.close()


def test_a_command_in_a_spare_keeps_every_byte_it_wrote_to_both_streams_until_its_end(tmp_path: Path) -> None:
    """A spare's output is read to the end without waiting for bwrap's exit, once nothing in the
    container can write to it: each stream here is several pipe buffers long, and its last pipe
    buffer's worth comes in one write just before the command ends."""
    found = container.linux_container([str(tmp_path / "data")])
    env = {"PATH": os.environ["PATH"]}
    # The last 50 and 60 kB in one write each (printf, a builtin), just before bash ends.
    both = "head -c 300000 /dev/zero | tr '\\0' o; head -c 200000 /dev/zero | tr '\\0' e >&2; "
    both += "printf '%50000s' ERR >&2; printf '%60000s' END"

    async def commands() -> list[tuple[float, int, bytes, int, bytes]]:
        runs = []
        await run_command(CommandSpec("true", str(tmp_path), env, 10.0, "/bin/bash", container=found, spare=True))
        for _ in range(5):
            await anyio.sleep(0.5)  # the next spare is ready
            spec = CommandSpec(
                f"{INIT_AGE} >&2; {both}", str(tmp_path), env, 10.0, "/bin/bash", container=found, spare=True
            )
            result = await run_command(spec)
            assert result.exit_code == 0 and result.contained
            age = init_age(result.stderr.raw().decode().split("e")[0])
            runs.append((age, result.stdout.total, result.stdout.raw(), result.stderr.total, result.stderr.raw()))
        return runs

    for age, out_total, out, err_total, err in anyio.run(commands):
        assert age >= 0.3, "it ran in a spare started before it"
        assert out_total == 300000 + 60000 and out.endswith(b"   END")
        assert err_total > 200000 + 50000 and err.endswith(b"   ERR")


def test_the_rest_of_a_spares_pipe_is_read_without_waiting_for_its_writers_to_close_it() -> None:
    read_end, write_end = os.pipe()
    stream = pipes.PipeStream(read_end)
    try:
        assert stream.rest() == b""  # a writer is alive and wrote nothing: no wait
        os.write(write_end, b"x" * 60000)
        os.write(write_end, b"END")
        assert stream.rest() == b"x" * 60000 + b"END"  # while the write end is still open
        os.close(write_end)
        assert stream.rest() == b""
    finally:
        anyio.run(stream.aclose)


def test_a_loop_that_is_ending_when_its_next_spare_is_due_cancels_that_start(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The next spare is due shortly after a command is handed over. A loop that ends meanwhile (a
    server Claude closed right after the result, whose tasks take a moment to end) must cancel that
    start with its other tasks, not begin it during its shutdown and destroy it pending (a traceback on
    the server's stderr, and a container started after the end)."""
    found = container.linux_container([str(tmp_path / "data")])

    async def ends_slowly() -> None:
        try:
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.sleep(10 * spare.REFILL_DELAY_S)  # the next spare falls due meanwhile

    async def main() -> None:
        asyncio.get_running_loop().create_task(ends_slowly())
        await anyio.sleep(0)
        spare.refill_soon(found)  # as a command handed to a spare does

    before = set(spares_of(os.getpid()))
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        anyio.run(main)
        gc.collect()
    assert "Task was destroyed" not in caplog.text, caplog.text
    assert wait_for(lambda: set(spares_of(os.getpid())) <= before), "no container outlives its loop"
