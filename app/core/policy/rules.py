"""The user's rules against approval fatigue: "always allow deleting node_modules in ~/project".

Pure: what rule the approval window may offer for a held command (`proposal_for`), and which of
the user's rules, if any, covers a held command (`matching_rule`). Rules are stored in the journal
(`Journal.add_rule`, `rules`, `remove_rule`), and only a click in the app's own UI creates one; the
tray applies them, never a server or an agent.

A rule covers a command only when it is `rm` of literal relative paths and nothing else
(`plain_deletions`), every finding that made it destructive is of the rule's kind and inside the
rule's folder, and no deleted path leads through a symlink when the tray decides: `rm -rf build &&
sudo reboot` is never covered by a build-folder rule, nor `ln -sfn ~/Documents build && rm -rf
build/`, `env -C ~/.local rm -rf bin` or `rm -rf up/bin` with `up` a link to the home folder (red
team, 2026-12-04). The tray applies rules only to `execute_command` without an `env` of the
model's (authority/holds.rule_may_answer).
The one kind today is deleting regenerable build folders (`rm -rf build dist node_modules`), the
most frequent reason an agent at work is held; a rule for anything that holds real work (`rm -rf
src`) would teach the user to click "always" on exactly the command the hold is for. A rule covers
only the folder names the held deletion removed, which its button names ("Always allow deleting
node_modules in ~/project"): a rule for `node_modules` that also deleted a project's hand-written
`bin/` in a folder below went unseen behind "build, dist, node_modules..." (red team, 2026-12-06).
The names are written in the rule's kind (`delete-build-folders:dist,node_modules`), so that the
journal, the channel and the windows carry them as they are and an older version, which does not
know such a kind, applies nothing of it.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from app.core.classifier import Classification, Tier
from app.core.classifier.findings import DELETE_RECURSIVE
from app.core.i18n import _

# The kind of the rules made before 2026-12-06 (their button read "build folders (build, dist,
# node_modules...)"): still read, narrowed to the names that button showed (`OLD_RULE_NAMES`).
DELETE_BUILD_FOLDERS = "delete-build-folders"
OLD_RULE_NAMES = ("build", "dist", "node_modules")
FOLDER_SCOPE = "folder"  # kept until the user removes it
SESSION_SCOPE = "session"  # for one agent's connection (one server) only
SCOPES = (FOLDER_SCOPE, SESSION_SCOPE)

# Folders that tools regenerate: deleting one loses no work. Names only, matched exactly.
GENERATED_FOLDERS = frozenset(
    {
        "build", "dist", "out", "target", "node_modules", "__pycache__", ".pytest_cache", ".mypy_cache",
        ".ruff_cache", ".tox", ".nox", "htmlcov", "coverage", ".coverage_html", ".next", ".nuxt",
        ".parcel-cache", ".turbo", ".svelte-kit", ".gradle", ".eggs", "bin", "obj", "_build", "site",
    }
)  # fmt: skip


def build_folders_kind(names: Iterable[str]) -> str:
    """The kind of a rule that covers deleting exactly the build folders `names` (sorted, once each):
    `delete-build-folders:dist,node_modules`."""
    chosen = sorted(set(names))
    if not chosen or any(name not in GENERATED_FOLDERS for name in chosen):
        raise ValueError(f"not build folders: {chosen!r}")
    return f"{DELETE_BUILD_FOLDERS}:{','.join(chosen)}"


def folder_names(kind: str) -> tuple[str, ...] | None:
    """The folder names a rule of `kind` covers (sorted), or None for a kind this version does not
    know; only the exact form `build_folders_kind` writes is known."""
    if kind == DELETE_BUILD_FOLDERS:
        return OLD_RULE_NAMES
    prefix, colon, listed = kind.partition(":")
    names = listed.split(",")
    if prefix != DELETE_BUILD_FOLDERS or not colon or any(name not in GENERATED_FOLDERS for name in names):
        return None
    return tuple(names) if names == sorted(set(names)) else None


class _KnownKinds:
    """The rule kinds this version knows (`kind in KINDS`): the old kind, and build folders by name."""

    def __contains__(self, kind: object) -> bool:
        return isinstance(kind, str) and folder_names(kind) is not None


KINDS = _KnownKinds()


@dataclass(frozen=True)
class RuleProposal:
    """The rule the approval window may offer for one held command."""

    kind: str
    folder: str

    def description(self, scope: str = FOLDER_SCOPE, home: str | None = None) -> str:
        return describe(self.kind, self.folder, scope, home)


@dataclass(frozen=True)
class Rule:
    """A rule the user made with a click. `session`: the server it is limited to (session scope)."""

    id: int
    kind: str
    folder: str
    scope: str
    created_at: float
    description: str  # as recorded when the user made it
    session: str | None = None

    def shown(self) -> str:
        """The rule in the user's language now (the recorded description keeps the one of its day)."""
        return describe(self.kind, self.folder, self.scope)


def describe(kind: str, folder: str, scope: str = FOLDER_SCOPE, home: str | None = None) -> str:
    """ "deleting node_modules in ~/project", in the words the user clicked and reads in the lists:
    every folder name the rule covers, none behind "..."."""
    names = folder_names(kind)
    if names is None:
        raise ValueError(f"unknown rule kind {kind!r}")
    text = _("deleting {names} in {folder}").format(names=", ".join(names), folder=short_folder(folder, home))
    return _("{rule} for this session").format(rule=text) if scope == SESSION_SCOPE else text


def short_folder(folder: str, home: str | None = None) -> str:
    """The folder with the home folder written as ~, as people say it."""
    home = (home or os.path.expanduser("~")).rstrip("/")
    if home and (folder == home or folder.startswith(home + "/")):
        return "~" + folder[len(home) :]
    return folder


def _inside(path: str, folder: str) -> bool:
    folder = posixpath.normpath(folder)
    return posixpath.normpath(path).startswith(folder.rstrip("/") + "/")


# What a command a rule may cover is written with: plain ASCII letters and a few signs, no quote,
# `#`, `$`, backslash, glob, redirect or line break (review, 2026-12-04: shlex took `sub#/build;
# rm ~/x` for a comment after `sub`, where bash reads one word and runs the rest).
_PLAIN_TEXT = re.compile(r"[A-Za-z0-9_@%+=,./ ;&|-]+")
_NAME = re.compile(r"(?:\./)?[A-Za-z0-9_@%+=,.-]+")  # one name in the working folder, `./` before it or not
_RM_OPTIONS = frozenset({"--recursive", "--force", "--verbose", "--dir"})


def plain_deletions(command: str) -> bool:
    """Whether `command` is `rm` of names in its own folder and nothing else (`rm -rf build dist`,
    joined by `;`, `&&` or `||`): no `cd`, wrapper, variable, quote or redirect, each of which could
    make a name lead elsewhere than the classifier saw (red team, 2026-12-04: `CDPATH=~ cd .local &&
    rm -rf bin`, `env --ch=...`), and no folder before the name, which a job running meanwhile could
    turn into a link after the tray decided (`rm -rf build sub/bin`, `sub` made a link to the home
    folder while `build` was being deleted). rm never follows the last part of a path."""
    if not _PLAIN_TEXT.fullmatch(command):
        return False
    segments: list[list[str]] = [[]]
    for word in re.findall(r"&&|\|\||[;&|]|[^\s;&|]+", command):
        if word in (";", "&&", "||"):
            segments.append([])
        elif word in ("&", "|"):
            return False
        else:
            segments[-1].append(word)
    return any(segments) and all(_plain_rm(segment) for segment in segments if segment)


def _plain_rm(words: list[str]) -> bool:
    if words[0] != "rm" or len(words) < 2:
        return False
    operands, options_end = [], False
    for word in words[1:]:
        if not options_end and word == "--":
            options_end = True
        elif not options_end and word.startswith("-"):
            if not (re.fullmatch(r"-[rRfvd]+", word) or word in _RM_OPTIONS):
                return False
        else:
            operands.append(word)
    return bool(operands) and all(_NAME.fullmatch(operand) and operand.strip("./") for operand in operands)


def _build_folder_targets(command: str, verdict: Classification) -> list[str] | None:
    """The folders a destructive command deletes, when that is all it does (`plain_deletions`) and each
    is a build folder."""
    if verdict.tier is not Tier.DESTRUCTIVE or not verdict.findings or not plain_deletions(command):
        return None
    targets = []
    for finding in verdict.findings:
        target = finding.target
        if finding.kind != DELETE_RECURSIVE or not target or not target.startswith("/"):
            return None
        if posixpath.basename(posixpath.normpath(target)) not in GENERATED_FOLDERS:
            return None
        targets.append(posixpath.normpath(target))
    return targets


def proposal_for(command: str, cwd: str | None, verdict: Classification) -> RuleProposal | None:
    """The rule the approval window may offer for `command` held in `cwd`, or None.

    `verdict` is the classifier's result for this command in this folder. Offered only when the
    command does nothing but delete build folders strictly inside `cwd` (`plain_deletions`)."""
    if not cwd:
        return None
    targets = _build_folder_targets(command, verdict)
    if not targets or not all(_inside(t, cwd) for t in targets):
        return None
    # Only the names this command deletes: the button names each (`describe`).
    return RuleProposal(build_folders_kind(posixpath.basename(t) for t in targets), posixpath.normpath(cwd))


def matching_rule(
    rules: Iterable[Rule],
    command: str,
    cwd: str | None,
    verdict: Classification,
    session: str | None = None,
    real: Callable[[str], str] = os.path.realpath,
) -> Rule | None:
    """The first of the user's rules that covers `command` (judged in `cwd` as `verdict`), or None.

    A session rule counts only for its own `session`. A rule covers the command when every
    destructive finding deletes a folder of a name the rule names (`folder_names`) inside the rule's
    folder (or below it), by a path with no symlink on it (`real`: where a path leads now, as the
    tray decides)."""
    targets = _build_folder_targets(command, verdict)
    if not targets or any(real(target) != target for target in targets):
        return None
    for rule in sorted(rules, key=lambda r: r.id):
        names = folder_names(rule.kind)
        if names is None:
            continue
        if rule.scope == SESSION_SCOPE and (session is None or rule.session != session):
            continue
        if all(_inside(t, rule.folder) and posixpath.basename(t) in names for t in targets):
            return rule
    return None
