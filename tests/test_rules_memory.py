"""The tray's rules live in its memory, and another program's writes to the journal are told.

The attacks are commands an agent runs through `execute_command`, writing the journal file behind
the tray's back. Where what is tested is the tray's authority (a rule in the file allows nothing, a
rule from a previous run applies), the tray's hub runs in this process with servers bound to it
(tests/in_process_server.py): a click on Allow is the hub's own call for it, and `hub.tick()` is
what the tray's monitor does each poll. A real tray stays for its notice at start and for an
attack that asks the tray itself (`ask_tray` refuses a hub in pytest), with a real `serve`. The
commands run without the OS container (tests/test_authority.py `connect`), which would make the
journal read-only: what is tested here is the tray's own second line. The attack scripts are
commands the user allowed.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import anyio
import pytest

from app.core.execution import container
from app.core.journal.store import Journal
from app.core.paths import AppPaths
from app.core.policy.approval import ApprovalMode, set_approval_mode
from app.core.policy.rules import DELETE_BUILD_FOLDERS, FOLDER_SCOPE
from tests.agent_scripts import agent_script
from tests.channel_peers import running_hub
from tests.desktop_env import wait_for
from tests.in_process_server import allow_when_held, deny, held_by, serving
from tests.stdio_client import STOP_DEADLINE_S, run, run_when_allowed
from tests.test_authority import connect, hidden, tray_log
from tests.tray_process import running_tray

pytestmark = pytest.mark.anyio

FOREIGN_NOTICE = "The activity log was changed by another program"


@pytest.fixture(autouse=True)
def trays_without_the_container(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tray runs the commands (issue 21): without the container, so that these attacks reach
    the journal and the tray itself (the container makes the journal read-only first)."""
    monkeypatch.setenv(container.BWRAP_ENV, str(home / "no-bwrap"))


def never_ask(paths: AppPaths) -> None:
    """The user's own earlier choice, made before the tray starts: no command waits for them."""
    with Journal.open(paths) as journal:
        set_approval_mode(journal, ApprovalMode.NEVER)


def insert_rule(paths: AppPaths, folder: str) -> str:
    """An agent's script: one "always allow deleting build folders in /" row, straight into the file."""
    return f"""
import base64, sqlite3, time
db = sqlite3.connect({hidden(paths.journal)})
db.execute("INSERT INTO rules(kind, folder, scope, description, created_at) VALUES (?, ?, ?, ?, ?)",
           ({DELETE_BUILD_FOLDERS!r}, {folder!r}, {FOLDER_SCOPE!r}, "deleting build folders in /", time.time()))
db.commit()
print(db.execute("SELECT count(*) FROM rules").fetchone()[0], "rule in the file")
"""


async def test_a_rule_inserted_into_the_file_while_the_tray_runs_allows_nothing(
    home: Path, paths: AppPaths, tmp_path: Path
) -> None:
    (tmp_path / "build").mkdir()
    attack = agent_script(insert_rule(paths, "/"))
    with running_hub(paths) as (hub, seen):
        async with serving(home, bound=True) as agent, serving(home, bound=True) as held:
            hub.tick()  # the tray's monitor looks before the attack: nothing foreign yet
            assert FOREIGN_NOTICE not in seen.titles(), seen.notices
            # The user allows the attack script (a command they allowed), then the rm must still wait.
            inserted = await run_when_allowed(agent, {"command": attack}, lambda: allow_when_held(hub))
            assert inserted.get("stdout") == "1 rule in the file\n", inserted  # the row is there
            hub.tick()  # the tray's monitor notices the write; the rule in the file stays in the file
            assert FOREIGN_NOTICE in seen.titles(), seen.notices
            outcome: dict = {}

            async def ask() -> None:
                outcome.update(await run(held, {"command": "rm -rf build", "cwd": str(tmp_path)}))

            async with anyio.create_task_group() as group:
                group.start_soon(ask)
                [hold] = await held_by(hub)
                await anyio.sleep(1.0)
                hub.tick()
                assert hub.pending_holds(), "still waiting for the user: no rule allowed it"
                deny(hub, hold.command_id)
    assert "The user denied this command" in outcome["error"]
    assert (tmp_path / "build").exists()
    with Journal.open(paths) as journal:
        row = next(r for r in journal.recent_commands() if r.command == "rm -rf build")
    assert row.decided_by != "rule 1" and row.decision == "denied"


async def test_a_rule_from_a_previous_run_is_told_at_start(home: Path, paths: AppPaths, tmp_path: Path) -> None:
    with Journal(paths) as journal:
        journal.add_rule(DELETE_BUILD_FOLDERS, str(tmp_path), FOLDER_SCOPE, "deleting build folders")
    with running_tray(home):
        wait_for(lambda: "Rules from a previous run are in force" in tray_log(home), timeout_s=STOP_DEADLINE_S)
        assert str(tmp_path) in tray_log(home), "the notice names the rule's folder"


async def test_a_rule_from_a_previous_run_is_applied(home: Path, paths: AppPaths, tmp_path: Path) -> None:
    (tmp_path / "build").mkdir()
    with Journal(paths) as journal:
        rule = journal.add_rule(DELETE_BUILD_FOLDERS, str(tmp_path), FOLDER_SCOPE, "deleting build folders")
    with running_hub(paths) as (hub, _seen):
        assert [r.folder for r in hub.rules_from_before()] == [str(tmp_path)], "what the tray tells at start"
        async with serving(home, bound=True) as client:
            result = await run(client, {"command": "rm -rf build", "cwd": str(tmp_path)})
    assert result.get("exitCode") == 0, result
    assert not (tmp_path / "build").exists()
    with Journal.open(paths) as journal:
        [row] = journal.recent_commands()
    assert row.decided_by == f"rule {rule.id}"


async def test_a_foreign_rewrite_right_before_the_trays_own_write_is_still_reported_once(
    home: Path, paths: AppPaths
) -> None:
    rewrite_then_tighten = f"""
import base64, sqlite3
from app.core.channel.client import ask_tray
from app.core.paths import AppPaths
db = sqlite3.connect({hidden(paths.journal)})
db.execute("UPDATE commands SET command = 'ls -la' WHERE id = 1")
db.commit()
# A tightening the tray writes at once, a millisecond after the rewrite:
ask_tray(AppPaths.from_environment(), "settings", changes={{"approval_mode": "all"}})
print(db.execute("SELECT command FROM commands WHERE id = 1").fetchone()[0])
"""
    never_ask(paths)  # the script runs Cowork Terminal itself: held, unless the user never asks
    with running_tray(home):
        async with connect(home, headless=False) as agent:
            await run(agent, {"command": "echo first row"})
            attack = await run(agent, {"command": agent_script(rewrite_then_tighten)})
            assert attack.get("stdout") == "ls -la\n", attack  # the rewrite took, the tray wrote next
            wait_for(lambda: FOREIGN_NOTICE in tray_log(home), timeout_s=STOP_DEADLINE_S)
            with sqlite3.connect(paths.journal) as db:  # another foreign write soon after: not said again
                db.execute("UPDATE commands SET command = 'pwd' WHERE id = 1")
            await anyio.sleep(1.0)
    assert tray_log(home).count(FOREIGN_NOTICE) == 1
