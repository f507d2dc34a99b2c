"""A Python without Tk: the tray says once what to install, and the menu answers held commands.

Tk is made unimportable in a real child interpreter by a `sitecustomize` that refuses `tkinter`
and `_tkinter`, as on a Debian Python without python3-tk.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest
from desktop_env import FakeDesktop, make_fake_desktop

from app.core.paths import HOME_ENV, AppPaths
from tests.stdio_client import connect, run
from tests.test_authority import wait_until_held

BLOCK_TK = '''
import sys

class _NoTk:
    """Refuses tkinter as a Python built without Tk does."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("tkinter", "_tkinter"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, _NoTk())
'''


@pytest.fixture
def desktop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path) -> FakeDesktop:
    return make_fake_desktop(tmp_path, monkeypatch)


@pytest.fixture
def no_tk_env(tmp_path: Path, home: Path, desktop: FakeDesktop) -> dict[str, str]:
    site = tmp_path / "no-tk-site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BLOCK_TK)
    root = str(Path(__file__).resolve().parent.parent)
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), root]), "PYSTRAY_BACKEND": "dummy",
            HOME_ENV: str(home)}  # fmt: skip


def run_child(code: str, env: dict[str, str]) -> dict:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def test_the_child_really_has_no_tkinter(no_tk_env: dict[str, str]) -> None:
    result = subprocess.run([sys.executable, "-c", "import tkinter"], capture_output=True, text=True, env=no_tk_env)
    assert result.returncode != 0 and "No module named 'tkinter'" in result.stderr


TRAY = """
    import json, time
    import app.ui.tray.app as t
    from app.core.journal.store import Journal
    from app.core.paths import AppPaths
    from app.core import data_folder, liveness
    from app.ui.tray import menu
    paths = data_folder.ensure(AppPaths.from_environment())
    app = t.TrayApp(paths, liveness.try_hold(paths.tray_lock), t.load_pystray())
    app.start()
    assert app.settle(30)
    print("ready", flush=True)
    deadline = time.monotonic() + 60
    while len(app.hub.pending_holds()) < 2:  # the test's serve holds two commands
        assert time.monotonic() < deadline, "no holds"
        time.sleep(0.05)
    app.read_rules_and_holds()
    app.kick()
    assert app.settle(30)
    waiting = menu.find_entry(app.entries(), "waiting")
    held, other = sorted(h.command_id for h in app.hub.pending_holds())
    listed = [e.text for e in waiting.submenu or ()]
    allow = [e.text for e in menu.find_entry(app.entries(), f"held:{held}").submenu]
    app.pystray_item(f"allow:{held}")(app.icon)  # a disabled line: it allows nothing
    app.pystray_item(f"deny:{other}")(app.icon)
    assert app.settle(30)
    time.sleep(1)
    still_held = [h.command_id for h in app.hub.pending_holds()]
    app.pystray_item(f"deny:{held}")(app.icon)
    assert app.settle(30)
    app.pystray_item("open-log")(app.icon)
    assert app.settle(30)
    with Journal(paths) as journal:
        decisions = [(journal.get_command(i).decision, journal.get_command(i).decided_by) for i in (held, other)]
    after = menu.find_entry(app.entries(), "waiting").text
    welcome = menu.find_entry(app.entries(), "welcome").enabled
    time.sleep(2)  # the serve reads its answers
    app.shutdown()
    print(json.dumps({"windows": app.windows, "notices": app.notifier.history, "listed": listed, "allow": allow,
                      "decisions": decisions, "after": after, "welcome": welcome, "still_held": still_held,
                      "held": held}))
"""


@pytest.mark.anyio
async def test_without_tk_the_tray_says_once_what_to_install_and_the_menu_only_denies_held_commands(
    no_tk_env: dict[str, str], home: Path, paths: AppPaths, tmp_path: Path
) -> None:
    (tmp_path / "www").mkdir()
    (tmp_path / "keep").mkdir()
    # Servers take orders only from a process that runs this app: the script carries its name.
    script = tmp_path / "tray-bin" / "cowork-terminal"
    script.parent.mkdir()
    script.write_text(textwrap.dedent(TRAY))
    tray = subprocess.Popen([sys.executable, str(script)], env=no_tk_env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert tray.stdout is not None
        assert await anyio.to_thread.run_sync(tray.stdout.readline) == "ready\n"
        async with connect(home, headless=False) as client, anyio.create_task_group() as group:
            results: dict[str, dict] = {}

            async def ask(name: str, command: str) -> None:
                results[name] = await run(client, {"command": command, "cwd": str(tmp_path)})

            group.start_soon(ask, "allowed", "rm -rf www")
            await wait_until_held(paths)  # in this order: the first held is the one the menu cannot allow
            group.start_soon(ask, "denied", "rm -rf keep")
        out, err = await anyio.to_thread.run_sync(lambda: tray.communicate(timeout=120))
    finally:
        if tray.poll() is None:
            tray.kill()
    assert tray.returncode == 0, err
    seen = json.loads(out.splitlines()[-1])
    # A menu line shows too little of a command to allow it on: only the approval window allows.
    assert seen["still_held"] == [seen["held"]], "its Allow line allowed nothing"
    assert "The user denied this command" in results["allowed"]["error"] and (tmp_path / "www").exists()
    assert "The user denied this command" in results["denied"]["error"] and (tmp_path / "keep").exists()
    assert seen["windows"] is False
    install = [m for title, m in seen["notices"] if title == "Cowork Terminal's windows cannot open"]
    assert len(install) == 1, "said once"
    assert "sudo apt install python3-tk" in install[0] and "deny waiting commands from this icon's menu" in install[0]
    assert [t.rsplit(": ", 1)[1] for t in seen["listed"]] == ["rm -rf www", "rm -rf keep"]
    assert seen["allow"] == ["Can be allowed only in the approval window, once Tk is installed", "Deny"]
    assert seen["decisions"] == [["denied", "user (tray menu)"], ["denied", "user (tray menu)"]]
    assert seen["after"] == "No command is waiting for you"
    assert seen["welcome"] is False
    log_notice = [m for title, m in seen["notices"] if title == "The activity log cannot open"]
    assert len(log_notice) == 1 and "Traceback" not in log_notice[0] and "python3-tk" in log_notice[0]
    assert not any("Traceback" in m for _, m in seen["notices"])


DISCONNECT = """
    import json
    import app.ui.tray.app as t
    from app.core import data_folder
    from app.core.claude import config as cc
    from app.core.paths import AppPaths
    from app.ui.tray import menu
    paths = data_folder.ensure(AppPaths.from_environment())
    app = t.TrayApp(paths, None, t.load_pystray())
    app.start()
    assert app.settle(30)
    asked = app.pystray_item("disconnect:claude-desktop").text
    app.pystray_item("disconnect:claude-desktop")(app.icon)
    assert app.settle(30)
    confirm = app.pystray_item("disconnect:claude-desktop").text
    config = app.claude.locations["claude-desktop"].config_path
    still = "cowork-terminal" in json.loads(open(config).read())["mcpServers"]
    app.pystray_item("disconnect:claude-desktop")(app.icon)
    assert app.settle(30)
    gone = "cowork-terminal" not in json.loads(open(config).read())["mcpServers"]
    app.shutdown()
    print(json.dumps({"asked": asked, "confirm": confirm, "still": still, "gone": gone}))
"""


def test_without_tk_disconnect_asks_in_the_menu_before_it_disconnects(
    no_tk_env: dict[str, str], desktop: FakeDesktop
) -> None:
    from app.core.claude import config as cc

    env = dict(no_tk_env, HOME=str(desktop.home), XDG_CONFIG_HOME=str(desktop.config_home), PATH=os.environ["PATH"])
    desktop.desktop_config.write_text(json.dumps({"mcpServers": {"cowork-terminal": cc.this_app_entry()}}))
    seen = run_child(DISCONNECT, env)
    assert seen == {
        "asked": "Disconnect Claude Desktop…",
        "confirm": "Yes, disconnect Claude Desktop",
        "still": True,
        "gone": True,
    }
