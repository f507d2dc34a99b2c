"""Scripts named as a program's argument are judged by their content, read from the command's folder,
and input typed into the session is judged as the language of the program that reads it (issue 23)."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from app.core.classifier import Danger, Tier, classify, classify_typed, script_paths
from app.core.classifier.scripts import MAX_SCRIPT_BYTES, shebang_program


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "tidy.sh").write_text("echo tidy\nls -la\n")
    (tmp_path / "wipe.sh").write_text("#!/bin/sh\nrm -rf ~/Documents\n")
    (tmp_path / "report.py").write_text("import json\nprint(json.dumps({'ok': True}))\n")
    (tmp_path / "purge.py").write_text("import shutil\n\nshutil.rmtree('/home/ana/photos')\n")
    (tmp_path / "tool").write_text("#!/usr/bin/env python3\nprint('hi')\n")
    (tmp_path / "zap").write_text("#!/usr/bin/env node\nrequire('fs').rmSync('data', {recursive: true})\n")
    for name in ("tool", "zap", "wipe.sh", "tidy.sh"):
        (tmp_path / name).chmod(0o755)
    return tmp_path


@pytest.mark.parametrize(
    "command", ["bash tidy.sh", "sh tidy.sh", "source tidy.sh", ". ./tidy.sh", "./tidy.sh", "bash -x ./tidy.sh"]
)
def test_a_shell_script_that_only_reads_runs_as_a_checked_script(project: Path, command: str) -> None:
    verdict = classify(command, cwd=str(project))
    assert verdict.tier is Tier.MODERATE, verdict
    # `source tidy.sh` lists where bash looks on the PATH first too (pinned absent by an approval)
    assert verdict.scripts[-1] == f"{project}/tidy.sh" and all(s.endswith("/tidy.sh") for s in verdict.scripts)


@pytest.mark.parametrize("command", ["bash wipe.sh", "sh ./wipe.sh", "source wipe.sh", ". wipe.sh", "./wipe.sh"])
def test_a_shell_script_that_deletes_is_held_with_what_it_would_delete(project: Path, command: str) -> None:
    verdict = classify(command, cwd=str(project))
    assert verdict.tier is Tier.DESTRUCTIVE
    home = os.path.expanduser("~").rstrip("/")
    assert verdict.plain == (f"Deletes the folder {home}/Documents and everything in it",)
    assert verdict.danger is Danger.LOSES_FILES


def test_a_script_named_like_a_harmless_command_is_judged_by_what_it_says(project: Path) -> None:
    """`./ls` is the agent's own file, not ls."""
    shutil.copy(project / "wipe.sh", project / "ls")
    assert classify("./ls -la", cwd=str(project)).tier is Tier.DESTRUCTIVE
    assert classify("ls -la", cwd=str(project)).tier is Tier.SAFE


def test_a_python_or_node_program_is_judged_by_the_calls_it_makes(project: Path) -> None:
    assert classify("python3 report.py", cwd=str(project)).tier is Tier.MODERATE
    held = classify("python3 -u purge.py --yes", cwd=str(project))
    assert held.tier is Tier.DESTRUCTIVE
    assert held.plain[0].startswith("Runs ") and held.plain[0].endswith(
        "a program that can delete files or stop the machine"
    )
    assert classify("./tool", cwd=str(project)).tier is Tier.MODERATE  # by its #! line: python3
    assert classify("./zap", cwd=str(project)).tier is Tier.DESTRUCTIVE  # by its #! line: node


def test_a_script_that_cannot_be_read_or_judged_is_held(project: Path) -> None:
    shutil.copy("/bin/true", project / "compiled")
    (project / "big.sh").write_text("echo x\n" * (MAX_SCRIPT_BYTES // 7 + 1))
    (project / "awkward").write_text("#!/usr/bin/awk -f\n{ system($0) }\n")
    (project / "awkward").chmod(0o755)
    (project / "secret.sh").write_text("ls\n")
    (project / "secret.sh").chmod(0)
    cases = {
        "./compiled": "is a compiled program",
        "bash big.sh": "is too large to check",
        "./awkward": "is run by awk",
        "bash missing.sh": "cannot be read here",
    }
    if os.geteuid() != 0:  # root reads a file whatever its mode
        cases["bash secret.sh"] = "cannot be read here"
    for command, why in cases.items():
        verdict = classify(command, cwd=str(project))
        assert verdict.tier is Tier.DESTRUCTIVE, command
        assert why in verdict.plain[0], (command, verdict.plain)
    (project / "secret.sh").chmod(stat.S_IRUSR | stat.S_IWUSR)


def test_a_relative_script_with_no_known_folder_is_held() -> None:
    assert classify("bash tidy.sh").tier is Tier.DESTRUCTIVE


def test_a_script_the_same_command_writes_before_running_it_is_held(project: Path) -> None:
    for command in [
        "echo 'rm -rf ~' > tidy.sh; bash tidy.sh",
        "cp wipe.sh tidy.sh && bash tidy.sh",
        "printf 'rm -rf ~' | tee tidy.sh && ./tidy.sh",
        'out="$1"; echo x > "$out"; bash tidy.sh',  # written through a name only known when it runs
        "cat > new.sh <<'EOF'\nls\nEOF\nbash new.sh",
    ]:
        assert classify(command, cwd=str(project)).tier is Tier.DESTRUCTIVE, command
    assert classify("chmod +x tidy.sh && ./tidy.sh", cwd=str(project)).tier is Tier.MODERATE


def test_scripts_a_script_runs_are_read_too_and_every_script_read_is_listed_for_pinning(project: Path) -> None:
    (project / "outer.sh").write_text("bash ./tidy.sh\npython3 report.py\n")
    verdict = classify("bash outer.sh", cwd=str(project))
    assert verdict.tier is Tier.MODERATE
    assert script_paths("bash outer.sh", cwd=str(project)) == (
        f"{project}/outer.sh",
        f"{project}/tidy.sh",
        f"{project}/report.py",
    )
    (project / "outer.sh").write_text("bash ./wipe.sh\n")
    assert classify("bash outer.sh", cwd=str(project)).tier is Tier.DESTRUCTIVE


def test_a_script_that_runs_itself_forever_is_held_not_looped(project: Path) -> None:
    (project / "loop.sh").write_text("bash ./loop.sh\n")
    assert classify("bash loop.sh", cwd=str(project)).tier is Tier.DESTRUCTIVE


def test_installed_programs_by_path_keep_their_own_rule(project: Path) -> None:
    assert classify("/bin/ls -la", cwd=str(project)).tier is Tier.SAFE
    assert classify("/usr/bin/env python3 report.py", cwd=str(project)).tier is Tier.MODERATE


def test_the_program_a_shebang_names() -> None:
    assert shebang_program("#!/bin/sh\n") == "sh"
    assert shebang_program("#!/usr/bin/env python3\n") == "python3"
    assert shebang_program("#!/usr/bin/env -S node --no-warnings\n") == "node"
    assert shebang_program("echo no shebang\n") == ""


# ---- typed input


@pytest.mark.parametrize(
    ("program", "text", "tier"),
    [
        (None, "rm -rf build\n", Tier.DESTRUCTIVE),  # not known: judged as bash
        ("bash", "ls\n", Tier.SAFE),
        ("/usr/bin/zsh", "rm -rf build\n", Tier.DESTRUCTIVE),
        ("python3", "import shutil; shutil.rmtree('build')\n", Tier.DESTRUCTIVE),
        ("python3.12", "__import__('os').system('id')\n", Tier.DESTRUCTIVE),
        ("python3", "print(2 + 2)\n", Tier.MODERATE),
        ("python3", "rm -rf build\n", Tier.MODERATE),  # not Python: a syntax error, not a deletion
        ("node", "require('fs').rmSync('build', {recursive: true})\n", Tier.DESTRUCTIVE),
        ("irb", "FileUtils.rm_rf('build')\n", Tier.DESTRUCTIVE),
        ("ipython", "!rm -rf build\n", Tier.DESTRUCTIVE),
        ("ipython", "%run wipe.py\n", Tier.DESTRUCTIVE),
        ("less", "!rm -rf build\n", Tier.DESTRUCTIVE),  # a pager runs `!` lines: not judged, held
        ("psql", "DROP TABLE users;\n", Tier.DESTRUCTIVE),
        ("cat", "hello\n", Tier.SAFE),
    ],
)
def test_input_typed_into_a_known_interpreter_is_judged_as_that_interpreter_or_held(
    program: str | None, text: str, tier: Tier
) -> None:
    assert classify_typed(text, program, cwd="/home/ana/project").tier is tier


def test_typed_input_that_names_the_apps_data_is_held_in_any_interpreter() -> None:
    verdict = classify_typed("open('/srv/cowork-data/pause', 'w')\n", "python3", protected_paths=["/srv/cowork-data"])
    assert verdict.tier is Tier.DESTRUCTIVE


def test_a_script_fed_to_a_shell_or_interpreter_on_its_input_is_read_too(project: Path) -> None:
    assert classify("bash < tidy.sh", cwd=str(project)).tier is Tier.MODERATE
    assert classify("sh < wipe.sh", cwd=str(project)).tier is Tier.DESTRUCTIVE
    assert classify("python3 < purge.py", cwd=str(project)).tier is Tier.DESTRUCTIVE
    assert classify("python3 - < report.py", cwd=str(project)).scripts == (f"{project}/report.py",)


def test_a_virtual_environments_python_and_pip_by_path_keep_their_rules(project: Path) -> None:
    """The venv's python may be a compiled copy (Windows, pyenv, --copies): judged by its name's rule."""
    import sys

    python = sys.executable  # this test's own venv: .venv/bin/python
    assert classify(f"{python} -c 'print(1)'", cwd=str(project)).tier is Tier.MODERATE
    assert classify(f"{python} purge.py", cwd=str(project)).tier is Tier.DESTRUCTIVE
    pip = Path(python).with_name("pip")
    assert classify(f"{pip} uninstall -y requests", cwd=str(project)).tier is Tier.DESTRUCTIVE
    assert classify(f"{pip} install requests", cwd=str(project)).tier is Tier.MODERATE


def test_a_script_name_that_is_a_fifo_or_a_device_is_held_without_waiting_for_it(project: Path) -> None:
    """Reading a FIFO with no writer, or /dev/tty, would block the classifier (and the server) forever."""
    os.mkfifo(project / "pipe.sh")
    for command in ["bash pipe.sh", "./pipe.sh", "source /dev/tty", "bash /proc/kmsg", "bash /dev/zero"]:
        verdict = classify(command, cwd=str(project))
        assert verdict.tier is Tier.DESTRUCTIVE, command
        assert "cannot be read here" in verdict.plain[0], (command, verdict.plain)


def test_a_command_that_runs_too_many_scripts_is_held_without_reading_them_all(project: Path) -> None:
    from app.core.classifier.scripts import MAX_SCRIPTS

    assert classify("; ".join(["bash tidy.sh"] * MAX_SCRIPTS), cwd=str(project)).tier is Tier.MODERATE
    held = classify("; ".join(["bash tidy.sh"] * (MAX_SCRIPTS + 1)), cwd=str(project))
    assert held.tier is Tier.DESTRUCTIVE
    assert "runs too many scripts to check" in held.plain[0]


def test_a_scripts_own_writes_do_not_hold_it_but_a_script_it_rewrites_before_running_it_is_held(
    project: Path,
) -> None:
    (project / "build.sh").write_text('out="$1"\necho done > "$out"\nls > build.log\n')
    assert classify("bash build.sh", cwd=str(project)).tier is Tier.MODERATE
    (project / "outer.sh").write_text("echo 'rm -rf ~' > tidy.sh\nbash tidy.sh\n")
    assert classify("bash outer.sh", cwd=str(project)).tier is Tier.DESTRUCTIVE


def test_a_perl_script_is_read_not_taken_for_a_file_perl_edits_unless_it_edits_in_place(project: Path) -> None:
    (project / "count.pl").write_text("my $n = 0; $n++ while <STDIN>; print $n;\n")
    assert classify("perl count.pl < data.txt", cwd=str(project)).tier is Tier.MODERATE
    edit = "perl -pi -e 's/ls/rm -rf ~/' tidy.sh && bash tidy.sh"
    assert classify(edit, cwd=str(project)).tier is Tier.DESTRUCTIVE


WIPE = "rm -rf ~/Documents"


@pytest.fixture
def code_files(tmp_path: Path) -> Path:
    """Files of commands, one harmless and one that deletes for each language that reads them."""
    files = {
        "env.sh": f"{WIPE}\n", "askpass": f"#!/bin/sh\n{WIPE}\n", "drop.sql": "DROP TABLE users;\n",
        "escape.sql": f".shell {WIPE}\n", "outer.sql": ".read drop.sql\n", "wipe.sed": f"1e {WIPE}\n",
        "wipe.awk": f'BEGIN {{ system("{WIPE}") }}\n', "wipe.vim": f'" a session\n!{WIPE}\n',
        "wipe.gdb": f"break main\nshell {WIPE}\n", "outer.gdb": "source wipe.gdb\n",
        "py.gdb": "python\nimport shutil\nshutil.rmtree('/home/ana/x')\nend\n",
        "proxy.cfg": f"Host *\n  ProxyCommand {WIPE}\n",
        "match.cfg": f'Match host x exec "{WIPE}"\n', "include.cfg": f"Include {tmp_path}/proxy.cfg\n",
        "wipe.el": '(delete-directory "~/Documents" t)\n',
        "ok.sql": "SELECT 1;\n", "ok.sed": "s/a/b/\n", "ok.awk": "{ print $1 }\n", "ok.vim": '" comment!\nset nu\n',
        "ok.gdb": "break main\nrun\n", "ok.cfg": "Host x\n  User me\n  ProxyJump y\n", "ok.el": '(message "hi")\n',
    }  # fmt: skip
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "askpass").chmod(0o755)
    return tmp_path


@pytest.mark.parametrize(
    "command",
    [
        "BASH_ENV=./env.sh bash -c true",
        "export BASH_ENV=env.sh; bash -c true",
        "env BASH_ENV=env.sh bash -c true",
        "GIT_SSH=./askpass git fetch",
        "GIT_ASKPASS=./askpass git push",
        "SSH_ASKPASS=./askpass ssh-add",
        "psql -f drop.sql",
        "psql --file=drop.sql",
        "sqlite3 db '.read drop.sql'",
        "sqlite3 db '.read outer.sql'",
        "sqlite3 -init escape.sql db .quit",
        "sqlite3 db < drop.sql",
        "mysql db < drop.sql",
        "mysql -e 'source drop.sql'",
        "psql -c '\\i drop.sql'",
        "sed -f wipe.sed notes",
        "sed -nf wipe.sed notes",
        "sed --file=wipe.sed notes",
        "sed -f - notes < wipe.sed",
        "awk -f wipe.awk data",
        "awk -fwipe.awk data",
        "gawk -f ok.awk -f wipe.awk data",
        "vim -S wipe.vim",
        "vim -u wipe.vim notes",
        "vim -c 'source wipe.vim'",
        "vim -c 'so ./wipe.vim'",
        "ex -s notes < wipe.vim",
        "ed notes < wipe.vim",
        "gdb -x wipe.gdb ./a.out",
        "gdb -ex 'source wipe.gdb'",
        "gdb -ex 'so outer.gdb' ./a.out",
        "gdb --command=py.gdb",
        "ssh -F proxy.cfg host",
        "ssh -Fmatch.cfg host",
        "ssh -F include.cfg host",
        "git -c core.sshCommand='ssh -F proxy.cfg' fetch",
        f"tar cIf '{WIPE}' a.tar .",
        f"LESS='-R +!{WIPE}' less notes",
        "emacs --batch -l wipe.el",
        "emacs --script wipe.el",
        "emacs --batch --eval '(delete-directory \"~/Documents\" t)'",
        'emacs --batch --eval \'(call-process "rm" nil nil nil "-rf" "x")\'',
        "echo 's/a/b/' > new.sed; sed -f new.sed notes",  # written by the command itself: not read yet
        "sed -f missing.sed notes",
        "vim -S missing.vim",
    ],  # fmt: skip
)
def test_a_file_of_commands_a_program_is_told_to_run_is_judged_by_what_it_says(code_files: Path, command: str) -> None:
    """Files a command names, read as the program reads them (2026-12-04: `BASH_ENV=./x.sh bash -c`,
    `psql -f`, `sed -f`, `awk -f`, `vim -S`, `gdb -x`, `ssh -F`, `tar cIf CMD` and `LESS='+!CMD'`
    each ran what they held while judged moderate or safe); one that cannot be read is held."""
    verdict = classify(command, cwd=str(code_files))
    assert verdict.tier is Tier.DESTRUCTIVE, verdict


@pytest.mark.parametrize(
    "command",
    [
        "psql -f ok.sql",
        "sqlite3 db '.read ok.sql'",
        "sqlite3 db < ok.sql",
        "sqlite3 db < /dev/null",
        "sed -f ok.sed notes",
        "sed -n -f ok.sed notes",
        "awk -f ok.awk data",
        "vim -S ok.vim",
        "vim -u NONE notes",
        "gdb -ex 'break main' -ex run /bin/true",  # an installed program (`run ./a.out` runs the agent's: held)
        "ssh -F ok.cfg host",
        "ssh -F none host",
        "emacs --batch -l ok.el",
        "emacs --batch --eval '(message \"hi\")'",
        "GIT_SSH=ssh git fetch",
        "GIT_SSH=/usr/bin/ssh git fetch",
        "LESS=-R git log",
        "LESS='-R +G' less notes",
        "tar cf a.tar notes",
        "tar xzf a.tar.gz",
    ],  # fmt: skip
)
def test_a_harmless_file_of_commands_does_not_hold_the_command(code_files: Path, command: str) -> None:
    verdict = classify(command, cwd=str(code_files))
    assert verdict.tier is not Tier.DESTRUCTIVE, verdict


def test_each_file_of_commands_read_is_listed_for_pinning(code_files: Path) -> None:
    """An Allow pins what was read: a file changed before the command runs is asked about again."""
    verdict = classify("sqlite3 db '.read outer.sql'; sed -f ok.sed notes", cwd=str(code_files))
    assert verdict.scripts == tuple(f"{code_files}/{name}" for name in ("outer.sql", "drop.sql", "ok.sed"))


def test_a_java_source_a_module_of_the_folder_a_cmake_script_and_run_parts_are_read(tmp_path: Path) -> None:
    """Fifth red team, 2026-12-04: `java R.java`, `python3 -m x` (the folder's own x.py), `cmake -P`
    and `run-parts DIR` ran what their files said while judged moderate."""
    (tmp_path / "R.java").write_text('class R { public static void main(String[] a) throws Exception {\n'
                                     '  new ProcessBuilder("rm", "-rf", "/home/ana/x").start(); } }\n')  # fmt: skip
    (tmp_path / "H.java").write_text("class H { public static void main(String[] a) { System.out.println(1); } }\n")
    (tmp_path / "x.py").write_text("import shutil\nshutil.rmtree('/home/ana/x')\n")
    (tmp_path / "wipe.cmake").write_text("file(REMOVE_RECURSE /home/ana/x)\n")
    (tmp_path / "ok.cmake").write_text('message("hi")\n')
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "clean").write_text("#!/bin/sh\nrm -rf /home/ana/x\n")
    (tmp_path / "parts" / "clean").chmod(0o755)
    cwd = str(tmp_path)
    for held in ("java R.java", "python3 -m x", "cmake -P wipe.cmake", "run-parts parts"):
        assert classify(held, cwd=cwd).tier is Tier.DESTRUCTIVE, held
    for fine in ("java H.java", "cmake -P ok.cmake", "run-parts --list parts", "python3 -m json.tool a.json"):
        assert classify(fine, cwd=cwd).tier is not Tier.DESTRUCTIVE, fine
    assert classify("python3 -m x", cwd=cwd).scripts == (f"{tmp_path}/x.py",)


def test_an_awk_library_from_the_folder_is_read_and_the_program_after_it_too(tmp_path: Path) -> None:
    (tmp_path / "wipe.awk").write_text('BEGIN { system("rm -rf /home/ana/x") }\n')
    (tmp_path / "fine.awk").write_text("function twice(n) { return 2 * n }\n")
    cwd = str(tmp_path)
    for held in ("gawk -i ./wipe.awk 1 f", "gawk -i wipe 1 f", "gawk -i fine 'BEGIN{system(\"rm -rf x\")}' f"):
        assert classify(held, cwd=cwd).tier is Tier.DESTRUCTIVE, held
    for fine in ("gawk -i fine '{ print twice($1) }' f", "gawk -i ord '{ print }' f", "gawk -i inplace 1 f"):
        assert classify(fine, cwd=cwd).tier is not Tier.DESTRUCTIVE, fine


def test_cowork_terminal_run_as_a_module_from_its_own_source_folder_is_itself(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__main__.py").write_text("print('a look-alike')\n")
    verdict = classify("python3 -m app resume", cwd=str(tmp_path))
    assert verdict.tier is Tier.DESTRUCTIVE and "runs Cowork Terminal itself" in verdict.reasons[0], verdict


def test_files_of_commands_are_found_in_clusters_includes_and_a_folder_copied_into(code_files: Path) -> None:
    """Review, 2026-12-04: `psql -tf`, `ssh -tF` and `sed -uf` did not read the file; gawk's
    `@include` and `@load`; `cp evil d && run-parts d`."""
    (code_files / "outer.awk").write_text('@include "wipe.awk"\n{ print }\n')
    (code_files / "self.awk").write_text('@include "self.awk"\n')
    (code_files / "load.awk").write_text('@load "./evil"\nBEGIN { }\n')
    (code_files / "parts").mkdir()
    cwd = str(code_files)
    for held in (
        "psql -tf drop.sql",
        "ssh -tF proxy.cfg host",
        "sed -uf wipe.sed notes",
        "gawk -f outer.awk notes",
        "gawk -f load.awk notes",
        "cp askpass parts && run-parts parts",
        "cp askpass parts/x; run-parts parts",
    ):
        assert classify(held, cwd=cwd).tier is Tier.DESTRUCTIVE, held  # fmt: skip
    for fine in ("gawk -f self.awk notes", "gawk '@load \"filefuncs\"; BEGIN { }'", "run-parts parts",
                 "ssh -tt host uptime", "psql -tc 'select 1'"):  # fmt: skip
        assert classify(fine, cwd=cwd).tier is not Tier.DESTRUCTIVE, fine


def test_the_second_pass_files_a_program_reads_are_judged(code_files: Path) -> None:
    """Second red-team pass, 2026-12-04: a package run with -m, a module imported by -c, CMake's
    include and ctest -S, scp -F and a tab in an ssh configuration, sqlite3's `.rea`, vim's call()
    and continued lines, `git checkout` of a folder, a write through a link to .git, java --source."""
    (code_files / "pip").mkdir()
    (code_files / "pip" / "__init__.py").write_text("import shutil\nshutil.rmtree('/home/ana/x')\n")
    (code_files / "x.py").write_text("import shutil\nshutil.rmtree('/home/ana/x')\n")
    (code_files / "inc.cmake").write_text("include(other.cmake)\n")
    (code_files / "tab.cfg").write_text(f"Host *\n\tProxyCommand\t{WIPE}\n")
    (code_files / "call.vim").write_text('call call("delete", ["/home/ana/x", "rf"])\n')
    (code_files / "cont.vim").write_text('call\n  \\ system("rm -rf /home/ana/x")\n')
    (code_files / "Documents").mkdir()
    (code_files / "notes.txt").write_text("import java.io.*; class N { public static void main(String[] a) {\n"
                                          "  new File(\"/home/ana/x\").delete(); } }\n")  # fmt: skip
    (code_files / "repo" / ".git").mkdir(parents=True)
    (code_files / "g").symlink_to(code_files / "repo" / ".git")
    cwd = str(code_files)
    for held in ("python3 -m pip list", "python3 -c 'import x'", "cmake -P inc.cmake", "ctest -S inc.cmake",
                 "scp -F proxy.cfg a host:b", "ssh -F tab.cfg host", "sqlite3 db '.rea drop.sql'",
                 "vim -S call.vim", "vim -S cont.vim", "git checkout Documents", "echo x >> g/config",
                 "java --source 17 notes.txt"):  # fmt: skip
        assert classify(held, cwd=cwd).tier is Tier.DESTRUCTIVE, held
    for fine in ("python3 -m json.tool a.json", "python3 -c 'import json'", "git checkout feature"):
        assert classify(fine, cwd=cwd).tier is not Tier.DESTRUCTIVE, fine


def test_a_module_node_preloads_and_a_package_python_imports_and_ssh_includes_by_pattern_are_read(
    code_files: Path,
) -> None:
    """Final review, 2026-12-04: `NODE_OPTIONS='--require ./x.js'` is read as `node -r ./x.js` is;
    `import pkg.mod` and `from pkg import mod` read pkg/mod.py; `Include conf.d/*` reads each file."""
    (code_files / "tracing.js").write_text("console.log('tracing')\n")
    (code_files / "wipe.js").write_text("require('fs').rmSync('/home/ana/x', {recursive: true})\n")
    (code_files / "pkg").mkdir()
    (code_files / "pkg" / "__init__.py").write_text("")
    (code_files / "pkg" / "evil.py").write_text("import shutil\nshutil.rmtree('/home/ana/x')\n")
    (code_files / "conf.d").mkdir()
    (code_files / "conf.d" / "a.conf").write_text("Host a\n  User me\n")
    (code_files / "conf.d" / "b.conf").write_text(f"Host *\n  ProxyCommand {WIPE}\n")
    (code_files / "glob.cfg").write_text(f"Include {code_files}/conf.d/*\n")
    (code_files / "fine.cfg").write_text(f"Include {code_files}/conf.d/a.conf\n")
    cwd = str(code_files)
    for held in ("NODE_OPTIONS='--require ./wipe.js' npm test", "python3 -c 'import pkg.evil'",
                 "python3 -c 'from pkg import evil'", "ssh -F glob.cfg host"):  # fmt: skip
        assert classify(held, cwd=cwd).tier is Tier.DESTRUCTIVE, held
    for fine in ("NODE_OPTIONS='--require ./tracing.js' npm test", "python3 -c 'import pkg'", "ssh -F fine.cfg a"):
        assert classify(fine, cwd=cwd).tier is not Tier.DESTRUCTIVE, fine
    (code_files / "deep.cfg").write_text("Include /*/*/*/*\n")  # not walked: held
    assert classify("ssh -F deep.cfg host", cwd=cwd).tier is Tier.DESTRUCTIVE


def test_a_file_sourced_by_its_name_alone_is_read_where_bash_finds_it_on_the_path_first(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Red team, 2026-12-04: `. lib.sh` in a script read the project's lib.sh here, while bash read the
    one a command had put in ~/.local/bin (on the PATH), which deleted a folder. Each place on the
    PATH is listed with the scripts, so that an approval pins it, absent ones too."""
    (project / "b.sh").write_text(". lib.sh\necho done\n")
    (project / "lib.sh").write_text("echo lib\n")
    planted = tmp_path / "on-path"
    planted.mkdir()
    monkeypatch.setenv("PATH", f"{planted}:/usr/bin:/bin")
    quiet = classify("bash b.sh", cwd=str(project))
    assert quiet.tier is Tier.MODERATE and str(planted / "lib.sh") in quiet.scripts, quiet
    (planted / "lib.sh").write_text("rm -rf /home/ana/Documents\n")
    assert classify("bash b.sh", cwd=str(project)).tier is Tier.DESTRUCTIVE
    assert classify("source ./lib.sh", cwd=str(project)).tier is Tier.MODERATE, "a path: only that file"


def test_perl_options_and_a_pushd_popd_round_trip_do_not_change_what_runs(tmp_path: Path) -> None:
    """A review, 2026-12-04: `-Ilib` and `-Mstrict` were taken for `-i` with a suffix (the script read
    then counted as changed: destructive), and `popd` lost the folder `pushd` left."""
    (tmp_path / "x.pl").write_text("print 1;\n")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "build.sh").write_text("echo hi\n")
    for command in (
        "perl -Ilib x.pl",
        "perl -Mstrict -Mwarnings x.pl",
        "pushd scripts >/dev/null && popd >/dev/null && ./scripts/build.sh",
    ):
        assert classify(command, cwd=str(tmp_path)).tier is Tier.MODERATE, command
