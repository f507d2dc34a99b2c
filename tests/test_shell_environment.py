"""Command environment: the login-shell probe with fake (and real) login shells, the merge, defaults."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.core.execution import shell_environment
from app.core.execution.shell_environment import (
    LOGIN_SHELL_ENV,
    NON_INTERACTIVE_DEFAULTS,
    RESOLVING_ENV,
    base_environment,
    command_environment,
    parse_marked_environment,
    read_login_environment,
    should_use_login_shell,
    strip_own_variables,
)

MARK = "__cowork_env_test__"
FAKE_LOGIN_PATH = "/fake/login/bin:/usr/bin:/bin"


def fake_shell(tmp_path: Path, body: str) -> str:
    """Write an executable that stands in for a login shell; `$cmd` is its -c string."""
    script = tmp_path / "fake-shell"
    script.write_text(
        "#!/bin/bash\n"
        'for last; do :; done; cmd="$last"\n'  # the -c string is the last argument
        f"{body}\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


# -- parse_marked_environment ---------------------------------------------------------------


def test_parse_reads_variables_between_the_markers() -> None:
    out = f"{MARK}\0PATH=/a:/b\0EMPTY=\0EQ=x=y\0{MARK}".encode()
    assert parse_marked_environment(out, MARK) == {"PATH": "/a:/b", "EMPTY": "", "EQ": "x=y"}


def test_parse_ignores_banners_printed_before_and_after() -> None:
    out = f"Welcome!\nLast login: today\n{MARK}\0A=1\0{MARK}\nlogout banner\n".encode()
    assert parse_marked_environment(out, MARK) == {"A": "1"}


def test_parse_keeps_multiline_values_whole() -> None:
    out = f"{MARK}\0FUNC=() {{ echo\nhi\n}}\0B=2\0{MARK}".encode()
    assert parse_marked_environment(out, MARK) == {"FUNC": "() { echo\nhi\n}", "B": "2"}


def test_parse_rejects_output_without_both_markers() -> None:
    assert parse_marked_environment(b"garbage", MARK) is None
    assert parse_marked_environment(f"{MARK}\0A=1\0".encode(), MARK) is None
    assert parse_marked_environment(b"", MARK) is None


def test_parse_rejects_a_malformed_entry_or_an_empty_payload() -> None:
    assert parse_marked_environment(f"{MARK}\0no-equals\0{MARK}".encode(), MARK) is None
    assert parse_marked_environment(f"{MARK}\0=1\0{MARK}".encode(), MARK) is None
    assert parse_marked_environment(f"{MARK}\0{MARK}".encode(), MARK) is None


def test_parse_keeps_non_utf8_bytes_round_trippable() -> None:
    out = MARK.encode() + b"\0BYTES=caf\xe9\0" + MARK.encode()
    env = parse_marked_environment(out, MARK)
    assert env is not None and os.fsencode(env["BYTES"]) == b"caf\xe9"


# -- read_login_environment with fake and real login shells ---------------------------------


def test_fake_login_shell_with_banner_gives_its_path(tmp_path: Path) -> None:
    shell = fake_shell(
        tmp_path,
        'echo "Welcome to the fake shell"\n'
        f'[ "$1 $2 $3" = "-l -i -c" ] || exit 9\n'
        f'export PATH="{FAKE_LOGIN_PATH}"\n'
        'export FROM_RC="rc value"\n'
        '/bin/bash -c "$cmd"; rc=$?\n'
        'echo "bye"\n'
        "exit $rc",
    )
    env = read_login_environment(shell, timeout_s=10, base_env={"PATH": "/usr/bin:/bin"})
    assert env is not None
    assert env["PATH"] == FAKE_LOGIN_PATH
    assert env["FROM_RC"] == "rc value"
    assert RESOLVING_ENV not in env


def test_login_shell_sees_the_resolving_flag_and_a_closed_stdin(tmp_path: Path) -> None:
    shell = fake_shell(
        tmp_path,
        f'[ "${RESOLVING_ENV}" = 1 ] || exit 7\n'
        "read -r line && exit 8\n"  # stdin must be at end of file, not a terminal to wait on
        "export SAW_FLAG=yes\n"
        'exec /bin/bash -c "$cmd"',
    )
    env = read_login_environment(shell, timeout_s=10, base_env={"PATH": "/usr/bin:/bin"})
    assert env is not None and env["SAW_FLAG"] == "yes"


def test_a_login_shell_slower_than_the_limit_returns_none_within_about_the_limit(
    tmp_path: Path,
) -> None:
    # The background sleep holds stdout open: only killing the whole group returns promptly.
    shell = fake_shell(tmp_path, "sleep 30 &\nsleep 30")
    started = time.monotonic()
    assert read_login_environment(shell, timeout_s=0.5) is None
    assert time.monotonic() - started < 10, "not after the 30 s sleeps"


def test_a_login_shell_that_exits_non_zero_gives_none(tmp_path: Path) -> None:
    shell = fake_shell(tmp_path, '/bin/bash -c "$cmd"\nexit 1')
    assert read_login_environment(shell, timeout_s=10) is None


def test_a_login_shell_that_prints_garbage_gives_none(tmp_path: Path) -> None:
    shell = fake_shell(tmp_path, 'echo "PATH=/evil"; printf "junk\\0more"')
    assert read_login_environment(shell, timeout_s=10) is None


def test_a_login_shell_that_does_not_exist_gives_none(tmp_path: Path) -> None:
    assert read_login_environment(str(tmp_path / "no-such-shell"), timeout_s=10) is None


def test_real_bash_as_login_shell_reads_the_users_profile(tmp_path: Path) -> None:
    (tmp_path / ".bash_profile").write_text(
        'echo "profile banner"\nexport PATH="/from/profile:$PATH"\nexport PROFILE_RAN=1\n'
    )
    base = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "TERM": "dumb"}
    env = read_login_environment("/bin/bash", timeout_s=10, base_env=base)
    assert env is not None
    assert env["PATH"].startswith("/from/profile:")
    assert env["PROFILE_RAN"] == "1"


# -- should_use_login_shell -----------------------------------------------------------------


def test_login_shell_is_used_on_macos_by_default_and_can_be_turned_off() -> None:
    assert should_use_login_shell("darwin", {}) is True
    assert should_use_login_shell("darwin", {LOGIN_SHELL_ENV: "0"}) is False


def test_login_shell_is_opt_in_on_linux_and_never_on_windows() -> None:
    assert should_use_login_shell("linux", {}) is False
    assert should_use_login_shell("linux", {LOGIN_SHELL_ENV: "1"}) is True
    assert should_use_login_shell("win32", {LOGIN_SHELL_ENV: "1"}) is False


# -- base_environment -----------------------------------------------------------------------


def test_login_environment_wins_over_ours_but_keeps_what_the_client_configured() -> None:
    ours = {"PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "GITHUB_TOKEN": "from-config"}
    login = {"PATH": "/opt/homebrew/bin:/usr/bin:/bin", "_": "/usr/bin/python3", "SHLVL": "1"}
    env = base_environment("darwin", ours, login, is_dir=lambda _: True)
    assert env["PATH"] == "/opt/homebrew/bin:/usr/bin:/bin"
    assert env["GITHUB_TOKEN"] == "from-config"
    assert "_" not in env and "SHLVL" not in env


def test_fallback_appends_existing_common_dirs_to_a_gui_path() -> None:
    ours = {"PATH": "/usr/bin:/bin:/usr/sbin:/sbin"}
    existing = {"/opt/homebrew/bin", "/usr/local/bin", "/usr/bin", "/bin"}
    env = base_environment("darwin", ours, None, is_dir=existing.__contains__)
    assert env["PATH"] == "/usr/bin:/bin:/usr/sbin:/sbin:/opt/homebrew/bin:/usr/local/bin"


def test_fallback_gives_a_usable_path_when_none_is_set() -> None:
    env = base_environment("linux", {}, None, is_dir=lambda d: d in {"/usr/bin", "/bin"})
    assert env["PATH"] == "/usr/bin:/bin"


def test_fallback_leaves_a_windows_path_alone() -> None:
    ours = {"Path": "C:\\Windows;C:\\Git\\cmd"}
    assert base_environment("win32", ours, None, is_dir=lambda _: True) == ours


def test_pyinstaller_bookkeeping_and_bundle_paths_do_not_leak_into_commands() -> None:
    bundle = "/Applications/Cowork Terminal.app/Contents/Frameworks"
    ours = {
        "PATH": f"{bundle}:/usr/bin:/bin",
        "LD_LIBRARY_PATH": f"{bundle}:/opt/lib",
        "LD_LIBRARY_PATH_ORIG": "/opt/lib",
        "TCL_LIBRARY": f"{bundle}/tcl",
        "_PYI_APPLICATION_HOME_DIR": bundle,
        "_MEIPASS2": bundle,
        "COWORK_TERMINAL_HOME": "/Users/ada/cowork",
        "HOME": "/Users/ada",
    }
    env = strip_own_variables(ours, bundle)
    assert env == {
        "PATH": "/usr/bin:/bin",
        "LD_LIBRARY_PATH": "/opt/lib",
        "COWORK_TERMINAL_HOME": "/Users/ada/cowork",
        "HOME": "/Users/ada",
    }


def test_a_library_path_the_bundle_created_is_removed_entirely() -> None:
    env = strip_own_variables({"LD_LIBRARY_PATH": "/tmp/_MEI123"}, "/tmp/_MEI123")
    assert "LD_LIBRARY_PATH" not in env


def test_outside_a_bundle_only_our_probe_flag_is_removed() -> None:
    ours = {"LD_LIBRARY_PATH": "/opt/lib", RESOLVING_ENV: "1", "PYTHONPATH": "/u/src"}
    assert strip_own_variables(ours) == {"LD_LIBRARY_PATH": "/opt/lib", "PYTHONPATH": "/u/src"}


# -- command_environment --------------------------------------------------------------------


def test_non_interactive_defaults_are_added_and_beat_the_users_terminal_settings() -> None:
    env = command_environment({"HOME": "/h", "GIT_EDITOR": "vim", "PAGER": "less"}, None)
    assert env["HOME"] == "/h"
    for key, value in NON_INTERACTIVE_DEFAULTS.items():
        assert env[key] == value
    assert env["GIT_TERMINAL_PROMPT"] == "0" and env["PAGER"] == "cat"


def test_the_callers_env_overrides_a_default_and_the_base() -> None:
    env = command_environment({"HOME": "/h", "FOO": "base"}, {"PAGER": "less", "FOO": "overlay"}, platform="linux")
    assert env["PAGER"] == "less"
    assert env["FOO"] == "overlay"


def test_on_windows_an_overlay_path_replaces_the_bases_path_whatever_its_case() -> None:
    env = command_environment({"Path": "C:\\old"}, {"PATH": "C:\\new"}, platform="win32")
    assert [k for k in env if k.upper() == "PATH"] == ["PATH"]
    assert env["PATH"] == "C:\\new"


def test_on_posix_names_differing_in_case_are_different_variables() -> None:
    env = command_environment({"path": "x"}, {"PATH": "y"}, platform="linux")
    assert env["path"] == "x" and env["PATH"] == "y"


def test_a_command_really_sees_the_built_environment(tmp_path: Path) -> None:
    import subprocess

    base = base_environment("linux", {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}, None)
    env = command_environment(base, {"GREETING": "héllo"})
    out = subprocess.run(
        ["/bin/bash", "-c", 'printf "%s|%s|%s" "$GREETING" "$GIT_TERMINAL_PROMPT" "$PAGER"'],
        env=env,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        check=True,
    ).stdout.decode()
    assert out == "héllo|0|cat"


@pytest.mark.parametrize("shell", ["/bin/sh", "/bin/bash"])
def test_the_probe_command_survives_posix_shells_quoting(shell: str, tmp_path: Path) -> None:
    if not os.path.exists(shell):
        pytest.skip(f"{shell} not installed")
    env = read_login_environment(shell, timeout_s=10, base_env={"HOME": str(tmp_path), "A": "1"})
    assert env is not None and env["A"] == "1"


def test_a_frozen_app_probes_with_env_dash_zero_instead_of_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A PyInstaller bundle's sys.executable is the app itself and has no `-c`.
    monkeypatch.setattr("sys.frozen", True, raising=False)
    shell = fake_shell(tmp_path, f'export PATH="{FAKE_LOGIN_PATH}"\necho hi\nexec /bin/sh -c "$cmd"')
    env = read_login_environment(shell, timeout_s=10, base_env={"A": "1"})
    assert env is not None and env["PATH"] == FAKE_LOGIN_PATH and env["A"] == "1"


def test_resolving_on_this_machine_uses_the_login_shell_when_opted_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.core.execution.shell_environment import resolve_base_environment

    shell = fake_shell(tmp_path, f'export PATH="{FAKE_LOGIN_PATH}"\nexec /bin/bash -c "$cmd"')
    monkeypatch.setenv("SHELL", shell)
    monkeypatch.setenv(LOGIN_SHELL_ENV, "1")
    assert resolve_base_environment()["PATH"] == FAKE_LOGIN_PATH
    monkeypatch.setenv(LOGIN_SHELL_ENV, "0")
    assert resolve_base_environment()["PATH"] != FAKE_LOGIN_PATH


def test_a_path_list_the_bundle_prepended_to_keeps_the_users_own_entries() -> None:
    bundle = "/opt/cowork-terminal/_internal"
    env = strip_own_variables(
        {
            "XDG_DATA_DIRS": f"{bundle}/share:/usr/local/share:/usr/share",
            "GI_TYPELIB_PATH": f"{bundle}/gi_typelibs",
            "PATH": f"{bundle}:/usr/bin",
            "HOME": "/home/ada",
        },
        bundle_dir=bundle,
    )
    assert env["XDG_DATA_DIRS"] == "/usr/local/share:/usr/share"
    assert "GI_TYPELIB_PATH" not in env
    assert env["PATH"] == "/usr/bin"
    assert env["HOME"] == "/home/ada"


# -- the probe in the read-only container ------------------------------------------------------

PLANTING_SHELL = (
    'echo planted > "$HOME/planted.txt"\n'  # as code a command put where the rc files source it
    "export FROM_RC=yes\n"
    'exec /bin/bash -c "$cmd"'
)


def test_the_probe_runs_in_the_read_only_container_where_what_the_rc_files_run_writes_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    shell = fake_shell(home, PLANTING_SHELL)
    prefix, fds = shell_environment.contained_probe(shell, str(home), {"HOME": str(home)})
    assert prefix and fds, "bwrap is here (scripts/test.sh installs it)"
    env = read_login_environment(
        shell, timeout_s=10, base_env={"PATH": "/usr/bin:/bin", "HOME": str(home)}, prefix=prefix, pass_fds=fds
    )
    assert env is not None and env["FROM_RC"] == "yes", "the environment is still read"
    assert not (home / "planted.txt").exists()
    assert read_login_environment(shell, timeout_s=10, base_env={"PATH": "/usr/bin:/bin", "HOME": str(home)})
    assert (home / "planted.txt").exists(), "outside the container it would have written"


def test_the_app_probes_the_login_shell_in_the_read_only_container(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    shell = fake_shell(home, PLANTING_SHELL)
    environ = {
        **os.environ, "HOME": str(home), "SHELL": shell, LOGIN_SHELL_ENV: "1", "PATH": "/usr/bin:/bin",
    }  # fmt: skip
    code = (
        "import json; from app.core.execution import shell_environment as s; "
        "print(json.dumps(s.resolve_base_environment()))"
    )
    ran = subprocess.run(
        [sys.executable, "-I", "-c", code], env=environ, capture_output=True, text=True, timeout=60, cwd=Path.cwd()
    )
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["FROM_RC"] == "yes" and not (home / "planted.txt").exists()


def test_an_agent_the_start_up_files_start_in_the_probes_container_is_not_handed_to_commands() -> None:
    """`eval "$(ssh-agent -s)"` in an rc file: in the container the agent ends with the probe, and its
    socket with the private /tmp; the app's own agent (or none) serves commands instead."""
    dead = {"SSH_AUTH_SOCK": "/tmp/ssh-x/agent.3", "SSH_AGENT_PID": "3", "PATH": "/login/bin"}
    ours = {"SSH_AUTH_SOCK": "/run/user/1000/keyring/ssh", "PATH": "/usr/bin"}
    assert shell_environment.without_dead_agents(dead, ours, lambda _p: False) == {
        "SSH_AUTH_SOCK": "/run/user/1000/keyring/ssh",
        "PATH": "/login/bin",
    }
    assert shell_environment.without_dead_agents(dead, {}, lambda _p: False) == {"PATH": "/login/bin"}
    live = {"SSH_AUTH_SOCK": "/run/user/1000/gcr/ssh", "PATH": "/login/bin"}  # an rc naming a running agent
    assert shell_environment.without_dead_agents(live, ours, lambda p: p == "/run/user/1000/gcr/ssh") == live


def test_the_app_drops_an_agent_its_contained_probe_started(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    shell = fake_shell(
        home,
        "mkdir -p /tmp/ssh-probe && touch /tmp/ssh-probe/agent.1\n"  # the container's own /tmp
        "export SSH_AUTH_SOCK=/tmp/ssh-probe/agent.1 SSH_AGENT_PID=1 FROM_RC=yes\n"
        'exec /bin/bash -c "$cmd"',
    )
    environ = {**os.environ, "HOME": str(home), "SHELL": shell, LOGIN_SHELL_ENV: "1", "PATH": "/usr/bin:/bin"}
    environ.pop("SSH_AUTH_SOCK", None)
    environ.pop("SSH_AGENT_PID", None)
    code = (
        "import json; from app.core.execution import shell_environment as s; "
        "print(json.dumps(s.resolve_base_environment()))"
    )
    ran = subprocess.run([sys.executable, "-I", "-c", code], env=environ, capture_output=True, text=True, timeout=60)
    env = json.loads(ran.stdout)
    assert env["FROM_RC"] == "yes" and "SSH_AUTH_SOCK" not in env and "SSH_AGENT_PID" not in env
    assert not Path("/tmp/ssh-probe/agent.1").exists()
