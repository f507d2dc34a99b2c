"""Three gaps the team wrote down and left (a helper's notes, 2026-12-06), each closed: a Stop that
SIGKILLed a command naming the container init's words, a session rule that could name another server
across a journal renewal, and the program check of the windows the tray starts."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import anyio
import pytest

from app.core.execution import container
from app.core.execution.executor import INIT_MARK, CommandSpec, is_init_argv, run_command
from app.core.execution.run_result import StopSignal
from app.core.paths import AppPaths
from app.core.policy.rules import SESSION_SCOPE, Rule
from app.core.program_identity import program_identity
from app.core.self_command import app_argv
from app.ui.tray import actions, platforms
from app.ui.tray import windows as tray_windows
from app.ui.tray.windows import TrayWindows, files_replaced_text
from tests.channel_peers import fake_peers, running_hub, wait_until
from tests.clicks import shown_window
from tests.test_red_team_twelve_apps import delete_journal
from tests.test_window_versions import FakeApp

BWRAP = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("bwrap") is None, reason="bwrap (Linux)"
)
STARTED_WAIT_S = 10.0


# -- 1. a Stop asks a command that names the init's words to end ---------------------------------------


@BWRAP
@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["perl init", "bash init", "spare"])
async def test_a_stopped_command_whose_text_holds_the_inits_words_is_asked_to_end_and_its_trap_runs(
    tmp_path: Path, kind: str
) -> None:
    """A contained command `trap 'echo cleaned > FILE' TERM; ...; grep "cowork-init: no lifeline" ...;
    sleep 30`, stopped (the user's Stop) once it runs. What went wrong: the stop took any child of the
    init whose command line held the init's words (executor.INIT_MARK) for the init's fork that had
    run nothing of the command, and SIGKILLed it: the command's trap never ran (FILE never written).
    What should happen: it gets the polite SIGTERM, and its trap cleans up."""
    found = container.linux_container([str(tmp_path / "data")])
    assert found.on, found.detail
    if kind == "bash init":
        found = dataclasses.replace(found, init=())
    elif kind == "perl init" or kind == "spare":
        assert found.init, "the Perl init is this kernel's"
    cleaned, started = tmp_path / "cleaned", tmp_path / "started"
    text = INIT_MARK.decode()
    command = (
        f"trap 'echo cleaned > {cleaned}; exit 143' TERM; grep -c \"{text}\" /dev/null; "
        f"touch {started}; sleep 30 & wait"
    )
    for warm_up in range(2 if kind == "spare" else 0):  # the second command runs in a spare
        spec = CommandSpec(f"true {warm_up}", str(tmp_path), dict(os.environ), 10, "/bin/bash", container=found,
                           spare=True)  # fmt: skip
        await run_command(spec)
    stop = StopSignal()
    spec = CommandSpec(command, str(tmp_path), dict(os.environ), 60, "/bin/bash", container=found,
                       spare=kind == "spare")  # fmt: skip

    async def stop_once_started() -> None:
        with anyio.fail_after(STARTED_WAIT_S):
            while not started.exists():
                await anyio.sleep(0.02)
        await anyio.sleep(0.1)
        stop.set("paused")

    async with anyio.create_task_group() as group:
        group.start_soon(stop_once_started)
        with anyio.fail_after(STARTED_WAIT_S + 5):
            result = await run_command(spec, stop)
    assert result.stopped_reason == "paused", result
    assert cleaned.exists() and cleaned.read_text() == "cleaned\n", (
        f"the stopped command's TERM trap never ran (it was killed at once): exit {result.exit_code}, "
        f"signal {result.signal_name}"
    )


@BWRAP
@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["perl init", "bash init"])
async def test_the_inits_fork_is_still_told_by_the_command_line_it_keeps_until_its_exec(
    tmp_path: Path, kind: str
) -> None:
    """What a stop as the command is handed over relies on (the eleventh red team's race: the fork
    swallows SIGTERM, so it is killed): the init's command line, which its fork has until its exec, is
    an init's (`is_init_argv`); the running command's, whose text holds the init's words, is not."""
    found = container.linux_container([str(tmp_path / "data")])
    assert found.on, found.detail
    if kind == "bash init":
        found = dataclasses.replace(found, init=())
    started = tmp_path / "started"
    stop = StopSignal()
    spec = CommandSpec(f'echo "{INIT_MARK.decode()}" >/dev/null; touch {started}; sleep 30; true', str(tmp_path),
                       dict(os.environ), 60, "/bin/bash", container=found)  # fmt: skip
    seen: dict[str, list[bytes]] = {}

    def descendants(pid: int) -> list[int]:
        below = container.children(pid)
        return [*below, *(d for child in below for d in descendants(child))]

    def argv(pid: int) -> list[bytes]:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")

    def ran_by_c(argv: list[bytes]) -> bytes:
        """What a bash runs by its first `-c` (an init's fork: the init's script; the command: its text)."""
        return argv[argv.index(b"-c") + 1] if b"-c" in argv[:-1] else b""

    async def look_then_stop() -> None:
        with anyio.fail_after(STARTED_WAIT_S):
            while not started.exists():
                await anyio.sleep(0.02)
        # The command's bash, among the descendants of an init (the bash init keeps a `sleep` of its own
        # beside it; a loaded machine listed the children before the command's; and in the suite an
        # earlier test's spare container may be another bwrap of this process): asked again a moment.
        for _attempt in range(100):
            for bwrap in (pid for pid in container.children(os.getpid()) if b"bwrap" in argv(pid)[0]):
                leader = container.init_pid(bwrap)
                below = [] if leader is None else [a for a in map(argv, descendants(leader)) if b"touch" in ran_by_c(a)]
                if leader is not None and below:
                    seen["init"], seen["command"] = argv(leader), below[0]
            if seen:
                break
            await anyio.sleep(0.02)
        stop.set("paused")

    async with anyio.create_task_group() as group:
        group.start_soon(look_then_stop)
        await run_command(spec, stop)
    assert is_init_argv(seen["init"]), seen["init"][:2]
    assert INIT_MARK in b" ".join(seen["command"]) and not is_init_argv(seen["command"]), seen["command"]


# -- 2. "Allow these until Claude Code quits" as the journal is renewed --------------------------------


@pytest.fixture
def peers(paths: AppPaths):
    """Servers bound to the hub (FakePeers), each by its lock key."""
    with fake_peers(paths) as make:
        yield lambda lock_key, **hello: make("server", headless=False, lock_key=lock_key, **hello)


def test_a_session_rule_clicked_as_the_journal_is_renewed_lands_on_the_server_it_was_given_to(
    paths: AppPaths, peers, tmp_path: Path
) -> None:
    """Steps: an earlier server came and went (row 1); Claude Code's server (row 2) has
    `rm -rf node_modules` held; another app's server binds (row 3). The person clicks "Allow these
    until Claude Code quits" in the approval prompt (TrayWindows._make_rule), and in that instant the
    activity log is found deleted and started anew (the monitor's Hub.tick, on another thread): the
    live servers get rows 1 and 2. What went wrong: `_make_rule` read the hold's server id ("2")
    before the hub's lock, and the rule was made for the row that now names the other app's server,
    whose own `rm -rf node_modules` then ran with no window. What should happen: the rule is Claude
    Code's alone (the server it was clicked for)."""
    project = tmp_path / "project"
    (project / "node_modules").mkdir(parents=True)
    folder = str(project.resolve())
    with running_hub(paths) as (hub, _seen):
        earlier = peers("earlier")
        earlier.ask("end")
        earlier.close()
        wait_until(lambda: len(hub.connections.servers()) == 0)
        trusted = peers("claude-code")
        held = trusted.begin("rm -rf node_modules", status="waiting", cwd=folder, client_name="claude-code")["id"]
        hostile = peers("other-app")
        assert hub.held(held) is not None

        made = hub.add_rule

        def renewed_first(*args: Any, **kwargs: Any) -> Rule:
            """The monitor renews the journal between the click's read of the hold and the rule."""
            delete_journal(paths)
            hub.tick()
            return made(*args, **kwargs)

        windows = TrayWindows(cast(Any, SimpleNamespace(hub=hub, paths=paths, notifier=SimpleNamespace(
            notify=lambda *_args, **_kwargs: None))))  # fmt: skip
        hub.add_rule = renewed_first  # type: ignore[method-assign]
        windows._make_rule(held, SESSION_SCOPE)
        hub.add_rule = made  # type: ignore[method-assign]
        hub.decide(held, allowed=True, by="prompt")
        assert trusted.next_push("decision")["allowed"] is True

        asked = hostile.begin("rm -rf node_modules", status="waiting", cwd=folder, client_name="other-app")["id"]
        decided = [push for push in hostile.quiet_for(0.5) if push.get("op") == "decision"]
        assert not decided and hub.held(asked) is not None, (
            f"the other app's hold was answered by the rule the person gave Claude Code: {decided}"
        )
        again = trusted.begin("rm -rf node_modules", status="waiting", cwd=folder, client_name="claude-code")["id"]
        assert trusted.next_push("decision")["allowed"] is True, "Claude Code's own rule no longer answers it"
        assert hub.held(again) is None


# -- 3. the Uninstall window and the program it starts from --------------------------------------------


def started_for_real(monkeypatch: pytest.MonkeyPatch) -> list[subprocess.Popen[bytes]]:
    """Every program the tray starts through `spawn` (still started), wherever it is called from."""
    started: list[subprocess.Popen[bytes]] = []
    real = platforms.spawn

    def spawn(argv: Sequence[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        process = real(argv, **kwargs)
        started.append(process)
        return process

    monkeypatch.setattr(tray_windows, "spawn", spawn)
    monkeypatch.setattr(actions, "spawn", spawn)
    return started


def uninstall_app(windows: TrayWindows) -> Any:
    frozen = bool(getattr(sys, "frozen", False))
    return SimpleNamespace(tray_windows=windows, uninstall_window_command=app_argv(frozen, sys.executable,
                                                                                   "uninstall-window"))  # fmt: skip


def test_a_tray_whose_files_were_replaced_opens_no_uninstall_window_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Steps: the tray runs; its program's files are replaced (an update or an older version); the
    person clicks Uninstall... in the menu. What went wrong: every other window is refused then
    (the person was told "until then it opens none of its windows"), but Uninstall started the
    replaced files' window, another version's, which may guard less (its "delete my history" tick
    and its Uninstall button take only a person's click in this version) or not know what this one
    set up. What should happen: no window; the person is told to quit and start the app again."""
    started = started_for_real(monkeypatch)
    app = FakeApp(tmp_path, program="the files the tray started from")
    windows = TrayWindows(app)  # type: ignore[arg-type]
    try:
        actions.uninstall(uninstall_app(windows), None)
    finally:
        for process in started:
            process.terminate()
            process.wait(10)
    assert [process.args for process in started] == [], "the Uninstall window of replaced files was started"
    assert [message for _title, message in app.notifier.history] == [files_replaced_text()]


@pytest.mark.gui
def test_a_tray_whose_files_are_its_own_opens_the_real_uninstall_window(
    display: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = started_for_real(monkeypatch)
    app = FakeApp(tmp_path, program=program_identity())
    windows = TrayWindows(app)  # type: ignore[arg-type]
    try:
        actions.uninstall(uninstall_app(windows), None)
        assert len(started) == 1 and started[0].args[-1] == "uninstall-window"
        assert shown_window(display, "Uninstall Cowork Terminal")
    finally:
        for process in started:
            process.terminate()
            process.wait(10)
    assert app.notifier.history == []
