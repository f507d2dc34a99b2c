"""The hooks and settings a git verb runs: each repository's hooks folder (core.hooksPath too) and the
template `git init` or `git clone` copies into the repository it makes.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping, Sequence

from app.core.classifier.git_config_text import config_entries
from app.core.commands.pins.command_words import MODULE_BYTES, commands_here, file_head, literal_name

# The hooks a git verb runs (githooks(5)): those not there when the user is asked are pinned absent.
COMMIT_HOOKS = ("pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "post-rewrite")
MERGE_HOOKS = ("pre-merge-commit", "prepare-commit-msg", "commit-msg", "post-merge")
GIT_HOOKS: dict[str, tuple[str, ...]] = {
    "commit": COMMIT_HOOKS, "cherry-pick": COMMIT_HOOKS, "revert": COMMIT_HOOKS, "merge": MERGE_HOOKS,
    "pull": (*MERGE_HOOKS, "pre-rebase", "post-rewrite", "post-checkout"),
    "rebase": ("pre-rebase", "post-checkout", *COMMIT_HOOKS),
    "am": ("applypatch-msg", "pre-applypatch", "post-applypatch", "post-rewrite"), "push": ("pre-push",),
    **dict.fromkeys(("checkout", "switch", "worktree", "bisect", "stash"), ("post-checkout",)),
    **dict.fromkeys(("reset", "restore", "add", "rm", "mv", "fetch", "branch", "tag", "update-ref", "gc",
                     "maintenance", "notes", "read-tree", "update-index"), ()),
    "send-email": ("sendemail-validate",),
}  # fmt: skip
ANY_CHANGE = ("reference-transaction", "post-index-change", "pre-auto-gc")  # a ref, the index, the objects
GIT_VALUES = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix",
                        "--attr-source", "--list-cmds"})  # fmt: skip
MAX_HOOKS = 32  # files of one hooks folder pinned
TEMPLATE_VERBS = ("init", "clone", "submodule")  # they copy a template's hooks into a repository they make
TEMPLATE_HOOKS = ("post-checkout", *ANY_CHANGE)  # what `git clone` runs of them at once


def git_files(command: str, folder: str, env: Mapping[str, str]) -> list[str]:
    """For each git verb `command` runs, the repository's configuration and the hooks folder's files
    (core.hooksPath where the configuration sets it literally, else .git/hooks), and the hooks of the
    verb absent now (red team, 2026-12-05: a pre-commit hook put in a repository while the prompt was
    up ran with `git commit`). The repository is the one in the folder git runs in (made by the
    command, perhaps: `git init g && git -C g commit`) and the one above it. With them the template
    `git init` and `git clone` copy into the repository they make (`_template_files`)."""
    runs = [(words[1:], where, {**env, **assigned}) for words, here, assigned in commands_here(command, folder)
            if posixpath.basename(words[0]) == "git" for where in dict.fromkeys((folder, here))]  # fmt: skip
    found = [path for args, where, given in runs for path in _git_verb_files(args, where, given)]
    verbs = [parsed[0] for args, where, given in runs if (parsed := _git_words(args, where, given)) is not None]
    names = [*TEMPLATE_HOOKS, *(name for verb in verbs for name in GIT_HOOKS.get(verb, ()))]
    found += [path for args, where, given in runs for path in _template_files(args, where, given, names)]
    return list(dict.fromkeys(found))


def _git_words(
    args: Sequence[str], where: str, env: Mapping[str, str]
) -> tuple[str, list[str], str, str | None, dict[str, str]] | None:
    """`git ARGS` run in `where`: its verb and the verb's arguments, the folder `-C` moves to, the
    repository `--git-dir` (or GIT_DIR) names, and the settings `-c` gives (by their names in lower
    case); None without a verb, or where bash alone knows the folder."""
    git_dir, settings = env.get("GIT_DIR"), dict[str, str]()
    at = 0
    while at < len(args):
        arg, value = args[at], ""
        if arg in GIT_VALUES:
            value = args[at + 1] if at + 1 < len(args) else ""
            at += 2
        elif arg.startswith("--") and "=" in arg:
            arg, value = arg.split("=", 1)
            at += 1
        elif arg.startswith("-"):
            at += 1
            continue
        else:
            return arg, list(args[at + 1 :]), where, git_dir, settings
        if arg in ("-C", "--git-dir") and not literal_name(value):
            return None  # a folder only bash knows
        if arg == "-C":
            where = posixpath.normpath(posixpath.join(where, value))
        elif arg == "--git-dir":
            git_dir = value
        elif arg == "-c":
            name, _equals, setting = value.partition("=")
            settings[name.lower()] = setting
    return None


def _user_configs(env: Mapping[str, str]) -> tuple[str, list[str]]:
    """The home folder and the user's git configurations, ~/.gitconfig first (it wins)."""
    home = env.get("HOME") or os.environ.get("HOME", "")
    config = env.get("XDG_CONFIG_HOME") or posixpath.join(home, ".config")
    return home, [posixpath.join(home, ".gitconfig"), posixpath.join(config, "git", "config")] if home else []


def _hook_files(hooks: str, names: Sequence[str]) -> list[str]:
    """A hooks folder's files (at most MAX_HOOKS) and the hooks `names` there, absent perhaps."""
    try:
        there = sorted(n for n in os.listdir(hooks) if not n.endswith(".sample"))[:MAX_HOOKS]
    except (OSError, ValueError):
        there = []
    return [posixpath.join(hooks, name) for name in dict.fromkeys([*there, *names])]


def _git_verb_files(args: Sequence[str], where: str, env: Mapping[str, str]) -> list[str]:
    """What `git ARGS` run in `where` reads that runs code: configurations and hooks (`git_files`)."""
    parsed = _git_words(args, where, env)
    if parsed is None:
        return []
    verb, _rest, where, git_dir, settings = parsed
    hooks_path = settings.get("core.hookspath")
    repositories = [(posixpath.join(where, git_dir), where)] if git_dir else _repositories(where)
    home, user_configs = _user_configs(env)
    found: list[str] = []
    for dot_git, top in repositories:
        common = _common_dir(dot_git)
        configs = [posixpath.join(common, "config"), *user_configs]
        chosen = hooks_path if hooks_path is not None else next(filter(None, map(_hooks_path, configs)), None)
        if chosen and chosen.startswith("~/"):
            chosen = posixpath.join(home, chosen[2:])
        hooks = posixpath.normpath(posixpath.join(top, chosen)) if chosen else posixpath.join(common, "hooks")
        names = [*GIT_HOOKS.get(verb, ()), *(ANY_CHANGE if verb in GIT_HOOKS else ())]
        found += [*configs, *_hook_files(hooks, names)]
    return found


def _template_files(args: Sequence[str], where: str, env: Mapping[str, str], names: Sequence[str]) -> list[str]:
    """The template `git ARGS` copies into the repository it makes (`init`, `clone`, a submodule's
    clone): `--template`, else GIT_TEMPLATE_DIR, else init.templateDir (`-c`, then the user's
    configurations). Its hooks become the new repository's, and `git clone` runs its post-checkout
    at once; its configuration is copied too, and may name other hooks by core.hooksPath. Pinned:
    that configuration, the hooks there now and `names` (those the command's git verbs run) absent
    now, in the template and in a hooks folder its configuration names by an absolute path. Git's
    own template (/usr/share/git-core/templates) is not the project's."""
    parsed = _git_words(args, where, env)
    if parsed is None or parsed[0] not in TEMPLATE_VERBS:
        return []
    verb, rest, where, _git_dir, settings = parsed
    home, user_configs = _user_configs(env)
    chosen: str | None = None
    for k, arg in enumerate(rest if verb != "submodule" else ()):
        if arg == "--":
            break
        option, equals, value = arg.partition("=")
        if len(option) > 2 and "--template".startswith(option):  # git takes any prefix that is not ambiguous
            chosen = value if equals else rest[k + 1] if k + 1 < len(rest) else ""
    for setting in (env.get("GIT_TEMPLATE_DIR"), settings.get("init.templatedir")):
        chosen = setting if chosen is None else chosen
    if chosen is None:
        chosen = next(filter(None, (_config_setting(c, "init", "templatedir") for c in user_configs)), None)
    if chosen and chosen.startswith("~/") and home:  # as bash (`--template ~/t`) or git (a setting) expands it
        chosen = posixpath.join(home, chosen[2:])
    if not literal_name(chosen):  # none (git's own), empty (no template), or one only bash knows
        return []
    template = posixpath.normpath(posixpath.join(where, chosen or ""))
    config = posixpath.join(template, "config")
    found = [config, *_hook_files(posixpath.join(template, "hooks"), names)]
    inner = _hooks_path(config)
    if inner and inner.startswith("~/") and home:
        inner = posixpath.join(home, inner[2:])
    if inner and inner.startswith("/"):  # a relative one is in a work tree the command makes
        found += _hook_files(posixpath.normpath(inner), names)
    return found


def _repositories(where: str) -> list[tuple[str, str]]:
    """The `.git` git would use in `where` (one the command may make yet) and the repository above
    it, with the folder hooks run in."""
    found = [(posixpath.join(where, ".git"), where)]
    folder = where
    while True:
        if os.path.lexists(posixpath.join(folder, ".git")):
            found.append((posixpath.join(folder, ".git"), folder))
            break
        if os.path.isfile(posixpath.join(folder, "HEAD")) and os.path.isdir(posixpath.join(folder, "objects")):
            found.append((folder, folder))  # a bare repository: its hooks run in it
            break
        parent = posixpath.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return list(dict.fromkeys(found))


def _common_dir(dot_git: str) -> str:
    """The folder with a repository's configuration and hooks: `.git`, or for a worktree (a `.git`
    file saying `gitdir: ...`) the main repository's, as its `commondir` says."""
    git_dir = dot_git
    pointer = file_head(dot_git, 4096) if os.path.isfile(dot_git) else None
    if pointer is not None and pointer.startswith("gitdir:"):
        git_dir = posixpath.normpath(posixpath.join(posixpath.dirname(dot_git), pointer[7:].strip()))
    common = file_head(posixpath.join(git_dir, "commondir"), 4096)
    return posixpath.normpath(posixpath.join(git_dir, common.strip())) if common and common.strip() else git_dir


def _hooks_path(config: str) -> str | None:
    """core.hooksPath as a git configuration file sets it (its last value), or None."""
    return _config_setting(config, "core", "hookspath")


def _config_setting(config: str, section: str, key: str) -> str | None:
    """A setting as a git configuration file sets it (its last value), or None; `section` and `key`
    in lower case. Read by the classifier's reader of git's config.c (a look-alike here took `[core
    "x"]`'s hooksPath for core's, and cut a value continued on the next line)."""
    wanted = f"{section}.{key}"
    values = [value for name, value in config_entries(file_head(config, MODULE_BYTES) or "") if name == wanted]
    return values[-1] if values else None
