"""Start at login on all three platforms, checked on Linux: the files for real, Windows through a fake reg."""

from __future__ import annotations

import json
import os
import plistlib
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.errors import CoworkError
from app.core.install import autostart

WINDOWS_EXE = r"C:\Program Files\Cowork Terminal\cowork-terminal.exe"
# A path with every character the Desktop Entry spec treats specially, and a field-code lookalike.
AWKWARD_DIR = '/opt/My Apps/it\'s "quoted" $HOME `x` back\\slash 100%'


def unquote_exec(value: str) -> list[str]:
    """An independent reading of an Exec value, following the spec step by step."""
    # 1. The string-value escapes (\\s \\n \\t \\r \\\\) come first.
    unescaped = re.sub(r"\\([sntr\\])", lambda m: {"s": " ", "n": "\n", "t": "\t", "r": "\r", "\\": "\\"}[m[1]], value)
    # 2. Split into arguments, undoing double quotes and the backslash escapes inside them.
    args, current, quoted, i, started = [], "", False, 0, False
    while i < len(unescaped):
        ch = unescaped[i]
        if quoted:
            if ch == "\\" and unescaped[i + 1] in '"`$\\':
                current, i = current + unescaped[i + 1], i + 2
                continue
            if ch == '"':
                quoted = False
            else:
                current += ch
        elif ch == '"':
            quoted, started = True, True
        elif ch == " ":
            if started:
                args.append(current)
            current, started = "", False
        else:
            current, started = current + ch, True
        i += 1
    if started:
        args.append(current)
    # 3. Field codes: %% is a literal percent sign.
    return [arg.replace("%%", "%") for arg in args]


# --- the launch command ------------------------------------------------------------------------------


def test_a_frozen_app_starts_its_own_executable_with_the_tray_command() -> None:
    assert autostart.launch_command(True, WINDOWS_EXE) == [WINDOWS_EXE, "tray"]


def test_a_source_install_starts_the_package_with_the_same_interpreter() -> None:
    assert autostart.launch_command(False, "/venv/bin/python") == ["/venv/bin/python", "-I", "-m", "app", "tray"]


def test_a_windows_source_install_starts_without_a_console_window() -> None:
    command = autostart.launch_command(False, r"C:\Users\Ann Lee\venv\Scripts\python.exe")
    assert command == [r"C:\Users\Ann Lee\venv\Scripts\pythonw.exe", "-I", "-m", "app", "tray"]


def test_the_current_launch_command_is_this_interpreter_when_not_frozen() -> None:
    assert autostart.current_launch_command() == [sys.executable, "-I", "-m", "app", "tray"]


# --- Linux ---------------------------------------------------------------------------------------------


def test_the_autostart_entry_goes_to_xdg_config_home(tmp_path: Path) -> None:
    location = autostart.autostart_location("linux", {"XDG_CONFIG_HOME": str(tmp_path / "cfg")}, tmp_path)
    assert location == tmp_path / "cfg" / "autostart" / "cowork-terminal.desktop"


def test_the_autostart_entry_falls_back_to_dot_config_without_xdg_config_home(tmp_path: Path) -> None:
    assert autostart.autostart_location("linux", {}, tmp_path) == tmp_path / ".config/autostart/cowork-terminal.desktop"


def test_a_relative_xdg_config_home_is_ignored_as_the_spec_requires(tmp_path: Path) -> None:
    location = autostart.autostart_location("linux", {"XDG_CONFIG_HOME": "relative/cfg"}, tmp_path)
    assert location == tmp_path / ".config/autostart/cowork-terminal.desktop"


def test_the_written_desktop_entry_passes_desktop_file_validate(tmp_path: Path) -> None:
    validator = shutil.which("desktop-file-validate")
    assert validator, "desktop-file-validate is missing: apt-get install -y desktop-file-utils"
    environ = {"XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    autostart.enable("linux", environ, tmp_path, command=[f"{AWKWARD_DIR}/python3", "-m", "app", "tray"])
    entry = tmp_path / "cfg/autostart/cowork-terminal.desktop"
    result = subprocess.run([validator, str(entry)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout + result.stderr


def test_the_desktop_entry_has_the_keys_a_session_manager_needs() -> None:
    lines = autostart.desktop_entry(["/usr/bin/cowork-terminal", "tray"]).splitlines()
    assert lines[0] == "[Desktop Entry]"
    assert {
        "Type=Application",
        "Name=Cowork Terminal",
        "Exec=/usr/bin/cowork-terminal tray",
        "Icon=cowork-terminal",
        "Terminal=false",
        "X-GNOME-Autostart-enabled=true",
    } <= set(lines)
    assert any(line.startswith("Comment=") for line in lines)


@pytest.mark.parametrize(
    "command",
    [
        ["/usr/bin/cowork-terminal", "tray"],
        ["/home/a b/.venv/bin/python", "-m", "app", "tray"],
        [f"{AWKWARD_DIR}/cowork-terminal", "tray", ""],
    ],
)
def test_exec_quoting_reads_back_as_the_same_argv(command: list[str]) -> None:
    assert unquote_exec(autostart.exec_value(command)) == command


def test_a_path_with_spaces_is_double_quoted_in_exec() -> None:
    assert autostart.exec_value(["/home/a b/python", "tray"]) == '"/home/a b/python" tray'


def test_a_literal_backslash_in_a_quoted_argument_takes_four_backslashes() -> None:
    assert autostart.exec_value(["/x y\\z"]) == '"/x y\\\\\\\\z"'


def test_a_path_with_a_line_break_is_refused_rather_than_written_broken() -> None:
    with pytest.raises(CoworkError, match="line break"):
        autostart.exec_value(["/tmp/a\nb"])


def test_linux_enable_disable_and_is_enabled_round_trip(tmp_path: Path) -> None:
    environ = {"XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    assert not autostart.is_enabled("linux", environ, tmp_path)
    autostart.enable("linux", environ, tmp_path, command=["/usr/bin/cowork-terminal", "tray"])
    assert autostart.is_enabled("linux", environ, tmp_path)
    entry = tmp_path / "cfg/autostart/cowork-terminal.desktop"
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600
    assert [p.name for p in entry.parent.iterdir()] == [entry.name]  # no temporary file left behind
    autostart.enable("linux", environ, tmp_path, command=["/moved/cowork-terminal", "tray"])
    assert "Exec=/moved/cowork-terminal tray" in entry.read_text()
    autostart.disable("linux", environ, tmp_path)
    assert not entry.exists() and not autostart.is_enabled("linux", environ, tmp_path)
    autostart.disable("linux", environ, tmp_path)  # twice is fine


@pytest.mark.parametrize("switch_off", ["X-GNOME-Autostart-enabled=false", "Hidden=true"])
def test_an_entry_the_user_switched_off_in_their_desktop_settings_reads_as_disabled(
    tmp_path: Path, switch_off: str
) -> None:
    environ = {"XDG_CONFIG_HOME": str(tmp_path)}
    autostart.enable("linux", environ, tmp_path, command=["/usr/bin/cowork-terminal", "tray"])
    entry = tmp_path / "autostart/cowork-terminal.desktop"
    text = entry.read_text().replace("X-GNOME-Autostart-enabled=true\n", "")
    entry.write_text(text + switch_off + "\n")
    assert not autostart.is_enabled("linux", environ, tmp_path)


def test_enable_reports_a_folder_it_cannot_write_as_a_cowork_error(tmp_path: Path) -> None:
    (tmp_path / "autostart").write_text("a file where the folder should be")
    with pytest.raises(CoworkError, match="could not write"):
        autostart.enable("linux", {"XDG_CONFIG_HOME": str(tmp_path)}, tmp_path, command=["/x", "tray"])


# --- macOS ---------------------------------------------------------------------------------------------


def test_the_launch_agent_plist_parses_back_with_the_keys_launchd_needs() -> None:
    command = ["/Applications/Cowork Terminal.app/Contents/MacOS/cowork-terminal", "tray"]
    plist = plistlib.loads(autostart.launch_agent_plist(command))
    assert plist == {
        "Label": "org.coworkterminal.tray",
        "ProgramArguments": command,
        "RunAtLoad": True,
        "ProcessType": "Interactive",
        "LimitLoadToSessionType": "Aqua",
    }


def test_darwin_enable_disable_and_is_enabled_round_trip(tmp_path: Path) -> None:
    command = ["/Applications/Cowork Terminal.app/Contents/MacOS/cowork-terminal", "tray"]
    location = autostart.autostart_location("darwin", {}, tmp_path)
    assert location == tmp_path / "Library/LaunchAgents/org.coworkterminal.tray.plist"
    assert not autostart.is_enabled("darwin", {}, tmp_path)
    autostart.enable("darwin", {}, tmp_path, command=command)
    assert autostart.is_enabled("darwin", {}, tmp_path)
    assert plistlib.loads(location.read_bytes())["ProgramArguments"] == command
    assert stat.S_IMODE(location.stat().st_mode) == 0o600  # launchd refuses group/world-writable plists
    autostart.disable("darwin", {}, tmp_path)
    assert not location.exists() and not autostart.is_enabled("darwin", {}, tmp_path)


@pytest.mark.parametrize("content", [b"not a plist", b"<?xml version='1.0'?><plist><dict><key>Lab"])
def test_a_damaged_launch_agent_reads_as_disabled(tmp_path: Path, content: bytes) -> None:
    location = autostart.autostart_location("darwin", {}, tmp_path)
    location.parent.mkdir(parents=True)
    location.write_bytes(content)
    assert not autostart.is_enabled("darwin", {}, tmp_path)


# --- Windows: pure parts ---------------------------------------------------------------------------------


def test_the_run_value_quotes_the_exe_even_without_spaces() -> None:
    assert autostart.windows_command_line([r"C:\Apps\ct.exe", "tray"]) == r'"C:\Apps\ct.exe" tray'


def test_the_run_value_quotes_an_exe_path_with_spaces_and_arguments_that_need_it() -> None:
    command = [r"C:\Users\Ann Lee\venv\Scripts\python.exe", "-m", "app", "tray", "a b"]
    assert autostart.windows_command_line(command) == r'"C:\Users\Ann Lee\venv\Scripts\python.exe" -m app tray "a b"'


def test_reg_add_passes_the_quoted_command_line_as_one_argument() -> None:
    argv = autostart.reg_add_argv(autostart.windows_command_line([WINDOWS_EXE, "tray"]))
    assert argv == [
        "reg",
        "add",
        r"HKCU\Software\Microsoft\Windows\CurrentVersion\Run",
        "/v",
        "Cowork Terminal",
        "/t",
        "REG_SZ",
        "/d",
        f'"{WINDOWS_EXE}" tray',
        "/f",
    ]
    # What CreateProcess receives once Python joins the argv on Windows: the inner quotes escaped.
    assert r'/d "\"C:\Program Files\Cowork Terminal\cowork-terminal.exe\" tray" /f' in subprocess.list2cmdline(argv)


def test_reg_delete_and_query_name_the_run_value() -> None:
    key = r"HKCU\Software\Microsoft\Windows\CurrentVersion\Run"
    assert autostart.reg_delete_argv() == ["reg", "delete", key, "/v", "Cowork Terminal", "/f"]
    assert autostart.reg_query_argv() == ["reg", "query", key, "/v", "Cowork Terminal"]


def test_reg_query_output_yields_the_value_data() -> None:
    output = (
        "\r\nHKEY_CURRENT_USER\\Software\\Microsoft\\Windows\\CurrentVersion\\Run\r\n"
        '    OneDrive    REG_SZ    "C:\\OneDrive.exe" /background\r\n'
        f'    Cowork Terminal    REG_SZ    "{WINDOWS_EXE}" tray\r\n\r\n'
    )
    assert autostart.parse_reg_query(output) == f'"{WINDOWS_EXE}" tray'
    assert autostart.parse_reg_query(output, "OneDrive") == '"C:\\OneDrive.exe" /background'


def test_reg_query_output_without_the_value_yields_none() -> None:
    header = "\r\nHKEY_CURRENT_USER\\Software\\Microsoft\\Windows\\CurrentVersion\\Run\r\n"
    assert autostart.parse_reg_query(header) is None
    assert autostart.parse_reg_query("") is None


def test_the_windows_location_is_the_registry_value() -> None:
    assert autostart.autostart_location("win32", {}, Path("C:/Users/a")) == (
        r"HKCU\Software\Microsoft\Windows\CurrentVersion\Run\Cowork Terminal"
    )


# --- Windows: the runner, against a fake reg on PATH ----------------------------------------------------

FAKE_REG = """\
#!{python}
# A stand-in for reg.exe: keeps values in a JSON file, logs every argv, answers like the real one.
import json, pathlib, sys
here = pathlib.Path(__file__).parent
with open(here / "calls.jsonl", "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
store = here / "registry.json"
values = json.loads(store.read_text()) if store.exists() else {{}}
if {fail!r}:
    print("ERROR: Access is denied.", file=sys.stderr)
    sys.exit(1)
verb, key, name = sys.argv[1], sys.argv[2], sys.argv[4]
if verb == "add":
    values[name] = sys.argv[sys.argv.index("/d") + 1]
    store.write_text(json.dumps(values))
    print("The operation completed successfully.")
elif name not in values:
    print("ERROR: The system was unable to find the specified registry key or value.", file=sys.stderr)
    sys.exit(1)
elif verb == "query":
    print("\\r\\nHKEY_CURRENT_USER\\\\Software\\\\Microsoft\\\\Windows\\\\CurrentVersion\\\\Run")
    print("    " + name + "    REG_SZ    " + values[name] + "\\r\\n")
elif verb == "delete":
    del values[name]
    store.write_text(json.dumps(values))
    print("The operation completed successfully.")
"""


# The fake is a script found through the PATH we pass in; Windows would run the real reg.exe.
posix_only = pytest.mark.skipif(os.name != "posix", reason="the fake reg is a POSIX script")


def install_fake_reg(folder: Path, fail: bool = False) -> dict[str, str]:
    folder.mkdir(exist_ok=True)
    script = folder / "reg"
    script.write_text(FAKE_REG.format(python=sys.executable, fail=fail))
    script.chmod(0o755)
    return {"PATH": str(folder)}


def calls(folder: Path) -> list[list[str]]:
    log = folder / "calls.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@posix_only
def test_windows_enable_disable_and_is_enabled_round_trip_through_reg(tmp_path: Path) -> None:
    fake = tmp_path / "bin"
    environ = install_fake_reg(fake)
    assert not autostart.is_enabled("win32", environ, tmp_path)
    autostart.enable("win32", environ, tmp_path, command=[WINDOWS_EXE, "tray"])
    assert json.loads((fake / "registry.json").read_text()) == {"Cowork Terminal": f'"{WINDOWS_EXE}" tray'}
    assert autostart.is_enabled("win32", environ, tmp_path)
    autostart.disable("win32", environ, tmp_path)
    assert not autostart.is_enabled("win32", environ, tmp_path)
    query, add = autostart.reg_query_argv()[1:], autostart.reg_add_argv(f'"{WINDOWS_EXE}" tray')[1:]
    assert calls(fake) == [query, add, query, query, autostart.reg_delete_argv()[1:], query]


@posix_only
def test_windows_disable_when_not_enabled_does_not_call_reg_delete(tmp_path: Path) -> None:
    fake = tmp_path / "bin"
    autostart.disable("win32", install_fake_reg(fake), tmp_path)
    assert [call[0] for call in calls(fake)] == ["query"]


@posix_only
def test_a_reg_failure_becomes_a_cowork_error_with_its_message(tmp_path: Path) -> None:
    environ = install_fake_reg(tmp_path / "bin", fail=True)
    with pytest.raises(CoworkError, match="Access is denied"):
        autostart.enable("win32", environ, tmp_path, command=[WINDOWS_EXE, "tray"])


@posix_only
def test_a_missing_reg_becomes_a_cowork_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(CoworkError, match="could not run reg"):
        autostart.is_enabled("win32", {"PATH": str(tmp_path / "empty")}, tmp_path)


def test_the_facade_defaults_to_this_machine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    autostart.enable()
    entry = tmp_path / ".config/autostart/cowork-terminal.desktop"
    assert autostart.autostart_location() == entry and autostart.is_enabled()
    assert unquote_exec(re.search(r"^Exec=(.*)$", entry.read_text(), re.M)[1]) == autostart.current_launch_command()
    autostart.disable()
    assert not autostart.is_enabled()


# --- reading the entry back (for uninstall and the repair at start) ------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["/usr/bin/cowork-terminal", "tray"],
        ["/home/a b/.venv/bin/python", "-m", "app", "tray"],
        [f"{AWKWARD_DIR}/cowork-terminal", "tray", ""],
    ],
)
def test_the_apps_own_exec_reader_agrees_with_the_specs_reading(command: list[str]) -> None:
    value = autostart.exec_value(command)
    assert autostart.parse_exec_value(value) == unquote_exec(value) == command


def test_the_entry_names_its_program_in_try_exec_so_a_desktop_skips_it_once_the_program_is_gone() -> None:
    lines = autostart.desktop_entry(["/home/a b/cowork-terminal", "tray"]).splitlines()
    assert "TryExec=/home/a b/cowork-terminal" in lines


@pytest.mark.parametrize("platform", ["linux", "darwin"])
def test_the_command_of_an_enabled_entry_reads_back_and_a_disabled_one_reads_as_none(
    platform: str, tmp_path: Path
) -> None:
    environ = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    command = [f"{AWKWARD_DIR}/cowork-terminal", "tray"]
    assert autostart.read_command(platform, environ, tmp_path) is None
    autostart.enable(platform, environ, tmp_path, command=command)
    assert autostart.read_command(platform, environ, tmp_path) == command
    autostart.disable(platform, environ, tmp_path)
    assert autostart.read_command(platform, environ, tmp_path) is None


@posix_only
def test_the_windows_run_value_reads_back_as_its_command(tmp_path: Path) -> None:
    environ = install_fake_reg(tmp_path / "bin")
    autostart.enable("win32", environ, tmp_path, command=[WINDOWS_EXE, "tray"])
    assert autostart.read_command("win32", environ, tmp_path) == [WINDOWS_EXE, "tray"]


# --- an entry of ours with settings added (issue 21) -----------------------------------------------

SOURCE_LAUNCH = autostart.launch_command(False, "/opt/venv/bin/python3")


@pytest.mark.parametrize(
    ("command", "plist_env", "added"),
    [
        (SOURCE_LAUNCH, None, []),
        (["env", "PYTHONPATH=/tmp/planted", *SOURCE_LAUNCH], None, ["env PYTHONPATH=/tmp/planted"]),
        (["/usr/bin/env", "-u", "HOME", *SOURCE_LAUNCH], None, ["env -u HOME"]),
        ([*SOURCE_LAUNCH, "--planted"], None, ["argument --planted"]),
        (SOURCE_LAUNCH, {"LD_PRELOAD": "/tmp/x.so"}, ["env LD_PRELOAD"]),
        (["/elsewhere/python3", "-m", "app", "tray", "--x"], None, []),  # another program: stale_entries' job
        ([WINDOWS_EXE, "tray"], None, []),
    ],
)
def test_an_env_prefix_extra_arguments_or_launch_agent_variables_are_named_as_added(command, plist_env, added) -> None:
    launch = [WINDOWS_EXE, "tray"] if command[0] == WINDOWS_EXE else SOURCE_LAUNCH
    assert autostart.added_to_command(command, launch, plist_env) == added


def test_a_launch_agent_with_environment_variables_reads_as_added(tmp_path: Path) -> None:
    autostart.enable("darwin", {}, tmp_path, command=SOURCE_LAUNCH)
    assert autostart.read_added(SOURCE_LAUNCH, "darwin", {}, tmp_path) == []
    location = autostart.autostart_location("darwin", {}, tmp_path)
    plist = plistlib.loads(location.read_bytes())
    location.write_bytes(plistlib.dumps({**plist, "EnvironmentVariables": {"DYLD_INSERT_LIBRARIES": "/tmp/x"}}))
    assert autostart.read_added(SOURCE_LAUNCH, "darwin", {}, tmp_path) == ["env DYLD_INSERT_LIBRARIES"]


def test_the_autostart_command_says_when_its_entry_runs_with_settings_it_did_not_write(
    tmp_path: Path, cli_env: dict[str, str]
) -> None:
    env = {**cli_env, "XDG_CONFIG_HOME": str(tmp_path / "cfg"), "HOME": str(tmp_path)}
    argv = [sys.executable, "-m", "app", "autostart"]
    done = subprocess.run([*argv, "on"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("Start at login: on ("), done
    ours = autostart.read_command("linux", env, tmp_path)
    assert ours is not None
    autostart.enable("linux", env, tmp_path, command=["env", "PYTHONPATH=/tmp/planted", *ours])
    said = subprocess.run([*argv, "status"], env=env, capture_output=True, text=True, timeout=60)
    assert said.returncode == 1
    assert "did not write (env PYTHONPATH=/tmp/planted)" in said.stdout and "autostart on" in said.stdout
    subprocess.run([*argv, "on"], env=env, capture_output=True, text=True, timeout=60, check=True)
    assert autostart.read_command("linux", env, tmp_path) == ours
