"""The approval pins what runs: the folder by identity, the scripts by content, the environment by value.

Each attack goes through `execute_command` of a server bound to the tray's hub, run in this process
(`hub`, and servers bound to it as the tray's runners are): a destructive command waits for the
user, and while it is held a second agent (or the request itself) tries to change what the user's
Allow will run; the Allow is what a click on it in the prompt does (tests/in_process_server.py
`allow`). Each test checks that the attack took effect before checking that it failed. A setting
sent from a command goes to a real tray process, whose own check of its peer is what is tested.
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from app.core.authority.hub import Hub
from app.core.channel.client import current_tray_state
from app.core.commands.pins import picks_programs
from app.core.execution import container
from app.core.journal.store import Journal, Status
from app.core.paths import AppPaths
from tests.agent_scripts import agent_script
from tests.in_process_server import allow, allow_when_held, deny, held_by, holds_shown, serving
from tests.stdio_client import connect, run, run_when_allowed
from tests.test_authority import cli, click_allow_when_held
from tests.test_authority import connect as connect_uncontained
from tests.tray_process import running_tray

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module scope: the refusals below share one server (conftest's `shared_server`)."""
    return "asyncio"


def rows(paths: AppPaths) -> list:
    with Journal.open(paths) as journal:
        return journal.recent_commands()


class CuedAttack:
    """An agent's script started as a background job by a command the user allowed, before the
    command under test is held; it waits for a cue, then attacks and leaves what it printed."""

    def __init__(self, folder: Path, code: str) -> None:
        self.cue = folder / "attack-cue"
        self.report = folder / "attack-report"
        wrapped = (
            "import os as _os, sys as _sys, time as _time\n"
            "_os.unlink(__file__)\n"  # none is left in /tmp
            f"while not _os.path.exists({str(self.cue)!r}):\n    _time.sleep(0.02)\n"
            f"{code}\n"
            "_sys.stdout.flush()\n"
            f"_os.rename({str(self.report)!r} + '.tmp', {str(self.report)!r})\n"
        )
        encoded = base64.b64encode(wrapped.encode()).decode()
        name = f"/tmp/agent-{os.getpid()}-{abs(hash(wrapped)) % 10**8}.py"
        self.command = (
            f"printf %s {encoded} | base64 -d > {name} && "
            f"(setsid nohup {sys.executable} {name} > {self.report}.tmp 2>&1 < /dev/null &) && echo started"
        )

    async def start(self, client: Any, hub: Hub) -> None:
        started = await run_when_allowed(client, {"command": self.command}, lambda: allow_when_held(hub))
        assert started.get("stdout") == "started\n", started

    async def go(self) -> str:
        """Give the cue; what the attack printed once it is done."""
        self.cue.touch()
        deadline = time.monotonic() + 30
        while not self.report.exists():
            assert time.monotonic() < deadline, "the attack did not finish"
            await anyio.sleep(0.05)
        return self.report.read_text()

    async def while_held(self, home: Path, hub: Hub, arguments: dict) -> tuple[dict, str, list[dict]]:
        """Start the attack (the user allows it), then have `arguments` held, give the cue while the
        prompt is up, and allow the held command: what the model read, what the attack printed, and
        the holds as the prompt showed them before the attack."""
        async with serving(home, bound=True) as held, serving(home, bound=True) as agent:
            await self.start(agent, hub)
            outcome: dict = {}

            async def ask() -> None:
                outcome.update(await run(held, arguments))

            async with anyio.create_task_group() as group:
                group.start_soon(ask)
                [waiting] = await held_by(hub)
                shown = holds_shown(hub)
                said = await self.go()
                allow(hub, waiting.command_id)
        return outcome, said, shown


@pytest.mark.gui
async def test_a_nan_approval_window_sent_from_a_command_changes_nothing_and_neither_does_55_after_it(
    home: Path, paths: AppPaths, display: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The tray runs the server's commands (issue 21): it too runs them without the container here.
    monkeypatch.setenv(container.BWRAP_ENV, str(home / "no-bwrap"))
    ask = """
from app.core.channel.client import TrayRefused, ask_tray
from app.core.paths import AppPaths
paths = AppPaths.from_environment()
for value in (float("nan"), 55):
    try:
        print("changed", ask_tray(paths, "settings", changes={"approval_window_s": value}))
    except TrayRefused as refused:
        print("refused", refused)
"""
    with running_tray(home, display=display):
        before = current_tray_state(paths)
        assert before is not None and before["approval_window_s"] == 40.0
        # The script runs Cowork Terminal: the user allows it. Without the OS container, which would
        # keep it from the tray's address: the tray's own check is what is tested.
        async with connect_uncontained(home, headless=False) as agent:
            arguments = {"command": agent_script(ask)}
            attack = await run_when_allowed(agent, arguments, lambda: click_allow_when_held(paths, display))
        said = attack["stdout"].splitlines()
        assert len(said) == 2, attack  # the script reached the tray twice
        assert said[0].startswith("refused Refused: approval_window_s must be a number from 1 to 55 (got nan)")
        assert said[1].startswith("refused This request comes from a command an AI agent runs"), said
        assert current_tray_state(paths) == before, "no setting changed"
        async with connect(home, headless=False) as agent:  # a held call waits, then says so: no busy loop
            assert cli(home, "approval-mode", "--window", "1").returncode == 0
            with anyio.fail_after(15):
                held = await run(agent, {"command": "rm -rf nothing-here", "cwd": str(home.parent)})
            assert held.get("status") == "waiting", held  # the call returned: the command waits as a job


async def test_a_symlinked_folder_re_pointed_while_the_prompt_is_up_does_not_move_the_deletion(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path
) -> None:
    (tmp_path / "approved" / "data").mkdir(parents=True)
    (tmp_path / "precious" / "data").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "approved")
    re_point = f"""
import os
os.remove({str(tmp_path / "link")!r})
os.symlink({str(tmp_path / "precious")!r}, {str(tmp_path / "link")!r})
print(os.readlink({str(tmp_path / "link")!r}))
"""
    attack = CuedAttack(tmp_path, re_point)
    outcome, said, [shown] = await attack.while_held(
        home, hub, {"command": "rm -rf data", "cwd": str(tmp_path / "link")}
    )
    assert shown["folder"] == str(tmp_path / "approved"), "the prompt names the real folder"
    assert said.strip() == str(tmp_path / "precious"), said  # the link points elsewhere
    assert outcome.get("exitCode") == 0, outcome
    assert not (tmp_path / "approved" / "data").exists(), "it ran where the user was asked"
    assert (tmp_path / "precious" / "data").exists(), "the re-pointed link moved nothing"


async def test_a_folder_replaced_while_the_prompt_is_up_is_refused_and_the_model_told(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path
) -> None:
    (tmp_path / "work" / "data").mkdir(parents=True)
    swap = f"""
import os
os.rename({str(tmp_path / "work")!r}, {str(tmp_path / "old-work")!r})
os.makedirs({str(tmp_path / "work" / "data")!r})
print("swapped")
"""
    attack = CuedAttack(tmp_path, swap)
    outcome, said, _shown = await attack.while_held(
        home, hub, {"command": "rm -rf data", "cwd": str(tmp_path / "work")}
    )
    assert said == "swapped\n", said
    assert f"the folder {tmp_path / 'work'} was replaced by another folder" in outcome["error"], outcome
    assert (tmp_path / "work" / "data").exists() and (tmp_path / "old-work" / "data").exists()
    held_row = next(r for r in rows(paths) if r.command == "rm -rf data")
    assert held_row.status is Status.REFUSED and "was replaced" in held_row.reason


async def test_a_script_rewritten_after_the_prompt_showed_is_not_run(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path
) -> None:
    (tmp_path / "build").mkdir()
    script = tmp_path / "post.sh"
    script.write_text("echo tidy\n")
    rewrite = f"""
open({str(script)!r}, "w").write("touch {tmp_path / "pwned"}\\n")
print(open({str(script)!r}).read(), end="")
"""
    attack = CuedAttack(tmp_path, rewrite)
    arguments = {"command": "rm -rf build && bash ./post.sh", "cwd": str(tmp_path)}
    outcome, said, _shown = await attack.while_held(home, hub, arguments)
    assert said == f"touch {tmp_path / 'pwned'}\n", said  # the script is rewritten
    assert f"the script {script} changed after the user was asked" in outcome["error"], outcome
    assert "run it again" in outcome["error"]
    assert not (tmp_path / "pwned").exists(), "the rewritten script did not run"
    assert (tmp_path / "build").exists(), "nothing of the command ran"


@pytest.mark.parametrize(
    ("command", "rewritten"),
    [
        ("rm -rf build && timeout 60 ./post.sh", "post.sh"),  # behind a wrapper the text parser missed
        ("rm -rf build; if ./post.sh; then :; fi", "post.sh"),
        ("rm -rf build && ./outer.sh", "post.sh"),  # a script the judged one sources
    ],
)
async def test_a_script_the_classifier_read_rewritten_after_the_prompt_showed_is_not_run(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path, command: str, rewritten: str
) -> None:
    """Red team, 2026-12-04: the approval pinned only the scripts its own parser found in the text, so
    `timeout 60 ./x.sh`, `if ./x.sh` or a script sourced by the judged one was swapped after the
    prompt and the new one ran. Every file the classifier read is pinned now."""
    (tmp_path / "build").mkdir()
    script = tmp_path / "post.sh"
    script.write_text("echo tidy\n")
    (tmp_path / "outer.sh").write_text(". ./post.sh\n")
    for name in ("post.sh", "outer.sh"):
        (tmp_path / name).chmod(0o755)
    rewrite = f"""
open({str(tmp_path / rewritten)!r}, "w").write("touch {tmp_path / "pwned"}\\n")
print("rewritten")
"""
    attack = CuedAttack(tmp_path, rewrite)
    outcome, said, _shown = await attack.while_held(home, hub, {"command": command, "cwd": str(tmp_path)})
    assert said == "rewritten\n", said
    assert f"the script {tmp_path / rewritten} changed after the user was asked" in outcome["error"], outcome
    assert not (tmp_path / "pwned").exists(), "the rewritten script did not run"
    assert (tmp_path / "build").exists(), "nothing of the command ran"


async def test_an_unchanged_script_runs_once_allowed(home: Path, paths: AppPaths, hub: Hub, tmp_path: Path) -> None:
    (tmp_path / "build").mkdir()
    (tmp_path / "post.sh").write_text("echo tidy\n")
    arguments = {"command": "rm -rf build && bash ./post.sh", "cwd": str(tmp_path)}
    async with serving(home, bound=True) as held:
        outcome = await run_when_allowed(held, arguments, lambda: allow_when_held(hub))
    assert outcome.get("stdout") == "tidy\n", outcome


def fake_git(folder: Path, marker: Path) -> Path:
    """A `git` that does the attacker's work, first in a PATH the model sends."""
    evilbin = folder / "evilbin"
    evilbin.mkdir()
    (evilbin / "git").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (evilbin / "git").chmod(0o755)
    return evilbin


async def test_a_path_sent_with_a_held_command_is_shown_to_the_user_with_its_value(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path
) -> None:
    marker = tmp_path / "fake-git-ran"
    evilbin = fake_git(tmp_path, marker)
    path = f"{evilbin}:/usr/bin:/bin"
    proof = subprocess.run(["git", "status"], env={**os.environ, "PATH": path}, cwd=tmp_path, check=False)
    assert proof.returncode == 0 and marker.exists(), "with this PATH, git is the attacker's"
    marker.unlink()
    (tmp_path / "build").mkdir()
    async with serving(home, bound=True) as held, anyio.create_task_group() as group:
        outcome: dict = {}

        async def ask() -> None:
            arguments = {"command": "rm -rf build && git status", "cwd": str(tmp_path), "env": {"PATH": path}}
            outcome.update(await run(held, arguments))

        group.start_soon(ask)
        await held_by(hub)
        [shown] = holds_shown(hub)
        assert f"PATH={path}" in shown["env_shown"], shown  # what the prompt lists, value and all
        deny(hub, shown["id"])
    assert "The user denied this command" in outcome["error"]
    assert not marker.exists() and (tmp_path / "build").exists()


async def test_many_variables_cannot_push_the_value_of_path_out_of_what_the_user_is_shown(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path
) -> None:
    """Red team, 2026-12-05: 300 variables A000..A299 sent beside a PATH pushed PATH past the 256 values
    the prompt lists, so it showed "A299, PATH" with no value."""
    evilbin = fake_git(tmp_path, tmp_path / "fake-git-ran")
    path = f"{evilbin}:/usr/bin:/bin"
    many = {f"A{n:03d}": "1" for n in range(300)}
    async with serving(home, bound=True) as held, anyio.create_task_group() as group:
        refused = await run(held, {"command": "git status", "cwd": str(tmp_path), "env": {**many, "PATH": path}})
        assert "`env` has 301 variables; at most 256 may be sent." in refused["error"], refused
        outcome: dict = {}

        async def ask() -> None:
            env = {**dict(list(many.items())[:255]), "PATH": path}
            outcome.update(await run(held, {"command": "git status", "cwd": str(tmp_path), "env": env}))

        group.start_soon(ask)
        await held_by(hub)
        [shown] = holds_shown(hub)
        assert shown["env_shown"][0] == f"PATH={path}", shown["env_shown"][:3]  # first, whatever else comes
        assert len(shown["env_shown"]) == 256 and all("=" in pair for pair in shown["env_shown"])
        deny(hub, shown["id"])
    assert "The user denied this command" in outcome["error"]


@pytest.mark.parametrize("key", ["PATH", "XDG_CONFIG_HOME", "GIT_DIR", "HOME", "CURL_HOME"])
async def test_a_harmless_command_with_a_variable_that_picks_programs_waits_and_shows_its_value(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path, key: str
) -> None:
    """Red team, 2026-12-04: `ls` with a PATH whose first folder held a planted `ls` (or `git status`
    with an XDG_CONFIG_HOME or GIT_DIR whose config named a program) ran unasked: the values were to be
    shown in the prompt, but a harmless-looking command was never held, so no prompt came."""
    marker = tmp_path / "fake-git-ran"
    evilbin = fake_git(tmp_path, marker)
    value = f"{evilbin}:/usr/bin:/bin" if key == "PATH" else str(evilbin)
    async with serving(home, bound=True) as held, anyio.create_task_group() as group:
        outcome: dict = {}

        async def ask() -> None:
            outcome.update(await run(held, {"command": "git status", "cwd": str(tmp_path), "env": {key: value}}))

        group.start_soon(ask)
        await held_by(hub)
        [shown] = holds_shown(hub)
        assert f"{key}={value}" in shown["env_shown"], shown
        assert "Runs with environment settings the agent chose" in shown["reasons"], shown
        deny(hub, shown["id"])
    assert "The user denied this command" in outcome["error"]
    assert not marker.exists()


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("GIT_CONFIG_KEY_0", "core.fsmonitor"),
        ("GIT_CONFIG_PARAMETERS", "'core.fsmonitor'='touch x'"),
        ("PYTHONPATH", "/tmp/evil"),
        ("PYTHONWARNINGS", "ignore::evil.Warning"),
        ("NODE_OPTIONS", "--require /tmp/evil.js"),
        ("PERL5OPT", "-Mevil"),
        ("GCONV_PATH", "/tmp/evil"),
        ("RUBYOPT", "-revil"),
        ("JAVA_TOOL_OPTIONS", "-javaagent:/tmp/evil.jar"),
        ("LESSOPEN", "|/tmp/evil %s"),
        ("LESSKEYIN", "k"),  # red team, 2026-12-04: its LESSOPEN ran under a plain `less README`
        ("OPENSSL_CONF", "ossl.cnf"),  # its provider's library ran under `curl --version`
        ("npm_config_script_shell", "./x"),
        ("GIT_TEST_FSMONITOR", "echo x; false"),  # git runs it where core.fsmonitor is unset (red team)
    ],
)
@pytest.mark.xdist_group("pins-shared-serve")
async def test_environment_that_loads_code_is_refused_with_its_name(shared_server: Any, key: str, value: str) -> None:
    refused = await run(shared_server, {"command": "git status", "env": {key: value}})
    assert f"`env` may not set {key}" in refused["error"], refused
    assert "Put that code in the command itself" in refused["error"]


async def test_git_config_in_the_environment_would_run_hidden_code_and_is_refused(home: Path, tmp_path: Path) -> None:
    marker = tmp_path / "fsmonitor-ran"
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    env = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.fsmonitor", "GIT_CONFIG_VALUE_0": f"touch {marker}"}
    subprocess.run(["git", "status"], env={**os.environ, **env}, cwd=tmp_path / "repo", capture_output=True)
    assert marker.exists(), "git runs the fsmonitor named in the environment"
    marker.unlink()
    async with serving(home) as client:
        refused = await run(client, {"command": "git status", "cwd": str(tmp_path / "repo"), "env": env})
    assert "`env` may not set GIT_CONFIG" in refused["error"], refused
    assert not marker.exists()


RUNS_SH = "unixexec:path=/bin/sh,argv0=sh,argv1=-c,argv2=rm%20-rf%20VICTIM"  # a bus address that runs sh


@pytest.mark.parametrize(
    ("command", "key", "value"),
    [
        ("systemctl --user is-active foo", "DBUS_SESSION_BUS_ADDRESS", RUNS_SH),
        ("busctl list", "DBUS_SYSTEM_BUS_ADDRESS", RUNS_SH),
        ("tar cf x.tar --files-from /dev/null && tar tf x.tar", "TAR_OPTIONS",
         "--checkpoint=1 --checkpoint-action=exec='rm -rf VICTIM'"),
        ("vim -es -c q", "VIMINIT", ":!rm -rf VICTIM"),
        ("less /etc/hostname", "LESS", "+!rm -rf VICTIM"),
        ("psql --version", "PSQLRC", "/tmp/evil.psqlrc"),
    ],
    ids=["a session bus running a program", "a system bus", "tar's checkpoint action", "vim", "less", "psql"],
)  # fmt: skip
async def test_environment_that_runs_code_under_a_harmless_command_is_refused(
    home: Path, tmp_path: Path, command: str, key: str, value: str
) -> None:
    """A red team, 2026-12-05: `systemctl --user is-active foo` judged safe deleted a folder through the
    bus address the model sent, and the journal, which never keeps env values, could not show it."""
    victim = tmp_path / "victim"
    victim.mkdir()
    async with serving(home) as client:
        refused = await run(
            client, {"command": command, "cwd": str(tmp_path), "env": {key: value.replace("VICTIM", str(victim))}}
        )
    assert f"`env` may not set {key}" in refused["error"], refused
    assert victim.exists()


async def test_an_editor_given_as_a_command_line_waits_and_the_prompt_shows_it(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path
) -> None:
    """`git commit` runs $EDITOR through the shell: `EDITOR='rm -rf ~'` was not held (only an editor
    named by its path was). An editor's bare name still runs unasked."""
    victim = tmp_path / "victim"
    victim.mkdir()
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    editor = f"rm -rf {victim}; true"
    async with serving(home, bound=True) as held, anyio.create_task_group() as group:
        outcome: dict = {}

        async def ask() -> None:
            outcome.update(
                await run(held, {"command": "git commit --allow-empty -q", "cwd": str(repo), "env": {"EDITOR": editor}})
            )

        group.start_soon(ask)
        await held_by(hub)
        [shown] = holds_shown(hub)
        assert f"EDITOR={editor}" in shown["env_shown"], shown
        deny(hub, shown["id"])
    assert "The user denied this command" in outcome["error"] and victim.exists()
    assert not picks_programs("EDITOR", "vim") and picks_programs("EDITOR", "code --wait")
