"""A FIFO where a repository's or a project's settings file was (`rm .git/config && mkfifo
.git/config`, both moderate) must not stall the classifier: each of its readers opened it blocking
and waited for a writer forever, so every later `git status` hung the server's classification (a
review, 2026-12-05). Each case runs the classifier in a process of its own, under a time limit."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

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
