"""Red team 13's descriptor findings, fixed (tests/test_red_team_thirteen_uncontained.py holds its
own tests): a write through `/dev/stdin`, `/dev/fd/N` or `/proc/self/fd/N` is a write to the file
open on that descriptor; an `exec` that keeps a file open lasts in the session; and where no
container runs, the program's venv and base Python, and the outputs folder, are guarded too.

The everyday redirections (`>/dev/stderr`, `>&2`, `2>/dev/null`) stay read-only."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.classifier import Tier, classify, names_protected
from app.core.commands.admission import lasts_in_session
from app.core.commands.running import names_unguarded, unguarded_folders, unguarded_members
from app.core.execution import container
from app.core.paths import AppPaths, protected_paths

HOME = "/home/ann"
PROJECT = f"{HOME}/code/site"
PROGRAM = [f"{HOME}/src/cowork/app", f"{HOME}/src/cowork/.venv", f"{HOME}/.pyenv/versions/3.12.3"]
BASHRC = f"{HOME}/.bashrc"


@pytest.fixture(autouse=True)
def home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", HOME)


def judged(command: str) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    verdict = classify(command, cwd=PROJECT)
    return verdict.tier.name, verdict.reasons, verdict.plain


@pytest.mark.parametrize(
    "command",
    [
        "echo x >/dev/stderr",
        "echo x >&2",
        "ls missing 2>/dev/null",
        "echo x >/dev/fd/2",
        "echo x >/dev/stdout",
        "echo x >/proc/self/fd/1",
        "echo x 2>/dev/null >/dev/stderr",  # on /dev/null
        "exec 3>&1; echo x >/dev/fd/3",  # 3 is what 1 is: the output
        "exec 2>&1",
        "echo x | tee /dev/stderr",
        "cat <<EOF >/dev/stdout\nhi\nEOF",
        "{ echo x >/dev/fd/3; } 3>&2",
        "exec >&-; echo x >/dev/stdout",
    ],
)
def test_everyday_writes_to_the_output_or_the_errors_stay_read_only(command: str) -> None:
    assert judged(command) == ("SAFE", (), ())


@pytest.mark.parametrize(
    "command",
    [
        "echo evil <~/.bashrc >>/dev/stdin",
        "echo evil 0<~/.bashrc 1>/dev/stdin",
        "echo evil 3<~/.bashrc >/dev/fd/3",
        "echo evil 3<~/.bashrc >/proc/self/fd/3",
        "echo evil 1<~/.bashrc >/dev/stdout",  # bash opens them left to right
        "echo evil 2<~/.bashrc >/dev/stderr",
        "{ echo evil >/dev/fd/3; } 3<~/.bashrc",  # a group's descriptors are its commands'
        "exec 4<~/.bashrc; echo evil >/dev/fd/4",
        "echo evil | tee /dev/fd/3 3<~/.bashrc",  # a program that writes the name it is given
        "echo evil 3<~/.bashrc 5<&3 >/dev/fd/5",  # a copy of the descriptor
    ],
)
def test_a_write_through_a_descriptor_open_on_a_file_is_a_write_to_that_file(command: str) -> None:
    tier, reasons, plain = judged(command)
    assert tier == "MODERATE" and "writes to ~/.bashrc" in reasons, reasons
    assert "Writes to ~/.bashrc" in plain
    assert names_protected(command, [BASHRC], cwd=PROJECT, bare=False)  # where no container runs: held


def test_a_write_through_a_descriptor_this_command_did_not_open_is_a_write_to_some_file() -> None:
    assert judged("echo x >/dev/fd/3") == (
        "MODERATE",
        ("writes through /dev/fd/3: to whatever file it is open on",),
        ("Writes to whatever file /dev/fd/3 is open on, which may be any file",),
    )
    assert judged("echo x >>/dev/stdin")[0] == "MODERATE"
    assert judged("echo x >/proc/$$/fd/4")[0] == "MODERATE"
    # a closed one is written no more
    assert "writes to ~/.bashrc" not in judged("exec 3<~/.bashrc; exec 3<&-; echo x >/dev/fd/3")[1]


def test_an_exec_that_keeps_a_file_open_is_held_as_a_write_to_it_and_lasts_in_the_session() -> None:
    """A read descriptor the session's shell keeps on `~/.bashrc` lets a later call write it while
    naming nothing (red team 13): the `exec` is what is asked about."""
    tier, reasons, plain = judged("exec 3<~/.bashrc")
    assert tier == "MODERATE"
    assert reasons == ("keeps ~/.bashrc open for the commands after it, which may write it without naming it",)
    assert plain == ("Keeps ~/.bashrc open, so that later commands can write to it without naming it",)
    for command in ("exec 3<~/.bashrc", "exec {fd}<~/.bashrc", "builtin exec 3<>~/.bashrc", "exec 5>~/.bashrc"):
        assert names_protected(command, [BASHRC], cwd=PROJECT, bare=False), command
    for command in ("exec 3<notes.txt", "exec >log.txt 2>&1", "'exec' 4<notes.txt"):
        assert lasts_in_session(command, cwd=PROJECT), command
    for command in ("exec 2>&1", "exec 3>&1", "exec 2>/dev/null", "cat <notes.txt", "echo x 3<notes.txt"):
        assert not lasts_in_session(command, cwd=PROJECT), command


def test_where_no_container_runs_the_program_folders_are_held_for_writes_and_run_unasked() -> None:
    protected = container.protected_set(
        "linux", {}, HOME, [f"{HOME}/.local/share/cowork-terminal"], PROGRAM, f"{HOME}/.local/lib"
    )
    assert set(PROGRAM) <= {*unguarded_members(protected), *protected.program}
    held = [
        f"echo 'import os' > {PROGRAM[1]}/lib/python3.12/site-packages/zz.pth",
        f"rm -rf {PROGRAM[2]}/lib/python3.12/tkinter",
        "cd ~/src/cowork && cp evil.pth .venv/lib/python3.12/site-packages/",
    ]
    assert [c for c in held if not names_unguarded(c, protected, cwd=PROJECT, bare=False)] == []
    unasked = [
        f"{PROGRAM[1]}/bin/python -m pytest",
        f"ls {PROGRAM[1]}/lib/python3.12/site-packages",
        f"{PROGRAM[2]}/bin/python3 -c 'print(1)'",
    ]
    assert [c for c in unasked if names_unguarded(c, protected, cwd=PROJECT, bare=False)] == []


def test_where_no_container_runs_the_outputs_folder_is_guarded_as_the_container_guards_it() -> None:
    paths = AppPaths(data_dir=Path(f"{HOME}/.local/share/cowork-terminal"), log_dir=Path(f"{HOME}/.local/state/ct"))
    folders = unguarded_folders(paths)
    assert str(paths.outputs) in folders and set(protected_paths(paths)) <= set(folders)
    protected = container.protected_set("linux", {}, HOME, folders, PROGRAM, f"{HOME}/.local/lib")
    assert names_unguarded(f"rm {paths.outputs}/claude-desktop/7.txt", protected, cwd=PROJECT, bare=False)
    assert classify(f"rm {paths.outputs}/claude-desktop/7.txt", cwd=PROJECT).tier is not Tier.SAFE
