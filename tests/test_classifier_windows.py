"""Windows commands Git Bash can start (red team, Windows): each was judged safe or moderate and ran
unasked; each is now held. Their everyday neighbours stay as they were."""

from __future__ import annotations

import pytest

from app.core.classifier import Danger, Tier, classify

PROJECT = "/home/ana/project"


def held(command: str, **kwargs: object) -> None:
    result = classify(command, **{"cwd": PROJECT, **kwargs})  # type: ignore[arg-type]
    assert result.tier is Tier.DESTRUCTIVE, (command, result.reasons)


def not_held(command: str, **kwargs: object) -> None:
    result = classify(command, **{"cwd": PROJECT, **kwargs})  # type: ignore[arg-type]
    assert result.tier is not Tier.DESTRUCTIVE, (command, result.reasons)


@pytest.mark.parametrize(
    "command",
    [
        "schtasks //create //tn x //tr calc.exe //sc onlogon",
        "SCHTASKS.EXE //Create //TN x //TR calc //SC ONLOGON",
        "schtasks.exe //CREATE //XML task.xml //TN x",
        "schtasks //run //tn x",
        "schtasks //change //tn x //tr calc",
        "schtasks -create -tn x -tr calc -sc onlogon",
    ],
)
def test_git_bash_double_slash_switches_are_the_switches_they_stand_for(command: str) -> None:
    result = classify(command, cwd=PROJECT)
    assert result.tier is Tier.DESTRUCTIVE, result.reasons
    assert result.danger is Danger.OUTSIDE_WATCH


def test_schtasks_delete_and_query_in_git_bash_spelling_are_judged_as_with_one_slash() -> None:
    assert classify("schtasks //delete //tn x //f").tier is Tier.MODERATE
    assert classify("schtasks //query //fo list").tier is Tier.SAFE


DOCUMENTS = "C:\\Users\\me\\Documents"


@pytest.mark.parametrize(
    "command",
    [
        f"cmd //c rd /q /s {DOCUMENTS}",
        f"cmd //c rmdir /Q /S {DOCUMENTS}",
        f'cmd //c "rd/s/q {DOCUMENTS}"',
        f"cmd //c rd //s //q {DOCUMENTS}",
        f"cmd //c del //s //q {DOCUMENTS}\\*",
        f"cmd /c 'r^d /s /q {DOCUMENTS}'",
        f'cmd //c "for /r {DOCUMENTS} %f in (*) do del %f"',
        f"cmd /c 'if exist {DOCUMENTS} (rd /s /q {DOCUMENTS})'",
        f"cmd /c 'echo x & start \"\" /b cmd /c rd /s /q {DOCUMENTS}'",
        'cmd /c "schtasks /create /tn x /tr calc /sc onlogon"',
        "cmd /c 'assoc .txt=evilfile'",
        "cmd /c '%x% /s /q C:\\'",
    ],
)
def test_cmd_code_is_read_command_by_command_as_cmd_runs_it(command: str) -> None:
    held(command)


@pytest.mark.parametrize(
    "command",
    [
        "cmd //c dir",
        "cmd /c 'echo hello & dir /b'",
        "cmd /c 'if exist build (rd build) else (echo none)'",
        "cmd /c del notes.txt",
        "cmd /c 'for %f in (*.txt) do type %f'",
        "cmd //c ver",
        "cmd //c set",
        "cmd /c assoc .txt",
    ],
)
def test_everyday_cmd_code_is_not_held(command: str) -> None:
    not_held(command)


@pytest.mark.parametrize(
    "command", ["./evil.bat", "./evil.cmd", "cmd //c evil.bat", "cmd /c evil.bat", "cmd //c call evil.bat"]
)
def test_a_batch_file_is_read_as_cmd_reads_it_not_as_bash(command: str, tmp_path) -> None:
    for name in ("evil.bat", "evil.cmd"):
        (tmp_path / name).write_bytes(b"@echo off\r\nrd /s /q C:\\Users\\me\\Documents\r\n")
    held(command, cwd=str(tmp_path))


def test_a_batch_file_that_only_reads_is_not_held_and_a_windows_script_host_file_is(tmp_path) -> None:
    (tmp_path / "list.bat").write_bytes(b"@echo off\r\nrem list the files\r\ndir /b\r\n")
    (tmp_path / "x.vbs").write_text('CreateObject("WScript.Shell").Run "calc"\n')
    (tmp_path / "x.ps1").write_text("Remove-Item -Recurse C:\\x\n")
    not_held("./list.bat", cwd=str(tmp_path))
    not_held("cmd /c list.bat", cwd=str(tmp_path))
    held("./x.vbs", cwd=str(tmp_path))
    held("./x.ps1", cwd=str(tmp_path))


@pytest.mark.parametrize(
    "command",
    [
        "echo 'Remove-Item -Recurse C:\\x' | powershell -c -",
        "echo 'Remove-Item -Recurse C:\\x' | powershell -Command -",
    ],
)
def test_powershell_code_given_as_dash_is_read_from_its_input(command: str) -> None:
    held(command)
    not_held(command.replace("Remove-Item -Recurse C:\\x", "Get-ChildItem"))
