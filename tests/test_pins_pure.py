"""What an approval pins, found and checked in-process on a real folder (core/commands/pins/)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.core.commands.pins import ABSENT, changed_since, picks_programs, pin_command, script_paths


@pytest.mark.parametrize(
    ("command", "scripts"),
    [
        ("bash ./x.sh", ["x.sh"]),
        ("sh x", ["x"]),
        ("python3 x.py", ["x.py"]),
        ("./x.sh", ["x.sh"]),
        ("source env.sh", ["env.sh"]),
        (". ./env.sh", ["env.sh"]),
        ("make && bash ./post.sh", ["post.sh"]),
        ("FOO=1 nohup python3 -u run.py input.csv", ["run.py", "input.csv"]),
        ("bash -O extglob tidy.sh", ["extglob", "tidy.sh"]),
        ("bin/tool --flag", ["bin/tool"]),
        ("gsudo ./fix.sh", ["fix.sh"]),  # Windows' sudo, as sudo
        ("sudo-rs bash ./fix.sh", ["fix.sh"]),
        ("python3 -c 'print(1)' x.py", []),
        ("python3 -m http.server", []),
        ("ls -la | grep x; git status", []),
        ("bash $SCRIPT", []),
        ("bash 'unbalanced", []),
    ],
)
def test_the_scripts_a_command_runs_by_path_are_found(command: str, scripts: list[str]) -> None:
    assert script_paths(command, "/w") == [f"/w/{s}" for s in scripts]


def test_nothing_changed_means_the_pin_holds(tmp_path: Path) -> None:
    (tmp_path / "post.sh").write_text("echo tidy\n")
    pin = pin_command("bash post.sh", str(tmp_path), {"PATH": "/usr/bin", "TOKEN": "s3cret"})
    assert pin.folder == str(tmp_path) and pin.scripts[0][0] == str(tmp_path / "post.sh")
    assert pin.env_shown == (("PATH", "/usr/bin"), ("TOKEN", "********")), "values are shown, secrets masked"
    assert changed_since(pin, {"PATH": "/usr/bin", "TOKEN": "s3cret"}) is None


def test_a_folder_reached_through_a_link_is_pinned_as_the_real_folder(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    pin = pin_command("ls", str(tmp_path / "link"), {})
    assert pin.folder == str(tmp_path / "real")
    assert pin.folder_id == (os.stat(tmp_path / "real").st_dev, os.stat(tmp_path / "real").st_ino)


def test_each_change_after_the_prompt_is_named(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "post.sh").write_text("echo tidy\n")
    pin = pin_command("bash post.sh && bash later.sh", str(tmp_path / "work"), {"A": "1"})
    assert dict(pin.scripts)[str(tmp_path / "work" / "later.sh")] == ABSENT
    assert changed_since(pin, {"A": "2"}) == "the environment changed after the user was asked"
    (tmp_path / "work" / "later.sh").write_text("rm -rf ~\n")
    assert "the script" in changed_since(pin, {"A": "1"}) and "later.sh" in changed_since(pin, {"A": "1"})
    (tmp_path / "work" / "later.sh").unlink()
    (tmp_path / "work" / "post.sh").write_text("rm -rf ~\n")
    assert (
        changed_since(pin, {"A": "1"}) == f"the script {tmp_path / 'work' / 'post.sh'} changed after the user was asked"
    )
    (tmp_path / "work").rename(tmp_path / "old")
    (tmp_path / "work").mkdir()
    assert "was replaced by another folder" in changed_since(pin, {"A": "1"})
    (tmp_path / "work").rmdir()
    assert "could no longer be opened" in changed_since(pin, {"A": "1"})


def test_every_environment_value_is_shown_cut_when_long_and_masked_when_its_name_says_secret(tmp_path: Path) -> None:
    env = {"CC": "/tmp/evil-cc", "RUSTC_WRAPPER": "/tmp/w", "AWS_SECRET_ACCESS_KEY": "k", "SSH_ASKPASS": "/tmp/a",
           "GIT_DIR": "/tmp/other-repo", "LONG": "x" * 1000}  # fmt: skip
    shown = dict(pin_command("make", str(tmp_path), env).env_shown)
    assert (
        shown["CC"] == "/tmp/evil-cc" and shown["RUSTC_WRAPPER"] == "/tmp/w" and shown["GIT_DIR"] == "/tmp/other-repo"
    )
    assert shown["AWS_SECRET_ACCESS_KEY"] == "********"
    assert shown["SSH_ASKPASS"] == "/tmp/a", "a name that picks a program is never masked"
    assert shown["LONG"] == "x" * 300 + "... (1,000 characters)"


@pytest.mark.parametrize(
    ("key", "value", "waits"),
    [
        ("PATH", "/tmp/d/bin:/usr/bin", True),
        ("Path", "C:\\evil;C:\\Windows", True),  # Windows' PATH in any case
        ("HOME", "/tmp/d", True),
        ("XDG_CONFIG_HOME", "/tmp/d/cfg", True),
        ("CURL_HOME", "/tmp/d", True),  # its .curlrc may name a daemon's socket (unix-socket=)
        ("APPDATA", "C:\\evil", True),  # Windows' homes of programs' settings
        ("USERPROFILE", "C:\\evil", True),
        ("GIT_DIR", "d/evil.git", True),
        ("EDITOR", "./x", True),
        ("EDITOR", "C:\\evil\\vim.exe", True),
        ("SSH_ASKPASS", "/tmp/d/pass", True),
        ("PAGER", "cat", False),  # found on the PATH, as before
        ("VISUAL", "code --wait", True),  # a command line, run through the shell: `rm -rf ~` would be one
        ("VISUAL", "code", False),
        ("CDPATH", "", False),  # only turns it off
        ("TMPDIR", "/tmp/build", False),
        ("GIT_TRACE_PACKET", "/tmp/trace", False),
        ("GIT_AUTHOR_NAME", "Ana", False),
        ("NODE_ENV", "production", False),
        ("CI", "1", False),
    ],
)
def test_a_variable_that_picks_programs_or_their_settings_makes_a_command_wait(
    key: str, value: str, waits: bool
) -> None:
    """Red team and review, 2026-12-04: a planted `ls` first on a PATH ran unasked; `TMPDIR` or an
    empty CDPATH pick no program and were held."""
    assert picks_programs(key, value) is waits


def test_the_scripts_the_classifier_read_are_pinned_first_when_there_are_too_many_to_pin(tmp_path: Path) -> None:
    """Its own parser does not follow `cd` (a review, 2026-12-04): the classifier's paths come first."""
    (tmp_path / "sub").mkdir()
    read = []
    for k in range(64):
        (tmp_path / "sub" / f"a{k}.sh").write_text("true\n")
        read.append(str(tmp_path / "sub" / f"a{k}.sh"))
    command = "cd sub; " + "; ".join(f"./a{k}.sh" for k in range(64))
    pin = pin_command(command, str(tmp_path), {}, read)
    assert [path for path, _digest in pin.scripts] == read


def test_a_program_named_alone_is_pinned_where_the_path_finds_it_and_where_one_could_be_put_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Red team, 2026-12-04: `deploy` in ~/.local/bin was rewritten after the user allowed the command,
    and the new one ran; one put earlier on the PATH after the prompt would run as well."""
    early, late = tmp_path / "early", tmp_path / "late"
    early.mkdir()
    late.mkdir()
    (late / "deploy").write_text("#!/bin/sh\necho v1\n")
    monkeypatch.setenv("PATH", f"{early}:{late}:/usr/bin")
    pin = pin_command("rm -rf victim; deploy", str(tmp_path), {})
    assert changed_since(pin, {}) is None
    (late / "deploy").write_text("#!/bin/sh\nrm -rf ~\n")
    assert changed_since(pin, {}) == f"the script {late / 'deploy'} changed after the user was asked"
    (late / "deploy").write_text("#!/bin/sh\necho v1\n")
    (early / "deploy").write_text("#!/bin/sh\nrm -rf ~\n")
    assert changed_since(pin, {}) == f"the script {early / 'deploy'} changed after the user was asked"


def test_the_modules_a_python_program_loads_are_pinned_with_it(tmp_path: Path) -> None:
    """Red team, 2026-12-04: after the user allowed `python3 p.py`, the helper.py it imports was
    rewritten, and the new one ran. The project's modules are pinned (not judged: security.md)."""
    (tmp_path / "p.py").write_text("import helper\nfrom pkg import tool\nhelper.tidy()\n")
    (tmp_path / "helper.py").write_text("def tidy():\n    pass\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "tool.py").write_text("import helper\n")
    pin = pin_command("python3 p.py", str(tmp_path), {}, [str(tmp_path / "p.py")])
    assert {str(tmp_path / n) for n in ("helper.py", "pkg/__init__.py", "pkg/tool.py")} <= dict(pin.scripts).keys()
    (tmp_path / "helper.py").write_text("import shutil\nshutil.rmtree('/home/ana/Documents')\n")
    assert changed_since(pin, {}) == f"the script {tmp_path / 'helper.py'} changed after the user was asked"


def test_a_program_run_by_its_shebang_has_its_modules_pinned_and_many_absent_places_never_crowd_out_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A review, 2026-12-04: `./tool` (`#!/usr/bin/env python3`) had no modules pinned, and places
    pinned absent could push real files past the pin's limit."""
    (tmp_path / "tool").write_text("#!/usr/bin/env python3\nimport helper\n")
    (tmp_path / "helper.py").write_text("pass\n")
    folders = [tmp_path / f"bin{k}" for k in range(70)]
    for folder in folders:
        folder.mkdir()
    monkeypatch.setenv("PATH", ":".join(map(str, folders)))
    pin = pin_command("deploy; ./tool", str(tmp_path), {}, [str(tmp_path / "tool")])
    pinned = dict(pin.scripts)
    assert pinned[str(tmp_path / "tool")] != ABSENT and pinned[str(tmp_path / "helper.py")] != ABSENT
    assert len(pin.scripts) == 64, "the rest of the 70 places where `deploy` could be put"


def test_a_shadowing_module_a_makefile_and_an_imported_module_are_pinned(tmp_path: Path) -> None:
    """Red team, 2026-12-04: after the prompt, a `json.py` put beside the program shadowed the
    standard one, `importlib.import_module('helper')`'s helper was rewritten, and a Makefile's recipe
    was changed; each ran."""
    (tmp_path / "main.py").write_text("import json, importlib\nimportlib.import_module('helper')\n")
    (tmp_path / "helper.py").write_text("pass\n")
    (tmp_path / "Makefile").write_text("all:\n\techo hi\n")
    pin = pin_command("python3 main.py && make", str(tmp_path), {}, [str(tmp_path / "main.py")])
    pinned = dict(pin.scripts)
    assert pinned[str(tmp_path / "json.py")] == ABSENT and str(tmp_path / "helper.py") in pinned
    (tmp_path / "json.py").write_text("import shutil\n")
    assert changed_since(pin, {}) == f"the script {tmp_path / 'json.py'} changed after the user was asked"
    (tmp_path / "json.py").unlink()
    (tmp_path / "Makefile").write_text("all:\n\trm -rf ~\n")
    assert changed_since(pin, {}) == f"the script {tmp_path / 'Makefile'} changed after the user was asked"


def test_the_modules_a_node_perl_or_ruby_program_loads_are_pinned_with_it(tmp_path: Path) -> None:
    """The same red team's route in the other languages the pins read: after the user allowed
    `node app.js` (or `perl`, `ruby`), a module it loads was rewritten and the new one ran."""
    (tmp_path / "lib" / "My").mkdir(parents=True)
    (tmp_path / "app.js").write_text(
        "const h = require('./lib/h')\nimport u from './util.mjs'\nrequire('./data.json')\n"
    )
    (tmp_path / "lib" / "h.js").write_text("module.exports = require('../deep')\n")
    (tmp_path / "deep").mkdir()
    (tmp_path / "deep" / "index.js").write_text("exports.x = 1\n")
    (tmp_path / "util.mjs").write_text("export default 1\n")
    (tmp_path / "data.json").write_text("{}\n")
    (tmp_path / "tidy.pl").write_text(
        'use FindBin;\nuse lib "$FindBin::Bin/lib";\nuse strict;\nuse My::Tool;\nrequire "conf.pl";\n'
        f'do "{tmp_path}/abs.pl";\n'
    )
    (tmp_path / "lib" / "My" / "Tool.pm").write_text("package My::Tool;\n1;\n")
    (tmp_path / "conf.pl").write_text("1;\n")
    (tmp_path / "abs.pl").write_text("1;\n")
    (tmp_path / "run.rb").write_text("require_relative 'lib/steps'\nrequire 'json'\n")
    (tmp_path / "lib" / "steps.rb").write_text("puts 1\n")
    programs = {"node app.js": "app.js", "perl tidy.pl": "tidy.pl", "ruby run.rb": "run.rb"}
    loads = {
        "node app.js": ["lib/h.js", "util.mjs", "deep/index.js"],
        "perl tidy.pl": ["lib/My/Tool.pm", "conf.pl", "abs.pl"],
        "ruby run.rb": ["lib/steps.rb"],
    }
    for command, program in programs.items():
        pin = pin_command(command, str(tmp_path), {}, [str(tmp_path / program)])
        pinned = dict(pin.scripts)
        assert str(tmp_path / "data.json") not in pinned, "data a program reads is not code it loads"
        for module in loads[command]:
            assert pinned.get(str(tmp_path / module), ABSENT) != ABSENT, (command, module, pinned)
            before = (tmp_path / module).read_text()
            (tmp_path / module).write_text(before + "system('rm -rf ~')\n")
            assert changed_since(pin, {}) == f"the script {tmp_path / module} changed after the user was asked"
            (tmp_path / module).write_text(before)
            assert changed_since(pin, {}) is None


@pytest.mark.parametrize(
    "command",
    [
        'bash -c "$(cat a.sh)"',
        'sh -c "$(< a.sh)"',
        'bash -c "$(<a.sh)" name',
        "bash -c $(cat a.sh)",
        'bash -o pipefail -ec "$(head -n 50 a.sh)"',
        'bash -c -x "`cat a.sh`"',
        'eval "$(cat a.sh)"',
        "builtin eval `cat ./a.sh`",
        'sudo python3 -c "$(cat a.sh)"',
        'python3 -c"$(cat a.sh)"',
        'perl -e 1 -e "$(cat a.sh)"',
        'bash <<< "$(cat a.sh)"',
        "bash -s <<EOF\n$(cat a.sh)\nEOF\n",
        "cat <<EOF | sh\n$(cat a.sh)\nEOF\n",
        'echo "$(<a.sh)" | bash',
    ],
)
def test_a_file_read_into_code_by_a_command_substitution_is_pinned(tmp_path: Path, command: str) -> None:
    """The file whose content a substitution makes into inline code, `eval`'s words or a shell's
    input is what runs, as with `cat a.sh | bash`: rewritten after the prompt, it ran."""
    (tmp_path / "a.sh").write_text("echo tidy\n")
    pin = pin_command(f"rm -rf build && {command}", str(tmp_path), {})
    assert dict(pin.scripts).get(str(tmp_path / "a.sh"), ABSENT) != ABSENT, pin.scripts
    (tmp_path / "a.sh").write_text("rm -rf ~\n")
    assert changed_since(pin, {}) == f"the script {tmp_path / 'a.sh'} changed after the user was asked"


@pytest.mark.parametrize(
    ("command", "env", "found"),
    [
        ("make -I inc", {}, "inc/rules.mk"),
        ("make -s -Iinc", {}, "inc/rules.mk"),
        ("make --include-dir=inc", {}, "inc/rules.mk"),
        ("make --in inc", {}, "inc/rules.mk"),
        ("make -C sub -I ../inc", {}, "inc/rules.mk"),
        ("make -I ../inc -C sub", {}, "inc/rules.mk"),  # make moves first: -I and -f are the folder's
        ("make -f x.mk -C sub", {}, "sub/x.mk"),
        ("MAKEFILES=pre.mk make", {}, "pre.mk"),
        ("env -i MAKEFILES='other.mk pre.mk' make", {}, "pre.mk"),
        ("make MAKEFILES=pre.mk all", {}, "pre.mk"),
        ("export MAKEFILES=pre.mk; make", {}, "pre.mk"),
        ("make", {"MAKEFILES": "pre.mk"}, "pre.mk"),
        ("MAKEFILES=later.mk make -I inc", {}, "inc/later.mk"),
    ],
)
def test_the_makefiles_make_finds_in_an_include_folder_or_reads_from_makefiles_are_pinned(
    tmp_path: Path, command: str, env: dict[str, str], found: str
) -> None:
    """An `include` make finds in an `-I` folder, and each file MAKEFILES names (read first): a recipe
    rewritten after the prompt ran. Where make looks first, a file absent now is pinned absent."""
    (tmp_path / "inc").mkdir()
    (tmp_path / "sub").mkdir()
    for name in ("Makefile", "sub/Makefile"):
        (tmp_path / name).write_text("include rules.mk\n")
    for name in ("inc/rules.mk", "pre.mk", "sub/x.mk", "inc/later.mk"):
        (tmp_path / name).write_text("all:\n\t@echo hi\n")
    pin = pin_command(f"rm -rf build && {command}", str(tmp_path), env)
    pinned = dict(pin.scripts)
    assert pinned.get(str(tmp_path / found), ABSENT) != ABSENT, pinned
    if found.startswith("inc/"):
        where = tmp_path / ("sub" if "sub" in command else "") / found.removeprefix("inc/")
        assert pinned[str(where)] == ABSENT, "one put in make's folder would be read first"
    (tmp_path / found).write_text("all:\n\t@rm -rf ~\n")
    assert changed_since(pin, env) == f"the script {tmp_path / found} changed after the user was asked"


@pytest.mark.parametrize(
    ("command", "named"),
    [
        ("git clone -q --template=tpl src copy", ""),
        ("git clone --template tpl src copy", ""),
        ("git -C sub clone --templ=../tpl ../src copy", ""),
        ("git init -q --template=tpl fresh && git -C fresh commit -m x", ""),
        ("GIT_TEMPLATE_DIR=tpl git clone src copy", ""),
        ("git -c init.templateDir=tpl clone src copy", ""),
        ("git clone src copy", "~/tpl"),
        ("git init fresh", "tpl"),  # relative to where git runs
    ],
)
def test_the_hooks_of_the_template_git_init_or_clone_copies_are_pinned(
    tmp_path: Path, command: str, named: str
) -> None:
    """`git clone --template=DIR` copies DIR's hooks into the repository and runs its post-checkout;
    `git init`'s are run by the next git verb: a hook put in or rewritten there after the prompt ran.
    Also by GIT_TEMPLATE_DIR and init.templateDir (on the command line or in the user's configuration)."""
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "sub").mkdir()
    template = (home if named.startswith("~") else tmp_path) / "tpl"
    (template / "hooks").mkdir(parents=True)
    (template / "hooks" / "post-checkout").write_text("#!/bin/sh\nexit 0\n")
    if named:
        (home / ".gitconfig").write_text(f'[init]\n\ttemplateDir = "{named}"\n')
    env = {"HOME": str(home)}
    pin = pin_command(f"rm -rf build && {command}", str(tmp_path), env)
    pinned = dict(pin.scripts)
    assert pinned.get(str(template / "hooks" / "post-checkout"), ABSENT) != ABSENT, pinned
    assert pinned[str(template / "config")] == ABSENT, "copied and read by the new repository"
    (template / "hooks" / "post-checkout").write_text("#!/bin/sh\nrm -rf ~\n")
    changed = template / "hooks" / "post-checkout"
    assert changed_since(pin, env) == f"the script {changed} changed after the user was asked"
    (template / "hooks" / "post-checkout").write_text("#!/bin/sh\nexit 0\n")
    assert changed_since(pin, env) is None
    absent = "pre-commit" if "commit" in command else "reference-transaction"
    (template / "hooks" / absent).write_text("#!/bin/sh\nrm -rf ~\n")
    assert changed_since(pin, env) == f"the script {template / 'hooks' / absent} changed after the user was asked"


def test_every_variable_the_classifier_takes_for_code_is_refused_in_env_or_waits_for_the_user() -> None:
    """The model's `env` and the classifier read the same variables (a red team, 2026-12-05, found
    TAR_OPTIONS, VIMINIT, LESS and PSQLRC judged code on the command line, passed unasked in `env`)."""
    from app.core.classifier import tables
    from app.core.commands.pins import NAMES_PROGRAM
    from app.core.commands.request import CODE_IN_ENVIRONMENT

    code = {*tables._CODE_VARIABLES, *tables._SCRIPT_VARIABLES, *tables._PROMPTS, *tables._VIM_INIT_VARIABLES}
    code |= {*tables._SETTINGS_FILES, "TAR_OPTIONS"}
    for name in sorted(code):
        assert tables.is_code_variable(name), name
        refused = CODE_IN_ENVIRONMENT.match(name) is not None
        waits = picks_programs(name, "/x") and (NAMES_PROGRAM.match(name) is None or picks_programs(name, "x y"))
        assert refused or waits, name
