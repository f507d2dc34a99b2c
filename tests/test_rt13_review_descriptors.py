"""A review of red team 13's descriptor fixes (tests/test_rt13_fixes_descriptors.py): routes left by
them. Code a shell, eval or a script runs has the descriptors its command opened (`bash -c 'echo x
>>/dev/stdout' 1<~/.bashrc` appends to ~/.bashrc); an `exec` the parser does not see alone (`true
&& exec 3<x`, `exec -a x 3<x`) keeps its files open all the same; `exec 0<x` and `W${x}<x` are read
as bash reads them; a command fed by a pipe has the pipe on descriptor 0.

Where no container runs, `names_unguarded` (with a temp home's protected set) is what holds them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.core.classifier import classify
from app.core.commands.admission import lasts_in_session
from app.core.commands.running import names_unguarded, unguarded_folders
from app.core.execution import container
from app.core.paths import AppPaths


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / "code" / "site").mkdir(parents=True)
    (home / ".bashrc").write_text("# the user's\n")
    monkeypatch.setenv("HOME", str(home))
    return home


def project(home: Path) -> str:
    return str(home / "code" / "site")


def held(command: str, home: Path) -> bool:
    """Whether the command waits for a person where no container guards the protected set."""
    paths = AppPaths(data_dir=home / ".local/share/cowork-terminal", log_dir=home / ".local/state/ct")
    program = [str(home / "src/cowork/app"), str(home / "src/cowork/.venv")]
    protected = container.protected_set(
        "linux", {}, str(home), unguarded_folders(paths), program, str(home / ".local/lib")
    )
    return names_unguarded(command, protected, cwd=project(home), bare=False)


def judged(command: str, home: Path) -> tuple[str, tuple[str, ...]]:
    verdict = classify(command, cwd=project(home))
    return verdict.tier.name, verdict.reasons


# ---- 1. nested code has the descriptors its command opened


@pytest.mark.parametrize(
    "command",
    [
        "bash -c 'echo x >> /dev/stdout' 1<~/.bashrc",
        "eval 'echo x >>/dev/stdout' 1<~/.bashrc",
        "sh -c 'echo x >> /dev/stderr' 2<~/.bashrc",
        "bash -c 'tee -a /dev/stdout' 1<~/.bashrc",
        "timeout 5 bash -c 'echo x >> /dev/stdout' 1<~/.bashrc",
    ],
)
def test_code_a_shell_or_eval_runs_writes_through_the_descriptors_its_command_opened(command: str, home: Path) -> None:
    tier, reasons = judged(command, home)
    assert tier == "MODERATE" and "writes to ~/.bashrc" in reasons, reasons
    assert held(command.replace("~/.bashrc", "~/.b?shrc"), home)


def test_a_script_or_function_run_with_a_descriptor_on_a_protected_file_may_write_it(home: Path) -> None:
    (Path(project(home)) / "w.sh").write_text("echo x >> /dev/stdout\n")
    (Path(project(home)) / "tool").write_bytes(b"\x7fELF\x02\x01\x01\0\0\0")
    for command in (
        "sh -c 'echo x >>/dev/stdin' < ~/.b?shrc",
        "bash ./w.sh 1<~/.b?shrc",
        "source ./w.sh 1<~/.b?shrc",
        "./tool 3<~/.b?shrc",  # its code is not read here: it may open /dev/fd/3 for writing
        'python3 -c \'open("/dev/fd/3", "a").write("x")\' 3<~/.b?shrc',
        "f() { echo x >> /dev/stdout; }; f 1<~/.b?shrc",
        "ls() { echo x >> /dev/stdout; }; ls 1<~/.b?shrc",  # a function, not the program
    ):
        assert held(command, home), command
    assert "writes to ~/.b?shrc" in judged("bash ./w.sh 1<~/.b?shrc", home)[1]


def test_everyday_nested_writes_to_the_output_stay_as_they_were(home: Path) -> None:
    (Path(project(home)) / "setup.sh").write_text("echo done\n")
    for command in ("bash -c 'echo x > /dev/stderr'", "eval 'echo x >/dev/stdout'", "bash -c 'ls >&2' 2>/dev/null"):
        assert judged(command, home) == ("SAFE", ()), command
    for command in ("bash setup.sh < notes.txt", "bash < setup.sh", "bash -s < setup.sh"):
        tier, reasons = judged(command, home)
        assert tier == "MODERATE" and not any("notes.txt" in r or "changes the script" in r for r in reasons), reasons
        assert not held(command, home), command


# ---- 2. an exec the parser does not see alone


@pytest.mark.parametrize(
    "command",
    [
        "true && exec 3<~/.bashrc",  # tree-sitter puts the redirection on the whole list
        "time exec 3<~/.bashrc",
        "time -p exec 3<~/.bashrc",
        "! exec 3<~/.bashrc",
        "exec -- 3<~/.bashrc",
        "exec -a x 3<~/.bashrc",
        "exec -c 3<~/.bashrc",
        "exec -l 3<~/.bashrc",
        "exec -cl -- 3<~/.bashrc",
        "true | exec 3<~/.bashrc",
    ],
)
def test_an_exec_with_options_or_after_a_list_keeps_its_file_open_and_lasts(command: str, home: Path) -> None:
    tier, reasons = judged(command, home)
    assert tier == "MODERATE", reasons
    assert "keeps ~/.bashrc open for the commands after it, which may write it without naming it" in reasons
    assert lasts_in_session(command, cwd=project(home)), command
    assert held(command.replace("~/.bashrc", "~/.b?shrc"), home), command


def test_a_descriptor_an_exec_after_a_list_opened_is_written_through_later(home: Path) -> None:
    command = "true && exec 3< ~/.b?shrc; echo x >> /dev/fd/3"
    assert "writes to ~/.b?shrc" in judged(command, home)[1]
    assert held(command, home)


def test_an_exec_that_runs_a_program_does_not_keep_its_files_for_later(home: Path) -> None:
    assert not lasts_in_session("exec -a x 3<notes.txt ./run.sh", cwd=project(home))
    assert not lasts_in_session("true && exec 2>&1", cwd=project(home))


# ---- 3. `exec 0<x`: the number touching the redirection is its descriptor


def test_exec_zero_from_a_file_is_a_redirection_of_descriptor_zero(home: Path) -> None:
    assert judged("exec 0<~/.bashrc", home) == (
        "MODERATE",
        ("keeps ~/.bashrc open for the commands after it, which may write it without naming it",),
    )
    assert lasts_in_session("exec 0<notes.txt", cwd=project(home))
    command = "exec 0<~/.b?shrc; echo x >> /dev/stdin"
    tier, reasons = judged(command, home)
    assert tier == "MODERATE" and "writes to ~/.b?shrc" in reasons, reasons
    assert held(command, home)
    assert held("echo x >f 0<~/.b?shrc 1>>/dev/fd/0", home)
    # a number apart from it stays a word
    assert judged("echo 0 <notes.txt", home) == ("SAFE", ())
    assert judged("echo x0<notes.txt", home) == ("SAFE", ())


# ---- 4. `${x}<` is no `{fd}<`


@pytest.mark.parametrize(
    "command",
    [
        "echo W${x}<~/.b?shrc >>/dev/stdin",
        "echo ${x}<~/.b?shrc >>/dev/stdin",
        ": ${x}<~/.b?shrc >>/dev/stdin",
        "cat ${f}<~/.b?shrc >>/dev/stdin",
    ],
)
def test_an_expansion_before_a_redirection_leaves_it_on_descriptor_zero(command: str, home: Path) -> None:
    tier, reasons = judged(command, home)
    assert tier == "MODERATE" and "writes to ~/.b?shrc" in reasons, reasons
    assert held(command, home)


def test_a_named_descriptor_still_keeps_its_file(home: Path) -> None:
    assert (
        "keeps ~/.bashrc open for the commands after it, which may write it without naming it"
        in (judged("exec {fd}<~/.bashrc", home)[1])
    )


# ---- 5. a command fed by a pipe has the pipe on descriptor 0


def test_writing_to_standard_input_that_is_a_pipe_stays_read_only(home: Path) -> None:
    for command in ("printf x | tee /dev/stdin", "echo hi | tee /dev/fd/0 | wc -l", "ls | { cat >/dev/stdin; }"):
        assert judged(command, home) == ("SAFE", ()), command
    # the file a command's own redirection opens on 0 is written all the same
    assert "writes to ~/.bashrc" in judged("echo x | tee -a /dev/stdin < ~/.bashrc", home)[1]
    assert os.environ["HOME"] == str(home)
