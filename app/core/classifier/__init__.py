"""Sorts a bash command into safe, moderate or destructive before it runs, reading it as bash would.

This is a guard against accidents, not a sandbox. It catches the commands a well-meaning model might
run by mistake (`rm -rf` on the wrong folder, a force push, `sudo`, a disk tool) and the usual ways
such a command hides inside a longer line, so that the user is asked first. It cannot stop a
program that means harm: a command that is allowed runs with the user's full powers, and a script,
a Makefile or a Python program that it starts can do anything the user can.

How it reads a command. bash is parsed with tree-sitter-bash, not regular expressions. Every simple
command is found wherever bash would run it (lists, pipelines, newlines, subshells, braces, `if`/
`for`/`while`/`case` bodies, function bodies, `$(...)`, backticks, `<(...)`/`>(...)`). Its name is
unquoted the way bash does it (`'r''m'`, `\\rm`, `"rm"`, `$'\\x72m'`, `/bin/rm`), and wrappers are
peeled off (`env`, `command`, `builtin`, `exec`, `nohup`, `time`, `nice`, `timeout`, `stdbuf`,
`xargs`, `sudo`...). Strings that will run as code are parsed again: `sh -c`, `bash -c`, `eval`,
`su -c`, `ssh host CMD`, `watch`, `trap`, `alias` (and its name used later in the command), a git
alias, a crontab or `at` job, and a heredoc or here-string fed to a shell. Where the command that
would run cannot be known (a parse error, `eval "$x"`, `$cmd` as a command name, `curl ... | sh`,
aliases turned on for later calls by `shopt -s expand_aliases` or POSIX mode), the result is
destructive, with a reason that says so: asking is the safe side.

Why tree-sitter-bash rather than bashlex (both are on PyPI):
- coverage: bashlex (last release 0.18, January 2023) raises on `case`, `$((...))`, `[[ ... ]]`,
  `select`, `coproc`, arrays and `time`, and on a heredoc with a quoted delimiter (`<<'EOF'`), all
  common in what a model writes; each would land in "cannot tell" and ask the user for nothing.
  tree-sitter-bash (0.25, maintained by the tree-sitter organisation) parses all of them.
- wheels: tree-sitter and tree-sitter-bash ship binary wheels for Linux (x86-64, aarch64), macOS
  (x86-64, arm64) and Windows (x86-64, arm64); the grammar wheel is abi3, so a new Python needs nothing.
- import cost, measured with `python -X importtime` on the project's machine: tree_sitter +
  tree_sitter_bash 9-17 ms (about 12 ms including building the parser); bashlex 117-140 ms. The import
  happens inside the first `classify` call, not at module import, so `serve` pays it only when a
  command arrives; one parser per thread, because a tree-sitter parser must not be shared.
- its quirks: it is error-tolerant (it never raises; it marks ERROR nodes), so any error in the tree
  makes the command destructive ("does not parse"). It splits a word at a backslash-newline and
  reads `> f 0>&1` as `> f 0` + `>&1`; both are put back the way bash reads them.

Tier decisions the issue left open, in short (tests/data/command_tiers.tsv has the full record):
- safe: reads only (ls, cat, grep -r, git status/log/diff, find without actions, man dd, `--help`).
- moderate: changes state in a routine, mostly recoverable way: installs, `git commit`, `git push`
  without force, `git rebase` and `commit --amend` (local; the reflog keeps the old commits),
  `rm` of named files without -r/-f, mv, cp, redirections into files, unknown programs, `make`, and
  a script named as the program's argument (`bash x.sh`, `source x`, `python3 x.py`, `./x.sh`) whose
  content, read from the command's folder, says nothing worse (`scripts`); one that cannot be read
  or judged is destructive. Input typed into the session is judged as its program's language
  (`classify_typed`).
- destructive beyond the issue's list: `rm` via `xargs` or `find -exec` (bulk removal), `rm` whose
  options may come from an expansion (`rm "$f"`, but not `rm -- "$f"`), `find -delete`,
  `git branch -D`, `git stash drop/clear`, `git checkout -- <paths>`/`git restore` (discard
  uncommitted work), `git prune`, `git push --delete/--mirror/--prune` and `:branch`, `rsync --delete`,
  `shred`, `crontab -r`, `docker system prune`/volume removal, `terraform destroy`, `kubectl delete`,
  `gh repo delete`, `dropdb`, a reverse shell (`/dev/tcp`, `nc -e`), a shell or interpreter reading
  code from a pipe, inline code that deletes files or starts other programs
  (`python -c "...shutil.rmtree..."`), and a string re-parsed by a shell (`bash -c "...$x..."`,
  `eval "$(ssh-agent -s)"`, a heredoc to bash with `$VAR` in it) that contains expansions: their
  values become code, and they are unknown here.
- running Cowork Terminal itself, `--help` too: `cowork-terminal`, `python -m app[.x]`, Python code importing `app`.
- the app's own files (`protected_paths`): any mention of one, or of something inside one, in any
  word or anywhere in the text (also as `~/...`, `$HOME/...`, a glob, or the part under the home
  folder), is destructive, reading included; so is moving or recursively re-permissioning a folder
  above one. A relative path is followed from the folder the command runs in (`cwd`: the call's,
  or where the session's shell is, as it reports after each command) and from each literal `cd`
  in the same command; running inside one of the app's folders is itself destructive.

- programs started out of our watch by another service (`systemd-run`, `systemctl start`, D-Bus calls,
  `crontab`, `at`, `launchctl`, `schtasks`; ssh to this machine, through `rsync`, `scp`, `git` and the
  like too; a Docker or podman container given this computer's folders, devices or privileges, and
  compose's starts; LXD, libvirt and other VM tools; a running terminal's, multiplexer's or editor's
  server asked to start or type something; macOS `open`, desktop openers; WSL, Windows Terminal,
  WinRM, COM in PowerShell code; a client of a daemon's socket outside the project), synthetic
  input (`xdotool`, `osascript`...), debuggers attaching to a process, and the remove options of
  archivers and sync tools are destructive; the agent's own scratch files (`t=$(mktemp) ...
  rm -f "$t"`, `/tmp/x-$$`) are not (`scratch`).

Reasons are short texts for the approval prompt; a result carries only the reasons of its own tier.
Each destructive finding has a class of danger (`danger.Danger`); `Classification.danger` is the worst.

Where things live: this module is the public API. `analyzer` walks the tree and sends each simple command
to the rule `registry` names for it: one table from command name to rule, so every command the
classifier knows is listed in one place, and teaching it a command is one function and one line there.
The rules are plain functions, one module per family (`wrappers`, `shells`, `files`, `machine`, `git`,
`packages`, `services`, `readers`, `itself`, `handoff`, `automation`, `windows`, `indirect`), written
against the small interface `rule.Analysis`, and look names up in `tables`. Below them: `words`
(unquoting), `options`, `stdin`, `hosts` (whether a host is this machine), `protected` (the app's own
files), `findings` (tiers and the report) and `parser` (tree-sitter, imported on the first call).
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .danger import Danger
from .findings import HOLDS_APP_DATA, RUNS_ITSELF, TOUCHES_APP_DATA, Classification, D, JudgedTooLong, Tier, _Report

if TYPE_CHECKING:
    from .protected import _Protected

__all__ = [
    "RUNS_ITSELF",
    "TOUCHES_APP_DATA",
    "Classification",
    "Danger",
    "JudgedTooLong",
    "Tier",
    "classify",
    "classify_typed",
    "names_protected",
    "repl_program",
    "script_paths",
    "warm_up",
    "writes_into",
]

log = logging.getLogger(__name__)


def classify(
    command: str, *, cwd: str | None = None, protected_paths: Sequence[str] = (), deadline: float | None = None
) -> Classification:
    """Classify `command` as bash would run it in `cwd`; never raises (an internal failure asks the
    user) but JudgedTooLong, once `time.monotonic()` passes `deadline` (a short command can name a
    long script).

    With `cwd`, relative paths are judged where they lead, and running inside the app's own
    folders is itself destructive: `rm journal.sqlite3` there must not pass as a plain `rm`.
    """
    try:
        return _classify(command, cwd, protected_paths, deadline)
    except JudgedTooLong:
        raise
    except Exception:  # a bug here must not let a command through unasked, nor crash the tool call
        log.exception("classifier failed on a command; treating it as destructive")
        report = _Report()
        report.add(D, "cannot tell what runs: the classifier failed on this command")
        report.lasting.append("cannot tell: the classifier failed")  # a session asks the user too
        return report.result()


def _classify(command: str, cwd: str | None, protected_paths: Sequence[str], deadline: float | None) -> Classification:
    from .protected import _Protected

    return _analysed(command, cwd, _Protected.build(protected_paths), deadline).result()


def _analysed(command: str, cwd: str | None, protected: _Protected, deadline: float | None = None) -> _Report:
    # The rules load at the first command, not at import: `serve` answers the handshake without
    # them, and loads them (and tree-sitter) in a worker thread right after it (see `warm_up`).
    from .analyzer import _Analyzer
    from .project_settings import judge
    from .words import _Word

    report = _Report()
    report.deadline = deadline
    if cwd is not None:
        cwd = cwd.replace("\\", "/")
        if protected.relation(_Word(cwd, cwd, cwd)) == "inside":
            report.add(D, TOUCHES_APP_DATA)
    _Analyzer(command, report, protected, nesting=0, cwd=cwd).run()
    judge(report)  # the project settings its programs read, wherever its `cd`s may have led
    # A script the command line (or another script) writes is not what was read; its own writes do not count.
    for path in dict.fromkeys(report.scripts):
        if any(fnmatch.fnmatchcase(path, pattern) and path != origin for pattern, origin in report.written):
            report.add(D, "cannot tell what runs: the command changes the script {path} before running it", path=path)
    return report


def names_protected(command: str, paths: Sequence[str], *, cwd: str | None = None, bare: bool = True) -> bool:
    """Whether `command` names one of `paths` as the classifier reads it: in the text in any spelling
    it knows (as is, from `~` or `$HOME`, `C:/` or `/c/`, with backslashes, in any case; `bare`: a
    path under home by its part under home alone too), and word by word, where a glob (`~/.b?shrc`),
    a variable (`~/.bash$f`), a relative path after a literal `cd`, inline code or a script it runs
    may lead to one, or a folder above one is moved. A glob or an expansion counts only where the
    command may write (`cp x ~/.b?shrc`, `tar -C ~`, a `find ~ -exec`), not where it only reads
    (`du -sh ~/* > du.txt`). Where no container keeps the protected set read-only, a command that
    names a member of it waits for a person (running.py)."""
    return _reaches(command, paths, cwd=cwd, bare=bare, any_mention=True)


def writes_into(command: str, folders: Sequence[str], *, cwd: str | None = None, code: Sequence[str] = ()) -> bool:
    """Whether `command` may write, remove or re-permission a file in one of `folders`, read as
    `names_protected` reads writes but without its holding any mention, and only what it surely
    writes, removes or moves (`report.surely_written`, `changed`), or anything in a folder (`find DIR
    -delete`), not every operand (`cp <venv>/x.pth /tmp/x`, `sed -n 1p <venv>/x.py`, `ln -s <base>/bin/python3
    py` read it): a program's venv, whose `python` commands name to run it, and whose site-packages a
    `.pth` written there reaches; our outputs folder, whose files a model is told to read. `code`: those
    of `folders` that inline code or a program file the command runs writes by naming them, since what
    the code does with a name is not read here (`python3 -c "open('<venv>/.../x.pth', 'w')..."`)."""
    return bool(folders) and _reaches(command, folders, cwd=cwd, bare=False, any_mention=False, code=code)


def _reaches(
    command: str, paths: Sequence[str], *, cwd: str | None, bare: bool, any_mention: bool, code: Sequence[str] = ()
) -> bool:
    from .protected import _Protected

    try:
        protected = _Protected.build(paths, bare=bare, guarding=True)
        report = _analysed(command, cwd, protected)
    except Exception:  # as in `classify`: a bug here asks the user
        log.exception("classifier failed on a command; taking it as naming a protected file")
        return True
    if any_mention and any(f.reason == TOUCHES_APP_DATA or HOLDS_APP_DATA in f.reason for f in report.findings):
        return True
    if code and report.code_naming:
        named = protected if tuple(code) == tuple(paths) else _Protected.build(code, bare=False, guarding=True)
        if any(named.mentioned_in(text) for text in report.code_naming):
            return True
    if any_mention:
        changed = [*(p for p, _script in report.written), *report.changed]
    else:  # writes only: not cp's, ln's or sed's sources (`cp <venv>/x.pth /tmp/x`), but a folder's (`find -delete`)
        folders = (p for p, _script in report.written if p.endswith("/*"))
        changed = [*report.surely_written, *folders, *report.changed]
    return any(protected.written_into(p, by_name=p in report.landed) for p in changed)


def repl_program(command: str | None) -> str | None:
    """The interpreter reading typed input when `command` runs one bare (see typed.repl_program)."""
    from .typed import repl_program as find

    return find(command)


def classify_typed(
    text: str,
    program: str | None,
    *,
    cwd: str | None = None,
    protected_paths: Sequence[str] = (),
    deadline: float | None = None,
) -> Classification:
    """Classify `text` typed into `program`, the program running in the persistent session (its
    command name or path; None when not known: then the text is judged as bash, since it may be a
    shell). A Python, Node, Perl, Ruby... prompt runs it as its own code; a program whose input
    cannot be judged holds it. Never raises but JudgedTooLong, as `classify`."""
    try:
        from .typed import judge_typed, typed_language

        language = typed_language(program)
        if language == "bash":
            return classify(text, cwd=cwd, protected_paths=protected_paths, deadline=deadline)
        from .analyzer import _Analyzer
        from .project_settings import judge
        from .protected import _Protected

        report = _Report()
        report.deadline = deadline
        protected = _Protected.build(protected_paths)
        judge_typed(_Analyzer(text, report, protected, nesting=0, cwd=cwd), text, program, language)
        judge(report)
        return report.result()
    except JudgedTooLong:
        raise
    except Exception:  # as in `classify`: a bug here asks the user
        log.exception("classifier failed on typed input; treating it as destructive")
        report = _Report()
        report.add(D, "cannot tell what runs: the classifier failed on this input")
        return report.result()


def script_paths(command: str, *, cwd: str | None = None) -> tuple[str, ...]:
    """The script files `command` would run, read and judged by `classify` (absolute paths; the
    scripts those scripts run too): what an approval pins, by content, before the command starts."""
    return classify(command, cwd=cwd).scripts


def warm_up(*, cwd: str | None = None, protected_paths: Sequence[str] = ()) -> None:
    """Load the rules and tree-sitter now (a server calls this in a worker after its handshake),
    so that the first command does not pay for them; given the server's own folder and protected
    paths, the expressions built from them are compiled (and cached) too. Each thread still builds
    its own parser, which takes well under a millisecond once tree-sitter is loaded."""
    classify("true", cwd=cwd, protected_paths=protected_paths)
