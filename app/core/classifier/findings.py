"""Tiers, a classification, the analysis limits, and the report that collects findings on one command."""

from __future__ import annotations

import enum
import string
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, NamedTuple

from app.core.i18n import N_

from .danger import Danger


class Tier(enum.IntEnum):
    SAFE = 0
    MODERATE = 1
    DESTRUCTIVE = 2


# What a word the command line does not hold stands for, said in its place ("Deletes (the words xargs
# reads) without asking"): the person's words translate it (policy/plain_words.py), the model's do not.
XARGS_READS = N_("(the words xargs reads)")
PLACEHOLDERS = (XARGS_READS,)


@dataclass(frozen=True)
class Words:
    """What a finding says, kept as what it is: an English template and the values it names
    ("Deletes the folder {shown} and everything in it", shown=/home/ana/build). A value may itself
    be Words. The model reads the English `plain`; a person reads these words translated where they
    are shown (`app.core.policy.plain_words`), never a translation of the English sentence."""

    template: str
    values: tuple[tuple[str, str | Words], ...] = ()

    def to_json(self) -> list[object]:
        """[template, {name: value}], a nested value as its own list: what travels to a window."""
        return [self.template, {k: v.to_json() if isinstance(v, Words) else v for k, v in self.values}]

    @classmethod
    def from_json(cls, data: object) -> Words | None:
        """The Words of `to_json`, or None for anything else (a window fed by another version)."""
        if not (isinstance(data, list) and len(data) == 2 and isinstance(data[0], str) and isinstance(data[1], dict)):
            return None
        values: list[tuple[str, str | Words]] = []
        for key, value in data[1].items():
            inner = value if isinstance(value, str) else cls.from_json(value)
            if not isinstance(key, str) or inner is None:
                return None
            values.append((key, inner))
        return cls(data[0], tuple(values))


def words_of(template: str, values: Mapping[str, str | Words]) -> Words:
    """`template` with the values it names, in the order it names them."""
    return Words(template, tuple((name, values[name]) for name in _fields(template)))


@cache
def _fields(template: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(name for _, name, _, _ in string.Formatter().parse(template) if name))


@dataclass(frozen=True)
class Finding:
    """One thing a command would do. `reason` is terse, for the log and the CLI; `plain` says it in
    words for anyone ("Deletes the folder /home/ana/project/build and everything in it"); `words`
    is `plain` as a template and its values, for the person's language. `kind` and `target` are set
    only where a rule the user made may cover the finding (app/core/policy/rules.py). `danger`: what a
    destructive finding would cost (`danger.Danger`), None below destructive."""

    tier: Tier
    reason: str
    plain: str
    kind: str | None = None
    target: str | None = None
    words: Words | None = None
    danger: Danger | None = None


@dataclass(frozen=True)
class Classification:
    tier: Tier
    reasons: tuple[str, ...]
    findings: tuple[Finding, ...] = ()  # the deciding tier's findings, in the order they were found
    scripts: tuple[str, ...] = ()  # script files the command runs, read and judged (absolute paths)
    # What it leaves in the shell that runs it, for that shell's later commands: a trap with code, a
    # function, an alias, `eval`, a builtin loaded or turned off, code sourced from its input or another
    # command's output, a variable only named when it runs (commands/admission.lasts_in_session: a
    # persistent session's later commands are judged alone; a red team, 2026-12-05, set `builtin trap
    # '. ./t.sh' DEBUG`, rewrote t.sh, then ran `ls`)
    lasting: tuple[str, ...] = ()

    @property
    def plain(self) -> tuple[str, ...]:
        """What the command would do, in plain words, each once (the approval window, the model)."""
        return tuple(dict.fromkeys(f.plain for f in self.findings)) or tuple(plain_words(r) for r in self.reasons)

    @property
    def words(self) -> tuple[Words, ...]:
        """`plain` as templates and values, one for each of its lines (a person's language)."""
        said = {f.plain: f.words or Words(f.plain.replace("{", "{{").replace("}", "}}")) for f in self.findings}
        if said:
            return tuple(said.values())
        return tuple(plain_template(r.replace("{", "{{").replace("}", "}}"), {}) for r in self.reasons)

    @property
    def gains_privileges(self) -> bool:
        """Whether the command runs a program that gains privileges, as parsed (not a word in it)."""
        return any(f.kind == GAINS_PRIVILEGES for f in self.findings)

    @property
    def danger(self) -> Danger | None:
        """The worst class of danger among the deciding findings (None unless destructive): the
        approval window says its sentence and styles the worst class most strongly."""
        return max((f.danger for f in self.findings if f.danger is not None), default=None)


# Limits that keep a huge or hostile input from taking the server down; past them we ask.
MAX_COMMAND_CHARS = 1_000_000
MAX_NODES = 100_000
MAX_WORDS_SEEN = 200_000  # words of simple commands, counted again at each wrapper (`nohup nohup ...`)
MAX_TREE_DEPTH = 300
MAX_WRAPPERS = 80  # a command inside wrappers inside wrappers (`nohup env sudo ... cmd`)
TOO_DEEP = "cannot tell what runs: the command is too deeply nested to check"
MAX_SHELL_NESTING = 12
# Words a program no rule knows is given, judged as the commands they may be (`_Analyzer.may_run`):
# at most this many for one program, and this many words judged so in all (`a b c ...` would
# otherwise be judged again at each word: a long command would take seconds).
MAX_PROBES = 64
MAX_PROBED_WORDS = 20_000
CANNOT_TELL_PROBES = "cannot tell what runs: a program no rule knows is given too many commands to check"
REASON_SNIPPET_CHARS = 60
BULK_COMMAND = "cannot tell what runs: the command comes from the words xargs or find adds"
TOUCHES_APP_DATA = "touches Cowork Terminal's own data or settings"
HOLDS_APP_DATA = "changes a folder that holds Cowork Terminal's data"  # in the reason of a folder above it moved
WINDOWS_SETTINGS = "{name} {sub}: changes Windows settings that other programs read"  # the registry (windows.py)
ALIASES_ON = "cannot tell what runs: {name} turns on aliases, so a later command's name may run another command"
# A library's native code loaded into a program (`LD_PRELOAD=./x.so ls`, `enable -f ./x.so name`), as a
# compiled program the agent made is run (`./a.out`): what it does cannot be read here
LOADS_LIBRARY = "cannot tell what runs: {name} loads the code of the library {value}"
RUNS_ITSELF = "runs Cowork Terminal itself (it could change its own settings or answer its own approvals)"

D = Tier.DESTRUCTIVE
M = Tier.MODERATE
S = Tier.SAFE


# Rule kinds (app/core/policy/rules.py): findings a rule the user made may cover.
DELETE_RECURSIVE = "delete-recursive"  # target: the absolute path removed with everything in it
# A program that gains privileges (sudo, su, pkexec...): set-uid, so it cannot work in the container
# (bwrap sets no_new_privs); a person's Allow runs such a command outside it (commands/running.py).
GAINS_PRIVILEGES = "gains-privileges"


CANNOT_TELL_WORDS = "Cowork Terminal cannot tell what this command would do ({what})"

# The person's words where a reason's own tail is jargon: the reason's template (its tail, as
# `plain_template` takes it) -> what a person reads. The model keeps the reason, exact.
CANNOT_TELL_PLAIN = {
    "{what} of an expansion": "{what} runs text that is only put together when it runs",
    "{name} code from an expansion": "runs {name} code that is only put together when it runs",
    "the command name comes from {source}": "the program to run is only known when it runs ({source})",
    "the command name {source} is a pattern": "the program to run is picked by a wildcard ({source})",
    "{source} expands a value as a prompt": "{source} can run hidden commands",
    "the command comes from the words xargs or find adds": "runs commands built from a list of names it is given",
    "the command does not parse as bash": "the command is not written correctly",
    "the classifier failed on this command": "the check itself failed (an error in Cowork Terminal)",
    "the classifier failed on this input": "the check itself failed (an error in Cowork Terminal)",
    "git option from {source}": "what git is told to do is only known when it runs ({source})",
    "git {sub} takes options from {source}": "what git {sub} is told to do is only known when it runs ({source})",
    "{name} takes options from {source}": "what {name} is told to do is only known when it runs ({source})",
    "{name} takes options from an expansion": "what {name} is told to do is only known when it runs",
    "{name}: the value {source} is not quoted, and bash may split it into options: "
    'quote it ("$x") to run without asking': "what {name} is told to do is only known when it runs ({source})",
    "rm may take options from {source}": "what rm is told to do is only known when it runs ({source})",
    "{what} subcommand from {source}": "what {what} is told to do is only known when it runs ({source})",
    "{name} -o from an expansion": "what {name} is told to do is only known when it runs",
    "cmake -E from an expansion": "what cmake is told to do is only known when it runs",
    "alias of an expansion": "what alias is told to do is only known when it runs",
    "{name} with arguments from an expansion": "what {name} is told to do is only known when it runs",
    "git -c {value}": "sets a git setting that can run other programs ({value})",
    "env {option}": "starts a program in a way that cannot be checked (env {option})",
    "{name} {option}": "{name} is given an option that cannot be checked ({option})",
    "git {sub} ext::": "git is told to run a command to reach another computer",
    "{name} -c without a command": "{name} would read its commands from somewhere else",
    "{name} -m {source}": "the Python module it runs is only known when it runs ({source})",
    "{name} gives a network peer a program to drive": "lets another computer control a program here ({name})",
    "{name} loads the code of the library {value}": "{name} makes a program run the code of the library {value}",
}
PLAIN = {
    "writes to a file named by an expansion: {source}": (
        "writes to a file whose name is only known when it runs ({source})"
    ),
    "not known to be read-only": "Runs {value}, a program Cowork Terminal doesn't know: it may change things",
    "deletes it on GitHub": "Deletes something on GitHub ({value})",
    "{name} code that deletes files or stops the machine": (
        "Runs {name} code that can delete files or shut down the computer"
    ),
    "discards uncommitted changes": "throws away changes not yet saved in git",
    "removes files with uncommitted changes": "removes files with changes not yet saved in git",
    "deletes untracked files": "deletes new files git has not been told to keep",
    "deletes unreachable commits": "deletes old versions git no longer shows; they cannot be brought back",
    "rewrites local commits (the reflog keeps the old ones)": (
        "rewrites saved versions on this computer (git can still bring the old ones back)"
    ),
    "deletes a branch even if unmerged": "deletes a branch even if its work is saved nowhere else",
    "unstages changes": "takes changes out of the next git save (files stay as they are)",
    "changes the working tree": "changes the project's files",
    "kills a whole process group or init": "stops a whole group of programs, or the system itself",
    "talks to the init system": "gives orders to the part of the system that starts and stops programs",
    "changes the machine's run level (shutdown, reboot)": "shuts down or restarts the computer, or changes how it runs",
    "creates a filesystem, erasing the device": "formats a disk, erasing everything on it",
    "runs as root in another root folder": "runs as administrator inside another system folder",
    "runs a package from a registry": "downloads and runs a package from the internet",
}


def plain_words(reason: str) -> str:
    """A reason said for anyone: "git reset --hard: discards uncommitted changes" -> "Discards
    uncommitted changes". Rules with more to say (the path, the branch) give their own words."""
    head, sep, tail = reason.partition(": ")
    if head.startswith("cannot tell"):
        what = tail or head
        return CANNOT_TELL_WORDS.format(what=what)
    text = tail if sep and " " in tail.strip() else reason  # "writes to a disk device: /dev/sda" stays whole
    return text[:1].upper() + text[1:]


def plain_template(reason: str, values: Mapping[str, str]) -> Words:
    """`plain_words` on a reason's template ("{name}: kills every process with that name"): the
    same words, with the values left as values, or the person's own words for it (`PLAIN`,
    `CANNOT_TELL_PLAIN`). Decided on the template, so that a translation depends on what the
    finding is, not on the text a value happens to hold. Capitalized where shown (the template
    may start with a value)."""
    head, sep, tail = reason.partition(": ")
    if head.startswith("cannot tell"):
        what = tail or head
        return Words(CANNOT_TELL_WORDS, (("what", words_of(CANNOT_TELL_PLAIN.get(what, what), values)),))
    said = tail if sep and " " in tail.strip() else reason
    return words_of(PLAIN.get(said, said), values)


def english(words: Words) -> str:
    """Words said in English, capitalized: a finding's `plain`."""
    text = _english(words)
    return text[:1].upper() + text[1:]


def _english(words: Words) -> str:
    return words.template.format(**{name: _english(v) if isinstance(v, Words) else v for name, v in words.values})


def has_own_words(reason: str) -> bool:
    """Whether `plain_template` gives `reason` words of its own rather than its tail."""
    head, sep, tail = reason.partition(": ")
    if head.startswith("cannot tell"):
        return (tail or head) in CANNOT_TELL_PLAIN
    return (tail if sep and " " in tail.strip() else reason) in PLAIN


class GitSettings(NamedTuple):
    """A git command whose repository's settings project_settings.judge reads, as `report.settings`
    has them: `named` its `-C` folder or (`git_folder`) its git folder, from the shell's folder;
    `work_tree` its `--work-tree` ("": the repository's own), where its submodules are looked for;
    `submodules`: it may run git in them (`git status` does, `git rev-parse` never does)."""

    program: str
    named: str
    git_folder: bool
    work_tree: str = ""
    submodules: bool = True


class _Mark(NamedTuple):
    findings: int
    scripts: int
    settings: int
    keyword_words: int


class JudgedTooLong(Exception):  # noqa: N818 (not an error: the judging goes on elsewhere)
    """The judging passed its deadline (`classify(deadline=...)`): its caller judges the command
    again where it may take long (admission: on a worker thread, off the loop that serves every call)."""


class _Report:
    """What the analysis found, shared by a command and every string re-parsed inside it."""

    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self.lasting: list[str] = []  # Classification.lasting, as the analysis finds them
        self.guessing = 0  # judging what a program no rule knows may run, in a process of its own: nothing lasts
        self.nodes = 0
        self.words_seen = 0  # MAX_WORDS_SEEN
        self.too_large = False  # said once: the command is too large or deeply nested to check
        self.probed_words = 0  # words judged again as what a program no rule knows may run (MAX_PROBED_WORDS)
        self.scripts_read = 0  # never undone: each read costs up to MAX_SCRIPT_BYTES (scripts.MAX_SCRIPTS)
        self.wrappers = 0  # wrappers around the command being judged (MAX_WRAPPERS)
        self.runners: list[str] = []  # the programs running the one being judged, itself last (`time`, `uv`, `pip`)
        self.in_string = 0  # judging a string an unknown program was given: its own words are not probed
        self.scripts: list[str] = []  # script files run, in the order they were judged
        self.written: set[tuple[str, str]] = set()  # (pattern of a file it may write, the script that writes it)
        self.changed: set[str] = set()  # patterns of files it removes or re-permissions (files.note_changed)
        self.landed: set[str] = set()  # folders of `written` whose files land there by name (note_landed)
        self.surely_written: set[str] = set()  # patterns of files it writes for sure (a redirection, cp's target)
        self.unpacked: set[str] = set()  # `surely_written`'s folder patterns an archive unpacks into (archives)
        self.aliases: dict[str, str] = {}  # alias name -> value, as the command defines them (shells.cmd_alias)
        self.variables: set[str] = set()  # the variables it sets, so far (`*`: one whose name is only known then)
        # A variable set once, before any other sets it, alone at the command's top (not in a loop, a
        # function, a subshell or after `&&`), to a literal without blank or pattern -> that value
        # (`depth=2; find . -maxdepth $depth`: $depth splits into no option; options.splits_into_options)
        self.values: dict[str, str] = {}
        self.unsure: set[str] = set()  # set another way too (`read depth`): its value is not known
        self.ssh_included: list[str] | None = None  # what the user's ssh config includes, read once (hosts)
        self.git_settings: dict[object, Any] = {}  # git's settings read for this command (git_settings.Memo)
        self.expanding: set[str] = set()  # aliases being judged as their value (bash expands each once)
        # Where project settings are read (project_settings.judge, once the whole command is read):
        self.places: dict[str, None] = {}  # every folder its shell may be in: the one given, each `cd`'s
        self.lost: str | None = None  # the `cd` after which it may be in a folder not known here
        # (program, folder it names or "", a git folder), a git command's with more (GitSettings)
        self.settings: list[tuple[str, str, bool] | GitSettings] = []
        self.repeating = 0  # in a loop's, a function's or a trap's code: a relative `cd` may run again
        self.cdpath = False  # the command names CDPATH or cdable_vars: `cd NAME` may lead elsewhere
        self.cdpaths: list[str] = []  # CDPATH's folders as the command sets it, as patterns (shells.move_to)
        self.sourced = False  # a file was sourced: it may set PATH or activate a venv (packages: which pip)
        # Code (inline, or a program file) naming a protected path, where no container guards them: its
        # writes cannot be read, so naming one counts as writing it (`writes_into(code=...)`)
        self.code_naming: list[str] = []
        # bash's keyword mode (`set -k`) may be on: then a simple command's NAME=value words anywhere
        # are assignments for it (`ls LD_PRELOAD=./x.so`); those read before it was turned on wait here
        self.keyword = False
        self.keyword_words: list[Callable[[], None]] = []
        self.deadline: float | None = None  # time.monotonic() past which the judging gives up (JudgedTooLong)
        # Told of each finding's reason and values as it is added (typed.py's readers of typed keys)
        self.heard: Callable[[str, dict[str, str]], None] | None = None

    def add(
        self,
        tier: Tier,
        reason: str,
        plain: str | None = None,
        kind: str | None = None,
        target: str | None = None,
        danger: Danger | None = None,
        **values: str,
    ) -> None:
        """One finding; `reason` and `plain` are templates of `values` ("git {sub}: ...", sub="gc").
        A destructive finding without a `danger` is a system change, or cannot be checked."""
        values = {name: str(value) for name, value in values.items()}
        if self.heard is not None:
            self.heard(reason, values)
        said = reason.format(**values)
        if tier is not Tier.DESTRUCTIVE:
            danger = None
        elif danger is None:
            danger = Danger.CANNOT_TELL if reason.startswith("cannot tell") else Danger.SYSTEM
        if plain is None:
            words = plain_template(reason, values)
            plain = english(words) if has_own_words(reason) else plain_words(said)
            self.findings.append(Finding(tier, said, plain, kind, target, words, danger))
        else:
            words = words_of(plain, values)
            self.findings.append(Finding(tier, said, plain.format(**values), kind, target, words, danger))

    def keyword_mode(self) -> None:
        """bash's keyword mode may be on from here (`set -k`, `set -o keyword`...): the NAME=value words
        of every simple command of the command line, those read before included (a loop, a function
        or a trap may run them again), are judged as assignments before it (a review, 2026-12-05:
        `set -k; ls LD_PRELOAD=./x.so` was safe). Said as setting `keyword`: in the session it lasts
        (commands/admission.lasts_in_session reads these words; `builtin set -k` escaped its regex)."""
        if not self.keyword:
            self.add(M, "sets {value}: changes how later commands run", value="keyword")
        self.keyword = True
        waiting, self.keyword_words = self.keyword_words, []
        for judge in waiting:
            judge()

    def mark(self) -> _Mark:
        """Where the analysis stands, to undo what judging a guess added (`undo`)."""
        return _Mark(len(self.findings), len(self.scripts), len(self.settings), len(self.keyword_words))

    def undo(self, mark: _Mark, kept: list[Finding]) -> bool:
        """Back to `mark`, keeping `kept` of the findings added since. The counts that bound a
        command's cost stay (a guess costs as much as what it judges), and when they ran out the
        command is too large: that stands. True when something was kept, or it was too large."""
        if self.too_large:
            return True
        del self.findings[mark.findings :]
        self.findings.extend(kept)
        del self.settings[mark.settings :]  # a guess's `git status` reads nothing
        del self.keyword_words[mark.keyword_words :]
        if not kept:  # the files it may write stay: more of them only holds more
            del self.scripts[mark.scripts :]
        return bool(kept)

    def forget(self, name: str) -> None:
        """`name` is set where its value is not known (or once more): never known from here on."""
        self.values.pop(name, None)
        self.unsure.add(name)

    def sets_one_of(self, names: Iterable[str]) -> str | None:
        """The first of `names` this command line sets so far (`*`: a variable whose name is only
        known when it runs): the classifier's environment is the tray's, not the command's."""
        return next((name for name in names if name in self.variables), None)

    def top(self, since: int = 0) -> Tier:
        return max((f.tier for f in self.findings[since:]), default=S)

    def result(self) -> Classification:
        tier = self.top()
        scripts = tuple(dict.fromkeys(self.scripts))
        unnamed = ["sets a variable only named when it runs"] if "*" in self.variables else []  # `getopts a "$v"`
        lasting = tuple(dict.fromkeys([*self.lasting, *unnamed]))
        if tier is S:
            return Classification(S, (), scripts=scripts, lasting=lasting)
        deciding = tuple(f for f in self.findings if f.tier == tier)
        reasons = dict.fromkeys(f.reason for f in deciding)
        return Classification(tier, tuple(reasons), deciding, scripts, lasting)


def _snip(text: str) -> str:
    text = " ".join(text.split())
    if len(text) > REASON_SNIPPET_CHARS:
        return text[: REASON_SNIPPET_CHARS - 1] + "…"
    return text
