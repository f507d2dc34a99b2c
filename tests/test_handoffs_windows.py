"""Windows commands that hand work to something outside the job the tray runs each command in (red
team, Windows): a running Windows Terminal, WSL's Linux system, WinRM and PowerShell remoting, COM
servers such as Explorer's and MMC's, a service, elevation through UAC. Each ran unasked in the
default approval mode, judged moderate. The command line's hand-offs are held in plain words (issue
21); PowerShell code, which is not read here, is held as code that starts other programs; gsudo and
sudo-rs are held as sudo is. Their everyday neighbours keep the tier they had."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.classifier import Danger, Tier, classify
from app.core.classifier.findings import Classification
from tests.handoff_checks import held_outside

PROJECT = "/home/ana/project"
HANDOFF = "Asks the system to start a program later or elsewhere, outside Cowork Terminal's watch"


def _judged(command: str, cwd: str = PROJECT) -> Classification:
    return classify(command, cwd=cwd)


@pytest.mark.parametrize(
    "command",
    [
        # Windows Terminal: the one already running starts the tab's program as its own child
        "wt -w 0 nt cmd",
        "wt new-tab cmd /c calc",
        "wt.exe -w 0 nt powershell",
        "WT.EXE split-pane -H cmd",
        "wt",  # a new window with the profile's shell
        "wt -p Ubuntu",
        # WSL: its Linux system runs the command, with C: writable under /mnt/c
        "wsl --exec ls",
        "wsl -e ls",
        "wsl -d Ubuntu ls",
        "wsl -d Ubuntu -u root -- ls",
        "wsl ls",
        "wsl.exe ls",
        "wsl --cd /mnt/c ls",
        "wsl",  # its shell, reading what the command types into it
        "echo ls | wsl",
        "wsl ~",
        'wsl "$cmd"',
        "wsl --install",  # starts the Linux system it installs
        "wsl --debug-shell",
        "/c/Windows/System32/bash.exe -c ls",  # Windows' own bash.exe is WSL's launcher
        "/c/Windows/Sysnative/bash -c 'ls'",
        # WinRM: the WMI service starts the program
        'winrm invoke Create wmicimv2/Win32_Process @{CommandLine="calc"}',
        "winrm i Create wmicimv2/Win32_Process @{CommandLine=calc} -r:localhost",
        "winrm.cmd invoke Create wmicimv2/Win32_Process @{CommandLine=calc}",
        # a service, started by the service manager, as `sc start` already was
        "net start spooler",
        "NET START spooler",
        "net.exe start evilsvc",
        "net1 start evilsvc",
        "sc start evilsvc",
    ],
)
def test_a_program_started_outside_the_job_is_held_in_plain_words(command: str) -> None:
    assert HANDOFF in held_outside(command, PROJECT, deciding=True).plain


@pytest.mark.parametrize(
    "command",
    [
        "wt -w 0 nt rm -rf /c/Users/me/Documents",
        "wt new-tab cmd /c rd /s /q C:\\\\Users\\\\me\\\\Documents",
        "wt nt -p Ubuntu \\; sp -H cmd /c rd /s /q C:\\\\Users\\\\me\\\\Documents",  # its second command
        "wt nt --startingDirectory C:\\\\x cmd /c rd /s /q C:\\\\Users\\\\me\\\\Documents",
        "wsl -e rm -rf /mnt/c/Users/me/Documents",
        "wsl rm -rf /mnt/c/Users/me/Documents",
        "wsl -d Ubuntu -- 'rm -rf /mnt/c/Users/me/Documents'",
        "echo 'rm -rf /mnt/c/Users/me/Documents' | wsl",
    ],
)
def test_what_it_starts_there_is_judged_too(command: str) -> None:
    result = held_outside(command, PROJECT)
    assert result.danger in (Danger.LOSES_FILES, Danger.LOSES_EVERYTHING), result.reasons


@pytest.mark.parametrize(
    "code",
    [
        # Explorer's COM objects run the file in Explorer; MMC's in an mmc.exe COM starts
        "(New-Object -ComObject Shell.Application).ShellExecute('x.bat')",
        "$s = New-Object -Com Shell.Application; $s.Windows().Item(0).Document.Application.ShellExecute('x.bat')",
        "[activator]::CreateInstance([type]::GetTypeFromCLSID('9BA05972-F6A8-11CF-A442-00A0C90A8F39'))",  # ShellWindows
        "[activator]::CreateInstance([type]::GetTypeFromProgID('ShellBrowserWindow'))",
        "[activator]::CreateInstance([type]::GetTypeFromProgID('MMC20.Application'))",
        "(New-Object -ComObject WScript.Shell).Run('calc')",
        "(New-Object -ComObject WScript.Shell).Exec('calc')",
        # remoting to this same machine: WinRM's service runs it
        "Invoke-Command -ComputerName localhost -ScriptBlock { calc }",
        "Invoke-Command -ComputerName $env:COMPUTERNAME { calc }",
        "icm . { calc }",
        "Enter-PSSession -ComputerName localhost",
        "$s = New-PSSession localhost; icm -Session $s { calc }",
        # elevation through UAC
        "Start-Process cmd -Verb RunAs",
        "saps cmd -Verb RunAs",
        "start cmd -Verb runas",
        "gsudo calc",
        # a service
        "Start-Service evilsvc",
        "Restart-Service evilsvc",
        "sasv evilsvc",
        "net start evilsvc",
        # WSL's Linux system, Windows Terminal
        "wsl rm -rf /mnt/c/x",
        "Get-Date; wsl",
        "& wsl.exe -e ls",
        "wt -w 0 nt cmd",
        # the other ways PowerShell starts a program, as Start-Process already was
        "saps calc",
        "Invoke-Item x.bat",
        "ii x.bat",
        "[Diagnostics.Process]::Start('calc')",
    ],
)
@pytest.mark.parametrize("shell", ["powershell -c", "pwsh -Command"])
def test_powershell_code_that_starts_a_program_is_held(shell: str, code: str) -> None:
    result = _judged(f"{shell} {_single_quoted(code)}")
    assert result.tier is Tier.DESTRUCTIVE, result.reasons
    # Restart-: "restart"; what hands a program to a service, WMI, COM, WSL or UAC: a hand-off (2026-12-05)
    assert result.danger in (Danger.CANNOT_TELL, Danger.LOSES_FILES, Danger.OUTSIDE_WATCH), result.reasons


def _single_quoted(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


@pytest.mark.parametrize("program", ["gsudo", "sudo-rs"])
def test_gsudo_and_sudo_rs_are_held_as_sudo_is(program: str) -> None:
    sudo = _judged("sudo rm x")
    result = _judged(f"{program} rm x")
    assert result.tier is sudo.tier is Tier.DESTRUCTIVE
    assert result.danger is sudo.danger
    assert result.gains_privileges and sudo.gains_privileges  # a person's Allow lets it out as sudo's
    assert result.plain == sudo.plain
    wipe = "rm -rf /c/Users/me/Documents"
    assert _judged(f"{program} {wipe}").danger is _judged(f"sudo {wipe}").danger is Danger.LOSES_FILES
    assert _judged(f"{program} --version").tier is Tier.DESTRUCTIVE  # as `sudo --version`


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "ok.bat").write_text("echo hello\r\ndir\r\n")
    (tmp_path / "wipe.bat").write_text("@echo off\r\nrd /s /q C:\\Users\\me\\Documents\r\n")
    return tmp_path


@pytest.mark.parametrize(
    "words",
    ["wipe.bat", '"" wipe.bat', '"" /b wipe.bat', "/wait wipe.bat", "ok.bat", "ok.bat one two", "missing.bat"],
)
def test_git_bashs_start_reads_the_script_as_cmd_start_does(project: Path, words: str) -> None:
    """Git Bash's `start` is `cmd //c start "$@"`: `start x.bat` was moderate, `cmd /c start x.bat` read x.bat."""
    started = _judged(f"start {words}", cwd=str(project))
    through_cmd = _judged(f"cmd //c 'start {words}'", cwd=str(project))
    assert (started.tier, started.danger) == (through_cmd.tier, through_cmd.danger), started.reasons
    if "wipe" in words:
        assert started.danger is Danger.LOSES_FILES, started.reasons


def test_git_bashs_start_of_an_expansion_cannot_be_told() -> None:
    assert _judged('start "$f"').danger is Danger.CANNOT_TELL


@pytest.mark.parametrize(
    ("command", "tier"),
    [
        ("wsl --list --verbose", Tier.MODERATE),
        ("wsl -l -v", Tier.MODERATE),
        ("wsl --status", Tier.MODERATE),
        ("wsl --shutdown", Tier.MODERATE),
        ("wsl --terminate Ubuntu", Tier.MODERATE),
        ("wsl --install -d Ubuntu --no-launch", Tier.MODERATE),
        ("wt --help", Tier.SAFE),
        ("winrm get winrm/config", Tier.MODERATE),
        ("winrm enumerate winrm/config/listener", Tier.MODERATE),
        ("net start", Tier.MODERATE),  # lists the services that run
        ("net stop spooler", Tier.MODERATE),
        ("net user", Tier.MODERATE),
        ("sc query spooler", Tier.MODERATE),
        ("start .", Tier.MODERATE),
        ("start https://example.com", Tier.MODERATE),
        ('start "" https://example.com/docs', Tier.MODERATE),
        ("start notepad x.txt", Tier.MODERATE),
        ("bash.exe -c ls", Tier.SAFE),  # Git Bash's own bash comes first on its PATH, not WSL's launcher
        ("powershell -c Get-ChildItem", Tier.MODERATE),
        ("powershell -c 'Get-Service spooler; Get-Process'", Tier.MODERATE),
        ("powershell -c 'Invoke-WebRequest https://example.com -OutFile x.html'", Tier.MODERATE),
        ("python3 -c 'start = 1; ii = 2; print(start + ii)'", Tier.MODERATE),
        ("python3 -c 'net = 1; sc = 2; print(net, sc)'", Tier.MODERATE),
        ("node -e 'const start = Date.now(); console.log(start)'", Tier.MODERATE),
        ('python3 -c \'wt = 2\nwsl = wt + 1\n"""WSL runs Linux"""\'', Tier.MODERATE),
    ],
)
def test_their_everyday_neighbours_keep_their_tier(command: str, tier: Tier) -> None:
    assert _judged(command).tier is tier, _judged(command).reasons
