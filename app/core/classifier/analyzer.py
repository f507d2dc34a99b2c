"""The analysis: walks the tree of one parsed text and sends every simple command to its rule."""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
import os
import posixpath
import re
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from app.core.i18n import N_

from .code_options import judge_code_options, option_values
from .danger import Danger
from .files import LANDS_BY_NAME, NAMED_ELSEWHERE, note_named_elsewhere
from .findings import (
    BULK_COMMAND,
    CANNOT_TELL_PROBES,
    LOADS_LIBRARY,
    MAX_COMMAND_CHARS,
    MAX_NODES,
    MAX_PROBED_WORDS,
    MAX_PROBES,
    MAX_SHELL_NESTING,
    MAX_TREE_DEPTH,
    MAX_WORDS_SEEN,
    MAX_WRAPPERS,
    RUNS_ITSELF,
    TOO_DEEP,
    TOUCHES_APP_DATA,
    D,
    JudgedTooLong,
    M,
    S,
    _Report,
    _snip,
)
from .git import repository_settings
from .hosts import ssh_included
from .indirect import code_loads
from .options import _command_name, _operands, _short_flags, _split_options, options_end
from .parser import _parser
from .piped import runs_download
from .project_settings import RUSTUP_PROXIES
from .protected import SOURCED, _home, _Protected, attached_path
from .registry import rule_for
from .rule import Rule
from .scratch import assigned_from_mktemp, scratch_variables, scratch_word
from .scripts import installed_program, run_script, runs_project_files, script_path
from .shells import (
    DECLARED,
    aliases_on,
    cdpath_folders,
    declaration_words,
    foreign_library,
    sets_any_variable,
    stdin_code,
    variable_set,
)
from .stdin import _PIPE, _STDIN_FILES, _Stdin
from .tables import (
    _BLOCK_DEVICE,
    _DESCRIPTOR_FILE,
    _DOWNLOADERS,
    _DOWNLOADS,
    _HARMLESS_DEVICES,
    _JS_PACKAGE_MANAGERS,
    _MAY_WRITE,
    _PERL,
    _PRIVILEGE,
    _SAFE,
    _SELF_PROGRAM,
    _SHELLS,
    _SUBSCRIPT_CODE,
    _WRITERS,
    COMMAND_TABLES,
    is_code_variable,
    is_interpreter,
    special_variable,
)
from .words import (
    _EXPANSIONS,
    _WORDISH,
    _ansi_c,
    _double_quoted,
    _Word,
    _word_end,
    _WordBuilder,
    brace_group,
    is_glob,
    split_at_ifs,
)

if TYPE_CHECKING:
    from tree_sitter import Node

# Options whose value is a message for people, not code (`glab mr create -t "fix: rm -rf in x"`).
# Not -b, -d, -s or -e: tmux's -b and -d, entr's -s and xterm's -e are given a command.
_MESSAGE_OPTIONS = frozenset({"-m", "-t", "-k", "--message", "--title", "--subject", "--body", "--description",
                              "--comment", "--summary", "--text", "--note", "--reason", "--grep",
                              "--pattern"})  # fmt: skip
_PROGRAM_NAME = re.compile(r"[a-z0-9][a-z0-9._+-]*")  # not a title's first word: `Fix`, `fix:`
_IFS = re.compile(r"\$\{IFS[^}]*\}|\$IFS\b")  # bash splits there: `rm${IFS}-rf${IFS:0:1}DIR` is three words
_BRACE_LIST = re.compile(r"\{([^{},\s]*(?:,[^{},\s]*)+)\}")  # `{rm,-rf,DIR}` becomes `rm -rf DIR`
# Names of programs that are everyday subcommands of others (`ruff format .`, `dart format .`): never
# taken for the program (Windows' disk `format`) when a program no rule knows is given them.
_SUBCOMMAND_WORDS = frozenset({"format"})
# Where bash's word before a redirection starts (`touching_descriptor`): a blank or an operator
_WORD_BOUNDARY = frozenset(bytes([c]) for c in b" \t\n;&|()") | {b""}
_REPEATED = frozenset({"for_statement", "c_style_for_statement", "while_statement", "function_definition"})
_SUBSHELLS = frozenset({"subshell", "command_substitution", "process_substitution"})  # run in a process of their own
_ENDLESS = {"while": frozenset({":", "true"}), "until": frozenset({"false"})}  # conditions that never end a loop


def _starts_without_end(node: Node, text: Callable[[Node], str]) -> bool:
    """A function that starts itself in the background (`:(){ :|:& };:`), or an endless loop that
    starts a background job each time (`while :; do sleep 100 & done`): processes without end, until
    the user's or the machine's limit (a red team, 2026-12-05: both judged safe). Not a function that
    calls itself in the foreground, nor a loop that ends; nor (a review, 2026-12-06) a `&` within a
    `$(...)` that keeps its output (bash waits for it), a loop that runs `wait` or `kill` (`while true;
    do ./srv & pid=$!; sleep 5; kill $pid; wait $pid; done`), or a function that waits for the calls
    it starts over the folders a pattern lists (`walk(){ for d in */; do walk "$d" & done; wait; }`)."""
    parts = [child for child in node.children if child.is_named]
    if not parts or not _backgrounds(parts[-1]):
        return False
    waits = any(text(found) in ("wait", "kill") for found in _descendants(parts[-1], "command_name"))
    if node.type == "function_definition":
        name = text(parts[0])
        calls = [found for found in _descendants(parts[-1], "command_name") if text(found) == name]
        return bool(calls) and not (waits and all(_over_pattern(found, parts[-1], text) for found in calls))
    condition = text(parts[0]).strip().rstrip(";").strip() if len(parts) == 2 else ""
    return condition in _ENDLESS.get(node.children[0].type, frozenset()) and not waits


def _backgrounds(node: Node) -> bool:
    """Whether code starts a job in the background, not counting one in a `$(...)` without a
    redirection: bash reads its output to the end, so waits for it (`echo "$(date &)"`)."""
    stack = [node]
    while stack:
        found = stack.pop()
        if found.type == "&":
            return True
        if found.type == "command_substitution" and not _holds_kind(found, "file_redirect"):
            continue
        stack.extend(found.children)
    return False


def _over_pattern(call: Node, body: Node, text: Callable[[Node], str]) -> bool:
    """Whether a call descends a folder tree: it stands in a `for` loop over a pattern under the
    function's own argument (`for d in "$1"/*/`), and is given the loop's name (`walk "$d"`). Not
    `for d in */; do walk "$d" & done`: the same folder's each time, without end."""
    at = call.parent
    given = text(call.parent) if call.parent is not None else ""
    while at is not None and at != body:
        name = at.child_by_field_name("variable") if at.type == "for_statement" else None
        if name is not None and re.search(rf"\$\{{?{re.escape(text(name))}(?!\w)", given):
            values = [text(value) for value in at.children_by_field_name("value")]
            if values and all(_UNDER_ARGUMENT.match(value) for value in values):
                return True
        at = at.parent
    return False


# `"$1"/*/`, `$1/*`, `"${1%/}"/*/`: a pattern under the function's argument
_UNDER_ARGUMENT = re.compile(r"""^"?\$\{?1[^}"/]*\}?"?/.*[*?]""")


def _descendants(node: Node, kind: str) -> Iterator[Node]:
    stack = [node]
    while stack:
        found = stack.pop()
        if found.type == kind:
            yield found
        stack.extend(found.children)


def _holds_kind(node: Node, kind: str) -> bool:
    return next(_descendants(node, kind), None) is not None


# What a guess at what a program runs may hold a command for: a deletion, or a program started
# outside Cowork Terminal's watch (`runuser -u me -- docker run -v /:/h a`: see `may_run`). A disk's
# erasure is not one: `notify-send "format done"`, and a user's command cannot reach a disk.
_DELETES = frozenset({Danger.LOSES_FILES, Danger.LOSES_EVERYTHING})
# Words after which a runner's command stands (`npm exec CMD`, `poetry run CMD`, `direnv exec . CMD`)
_RUNNER_WORDS = frozenset({"--", ".", "exec", "run", "dlx", "x", "do", "with"})
# Folders of the system, never a project's (`cd /etc && docker run -v .:/e alpine`: a review, 2026-12-05)
_SYSTEM_FOLDER = re.compile(r"/(?:etc|usr|boot|var|bin|sbin|lib[^/]*|opt|srv|run|proc|sys|dev)(?:/|$)")
_WINDOWS_PATH = re.compile(r"^(?:[A-Za-z]:[/\\]|[/\\]{2}[^/\\])|\\")  # `C:\x`, `C:/x`, `\\server\x`: not ours


def _printed_text(name: str, values: list[str | None]) -> str | None:
    """What `echo` or `printf` of these words prints, or None when it cannot be told here: an
    expansion, printf's `%` or escapes (`printf 'r\x6d -rf DIR'` prints `rm`), echo's options but its
    own (`echo -e '!rm -rf DIR' | ed`: third red team; `-e` decodes escapes as `$'...'` does)."""
    if name == "printf":
        if not values or None in values or (values[0] or "").startswith("-"):
            return None
        text = " ".join(v for v in values if v is not None)
        if "%" in text or "\\" in text.replace("\\n", ""):
            return None
        return text.replace("\\n", "\n")
    escapes = False
    while values and values[0] in ("-e", "-n", "-E", "-ne", "-en", "-nE", "-En"):
        option = values[0] or ""
        escapes = "e" in option or (escapes and "E" not in option)  # `-e -n`: still escapes
        values = values[1:]
    if any(v is None or v.startswith("-") for v in values):
        return None
    text = " ".join(v for v in values if v is not None)
    if escapes and re.search(r"\\0|\\c", text):
        return None  # echo's `\0NNN` octal and `\c` are not $'...''s
    return _ansi_c(text) if escapes else text


# Files whose commands git runs later: a repository's settings and hooks, the user's settings.
_GIT_RUNS_FROM = re.compile(
    r"(?:^|/)\.git(?:/(?:modules/.+/)?(?:config|hooks(?:/.*)?|info(?:/attributes)?))?$|"  # cp x .git/hooks/ too
    # a bare repository's (`D/x.git/config`: `GIT_DIR=D/x.git git status` runs its fsmonitor, red team)
    r"(?:^|/)[^/]+\.git/(?:modules/.+/)?(?:config|hooks(?:/.*)?|info/attributes)$|"
    r"^/\.gitconfig$|^/\.config/git(?:/config|/attributes)?$"
)
# Files whose hooks, MCP servers and permissions Claude Code runs at its next start, outside any
# container (red team: `printf '{"hooks":...}' > .claude/settings.local.json` was moderate): the
# project's (any folder's) and the user's (`~/.claude/`, `~/.claude.json`); writing into `.claude/`
# itself (`cp x .claude/`) and into `.claude/hooks/`, where hook scripts are kept, is held too.
_CLAUDE_RUNS_FROM = re.compile(
    r"(?:^|/)\.claude(?:/settings(?:\.local)?\.json|/hooks(?:/.*)?)?$|(?:^|/)\.mcp\.json$|^/\.claude\.json$"
)
# GnuPG's daemons' settings, read by the user's gpg-agent, scdaemon and dirmngr, which run outside any
# container (socket-started at the first gpg): gpg-agent.conf's `pinentry-program` and `scdaemon-program`,
# dirmngr.conf's `ldap-wrapper-program`, scdaemon.conf's card-reader library (red team, 2026-12-05: a
# pinentry-program written, then `gpg-connect-agent reloadagent`, ran outside and lived past a pause).
# By name in any folder (GNUPGHOME may name any), and ~/.gnupg itself or a name there an expansion decides.
_GNUPG_RUNS_FROM = re.compile(
    r"(?:^|/)(?:gpg-agent|scdaemon|dirmngr)\.conf$|(?:^|/)\.gnupg/(?:gpg|gpgsm|common)\.conf$"
    r"|^/\.gnupg(?:/[^/]*\*[^/]*)?$"
)  # gpg.conf's `agent-program` too (a review): by name only in ~/.gnupg, where a dotfiles repo's is not


# ssh's files in the home folder that start programs or let someone in, outside any container: the
# client's settings (a `HostName` that makes a later `ssh build` reach this machine's server, which
# starts what it is asked outside; `ProxyCommand` and `LocalCommand` run in the user's own ssh), the
# keys and `command=` lines sshd lets in (a key of the agent's, for a login from anywhere), and what
# sshd runs at each login (`rc`, `environment`). known_hosts and the keys themselves are not among
# them: ssh and ssh-keygen write those in everyday work. A name an expansion decides is held, and a
# glob that may be one of them (`>> ~/.ssh/authorized_key?`: bash expands a lone match in a redirection).
_SSH_RUNS_FROM = re.compile(r"^/\.ssh(?:/(?:config(?:\.d(?:/.*)?)?|rc|environment|authorized_keys2?|.*\*.*))?$")
_SSH_FILES = ("/.ssh", "/.ssh/config", "/.ssh/config.d/x", "/.ssh/rc", "/.ssh/environment", "/.ssh/authorized_keys",
              "/.ssh/authorized_keys2")  # fmt: skip


# Start-up files of interactive programs in the home folder, whose commands they run at their next start:
# gdb's `shell rm -rf ...` in ~/.gdbinit (a red team, 2026-12-05: written, then `gdb -batch`), tclsh's and
# wish's ~/.tclshrc and ~/.wishrc (Tcl's `exec`). Held as git's settings are.
_STARTUP_RUNS_FROM = {
    "gdb": re.compile(r"^/\.gdb(?:early)?init$|^/\.config/gdb(?:/(?:gdb(?:early)?init)?)?$"),
    "tclsh": re.compile(r"^/\.tclshrc$"),
    "wish": re.compile(r"^/\.wishrc$"),
}
_STARTUP_FILES = ("/.gdbinit", "/.gdbearlyinit", "/.config/gdb/gdbinit", "/.config/gdb/gdbearlyinit", "/.tclshrc",
                  "/.wishrc")  # fmt: skip


def _startup_program(tail: str, glob: bool) -> str | None:
    """The program whose start-up file a written path (relative to the home folder) is, or as a glob
    in the home folder may be (`> ~/.gdbini?`: bash expands a lone match in a redirection)."""
    paths = [f for f in _STARTUP_FILES if fnmatch.fnmatchcase(f, tail)] if glob and tail.startswith("/") else []
    return next((p for p, found in _STARTUP_RUNS_FROM.items() if any(map(found.search, [tail, *paths]))), None)


def _ssh_pattern(pattern: str, glob: bool) -> bool:
    """Whether a written path (relative to the home folder) is, or as a glob in the home folder may
    be, one of `_SSH_RUNS_FROM` (not a path an expansion decides whole: `tar -C "$tmp" -x`)."""
    if _SSH_RUNS_FROM.search(pattern):
        return True
    return glob and pattern.startswith("/") and any(fnmatch.fnmatchcase(f, pattern) for f in _SSH_FILES)


def _ssh_file(real: str, home: str, report: _Report) -> bool:
    """Whether a file's real path is one of `_SSH_RUNS_FROM` (`ln -s ~/.ssh/config cfg; echo x >> cfg`),
    or one the user's ssh configuration includes from elsewhere (`~/.colima/ssh_config`)."""
    if not real.startswith("/"):
        return False
    if _SSH_RUNS_FROM.search(real.removeprefix(os.path.realpath(home))):
        return True
    if report.ssh_included is None:  # once a command: `cp f0 ... f4999 dir/` read it for each file
        report.ssh_included = [os.path.realpath(p) if "*" not in p else p for p in ssh_included()]
    return any(fnmatch.fnmatchcase(real, p) for p in report.ssh_included)


def _runs_here(args: list[_Word], k: int) -> bool:
    """Whether the word at `k` stands where a program that runs others takes its command: first,
    after `--`, an option (`entr -r CMD`), an option's value (`runuser -u me CMD`, `conda run -n
    base CMD`) or a runner's word (`_RUNNER_WORDS`); not a word of a sentence (`todo add meeting at 5pm`)."""
    if k == 0:
        return True
    before = args[k - 1].value or ""
    value_of = k > 1 and (args[k - 2].value or "").startswith("-") and "=" not in (args[k - 2].value or "")
    return before in _RUNNER_WORDS or before.startswith("-") or value_of


def write_targets(name: str, args: list[_Word], in_place: bool) -> list[_Word]:
    """The words a command surely writes: cp's, mv's, ln's, install's target (the last operand, or
    `-t DIR`), tee's files, dd's `of=`, what `sed -i` and `perl -i` edit; not a source they read."""
    dashes = options_end(args)  # after `--` every word is a name (`cp x -- -s` writes ./-s)
    if name == "tee" or in_place or (name == "sed" and any(_IN_PLACE.match(a.value or "") for a in args)):
        return [a for k, a in enumerate(args) if k > dashes or not (a.value or "").startswith("-")]
    if name == "dd":
        return [a for a in args if (a.value or "").startswith("of=")]
    if name in _WRITERS or name == "ln":
        named = [w for _option, w in option_values(args, ["-t", "--target-directory"], takes_value="tSbfo")]
        operands = [a for k, a in enumerate(args) if k > dashes or not (a.value or "").startswith("-")]
        return named or operands[-1:]
    return []


def _as_file(w: _Word) -> _Word:
    """A word surely a file's name (a redirection's, an operand after `--`): `-s` is ./-s, no option
    (a review, 2026-12-05: `cat x > -s && bash ./-s` judged the -s on disk)."""
    if not w.pattern.startswith("-"):
        return w
    return _Word(None if w.value is None else f"./{w.value}", w.source, f"./{w.pattern}", w.glob)


_IN_PLACE = re.compile(r"-[a-zA-Z]*i|--in-place")  # sed's and perl's
# builtins that run code in the shell that runs them (mapfile's -C callback too: a red team, 2026-12-05)
_SAME_SHELL = frozenset({"source", ".", "eval", "trap", "mapfile", "readarray"})


def _printed_value(args: list[_Word]) -> str | None:
    """What `printf -v NAME FORMAT ARGS` stores, when every word is written out and FORMAT has only
    `%s` (None otherwise)."""
    words = [a.literal for a in args]
    at = next((k for k, w in enumerate(words) if w == "-v"), None)
    rest = words[at + 2 :] if at is not None else []
    if not rest or any(w is None for w in rest) or re.search(r"%[^s%]|\\", rest[0] or ""):
        return None
    fmt, values = rest[0] or "", [w or "" for w in rest[1:]]
    try:
        return fmt % tuple(values[: fmt.replace("%%", "").count("%s")])
    except (TypeError, ValueError):
        return None


def _assigned_names(name: str, args: list[_Word]) -> list[_Word]:
    """The variables `read`, `printf -v`, `mapfile` and `readarray` set, to values not seen here."""
    if name == "printf":
        return [w for _option, w in option_values(args, ["-v"], "v")]
    if name in ("read", "mapfile", "readarray"):
        values = {"read": "-a -d -i -n -N -p -t -u", "mapfile": "-d -n -O -s -u -C -c"}.get(
            name, "-d -n -O -s -u -C -c"
        )
        arrays = [w for _option, w in option_values(args, ["-a"], "adinNptu")] if name == "read" else []
        return arrays + _operands(args, frozenset(values.split()))  # `read -a NAME` sets the array NAME
    return []


# The system's own files: written by a command of an app run as root, what they name runs outside the
# container (`/etc/ld.so.preload` in the next bwrap, `kernel.core_pattern` at the next crash: red team).
# Also the code other programs load from /usr/share (Tcl/Tk's library, which the approval prompt's Tk
# sources: a red team, 2026-12-05, made it allow every hold; Perl's modules), /usr/local/share, cron's
# spool and systemd's runtime units.
_SYSTEM_FILES = re.compile(
    r"/(?:etc|boot|proc/sys|sys|lib\w*|bin|sbin|usr/(?:local/)?(?:bin|sbin|lib\w*|libexec)|usr/local/share"
    r"|usr/share/(?:dbus-1|tcltk|tcl[\w.]*|tk[\w.]*|perl[\w.]*|polkit-1|systemd)|var/spool/(?:cron|anacron|at\w*)"
    r"|run/systemd)(?:/|$)"
)  # not /usr/src or /opt, where a container's project often lives
# Builtins that take names or arithmetic, where a subscript's `$(...)` runs (`read 'a[$(rm ...)]'`); and
# those whose number a bash may evaluate as arithmetic (`shift 'a[$(rm ...)0]'`, `history -d`: a red team).
_EVALUATES_WORDS = frozenset(
    {"let", "declare", "typeset", "local", "export", "readonly", "printf", "read", "test", "[", "unset", "mapfile",
     "readarray", "shift", "break", "continue", "return", "exit", "logout"}
)  # fmt: skip
_INDIRECT_ASSIGNMENT = re.compile(r"\$\{![A-Za-z_]\w*(?:\[[^\]]*\])?:?=(.*)\}", re.S)
_ASSIGNMENT_WORD = re.compile(r"([A-Za-z_]\w*)\+?=")  # a word bash's keyword mode takes for an assignment
_TEXT_END = "__COWORK_TERMINAL_TEXT__"  # ends the here-document `later_expanded` judges text as
# Where no container guards the protected set (names_protected): how commands write files named elsewhere.
_NOT_BY_NAME = frozenset({"--no-target-directory", "--parents"})
_NO_TARGET_FOLDER = re.compile(r"-[a-zA-Z]*T[a-zA-Z]*")
_TARGET_OPTIONS = frozenset({"-t", "--target-directory", "-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g"})
_WRITTEN_THROUGH = frozenset({"GIT_WORK_TREE", "GIT_DIR"})  # `GIT_WORK_TREE=~ git checkout -- .bashrc`
_DECOMPRESSORS = frozenset({"gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4", "lzma"})
_COMPRESSED = re.compile(r"\.(?:gz|bz2|xz|zst|lz4|lzma|z)$", re.I)
_TO_STDOUT = frozenset({"-c", "--stdout", "--to-stdout", "-t", "--test", "-l", "--list"})  # `gzip -dc`: writes none
# `source() { ...; }; source ~/.bashrc`, an alias: a `source` the command defines is not bash's (a review)
_DEFINES_SOURCE = re.compile(
    r"(?:^|[\s;&|({])(?:function\s+)?(?:source|\.)\s*\(\s*\)|\bfunction\s+(?:source|\.)(?=[\s{])"
    r"|\balias\s+(?:\S+\s+)*['\"]?(?:source|\.)="
)
_ATTACHED_OUTPUT = frozenset("oOCdDPft")  # options that name where a command writes: not `-L/lib`, `-I/inc`
_WINDOWS_ABSOLUTE = re.compile(r"[A-Za-z]:[/\\]")  # `C:/Users/ann/x`: HOME in Git Bash
# `${x@P}` expands x's value as a prompt: a `$(...)` in it runs (fifth red team)
_PROMPT_EXPANSION = re.compile(r"\$\{!?[A-Za-z_]\w*(?:\[[^\]]*\])?@P\}")
# What may stand before a `#` that starts a comment in bash: a word's start (tree-sitter also takes one
# after \v, \f or \r, which bash keeps in the word: `true\v# ; rm -rf DIR` ran rm, judged safe)
_BEFORE_COMMENT = frozenset(b" \t\n;&|()<>`")
# A newline no backslash continues: bash ends the command there (tree-sitter read `echo hi\n\\rm -rf DIR`
# as one echo, and `echo hi\n\\\nrm -rf DIR` too: bash runs rm; a fuzzer against bash, 2026-12-05)
_BARE_NEWLINE = re.compile(rb"(?<!\\)\n")
_LEADING_BLANKS = re.compile(rb"[ \t\n\\]*")
_JOINED_BY_CONTINUATIONS = re.compile(rb"(?:\\\n)+")  # bash removes each, and the words on either side join
_ASSIGNED_HEAD = re.compile(r"([A-Za-z_]\w*)(?:\[[^\]]*\])?\+?=")  # `time x=1`: bash's assignment, no program
_MAX_BRACE_WORDS = 64
# Where bash expands text as arithmetic, and the nodes of an expression between (`in_arithmetic`)
_ARITHMETIC = frozenset({"arithmetic_expansion", "subscript", "c_style_for_statement"})
_IN_EXPRESSION = frozenset({"binary_expression", "unary_expression", "ternary_expression", "parenthesized_expression",
                            "postfix_expression", "concatenation", "ERROR"})  # fmt: skip
_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-v"})  # `[[ ]]` evaluates their operands
# bash's reserved words: tree-sitter takes them for a command's words after `time`, `coproc` and `!`
# (`time { $(printf rm) -rf DIR; }`, `! for ...`: bash runs the group, a fuzzer against bash, 2026-12-05)
_RESERVED = frozenset({"{", "}", "do", "done", "then", "else", "elif", "fi", "for", "while", "until", "if",
                       "case", "esac", "select", "function", "[[", "]]", "in", "(("})  # fmt: skip
_PREFIXES = frozenset({"time", "coproc", "!"})  # `{a,b}{c,d}...`: more words than this stay one pattern
# `${NAME:=VALUE}`, `${NAME=VALUE}`: sets NAME where it is unset (or empty), as `NAME=VALUE` does
_DEFAULT_ASSIGNMENT = re.compile(r"\$\{([A-Za-z_]\w*)(?:\[[^\]]*\])?:?=(.*)\}", re.S)
# An arithmetic assignment (`let PATH=1`, `let x+=2`; not `==`, `<=`, `!=`)
_ARITHMETIC_ASSIGNMENT = re.compile(
    r"(?<![\w\]!<>])(\$\{?)?([A-Za-z_]\w*)\}?\s*(?:\[[^\]]*\])?\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)"
)  # `let x=PATH=1` sets both; `let "$v=1"` the variable $v names
# No blank, pattern or expansion, nor a `-`: a session's IFS may be any (`IFS=:`, allowed), and then
# `f=x:-o:-delete; find . -name $f` splits into `-o -delete` (the red team's); no piece of it is an option
_PLAIN_VALUE = re.compile(r"[\w.,:/@%+=^]+")
_ASSIGNING_OPERATORS = frozenset({"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|="})


def _as_heredoc(text: str) -> str:
    """`text` as the body of a here-document bash expands, as tree-sitter reads one: backquotes as
    `$(...)`, and no line's leading blanks (after them tree-sitter reads no `$(...)`)."""
    body = re.sub(r"`([^`]*)`", r"$(\1)", text).replace(_TEXT_END, "_")
    body = re.sub(r"(?m)^[ \t]+", "", body)
    return f": <<{_TEXT_END}\n{body}\n{_TEXT_END}\n"


def _parses(text: str) -> bool:
    return not _parser().parse(text.encode("utf-8", "surrogatepass")).root_node.has_error


class _Analyzer:
    """Walks one parsed text; strings that bash would run again get an _Analyzer of their own.
    Each simple command goes to the rule `registry.rule_for` names, which sees this object as its
    `rule.Analysis`."""

    def __init__(
        self, text: str, report: _Report, protected: _Protected, nesting: int, cwd: str | None, script: str = ""
    ) -> None:
        text = split_at_ifs(text, _parses)  # as bash splits the words, the everyday IFS known (a red team, 2026-12-05)
        self.text = text
        self.script = script  # the script file this text is the content of ("": the command line)
        self.head: _Word | None = None  # the command word of the command a rule is judging (`.venv/bin/pip`)
        self.src = text.encode("utf-8", "surrogatepass")
        self.report = report
        self.add = report.add  # one finding: `reason` and `plain` are templates of its values
        self.protected = protected
        self.nesting = nesting
        self.home = _home()
        self.cwd = cwd  # where relative paths lead: the caller's folder, then each literal `cd`
        self.start = cwd  # the folder the classification started in (a nested text's: its caller's start)
        self.projects: dict[str, bool] = {}  # project_folder's answers
        if nesting == 0 and cwd is not None:  # where project settings are read (project_settings.judge)
            report.places[cwd] = None  # its real folder too, once judged
        report.cdpath = report.cdpath or "CDPATH" in text or "cdable_vars" in text
        inherited = os.environ.get("CDPATH") if protected.guarding and nesting == 0 else None
        if inherited and not report.cdpaths:  # the user's own, which the command's shell is given (red team 13)
            report.cdpath, report.cdpaths = True, cdpath_folders(self, _Word(inherited, inherited, inherited))
        self.scratch_names = scratch_variables(text)  # may hold the agent's own mktemp files
        self.scratch_seen: set[str] = set()  # ... and were assigned from mktemp before this point
        self.only_read: set[int] = set()  # where the files `source` reads start (names_protected: not named)
        self.pushed: list[str | None] = []  # the folders `pushd` left, for `popd`
        # This shell's descriptors as far as known (`descriptors_after`): on a file (its word), or None
        # on a pipe, the terminal or nothing; one not here may be on any file. "?": a `{fd}<x`'s.
        self.descriptors: dict[str, _Word | None] = {"1": None, "2": None}
        self.open_now = self.descriptors  # the simple command's own, as it runs (`write_through`)
        # Functions this command line defines (shared with its nested texts): a call runs code judged
        # where it was defined, with the descriptors open at the call (`may_write_descriptors`)
        self.functions: set[str] = set()
        # Redirections tree-sitter put on a list or pipeline, for its last command (`redirected`)
        self.trailing: dict[int, tuple[list[Node], list[Node]]] = {}
        # `source() { ...; }; source ~/.bashrc`: a `source` the command defines is not bash's (a review)
        self.own_source = _DEFINES_SOURCE.search(text) is not None
        self.here = nesting == 0  # runs in the shell the command is given to, not a process of its own
        self.same_shell = False  # the command being judged runs its code in this shell (eval, source, trap)
        self.subshells = 0  # inside `( )`, `$( )` or `<( )`: a process of its own, whose variables end with it

    # ---- entry points

    def run(self) -> None:
        text = SOURCED.sub(" true", self.text) if self.protected.guarding else self.text  # only read
        if self.protected.mentioned_in(text):
            self.add(D, TOUCHES_APP_DATA)
        if len(self.text) > MAX_COMMAND_CHARS:
            self.add(D, "cannot tell what runs: the command is too long to check")
            return
        tree = _parser().parse(self.src)
        root = tree.root_node
        # `"$\\<newline>(rm -rf DIR)"`: bash drops the backslash-newline first and runs the `$(...)`,
        # tree-sitter reads a `$` and text (judged safe: a fuzzer against bash, 2026-12-05)
        if root.has_error or "$\\\n" in self.text:
            self.add(D, "cannot tell what runs: the command does not parse as bash")
        self.walk(root, None, 0)

    def code_words(self, words: list[_Word], what: str, strip_prefix: str = "") -> None:
        """Words bash would join and parse again as code (`sh -c`, `eval`, `ssh host ...`)."""
        values = [w.literal for w in words]
        if any(v is None for v in values):
            if any(_DOWNLOADS.search(w.source) for w in words if w.literal is None):
                runs_download(self, what)
            else:
                self.add(D, "cannot tell what runs: {what} of an expansion", what=what)
            return
        text = " ".join(v for v in values if v is not None)
        if strip_prefix and text.startswith(strip_prefix):
            text = text[len(strip_prefix) :]
        self.sub_script(text, what)

    def code_loads(self, name: str, code: str) -> None:
        """Files inline code loads by a name written in it, read as they run (indirect.code_loads)."""
        code_loads(self, name, code)

    def sub_script(self, text: str, what: str, script: str | None = None) -> None:
        """Analyse code that bash (or a wrapper) would itself parse and run; `script`: the file it
        was read from, when it is a script's content."""
        if self.nesting >= MAX_SHELL_NESTING:
            self.report.too_large = True  # it stands even inside a guess (review: 13 nested `faketime 0 "..."`)
            self.add(D, "cannot tell what runs: {what} nested too deeply to check", what=what)
            return
        origin = self.script if script is None else script
        nested = _Analyzer(text, self.report, self.protected, self.nesting + 1, self.cwd, origin)
        nested.start = self.start
        nested.here = self.here and self.same_shell
        nested.subshells = self.subshells
        # `bash -c 'echo x >>/dev/stdout' 1<~/.bashrc`: it runs with the descriptors its command opened
        # (a review, 2026-12-06: judged safe, as if 1 and 2 were the terminal)
        nested.descriptors = nested.open_now = dict(self.open_now)
        nested.functions = self.functions
        nested.run()

    def too_large(self) -> None:
        if not self.report.too_large:
            self.report.too_large = True
            self.add(D, "cannot tell what runs: the command is too large or deeply nested to check")

    # ---- tree walking

    def node_text(self, node: Node) -> str:
        return self.src[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def walk(self, node: Node, stdin: _Stdin | None, depth: int) -> None:
        self.report.nodes += 1
        if self.report.deadline is not None and not self.report.nodes % 32 and time.monotonic() > self.report.deadline:
            raise JudgedTooLong
        if self.report.nodes > MAX_NODES or depth > MAX_TREE_DEPTH:
            self.too_large()
            return
        kind = node.type
        if kind == "command":
            self.command(node, stdin, depth, extra=[], outer_redirects=[])
        elif kind == "redirected_statement":
            self.redirected(node, stdin, depth)
        elif kind == "pipeline":
            self.pipeline(node, stdin, depth)
        elif kind == "comment":
            start = node.start_byte
            if start > 0 and self.src[start - 1] not in _BEFORE_COMMENT:  # bash reads no comment here
                self.add(D, "cannot tell what runs: the command does not parse as bash")
            return
        else:
            if kind in ("raw_string", "ansi_c_string") and self.in_arithmetic(node):
                self.arithmetic_text(self.node_text(node).removeprefix("$")[1:-1])
            elif kind in ("binary_expression", "unary_expression"):  # `[[ 'a[$(rm -rf DIR)0]' -eq 0 ]]`
                self.arithmetic_operands(node)
            if kind == "variable_assignment":
                self.assignment(node)
                alone = node.parent is None or node.parent.type != "command"  # not `POSIXLY_CORRECT=1 df`
                if alone and self.node_text(node).startswith("POSIXLY_CORRECT="):  # the shell's: POSIX mode, aliases on
                    aliases_on(self, "POSIXLY_CORRECT")
            elif kind in _WORDISH and node.start_byte not in self.only_read:
                self.check_word(self.word([node]))
            elif kind == "declaration_command":  # export, declare...: the parser's words, judged as bash sees them
                self.declared(node)
                self.subscripts(node)
            elif kind == "unset_command":  # `unset 'a[$(rm -rf DIR)]'`: not a `command` node
                self.subscripts(node)
                self.unset([self.word(group) for group in self.adjacent(node.children[1:])])
            elif kind == "heredoc_body":
                self.heredoc_unparsed(node)
            elif kind == "for_statement":
                self.loop_variable(node)
            elif kind == "expansion" and (indirect := _INDIRECT_ASSIGNMENT.fullmatch(self.node_text(node))):
                known = indirect[1] if re.fullmatch(r"[^$`'\"\\]*", indirect[1]) else None
                sets_any_variable(self, self.node_text(node), known)  # `${!v:=/tmp}` sets the variable $v names
            elif kind == "expansion" and (default := _DEFAULT_ASSIGNMENT.fullmatch(self.node_text(node))):
                # `x=${BASH_ENV:=./rc.sh}`, `: ${PATH:=./bin}` (a red team, 2026-12-05: judged safe)
                known = default[2] if re.fullmatch(r"[^$`'\"\\]*", default[2]) else None
                variable_set(self, default[1], _Word(known, self.node_text(node), known or "*"))
            if kind == "binary_expression" and self.in_arithmetic(node):
                self.arithmetic_assignment(node)  # `: $((PATH=1))`, `(( PATH=1 ))`
            if kind == "function_definition":
                self.lasts("defines a function")
                defined = node.child_by_field_name("name")
                if defined is not None:
                    self.functions.add(self.node_text(defined))
            if kind in ("function_definition", "while_statement") and _starts_without_end(node, self.node_text):
                self.add(D, "starts background jobs without end (a fork bomb): bound the loop or `wait` for its jobs",
                         N_("Starts programs without end, until the computer stops answering"),
                         danger=Danger.SYSTEM)  # fmt: skip
            inner = stdin
            if kind == "process_substitution":
                inner = _PIPE if self.node_text(node).startswith(">(") else None
            elif kind == "command_substitution":
                inner = stdin if stdin is not None and stdin.kind == "pipe" else None
            repeats = kind in _REPEATED  # a relative `cd` in it may run again (shells.move_to)
            apart = kind in _SUBSHELLS
            self.report.repeating += repeats
            self.subshells += apart
            try:
                for child in node.children:
                    self.walk(child, inner, depth + 1)
            finally:
                self.report.repeating -= repeats
                self.subshells -= apart

    def subscripts(self, node: Node) -> None:
        """`declare 'a[$(rm -rf DIR)]=1'`, `unset 'a[...]'`: bash evaluates a name's subscript, and its
        `$(...)` runs (each was judged safe: a fuzzer against bash, 2026-12-05)."""
        for child in node.children[1:]:
            if child.type in _WORDISH:
                self.evaluated_subscript(self.word([child]).literal or "")

    def evaluated_subscript(self, text: str) -> None:
        """A name whose subscript bash evaluates now (`let`, `read`, `declare`, `unset`): its `$(...)`
        runs, and a command name it cannot tell holds too (`declare 'a[$(${x:-rm} -rf DIR)]=1'`)."""
        if _SUBSCRIPT_CODE.search(text):
            self.keep_deletions(functools.partial(self.judge_string, _as_heredoc(text)), True, every=True)

    def in_arithmetic(self, node: Node) -> bool:
        """Whether a quoted text stands where bash expands it as arithmetic, its quotes taken as letters
        (`(( 'a[$(rm -rf DIR)0]' ))`, `$(( ... ))`, `${a['$(rm -rf DIR)']}`, `a=(['$(rm -rf DIR)']=1)`:
        each ran rm, judged safe; a red team, 2026-12-05): in an expression of one, or a subscript."""
        parent = node.parent
        while parent is not None and parent.type in _IN_EXPRESSION:
            if parent.type == "concatenation" and parent.parent is not None and parent.parent.type == "array":
                return self.array_subscript(parent, node)
            parent = parent.parent
        if parent is None:
            return False
        return parent.type in _ARITHMETIC or (parent.type == "compound_statement" and parent.children[0].type == "((")

    def array_subscript(self, element: Node, node: Node) -> bool:
        """Whether `node` is in the subscript of an element of `a=([SUBSCRIPT]=VALUE ...)`, before its `]`."""
        if not self.node_text(element).startswith("["):
            return False
        for child in element.children:
            if child.start_byte >= node.end_byte:
                return True
            if "]" in self.node_text(child):
                return False
        return False

    def arithmetic_text(self, text: str) -> None:
        """Text bash expands as arithmetic: its `$(...)` runs there, quoted or not (judged as a value
        holding one is: `evaluated_subscript`)."""
        if "$(" in text or "`" in text:
            self.keep_deletions(functools.partial(self.judge_string, _as_heredoc(text)), True, every=True)

    def arithmetic_operands(self, node: Node) -> None:
        """The operands of `[[ ]]`'s and `[ ]`'s integer comparisons and of `-v`: bash evaluates their
        values as arithmetic, so a subscript's `$(...)` in them runs (`[[ 'a[$(rm -rf DIR)0]' -eq 0 ]]`,
        `[[ -v 'a[$(rm -rf DIR)0]' ]]`: judged safe, a red team, 2026-12-05), as `test`'s words are."""
        operator = next((c for c in node.children if c.type == "test_operator"), None)
        if operator is None or self.node_text(operator) not in _ARITHMETIC_TESTS:
            return
        for child in node.children:
            if child.is_named and child.type != "test_operator":
                self.evaluated_subscript(self.word([child]).literal or "")

    def heredoc_unparsed(self, node: Node) -> None:
        """What tree-sitter leaves unparsed in a here-document bash expands: a backquote, a `$(...)`
        after a line's leading blanks (`cat <<EOF\\n\\t$(rm -rf DIR)\\nEOF` ran rm, judged safe: a fuzzer
        against bash, 2026-12-05); judged as `later_expanded` reads text, but each finding counts."""
        siblings = node.parent.children if node.parent is not None else []
        start = next((c for c in siblings if c.type == "heredoc_start"), None)
        if start is not None and re.search(r"['\"\\]", self.node_text(start)):
            return  # `<<'EOF'`: bash expands nothing in it
        text = bytearray(self.src[node.start_byte : node.end_byte])
        for child in node.children:  # a `$(...)` tree-sitter parsed is walked as it is
            if child.type == "command_substitution":
                begin, end = child.start_byte - node.start_byte, child.end_byte - node.start_byte
                text[begin:end] = b" " * (end - begin)
        rest = text.decode("utf-8", "replace")
        if "`" in rest or "$(" in rest:  # it runs as surely as what was parsed: every finding counts
            self.sub_script(_as_heredoc(rest), "a here-document")

    def loop_variable(self, node: Node) -> None:
        """`for NAME in WORDS`: NAME is assigned each word in turn, as `NAME=WORD` alone (a review,
        2026-12-05: `for PATH in /tmp; do ls; done` ran /tmp/ls, judged safe); without `in`, the
        script's arguments, which only bash knows."""
        name = node.child_by_field_name("variable")
        if name is None:
            return
        words = [self.word([value]) for value in node.children_by_field_name("value")]
        for word in words or [_Word(None, '"$@"', "*")]:
            variable_set(self, self.node_text(name), word)

    def arithmetic_assignment(self, node: Node) -> None:
        """`NAME = VALUE` (or `+=`...) in arithmetic: NAME is set, to a value not known here."""
        left = node.child_by_field_name("left")
        operator = next((c for c in node.children if not c.is_named), None)
        if left is None or operator is None or operator.type not in _ASSIGNING_OPERATORS:
            return
        if left.type in ("variable_name", "subscript"):  # `(( BASH_CMDS[ls]=1 ))` sets an entry
            variable_set(self, self.node_text(left), _Word(None, self.node_text(node), "*"))
        elif left.type in _EXPANSIONS:  # `(( $v = 1 ))`: the variable $v names
            sets_any_variable(self, self.node_text(node), "")

    def unset(self, args: list[_Word]) -> None:
        """`unset PATH`: bash then looks for programs in the shell's folder (a planted `./ls` ran at a
        later `ls`), as `PATH=` does; a function's name (`unset -f`) is none."""
        functions = False
        for a in args:
            if a.value is not None and re.fullmatch(r"-[fvn]+", a.value):
                functions = "f" in a.value
            elif a.value is None:
                sets_any_variable(self, a.source, "")  # `unset "$v"`: any variable
            elif not functions:
                variable_set(self, a.value, _Word("", a.source, ""))

    def lasts(self, what: str, *, unless_subshell: bool = False) -> None:
        """The command leaves `what` in the shell that runs it (`Classification.lasting`);
        `unless_subshell`: not when set in a subshell, where it ends with it (`x=$(IFS=,; echo ...)`)."""
        if self.here and not self.report.guessing and not (unless_subshell and self.subshells):
            self.report.lasting.append(what)

    def lasting_command(self, name: str, args: list[_Word]) -> None:
        """A builtin that changes how the shell runs its later commands (`Classification.lasting`)."""
        if name == "trap":
            _options, i = _split_options(args)
            code = args[i] if len(args) - i >= 2 else None  # one word alone resets its signal
            if code is not None and code.value not in ("-", ""):  # `trap '' INT` ignores the signal
                self.lasts("sets a trap")
        elif name == "eval" and args:
            self.lasts("runs eval")
        elif name == "enable" and any(a.value is None or re.fullmatch(r"-\w*[fnd]\w*", a.value) for a in args):
            self.lasts("loads or turns off a builtin")
        elif name in ("source", ".") and args and (args[0].value is None or args[0].value in _STDIN_FILES):
            self.lasts("sources code from its input or another command's output")
        elif name == "alias" and not self.script and any(a.value is None or "=" in a.value for a in args):
            # with aliases on, a later `ls` runs its value (a red team, 2026-12-05); turning them on is
            # held, so the aliases of a file sourced whole (`source ~/.bashrc`) are left to that hold
            self.lasts("defines an alias")

    def pipeline(self, node: Node, stdin: _Stdin | None, depth: int) -> None:
        previous: Node | None = None
        fed = stdin
        kept = self.descriptors
        for child in node.children:
            if child.type in ("|", "|&"):
                fed = self.pipe_source(previous)
                # its descriptor 0 is the pipe (`printf x | tee /dev/stdin` writes no file)
                kept, self.descriptors = self.descriptors, {**self.descriptors, "0": None}
                continue
            piped = self.descriptors
            self.walk(child, fed, depth + 1)
            if self.descriptors is piped and piped is not kept:
                self.descriptors = kept  # an `exec` in it keeps what it opened (as if it lasted)
            previous = child

    def pipe_source(self, previous: Node | None) -> _Stdin:
        """What flows through a pipe: known after `echo` of literal words, or `cat` of one file."""
        if previous is not None and previous.type == "command":
            words = self.command_words(previous)
            name = _command_name(words[0].value) if words and words[0].value is not None else ""
            if name in ("echo", "printf"):
                values = [w.literal for w in words[1:]]
                text = _printed_text(name, values)
                if text is not None:
                    return _Stdin("text", text)
                if None not in values:  # its words, near enough for a database client or ed; a shell cannot tell
                    said = _ansi_c(" ".join(v for v in values if v is not None))
                    return _Stdin("unknown", said, f"the output of {name}")
            if name in _DOWNLOADERS:
                return _Stdin("pipe", source=name)  # `curl ... | sh`: said as a download
            operands = [w.value for w in words[1:]]
            if name == "cat" and len(operands) == 1 and operands[0] and not operands[0].startswith("-"):
                # `cat q.sql | sqlite3 db` is `sqlite3 db < q.sql`: the file is read, as its redirection's is
                return _Stdin("file", text=operands[0], source=words[1].source)
        return _PIPE

    def redirected(self, node: Node, stdin: _Stdin | None, depth: int) -> None:
        body = node.child_by_field_name("body")
        redirects = self.collect_redirects(node)
        extra: list[Node] = []
        starts = {r.start_byte for r in redirects}
        for r in redirects:
            if r.type == "file_redirect":
                # tree-sitter reads `> f 0>&1` as `> f 0` + `>&1`: a number touching a redirect is its fd.
                extra.extend(
                    d
                    for d in r.children_by_field_name("destination")[1:]
                    if not (d.type == "number" and d.end_byte in starts)
                )
        fed = self.redirect_stdin(redirects) or stdin
        # `true && exec 3<x`, `printf x | tee /dev/stdin <f`, `! exec 3<x`: tree-sitter puts the
        # redirections on the whole list or pipeline; bash gives them to its last command (a review,
        # 2026-12-06: the `exec` was judged safe and not lasting)
        last = self.last_command(body)
        if body is not None and body.type == "command":
            self.command(body, fed, depth + 1, extra=extra, outer_redirects=redirects)
        elif body is not None and last is not None:
            self.trailing[last.id] = (redirects, extra)
            try:
                self.walk(body, stdin, depth + 1)
            finally:
                self.trailing.pop(last.id, None)
        else:
            if body is not None:  # `{ echo x >/dev/fd/3; } 3<~/.bashrc`: its commands have them open
                kept = self.descriptors
                self.descriptors = inside = self.descriptors_after(redirects, self.descriptors)
                try:
                    self.walk(body, fed, depth + 1)
                finally:  # an `exec` in it (`{ exec 4<x; } 3<y`) keeps what it opened, and these too
                    if self.descriptors is inside:
                        self.descriptors = kept
            if extra:  # tree-sitter puts `>f a b` words in the redirect; bash would run `a b`
                self.argv(self.group_words(extra), fed, bulk=False, depth=depth)
            self.check_redirects(redirects)
        for r in node.children:
            if body is None or r.id != body.id:  # py-tree-sitter makes a new Node object on each access
                self.walk(r, None, depth + 1)

    def last_command(self, node: Node | None) -> Node | None:
        """The simple command a list, pipeline or `!` ends with (`a && b | c` -> c), if it is one."""
        while node is not None and node.type in ("list", "pipeline", "negated_command"):
            named = [c for c in node.children if c.is_named and c.type != "comment"]
            node = named[-1] if named else None
        return node if node is not None and node.type == "command" else None

    @staticmethod
    def exec_alone(words: list[_Word]) -> int | None:
        """How many of `words` are the `exec` (with `builtin`, `command`, `time` before it, and its
        options: `-c`, `-l`, `-a NAME`, `--`) when it runs no program, so that its redirections last in
        the shell; None when it runs one or is no `exec`. A `{fd}` word is a redirection's, misread."""
        values = [w.value for w in words]
        k = 0
        while k < len(values) and values[k] in ("builtin", "command", "time"):
            k += 1
            while k < len(values) and values[k] in ("-p", "--"):  # `command -p exec`, `time -p exec`
                k += 1
        if values[k : k + 1] != ["exec"]:
            return None
        k += 1
        while k < len(values) and (values[k] or "").startswith("-") and values[k] != "-":
            option = values[k] or ""
            k += 1
            if option == "--":
                break
            if re.fullmatch(r"-[^-]*a", option):  # `-a NAME`, `-ca NAME` (`-aNAME` holds its own)
                k += 1
        if all(re.fullmatch(r"\{[A-Za-z_]\w*\}", v or "") for v in values[k:]):
            return min(k, len(values))
        return None

    def collect_redirects(self, node: Node) -> list[Node]:
        found: list[Node] = []
        for child in node.children:
            if child.type in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                found.append(child)
                if child.type == "heredoc_redirect":
                    found.extend(c for c in child.children if c.type == "file_redirect")
        return found

    def redirect_stdin(self, redirects: list[Node]) -> _Stdin | None:
        fed: _Stdin | None = None
        for r in redirects:
            if r.type == "heredoc_redirect":
                body = next((c for c in r.children if c.type == "heredoc_body"), None)
                text = self.node_text(body) if body is not None else ""
                expands = body is not None and any(c.type in _EXPANSIONS for c in body.children)
                fed = _Stdin("unknown" if expands else "text", text, "a heredoc with expansions")
            elif r.type == "herestring_redirect":
                parts = [c for c in r.children if c.type != "<<<"]
                w = self.word(parts) if parts else _Word("", "", "")
                if w.literal is None:
                    fed = _Stdin("unknown", "", "a here-string with expansions")
                else:
                    fed = _Stdin("text", w.literal)
            elif r.type == "file_redirect" and self.redirect_operator(r) == "<":
                dest = r.children_by_field_name("destination")
                source = self.word(dest[:1])
                if source.procsub or source.value is None:
                    fed = _Stdin("unknown", "", f"the output of {_snip(source.source)}")
                else:
                    fed = _Stdin("file", text=source.value, source=source.source)  # text: the file's name
            elif r.type == "file_redirect" and self.redirect_operator(r) == "<&" and self.into_stdin(r):
                # `exec 4<<EOF ... EOF; bash <&4`: what descriptor 4 holds was written elsewhere (judged an
                # interactive shell, moderate: a fuzzer against bash, second round, 2026-12-05)
                source = self.word(r.children_by_field_name("destination")[:1])
                if source.value not in ("0", "0-", "-"):  # `<&0` keeps stdin, `<&-` closes it
                    fed = _Stdin("unknown", "", f"file descriptor {_snip(source.source)}")
        return fed

    def into_stdin(self, r: Node) -> bool:
        """Whether a redirection sets standard input (`<&3`, `0<&3`; not `5<&3`)."""
        descriptor = r.child_by_field_name("descriptor")
        if descriptor is None:
            return self.touching_descriptor(r) in (None, "0")
        return self.node_text(descriptor) == "0"

    def redirect_operator(self, r: Node) -> str:
        for c in r.children:
            if not c.is_named:
                return c.type
        return ""

    def redirect_descriptor(self, r: Node, op: str) -> str | None:
        """The descriptor a redirection sets: its number, `?` for `{fd}<x` (bash picks it), None for
        `&>f` (both 1 and 2); without one, 0 for `<`, `<>`, `<&`, else 1."""
        descriptor = r.child_by_field_name("descriptor")
        if descriptor is not None:
            return self.node_text(descriptor)
        touching = self.touching_descriptor(r)
        if touching is not None:
            return touching
        return "0" if op.startswith("<") else None if op.startswith("&") else "1"

    def touching_descriptor(self, r: Node) -> str | None:
        """The descriptor a whole word right before a redirection, with no blank between, names when
        tree-sitter left it out of it: a number (`exec 0<x` is read as the argument `0` and `<x`: a
        review, 2026-12-06), or `?` for `{fd}` (`exec {fd}<x`; not `W${x}<x`, whose word only ends
        in `{x}` and reads from the file on 0)."""
        if r.type != "file_redirect" or r.child_by_field_name("descriptor") is not None:
            return None
        start = r.start_byte
        while start > 0 and self.src[start - 1 : start] not in _WORD_BOUNDARY:
            start -= 1
        before = self.src[start : r.start_byte]
        if re.fullmatch(rb"\d+", before):
            return before.decode()
        return "?" if re.fullmatch(rb"\{[A-Za-z_]\w*\}", before) else None

    def descriptors_after(self, redirects: list[Node], fds: dict[str, _Word | None]) -> dict[str, _Word | None]:
        """The descriptors `fds` once `redirects` are made, left to right as bash makes them."""
        fds = dict(fds)
        for r in sorted(redirects, key=lambda r: r.start_byte):
            op = self.redirect_operator(r) if r.type == "file_redirect" else ""
            dest = r.children_by_field_name("destination")
            if not dest:  # a heredoc or here-string on its descriptor (text, no file); `3<&-` closes 3
                if r.type != "file_redirect" or op in ("<&-", ">&-"):
                    fds[self.redirect_descriptor(r, op or "<") or "1"] = None
                continue
            target = self.word([dest[0]])
            fd = self.redirect_descriptor(r, op)
            duplicated = op in (">&", "<&") and re.fullmatch(r"\d+-?|-", target.value or "")
            if duplicated and fd is not None:  # `3>&1`: what 1 is on; `3>&-` closes it
                number = (target.value or "").rstrip("-")
                if number and number in fds:
                    fds[fd] = fds[number]
                elif number:
                    fds.pop(fd, None)
                else:
                    fds[fd] = None
                continue
            through = self.descriptor_file(target)
            for each in ("1", "2") if fd is None else (fd,):
                if through is None:
                    fds[each] = target
                elif through in fds:  # `3</dev/fd/5`: on what 5 is on
                    fds[each] = fds[through]
                else:
                    fds.pop(each, None)
        return fds

    def descriptor_file(self, target: _Word) -> str | None:
        """The descriptor a name like `/dev/stdin`, `/dev/fd/3` or `/proc/self/fd/3` reopens (`?`:
        one picked by an expansion), or None for any other name."""
        found = _DESCRIPTOR_FILE.match(target.value if target.value is not None else target.pattern)
        if found is None:
            return None
        if found[2]:
            return {"stdin": "0", "stdout": "1", "stderr": "2"}[found[2]]
        return (found[1] or found[3] or "?").replace("*", "?")

    def write_through(self, target: _Word, through: str) -> None:
        """A write to `target`, a name for descriptor `through` (`>/dev/stdin`, `tee /dev/fd/3`): the
        file bash or the program opens anew is the one open on that descriptor, written now even if it
        was opened for reading (`echo x <~/.bashrc >>/dev/stdin`: a red team, 2026-12-06). On a pipe or
        the terminal (`>/dev/stderr`), nothing; on a descriptor not known here, whatever file it is on."""
        fds = self.open_now
        files = [w for key, w in fds.items() if w is not None] if through == "?" else [fds.get(through)]
        for file in files:
            if file is not None and file is not target:
                self.written_redirect(file)
        if through == "?" or through not in fds:
            self.add(M, "writes through {source}: to whatever file it is open on",
                     N_("Writes to whatever file {source} is open on, which may be any file"),
                     source=_snip(target.source))  # fmt: skip

    def written_redirect(self, target: _Word) -> None:
        """A file a redirection writes (`> x`, `>> x`, `&> x`, `<> x`), or the one it reaches through a descriptor."""
        self.check_word(target)
        self.note_written(_as_file(target), writes=True)
        through = None if _BLOCK_DEVICE.match(target.pattern) else self.descriptor_file(target)
        if through is not None:
            self.write_through(target, through)
        elif target.value is None:
            self.add(M, "writes to a file named by an expansion: {source}", source=_snip(target.source))
        elif _HARMLESS_DEVICES.match(target.value):
            return
        elif re.match(r"^/dev/(tcp|udp)/", target.value):
            self.add(
                D,
                "cannot tell what runs: connects the shell to the network ({source})",
                source=_snip(target.source),
            )
        elif _BLOCK_DEVICE.match(target.pattern) or (target.glob and target.pattern.startswith("/dev/")):
            self.add(D, "writes to a disk device: {source}", source=_snip(target.source))
        else:
            self.add(M, "writes to {source}", source=_snip(target.source))

    def check_redirects(self, redirects: list[Node], *, lasting: bool = False) -> dict[str, _Word | None]:
        """Judges what `redirects` write, each with the descriptors made before it; gives the
        descriptors once all are made. `lasting`: `exec` alone keeps them in the shell, and a file it
        opens (to read too) may be written by any later command through its descriptor."""
        fds, entry = dict(self.descriptors), self.open_now
        for r in sorted(redirects, key=lambda r: r.start_byte):
            self.open_now = fds
            before, fds = fds, self.descriptors_after([r], fds)
            if r.type != "file_redirect":
                continue
            op = self.redirect_operator(r)
            dest = r.children_by_field_name("destination")
            if not dest or op == "<&":
                continue
            target = self.word([dest[0]])
            if op == ">&" and re.fullmatch(r"\d+-?|-", target.value or ""):
                continue  # 2>&1, >&- : file descriptors, not files
            if op != "<":
                self.open_now = before
                self.written_redirect(target)
            file = self.descriptor_file(target) is None and not _HARMLESS_DEVICES.match(target.value or "")
            if lasting and file and op == "<":
                self.check_word(target)
                self.note_written(_as_file(target), writes=True)
                self.add(M, "keeps {source} open for the commands after it, which may write it without naming it",
                         N_("Keeps {source} open, so that later commands can write to it without naming it"),
                         source=_snip(target.source))  # fmt: skip
            if lasting and file:
                self.lasts("keeps a file open on a descriptor")
        self.open_now = entry
        return fds

    def declared(self, node: Node) -> None:
        """`export "PATH"=x`, `export PA\\TH=x`: assignments bash sees once the quotes are gone, which
        the parser took for words; `declare -n p=PATH`: a later `p=x` sets PATH (red team, 2026-12-04).
        A name only known when it runs (`declare "$v=/tmp"`, `export $(cat .env)`, `declare -n p="$v"`)
        may be any variable's (`sets_any_variable`)."""
        nameref = shows = False
        for group in self.adjacent(node.children[1:]):
            child = group[0]
            if len(group) == 1 and child.type == "variable_assignment":
                value = child.child_by_field_name("value")
                named = self.word([value]).value if value is not None else None  # `declare -n r='PATH'`: PATH
                target = named if named is not None else self.node_text(value) if value is not None else ""
                if nameref and target.split("[")[0] in COMMAND_TABLES:  # a later `r[ls]=./x` sets BASH_CMDS[ls]
                    variable_set(self, target, _Word(None, target, "*"))
                elif nameref and (special_variable(target) or is_code_variable(target)):
                    self.add(M, "sets {value}: changes how later commands run", value=target)
                elif nameref and value is not None and self.word([value]).value is None:
                    sets_any_variable(self, target, "")  # `declare -n p="$v"`: a later `p=x` sets $v
                continue
            splits = any(c.type != "string" and (c.type in _EXPANSIONS or any(
                d.type in _EXPANSIONS for d in c.children)) for c in group)  # fmt: skip
            for word in declaration_words(self.word(group)):  # `export {PATH,X}=./bin` sets PATH
                if word.value is not None and re.fullmatch(r"[-+]\w+", word.value):
                    nameref = nameref or ("n" in word.value and word.value[0] == "-")
                    shows = shows or bool({"p", "f", "F"} & set(word.value))  # `declare -p "$v"` only shows it
                    continue
                found = DECLARED.match(word.pattern)
                if word.value is None and not shows and found is None:  # `declare "$v=x"`, `export "$line"`: any name
                    sets_any_variable(self, word.source, None)
                elif found is not None:  # written so that the parser saw no assignment: bash does
                    known = found[2] if word.value is not None else None
                    variable_set(self, found[1], _Word(known, word.source, found[2]))
                    if splits and not shows and not (special_variable(found[1]) or is_code_variable(found[1])):
                        sets_any_variable(self, word.source, "")  # `declare "a"=$v`: bash splits `$v` into more words
                elif nameref and not shows:  # `declare -n p`: `p=PATH` then names the variable `p=x` sets
                    sets_any_variable(self, word.source, "")

    def adjacent(self, nodes: list[Node]) -> list[list[Node]]:
        """Nodes bash reads as one word: the parser parts `{PATH,X}=./bin` and `P{A,B}TH=x` in pieces."""
        groups: list[list[Node]] = []
        for n in nodes:
            if groups and groups[-1][-1].end_byte == n.start_byte:
                groups[-1].append(n)
            else:
                groups.append([n])
        return groups

    def assignment(self, node: Node) -> None:
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name is not None:
            alone = node.parent is None or node.parent.type != "command"  # not `PATH=./bin:$PATH jest`
            said, word = self.node_text(name), None if value is None else self.word([value])
            before = said in self.report.unsure
            self.assigned(said, word, alone=alone)
            if word is not None and alone and self.node_text(node)[len(said) :].startswith("="):  # not `x+=1`
                self.known_value(node, said, word, before)
        fresh = value is not None and assigned_from_mktemp(self.node_text(value))
        if name is not None and fresh and self.node_text(name) in self.scratch_names:
            self.scratch_seen.add(self.node_text(name))

    def known_value(self, node: Node, name: str, word: _Word, before: bool) -> None:
        """`depth=2; find . -maxdepth $depth`: a value without blank, pattern or `-` the command gives a
        variable for sure before what follows runs (`_Report.values`): alone at the top of the
        command line, or first in an `&&`/`||` list there; not in the background, a loop, a
        function, a subshell or text run again; the first time the command sets it (`before`: it
        was set already; any later setting forgets it)."""
        value = word.literal
        if before or self.nesting or self.subshells or self.report.repeating:
            return
        if value is None or not _PLAIN_VALUE.fullmatch(value):
            return
        top = node
        while top.parent is not None and top.parent.type == "list" and top.parent.children[0] == top:
            top = top.parent
        after = top.next_sibling
        if top.parent is None or top.parent.type != "program" or (after is not None and after.type == "&"):
            return
        self.report.values[name] = value

    def assigned(self, name: str, word: _Word | None, *, alone: bool) -> None:
        """`NAME=VALUE` (`word`: None for `NAME=`), alone or for the command it comes before."""
        variable_set(self, name, _Word("", "", "") if word is None else word, lasting=alone)
        if word is None:
            return
        if name in _WRITTEN_THROUGH:  # git writes files there
            self.note_written(_Word(None, word.source, word.pattern.rstrip("/") + "/*", glob=True))
        if name == "GIT_DIR":  # its settings, as `git --git-dir`'s
            if word.value is None:
                self.add(M, "{name}: cannot tell which repository's settings it reads ({source})", name="git",
                         source=_snip(word.source))  # fmt: skip
            else:
                repository_settings(self, os.path.expanduser(word.value))
        if self.protected.guarding and self.relation_of(word) == "inside":
            self.add(D, TOUCHES_APP_DATA)  # `f=~/.b*rc; cp x $f`: what it holds is not followed to its use

    def keyword_assignments(self, words: list[_Word]) -> None:
        """In bash's keyword mode (`set -k`), each NAME=value word of a simple command, wherever it
        stands, is an assignment for that command (`ls LD_PRELOAD=./x.so`, `bash -c true
        BASH_ENV=./x.sh`): judged as one before it, once that mode may be on (`_Report.keyword_mode`)."""
        for w in words:
            found = _ASSIGNMENT_WORD.match(w.source)  # bash looks at the word as written: `F"O"O=x` is none
            if found is None:
                continue
            length = len(w.pattern) - len(found[0])
            value = _word_end(w, length) if length else None
            judge = functools.partial(self.keyword_assignment, found[1], value, self.cwd)
            if self.report.keyword:
                judge()
            else:
                self.report.keyword_words.append(judge)

    def keyword_assignment(self, name: str, value: _Word | None, cwd: str | None) -> None:
        here, self.cwd = self.cwd, cwd  # judged where the command runs, also once `set -k` comes later
        try:
            self.assigned(name, value, alone=False)
        finally:
            self.cwd = here

    def path_pattern(self, w: _Word) -> str | None:
        """Where a word leads as a pattern (`*` where an expansion decides), from the folder known here."""
        pattern = w.pattern[3:] if w.pattern.startswith("of=") else w.pattern
        if w.pattern.startswith("of=~/") or w.pattern == "of=~":  # bash expands `~` after `of=` too
            pattern = self.home + pattern[1:]
        if pattern.startswith("--") and "=" in pattern:  # `--directory=$HOME`: where the option points
            pattern = pattern.split("=", 1)[1]
        if pattern[1:2] in _ATTACHED_OUTPUT:  # `-o$HOME/x`, 7z's `-o"$APPDATA"`, tar's `-CC:/x`
            pattern = attached_path(pattern) or pattern
        if pattern.startswith("-") or not pattern:
            return None
        if not pattern.startswith(("/", "*")) and not _WINDOWS_ABSOLUTE.match(pattern):
            pattern = posixpath.join(self.cwd, pattern) if self.cwd is not None else "*/" + pattern
        return posixpath.normpath(pattern) if w.value is not None and not w.glob else pattern

    def note_written(self, w: _Word, *, writes: bool = False) -> str | None:
        """A file this command line may write, as a pattern (`*` where an expansion decides).
        `writes`: the command writes it (a redirection, cp's target, `sort -o`'s): git's settings
        and hooks are then held, since git runs what they name at its next command (fifth red team,
        2026-12-04: `echo ... >> .git/config; git status` and a hook written then `git checkout`),
        and a project file a later command runs is judged written (scripts.runs_project_files)."""
        pattern = self.path_pattern(w)
        if pattern is None:
            return None
        exact = w.value is not None and not w.glob
        self.report.written.add((pattern, self.script))
        if writes:
            self.report.surely_written.add(pattern)
        real = pattern
        # below the home folder, without a trailing slash (`cp x "$HOME/.ssh/"`: an expansion's is kept)
        tail = pattern.removeprefix(self.home)
        tail = tail.rstrip("/") or tail
        if writes and exact:  # through a link to a .git
            try:
                real = os.path.realpath(pattern)
            except OSError:  # `/proc/1/root/...` as a user: where it leads is not told
                real = pattern
        # as root, /etc/ld.so.preload runs code outside; not a file of the project's own
        if writes and _SYSTEM_FILES.match(real) and self.in_project(real) is None:
            self.add(D, "writes {source}: changes the system's own files", source=_snip(w.source))
        if writes and (_GIT_RUNS_FROM.search(tail) or _GIT_RUNS_FROM.search(real)):
            self.add(D, "cannot tell what runs: writes {source}, whose commands git runs", source=_snip(w.source))
        if writes and (_CLAUDE_RUNS_FROM.search(tail) or _CLAUDE_RUNS_FROM.search(real)):
            self.add(D, "writes {source}: a file Claude Code runs programs from",
                     N_("Changes {source}, which Claude Code reads to run programs"),
                     source=_snip(w.source))  # fmt: skip
        if writes and (_GNUPG_RUNS_FROM.search(tail) or _GNUPG_RUNS_FROM.search(real)):
            self.add(D, "writes {source}: GnuPG's agent starts the programs it names, outside Cowork Terminal's watch",
                     N_("Changes {source}, from which GnuPG's agent starts programs outside Cowork Terminal's watch"),
                     source=_snip(w.source), danger=Danger.OUTSIDE_WATCH)  # fmt: skip
        program = _startup_program(tail, w.glob) if writes else None
        if writes and program is None and real != pattern:  # through a link (`ln -s ~/.gdbinit g; echo x > g`)
            program = _startup_program(real.removeprefix(os.path.realpath(self.home)), False)
        if program is not None:
            self.add(D, "writes {source}: {program} runs the commands in it at its next start",
                     N_("Changes {source}, whose commands {program} runs at its next start"),
                     source=_snip(w.source), program=program)  # fmt: skip
        if writes and (_ssh_pattern(tail, w.glob) or _ssh_file(real, self.home, self.report)):
            self.add(D, "writes {source}: ssh reads it to run programs or to let others log in",
                     N_("Changes {source}, which ssh reads to run programs or let others log in"),
                     source=_snip(w.source))  # fmt: skip
        return pattern

    def scratch(self, w: _Word) -> bool:
        """`w` names the agent's own scratch file: see `scratch`."""
        return scratch_word(w, self.scratch_seen)

    # ---- words

    def word(self, nodes: list[Node]) -> _Word:
        b = _WordBuilder(self.home)
        for k, n in enumerate(nodes):
            after = nodes[k + 1] if k + 1 < len(nodes) else None
            if n.type == "$" and after is not None and after.type == "string" and after.start_byte == n.end_byte:
                continue  # `$"rm"`, a translated string, read as `$` and "rm" (`env $"rm" -rf DIR` ran rm)
            self.word_part(n, b)
        source = self.src[nodes[0].start_byte : nodes[-1].end_byte].decode("utf-8", "replace") if nodes else ""
        return b.build(source)

    def word_part(self, n: Node, b: _WordBuilder) -> None:
        kind = n.type
        text = self.node_text(n)
        if kind == "raw_string":
            b.literal(text[1:-1])
        elif kind == "string":
            self.string_part(n, b)
        elif kind == "translated_string":
            inner = next((c for c in n.children if c.type == "string"), None)
            if inner is not None:
                self.string_part(inner, b)
        elif kind == "ansi_c_string":
            b.literal(_ansi_c(text[2:-1]))
        elif kind == "concatenation":
            for c in n.children:
                self.word_part(c, b)
        elif kind in _EXPANSIONS:
            b.unknown(text)
            b.procsub = b.procsub or kind == "process_substitution"
        elif kind in ("brace_expression", "word") or n.child_count == 0:
            b.bare(text)
        else:
            b.unknown(text)

    def string_part(self, n: Node, b: _WordBuilder) -> None:
        pos = n.start_byte + 1
        end = n.end_byte - 1
        for c in n.children:
            if c.type == '"':
                continue
            if c.start_byte > pos:
                b.literal(_double_quoted(self.src[pos : c.start_byte].decode("utf-8", "replace")))
            if c.type == "string_content":
                b.literal(_double_quoted(self.node_text(c)))
            else:
                b.unknown(self.node_text(c))
            pos = c.end_byte
        if end > pos:
            b.literal(_double_quoted(self.src[pos:end].decode("utf-8", "replace")))

    def group_words(self, nodes: list[Node]) -> list[_Word]:
        """Join nodes bash reads as one word: adjacent ones, and those split by backslash-newline."""
        groups: list[list[Node]] = []
        for n in nodes:
            if groups and self.src[groups[-1][-1].end_byte : n.start_byte] in (b"", b"\\\n"):
                groups[-1].append(n)
            else:
                groups.append([n])
        return [self.word(g) for g in groups]

    def command_nodes(self, node: Node) -> list[Node]:
        nodes: list[Node] = []
        for child in node.children:
            if child.type == "command_name":
                nodes.extend(child.children or [child])
            elif child.type not in ("variable_assignment", "file_redirect", "heredoc_redirect",
                                    "herestring_redirect", "comment"):  # fmt: skip
                nodes.append(child)
        return nodes

    def command_words(self, node: Node, extra: Sequence[Node] = ()) -> list[_Word]:
        return self.group_words(self.command_nodes(node) + list(extra))

    def relation_of(self, w: _Word) -> str | None:
        """The word's relation to the app's files, a relative path followed from the known folder."""
        relation = self.protected.relation(w)
        relative = not w.pattern.startswith("/") and not (w.value is None and w.pattern.startswith("*"))
        if relation is None and self.cwd is not None and relative:
            here = posixpath.join(self.cwd, w.pattern)
            relation = self.protected.relation(_Word(w.value and here, w.source, here, w.glob, w.procsub))
        return relation

    def in_project(self, path: str) -> str | None:
        """The absolute path `path` names (from the folder the command is in now) when it is inside
        the project: the folder the classification started in (never one a `cd` led to: `cd /etc &&
        docker run -v .:/e alpine`), a folder the user could write anyway. None when that folder is
        the system's (/etc, /usr, /var...), the home folder or one above it, a dot folder of the home
        (settings), or another user's; or when the path is a Windows one, leads out once links are
        followed, does not exist yet (a link an earlier command makes), or this command line writes
        it or a folder on the way (`ln -s ~ h && docker run -v ./h:/h`): a review, 2026-12-05."""
        base = (self.start or "").rstrip("/")
        home = self.home.rstrip("/")
        if not base.startswith("/") or _WINDOWS_PATH.search(path) or _WINDOWS_PATH.search(base):
            return None
        if not path.startswith("/") and self.cwd is None:
            return None  # relative to a folder not known here
        joined = posixpath.join(self.cwd or "/", path)
        path = posixpath.normpath(joined)
        if (path != base and not path.startswith(base + "/")) or not self.project_folder(base, home):
            return None
        try:  # links followed as the system does: `./home/..` with `home` a link to ~ is ~'s parent
            real, real_base = os.path.realpath(joined), os.path.realpath(base)
            os.stat(real)  # it exists now
        except (OSError, ValueError):  # `$'a\x00b'`: a name no file has
            return None
        if real != real_base and not real.startswith(real_base.rstrip("/") + "/"):
            return None
        below = path[len(base) :].strip("/").split("/") if path != base else []
        if any(self.written_here(posixpath.join(base, *below[: k + 1])) for k in range(len(below))):
            return None
        return path

    def project_folder(self, base: str, home: str) -> bool:
        """Whether `base` may be a project: see `in_project`."""
        if base not in self.projects:
            self.projects[base] = self.may_be_project(base, home)
        return self.projects[base]

    @staticmethod
    def may_be_project(base: str, home: str) -> bool:
        if home == base or home.startswith(base + "/"):
            return False
        if base.startswith(home + "/") and any(part.startswith(".") for part in base[len(home) + 1 :].split("/")):
            return False
        try:
            real = os.path.realpath(base)
            owner = os.stat(real).st_uid
        except (OSError, ValueError):
            return False
        getuid = getattr(os, "getuid", None)
        mine = getuid is None or owner == getuid()
        return mine and not _SYSTEM_FOLDER.match(real + "/") and not _SYSTEM_FOLDER.match(base + "/")

    def written_here(self, path: str) -> bool:
        """Whether this command line may write `path` before it is used (a pattern of `report.written` matches it)."""
        return any(fnmatch.fnmatchcase(path, pattern) for pattern, _script in self.report.written)

    def check_word(self, w: _Word) -> str | None:
        if "@P}" in w.source and _PROMPT_EXPANSION.search(w.source):
            self.add(D, "cannot tell what runs: {source} expands a value as a prompt", source=_snip(w.source))
        relation = self.relation_of(w)
        if relation == "inside" and not (self.protected.guarding and (w.glob or w.value is None)):
            self.add(D, TOUCHES_APP_DATA)  # guarding: a glob or expansion counts where written (written_into)
        return relation

    # ---- simple commands

    def command(
        self, node: Node, stdin: _Stdin | None, depth: int, extra: list[Node], outer_redirects: list[Node]
    ) -> None:
        routed, routed_extra = self.trailing.pop(node.id, ([], []))  # the list's, given to its last command
        own = self.collect_redirects(node) + routed
        redirects = own + outer_redirects
        extra = [*extra, *routed_extra]
        # `exec 0<x`: tree-sitter's argument `0` is the redirection's descriptor, no word of the command
        numbers = {r.start_byte for r in redirects if (self.touching_descriptor(r) or "?").isdigit()}
        nodes = [n for n in self.command_nodes(node) if not (n.type == "number" and n.end_byte in numbers)]
        words = self.group_words(nodes + list(extra))
        if self.splits_at_newline(node) or self.misread_keyword(words):
            self.add(D, "cannot tell what runs: the command does not parse as bash")
        words = words[:1] + [w for word in words[1:] for w in self.brace_words(word)]
        fed = self.redirect_stdin(own) or stdin
        only_reads = self.protected.guarding and not self.own_source
        if only_reads and words and words[0].value in ("source", ".") and len(words) > 1:
            self.only_read.update(n.start_byte for n in self.command_nodes(node)[1:2])
        for child in node.children:
            if child.type == "variable_assignment":
                self.assignment(child)
        self.keyword_assignments(words[1:])
        # `exec 3<~/.bashrc`, `exec {fd}<x`, `exec -a x 3<x`: the shell keeps what it opens for the
        # commands after it
        head = self.exec_alone(words)
        alone = head is not None
        fds = self.check_redirects(redirects, lasting=alone)
        if head is not None:
            self.descriptors, words = fds, words[:head]
        kept, self.open_now = self.open_now, fds
        try:
            if words:
                self.argv(words, fed, bulk=False, depth=depth)
        finally:
            self.open_now = kept
        for child in node.children:  # substitutions inside the words run first, whatever the command
            self.walk(child, stdin if stdin is not None and stdin.kind == "pipe" else None, depth + 1)

    def splits_at_newline(self, node: Node) -> bool:
        """Whether bash parts this command's words otherwise than tree-sitter: it ends the command at
        a newline between them, and joins two that only backslash-newlines part (`m\\<newline>kfs.ext4`
        is `mkfs.ext4`: a fuzzer against bash, 2026-12-05, judged it `m`)."""
        children = node.children
        for before, child in zip(children, children[1:], strict=False):
            lead = _LEADING_BLANKS.match(self.src, child.start_byte, child.end_byte)
            gap = self.src[before.end_byte : lead.end() if lead else child.start_byte]
            if _BARE_NEWLINE.search(gap) or _JOINED_BY_CONTINUATIONS.fullmatch(gap):
                return True
        return False

    @staticmethod
    def misread_keyword(words: list[_Word]) -> bool:
        """Whether tree-sitter read a reserved word as a command's word: first, or after `time`,
        `coproc` (and its name) or `!` (`time -p { ...; }`, `coproc n { ...; }`)."""
        sources = [w.source for w in words[:3]]
        return bool(sources) and (
            sources[0] in _RESERVED or (sources[0] in _PREFIXES and any(s in _RESERVED for s in sources[1:]))
        )

    def brace_words(self, w: _Word) -> list[_Word]:
        """The words bash makes of an unquoted brace expression (`rm {-rf,} DIR` is `rm -rf DIR`: judged
        moderate, a fuzzer against bash, 2026-12-05); an expression it does not list (`{a..z}`) is
        left as it is, a pattern, and so is a word an expansion decides."""
        if not w.glob or w.value is None or brace_group(w.value) is None:
            return [w]
        values = [w.value]
        while (found := next((brace_group(v) for v in values if brace_group(v) is not None), None)) is not None:
            if "," not in found[1] or len(values) > _MAX_BRACE_WORDS:
                return [w]
            at = next(k for k, v in enumerate(values) if brace_group(v) is not None)
            v = values[at]
            alternatives = [v[: found.start()] + a + v[found.end() :] for a in found[1].split(",")]
            values[at : at + 1] = alternatives
        return [_Word(v, w.source, v, is_glob(v)) for v in values if v]

    def argv(self, words: list[_Word], stdin: _Stdin | None, *, bulk: bool, depth: int) -> None:
        """One command after its words are known. `bulk`: xargs or find adds operands we cannot see."""
        if depth > MAX_TREE_DEPTH:
            self.report.too_large = True  # it stands even inside a guess
            self.add(D, TOO_DEEP)
            return
        # Each wrapper looks at every word after it: `nohup nohup ... x x x` would take seconds.
        self.report.words_seen += len(words)
        if self.report.words_seen > MAX_WORDS_SEEN:
            self.too_large()
            return
        head = words[0]
        if head.value is None:
            if re.sub(r"\W", "_", _command_name(head.pattern)) == _SELF_PROGRAM:  # "$HOME/bin/cowork-terminal"
                self.add(D, RUNS_ITSELF)
            else:
                self.add(D, "cannot tell what runs: the command name comes from {source}", source=_snip(head.source))
            return
        if head.glob:
            self.add(D, "cannot tell what runs: the command name {source} is a pattern", source=_snip(head.source))
            return
        if (assigned := _ASSIGNED_HEAD.match(head.value)) is not None:  # `time x='a[$(rm ...)]'`: an assignment
            self.assigned(assigned[1], _word_end(head, len(head.value) - assigned.end()), alone=True)
        name = _command_name(head.value)
        args = words[1:]
        if bulk and head.value == "{}":  # `find . -exec {} \;`, `xargs -I{} {}`: what it finds runs
            self.add(D, BULK_COMMAND)
            return
        start, read_from = len(self.report.findings), len(self.report.scripts)
        # ./x.sh, ~/bin/tool: a file the agent may have written
        if "/" in head.value.replace("\\", "/") and not self.installed(head.value):
            run_script(self, name, head, "exec")
            rule = rule_for(name)  # and as the program it is named after (.venv/bin/pip uninstall x)
            if rule is not None:
                self.head = head
                rule(self, name, args, stdin, bulk, depth)
            self.after_command(name, words, rule, bulk, (start, read_from), depth)
            return
        key = re.sub(r"\W", "_", name)
        if name not in _PRIVILEGE and key != _SELF_PROGRAM and [a.value for a in args] in (["--version"], ["--help"]):
            if name in RUSTUP_PROXIES or name == "yarn":  # rustup runs it from the toolchain the folder's
                self.report.settings.append((name, "", False))  # settings name, yarn the release its yarnPath names
            return
        rule = rule_for(name)
        if rule is None and "/" in head.value.replace("\\", "/"):
            # `./tidy` a link to /bin/rm (made by an earlier command): the program it is (fourth red team)
            name = _command_name(os.path.realpath(script_path(self.cwd, head.value) or head.value))
            rule = rule_for(name)
        if self.report.in_string and name in _SUBCOMMAND_WORDS:
            rule = None  # in a string a program was given, `format` is a word (`notify-send "format done"`)
        alias = self.report.aliases.get(head.value)
        if alias is not None and head.value not in self.report.expanding:
            # defined earlier in this command: with aliases on, bash runs the value with these words
            self.report.expanding.add(head.value)
            try:
                self.sub_script(" ".join([alias, *(a.source for a in args)]), f"alias {head.value}")
            finally:
                self.report.expanding.discard(head.value)
        self.lasting_command(name, args)
        self.report.runners.append(name)  # what runs it: `uv run pip` finds another pip than `time pip`
        try:
            if rule is not None:
                same_shell, self.same_shell = self.same_shell, name in _SAME_SHELL
                self.head = head
                try:
                    rule(self, name, args, stdin, bulk, depth)
                finally:
                    self.same_shell = same_shell
            else:
                self.as_unknown_program(head.value, args, depth, noted=False)  # after_command notes its words
                last = _command_name(args[-1].literal or "") if args and stdin is not None else ""
                if is_interpreter(last):  # `... | faketime now bash`: the shell it runs last reads what it is given
                    stdin_code(self, last, stdin, shell=last in _SHELLS)  # (a review, 2026-12-05)
        finally:
            self.report.runners.pop()
        self.after_command(name, words, rule, bulk, (start, read_from), depth)

    def as_unknown_program(self, name: str, args: list[_Word], depth: int, *, noted: bool = True) -> None:
        """What a program no rule knows is judged as: not known to be read-only, what it may run
        judged (`may_run`), and each of its words a file it may write (`multipass transfer vm:x
        ./run.sh && ./run.sh` changes the script before it runs). A rule that knows a program only
        for what it hands off says the rest of it so. `noted`: its words are noted here (the
        analyzer's own call notes them in `after_command`)."""
        self.add(M, "{value}: not known to be read-only", value=_snip(name))
        written = _command_name(name) if "/" in name else name  # `/usr/bin/x`: as `x`
        if not self.report.in_string or _PROGRAM_NAME.fullmatch(written):
            self.may_run(args, depth)  # in a string, not a title's first word (`"Fix: rm -rf in x"`)
        for a in args if noted else ():
            self.note_written(a)

    def may_run(self, args: list[_Word], depth: int, *, shell_strings: bool = False) -> None:
        """A program no rule knows may run what it is given (`faketime 0 rm -rf DIR`, `runuser -u me
        -- rm ...`, `tmux new 'rm -rf DIR'`: each was judged moderate, so it ran unheld; 2026-12-04),
        and so does a package manager's `exec` (`conda run -n base rm -rf DIR`). A known program
        given words of its own, and a string that reads as code, are judged as the command they would
        be, and a deletion found there is held. So is a program handed off outside Cowork Terminal's
        watch (`runuser -u me -- docker run -v /:/h a`: a review, 2026-12-05) where the command
        stands as a runner's (`_runs_here`), or a string's first word is a program a rule knows.
        Nothing else found there counts: `make format`, `vagrant halt` and `apt-cache show sudo`
        only name a program (review, 2026-12-04), nor does `todo add meeting at 5pm` schedule one.
        `shell_strings`: the program runs its strings with a shell (tmux): no option's value is a
        message, and what cannot be told in them stands."""
        probes = 0
        for k, w in enumerate(args):
            code = self.string_code(w, args[k - 1] if k else None, messages=not shell_strings)
            commands = 0
            if code is not None:
                cost, commands = len(code.split()), sum(code.count(c) for c in ";&|\n")  # `a|a|a...`: one each
                judge, keep_cannot_tell = functools.partial(self.judge_string, code), shell_strings
                first = code.split(None, 1)[0] if code.split() else ""
                keep_outside = self.may_be_program(first)
            elif len(args) - k > 1 and (program := self.program_in(w)) is not None:
                words = [program, *args[k + 1 :]]  # `--exec=/bin/rm -- -rf DIR`: the program after `=`
                judge, cost = functools.partial(self.judge_words, words, depth), len(words)
                keep_cannot_tell = len(words) > 2 and is_interpreter(_command_name(program.value or ""))
                keep_outside = _runs_here(args, k)
            else:
                continue
            probes += 1
            self.report.probed_words += cost
            if probes > MAX_PROBES or self.report.probed_words > MAX_PROBED_WORDS or commands > MAX_PROBES * 8:
                self.report.too_large = True  # it stands even inside a guess: what was not judged may delete
                self.add(D, CANNOT_TELL_PROBES, danger=Danger.CANNOT_TELL)
                return
            if self.keep_deletions(judge, keep_cannot_tell, keep_outside=keep_outside):
                return

    def string_code(self, w: _Word, before: _Word | None, *, messages: bool = True) -> str | None:
        """The text of a word given to a program that may be code bash would run: words apart (`'rm
        -rf DIR'`, `--call='rm -rf DIR'`, `-c'rm -rf DIR'`, `"rm -rf $HOME/x"` with what is known of
        it, `'rm${IFS}-rf${IFS}DIR'`, `'{rm,-rf,DIR}'`), and not the value of an option that names a
        message (`-m`, `--title`...)."""
        text = w.literal if w.literal is not None else w.pattern
        name, equals, value = text.partition("=")
        message_options = _MESSAGE_OPTIONS if messages else frozenset()
        if text.startswith("--") and equals:
            text = value if name not in message_options else ""
        elif before is not None and before.value in message_options:
            return None
        elif re.match(r"-[A-Za-z]\S*\s", text):
            text = text[2:]  # `tmux -c'rm -rf DIR'`: the value joined to its option
        elif equals and re.fullmatch(r"[A-Za-z_][\w.-]*", name):
            text = f"{text}\n{value}"  # `-o ProxyCommand='rm -rf DIR'`, `ACTION='rm ...'`: the value; `'X=#;rm'`: all
        text = _IFS.sub(" ", text)
        stripped = text.strip()
        if stripped[:1] == "{" and stripped[-1:] == "}" and (braces := _BRACE_LIST.fullmatch(stripped)):
            text = braces[1].replace(",", " ")
        return text if any(c.isspace() or c in ";&|" for c in text.strip()) else None  # `'x=rm;$x'` too

    def later_expanded(self, text: str) -> None:
        """Text bash expands where it is used, not where it is written: a prompt (`PS4='$(rm -rf
        DIR)'; set -x`), a name evaluated as arithmetic (`x='a[$(rm -rf DIR)]'; echo $((x))`),
        `compgen -W` (fifth red team, 2026-12-04: each ran rm judged safe or moderate). Its command
        substitutions are judged, read as a here-document's are (a prompt's quoting: `PS1='$(__git_ps1
        " (%s)")'`), and what destroys there holds the command (a prompt may never be shown), but not
        what cannot be told."""
        if "$(" not in text and "`" not in text:
            return
        self.keep_deletions(functools.partial(self.judge_string, _as_heredoc(text)), False, every=True)

    def judge_string(self, code: str) -> None:
        self.report.in_string += 1
        try:
            self.sub_script(code, "a string it is given")
        finally:
            self.report.in_string -= 1

    def judge_words(self, words: list[_Word], depth: int) -> None:
        """`words` as a command; and, after `PROGRAM --`, without that `--`: it may end the options of
        the program that was given them (`start-stop-daemon --exec /bin/rm -- -rf DIR`)."""
        self.argv(words, None, bulk=False, depth=depth + 1)
        if len(words) > 2 and words[1].value == "--":
            self.argv([words[0], *words[2:]], None, bulk=False, depth=depth + 1)

    def program_in(self, w: _Word) -> _Word | None:
        """The program a word names, if it may be one: the word, or an option's value (`--exec=PROG`)."""
        v = w.literal
        if v is not None and v.startswith("--") and "=" in v:
            w = _word_end(w, len(v) - v.index("=") - 1)
            v = w.literal
        return w if v is not None and self.may_be_program(v) else None

    def may_be_program(self, value: str) -> bool:
        """A word another program may run: an option is not, nor a file of the agent's (`vim
        scripts/deploy.sh` must not judge the script); a name a rule knows, or an installed program
        by path, is."""
        if value.startswith("-"):
            return False
        if "/" in value.replace("\\", "/"):
            return self.installed(value)
        name = _command_name(value)
        return name not in _SUBCOMMAND_WORDS and rule_for(name) is not None

    def installed(self, value: str) -> bool:
        """A program by path that is installed software, not a file the agent may have written."""
        path = script_path(self.cwd, value)
        return path is not None and installed_program(path)

    def keep_deletions(
        self, judge: Callable[[], None], keep_cannot_tell: bool, *, keep_outside: bool = True, every: bool = False
    ) -> bool:
        """Judge what a command may run, and keep what it finds only where it deletes or (when
        `keep_outside`) hands a program off outside Cowork Terminal's watch, and its "cannot tell"
        when asked; its `cd` and the scripts it read are undone (not the files it may write). A
        guess never lets a command out of the container: a finding kept has no kind. When the
        command is too large to judge, that stands. `every`: code bash surely runs when the text is
        used (a subscript, a prompt), so each destructive finding is kept but "cannot tell"
        (`PS4='$(mkfs.ext4 /dev/sdb1)'; set -x` and `declare -i i='a[$(curl URL | sh)]'` were safe: a
        fuzzer against bash, second round, 2026-12-05)."""
        report, cwd = self.report, self.cwd
        mark = report.mark()
        report.guessing += 1
        try:
            judge()
        finally:
            report.guessing -= 1
        self.cwd = cwd
        kept = [
            dataclasses.replace(f, kind=None) for f in report.findings[mark.findings :]
            if f.tier is D and (
                f.danger in _DELETES
                or (every and f.danger is not Danger.CANNOT_TELL)
                or (keep_outside and f.danger is Danger.OUTSIDE_WATCH)
                or (keep_cannot_tell and f.danger is Danger.CANNOT_TELL)
            )
        ]  # fmt: skip
        return report.undo(mark, kept)

    def after_command(
        self, name: str, words: list[_Word], rule: Rule | None, bulk: bool, since: tuple[int, int], depth: int
    ) -> None:
        """What holds for every command whatever its rule: code in its options, bulk operands, disk
        devices, our files, and the files it may write (a script run by this command line must not
        be one of them). `since`: where this command's findings and the scripts it read start."""
        start, read_from = since
        args = words[1:]
        judge_code_options(self, name, args, depth)
        if name in _JS_PACKAGE_MANAGERS and rule is not None:  # its scripts run: one written just before is held
            runs_project_files(self, ["package.json"])
        if name in _EVALUATES_WORDS:  # `let 'a[$(rm -rf DIR)]'`, `read 'a[$(rm -rf DIR)]'`: a name's subscript
            for a in args:
                self.evaluated_subscript(a.literal or "")
        for _option, offset in option_values(args, ["-d"], "d") if name == "history" else ():
            self.evaluated_subscript(offset.literal or "")
        for _option, library in option_values(args, ["-f"], "f") if name == "enable" else ():
            if foreign_library(self, library):  # bash loads its code as a builtin (`enable -f ./x.so name`)
                self.add(D, LOADS_LIBRARY, name="enable -f", value=_snip(library.literal or library.source))
        for assigned in _assigned_names(name, args):  # `read PS4 <<< '$(rm ...)'`, `printf -v BASH_ENV %s x.sh`
            known = _printed_value(args) if name == "printf" else None
            target = assigned.value or ""
            self.report.forget(target.split("[")[0])  # `read depth`: its value is not known
            if assigned.value is None:  # `read "$v"`, `printf -v "$v" ...`: any variable
                sets_any_variable(self, assigned.source, known)
            elif known is not None:  # `printf -v EDITOR '%s' vim`: as `EDITOR=vim`
                variable_set(self, target, _Word(known, known, known))
            elif target.split("[")[0] in COMMAND_TABLES:  # `read 'BASH_CMDS[ls]' <<< ./x.sh`: as the assignment
                variable_set(self, target, _Word(None, assigned.source, "*"))
            elif is_code_variable(target):
                self.add(D, "cannot tell what runs: {name} code from an expansion", name=target)
        if name == "let":  # `let PATH=1` sets PATH (a red team, 2026-12-05: judged safe)
            for a in args:
                for found in _ARITHMETIC_ASSIGNMENT.finditer(a.literal or a.source):
                    if found[1]:
                        sets_any_variable(self, a.source, "")
                    else:
                        variable_set(self, found[2], _Word(None, a.source, "*"))
        if name == "unset":  # `builtin unset PATH`: the parser's own `unset` is walked
            self.unset(args)
        if name == "getopts" and len(args) > 1:  # `getopts OPTSTRING NAME`: sets NAME to the option found
            if args[1].value is None:
                sets_any_variable(self, args[1].source, "")
            else:
                variable_set(self, args[1].value, _Word(None, args[1].source, "*"))
        if name in ("compgen", "complete"):  # `compgen -W '$(rm -rf DIR)'`: its words are expanded
            for _option, listed in option_values(args, ["-W"], "ACFGPSWXo"):
                self.later_expanded(listed.literal or "")
        in_place = _PERL.match(name) and any(_IN_PLACE.match(a.value or "") for a in args)  # perl -pi
        if rule is None or name in _MAY_WRITE or in_place:
            runs = next((i for i, a in enumerate(args) if a.value == "run"), len(args)) if name == "git" else len(args)
            # `git bisect run ./test.sh` runs it, and writes it no more than `./test.sh` does; nor does
            # `awk -f prog.awk` write the program it reads
            read_here = set(self.report.scripts[read_from:])
            targets = write_targets(name, args, bool(in_place))
            for written in targets:  # `tee /dev/fd/3 3<~/.bashrc`, `dd of=/dev/stdin`: the file it is open on
                of = written.pattern.startswith("of=")
                named = _word_end(written, len(written.pattern) - 3) if of else written
                through = self.descriptor_file(named)
                if through is not None:
                    self.write_through(named, through)
            dashes = options_end(args)
            for k, a in enumerate(args[:runs]):
                if a.value is None or script_path(self.cwd, a.value) not in read_here:
                    self.note_written(_as_file(a) if k > dashes else a, writes=any(a is t for t in targets))
            if name in LANDS_BY_NAME and not bulk:  # xargs and find give it names not seen here
                self.note_landed(args, targets)
            if name in NAMED_ELSEWHERE:
                note_named_elsewhere(self, name, args[:runs])
            output = name in _DECOMPRESSORS and not (
                any(a.value in _TO_STDOUT for a in args) or {"c", "t", "l"} & _short_flags(args)
            )
            for a in args if output else ():  # `gzip -d ~/.bashrc.gz` writes ~/.bashrc
                plain = _COMPRESSED.sub("", a.pattern)
                if plain != a.pattern:
                    self.note_written(_Word(a.value and _COMPRESSED.sub("", a.value), a.source, plain, a.glob))
        read_here = set(self.report.scripts[read_from:])
        # a shell's code is judged with its descriptors (`sub_script`); another's inline code may open any
        if rule is None or read_here or name in self.functions or (is_interpreter(name) and name not in _SHELLS):
            self.may_write_descriptors(read_here)
        if bulk and self.report.top(start) is S and name not in _SAFE:
            self.add(M, "{name} via xargs or find", name=name)
        if name in _WRITERS:
            for a in args:
                if a.value is not None and _BLOCK_DEVICE.match(a.pattern):
                    self.add(D, "{name}: writes to a disk device: {source}", name=name, source=_snip(a.source))
        guarding = self.protected.guarding and not self.own_source
        sourced = words[1] if name in ("source", ".") and len(words) > 1 and guarding else None
        for a in words:
            if a is not sourced:  # names_protected: a file sourced is only read (`source ~/.bashrc && nvm use`)
                self.check_word(a)

    def may_write_descriptors(self, read_here: set[str]) -> None:
        """A program, script or function run with a descriptor open on a file may write that file by
        opening /dev/fd/N (`./tool 3<~/.bashrc`, `f 1<~/.bashrc`: a review, 2026-12-06), as far as
        names_protected tells; the script it reads from one (`bash < setup.sh`) is only read."""
        for file in self.open_now.values():
            if file is None or self.descriptor_file(file) is not None or _HARMLESS_DEVICES.match(file.value or ""):
                continue
            if file.value is not None and script_path(self.cwd, file.value) in read_here:
                continue
            self.note_written(_as_file(file))

    def note_landed(self, args: list[_Word], targets: list[_Word]) -> None:
        """cp, mv, install or ln into a folder: each file lands there under its own name (`cp notes.md
        ~` writes ~/notes.md, not any file of ~), which counts as written and the folder no more; a
        name not written out (a glob, `dir/.`) leaves the whole folder written (names_protected)."""
        if any(a.value in _NOT_BY_NAME or _NO_TARGET_FOLDER.fullmatch(a.value or "") for a in args):
            return  # `cp -rT dot ~` copies dot's files into ~, `--parents` their folders too (a red team)
        operands = [a for a in _operands(args, _TARGET_OPTIONS) if not a.pattern.startswith("-")]
        sources = [a for a in operands if not any(a is t for t in targets)]
        names = [(a.literal or "").rstrip("/") for a in sources]
        unknown = [n for n in names if not n or n in (".", "..") or n.endswith(("/.", "/..")) or "{}" in n]
        if len(targets) != 1 or not sources or unknown:  # `{}`: a name `parallel` fills in
            return
        target = targets[0]
        # Into the home folder or ~/.ssh, surely a folder, a name lands as a write: `cp -r .ssh ~/` writes
        # ~/.ssh as `cp x ~/.ssh/config` does. Elsewhere not (`cp -r .git backup/` copies a repository,
        # as `cp -r proj backup/` does: a second red team, 2026-12-05).
        where = self.path_pattern(target) or ""
        into = not target.glob and (target.pattern.endswith("/") or os.path.isdir(where))
        into = into and where.rstrip("/") in (self.home, f"{self.home}/.ssh")
        for name in names:
            base = posixpath.basename(name)
            value = None if target.value is None else f"{target.value.rstrip('/')}/{base}"
            landed = _Word(
                value, f"{target.source.rstrip('/')}/{base}", f"{target.pattern.rstrip('/')}/{base}", target.glob
            )
            self.note_written(landed, writes=into)
        folder = self.note_written(target)
        if folder is not None:
            self.report.landed.add(folder)

    def inner(self, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        if not args:
            if bulk:  # `echo rm -rf DIR | xargs env` (or nice, timeout 9): the words read are the command
                self.add(D, BULK_COMMAND)
            return
        if self.report.wrappers >= MAX_WRAPPERS:  # `env env env ...`: each costs Python 4-5 frames of its 1,000
            self.report.too_large = True  # it stands even inside a guess
            self.add(D, TOO_DEEP)
            return
        self.report.wrappers += 1
        try:
            self.argv(args, stdin, bulk=bulk, depth=depth + 1)
        finally:
            self.report.wrappers -= 1

    def guard_parents(self, name: str, words: list[_Word]) -> None:
        for w in words:
            if self.relation_of(w) == "above":
                self.add(
                    D,
                    "{name}: changes a folder that holds Cowork Terminal's data: {source}",  # HOLDS_APP_DATA
                    name=name,
                    source=_snip(w.source),
                )
