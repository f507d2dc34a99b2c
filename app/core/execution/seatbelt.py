"""macOS: the `sandbox-exec` profile that keeps the protected set read-only, and asking the OS
whether a process is sandboxed. Pure where it can be; nothing here was run on a Mac yet (README).

Why this shape (containment-notes.md section 4): a deny-list on `(allow default)` keeps every tool
working; paths are passed as `-D` parameters, never pasted into the profile, so no path can change
its meaning; `file-write-unlink` of each ancestor is denied because renaming a parent away and
making a new one defeats a rule on the path (the same hole bwrap has).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import PurePosixPath

SANDBOX_EXEC = "/usr/bin/sandbox-exec"
LIBSYSTEM = "/usr/lib/libSystem.B.dylib"
SANDBOX_FILTER_PATH = 1
SANDBOX_CHECK_NO_REPORT = 0x40000000


def ancestors(paths: Sequence[str], home: str) -> list[str]:
    """The folders between `home` (excluded) and each path (excluded), which must not be renamed."""
    found: list[str] = []
    root = PurePosixPath(home)
    for path in paths:
        for parent in PurePosixPath(path).parents:
            if parent == root or root not in parent.parents:
                break
            if str(parent) not in found and str(parent) not in paths:
                found.append(str(parent))
    return sorted(found)


def profile(folders: Sequence[str], files: Sequence[str], home: str) -> tuple[str, list[str]]:
    """The profile text and its `-D` parameters for `sandbox-exec -p TEXT -D ... bash -c CMD`.

    Paths must be resolved (`/tmp` is `/private/tmp` there): the rules match real paths."""
    rules = ["(version 1)", "(allow default)"]
    params: list[str] = []
    denied = []
    for index, folder in enumerate(folders):
        params.append(f"-DP{index}={folder}")
        denied.append(f'(subpath (param "P{index}"))')
    for index, file in enumerate(files):
        params.append(f"-DF{index}={file}")
        denied.append(f'(literal (param "F{index}"))')
    if denied:
        rules.append(f"(deny file-write* {' '.join(denied)})")
    kept = ancestors([*folders, *files], home)
    if kept:
        for index, folder in enumerate(kept):
            params.append(f"-DA{index}={folder}")
        rules.append("(deny file-write-unlink " + " ".join(f'(literal (param "A{i}"))' for i in range(len(kept))) + ")")
    return "\n".join(rules) + "\n", params


def argv(
    folders: Sequence[str], files: Sequence[str], home: str, command: Sequence[str], program: str = SANDBOX_EXEC
) -> list[str]:
    """`command` under `program` (sandbox-exec), which runs it in place (exec): the same pid."""
    text, params = profile(folders, files, home)
    return [program, "-p", text, *params, *command]


def is_sandboxed(pid: int, check: Callable[[int, bytes | None, int], int] | None = None) -> bool:
    """Whether the OS sandboxes `pid` (any sandbox: App Store apps answer yes too). `check` is
    `sandbox_check` from libSystem; tests pass their own."""
    if check is None:  # pragma: no cover - macOS only
        check = _sandbox_check()
    return check(pid, None, 0) == 1


def _sandbox_check() -> Callable[[int, bytes | None, int], int]:  # pragma: no cover - macOS only
    import ctypes

    function = ctypes.CDLL(LIBSYSTEM).sandbox_check
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
    function.restype = ctypes.c_int
    return function
