"""git: its global options, then one rule per subcommand (`git_<sub>`)."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Sequence

from app.core.i18n import N_

from . import git_settings, repository
from .code_options import option_values
from .danger import Danger
from .findings import D, GitSettings, M, _snip
from .handoff import hands_off
from .hosts import remote_here, remote_host
from .options import _long_flags as _given_longs
from .options import _operands, _short_flags, _split_options, options_end, takes_value
from .regular_files import read_regular
from .rule import Analysis
from .stdin import _Stdin
from .tables import (
    _GIT_EXEC_CONFIG,
    _GIT_GLOBAL_WITH_VALUE,
    _GIT_KNOWN,
    _GIT_READ,
    _names,
)
from .words import _Word


def cmd_git(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    i = 0
    folder: str | None = ""  # where git finds its repository (`-C`), from the shell's folder
    named: dict[str, str | None] = {}  # `--git-dir`, `--work-tree`: from the last -C's folder, whatever the order
    while i < len(args):
        v = args[i].value
        if v is None:
            ctx.add(D, "cannot tell: git option from {source}", source=_snip(args[i].source))
            return
        if not v.startswith("-"):
            break
        key = v.split("=", 1)[0]
        if key in ("-C", "--git-dir", "--work-tree"):  # the work tree is where its submodules are
            given = v.split("=", 1)[1] if "=" in v else (args[i + 1].value if i + 1 < len(args) else "")
            if given is None:  # `git -C "$X" status`: which repository's settings, only bash knows
                ctx.add(M, "{name}: cannot tell which repository's settings it reads ({source})", name="git",
                        source=_snip(args[i + 1].source))  # fmt: skip
                folder = None
            elif key != "-C":
                named[key] = os.path.expanduser(given) if given else named.get(key)
            elif given and folder is not None:  # each relative to the folder so far (`-C ""` stays)
                folder = os.path.join(folder, os.path.expanduser(given))
        if key in ("-c", "--config-env"):
            setting = v.split("=", 1)[1] if "=" in v else (args[i + 1].value if i + 1 < len(args) else "")
            name, equals, value = (setting or "").partition("=")
            runs = _GIT_EXEC_CONFIG.match(name)
            if setting is None or (runs and (key == "--config-env" or not equals or _GIT_NAMES_A_FILE.match(name))):
                # A hooks folder or an included file names code elsewhere (review: `core.hooksPath=hooks`).
                ctx.add(D, "cannot tell what runs: git -c {value}", value=_snip(setting or ""))
            elif runs and name.lower().startswith("alias.") and not value.startswith("!"):
                ctx.sub_script(f"git {value}", f"git -c {name}")  # `alias.x='clean -fdx'`: a git command
            elif runs:  # `git -c core.pager=cat log`: what runs is written here
                ctx.sub_script(value.lstrip("!"), f"git -c {name}")
        i += 2 if v in _GIT_GLOBAL_WITH_VALUE else 1
    configured = option_values(args[:i], ["-c", "--config-env"])
    _remote_settings(ctx, "git -c", [w for option, w in configured if option == "-c"])
    if i >= len(args):
        return
    sub = args[i].value or ""
    rest = args[i + 1 :]
    if rest and rest[0].value in ("--help", "-h"):  # further on, it may be an option's value (`-e -h`)
        return
    if folder is not None:
        git, tree = named.get("--git-dir"), named.get("--work-tree")
        ctx.report.settings.append(GitSettings(
            "git", os.path.join(folder, git) if git else folder, bool(git),
            os.path.join(folder, tree) if tree else "", _runs_in_submodules(sub, rest),
        ))  # fmt: skip
    if sub in ("push", "reset", "clean", "checkout", "restore", "branch", "stash", "rm", "switch"):
        dynamic = [a for a in rest if a.value is None]
        if dynamic:
            ctx.add(D, "cannot tell: git {sub} takes options from {source}", sub=sub, source=_snip(dynamic[0].source))
    _code_options(ctx, sub, rest, depth)
    _over_ssh(ctx, sub, rest, _repositories(ctx, folder, named), configured)
    operands = rest[: options_end(rest)]
    if any((a.value or "").startswith("ext::") or "=ext::" in (a.value or "") for a in operands):
        # git's `ext::` transport runs its text as a command (`ext::sh -c rm% -rf% DIR`): third red team
        ctx.add(D, "cannot tell what runs: git {sub} ext::", sub=sub)
    templates = [
        w.value for _option, w in option_values(rest, ["--template"]) if w.value not in ("", _SYSTEM_TEMPLATES)
    ]
    if sub in ("init", "clone") and templates:  # its hooks are copied in (fifth red team)
        ctx.add(D, "cannot tell what runs: writes {source}, whose commands git runs", source="--template")
    for _option, word in option_values(rest, ["--output"]):
        ctx.add(M, "writes to {source}", source=_snip(word.value or word.source))
        ctx.note_written(word, writes=True)
    handler = _SUBCOMMANDS.get(sub)
    if handler is not None:
        handler(ctx, rest)
    elif sub in _GIT_READ:
        pass
    elif sub in ("filter-branch", "filter-repo"):
        ctx.add(D, "git {sub}: rewrites the whole history", sub=sub, danger=Danger.SHARED_HISTORY)
    elif sub in _GIT_KNOWN:
        ctx.add(M, "git {sub}: changes the repository", sub=sub)
    else:
        ctx.add(M, "git {sub}: not a known git command (may be an alias)", sub=_snip(sub))


def repository_settings(ctx: Analysis, git: str) -> None:
    """A repository whose own settings name a program git runs (`core.fsmonitor`): git is not
    read-only there (a review, 2026-12-05; also for `GIT_DIR=...`, analyzer.py). `git`: its git
    folder, from the shell's folder; read once the command is (project_settings.judge)."""
    ctx.report.settings.append(GitSettings("git", git, True))


# Subcommands that never run git in a submodule, whatever the repository's settings say: tried with
# git 2.39 on a submodule whose core.fsmonitor and diff.external wrote a file, the repository set to
# diff.submodule=diff, submodule.recurse, submodule.propagateBranches and status.submoduleSummary
# (status, diff, diff-files, diff-index, describe --dirty, grep and ls-files --recurse-submodules,
# log -p, show and whatchanged -p, reflog -p each ran one; these never did). Other subcommands,
# aliases and plain `git log` included (its -p has many spellings), have their submodules' read.
_NO_SUBMODULES = _names(
    """
    rev-parse branch tag ls-tree cat-file blame annotate shortlog cherry show-branch fsck count-objects
    check-ignore check-attr name-rev rev-list for-each-ref show-ref merge-base var ls-remote config
    verify-commit help version
    """
)


def _runs_in_submodules(sub: str, rest: list[_Word]) -> bool:
    """Whether `git SUB REST...` may run git in a submodule, so that its settings count too."""
    values = [a.value for a in rest]
    if any(v is None or v.startswith("--recurse-submodules") for v in values):
        return True
    if sub in ("describe", "ls-files"):  # only `describe --dirty`/`--broken` looks at the work tree
        return sub == "describe" and any(v is not None and v.startswith(("--dirty", "--broken")) for v in values)
    return sub not in _NO_SUBMODULES


# Options whose value git runs as a shell command, by subcommand (red team, 2026-12-04: `git
# ls-remote --upload-pack='rm -rf DIR; git-upload-pack' .` was judged safe, `git rebase -x '...'`,
# `git difftool -x` and `tar`-like hooks moderate; each ran rm).
_PACK = ("--upload-pack", "--receive-pack", "--exec")
_GIT_CODE_OPTIONS: dict[str, tuple[str, ...]] = {
    "clone": (*_PACK, "-u"), "ls-remote": (*_PACK, "-u"), "fetch": _PACK, "pull": _PACK, "push": _PACK,
    "archive": _PACK, "remote": _PACK, "submodule": _PACK,
    "rebase": ("-x", "--exec"), "difftool": ("-x", "--extcmd"), "grep": ("-O", "--open-files-in-pager"),
    "send-email": ("--to-cmd", "--cc-cmd", "--header-cmd", "--sendmail-cmd"),
}  # fmt: skip
_VALUE_ATTACHED_ONLY = frozenset({"-O", "--open-files-in-pager"})  # alone, git grep -O uses the pager
# Settings whose value names code elsewhere, or allows it: which runs cannot be told.
_GIT_NAMES_A_FILE = re.compile(
    r"^(core\.hookspath|include\.path|includeif\..*\.path|.*\.path|protocol\.(?:ext\.)?allow)$", re.I
)


_SYSTEM_TEMPLATES = "/usr/share/git-core/templates"


def _code_options(ctx: Analysis, sub: str, rest: list[_Word], depth: int) -> None:
    """What `git SUB` runs as a shell command from its options (read as getopt reads them: a
    prefix, a cluster), and `git bisect run CMD`."""
    if sub == "bisect" and rest and rest[0].value == "run":
        ctx.inner(rest[1:], None, False, depth)
    for option, word in option_values(rest, list(_GIT_CODE_OPTIONS.get(sub, ()))):
        if option in _VALUE_ATTACHED_ONLY and any(word is r for r in rest):
            continue  # `git grep -O` alone uses the pager; the next word is not its value
        ctx.code_words([word], f"git {sub} {option}")


# The options that take the next word of the subcommands that reach a repository by its URL, to find
# the repository among their words (git 2.39's, `git CMD --git-completion-helper-all`: a fuzzer against
# git, 2026-12-05, found `push --recurse-submodules no HOST:x`, `ls-remote --exec`, `pull --cleanup`
# and `fetch --recurse-submodules-default` left out, their value read as the repository).
_FETCH_PULL_VALUES = "--upload-pack --depth --deepen --shallow-since --shallow-exclude --refmap -o --server-option " \
                     "--negotiation-tip -j --jobs"  # fmt: skip
_REPOSITORY_VALUES: dict[str, frozenset[str]] = {
    "clone": _names("-o --origin -b --branch -u --upload-pack --reference --reference-if-able --separate-git-dir "
                    "--depth --shallow-since --shallow-exclude -c --config --template --filter -j --jobs "
                    "--server-option --bundle-uri --ref-format"),
    "fetch": _names(f"{_FETCH_PULL_VALUES} --filter --submodule-prefix --recurse-submodules-default"),
    "pull": _names(f"{_FETCH_PULL_VALUES} -s --strategy -X --strategy-option --cleanup"),
    "push": _names("--repo --receive-pack --exec -o --push-option --recurse-submodules"),
    "ls-remote": _names("--upload-pack -u --exec --sort -o --server-option"),  # -u: its manual's, 2.39 refuses it
    "submodule": _names("-b --branch --name --reference --depth"),
}  # fmt: skip
# Their long options that take no value (git 2.39's; `--no-X` takes none either). A long option in
# neither list (a later git's, a prefix of several) may take the next word or not: both are read.
_REPOSITORY_FLAGS: dict[str, frozenset[str]] = {
    "clone": _names("--verbose --quiet --progress --reject-shallow --no-checkout --bare --naked --mirror --local "
                    "--no-hardlinks --shared --recurse-submodules --recursive --dissociate --single-branch "
                    "--no-tags --shallow-submodules --ipv4 --ipv6 --also-filter-submodules --remote-submodules "
                    "--sparse --checkout --hardlinks --tags"),
    "fetch": _names("--verbose --quiet --all --set-upstream --append --atomic --force --multiple --tags --prefetch "
                    "--prune --prune-tags --recurse-submodules --dry-run --write-fetch-head --keep --update-head-ok "
                    "--progress --unshallow --refetch --update-shallow --ipv4 --ipv6 --negotiate-only "
                    "--auto-maintenance --auto-gc --show-forced-updates --write-commit-graph --stdin"),
    "pull": _names("--verbose --quiet --progress --recurse-submodules --rebase --stat --summary --log --signoff "
                   "--squash --commit --edit --ff --ff-only --verify --verify-signatures --autostash --gpg-sign "
                   "--allow-unrelated-histories --all --append --force --tags --prune --dry-run --keep "
                   "--unshallow --update-shallow --ipv4 --ipv6 --show-forced-updates --set-upstream"),
    "push": _names("--verbose --quiet --all --mirror --delete --tags --dry-run --porcelain --force "
                   "--force-with-lease --force-if-includes --thin --set-upstream --progress --prune --follow-tags "
                   "--signed --atomic --ipv4 --ipv6 --verify"),
    "ls-remote": _names("--quiet --tags --heads --refs --get-url --exit-code --symref"),
    "submodule": _names("--force --quiet"),
}  # fmt: skip


_Places = list[tuple[str | None, str]]  # repositories: (git folder, None outside one; work tree told, "" its own)


def _repositories(ctx: Analysis, folder: str | None, named: dict[str, str | None]) -> _Places | None:
    """The repositories a git command may run in, each as (its git folder, None outside one; the work
    tree it is told, "" its own), from each folder its shell may be in (`cd /nowhere; git push` runs
    where it was): None where one only bash can tell (`-C "$D"`, `cd "$D" && git fetch`)."""
    if folder is None:
        return None
    given, tree = named.get("--git-dir"), named.get("--work-tree")
    if os.path.isabs(folder) or (given and os.path.isabs(given)):
        bases = [""]
    elif ctx.report.lost is not None:
        return None
    else:  # without a folder given to the classifier, none is read (as before the first `cd`)
        bases = list(dict.fromkeys([ctx.cwd, *ctx.report.places])) if ctx.cwd is not None else []
    found: _Places = []
    for base in bases:
        here = os.path.join(base or "", folder)
        git = os.path.join(here, given) if given else repository.git_dir(here)
        found.append((git, os.path.join(here, tree) if tree else ""))
    return list(dict.fromkeys(found)) or [(None, "")]


def _repository_words(sub: str, rest: list[_Word]) -> list[_Word]:
    """The words of `git SUB REST` that may be its repository, its first operand as git's
    parse-options reads them: a cluster of one-letter options (`-qo x`: -o takes `x`), a long one by
    a prefix, `--end-of-options`. After an option it does not know (`_REPOSITORY_FLAGS`), the next
    word may be its value: that word and the next operand both may be the repository."""
    values, flags = _REPOSITORY_VALUES[sub], _REPOSITORY_FLAGS[sub]
    found: list[_Word] = []
    maybe = False  # whether this word may be the value of the option before it
    i = 0
    while i < len(rest):
        v = rest[i].value
        if v in ("--", "--end-of-options"):
            return found + rest[i + 1 : i + 2]
        if v is None or not v.startswith("-") or v == "-":
            found.append(rest[i])
            if not maybe:
                return found
            maybe, i = False, i + 1
            continue
        takes = _takes_next(v, values, flags)
        maybe = takes is None
        i += 2 if takes else 1
    return found


def _takes_next(option: str, values: frozenset[str], flags: frozenset[str]) -> bool | None:
    """Whether git takes the word after `option` as its value; None where that cannot be told here."""
    if not option.startswith("--"):  # `-qo`: the first letter that takes a value takes the rest, or the next word
        return next((k == len(option) - 1 for k, letter in enumerate(option[1:], 1) if f"-{letter}" in values), False)
    if "=" in option or option.startswith("--no-"):
        return False
    if option in values or option in flags:
        return option in values
    known = {name in values for name in values | flags if name.startswith(option)}  # git takes a prefix of one
    return known.pop() if len(known) == 1 else None


_PULL_JOBS = re.compile(r"-\w*j|--jo?b?s?")  # pull's -j (or --jobs) with no value joined to it
_HELPER = re.compile(r"[A-Za-z0-9][A-Za-z0-9+.-]*::")  # `NAME::ADDRESS`: git runs git-remote-NAME, here


def _git_remote_here(words: list[_Word]) -> _Word | None:
    """`remote_here` of repositories as git reads them: also `user@host::path`, which git reaches
    through ssh (`host`, the path `:path`; a fuzzer, 2026-12-05): before a `::`, only a name of
    letters, digits, `+`, `-` and `.` names a remote helper (`git-remote-NAME`)."""
    found = remote_here(words)
    for word in words if found is None else []:
        text = word.value if word.value is not None else word.pattern
        at = text.find(":")
        scp = text[:at] + text[at + 1 :]  # `user@host::path` as `user@host:path`
        if at > 0 and text[at : at + 2] == "::" and "/" not in text[:at] and not _HELPER.match(text) \
                and remote_here([_Word(scp, word.source, scp)]):  # fmt: skip
            return word
    return found


def _over_ssh(ctx: Analysis, sub: str, rest: list[_Word], repositories: _Places | None, settings: _Given = ()) -> None:
    """A repository at `host:path` or `ssh://host/path` is reached through ssh, which starts
    git-upload-pack or git-receive-pack (or what --upload-pack, --receive-pack or --exec names) on
    that machine: on this one, outside the container (issue 21). A local path or `file://` runs them
    here. A remote by its name is where the settings of the repositories it may run in
    (`_repositories`) and the command line's (`settings`: `git -c`) say (`_named_remotes`)."""
    if sub == "for-each-repo":  # `git for-each-repo --config=KEY fetch`: git in each repository KEY lists
        return _cannot_tell(ctx, f"git {sub}", "--config")
    named = {"archive": ["--remote"], "push": ["--repo"]}.get(sub, [])
    words = [w for _option, w in option_values(rest, named)]
    values = _REPOSITORY_VALUES.get(sub, frozenset())
    if sub == "submodule":  # `git submodule [-q] add [OPTIONS] URL [PATH]`
        add = next((j for j, a in enumerate(rest) if not (a.value or "").startswith("-")), len(rest))
        words += _repository_words(sub, rest[add + 1 :]) if rest[add : add + 1] and rest[add].value == "add" else []
    elif sub == "fetch" and _given(rest, "--multiple", 3, values):  # each a remote or a group (git takes a prefix)
        words += _operands(rest, values)
    elif sub in _REPOSITORY_VALUES:
        words += _repository_words(sub, rest)
    if sub == "pull" and any(_PULL_JOBS.fullmatch(a.value or "") for a in rest):
        # pull hands `-j` on alone, then the options and the remote: fetch's -j takes the word after
        # it, the remote or the next one (`git pull 2 main -j 2` fetches from `main`: a fuzzer, 2026-12-05)
        words += _operands(rest, values - {"-j", "--jobs"})[:2]
    here = _git_remote_here(words)
    if here is not None:
        hands_off(ctx, f"git {sub} {_snip(here.source)}")
    else:
        _named_remotes(ctx, sub, rest, words, repositories, settings)
    if sub == "clone":
        _remote_settings(ctx, "git clone -c", [w for _option, w in option_values(rest, ["-c", "--config"])])
    elif sub == "remote" and "--delete" not in _given_longs(rest):  # `remote add|set-url NAME URL`
        given = _operands(rest, _names("-t -m"))
        if [w.value for w in given[:1]] in (["add"], ["set-url"]) and _git_remote_here(given[2:3]) is not None:
            hands_off(ctx, f"git remote {given[0].value} {_snip(given[2].source)}")
    elif sub == "submodule":  # `submodule set-url PATH URL`: later updates reach URL
        given = _operands(rest, values)
        if [w.value for w in given[:1]] == ["set-url"] and _git_remote_here(given[-1:]) is not None:
            hands_off(ctx, f"git submodule set-url {_snip(given[-1].source)}")
    elif sub == "config" and not any(flag.startswith(_CONFIG_NOT_SET) for flag in _given_longs(rest)):
        given = _operands(rest, _names("--file -f --blob --type --default --comment --value"))
        given = given[1:] if given[:1] and given[0].value == "set" else given  # `git config set KEY VALUE`
        reads = given[:1] and given[0].value in ("get", "unset", "list", "remove-section", "rename-section", "edit")
        if len(given) >= 2 and not reads and _names_remote_here(given[0].value or given[0].pattern, given[1]):
            hands_off(ctx, f"git config {_snip(given[0].source)}")


# What contacts a remote by its name (or the remotes git chooses): `remote show` and `prune` ask it too
_CONTACTS = frozenset({"push", "fetch", "pull", "ls-remote", "archive", "clone"})
_REMOTE_CONTACTS = frozenset({"update", "show", "prune", "set-head"})
# What moves the settings git reads away from those read here (the classifier's environment is not
# the command's: `GIT_DIR=/x git ls-remote backup`, `HOME=/x git fetch`; `*`: a variable whose name is
# only known when it runs). A red team, 2026-12-05.
_MOVES_SETTINGS = ("GIT_DIR", "GIT_COMMON_DIR", "HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
                   "GIT_CONFIG_NOSYSTEM", "*")  # fmt: skip


_Given = Sequence[tuple[str, _Word]]  # `git -c KEY=VALUE`, `--config-env KEY=VARIABLE`: (the option, its value)


def _given_settings(settings: _Given) -> tuple[list[tuple[str, str]], str | None]:
    """The settings `git -c KEY=VALUE` gives, each key as git writes it (`Remote.X.URL` is
    `remote.X.url`), and the first `--config-env` that sets where a remote leads (from a variable:
    known only when it runs), or None."""
    found: list[tuple[str, str]] = []
    for option, word in settings:
        key, equals, value = (word.value or "").partition("=")
        first, last = key.find("."), key.rfind(".")
        if not equals or first < 0:
            continue  # no value (or no section): none git takes as a URL
        key = key[:first].lower() + key[first:last] + key[last:].lower()
        if option == "--config-env" and (_REMOTE_URL.match(key) or _REWRITE.match(key)):
            return found, word.source
        found.append((key, value))
    return found, None


def _named_remotes(
    ctx: Analysis, sub: str, rest: list[_Word], words: list[_Word], places: _Places | None, settings: _Given = ()
) -> None:
    """The remotes `git SUB` reaches by name or as git chooses (`git push`, `git fetch --all`), the
    URLs it is given (`words`) as the settings rewrite them (`insteadOf`), and its submodules'
    repositories, each held where it is this machine (a red team, 2026-12-05: `branch.B.remote`
    holding a URL, groups, includes, `[remote.Backup]`...). The settings are the repository's and
    the command line's (`git -c remotes.g=origin fetch g`: a fuzzer, 2026-12-05). Held as cannot
    tell where the settings are not the ones read here, or where which remote it reaches only bash
    can tell."""
    names = _remote_names(sub, rest, words)
    reach = _submodules_reached(sub, rest)
    if names == [] and not ((sub in _CONTACTS or sub == "submodule") and words) and reach is None:
        return  # (`submodule add URL`: its words)
    what = f"git {sub}"
    settings_given, from_variable = _given_settings(settings)
    if from_variable is not None:  # `git --config-env=remote.origin.url=U fetch`
        return _cannot_tell(ctx, what, from_variable)
    moved = ctx.report.sets_one_of(_MOVES_SETTINGS)
    expanded = next((w for w in words if w.value is None and not w.pattern.startswith("/") and not remote_host(w)),
                    None)  # fmt: skip
    unnamed = names is None or any(not _url_like(name) for name in names) or _relative(words, sub)
    if moved is not None:  # `HOME=/x git fetch`: its files are not the ones read here
        return _cannot_tell(ctx, what, f"${moved}")
    if expanded is not None:  # `git fetch "$R"`: a remote's name or a URL, only bash can tell
        return _cannot_tell(ctx, what, expanded.source)
    if reach == "cloned":  # the submodules are those the repository it clones names
        return _cannot_tell(ctx, what, "--recurse-submodules")
    if places is None and (unnamed or reach is not None):  # `git -C "$D" fetch`
        return _cannot_tell(ctx, what, ctx.report.lost or "-C")
    declared = reach == "declared"
    memo = ctx.report.git_settings  # read once a command (a line of 500 `git ls-remote r1`)
    push = sub == "push"
    urls: list[str] = []
    try:
        for git, tree in places or [(None, "")]:
            config = git_settings.git_config(git, os.environ, ctx.home, memo)
            config = git_settings.with_settings(config, settings_given)
            given = [w.value for w in words if w.value is not None]
            if _relative(words, sub):  # `submodule add ../x`: from the remotes of the repository it is added to
                own = git_settings.remote_urls(config, None, push=push)
                given = [*own, *(git_settings.relative_url(url, value) for url in own for value in given)]
            urls += git_settings.remote_urls(config, names, push=push, given=given)
            pushes_submodules = reach == "configured" and config.pushes_submodules
            if git is not None and (reach in ("populated", "declared") or pushes_submodules):
                urls += git_settings.submodule_urls(
                    git, tree, os.environ, ctx.home, memo, declared=declared, push=push, settings=settings_given,
                    recursive=declared and _updates_recursively(rest),
                )  # fmt: skip
    except repository._CannotTell as why:
        return _cannot_tell(ctx, what, str(why))
    written = next((path for path in _files_read(memo) if _written_before(ctx, path)), None)
    if written is not None:  # `echo '[remote "x"] ...' > .gitmodules && git submodule update --init`
        return _cannot_tell(ctx, what, written)
    found = _git_remote_here([_Word(url, url, url) for url in urls])
    if found is not None:
        remotes = f" {_snip(' '.join(names))}" if names else ""
        hands_off(ctx, f"{what}{remotes} ({_snip(found.source)})")
    return None


def _files_read(memo: git_settings.Memo) -> list[str]:
    """The files git's settings were read from for this command (an include not there too)."""
    return list(dict.fromkeys(path for config in memo.values() if not isinstance(config, str) for path in config.files))


def _written_before(ctx: Analysis, path: str) -> bool:
    """Whether the command line writes `path`, or a folder it is in (not one files only land in:
    `cp x .`), by its name before git reads it. Not a pattern (`> "$f"`, `sed -i ... $(git
    ls-files)`): those are everyday before a `git push`."""
    path = os.path.normpath(path)
    folders = [path[:i] for i, char in enumerate(path) if char == "/" and i > 0]
    named = {os.path.normpath(p) for p, _script in ctx.report.written if not any(c in p for c in "*?[")}
    landed = {os.path.normpath(p) for p in ctx.report.landed}
    return path in named or any(folder in named - landed for folder in folders)


def _cannot_tell(ctx: Analysis, what: str, source: str) -> None:
    ctx.add(D, "{name}: cannot tell which repository's settings it reads ({source})", name=what,
            source=_snip(source), danger=Danger.CANNOT_TELL)  # fmt: skip


def _url_like(word: str) -> bool:
    """A URL or a path, which git reaches without any repository's settings (a remote's name holds no `:`)."""
    return ":" in word or word.startswith(("/", "./", "../"))


def _fetch_reads_again(rest: list[_Word]) -> bool:
    """Whether `git pull REST` may fetch from a remote git chooses, or one other than it seems: pull
    hands its remote and refspecs to fetch without `--` or `--end-of-options`, and fetch reads a
    `-X` among them as an option (`git pull -- --all`); and pull's `-j` alone, which fetch's -j
    then takes the next word for (`git pull -j 2` fetches from the branch's remote: a fuzzer,
    2026-12-05)."""
    values = [a.value or "" for a in rest]
    ends = [j for j, v in enumerate(values) if v in ("--", "--end-of-options")]
    if ends and any(v.startswith("-") for v in values[ends[0] + 1 :]):
        return True
    jobs = any(_PULL_JOBS.fullmatch(v) for v in values)
    return jobs and len(_operands(rest, _REPOSITORY_VALUES["pull"] - {"-j", "--jobs"})) < 2


def _updates_recursively(rest: list[_Word]) -> bool:
    """`git submodule update --init --recursive`: it clones submodules of submodules it clones."""
    values = _REPOSITORY_VALUES["submodule"]
    init = _given(rest, "--init", 5, values) or "-i" in (a.value for a in rest)
    return init and _given(rest, "--recursive", 6, values)


def _relative(words: list[_Word], sub: str) -> bool:
    """`git submodule add ../x`: reached from the remote of the repository it is added to."""
    return sub == "submodule" and bool(words) and (words[0].value or "").startswith(("./", "../"))


def _given(rest: list[_Word], option: str, shortest: int, values: frozenset[str]) -> bool:
    """Whether the long `option` is given, whole or by a prefix of `shortest` characters or more
    (git takes any it can tell apart), as an option: not another's value, not after `--`."""
    i = 0
    while i < len(rest):
        v = rest[i].value or ""
        if v == "--":
            return False
        flag = v.split("=", 1)[0]
        if v.startswith("--") and len(flag) >= shortest and option.startswith(flag):
            return True
        i += 2 if v.startswith("-") and takes_value(v, values) else 1
    return False


def _submodules_reached(sub: str, rest: list[_Word]) -> str | None:
    """How `git SUB` reaches repositories of submodules: "declared" (`submodule update --init`,
    `init`, `sync`: each URL .gitmodules and the settings give, and each populated one's remotes),
    "populated" (a fetch or pull: the remotes of those populated, by default on demand), "configured"
    (a push: where push.recurseSubmodules or submodule.recurse says), "cloned" (`clone
    --recurse-submodules`: those of a repository not here yet), or None."""
    values = _REPOSITORY_VALUES.get(sub, frozenset())
    # `--recurse-submodules[=...]` and its prefixes that are not `--receive-pack`'s, the last one given
    # (push's takes its value from the next word too: `--recurse-submodules no`)
    values_of = [(a.value or "").lower() for a in rest] + [""]
    said = [
        v if sub != "push" or "=" in v else f"{v}={values_of[j + 1]}"
        for j, v in enumerate(values_of)
        if v.startswith(("--recu", "--no-recu"))
    ]
    off = any(v.startswith("--no-") or v.partition("=")[2] in ("no", "false", "off", "check") for v in said[-1:])
    if sub == "submodule":
        first = next((a.value for a in _operands(rest, values)), None)
        return "declared" if first in ("update", "init", "sync") else None
    if sub == "clone":
        recurse = _given(rest, "--recurse-submodules", 5, values) or _given(rest, "--recursive", 5, values)
        return "cloned" if recurse else None
    if sub in ("fetch", "pull"):
        return None if off else "populated"
    if sub == "push":
        return None if off else "populated" if said else "configured"
    return None


def _remote_names(sub: str, rest: list[_Word], words: list[_Word]) -> list[str] | None:
    """The remotes `git SUB` contacts by name (`git push backup`), each word as git may take it (a
    remote, a group, or a URL: `team/backup`, `b~k`); None where git may choose any (`git push`,
    `git fetch --all`, `git remote update`), [] where it contacts none by name (`ls-remote --get-url`)."""
    if sub == "remote":
        given = [w.value or "" for w in _operands(rest, _names("-t -m"))]
        if given[:1] == ["add"] and ("f" in _short_flags(rest) or _given(rest, "--fetch", 4, _names("-t -m"))):
            return given[2:3]  # `remote add -f NAME URL` fetches from URL (as the settings rewrite it) at once
        if not given or given[0] not in _REMOTE_CONTACTS or (given[0] == "show" and "n" in _short_flags(rest)):
            return []  # `remote prune -n` still asks the remote; `show -n` does not
        if given[0] == "update":  # the last `default` is `--all` where no group has that name (git's remote.c)
            return None if given[-1:] in (["update"], ["default"]) else given[1:]
        return given[1:]
    if sub == "maintenance":  # `maintenance run`: its prefetch task fetches from every remote (not with --auto)
        tasks = [w.value for _option, w in option_values(rest, ["--task"])]
        run = [w.value for w in _operands(rest, _names("--task --schedule"))[:1]] == ["run"]
        prefetches = not tasks or "prefetch" in tasks  # without --task: as the settings enable tasks
        return None if run and prefetches and not _given(rest, "--auto", 4, frozenset()) else []
    values = _REPOSITORY_VALUES.get(sub, frozenset())
    # ls-remote reads options up to its first operand only: in `ls-remote r main --get-url` it is a pattern
    leading = _split_options(rest, values)[0] if sub == "ls-remote" else rest
    if sub not in _CONTACTS or sub == "clone" or (sub == "ls-remote" and _given(leading, "--get-url", 3, values)):
        return []
    if (sub in ("fetch", "pull") and _given(rest, "--all", 4, values)) or (sub == "pull" and _fetch_reads_again(rest)):
        return None
    names = [w.value for w in words if w.value is not None]
    return names if words or sub == "archive" else None


# A remote's URL, or a URL rewritten to (`url.BASE.insteadOf`, `pushInsteadOf`): what later fetches
# or pushes there reaches BASE. Set to this machine, what pushes there later (`git push l`, a
# rewritten github.com) runs a program on it through ssh, outside the container (a red team,
# 2026-12-05): held when set, in `-c`, `git config` or `git remote add|set-url`.
_REMOTE_URL = re.compile(
    r"(?is)^(?:remote\..*\.(?:push)?url|branch\..*\.(?:push)?remote|remote\.pushdefault|remotes\..*|submodule\..*\.url)$"
)
_REMOTE_NAMED = re.compile(r"(?is)^remote\.(.*)\.[^.]*$")  # a remote named by a URL: `remote.HOST:/x.uploadpack`
_REWRITE = re.compile(r"(?is)^url\.(.*)\.(?:push)?insteadof$")
_CONFIG_NOT_SET = ("--get", "--unset", "--list", "--remove-section", "--rename-section", "--edit")


def _names_remote_here(key: str, value: _Word) -> bool:
    """Whether setting `key` to `value` points a remote (or a rewritten URL) at this machine."""
    named = _REWRITE.match(key) or _REMOTE_NAMED.match(key)
    if named is not None and _git_remote_here([_Word(named[1], named[1], named[1])]) is not None:
        return True  # a URL in the key: `url.HOST:/x.insteadOf`, `remote.HOST:/x.uploadpack`
    if key.lower().startswith("remotes."):  # a group: its members, names or URLs
        words = [_Word(member, member, member) for member in (value.value or value.pattern).split()]
    else:
        words = [value]
    # a key only bash can tell (`git config "$K" HOST:/x`) may be any of them
    return (_REMOTE_URL.match(key) is not None or "*" in key) and _git_remote_here(words) is not None


def _remote_settings(ctx: Analysis, what: str, settings: list[_Word]) -> None:
    """`-c KEY=VALUE` settings that point a remote at this machine."""
    for setting in settings:
        key, _equals, value = (setting.value or "").partition("=")
        if _names_remote_here(key, _Word(value, value, value)):
            hands_off(ctx, f"{what} {_snip(setting.source)}")
            return


def git_push(ctx: Analysis, rest: list[_Word]) -> None:
    flags = _short_flags([a for a in rest if a.value != "-o"])
    longs = _long_flags(rest)
    operands = _operands(rest, frozenset({"-o", "--push-option", "--repo", "--receive-pack", "--exec"}))
    refspecs = operands[1:]
    if "f" in flags or {"--force", "--force-with-lease"} & longs:
        plain, values = _rewrites_history(operands)
        ctx.add(D, "git push --force: overwrites remote history", plain, **values, danger=Danger.SHARED_HISTORY)
    if "d" in flags or {"--delete", "--mirror", "--prune"} & longs:
        ctx.add(D, "git push --delete/--mirror/--prune: deletes remote branches", danger=Danger.SHARED_HISTORY)
    for r in refspecs:
        if r.value is not None and r.value.startswith("+"):
            plain, values = _rewrites_history(operands[:1] + [r])
            ctx.add(
                D,
                "git push {refspec}: force-pushes a branch",
                plain,
                refspec=_snip(r.value),
                **values,
                danger=Danger.SHARED_HISTORY,
            )
        elif r.value is not None and r.value.startswith(":"):
            ctx.add(D, "git push {value}: deletes a remote branch", value=_snip(r.value), danger=Danger.SHARED_HISTORY)
    ctx.add(M, "git push: publishes commits")


# git's long options that make these rules hold a command: git takes any unique prefix of one (`--har`,
# `--forc`). Only these: a prefix of one that lets a command by (`--dry`) may be another option's value
# (`git clean -f -e --dry` deletes: review, 2026-12-04).
_GIT_LONGS = ("--hard", "--merge", "--force", "--all", "--reset", "--delete", "--mirror", "--prune", "--ours",
              "--theirs", "--pathspec-from-file", "--worktree", "--stdin", "--discard-changes",
              "--force-with-lease")  # fmt: skip


def _long_flags(words: list[_Word]) -> set[str]:
    """The long options given, each also as every option of `_GIT_LONGS` it is a prefix of."""
    given = _given_longs(words)
    return given | {known for known in _GIT_LONGS for flag in given if len(flag) >= 5 and known.startswith(flag)}


def git_reset(ctx: Analysis, rest: list[_Word]) -> None:
    if "--hard" in _long_flags(rest):
        ctx.add(D, "git reset --hard: discards uncommitted changes", danger=Danger.LOSES_FILES)
    elif "--merge" in _long_flags(rest):  # it lost a staged change (fifth red team)
        ctx.add(D, "git reset --merge: discards uncommitted changes", danger=Danger.LOSES_FILES)
    ctx.add(M, "git reset: moves the branch")


def git_clean(ctx: Analysis, rest: list[_Word]) -> None:
    """Held unless it only lists: without -f, `clean.requireForce=false`, set by `-c` or an earlier
    command, makes it delete, and `-i` takes its answers from what the agent types (`echo c | git
    clean -fdi`): fifth red team and its review."""
    values = [a.value or "" for a in rest]
    dry = [j for j, v in enumerate(values) if len(v) >= 5 and "--dry-run".startswith(v.partition("=")[0])]
    if "n" in _short_flags(rest) or any(j == 0 or values[j - 1] not in ("-e", "--exclude") for j in dry):
        return  # `git clean --dry -d` lists; in `git clean -f -e --dry`, `--dry` is a pattern (review)
    ctx.add(D, "git clean -f: deletes untracked files", danger=Danger.LOSES_FILES)


_CHECKOUT_VALUES = frozenset({"-b", "-B", "--orphan", "--conflict", "--pathspec-from-file"})


def git_checkout(ctx: Analysis, rest: list[_Word]) -> None:
    flags = _short_flags(rest)
    longs = _long_flags(rest)
    if "f" in flags or "--force" in longs:
        ctx.add(D, "git checkout -f: discards uncommitted changes", danger=Danger.LOSES_FILES)
    values = [a.value for a in rest]
    paths = "--" in values and values.index("--") < len(values) - 1
    # `git checkout HEAD DIR`: a commit then paths; `--ours`/`--theirs` only take paths (fifth red team)
    operands = _operands(rest, _CHECKOUT_VALUES)
    paths = paths or len(operands) > 1 or bool({"--ours", "--theirs"} & longs)
    # `git checkout Documents`: a name that is a file or folder here, not a branch
    only = operands[0] if len(operands) == 1 else None
    named = only is not None and not _flags_take(rest, "bB") and not _is_branch(ctx.cwd, only.value or "")
    paths = paths or (named and only is not None and _is_here(ctx, only))
    paths = paths or any(re.search(r"[*?\[]", a.value or "") for a in operands)  # `git checkout '*.py'`
    if paths or "--pathspec-from-file" in longs or any(a.value == "." or a.glob for a in rest):
        ctx.add(D, "git checkout <paths>: discards uncommitted changes", danger=Danger.LOSES_FILES)
    ctx.add(M, "git checkout: changes the working tree")


def _is_here(ctx: Analysis, word: _Word) -> bool:
    path = None if word.value is None or ctx.cwd is None else os.path.join(ctx.cwd, word.value)
    return path is not None and os.path.lexists(path)


def _is_branch(cwd: str | None, name: str) -> bool:
    """Whether the repository around `cwd` has a branch (or a remote's branch) called `name`: git then
    switches to it, even where a file of that name exists (`git checkout main` beside a ./main)."""
    git = repository.git_dir(cwd)
    if not git or not name:
        return False
    refs = [os.path.join(git, "refs", "heads", name)]
    with contextlib.suppress(OSError):
        refs += [
            os.path.join(git, "refs", "remotes", remote, name)
            for remote in os.listdir(os.path.join(git, "refs", "remotes"))
        ]
    if any(os.path.isfile(ref) for ref in refs):
        return True
    packed = read_regular(os.path.join(git, "packed-refs"), repository.MAX_INDEX_BYTES) or b""
    ends = (f"refs/heads/{name}", f"/{name}")  # past what is read: not known to be one (a checkout discards)
    return any(line.rstrip().endswith(ends) for line in packed.decode("utf-8", "replace").splitlines())


def _flags_take(rest: list[_Word], letters: str) -> bool:
    return any(letter in _short_flags(rest) for letter in letters) or "--orphan" in _long_flags(rest)


def git_checkout_index(ctx: Analysis, rest: list[_Word]) -> None:
    prefixed = any((a.value or "").startswith("--prefix=") for a in rest)  # it writes under that folder only
    if ("f" in _short_flags(rest) or "--force" in _long_flags(rest)) and not prefixed:
        ctx.add(D, "git checkout-index -f: discards uncommitted changes", danger=Danger.LOSES_FILES)
    ctx.add(M, "git checkout-index: changes the working tree")


def git_read_tree(ctx: Analysis, rest: list[_Word]) -> None:
    if "--reset" in _long_flags(rest) and "u" in _short_flags(rest):
        ctx.add(D, "git read-tree --reset -u: discards uncommitted changes", danger=Danger.LOSES_FILES)
    ctx.add(M, "git read-tree: changes the repository")


def git_update_ref(ctx: Analysis, rest: list[_Word]) -> None:
    if "d" in _short_flags(rest) or "--stdin" in _long_flags(rest):  # `update-ref -d refs/heads/main`
        ctx.add(D, "git update-ref -d: deletes a branch even if unmerged", danger=Danger.LOSES_FILES)
    ctx.add(M, "git update-ref: changes the repository")


def git_restore(ctx: Analysis, rest: list[_Word]) -> None:
    flags = _short_flags(rest)
    longs = _long_flags(rest)
    staged_only = ("S" in flags or "--staged" in longs) and not ("W" in flags or "--worktree" in longs)
    if staged_only:
        ctx.add(M, "git restore --staged: unstages changes")
    else:
        ctx.add(D, "git restore: discards uncommitted changes", danger=Danger.LOSES_FILES)


def git_switch(ctx: Analysis, rest: list[_Word]) -> None:
    if "f" in _short_flags(rest) or {"--force", "--discard-changes"} & _long_flags(rest):
        ctx.add(D, "git switch --discard-changes: discards uncommitted changes", danger=Danger.LOSES_FILES)
    ctx.add(M, "git switch: changes the working tree")


def git_branch(ctx: Analysis, rest: list[_Word]) -> None:
    flags = _short_flags(rest)
    longs = _long_flags(rest)
    if "D" in flags or ({"d"} & flags or "--delete" in longs) and ("f" in flags or "--force" in longs):
        ctx.add(D, "git branch -D: deletes a branch even if unmerged", danger=Danger.LOSES_FILES)
    listing = {"l", "a", "r", "v"} & flags or {"--list", "--all", "--remotes", "--show-current",
                                               "--contains", "--merged", "--no-merged"} & longs  # fmt: skip
    changes = {"d", "m", "M", "c", "C", "f", "u"} & flags or {"--delete", "--move", "--copy",
                                                             "--set-upstream-to", "--unset-upstream",
                                                             "--edit-description", "--force"} & longs  # fmt: skip
    if changes or (_operands(rest) and not listing):
        ctx.add(M, "git branch: changes branches")


def git_tag(ctx: Analysis, rest: list[_Word]) -> None:
    flags = _short_flags(rest)
    if "d" in flags or "--delete" in _long_flags(rest) or (_operands(rest) and "l" not in flags
                                                           and "--list" not in _long_flags(rest)):  # fmt: skip
        ctx.add(M, "git tag: changes tags")


def git_stash(ctx: Analysis, rest: list[_Word]) -> None:
    sub = next((a.value for a in _operands(rest)), "push")
    if sub in ("drop", "clear"):
        ctx.add(D, "git stash {sub}: deletes stashed changes", sub=sub, danger=Danger.LOSES_FILES)
    elif sub not in ("list", "show"):
        ctx.add(M, "git stash {sub}: changes stashed work", sub=sub or "")


def git_remote(ctx: Analysis, rest: list[_Word]) -> None:
    sub = next((a.value for a in _operands(rest)), None)
    if sub not in (None, "show", "get-url"):
        ctx.add(M, "git remote {sub}: changes remotes", sub=sub)


def git_config(ctx: Analysis, rest: list[_Word]) -> None:
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
    sets = len(operands) >= 2 or bool({"--add", "--replace-all"} & longs)
    key = operands[0].value if operands else ""
    if sets and key is None:  # `git config "$K" "$V"`: `core.fsmonitor` names a command git runs later
        ctx.add(D, "cannot tell what runs: git config sets {source}", source=_snip(operands[0].source))
    elif sets and (key or "").lower() == "maintenance.repo":  # as `git maintenance register` (below)
        hands_off(ctx, f"git config {_snip(operands[0].source)}")
    if len(operands) >= 2 and _GIT_EXEC_CONFIG.match(operands[0].value or ""):
        # A command stored now runs on a later, innocent-looking git call: judge it now.
        command = operands[1].literal
        if command is None:
            ctx.add(D, "cannot tell what runs: git config sets a command from an expansion")
        else:
            ctx.sub_script(command[1:] if command.startswith("!") else command, "git config")
    ctx.add(M, "git config: changes settings")


def git_reflog(ctx: Analysis, rest: list[_Word]) -> None:
    sub = next((a.value for a in _operands(rest)), "show")
    if sub in ("expire", "delete"):
        ctx.add(D, "git reflog {sub}: deletes recovery points", sub=sub, danger=Danger.LOSES_FILES)


def git_maintenance(ctx: Analysis, rest: list[_Word]) -> None:
    """`start` has systemd, cron, launchd or the task scheduler run `git maintenance run` every hour,
    outside the container, in every repository in `maintenance.repo`, whose own settings may name a
    program git runs (`core.fsmonitor`); `register` adds this one to a schedule the user may have."""
    given = rest[0].value if rest else ""
    if given in ("start", "register", None):
        hands_off(ctx, f"git maintenance {_snip(rest[0].source)}")
    ctx.add(M, "git maintenance: changes the repository")


def git_gc(ctx: Analysis, rest: list[_Word]) -> None:
    if any(a.value in ("--prune=now", "--prune=all") for a in rest):
        ctx.add(D, "git gc --prune=now: deletes unreachable commits", danger=Danger.LOSES_FILES)
    ctx.add(M, "git gc: repacks the repository")


def git_prune(ctx: Analysis, rest: list[_Word]) -> None:
    if "n" in _short_flags(rest) or "--dry-run" in _long_flags(rest):
        return
    ctx.add(D, "git prune: deletes unreachable commits", danger=Danger.LOSES_FILES)


def git_rm(ctx: Analysis, rest: list[_Word]) -> None:
    if "f" in _short_flags(rest) or "--force" in _long_flags(rest):
        ctx.add(D, "git rm -f: removes files with uncommitted changes", danger=Danger.LOSES_FILES)
    ctx.add(M, "git rm: removes files")


def git_rebase(ctx: Analysis, rest: list[_Word]) -> None:
    ctx.add(M, "git rebase: rewrites local commits (the reflog keeps the old ones)")


def git_worktree(ctx: Analysis, rest: list[_Word]) -> None:
    sub = next((a.value for a in _operands(rest)), None)
    if sub == "remove" and ("f" in _short_flags(rest) or "--force" in _long_flags(rest)):
        ctx.add(D, "git worktree remove --force: discards uncommitted changes", danger=Danger.LOSES_FILES)
    if sub != "list":
        ctx.add(M, "git worktree {sub}: changes worktrees", sub=sub or "")


def git_submodule(ctx: Analysis, rest: list[_Word]) -> None:
    sub = next((a.value for a in _operands(rest)), "status")
    if sub not in ("status", "summary", "foreach"):
        ctx.add(M, "git submodule {sub}: changes submodules", sub=sub or "")
    if sub == "foreach":  # the words after it as written: `_operands` would drop `-rf` (red team)
        after = rest[next(i for i, a in enumerate(rest) if a.value == "foreach") + 1 :]
        while after and after[0].value in ("--recursive", "-q", "--quiet"):
            after = after[1:]
        ctx.code_words(after, "git submodule foreach")


# git's subcommands that have a rule of their own; the rest are judged by the lists in `tables`.
_SUBCOMMANDS: dict[str, Callable[[Analysis, list[_Word]], None]] = {
    "push": git_push,
    "reset": git_reset,
    "clean": git_clean,
    "checkout": git_checkout,
    "checkout-index": git_checkout_index,
    "read-tree": git_read_tree,
    "update-ref": git_update_ref,
    "restore": git_restore,
    "switch": git_switch,
    "branch": git_branch,
    "tag": git_tag,
    "stash": git_stash,
    "remote": git_remote,
    "config": git_config,
    "reflog": git_reflog,
    "gc": git_gc,
    "maintenance": git_maintenance,
    "prune": git_prune,
    "rm": git_rm,
    "rebase": git_rebase,
    "worktree": git_worktree,
    "submodule": git_submodule,
}


def _rewrites_history(operands: list[_Word]) -> tuple[str, dict[str, str]]:
    """ "Rewrites the history of origin/main": the remote and branches of a force push, where known
    (the words' template and its values)."""
    remote = operands[0].value if operands and operands[0].value else None
    branches = [
        r.value.lstrip("+").rsplit(":", 1)[-1].removeprefix("refs/heads/")
        for r in operands[1:]
        if r.value and r.value.lstrip("+").rsplit(":", 1)[-1]
    ]
    if remote and branches:
        return N_("Rewrites the history of {branches}"), {"branches": ", ".join(f"{remote}/{b}" for b in branches)}
    if remote:
        return N_("Rewrites the history of branches on {remote}"), {"remote": remote}
    return N_("Rewrites the history of the remote branch"), {}
