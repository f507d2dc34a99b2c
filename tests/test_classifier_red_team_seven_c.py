"""A red team, 2026-12-05 (seventh, routes through a tray-bound server's tools), read by the classifier:
what a persistent session's command leaves for later ones, special variables set in ways that were no
assignment to it, start-up files of interactive programs, and the script node runs after `-r`."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.classifier import Tier, classify
from app.core.commands.admission import lasts_in_session

SETS_PATH = "sets PATH: changes how later commands run"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    here = tmp_path / "project"
    here.mkdir()
    (here / "t.sh").write_text(":\n")  # harmless when judged: rewritten after the setter ran
    (here / "lib.sh").write_text("ls() { . ./t.sh; }\n")
    (here / "rc.sh").write_text('rm -rf "$HOME/Documents"\n')
    (here / "plain.sh").write_text("PS1='> '\n")
    (here / "app.js").write_text("console.log('hi')\n")
    (here / "ok.js").write_text("console.log('ok')\n")
    (here / "evil.js").write_text("require('child_process').execSync('rm -rf ' + process.env.HOME)\n")
    return here


def lasts(command: str, folder: Path) -> bool:
    return lasts_in_session(command, classify(command, cwd=str(folder)), str(folder))


@pytest.mark.parametrize(
    "command",
    [
        "builtin trap '. ./t.sh' DEBUG",
        "command trap '. ./t.sh' DEBUG",
        "tr''ap '. ./t.sh' DEBUG",
        "'trap' '. ./t.sh' DEBUG",
        ". /dev/stdin <<< 'ls() { . ./t.sh; }'",
        "source /dev/stdin <<< 'ls() { . ./t.sh; }'",
        "source <(echo 'ls() { . ./t.sh; }')",
        "builtin eval 'ls() { . ./t.sh; }'",
        "\"eval\" 'ls() { :; }'",
        ". ./lib.sh",  # a function defined in the file it sources
        "builtin enable -n echo",
        # special variables set without an assignment as written
        "export {PATH,X}=$PWD/bin:/usr/bin:/bin",
        "unset PATH; : ${PATH:=$PWD/bin:/usr/bin:/bin}",
        "let PATH=1",
        "getopts a PATH",
        ": $((PATH=1))",
        "unset PATH",  # bash then finds programs in the shell's folder: a planted ./ls
        'getopts a "$v"',  # a variable only named when it runs
        "(( $v = 1 ))",
    ],
)
def test_a_session_command_that_changes_how_later_ones_run_is_read_from_the_parse(command: str, folder: Path) -> None:
    """Each passed the text's reading (quoted names, `builtin`, code fed to `.`): a later `ls` then ran t.sh."""
    assert lasts(command, folder)


@pytest.mark.parametrize(
    "command",
    [
        "bash -c 'f() { :; }; f'",  # a shell of its own: gone with it
        "bash ./lib.sh",
        "echo 'f() { :; }' | bash",
        "bash -c 'trap \"echo x\" EXIT'",
        'git commit -m "fix trap and eval"',
        "trap '' INT; sleep 1",
        "trap -p",
        "ls -la",
        "getopts ab opt",
        "let i=i+1",
        ": ${CI:=false}",
        "unset tmp",
    ],
)
def test_what_does_not_last_in_the_session_is_not_held_for_it(command: str, folder: Path) -> None:
    assert not lasts(command, folder)


@pytest.mark.parametrize(
    ("command", "tier"),
    [
        ("export {BASH_ENV,X}=./rc.sh; bash -c 'echo hi'", Tier.DESTRUCTIVE),
        ("x=${BASH_ENV:=./rc.sh}; export BASH_ENV; bash -c 'echo hi'", Tier.DESTRUCTIVE),
        ("x=${BASH_ENV=./rc.sh}; export BASH_ENV", Tier.DESTRUCTIVE),
        ("export {PATH,X}=$PWD/bin:/usr/bin:/bin; ls", Tier.MODERATE),
        ("export P{A,B}TH=/tmp", Tier.MODERATE),
        ('builtin export {PATH,X}="$PWD/bin"', Tier.MODERATE),
        (": ${PATH:=$PWD/bin:/usr/bin:/bin}", Tier.MODERATE),
        ('echo "${PATH:=/tmp}"', Tier.MODERATE),
        ("let PATH=1", Tier.MODERATE),
        ("let 'x=1, PATH=2'", Tier.MODERATE),
        ("let x=PATH=1", Tier.MODERATE),
        ("unset PATH; ls", Tier.MODERATE),
        ("builtin unset -v PATH", Tier.MODERATE),
        ("getopts a PATH", Tier.MODERATE),
        ("(( PATH=1 ))", Tier.MODERATE),
    ],
)
def test_special_variables_set_without_an_assignment_as_written_are_seen(
    command: str, tier: Tier, folder: Path
) -> None:
    """Brace expansion in a declaration word, `${NAME:=...}`, `let`, `getopts`, arithmetic: each set
    PATH or BASH_ENV judged safe, so the read-only tool ran a planted `ls` or rc.sh's rm -rf."""
    verdict = classify(command, cwd=str(folder))
    assert verdict.tier is tier, verdict
    if tier is Tier.MODERATE:
        assert SETS_PATH in verdict.reasons


@pytest.mark.parametrize(
    ("command", "tier"),
    [
        ("export PATH=$PATH:/opt/bin", Tier.MODERATE),
        ("echo ${X:-default}", Tier.SAFE),
        (": ${CI:=false}", Tier.SAFE),
        ("echo ${NAME:=world}", Tier.SAFE),
        ("getopts ab opt", Tier.SAFE),
        ("let i=i+1", Tier.SAFE),
        ("let 'a == b'", Tier.SAFE),
        ("(( i += 1 ))", Tier.SAFE),
        ("export {A,B}=1", Tier.SAFE),
        ("export A=x{1,2}", Tier.SAFE),
        ("trap 'rm -f $tmp' EXIT", Tier.DESTRUCTIVE),  # as before: its tier is its code's
        ("trap 'echo done' EXIT", Tier.SAFE),
        ("eval 'echo hi'", Tier.SAFE),
        ("unset tmp", Tier.SAFE),
        ("unset -f ls", Tier.SAFE),
    ],
)
def test_everyday_look_alikes_keep_their_tier(command: str, tier: Tier, folder: Path) -> None:
    verdict = classify(command, cwd=str(folder))
    assert verdict.tier is tier, verdict
    if command.startswith("export PATH"):
        assert verdict.reasons == (SETS_PATH,)


@pytest.mark.parametrize("option", ["--rcfile", "--init-file"])
def test_a_shell_start_up_file_named_by_an_option_is_judged_as_a_script(option: str, folder: Path) -> None:
    """`bash --rcfile rc.sh -i` ran rc.sh's rm -rf judged "starts an interactive shell"."""
    verdict = classify(f"bash {option} rc.sh -i", cwd=str(folder))
    assert verdict.tier is Tier.DESTRUCTIVE, verdict
    harmless = classify(f"bash {option} plain.sh -i", cwd=str(folder))
    assert harmless.tier is Tier.MODERATE and str(folder / "plain.sh") in harmless.scripts, harmless


@pytest.mark.parametrize(
    ("file", "program"),
    [
        ("~/.gdbinit", "gdb"),
        ("~/.config/gdb/gdbinit", "gdb"),
        ("~/.gdbearlyinit", "gdb"),
        ("~/.tclshrc", "tclsh"),
        ("~/.wishrc", "wish"),
    ],
)
def test_writing_an_interactive_programs_start_up_file_is_held(file: str, program: str, folder: Path) -> None:
    """gdb runs ~/.gdbinit's `shell rm -rf ~/Documents` at its next start (it was moderate; ~/.gitconfig is held)."""
    verdict = classify(f"echo 'shell rm -rf ~/Documents' > {file}", cwd=str(folder))
    assert verdict.tier is Tier.DESTRUCTIVE, verdict
    assert f"{program} runs the commands in it at its next start" in verdict.reasons[0]
    assert "Changes " in verdict.plain[0] and program in verdict.plain[0]
    assert classify(f"cat {file}", cwd=str(folder)).tier is Tier.SAFE
    assert classify("echo x > ~/.gdb_history", cwd=str(folder)).tier is Tier.MODERATE


def test_node_runs_the_script_after_its_preloads(folder: Path) -> None:
    """`-r`'s value was taken for the script: an installed package named by bare name was "a script
    that cannot be read", and the script itself was never read (`node -r ./ok.js evil.js`)."""
    dotenv = classify("node -r dotenv/config app.js", cwd=str(folder))
    assert dotenv.tier is Tier.MODERATE and str(folder / "app.js") in dotenv.scripts, dotenv
    evil = classify("node -r ./ok.js evil.js", cwd=str(folder))
    assert evil.tier is Tier.DESTRUCTIVE and str(folder / "evil.js") in evil.scripts, evil
    conditions = classify("node -C development --import ./ok.js evil.js", cwd=str(folder))
    assert conditions.tier is Tier.DESTRUCTIVE, conditions
    plain = classify("node --require ./ok.js app.js", cwd=str(folder))
    assert plain.tier is Tier.MODERATE and {str(folder / "ok.js"), str(folder / "app.js")} <= set(plain.scripts)
