"""Routes a red team found (2026-12-05) through execute_command on a tray-bound server, each judged
safe or moderate while it deleted a folder: a quoted `$(...)` that bash evaluates as arithmetic,
ssh's `-o` glued to its value under scp and sftp (and their `-S`/`-D` program), ed's `!` file, an
inline SHELL for a program that runs $SHELL, and a library's code loaded into a program
(LD_PRELOAD, LD_AUDIT, DYLD_INSERT_LIBRARIES, bash's `enable -f`).

Where the program is installed, each route is first run for real in a temporary folder, to show it
deletes, before the classifier is shown to hold it; the everyday look-alikes keep their tier."""

from __future__ import annotations

import glob
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from app.core.authority.hub import Hub
from app.core.classifier import Tier, classify
from app.core.classifier.findings import LOADS_LIBRARY
from app.core.journal.store import Journal, Status
from app.core.paths import AppPaths
from tests.in_process_server import deny, held_by, serving
from tests.stdio_client import run

RM = "rm -r: recursive removal"


def deletes(command: list[str], cwd: Path, victim: Path) -> bool:
    """Whether `command`, run in `cwd`, deletes `victim` (made again after)."""
    victim.mkdir(exist_ok=True)
    subprocess.run(command, cwd=cwd, capture_output=True, check=False, timeout=60, stdin=subprocess.DEVNULL)
    gone = not victim.exists()
    victim.mkdir(exist_ok=True)
    return gone


def held(command: str, cwd: Path, reason: str) -> None:
    result = classify(command, cwd=str(cwd))
    assert result.tier is Tier.DESTRUCTIVE, (command, result.reasons)
    assert reason in result.reasons, (command, result.reasons)


def tier(command: str, cwd: Path) -> Tier:
    return classify(command, cwd=str(cwd)).tier


# bash 5.2 runs each `$(...)`: arithmetic expands its quoted text, or evaluates a subscript in a value
BASH_RUNS = [
    "[[ 'a[$(rm -rf V)0]' -eq 0 ]]",
    "[[ 'a[$(rm -rf V)0]' -lt 0 ]]",
    "[[ 0 -ne 'a[$(rm -rf V)0]' ]]",
    "[[ -v 'a[$(rm -rf V)0]' ]]",
    "[[ ! -v 'a[$(rm -rf V)0]' ]]",
    "[[ ( 'a[$(rm -rf V)0]' -eq 0 ) ]]",
    "(( 'a[$(rm -rf V)0]' ))",
    "(( '$(rm -rf V)' ))",
    "(( x = 'a[`rm -rf V`]' ))",
    "echo ${a['$(rm -rf V)0']}",
    "echo \"${a['$(rm -rf V)']}\"",
    "echo ${a['$(rm -rf V)']:-x}",
    "echo $(( 'a[$(rm -rf V)0]' ))",
    "echo $(( '$(rm -rf V)' ))",
    "b['$(rm -rf V)']=1",
    "declare b['$(rm -rf V)']=1",
    "a=(['$(rm -rf V)']=1)",
]
# held too, though bash 5.2 does not run them: numbers the red team found a bash evaluates as
# arithmetic, and a subscript in `(( ))` (a subscript's quotes mean nothing in other arithmetic)
NUMBERS = [
    "(( a['$(rm -rf V)'] ))",
    "set -- 1 2; shift 'a[$(rm -rf V)0]'",
    "for i in 1; do break 'a[$(rm -rf V)0]'; done",
    "for i in 1; do continue 'a[$(rm -rf V)0]'; done",
    "f() { return 'a[$(rm -rf V)0]'; }; f",
    "exit 'a[$(rm -rf V)0]'",
    "[ 'a[$(rm -rf V)0]' -eq 0 ]",
    "test 'a[$(rm -rf V)0]' -eq 0",
    "history -d 'a[$(rm -rf V)0]'",
]
ARITHMETIC_EVERYDAY = {
    '[[ "$n" -eq 0 ]]': Tier.SAFE,
    "[[ 'x' -eq 0 ]]": Tier.SAFE,
    "(( 'x' ))": Tier.SAFE,
    "(( i++ ))": Tier.SAFE,
    "echo $(( 1 + 2 ))": Tier.SAFE,
    "echo \"${a[0]}\" ${a['key']}": Tier.SAFE,
    "[[ -v HOME ]] && [[ -v 'a[1]' ]]": Tier.SAFE,
    '[ "$#" -eq 2 ]': Tier.SAFE,
    "[[ $a == 'a[$(b)]' ]]": Tier.SAFE,  # a string compared, never evaluated
    "echo '$(( a[$(rm -rf V)0] ))'": Tier.SAFE,  # quoted: printed
    "b['$(date +%s)']=1": Tier.SAFE,  # it runs, and deletes nothing
    "shift 2; shift": Tier.SAFE,
    "for i in 1; do break 2; done": Tier.SAFE,
    "exit 1": Tier.MODERATE,  # "ends the shell session", as before
    "history -d 5": Tier.MODERATE,
}


def test_a_quoted_command_substitution_bash_evaluates_as_arithmetic_is_judged_as_it_runs(tmp_path: Path) -> None:
    """`[[ 'a[$(rm -rf V)0]' -eq 0 ]]` was safe: judged as the value holding `$(...)` that `let`,
    `declare -i` and `test -v` already were."""
    victim = tmp_path / "V"
    for command in BASH_RUNS:
        assert deletes(["bash", "-c", command], tmp_path, victim), f"bash does run rm: {command}"
        held(command, tmp_path, RM)
    for command in NUMBERS:
        held(command, tmp_path, RM)
    for command, expected in ARITHMETIC_EVERYDAY.items():
        assert tier(command, tmp_path) is expected, command


SSH_OPTIONS = [
    "scp -oProxyCommand='rm -rf V' x:a b",
    "scp -o'ProxyCommand rm -rf V' x:a b",
    "scp -qoProxyCommand='rm -rf V' x:a b",
    "scp -oKnownHostsCommand='rm -rf V' x:a b",
    "sftp -oProxyCommand='rm -rf V' x",
    "sftp -qoProxyCommand='rm -rf V' x",
    "sshfs -oProxyCommand='rm -rf V' x:a b",
    "sshfs -o reconnect,ProxyCommand='rm -rf V' x:a b",
]
SSH_PROGRAMS = ["scp -S ./x.sh x:a b", "sftp -S ./x.sh x", "sftp -D ./x.sh"]  # run in ssh's place


def test_ssh_options_glued_or_grouped_under_scp_and_sftp_are_read_as_ssh_reads_them(tmp_path: Path) -> None:
    victim = tmp_path / "V"
    script = tmp_path / "x.sh"
    script.write_text("#!/bin/sh\nrm -rf V\n")
    script.chmod(0o755)
    for command in SSH_OPTIONS + SSH_PROGRAMS:
        program = command.split()[0]
        if shutil.which(program) is not None and "KnownHostsCommand" not in command:  # that one: once connected
            assert deletes(["bash", "-c", command], tmp_path, victim), f"{program} does run rm: {command}"
        held(command, tmp_path, RM)
    held('scp -o"$OPTS" x:a b', tmp_path, "cannot tell what runs: scp -o from an expansion")
    everyday = ["scp -oStrictHostKeyChecking=no a x:b", "scp -q -P 22 -i key a x:b", "sftp -oPort=22 x",
                "sshfs -o reconnect,allow_other x:a b", "scp -S ssh a x:b", "scp -S /usr/bin/ssh a x:b"]  # fmt: skip
    for command in everyday:
        assert tier(command, tmp_path) is Tier.MODERATE, command


def test_an_ed_file_operand_that_starts_with_a_bang_is_judged_as_the_shell_command_it_runs(tmp_path: Path) -> None:
    victim = tmp_path / "V"
    if shutil.which("ed") is not None:
        assert deletes(["ed", "-s", "!rm -rf V"], tmp_path, victim), "ed does run rm"
    held("ed -s '!rm -rf V' </dev/null", tmp_path, RM)
    held("ed -- '!rm -rf V'", tmp_path, RM)
    held('ed "!$cmd"', tmp_path, "cannot tell what runs: ed ! of an expansion")
    for command in ["ed -s notes.txt", "ed -p '!' notes.txt", "ed -s \"$f\" <<< ',p'"]:
        assert tier(command, tmp_path) is Tier.MODERATE, command


def test_a_shell_set_for_a_program_that_runs_shell_is_judged_as_the_program_it_names(tmp_path: Path) -> None:
    victim = tmp_path / "V"
    script = tmp_path / "x.sh"
    script.write_text("#!/bin/sh\nrm -rf V\n")
    script.chmod(0o755)
    relative = "cannot tell what runs: SHELL runs ./x.sh, a script in a folder not known here"
    for command in ["SHELL=./x.sh flock lk -c true", "SHELL=./x.sh script -qc true /dev/null"]:
        if shutil.which(command.split()[1]) is not None:
            assert deletes(["bash", "-c", command], tmp_path, victim), command
        held(command, tmp_path, relative)
    held("env SHELL=./x.sh flock lk -c true", tmp_path, relative)
    held("export SHELL=./x.sh; flock lk -c true", tmp_path, relative)
    held(f"SHELL={script} flock lk -c true", tmp_path, RM)  # its content, read
    for command in ["SHELL=/bin/bash flock lk -c true", "SHELL=bash script -qc true /dev/null", "flock lk -c true"]:
        assert tier(command, tmp_path) is Tier.MODERATE, command
    assert tier("export SHELL=/bin/sh", tmp_path) is Tier.SAFE


def installed_library() -> str:
    found = sorted(path for pattern in ["/lib*/libc.so.6", "/lib*/*/libc.so.6", "/usr/lib*/libc.so.6",
                                        "/usr/lib*/*/libc.so.6"] for path in glob.glob(pattern))  # fmt: skip
    if not found:
        pytest.skip("no libc.so.6 in a system folder")
    return found[0]


def test_a_library_loaded_into_a_program_is_held_as_a_compiled_program_is(tmp_path: Path) -> None:
    """`./a.out` is held ("a compiled program"); `LD_PRELOAD=./x.so ls` ran its code, moderate."""
    for variable in ["LD_PRELOAD", "LD_AUDIT", "DYLD_INSERT_LIBRARIES"]:
        reason = LOADS_LIBRARY.format(name=variable, value="./x.so")
        for command in [f"{variable}=./x.so ls", f"env {variable}=./x.so ls", f"export {variable}=./x.so"]:
            held(command, tmp_path, reason)
    held("LD_PRELOAD=libx.so ls", tmp_path, LOADS_LIBRARY.format(name="LD_PRELOAD", value="libx.so"))
    held('LD_PRELOAD="$lib" ls', tmp_path, LOADS_LIBRARY.format(name="LD_PRELOAD", value='"$lib"'))
    held("enable -f ./x.so name", tmp_path, LOADS_LIBRARY.format(name="enable -f", value="./x.so"))
    held("builtin enable -f ./x.so name", tmp_path, LOADS_LIBRARY.format(name="enable -f", value="./x.so"))
    libc = installed_library()
    for command in [f"LD_PRELOAD={libc} ls", "LD_PRELOAD= ls", "LD_LIBRARY_PATH=. ls", f"enable -f {libc} x",
                    "enable -n echo", "enable"]:  # fmt: skip
        assert tier(command, tmp_path) is Tier.MODERATE, command
    said = classify("LD_PRELOAD=./x.so ls", cwd=str(tmp_path)).plain
    assert said == ("Cowork Terminal cannot tell what this command would do (LD_PRELOAD makes a program run "
                    "the code of the library ./x.so)",)  # fmt: skip


@pytest.mark.anyio
async def test_a_bound_server_holds_the_arithmetic_route_and_the_folder_survives(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path
) -> None:
    """Through execute_command on a server bound to the tray's hub: the command waits for the user,
    who denies it; the folder it would delete is still there."""
    project = tmp_path / "project"
    (project / "V").mkdir(parents=True)
    hub.set_settings(approval_window_s=1.0)
    command = "[[ 'a[$(rm -rf V)0]' -eq 0 ]]"
    async with serving(home, bound=True) as client:
        first = await run(client, {"command": command, "cwd": str(project)})
        assert first["status"] == "waiting", first
        [waiting] = await held_by(hub)
        assert waiting.command == command and "recursive removal" in waiting.reasons
        deny(hub, waiting.command_id)
        waited = await client.call_tool("command_wait", {"jobId": first["jobId"]})
    assert json.loads(waited.content[0].text)["status"] == "denied"
    assert (project / "V").is_dir()
    with Journal.open(paths) as journal:
        [row] = journal.recent_commands()
    assert row.status is Status.REFUSED and row.tier == "destructive"
