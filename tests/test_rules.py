"""The user's rules against approval fatigue: what may be offered, what a rule covers, and where it lives."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from app.core.classifier import classify
from app.core.journal.schema import SCHEMA_VERSION
from app.core.journal.store import Journal, Status
from app.core.paths import AppPaths
from app.core.policy.rules import (
    DELETE_BUILD_FOLDERS,
    FOLDER_SCOPE,
    SESSION_SCOPE,
    Rule,
    describe,
    matching_rule,
    proposal_for,
)
from app.core.policy.tool_sets import ALL_TOOLS, EXECUTE_ONLY, set_tool_set, tool_set
from tests.channel_peers import running_hub
from tests.in_process_server import serving
from tests.stdio_client import run

PROJECT = "/home/ana/project"


def _rule(rule_id: int = 1, folder: str = PROJECT, scope: str = FOLDER_SCOPE, session: str | None = None) -> Rule:
    return Rule(rule_id, DELETE_BUILD_FOLDERS, folder, scope, 0.0, "deleting build folders", session)


def _proposal(command: str, cwd: str | None = PROJECT):  # type: ignore[no-untyped-def]
    return proposal_for(command, cwd, classify(command, cwd=cwd))


def _match(command: str, rules: list[Rule], cwd: str = PROJECT, session: str | None = None) -> Rule | None:
    return matching_rule(rules, command, cwd, classify(command, cwd=cwd), session)


def test_deleting_a_build_folder_in_the_working_folder_offers_a_rule_in_plain_words() -> None:
    proposal = _proposal("rm -rf build")
    assert proposal is not None and proposal.folder == PROJECT
    assert proposal.description(home="/home/ana") == "deleting build in ~/project"  # what it deleted, no more
    assert proposal.description(SESSION_SCOPE, home="/home/ana").endswith("in ~/project for this session")
    several = _proposal("rm -rf node_modules dist && rm -r __pycache__")
    assert several is not None
    assert several.description(home="/home/ana") == "deleting __pycache__, dist, node_modules in ~/project"


def test_no_rule_is_offered_for_anything_else() -> None:
    for command in (
        "rm -rf src",  # real work
        "rm -rf ../build",  # outside the folder
        "rm -rf build/*",  # a pattern
        "rm -rf build && sudo reboot",  # something else destructive too
        "rm -rf $OUT",  # unknown name
        "git push --force",
        "cd /tmp && rm -rf build",  # a literal cd leads elsewhere
        "rm -rf .",
    ):
        assert _proposal(command) is None, command
    assert _proposal("rm -rf build", cwd=None) is None


def test_a_folder_rule_covers_build_folders_in_its_folder_and_below_only() -> None:
    rules = [_rule(7)]
    assert _match("rm -rf build", rules) == rules[0]
    assert _match("rm -rf packages/web/node_modules", rules) is None, "a folder on the way could become a link"
    assert _match("rm -rf build", rules, cwd="/home/ana/other") is None
    assert _match("rm -rf src", rules) is None
    assert _match("rm -rf build; git reset --hard", rules) is None
    assert _match("ls", rules) is None
    assert _match("rm -rf build && rm -rf ./dist; rm -r -f -- node_modules", rules) == rules[0]
    # A rule of the old kind covers the names its button showed ("build, dist, node_modules..."), no more.
    assert _match("rm -rf out", rules) is None


def test_a_rule_covers_no_command_that_could_change_where_its_names_lead_before_the_deletion() -> None:
    """Red team and review, 2026-12-04: each of these deleted or emptied a folder outside the project
    with no click. A rule covers `rm` of literal relative paths and nothing else."""
    rules = [_rule(7)]
    for command in (
        "rm -rf build/",  # GNU rm follows a symlink named so, and empties what it points to
        "ln -sfn ~/Documents build && rm -rf build",  # the command makes the name lead elsewhere first
        "mv ~/Documents dist; rm -rf dist",
        "env -C ~/.local rm -rf bin",  # runs in another folder
        "env --ch=/home/ana/.local rm -rf bin",
        "CDPATH=/home/ana cd .local && rm -rf bin",
        "cd ~+/../.local && rm -rf bin",
        "eval 'cd $HOME/.local'; rm -rf bin",
        "cd packages && rm -rf dist",
        "rm -rf node_modules && npm install",  # anything else: split it, the rule covers the rm alone
        "rm -rf build > log.txt",
        "rm -rf build &",
        "rm -rf build\nrm -rf dist",
        "rm -rf sub#/build; rm ~/Documents/thesis.tex",  # one word to bash, a comment to shlex
        "rm -rf build sub/bin",  # `sub` made a link by a job while `build` is being deleted
        'rm -rf "build"',
    ):
        assert _match(command, rules) is None, command
        assert _proposal(command) is None, command


def test_a_rule_covers_no_name_that_leads_through_a_symlink_when_the_tray_decides(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "build").mkdir(parents=True)
    (project / "up").symlink_to(tmp_path)  # an earlier command made it
    (project / "dist").symlink_to(tmp_path / "Documents")
    rules = [_rule(2, folder=str(project))]
    assert _match("rm -rf build", rules, cwd=str(project)) == rules[0]
    assert _match("rm -rf up/bin", rules, cwd=str(project)) is None, "it deletes tmp_path/bin"
    assert _match("rm -rf dist", rules, cwd=str(project)) is None, "a link: the user says"


def test_a_session_rule_counts_only_for_its_own_session() -> None:
    rules = [_rule(3, scope=SESSION_SCOPE, session="12")]
    assert _match("rm -rf dist", rules, session="12") == rules[0]
    assert _match("rm -rf dist", rules, session="13") is None
    assert _match("rm -rf dist", rules) is None


def test_a_rule_of_a_kind_this_version_does_not_know_covers_nothing_and_cannot_be_described() -> None:
    """A journal written by a newer version may hold kinds this one cannot judge: skipped, not guessed."""
    unknown = Rule(2, "delete-anything", PROJECT, FOLDER_SCOPE, 0.0, "deleting anything")
    assert _match("rm -rf build", [unknown]) is None
    assert _match("rm -rf build", [unknown, _rule(5)]) == _rule(5)
    with pytest.raises(ValueError, match="unknown rule kind 'delete-anything'"):
        describe("delete-anything", PROJECT)


def test_an_empty_command_is_covered_by_no_rule() -> None:
    assert matching_rule([_rule()], "  ", PROJECT, classify("rm -rf build", cwd=PROJECT)) is None


def test_a_tool_set_that_does_not_exist_is_refused_and_the_choice_kept(paths: AppPaths) -> None:
    with Journal.open(paths) as journal:
        set_tool_set(journal, EXECUTE_ONLY)
        with pytest.raises(ValueError, match="tools must be one of"):
            set_tool_set(journal, "everything")
        assert tool_set(journal) == EXECUTE_ONLY
        set_tool_set(journal, ALL_TOOLS)
        assert tool_set(journal) == ALL_TOOLS


def test_rules_live_in_the_journal_without_raising_its_schema_version(paths: AppPaths) -> None:
    with Journal.open(paths) as journal:
        rule = journal.add_rule(DELETE_BUILD_FOLDERS, PROJECT, FOLDER_SCOPE, "deleting build folders in ~/project")
        assert journal.rules() == [rule]
        assert journal.schema_version() == SCHEMA_VERSION
        assert journal.remove_rule(rule.id) and journal.rules() == []
        assert not journal.remove_rule(rule.id)


def test_a_session_rule_is_listed_only_while_its_server_lives(paths: AppPaths) -> None:
    with Journal.open(paths) as journal:
        server = journal.register_server(1, headless=True, lock_key=None)
        rule = journal.add_rule(DELETE_BUILD_FOLDERS, PROJECT, SESSION_SCOPE, "x for this session", str(server))
        assert journal.rules() == [rule]
        journal.end_server(server)
        assert journal.rules() == []


def test_the_journal_says_which_rule_allowed_a_command(paths: AppPaths) -> None:
    with Journal.open(paths) as journal:
        held = journal.begin_command(command="rm -rf build", cwd=PROJECT, status=Status.WAITING, hold_expires_at=9e12)
        assert journal.decide(held, allowed=True, by="rule 4", rule_id=4)
        record = journal.get_command(held)
        assert record is not None and record.allowed_by_rule == 4 and record.decided_by == "rule 4"


def test_a_journal_from_before_rules_gains_the_table_and_column_on_open(paths: AppPaths) -> None:
    Journal(paths).close()
    db = sqlite3.connect(paths.journal)
    db.execute("DROP TABLE rules")
    db.execute("ALTER TABLE commands DROP COLUMN allowed_by_rule")
    db.commit()
    db.close()
    with Journal.open(paths) as journal:
        assert journal.rules() == []
        held = journal.begin_command(command="rm -rf build", cwd=PROJECT, status=Status.WAITING, hold_expires_at=9e12)
        assert journal.get_command(held).allowed_by_rule is None  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_a_users_rule_lets_the_tray_delete_a_build_folder_at_once_and_others_still_wait(
    home: Path, paths: AppPaths, tmp_path: Path
) -> None:
    """The tray applies the rules: its hub, here in this process, with a server bound to it as the
    tray's runner of a server's calls is (tests/in_process_server.py); the command runs for real.
    The rule is written here as the approval window's click writes it, before the tray starts
    (tests/test_approval_prompt.py makes one by a real click)."""
    project = tmp_path / "project"
    for name in ("build", "src"):
        (project / name).mkdir(parents=True)
    with Journal.open(paths) as journal:
        rule = journal.add_rule(DELETE_BUILD_FOLDERS, str(project.resolve()), FOLDER_SCOPE, "deleting build folders")
    with running_hub(paths) as (hub, _seen):
        hub.set_settings(approval_window_s=1.0)  # as `approval-mode --window 1` asks: a shorter wait only tightens
        async with serving(home, bound=True) as client:
            ran = await run(client, {"command": "rm -rf build", "cwd": str(project)})
            waited = await run(client, {"command": "rm -rf src", "cwd": str(project)})
    assert ran.get("exitCode") == 0 and not (project / "build").exists(), ran
    assert waited["status"] == "waiting" and (project / "src").exists()  # a job the user may still allow
    # What the model reads is what the user reads: the classifier's plain words.
    assert f"What it does: Deletes the folder {project.resolve()}/src and everything in it" in waited["note"]
    with Journal.open(paths) as journal:
        rows = {r.command: r for r in journal.recent_commands(limit=5)}
    assert rows["rm -rf build"].allowed_by_rule == rule.id and rows["rm -rf build"].decided_by == f"rule {rule.id}"
    assert rows["rm -rf src"].decision is None and rows["rm -rf src"].allowed_by_rule is None


@pytest.mark.anyio
async def test_through_a_real_server_a_rule_deletes_nothing_outside_its_folder_and_the_user_is_asked(
    home: Path, paths: AppPaths, tmp_path: Path
) -> None:
    """Red team, 2026-12-04: with the user's build-folder rule for ~/project, these deleted ~/.local/bin
    and ~/bin and emptied ~/Documents, with no click."""
    user = tmp_path / "user"
    project = user / "project"
    project.mkdir(parents=True)
    kept = [user / ".local" / "bin", user / "bin", user / "Documents"]
    for folder in kept:
        folder.mkdir(parents=True)
        (folder / "keep").write_text("x")
    (project / "up").symlink_to(user)  # made by an earlier command
    with Journal.open(paths) as journal:
        journal.add_rule(DELETE_BUILD_FOLDERS, str(project.resolve()), FOLDER_SCOPE, "deleting build folders")
    routes = [
        f"env -C {user}/.local rm -rf bin",
        "rm -rf up/bin",
        f"ln -sfn {user}/Documents build && rm -rf build/",
    ]
    with running_hub(paths) as (hub, _seen):
        hub.set_settings(approval_window_s=1.0)
        async with serving(home, bound=True) as client:
            said = [await run(client, {"command": command, "cwd": str(project)}) for command in routes]
    assert [result["status"] for result in said] == ["waiting"] * 3, said
    assert all((folder / "keep").exists() for folder in kept)


@pytest.mark.anyio
async def test_a_rule_answers_no_session_command_nor_one_with_an_environment_of_the_models(
    home: Path, paths: AppPaths, tmp_path: Path
) -> None:
    """Review, 2026-12-04: in the session a function the agent defined may be what `rm` is, and an
    `env` PATH of the model's picks another `rm`: the user is asked."""
    project = tmp_path / "project"
    for name in ("build", "dist"):
        (project / name).mkdir(parents=True)
    with Journal.open(paths) as journal:
        journal.add_rule(DELETE_BUILD_FOLDERS, str(project.resolve()), FOLDER_SCOPE, "deleting build folders")
    with running_hub(paths) as (hub, _seen):
        hub.set_settings(approval_window_s=1.0)
        async with serving(home, bound=True) as client:
            path = await run(client, {"command": "rm -rf build", "cwd": str(project), "env": {"PATH": "/usr/bin"}})
            await client.call_tool("terminal_run", {"command": f"cd {project}"})
            session = await client.call_tool("terminal_run", {"command": "rm -rf dist"})
            shown = [hold.to_window() for hold in hub.pending_holds()]
    assert path["status"] == "waiting" and (project / "build").exists(), path
    assert "confirmation_id" in session.content[0].text and (project / "dist").exists(), session
    assert len(shown) == 2


def test_the_window_offers_no_rule_where_no_rule_may_answer() -> None:
    from app.ui.windows.held_command import judged

    held = judged(1, "rm -rf build", PROJECT, client="Claude", expires_at=0.0, protected=())
    assert held.proposal is not None
    assert (
        judged(1, "rm -rf build", PROJECT, client="Claude", expires_at=0.0, protected=(), offer_rule=False).proposal
        is None
    )
