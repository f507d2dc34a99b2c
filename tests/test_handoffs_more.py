"""Hand-offs a red team and a review found left after issue 21 (2026-12-05): code that talks to a
container daemon's socket or a D-Bus bus, cmd and computed names inside PowerShell code, WSL's
distribution launchers, more container and VM tools, the programs a container asks to run a command
on the host, terminals whose running instance starts the program, subcommands from an expansion.
Each is held as starting a program outside Cowork Terminal's watch (or as "cannot tell"); what
only looks, and opening a document, keeps its tier."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from app.core.classifier import Danger, Tier, classify
from app.core.classifier.handoff import HANDOFF_WORDS
from app.core.classifier.tables import _CODE_RUNS, _POWERSHELL_CMD, _POWERSHELL_COMPUTED
from tests.handoff_checks import held_outside

PROJECT = "/home/ana/project"

SOCKET_CODE = [
    "python3 -c \"import socket; s=socket.socket(1); s.connect('/var/run/docker.sock'); "
    "s.send(b'POST /containers/create')\"",
    "python3 -c \"import http.client, socket; s=socket.socket(socket.AF_UNIX); s.connect('/run/user/1000/x')\"",
    "python3 -c \"import docker; docker.from_env().containers.run('alpine', volumes={'/':{'bind':'/h'}})\"",
    "node -e \"require('http').request({socketPath:'/var/run/docker.sock'})\"",
    "perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Peer=>\"/var/run/docker.sock\")'",
    "ruby -rsocket -e 'UNIXSocket.new(\"/var/run/docker.sock\")'",
    'python3 -c "import dbus; dbus.SessionBus()"',
    "python3 -c \"from jeepney.io.blocking import open_dbus_connection; open_dbus_connection('SESSION')\"",
    'python3 -c "from gi.repository import Gio; Gio.bus_get_sync(Gio.BusType.SESSION)"',
]


@pytest.mark.parametrize("command", SOCKET_CODE)
def test_code_speaking_to_a_daemons_socket_or_a_bus_is_held_as_a_handoff(command: str) -> None:
    result = classify(command, cwd=PROJECT)
    assert result.tier is Tier.DESTRUCTIVE, result
    assert any(f.danger is Danger.OUTSIDE_WATCH and f.plain == HANDOFF_WORDS for f in result.findings), result


def test_a_program_file_speaking_to_the_docker_socket_is_held_as_a_handoff(tmp_path: Path) -> None:
    (tmp_path / "tool.py").write_text("import socket\nsocket.socket(1).connect('/var/run/docker.sock')\n")
    result = classify("python3 tool.py", cwd=str(tmp_path))
    assert result.danger is Danger.OUTSIDE_WATCH, result
    assert any(f.plain == HANDOFF_WORDS for f in result.findings), result


def test_code_with_a_socket_to_elsewhere_keeps_its_tier() -> None:
    result = classify('python3 -c "import socket; print(socket.gethostname())"', cwd=PROJECT)
    assert result.tier is Tier.MODERATE, result


WINDOWS = [
    'powershell -c "cmd /c wsl ls"',
    "powershell -c \"cmd.exe /s /c 'wsl ls'\"",
    'pwsh -c "Get-Date; cmd /c conhost wsl ls"',
    "ubuntu.exe run ls",
    "ubuntu2204.exe run ls",
    "ubuntu",
    "debian run ls",
    "kali run ls",
    "kali -c ls",
    "wslg",
    "wslg -d Ubuntu -- gedit",
    "conhost wsl ls",
    "conhost --headless wsl ls",
    'cmd /c "conhost wsl ls"',
    "pcalua -a wsl",
    "pcalua -a wsl.exe -c ls",
]


@pytest.mark.parametrize("command", WINDOWS)
def test_windows_ways_to_wsl_are_held_as_handoffs(command: str) -> None:
    held_outside(command, PROJECT)


@pytest.mark.parametrize(
    "command",
    ["powershell -c \"& ('ws'+'l') ls\"", "powershell -c \".('wsl') ls\"",
     "powershell -c '& ([char]119+[char]115+[char]108) ls'", "pwsh -c '$c = \"wsl\"; & $c ls'",
     "pwsh -c '$r = & \"ws$x\" ls'"],
)  # fmt: skip
def test_a_program_name_powershell_makes_when_it_runs_cannot_be_told(command: str) -> None:
    result = classify(command, cwd=PROJECT)
    assert result.danger is Danger.CANNOT_TELL, result


def test_what_cmd_runs_inside_powershell_code_is_judged() -> None:
    result = classify("powershell -c \"cmd /c 'rd /s /q C:\\x'\"", cwd=PROJECT)
    assert any(f.reason == "rd /s: recursive removal" for f in result.findings), result


@pytest.mark.parametrize(
    "command",
    ['powershell -c "cmd /c dir"', 'powershell -c "Get-ChildItem | Select-Object Name"', "ubuntu help",
     "powershell -c '$a = 1..(3); . .\\x.ps1'", "mkosi -d debian -r bookworm", "ubuntu latest"],
)  # fmt: skip
def test_powershell_and_launchers_that_start_nothing_elsewhere_keep_their_tier(command: str) -> None:
    result = classify(command, cwd=PROJECT)
    assert not any(f.danger in (Danger.OUTSIDE_WATCH, Danger.CANNOT_TELL) for f in result.findings), result


def test_what_a_launcher_runs_in_wsl_is_judged() -> None:
    result = classify("ubuntu run rm -rf /mnt/c/Users/ana/Documents", cwd=PROJECT)
    assert any(f.danger is Danger.LOSES_FILES for f in result.findings), result


TOOLS = [
    "podman machine ssh",
    "podman machine start",
    "podman machine init --now",
    "microk8s kubectl apply -f p.yml",
    "microk8s kubectl run x --image alpine",
    "microk8s.kubectl exec web -- ls",
    "k3s kubectl apply -f p.yml",
    "helm --kube-context kind-x install x y",
    "helm upgrade x y --kube-context=minikube",
    "podman-remote run -v /:/h a",
    "finch run -v /:/h a",
    "orb",
    "orb sudo ls",
    "orb -m ubuntu uname",
    "orbctl run ls",
    "orbctl shell",
    "rdctl shell",
    "docker-machine ssh x",
    "lxc start c",
    "incus restart c",
    "flatpak-spawn --host ls",
    "flatpak-spawn --host --watch-bus --env=A=b ls",
    "host-spawn ls",
    "host-spawn -cwd /tmp ls",
    "distrobox-host-exec ls",
    "xfce4-terminal -x id",
    "xfce4-terminal -e id",
    "tilix -e id",
    "terminator -x id",
    "mate-terminal -x id",
    "mate-terminal --command=id",
    "wezterm --config-file x.lua",
    "wezterm -n",
]


@pytest.mark.parametrize("command", TOOLS)
def test_more_tools_that_start_programs_outside_are_held(command: str) -> None:
    held_outside(command, PROJECT)


@pytest.mark.parametrize(
    "command",
    ["podman machine list", "microk8s status", "helm install x y --kube-context prod", "helm list",
     "orb list", "orbctl list", "lxc list", "docker-machine ls", "rdctl list-settings"],
)  # fmt: skip
def test_their_uses_that_start_nothing_keep_their_tier(command: str) -> None:
    result = classify(command, cwd=PROJECT)
    assert not any(f.danger is Danger.OUTSIDE_WATCH for f in result.findings), result
    assert result.tier is Tier.MODERATE, result


@pytest.mark.parametrize(
    "command",
    ["flatpak-spawn --host rm -rf /home/ana/Documents", "host-spawn rm -rf /home/ana/Documents",
     "distrobox-host-exec rm -rf /home/ana/Documents", "xfce4-terminal -x rm -rf /home/ana/Documents",
     "microk8s kubectl delete ns x"],
)  # fmt: skip
def test_what_they_run_is_still_judged(command: str) -> None:
    result = classify(command, cwd=PROJECT)
    assert any(f.danger is Danger.LOSES_FILES for f in result.findings), result


@pytest.mark.parametrize("command", ['v=start; systemctl --user "$v" evil.service', 'v=enable-linger; loginctl "$v"'])
def test_a_subcommand_from_an_expansion_is_held(command: str) -> None:
    result = classify(command, cwd=PROJECT)
    assert result.tier is Tier.DESTRUCTIVE, result


@pytest.mark.parametrize(
    "command",
    ["xdg-open report.html", "open report.html", "open http://localhost:3000", "xdg-open docs/Report.PDF",
     "open shot.png notes.md", "gio open data.csv"],
)  # fmt: skip
def test_opening_a_document_keeps_its_tier(command: str) -> None:
    result = classify(command, cwd=PROJECT)
    assert result.tier is Tier.MODERATE, result


@pytest.mark.parametrize(
    "command",
    ["open x.sh", "xdg-open run.py", "open report.html x.command", "open -a Terminal report.html",
     "xdg-open report.html.desktop", "open tool.jar", "xdg-open notes", "open .html"],
)  # fmt: skip
def test_opening_what_may_run_is_held(command: str) -> None:
    result = classify(command, cwd=PROJECT)
    assert result.danger is Danger.OUTSIDE_WATCH, result


@pytest.mark.parametrize(
    "text",
    ["& \"" + "x" * 200_000, "cmd " + "/a " * 100_000 + "x", "cmd /c " * 30_000, "AF_UNI" * 50_000,
     "& " * 100_000 + "x"],
)  # fmt: skip
def test_the_new_patterns_take_linear_time(text: str) -> None:
    started = time.perf_counter()
    for pattern in (_POWERSHELL_COMPUTED, _POWERSHELL_CMD, _CODE_RUNS):
        list(pattern.finditer(text))
    assert time.perf_counter() - started < 2.0


# git's scheduled maintenance: `start` has systemd, cron, launchd or the task scheduler run git every
# hour in each repository of `maintenance.repo`, whose settings may name a program (core.fsmonitor).
@pytest.mark.parametrize(
    "command",
    ["git maintenance start", "git maintenance start --scheduler=crontab", "git -C /srv/x maintenance start",
     "git maintenance register", "git maintenance register --config-file ~/.gitconfig", 'git maintenance "$X"',
     "git config --global maintenance.repo /tmp/x", "git config --global --add maintenance.repo /tmp/x",
     "git config set --global Maintenance.Repo /tmp/x"],
)  # fmt: skip
def test_scheduling_git_maintenance_is_held_as_a_handoff(command: str) -> None:
    held_outside(command, PROJECT)


@pytest.mark.parametrize(
    "command",
    ["git maintenance run --auto", "git maintenance stop", "git maintenance unregister",
     "git config --get-all maintenance.repo", "git config --global --unset maintenance.repo",
     "git config maintenance.auto false"],
)  # fmt: skip
def test_running_reading_or_ending_git_maintenance_keeps_its_tier(command: str) -> None:
    assert classify(command, cwd=PROJECT).tier is not Tier.DESTRUCTIVE


@pytest.mark.parametrize("command", ['git config "$K" "$V"', 'K=core.pager; git config $K "rm -rf ~"'])
def test_a_git_setting_whose_name_only_bash_knows_is_held(command: str) -> None:
    result = classify(command, cwd=PROJECT)
    assert result.tier is Tier.DESTRUCTIVE and "cannot tell what runs: git config sets" in result.reasons[0], result


@pytest.mark.parametrize(
    "command",
    ["DBUS_SESSION_BUS_ADDRESS=unixexec:path=/bin/sh,argv1=-c,argv2=rm%20-rf%20x systemctl --user is-active a",
     "export DBUS_SYSTEM_BUS_ADDRESS=\"$X\"; busctl list", "env DBUS_STARTER_BUS_ADDRESS=unixexec:path=/bin/sh true"],
)  # fmt: skip
def test_a_message_bus_address_that_runs_a_program_is_held(command: str) -> None:
    result = classify(command, cwd=PROJECT)
    assert result.tier is Tier.DESTRUCTIVE and "names a program to run as the message bus" in result.reasons[0], result


@pytest.mark.parametrize(
    "command",
    ["busctl --address=unixexec:path=/bin/rm,argv1=-rf,argv2=/home/ana/project list",
     "busctl --address unixexec:path=/bin/sh tree", "busctl --address \"$A\" introspect a /",
     "dbus-monitor --address unixexec:path=/bin/sh,argv1=-c,argv2=x"],
)  # fmt: skip
def test_a_bus_address_option_that_runs_a_program_is_held(command: str) -> None:
    """A review, 2026-12-05: sd-bus's `--address` takes the same `unixexec:` address as the variable."""
    result = classify(command, cwd=PROJECT)
    assert result.tier is Tier.DESTRUCTIVE and "names a program to run as the message bus" in result.reasons[0], result


@pytest.mark.parametrize("command", ["busctl --user list", "busctl --address=unix:path=/run/user/1000/bus list"])
def test_listing_a_bus_stays_safe(command: str) -> None:
    assert classify(command, cwd=PROJECT).tier is Tier.SAFE
