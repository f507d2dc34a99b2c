"""A project's own settings that name programs its tool runs: a repository's `.git/config`
(`core.fsmonitor`, `diff.external`, a filter's `clean`), cargo's `.cargo/config.toml`
(`build.rustc-wrapper`, a target's `runner`) and yarn's `.yarnrc.yml` (`yarnPath`, `plugins`). Such
a file arrives with the project (a tarball, a copied folder), and then `git status`, `cargo
metadata` or `yarn --version` runs what it names (a review, 2026-12-05: each wrote a file from the
read-only tool where no container runs). Read where the command runs:
in every folder its shell may be in (the one given and each `cd`'s, whether or not the `cd` runs or
succeeds), and nowhere once a `cd` leads where only bash can tell (`cd "$X" && git status`: a
review, 2026-12-05); so once the whole command is read (`judge`), a `git status` in a trap or a
loop before the `cd` it meets again included."""

from __future__ import annotations

import os
import re

from .findings import GitSettings, M, _Report, _snip
from .git_settings import git_runs
from .repository import _CannotTell, _read, git_dir

# Any mention counts, quoted or dotted or in an inline table (`build = { rustc-wrapper = "x" }`,
# `"rustc-wrapper" = ...`: a review, 2026-12-05): reading TOML's every spelling is not needed to say no.
_CARGO_RUNS = re.compile(
    r"(?<![\w-])(rustc-wrapper|rustc-workspace-wrapper|rustc_wrapper|rustc|rustdoc|runner|linker)(?![\w-])"
)
_YARN_RUNS = re.compile(r"(yarn-?path|plugins)", re.I)
# rustup runs the `cargo` of a toolchain folder a project's rust-toolchain file names (`path = ...`)
_TOOLCHAIN_PATH = re.compile(r"(?<![\w-])path\s*=|^[^\S\n]*/", re.M)
# rustup's proxies: each runs its namesake from the toolchain the folder's rust-toolchain file names,
# `--version` too (`rustc --version` with `path = "./tc"` ran ./tc/bin/rustc: a review, 2026-12-05)
RUSTUP_PROXIES = frozenset({"cargo", "rustc", "rustdoc", "rustfmt", "cargo-fmt", "cargo-clippy", "clippy-driver",
                            "rust-gdb", "rust-gdbgui", "rust-lldb", "rust-analyzer", "cargo-miri", "rls"})  # fmt: skip
MAX_PLACES = 64  # folders a command may `cd` to, each judged; past that, where it runs cannot be told


def judge(report: _Report) -> None:
    """The settings of each project whose program the command runs (`report.settings`), read in
    every folder its shell may be in (`report.places`); where one cannot be told, moderate. Each
    folder is read as the program finds it, by its real path (`git -C link/..` leads to the folder
    above the one `link` names), and each repository once (`memo`)."""
    memo: dict[tuple[str | None, str, bool], tuple[str, str] | None] = {}  # (real git folder, work tree, submodules)
    for entry in dict.fromkeys(report.settings):
        program, named, git_folder = entry[0], entry[1], entry[2]
        tree, submodules = (entry.work_tree, entry.submodules) if isinstance(entry, GitSettings) else ("", True)
        relative = not os.path.isabs(named) or (tree != "" and not os.path.isabs(tree))
        if relative and report.lost is not None:
            report.add(M, "{name}: cannot tell which folder it runs in, nor the settings there ({source})",
                       name=program, source=report.lost)  # fmt: skip
            continue
        bases = list(report.places) if relative else [""]
        pairs = dict.fromkeys((_real(base, named), _real(base, tree) if tree else "") for base in bases)
        for folder, work_tree in pairs:
            found: tuple[str, str] | None
            if program == "git":
                git = folder if git_folder else git_dir(folder)
                key = (None if git is None else os.path.realpath(git), work_tree, submodules)
                if key not in memo:
                    try:
                        setting = git_runs(git, work_tree=work_tree, submodules=submodules)
                        memo[key] = None if setting is None else ("runs", setting)
                    except _CannotTell as why:
                        memo[key] = ("cannot tell", str(why))
                found = memo[key]
            elif program == "yarn":
                found = _runs(yarn_runs(folder))
            else:
                found = _runs(cargo_runs(folder) if program == "cargo" else toolchain_runs(folder))
            if found is not None and found[0] == "runs":
                report.add(M, "{name}: the project's settings name a program it runs ({setting})",
                           name=program, setting=found[1])  # fmt: skip
                break
            if found is not None:
                report.add(M, "{name}: cannot tell which repository's settings it reads ({source})",
                           name=program, source=_snip(found[1]))  # fmt: skip
                break


def _real(base: str, named: str) -> str:
    """The real folder `named` leads to from the shell's folder `base`, as the kernel resolves it: a
    link first, then the `..` after it."""
    return os.path.realpath(os.path.join(base, named) if named else base or ".").replace("\\", "/")


def _runs(setting: str | None) -> tuple[str, str] | None:
    return None if setting is None else ("runs", setting)


def cargo_runs(cwd: str | None) -> str | None:
    """The first program-naming setting (`rustc-wrapper`, `runner`, ...) of the cargo settings that
    apply in `cwd` (`.cargo/config.toml` or `.cargo/config` there and in every folder above), or a
    rust-toolchain file there that names a toolchain's folder (its own `cargo` then runs)."""
    for folder in _up_from(cwd):
        for name in ("config.toml", "config"):
            text = _read(os.path.join(folder, ".cargo", name))
            found = _CARGO_RUNS.search(text) if text is not None else None
            if found:
                return found.group(1)
    return toolchain_runs(cwd)


def toolchain_runs(cwd: str | None) -> str | None:
    """A rust-toolchain file in `cwd` or a folder above that names a toolchain's folder: rustup's
    proxies (`cargo`, `rustc`...) run the program of that name there."""
    for folder in _up_from(cwd):
        for name in ("rust-toolchain.toml", "rust-toolchain"):
            text = _read(os.path.join(folder, name))
            if text is not None and _TOOLCHAIN_PATH.search(text):
                return f"{name} path"
    return None


def yarn_runs(cwd: str | None) -> str | None:
    """A yarn settings file in `cwd` or a folder above that names a release of yarn to run instead of
    the one installed (`yarnPath` in `.yarnrc.yml`, `yarn-path` in classic yarn's `.yarnrc`: classic
    yarn reads both since 1.17) or plugins to load: every yarn command runs it, `yarn --version` too
    (a review, 2026-12-05; tried with yarn 1.22.22 and 4.18.1: `--cwd` does not move where they look).
    Any mention counts, a comment's too."""
    for folder in _up_from(cwd):
        for name in (".yarnrc.yml", ".yarnrc"):
            text = _read(os.path.join(folder, name))
            found = _YARN_RUNS.search(text) if text is not None else None
            if found:
                return f"{name} {found[1]}"
    return None


def _up_from(cwd: str | None) -> list[str]:
    """The real folder `cwd` and each above it, as cargo and rustup look."""
    folders, folder = [], os.path.realpath(cwd) if cwd else None
    while folder:
        folders.append(folder)
        parent = os.path.dirname(folder)
        folder = None if parent == folder else parent
    return folders
