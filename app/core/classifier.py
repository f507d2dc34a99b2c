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
`su -c`, `ssh host CMD`, `watch`, `trap`, `alias`, a git alias, a crontab or `at` job, and a
heredoc or here-string fed to a shell. Where the command that would run cannot be known (a parse
error, `eval "$x"`, `$cmd` as a command name, `curl ... | sh`), the result is destructive, with a
reason that says so: asking is the safe side.

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
  `rm` of named files without -r/-f, mv, cp, redirections into files, unknown programs, running a
  script (`bash script.sh`, `python x.py`, `make`): the classifier cannot see inside a file.
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
- the app's own files (`protected_paths`): any mention of one, or of something inside one, in any
  word or anywhere in the text (also as `~/...`, `$HOME/...`, a glob, or the part under the home
  folder), is destructive, reading included; so is moving or recursively re-permissioning a folder
  above one. A relative path is followed from a literal `cd` earlier in the same command; relative
  to the session's working folder, which the classifier does not know, it is seen only if it spells
  the part under home (`cd` in an earlier call, then `rm cowork-terminal/journal.sqlite3`, is not).

Reasons are short texts for the approval prompt; a result carries only the reasons of its own tier.
"""

from __future__ import annotations

import enum
import fnmatch
import logging
import os
import posixpath
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

log = logging.getLogger(__name__)


class Tier(enum.IntEnum):
    SAFE = 0
    MODERATE = 1
    DESTRUCTIVE = 2


@dataclass(frozen=True)
class Classification:
    tier: Tier
    reasons: tuple[str, ...]


# Limits that keep a huge or hostile input from taking the server down; past them we ask.
MAX_COMMAND_CHARS = 1_000_000
MAX_NODES = 100_000
MAX_TREE_DEPTH = 300
MAX_SHELL_NESTING = 12
REASON_SNIPPET_CHARS = 60
TOUCHES_APP_DATA = "touches Cowork Terminal's own data or settings"

D = Tier.DESTRUCTIVE
M = Tier.MODERATE
S = Tier.SAFE


def classify(command: str, *, protected_paths: Sequence[str] = ()) -> Classification:
    """Classify `command` as bash would run it; never raises (an internal failure asks the user)."""
    try:
        return _classify(command, protected_paths)
    except Exception:  # a bug here must not let a command through unasked, nor crash the tool call
        log.exception("classifier failed on a command; treating it as destructive")
        return Classification(D, ("cannot tell what runs: the classifier failed on this command",))


def _classify(command: str, protected_paths: Sequence[str]) -> Classification:
    report = _Report()
    protected = _Protected.build(protected_paths)
    if protected.mentioned_in(command):
        report.add(D, TOUCHES_APP_DATA)
    if len(command) > MAX_COMMAND_CHARS:
        report.add(D, "cannot tell what runs: the command is too long to check")
        return report.result()
    _Analyzer(command, report, protected, nesting=0).run()
    return report.result()


# --------------------------------------------------------------------------------------------------
# Findings


class _Report:
    """What the analysis found, shared by a command and every string re-parsed inside it."""

    def __init__(self) -> None:
        self.findings: list[tuple[Tier, str]] = []
        self.nodes = 0

    def add(self, tier: Tier, reason: str) -> None:
        self.findings.append((tier, reason))

    def top(self, since: int = 0) -> Tier:
        return max((tier for tier, _ in self.findings[since:]), default=S)

    def result(self) -> Classification:
        tier = self.top()
        if tier is S:
            return Classification(S, ())
        reasons = dict.fromkeys(reason for t, reason in self.findings if t == tier)
        return Classification(tier, tuple(reasons))


def _snip(text: str) -> str:
    text = " ".join(text.split())
    if len(text) > REASON_SNIPPET_CHARS:
        return text[: REASON_SNIPPET_CHARS - 1] + "…"
    return text


# --------------------------------------------------------------------------------------------------
# The app's own files


def _home() -> str:
    return os.path.expanduser("~").replace("\\", "/").rstrip("/") or "/"


def _norm_path(path: str) -> str:
    """Forward slashes, case folded (asking on a case-only difference is the safe side), no trailing /."""
    path = path.replace("\\", "/").casefold()
    if len(path) > 1:
        path = path.rstrip("/")
    return path


def _canonical(path: str) -> str:
    """One spelling for a Windows path: C:/x, /cygdrive/c/x and /mnt/c/x all become /c/x (Git Bash's)."""
    drive = re.match(r"^(?:([a-z]):|/cygdrive/([a-z])|/mnt/([a-z]))(?=/|$)(.*)$", path)
    if drive:
        return f"/{drive[1] or drive[2] or drive[3]}{drive[4]}"
    return path


_NAME_CHAR = r"[\w.\-]"


@dataclass(frozen=True)
class _Protected:
    """The app's data folder and settings, and the texts that name them in a command line."""

    paths: tuple[str, ...]  # absolute, normalised
    needle: re.Pattern[str] | None  # any spelling of one of them, with path-name boundaries

    @classmethod
    def build(cls, raw: Sequence[str]) -> _Protected:
        home = _norm_path(_home())
        paths: list[str] = []
        texts: set[str] = set()
        for item in raw:
            path = _norm_path(os.path.expanduser(str(item)))
            if not path or path == "/":
                continue
            paths.append(path)
            texts.add(path)
            drive = re.match(r"^([a-z]):/(.*)$", path)
            if drive:  # Git Bash and Cygwin spell C:/x as /c/x and /cygdrive/c/x
                texts.add(f"/{drive[1]}/{drive[2]}")
                texts.add(f"/cygdrive/{drive[1]}/{drive[2]}")
            if home not in ("", "/") and path.startswith(home + "/"):
                # The part under home covers ~/x, $HOME/x, ${HOME}/x, "$HOME"/x and `cd; ... x`.
                texts.add(path[len(home) + 1 :])
        if not texts:
            return cls((), None)
        alternatives = "|".join(re.escape(t) for t in sorted(texts, key=len, reverse=True))
        needle = re.compile(rf"(?<!{_NAME_CHAR})(?:{alternatives})(?!{_NAME_CHAR})")
        return cls(tuple(paths), needle)

    def mentioned_in(self, text: str) -> bool:
        if self.needle is None:
            return False
        folded = text.casefold()
        variants = (folded, folded.replace("\\", "/"), re.sub(r"\\(.)", r"\1", folded))
        return any(self.needle.search(v) for v in variants)

    def relation(self, word: _Word) -> str | None:
        """'inside' if the word may name a protected path or something in it, 'above' for a parent."""
        if not self.paths:
            return None
        if word.value is not None and self.mentioned_in(word.value):
            return "inside"
        path = _norm_path(word.pattern)
        if not re.match(r"^/|^[a-z]:/", path):
            return None
        fuzzy = word.value is None or word.glob
        if not fuzzy:
            path = posixpath.normpath(path)
        mine = [s for s in _canonical(path).split("/") if s not in ("", ".")]
        found = None
        for protected in self.paths:
            theirs = [s for s in _canonical(protected).split("/") if s]
            pairs = zip(mine, theirs, strict=False)  # the shorter decides: inside, or above
            if not all(fnmatch.fnmatchcase(t, m) if fuzzy else m == t for m, t in pairs):
                continue
            if len(mine) >= len(theirs):
                return "inside"
            found = "above"
        return found


# --------------------------------------------------------------------------------------------------
# Words as bash sees them


@dataclass(frozen=True)
class _Word:
    """One argument after quote removal, or what is known of it when an expansion decides it."""

    value: str | None  # the text bash passes on; None when an expansion decides it
    source: str  # as written, for reasons
    pattern: str  # value with unknown parts as "*" and $HOME / ~ filled in: for path checks
    glob: bool = False  # unquoted *, ?, [...] or {a,b}: bash may turn it into other words
    procsub: bool = False  # <(...): a file whose contents a command writes

    @property
    def literal(self) -> str | None:
        return self.value if not self.glob else None


_ANSI_ESCAPES = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
    "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip
_GLOB = re.compile(r"[*?]|\[[^\]]*\]|\{[^{}]*(?:,|\.\.)[^{}]*\}")
_EXPANSIONS = frozenset(
    {"simple_expansion", "expansion", "command_substitution", "arithmetic_expansion", "process_substitution"}
)
_WORDISH = frozenset(
    {"word", "string", "raw_string", "ansi_c_string", "translated_string", "concatenation", "number"}
)


def _ansi_c(body: str) -> str:
    """Decode the inside of $'...' as bash does."""
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\" or i + 1 >= len(body):
            out.append(c)
            i += 1
            continue
        n = body[i + 1]
        if n in _ANSI_ESCAPES:
            out.append(_ANSI_ESCAPES[n])
            i += 2
        elif n in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[n]
            digits = re.match(rf"[0-9a-fA-F]{{1,{width}}}", body[i + 2 :])
            if digits:
                out.append(chr(min(int(digits[0], 16), 0x10FFFF)))
                i += 2 + len(digits[0])
            else:
                out.append("\\" + n)
                i += 2
        elif n in "01234567":
            digits = re.match(r"[0-7]{1,3}", body[i + 1 :])
            assert digits is not None
            out.append(chr(int(digits[0], 8) & 0xFF))
            i += 1 + len(digits[0])
        elif n == "c" and i + 2 < len(body):
            out.append(chr(ord(body[i + 2]) & 0x1F))
            i += 3
        else:
            out.append("\\" + n)
            i += 2
    return "".join(out)


def _double_quoted(text: str) -> str:
    r"""Inside "...", a backslash quotes only $ ` " \ and newline."""
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m[1] == "\n" else m[1], text)


class _WordBuilder:
    def __init__(self, home: str) -> None:
        self.home = home
        self.value: list[str] = []
        self.pattern: list[str] = []
        self.unquoted: list[str] = []  # unquoted text, quoted parts masked: for glob detection
        self.dynamic = False
        self.procsub = False

    def literal(self, text: str) -> None:
        self.value.append(text)
        self.pattern.append(text)
        self.unquoted.append("x" * len(text))

    def unknown(self, source: str) -> None:
        self.dynamic = True
        if source in ("$HOME", "${HOME}"):
            self.pattern.append(self.home)
        else:
            self.pattern.append("*")
        self.unquoted.append("x")

    def bare(self, text: str) -> None:
        """Unquoted text: backslash quotes the next character, a leading ~ is the home folder."""
        if not self.value and not self.dynamic and (text == "~" or text.startswith("~/")):
            self.value.append(self.home)
            self.pattern.append(self.home)
            self.unquoted.append("x")
            text = text[1:]
        out: list[str] = []
        mask: list[str] = []
        i = 0
        while i < len(text):
            c = text[i]
            if c == "\\" and i + 1 < len(text):
                if text[i + 1] != "\n":
                    out.append(text[i + 1])
                    mask.append("x")
                i += 2
                continue
            out.append(c)
            mask.append(c)
            i += 1
        self.value.append("".join(out))
        self.pattern.append("".join(out))
        self.unquoted.append("".join(mask))

    def build(self, source: str) -> _Word:
        glob = bool(_GLOB.search("".join(self.unquoted)))
        value = None if self.dynamic else "".join(self.value)
        return _Word(value, source, "".join(self.pattern), glob, self.procsub)


# --------------------------------------------------------------------------------------------------
# Where a command's standard input comes from


@dataclass(frozen=True)
class _Stdin:
    kind: str  # "pipe", "text" (known code), "unknown" (a heredoc/here-string with expansions), "file"
    text: str = ""
    source: str = ""


_PIPE = _Stdin("pipe")
_STDIN_FILES = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})


# --------------------------------------------------------------------------------------------------
# Command tables



def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "fish", "csh", "tcsh", "rbash"})
_PRIVILEGE = frozenset(
    {"sudo", "sudoedit", "su", "doas", "pkexec", "run0", "gksudo", "gksu", "kdesu", "kdesudo", "runas"}
)
_SAFE = _names(
    """
    ls dir vdir cat tac head tail less more most bat batcat grep egrep fgrep zgrep rg ag ack fd fdfind
    locate which whereis type file stat wc cut tr nl od hexdump xxd strings diff cmp comm md5sum sha1sum
    sha224sum sha256sum sha384sum sha512sum shasum b2sum cksum base32 base64 echo printf pwd cd pushd
    popd dirs true false : test [ [[ cal uname whoami id groups who w last uptime df du free vmstat
    iostat ps pgrep top htop btop lsof lsblk blkid findmnt printenv seq yes sleep wait jobs basename
    dirname realpath readlink tree jq yq column fold fmt paste join expand unexpand rev man info help
    apropos whatis tldr read set shopt unset unalias hash tput clear nproc arch locale getconf lscpu
    lsusb lspci sw_vers netstat ss zcat zless bzcat xzcat expr let bc dc cowsay fortune ping host dig
    nslookup whois traceroute tracepath mtr uniq sort sed awk gawk mawk nawk tee date hostname history
    kill env export local declare typeset readonly getopts shift return break continue caller
    logname tty stty pstree numfmt factor look units sum
    """
)  # tee/sort/uniq/sed/awk/date/hostname/history/kill/env are refined by their handlers
_DISK_ERASE = _names(
    """
    fdisk sfdisk cfdisk gdisk sgdisk cgdisk parted gparted wipefs diskpart blkdiscard kpartx mkswap
    mke2fs mkdosfs mkntfs mkexfatfs mformat format cryptsetup mdadm pvcreate pvremove vgcreate vgremove
    lvremove lvreduce sg_format zerofree
    """
)
_DISK_LISTING = {"fdisk": {"-l", "--list"}, "sfdisk": {"-l", "--list", "-d", "--dump"},
                 "parted": {"-l", "--list"}, "gdisk": {"-l"}, "sgdisk": {"-p", "--print"}}  # fmt: skip
_POWER = frozenset({"shutdown", "reboot", "halt", "poweroff", "kexec"})
_SYSTEMCTL_POWER = frozenset(
    {"poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "hybrid-sleep",
     "suspend-then-hibernate", "rescue", "emergency", "soft-reboot", "isolate"}
)  # fmt: skip
_SYSTEMCTL_SAFE = frozenset(
    {"status", "show", "cat", "list-units", "list-unit-files", "list-timers", "list-sockets",
     "list-dependencies", "list-jobs", "is-active", "is-enabled", "is-failed", "is-system-running", "help"}
)  # fmt: skip

# name: (subcommands that remove packages, subcommands that only read)
_PACKAGE_MANAGERS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    name: (frozenset(remove.split()), frozenset(read.split()))
    for names, remove, read in [
        ("apt apt-get aptitude", "remove purge autoremove autopurge",
         "list search show policy depends rdepends changelog showsrc madison help why"),
        ("dnf yum microdnf tdnf", "remove erase autoremove",
         "list info search provides repolist check-update repoquery help"),
        ("zypper", "remove rm", "search se info if list-updates lu"),
        ("apk", "del", "info search list"),
        ("brew", "uninstall remove rm autoremove", "list ls info search doctor config outdated deps uses "
         "leaves home --version"),
        ("port", "uninstall", "list info search installed"),
        ("snap", "remove", "list info find"),
        ("flatpak", "uninstall remove", "list info search"),
        ("pip pip3 pip2", "uninstall", "list show freeze check search index inspect debug help"),
        ("pipx", "uninstall uninstall-all", "list environment"),
        ("conda mamba micromamba", "remove uninstall", "list info search"),
        ("gem", "uninstall", "list search info env which"),
        ("cargo", "uninstall", "search tree metadata"),
        ("choco", "uninstall", "list search info"),
        ("winget", "uninstall remove", "list search show"),
        ("scoop", "uninstall", "list search info status"),
    ]
    for name in names.split()
}  # fmt: skip
_JS_PACKAGE_MANAGERS = frozenset({"npm", "pnpm", "yarn", "bun"})
_JS_REMOVE = frozenset({"uninstall", "remove", "rm", "r", "un", "unlink"})
_JS_READ = frozenset({"ls", "list", "ll", "la", "view", "info", "show", "outdated", "search", "explain",
                      "why", "help", "root", "prefix", "doctor", "fund", "audit"})  # fmt: skip

_GIT_READ = _names(
    """
    status log diff show blame grep ls-files ls-tree ls-remote rev-parse describe shortlog cat-file
    show-ref for-each-ref rev-list name-rev merge-base count-objects fsck verify-commit verify-tag
    check-ignore check-attr whatchanged help version diff-tree diff-files diff-index var cherry
    range-diff annotate show-branch
    """
)
_GIT_KNOWN = _GIT_READ | _names(
    """
    add commit push pull fetch merge rebase checkout switch restore reset clean branch tag stash remote
    config rm mv clone init cherry-pick revert am apply bisect notes archive bundle format-patch
    submodule worktree gc prune reflog filter-branch filter-repo replace update-ref update-index
    sparse-checkout lfs maintenance repack pack-refs mergetool difftool citool gui request-pull
    send-email credential hash-object read-tree write-tree commit-tree symbolic-ref
    """
)
# `git -c` keys whose value git runs as a command.
_GIT_EXEC_CONFIG = re.compile(
    r"^(alias\.|core\.(sshcommand|pager|editor|fsmonitor|hookspath|askpass|gitproxy)|"
    r".*\.(command|cmd|textconv|clean|smudge|process|helper|program|tool|path)$|sequence\.editor|credential)",
    re.I,
)
_GIT_GLOBAL_WITH_VALUE = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix",
                                    "--config-env", "--attr-source", "--exec-path"})  # fmt: skip

_INLINE_CODE_FLAGS: dict[str, frozenset[str]] = {
    "node": frozenset({"-e", "--eval", "-p", "--print"}),
    "nodejs": frozenset({"-e", "--eval", "-p", "--print"}),
    "bun": frozenset({"-e", "--eval", "-p", "--print"}),
    "deno": frozenset({"eval"}),
    "ruby": frozenset({"-e"}),
    "php": frozenset({"-r"}),
    "lua": frozenset({"-e"}),
    "luajit": frozenset({"-e"}),
    "rscript": frozenset({"-e"}),
    "osascript": frozenset({"-e"}),
    "pwsh": frozenset({"-c", "-command"}),
    "powershell": frozenset({"-c", "-command"}),
    "cmd": frozenset({"/c", "/k", "//c", "//k"}),
}
_PYTHON = re.compile(r"^(python|pypy)[0-9.]*w?$")
_PERL = re.compile(r"^perl[0-9.]*$")
# Inline code in another language cannot be read here; these markers say it deletes or runs things.
_CODE_DELETES = re.compile(
    r"rmtree|os\.(remove|unlink|rmdir|removedirs)|\.(unlink|rmdir|rmtree)\s*\(|\brimraf\b|\brmSync\b|"
    r"\brm_rf?\b|remove_dir_all|unlinkSync|rmdirSync|FileUtils\.rm|File\.delete|Remove-Item|\brd\s+/s|"
    r"\brmdir\s+/s|\bdel\s+/[sfq]|Format-Volume|Clear-Disk|Stop-Computer|Restart-Computer|\bunlink\b|"
    r"\bshutdown\b|\breboot\b|\bshut\s+down\b|\brestart\b|\berase\b",
    re.I,
)
_CODE_RUNS = re.compile(
    r"os\.(system|exec\w*|spawn\w*|popen)|subprocess|child_process|\bexecSync\b|\bspawnSync\b|"
    r"\bsystem\s*\(|\bexec\s*\(|\beval\s*\(|Runtime\.getRuntime|Start-Process|Invoke-Expression|\biex\b|"
    r"do shell script|\bpty\.spawn|commands\.getoutput|%x\{|\bqx\b|\bopen3\b",
    re.I,
)

# sed's `e` runs a shell command, `w` writes a file: as a command (after an address) or an s/// flag.
_SED_ADDRESS = r"(?:^|[;\n{}])\s*(?:\d+|\$|/(?:\\.|[^/])*/)?(?:\s*,\s*(?:\d+|\$|/(?:\\.|[^/])*/))?\s*!?\s*"
_SED_SUBST = r"s([^\w\s\\])(?:\\.|(?!\1).)*\1(?:\\.|(?!\1).)*\1[gpiImM0-9ew]*"
_SED_EXEC = re.compile(rf"{_SED_ADDRESS}e(?:\s|;|$)|{_SED_SUBST}(?<=e)", re.S)
_SED_WRITE = re.compile(rf"{_SED_ADDRESS}[wW]\s|{_SED_SUBST}(?<=w)\s", re.S)

_BLOCK_DEVICE = re.compile(
    r"^/dev/(?:[shv]d[a-z]+\d*|xvd[a-z]+\d*|nvme\d+(?:n\d+)?(?:p\d+)?|r?disk\d+(?:s\d+)*|"
    r"mmcblk\d+(?:p\d+)?|md\d+|dm-\d+|mapper/.+|loop\d+|sr\d+|fd\d+|mem|kmem|port|disk/.+|root|"
    r"zd\d+|rbd\d+|vg[^/]*/.+)$|^(?:\\\\|//)\.[\\/]physicaldrive\d+$",
    re.I,
)
_HARMLESS_DEVICES = re.compile(r"^/dev/(null|zero|stdout|stderr|stdin|tty|fd/\d+|pts/\d+|full|random|urandom)$")
_WRITERS = frozenset({"cp", "mv", "tee", "install", "rsync", "scp"})  # commands that write to an operand
_SPECIAL_VARIABLES = frozenset(
    {"PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "DYLD_LIBRARY_PATH",
     "BASH_ENV", "ENV", "PROMPT_COMMAND", "IFS", "BASH_FUNC", "PYTHONSTARTUP", "NODE_OPTIONS", "GIT_SSH",
     "GIT_SSH_COMMAND", "GIT_EXEC_PATH", "PERL5OPT", "RUBYOPT"}
)  # fmt: skip


def _command_name(value: str) -> str:
    """What a command name means, whatever its folder or case (macOS and Windows ignore case)."""
    name = value.replace("\\", "/").rsplit("/", 1)[-1].casefold()
    if name.endswith(".exe"):
        name = name[:-4]
    return name


def _split_options(args: list[_Word], with_value: frozenset[str] = frozenset()) -> tuple[list[_Word], int]:
    """Leading options (getopt style) and the index of the first operand after them."""
    i = 0
    while i < len(args):
        value = args[i].value
        if value is None or not value.startswith("-") or value == "-":
            break
        if value == "--":
            return args[:i], i + 1
        i += 2 if value in with_value else 1
    return args[:i], i


def _short_flags(words: list[_Word]) -> set[str]:
    flags: set[str] = set()
    for w in words:
        v = w.value
        if v and v.startswith("-") and not v.startswith("--"):
            flags.update(v[1:])
    return flags


def _long_flags(words: list[_Word]) -> set[str]:
    return {w.value.split("=", 1)[0] for w in words if w.value and w.value.startswith("--")}


def _operands(args: list[_Word], with_value: frozenset[str] = frozenset()) -> list[_Word]:
    """Words that are not options, GNU style: options may follow operands until `--`."""
    out: list[_Word] = []
    i = 0
    end = False
    while i < len(args):
        w = args[i]
        v = w.value
        if not end and v == "--":
            end = True
        elif not end and v is not None and v.startswith("-") and v != "-":
            if v in with_value:
                i += 1
        else:
            out.append(w)
        i += 1
    return out


# --------------------------------------------------------------------------------------------------
# The analysis


class _Analyzer:
    """Walks one parsed text; strings that bash would run again get an _Analyzer of their own."""

    def __init__(self, text: str, report: _Report, protected: _Protected, nesting: int) -> None:
        self.text = text
        self.src = text.encode("utf-8", "surrogatepass")
        self.report = report
        self.protected = protected
        self.nesting = nesting
        self.home = _home()
        self.too_big = False
        self.cwd: str | None = None  # known after a literal `cd` earlier in this text

    def add(self, tier: Tier, reason: str) -> None:
        self.report.add(tier, reason)

    # ---- entry points

    def run(self) -> None:
        tree = _parser().parse(self.src)
        root = tree.root_node
        if root.has_error:
            self.add(D, "cannot tell what runs: the command does not parse as bash")
        self.walk(root, None, 0)

    def sub_script(self, text: str, what: str) -> None:
        """Analyse code that bash (or a wrapper) would itself parse and run."""
        if self.nesting >= MAX_SHELL_NESTING:
            self.add(D, f"cannot tell what runs: {what} nested too deeply to check")
            return
        if self.protected.mentioned_in(text):
            self.add(D, TOUCHES_APP_DATA)
        if len(text) > MAX_COMMAND_CHARS:
            self.add(D, "cannot tell what runs: the command is too long to check")
            return
        _Analyzer(text, self.report, self.protected, self.nesting + 1).run()

    # ---- tree walking

    def node_text(self, node: Node) -> str:
        return self.src[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def walk(self, node: Node, stdin: _Stdin | None, depth: int) -> None:
        self.report.nodes += 1
        if self.report.nodes > MAX_NODES or depth > MAX_TREE_DEPTH:
            if not self.too_big:
                self.too_big = True
                self.add(D, "cannot tell what runs: the command is too large or deeply nested to check")
            return
        kind = node.type
        if kind == "command":
            self.command(node, stdin, depth, extra=[], outer_redirects=[])
        elif kind == "redirected_statement":
            self.redirected(node, stdin, depth)
        elif kind == "pipeline":
            self.pipeline(node, stdin, depth)
        elif kind == "comment":
            return
        else:
            if kind == "variable_assignment":
                self.assignment(node)
            elif kind in _WORDISH:
                self.check_word(self.word([node]))
            inner = stdin
            if kind == "process_substitution":
                inner = _PIPE if self.node_text(node).startswith(">(") else None
            elif kind == "command_substitution":
                inner = stdin if stdin is _PIPE else None
            for child in node.children:
                self.walk(child, inner, depth + 1)

    def pipeline(self, node: Node, stdin: _Stdin | None, depth: int) -> None:
        previous: Node | None = None
        fed = stdin
        for child in node.children:
            if child.type in ("|", "|&"):
                fed = self.pipe_source(previous)
                continue
            self.walk(child, fed, depth + 1)
            previous = child

    def pipe_source(self, previous: Node | None) -> _Stdin:
        """What flows through a pipe: known only after `echo` of literal words."""
        if previous is not None and previous.type == "command":
            words = self.command_words(previous)
            if words and words[0].value is not None and _command_name(words[0].value) == "echo":
                values = [w.literal for w in words[1:]]
                if all(v is not None and not v.startswith("-") for v in values):
                    return _Stdin("text", " ".join(v for v in values if v is not None))
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
                    d for d in r.children_by_field_name("destination")[1:]
                    if not (d.type == "number" and d.end_byte in starts)
                )
        fed = self.redirect_stdin(redirects) or stdin
        if body is not None and body.type == "command":
            self.command(body, fed, depth + 1, extra=extra, outer_redirects=redirects)
        else:
            if body is not None:
                self.walk(body, fed, depth + 1)
            if extra:  # tree-sitter puts `>f a b` words in the redirect; bash would run `a b`
                self.argv(self.group_words(extra), fed, bulk=False, depth=depth)
            self.check_redirects(redirects)
        for r in node.children:
            if body is None or r.id != body.id:  # py-tree-sitter makes a new Node object on each access
                self.walk(r, None, depth + 1)

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
                    fed = _Stdin("file", source=source.source)
        return fed

    def redirect_operator(self, r: Node) -> str:
        for c in r.children:
            if not c.is_named:
                return c.type
        return ""

    def check_redirects(self, redirects: list[Node]) -> None:
        for r in redirects:
            if r.type != "file_redirect":
                continue
            op = self.redirect_operator(r)
            dest = r.children_by_field_name("destination")
            if not dest or op in ("<", "<&"):
                continue
            target = self.word([dest[0]])
            if op in (">&", "<&") and re.fullmatch(r"\d+-?|-", target.value or ""):
                continue  # 2>&1, >&- : file descriptors, not files
            self.check_word(target)
            if target.value is None:
                self.add(M, f"writes to a file named by an expansion: {_snip(target.source)}")
            elif _HARMLESS_DEVICES.match(target.value):
                continue
            elif re.match(r"^/dev/(tcp|udp)/", target.value):
                self.add(D, f"cannot tell what runs: connects the shell to the network ({_snip(target.source)})")
            elif _BLOCK_DEVICE.match(target.pattern) or (target.glob and target.pattern.startswith("/dev/")):
                self.add(D, f"writes to a disk device: {_snip(target.source)}")
            else:
                self.add(M, f"writes to {_snip(target.source)}")

    def assignment(self, node: Node) -> None:
        name = node.child_by_field_name("name")
        if name is not None and self.node_text(name).split("[")[0] in _SPECIAL_VARIABLES:
            self.add(M, f"sets {self.node_text(name)}: changes how later commands run")

    # ---- words

    def word(self, nodes: list[Node]) -> _Word:
        b = _WordBuilder(self.home)
        for n in nodes:
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

    def check_word(self, w: _Word) -> str | None:
        relation = self.protected.relation(w)
        relative = not w.pattern.startswith("/") and not (w.value is None and w.pattern.startswith("*"))
        if relation is None and self.cwd is not None and relative:
            here = posixpath.join(self.cwd, w.pattern)
            relation = self.protected.relation(_Word(w.value and here, w.source, here, w.glob, w.procsub))
        if relation == "inside":
            self.add(D, TOUCHES_APP_DATA)
        return relation

    # ---- simple commands

    def command(
        self, node: Node, stdin: _Stdin | None, depth: int, extra: list[Node], outer_redirects: list[Node]
    ) -> None:
        redirects = self.collect_redirects(node) + outer_redirects
        words = self.command_words(node, extra)
        fed = self.redirect_stdin(self.collect_redirects(node)) or stdin
        for child in node.children:
            if child.type == "variable_assignment":
                self.assignment(child)
        self.check_redirects(redirects)
        if words:
            self.argv(words, fed, bulk=False, depth=depth)
        for child in node.children:  # substitutions inside the words run first, whatever the command
            self.walk(child, _PIPE if stdin is _PIPE else None, depth + 1)

    def argv(self, words: list[_Word], stdin: _Stdin | None, *, bulk: bool, depth: int) -> None:
        """One command after its words are known. `bulk`: xargs or find adds operands we cannot see."""
        if depth > MAX_TREE_DEPTH:
            self.add(D, "cannot tell what runs: the command is too deeply nested to check")
            return
        head = words[0]
        if head.value is None:
            self.add(D, f"cannot tell what runs: the command name comes from {_snip(head.source)}")
            return
        if head.glob:
            self.add(D, f"cannot tell what runs: the command name {_snip(head.source)} is a pattern")
            return
        name = _command_name(head.value)
        args = words[1:]
        start = len(self.report.findings)
        if name not in _PRIVILEGE and [a.value for a in args] in (["--version"], ["--help"]):
            return
        handler = getattr(self, "cmd_" + re.sub(r"\W", "_", name), None)
        if handler is not None:
            handler(name, args, stdin, bulk, depth)
        elif _PYTHON.match(name) or _PERL.match(name) or name in _INLINE_CODE_FLAGS:
            self.interpreter(name, args, stdin)
        elif name in _SHELLS:
            self.shell(name, args, stdin)
        elif name in _PRIVILEGE:
            self.privileged(name, args, stdin, bulk, depth)
        elif name in _PACKAGE_MANAGERS or re.fullmatch(r"pip[0-9.]*", name):
            self.package_manager(name if name in _PACKAGE_MANAGERS else "pip", args)
        elif name in _JS_PACKAGE_MANAGERS:
            self.js_package_manager(name, args)
        elif name in _DISK_ERASE:
            self.disk_tool(name, args)
        elif name.startswith(("mkfs", "newfs")):
            self.add(D, f"{name}: creates a filesystem, erasing the device")
        elif name in _POWER:
            self.add(D, f"{name}: shuts down or restarts the machine")
        elif name in _SAFE:
            pass
        else:
            self.add(M, f"{_snip(head.value)}: not known to be read-only")
        if bulk and self.report.top(start) is S and name not in _SAFE:
            self.add(M, f"{name} via xargs or find")
        if name in _WRITERS:
            for a in args:
                if a.value is not None and _BLOCK_DEVICE.match(a.pattern):
                    self.add(D, f"{name}: writes to a disk device: {_snip(a.source)}")
        for a in words:
            self.check_word(a)

    def inner(self, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        if args:
            self.argv(args, stdin, bulk=bulk, depth=depth + 1)

    def guard_parents(self, name: str, words: list[_Word]) -> None:
        for w in words:
            if self.protected.relation(w) == "above":
                self.add(D, f"{name}: changes a folder that holds Cowork Terminal's data: {_snip(w.source)}")

    # ---- wrappers: the real command follows some options

    def wrapper(self, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int,
                with_value: frozenset[str] = frozenset(), skip: int = 0) -> None:  # fmt: skip
        _, i = _split_options(args, with_value)
        self.inner(args[i + skip :], stdin, bulk, depth)

    def cmd_nohup(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.wrapper(args, stdin, bulk, depth)

    cmd_builtin = cmd_setsid = cmd_unbuffer = cmd_chronic = cmd_nocache = cmd_torsocks = cmd_nohup
    cmd_coproc = cmd_proxychains = cmd_proxychains4 = cmd_fakeroot = cmd_nohup

    def cmd_exec(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.wrapper(args, stdin, bulk, depth, frozenset({"-a"}))

    def cmd_command(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        options, _ = _split_options(args)
        if {"v", "V"} & _short_flags(options):
            return  # `command -v x` only looks x up
        self.wrapper(args, stdin, bulk, depth)

    def cmd_time(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.wrapper(args, stdin, bulk, depth, frozenset({"-f", "--format", "-o", "--output"}))

    def cmd_nice(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.wrapper(args, stdin, bulk, depth, frozenset({"-n", "--adjustment"}))

    def cmd_ionice(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        values = frozenset({"-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"})
        self.wrapper(args, stdin, bulk, depth, values)

    def cmd_timeout(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        values = frozenset({"-s", "--signal", "-k", "--kill-after"})
        self.wrapper(args, stdin, bulk, depth, values, skip=1)

    def cmd_taskset(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.wrapper(args, stdin, bulk, depth, skip=1)

    cmd_chrt = cmd_taskset

    def cmd_stdbuf(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        values = frozenset({"-i", "-o", "-e", "--input", "--output", "--error"})
        self.wrapper(args, stdin, bulk, depth, values)

    def cmd_caffeinate(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.wrapper(args, stdin, bulk, depth, frozenset({"-t", "-w"}))

    def cmd_strace(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.add(M, f"{name}: traces a program")
        values = frozenset({"-o", "-e", "-p", "-s", "-u", "-E", "-a", "-P", "-I", "-b", "-X", "-O", "-S"})
        self.wrapper(args, stdin, bulk, depth, values)

    cmd_ltrace = cmd_strace

    def cmd_env(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        i = 0
        while i < len(args):
            v = args[i].value
            if v is None:
                break
            if v in ("-S", "--split-string") or v.startswith("--split-string="):
                rest = args[i + 1 :] if "=" not in v else [args[i]]
                self.code_words(rest, "env -S")
                return
            if v == "--":
                i += 1
                break
            if v in ("-u", "--unset", "-C", "--chdir"):
                i += 2
            elif v.startswith("-") or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", v):
                name_part = v.split("=", 1)[0]
                if name_part in _SPECIAL_VARIABLES:
                    self.add(M, f"sets {name_part}: changes how later commands run")
                i += 1
            else:
                break
        self.inner(args[i:], stdin, bulk, depth)

    def cmd_xargs(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        values = frozenset({"-a", "--arg-file", "-d", "--delimiter", "-E", "-I", "-L", "--max-lines", "-n",
                            "--max-args", "-P", "--max-procs", "-s", "--max-chars", "--process-slot-var"})  # fmt: skip
        _, i = _split_options(args, values)
        if args[i:]:
            self.argv(args[i:], None, bulk=True, depth=depth + 1)

    def cmd_parallel(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        cut = next((i for i, a in enumerate(args) if a.value in (":::", "::::", ":::+")), len(args))
        self.code_words(args[:cut], "parallel")

    def cmd_watch(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        options, i = _split_options(args, frozenset({"-n", "--interval", "-q", "--equexit"}))
        if "x" in _short_flags(options) or "--exec" in _long_flags(options):
            self.inner(args[i:], None, bulk, depth)
        else:
            self.code_words(args[i:], "watch")

    def cmd_flock(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        values = frozenset({"-w", "--timeout", "-E", "--conflict-exit-code"})
        _, i = _split_options(args, values)
        rest = args[i + 1 :]
        if rest and rest[0].value in ("-c", "--command"):
            self.code_words(rest[1:2], "flock -c")
        else:
            self.inner(rest, stdin, bulk, depth)

    def cmd_busybox(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.inner(args, stdin, bulk, depth)

    cmd_toybox = cmd_busybox

    def cmd_chroot(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.add(D, "chroot: runs as root in another root folder")
        _, i = _split_options(args, frozenset({"--userspec", "--groups"}))
        self.inner(args[i + 1 :], stdin, bulk, depth)

    def privileged(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.add(D, f"{name}: runs as another user")
        if name == "su":
            for i, a in enumerate(args):
                if a.value in ("-c", "--command") and i + 1 < len(args):
                    self.code_words([args[i + 1]], "su -c")
                elif a.value is not None and a.value.startswith("--command="):
                    self.code_words([a], "su -c", strip_prefix="--command=")
            return
        values = frozenset({"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-T", "-U", "--user", "--group",
                            "--host", "--prompt", "--chdir", "--role", "--type", "--other-user",
                            "--close-from", "--command-timeout", "--setenv", "--property", "--machine"})  # fmt: skip
        self.wrapper(args, stdin, bulk, depth, values)

    def cmd_ssh(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.add(M, f"{name}: runs on another machine")
        values = _names("-b -c -D -E -e -F -I -i -J -L -l -m -O -o -p -Q -R -S -W -w -B")
        _, i = _split_options(args, values)
        remote = args[i + 1 :]
        if remote:
            self.code_words(remote, "ssh")

    def cmd_npx(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.add(M, f"{name}: runs a package from a registry")
        options, i = _split_options(args, frozenset({"-p", "--package", "--from", "--with", "--python"}))
        for j, o in enumerate(args[:i]):
            if o.value in ("-c", "--call") and j + 1 < len(args):
                self.code_words([args[j + 1]], f"{name} -c")
        self.inner(args[i:], None, bulk, depth)

    cmd_bunx = cmd_pnpx = cmd_uvx = cmd_npx

    def cmd_nc(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        if {"e", "c"} & _short_flags(args) or {"--exec", "--sh-exec", "--lua-exec"} & _long_flags(args):
            self.add(D, f"cannot tell what runs: {name} gives a network peer a program to drive")
        self.add(M, f"{name}: opens a network connection")

    cmd_ncat = cmd_netcat = cmd_nc

    def cmd_socat(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        if any(re.match(r"^(exec|system):", (a.value or "exec:").casefold()) for a in args):
            self.add(D, "cannot tell what runs: socat starts a program for a network peer")
        self.add(M, "socat: opens a connection")

    def cmd_systemd_run(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.add(M, "systemd-run: starts a service")
        values = _names("-u --unit -p --property -d --description --slice -E --setenv --uid --gid "
                        "--on-calendar --on-active --on-boot --on-startup --on-unit-active --working-directory -M "
                        "--machine -H --host --nice")  # fmt: skip
        self.wrapper(args, stdin, bulk, depth, values)

    def cmd_script(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.add(M, "script: records a terminal session")
        for i, a in enumerate(args):
            if a.value in ("-c", "--command") and i + 1 < len(args):
                self.code_words([args[i + 1]], "script -c")
            elif a.value is not None and a.value.startswith("--command="):
                self.code_words([a], "script -c", strip_prefix="--command=")

    def cmd_at(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        """at and batch run the commands on their input later: judge them now."""
        if {"l", "r", "d", "c"} & _short_flags(args) or name in ("atq", "atrm"):
            self.add(M, f"{name}: changes scheduled jobs")
            return
        self.add(M, f"{name}: schedules commands")
        if stdin is not None and stdin.kind == "text":
            self.sub_script(stdin.text, name)
        elif stdin is not None and stdin.kind in ("pipe", "unknown"):
            self.add(D, f"cannot tell what runs: {name} schedules commands it reads from its input")

    cmd_batch = cmd_at

    # ---- shells and code in strings

    def code_words(self, words: list[_Word], what: str, strip_prefix: str = "") -> None:
        """Words bash would join and parse again as code (`sh -c`, `eval`, `ssh host ...`)."""
        values = [w.literal for w in words]
        if any(v is None for v in values):
            self.add(D, f"cannot tell what runs: {what} of an expansion")
            return
        text = " ".join(v for v in values if v is not None)
        if strip_prefix and text.startswith(strip_prefix):
            text = text[len(strip_prefix) :]
        self.sub_script(text, what)

    def shell(self, name: str, args: list[_Word], stdin: _Stdin | None) -> None:
        i = 0
        inline = False
        while i < len(args):
            v = args[i].value
            if v is None:
                break
            if v in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
                i += 2
                continue
            if v == "--":
                i += 1
                break
            if v.startswith("--") or (v[:1] in "-+" and len(v) > 1):
                if not v.startswith("--") and "c" in v[1:]:
                    inline = True
                i += 1
                continue
            break
        rest = args[i:]
        if inline:
            if not rest:
                self.add(D, f"cannot tell what runs: {name} -c without a command")
            else:
                self.code_words(rest[:1], f"{name} -c")
            return
        if rest and rest[0].value not in _STDIN_FILES:
            script = rest[0]
            if script.procsub or script.value is None:
                self.add(D, f"cannot tell what runs: {name} runs the output of another command")
            else:
                self.add(M, f"{name} {_snip(script.value or '')}: runs a script (its contents are not checked)")
            return
        self.stdin_code(name, stdin, shell=True)

    def stdin_code(self, name: str, stdin: _Stdin | None, *, shell: bool) -> None:
        if stdin is None:
            self.add(M, f"{name}: starts an interactive {'shell' if shell else 'interpreter'}")
        elif stdin.kind == "pipe":
            self.add(D, f"cannot tell what runs: {name} reads its commands from a pipe")
        elif stdin.kind == "unknown" and (shell or not stdin.text):
            self.add(D, f"cannot tell what runs: {name} reads {stdin.source}")
        elif stdin.kind == "file":
            self.add(M, f"{name}: runs the script {_snip(stdin.source)} (its contents are not checked)")
        elif shell:
            self.sub_script(stdin.text, name)
        else:
            self.inline_code(name, stdin.text)

    def cmd_eval(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        if args:
            self.code_words(args, "eval")

    def cmd_source(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        if not args:
            return
        script = args[0]
        if script.value in _STDIN_FILES:
            self.stdin_code(name, stdin, shell=True)
        elif script.procsub or script.value is None:
            self.add(D, f"cannot tell what runs: {name} of another command's output")
        else:
            self.add(M, f"{name} {_snip(script.value)}: runs a script in this shell (not checked)")

    cmd__ = cmd_source  # `.` becomes "_" in the handler name

    def cmd_trap(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        options, i = _split_options(args)
        if len(args) - i >= 2 and args[i].value != "-":
            self.code_words(args[i : i + 1], "trap")

    def cmd_alias(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        for a in args:
            if a.value is None:
                self.add(D, "cannot tell what runs: alias of an expansion")
            elif "=" in a.value:
                self.sub_script(a.value.split("=", 1)[1], "alias")

    def interpreter(self, name: str, args: list[_Word], stdin: _Stdin | None) -> None:
        python = bool(_PYTHON.match(name))
        perl = bool(_PERL.match(name))
        flags = _INLINE_CODE_FLAGS.get(name, frozenset())
        i = 0
        while i < len(args):
            a = args[i]
            v = a.value
            if v is None:
                self.add(D, f"cannot tell what runs: {name} with arguments from an expansion")
                return
            lowered = v.casefold()
            if python and v.startswith("-") and not v.startswith("--") and "c" in v[1:]:
                self.inline_code(name, args[i + 1].literal if i + 1 < len(args) else "")
                return
            if python and v.startswith("-") and not v.startswith("--") and v.endswith("m"):
                module = args[i + 1].value if i + 1 < len(args) else None
                if module == "pip":
                    self.package_manager("pip", args[i + 2 :])
                else:
                    self.add(M, f"{name} -m {_snip(module or '')}: runs a module")
                return
            if perl and v.startswith("-") and not v.startswith("--") and ("e" in v[1:] or "E" in v[1:]):
                self.inline_code(name, args[i + 1].literal if i + 1 < len(args) else "")
                return
            if lowered in flags:
                rest = args[i + 1 :] if name in ("cmd", "pwsh", "powershell") else args[i + 1 : i + 2]
                literal = [w.literal for w in rest]
                code = None if any(x is None for x in literal) else " ".join(x for x in literal if x)
                self.inline_code(name, code)
                return
            if name in ("pwsh", "powershell") and lowered.startswith(("-e", "-enc")):
                self.add(D, f"cannot tell what runs: {name} with encoded code")
                return
            if v.startswith("-") and v != "-":
                i += 1
                continue
            if v in _STDIN_FILES:
                break
            if a.procsub:
                self.add(D, f"cannot tell what runs: {name} runs the output of another command")
            else:
                self.add(M, f"{name} {_snip(v)}: runs a program (its contents are not checked)")
            return
        self.stdin_code(name, stdin, shell=False)

    def inline_code(self, name: str, code: str | None) -> None:
        if code is None:
            self.add(D, f"cannot tell what runs: {name} code from an expansion")
            return
        if self.protected.mentioned_in(code):
            self.add(D, TOUCHES_APP_DATA)
        if _CODE_DELETES.search(code):
            self.add(D, f"{name} code that deletes files or stops the machine")
        elif _CODE_RUNS.search(code):
            self.add(D, f"cannot tell what runs: {name} code starts other programs")
        else:
            self.add(M, f"{name}: runs inline code")

    def cmd_cd(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        """Follow `cd` within one command line, so `cd ~/x && rm y` is checked as ~/x/y."""
        operands = _operands(args)
        target = operands[0].literal if operands else self.home
        if target is None or target == "-":
            self.cwd = None
        elif target.startswith("/") or re.match(r"^[A-Za-z]:[/\\]", target):
            self.cwd = posixpath.normpath(target.replace("\\", "/"))
        elif self.cwd is not None:
            self.cwd = posixpath.normpath(posixpath.join(self.cwd, target))

    cmd_pushd = cmd_cd

    # ---- removal

    def cmd_rm(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        flags: set[str] = set()
        longs: set[str] = set()
        end = False
        operands: list[_Word] = []
        for w in args:
            v = w.value
            if not end and v is None:
                self.add(D, f"cannot tell: rm may take options from {_snip(w.source)}")
            elif not end and v == "--":
                end = True
            elif not end and v is not None and v.startswith("--"):
                longs.add(v.split("=", 1)[0])
            elif not end and v is not None and v.startswith("-") and v != "-":
                flags.update(v[1:])
            else:
                operands.append(w)
        if {"r", "R"} & flags or "--recursive" in longs or "--no-preserve-root" in longs:
            self.add(D, "rm -r: recursive removal")
        if "f" in flags or "--force" in longs:
            self.add(D, "rm -f: forced removal")
        if bulk:
            self.add(D, "rm via xargs or find: removes every file it is given")
        self.add(M, "rm: removes files")

    def cmd_rmdir(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.add(M, f"{name}: removes files")
        self.guard_parents(name, _operands(args))

    cmd_unlink = cmd_rmdir

    def cmd_shred(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.add(D, f"{name}: destroys file contents beyond recovery")

    cmd_wipe = cmd_srm = cmd_shred

    def cmd_rimraf(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.add(D, f"{name}: recursive removal")

    cmd_del_cli = cmd_rimraf

    def cmd_find(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        i = 0
        while i < len(args):
            v = args[i].value
            if v == "-delete":
                self.add(D, "find -delete: removes every match")
            elif v in ("-exec", "-execdir", "-ok", "-okdir"):
                end = next((j for j in range(i + 1, len(args)) if args[j].value in (";", "+")), len(args))
                self.inner(args[i + 1 : end], None, True, depth)
                i = end
            elif v in ("-fprint", "-fprint0", "-fprintf", "-fls"):
                self.add(M, f"find {v}: writes a file")
            i += 1

    def cmd_fd(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        for i, a in enumerate(args):
            if a.value in ("-x", "--exec", "-X", "--exec-batch"):
                end = next((j for j in range(i + 1, len(args)) if args[j].value == ";"), len(args))
                self.inner(args[i + 1 : end], None, True, depth)
                return

    cmd_fdfind = cmd_fd

    def cmd_mv(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.add(M, f"{name}: moves files")
        operands = _operands(args, frozenset({"-t", "--target-directory", "-S", "--suffix"}))
        self.guard_parents(name, operands[:-1] if len(operands) > 1 else operands)

    def cmd_rsync(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        for a in args:
            if a.value is not None and a.value.startswith(("--delete", "--remove-source-files")):
                self.add(D, f"rsync {a.value.split('=')[0]}: deletes files")
        self.add(M, "rsync: copies files")

    # ---- permissions

    def cmd_chmod(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        recursive = False
        operands: list[_Word] = []
        reference = False
        for a in args:
            v = a.value
            if v is not None and (v == "--recursive" or re.fullmatch(r"-[RcfvhHLP]+", v)):
                recursive = recursive or v == "--recursive" or "R" in v
            elif v is not None and v.startswith("--"):
                reference = reference or v.startswith("--reference")
            else:
                operands.append(a)
        targets = operands if reference else operands[1:]
        if recursive:
            broad = [t for t in targets if self.is_broad(t)]
            if broad:
                self.add(D, f"{name} -R on a broad path: {_snip(broad[0].source)}")
            self.guard_parents(name, targets)
            self.add(M, f"{name} -R: changes permissions recursively")
        else:
            self.add(M, f"{name}: changes permissions")

    cmd_chown = cmd_chgrp = cmd_chmod

    def is_broad(self, w: _Word) -> bool:
        """The root, a top-level folder, the home folder or above, or a path we cannot know."""
        if w.value is None and w.pattern.strip("*") == "":
            return True
        path = _norm_path(w.pattern)
        home = _norm_path(self.home)
        if not w.glob and w.value is not None and path.startswith("/"):
            path = posixpath.normpath(path)
        candidates = {"/", home, posixpath.dirname(home)}
        top = re.fullmatch(r"/[^/]*|[a-z]:/?[^/]*|/[a-z]/[^/]*|~/?", path)
        if top or path in candidates:
            return True
        fuzzy = w.glob or w.value is None
        if not fuzzy or not path.startswith("/"):
            return False
        # A pattern in the first two levels (/home/*, /*/x, /Users/*) reaches whole home folders.
        return any(_GLOB.search(part) for part in path.split("/")[1:3]) or any(
            fnmatch.fnmatchcase(c, path) for c in candidates
        )

    # ---- processes and the machine

    def cmd_kill(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        i = 0
        if args and args[0].value in ("-l", "-L", "--list", "--table"):
            return
        if args and args[0].value in ("-s", "-n", "--signal"):
            i = 2
        elif args and args[0].value is not None and args[0].value.startswith("-") and args[0].value != "--":
            i = 1
        if i < len(args) and args[i].value == "--":
            i += 1
        for pid in args[i:]:
            v = pid.value
            if v == "-1":
                self.add(D, "kill -1: kills every process you own")
            elif v is not None and re.fullmatch(r"-\d+|0|1", v):
                self.add(D, f"kill {v}: kills a whole process group or init")
        self.add(M, "kill: stops processes")

    def cmd_killall(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.add(D, f"{name}: kills every process with that name")

    cmd_killall5 = cmd_killall

    def cmd_pkill(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        selectors = {"-u", "-U", "-G", "-g", "-s", "-P", "-t", "--uid", "--euid", "--group", "--pgroup",
                     "--session", "--parent", "--terminal"}  # fmt: skip
        values = frozenset(selectors | {"-F", "--pidfile", "--signal", "--ns", "--nslist"})
        used = {a.value for a in args} & selectors
        patterns = _operands(args, values)
        broad = [p for p in patterns if p.value is None or len(p.value.strip(".*^$")) < 3]
        if used or broad or not patterns:
            self.add(D, f"{name}: kills many processes at once")
        self.add(M, f"{name}: stops processes")

    def cmd_systemctl(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        sub = next((a.value for a in _operands(args)), None)
        if sub in _SYSTEMCTL_POWER:
            self.add(D, f"systemctl {sub}: shuts down, restarts or suspends the machine")
        elif sub is None and not args:
            return
        elif sub not in _SYSTEMCTL_SAFE:
            self.add(M, f"systemctl {sub or ''}: changes services".replace("  ", " "))

    def cmd_loginctl(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        sub = next((a.value for a in _operands(args)), "") or ""
        if sub in _SYSTEMCTL_POWER or sub.startswith(("terminate", "kill")):
            self.add(D, f"loginctl {sub}: ends sessions or stops the machine")
        elif not sub.startswith(("list", "show", "session-status", "user-status", "seat-status")):
            self.add(M, f"loginctl {sub}: changes sessions")

    def cmd_init(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        if any(a.value in ("0", "6", "1", "s", "S") for a in args):
            self.add(D, f"{name}: changes the machine's run level (shutdown, reboot)")
        else:
            self.add(M, f"{name}: talks to the init system")

    cmd_telinit = cmd_init

    def cmd_dd(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.add(D, f"{name}: writes raw data, can overwrite disks")

    cmd_ddrescue = cmd_dcfldd = cmd_dc3dd = cmd_dd

    def cmd_diskutil(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        sub = (next((a.value for a in _operands(args)), "") or "").casefold()
        if sub in ("list", "info", "information", "activity", "listfilesystems", ""):
            return
        if re.match(r"(erase|partition|reformat|zero|secure|random|apfs|resize|merge|split|cs)", sub):
            self.add(D, f"diskutil {sub}: can erase disks")
        else:
            self.add(M, f"diskutil {sub}: changes disks or volumes")

    def disk_tool(self, name: str, args: list[_Word]) -> None:
        listing = _DISK_LISTING.get(name, set())
        values = [a.value for a in args]
        if any(v in listing for v in values) and all(v in listing or (v or "").startswith("/dev/") for v in values):
            return  # fdisk -l and the like only print the partition table
        self.add(D, f"{name}: can erase or repartition disks")

    def cmd_zpool(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        sub = next((a.value for a in _operands(args)), "") or ""
        if sub in ("destroy", "labelclear", "remove", "detach", "offline", "split"):
            self.add(D, f"{name} {sub}: destroys storage")
        elif sub not in ("list", "status", "get", "iostat", "history", "events", ""):
            self.add(M, f"{name} {sub}: changes storage")

    cmd_zfs = cmd_zpool

    def cmd_crontab(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        flags = _short_flags(args)
        if "r" in flags:
            self.add(D, "crontab -r: removes all your scheduled jobs")
        elif "l" not in flags:
            self.add(M, "crontab: changes scheduled jobs")
            reads_input = not _operands(args, frozenset({"-u"})) or [a.value for a in _operands(args)] == ["-"]
            if reads_input and stdin is not None and stdin.kind == "text":
                for line in stdin.text.splitlines():  # a job runs later: judge its command now
                    fields = line.split(None, 1 if line.lstrip().startswith("@") else 5)
                    if fields and not fields[0].startswith("#") and "=" not in fields[0]:
                        self.sub_script(fields[-1], "crontab")

    # ---- git

    def cmd_git(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        i = 0
        while i < len(args):
            v = args[i].value
            if v is None:
                self.add(D, f"cannot tell: git option from {_snip(args[i].source)}")
                return
            if not v.startswith("-"):
                break
            key = v.split("=", 1)[0]
            if key in ("-c", "--config-env"):
                setting = v.split("=", 1)[1] if "=" in v else (args[i + 1].value if i + 1 < len(args) else "")
                if setting is None or _GIT_EXEC_CONFIG.match(setting.split("=", 1)[0]):
                    self.add(D, f"cannot tell what runs: git -c {_snip(setting or '')}")
            i += 2 if v in _GIT_GLOBAL_WITH_VALUE else 1
        if i >= len(args):
            return
        sub = args[i].value or ""
        rest = args[i + 1 :]
        if {"--help", "-h"} & {a.value for a in rest}:
            return
        if sub in ("push", "reset", "clean", "checkout", "restore", "branch", "stash", "rm", "switch"):
            dynamic = [a for a in rest if a.value is None]
            if dynamic:
                self.add(D, f"cannot tell: git {sub} takes options from {_snip(dynamic[0].source)}")
        handler = getattr(self, "git_" + sub.replace("-", "_"), None)
        if handler is not None:
            handler(rest)
        elif sub in _GIT_READ:
            pass
        elif sub in ("filter-branch", "filter-repo"):
            self.add(D, f"git {sub}: rewrites the whole history")
        elif sub in _GIT_KNOWN:
            self.add(M, f"git {sub}: changes the repository")
        else:
            self.add(M, f"git {_snip(sub)}: not a known git command (may be an alias)")

    def git_push(self, rest: list[_Word]) -> None:
        flags = _short_flags([a for a in rest if a.value != "-o"])
        longs = _long_flags(rest)
        if "f" in flags or {"--force", "--force-with-lease"} & longs:
            self.add(D, "git push --force: overwrites remote history")
        if "d" in flags or {"--delete", "--mirror", "--prune"} & longs:
            self.add(D, "git push --delete/--mirror/--prune: deletes remote branches")
        refspecs = _operands(rest, frozenset({"-o", "--push-option", "--repo", "--receive-pack", "--exec"}))[1:]
        for r in refspecs:
            if r.value is not None and r.value.startswith("+"):
                self.add(D, f"git push {_snip(r.value)}: force-pushes a branch")
            elif r.value is not None and r.value.startswith(":"):
                self.add(D, f"git push {_snip(r.value)}: deletes a remote branch")
        self.add(M, "git push: publishes commits")

    def git_reset(self, rest: list[_Word]) -> None:
        if "--hard" in _long_flags(rest):
            self.add(D, "git reset --hard: discards uncommitted changes")
        self.add(M, "git reset: moves the branch")

    def git_clean(self, rest: list[_Word]) -> None:
        flags = _short_flags(rest)
        longs = _long_flags(rest)
        if "n" in flags or "--dry-run" in longs:
            return
        if "f" in flags or "--force" in longs:
            self.add(D, "git clean -f: deletes untracked files")
        self.add(M, "git clean: deletes untracked files")

    def git_checkout(self, rest: list[_Word]) -> None:
        flags = _short_flags(rest)
        if "f" in flags or "--force" in _long_flags(rest):
            self.add(D, "git checkout -f: discards uncommitted changes")
        values = [a.value for a in rest]
        paths = "--" in values and values.index("--") < len(values) - 1
        if paths or any(a.value == "." or a.glob for a in rest):
            self.add(D, "git checkout <paths>: discards uncommitted changes")
        self.add(M, "git checkout: changes the working tree")

    def git_restore(self, rest: list[_Word]) -> None:
        flags = _short_flags(rest)
        longs = _long_flags(rest)
        staged_only = ("S" in flags or "--staged" in longs) and not ("W" in flags or "--worktree" in longs)
        if staged_only:
            self.add(M, "git restore --staged: unstages changes")
        else:
            self.add(D, "git restore: discards uncommitted changes")

    def git_switch(self, rest: list[_Word]) -> None:
        if "f" in _short_flags(rest) or {"--force", "--discard-changes"} & _long_flags(rest):
            self.add(D, "git switch --discard-changes: discards uncommitted changes")
        self.add(M, "git switch: changes the working tree")

    def git_branch(self, rest: list[_Word]) -> None:
        flags = _short_flags(rest)
        longs = _long_flags(rest)
        if "D" in flags or ({"d"} & flags or "--delete" in longs) and ("f" in flags or "--force" in longs):
            self.add(D, "git branch -D: deletes a branch even if unmerged")
        listing = {"l", "a", "r", "v"} & flags or {"--list", "--all", "--remotes", "--show-current",
                                                   "--contains", "--merged", "--no-merged"} & longs  # fmt: skip
        changes = {"d", "m", "M", "c", "C", "f", "u"} & flags or {"--delete", "--move", "--copy",
                                                                 "--set-upstream-to", "--unset-upstream",
                                                                 "--edit-description", "--force"} & longs  # fmt: skip
        if changes or (_operands(rest) and not listing):
            self.add(M, "git branch: changes branches")

    def git_tag(self, rest: list[_Word]) -> None:
        flags = _short_flags(rest)
        if "d" in flags or "--delete" in _long_flags(rest) or (_operands(rest) and "l" not in flags
                                                               and "--list" not in _long_flags(rest)):  # fmt: skip
            self.add(M, "git tag: changes tags")

    def git_stash(self, rest: list[_Word]) -> None:
        sub = next((a.value for a in _operands(rest)), "push")
        if sub in ("drop", "clear"):
            self.add(D, f"git stash {sub}: deletes stashed changes")
        elif sub not in ("list", "show"):
            self.add(M, f"git stash {sub}: changes stashed work")

    def git_remote(self, rest: list[_Word]) -> None:
        sub = next((a.value for a in _operands(rest)), None)
        if sub not in (None, "show", "get-url"):
            self.add(M, f"git remote {sub}: changes remotes")

    def git_config(self, rest: list[_Word]) -> None:
        longs = _long_flags(rest)
        operands = _operands(rest, frozenset({"--file", "-f", "--blob", "--type", "--default"}))
        values = [o.value for o in operands]
        reads = {"--get", "--get-all", "--get-regexp", "--list", "--get-urlmatch"}
        if values[:1] in (["get"], ["list"]) or reads & longs or "l" in _short_flags(rest):
            return
        writes = {"--unset", "--unset-all", "--add", "--replace-all", "--edit", "--remove-section",
                  "--rename-section"} & longs or "e" in _short_flags(rest)  # fmt: skip
        if len(operands) == 1 and not writes:
            return
        if values[:1] == ["set"]:
            operands = operands[1:]
        if len(operands) >= 2 and _GIT_EXEC_CONFIG.match(operands[0].value or ""):
            # A command stored now runs on a later, innocent-looking git call: judge it now.
            command = operands[1].literal
            if command is None:
                self.add(D, "cannot tell what runs: git config sets a command from an expansion")
            else:
                self.sub_script(command[1:] if command.startswith("!") else command, "git config")
        self.add(M, "git config: changes settings")

    def git_reflog(self, rest: list[_Word]) -> None:
        sub = next((a.value for a in _operands(rest)), "show")
        if sub in ("expire", "delete"):
            self.add(D, f"git reflog {sub}: deletes recovery points")

    def git_gc(self, rest: list[_Word]) -> None:
        if any(a.value in ("--prune=now", "--prune=all") for a in rest):
            self.add(D, "git gc --prune=now: deletes unreachable commits")
        self.add(M, "git gc: repacks the repository")

    def git_prune(self, rest: list[_Word]) -> None:
        if "n" in _short_flags(rest) or "--dry-run" in _long_flags(rest):
            return
        self.add(D, "git prune: deletes unreachable commits")

    def git_rm(self, rest: list[_Word]) -> None:
        if "f" in _short_flags(rest) or "--force" in _long_flags(rest):
            self.add(D, "git rm -f: removes files with uncommitted changes")
        self.add(M, "git rm: removes files")

    def git_rebase(self, rest: list[_Word]) -> None:
        self.add(M, "git rebase: rewrites local commits (the reflog keeps the old ones)")

    def git_worktree(self, rest: list[_Word]) -> None:
        sub = next((a.value for a in _operands(rest)), None)
        if sub != "list":
            self.add(M, f"git worktree {sub}: changes worktrees")

    def git_submodule(self, rest: list[_Word]) -> None:
        sub = next((a.value for a in _operands(rest)), "status")
        if sub not in ("status", "summary", "foreach"):
            self.add(M, f"git submodule {sub}: changes submodules")
        if sub == "foreach":
            self.code_words(_operands(rest)[1:], "git submodule foreach")

    # ---- packages

    def subcommand(self, args: list[_Word], what: str) -> str | None:
        for a in args:
            if a.value is None:
                self.add(D, f"cannot tell: {what} subcommand from {_snip(a.source)}")
                return None
            if not a.value.startswith("-"):
                return a.value
        return ""

    def package_manager(self, name: str, args: list[_Word]) -> None:
        remove, read = _PACKAGE_MANAGERS[name]
        if name in ("conda", "mamba", "micromamba") and [a.value for a in _operands(args)][:2] == ["env", "remove"]:
            self.add(D, f"{name} env remove: deletes an environment")
            return
        sub = self.subcommand(args, name)
        if sub is None:
            return
        if sub in remove:
            self.add(D, f"{name} {sub}: removes packages")
        elif sub in read or (sub == "" and any(a.value in ("--version", "-V", "--help") for a in args)):
            return
        else:
            self.add(M, f"{name} {sub}: changes installed software".replace("  ", " "))

    def cmd_dpkg(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        values = {a.value for a in args}
        flags = _short_flags(args)
        if {"r", "P"} & flags or {"--remove", "--purge"} & values:
            self.add(D, "dpkg --remove: removes packages")
        elif not ({"l", "L", "s", "S", "c", "I"} & flags or any(
            (v or "").startswith(("--list", "--status", "--search", "--get-selections", "--contents", "--info",
                                  "--print-architecture", "--version"))
            for v in values
        )):  # fmt: skip
            self.add(M, "dpkg: changes installed software")

    def cmd_pacman(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        first = next((a.value for a in args if a.value and a.value.startswith("-")), "") or ""
        if first.startswith("-R") or first == "--remove":
            self.add(D, f"{name} -R: removes packages")
        elif first.startswith(("-Q", "--query")) or re.fullmatch(r"-S[silgp]+", first):
            return
        elif first or name != "pacman":
            self.add(M, f"{name}: changes installed software")

    cmd_yay = cmd_paru = cmd_pacman

    def cmd_nix_env(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        values = {a.value for a in args}
        if {"-e", "--uninstall"} & values:
            self.add(D, "nix-env --uninstall: removes packages")
        elif not {"-q", "--query"} & values:
            self.add(M, "nix-env: changes installed software")

    def cmd_nix(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        ops = [a.value for a in _operands(args)]
        if ops[:2] == ["profile", "remove"]:
            self.add(D, "nix profile remove: removes packages")
        else:
            self.add(M, "nix: builds or changes software")

    def cmd_uv(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        ops = _operands(args)
        sub = ops[0].value if ops else None
        if sub == "pip":
            self.package_manager("pip", args[args.index(ops[0]) + 1 :])
        elif sub == "tool" and len(ops) > 1 and ops[1].value == "uninstall":
            self.add(D, "uv tool uninstall: removes packages")
        elif sub == "run":
            self.add(M, "uv run: runs a program")
            values = _names("--with --python -p --from --package --extra --group --directory --project "
                            "--env-file --index --with-requirements")
            after = args[args.index(ops[0]) + 1 :]
            _, i = _split_options(after, values)
            self.inner(after[i:], stdin, bulk, depth)
        elif sub not in (None, "version", "tree", "help"):
            self.add(M, f"uv {sub}: changes the project or installed software")

    def js_package_manager(self, name: str, args: list[_Word]) -> None:
        values = [a.value for a in args]
        everywhere = any(v in ("-g", "--global", "--location=global") for v in values)
        sub = self.subcommand(args, name)
        if sub is None:
            return
        if sub == "global" and name == "yarn":
            ops = _operands(args)
            sub = ops[1].value if len(ops) > 1 else ""
            everywhere = True
        if sub in _JS_REMOVE and everywhere:
            self.add(D, f"{name} {sub} -g: removes globally installed packages")
        elif sub in _JS_REMOVE:
            self.add(M, f"{name} {sub}: removes a dependency from this project")
        elif sub in _JS_READ or (sub == "" and any(v in ("-v", "--version") for v in values)):
            return
        else:
            self.add(M, f"{name} {sub}: changes or runs the project".replace("  ", " "))

    # ---- services and clouds

    def cmd_docker(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        ops = [a.value for a in _operands(args, frozenset({"-H", "--host", "--context", "-c", "--config"}))]
        pair = tuple(ops[:2])
        if pair in (("system", "prune"), ("volume", "rm"), ("volume", "prune"), ("volume", "remove")):
            self.add(D, f"{name} {' '.join(pair)}: deletes data")
        elif ops[:1] and ops[0] in ("ps", "images", "logs", "inspect", "version", "info", "stats", "top",
                                    "history", "search", "port", "diff"):  # fmt: skip
            return
        else:
            self.add(M, f"{name}: changes containers")

    cmd_podman = cmd_docker

    def cmd_kubectl(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        sub = next((a.value for a in _operands(args, frozenset({"-n", "--namespace", "--context"}))), "")
        if sub == "delete":
            self.add(D, "kubectl delete: deletes cluster resources")
        elif sub not in ("get", "describe", "logs", "version", "explain", "top", "api-resources", "config"):
            self.add(M, f"kubectl {sub}: changes the cluster")

    def cmd_terraform(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        sub = next((a.value for a in _operands(args)), "")
        if sub == "destroy" or "-destroy" in {a.value for a in args}:
            self.add(D, f"{name} destroy: deletes infrastructure")
        elif sub not in ("plan", "show", "output", "validate", "fmt", "version", "providers", "graph"):
            self.add(M, f"{name} {sub}: changes infrastructure")

    cmd_tofu = cmd_terraform

    def cmd_gh(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        ops = [a.value for a in _operands(args)]
        if len(ops) >= 2 and ops[1] == "delete":
            self.add(D, f"gh {ops[0]} delete: deletes it on GitHub")
        elif len(ops) >= 2 and ops[1] in ("view", "list", "status", "diff", "checks"):
            return
        else:
            self.add(M, "gh: acts on GitHub")

    def cmd_dropdb(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.add(D, f"{name}: deletes a database")

    cmd_dropuser = cmd_dropdb

    # ---- commands that are read-only unless asked otherwise

    def cmd_sed(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        scripts: list[str] = []
        inplace = False
        explicit = False
        i = 0
        while i < len(args):
            v = args[i].value or ""
            if v in ("-e", "--expression") and i + 1 < len(args):
                scripts.append(args[i + 1].value or "")
                explicit = True
                i += 2
                continue
            if v.startswith("--expression="):
                scripts.append(v.split("=", 1)[1])
                explicit = True
            elif v in ("-f", "--file") or v.startswith("--file="):
                self.add(M, "sed -f: runs a sed script file")
            elif v.startswith("--in-place") or (v.startswith("-") and not v.startswith("--") and "i" in v[1:]):
                inplace = True
            elif not v.startswith("-") and not explicit and not scripts:
                scripts.append(v)
            i += 1
        for script in scripts:
            if _SED_EXEC.search(script):
                self.add(D, "cannot tell what runs: sed e runs shell commands")
            elif _SED_WRITE.search(script):
                self.add(M, "sed w: writes a file")
        if inplace:
            self.add(M, "sed -i: edits files in place")

    def cmd_awk(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        program = ""
        i = 0
        inplace = False
        while i < len(args):
            v = args[i].value or ""
            if v in ("-f", "--file"):
                self.add(M, f"{name} -f: runs an awk program file")
                return
            if v in ("-i", "--include") and i + 1 < len(args):
                inplace = inplace or args[i + 1].value == "inplace"
                i += 2
                continue
            if v in ("-v", "-F", "--assign", "--field-separator"):
                i += 2
                continue
            if not v.startswith("-"):
                program = v
                break
            i += 1
        if re.search(r"\bsystem\s*\(|\|\s*getline|\|&|print[f]?\b[^;}]*\|", program):
            self.add(D, f"cannot tell what runs: {name} starts shell commands")
        elif ">" in program:
            self.add(M, f"{name}: may write files")
        if inplace:
            self.add(M, f"{name} -i inplace: edits files in place")

    cmd_gawk = cmd_mawk = cmd_nawk = cmd_awk

    def cmd_tee(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        files = [a for a in _operands(args) if a.value is None or not _HARMLESS_DEVICES.match(a.value)]
        for f in files:
            if f.value is not None and _BLOCK_DEVICE.match(f.pattern):
                self.add(D, f"tee: writes to a disk device: {_snip(f.source)}")
        if files:
            self.add(M, f"tee: writes to {_snip(files[0].source)}")

    def cmd_sort(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        if "o" in _short_flags(args) or "--output" in _long_flags(args):
            self.add(M, "sort -o: writes a file")

    def cmd_uniq(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        if len(_operands(args, frozenset({"-f", "-s", "-w"}))) > 1:
            self.add(M, "uniq: writes its output file")

    def cmd_date(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        if "s" in _short_flags(args) or "--set" in _long_flags(args):
            self.add(M, "date -s: sets the clock")

    def cmd_hostname(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        if _operands(args):
            self.add(M, "hostname: renames the machine")

    def cmd_history(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        if {"c", "d", "w", "a", "r", "n"} & _short_flags(args):
            self.add(M, "history: changes the shell history")

    def cmd_exit(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.add(M, f"{name}: ends the shell session")

    cmd_logout = cmd_exit


# --------------------------------------------------------------------------------------------------
# The parser, loaded on first use

_local = threading.local()


def _parser() -> Parser:
    """One parser per thread (a tree-sitter Parser is not safe to share); the import waits until needed."""
    parser = getattr(_local, "parser", None)
    if parser is None:
        import tree_sitter
        import tree_sitter_bash

        parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
        _local.parser = parser
    return parser
