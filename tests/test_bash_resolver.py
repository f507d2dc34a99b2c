"""Bash resolution: every Windows case through the pure function, POSIX cases, and this machine."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from app.core.errors import CoworkError
from app.core.execution.bash_resolver import (
    BASH_PATH_ENV,
    GIT_FOR_WINDOWS_URL,
    BashNotFoundError,
    bash_candidates,
    find_bash,
    resolve_bash,
)

WIN_ENV = {
    "ProgramFiles": "C:\\Program Files",
    "ProgramFiles(x86)": "C:\\Program Files (x86)",
    "LOCALAPPDATA": "C:\\Users\\ada\\AppData\\Local",
    "PATH": "C:\\Windows\\System32;C:\\Program Files\\Git\\cmd",
}
SYSTEM32_BASH = "C:\\Windows\\System32\\bash.exe"


def files(*existing: str) -> Callable[[str], bool]:
    """A fake file system holding exactly `existing` (Windows paths compare case-insensitively)."""
    known = {p.lower() for p in existing}
    return lambda path: path.lower() in known


def which_system32(name: str) -> str | None:
    return SYSTEM32_BASH if name == "bash" else None


def test_windows_candidates_are_the_seeds_list_in_order() -> None:
    assert bash_candidates("win32", WIN_ENV) == [
        "C:\\Program Files\\Git\\bin\\bash.exe",
        "C:\\Program Files\\Git\\usr\\bin\\bash.exe",
        "C:\\Program Files (x86)\\Git\\bin\\bash.exe",
        "C:\\Program Files (x86)\\Git\\usr\\bin\\bash.exe",
        "C:\\Users\\ada\\AppData\\Local\\Programs\\Git\\bin\\bash.exe",
        "C:\\Users\\ada\\AppData\\Local\\Programs\\Git\\usr\\bin\\bash.exe",
    ]


def test_windows_first_existing_candidate_wins() -> None:
    fs = files(
        "C:\\Program Files\\Git\\usr\\bin\\bash.exe",
        "C:\\Users\\ada\\AppData\\Local\\Programs\\Git\\bin\\bash.exe",
    )
    assert resolve_bash("win32", WIN_ENV, fs) == "C:\\Program Files\\Git\\usr\\bin\\bash.exe"


def test_windows_falls_back_to_the_x86_install() -> None:
    fs = files("C:\\Program Files (x86)\\Git\\bin\\bash.exe")
    assert resolve_bash("win32", WIN_ENV, fs) == "C:\\Program Files (x86)\\Git\\bin\\bash.exe"


def test_windows_finds_a_per_user_install_under_localappdata() -> None:
    path = "C:\\Users\\ada\\AppData\\Local\\Programs\\Git\\usr\\bin\\bash.exe"
    assert resolve_bash("win32", WIN_ENV, files(path)) == path


def test_windows_environment_names_are_case_insensitive() -> None:
    env = {"PROGRAMFILES": "D:\\Apps", "LOCALAPPDATA": "C:\\L"}
    assert resolve_bash("win32", env, files("D:\\Apps\\Git\\bin\\bash.exe")) == ("D:\\Apps\\Git\\bin\\bash.exe")


def test_windows_program_files_defaults_when_unset_and_localappdata_is_skipped() -> None:
    assert bash_candidates("win32", {}) == [
        "C:\\Program Files\\Git\\bin\\bash.exe",
        "C:\\Program Files\\Git\\usr\\bin\\bash.exe",
        "C:\\Program Files (x86)\\Git\\bin\\bash.exe",
        "C:\\Program Files (x86)\\Git\\usr\\bin\\bash.exe",
    ]


def test_windows_32_bit_with_one_program_files_folder_checks_it_once() -> None:
    env = {"ProgramFiles": "C:\\Program Files", "ProgramFiles(x86)": "C:\\Program Files"}
    assert len(bash_candidates("win32", env)) == 2


def test_windows_never_chooses_system32_bash_from_path() -> None:
    fs = files(SYSTEM32_BASH)
    with pytest.raises(BashNotFoundError):
        resolve_bash("win32", WIN_ENV, fs, which_system32)


def test_windows_with_no_git_bash_names_every_path_checked_and_the_download_page() -> None:
    with pytest.raises(BashNotFoundError) as caught:
        resolve_bash("win32", WIN_ENV, files(), which_system32)
    message = str(caught.value)
    for path in bash_candidates("win32", WIN_ENV):
        assert path in message
    assert GIT_FOR_WINDOWS_URL in message
    assert BASH_PATH_ENV in message
    assert caught.value.checked == bash_candidates("win32", WIN_ENV)
    assert isinstance(caught.value, CoworkError)


def test_windows_override_comes_before_the_fixed_list() -> None:
    env = {**WIN_ENV, BASH_PATH_ENV: "D:\\tools\\msys64\\usr\\bin\\bash.exe"}
    fs = files("C:\\Program Files\\Git\\bin\\bash.exe", "D:\\tools\\msys64\\usr\\bin\\bash.exe")
    assert resolve_bash("win32", env, fs) == "D:\\tools\\msys64\\usr\\bin\\bash.exe"


def test_windows_override_pasted_with_quotes_is_accepted() -> None:
    env = {**WIN_ENV, BASH_PATH_ENV: ' "D:\\Git\\bin\\bash.exe" '}
    assert resolve_bash("win32", env, files("D:\\Git\\bin\\bash.exe")) == "D:\\Git\\bin\\bash.exe"


def test_an_override_that_does_not_exist_is_an_error_not_a_silent_fallback() -> None:
    env = {**WIN_ENV, BASH_PATH_ENV: "D:\\nowhere\\bash.exe"}
    fs = files("C:\\Program Files\\Git\\bin\\bash.exe")
    with pytest.raises(BashNotFoundError) as caught:
        resolve_bash("win32", env, fs)
    assert "D:\\nowhere\\bash.exe" in str(caught.value)
    assert BASH_PATH_ENV in str(caught.value)


def test_an_empty_override_counts_as_unset() -> None:
    env = {**WIN_ENV, BASH_PATH_ENV: "  "}
    fs = files("C:\\Program Files\\Git\\bin\\bash.exe")
    assert resolve_bash("win32", env, fs) == "C:\\Program Files\\Git\\bin\\bash.exe"


def test_posix_prefers_bin_bash_over_everything_but_the_override() -> None:
    fs = files("/bin/bash", "/usr/bin/bash", "/opt/homebrew/bin/bash")
    assert resolve_bash("darwin", {}, fs, lambda _: "/opt/homebrew/bin/bash") == "/bin/bash"
    assert resolve_bash("linux", {}, fs) == "/bin/bash"


def test_posix_walks_the_fixed_paths_in_order() -> None:
    assert resolve_bash("linux", {}, files("/usr/local/bin/bash", "/opt/homebrew/bin/bash")) == ("/usr/local/bin/bash")
    assert resolve_bash("darwin", {}, files("/opt/homebrew/bin/bash")) == "/opt/homebrew/bin/bash"


def test_posix_override_comes_first() -> None:
    env = {BASH_PATH_ENV: "/opt/homebrew/bin/bash"}
    fs = files("/bin/bash", "/opt/homebrew/bin/bash")
    assert resolve_bash("darwin", env, fs) == "/opt/homebrew/bin/bash"


def test_posix_missing_override_is_an_error() -> None:
    with pytest.raises(BashNotFoundError, match="/no/such/bash"):
        resolve_bash("linux", {BASH_PATH_ENV: "/no/such/bash"}, files("/bin/bash"))


def test_posix_falls_back_to_path_when_no_fixed_path_exists() -> None:
    # NixOS, Guix: no /bin/bash.
    which = {"bash": "/run/current-system/sw/bin/bash"}.get
    assert resolve_bash("linux", {}, files(), which) == "/run/current-system/sw/bin/bash"


def test_posix_with_no_bash_anywhere_lists_paths_and_path() -> None:
    with pytest.raises(BashNotFoundError) as caught:
        resolve_bash("linux", {}, files(), lambda _: None)
    for path in ("/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash", "/opt/homebrew/bin/bash"):
        assert path in str(caught.value)
    assert "PATH" in str(caught.value)
    assert GIT_FOR_WINDOWS_URL not in str(caught.value)


def test_find_bash_on_this_machine_returns_an_executable_bash(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(BASH_PATH_ENV, raising=False)
    path = find_bash()
    assert os.path.isabs(path) and os.access(path, os.X_OK)
    assert os.path.basename(path) == "bash"


def test_find_bash_honours_the_override_on_this_machine(
    monkeypatch: pytest.MonkeyPatch, tmp_path: os.PathLike[str]
) -> None:
    missing = os.path.join(tmp_path, "bash")
    monkeypatch.setenv(BASH_PATH_ENV, missing)
    with pytest.raises(BashNotFoundError):
        find_bash()


def test_a_person_reads_a_missing_bash_in_their_language_while_the_message_stays_english() -> None:
    """The message is what a server answers the model with; `for_person` is what a tray notice,
    the CLI and the Welcome window show."""
    from app.core import i18n

    try:
        with pytest.raises(BashNotFoundError) as windows:
            resolve_bash("win32", WIN_ENV, files(), which_system32)
        with pytest.raises(BashNotFoundError) as linux:
            resolve_bash("linux", {}, files(), lambda _: None)
        with pytest.raises(BashNotFoundError) as override:
            resolve_bash("linux", {BASH_PATH_ENV: "/nowhere/bash"}, files(), lambda _: None)
        i18n.use_language("de")
        said = windows.value.for_person()
        assert said.startswith("Git Bash wurde nicht gefunden. Geprüft:\n")
        assert all(path in said for path in bash_candidates("win32", WIN_ENV)) and GIT_FOR_WINDOWS_URL in said
        i18n.use_language("ru")
        assert linux.value.for_person().startswith("bash не найден. Проверено:\n  /bin/bash\n")
        assert "и все папки из PATH" in linux.value.for_person()
        assert override.value.for_person().startswith(f"{BASH_PATH_ENV} указывает на «/nowhere/bash»")
        assert str(windows.value).startswith("Git Bash was not found. Checked:"), "the model's words stay English"
        assert str(override.value).startswith(f'{BASH_PATH_ENV} is set to "/nowhere/bash"')
    finally:
        i18n.use_language("en")
