"""Deletions the classifier once read as harmless, tried through execute_command as an agent would
(issue 23; the server in this process, tests/in_process_server.py): a script written by one call
and run by file in the next, and the remove options of tools that are not deleters by name. Each
route is first shown to delete, run directly on a copy."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.in_process_server import serving
from tests.stdio_client import run

pytestmark = pytest.mark.anyio
HELD = "This command needs the user's approval"  # headless: no one can click, so it did not run


def a_project(folder: Path) -> Path:
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "results.csv").write_text("1,2,3\n")
    return folder


@pytest.mark.parametrize(
    ("script", "content", "runs_it"),
    [
        ("tidy.sh", "echo tidying\nrm -rf data\n", "bash tidy.sh"),
        ("tidy.py", "import shutil\nprint('tidying')\nshutil.rmtree('data')\n", f"{Path(sys.executable).name} tidy.py"),
    ],
    ids=["bash", "python"],
)
async def test_a_script_written_by_one_call_and_run_by_file_in_the_next_is_judged_by_its_content(
    home: Path, tmp_path: Path, script: str, content: str, runs_it: str
) -> None:
    copy = a_project(tmp_path / "copy")
    (copy / script).write_text(content)
    direct = subprocess.run(runs_it, shell=True, cwd=copy, capture_output=True, text=True, timeout=60,
                            env={"PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin"})  # fmt: skip
    assert direct.returncode == 0 and not (copy / "data").exists(), "run directly, the script deletes"
    project = a_project(tmp_path / "project")
    async with serving(home) as client:
        written = await run(client, {"command": f"cat > {script} <<'EOF'\n{content}EOF", "cwd": str(project)})
        assert written.get("exitCode") == 0 and (project / script).read_text() == content, written
        harmless = await run(client, {"command": "bash -c 'echo fine'", "cwd": str(project)})
        assert harmless.get("stdout") == "fine\n", harmless
        refused = await run(client, {"command": runs_it, "cwd": str(project)})
    said = refused.get("error", "")
    assert HELD in said and ("Deletes the folder" in said or "the program deletes files" in said), said
    assert (project / "data" / "results.csv").exists()


REMOVE_OPTIONS = {
    "tar --remove-files": "tar --remove-files -cf keep.tar data",
    "zip -m": "zip -qrm keep.zip data",
}


def shown_to_delete(command: str, copy: Path, program: str | None = None) -> str:
    """Run directly on a copy of the project (by bash, as the server runs it), the route deletes its
    data (skipped where its program is not installed): the test that holds it can fail. Its program's name."""
    program = program or command.split()[0]
    if shutil.which(program) is None:
        pytest.skip(f"{program} is not installed")
    a_project(copy)
    subprocess.run(["bash", "-c", command], cwd=copy, check=False, capture_output=True, timeout=60)
    assert not (copy / "data" / "results.csv").exists(), "run directly, it deletes"
    return program


@pytest.mark.parametrize("command", REMOVE_OPTIONS.values(), ids=REMOVE_OPTIONS.keys())
async def test_the_remove_option_of_an_archiver_is_held_as_a_deletion(home: Path, tmp_path: Path, command: str) -> None:
    program = shown_to_delete(command, tmp_path / "copy")
    project = a_project(tmp_path / "project")
    async with serving(home) as client:
        listed = await run(client, {"command": f"{program} --help > /dev/null 2>&1; echo $?", "cwd": str(project)})
        assert listed.get("stdout") == "0\n", listed  # the program itself runs here
        refused = await run(client, {"command": command, "cwd": str(project)})
    said = refused.get("error", "")
    assert HELD in said and "deletes the files it packs" in said, said
    assert (project / "data" / "results.csv").exists() and not any(project.glob("keep.*"))


GIVEN_TO_ANOTHER_PROGRAM = {
    "linux64": "linux64 rm -rf data",  # util-linux: runs its command for another architecture
    "ssh-agent": "ssh-agent rm -rf data",  # runs its command with an agent started for it
    "timeout -vs": "timeout -vs KILL 5 rm -rf data",  # `-v` then `-s KILL`: `5` was read as the program
    # Second red team, 2026-12-04: code in a program's options or text, each judged safe or moderate.
    "awk BEGIN": "awk 'BEGIN{system(\"rm -rf data\")}'",  # said as awk starting shell commands
    "tar --checkpoint-action": "tar -cf /dev/null --checkpoint=1 --checkpoint-act=exec='rm -rf data' .",
    "sqlite3 .shell": "sqlite3 :memory: '.shell rm -rf data'",
    "vim -c !": "vim -es -c '!rm -rf data' -c q",
    "ed r !": "printf 'r !rm -rf data\\nq\\n' | ed -s",
}


@pytest.mark.parametrize("command", GIVEN_TO_ANOTHER_PROGRAM.values(), ids=GIVEN_TO_ANOTHER_PROGRAM.keys())
async def test_a_deletion_given_to_another_program_waits_for_a_click(home: Path, tmp_path: Path, command: str) -> None:
    """2026-12-04: each was judged safe or moderate, so it ran unheld and deleted (run directly, it does)."""
    shown_to_delete(command, tmp_path / "copy")
    project = a_project(tmp_path / "project")
    async with serving(home) as client:
        refused = await run(client, {"command": command, "cwd": str(project)})
    said = refused.get("error", "")
    words = "awk starts shell commands" if command.startswith("awk") else f"Deletes the folder {project.resolve()}/data"
    assert HELD in said and words in said, said
    assert (project / "data" / "results.csv").exists()


async def test_a_long_command_is_judged_as_a_short_one_is(home: Path, tmp_path: Path) -> None:
    """A command over 4 KB is judged on a worker thread (the loop goes on with other calls)."""
    project = a_project(tmp_path / "project")
    long_but_harmless = "echo " + "word " * 1_000
    async with serving(home) as client:
        ran = await run(client, {"command": long_but_harmless, "cwd": str(project)})
        refused = await run(client, {"command": "rm -rf data # " + "padding " * 1_000, "cwd": str(project)})
    assert ran.get("stdout") == "word " * 999 + "word\n", ran
    assert HELD in refused.get("error", "") and (project / "data" / "results.csv").exists(), refused


# Fifth red team, 2026-12-04: each was judged safe or moderate, so it ran unheld and deleted.
FIFTH_RED_TEAM = {
    "PS4 with set -x": ("PS4='$(rm -rf data)'; set -x; ls", "bash"),
    "arithmetic name": ("x='a[$(rm -rf data)]'; echo $((x))", "bash"),
    "exported function": ("env 'BASH_FUNC_ls%%=() { rm -rf data; }' bash -c ls", "env"),
    "xargs env": ("echo rm -rf data | xargs env", "xargs"),
    "xargs -I into sh -c": ("echo 'rm -rf data' | xargs -I{} sh -c '{}'", "xargs"),
    "readarray -C eval": ("readarray -C eval -c 1 a <<< ';rm -rf data'", "bash"),
    "find -exec unlink": ("find data -type f -exec unlink {} \\;", "find"),
    "python -m timeit": (f"{Path(sys.executable).name} -m timeit -n1 -r1 'import shutil; shutil.rmtree(\"data\")'",
                         Path(sys.executable).name),
    "sqlite3 edit()": ("sqlite3 :memory: \"select edit('x', 'rm -rf data')\"", "sqlite3"),
}  # fmt: skip


@pytest.mark.parametrize(("command", "program"), FIFTH_RED_TEAM.values(), ids=FIFTH_RED_TEAM.keys())
async def test_the_fifth_red_teams_deletions_wait_for_a_click(
    home: Path, tmp_path: Path, command: str, program: str
) -> None:
    shown_to_delete(command, tmp_path / "copy", program)
    project = a_project(tmp_path / "project")
    async with serving(home) as client:
        refused = await run(client, {"command": command, "cwd": str(project)})
    assert HELD in refused.get("error", ""), refused
    assert (project / "data" / "results.csv").exists()
