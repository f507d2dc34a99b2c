"""A project's own settings that name programs its tool runs: a repository's `.git/config`
(`core.fsmonitor`, `diff.external`, a filter's `clean`) and cargo's `.cargo/config.toml`
(`build.rustc-wrapper`, a target's `runner`). Such a file arrives with the project (a tarball, a
copied folder), and then `git status` or `cargo metadata` runs what it names (a review, 2026-12-05:
each wrote a file from the read-only tool where no container runs). Read where the command runs."""

from __future__ import annotations

import contextlib
import os
import re

from .tables import _GIT_EXEC_CONFIG

MAX_SETTINGS_BYTES = 256 * 1024  # larger is not a settings file a person wrote: read as naming one
_SECTION = re.compile(r'\s*\[\s*([-\w.]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\](.*)')
_KEY = re.compile(r"\s*([A-Za-z][-\w]*)\s*(?:=\s*(.*))?$")
# git's own values for core.fsmonitor: its built-in daemon, or none; anything else is a program
_FSMONITOR_BUILT_IN = frozenset({"", "true", "false", "yes", "no", "on", "off", "1", "0"})
_GIT_INCLUDES = re.compile(r"^(include\.path|includeif\..*\.path)$", re.I)
# Any mention counts, quoted or dotted or in an inline table (`build = { rustc-wrapper = "x" }`,
# `"rustc-wrapper" = ...`: a review, 2026-12-05): reading TOML's every spelling is not needed to say no.
_CARGO_RUNS = re.compile(
    r"(?<![\w-])(rustc-wrapper|rustc-workspace-wrapper|rustc_wrapper|rustc|rustdoc|runner|linker)(?![\w-])"
)
# rustup runs the `cargo` of a toolchain folder a project's rust-toolchain file names (`path = ...`)
_TOOLCHAIN_PATH = re.compile(r"(?<![\w-])path\s*=|^\s*/", re.M)


def git_dir(cwd: str | None) -> str | None:
    """The git folder of the repository around `cwd` (a worktree's or submodule's `gitdir:` file
    followed), or None outside one."""
    folder = cwd
    while folder and not os.path.exists(os.path.join(folder, ".git")):
        if _bare(folder):  # git takes a folder that is a repository itself (`b.git`) for one
            return folder
        parent = os.path.dirname(folder)
        folder = None if parent == folder else parent
    if not folder:
        return None
    git = os.path.join(folder, ".git")
    if os.path.isfile(git):
        with contextlib.suppress(OSError, ValueError), open(git, encoding="utf-8") as pointer:
            git = os.path.join(folder, pointer.read().partition("gitdir:")[2].strip())
    return git


def _bare(folder: str) -> bool:
    """A bare repository (or a .git folder named as one): its HEAD, objects and refs are there."""
    return os.path.isfile(os.path.join(folder, "HEAD")) and all(
        os.path.isdir(os.path.join(folder, part)) for part in ("objects", "refs")
    )


def _read(path: str) -> str | None:
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_SETTINGS_BYTES + 1)
    except OSError:
        return None
    return data.decode("utf-8", "replace")


def git_runs(git: str | None) -> str | None:
    """The first setting of a repository's config (and a worktree's, and the common folder's) whose
    value git runs, or that includes another file; None when there is none."""
    if git is None:
        return None
    folders = [git]
    common = _read(os.path.join(git, "commondir"))
    if common is not None:
        folders.append(os.path.join(git, common.strip()))
    for path in (os.path.join(folders[-1], "config"), os.path.join(git, "config.worktree")):
        text = _read(path)
        if text is None:
            continue
        if len(text) > MAX_SETTINGS_BYTES:
            return os.path.basename(path)
        found = _config_runs(text)
        if found:
            return found
    return None


def _config_runs(text: str) -> str | None:
    section = ""
    for line in text.removeprefix("\ufeff").splitlines():  # git skips a byte-order mark, so must we
        line = line.split("#", 1)[0].split(";", 1)[0] if '"' not in line else line
        header = _SECTION.match(line)
        if header:
            name, sub, line = header.groups()
            section = f"{name}.{sub}" if sub is not None else name
        key = _KEY.match(line)
        if not key or not section:
            continue
        setting, value = f"{section}.{key.group(1)}", (key.group(2) or "").strip().strip('"')
        if setting.lower() == "core.fsmonitor" and value.lower() in _FSMONITOR_BUILT_IN:
            continue
        if _GIT_EXEC_CONFIG.match(setting) or _GIT_INCLUDES.match(setting):
            return setting
    return None


def cargo_runs(cwd: str | None) -> str | None:
    """The first program-naming setting (`rustc-wrapper`, `runner`, ...) of the cargo settings that
    apply in `cwd` (`.cargo/config.toml` or `.cargo/config` there and in every folder above), or a
    rust-toolchain file there that names a toolchain's folder (its own `cargo` then runs)."""
    folder = cwd
    while folder:
        for name in ("config.toml", "config"):
            text = _read(os.path.join(folder, ".cargo", name))
            found = _CARGO_RUNS.search(text) if text is not None else None
            if found:
                return found.group(1)
        for name in ("rust-toolchain.toml", "rust-toolchain"):
            text = _read(os.path.join(folder, name))
            if text is not None and _TOOLCHAIN_PATH.search(text):
                return f"{name} path"
        parent = os.path.dirname(folder)
        folder = None if parent == folder else parent
    return None
