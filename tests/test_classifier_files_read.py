"""Files the classifier reads to judge a command, and files a command changes before it runs one.

A FIFO where a repository's or a project's settings file was (`rm .git/config && mkfifo
.git/config`, both moderate) must not stall the classifier: each of its readers opened it blocking
and waited for a writer forever, so every later `git status` hung the server's classification (a
review, 2026-12-05). Those cases run the classifier in a process of its own, under a time limit.
An archive unpacked before a script runs may have replaced the script the classifier read."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

import pytest

from app.core.classifier import Tier, classify
from app.core.classifier.regular_files import read_regular
from app.core.classifier.repository import MAX_MODULE_FOLDERS
from tests.handoff_checks import tier_apart


@pytest.mark.parametrize(
    ("fifo", "command"),
    [
        (".git/config", "git status"),
        (".git/index", "git status"),
        (".git/commondir", "git status"),
        (".git/packed-refs", "git checkout main"),  # is `main` a branch or the file beside it
        (".cargo/config.toml", "cargo metadata"),
        (".yarnrc.yml", "yarn --version"),
        ("rust-toolchain.toml", "rustc --version"),
    ],
)
def test_a_fifo_for_a_settings_file_is_answered_without_waiting(tmp_path: Path, fifo: str, command: str) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)  # noqa: S607 (git from the PATH)
    (tmp_path / "main").write_text("a file named as a branch\n")
    (tmp_path / ".cargo").mkdir()
    path = tmp_path / fifo
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    assert tier_apart(command, tmp_path) in ("SAFE", "MODERATE", "DESTRUCTIVE")


def test_a_file_that_is_not_regular_is_never_opened(tmp_path: Path) -> None:
    """Looked at before it is opened: opening a serial port a link names resets the board on it.
    Seen here with a FIFO, whose writer's open returns only once a reader opens it."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "link").symlink_to(fifo)
    opened = threading.Event()

    def writer() -> None:
        os.close(os.open(fifo, os.O_WRONLY))  # blocks until some reader opens the FIFO
        opened.set()

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    assert read_regular(str(tmp_path / "link"), 100) is None
    assert not opened.wait(0.3), "read_regular opened a FIFO"
    os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))  # let the writer go
    thread.join(5)


@pytest.mark.parametrize(
    "command",
    [
        "tar xf evil.tar && bash x.sh",
        "tar --extract -f evil.tar && bash x.sh",
        "unzip -o evil.zip && bash x.sh",
        "cpio -id < evil.cpio && bash x.sh",
        "7z x evil.7z -o. && bash x.sh",
    ],
)
def test_a_script_an_archive_may_replace_before_it_runs_is_held(tmp_path: Path, command: str) -> None:
    """The x.sh on disk was judged, and the archive replaced it first (a second red team, 2026-12-05)."""
    (tmp_path / "x.sh").write_text("echo hello\n")
    result = classify(command, cwd=str(tmp_path))
    assert result.tier is Tier.DESTRUCTIVE, result
    assert "the command changes the script" in result.reasons[0], result
    for listing in ("tar tf evil.tar && bash x.sh", "unzip -l evil.zip && bash x.sh", "tar czf out.tgz src"):
        assert classify(listing, cwd=str(tmp_path)).tier is Tier.MODERATE, listing


@pytest.mark.parametrize(
    "command",
    [
        "tar xzf pkg.tar.gz && cd pkg && make",
        "tar xf pkg.tar; make -C pkg",
        "unzip -q pkg.zip && cd pkg && npm test",
        "tar xzf pkg.tar.gz && cd pkg && python -m pytest",
    ],
)
def test_a_projects_recipes_an_archive_brings_are_built_as_a_clones_are(tmp_path: Path, command: str) -> None:
    """A project's recipes are not read, so one an archive brings is no less known than one a clone
    brings (`git clone URL && cd x && make` is moderate): `tar xzf && cd && make` was held as a
    script changed before it runs."""
    result = classify(command, cwd=str(tmp_path))
    assert result.tier is Tier.MODERATE, result
    assert classify("git clone https://example.com/pkg && cd pkg && make", cwd=str(tmp_path)).tier is Tier.MODERATE
    (tmp_path / "pkg").mkdir()
    written = classify("echo 'all: ; rm -rf ~' > pkg/Makefile; tar xf pkg.tar; make -C pkg", cwd=str(tmp_path))
    assert "the command changes the script" in written.reasons[0], written  # a recipe the line wrote still is


@pytest.mark.parametrize("folder", ["rp", "newdir"])
def test_programs_run_parts_runs_from_a_folder_an_archive_fills_are_held(tmp_path: Path, folder: str) -> None:
    """run-parts runs every program in its folder: one that an archive unpacked above it may fill
    was judged as on disk, and one it creates was not judged at all."""
    (tmp_path / "rp").mkdir()
    (tmp_path / "rp" / "a").write_text("#!/bin/sh\necho hi\n")
    (tmp_path / "rp" / "a").chmod(0o755)
    result = classify(f"tar xf e.tar; run-parts {folder}", cwd=str(tmp_path))
    assert result.tier is Tier.DESTRUCTIVE and "the command changes the script" in result.reasons[0], result
    for unchanged in (f"run-parts {folder}", f"tar xf e.tar -C other; run-parts {folder}"):
        assert classify(unchanged, cwd=str(tmp_path)).tier is Tier.MODERATE, unchanged


def test_a_submodules_folder_linked_to_a_big_tree_is_not_walked_whole(tmp_path: Path) -> None:
    """`ln -s ~ .git/modules` (moderate) made every later `git status` walk the home folder on the
    server's loop (a second red team, 2026-12-05): past MAX_MODULE_FOLDERS it cannot tell."""
    subprocess.run(["git", "init", "-q", str(tmp_path / "r")], check=True)  # noqa: S607 (git from the PATH)
    big = tmp_path / "big"
    for k in range(MAX_MODULE_FOLDERS + 5):
        (big / f"d{k}").mkdir(parents=True)
    (tmp_path / "r" / ".git" / "modules").symlink_to(big)
    result = classify("git status", cwd=str(tmp_path / "r"))
    assert result.reasons == (
        f"git: cannot tell which repository's settings it reads (more than {MAX_MODULE_FOLDERS} folders in "
        ".git/modules)",
    ), result


@pytest.mark.parametrize(
    "command",
    ["patch -p1 < fix.diff && bash x.sh", "git apply fix.diff && bash x.sh", "git am < fix.mbox && bash x.sh"],
)
def test_a_script_a_diff_may_change_before_it_runs_is_held(tmp_path: Path, command: str) -> None:
    """A diff changes the files it names, as an archive does the files it holds."""
    (tmp_path / "x.sh").write_text("echo hello\n")
    result = classify(command, cwd=str(tmp_path))
    assert result.tier is Tier.DESTRUCTIVE and "the command changes the script" in result.reasons[0], result
    for unchanged in (
        "git apply --check fix.diff && bash x.sh",  # only looks
        "patch --dry-run -p1 < fix.diff && bash x.sh",
        "git apply fix.diff && npm test",  # a project's recipes: not read, a diff not held for them
    ):
        assert classify(unchanged, cwd=str(tmp_path)).tier is Tier.MODERATE, unchanged
