"""Routes a red team found through execute_command on a tray-bound server (2026-12-05): each command
ran unheld (moderate) and deleted its victim folder V, while its direct form (`python3 x.py`,
`./x.sh`, `./a.out`, `gdb` reading a script) is held or read.

- gdb ran commands its rule did not read: the program `run` starts (`--args rm -rf V`), `with ... --
  shell`, `alias`, `interpreter-exec`, `thread apply all shell`... Its commands are now each read-only,
  the start of its program (judged as a wrapper's), code judged as such, or held.
- Scripts run another way than as the interpreter's operand: `python3 -m cProfile x.py`,
  `__import__("x")`, `node --require=./x.js`, `perl -I. -Mx`, jshell's Java: read as the direct form.
- Compiled libraries loaded into a program (`ctypes.CDLL('./x.so')`, sqlite3's `.load`, `ssh-keygen
  -D`, `ssh-add -s`, openssl's dynamic engine): held, as `./a.out` is.

The end-to-end test runs the gdb route through a real server bound to this process's hub."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import anyio
import pytest

from app.core.authority.hub import Hub
from app.core.classifier import Tier, classify
from app.core.classifier.findings import _snip
from tests.in_process_server import deny, held_by, serving
from tests.stdio_client import run

WIPES = 'import shutil\nshutil.rmtree("V")\n'


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A project folder with the victim V, and a script in each language that deletes it."""
    (tmp_path / "V").mkdir()
    files = {
        "x.py": WIPES, "ok.py": "print(1)\n", "x.js": 'require("fs").rmSync("V", {recursive: true})\n',
        "x.pl": 'use File::Path; rmtree("V");\n', "x.pm": 'use File::Path; rmtree("V");\n1;\n',
        "wipe.gdb": "with confirm off -- shell rm -rf V\n", "README.md": "Restart the server.\n>>> 1 + 1\n2\n",
        "lib.py": "import ctypes\nctypes.CDLL('./x.so')\n", "x.so": "not read\n",
        "prog": "\x7fELF compiled\n", "edit.jsh": "/set editor rm -rf V\n/edit\n",
    }  # fmt: skip
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "x.mjs").write_text((tmp_path / "x.js").read_text())
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "__main__.py").write_text(WIPES)
    return tmp_path


def reasons(command: str, folder: Path) -> tuple[Tier, tuple[str, ...]]:
    result = classify(command, cwd=str(folder))
    return result.tier, result.reasons


# ---- gdb


@pytest.mark.parametrize(
    "command",
    [
        "gdb -q -batch -ex run --args rm -rf V",
        "gdb -q -batch -ex 'with confirm off -- shell rm -rf V'",
        "gdb -q -batch -ex 'run -rf V' /bin/rm",
        "gdb -q -batch -ex 'start -rf V' /bin/rm",
        "gdb -q -batch -ex 'starti -rf V' /bin/rm",
        "gdb -q -batch -ex 'set args -rf V' -ex r /bin/rm",
        "gdb -q -batch -ex 'run $(rm -rf V)' /bin/true",  # gdb's shell expands run's words
        "gdb -q -batch -ex 'thread apply all shell rm -rf V'",
        "gdb -q -batch -ex 'thr a 1-3 -q shell rm -rf V'",
        "gdb -q -batch -ex 'frame apply all shell rm -rf V'",
        "gdb -q -batch -ex 'tfaas shell rm -rf V'",
        "gdb -q -batch -iex 'w confirm off -- shell rm -rf V'",
        "gdb -q -batch --eval='with confirm off -- shell rm -rf V'",
        "gdb -q -batch -ex=run --ar rm -rf V",  # --args by a prefix
        "gdb -q -batch -ex 'python gdb.execute(\"run\")' --args rm -rf V",  # code that may start it
        "gdb -q -batch -ex 'source wipe.gdb'",  # a file of commands, each read as -ex's are
        "gdb -q -batch -x wipe.gdb",
    ],
)
def test_what_gdb_starts_or_runs_is_judged_as_the_same_words_without_it(folder: Path, command: str) -> None:
    tier, said = reasons(command, folder)
    assert tier is Tier.DESTRUCTIVE, said
    assert set(reasons("rm -rf V", folder)[1]) <= set(said), said


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("gdb -q -batch -ex 'alias zz = shell' -ex 'zz rm -rf V'", "gdb -ex alias zz = shell"),
        (
            "gdb -q -batch -ex 'interpreter-exec console \"shell rm -rf V\"'",
            'gdb -ex interpreter-exec console "shell rm -rf V"',
        ),
        ('gdb -q -batch -ex \'eval "shell rm -rf %s", "V"\'', 'gdb -ex eval "shell rm -rf %s", "V"'),
        ("gdb -q -batch -ex 'print $_shell(\"rm -rf V\")'", 'gdb -ex print $_shell("rm -rf V")'),
        ("gdb -q -batch -ex 'with exec-wrapper ./w -- bt' ./prog", "gdb -ex with exec-wrapper ./w -- bt"),
        ("gdb -q -batch -ex 'pip rm -rf V'", "gdb -ex pip rm -rf V"),  # not a shell gdb is known to take
        # a started program's functions run in it
        ("gdb -q -batch -ex r -ex 'print system(\"rm -rf V\")' --args /bin/true", 'gdb -ex print system("rm -rf V")'),
    ],  # fmt: skip
)
def test_a_gdb_command_not_known_to_be_read_only_cannot_be_told(folder: Path, command: str, reason: str) -> None:
    tier, said = reasons(command, folder)
    assert tier is Tier.DESTRUCTIVE
    assert f"cannot tell what runs: {reason} may start a program" in said, said


def test_the_program_gdb_runs_is_held_as_it_is_run_directly(folder: Path) -> None:
    """`./prog`, a compiled program, is held; `gdb -ex run ./prog` and `--args ./prog` run it too."""
    direct = reasons("./prog", folder)
    assert direct == (
        Tier.DESTRUCTIVE,
        (f"cannot tell what runs: the script {_snip(f'{folder}/prog')} is a compiled program",),
    )
    assert reasons("gdb -batch -ex run ./prog", folder) == direct
    assert reasons("gdb -batch -ex 'break main' -ex run --args ./prog", folder) == direct


@pytest.mark.parametrize(
    "command",
    [
        "gdb -batch -ex bt ./prog core",  # as before: moderate
        "gdb -q -batch -ex 'bt full' -ex 'info registers' -ex 'p/x $pc' -ex 'x/4i $pc' ./prog core",
        "gdb -batch -ex 'set pagination off' -ex 'thread apply all bt full' ./prog core",
        "gdb -batch -ex 'with print pretty on -- bt' -ex 'frame apply all -q p $sp' ./prog core",
        "gdb -batch -ex 'disassemble main' ./prog",
        "gdb -batch -ex run --args /bin/true",
        "gdb -batch --args rm -rf V",  # no command starts it
        "gdb ./prog",
    ],
)
def test_gdb_reading_a_program_or_a_core_file_is_not_held(folder: Path, command: str) -> None:
    assert reasons(command, folder) == (Tier.MODERATE, ("gdb: runs a program under a debugger",))


# ---- Scripts run indirectly


@pytest.mark.parametrize(
    "command",
    [
        "python3 -m cProfile x.py",
        "python3 -m cProfile -o out.prof -s time x.py a b",
        "python3 -m profile x.py",
        "python3 -m pdb x.py",
        "python3 -m trace --trace x.py",
        "python3 -m doctest x.py",
        "python3 -m unittest x.py",
        "python3 -m unittest -v x",
        "python3 -m runpy x",
        "python3 -B -mcProfile x.py",
        "python3 -m timeit -s 'import x'",
        "python3 -c '__import__(\"x\")'",
        "python3 -c 'import runpy; runpy.run_path(\"x.py\")'",
    ],
)
def test_a_python_module_that_runs_a_script_reads_it_as_python3_does(folder: Path, command: str) -> None:
    tier, said = reasons(command, folder)
    assert tier is Tier.DESTRUCTIVE
    assert f"python3 {_snip(f'{folder}/x.py')}: the program deletes files or stops the machine" in said, said


@pytest.mark.parametrize(
    "command",
    [
        "python3 -m cProfile -m pkg",
        "python3 -m trace --module pkg",
        "python3 -m runpy pkg",
        "python3 -c 'import runpy; runpy.run_module(\"pkg\")'",
    ],  # fmt: skip
)
def test_a_package_a_module_runs_is_read_with_its_main(folder: Path, command: str) -> None:
    tier, said = reasons(command, folder)
    assert tier is Tier.DESTRUCTIVE
    assert f"python3 {_snip(f'{folder}/pkg/__main__.py')}: the program deletes files or stops the machine" in said, said


@pytest.mark.parametrize(
    "command",
    [
        "node --require=./x.js -e 1",
        "node --import=./x.mjs -e 1",
        "node --experimental-loader=./x.mjs -e 1",
        "node -e 'require(\"./x.js\")'",
        "perl -e 'do \"./x.pl\"'",
        "perl -e 'require \"./x.pl\"'",
        "perl -I. -Mx -e 1",
        "perl -e 1 -I . -Mx=a,b",
    ],
)
def test_node_and_perl_modules_loaded_by_a_written_name_are_read(folder: Path, command: str) -> None:
    tier, said = reasons(command, folder)
    program, name = ("node", "x.mjs" if "mjs" in command else "x.js") if command.startswith("node") else ("perl", "")
    name = name or ("x.pm" if "-M" in command else "x.pl")
    assert tier is Tier.DESTRUCTIVE
    assert f"{program} {_snip(f'{folder}/{name}')}: the program deletes files or stops the machine" in said, said


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        (
            "python3 -c '__import__(name)'",
            "cannot tell what runs: python3 code calls functions by names made when it runs",
        ),
        (
            "node -e 'require(process.argv[1])' x.js",
            "cannot tell what runs: node code calls functions by names made when it runs",
        ),
        ("perl -e 'do $ARGV[0]' x.pl", "cannot tell what runs: perl code calls functions by names made when it runs"),
        ('python3 -m cProfile "$f"', "cannot tell what runs: python3 code from an expansion"),
        (
            "python3 -m trace --ign /usr x.py",
            "cannot tell what runs: python3 -m trace --ign",
        ),  # --ignore-dir or -module
        ("PERL5OPT=-Mx perl -e 1", "cannot tell what runs: PERL5OPT gives perl options that load code"),
        (
            'python3 -c \'import os; os.waitpid(os.posix_spawnp("rm", ["rm", "-rf", "V"], {}), 0)\'',
            "cannot tell what runs: python3 code starts other programs",
        ),
        (
            'jshell -q <<< \'new ProcessBuilder("rm","-rf","V").start().waitFor()\'',
            "cannot tell what runs: jshell code starts other programs",
        ),
        (
            'echo \'Runtime.getRuntime().exec(new String[]{"rm", "-rf", "V"})\' | jshell -q',
            "cannot tell what runs: jshell code starts other programs",
        ),
        (
            "jshell <<< 'java.nio.file.Files.delete(java.nio.file.Path.of(\"V\"))'",
            "jshell code that deletes files or stops the machine",
        ),
        (
            "jshell <<< 'Class.forName(\"java.lang.Runtime\")'",
            "cannot tell what runs: jshell code calls functions by names made when it runs",
        ),
        (
            "jshell < edit.jsh",
            "cannot tell what runs: jshell /set editor may start a program",
        ),
    ],  # fmt: skip
)
def test_code_that_names_what_it_runs_only_when_it_runs_cannot_be_told(folder: Path, command: str, reason: str) -> None:
    tier, said = reasons(command, folder)
    assert tier is Tier.DESTRUCTIVE
    assert reason in said, said


@pytest.mark.parametrize(
    "command",
    ["java -XX:OnError='rm -rf V' -version", "jshell -R-XX:OnError='rm -rf V' <<< 'System.exit(1)'"],
)
def test_a_java_machine_option_that_runs_a_command_is_judged_as_it(folder: Path, command: str) -> None:
    tier, said = reasons(command, folder)
    assert tier is Tier.DESTRUCTIVE
    assert set(reasons("rm -rf V", folder)[1]) <= set(said), said


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("python3 -m pytest", "python3 -m pytest: runs a module"),
        ("python3 -m venv .venv", "python3 -m venv: runs a module"),
        ("python3 -m pip install x", "pip install: changes installed software"),
        ("python3 -m unittest", "python3 -m unittest: runs a module"),
        ("python3 -m unittest discover -s tests -p 'test_*.py'", "python3 -m unittest: runs a module"),
        ("python3 -m cProfile -o out.prof ok.py", "python3 -m cProfile: runs a module"),
        ("python3 -m doctest README.md", "python3 -m doctest: runs a module"),  # its examples, not its prose
        ("python3 -m timeit -s 'import ok' 'ok'", "python3 -m timeit: runs inline code"),
        ("python3 -c 'import json; print(json.dumps(1))'", "python3: runs inline code"),
        ("node -e 'console.log(require(\"./package.json\").version)'", "node: runs inline code"),
        ("node -p 'require(\"os\").cpus().length'", "node: runs inline code"),
        ("perl -MData::Dumper -e 'print Dumper(1)'", "perl: runs inline code"),
        ("perl -e 'do { print 1 }'", "perl: runs inline code"),
        ("jshell <<< 'System.out.println(1)'", "jshell: runs inline code"),
        # a library of the system's, by its name: its calls are judged by their names
        ("python3 -c 'import ctypes; print(ctypes.CDLL(None).getpid())'", "python3: runs inline code"),
    ],
)
def test_everyday_look_alikes_are_not_held(folder: Path, command: str, reason: str) -> None:
    tier, said = reasons(command, folder)
    assert tier is Tier.MODERATE
    assert reason in said, said


# ---- Compiled libraries loaded into a program


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("python3 -c \"import ctypes; ctypes.CDLL('./x.so')\"", "python3 code loads a compiled library"),
        ("python3 -c \"import ctypes; ctypes.cdll.LoadLibrary('./x.so')\"", "python3 code loads a compiled library"),
        ("python3 lib.py", "{lib} loads a compiled library"),
        ("python3 -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1])' ./x.so", "python3 code loads a compiled library"),
        ("sqlite3 :memory: '.load ./x.so'", "sqlite3 loads the code of the library ./x.so"),
        ("sqlite3 :memory: '.lo ./x.so'", "sqlite3 loads the code of the library ./x.so"),
        ("echo '.l ./x.so' | sqlite3", "sqlite3 loads the code of the library ./x.so"),
        ("sqlite3 db \"select load_extension('./x.so')\"", "sqlite3 loads the code of the library ./x.so"),
        ("ssh-keygen -D ./x.so", "ssh-keygen -D loads the code of the library ./x.so"),
        ("ssh-add -s ./x.so", "ssh-add -s loads the code of the library ./x.so"),
        ("ssh -I ./x.so host", "ssh -I loads the code of the library ./x.so"),
        ("openssl engine -t dynamic -pre SO_PATH:./x.so", "openssl loads the code of the library -pre SO_PATH:./x.so"),
        ("openssl req -new -engine ./x.so -key k", "openssl loads the code of the library ./x.so"),
        ("java -agentpath:./x.so -version", "java loads the code of the library ./x.so"),
    ],  # fmt: skip
)
def test_a_compiled_library_loaded_into_a_program_cannot_be_told(folder: Path, command: str, reason: str) -> None:
    tier, said = reasons(command, folder)
    assert tier is Tier.DESTRUCTIVE
    assert f"cannot tell what runs: {reason.format(lib=_snip(f'{folder}/lib.py'))}" in said, said


@pytest.mark.parametrize(
    "command",
    [
        "sqlite3 db 'select 1'",
        "sqlite3 db '.log stderr'",
        "sqlite3 db .limit",
        "ssh-keygen -lf k.pub",
        "ssh-add -l",
        "openssl x509 -in c.pem -noout -text",
        "openssl req -new -engine pkcs11 -key k",
    ],  # fmt: skip
)
def test_the_same_programs_not_told_to_load_a_library_are_not_held(folder: Path, command: str) -> None:
    assert reasons(command, folder)[0] is Tier.MODERATE


# ---- Through execute_command, on a server bound to the tray


@pytest.mark.anyio
@pytest.mark.skipif(shutil.which("gdb") is None, reason="gdb is not installed")
async def test_gdb_running_rm_through_execute_command_is_held_and_v_stays(home: Path, hub: Hub, tmp_path: Path) -> None:
    """Before: it ran unheld and V was gone. Now it waits for the person, who denies it."""
    (tmp_path / "V").mkdir()

    async def deny_it() -> None:
        [held] = await held_by(hub)
        deny(hub, held.command_id)

    async with serving(home, bound=True) as client, anyio.create_task_group() as group:
        group.start_soon(deny_it)
        result = await run(client, {"command": "gdb -q -batch -ex run --args rm -rf V", "cwd": str(tmp_path)})
    assert json.loads(result["error"])["status"] == "denied", result
    assert (tmp_path / "V").is_dir()
