"""A deletion is judged and said where the kernel lands it, not where its text seems to point (a red
team, 2026-12-05): with `build/cache` a link to `~/a`, `rm -rf build/cache/../../user` was said as
"Deletes the folder …/user/proj/user", a deletion of files, while `..` goes up from where the link
leads and the whole home folder went; `rm -rf cache/*` with `cache` a link to the home folder was
"everything matching ~/proj/cache/*". And `perl -d` runs `./.perldb` (or `~/.perldb`) as Perl: one
deleted ~/Documents unheld. Real links and files in a home folder of the test's own."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.core.classifier import Classification, Tier, classify
from app.core.classifier.danger import Danger
from app.core.classifier.findings import DELETE_RECURSIVE
from app.core.policy.rules import DELETE_BUILD_FOLDERS, FOLDER_SCOPE, Rule, matching_rule, proposal_for


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's home folder, `user`, with a project, Documents and a folder `a`."""
    folder = tmp_path / "user"
    for name in ("proj", "Documents", "a"):
        (folder / name).mkdir(parents=True)
    (folder / "Documents" / "thesis.txt").write_text("years of work\n")
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.fixture
def project(home: Path) -> Path:
    return home / "proj"


def deletions(verdict: Classification) -> list[tuple[str | None, str | None, Danger | None]]:
    """(target, kind, danger) of each recursive removal found."""
    return [(f.target, f.kind, f.danger) for f in verdict.findings if f.reason.startswith("rm -r")]


# ---- where the deletion lands


def test_dot_dot_after_a_link_goes_up_from_where_the_link_leads(home: Path, project: Path) -> None:
    """`build/cache/..` is ~ (the kernel resolves it physically), so `../../user` is the home folder."""
    (project / "build").mkdir()
    (project / "build" / "cache").symlink_to(home / "a")
    verdict = classify("rm -rf build/cache/../../user", cwd=str(project))
    assert deletions(verdict) == [(str(home), None, Danger.LOSES_EVERYTHING)], verdict.findings
    assert f"Deletes your whole home folder {home} and everything in it: this cannot be undone" in verdict.plain


def test_a_glob_in_a_folder_that_is_a_link_is_a_glob_where_it_leads(home: Path, project: Path) -> None:
    (project / "cache").symlink_to(home)
    verdict = classify("rm -rf cache/*", cwd=str(project))
    assert deletions(verdict) == [(f"{home}/*", None, Danger.LOSES_EVERYTHING)], verdict.findings
    assert verdict.danger is Danger.LOSES_EVERYTHING


def test_a_name_after_cd_into_a_link_is_said_where_it_is(home: Path, project: Path) -> None:
    (project / "cache").symlink_to(home)
    verdict = classify("cd cache && rm -rf Documents", cwd=str(project))
    assert deletions(verdict) == [(str(home / "Documents"), None, Danger.LOSES_FILES)], verdict.findings
    assert f"Deletes the folder {home / 'Documents'} and everything in it" in verdict.plain


def test_a_rule_for_build_folders_does_not_cover_a_name_a_link_takes_home(home: Path, project: Path) -> None:
    """`build` a link to ~: `build/Documents` is ~/Documents, not a build folder of the project (the
    kind a rule covers is not set on it)."""
    (project / "build").symlink_to(home)
    command = "rm -rf build/Documents"
    verdict = classify(command, cwd=str(project))
    assert deletions(verdict) == [(str(home / "Documents"), None, Danger.LOSES_FILES)], verdict.findings
    rule = Rule(1, DELETE_BUILD_FOLDERS, str(project), FOLDER_SCOPE, 0.0, "")
    assert matching_rule([rule], command, str(project), verdict) is None
    assert proposal_for(command, str(project), verdict) is None


def test_a_forced_removal_through_a_link_is_not_one_in_the_working_folder(home: Path, project: Path) -> None:
    """`rm -f cache/x` was "Deletes the file …/proj/cache/x", moderate, and deleted ~/x."""
    (project / "cache").symlink_to(home)
    (home / "x").write_text("mine\n")
    verdict = classify("rm -f cache/x", cwd=str(project))
    assert verdict.tier is Tier.DESTRUCTIVE, verdict.findings
    assert f"Deletes {home / 'x'} without asking" in verdict.plain


def test_moving_everything_in_a_folder_that_is_a_link_home_is_broad(home: Path, project: Path) -> None:
    (project / "cache").symlink_to(home)
    verdict = classify("mv cache/* /tmp/elsewhere/", cwd=str(project))
    assert verdict.danger is Danger.SYSTEM, verdict.findings


def test_emptying_a_link_with_a_trailing_slash_empties_where_it_leads(home: Path, project: Path) -> None:
    """GNU rm goes through `cache/` (a link to ~) and deletes what the home folder holds."""
    (project / "cache").symlink_to(home)
    verdict = classify("rm -rf cache/", cwd=str(project))
    assert verdict.danger is Danger.LOSES_EVERYTHING, verdict.findings


# ---- what must not change


def test_a_link_itself_is_what_rm_deletes(home: Path, project: Path) -> None:
    """`rm -rf build`, `build` a link to ~: rm removes the link only; said and classed as before."""
    (project / "build").symlink_to(home)
    verdict = classify("rm -rf build", cwd=str(project))
    assert deletions(verdict) == [(str(project / "build"), DELETE_RECURSIVE, Danger.LOSES_FILES)]


def test_build_folders_without_links_are_as_before(project: Path) -> None:
    (project / "node_modules").mkdir()
    verdict = classify("rm -rf node_modules dist", cwd=str(project))
    assert deletions(verdict) == [
        (str(project / "node_modules"), DELETE_RECURSIVE, Danger.LOSES_FILES),
        (str(project / "dist"), DELETE_RECURSIVE, Danger.LOSES_FILES),
    ]
    rule = Rule(1, DELETE_BUILD_FOLDERS, str(project), FOLDER_SCOPE, 0.0, "")
    assert matching_rule([rule], "rm -rf node_modules dist", str(project), verdict) == rule


def test_an_absolute_path_without_links_is_as_written(project: Path) -> None:
    verdict = classify("rm -rf /tmp/x", cwd=str(project))
    assert deletions(verdict) == [("/tmp/x", None, Danger.LOSES_FILES)]


def test_a_path_that_does_not_exist_yet_stays_as_written(project: Path) -> None:
    verdict = classify("rm -rf gone/sub", cwd=str(project))
    assert deletions(verdict) == [(str(project / "gone" / "sub"), DELETE_RECURSIVE, Danger.LOSES_FILES)]


def test_a_project_reached_through_a_linked_folder_keeps_its_words(home: Path, tmp_path: Path) -> None:
    """Only a link on the part the command names changes the words: a working folder reached through
    a link (macOS's /tmp, a linked workspace) is said as the command's folder is."""
    (tmp_path / "disk" / "proj").mkdir(parents=True)
    (home / "work").symlink_to(tmp_path / "disk")
    cwd = home / "work" / "proj"
    verdict = classify("rm -rf build", cwd=str(cwd))
    assert deletions(verdict) == [(str(cwd / "build"), DELETE_RECURSIVE, Danger.LOSES_FILES)]


# ---- perl -d runs its settings file

DELETES_DOCUMENTS = 'system("rm", "-rf", "$ENV{HOME}/Documents");\n'


@pytest.mark.parametrize("command", ["perl -d -e 1", "perl -de 1", "perl -wd -e 1", "perl -dt -e 1"])
def test_perl_d_runs_the_perldb_of_the_folder_it_runs_in(project: Path, command: str) -> None:
    (project / ".perldb").write_text(DELETES_DOCUMENTS)
    verdict = classify(command, cwd=str(project))
    assert verdict.tier is Tier.DESTRUCTIVE, verdict.findings
    assert str(project / ".perldb") in verdict.scripts


@pytest.mark.parametrize("name", [".perldb", "perldb.ini"])
def test_perl_d_runs_the_home_folders_settings_file_when_the_folder_has_none(
    home: Path, project: Path, name: str
) -> None:
    (home / name).write_text(DELETES_DOCUMENTS)
    verdict = classify("perl -d -e 1", cwd=str(project))
    assert verdict.tier is Tier.DESTRUCTIVE and str(home / name) in verdict.scripts, verdict.findings


def test_perl_d_is_held_when_the_command_line_writes_the_settings_file(project: Path) -> None:
    verdict = classify("echo 'system q(rm -rf ~/Documents)' > .perldb; perl -d -e 1", cwd=str(project))
    assert verdict.tier is Tier.DESTRUCTIVE, verdict.findings


@pytest.mark.parametrize(
    "command", ["PERL5DB='BEGIN{system q(rm -rf ~)}' perl -d -e 1", "HOME=/tmp/elsewhere perl -d -e 1"]
)
def test_perl_d_is_held_when_the_command_line_sets_the_debuggers_code_or_home(project: Path, command: str) -> None:
    """PERL5DB is the debugger's own code; HOME is where it looks for `.perldb` when the folder has none."""
    verdict = classify(command, cwd=str(project))
    assert verdict.tier is Tier.DESTRUCTIVE, verdict.findings


def test_perl_d_with_harmless_settings_is_not_held(home: Path, project: Path) -> None:
    (home / ".perldb").write_text('parse_options("NonStop=1");\n')
    verdict = classify("perl -d -e 1", cwd=str(project))
    assert verdict.tier is not Tier.DESTRUCTIVE, verdict.findings
    assert str(home / ".perldb") in verdict.scripts


def test_perl_d_reads_no_settings_file_that_is_not_a_file(home: Path, project: Path) -> None:
    """perl5db.pl's `-f`: a folder named `.perldb` here is passed over for the home folder's file."""
    (project / ".perldb").mkdir()
    (home / ".perldb").write_text(DELETES_DOCUMENTS)
    verdict = classify("perl -d -e 1", cwd=str(project))
    assert verdict.tier is Tier.DESTRUCTIVE and str(home / ".perldb") in verdict.scripts, verdict.findings
    assert os.path.isdir(project / ".perldb")
