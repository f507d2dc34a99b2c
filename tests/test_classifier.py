"""The command classifier: the tier corpus, the reading-as-bash guarantees, and failing closed."""

from __future__ import annotations

import fnmatch
import inspect
import os
import random
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from app.core import classifier
from app.core.classifier import Classification, Danger, Tier, analyzer, classify, names_protected
from app.core.classifier.findings import DELETE_RECURSIVE

CORPUS = Path(__file__).parent / "data" / "command_tiers.tsv"
HOME = os.path.expanduser("~")
PROTECTED = (
    f"{HOME}/.local/share/cowork-terminal",
    f"{HOME}/.config/cowork-terminal/settings.json",
    "/srv/cowork-data",
)


def _decode(text: str) -> str:
    r"""The corpus escapes: \n is a newline, \\ a backslash, any other backslash is itself."""
    return re.sub(r"\\([\\n])", lambda m: "\\" if m[1] == "\\" else "\n", text)


def _corpus() -> list[tuple[str, Tier, str]]:
    rows = []
    for line in CORPUS.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        command, tier, why = line.split("\t")
        rows.append((_decode(command), Tier[tier.upper()], why))
    return rows


ROWS = _corpus()


@pytest.mark.parametrize(("command", "expected", "why"), ROWS, ids=[repr(r[0])[:60] for r in ROWS])
def test_corpus_command_gets_its_expected_tier(command: str, expected: Tier, why: str) -> None:
    result = classify(command, protected_paths=PROTECTED)
    assert result.tier is expected, f"{why}: got {result}"


def test_corpus_covers_every_tier_with_many_examples() -> None:
    counts = {tier: sum(1 for _, t, _ in ROWS if t is tier) for tier in Tier}
    assert len(ROWS) >= 150
    assert all(n >= 40 for n in counts.values()), counts


def test_classify_takes_no_tier_from_the_caller() -> None:
    """A tier the model claims is ignored: the function has nowhere to put one."""
    assert list(inspect.signature(classify).parameters) == ["command", "cwd", "protected_paths", "deadline"]


def test_quoted_command_name_is_still_recognised() -> None:
    for spelling in ("'r''m'", "\\rm", '"rm"', 'r"m"', "$'\\x72m'", "$'\\162\\155'", "/bin/rm", "RM", "rm.exe"):
        result = classify(f"{spelling} -rf build")
        assert result.tier is Tier.DESTRUCTIVE, spelling
        assert "rm -r: recursive removal" in result.reasons, spelling


def test_backslash_newline_inside_a_command_name_is_joined_as_bash_does() -> None:
    assert classify("r\\\nm -rf x").tier is Tier.DESTRUCTIVE
    assert classify("ls \\\n  -la").tier is Tier.SAFE


def test_escaped_backslash_before_a_newline_still_ends_the_command() -> None:
    assert classify("echo \\\\\nrm -rf x").tier is Tier.DESTRUCTIVE


def test_reasons_are_short_text_for_the_approval_prompt() -> None:
    result = classify("sudo rm -rf / && git push --force")
    assert result.tier is Tier.DESTRUCTIVE
    expected = {"sudo: runs as another user", "rm -r: recursive removal", "git push --force: overwrites remote history"}
    assert expected <= set(result.reasons)
    assert all(0 < len(r) <= 120 for r in result.reasons)


def test_reasons_name_only_the_deciding_tier() -> None:
    result = classify("mv a b; rm -rf c")
    assert result.tier is Tier.DESTRUCTIVE
    assert "mv: moves files" not in result.reasons


def test_safe_command_has_no_reasons() -> None:
    assert classify("ls -la") == Classification(Tier.SAFE, ())
    assert classify("") == Classification(Tier.SAFE, ())
    assert classify("   \n# just a comment\n").tier is Tier.SAFE


def test_protected_paths_only_matter_when_given() -> None:
    assert classify("ls /srv/cowork-data").tier is Tier.SAFE
    assert classify("ls /srv/cowork-data", protected_paths=["/srv/cowork-data"]).tier is Tier.DESTRUCTIVE


def test_protected_folder_under_home_is_caught_in_every_spelling() -> None:
    data = f"{HOME}/.local/share/cowork-terminal"
    for spelling in (
        f"{data}/journal.sqlite3",
        "~/.local/share/cowork-terminal/journal.sqlite3",
        "$HOME/.local/share/cowork-terminal/journal.sqlite3",
        "${HOME}/.local/share/cowork-terminal",
        '"$HOME"/.local/share/cowork-terminal',
        "~/.local/share/cowork-'term'inal/pause",
        "~/.local/share/cowork-*/journal.sqlite3",
        "~/.local/share/../share/cowork-terminal",
    ):
        result = classify(f"cat {spelling}", protected_paths=[data])
        assert result.tier is Tier.DESTRUCTIVE, spelling
        assert classifier.TOUCHES_APP_DATA in result.reasons, spelling
    assert classify("cd && rm .local/share/cowork-terminal/pause", protected_paths=[data]).tier is Tier.DESTRUCTIVE
    for cd in ("cd $HOME/.local", 'cd "${HOME}/.local"', "cd ~/.local"):  # then a name only the cd completes
        assert classify(f"{cd} && rm share/cowork-terminal/pause", protected_paths=[data]).tier is Tier.DESTRUCTIVE, cd
    assert classify("cd $PROJECT && rm share/cowork-terminal/pause", protected_paths=[data]).tier is Tier.MODERATE


def test_running_cowork_terminal_itself_asks_with_a_reason_that_says_so() -> None:
    """The model must not answer its own approvals through our CLI, whatever the spelling or wrapper."""
    for command in (
        "cowork-terminal approve 1",
        "cowork-terminal --help",
        '"$HOME/.venv/bin/cowork-terminal" tools all',
        "env cowork-terminal approve 1",
        "bash -c 'cowork-terminal approve 1'",
        "python3 -m app approval-mode never",
        "python -m app.cli.main approve 1",
        "python -c \"from app.cli.main import main; main(['approve', '1'])\"",
        "python -c \"__import__('app')\"",
    ):
        result = classify(command)
        assert result.tier is Tier.DESTRUCTIVE, command
        assert result.reasons == (classifier.RUNS_ITSELF,), command
    assert classify("python -m apptools").tier is Tier.MODERATE
    assert classify("grep cowork-terminal notes.txt").tier is Tier.SAFE


def test_protected_path_hidden_in_code_for_another_language_is_caught() -> None:
    code = "python3 -c \"import sqlite3; sqlite3.connect('/srv/cowork-data/journal.sqlite3')\""
    assert classify(code, protected_paths=["/srv/cowork-data"]).tier is Tier.DESTRUCTIVE


def test_parent_of_protected_folder_may_be_read_but_not_moved() -> None:
    data = f"{HOME}/.local/share/cowork-terminal"
    assert classify("ls ~/.local/share", protected_paths=[data]).tier is Tier.SAFE
    assert classify("cp notes.txt ~/", protected_paths=[data]).tier is Tier.MODERATE
    assert classify("mv ~/.local/share ~/old-share", protected_paths=[data]).tier is Tier.DESTRUCTIVE
    assert classify("chmod -R 700 ~/.local", protected_paths=[data]).tier is Tier.DESTRUCTIVE


def test_relative_paths_are_judged_from_the_folder_the_command_runs_in() -> None:
    data = f"{HOME}/.local/share/cowork-terminal"
    inside = {"cwd": data, "protected_paths": [data]}
    for command in (
        "rm journal.sqlite3",
        "ls",
        "sqlite3 journal.sqlite3 'select 1'",
        "python3 ../x.py",
        "bash -c 'cat pause'",
    ):
        result = classify(command, **inside)
        assert result.tier is Tier.DESTRUCTIVE and classifier.TOUCHES_APP_DATA in result.reasons, command
    assert (
        classify("rm share/cowork-terminal/journal.sqlite3", cwd=f"{HOME}/.local", protected_paths=[data]).tier
        is Tier.DESTRUCTIVE
    )
    assert classify("mv .local /tmp/old", cwd=HOME, protected_paths=[data]).tier is Tier.DESTRUCTIVE
    assert classify("mv .local /tmp/old", cwd="/srv", protected_paths=[data]).tier is Tier.MODERATE
    assert classify("cd /srv && mv .local old", cwd=HOME, protected_paths=[data]).tier is Tier.MODERATE
    assert classify("rm notes.txt", cwd=f"{HOME}/project", protected_paths=[data]).tier is Tier.MODERATE
    assert (
        classify(
            "ls",
            cwd="C:\\Users\\me\\AppData\\Local\\cowork-terminal",
            protected_paths=["C:\\Users\\me\\AppData\\Local\\cowork-terminal"],
        ).tier
        is Tier.DESTRUCTIVE
    )


def test_recursive_permission_changes_are_broad_by_where_they_lead_from_the_folder() -> None:
    project = f"{HOME}/project"
    for command, cwd in (
        ("chmod -R 777 ..", project),
        ("chmod -R 777 .", HOME),
        ("chmod -R 777 *", HOME),
        ("chown -R me ../*", project),
        ("chmod -R a+w ../..", f"{project}/sub"),
    ):
        assert classify(command, cwd=cwd).tier is Tier.DESTRUCTIVE, (command, cwd)
    for command in ("chmod -R 777 .", "chmod -R 777 *", "chown -R me ./*", "chmod -R u+w build"):
        assert classify(command, cwd=project).tier is Tier.MODERATE, command


def test_moving_the_home_folder_the_root_or_a_top_level_folder_is_held() -> None:
    project = f"{HOME}/project"
    for command in (
        "mv ~ /tmp/old",
        "mv $HOME/ old",
        "mv /usr /old",
        "mv -t /tmp ~",
        "mv -- ~/* /tmp/",
        "mv .. /tmp/x",
    ):
        result = classify(command, cwd=project)
        assert result.tier is Tier.DESTRUCTIVE and "mv of a broad path" in result.reasons[0], (command, result)
    # A word only bash knows (a loop's file), a project's own folders and moves into the home folder stay
    for command in ('for f in *.txt; do mv "$f" "${f%.txt}.md"; done', "mv build dist", "mv notes.txt ~", "mv ~/a ~/b"):
        assert classify(command, cwd=project).tier is Tier.MODERATE, command


def test_windows_protected_path_is_matched_in_git_bash_spellings() -> None:
    data = "C:\\Users\\me\\AppData\\Local\\cowork-terminal"
    for command in (
        "cat /c/Users/me/AppData/Local/cowork-terminal/journal.sqlite3",
        "cat C:/Users/me/AppData/Local/cowork-terminal/pause",
        "cat 'C:\\Users\\me\\AppData\\Local\\cowork-terminal\\pause'",
        "rm /cygdrive/c/users/ME/appdata/local/Cowork-Terminal/x",
        "mv C:/Users/me/AppData /tmp/old",
        "mv /c/Users/me/AppData/Local /tmp/old",
    ):
        assert classify(command, protected_paths=[data]).tier is Tier.DESTRUCTIVE, command
    assert classify("cp notes.txt C:/Users/me/", protected_paths=[data]).tier is Tier.MODERATE


def test_echo_into_a_shell_is_read_as_the_code_it_carries() -> None:
    assert classify('echo "ls -la" | bash').tier is Tier.SAFE
    assert classify('echo "rm -rf ~" | bash').tier is Tier.DESTRUCTIVE
    assert classify('printf "rm -rf ~" | bash').tier is Tier.DESTRUCTIVE  # printf output is not read: ask


def test_stored_command_is_judged_when_it_is_stored() -> None:
    """An alias, a function or a git alias defined now runs later under an innocent name."""
    assert classify("alias ll='ls -l'").tier is Tier.SAFE
    assert classify("alias ll='rm -rf ~'").tier is Tier.DESTRUCTIVE
    assert classify("cleanup() { rm -rf ~/x; }").tier is Tier.DESTRUCTIVE
    assert classify("git config --global alias.st status").tier is Tier.MODERATE
    assert classify("git config --global alias.st '!sudo reboot'").tier is Tier.DESTRUCTIVE


def test_unparseable_command_asks() -> None:
    result = classify("if then fi")
    assert result.tier is Tier.DESTRUCTIVE
    assert result.reasons[0].startswith("cannot tell what runs")


def test_internal_failure_asks_instead_of_letting_the_command_through(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: object) -> None:
        raise RuntimeError("bug")

    monkeypatch.setattr(analyzer._Analyzer, "run", broken)
    result = classify("ls")
    assert result.tier is Tier.DESTRUCTIVE
    assert result.reasons == ("cannot tell what runs: the classifier failed on this command",)
    assert names_protected("ls", ["/nowhere"]), "where no container guards: the command is asked"


def _noise(rng: random.Random) -> str:
    pieces = [
        "rm", "-rf", "sudo", "bash", "-c", "'", '"', "\\", "$(", ")", "`", "<(", ">(", "<<", "EOF", "\n", ";",
        "&&", "||", "|", "&", "{", "}", "(", ")", "$", "${", "$'", "\\x72", "=", "x", " ", "\t", "#", "*", "?",
        "[", "]", "~", "/dev/sda", "eval", "env", "xargs", "find", "-exec", "\\;", "git", "push", "-f", "case",
        "in", "esac", "if", "then", "fi", "for", "do", "done", "((", "))", "<<<", "\x00", "\ud800", "é", "💥",
    ]  # fmt: skip
    return "".join(rng.choice(pieces) for _ in range(rng.randint(0, 40)))


def test_classification_never_raises_on_arbitrary_input() -> None:
    rng = random.Random(20260806)
    inputs = [_noise(rng) for _ in range(1500)]
    inputs += ["".join(chr(rng.randint(0, 0x10FFFF)) for _ in range(30)) for _ in range(200)]
    inputs += [command[:cut] for command, _, _ in ROWS for cut in range(0, len(command), 3)]
    for text in inputs:
        result = classify(text, protected_paths=PROTECTED)
        assert isinstance(result, Classification)
        assert isinstance(result.tier, Tier)
        assert result.tier is Tier.SAFE or result.reasons


def test_huge_command_returns() -> None:
    huge = "echo a " * (5 * 1024 * 1024 // 7)
    assert classify(huge).tier is Tier.DESTRUCTIVE
    long_list = "echo a; " * 100_000  # under the length limit, over the work limit
    assert classify(long_list).tier is Tier.DESTRUCTIVE


def test_deep_nesting_returns() -> None:
    assert classify("$(" * 20_000).tier is Tier.DESTRUCTIVE
    assert classify("echo " + "$(" * 3_000 + "ls" + ")" * 3_000).tier is Tier.DESTRUCTIVE
    assert classify("eval " * 40 + "ls").tier is Tier.DESTRUCTIVE  # each eval parses the rest again


def test_large_heredoc_that_writes_a_file_is_not_refused() -> None:
    body = "x = 1  # $(not run) `nor this`\n" * 20_000
    assert classify(f"cat > big.py <<'EOF'\n{body}EOF").tier is Tier.MODERATE


def test_classifier_gives_the_same_answers_from_several_threads() -> None:
    commands = [command for command, _, _ in ROWS[:60]]
    expected = [classify(c, protected_paths=PROTECTED) for c in commands]
    failures: list[str] = []

    def work() -> None:
        for command, want in zip(commands, expected, strict=True):
            if classify(command, protected_paths=PROTECTED) != want:
                failures.append(command)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def test_importing_the_classifier_does_not_load_the_parser() -> None:
    """`serve` imports this module early; the parser's cost is paid on the first command only."""
    code = (
        "import sys; import app.core.classifier as c; assert 'tree_sitter' not in sys.modules; "
        "c.classify('ls'); assert 'tree_sitter' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_python_script_named_like_an_option_letter_is_a_script_not_inline_code(tmp_path: Path) -> None:
    # `-u` is an option cluster; the word after it is the script, whatever its name.
    (tmp_path / "u").write_text("print(1)\n")
    verdict = classify("python3 -u u", cwd=str(tmp_path))
    assert verdict.scripts == (f"{tmp_path}/u",)  # the file `u` was read as the program, not as code
    assert verdict.tier is Tier.MODERATE


# ---- removing named files in the working folder (issue 12), and plain words


def test_rm_f_of_a_named_file_in_the_working_folder_is_moderate() -> None:
    result = classify("rm -f file.o", cwd="/home/ana/project")
    assert result.tier is Tier.MODERATE
    assert "Deletes the file /home/ana/project/file.o" in result.plain


def test_rm_f_of_a_glob_within_the_working_folder_is_moderate() -> None:
    assert classify("rm -f *.o", cwd="/home/ana/project").tier is Tier.MODERATE
    assert classify("rm -f src/*.o", cwd="/home/ana/project").tier is Tier.MODERATE


def test_rm_f_outside_the_working_folder_or_across_folders_is_held() -> None:
    for command in ("rm -f ../x", "rm -f */x.o", "rm -f /etc/hosts", "rm -f ~/notes", "rm -f a/../../x"):
        result = classify(command, cwd="/home/ana/project")
        assert result.tier is Tier.DESTRUCTIVE, command
        assert any("without asking" in words for words in result.plain), (command, result.plain)


def test_rm_f_in_the_home_folder_itself_is_still_held() -> None:
    assert classify("rm -f .bashrc", cwd=HOME).tier is Tier.DESTRUCTIVE


def test_rm_f_of_an_absolute_path_is_moderate_only_inside_the_working_folder() -> None:
    assert classify("rm -f /home/ana/project/a.o", cwd="/home/ana/project").tier is Tier.MODERATE
    assert classify("rm -f /home/ana/projectx/a.o", cwd="/home/ana/project").tier is Tier.DESTRUCTIVE


def test_rm_rf_build_is_still_held_and_says_which_folder_in_plain_words() -> None:
    result = classify("rm -rf build", cwd="/home/ana/project")
    assert result.tier is Tier.DESTRUCTIVE
    assert result.plain == ("Deletes the folder /home/ana/project/build and everything in it",)
    assert [(f.kind, f.target) for f in result.findings] == [("delete-recursive", "/home/ana/project/build")]


def test_env_runs_its_command_in_the_folder_it_names_and_its_attached_options_are_read() -> None:
    """Red team, 2026-12-04: `env -C` was skipped, so `rm -rf bin` was judged in the working folder."""
    said = classify("env -C /home/ana/.local rm -rf bin", cwd="/home/ana/project")
    assert said.findings[0].target == "/home/ana/.local/bin", said
    assert classify("env --chdir=/home/ana/.local rm -rf bin", cwd="/home/ana/project").findings[0].target == (
        "/home/ana/.local/bin"
    )
    assert classify("env -iC /x rm -rf /", cwd="/home/ana/project").plain[0].startswith("Deletes every file")
    for command in ("env -S'rm -rf /'", "env --split-string='rm -rf /'", "env -iS 'rm -rf /'",
                    "env --sp='rm -rf /home/ana/Documents'",  # getopt_long takes any unambiguous prefix
                    "env --un X rm -rf /home/ana/Documents", "env -P /usr/bin rm -rf /home/ana/Documents",
                    "env -a x rm -rf /home/ana/Documents", "env - rm -rf /home/ana/Documents"):  # fmt: skip
        assert classify(command, cwd="/home/ana/project").tier is Tier.DESTRUCTIVE, command
    assert classify("env --ch=/home/ana/.local rm -rf bin", cwd="/home/ana/project").findings[0].target == (
        "/home/ana/.local/bin"
    )
    # Text env splits by its own rules (an option of its own first, blank, escapes, comments), what
    # busybox is told it is, BSD's search path: each ran `rm` unheld or unseen (review, 2026-12-04).
    for command in ("env -S' ' rm -rf /home/ana/Documents", "env -S'#' rm -rf /home/ana/Documents",
                    "env -S'-i' rm -rf /home/ana/Documents", "env --split-string= rm -rf /home/ana/Documents",
                    "env -S'\\_rm -rf /home/ana/Documents'", "env -P ./evil ls",
                    "env -a rm busybox -rf /home/ana/Documents", "env -S'rm -rf' /home/ana/Documents"):  # fmt: skip
        assert classify(command, cwd="/home/ana/project").tier is Tier.DESTRUCTIVE, command
    assert classify("env -S'echo hi' there", cwd="/home/ana/project").tier is Tier.SAFE
    unknown = classify("env --frobnicate rm -rf x", cwd="/home/ana/project")
    assert unknown.findings[0].reason == "cannot tell what runs: env --frobnicate", "a newer env's option"
    assert classify("env --block-signal=PIPE -v ls", cwd="/home/ana/project").tier is Tier.SAFE
    assert classify("env -C /tmp rm -rf x; rm -rf build", cwd="/home/ana/project").findings[1].target == (
        "/home/ana/project/build"
    ), "only env's command runs there"


def test_a_wrappers_option_value_is_never_taken_for_the_command_it_runs() -> None:
    """Review, 2026-12-04: getopt takes any unambiguous prefix of a long option and a short option
    last in its cluster takes the next word; read otherwise, the value was taken for the command and
    `rm` was never seen (judged moderate: not held by default)."""
    for wrapped in ("timeout --kill 1 5", "timeout --sig KILL 5", "nice --adj 5", "xargs --arg-f list",
                    "stdbuf --out 0", "cd /home/ana && find Documents | xargs -iL"):  # fmt: skip
        command = f"{wrapped} rm -rf /home/ana/Documents"
        assert classify(command, cwd="/home/ana/project").tier is Tier.DESTRUCTIVE, command
    assert classify("timeout -s KILL 5 ls", cwd="/home/ana/project").tier is Tier.SAFE


def test_what_makes_a_name_or_a_wrapper_run_another_program_is_seen() -> None:
    """Third review, 2026-12-04: each ran `rm -rf` on a real folder while judged safe or moderate."""
    documents = "/home/ana/Documents"
    for command in (
        f"hash -p /bin/rm ls; ls -rf {documents}",  # `ls` runs rm from then on
        "hash -p /bin/rm cat",  # in the session, for a later `cat`
        f"BASH_CMDS[ls]=/bin/rm; ls -rf {documents}",
        f"flock --wait 5 echo rm -rf {documents}",  # --wait is -w: `echo` is the lock file
        f"env 'x-y=1' rm -rf {documents}",  # any word with `=` is a setting to env
        f"env -- LC_ALL=C rm -rf {documents}",
        f"strace --trace file rm -rf {documents}",  # a long option's value, or not: cannot tell
        f"script -qc 'rm -rf {documents}' /dev/null",
        f"script -qc'rm -rf {documents}'",
        f"script --comm 'rm -rf {documents}'",
        f"unshare rm -rf {documents}",  # programs that run a command in a changed setting
        f"setpriv --reuid=1000 rm -rf {documents}",
        f"nsenter -t 1 -m rm -rf {documents}",
        f"prlimit --nofile=10 rm -rf {documents}",
        f"setarch x86_64 -R rm -rf {documents}",
        f"eatmydata rm -rf {documents}",
        f"ltrace -S rm -rf {documents}",  # a flag of ltrace's, a value-taking option of strace's
        f"GIT_EDITOR='rm -rf {documents}; true' git commit",  # a variable whose value a program runs as code
        f"GIT_PAGER='rm -rf {documents}' git -p log",
        f"env PAGER='rm -rf {documents}' git --paginate log",
        f"export EDITOR='rm -rf {documents}'",
    ):
        assert classify(command, cwd="/home/ana/project").tier is Tier.DESTRUCTIVE, command
    for command in ("hash", "hash -r", "env -- ls", "script -q out.txt", "unshare --map-root-user ls",
                    "GIT_PAGER=cat git -p log"):  # fmt: skip
        assert classify(command, cwd="/home/ana/project").tier is not Tier.DESTRUCTIVE, command
    assert classify(f"strace -f --follow-forks rm -rf {documents}", cwd="/").findings[-1].target == documents


def test_a_program_no_rule_knows_is_judged_by_the_commands_and_code_it_is_given() -> None:
    """2026-12-04: each ran `rm -rf` while judged moderate (a program no rule knows), so unheld; an
    option read as a flag (`timeout -vs`, `parallel -j2`) made its value such a program too."""
    documents = "/home/ana/Documents"
    for command in (
        f"faketime '2020-01-01' rm -rf {documents}",
        f"runuser -u ana -- rm -rf {documents}",
        f"linux64 rm -rf {documents}",
        f"ssh-agent /bin/rm -rf {documents}",
        f"tmux new -d 'rm -rf {documents}'",
        f"nix-shell -p hello --run 'cd /; rm -rf {documents}'",
        f"expect -c 'spawn rm -rf {documents}'",
        f"timeout -vs KILL 5 rm -rf {documents}",
        f"parallel -j2 rm -rf ::: {documents}",
        f"conda run -n base rm -rf {documents}",
        f"npm exec -- rimraf {documents}",
        f"poetry run python -c 'import shutil; shutil.rmtree(\"{documents}\")'",
        # Red team, after the first version: strings that begin with no program, and what was skipped.
        f"tmux new -d '(rm -rf {documents})'",
        f"tmux new -d 'if true; then rm -rf {documents}; fi'",
        f"tmux new -d 'myscript; rm -rf {documents}'",
        "tmux new -d $'# tidy\\nrm -rf /home/ana/Documents'",
        'tmux new -d "rm -rf $HOME/Documents"',  # what is known of a string with an expansion
        'runuser -u ana -- sh -c "rm -rf $HOME/Documents"',  # a shell given code: its "cannot tell" stands
        f"start-stop-daemon --start --exec /bin/rm -- -rf {documents}",  # the `--` was the daemon's
        f"npm exec --call='rm -rf {documents}'",
        f"npm x -c 'rm -rf {documents}'",
    ):
        assert classify(command, cwd="/home/ana/project").tier is Tier.DESTRUCTIVE, command
    for command in ("make test", "pytest -k 'not slow'", "mytool '{\"a\": 1}'", "mytool ls cat -- x",
                    'glab mr create -t "rm -rf build dir before tests"', "mytool 'fix: rm -rf in the Makefile'",
                    "jira issue create --summary='find -delete removes too much'",
                    "mytool 'a string with $(words)'", "npm run build", "conda run -n base pytest",
                    "mytool ./rm -rf /home/ana/Documents", "mytool ' ' '(x y)'"):  # fmt: skip
        assert classify(command, cwd="/home/ana/project").tier is Tier.MODERATE, command
    # What it may run is judged where it stands: a `cd` among the words leads nowhere after it.
    judged = classify("mytool cd /tmp; rm -rf out", cwd="/home/ana/project")
    assert [f.target for f in judged.findings] == ["/home/ana/project/out"]


def test_a_command_whose_wrappers_would_each_look_at_many_words_is_too_large_to_check() -> None:
    """Each wrapper looks at every word after it: 100 `nohup` before 10,000 words took 1.9 s to judge
    (and 250 before 49,000 words, 20 s, the tray's commands waiting meanwhile)."""
    judged = classify("nohup " * 100 + "ls " + "x " * 10_000, cwd="/home/ana/project")
    assert judged.reasons == ("cannot tell what runs: the command is too large or deeply nested to check",)
    assert classify("sudo nice nohup rm " + "f " * 40_000, cwd="/home/ana/project").reasons == (
        "sudo: runs as another user",
    )


def test_what_a_program_no_rule_knows_only_names_is_not_held() -> None:
    """Review, 2026-12-04: the first version held about 85 of 475 everyday commands, for a program
    they name (`make format`, `vagrant halt`) or a message that reads as one."""
    assert_not_held("make format", "ruff format .", "dart format .", "vagrant halt", "virsh shutdown vm1",
                    "pytest -k shutdown", "apt-cache show dd", "apt-cache policy sudo", "getent group sudo",
                    "ldd /usr/bin/sudo", "todo add meeting at 5pm", 'jj describe -m "reboot loop fix"',
                    "npm run format", "npm run clean -- rm -rf dist", "docker compose down --volumes=false",
                    "python3 -c '# refresh the cache on file delete'")  # fmt: skip


def test_a_guess_at_what_a_program_runs_never_lets_it_out_and_never_hides_the_rest() -> None:
    """Review, 2026-12-04: a guessed `sudo` carried "gains privileges" (an Allow would have run the
    whole command outside the container); a guess that ran out of the word bound left the rest of
    the command unjudged, so `rm -rf ~` after it ran unheld."""
    guessed = classify("mytool sudo rm -rf /home/ana/x", cwd="/home/ana/project")
    assert guessed.tier is Tier.DESTRUCTIVE and not guessed.gains_privileges
    hidden = classify(('x "' + "env " * 200 + 'true" ') * 21 + "; rm -rf ~", cwd="/home/ana/project")
    assert hidden.tier is Tier.DESTRUCTIVE, hidden
    inside = classify('mytool "mytool ' + "cat a " * 65 + 'faketime 0 rm -rf ~/Documents"', cwd="/home/ana/project")
    assert inside.tier is Tier.DESTRUCTIVE, "a bound met inside a guess stands: what it left unjudged may delete"
    nested = classify("env " * 247 + "true", cwd="/home/ana/project")  # not a RecursionError
    assert nested.reasons == ("cannot tell what runs: the command is too deeply nested to check",)


def test_the_second_review_of_what_programs_are_given() -> None:
    """Second review, 2026-12-04: each ran `rm -rf` while judged moderate (three had been held before
    the evening's changes), or was held though harmless."""
    documents = "/home/ana/Documents"
    assert_held(
        "git -c alias.x='clean -fdx' x",  # an alias is a git command
        "git -c core.hooksPath=hooks commit -m x",  # a folder of code: which cannot be told
        "git -c include.path=./agent.cfg st",
        f"tmux new -d 'rm -rf {documents}' \\; send-keys ls Enter",  # each tmux command apart
        f"tmux send-keys -lt work 'rm -rf {documents}' Enter",  # `-lt work`: the target, not typed
        f"printf 'r !rm -rf {documents}\\n' | ed",
        f"cmake -E chdir /tmp rm -rf {documents}",
        f"cmake -E time rm -rf {documents}",
        'faketime 0 "' * 13 + f"rm -rf {documents}" + '"' * 13,  # too deep stands inside a guess
        "fd -Hx rm -rf",
        f"git rebase -ix 'rm -rf {documents}' HEAD~3",
        f"git clone -qu 'rm -rf {documents}' . copy",
        f"apt-get -o DPkg::Pre-Install-Pkgs::='rm -rf {documents}' install git",
        f"dpkg --status-logger='rm -rf {documents}' -i x.deb",
        f"lldb -o 'platform shell rm -rf {documents}'",
    )
    assert_not_held(
        "git -c alias.st=status st",
        "GIT_CONFIG_GLOBAL=/dev/null git status",
        "psql -c \"select * from t where note like '%drop table%'\"",
        "notify-send 'format done'",
        "notify-send 'Fix rm -rf in cleanup'",
        "pytest -k 'rm -rf'",
        "vim -c 'call setline(1, \"x\")'",
        "vim -c 'g/^$/delete' notes.md",
        "vim -es -c '%!sort' notes.md",
        "fd -tx build",
        "tar -cfI x.tar notes.md",
    )


def test_the_third_red_team_routes_are_held() -> None:
    """Third red team, 2026-12-04: each deleted a folder or emptied a table while judged safe or
    moderate (all but the psql ones run for real)."""
    documents = "/home/ana/Documents"
    assert_held(
        f"git -c protocol.ext.allow=always ls-remote 'ext::sh -c rm% -rf% {documents}'",  # safe
        f"GIT_ALLOW_PROTOCOL=ext git ls-remote 'ext::sh -c rm% -rf% {documents}'",
        f'git ls-remote --upload="rm -rf {documents};" /tmp/src',  # a prefix that ends at a word
        f'git grep --open="rm -rf {documents};true" hello',
        f'git -c diff.external="rm -rf {documents};true" diff',
        f'git -c remote.o.url=/tmp/src -c remote.o.uploadpack="rm -rf {documents};" ls-remote o',
        f"git -c core.alternateRefsCommand='rm -rf {documents};' clone -q --reference src file:///tmp/src dst",
        f'tar -cf x.tar --use="rm -rf {documents};cat" notes.md',
        f"tmux new -d 'X=#;rm -rf {documents}'",  # a setting first: all of it is judged
        f"tmux new -d 'IFS=,;x=rm,-rf,{documents};$x'",  # no space, yet code
        f"tmux new -d 'rm${{IFS:0:1}}-rf${{IFS:0:1}}{documents}'",
        f"tmux new -d \\; neww -k 'rm -rf {documents}'",  # -k is tmux's flag, not a message
        f"tmux new -d '/usr/bin/dbus-run-session -- rm -rf {documents}'",
        "tmux new -d 'eval \"$(echo cm0gLXJmIH4= | base64 -d)\"'",  # tmux runs it with sh -c
        f"tmux send-ke -t work 'rm -rf {documents}' Enter",  # a prefix of send-keys
        "sqlite3 app.db \"SELECT '--'; DROP TABLE t\"",
        "sqlite3 app.db 'DELETE FROM t WHERE 2'",
        "echo -e 'DROP TABLE t;' | sqlite3 app.db",
        f"sqlite3 app.db '.sy rm -rf {documents}'",
        f"sqlite3 app.db \".output '|rm -rf {documents}'\"",
        f"psql -c '\\o |rm -rf {documents}'",
        f"psql -c \"\\copy t to program 'rm -rf {documents}'\"",
        f"echo -e '!rm -rf {documents}' | ed -s",
        "echo -e 'r\\x6d -rf ~/Documents' | bash",  # what echo -e prints: rm
        "printf 'r\\x6d -rf ~/Documents' | bash",  # printf's escapes: cannot tell
    )
    assert_not_held(
        "dpkg --status bash",
        "tar --checkpoint=10 -cf x.tar src",
        "git -c color.ui=auto log",
        "scp -o StrictHostKeyChecking=no x:y .",
        "sqlite3 app.db 'DELETE FROM t WHERE id = 2'",
        "sqlite3 app.db '.output out.csv'",
        "echo -n ls | bash",
    )


def test_the_review_of_the_third_red_teams_fixes() -> None:
    """Third review, 2026-12-04: each was held before the third red team's fixes and not after, or the
    other way round."""
    project = "/home/ana/project"
    assert_held(
        f"echo -e -n 'r\\x6d -rf {project}' | sh",  # -n after -e keeps the escapes
        f"echo -e 'r\\0155 -rf {project}' | sh",  # echo's octal: cannot tell
        "printf 'DROP TABLE %s;\\n' users | sqlite3 app.db",  # printf's words, near enough for a client
        "printf '%s\\n' 'DROP TABLE users;' | sqlite3 app.db",
        f"printf '%s\\n' '!rm -rf {project}' | ed",
        "sqlite3 app.db 'DELETE FROM \"users\";'",  # a quoted name is a name
        'psql -c \'TRUNCATE "public"."users"\' shop',
        "psql -c \"SELECT E'\\\\''; DROP TABLE users; --'\" shop",  # a backslash escape in a string
        f"xyzrun ACTION='rm -rf {project}'",  # a setting's value, with no option before it
        "tmux pasteb -t 0",
        'xyz "' + "a|" * 5000 + 'a"',  # too many commands in one string to judge: held at once
    )
    assert_not_held(
        "git -c protocol.version=2 fetch",
        "git -c protocol.file.allow=always submodule update --init",
        "GIT_ALLOW_PROTOCOL=https:ssh git submodule update --init",
        "git diff HEAD -- 'src/ext::x'",
        "mysql -e 'SELECT \"drop table\" AS x' shop",
        'llm "' + "word " * 3000 + '"',
    )


def test_the_fourth_red_team_routes_are_held(tmp_path: Path) -> None:
    """Fourth red team, 2026-12-04: each deleted a copy of the folder while judged safe or moderate."""
    documents = "/home/ana/Documents"
    (tmp_path / "tidy").symlink_to("/bin/rm")  # made by an earlier command
    for command in (
        f"less $'+!rm -rf {documents}\\n' README",  # a command less runs at start
        f"perl -e 'print `rm -rf {documents}`'",
        f'perl -e \'open my $f, "-|", "rm -rf {documents}"\'',
        f'perl -e \'system "r"."m", "-rf", "{documents}"\'',
        f'node --eval=\'require("fs").rmSync("{documents}",{{recursive:true,force:true}})\'',
        f"echo '!rm -rf {documents}' | ex -s",  # Ex commands typed in
        f'ex -s <<< \'call delete("{documents}","rf")\'',
        f"make -f - <<< $'x:\\n\\trm -rf {documents}'",  # a makefile written in the command
        f"awk -f /dev/stdin <<< 'BEGIN{{system(\"rm -rf {documents}\")}}'",
        f"./tidy -rf {documents}",  # the link's program is rm
    ):
        assert classify(command, cwd=str(tmp_path)).tier is Tier.DESTRUCTIVE, command
    for command in ("less +G log.txt", "make test", "vim notes.md", "node --eval='console.log(1)'",
                    "echo ':wq' | vim -es notes.md"):  # fmt: skip
        assert classify(command, cwd=str(tmp_path)).tier is not Tier.DESTRUCTIVE, command


def test_a_file_given_to_a_program_no_rule_knows_is_not_read_as_a_script(tmp_path: Path) -> None:
    """Editors, linters and copies are given scripts too (review, 2026-12-04: `vim scripts/deploy.sh`
    was held for the `rm -rf build` in it): only an installed program by path is judged."""
    (tmp_path / "deploy.sh").write_text("#!/bin/sh\nrm -rf /home/ana/Documents\n")
    (tmp_path / "deploy.sh").chmod(0o755)
    for command in ("vim deploy.sh", "shellcheck ./deploy.sh", "faketime 0 ./deploy.sh"):
        assert classify(command, cwd=str(tmp_path)).tier is Tier.MODERATE, command
    assert classify("faketime 0 /bin/rm -rf /home/ana/Documents", cwd=str(tmp_path)).tier is Tier.DESTRUCTIVE


def test_a_program_no_rule_knows_given_too_many_commands_to_check_is_held_at_once() -> None:
    """Judging each word as a command again is bounded: too many is "cannot tell", not seconds."""
    for command in ("mytool " + "cat " * 65 + "ls", "mytool " + "nohup mytool " * 40 + "ls",
                    "mytool " + "cat " * 10 + "x " * 5_000):  # fmt: skip
        judged = classify(command, cwd="/home/ana/project")
        assert judged.reasons == ("cannot tell what runs: a program no rule knows is given too many commands to check",)
    assert classify("mytool " + "cat " * 64 + "ls", cwd="/home/ana/project").tier is Tier.MODERATE


def test_what_git_or_less_runs_as_a_shell_command_from_an_option_or_a_variable_is_judged() -> None:
    """Red team, 2026-12-04: each ran `rm -rf` on a real folder while judged safe or moderate."""
    documents = "/home/ana/Documents"
    assert_held(
        f"git ls-remote --upload-pack='rm -rf {documents}; git-upload-pack' .",
        f"git clone -u 'rm -rf {documents}' . copy",
        f"git fetch --upload-pack='rm -rf {documents}' .",
        f"git grep -O'rm -rf {documents};' -e x",
        f"git grep --open-files-in-pager='rm -rf {documents}' -e x",
        f"git rebase -x 'rm -rf {documents}' HEAD~1",
        f"git rebase --exec='rm -rf {documents}' HEAD~1",
        f"git bisect run rm -rf {documents}",
        f"git difftool -y -x 'rm -rf {documents} #' HEAD~1",
        f"git send-email --to-cmd='rm -rf {documents}' x.patch",
        f"GIT_EXTERNAL_DIFF='rm -rf {documents} #' git diff HEAD~1",
        f"LESSOPEN='|rm -rf {documents}; echo %s' less README",
        f"env LESSCLOSE='rm -rf {documents}' less README",
    )
    assert_not_held("git push -u origin main", "git grep -O foo", "git rebase -i HEAD~3", "git bisect run make test",
                    "LESSOPEN='| lesspipe %s' less README", "git ls-remote origin")  # fmt: skip


def assert_held(*commands: str) -> None:
    for command in commands:
        assert classify(command, cwd="/home/ana/project").tier is Tier.DESTRUCTIVE, command


def assert_not_held(*commands: str) -> None:
    for command in commands:
        assert classify(command, cwd="/home/ana/project").tier is not Tier.DESTRUCTIVE, command


def test_what_a_program_no_rule_knows_is_given_in_any_spelling_is_judged() -> None:
    """Second red team, 2026-12-04: each ran `rm -rf` on a real folder while judged moderate."""
    documents = "/home/ana/Documents"
    assert_held(
        f"sg ana \"sg ana 'rm -rf {documents}'\"",  # a program in a string, given the deletion
        f"tmux new -d 'faketime 0 rm -rf {documents}'",
        f"tmux new -d 'rm${{IFS}}-rf${{IFS}}{documents}'",  # bash splits there
        f"tmux -c '{{rm,-rf,{documents}}}'",  # a brace list is three words
        f"scp -o ProxyCommand='rm -rf {documents}' x:y .",  # a setting's value
        f"tmux -c'rm -rf {documents}'",  # joined to its option
        f"tmux split-window -b 'rm -rf {documents}'",  # -b is no message
        f"start-stop-daemon --start --exec=/bin/rm -- -rf {documents}",  # the program after `=`
        "tmux send-keys -t work -H 72 6d 20 2d 72 66 0a",  # typed into a shell, in hexadecimal
        f"tmux send-keys -t work 'rm -rf {documents}' Enter",  # typed into a shell: what it runs
        f"screen -S work -X stuff 'rm -rf {documents}\n'",
        "tmux paste-buffer -t work",
    )
    assert_not_held("mytool 'Fix: rm -rf in the Makefile'", "mytool 'fix: rm -rf in the Makefile'", "tmux ls",
                    "cmake -DCMAKE_BUILD_TYPE=Release ..")  # fmt: skip


def test_more_programs_that_run_or_delete_what_they_are_given_are_judged() -> None:
    """Second red team, 2026-12-04: each ran or deleted while judged moderate."""
    documents = "/home/ana/Documents"
    assert_held(
        f"nix develop -c rm -rf {documents}",
        f"npm explore lodash -- rm -rf {documents}",
        f"cmake -E remove_directory {documents}",
        f"cmake -E rm -rf {documents}",
        f"cmake -E env FOO=1 rm -rf {documents}",
        f"perl -e 'open(F,\"|rm -rf {documents}\")'",
        f"ruby -e 'IO.popen(\"rm -rf {documents}\")'",
        f"php -r 'passthru(\"rm -rf {documents}\");'",
        f"python3 -c 'from os import system as s; s(\"rm -rf {documents}\")'",
        f'node -e \'require("fs")["r"+"mSync"]("{documents}",{{recursive:true}})\'',
        f"tclsh <<< 'file delete -force {documents}'",
        f"parallel ::: 'rm -rf {documents}'",  # no command: each argument is one
        f"ed -s notes.txt <<< '!rm -rf {documents}'",
        "systemd-tmpfiles --user --remove ./agent.conf",  # `R DIR` lines of a file the command wrote
        f"cargo --config \"target.'cfg(all())'.runner=['sh','-c','rm -rf {documents}']\" run",
        f"docker run --rm -v {documents}:/d alpine rm -rf /d",  # the container's command, in the folder mounted
    )
    assert_not_held(
        "parallel echo ::: a b",
        "ed -s notes.txt <<< ',s/a/b/g'",
        "cargo build --release",
        "docker run --rm alpine rm -rf /tmp/x",  # nothing of this machine's is mounted (a project's own
        # folder bound is judged in a real project: tests/test_handoff_review.py)
        "nix develop -c make",
        "cmake -S . -B build",
        "cmake -E make_directory out",
        "cmake -E rm build.ninja",
        'python3 -c \'d = {"a": 1}; print(d["a"] + 1)\'',
        "node -e 'console.log([1, 2].map(x => x + 1))'",
        "python3 -c \"open('/tmp/pytest-of-ana/popen-gw2/notes.txt')\"",  # popen in a path is no call
    )


def test_git_configuration_given_in_the_environment_or_by_an_abbreviated_option_is_judged() -> None:
    """Second red team, 2026-12-04: each ran `rm -rf` on a real folder while judged safe or moderate."""
    documents = "/home/ana/Documents"
    assert_held(
        f"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='rm -rf {documents}; false' git status",
        f"GIT_CONFIG_PARAMETERS=\"'core.fsmonitor'='rm -rf {documents}'\" git status",
        "export GIT_CONFIG_PARAMETERS=x; git status",
        "env GIT_CONFIG_GLOBAL=/tmp/agent.gitconfig git status",  # a file the agent may have written
        f"git -c core.fsmonitor='rm -rf {documents}' status",
        f"git ls-remote --upload-p='rm -rf {documents}; git-upload-pack' .",  # any unambiguous prefix
        f"git rebase --exe='rm -rf {documents}' HEAD~1",
        f"git submodule foreach rm -rf {documents}",  # unquoted: its `-rf` was dropped as an option
        f"fd . {documents} --exec-batch=rm -rf",
        f"dc -e '!rm -rf {documents}'",
    )
    # What `git -c` runs is judged where it is written (it was "cannot tell" whatever it was).
    assert_not_held("git -c core.pager=cat log", "git -c core.editor=vim commit", "git submodule foreach git pull",
                    "GIT_DIR=.git git status", "dc -e '2 3 + p'")  # fmt: skip


def test_sorts_compression_program_and_files_compiled_magic_are_not_read_only() -> None:
    """A review, 2026-12-05: without a container, the read-only tool ran these as proven read-only:
    sort ran the lines it sorted as shell code (`--compress-program=sh`), and `file -C` wrote x.mgc."""
    for command in (
        "yes 'touch pwned; exit 0' | head -n 100000 | sort -S 1K --compress-program=sh > /dev/null",
        "sort -S 1K --compress-prog=python3 x",
        "sort --compress-program=gzip x",
        "file -C -m magic",
        "file --compile -m magic",
        "file -bC x",
    ):
        assert classify(command, cwd="/tmp").tier is not Tier.SAFE, command
    assert_held("sort -S 1K --compress-program='rm -rf /home/ana/Documents' x")
    assert classify("sort -k2 x | file -b -", cwd="/tmp").tier is Tier.SAFE, "sorting and looking stay read-only"


def test_an_option_whose_value_a_program_runs_as_a_shell_command_is_judged_as_that_code() -> None:
    """Red team, 2026-12-04: each ran (or would run) `rm -rf` while judged safe or moderate."""
    documents = "/home/ana/Documents"
    assert_held(
        f"tar -cf /dev/null --checkpoint=1 --checkpoint-action=exec='rm -rf {documents}' .",
        f"tar -xf x.tar --to-command='rm -rf {documents}'",
        f"tar -cf x.tar -I 'rm -rf {documents};' f",
        f"zip -r x.zip . -T -TT 'rm -rf {documents};'",
        f"gdb -batch -ex 'shell rm -rf {documents}'",
        f"gdb -batch -ex '!rm -rf {documents}'",
        f"strace -o '|rm -rf {documents}' true",
        f"man -P 'rm -rf {documents}; cat' ls",
        f"man -P'rm -rf {documents}' ls",
        f"rg --pre rm '' {documents}",  # rm on every file it searches
        f"bat --pager='rm -rf {documents}' notes.md",
        f"rsync -e 'sh -c \"rm -rf {documents}\"' f host:y",
        f"hyperfine --prepare='rm -rf {documents}' true",
        'gdb -batch -ex "$X"',
        f"vim -es -c '!rm -rf {documents}' -c q",  # an Ex command the shell runs
        f"vi -es '+!rm -rf {documents}' +q",
        f"nvim --headless -c 'silent !rm -rf {documents}' -c q",
        # Second red team: as getopt reads options (a prefix, a cluster), and more of each program.
        f"tar -cf /dev/null --checkpoint=1 --checkpoint-act=exec='rm -rf {documents}' .",
        f"tar -xf x.tar --to-com='rm -rf {documents}'",
        f"tar -cvI 'rm -rf {documents} #' -f x.tar f",
        f"zip -T --unzip-comm='rm -rf {documents}' x.zip y",
        f"rsync -ae 'rm -rf {documents} #' x: y",
        f"gdb -batch -eval-command='shell rm -rf {documents}'",
        f"gdb -batch --ex='shell rm -rf {documents}'",
        f"gdb -batch -ex 'python import shutil; shutil.rmtree(\"{documents}\")'",
        f"gdb -batch -ex 'pipe echo | rm -rf {documents}'",
        f"vim -es -c '%!rm -rf {documents}'",
        f"vim -es -c 'call system(\"rm -rf {documents}\")'",
        f"vimdiff -c '!rm -rf {documents}' a b",
        f"apt-get -o APT::Update::Pre-Invoke::='rm -rf {documents}' update",
        f"dpkg --pre-invoke='rm -rf {documents}' -i x.deb",
    )
    assert_not_held("tar -I zstd -cf x.tar.zst src", "gdb -batch -ex bt ./a.out", "strace -o trace.txt ls",
                    "man -P cat ls", "rg --pre pdftotext foo docs", "rsync -a -e 'ssh -p 2222' src/ host:dst",
                    "bat --pager=less notes.md", "vim +10 notes.md", "vim +'%s/a/b/g' +wq notes.md",
                    "tar -xzf x.tgz -C out", "tar --checkpoint=100 -cf x.tar src", "rsync -av --exclude=dist src/ dst/",
                    "gdb -ex run --args /bin/true", "vim -c 'normal gg=G' -c wq notes.md", "strace -fo trace.txt ls",
                    "apt-get -o Dpkg::Options::=--force-confold install git")  # fmt: skip


def test_a_recursive_removal_outside_the_working_folder_carries_no_rule_kind() -> None:
    for command in ("rm -rf ../other", "rm -rf /", "rm -rf .", "rm -rf *", 'rm -rf "$dir"', "sudo rm -rf build",
                    "rm -rf build/"):  # fmt: skip
        result = classify(command, cwd="/home/ana/project")
        assert result.tier is Tier.DESTRUCTIVE, command
        assert not all(f.kind == DELETE_RECURSIVE for f in result.findings), command


def test_what_sudo_or_run0_deletes_in_the_folder_it_is_told_to_run_in_is_said_there() -> None:
    for command in ("sudo -D /srv rm -rf data", "sudo -D/srv rm -rf data", "sudo --chdir=/srv rm -rf data",
                    "sudo --chdir /srv -u bob rm -rf data", "run0 --chdir=/srv rm -rf data"):  # fmt: skip
        judged = classify(command, cwd="/home/ana/project")
        assert "Deletes the folder /srv/data and everything in it" in judged.plain, (command, judged.plain)
    judged = classify("sudo rm -rf data", cwd="/home/ana/project")
    assert "Deletes the folder /home/ana/project/data and everything in it" in judged.plain


def test_plain_words_for_a_force_push_and_for_sudo() -> None:
    assert classify("git push --force origin main").plain == ("Rewrites the history of origin/main",)
    assert classify("git push origin +feature").plain == ("Rewrites the history of origin/feature",)
    assert "Runs as administrator" in classify("sudo apt-get install x").plain
    assert "Runs as another user" in classify("sudo -u bob ls").plain


def test_every_destructive_corpus_command_has_plain_words_without_program_jargon() -> None:
    for command, tier, _ in ROWS:
        if tier is Tier.DESTRUCTIVE:
            result = classify(command, protected_paths=PROTECTED)
            assert result.plain and all(words[:1].isupper() for words in result.plain), (command, result.plain)


def test_plain_words_say_when_the_name_is_known_only_when_it_runs_or_is_a_pattern() -> None:
    assert (
        'Deletes "$dir" (a name known only when it runs) and everything in it'
        in classify('rm -rf "$dir"', cwd="/home/ana/project").plain
    )
    assert classify("rm -rf build/*", cwd="/home/ana/project").plain == (
        "Deletes everything matching /home/ana/project/build/*, folders and all they hold",
    )
    assert classify("rm -rf").plain == ("Deletes folders and everything in them",)


# ---- branches whose tier alone does not show what they decide: the reasons and plain words do


def test_a_name_bash_reads_as_a_control_character_is_named_as_bash_reads_it() -> None:
    # $'\cA' is Ctrl-A: the program bash looks for is "to\x01ol", not "tool" nor "to\cAol"
    assert classify("$'to\\cAol' --go").reasons == ("to\x01ol: not known to be read-only",)


def test_a_whitespace_only_quoted_name_is_that_file_not_an_empty_word() -> None:
    result = classify('rm -f " "', cwd="/home/ana/project")
    assert result.tier is Tier.MODERATE
    assert "Deletes the file /home/ana/project/ " in result.plain


def test_deleting_a_pattern_in_the_home_folder_is_not_said_as_the_whole_home_folder() -> None:
    result = classify("rm -rf ~/*.log")
    assert result.tier is Tier.DESTRUCTIVE
    assert result.plain == (f"Deletes everything matching {HOME}/*.log, folders and all they hold",)


def test_the_root_or_an_empty_path_given_as_protected_is_ignored_not_everything_held() -> None:
    assert classify("ls /usr", protected_paths=["/", ""]).tier is Tier.SAFE
    assert classify("ls /srv/cowork-data", protected_paths=["/", "/srv/cowork-data"]).tier is Tier.DESTRUCTIVE


def test_a_command_nested_past_the_depth_limit_asks_and_says_why() -> None:
    """Subshells deepen the tree and each wrapper one more level: past the limit it is not guessed."""
    assert classify("( " * 280 + "nohup " * 5 + "ls" + " )" * 280).tier is Tier.SAFE
    result = classify("( " * 280 + "nohup " * 30 + "ls" + " )" * 280)
    assert result.tier is Tier.DESTRUCTIVE
    assert result.reasons == ("cannot tell what runs: the command is too deeply nested to check",)


def test_what_su_runs_is_judged_besides_running_as_another_user() -> None:
    su = "su: runs as another user"
    assert classify("su --command='rm -rf build'").reasons == (su, "rm -r: recursive removal")
    assert classify("su --command='ls'").reasons == (su,)


def test_crontab_judges_its_jobs_but_not_comment_or_variable_lines() -> None:
    handoff = "crontab: starts a program outside Cowork Terminal's watch"
    # a job commented out, and a variable whose value, read as a command, would not even parse
    quiet = classify("""crontab <<< $'# 0 3 * * * rm -rf ~\\nGREETING="good night"\\n0 3 * * * ls'""")
    assert quiet.reasons == (handoff,)
    assert classify("crontab <<< $'PATH=/usr/bin\\n0 3 * * * rm -rf build'").reasons == (
        handoff,
        "rm -r: recursive removal",
    )


def _said(reasons: tuple[str, ...], pattern: str, *, only: bool = False) -> bool:
    """`pattern` (`*` for a path, which a reason cuts to 60 characters) is among `reasons`, or all of them."""
    matched = [r for r in reasons if fnmatch.fnmatchcase(r, pattern)]
    return bool(matched) and (not only or len(matched) == len(reasons))


@pytest.mark.parametrize(
    ("program", "reason"),
    [
        ("import os\nos.system('make')\n", "cannot tell what runs: {path} starts other programs"),
        (
            "import importlib\nmod = importlib.import_module('os')\n",
            "cannot tell what runs: {path} calls functions by names made when it runs",
        ),
        (
            "import pyautogui\npyautogui.press('enter')\n",
            "python3 {path}: sends keys, clicks or window changes to other programs",
        ),
        ("db = open('/srv/cowork-data/journal.sqlite3')\n", classifier.TOUCHES_APP_DATA),
        ("from app.cli.main import main\nmain(['approve', '1'])\n", classifier.RUNS_ITSELF),
    ],
)
def test_a_python_program_file_is_held_for_what_its_code_names(tmp_path: Path, program: str, reason: str) -> None:
    (tmp_path / "job.py").write_text(program)
    result = classify("python3 job.py", cwd=str(tmp_path), protected_paths=["/srv/cowork-data"])
    assert result.tier is Tier.DESTRUCTIVE
    assert _said(result.reasons, reason.format(path="*")), result.reasons


def test_a_script_that_is_not_text_or_has_an_unreadable_first_line_is_held(tmp_path: Path) -> None:
    (tmp_path / "latin1.sh").write_bytes(b"echo caf\xe9\n")
    result = classify("bash latin1.sh", cwd=str(tmp_path))
    assert _said(result.reasons, "cannot tell what runs: the script * is not text", only=True)
    (tmp_path / "blank").write_text("#!   \n")
    (tmp_path / "blank").chmod(0o755)
    result = classify("./blank", cwd=str(tmp_path))
    assert result.tier is Tier.DESTRUCTIVE
    assert _said(
        result.reasons, "cannot tell what runs: the script * starts with a #! line that cannot be read", only=True
    )


def test_a_script_that_fails_when_read_is_held(tmp_path: Path) -> None:
    # A link to this process's memory opens as a regular file, and reading it fails (EIO at 0).
    (tmp_path / "mem.sh").symlink_to("/proc/self/mem")
    result = classify("bash mem.sh", cwd=str(tmp_path))
    assert result.tier is Tier.DESTRUCTIVE
    assert _said(result.reasons, "cannot tell what runs: the script * cannot be read here", only=True)


def test_only_a_bare_interpreter_in_the_session_reads_typed_lines_as_its_code() -> None:
    for bare in ("python3", "python3 -u", "node -i", "irb"):
        assert classifier.repl_program(bare) == bare.split()[0], bare
    for other in (None, "", "   ", "'unclosed", "python3 job.py", "python3 -m http.server", "less notes.txt", "bash"):
        assert classifier.repl_program(other) is None, other


def test_typed_input_the_classifier_fails_on_asks_instead_of_passing() -> None:
    # A wrapper chain this long recurses past Python's limit before the depth guard: caught, held.
    result = classifier.classify_typed("!" + "nohup " * 400 + "ls", "ipython")
    assert result.tier is Tier.DESTRUCTIVE
    assert result.reasons[0].startswith("cannot tell what runs:"), result.reasons


def test_typed_ipython_lines_are_python_and_its_bang_lines_are_shell_commands() -> None:
    assert classifier.classify_typed("x = 1\nprint(x)", "ipython").reasons == ("python: runs inline code",)
    held = classifier.classify_typed("x = 1\n!rm -rf build\nprint(x)", "ipython")
    assert held.tier is Tier.DESTRUCTIVE and "rm -r: recursive removal" in held.reasons


def test_the_fifth_red_team_routes_are_held() -> None:
    """Fifth red team, 2026-12-04: each deleted or overwrote files while judged safe or moderate
    (each run for real on a scratch copy; the deletions also through a server in
    test_hidden_deletions.py)."""
    documents = "/home/ana/Documents"
    assert_held(
        f"PS4='$(rm -rf {documents})'; set -x; ls",  # safe
        f"PS0='$(rm -rf {documents})' bash -i <<< ls",
        f"x='a[$(rm -rf {documents})]'; echo $((x))",
        f"x='$(rm -rf {documents})'; echo \"${{x@P}}\"",
        f"let 'a[$(rm -rf {documents})]'",
        f"compgen -W '$(rm -rf {documents})'",
        f"env 'BASH_FUNC_ls%%=() {{ rm -rf {documents}; }}' bash -c ls",
        f"echo rm -rf {documents} | xargs env",
        f"echo rm -rf {documents} | xargs timeout 9",
        f"echo 'rm -rf {documents}' | xargs -I{{}} sh -c '{{}}'",
        "find . -name x -exec {} \\;",
        f"readarray -C eval -c 1 a <<< ';rm -rf {documents}'",
        f"find {documents} -type f -exec unlink {{}} \\;",
        f"ls -d {documents}/* | xargs -n1 unlink",
        f"find {documents} -type f -exec truncate -s0 {{}} +",
        f"git checkout HEAD {documents}",
        "git checkout --ours docs",
        "git checkout-index -f -a",
        "git read-tree -u --reset HEAD",
        "git reset --merge",
        "git -c clean.requireForce=false clean -dx",
        "git update-ref -d refs/heads/main",
        f"python3 -m timeit -n1 -r1 'import os; os.system(\"rm -rf {documents}\")'",
        f"python3 -m venv --clear --without-pip {documents}",
        f"printf 'import shutil\\nshutil.rmtree(\"{documents}\")\\n' > x.py; python3 -m x",
        f"printf 'all:\\n\\trm -rf {documents}\\n' > Makefile; make",
        f'echo \'{{"scripts":{{"x":"rm -rf {documents}"}}}}\' > package.json && npm run x',
        f"printf 'rm -rf {documents}' > x.cmake; cmake -P x.cmake",
        f"mkdir -p d && printf '#!/bin/sh\\nrm -rf {documents}\\n' > d/x && run-parts d",
        f"sqlite3 x.db \"select edit('x','rm -rf {documents}')\"",
        'sqlite3 x.db "select edit(body) from notes"',
        f'sqlite3 x.db ".shell $(echo rm) -rf {documents}"',
        f"echo '[core] fsmonitor = rm -rf {documents}' >> .git/config; git status",
        "cp hook .git/hooks/post-checkout",
        "echo '[alias] st = !rm -rf x' >> ~/.gitconfig",
        f"make .SHELLFLAGS='-c \"rm -rf {documents}\" #'",
        f"npm pkg set scripts.x='rm -rf {documents}'",
    )
    assert_not_held(
        "PS1='\\u@\\h $(git branch --show-current) $ '",
        "x='$(date)'; echo $x",
        "git checkout main",
        "git checkout -b feature origin/feature",
        "git clean -n",
        "git diff --output-indicator-new=+",
        "ls | xargs wc -l",
        "ls | xargs -I{} mv {} {}.bak",
        't=$(mktemp); make > "$t" 2>&1; rm -f "$t"',
        'npm test > "$LOG" 2>&1',
        "python3 -m venv .venv",
        "python3 -m http.server 8000",
        "sed -n '/url/p' .git/config",
        "truncate -s 0 build.log",
        'sqlite3 "$DB" .tables',
        "mapfile -t lines < notes.txt",
        "npm pkg set name=tool",
        "run-parts --test /etc/cron.daily",
    )
    not_safe = ["yq -yi '.a = 1' config.yaml", "xxd in.bin out.hex", "git diff --output=patch.diff",
                "git log --output notes.txt"]  # fmt: skip
    for command in not_safe:  # each overwrote a file while judged safe
        assert classify(command, cwd="/home/ana/project").tier is Tier.MODERATE, command


def test_the_review_of_the_fifth_red_teams_fixes() -> None:
    """Review, 2026-12-04: everyday commands the first fixes held, and routes around them."""
    assert_not_held(
        "git diff package.json && npm install",  # a file it names is not one it writes
        "git log --oneline -- Makefile && make",
        "git add package.json package-lock.json && git commit -m deps && npm ci",
        "cp package.json /tmp/package.json.bak && npm install",
        "git add main.py && python3 -m main",
        "PS1='\\u@\\h:\\w$(__git_ps1 \" (%s)\")\\$ '",
        "printf 'Run `rm -rf build` to clean\\n' >> README.md",
        "MSG='Cleanup: `rm -rf dist`'; git commit -m \"$MSG\"",
        "read -p 'Run `rm -rf build` now? ' ok",
        "ls *.py | xargs -I{} python3 -m py_compile {}",
        "find . -print0 | xargs -0 -I{} sh -c 'wc -l \"$1\"' _ {}",
        "ls | xargs -I{} grep -e {} notes.txt",
        "emacs -batch -l ert -f ert-run-tests-batch-and-exit",
        "cp .git/config /tmp/git-config.bak",
        "touch .git/config.lock",
    )
    documents = "/home/ana/Documents"
    assert_held(
        "echo c | git clean -fdi",  # the answer is the agent's
        f"echo 'rm -rf {documents}' | xargs -I{{}} env sh -c {{}}",
        f"echo 'rm -rf {documents}' | xargs -I{{}} nice sh -c {{}}",
        f"echo 'rm -rf {documents}' | xargs xargs",
        f"echo 'rm -rf {documents}' | xargs watch",
        "find . -exec sh -c 'echo {}' \\;",  # a file's name is code
        "cp hook .git/hooks/ && git commit -m x",
        "mv hook .git/hooks",
        "cp -t .git/hooks hook",
        "sort -o .git/config settings.txt",
        "xxd -r hook.hex .git/hooks/pre-commit",
        "git diff --output=.git/hooks/pre-push",
        "echo '[core] fsmonitor = x' > .git/modules/sub/config",
        f"readarray -tC eval -c 1 a <<< ';rm -rf {documents}'",
        f"x='$(rm -rf {documents})'; echo \"${{x@P}}\"",
        f"x='a[`rm -rf {documents}`]'; echo $((x))",
    )
    assert classify("sed -if d main.py", cwd="/home/ana/project").tier is Tier.MODERATE, "-i with the suffix f"


def test_the_fifth_red_teams_second_pass_is_held() -> None:
    """Second red-team pass on the fifth's fixes, 2026-12-04: each deleted Documents (or overwrote
    files, or dropped a table) in a sandbox while judged safe or moderate."""
    documents = "/home/ana/Documents"
    assert_held(
        f"echo rm -rf {documents} | xargs -0 awk",  # the program is the words read
        "ls | xargs -0 -I{} sed -n {} notes.txt",
        f"mapfile -tC eval -c1 a <<< ';rm -rf {documents}'",
        "find . -exec sh -c {} \\;",
        f"echo 'rm -rf {documents}' | xargs -I% env sh -c %",
        "git reset --har",
        "git reset --mer",
        "git checkout-index --al --forc",
        "git read-tree --rese -u HEAD",
        "git init --template=tpl",
        "git clone --template=tpl https://example.com/r.git",
        "printf c | git clean -di",
        "sqlite3 :memory: '.op -new Documents/a.txt'",
        "sqlite3 db '.rest backup.db'",
        "psql -c \"DO $$ BEGIN EXECUTE 'DROP TABLE t'; END $$\"",
        "echo x | xargs -0 sqlite3 db",
        "PSQLRC=rc psql",
        "LESSKEYIN=k less notes.txt",
        "NODE_OPTIONS='--require ./x.js' node app.js",
        f"make 'x!=rm -rf {documents}'",
        f"make '.SHELLFLAGS:=-c \"rm -rf {documents}\" #'",
        "make -f <(printf 'all:\\n\\trm -rf x\\n')",
        f'npm pkg set --json \'scripts={{"x": "rm -rf {documents}"}}\'',
        f"VIMINIT='!rm -rf {documents}' vim",
        f"TAR_OPTIONS='--checkpoint-action=exec=\"rm -rf {documents}\"' tar cf a.tar .",
        "BASH_ENV=x.sh bash -c true",
        "env -C sub BASH_ENV=x.sh bash -c :",  # read where each bash starts
        "read PS4 <<< '$(rm -rf /home/ana/Documents)'; set -x; :",
        "printf -v BASH_ENV %s sub/x.sh; bash -c :",
        "less --lesskey-src=keys notes.txt",
        "less -k keys notes.txt",
    )
    assert_not_held(
        "GIT_SSH=ssh git fetch",
        "LESS=-R less notes.txt",
        "NODE_OPTIONS=--max-old-space-size=4096 npm test",
        "export PATH=$HOME/.local/bin:$PATH",
        "PATH=/usr/local/bin:$PATH make",
        "make CFLAGS=-O2",
        "make -j4 all",
        "git checkout main",
        "git reset --soft HEAD~1",
        "sqlite3 db .tables",
        "find . -name '*.db' -exec sqlite3 {} .tables \\;",
        "read -r name <<< hi",
        "printf -v out '%s' hi",
        "mapfile -t lines < notes.txt",
        "less -R notes.txt",
        "read -r name <<< hi",
        "printf -v out '%s' hi",
        "mapfile -t lines < notes.txt",
        "less -R notes.txt",
    )


def test_the_third_review_of_this_sittings_classifier_changes() -> None:
    """Review, 2026-12-04: three commands its fixes let by, and everyday ones they held."""
    assert_held(
        'awk \'BEGIN{print "a\\"" | "sh"}\'',  # an escaped quote in the printed string
        "ctest --test-command rm -rf /home/ana/Documents",
        "git clean -fdx -e --dry",  # `--dry` is -e's value: it deletes
        "git checkout '*.py'",
        "echo x | xargs -I% sed % main.py",
        "echo x | xargs -I{} sqlite3 db {}",
    )
    assert_not_held(
        "env PATH=/usr/bin:/bin make",
        "export PATH=./node_modules/.bin:$PATH",
        "PATH+=:/opt/bin",
        "git commit --template .gitmessage",
        "java -jar app.jar --source x",
        "scp -F /dev/null notes.txt host:notes.txt",
        "sftp -F none host",
        "make .SHELLFLAGS=-ec",
        'make -f "$HOME/Makefile"',
        "PSQLRC=/dev/null psql -c 'select 1'",
        "NODE_OPTIONS='--import tsx' npm test",
        "printf -v IFS '\\t'",
        "sqlite3 db \"select * from log where msg like '%execute%drop table%'\"",
        "vim -c 'set rtp?'",
    )


def test_git_checkout_of_a_name_that_is_a_branch_and_a_file_switches_branch(tmp_path: Path) -> None:
    """`git checkout main` beside a built ./main: git switches branch (review, 2026-12-04)."""
    (tmp_path / ".git" / "refs" / "heads").mkdir(parents=True)
    (tmp_path / ".git" / "refs" / "heads" / "main").write_text("0" * 40 + "\n")
    (tmp_path / ".git" / "packed-refs").write_text("# pack-refs\n" + "1" * 40 + " refs/remotes/origin/docs\n")
    for name in ("main", "docs", "src"):
        (tmp_path / name).mkdir()
    cwd = str(tmp_path)
    assert classify("git checkout main", cwd=cwd).tier is Tier.MODERATE
    assert classify("git checkout docs", cwd=cwd).tier is Tier.MODERATE
    assert classify("git checkout src", cwd=cwd).tier is Tier.DESTRUCTIVE, "a folder, not a branch: its changes go"


def test_the_final_review_of_the_sitting() -> None:
    """Final review, 2026-12-04: everyday commands this sitting's checks had held, and one crash."""
    assert_not_held(
        "find . -name '*.md' | xargs -I{} sed -n '1,3p' {}",  # {} is the file, not sed's script
        "ls *.txt | xargs -I{} sed -i 's/a/b/' {}",
        "ls db/*.db | xargs -I{} sqlite3 {} .tables",
        "xargs -I{} psql -d {} -c 'select 1' < names.txt",
        "git clean --dry -d",
        "git clean -d --dry-r",
        "printf -v EDITOR '%s' vim",
        "git init --template=",
        "git checkout-index -f -a --prefix=export/",
    )
    assert_held(
        "echo x | xargs -I{} sed {} notes.txt",
        "echo x | xargs -I{} sqlite3 db {}",
        "git clean -f -e --dry",
        "printf -v PS1 '$(rm -rf /home/ana/Documents)'",
    )
    crashed = classify("ssh -o 'ProxyCommand   ' host", cwd="/home/ana/project")
    assert not any("classifier failed" in reason for reason in crashed.reasons), crashed


def test_a_write_into_the_systems_own_files_waits() -> None:
    """Controls red team, 2026-12-04: an app run as root gave a command /etc and /proc/sys:
    `/etc/ld.so.preload` ran code in the next bwrap, `kernel.core_pattern` at the next crash."""
    assert_held(
        "echo '|/tmp/x %e' > /proc/sys/kernel/core_pattern",
        "echo /tmp/x.so > /etc/ld.so.preload",
        "echo 'echo hi' >> /etc/bash.bashrc",
        "cp tool /usr/local/bin/",
    )
    assert_not_held("echo hi > /tmp/notes.txt", "echo hi > out.txt")
    assert classify("echo x > src/config.py", cwd="/usr/src/app").tier is not Tier.DESTRUCTIVE, "a project in /usr/src"


def test_a_bare_repositorys_settings_and_hooks_are_held_like_dot_gits() -> None:
    """Red team, 2026-12-04: `core.fsmonitor` appended to `D/evil.git/config` was moderate, and
    `GIT_DIR=D/evil.git git status` then ran it; only `.git/config` was matched."""
    assert_held(
        "printf '[core]\\n\\tfsmonitor = rm -rf /home/ana/Documents\\n' >> /tmp/D/evil.git/config",
        'echo "[core] fsmonitor = x" > "$D/evil.git/config"',
        "cp hook repo.git/hooks/post-checkout",
        "cp -t /srv/git/site.git/hooks post-receive",
        "echo '[core] fsmonitor = x' > repo.git/modules/sub/config",
    )
    assert_not_held(
        "git init --bare /tmp/x.git",
        "git clone --bare https://example.com/x.git /tmp/x.git",
        "cat repo.git/config",
        "cp repo.git/config /tmp/config.bak",
        "echo notes > notes.git",
        "echo x > site.git/description",
    )


def test_writing_claude_codes_settings_is_held() -> None:
    """Red team, 2026-12-04: Claude Code runs the hooks and MCP servers of `.claude/settings.json`,
    `.claude/settings.local.json` and `.mcp.json` at its next start, outside any container; writing
    them (`mkdir -p .claude && printf '{"hooks":...}' > .claude/settings.local.json`) was moderate."""
    assert_held(
        "mkdir -p .claude && printf '{\"hooks\":{}}' > .claude/settings.local.json",
        "echo '{}' > .claude/settings.json",
        "echo '{}' > /tmp/D/sub/.claude/settings.json",
        "echo '{\"mcpServers\":{}}' > .mcp.json",
        "jq '.x=1' .mcp.json > t && mv t .mcp.json",
        "sed -i 's/a/b/' .claude/settings.json",
        "cp settings.json .claude/",
        "cp claude.json ~/.claude.json",
        "tee ~/.claude/settings.json < x",
        "cp fmt.sh .claude/hooks/format.sh",  # a hook script the settings may name
    )
    said = classify("echo '{}' > .mcp.json", cwd="/home/ana/project").plain
    assert said == ("Changes .mcp.json, which Claude Code reads to run programs",)
    assert_not_held(
        "cat .claude/settings.json",
        "jq . .mcp.json",
        "cp .mcp.json /tmp/mcp.json.bak",
        "echo x > .claude/commands/review.md",
        "cat .claude/hooks/format.sh",
        "git diff .claude/settings.json",
        "mkdir -p .claude",
    )


def test_aliases_turned_on_and_used_are_held() -> None:
    """Red team, 2026-12-04: `shopt -s expand_aliases`, `alias zap=rm`, `zap -rf D/v5` in one command
    deleted v5 unheld, and so did `zap -rf D/v1` in a later call of the session after the first two
    (each call is judged alone). Turning aliases on is held; a name an alias of the same command
    gave is judged as the alias's value with the words it is given."""
    documents = "/home/ana/Documents"
    assert_held(
        f"shopt -s expand_aliases\nalias zap=rm\nzap -rf {documents}",
        "shopt -s expand_aliases; alias zap=rm",
        "shopt -s expand_aliases",
        "shopt -qs expand_aliases",
        "shopt -s extglob expand_aliases",
        'shopt -s "$opt"',
        "shopt -so posix",
        "set -o posix",
        "set -eo posix",
        "POSIXLY_CORRECT=1",
        "export POSIXLY_CORRECT=y",
        "exec bash -O expand_aliases",
        "bash --posix",
        f"alias zap=rm\nzap -rf {documents}",  # aliases may be on already (an approved call)
        f"bash -i -c 'alias zap=rm\nzap -rf {documents}'",
        f"sh -c 'alias zap=rm\nzap -rf {documents}'",  # dash expands aliases in scripts
        f"alias s='sudo ' z=rm\ns z -rf {documents}",  # a value ending in a space: the next word too
        f"alias zap='command rm'\nzap -rf {documents}",
    )
    verdict = classify(f"alias zap=rm\nzap -rf {documents}", cwd="/home/ana/project")
    assert verdict.plain == (f"Deletes the folder {documents} and everything in it",)
    said = classify("shopt -s expand_aliases", cwd="/home/ana/project").plain
    assert said == (
        "Cowork Terminal cannot tell what this command would do (shopt turns on aliases, so a later command's "
        "name may run another command)",
    )
    assert_not_held(
        "alias ll='ls -l'",
        "alias ll='ls -l'; ll",
        "alias rm='rm -i'; rm notes.txt",
        "alias a=b b=a; a x",  # each is expanded once
        "shopt -s nullglob globstar",
        "shopt -u expand_aliases",
        "shopt expand_aliases",
        "shopt -p",
        "set -euo pipefail",
        "set -o vi",
        "set -o",
        "set -- -o posix",
        "POSIXLY_CORRECT=1 df -h",
        "env POSIXLY_CORRECT=1 ls",
        "bash -O extglob -c 'ls'",
        "bash -o pipefail -c 'ls'",
        "git status",
    )


def test_tmux_or_screen_asked_to_start_a_program_is_held_and_looking_at_them_is_not() -> None:
    """The server a tmux command asks may be the user's own, outside the container: what it starts
    runs there (red team, 2026-12-04: `tmux new-window -d 'cd; echo ... >> .bashrc'` wrote ~/.bashrc,
    which the container keeps read-only for the command itself)."""
    for command in ("tmux new-window -d 'cd; echo x >> .bashrc'", "tmux new -d -s dev 'npm run dev'", "tmux",
                    "tmux split-window 'make'", "tmux run-shell 'touch x'", "screen -dmS x sleep 9", "tmux new -s work",
                    "tmux send-keys -t dev 'npm test' Enter", "screen -S work -X stuff 'make test^M'",
                    # a format's #(command) and a hook run in the server too (a review, 2026-12-04)
                    "tmux display-message -p '#(touch x)'", "tmux set-hook -g alert-bell 'run-shell x'",
                    "tmux set -g default-command 'x'", "tmux -f ./t.conf start-server",
                    "tmux bind-key x run-shell id", "tmux set-environment -g LD_PRELOAD /x.so", "screen id",
                    "screen -c ./s.rc"):  # fmt: skip
        result = classify(command, cwd="/home/ana/project")
        assert result.tier is Tier.DESTRUCTIVE and result.danger is Danger.OUTSIDE_WATCH, command
    for command in ("tmux ls", "tmux capture-pane -p -t dev", "tmux kill-session -t dev", "screen -ls",
                    "tmux -V", "tmux attach -t new", "tmux capture-pane -pt run", "screen -r dev",
                    "screen -S dev -X quit"):  # fmt: skip
        assert classify(command, cwd="/home/ana/project").tier is not Tier.DESTRUCTIVE, command
