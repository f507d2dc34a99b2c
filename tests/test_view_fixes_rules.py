"""A build-folder rule covers the folder names its button names, no more (red team, 2026-12-06:
"Always allow deleting build folders (build, dist, node_modules...) in ~/project", made for `rm -rf
node_modules`, let `rm -rf bin` of ~/project/tools delete a project's own scripts unasked)."""

from __future__ import annotations

import pytest

from app.core.authority.rule_book import RuleBook
from app.core.classifier import classify
from app.core.i18n import current_language, use_language
from app.core.journal.store import Journal
from app.core.paths import AppPaths
from app.core.policy.rules import (
    DELETE_BUILD_FOLDERS,
    FOLDER_SCOPE,
    KINDS,
    SESSION_SCOPE,
    Rule,
    build_folders_kind,
    describe,
    folder_names,
    matching_rule,
    proposal_for,
)

PROJECT = "/home/ana/project"


def _match(command: str, rule: Rule, cwd: str = PROJECT) -> Rule | None:
    return matching_rule([rule], command, cwd, classify(command, cwd=cwd), real=lambda path: path)


def _made_for(command: str, cwd: str = PROJECT) -> Rule:
    """The rule the person makes with "Always allow ..." for `command` held in `cwd`."""
    proposal = proposal_for(command, cwd, classify(command, cwd=cwd))
    assert proposal is not None, command
    return Rule(1, proposal.kind, proposal.folder, FOLDER_SCOPE, 0.0, proposal.description())


def test_the_rule_offered_names_exactly_the_folders_the_deletion_removes() -> None:
    proposal = proposal_for("rm -rf node_modules", PROJECT, classify("rm -rf node_modules", cwd=PROJECT))
    assert proposal is not None
    assert proposal.description(home="/home/ana") == "deleting node_modules in ~/project"
    assert (
        proposal.description(SESSION_SCOPE, home="/home/ana") == "deleting node_modules in ~/project for this session"
    )
    twice = proposal_for("rm -rf ./dist build dist", PROJECT, classify("rm -rf ./dist build dist", cwd=PROJECT))
    assert twice is not None and folder_names(twice.kind) == ("build", "dist")


def test_a_rule_made_for_node_modules_covers_node_modules_in_its_folder_and_below_only() -> None:
    rule = _made_for("rm -rf node_modules")
    assert _match("rm -rf node_modules", rule) == rule
    assert _match("rm -rf node_modules", rule, cwd=f"{PROJECT}/packages/web") == rule
    assert _match("rm -rf node_modules", rule, cwd="/home/ana/other") is None
    for command in ("rm -rf bin", "rm -rf build", "rm -rf node_modules bin", "rm -rf node_modules; rm -rf out"):
        assert _match(command, rule) is None, command
        assert _match(command, rule, cwd=f"{PROJECT}/tools") is None, command


def test_a_rule_of_several_names_covers_any_of_them_and_nothing_else() -> None:
    rule = _made_for("rm -rf build dist")
    assert _match("rm -rf dist", rule) == rule
    assert _match("rm -rf build && rm -rf dist", rule) == rule
    assert _match("rm -rf target", rule) is None


def test_a_rule_stored_with_the_old_broad_kind_covers_only_the_names_its_button_showed() -> None:
    """Its button read "build folders (build, dist, node_modules...)": the names after "..." were never
    seen, so they are no longer covered."""
    old = Rule(4, DELETE_BUILD_FOLDERS, PROJECT, FOLDER_SCOPE, 0.0, "deleting build folders in ~/project")
    for name in ("build", "dist", "node_modules"):
        assert _match(f"rm -rf {name}", old) == old, name
    for name in ("bin", "site", "out", "target", "coverage", "obj"):
        assert _match(f"rm -rf {name}", old, cwd=f"{PROJECT}/tools") is None, name
    assert (
        describe(DELETE_BUILD_FOLDERS, PROJECT, home="/home/ana") == "deleting build, dist, node_modules in ~/project"
    )


@pytest.mark.parametrize(
    "kind",
    [
        "delete-build-folders:",
        "delete-build-folders:src",  # not a build folder
        "delete-build-folders:node_modules,build",  # not in the one order the app writes
        "delete-build-folders:build,build",
        "delete-build-folders:build,",
        "delete-build-folders:build;rm",
        "delete-anything:build",
        "delete-build-folders-and-more",
    ],
)
def test_a_kind_not_written_by_this_version_names_no_folder_and_is_not_known(kind: str) -> None:
    assert folder_names(kind) is None and kind not in KINDS
    rule = Rule(1, kind, PROJECT, FOLDER_SCOPE, 0.0, "")
    assert _match("rm -rf build", rule) is None
    with pytest.raises(ValueError, match="unknown rule kind"):
        describe(kind, PROJECT)


def test_only_build_folders_make_a_kind() -> None:
    assert build_folders_kind(["node_modules", "build", "node_modules"]) == "delete-build-folders:build,node_modules"
    assert build_folders_kind(["node_modules", "build"]) in KINDS and DELETE_BUILD_FOLDERS in KINDS
    for names in ([], ["src"], ["build", "a,b"]):
        with pytest.raises(ValueError):
            build_folders_kind(names)


def test_a_rule_of_named_folders_is_kept_in_the_journal_and_read_at_the_next_start(paths: AppPaths) -> None:
    kind = build_folders_kind(["node_modules"])
    with Journal.open(paths) as journal:
        made = journal.add_rule(kind, PROJECT, FOLDER_SCOPE, "deleting node_modules in ~/project")
        old = journal.add_rule(DELETE_BUILD_FOLDERS, PROJECT, FOLDER_SCOPE, "deleting build folders in ~/project")
        journal.add_rule("delete-build-folders:src", PROJECT, FOLDER_SCOPE, "planted")
        book = RuleBook(journal)
    assert [rule.id for rule in book.in_force(())] == [made.id, old.id]
    assert [rule.shown() for rule in book.carried_over()] == [
        describe(kind, PROJECT),
        describe(DELETE_BUILD_FOLDERS, PROJECT),
    ]


def test_the_names_are_said_as_they_are_in_every_language() -> None:
    before = current_language()
    try:
        use_language("de")
        assert (
            describe(build_folders_kind(["dist", "node_modules"]), "/srv/p") == "dist, node_modules löschen in /srv/p"
        )
    finally:
        use_language(before)
