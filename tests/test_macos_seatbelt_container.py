"""macOS's container (issue 21): every command under `sandbox-exec` with a profile that denies writes
to the protected set (seatbelt.py), chosen once per process by a probe (container.py `macos_container`).

Nobody can run a Mac here: the choice is a pure function given each platform's values, the argv is
checked as values, and the real executor and session shell run a command on this Linux machine
through a stand-in `sandbox-exec` (a script that records its arguments, then runs the command after
the profile's), reached by passing its path. A stand-in that fails the probe leaves commands running
uncontained, and the detail says why: a broken profile never stops a command.
"""

from __future__ import annotations

import os
import site
import sys
from pathlib import Path

import anyio
import pytest

import app
from app.core.authority.holds import HeldCommand
from app.core.authority.hub import Hub
from app.core.commands.running import protection_note
from app.core.execution import container
from app.core.execution.container import Container, ProtectedSet
from app.core.execution.executor import CommandSpec, run_command
from app.core.execution.shell_session import ShellSession, replaces, usable_container
from app.core.journal.store import Journal
from app.core.paths import AppPaths

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a bash stand-in for sandbox-exec")
BASH = "/bin/bash"

# Records each call (arguments split by \x1f, calls by \x1e), then does what sandbox-exec does: runs
# the command after `-p TEXT` and the `-D` parameters.
STAND_IN = """#!/bin/bash
printf '%s\\x1f' "$@" >> "{record}"; printf '\\x1e' >> "{record}"
[ "$1" = -p ] || {{ echo "sandbox-exec: no profile" >&2; exit 64; }}
shift 2
while [ "${{1#-D}}" != "$1" ]; do shift; done
exec "$@"
"""
# One that refuses every profile, as sandbox-exec does a profile it cannot compile.
REFUSING = """#!/bin/bash
printf '%s\\x1f' "$@" >> "{record}"; printf '\\x1e' >> "{record}"
echo "sandbox-exec: unbound variable: P0" >&2
exit 1
"""

# One that refuses as the sandbox would a command that writes a protected path: what bash prints
# when the kernel refuses a redirection (`bash: PATH: Operation not permitted`), exit 1. Its test
# is of what the model reads then, not of the profile (which only a Mac can run).
DENYING = """#!/bin/bash
printf '%s\\x1f' "$@" >> "{record}"; printf '\\x1e' >> "{record}"
shift 2
denied=()
while [ "${{1#-D}}" != "$1" ]; do denied+=("${{1#*=}}"); shift; done
for path in "${{denied[@]}}"; do
    case "$3" in *">> $path"*) echo "bash: $path: Operation not permitted" >&2; exit 1;; esac
done
exec "$@"
"""


def stand_in(tmp_path: Path, script: str) -> tuple[str, Path]:
    record = tmp_path / "sandbox-exec.calls"
    program = tmp_path / "bin" / "sandbox-exec"
    program.parent.mkdir()
    program.write_text(script.format(record=record))
    program.chmod(0o755)
    return str(program), record


def calls(record: Path) -> list[list[str]]:
    if not record.exists():
        return []
    return [call.split("\x1f")[:-1] for call in record.read_text().split("\x1e")[:-1]]


@pytest.fixture
def mac_user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder with a user's files, as HOME for this process (and Python's user site)."""
    folder = tmp_path / "Users" / "ann"
    folder.mkdir(parents=True)
    (folder / ".bashrc").write_text("alias ll='ls -l'\n")
    (folder / ".claude.json").write_text("{}\n")
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setattr(site, "USER_BASE", None)
    monkeypatch.setattr(site, "USER_SITE", None)
    return folder


# -- the choice, as values ------------------------------------------------------------------------


def test_sandbox_exec_is_chosen_only_on_macos_where_it_is_there_and_passed_its_probe() -> None:
    assert container.seatbelt_state("darwin", True, None) == (container.SEATBELT, "")
    state, detail = container.seatbelt_state("darwin", False, None)
    assert state == container.SEATBELT_FAILED and detail == "/usr/bin/sandbox-exec not found"
    failed = "/usr/bin/sandbox-exec exited with 65: sandbox-exec: syntax error"
    assert container.seatbelt_state("darwin", True, failed) == (container.SEATBELT_FAILED, failed)
    # Linux has bubblewrap (linux_container), Windows no container: sandbox-exec is never theirs.
    for platform in ("linux", "win32"):
        for present, failure in ((True, None), (False, None), (True, "x")):
            assert container.seatbelt_state(platform, present, failure) == (container.UNSUPPORTED, "")


def test_what_the_person_and_the_log_read_on_macos() -> None:
    assert container.person_message(container.SEATBELT) is None, "the normal state there: nothing new"
    said = container.person_message(container.SEATBELT_FAILED) or ""
    assert said.startswith("Commands run without protection:") and "sandbox-exec" in said and "log" in said
    assert container.log_message(container.SEATBELT) == (
        "macOS's sandbox-exec keeps the protected files read-only; the command's processes are not contained"
    )
    failed = container.log_message(container.SEATBELT_FAILED, "/usr/bin/sandbox-exec exited with 1: no")
    assert failed == (
        "sandbox-exec failed its check, so the protected files are not kept read-only: "
        "/usr/bin/sandbox-exec exited with 1: no"
    )


SET = ProtectedSet(
    folders=("/Users/ann/.claude", "/Users/ann/Library/LaunchAgents"),
    files=("/Users/ann/.bashrc", "/Users/ann/.claude.json"),
    absent=("/Users/ann/.zshrc",),
    links=(("/Users/ann/.profile", "dotfiles/profile"),),
)
MAC = Container(container.SEATBELT, protected=SET, sandbox_exec="/usr/bin/sandbox-exec", home="/Users/ann")
COMMAND = ["/bin/bash", "-c", "echo hi"]


def test_a_seatbelt_container_wraps_a_command_in_sandbox_exec_with_the_whole_protected_set() -> None:
    assert not MAC.on, "no pid namespace, no spares, no init: uncontained for everything keyed on `on`"
    text = (
        "(version 1)\n(allow default)\n"
        '(deny file-write* (subpath (param "P0")) (subpath (param "P1")) (subpath (param "P2")) '
        '(literal (param "F0")) (literal (param "F1")) (literal (param "F2")))\n'
        '(deny file-write-unlink (literal (param "A0")))\n'
    )
    assert MAC.wrap(COMMAND, -1) == [
        "/usr/bin/sandbox-exec", "-p", text,
        "-DP0=/Users/ann/.claude", "-DP1=/Users/ann/Library/LaunchAgents", "-DP2=/Users/ann/.zshrc",
        "-DF0=/Users/ann/.bashrc", "-DF1=/Users/ann/.claude.json", "-DF2=/Users/ann/.profile",
        "-DA0=/Users/ann/Library",
        *COMMAND,
    ]  # fmt: skip
    assert MAC.wrap(COMMAND, 7, read_only_binds=False) == COMMAND, "the user allowed a change: unchanged"


def test_a_seatbelt_container_without_members_the_user_allowed_keeps_the_rest_denied() -> None:
    lifted = MAC.without(["/Users/ann/.bashrc", "/Users/ann/Library/LaunchAgents"])
    assert lifted.state == container.SEATBELT and lifted.sandbox_exec == MAC.sandbox_exec
    text = (
        "(version 1)\n(allow default)\n"
        '(deny file-write* (subpath (param "P0")) (subpath (param "P1")) '
        '(literal (param "F0")) (literal (param "F1")))\n'
    )
    assert lifted.wrap(COMMAND, -1) == [
        "/usr/bin/sandbox-exec", "-p", text,
        "-DP0=/Users/ann/.claude", "-DP1=/Users/ann/.zshrc",
        "-DF0=/Users/ann/.claude.json", "-DF1=/Users/ann/.profile",
        *COMMAND,
    ]  # fmt: skip
    everything = MAC.without([*SET.all(), "/Users/ann/.profile"])  # a link goes with its name, or its target
    assert everything.wrap(COMMAND, -1)[:3] == ["/usr/bin/sandbox-exec", "-p", "(version 1)\n(allow default)\n"]


def test_macos_profile_guards_the_protected_set_by_name_as_bwrap_does() -> None:
    """So the tray tells the person of a program file with another name (a hard link, as uv fills a
    venv) on macOS too: the profile denies writes by path, and another name is another path."""
    assert container.guards_by_name(Container(container.SEATBELT, sandbox_exec="/usr/bin/sandbox-exec"))
    assert container.guards_by_name(Container(container.ON, bwrap="/usr/bin/bwrap"))
    for state in (container.SEATBELT_FAILED, container.UNSUPPORTED, container.OFF):
        assert not container.guards_by_name(Container(state)), state


def test_other_states_leave_the_command_as_it_is() -> None:
    for state in (container.SEATBELT_FAILED, container.UNSUPPORTED, container.OFF, container.PRIVILEGED):
        found = Container(state, protected=SET, home="/Users/ann")
        assert found.wrap(COMMAND, -1) == COMMAND and found.without(["/Users/ann/.bashrc"]).wrap(COMMAND, -1) == COMMAND


# -- real processes through a stand-in ------------------------------------------------------------


def test_a_command_runs_under_sandbox_exec_with_a_profile_that_names_the_protected_files(
    tmp_path: Path, mac_user: Path
) -> None:
    program, record = stand_in(tmp_path, STAND_IN)
    data = tmp_path / "app-data"
    found = container.macos_container((str(data),), sandbox_exec=program, platform="darwin")
    assert (found.state, found.detail) == (container.SEATBELT, "")
    probe = calls(record)
    assert len(probe) == 1 and probe[0][0] == "-p" and probe[0][-1] == "/usr/bin/true", "probed once, with true"

    spec = CommandSpec("echo ran", str(tmp_path), dict(os.environ), 10, BASH, container=found)
    result = anyio.run(run_command, spec)
    assert result.exit_code == 0 and result.to_model()["stdout"] == "ran\n", result.to_model()
    assert not result.contained, "no pid namespace: processes end as without a container"
    ran = calls(record)[1]
    assert ran[-3:] == [BASH, "-c", spec.command] and ran[0] == "-p"
    params = [arg[2:].split("=", 1)[1] for arg in ran if arg.startswith("-D")]
    home = os.path.realpath(mac_user)
    for member in (
        str(data),
        f"{home}/.claude",
        f"{home}/.claude.json",
        f"{home}/.bashrc",
        f"{home}/Library/LaunchAgents",
        f"{home}/.zshrc",
        os.path.dirname(os.path.realpath(app.__file__)),  # the program's own files
    ):
        assert member in params, (member, params)
    assert "/Users/ann" not in ran[1] and str(mac_user) not in ran[1], "paths are parameters, never profile text"


def test_the_model_is_told_a_write_sandbox_exec_refused_was_to_a_protected_file_and_what_to_do(
    tmp_path: Path, mac_user: Path
) -> None:
    """On macOS the sandbox's refusal reads "Operation not permitted" (EPERM), which a file of another
    user or a locked file gives too: the model is told of the protection only when the refusal names
    a protected path, then in the words Linux's read-only refusal gets."""
    program, _record = stand_in(tmp_path, DENYING)
    found = container.macos_container((str(tmp_path / "app-data"),), sandbox_exec=program, platform="darwin")
    assert found.state == container.SEATBELT
    zshrc = f"{os.path.realpath(mac_user)}/.zshrc"

    def note(command: str, *, asked: bool = True) -> str | None:
        spec = CommandSpec(command, str(tmp_path), dict(os.environ), 10, BASH, container=found)
        result = anyio.run(run_command, spec)
        return protection_note(result, found, asked=asked)

    told = note(f"echo 'export PATH=/tmp/x:$PATH' >> {zshrc}") or ""
    assert told.startswith(f"{zshrc} is protected by Cowork Terminal"), told
    assert "ask the user, then call execute_command again" in told, told
    assert "Approvals are off" in (note(f"echo x >> {zshrc}", asked=False) or ""), "no Allow to ask for"
    assert note("echo 'chmod: /etc/shadow: Operation not permitted' >&2; exit 1") is None, "not ours to explain"
    assert note("echo 'touch: x: Read-only file system' >&2; exit 1") is None, "Linux's words mean nothing here"
    assert note("echo ran") is None


def test_a_command_let_out_of_the_macos_profile_is_not_told_to_ask_for_an_allow_it_had(
    tmp_path: Path, mac_user: Path
) -> None:
    """Runs.run gives protection_note the container the command ran in (CommandSpec.container): one a
    person let out (PRIVILEGED: no sandbox-exec) or let write a member (the profile without it) that
    fails with a refusal naming that file was refused by something else, and is not told to ask for
    an Allow it already had."""
    program, _record = stand_in(tmp_path, STAND_IN)
    found = container.macos_container((str(tmp_path / "app-data"),), sandbox_exec=program, platform="darwin")
    zshrc = f"{os.path.realpath(mac_user)}/.zshrc"
    said = tmp_path / "said.txt"
    said.write_text(f"bash: {zshrc}: Operation not permitted\n")  # as the kernel's refusal of another cause
    spec = CommandSpec(f"cat {said} >&2; exit 1", str(tmp_path), dict(os.environ), 10, BASH, container=found)
    result = anyio.run(run_command, spec)
    assert "is protected by Cowork Terminal" in (protection_note(result, found) or ""), "in the profile"
    assert protection_note(result, Container(container.PRIVILEGED)) is None
    assert protection_note(result, found.without([zshrc])) is None


def test_a_protected_folder_deleted_and_made_anew_has_the_macos_profile_made_again(
    tmp_path: Path, mac_user: Path
) -> None:
    """`for_paths` prepares the protected set again when a folder of it was replaced (the user's `mv
    ~/.claude ~/.claude-old; mkdir ~/.claude`): the profile names folders by their real paths, and a
    folder made anew must be denied too. Not a container of any other state."""
    program, _record = stand_in(tmp_path, STAND_IN)
    claude = mac_user / ".claude"
    claude.mkdir()
    found = container.macos_container((str(tmp_path / "app-data"),), sandbox_exec=program, platform="darwin")
    assert found.state == container.SEATBELT and not container.to_prepare_again(found)
    claude.rename(mac_user / ".claude-old")
    claude.mkdir()
    assert container.to_prepare_again(found), "the profile would deny the old folder, wherever it went"
    again = container.macos_container((str(tmp_path / "app-data"),), sandbox_exec=program, platform="darwin")
    assert not container.to_prepare_again(again)
    failed = container.macos_container((str(tmp_path / "app-data"),), sandbox_exec=str(tmp_path / "none"))
    claude.rename(mac_user / ".claude-older")
    claude.mkdir()
    assert failed.state != container.SEATBELT and not container.to_prepare_again(failed), "no profile to make"


def test_a_stand_in_that_fails_the_probe_leaves_commands_running_uncontained_and_says_why(
    tmp_path: Path, mac_user: Path
) -> None:
    program, record = stand_in(tmp_path, REFUSING)
    found = container.macos_container((str(tmp_path / "app-data"),), sandbox_exec=program, platform="darwin")
    assert found.state == container.SEATBELT_FAILED
    assert found.detail == f"{program} exited with 1: sandbox-exec: unbound variable: P0"
    assert len(calls(record)) == 1
    spec = CommandSpec("echo ran", str(tmp_path), dict(os.environ), 10, BASH, container=found)
    result = anyio.run(run_command, spec)
    assert result.exit_code == 0 and result.to_model()["stdout"] == "ran\n"
    assert len(calls(record)) == 1, "not under sandbox-exec"
    said = container.person_message(found.state) or ""
    assert "sandbox-exec" in said
    assert container.log_message(found.state, found.detail).endswith(found.detail)


def test_a_missing_sandbox_exec_is_not_run_and_commands_still_run(tmp_path: Path, mac_user: Path) -> None:
    gone = str(tmp_path / "no" / "sandbox-exec")
    found = container.macos_container((str(tmp_path / "app-data"),), sandbox_exec=gone, platform="darwin")
    assert (found.state, found.detail) == (container.SEATBELT_FAILED, f"{gone} not found")
    spec = CommandSpec("echo ran", str(tmp_path), dict(os.environ), 10, BASH, container=found)
    assert anyio.run(run_command, spec).to_model()["stdout"] == "ran\n"


def test_the_session_shell_runs_under_sandbox_exec_and_is_replaced_when_it_is_switched_off(
    tmp_path: Path, mac_user: Path
) -> None:
    program, record = stand_in(tmp_path, STAND_IN)
    found = container.macos_container((str(tmp_path / "app-data"),), sandbox_exec=program, platform="darwin")
    assert usable_container(found) is found
    assert replaces(found, usable_container(Container(container.OFF)))
    assert not replaces(found, usable_container(found))

    async def main() -> str:
        session = ShellSession(BASH, str(tmp_path), dict(os.environ), container=found)
        async with anyio.create_task_group() as group:
            await session.start(group)
            running = await session.send_command("echo in session")
            with anyio.fail_after(10):
                await running.done.wait()
            said = running.result(finished=True, restarted=False).output
            await session.close()
            group.cancel_scope.cancel()
        return said

    assert anyio.run(main) == "in session\n"
    shell = calls(record)[1]
    assert shell[0] == "-p" and shell[-4:-1] == [BASH, "--norc", "--noprofile"], shell
    assert f"{os.path.realpath(mac_user)}/.bashrc" in [arg.split("=", 1)[1] for arg in shell if arg.startswith("-D")]


# -- through a server: the journal's line, and a person's Allow -----------------------------------


@pytest.fixture
def mac_server(
    tmp_path: Path, mac_user: Path, paths: AppPaths, monkeypatch: pytest.MonkeyPatch
) -> tuple[Container, Path]:
    """This process's container made as macOS's (`container_for` on darwin) with the stand-in, what
    the server's commands run in; and where the stand-in records its calls."""
    program, record = stand_in(tmp_path, STAND_IN)
    found = container.macos_container((str(paths.data_dir),), sandbox_exec=program, platform="darwin")
    assert found.state == container.SEATBELT, found.detail
    monkeypatch.setattr(container, "for_paths", lambda _paths, in_tray=False: found)
    return found, record


def profile_params(call: list[str]) -> list[str]:
    return [arg.split("=", 1)[1] for arg in call if arg.startswith("-D")]


@pytest.mark.anyio
async def test_commands_under_sandbox_exec_carry_no_unprotected_line_and_after_a_failed_probe_each_does(
    home: Path, paths: AppPaths, tmp_path: Path, mac_server: tuple[Container, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under sandbox-exec, macOS's normal state, the journal adds nothing (the activity log would read
    "Ran without protection" on every row, as for Windows it does not); after a failed probe each
    command, and each session command, says that the files were not kept read-only."""
    from tests.in_process_server import serving
    from tests.stdio_client import run

    _found, record = mac_server
    async with serving(home) as client:
        ran = await run(client, {"command": "echo one"})
        session = await client.call_tool("terminal_run", {"command": "echo two"})
    assert ran["stdout"] == "one\n" and not session.is_error, (ran, session)
    assert [call[-1] for call in calls(record)][1:] == ["echo one", "/dev/stdin"], "the command; the session's shell"

    refusing = tmp_path / "refusing"
    refusing.mkdir()
    program, refused = stand_in(refusing, REFUSING)
    failed = container.macos_container((str(paths.data_dir),), sandbox_exec=program, platform="darwin")
    monkeypatch.setattr(container, "for_paths", lambda _paths, in_tray=False: failed)
    async with serving(home) as client:
        ran = await run(client, {"command": "echo three"})
        session = await client.call_tool("terminal_run", {"command": "echo four"})
    assert ran["stdout"] == "three\n" and not session.is_error, (ran, session)
    assert len(calls(refused)) == 1, "only the probe: the commands ran uncontained"
    with Journal.open(paths) as journal:
        reasons = {row.command: row.reason for row in journal.recent_commands()}
    line = "ran without the container: sandbox-exec failed its check, so the protected files are not kept read-only"
    assert reasons == {"echo one": None, "echo two": None, "echo three": line, "echo four": line}


@pytest.mark.anyio
async def test_a_change_to_a_protected_file_the_person_allowed_runs_with_only_that_file_writable(
    home: Path, paths: AppPaths, mac_user: Path, hub: Hub, mac_server: tuple[Container, Path]
) -> None:
    """macOS is held as where nothing guards the set (`on` is False: PROTECTED_UNGUARDED_PLAIN); the
    Allow must still reach sandbox-exec, or the write the person allowed fails there."""
    from tests.in_process_server import allow_when_held, serving
    from tests.stdio_client import run

    _found, record = mac_server
    seen: list[HeldCommand] = []

    async def allow() -> None:
        seen.append(await allow_when_held(hub, seconds=10.0))

    async with serving(home, bound=True) as client, anyio.create_task_group() as group:
        group.start_soon(allow)
        result = await run(client, {"command": "echo '# allowed' >> ~/.bashrc"})
    assert result.get("exitCode") == 0, result
    assert (mac_user / ".bashrc").read_text().endswith("# allowed\n")
    assert "Changes a file Cowork Terminal guards" in seen[0].to_window()["reasons"]
    home_folder = os.path.realpath(mac_user)
    params = profile_params(calls(record)[-1])
    assert calls(record)[-1][-1] == "echo '# allowed' >> ~/.bashrc"
    assert f"{home_folder}/.bashrc" not in params, "the file the person allowed is writable"
    assert f"{home_folder}/.claude.json" in params and f"{home_folder}/.claude" in params, "the rest stays denied"
