"""Where git's (cargo's, yarn's) project settings are read: every folder a `cd` may lead to, as
bash resolves it, a bounded number of them; a repository's submodules where git runs git in them,
found in the work tree it is told and in every index layout git writes (a review, 2026-12-05, of
`report.places` and `project_settings.judge`).

As in test_read_only_judgement_cd, each repository's core.fsmonitor writes a marker file, and a
test shows bash and git really run it before checking that the classifier does not let it pass."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.core.classifier import Tier, _analysed, classify, repository
from app.core.classifier.project_settings import MAX_PLACES
from app.core.classifier.protected import _Protected
from tests.test_read_only import git
from tests.test_read_only_judgement_cd import judged, planted, runs_it, with_plain_submodule

GITLINK = b"\x00\x00\xe0\x00"  # an index entry's mode 160000


def committed(folder: Path, message: str = "first") -> None:
    git(folder, "commit", "-qm", message)


def one_file_repository(folder: Path, name: str, text: str) -> Path:
    """`folder`, a repository with one file committed."""
    folder.mkdir()
    git(folder, "init", "-q")
    (folder / name).write_text(text)
    git(folder, "add", ".")
    committed(folder)
    return folder


def output(folder: Path, *args: str, **env: str) -> str:
    """What `git ARGS...` prints in `folder`, with `env` added to its environment."""
    done = subprocess.run(["git", *args], cwd=folder, env={**os.environ, **env}, check=True, capture_output=True)
    return done.stdout.decode().strip()


def with_repository_in_place(top: Path, marker: Path) -> Path:
    """`top`, a repository with `top/inner` added in place (a gitlink, no .gitmodules), whose monitor
    writes `marker`."""
    top.mkdir()
    git(top, "init", "-q")
    planted(top / "inner", marker)
    git(top, "add", "inner")
    committed(top, "in place")
    return top


def with_submodule(tmp_path: Path, marker: Path) -> Path:
    """A repository `top` with a submodule `lib` (its repository under .git/modules, a change in it)
    whose monitor writes `marker`."""
    top = with_plain_submodule(tmp_path, marker)
    git(
        top,
        "config",
        "-f",
        str(top / ".git" / "modules" / "lib" / "config"),
        "core.fsmonitor",
        f"touch {marker}; false",
    )
    return top


def test_relative_cds_keep_the_places_bounded_and_forty_are_judged_at_once(tmp_path: Path) -> None:
    """Each `cd` may fail, so the folders the shell may be in double with each: past MAX_PLACES the
    folder is lost, and no more are added (eighteen `cd`s took 8 s to judge, each adding a real
    folder for every place)."""
    cds = "; ".join(f"cd d{i}" for i in range(14))
    report = _analysed(f"{cds}; ls", str(tmp_path), _Protected.build(()))
    assert len(report.places) <= MAX_PLACES, len(report.places)
    assert report.lost == "cd d6", report.lost
    command = "; ".join(f"cd d{i}" for i in range(40)) + "; git status"
    started = time.perf_counter()
    result = classify(command, cwd=str(tmp_path))
    assert time.perf_counter() - started < 2
    assert result.tier is Tier.MODERATE
    assert "cannot tell which folder it runs in" in result.reasons[0], result


def test_a_cd_through_a_link_and_up_is_read_where_bash_and_git_go(tmp_path: Path) -> None:
    """`link -> evil/sub`: `cd -P link/..`, `set -P` then `cd link/..`, a plain `cd link/../deep` whose
    logical folder does not exist, and `git -C link/..` all lead to evil/, not to the folder `link` is in."""
    marker = tmp_path / "pwned"
    evil = planted(tmp_path / "evil", marker)
    (evil / "sub").mkdir()
    project = tmp_path / "project"
    (project / "plain").mkdir(parents=True)
    (project / "link").symlink_to(evil / "sub")
    commands = [
        "cd -P link/.. && git status",
        "set -P; cd link/..; git status",
        "cd link && cd -P .. && git status",
        "cd link/../deep && git status",  # project/deep is no folder: bash then goes where the kernel leads
        "git -C link/.. status",
        "env -C link/.. git status",
    ]
    for command in commands:
        assert runs_it(command, project, marker), command
    for command in commands:
        assert judged(command, project) is Tier.MODERATE, command
    assert not runs_it("cd plain/.. && git status", project, marker)
    assert judged("cd plain/.. && git status", project) is Tier.SAFE


def uninitialised_submodule(tmp_path: Path, marker: Path) -> tuple[Path, Path]:
    """A repository whose index has a gitlink `vendor` with no vendor/.git, and a folder `wt` whose
    vendor/.git names a repository with a monitor that writes `marker`."""
    evil = planted(tmp_path / "evil", marker)
    lib = one_file_repository(tmp_path / "lib", "a.txt", "a\n")
    head = output(lib, "rev-parse", "HEAD")
    top = tmp_path / "top"
    top.mkdir()
    git(top, "init", "-q")
    (top / "notes.txt").write_text("top\n")
    git(top, "add", ".")
    git(top, "update-index", "--add", "--cacheinfo", f"160000,{head},vendor")
    committed(top)
    work_tree = tmp_path / "wt"
    (work_tree / "vendor").mkdir(parents=True)
    (work_tree / "vendor" / ".git").write_text(f"gitdir: {evil / '.git'}\n")
    (work_tree / "notes.txt").write_text("top\n")
    return top, work_tree


def test_a_work_tree_named_elsewhere_has_its_submodules_read(tmp_path: Path) -> None:
    """`git --work-tree=../wt status` looks for the index's submodules in ../wt: one there whose
    .git names another repository runs that one's monitor."""
    marker = tmp_path / "pwned"
    top, _work_tree = uninitialised_submodule(tmp_path, marker)
    assert not runs_it("git status", top, marker)
    assert judged("git status", top) is Tier.SAFE
    for command in ("git --work-tree=../wt status", "git --work-tree ../wt status",
                    "git -C .. --work-tree=../wt -C top status",  # from the last -C's folder, as --git-dir
                    f"git --git-dir={top / '.git'} --work-tree={tmp_path / 'wt'} status"):  # fmt: skip
        assert runs_it(command, top, marker), command
        result = classify(command, cwd=str(top))
        assert result.tier is Tier.MODERATE, command
        assert "vendor: core.fsmonitor" in " ".join(result.reasons), result
    assert runs_it("GIT_WORK_TREE=../wt git status", top, marker)
    assert judged("GIT_WORK_TREE=../wt git status", top) is Tier.MODERATE
    assert judged("git --work-tree=../wt rev-parse HEAD", top) is Tier.SAFE  # it runs git in no submodule


def test_variables_that_move_git_s_work_tree_or_index_are_not_read_only(tmp_path: Path) -> None:
    """`GIT_INDEX_FILE=x.index git status` takes its gitlinks from x.index: one for a repository
    that only sits in the work tree runs that one's monitor."""
    marker = tmp_path / "pwned"
    top = one_file_repository(tmp_path / "top", "notes.txt", "top\n")
    planted(top / "inner", marker)  # not added: git status does not look inside
    (tmp_path / "evil.index").write_bytes((top / ".git" / "index").read_bytes())
    output(top, "add", "inner", GIT_INDEX_FILE=str(tmp_path / "evil.index"))
    assert not runs_it("git status", top, marker)
    assert runs_it("GIT_INDEX_FILE=../evil.index git status", top, marker)
    for name in ("GIT_INDEX_FILE", "GIT_WORK_TREE", "GIT_OBJECT_DIRECTORY", "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES"):
        assert judged(f"{name}=../x git status", top) is Tier.MODERATE, name
        assert judged(f"export {name}=../x; git log", top) is Tier.MODERATE, name
    assert judged("git status", top) is Tier.SAFE


def test_a_split_index_has_the_gitlinks_of_its_shared_index_read(tmp_path: Path) -> None:
    """With core.splitIndex the gitlink sits in .git/sharedindex.*, not in .git/index."""
    marker = tmp_path / "pwned"
    top = with_repository_in_place(tmp_path / "top", marker)
    git(top, "config", "core.splitIndex", "true")
    git(top, "update-index", "--split-index")
    assert GITLINK not in (top / ".git" / "index").read_bytes()
    assert runs_it("git status", top, marker)
    result = classify("git status", cwd=str(top))
    assert result.tier is Tier.MODERATE
    assert "inner: core.fsmonitor" in result.reasons[0], result


@pytest.mark.parametrize(
    "settings",
    [
        "[core]\n\tworktree = .. ; the repository's own top\n",  # a comment git drops
        '[core]\n\tworktree = "../w"t\n',  # a quote inside
        "[core]\n\tworktree = ../w\\\nt\n",  # continued on the next line
        "[core]\n\tworktree = ../wt\n[submodule]\n\tworktree = ..\n",  # another section's key
    ],
)
def test_core_worktree_is_read_as_git_reads_it(tmp_path: Path, settings: str) -> None:
    """Where `cd "$(git rev-parse --show-toplevel)"` leads (repository.work_top): a look-alike reader
    took a comment, a quote or another section's `worktree` for core.worktree's value."""
    top = tmp_path / "top"
    (top / "sub").mkdir(parents=True)
    (top / "wt").mkdir()  # core.worktree's `../wt` from .git
    git(top, "init", "-q")
    with open(top / ".git" / "config", "a") as config:
        config.write(settings)
    shown = output(top / "sub", "rev-parse", "--show-toplevel")  # git's own answer
    expected = str(top) if shown == str(top) else None  # elsewhere: None, as the doc says
    assert repository.work_top(str(top / "sub")) == expected, shown


def test_an_index_of_version_4_has_its_gitlinks_read(tmp_path: Path) -> None:
    """Version 4 writes each path as what it keeps of the one before, then its own end (git's
    index.version=4, which feature.manyFiles sets): a gitlink among paths sharing its prefix is read."""
    marker = tmp_path / "pwned"
    top = with_repository_in_place(tmp_path / "top", marker)
    for name in ("a/b/one.txt", "a/b/two.txt", "in.txt", "innerb.txt", "zz/" + "y" * 200 + ".txt"):
        (top / name).parent.mkdir(parents=True, exist_ok=True)
        (top / name).write_text("x\n")
    git(top, "add", ".")
    committed(top, "more")
    git(top, "update-index", "--index-version", "4")
    assert struct.unpack(">I", (top / ".git" / "index").read_bytes()[4:8]) == (4,)
    assert runs_it("git status", top, marker)
    result = classify("git status", cwd=str(top))
    assert result.tier is Tier.MODERATE
    assert "inner: core.fsmonitor" in result.reasons[0], result
    git(top, "rm", "-q", "--cached", "inner")
    assert not runs_it("git status", top, marker)
    assert judged("git status", top) is Tier.SAFE  # and no more than that is read in it


def test_a_sha256_repositorys_index_has_its_gitlinks_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its objects' names are 32 bytes (extensions.objectFormat, read as git reads it: quoted here)."""
    monkeypatch.setenv("GIT_DEFAULT_HASH", "sha256")
    marker = tmp_path / "pwned"
    top = with_repository_in_place(tmp_path / "top", marker)
    config = (top / ".git" / "config").read_text()
    assert "objectformat = sha256" in config
    (top / ".git" / "config").write_text(config.replace("objectformat = sha256", 'objectFormat = "sha256"'))
    assert runs_it("git status", top, marker)
    result = classify("git status", cwd=str(top))
    assert result.tier is Tier.MODERATE and "inner: core.fsmonitor" in result.reasons[0], result


def test_a_split_index_whose_shared_index_cannot_be_read_cannot_tell(tmp_path: Path) -> None:
    """Its shared index a FIFO (never opened: it would block), or itself split: the gitlinks it may
    hold are not known. Missing, git reads no index at all, and runs nothing."""
    marker = tmp_path / "pwned"
    top = with_repository_in_place(tmp_path / "top", marker)
    git(top, "config", "core.splitIndex", "true")
    git(top, "update-index", "--split-index")
    [shared] = (top / ".git").glob("sharedindex.*")
    kept = shared.read_bytes()
    shared.unlink()
    assert subprocess.run(["git", "status"], cwd=top, capture_output=True).returncode != 0  # noqa: S607
    assert not marker.exists()
    assert judged("git status", top) is Tier.SAFE
    os.mkfifo(shared)
    said = classify("git status", cwd=str(top)).reasons
    assert said and f"no {shared.name[:20]}" in said[0], said
    shared.unlink()
    split = (top / ".git" / "index").read_bytes()
    shared.write_bytes(split)  # a shared index that names a shared index of its own
    assert "a split or sparse shared index" in classify("git status", cwd=str(top)).reasons[0]
    shared.write_bytes(kept)
    assert "inner: core.fsmonitor" in classify("git status", cwd=str(top)).reasons[0]


def test_an_index_that_cannot_be_read_is_not_taken_for_one_without_submodules(tmp_path: Path) -> None:
    """A sparse index's folder entries may stand for gitlinks; a version git's documentation does not
    give, or entries that overrun the file, cannot be read here: which repositories git runs in
    cannot be told."""
    lib = tmp_path / "lib"
    lib.mkdir()
    git(lib, "init", "-q")
    (lib / "a.txt").write_text("a\n")
    git(lib, "add", ".")
    committed(lib)
    top = tmp_path / "top"
    (top / "keep").mkdir(parents=True)
    (top / "keep" / "t.txt").write_text("t\n")
    git(top, "init", "-q")
    git(top, "add", ".")
    git(top, "update-index", "--add", "--cacheinfo", f"160000,{output(lib, 'rev-parse', 'HEAD')},out/vendor")
    committed(top)
    assert judged("git status", top) is Tier.SAFE  # out/vendor is not there
    git(top, "sparse-checkout", "set", "--cone", "--sparse-index", "keep")
    index = top / ".git" / "index"
    assert b"sdir" in index.read_bytes()
    result = classify("git status", cwd=str(top))
    assert result.tier is Tier.MODERATE
    assert "a sparse index" in result.reasons[0], result
    bare = tmp_path / "bare"
    bare.mkdir()
    git(bare, "init", "-q")
    entry = b"\0" * 24 + GITLINK + b"\0" * 34 + struct.pack(">H", 6) + b"vendor\0\0"
    overrun = b"TREE" + struct.pack(">I", 999)  # an extension longer than the file
    for version, entries, more, said in (
        (7, 1, b"", "index version 7"),
        (2, 3, b"", "index out of range"),  # three entries where there is one
        (2, 1, overrun, "its extensions overrun the file"),
    ):
        (bare / ".git" / "index").write_bytes(
            b"DIRC" + struct.pack(">II", version, entries) + entry + more + b"\0" * 20
        )
        result = classify("git status", cwd=str(bare))
        assert result.tier is Tier.MODERATE, version
        assert "cannot tell which repository's settings it reads" in result.reasons[0], result
        assert said in result.reasons[0], result


def test_submodules_are_read_only_for_what_runs_git_in_them(tmp_path: Path) -> None:
    """`git status` runs git in each submodule; `git rev-parse`, `git branch`, `git ls-files`,
    `git describe` never do, even with the repository set to recurse into them (submodule.recurse,
    diff.submodule=diff, status.submoduleSummary): their submodules' settings do not count."""
    marker = tmp_path / "pwned"
    top = with_submodule(tmp_path, marker)
    for setting, value in (("submodule.recurse", "true"), ("diff.submodule", "diff"),
                           ("submodule.propagateBranches", "true"), ("status.submoduleSummary", "true")):  # fmt: skip
        git(top, "config", setting, value)
    quiet = ("git rev-parse HEAD", "git branch", "git ls-files", "git describe --always", "git tag -l",
             "git ls-tree HEAD", "git cat-file -t HEAD", "git blame .gitmodules || true")  # fmt: skip
    for command in quiet:
        assert not runs_it(command, top, marker), command
        assert judged(command, top) is Tier.SAFE, command
    for command in ("git status", "git diff", "git ls-files --recurse-submodules", "git describe --always --dirty"):
        assert runs_it(command, top, marker), command
        assert judged(command, top) is Tier.MODERATE, command
    assert judged("git log -p", top) is Tier.MODERATE  # a patch may run git in them (diff.submodule=diff)


def test_an_index_is_read_once_while_it_stays_the_same(tmp_path: Path) -> None:
    """A command that names one repository from two folders reads its index once, and the next
    command does not read it again until it changes (a 200,000-entry index took 100 ms and more)."""
    marker = tmp_path / "pwned"
    top = with_repository_in_place(tmp_path / "top", marker)
    (top / "deep").mkdir()
    index = os.path.realpath(top / ".git" / "index")
    opened: list[str] = []

    def hook(event: str, args: tuple[object, ...]) -> None:
        if event == "open" and args and isinstance(args[0], str) and os.path.realpath(args[0]) == index:
            opened.append(args[0])

    sys.addaudithook(hook)  # cannot be removed: it only notes the opens of this test's index
    time.sleep(1.1)  # an index changed in the last second is read afresh (a change within one tick of the clock)
    command = "git status; cd deep && git diff; git -C deep status"
    for _ in range(2):
        assert "inner: core.fsmonitor" in classify(command, cwd=str(top)).reasons[0]
    assert len(opened) == 1, opened
    (top / "notes.txt").write_text("changed again\n")
    git(top, "add", "notes.txt")  # a new index: read again
    time.sleep(1.1)
    assert "inner: core.fsmonitor" in classify("git status", cwd=str(top)).reasons[0]
    assert len(opened) == 2, opened
