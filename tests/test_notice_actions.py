"""Answering a held command from its notification (issue 24): Deny and Show only, since a button
press in a notification comes over the session bus, where any program of the user can fake it.

The tray is a real process (its notices, its prompt window); the server whose commands it holds is
`serve --headless` in this process (tests/in_process_server.py): a tray holds the commands of every
server linked to it. The notices' own bookkeeping (one per held command, withdrawn when it is
answered elsewhere) is `ActionNotices` in this process, with the same stand-in notify-send."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from app.core.journal.store import Journal
from app.core.paths import AppPaths
from app.ui.tray.notice_actions import (
    DENY,
    SHOW,
    ActionNotices,
    action_argv,
    chosen_action,
    hold_actions,
    notify_send_help,
    supports_actions,
)
from tests.clicks import PROMPT_TITLE, press, shown_window
from tests.desktop_env import FakeDesktop, make_fake_desktop
from tests.in_process_server import serving
from tests.stdio_client import run
from tests.test_authority import wait_until_held
from tests.tray_process import running_tray

HELP_0_8 = "  -A, --action=[NAME=]Text...       Specifies the actions to display to the user."
HELP_0_7_8 = "  -u, --urgency=LEVEL               Specifies the urgency level (low, normal, critical)."


def press_button(desktop: FakeDesktop, word: str) -> None:
    """The user's press (or a program faking the bus's signal): it arrives whole, as the signal does.
    The stand-in reads `pressed` as soon as it exists, and a loaded machine once had it read empty
    between the file's creation and its word (the press was lost)."""
    (desktop.bin / "pressing").write_text(word)
    (desktop.bin / "pressing").replace(desktop.bin / "pressed")


def test_a_notification_never_offers_allow_and_offers_show_only_where_a_window_can_open() -> None:
    assert hold_actions(windows=True) == {DENY: "Deny", SHOW: "Show"}
    assert hold_actions(windows=False) == {DENY: "Deny"}


@pytest.mark.parametrize(
    ("platform", "help_text", "buttons"),
    [("linux", HELP_0_8, True), ("linux", HELP_0_7_8, False), ("linux", "", False),
     ("win32", HELP_0_8, False), ("darwin", HELP_0_8, False)],
)  # fmt: skip
def test_buttons_only_where_notify_send_says_it_has_them(platform: str, help_text: str, buttons: bool) -> None:
    assert supports_actions(platform, help_text) is buttons


def test_notify_send_gets_one_action_per_button_and_the_text_after_the_options() -> None:
    argv = action_argv("/usr/bin/notify-send", "Cowork Terminal", "-title", "rm -rf build", {DENY: "Deny"})
    assert argv == ["/usr/bin/notify-send", "--app-name=Cowork Terminal", "--action=deny=Deny", "--",
                    "-title", "rm -rf build"]  # fmt: skip


def test_a_commands_markup_reaches_the_notification_as_text() -> None:
    """Notification servers read the body as markup: a command's tags would show other words."""
    argv = action_argv("/usr/bin/notify-send", "Cowork Terminal", "Waiting", 'rm -rf <b>x</b> & <img src="a"> <')
    assert argv == ["/usr/bin/notify-send", "--app-name=Cowork Terminal", "--", "Waiting",
                    'rm -rf &lt;b&gt;x&lt;/b&gt; &amp; &lt;img src="a"&gt; &lt;']  # fmt: skip


def test_only_a_button_the_notification_offered_is_an_answer() -> None:
    offered = hold_actions(windows=True)
    assert chosen_action("deny\n", offered) == DENY
    assert chosen_action("show\n", offered) == SHOW
    assert chosen_action("allow\n", offered) is None, "a faked signal may name anything"
    assert chosen_action("allow\n", {"allow": "Allow"}) is None, "a loosening is never taken, even if offered"
    assert chosen_action("show\n", hold_actions(windows=False)) is None
    assert chosen_action("", offered) is None, "closed without a press"


# notify-send 0.8 as seen from the tray: it shows the buttons and waits; the press (a person's, or a
# program's faked signal) is what the test writes to `pressed`, and notify-send prints it.
NOTIFY_SEND_WITH_BUTTONS = """#!{python}
import json, pathlib, sys, time
here = pathlib.Path(__file__).parent
if "--help" in sys.argv:
    print("  -A, --action=[NAME=]Text...       Specifies the actions to display to the user.")
    raise SystemExit(0)
with open(here / "calls.log", "a") as log:
    log.write(json.dumps([pathlib.Path(sys.argv[0]).name, *sys.argv[1:]]) + "\\n")
if any(arg.startswith("--action=") for arg in sys.argv):
    pressed = here / "pressed"
    while not pressed.exists():
        time.sleep(0.05)
    said = pressed.read_text()
    pressed.unlink()
    with open(here / "calls.log", "a") as log:
        log.write(json.dumps(["printed", said]) + "\\n")
    print(said, flush=True)
"""


@pytest.fixture
def desktop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path) -> FakeDesktop:
    made = make_fake_desktop(tmp_path, monkeypatch)
    made.add_program("notify-send", NOTIFY_SEND_WITH_BUTTONS)
    return made


def button_notices(desktop: FakeDesktop) -> list[list[str]]:
    return [c for c in desktop.calls("notify-send") if any(a.startswith("--action=") for a in c)]


def printed(desktop: FakeDesktop) -> list[str]:
    return [c[1] for c in desktop.calls("printed")]


def row(paths: AppPaths, command_id: int):  # type: ignore[no-untyped-def]
    with Journal(paths) as journal:
        return journal.get_command(command_id)


@pytest.mark.gui
@pytest.mark.anyio
async def test_deny_in_a_notification_denies_and_a_faked_allow_there_allows_nothing(
    home: Path, paths: AppPaths, tmp_path: Path, display: str, desktop: FakeDesktop
) -> None:
    for name in ("cache", "build"):
        (tmp_path / name).mkdir()
    with running_tray(home, display=display):
        async with serving(home) as client, anyio.create_task_group() as group:
            first: dict = {}

            async def ask_first() -> None:
                first.update(await run(client, {"command": "rm -rf cache", "cwd": str(tmp_path)}))

            group.start_soon(ask_first)
            held = await wait_until_held(paths)
            [notice] = await anyio.to_thread.run_sync(lambda: _wait(lambda: button_notices(desktop)))
            assert "--action=deny=Deny" in notice and "--action=show=Show" in notice
            assert not any("allow" in arg.lower() for arg in notice if arg.startswith("--action="))
            assert notice[-2:] == ["A command is waiting for your approval", "mcp wants to run: rm -rf cache"]

            press_button(desktop, "allow")  # what a program faking the bus's signal gets printed
            await anyio.to_thread.run_sync(lambda: _wait(lambda: printed(desktop) == ["allow"]))  # it ran...
            await anyio.sleep(1.5)
            assert (tmp_path / "cache").exists() and not first, "...and allowed nothing: the command still waits"
            assert row(paths, held["id"]).decided_by is None
            prompt = await anyio.to_thread.run_sync(shown_window, display, PROMPT_TITLE)
            press(display, prompt, "Escape")  # the user says no in the window
            with anyio.fail_after(10):
                while not first:
                    await anyio.sleep(0.05)
            assert (tmp_path / "cache").exists()

            second: dict = {}

            async def ask_second() -> None:
                second.update(await run(client, {"command": "rm -rf build", "cwd": str(tmp_path)}))

            group.start_soon(ask_second)
            await anyio.to_thread.run_sync(lambda: _wait(lambda: len(button_notices(desktop)) == 2))
            press_button(desktop, "deny")  # the user's Deny in the notification
            with anyio.fail_after(10):
                while not second:
                    await anyio.sleep(0.05)
            assert (tmp_path / "build").exists()
            denied = [r for r in _rows(paths) if r.command == "rm -rf build"]
            assert [r.decided_by for r in denied] == ["user (notification)"]
            assert "denied" in json.dumps(second).lower(), second


def _rows(paths: AppPaths) -> list:
    with Journal(paths) as journal:
        return journal.recent_commands(limit=10)


def _wait(condition):  # type: ignore[no-untyped-def]
    from tests.desktop_env import wait_for

    return wait_for(condition, timeout_s=20)


# ActionNotices in this process, with the stand-in notify-send above (a real program it starts).


def test_a_notice_shown_again_under_its_key_replaces_the_first_whose_press_then_answers_nothing(
    desktop: FakeDesktop,
) -> None:
    notices = ActionNotices(str(desktop.bin / "notify-send"), "Cowork Terminal")
    pressed: list[tuple[str, str]] = []
    notices.show("hold:1", "A command is waiting", "rm -rf cache", {DENY: "Deny"}, lambda a: pressed.append(("1", a)))
    _wait(lambda: len(button_notices(desktop)) == 1)
    notices.show("hold:1", "A command is waiting", "rm -rf cache", {DENY: "Deny"}, lambda a: pressed.append(("2", a)))
    _wait(lambda: len(button_notices(desktop)) == 2)
    press_button(desktop, "deny")
    _wait(lambda: pressed)
    assert pressed == [("2", DENY)], "only the notice now shown answers"


def showing(desktop: FakeDesktop, message: str) -> bool:
    """Whether the stand-in notify-send still shows `message` (its process, as /proc lists it)."""
    program = str(desktop.bin / "notify-send").encode()
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if message.encode() in argv and program in argv:
            return True
    return False


def test_a_withdrawn_notice_is_ended_and_its_press_answers_nothing(desktop: FakeDesktop) -> None:
    notices = ActionNotices(str(desktop.bin / "notify-send"), "Cowork Terminal")
    pressed: list[tuple[str, str]] = []
    notices.show("hold:7", "A command is waiting", "rm -rf build", {DENY: "Deny"}, lambda a: pressed.append(("7", a)))
    notices.show("hold:8", "A command is waiting", "rm -rf dist", {DENY: "Deny"}, lambda a: pressed.append(("8", a)))
    _wait(lambda: len(button_notices(desktop)) == 2)
    notices.withdraw(keep={"hold:8"})  # hold 7 was answered in the window
    notices.withdraw(keep={"hold:8"})  # again, as at every change of what waits: nothing left to end
    _wait(lambda: not showing(desktop, "rm -rf build"))
    assert showing(desktop, "rm -rf dist")
    press_button(desktop, "deny")
    _wait(lambda: pressed)
    assert pressed == [("8", DENY)]


def test_a_press_whose_action_fails_is_logged_and_the_next_notice_still_answers(
    desktop: FakeDesktop, caplog: pytest.LogCaptureFixture
) -> None:
    notices = ActionNotices(str(desktop.bin / "notify-send"), "Cowork Terminal")
    answered: list[str] = []

    def fails(_action: str) -> None:
        raise RuntimeError("the hold was already gone")

    notices.show("hold:1", "A command is waiting", "rm -rf cache", {DENY: "Deny"}, fails)
    _wait(lambda: button_notices(desktop))
    press_button(desktop, "deny")
    _wait(lambda: "acting on the notification's deny failed" in caplog.text)
    notices.show("hold:2", "A command is waiting", "rm -rf build", {DENY: "Deny"}, answered.append)
    _wait(lambda: len(button_notices(desktop)) == 2)
    press_button(desktop, "deny")
    _wait(lambda: answered == [DENY])


def test_a_notify_send_that_cannot_run_means_notices_without_buttons(tmp_path: Path) -> None:
    help_text = notify_send_help(str(tmp_path / "no-notify-send"))
    assert help_text == ""
    assert supports_actions("linux", help_text) is False
