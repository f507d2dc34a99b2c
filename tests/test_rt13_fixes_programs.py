"""Red team 13's programs that write a member of the protected set without naming it (findings 7-9 of
tests/test_red_team_thirteen_uncontained.py): `claude plugin ...`, `pip install --user` (and
`PIP_USER`, `--prefix`, `--target`...), `dconf write` and `gsettings set`. Where no container keeps
the set read-only, each is now held with words that say what it changes; everyday work (a venv's
`pip install`, reading settings, listing plugins) is not. A headless server with bwrap missing
refuses them, and stand-ins for the programs, first on PATH, show that nothing ran."""

from __future__ import annotations

import site
import sys
from pathlib import Path

import pytest

from app.core.classifier import Tier, classify, names_protected
from app.core.execution import container
from tests.in_process_server import serving
from tests.stdio_client import run

LINUX = sys.platform.startswith("linux")
HOME = "/home/ann"
PROJECT = f"{HOME}/code/site"
WINDOWS_FOLDERS = {
    "APPDATA": r"C:\Users\ann\AppData\Roaming",
    "LOCALAPPDATA": r"C:\Users\ann\AppData\Local",
    "USERPROFILE": r"C:\Users\ann",
}
REFUSED = "nobody can approve it and it was not run"
GUARDED = "Changes a file Cowork Terminal guards"
PLUGIN = "Adds or changes a Claude Code plugin, which can run programs"
USER_SITE = "Installs into your Python user folder, which every Python program you start loads"
DESKTOP = "Changes your desktop's settings, which can name programs it starts"


@pytest.fixture
def linux_members(monkeypatch: pytest.MonkeyPatch) -> tuple[str, ...]:
    """The members `Runs._names_unguarded` gives names_protected on Linux, for /home/ann."""
    monkeypatch.setenv("HOME", HOME)
    for name in (*WINDOWS_FOLDERS, "XDG_CONFIG_HOME", "PYTHONUSERBASE"):
        monkeypatch.delenv(name, raising=False)
    protected = container.protected_set(
        "linux", {}, HOME, [f"{HOME}/.local/share/cowork-terminal"], [f"{HOME}/src/cowork/app"], f"{HOME}/.local/lib"
    )
    return (*container.hold_members(protected), *protected.program[:1])


@pytest.fixture
def windows_members(monkeypatch: pytest.MonkeyPatch) -> tuple[str, ...]:
    """The same on Windows (Git Bash's HOME), the user site in %APPDATA% as python.org's Python has it."""
    monkeypatch.setenv("HOME", "C:/Users/ann")
    for name, value in WINDOWS_FOLDERS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("PYTHONUSERBASE", raising=False)
    protected = container.protected_set(
        "win32",
        WINDOWS_FOLDERS,
        r"C:\Users\ann",
        [r"C:\Users\ann\AppData\Local\cowork-terminal"],
        [r"C:\Users\ann\code\cowork\app"],
        r"C:\Users\ann\AppData\Roaming\Python\Python312\site-packages",
    )
    return (*container.hold_members(protected), *protected.program[:1])


def held(commands: list[str], members: tuple[str, ...], cwd: str) -> list[str]:
    return [command for command in commands if names_protected(command, members, cwd=cwd, bare=False)]


# -- 7. claude plugin ---------------------------------------------------------------------------------


def test_claude_plugin_changes_are_held_in_plain_words_and_its_reads_are_not(linux_members: tuple[str, ...]) -> None:
    changes = [
        "claude plugin marketplace add evil/marketplace",
        "claude plugins install helper@evil --scope project",  # the cache in ~/.claude/plugins all the same
        "claude plugin i helper@evil",
        "claude plugin enable helper@evil",
        "claude plugin update helper@evil",
        "claude --settings x.json plugin enable helper@evil",  # an option's value is not the subcommand
        'claude plugin install "$name"',  # which plugin is not known: what the command does is
    ]
    assert held(changes, linux_members, PROJECT) == changes
    for command in changes:
        assert PLUGIN in classify(command, cwd=PROJECT).plain, command
    reads = [
        "claude plugin list",
        "claude plugin marketplace list",
        "claude plugin validate .",
        "claude plugin --help",
        "claude mcp list",
        "claude -p 'install the plugin'",
    ]
    assert held(reads, linux_members, PROJECT) == []
    assert not any(PLUGIN in classify(command, cwd=PROJECT).plain for command in reads)


def test_claude_plugin_is_held_on_windows(windows_members: tuple[str, ...]) -> None:
    changes = ["claude plugin marketplace add evil/marketplace", "claude plugin install helper@evil"]
    assert held(changes, windows_members, "C:/Users/ann/code/site") == changes
    assert held(["claude plugin list"], windows_members, "C:/Users/ann/code/site") == []


# -- 8. the user site -----------------------------------------------------------------------------


def test_installs_into_the_user_site_or_a_member_are_held_and_a_venvs_are_not(linux_members: tuple[str, ...]) -> None:
    user_site = [
        "pip install --user ./dist/helper-1.0-py3-none-any.whl",
        "python3 -m pip install --user -e .",
        "PIP_USER=1 pip install helper",
        "env PIP_USER=1 pip3 install helper",
        "export PIP_USER=1; pip install helper",
        "uv pip install --user helper",
    ]
    assert held(user_site, linux_members, PROJECT) == user_site
    for command in user_site:
        assert USER_SITE in classify(command, cwd=PROJECT).plain, command
    places = [
        "pip install --prefix ~/.local helper",
        "pip install --prefix=$HOME/.local helper",
        "pip install --prefi ~/.local helper",  # pip takes a prefix naming one option alone
        "pip install --root ~ helper",
        "cd ~/.local && pip install -t lib helper",
        "cd ~/.local && pip install --tar=lib helper",
    ]
    assert held(places, linux_members, PROJECT) == places
    assert "Installs into ~/.local" in classify("pip install --prefix ~/.local helper", cwd=PROJECT).plain
    assert "Installs into $HOME/.local" in classify("pip install --prefix=$HOME/.local helper", cwd=PROJECT).plain
    everyday = [
        "pip install helper",
        "pip install -e .",
        "pip install -r requirements.txt",
        "pip install --pre helper",
        "pip install --target ./vendor helper",
        "pip install -rt.txt",  # `t.txt` is -r's file
        "python3 -m pip install -U pip",
        "uv pip install helper",
        "pip list --user",
    ]
    assert held(everyday, linux_members, PROJECT) == []
    assert classify("pip install helper", cwd=PROJECT).plain == ("Changes installed software",)  # as before


def test_a_user_install_is_held_on_windows(windows_members: tuple[str, ...]) -> None:
    commands = ["pip install --user helper", "PIP_USER=1 py -m pip install helper"]
    assert held(commands, windows_members, "C:/Users/ann/code/site") == commands
    assert held(["pip install helper"], windows_members, "C:/Users/ann/code/site") == []


def test_a_user_install_is_held_where_pythonuserbase_moved_the_user_site(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HOME", HOME)
    monkeypatch.setenv("PYTHONUSERBASE", "/opt/ann-python")
    members = ("/opt/ann-python/lib",)  # container.this_protected_set: site.getuserbase()'s lib
    assert held(["pip install --user helper"], members, PROJECT) == ["pip install --user helper"]


# -- 9. dconf and gsettings -------------------------------------------------------------------------


def test_desktop_settings_writes_are_held_and_reads_are_safe(linux_members: tuple[str, ...]) -> None:
    writes = [
        "dconf write /org/gnome/settings-daemon/plugins/media-keys/custom-keybindings/custom0/command \"'sh -c id'\"",
        "dconf load /org/gnome/ < keys.ini",
        "dconf reset -f /org/gnome/desktop/",
        "gsettings set org.gnome.settings-daemon.plugins.xsettings overrides \"{'Gtk/Modules': <'evil'>}\"",
        "gsettings --schemadir ./schemas set org.example key 1",
        "gsettings reset-recursively org.gnome.desktop.interface",
        "dconf compile ~/.config/dconf/user ./keyfiles",
    ]
    assert held(writes, linux_members, PROJECT) == writes
    for command in writes[:-1]:
        verdict = classify(command, cwd=PROJECT)
        assert (verdict.tier, verdict.plain) == (Tier.MODERATE, (DESKTOP,)), command
    reads = [
        "gsettings get org.gnome.desktop.interface gtk-theme",
        "gsettings list-recursively org.gnome.desktop.interface",
        "gsettings --schemadir ./schemas list-keys org.example",
        "gsettings --version",
        "dconf read /org/gnome/desktop/interface/gtk-theme",
        "dconf dump /org/gnome/",
        "dconf list /org/",
    ]
    for command in reads:
        assert classify(command, cwd=PROJECT).tier is Tier.SAFE, command
    assert held(reads, linux_members, PROJECT) == []
    assert held(["dconf compile ./out.db ./keyfiles"], linux_members, PROJECT) == []  # a file of its own
    assert classify("dconf compile ./out.db ./keyfiles", cwd=PROJECT).plain == ("Writes to ./out.db",)


def test_a_moved_config_folder_is_followed(linux_members: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", "/srv/ann-config")
    members = ("/srv/ann-config/dconf",)  # container.protected_set: $XDG_CONFIG_HOME/dconf
    assert held(["gsettings set org.example key 1"], members, PROJECT) == ["gsettings set org.example key 1"]


# -- a headless server where bwrap is missing ----------------------------------------------------------

STAND_INS = {
    # each writes what the real program writes, where it writes it
    "pip": 'd="$HOME/.local/lib/python3/site-packages" && mkdir -p "$d" && echo "import os" > "$d/zz.pth"',
    "dconf": 'mkdir -p "$HOME/.config/dconf" && echo evil > "$HOME/.config/dconf/user"',
    "claude": 'mkdir -p "$HOME/.claude/plugins" && echo evil > "$HOME/.claude/plugins/installed_plugins.json"',
    "gsettings": "echo \"'Adwaita'\"",
}


@pytest.mark.anyio
@pytest.mark.skipif(not LINUX, reason="the weaker mode of Linux (bwrap missing)")
@pytest.mark.parametrize(
    ("command", "written", "said"),
    [
        ("PIP_USER=1 pip install helper", ".local/lib/python3/site-packages/zz.pth", USER_SITE),
        ("dconf write /org/gnome/desktop/x \"'y'\"", ".config/dconf/user", DESKTOP),
        ("claude plugin install helper@evil", ".claude/plugins/installed_plugins.json", PLUGIN),
    ],
)
async def test_without_bwrap_a_headless_server_refuses_them_and_nothing_is_written(
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    no_container: None,
    command: str,
    written: str,
    said: str,
) -> None:
    """What the model reads: the refusal, with what the command would change in plain words."""
    user = tmp_path / "user"
    (user / "project").mkdir(parents=True)
    programs = tmp_path / "bin"
    programs.mkdir()
    for name, body in STAND_INS.items():
        (programs / name).write_text(f"#!/bin/sh\n{body}\n")
        (programs / name).chmod(0o755)
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.setenv("PATH", f"{programs}:{Path(sys.executable).parent}:/usr/bin:/bin")
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("PYTHONUSERBASE", raising=False)
    monkeypatch.setattr(site, "USER_BASE", None)
    async with serving(home) as client:
        read = "gsettings get org.gnome.desktop.interface gtk-theme"
        control = await run(client, {"command": read, "cwd": str(user / "project")})
        result = await run(client, {"command": command, "cwd": str(user / "project")})
    assert "'Adwaita'" in str(control), control  # a read runs
    assert not (user / written).exists(), f"it ran: {result}"
    assert REFUSED in result.get("error", ""), result
    assert GUARDED in result["error"]
    assert said in result["error"]
