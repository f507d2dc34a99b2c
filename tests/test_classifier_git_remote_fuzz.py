"""Where a git command's remotes lead, the classifier's reading against git itself (git 2.39). A
differential fuzzer (2026-12-05) ran git with a stand-in for ssh that records the host each
connection is for (and serves a repository, so that git goes on to the next remote), and the
classifier on the same repository as it was before: about 100 of 1,500 random repositories and
commands had git reach a host the classifier did not hold the command for. Each case below is one
of them made as small as it goes; the host is `buildbox`, which ~/.ssh/config makes this machine
(`Host buildbox` / `HostName localhost`), and each test first checks that git does reach it."""

from __future__ import annotations

import contextlib
import os
import random
import shlex
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from app.core.classifier import Danger, Tier, classify, git_settings
from tests.handoff_checks import held_outside
from tests.test_handoffs_git_remotes import git

HERE = "buildbox"  # an ssh alias of this machine
FAKE_SSH = """#!/bin/sh
# git's ssh, stood in for: the host (the word before the command) recorded, $FAKE_SSH_SERVER served
prev=; last=
for a; do prev=$last; last=$a; done
printf '%s\\n' "$prev" >> "$FAKE_SSH_LOG"
case "$last" in
  git-upload-pack\\ *) exec git upload-pack "$FAKE_SSH_SERVER" ;;
  git-receive-pack\\ *) exec git receive-pack "$FAKE_SSH_SERVER" ;;
  git-upload-archive\\ *) exec git upload-archive "$FAKE_SSH_SERVER" ;;
esac
exit 1
"""


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder whose ssh configuration makes `buildbox` this machine, a stand-in for ssh and
    the repository it serves; git's system file left out, as for git itself."""
    folder = tmp_path / "ana"
    (folder / ".ssh").mkdir(parents=True)
    (folder / ".ssh" / "config").write_text(f"Host {HERE}\n  HostName localhost\n")
    monkeypatch.setenv("HOME", str(folder))
    for name in ("XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    ssh = tmp_path / "fake-ssh"
    ssh.write_text(FAKE_SSH)
    ssh.chmod(0o755)
    source = tmp_path / "source"
    git(tmp_path, "init", "-q", "-b", "main", str(source))
    git(source, "commit", "-q", "--allow-empty", "-m", "one")
    git(tmp_path, "clone", "-q", "--bare", str(source), str(tmp_path / "served.git"))
    return folder


@pytest.fixture
def repository(user_home: Path) -> Path:
    """A repository on branch main, with one commit and no remote."""
    folder = user_home / "project"
    git(user_home, "init", "-q", "-b", "main", str(folder))
    git(folder, "commit", "-q", "--allow-empty", "-m", "one")
    return folder


def reached(repository: Path, command: str, **variables: str) -> set[str]:
    """The hosts `command` (`git ...`) has git connect to through ssh, run in a copy of `repository`
    (the classifier reads it as it was before: a command may clone, or write settings)."""
    tmp = Path(os.environ["HOME"]).parent
    copy = tmp / "ran" / repository.name
    shutil.rmtree(copy.parent, ignore_errors=True)
    shutil.copytree(repository, copy, symlinks=True)
    log = tmp / "ssh.log"
    log.unlink(missing_ok=True)
    env = {**os.environ, "GIT_SSH_COMMAND": str(tmp / "fake-ssh"), "GIT_SSH_VARIANT": "ssh",
           "FAKE_SSH_LOG": str(log), "FAKE_SSH_SERVER": str(tmp / "served.git"), "GIT_TERMINAL_PROMPT": "0",
           "GIT_AUTHOR_NAME": "ana", "GIT_AUTHOR_EMAIL": "ana@example.com", "GIT_COMMITTER_NAME": "ana",
           "GIT_COMMITTER_EMAIL": "ana@example.com", **variables}  # fmt: skip
    done = subprocess.Popen(  # noqa: S603 (git from the PATH, a command of these tests)
        shlex.split(command), cwd=copy, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        done.wait(timeout=60)
    finally:  # git's own (a group that names itself fetches on and on)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(done.pid, signal.SIGKILL)
    hosts = log.read_text().splitlines() if log.exists() else []
    return {host.rpartition("@")[2].strip("[]").casefold() for host in hosts}


def settings(repository: Path, text: str, user: str = "") -> None:
    with (repository / ".git" / "config").open("a") as config:
        config.write(text)
    (Path(os.environ["HOME"]) / ".gitconfig").write_text(user)


def reaches_here_and_held(repository: Path, command: str) -> None:
    assert HERE in reached(repository, command), command
    held_outside(command, str(repository))


def cannot_tell(repository: Path, command: str) -> None:
    result = classify(command, cwd=str(repository))
    assert result.tier is Tier.DESTRUCTIVE, (command, result)
    assert result.danger is Danger.CANNOT_TELL, (command, result)


# ---- url.BASE.insteadOf: git's alias_url


@pytest.mark.parametrize(
    ("text", "user", "command"),
    [
        # an empty prefix rewrites every URL (it matches all, and is the longest where nothing else does)
        ('[remote "origin"]\n\turl = git@github.com:ana/x.git\n', f'[url "{HERE}:"]\n\tinsteadOf =\n', "git fetch"),
        ("", f'[url "ssh://{HERE}/"]\n\tinsteadOf = ""\n', "git ls-remote origin"),  # a name git takes for a URL
        ('[remote "origin"]\n\turl = elsewhere:x\n', f'[url "{HERE}:"]\n\tpushInsteadOf =\n', "git push origin main"),
        # prefixes as long: git takes the first BASE given (ours took the greatest)
        (f'[url "{HERE}:"]\n\tinsteadOf = gh:\n[url "elsewhere:"]\n\tinsteadOf = gh:\n', "", "git fetch gh:x"),
    ],
)
def test_a_url_git_rewrites_to_this_machine_is_held(repository: Path, text: str, user: str, command: str) -> None:
    settings(repository, text, user)
    reaches_here_and_held(repository, command)


def test_rewrites_of_as_long_a_prefix_are_each_read() -> None:
    config = git_settings.config_of(
        [("url.b:.insteadof", "gh:"), ("url.a:.insteadof", "gh:"), ("url.c:.insteadof", "")]
    )
    assert git_settings.remote_urls(config, [], push=False, given=["gh:x", "y"]) == ["gh:x", "y", "b:x", "a:x", "c:y"]


# ---- the repository among the command's words, as git's parse-options reads them


@pytest.mark.parametrize(
    "command",
    [
        f"git ls-remote -qo x {HERE}:/r",  # -o in a cluster takes the next word
        f"git fetch -qj 2 {HERE}:/r",
        f"git push -qo x {HERE}:/r main",
        f"git pull -qs ours {HERE}:/r",
        f"git clone -qb main {HERE}:/r copy",
        f"git push --recurse-submodules no {HERE}:/r main",  # options whose value the table left out
        f"git ls-remote --exec git-upload-pack {HERE}:/r",
        f"git pull --cleanup strip {HERE}:/r",
        f"git fetch --recurse-submodules-default yes {HERE}:/r",
        f"git pull 2 {HERE}:/r -j 2",  # pull hands -j alone to fetch, whose -j takes the next word
        f"git ls-remote ana@{HERE}::x",  # `user@host::path` is ssh's, not a remote helper's
    ],
)
def test_the_repository_git_reads_among_the_words_is_held(repository: Path, command: str) -> None:
    reaches_here_and_held(repository, command)


@pytest.mark.parametrize(
    "command",
    [
        "git ls-remote origin main --get-url",  # after the first operand, a pattern
        "git remote update default",  # `default`, no group of that name: every remote
        "git pull -- --all",  # pull hands `--all` to fetch, as an option
        "git pull --jobs 2",  # fetch's --jobs takes `2`: the branch's remote
        "git maintenance run --task=prefetch",  # fetches from every remote
        "git -c 'remotes.g=origin other' fetch g",  # a group the command line gives (of one: none)
    ],
)
def test_a_remote_git_reaches_by_the_commands_words_is_held(repository: Path, command: str) -> None:
    git(repository, "remote", "add", "origin", f"{HERE}:/srv/x.git")
    reaches_here_and_held(repository, command)


def test_a_url_rewritten_to_one_of_ssh_is_held(repository: Path) -> None:
    settings(repository, "", f'[url "ana@{HERE}:"]\n\tinsteadOf = gh\n')  # `gh:x` is `ana@buildbox::x`
    reaches_here_and_held(repository, "git fetch gh:x")
    reaches_here_and_held(repository, "git remote add -f other gh:y")  # fetches from it at once
    reaches_here_and_held(repository, "git -c remote.x.url=gh:y fetch x")
    assert classify("git remote add other gh:y", cwd=str(repository)).tier is Tier.MODERATE  # no fetch yet


def test_settings_only_the_commands_environment_gives_are_held(repository: Path) -> None:
    command = "git --config-env=remote.origin.url=URL fetch origin"
    assert HERE in reached(repository, command, URL=f"{HERE}:/x")
    cannot_tell(repository, command)
    cannot_tell(repository, "git for-each-repo --config=maintenance.repo fetch")


# ---- submodules


@pytest.fixture
def superproject(repository: Path, user_home: Path) -> Path:
    """`repository` with the submodule `lib`, cloned from a repository beside it whose own
    submodule `inner` is at `ssh://buildbox/inner`."""
    library, inner = user_home / "lib", user_home / "inner"
    for folder in (library, inner):
        git(user_home, "init", "-q", "-b", "main", str(folder))
        git(folder, "commit", "-q", "--allow-empty", "-m", "one")
    git(library, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(inner), "inner")
    git(library, "config", "--file", ".gitmodules", "submodule.inner.url", f"ssh://{HERE}/inner")
    git(library, "commit", "-q", "-am", "inner")
    git(repository, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "lib")
    git(repository, "commit", "-q", "-m", "lib")
    (user_home / ".gitconfig").write_text("[protocol]\n\tallow = always\n")
    return repository


def not_cloned(superproject: Path, url: str) -> None:
    """`lib` as a clone of the superproject has it: declared, not yet cloned, at `url`."""
    shutil.rmtree(superproject / ".git" / "modules")
    shutil.rmtree(superproject / "lib")
    (superproject / "lib").mkdir()
    git(superproject, "config", "--remove-section", "submodule.lib")
    git(superproject, "config", "--file", ".gitmodules", "submodule.lib.url", url)


@pytest.mark.parametrize(
    ("origin", "url"),
    [
        ("ssh://github.com/ana/x.git", f"../../../{HERE}/lib"),  # git drops the host too: ssh://buildbox/lib
        ("elsewhere:a/b", "gh:lib"),  # rewritten by the user's settings
    ],
)
def test_a_relative_or_rewritten_submodule_url_is_resolved_as_git_does(
    superproject: Path, origin: str, url: str
) -> None:
    git(superproject, "remote", "add", "origin", origin)
    with (Path(os.environ["HOME"]) / ".gitconfig").open("a") as config:
        config.write(f'[url "{HERE}:/"]\n\tinsteadOf = gh:\n')
    not_cloned(superproject, url)
    reaches_here_and_held(superproject, "git submodule update --init")


@pytest.mark.parametrize(
    ("origin", "url", "resolved"),
    [
        ("ssh://github.com/ana/x.git", "../../../c/d/", "ssh://c/d"),
        ("git@github.com:ana/x.git", "../../y", "git@github.com:y"),
        ("git@github.com:x", "../../y", ".:y"),  # past the host: host `.`
        ("a/b", "./../c", "a/c"),
        ("/srv/x/", "../y", "/srv/y"),
    ],
)
def test_a_relative_submodule_url_is_joined_as_git_joins_it(origin: str, url: str, resolved: str) -> None:
    """As `git submodule init` wrote them (git 2.39; 1,000 random ones checked so, 2026-12-05)."""
    assert git_settings.relative_url(origin, url) == resolved


def test_a_submodule_added_by_a_relative_url_is_held(superproject: Path) -> None:
    git(superproject, "remote", "add", "origin", "ssh://github.com/ana/x.git")
    reaches_here_and_held(superproject, f"git submodule add ../../../{HERE}/q lib2")


def test_a_submodule_git_clones_with_its_own_submodules_is_held(superproject: Path, user_home: Path) -> None:
    not_cloned(superproject, str(user_home / "lib"))
    command = "git submodule update --init --recursive"
    assert HERE in reached(superproject, command)  # lib's .gitmodules, known once lib is cloned
    cannot_tell(superproject, command)
    assert classify("git submodule update --init", cwd=str(superproject)).tier is Tier.MODERATE


def test_a_gitmodules_only_the_index_has_is_held(superproject: Path) -> None:
    not_cloned(superproject, f"{HERE}:/lib")
    git(superproject, "add", ".gitmodules")
    (superproject / ".gitmodules").unlink()  # git reads the index's
    command = "git submodule update --init"
    assert HERE in reached(superproject, command)
    cannot_tell(superproject, command)


def test_a_commit_a_submodule_misses_is_fetched_from_the_branchs_remote(superproject: Path, user_home: Path) -> None:
    """git 2.39 fetches a commit a submodule's remote lacks from the superproject's branch.B.remote."""
    not_cloned(superproject, "elsewhere:lib")  # what it serves lacks lib's commit
    git(superproject, "config", "branch.main.remote", f"{HERE}:/x")
    reaches_here_and_held(superproject, "git submodule update --init")


# ---- a small random differential run: git's hosts against the classifier's holds


def random_case(rng: random.Random) -> tuple[str, str, str]:
    """A repository's settings, the user's, and a command: URLs to `buildbox` and two other hosts."""

    def url() -> str:
        host, path = rng.choice([HERE, "elsewhere", "faraway"]), rng.choice(["x", "a/b"])
        return rng.choice([f"{host}:/{path}", f"git@{host}:{path}", f"ssh://{host}/{path}", f"u@{host}::{path}",
                           "gh:x", "g:y", "/nowhere/x"])  # fmt: skip

    names = rng.sample(["origin", "up", "team/b", "2", "default"], rng.randint(0, 3))
    text = "".join(f'[remote "{name}"]\n\turl = {url()}\n' for name in names)
    text += "".join(f'[remote "{name}"]\n\tpushurl = {url()}\n' for name in names if rng.random() < 0.2)
    if names and rng.random() < 0.3:
        text += f"[remotes]\n\tgrp = {' '.join(rng.sample(names, 1))} {url()}\n"
    if rng.random() < 0.3:
        text += f'[branch "main"]\n\t{rng.choice(["remote", "pushRemote"])} = {rng.choice([*names, url()])}\n'
    text += "[push]\n\tdefault = current\n"
    prefixes = ["gh:", "g", '""', "git@"]
    user = "".join(
        f'[url "{rng.choice([HERE, "elsewhere"])}:"]\n\t{rng.choice(["insteadOf", "pushInsteadOf"])} = '
        f"{rng.choice(prefixes)}\n"
        for _ in range(rng.choice([0, 1, 2]))
    )
    word = rng.choice([*names, "grp", url(), "nosuch"])
    command = rng.choice([
        "git fetch", f"git fetch {word}", "git fetch --all", f"git fetch -qj 2 {word}", f"git pull {word} main",
        "git push", f"git push {word} main", f"git push -qo x {word}", f"git ls-remote {word}", "git ls-remote",
        "git remote update", f"git remote update {word}", f"git archive --remote={word} HEAD",
        f"git -c 'remotes.two={word} nosuch' fetch two",
    ])  # fmt: skip
    return text, user, command


def test_random_repositories_reach_no_host_of_this_machine_unheld(repository: Path) -> None:
    template = repository.parent / "template"
    shutil.copytree(repository, template)
    rng = random.Random(20261205)
    here = 0
    for number in range(100):
        text, user, command = random_case(rng)
        case = repository.parent / f"case{number}"
        shutil.copytree(template, case)
        settings(case, text, user)
        if HERE in reached(case, command):
            here += 1
            result = classify(command, cwd=str(case))
            assert result.tier is Tier.DESTRUCTIVE, (number, text, user, command, result)
    assert here >= 10, here  # enough of them reach this machine to tell
