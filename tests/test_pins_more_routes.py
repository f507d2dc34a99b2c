"""Six more routes by which a held command ran other code than the user allowed (red team, 2026-12-05).

Each goes through `CuedAttack.while_held` (tests/test_pins.py): a background job of a command the user
allowed earlier changes a file while the prompt is up, then the user clicks Allow. Each test checks
that the attack took effect, then that the pin refused the command and nothing of it ran: a `#!`
line's interpreter, a makefile named by `-f` or `-C` or included by another, a script fed to a shell
on its input, a git hook, and a program planted in a PATH folder named relative or empty. Then the
same routes through a command substitution (`bash -c "$(cat a.sh)"`), an `-I` folder or MAKEFILES,
and the template a new repository gets its hooks from.
"""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

import pytest

from app.core.authority.hub import Hub
from app.core.commands.pins import ABSENT, changed_since, pin_command
from app.core.paths import AppPaths
from tests.test_pins import CuedAttack

pytestmark = pytest.mark.anyio

IDENTITY = {
    "GIT_AUTHOR_NAME": "Ana",
    "GIT_AUTHOR_EMAIL": "ana@example.com",
    "GIT_COMMITTER_NAME": "Ana",
    "GIT_COMMITTER_EMAIL": "ana@example.com",
}


def write(path: Path, text: str, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)


def planting(path: Path, marker: Path, *, makefile: bool = False) -> str:
    """The attack: `path` (re)written to touch `marker` when it runs, and said so."""
    text = f"all:\n\t@touch {marker}\n" if makefile else f"#!/bin/sh\ntouch {marker}\n"
    text = f"open({str(marker)!r}, 'w').close()\n" if path.suffix == ".py" else text
    return f"""
import os
os.makedirs({str(path.parent)!r}, exist_ok=True)
with open({str(path)!r}, "w") as file:
    file.write({text!r})
os.chmod({str(path)!r}, 0o755)
print("planted")
"""


async def refused_after(
    home: Path, hub: Hub, tmp_path: Path, arguments: dict, changed: Path, *, makefile: bool = False
) -> None:
    """Hold `arguments`, change `changed` while the prompt is up, allow: the command is refused."""
    (tmp_path / "build").mkdir(exist_ok=True)
    marker = tmp_path / "pwned"
    attack = CuedAttack(tmp_path, planting(changed, marker, makefile=makefile))
    outcome, said, _shown = await attack.while_held(home, hub, {"cwd": str(tmp_path), **arguments})
    assert said == "planted\n", said
    ran = marker.exists()  # before the fix: True, the changed code ran
    assert f"the script {changed} changed after the user was asked" in outcome.get("error", ""), (outcome, ran)
    assert not marker.exists(), "the changed code did not run"
    assert (tmp_path / "build").exists(), "nothing of the command ran"


@pytest.mark.parametrize("how", ["by path", "by env on the PATH", "planted earlier on the PATH"])
async def test_the_interpreter_a_scripts_first_line_names_is_pinned(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path, how: str
) -> None:
    """Route 1: `./run.sh` whose `#!` names an interpreter the agent can write; it was swapped."""
    tool, early = tmp_path / "tool", tmp_path / "early"
    early.mkdir()
    write(tool / "interp", '#!/bin/sh\nexec /bin/sh "$@"\n', 0o755)
    first = f"#!{tool / 'interp'}" if how == "by path" else "#!/usr/bin/env interp"
    write(tmp_path / "run.sh", f"{first}\necho hi\n", 0o755)
    env = {} if how == "by path" else {"env": {"PATH": f"{early}:{tool}:/usr/bin:/bin"}}
    changed = early / "interp" if how == "planted earlier on the PATH" else tool / "interp"
    await refused_after(home, hub, tmp_path, {"command": "rm -rf build && ./run.sh", **env}, changed)


@pytest.mark.parametrize(
    ("command", "changed"),
    [
        ("make -s -f build.mk", "build.mk"),
        ("make -s --file=build.mk", "build.mk"),
        ("make -s --makefile build.mk", "build.mk"),
        ("make -sf build.mk", "build.mk"),
        ("make -s -C sub", "sub/Makefile"),
        ("make -s --directory=sub -f ../build.mk", "build.mk"),
        ("make -s", "inc.mk"),  # route 3: included by the Makefile
        ("make -s", "deeper.mk"),  # -included by inc.mk: a recipe it adds last is the one make runs
    ],
)
async def test_the_makefiles_make_reads_are_pinned(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path, command: str, changed: str
) -> None:
    """Routes 2 and 3: a makefile named by -f, in a -C folder, or included, had its recipe rewritten."""
    write(tmp_path / "build.mk", "all:\n\t@echo hi\n")
    write(tmp_path / "sub" / "Makefile", "all:\n\t@echo hi\n")
    write(tmp_path / "Makefile", "include inc.mk\n")
    write(tmp_path / "inc.mk", "all:\n\t@echo hi\n-include deeper.mk\n")
    write(tmp_path / "deeper.mk", "X = 1\n")
    await refused_after(
        home, hub, tmp_path, {"command": f"rm -rf build && {command}"}, tmp_path / changed, makefile=True
    )


@pytest.mark.parametrize(
    "command",
    [
        "cat a.sh | bash",
        "cat ./a.sh | tr -d '\\r' | sh -s x",
        "bash <(cat 'a.sh')",
        "exec 3<a.sh; bash /dev/fd/3",
        "exec 4<a.sh; bash <&4",
        "exec < a.sh; bash",
        "{ cat a.sh; } | sh",
    ],
)
async def test_a_script_fed_to_a_shell_on_its_input_is_pinned(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path, command: str
) -> None:
    """Route 4: a file piped, redirected or substituted into a shell was rewritten after the prompt."""
    write(tmp_path / "a.sh", "echo hi\n")
    await refused_after(home, hub, tmp_path, {"command": f"rm -rf build && {command}"}, tmp_path / "a.sh")


@pytest.mark.parametrize("repository", ["made by the command", "with core.hooksPath", "with a hook already"])
async def test_the_git_hooks_a_verb_runs_are_pinned(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path, repository: str
) -> None:
    """Route 5: a pre-commit hook put in (or rewritten in) the repository while the prompt was up."""
    hooks = tmp_path / "g" / ".git" / "hooks"
    if repository != "made by the command":
        subprocess.run(["git", "init", "-q", str(tmp_path / "g")], check=True)
    if repository == "with core.hooksPath":
        with open(tmp_path / "g" / ".git" / "config", "a") as config:
            config.write('[core]\n\thooksPath = "../my hooks"\n')  # relative to the work tree's top
        hooks = tmp_path / "my hooks"
        hooks.mkdir()
    if repository == "with a hook already":
        write(hooks / "pre-commit", "#!/bin/sh\nexit 0\n", 0o755)
    command = "rm -rf build && git init -q g && git -C g commit -q --allow-empty -m x"
    await refused_after(home, hub, tmp_path, {"command": command, "env": IDENTITY}, hooks / "pre-commit")


@pytest.mark.parametrize(("path", "planted"), [(":/usr/bin:/bin", "rm"), ("bin:/usr/bin:/bin", "bin/rm"),
                                               (".:/usr/bin:/bin", "rm"), ("/usr/bin:/bin:", "true")])  # fmt: skip
async def test_a_program_planted_in_a_relative_or_empty_path_folder_is_refused(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path, path: str, planted: str
) -> None:
    """Route 6: an empty or relative PATH entry is the command's folder (or one in it) when bash
    searches it: an `rm` put there after the prompt ran instead of /usr/bin/rm."""
    command = "rm -rf build" if planted != "true" else "rm -rf build; no-such-program-here || true"
    if planted == "true":
        planted = "no-such-program-here"
    await refused_after(home, hub, tmp_path, {"command": command, "env": {"PATH": path}}, tmp_path / planted)


def test_places_in_a_relative_path_folder_not_made_yet_are_pinned_absent(tmp_path: Path) -> None:
    pin = pin_command("rm -rf build", str(tmp_path), {}, (), "later/bin:/usr/bin:/bin")
    assert dict(pin.scripts)[str(tmp_path / "later" / "bin" / "rm")] == ABSENT
    (tmp_path / "later" / "bin").mkdir(parents=True)
    write(tmp_path / "later" / "bin" / "rm", "#!/bin/sh\n", 0o755)
    assert changed_since(pin, {}) == f"the script {tmp_path / 'later' / 'bin' / 'rm'} changed after the user was asked"


def test_a_fifo_named_as_the_script_does_not_stop_the_pin(tmp_path: Path) -> None:
    """Found with route 4: `bash /dev/fd/3` (or a FIFO named as the program) made the pin open and
    read it to find the modules it loads, which waited forever: the command was never asked about."""
    fifo = tmp_path / "tool.py"
    os.mkfifo(fifo)
    done: list[object] = []
    worker = threading.Thread(
        target=lambda: done.append(pin_command("python3 tool.py", str(tmp_path), {}, [str(fifo)])), daemon=True
    )
    worker.start()
    worker.join(10)
    if worker.is_alive():  # let it go: a writer ends its wait
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(10)
    assert done, "the pin waited on the FIFO"
    assert dict(done[0].scripts)[str(fifo)] == "not a file"  # type: ignore[attr-defined]


def test_a_script_named_through_proc_self_cwd_is_pinned_in_the_commands_folder(tmp_path: Path) -> None:
    """`bash /proc/self/cwd/post.sh` runs the folder's post.sh: it was pinned as the server's own."""
    write(tmp_path / "post.sh", "echo tidy\n")
    named = "/proc/self/cwd/post.sh"
    pin = pin_command(f"rm -rf build && bash {named}", str(tmp_path), {}, [named])
    write(tmp_path / "post.sh", "rm -rf ~\n")
    assert changed_since(pin, {}) == f"the script {tmp_path / 'post.sh'} changed after the user was asked"


@pytest.mark.parametrize(
    "settings",
    [
        '[core]\n\thooksPath = "/HOOKS"\n[core "x"]\n\thooksPath = /elsewhere\n',  # core.x's, not core's
        "[core]\n\thooksPath = /HO\\\nOKS\n",  # a value continued on the next line
        "[core]\n\thooksPath = /elsewhere\n\thooksPath\n\thooksPath = /HOOKS ; the last\n",
        '[CORE]\nHooksPath=/HO"OKS"\n',
    ],
)
def test_the_hooks_folder_pinned_is_the_one_git_runs_hooks_from(tmp_path: Path, settings: str) -> None:
    """The repository's core.hooksPath as git reads it (git_settings.config_entries): a look-alike
    reader took `[core "x"]`'s for core's, and cut a value continued on the next line, so the
    folder git ran the hooks from was not pinned."""
    repository = tmp_path / "g"
    subprocess.run(["git", "init", "-q", str(repository)], check=True)
    hooks = str(tmp_path / "hooks")
    (repository / ".git" / "config").write_text(settings.replace("/HO", f"{tmp_path}/ho").replace("OKS", "oks"))
    read = subprocess.run(["git", "config", "core.hooksPath"], cwd=repository, capture_output=True, text=True)
    assert read.stdout.strip() == hooks, read  # git's own answer
    pinned = dict(pin_command("rm -rf build && git commit -q -m x", str(repository), {}).scripts)
    assert pinned.get(f"{hooks}/pre-commit") == ABSENT, sorted(pinned)


def test_git_hooks_path_given_on_the_command_line_and_a_worktrees_repository_are_followed(tmp_path: Path) -> None:
    main, hooks = tmp_path / "main", tmp_path / "main" / ".git" / "hooks"
    subprocess.run(["git", "init", "-q", str(main)], check=True)
    env = {**os.environ, **IDENTITY}
    subprocess.run(["git", "-C", str(main), "commit", "-q", "--allow-empty", "-m", "x"], check=True, env=env)
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(tmp_path / "tree")], check=True)
    pin = pin_command("git -c core.hooksPath=hk push && git -C ../tree commit -m y", str(main), {})
    pinned = dict(pin.scripts)
    assert pinned[str(main / "hk" / "pre-push")] == ABSENT, "relative to the work tree's top"
    assert pinned[str(hooks / "pre-commit")] == ABSENT, "a worktree's hooks are the main repository's"
    write(hooks / "post-commit", "#!/bin/sh\n", 0o755)
    assert changed_since(pin, {}) == f"the script {hooks / 'post-commit'} changed after the user was asked"


@pytest.mark.parametrize(
    "command",
    [
        'bash -c "$(cat a.sh)"',
        'sh -c "$(< a.sh)"',
        'bash -c "$(<a.sh)"',
        'eval "$(cat a.sh)"',
        'python3 -c "$(cat a.py)"',
        'bash <<< "$(cat a.sh)"',
        "cat <<EOF | sh\n$(cat a.sh)\nEOF",
    ],
)
async def test_a_script_read_into_code_by_a_command_substitution_is_pinned(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path, command: str
) -> None:
    """Route 4 through a command substitution: the file whose content became inline code, `eval`'s
    words or a shell's input was rewritten after the prompt, and the new code ran."""
    write(tmp_path / "a.sh", "echo hi\n")
    write(tmp_path / "a.py", "print('hi')\n")
    changed = tmp_path / ("a.py" if "python3" in command else "a.sh")
    await refused_after(home, hub, tmp_path, {"command": f"rm -rf build && {command}"}, changed)


@pytest.mark.parametrize(
    ("command", "env", "changed"),
    [
        ("make -s -I inc", {}, "inc/rules.mk"),
        ("make -s --include-dir=inc", {}, "inc/rules.mk"),
        ("MAKEFILES=pre.mk make -s all", {}, "pre.mk"),
        ("make -s all", {"MAKEFILES": "pre.mk"}, "pre.mk"),
    ],
)
async def test_the_makefiles_found_in_an_include_folder_or_named_by_makefiles_are_pinned(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path, command: str, env: dict, changed: str
) -> None:
    """Route 2 and 3 again: an `include` make finds in an `-I` folder, and a file MAKEFILES names
    (make reads it first: its rule for a goal named on the command line runs) had its recipe rewritten."""
    write(tmp_path / "Makefile", "include rules.mk\n")
    write(tmp_path / "inc" / "rules.mk", "X = 1\n")
    write(tmp_path / "pre.mk", "Y = 1\n")
    arguments = {"command": f"rm -rf build && {command}", **({"env": env} if env else {})}
    if "MAKEFILES" in command or env:
        write(tmp_path / "Makefile", "X = 1\n")
    else:
        write(tmp_path / "inc" / "rules.mk", "all:\n\t@echo hi\n")
    await refused_after(home, hub, tmp_path, arguments, tmp_path / changed, makefile=True)


@pytest.mark.parametrize(
    "command",
    [
        "git clone -q --template=tpl src copy",
        "git clone -q --template tpl src copy",
        "GIT_TEMPLATE_DIR=tpl git clone -q src copy",
        "git -c init.templateDir=tpl clone -q src copy",
        "git init -q --template=tpl fresh && git -C fresh commit -q --allow-empty -m x",
    ],
)
async def test_the_hooks_of_the_template_a_new_repository_gets_are_pinned(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path, command: str
) -> None:
    """Route 5 through a template: `git clone` copies its hooks into the repository and runs its
    post-checkout (`git init`'s are run by the next verb); one rewritten after the prompt ran."""
    subprocess.run(["git", "init", "-q", str(tmp_path / "src")], check=True)
    env = {**os.environ, **IDENTITY}
    subprocess.run(
        ["git", "-C", str(tmp_path / "src"), "commit", "-q", "--allow-empty", "-m", "x"], check=True, env=env
    )
    hook = tmp_path / "tpl" / "hooks" / ("pre-commit" if "commit" in command else "post-checkout")
    write(hook, "#!/bin/sh\nexit 0\n", 0o755)
    await refused_after(home, hub, tmp_path, {"command": f"rm -rf build && {command}", "env": IDENTITY}, hook)
