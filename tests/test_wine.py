"""Windows under Wine: the app's Windows branches run for real, in a Windows CPython (issue 14).

`pytest -m wine` (deselected by default). tests/wine_env.py sets up, once and cached, a Wine prefix
with the pinned Windows CPython and the project installed by pip inside Wine; every test here drives
real Windows processes in it. A green run shows that the Windows code paths start, talk and end;
it does not show how real Windows behaves where Wine differs (ACLs and pipe DACLs, MSIX
redirection, FILE_FLAG_FIRST_PIPE_INSTANCE, look and feel, SmartScreen, signing), nor Git Bash's
own behaviour: the `bash.exe` here is busybox-w32.
"""

from __future__ import annotations

import contextlib
import json
import pkgutil
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

import app
from app.core.execution.run_result import LEFT_RUNNING_NOTE
from tests.wine_env import ROOT, WineEnv, parse_json_line

pytestmark = [pytest.mark.wine, pytest.mark.timeout(600)]

SCRIPTS = ROOT / "tests" / "wine_scripts"
SCRIPT_TIMEOUT_S = 180
READY_TIMEOUT_S = 60
PIPE_DRAIN_S = 5.0  # after a Windows script exits, how long its output may take to arrive


def script(
    wine: WineEnv, name: str, *args: str, env: dict[str, str] | None = None, timeout: float = SCRIPT_TIMEOUT_S
) -> dict:
    """Run tests/wine_scripts/<name> in Windows Python and return the JSON line it printed last."""
    completed = wine.python_run([wine.win(SCRIPTS / name), *args], timeout=timeout, env=env)
    return json.loads(parse_json_line(completed.stdout))


def _tk_modules() -> set[str]:
    """Modules that import tkinter at the top: Tk windows."""
    found = set()
    for path in (ROOT / "app").rglob("*.py"):
        if re.search(r"^(import tkinter|from tkinter)", path.read_text(), re.MULTILINE):
            found.add(".".join(path.relative_to(ROOT).with_suffix("").parts))
    return found


def test_every_module_of_the_app_imports_under_windows_python(wine: WineEnv) -> None:
    """Python's embeddable Windows build (the lane's interpreter) has no Tcl/Tk: the Tk windows
    cannot import here, and nothing else may fail. The installed app's Python has Tk."""
    expected = {m.name for m in pkgutil.walk_packages(app.__path__, "app.")}
    result = script(wine, "import_all.py")
    assert result["platform"] == "win32"
    tk_windows = _tk_modules()
    assert tk_windows and all(name.startswith("app.ui.") for name in tk_windows)
    assert set(result["failed"]) == tk_windows
    for trace in result["failed"].values():
        assert "No module named 'tkinter'" in trace, trace
    assert set(result["imported"]) == expected - tk_windows


def _start_listener(wine: WineEnv, key: str):  # noqa: ANN202 - a Popen
    listener = wine.popen([str(wine.python), wine.win(SCRIPTS / "pipe_peer.py"), "listen", key])
    assert listener.stdout is not None
    deadline = time.monotonic() + READY_TIMEOUT_S
    line = listener.stdout.readline()
    if b"ready" not in line:
        listener.kill()
        error = listener.stderr.read() if listener.stderr else b""
        raise AssertionError(f"the listener did not start: {line!r} {error!r}")
    assert time.monotonic() < deadline
    return listener


def test_the_tray_pipe_carries_json_both_ways_and_each_side_sees_the_others_process(wine: WineEnv) -> None:
    """A listener in one Windows Python, a client in another: JSON round trip; pid, image, user and
    arguments of the other side from the OS (arguments: a source install's peer is python.exe).

    Wine 8 does not enforce FILE_FLAG_FIRST_PIPE_INSTANCE nor the pipe's DACL, so neither the
    squatting check nor "only this user" is proven here: those need real Windows.
    """
    key = "0123abcd4567ef89"
    listener = _start_listener(wine, key)
    try:
        client = script(wine, "pipe_peer.py", "connect", key)
        out, err = listener.communicate(timeout=SCRIPT_TIMEOUT_S)
    finally:
        listener.kill()
    assert listener.returncode == 0, err.decode(errors="replace")
    server = json.loads(parse_json_line(out))

    assert server["request"] == {"question": "hello über pipe", "client_pid": client["pid"]}
    assert client["answer"] == {"answer": "HELLO ÜBER PIPE", "server_pid": server["pid"]}
    assert server["peer_pid"] == client["pid"] and client["peer_pid"] == server["pid"]
    for side in (server, client):
        assert side["peer_image"].lower().endswith("\\python\\python.exe"), side
        assert side["peer_image"].lower() == side["image"].lower()
        assert side["peer_sid"] == side["sid"] and side["sid"].startswith("S-1-5-")
    assert server["peer_argv"] == client["argv"] and client["argv"][-2:] == ["connect", key]
    assert client["peer_argv"] == server["argv"] and server["argv"][-2:] == ["listen", key]
    assert server["argv"][0].lower().endswith("python.exe") and server["argv"][1].endswith("pipe_peer.py")
    assert server["too_big_refused"], "a frame over the reader's limit must be refused, not read"
    assert server["name"] == client["name"] == f"\\\\.\\pipe\\cowork-terminal-{server['sid']}-{key}"


def test_closing_the_pipe_listener_ends_an_accept_waiting_in_another_thread(wine: WineEnv) -> None:
    result = script(wine, "pipe_peer.py", "cancel", "99887766")
    assert result["accept"] == "OSError"
    assert result["ended_after_close"] is True
    assert result["timeout"] == "TimeoutError"


def test_the_data_folder_is_in_the_windows_profile_outside_appdata_and_the_old_one_is_moved_over(
    wine: WineEnv,
) -> None:
    """An older version's %LOCALAPPDATA%\\cowork-terminal (paused, approvals off) and the history the MSIX
    package kept in its LocalCache: the first Windows process that opens the journal moves them over,
    with the pause and without the loosened approval mode."""
    from app.core.journal.store import Journal, Status
    from app.core.paths import AppPaths
    from app.core.policy import approval

    local = wine.user_dir / "AppData" / "Local"
    old_dir = local / "cowork-terminal"
    msix_dir = local / "Packages" / "Claude_pzs8sxrjxfjjc" / "LocalCache" / "Local" / "cowork-terminal"
    shutil.rmtree(wine.user_dir / ".cowork-terminal", ignore_errors=True)
    with Journal(AppPaths(data_dir=old_dir, log_dir=old_dir / "Logs")) as old:
        old.begin_command(command="echo from the old folder", cwd=None, status=Status.FINISHED)
        old.set_paused(True)
        approval.set_approval_mode(old, approval.ApprovalMode.NEVER)
    (old_dir / "Logs" / "tray.log").write_text("an old tray log line\n")
    with Journal(AppPaths(data_dir=msix_dir, log_dir=msix_dir / "Logs")) as redirected:
        redirected.begin_command(command="echo from the msix copy", cwd=None, status=Status.FINISHED)

    result = script(wine, "data_location.py")
    profile = result["USERPROFILE"]
    assert result["data_dir"] == profile + "\\.cowork-terminal"
    for location in result["written"]:
        assert not location.lower().startswith(result["APPDATA"].lower()), location
        assert not location.lower().startswith(result["LOCALAPPDATA"].lower()), location
    new_dir = wine.user_dir / ".cowork-terminal"
    with Journal(AppPaths(data_dir=new_dir, log_dir=new_dir / "logs")) as journal:
        assert sorted(c.command for c in journal.recent_commands()) == [
            "echo from the msix copy",
            "echo from the old folder",
        ]
        assert journal.is_paused()
        assert approval.approval_mode(journal) is approval.ApprovalMode.DESTRUCTIVE
        assert journal.get_setting("notice.data_moved")
    assert (new_dir / "logs" / "tray.log").read_text() == "an old tray log line\n"
    assert result["paused"] is True
    with Journal(AppPaths(data_dir=new_dir, log_dir=new_dir / "logs")) as journal:
        journal.set_paused(False)  # as a fresh profile, for the tests after this one
        journal.clear_history()


def test_serve_over_stdio_runs_busybox_bash_ends_timed_out_trees_and_stops_on_pause(wine: WineEnv) -> None:
    """The SDK's client on the Windows side starts `serve --headless` (the SDK's Windows process and
    job-object code), which runs commands through the busybox-w32 `bash.exe` given as COWORK_TERMINAL_BASH."""
    report = script(wine, "serve_client.py", env={"COWORK_TERMINAL_BASH": wine.bash})

    assert report["tools"] == [
        "command_list", "command_output", "command_stop", "command_wait", "execute_command",
        "execute_read_only_command",
    ], "no session on Windows"  # fmt: skip
    assert report["echo"]["exitCode"] == 0, report["echo"]
    assert report["echo"]["stdout"].replace("\r\n", "\n") == "hello from busybox\nWindows_NT\n"
    for route in ("bashrc", "bashrc_hidden"):
        assert "Changes a file Cowork Terminal guards" in report[route]["error"], report[route]
    assert not (wine.user_dir / ".bashrc").exists()

    assert report["timeout"]["timedOut"] is True and report["timeout"]["exitCode"] is None, report["timeout"]
    assert report["timeout_s"] < 20, "returns once the timeout ends the tree, not when the sleeps end"
    assert report["bash_after_timeout"] == report["bash_before"], "taskkill /T must end the whole tree"

    assert report["bash_while_running"] > report["bash_before"]
    assert report["paused"]["exitCode"] is None and "paused host access" in report["paused"]["note"], report["paused"]
    assert report["pause_stop_s"] < 20
    assert report["bash_after_pause"] == report["bash_before"]
    assert "paused" in report["refused_while_paused"]["error"]

    talking, quiet = report["talking_job"], report["quiet_job"]
    assert talking["stdout"].strip() == "ok" and talking["note"] == LEFT_RUNNING_NOTE, talking
    # Windows cannot tell them apart: a new process inherits every inheritable handle, the pipes too.
    assert quiet["note"] == talking["note"], quiet
    assert report["job_files"] == ["job.log", "quiet", "talked"], "a job that prints after its command lives on"

    statuses = [row["status"] for row in reversed(report["rows"])]
    expected = ["finished", "refused", "refused", "timed_out", "killed", "refused", "finished", "finished"]
    assert statuses == expected, report["rows"]
    profile = str(wine.win(wine.user_dir))
    assert report["data_dir"].lower() == (profile + "\\.cowork-terminal").lower()
    assert report["journal"].lower() == (profile + "\\.cowork-terminal\\journal.sqlite3").lower()
    assert (wine.user_dir / ".cowork-terminal" / "journal.sqlite3").is_file()
    assert any(name.startswith("server-") for name in report["locks"]), report["locks"]


def _cli(wine: WineEnv, *args: str, check: bool = True) -> str:
    completed = wine.python_run(["-m", "app", *args], timeout=SCRIPT_TIMEOUT_S, check=check)
    return completed.stdout.decode("utf-8", errors="replace").replace("\r\n", "\n")


OTHER_SERVER = {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "C:\\work"]}


def test_clients_and_connect_find_the_standard_and_the_msix_claude_and_write_both_files(wine: WineEnv) -> None:
    """A Windows profile with both Claude Desktops: the standard one (its install folder and a config
    Notepad saved with a UTF-8 BOM) and the MSIX one (its package folder and a config in its LocalCache,
    saved by PowerShell 5 in UTF-16). `connect --dry-run` changes nothing; `connect` writes both."""
    local = wine.user_dir / "AppData" / "Local"
    (local / "AnthropicClaude").mkdir(parents=True)
    standard = wine.user_dir / "AppData" / "Roaming" / "Claude" / "claude_desktop_config.json"
    msix_roaming = local / "Packages" / "Claude_pzs8sxrjxfjjc" / "LocalCache" / "Roaming"
    msix = msix_roaming / "Claude" / "claude_desktop_config.json"
    for path in (standard, msix):
        path.parent.mkdir(parents=True)
    document = json.dumps({"mcpServers": {"files": OTHER_SERVER}}, indent=2).replace("\n", "\r\n")
    standard.write_bytes(b"\xef\xbb\xbf" + document.encode())
    msix.write_bytes(document.encode("utf-16"))  # with its BOM
    before = {path: path.read_bytes() for path in (standard, msix)}

    report = json.loads(_cli(wine, "clients", "--json"))
    by_id = {client["client_id"]: client for client in report["clients"]}
    assert by_id["claude-desktop"]["installed"] and by_id["claude-desktop-store"]["installed"]
    assert by_id["claude-desktop"]["config_path"].lower() == wine.win(standard).lower()
    assert by_id["claude-desktop-store"]["config_path"].lower() == wine.win(msix).lower()
    assert report["entry"] == {"command": "C:\\python\\python.exe", "args": ["-I", "-m", "app", "serve"]}

    dry = _cli(wine, "connect", "--dry-run")
    assert f"claude-desktop: would write {wine.win(standard)}" in dry
    assert f"claude-desktop-store: would write {wine.win(msix)}" in dry
    assert {path: path.read_bytes() for path in (standard, msix)} == before, "a dry run changes nothing"

    _cli(wine, "connect")
    for path in (standard, msix):
        written = json.loads(path.read_bytes().decode("utf-8"))
        assert written["mcpServers"] == {"files": OTHER_SERVER, "cowork-terminal": report["entry"]}, path
        backups = list(path.parent.glob("claude_desktop_config.json.*.bak"))
        assert [b.read_bytes() for b in backups] == [before[path]], "the old file is kept, BOM and all"
    after = json.loads(_cli(wine, "clients", "--json"))
    assert {c["client_id"]: c["state"] for c in after["clients"] if c["installed"]} == {
        "claude-desktop": "current",
        "claude-desktop-store": "current",
    }


RUN_KEY = r"HKCU\Software\Microsoft\Windows\CurrentVersion\Run"


def _run_value(wine: WineEnv) -> str | None:
    """The Run value as reg.exe itself reads it back, in a process of its own."""
    completed = wine.run(["reg", "query", RUN_KEY, "/v", "Cowork Terminal"], timeout=60, check=False)
    for line in completed.stdout.decode("utf-8", errors="replace").splitlines():
        if line.strip().startswith("Cowork Terminal"):
            return line.split("REG_SZ", 1)[1].strip()
    return None


def test_autostart_on_and_off_write_and_remove_the_run_value_through_reg_exe(wine: WineEnv) -> None:
    assert _run_value(wine) is None
    assert "Start at login: on" in _cli(wine, "autostart", "on")
    assert _run_value(wine) == '"C:\\python\\pythonw.exe" -I -m app tray'  # isolated: no user site, no PYTHONPATH
    assert "Start at login: on" in _cli(wine, "autostart", "status")
    assert "Start at login: off" in _cli(wine, "autostart", "off")
    assert _run_value(wine) is None
    assert "Start at login: off" in _cli(wine, "autostart", "status")


def _x_windows(display: str) -> list[tuple[str, str, int, int, int, int]]:
    """(name, program, width, height, x, y) of the screen's top-level windows."""
    out = subprocess.run(
        ["xwininfo", "-root", "-children", "-display", display], capture_output=True, text=True, check=True
    ).stdout
    pattern = re.compile(
        r'^\s+0x[0-9a-f]+ (?:"(?P<name>[^"]*)"|\(has no name\)): \((?:"(?P<program>[^"]*)")?'
        r".*\)\s+(?P<w>\d+)x(?P<h>\d+)\+(?P<x>-?\d+)\+(?P<y>-?\d+)"
    )
    found = []
    for line in out.splitlines():
        match = pattern.match(line)
        if match:
            found.append(
                (
                    match["name"] or "",
                    match["program"] or "",
                    int(match["w"]),
                    int(match["h"]),
                    int(match["x"]),
                    int(match["y"]),
                )
            )
    return found


def _windows_processes(containing: str) -> list[str]:
    """The command lines of the Wine processes (seen from Linux, as Wine names them) that contain `containing`."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            line = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        if line.startswith(("C:\\", "c:\\")) and containing in line:
            found.append(line)
    return found


def _wait_for(condition, timeout_s: float = 60.0):  # noqa: ANN001, ANN202 - a tiny poll helper
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.3)
    return condition()


def test_the_tray_shows_its_icon_and_a_notification_with_pystrays_win32_backend_and_quits_on_request(
    wine: WineEnv, display: str, tmp_path: Path
) -> None:
    """Without Git Bash, the tray starts with the error icon and says so in a notification (its long
    text once made pystray raise: see tests/test_tray_platform.py). Wine's own tray window holds the
    icon under Xvfb, and its balloon shows the notification; `tray --quit` ends it."""
    from PIL import ImageGrab

    tray = wine.popen([str(wine.python), "-m", "app", "tray"])
    try:
        tray_window = _wait_for(lambda: [w for w in _x_windows(display) if w[0] == "Wine System Tray"])
        assert tray_window, "no tray window: the icon was never added"
        balloon = _wait_for(
            lambda: [
                w
                for w in _x_windows(display)
                if w[1] == "explorer.exe" and w[0] != "Wine System Tray" and w[2] > 100 and w[3] > 40
            ]
        )
        assert balloon, "no notification balloon appeared"
        _name, _program, width, height, x, y = tray_window[0]
        screen = ImageGrab.grab(xdisplay=display)
        screen.save(tmp_path / "screen.png")  # left for a person to look at when this fails
        icon_area = screen.convert("RGB").crop((x, y, x + min(width, height), y + height))
        assert len(icon_area.getcolors(maxcolors=1 << 16) or []) > 4, "the tray window shows no icon"
        log = (wine.user_dir / ".cowork-terminal" / "logs" / "tray.log").read_text(errors="replace")
        assert "tray started (backend win32" in log
        assert "notice: Git Bash is missing" in log and "Traceback" not in log, log

        quit_run = wine.python_run(["-m", "app", "tray", "--quit"], timeout=SCRIPT_TIMEOUT_S)
        assert "Cowork Terminal has quit." in quit_run.stderr.decode(errors="replace")
        tray.wait(timeout=30)
        assert tray.returncode == 0
    finally:
        if tray.poll() is None:
            tray.kill()


BUILD_TIMEOUT_S = 1200  # PyInstaller under Wine: about 3 min on 2 busy cores
INSTALL_TIMEOUT_S = 120
UNINSTALL_WAIT_S = 60  # Uninstall.exe /S returns at once and finishes in the background


@pytest.fixture(scope="module")
def windows_bundle(wine: WineEnv) -> Path:
    """The Windows app built by PyInstaller in Windows Python, from installer/cowork-terminal.spec."""
    build = wine.drive_c / "build"
    wine.python_run(
        [
            "-m",
            "PyInstaller",
            "--noconfirm",
            "--clean",
            "--distpath",
            wine.win(build / "dist"),
            "--workpath",
            wine.win(build / "work"),
            wine.win(ROOT / "installer" / "cowork-terminal.spec"),
        ],
        timeout=BUILD_TIMEOUT_S,
    )
    bundle = build / "dist" / "cowork-terminal"
    assert (bundle / "cowork-terminal.exe").is_file()
    return bundle


@pytest.mark.timeout(BUILD_TIMEOUT_S + 300)
def test_pyinstaller_builds_the_windows_app_under_wine_and_its_serve_answers_over_stdio(
    wine: WineEnv, windows_bundle: Path
) -> None:
    """The windowed (console=False) executable, started by the SDK's client with pipes, as Claude does."""
    completed = wine.python_run(
        [wine.win(ROOT / "installer" / "smoke_serve.py"), wine.win(windows_bundle / "cowork-terminal.exe")],
        timeout=SCRIPT_TIMEOUT_S,
        env={"COWORK_TERMINAL_BASH": wine.bash},
    )
    assert "echo ok fine" in completed.stdout.decode(errors="replace")


def _reg_value(wine: WineEnv, key: str, value: str) -> str | None:
    completed = wine.run(["reg", "query", key, "/v", value], timeout=60, check=False)
    for line in completed.stdout.decode("utf-8", errors="replace").splitlines():
        if line.strip().startswith(value + "    "):
            return line.split("    ", 3)[-1].strip()
    return None


@pytest.mark.timeout(BUILD_TIMEOUT_S + 600)
def test_the_nsis_installer_installs_silently_the_app_answers_check_and_the_uninstaller_removes_it_all(
    wine: WineEnv, windows_bundle: Path, display: str, tmp_path: Path
) -> None:
    """64-bit NSIS stubs (Target amd64-unicode; Wine here has no 32-bit side). The installed tray runs
    under Xvfb so that `check` finds the whole chain working; the uninstaller, run while the tray
    runs, quits it and removes the files, the Start-menu entry, the Run value and our Claude entry."""
    from app import __version__

    setup = tmp_path / f"CoworkTerminal-{__version__}-setup.exe"
    # zlib instead of the script's solid LZMA: the same installer, built in seconds instead of a minute.
    subprocess.run(
        [
            "makensis",
            "-V2",
            "-WX",
            "-DCOMPRESSOR=zlib",
            f"-DVERSION={__version__}",
            f"-DPAYLOAD={windows_bundle}",
            f"-DOUTFILE={setup}",
            str(ROOT / "installer" / "windows" / "cowork-terminal.nsi"),
        ],
        check=True,
        timeout=300,
    )
    config = wine.user_dir / "AppData" / "Roaming" / "Claude" / "claude_desktop_config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"mcpServers": {"files": OTHER_SERVER}}))
    # Where Git for Windows puts Git Bash, found by the installer's check and by the app itself (a
    # server Claude starts gets no COWORK_TERMINAL_BASH); removed again at the end.
    git_bash = wine.drive_c / "Program Files" / "Git" / "bin" / "bash.exe"
    git_bash.parent.mkdir(parents=True)
    shutil.copy(wine.drive_c / "tools" / "bash.exe", git_bash)
    bash: dict[str, str] = {}

    wine.run([str(setup), "/S"], timeout=INSTALL_TIMEOUT_S, env=bash)
    install_dir = wine.user_dir / "AppData" / "Local" / "Programs" / "Cowork Terminal"
    exe = install_dir / "cowork-terminal.exe"
    shortcut = wine.user_dir / "AppData" / "Roaming" / "Microsoft" / "Windows" / "Start Menu" / "Programs"
    shortcut /= "Cowork Terminal.lnk"
    assert exe.is_file() and (install_dir / "Uninstall.exe").is_file() and shortcut.is_file()
    assert _reg_value(wine, RUN_KEY, "Cowork Terminal") == f'"{wine.win(exe)}" tray'
    uninstall_key = r"HKCU\Software\Microsoft\Windows\CurrentVersion\Uninstall\CoworkTerminal"
    assert _reg_value(wine, uninstall_key, "DisplayVersion") == __version__

    connected = wine.run([str(exe), "connect", "--client", "claude-desktop"], timeout=SCRIPT_TIMEOUT_S, env=bash)
    assert b"claude-desktop: connected" in connected.stdout
    entry = json.loads(config.read_text())["mcpServers"]["cowork-terminal"]
    assert entry == {"command": wine.win(exe), "args": ["serve"]}
    tray = wine.popen([str(exe)], env=bash)  # no argument: the tray
    try:
        assert _wait_for(lambda: (wine.user_dir / ".cowork-terminal" / "locks" / "tray.lock").exists())
        checked = _wait_for(
            lambda: (
                wine.run(
                    [str(exe), "check", "--client", "claude-desktop"], timeout=SCRIPT_TIMEOUT_S, env=bash, check=False
                ).returncode
                == 0
            ),
            90,
        )
        assert checked, wine.run([str(exe), "check"], timeout=SCRIPT_TIMEOUT_S, env=bash, check=False).stdout
        # The server `check` started for its trial ends with it (Wine's desktop process, which the check
        # may have started, lives on: tests/wine_env._output_until_exit).
        assert _wait_for(lambda: not _windows_processes("cowork-terminal.exe serve"), 30), _windows_processes("")

        wine.run([str(install_dir / "Uninstall.exe"), "/S"], timeout=INSTALL_TIMEOUT_S, env=bash)
        assert _wait_for(lambda: not install_dir.exists(), UNINSTALL_WAIT_S), sorted(install_dir.rglob("*"))[:20]
        tray.wait(timeout=30)  # the uninstaller quit it before removing its files
    finally:
        if tray.poll() is None:
            tray.kill()
    assert not shortcut.exists()
    assert _reg_value(wine, RUN_KEY, "Cowork Terminal") is None
    assert _reg_value(wine, uninstall_key, "DisplayVersion") is None
    assert json.loads(config.read_text())["mcpServers"] == {"files": OTHER_SERVER}
    assert (wine.user_dir / ".cowork-terminal" / "journal.sqlite3").is_file(), "the user's history is kept"
    shutil.rmtree(wine.drive_c / "Program Files" / "Git")


def test_a_command_joins_its_job_before_it_runs_and_the_job_tells_its_processes_from_others(wine: WineEnv) -> None:
    """Issue 21: started suspended, assigned, resumed; IsProcessInJob with a full-rights handle and its
    return checked (Wine fails a limited handle and would read as "not in the job")."""
    report = script(wine, "command_jobs.py")
    assert report["ran_while_suspended"] is False and report["ran_after_resume"] is True, report
    assert report["job"] is True
    assert report["command_in_job"] is True and report["detached_grandchild_in_job"] is True, report
    assert report["outsider_in_job"] is False and report["self_in_job"] is False, report
    assert report["grandchild_in_job_after_close"] is True, "a job's leftover is still told after its command"
    assert report["jobs_after_leftover_ended"] == 0, "the handle is let go once nothing runs in the job"


def _tray_log(wine: WineEnv) -> str:
    return (wine.user_dir / ".cowork-terminal" / "logs" / "tray.log").read_text(errors="replace")


def _reset_pause(wine: WineEnv) -> None:
    """As a fresh profile for the tests after this one: not paused, asking (no tray runs now to ask)."""
    from app.core.journal.store import Journal
    from app.core.paths import AppPaths
    from app.core.policy import approval

    data = wine.user_dir / ".cowork-terminal"
    with Journal(AppPaths(data_dir=data, log_dir=data / "logs")) as journal:
        journal.set_paused(False)
        approval.set_approval_mode(journal, approval.ApprovalMode.DESTRUCTIVE)


def _start_tray(wine: WineEnv):  # noqa: ANN202 - a Popen
    """A Windows tray with busybox bash as its Git Bash, not in any job (started by Wine's loader). The
    user chose earlier never to be asked, so the test's Python commands run unheld."""
    from app.core.journal.store import Journal
    from app.core.paths import AppPaths
    from app.core.policy import approval

    data = wine.user_dir / ".cowork-terminal"
    with Journal(AppPaths(data_dir=data, log_dir=data / "logs")) as journal:
        approval.set_approval_mode(journal, approval.ApprovalMode.NEVER)
    return wine.popen([str(wine.python), "-m", "app", "tray"], env={"COWORK_TERMINAL_BASH": wine.bash})


def _drain(stream, into: list[bytes]) -> threading.Thread:  # noqa: ANN001 - a pipe
    def read() -> None:
        for chunk in iter(lambda: stream.read1(1 << 16), b""):
            into.append(chunk)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def _tray_script(wine: WineEnv, tray, name: str, *args: str) -> dict:  # noqa: ANN001 - a Popen
    """script(), waiting for the script's own exit rather than for its pipes to close (a Windows
    process started under it may hold them open: a run once printed its report and then seemed to
    hang for minutes); when it fails, what it, the tray and the tray's log said."""
    process = wine.popen([str(wine.python), wine.win(SCRIPTS / name), *args])
    out: list[bytes] = []
    err: list[bytes] = []
    readers = [_drain(process.stdout, out), _drain(process.stderr, err)]
    try:
        process.wait(timeout=SCRIPT_TIMEOUT_S)
        for reader in readers:
            reader.join(PIPE_DRAIN_S)
        return json.loads(parse_json_line(b"".join(out)))
    except (AssertionError, ValueError, subprocess.TimeoutExpired) as exc:
        process.kill()
        tray.kill()
        tray_err: list[bytes] = []
        _drain(tray.stderr, tray_err).join(PIPE_DRAIN_S)
        log = _tray_log(wine)[-4000:] if (wine.user_dir / ".cowork-terminal" / "logs" / "tray.log").exists() else ""
        printed, said = (b"".join(part).decode(errors="replace") for part in (out, err))
        tray_said = b"".join(tray_err).decode(errors="replace")
        raise AssertionError(
            f"{name}: {exc!r}\nit printed: {printed[-2000:]}\nit said: {said}\ntray said: {tray_said}\ntray log: {log}"
        ) from None


def _quit_tray(wine: WineEnv, tray) -> None:  # noqa: ANN001 - a Popen
    try:
        if tray.poll() is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                wine.python_run(["-m", "app", "tray", "--quit"], timeout=SCRIPT_TIMEOUT_S, check=False)
                tray.wait(timeout=30)
    finally:
        if tray.poll() is None:
            tray.kill()
        _reset_pause(wine)


def test_a_serve_bound_to_the_windows_tray_has_its_commands_run_by_the_tray_in_the_trays_job(
    wine: WineEnv, display: str
) -> None:
    """Issue 21 on Windows: `serve` (not headless) forwards each call over the named pipe; the tray's
    runner starts bash in a job of its own. A Windows Python run as a command finds itself in a job,
    under bash, under the tray (not under `serve`); a timed-out tree ends; the CLI's pause ends a
    running command and refuses the next."""
    tray = _start_tray(wine)
    try:
        report = _tray_script(wine, tray, "tray_client.py", wine.win(SCRIPTS / "job_probe.py"))
    finally:
        _quit_tray(wine, tray)
    tray_pid = report["tray_pid"]

    assert report["echo"]["exitCode"] == 0, report["echo"]
    assert report["echo"]["stdout"].replace("\r\n", "\n") == "hi\n"

    assert report["probe"]["exitCode"] == 0, report["probe"]
    probe = json.loads(report["probe"]["stdout"])
    assert probe["in_job_call_ok"] and probe["in_job"], probe
    assert probe["breakaway"] == "PermissionError: winerror 5", "the job must allow no breakaway"
    images = [image for _pid, image, _argv in probe["chain"]]
    assert images[:2] == ["python.exe", "bash.exe"], probe["chain"]
    parent_pids = [pid for pid, _image, _argv in probe["chain"][1:]]
    assert tray_pid in parent_pids, (tray_pid, probe["chain"])
    assert not any("serve" in argv for _pid, _image, argv in probe["chain"]), "run by serve, not by the tray"

    rows = {row["command"]: row for row in reversed(report["rows"])}  # the newest of each
    assert rows["echo hi"]["status"] == "finished" and rows["echo hi"]["server_pid"] == tray_pid, report["rows"]
    assert len({server["pid"] for server in report["servers"]} - {tray_pid}) == 1, "one serve and the tray's runner"

    assert report["timeout"]["timedOut"] is True and report["timeout"]["exitCode"] is None, report["timeout"]
    assert report["timeout_s"] < 20, "returns once the timeout ends the tree, not when the sleeps end"
    assert report["bash_after_timeout"] == report["bash_before"], "the job must end the whole tree"

    assert report["bash_while_running"] > report["bash_before"]
    assert report["pause_cli"]["code"] == 0, report["pause_cli"]
    assert report["paused"]["exitCode"] is None and "paused host access" in report["paused"]["note"], report["paused"]
    assert report["pause_stop_s"] < 20
    assert report["bash_after_pause"] == report["bash_before"]
    assert "paused" in report["refused_while_paused"]["error"], report["refused_while_paused"]


CONTAINED = "Refused: this request comes from inside a command's container"


def test_a_command_in_the_trays_job_may_pause_but_not_resume_quit_or_open_the_log_and_the_same_from_outside_works(
    wine: WineEnv, display: str
) -> None:
    """Provenance by job membership (issue 21): a Windows Python run as a command asks the tray over its
    pipe; the tray asks IsProcessInJob with its own job handles. Refused without a window: resume,
    quit, open the log (and a state read); accepted: pause. The same from a job left behind by a
    command that has ended (its job once lost its handle with its command: that leftover quit the
    tray). From outside the job, open_log and quit are done and resume goes to the user's question
    (here: no Tk, so the window cannot open)."""
    log_before = len(_tray_log(wine)) if (wine.user_dir / ".cowork-terminal" / "logs" / "tray.log").exists() else 0
    tray = _start_tray(wine)
    try:
        report = _tray_script(wine, tray, "tray_provenance.py", wine.win(SCRIPTS / "contained_asker.py"))
        tray.wait(timeout=30)  # the outside quit
    finally:
        _quit_tray(wine, tray)
    log = _tray_log(wine)[log_before:]

    assert report["state_before"]["paused"] is False, report
    assert report["left_command"]["exitCode"] == 0, "its command ended before the job it left asked"
    for side in ("left_behind", "inside"):
        for op in ("resume", "quit", "open_log", "state"):
            assert report[side][op].startswith("TrayRefused: " + CONTAINED), (side, op, report[side])
    for op in ("resume", "quit", "open_log", "state"):  # each reached the tray, and was refused there
        assert log.count(f"refused {op!r} from cli pid") == 2, log
    assert report["state_after_inside"]["paused"] is True, "a pause from inside the job is a tightening: done"
    assert "host access paused (a request)" in log
    assert "stopped because the user paused host access" in report["command"]["note"], report["command"]

    inside_part, _, outside_part = log.partition("host access paused (a request)")
    assert "notice: The activity log cannot open" not in inside_part, "no window for a contained request"
    assert "confirmation window" not in inside_part and "log window started" not in inside_part

    outside = report["outside"]
    assert outside["open_log"] == "accepted: Opened the activity log.", outside
    assert "notice: The activity log cannot open" in outside_part, "the tray tried to open it (no Tk here)"
    assert not outside["resume"].startswith("TrayRefused: " + CONTAINED), outside
    assert outside["resume"] == "TrayRefused: The confirmation window could not open, so nothing changed."
    assert report["state_after_outside"]["paused"] is True, "a resume nobody clicked changes nothing"
    assert outside["quit"] == "accepted: Cowork Terminal is quitting.", outside
    assert tray.returncode == 0
