"""Where no container runs, execute_read_only_command runs only what the classifier proves read-only,
and git (cargo, rustc...) is read-only only where the project's own settings name no program: those
settings are read in every folder the command's shell may be in (a review, 2026-12-05: after
`cd "$X"` git was still judged read-only, and `cargo --version` with a rust-toolchain `path`).

Each repository here has a core.fsmonitor that writes a marker file; a test shows the command
really runs it under bash before checking that the classifier does not let it pass.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from app.core.classifier import Tier, classify
from tests.in_process_server import serving
from tests.test_read_only import git, look

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def planted(folder: Path, marker: Path) -> Path:
    """A repository with a change (so `git status` asks the monitor) whose core.fsmonitor writes `marker`."""
    folder.mkdir(parents=True)
    git(folder, "init", "-q")
    (folder / "notes.txt").write_text("alpha\n")
    git(folder, "add", ".")
    git(folder, "commit", "-qm", "first")
    (folder / "notes.txt").write_text("alpha\nbeta\n")
    (folder / "deep").mkdir()
    git(folder, "config", "core.fsmonitor", f"touch {marker}; false")
    return folder


def with_plain_submodule(tmp_path: Path, marker: Path) -> Path:
    """A repository `top` with a submodule `lib` (its repository under .git/modules, a change in it),
    whose own settings name no program yet (a test plants `marker`'s monitor there)."""
    lib = planted(tmp_path / "lib", marker)
    git(lib, "config", "--unset", "core.fsmonitor")
    git(lib, "commit", "-qam", "second")
    top = tmp_path / "top"
    top.mkdir()
    git(top, "init", "-q")
    git(top, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "lib")
    git(top, "commit", "-qm", "with lib")
    (top / "lib" / "notes.txt").write_text("changed\n")
    return top


def runs_it(command: str, cwd: Path, marker: Path) -> bool:
    """Whether `command`, run by bash in `cwd`, runs the planted program (the marker is removed after)."""
    subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, check=False)
    made = marker.exists()
    marker.unlink(missing_ok=True)
    return made


def judged(command: str, cwd: Path | None) -> Tier:
    return classify(command, cwd=None if cwd is None else str(cwd)).tier


async def test_git_after_a_cd_only_bash_can_resolve_or_that_may_not_run_is_refused_without_a_container(
    home: Path, tmp_path: Path, no_container: None
) -> None:
    marker = tmp_path / "pwned"
    repo = planted(tmp_path / "repo", marker)
    plain = tmp_path / "plain"
    plain.mkdir()
    unknown = f'X={repo}; cd "$X" && git status --short'
    failed = "cd /nowhere-cowork 2>/dev/null; git status --short"  # the cd fails: git runs where it was
    async with serving(home) as client:
        refused = [await look(client, unknown, plain), await look(client, failed, repo)]
        plain_status = await look(client, "git status --short", plain)
    for result in refused:
        assert "execute_command" in result.get("error", ""), result
    assert 'cd "$X"' in refused[0]["error"], "it says which cd lost the folder"
    assert "fatal" in plain_status.get("stderr", ""), "git still runs where nothing is planted"
    assert not marker.exists()
    assert runs_it(unknown, plain, marker) and runs_it(failed, repo, marker), "bash does run the monitor"


def test_every_folder_a_cd_may_lead_to_is_read_and_one_only_bash_knows_is_not_guessed(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    repo = planted(tmp_path / "repo", marker)
    plain = tmp_path / "plain"
    (plain / "sub").mkdir(parents=True)
    (plain / "link").symlink_to(repo / "deep")
    for command, cwd in [
        ('cd "$X" && git status', plain),
        ('cd "$(dirname "$0")" && git log', plain),
        ("cd - && git status", plain),
        ('pushd "$X" >/dev/null && git status', plain),
        ("pushd +1 && git status", plain),
        ('env -C "$X" git status', plain),
        (f'cd "$X" && git -C {repo} status', plain),  # a folder named in full is read, known or not
        ("false && cd /tmp; git status", repo),  # the cd may not run, or fail:
        ("cd /nowhere-cowork; git status", repo),  # git then runs where the command started
        (f"cd {plain} || git status", repo),
        ("cd link && git status", plain),  # git looks above the real folder, in the repository
        (f"eval 'cd {repo}'; git status", plain),
        (f"trap 'git status' EXIT; cd {repo}", plain),  # it runs last
        (f"for i in 1 2; do git status; cd {repo}; done", plain),  # the second round runs there
        ("for d in a b; do cd $d; git status; cd ..; done", plain),
        ("CDPATH=$PWD/.. cd repo && git status", plain),
        ("shopt -s cdable_vars; r=$PWD/../repo; cd r && git status", plain),  # `r` is no folder: $r is
        (f"ls() {{ git status; }}; cd {repo}; ls", plain),
        ('cd "$X"; GIT_DIR=.git git status', plain),
        ('cd "$X"; bash -c "git status"', plain),
    ]:
        assert judged(command, cwd) is Tier.MODERATE, command
    assert runs_it("cd link && git status", plain, marker)
    assert runs_it(f"for i in 1 2; do git status; cd {repo}; done", plain, marker)
    assert runs_it("shopt -s cdable_vars; r=$PWD/../repo; cd r && git status", plain, marker)
    for command in ("cd sub && git status", "pushd sub; popd; git status", "cd sub && ls && cd .. && git log",
                    "for d in a b; do cd $d; ls; cd ..; done", f'cd "$X" && git -C {plain} status'):  # fmt: skip
        assert judged(command, plain) is Tier.SAFE, command


def test_no_folder_given_is_not_a_folder_lost_by_a_cd(tmp_path: Path) -> None:
    """The corpus is judged with no folder: `git status` there is read-only; after a `cd` only bash can
    resolve it is not, whether or not a folder was given."""
    assert judged("git status", None) is Tier.SAFE
    assert judged("cd sub && git log", None) is Tier.SAFE
    assert judged('cd "$(git rev-parse --show-toplevel)"', None) is Tier.SAFE
    for command in ('cd "$X" && git status', "cd - && cargo tree", 'pushd "$X" && rustc --version'):
        result = classify(command)
        assert result.tier is Tier.MODERATE, command
        assert "cannot tell which folder it runs in" in result.reasons[0], result


def test_the_top_of_the_repository_is_read_where_git_rev_parse_leads(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    repo = planted(tmp_path / "repo", marker)
    clean = tmp_path / "clean"
    (clean / "deep").mkdir(parents=True)
    git(clean, "init", "-q")
    command = 'cd "$(git rev-parse --show-toplevel)" && git status'
    assert judged(command, repo / "deep") is Tier.MODERATE
    assert judged(command, clean / "deep") is Tier.SAFE
    assert runs_it(command, repo / "deep", marker)


def test_a_submodules_settings_are_read_as_git_status_runs_git_in_it(tmp_path: Path) -> None:
    """`git status` runs git in each submodule: one under .git/modules, and a repository added in place."""
    marker = tmp_path / "pwned"
    top = with_plain_submodule(tmp_path, marker)
    assert judged("git status", top) is Tier.SAFE
    module = top / ".git" / "modules" / "lib" / "config"
    git(top, "config", "-f", str(module), "core.fsmonitor", f"touch {marker}; false")
    assert "lib: core.fsmonitor" in classify("git status", cwd=str(top)).reasons[0]
    assert runs_it("git status", top, marker)
    inside = tmp_path / "inside"
    inside.mkdir()
    git(inside, "init", "-q")
    planted(inside / "inner", marker)
    git(inside, "add", "inner")  # a gitlink, no .gitmodules
    git(inside, "commit", "-qm", "in place")
    assert "inner: core.fsmonitor" in classify("git status", cwd=str(inside)).reasons[0]
    assert runs_it("git status", inside, marker)


def test_rustups_proxies_and_their_version_are_not_read_only_where_a_toolchain_path_is_named(
    tmp_path: Path,
) -> None:
    """rustup's `cargo`, `rustc`... run the program of a toolchain folder the project's rust-toolchain
    file names, `--version` too, from the folder and those below it."""
    crate = tmp_path / "crate"
    (crate / "src").mkdir(parents=True)
    commands = ("cargo --version", "cargo -V", "rustc --version", "rustdoc --version", "rustfmt --version")
    for command in commands:
        assert judged(command, crate / "src") is Tier.SAFE, command
    (crate / "rust-toolchain.toml").write_text('[toolchain]\npath = "./toolchain"\n')
    for command in commands:
        result = classify(command, cwd=str(crate / "src"))
        assert result.tier is Tier.MODERATE, command
        assert "rust-toolchain.toml path" in result.reasons[0], result
    assert judged("cd src && rustc --version", crate) is Tier.MODERATE


def test_variables_that_move_where_settings_are_found_are_not_read_only(tmp_path: Path) -> None:
    """`HOME=/x git status` reads /x/.gitconfig, `RUSTUP_TOOLCHAIN=/x cargo --version` runs /x/bin/cargo."""
    marker = tmp_path / "pwned"
    evil = tmp_path / "evil"
    evil.mkdir()
    (evil / ".gitconfig").write_text(f"[core]\n\tfsmonitor = touch {marker}; false\n")
    repo = planted(tmp_path / "repo", tmp_path / "unused")
    git(repo, "config", "--unset", "core.fsmonitor")
    home_moved = f"HOME={evil} git status"
    assert runs_it(home_moved, repo, marker)
    for command in (home_moved, f"export XDG_CONFIG_HOME={evil}; git status", f"GIT_COMMON_DIR={evil} git log",
                    "RUSTUP_TOOLCHAIN=/tmp/x cargo --version", "RUSTC_WRAPPER=/tmp/x cargo metadata",
                    "CARGO_HOME=/tmp/x cargo tree", "export CDPATH=/tmp; cd x && git status"):  # fmt: skip
        assert judged(command, repo) is Tier.MODERATE, command
    assert judged("git status", repo) is Tier.SAFE
