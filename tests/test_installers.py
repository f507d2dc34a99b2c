"""The frozen app and its installers, built for real on this machine (slow: minutes, not seconds).

Run with `pytest -m slow tests/test_installers.py`. installer/build_linux.sh builds the one-folder
bundle, its archive and the .deb once; a build newer than every file it is made from is reused.
Then the frozen executable serves MCP over stdio to the SDK's client, its tray starts under Xvfb
and quits, the .deb is installed into a temporary root with dpkg, and the Windows installer
script is compiled by Debian's makensis against a stand-in payload.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from app import __version__
from app.core.paths import HOME_ENV

ROOT = Path(__file__).resolve().parents[1]
INSTALLER = ROOT / "installer"
OUT = INSTALLER / "out"
APP = "cowork-terminal"
BUNDLE = OUT / "dist" / APP
EXE = BUNDLE / APP
# What the Linux build is made from: any of these newer than the .deb means rebuild.
BUILD_SOURCES = (
    "app",
    "assets/generated",
    "installer/entry.py",
    "installer/runtime_hook_environment.py",
    "installer/cowork-terminal.spec",
    "installer/build_linux.sh",
    "installer/linux",
    "pyproject.toml",
)
ICON_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)

# A first build also makes the build venv and compiles PyGObject: about 2.5 min here; a rebuild
# with the venv in place about 1.5 min. The limit leaves room for a slower machine.
BUILD_TIMEOUT_S = 900
SERVE_TIMEOUT_S = 60
TRAY_START_TIMEOUT_S = 30
TRAY_QUIT_TIMEOUT_S = 15
WINDOW_UP_S = 3.0  # a window that fails (no Tcl scripts, no display) exits well within this
TOOL_TIMEOUT_S = 30
POLL_S = 0.2

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="builds and installs the Linux bundle"),
    # The default per-test limit (120 s) would end the module's first test in the middle of the build.
    pytest.mark.timeout(BUILD_TIMEOUT_S + 120),
]


@dataclass(frozen=True)
class LinuxBuild:
    exe: Path
    tarball: Path
    deb: Path


def _newest_mtime(paths: list[Path]) -> float:
    newest = 0.0
    for path in paths:
        files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
        for file in files:
            if "__pycache__" not in file.parts:  # written by every test run, not a build input
                newest = max(newest, file.stat().st_mtime)
    return newest


def _artefacts() -> LinuxBuild | None:
    debs = sorted(OUT.glob(f"{APP}_*.deb"), key=lambda p: p.stat().st_mtime)
    tarballs = sorted(OUT.glob(f"{APP}-*-linux-*.tar.gz"), key=lambda p: p.stat().st_mtime)
    if not (debs and tarballs and EXE.is_file()):
        return None
    return LinuxBuild(exe=EXE, tarball=tarballs[-1], deb=debs[-1])


def _require_tool(name: str, package: str) -> str:
    path = shutil.which(name)
    if path is None:
        # CI installs every tool these tests use; on a developer's machine say what is missing.
        pytest.fail(f"{name} is not installed: apt-get install {package}")
    return path


@pytest.fixture(scope="module")
def linux_build() -> LinuxBuild:
    built = _artefacts()
    sources = [ROOT / s for s in BUILD_SOURCES]
    if built is not None and min(built.deb.stat().st_mtime, built.exe.stat().st_mtime) > _newest_mtime(sources):
        return built
    env = {k: v for k, v in os.environ.items() if k != "PYTHON"}  # let the script use its own build venv
    result = subprocess.run(
        ["bash", str(INSTALLER / "build_linux.sh")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False,
    )  # fmt: skip
    if result.returncode != 0:
        pytest.fail(f"installer/build_linux.sh failed ({result.returncode}):\n{result.stderr[-4000:]}")
    built = _artefacts()
    assert built is not None, "the build script succeeded but its outputs are missing"
    return built


# --- the frozen executable --------------------------------------------------------------------


def desktop_env(tmp_path: Path, display: str, **extra: str) -> dict[str, str]:
    """For a frozen tray or window: a private app home, and a user home of its own, since the tray's
    first look rewrites start-at-login and Claude entries that name another copy of the app."""
    user = tmp_path / "user"
    return {
        **os.environ, HOME_ENV: str(tmp_path / "home"), "DISPLAY": display, "HOME": str(user),
        "XDG_CONFIG_HOME": str(user / ".config"), "XDG_DATA_HOME": str(user / ".local" / "share"), **extra,
    }  # fmt: skip


def frozen_server(home: Path, extra_env: dict[str, str] | None = None) -> StdioServerParameters:
    # The SDK's stdio client passes only a few variables on by default: give the child its home
    # (and nothing of the test's own) explicitly.
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "USER", "LOGNAME", "SHELL")}
    env[HOME_ENV] = str(home)
    env.update(extra_env or {})
    return StdioServerParameters(command=str(EXE), args=["serve", "--headless"], env=env)


async def run_through_frozen_serve(home: Path, command: str, mode: str) -> dict:
    with anyio.fail_after(SERVE_TIMEOUT_S):
        async with Client(frozen_server(home), mode=mode) as client:
            result = await client.call_tool("execute_command", {"command": command})
    assert not result.is_error, result.content
    return result.structured_content


def test_frozen_executable_reports_the_package_version(linux_build: LinuxBuild) -> None:
    # The version comes from installed metadata, which the spec must copy into the bundle.
    out = subprocess.run([str(linux_build.exe), "--version"], capture_output=True, text=True, timeout=30, check=True)
    assert out.stdout.strip() == f"{APP} {__version__}"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_frozen_serve_runs_a_command_for_the_sdk_client_over_stdio(
    linux_build: LinuxBuild, tmp_path: Path, mode: str
) -> None:
    result = anyio.run(run_through_frozen_serve, tmp_path / "home", "echo ok", mode)
    assert result["stdout"] == "ok\n"
    assert result["exitCode"] == 0
    assert not result["timedOut"]


# Set for the bundle by the bootloader (LD_LIBRARY_PATH) and PyInstaller's runtime hooks (GTK, GLib,
# GdkPixbuf, Tk): none was in the environment the tests launch the frozen app with.
RUNTIME_VARIABLES = (
    "LD_LIBRARY_PATH", "GDK_PIXBUF_MODULE_FILE", "GTK_PATH", "GTK_DATA_PREFIX", "GTK_EXE_PREFIX", "GI_TYPELIB_PATH",
    "GIO_MODULE_DIR", "PANGO_LIBDIR", "TCL_LIBRARY", "TK_LIBRARY", "XDG_DATA_DIRS",
)  # fmt: skip


def command_environment_of_frozen_serve(home: Path, extra_env: dict[str, str] | None = None) -> dict[str, str]:
    async def run() -> dict:
        with anyio.fail_after(SERVE_TIMEOUT_S):
            async with Client(frozen_server(home, extra_env), mode="legacy") as client:
                result = await client.call_tool("execute_command", {"command": "env -0"})
        assert not result.is_error, result.content
        return result.structured_content

    output = anyio.run(run)["stdout"]  # each NUL as the model reads it: its control picture, U+2400
    return dict(item.split("=", 1) for item in output.split("\u2400") if "=" in item)


def test_commands_run_by_frozen_serve_see_no_variable_pointing_into_the_bundle(
    linux_build: LinuxBuild, tmp_path: Path
) -> None:
    # The bootloader sets LD_LIBRARY_PATH to the bundle and runtime hooks set TCL_LIBRARY,
    # GI_TYPELIB_PATH, XDG_DATA_DIRS... there: a user's git or python must not load our copies.
    env = command_environment_of_frozen_serve(tmp_path / "home")
    leaked = [f"{k}={v}" for k, v in env.items() if str(BUNDLE) in v]
    assert leaked == []


def test_commands_run_by_frozen_serve_get_no_variable_the_bundles_runtime_set(
    linux_build: LinuxBuild, tmp_path: Path
) -> None:
    # Not even one pointing outside the bundle: GDK_PIXBUF_MODULE_FILE names a temporary file, and
    # the GLib hook adds /usr/local/share:/usr/share to an XDG_DATA_DIRS the user never set.
    env = command_environment_of_frozen_serve(tmp_path / "home")
    assert [name for name in RUNTIME_VARIABLES if name in env] == []
    theirs = "/home/ann/.local/share/flatpak/exports/share:/usr/share"
    env = command_environment_of_frozen_serve(tmp_path / "home", {"XDG_DATA_DIRS": theirs})
    assert env["XDG_DATA_DIRS"] == theirs


def test_a_killed_frozen_log_window_leaves_no_temporary_file(
    linux_build: LinuxBuild, tmp_path: Path, display: str
) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = desktop_env(tmp_path, display, TMPDIR=str(temp))
    window = subprocess.Popen(
        [str(linux_build.exe), "log-window"], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        time.sleep(WINDOW_UP_S)
        alive = window.poll() is None
    finally:
        window.kill()
        _, stderr = window.communicate(timeout=TRAY_QUIT_TIMEOUT_S)
    assert alive, f"the log window exited at start ({window.returncode}):\n{stderr}"
    assert list(temp.iterdir()) == []


def test_frozen_log_window_and_tray_toolkits_are_in_the_bundle(linux_build: LinuxBuild) -> None:
    internal = BUNDLE / "_internal"
    assert (internal / "_tcl_data").is_dir() and (internal / "_tk_data").is_dir(), "Tk's scripts are missing"
    # PyGObject with GTK and AppIndicator: pystray's backend with a menu on Linux.
    assert (internal / "gi_typelibs" / "AyatanaAppIndicator3-0.1.typelib").is_file()
    assert (internal / "app" / "ui" / "icons" / "idle-64.png").is_file(), "the tray's icons are missing"


def test_frozen_log_window_opens_under_xvfb(linux_build: LinuxBuild, tmp_path: Path, display: str) -> None:
    # Tk in the bundle: its scripts (TCL_LIBRARY from the runtime hook), libtk and the fonts.
    env = desktop_env(tmp_path, display)
    window = subprocess.Popen(
        [str(linux_build.exe), "log-window"],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        time.sleep(WINDOW_UP_S)
        alive = window.poll() is None
    finally:
        window.terminate()
        _, stderr = window.communicate(timeout=TRAY_QUIT_TIMEOUT_S)
    assert alive, f"the log window exited at start ({window.returncode}):\n{stderr}"
    assert "Traceback" not in stderr, stderr


def test_frozen_tray_starts_under_xvfb_and_quits_when_asked(
    linux_build: LinuxBuild, tmp_path: Path, display: str
) -> None:
    dbus_run_session = _require_tool("dbus-run-session", "dbus")
    home = tmp_path / "home"
    env = desktop_env(tmp_path, display)
    # A desktop session always has a session bus; AppIndicator talks to the panel over it.
    tray = subprocess.Popen(
        [dbus_run_session, "--", str(linux_build.exe), "tray", "--verbose"],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        status = _wait_for_tray(linux_build.exe, env, tray)
        assert status["tray_running"], status
        quit_result = subprocess.run(
            [str(linux_build.exe), "tray", "--quit"], env=env, capture_output=True, text=True,
            timeout=TRAY_QUIT_TIMEOUT_S, check=False,
        )  # fmt: skip
        assert quit_result.returncode == 0, quit_result.stderr
        _, stderr = tray.communicate(timeout=TRAY_QUIT_TIMEOUT_S)
    finally:
        if tray.poll() is None:
            tray.kill()
            tray.wait()
    assert "Traceback" not in stderr, stderr
    assert tray.returncode == 0, stderr
    assert "backend appindicator" in (home / "logs" / "tray.log").read_text(), "the bundle fell back to xorg"


def _wait_for_tray(exe: Path, env: dict[str, str], tray: subprocess.Popen) -> dict:
    deadline = time.monotonic() + TRAY_START_TIMEOUT_S
    status: dict = {}
    while time.monotonic() < deadline:
        if tray.poll() is not None:
            pytest.fail(f"the tray exited at start ({tray.returncode}):\n{tray.stderr.read()}")
        out = subprocess.run([str(exe), "status", "--json"], env=env, capture_output=True, text=True, timeout=30)
        if out.returncode == 0:
            status = json.loads(out.stdout)
            if status.get("tray_running"):
                return status
        time.sleep(POLL_S)
    pytest.fail(f"the tray did not report itself running within {TRAY_START_TIMEOUT_S} s: {status}")


# --- the archive and the .deb ------------------------------------------------------------------


def test_archive_holds_the_bundle_owned_by_root(linux_build: LinuxBuild) -> None:
    with tarfile.open(linux_build.tarball) as archive:
        members = {m.name: m for m in archive.getmembers()}
    exe = members[f"{APP}/{APP}"]
    assert exe.mode & 0o111, "the executable lost its execute bits"
    assert {(m.uid, m.gid) for m in members.values()} == {(0, 0)}


def test_deb_declares_what_a_desktop_needs(linux_build: LinuxBuild) -> None:
    def field(name: str) -> str:
        return subprocess.run(
            ["dpkg-deb", "--field", str(linux_build.deb), name], capture_output=True, text=True, check=True
        ).stdout.strip()

    assert field("Package") == APP
    assert field("Version").startswith(__version__.split(".dev")[0].split("+")[0])
    # The bundle carries everything but glibc and the graphics-stack libraries it must share.
    depends = field("Depends")
    assert depends.startswith("libc6 (>= 2.")
    assert "libgtk" not in depends and "python3" not in depends, "a bundled library became a dependency"


def _dpkg(root: Path, log: Path) -> list[str]:
    admin = root / "var" / "lib" / "dpkg"
    for folder in (admin / "info", admin / "updates"):
        folder.mkdir(parents=True, exist_ok=True)
    (admin / "status").touch()
    return [
        "dpkg", f"--root={root}", f"--log={log}",
        # An empty package database: libc6 and friends are "missing" there, not on the machine.
        "--force-depends", "--force-not-root", "--force-script-chrootless",
    ]  # fmt: skip


def test_the_debs_dependencies_are_worked_out_by_a_normal_user_without_sbin_on_path(linux_build: LinuxBuild) -> None:
    # What build_linux.sh does at its .deb step, run as a user would: ldconfig is in /sbin there.
    as_user = []
    if os.geteuid() == 0:
        as_user = [_require_tool("setpriv", "util-linux"), "--reuid=65534", "--regid=65534", "--clear-groups"]
    script = 'source "$1" && bundle_depends "$2"'
    result = subprocess.run(
        [*as_user, "/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "/bin/bash", "-c", script, "bash",
         str(INSTALLER / "linux" / "build_tools.sh"), str(BUNDLE)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    shipped = subprocess.run(["dpkg-deb", "--field", str(linux_build.deb), "Depends"], capture_output=True, text=True)
    assert result.stdout == shipped.stdout.strip()


def test_deb_installs_into_a_temporary_root_and_removes_cleanly(linux_build: LinuxBuild, tmp_path: Path) -> None:
    root = tmp_path / "root"
    dpkg = _dpkg(root, tmp_path / "dpkg.log")
    subprocess.run([*dpkg, "--install", str(linux_build.deb)], capture_output=True, text=True, check=True)

    exe = root / "opt" / APP / APP
    assert exe.is_file() and os.access(exe, os.X_OK)
    link = root / "usr" / "bin" / APP
    assert link.is_symlink() and os.readlink(link) == f"/opt/{APP}/{APP}"
    desktop = root / "usr" / "share" / "applications" / f"{APP}.desktop"
    validate = subprocess.run(
        [_require_tool("desktop-file-validate", "desktop-file-utils"), str(desktop)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert validate.returncode == 0 and not validate.stdout.strip(), validate.stdout + validate.stderr
    entry = desktop.read_text()
    assert f"Exec={APP}\n" in entry and f"Icon={APP}\n" in entry
    for size in ICON_SIZES:
        assert (root / "usr" / "share" / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{APP}.png").is_file()
    assert (root / "usr" / "share" / "doc" / APP / "copyright").is_file()
    installed = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=30, check=True)
    assert installed.stdout.strip() == f"{APP} {__version__}"

    subprocess.run([*dpkg, "--purge", APP], capture_output=True, text=True, check=True)
    assert not (root / "opt" / APP).exists() and not link.is_symlink() and not desktop.exists()


def test_removing_the_deb_stops_its_running_tray_and_server_but_not_another_copy(
    linux_build: LinuxBuild, tmp_path: Path, display: str
) -> None:
    root = tmp_path / "root"
    dpkg = _dpkg(root, tmp_path / "dpkg.log")
    subprocess.run([*dpkg, "--install", str(linux_build.deb)], capture_output=True, text=True, check=True)
    installed = root / "opt" / APP / APP
    env = desktop_env(tmp_path, display)
    # The installed copy's tray and one of its servers; and a server of another copy (the build's
    # own bundle, which has the same program name), which the package must leave alone.
    tray = subprocess.Popen(
        [_require_tool("dbus-run-session", "dbus"), "--", str(installed), "tray"],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    own_server = subprocess.Popen([str(installed), "serve", "--headless"], env=env, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)  # fmt: skip
    other_copy = subprocess.Popen([str(linux_build.exe), "serve", "--headless"], env=env, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        _wait_for_tray(installed, env, tray)
        removed = subprocess.run([*dpkg, "--remove", APP], capture_output=True, text=True, timeout=120)
        assert removed.returncode == 0, removed.stdout + removed.stderr
        assert "Stopping Cowork Terminal" in removed.stdout
        assert tray.wait(TRAY_QUIT_TIMEOUT_S) is not None
        assert own_server.wait(TRAY_QUIT_TIMEOUT_S) is not None
        assert other_copy.poll() is None, "the package stopped a program of another copy"
        # What the package cannot remove itself, each user is told.
        assert "claude mcp remove --scope user cowork-terminal" in removed.stdout
        assert "~/.config/autostart/cowork-terminal.desktop" in removed.stdout
        assert not installed.exists()
    finally:
        for process in (tray, own_server, other_copy):
            if process.poll() is None:
                process.kill()
                process.wait()


def test_the_archive_carries_a_readme_and_a_menu_entry_step_that_uninstall_undoes(
    linux_build: LinuxBuild, tmp_path: Path
) -> None:
    with tarfile.open(linux_build.tarball) as archive:
        archive.extractall(tmp_path / "Applications", filter="tar")
    folder = tmp_path / "Applications" / APP
    assert "cowork-terminal uninstall" in (folder / "README.txt").read_text()
    home = tmp_path / "user"
    env = {
        **{k: v for k, v in os.environ.items() if k.startswith("XDG_") is False},
        "HOME": str(home), HOME_ENV: str(tmp_path / "app-home"), "PATH": "/usr/bin:/bin",
    }  # fmt: skip
    step = subprocess.run([str(folder / "install-desktop-entry")], env=env, capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert step.returncode == 0, step.stderr
    entry = home / ".local" / "share" / "applications" / f"{APP}.desktop"
    assert f"TryExec={folder / APP}\n" in entry.read_text()
    for size in ICON_SIZES:
        assert (home / ".local" / "share" / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{APP}.png").is_file()
    validate = subprocess.run([_require_tool("desktop-file-validate", "desktop-file-utils"), str(entry)],
                              capture_output=True, text=True)  # fmt: skip
    assert validate.returncode == 0 and not validate.stdout.strip(), validate.stdout + validate.stderr

    gone = subprocess.run([str(folder / APP), "uninstall", "--yes"], env=env, capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert gone.returncode == 0, gone.stderr
    assert not entry.exists() and not list((home / ".local" / "share" / "icons").rglob(f"{APP}.png"))
    assert gone.stdout.rstrip().endswith(f"delete its folder: rm -r '{folder}'")


# --- Windows -----------------------------------------------------------------------------------


def test_nsis_script_compiles_against_a_stand_in_payload(tmp_path: Path) -> None:
    makensis = _require_tool("makensis", "nsis")
    payload = tmp_path / "payload"
    (payload / "_internal").mkdir(parents=True)
    (payload / f"{APP}.exe").write_bytes(b"MZ stand-in")
    (payload / "_internal" / "python3.dll").write_bytes(b"stand-in")
    setup = tmp_path / f"CoworkTerminal-{__version__}-setup.exe"
    # -WX: a warning (an unused variable, a page that cannot work) is as bad as an error.
    result = subprocess.run(
        [makensis, "-V2", "-WX", f"-DVERSION={__version__}", f"-DPAYLOAD={payload}", f"-DOUTFILE={setup}",
         str(INSTALLER / "windows" / "cowork-terminal.nsi")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert setup.read_bytes()[:2] == b"MZ"


NSIS_SCRIPT = INSTALLER / "windows" / "cowork-terminal.nsi"


def _nsis_define(name: str) -> str:
    match = re.search(rf'^!define {name} "(.*)"$', NSIS_SCRIPT.read_text(), re.MULTILINE)
    assert match, f"{name} is not defined in {NSIS_SCRIPT.name}"
    return match.group(1)


def test_nsis_start_at_login_value_is_the_one_the_tray_writes() -> None:
    # Otherwise the tray's "Start at login" shows unticked after the installer turned it on, and
    # turning it off leaves the installer's value behind.
    from app.core.install import autostart

    install_dir = r"C:\Users\Ann Lee\AppData\Local\Programs\Cowork Terminal"
    exe = rf"{install_dir}\{_nsis_define('APP_EXE')}"
    written = re.search(r'WriteRegStr HKCU "\$\{RUN_KEY\}" "\$\{RUN_VALUE\}" \'(.*)\'', NSIS_SCRIPT.read_text())
    assert written, "the installer no longer writes the Run value"
    data = written.group(1).replace("$INSTDIR", install_dir).replace("${APP_EXE}", _nsis_define("APP_EXE"))
    assert _nsis_define("RUN_VALUE") == autostart.RUN_VALUE
    assert "HKCU\\" + _nsis_define("RUN_KEY") == autostart.RUN_KEY
    assert data == autostart.windows_command_line(autostart.launch_command(True, exe))


def test_nsis_uninstaller_runs_the_apps_own_uninstall_without_asking() -> None:
    from app.cli.main import build_parser

    ran = re.search(r"nsExec::ExecToLog '\"\$INSTDIR\\\$\{APP_EXE\}\" (.*)'", NSIS_SCRIPT.read_text())
    assert ran, "the uninstaller no longer runs the app"
    args = build_parser().parse_args(ran.group(1).split())
    assert (args.command, args.yes, args.data, args.dry_run) == ("uninstall", True, False, False)


def test_nsis_git_bash_check_looks_where_the_app_looks() -> None:
    from app.core.execution.bash_resolver import bash_candidates

    environ = {"ProgramFiles": r"C:\PF64", "ProgramFiles(x86)": r"C:\PF32", "LOCALAPPDATA": r"C:\LAD"}
    nsis_vars = {"$PROGRAMFILES64": r"C:\PF64", "$PROGRAMFILES32": r"C:\PF32", "$LOCALAPPDATA": r"C:\LAD"}
    checked = []
    for path in re.findall(r'!insertmacro TRY_BASH "(\$[A-Z0-9]+\\[^"]+)"', NSIS_SCRIPT.read_text()):
        variable, rest = path.split("\\", 1)
        checked.append(nsis_vars[variable] + "\\" + rest)
    assert checked == bash_candidates("win32", environ)
