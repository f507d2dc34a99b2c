"""The approval window names the place a deletion lands once links are followed (a red team,
2026-12-05): with `build/cache` a link to `~/a`, `rm -rf build/cache/../../user` was shown as
"Deletes the folder …/user/proj/user and everything in it", a deletion of files with no typed
confirmation, and the person's Allow deleted their whole home folder. The window now says the home
folder, in its most severe class, and asks for its name to be typed; judged as the tray judges a
hold (`judged`), and once end to end: a tray-bound server holds the command and the window's item
names the real place (denied: nothing is deleted)."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from app.core.authority.hub import Hub
from app.core.classifier.danger import Danger
from app.core.paths import AppPaths
from app.ui.tray.holds import for_window
from app.ui.windows.held_command import WaitingCommand, judged
from tests.in_process_server import deny, held_by, serving
from tests.stdio_client import run

COMMAND = "rm -rf build/cache/../../user"


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The person's home folder, named `user`: a project whose `build/cache` is a link to `~/a`, made
    by an earlier command, and Documents."""
    folder = tmp_path / "user"
    for name in ("proj/build", "Documents", "a"):
        (folder / name).mkdir(parents=True)
    (folder / "Documents" / "thesis.txt").write_text("years of work\n")
    (folder / "proj" / "build" / "cache").symlink_to(folder / "a")
    monkeypatch.setenv("HOME", str(folder))
    return folder


def said_rightly(item: WaitingCommand, user_home: Path) -> None:
    again = WaitingCommand.from_json(item.to_json())  # as it reaches the window
    assert f"Deletes your whole home folder {user_home} and everything in it: this cannot be undone" in again.lines()
    assert not any("proj/user" in line for line in again.lines()), again.lines()
    assert again.danger == Danger.LOSES_EVERYTHING.name.lower(), again.danger
    assert again.severe and again.confirm_name == str(user_home), (again.danger, again.confirm_name)


def test_the_window_names_the_home_folder_a_link_leads_the_deletion_to(user_home: Path) -> None:
    item = judged(1, COMMAND, str(user_home / "proj"), client="Claude Code", expires_at=time.time() + 300,
                  protected=())  # fmt: skip
    said_rightly(item, user_home)


def test_the_window_names_the_home_folder_a_glob_through_a_link_empties(user_home: Path) -> None:
    (user_home / "proj" / "cache").symlink_to(user_home)
    item = judged(1, "rm -rf cache/*", str(user_home / "proj"), client="Claude Code", expires_at=time.time() + 300,
                  protected=())  # fmt: skip
    again = WaitingCommand.from_json(item.to_json())
    assert f"Deletes everything in your whole home folder ({user_home}/*): this cannot be undone" in again.lines()
    assert again.severe and again.confirm_name == str(user_home), (again.danger, again.confirm_name)


@pytest.mark.anyio
async def test_a_held_deletion_through_a_link_is_shown_where_it_lands(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub
) -> None:
    shown: list[WaitingCommand] = []

    async def look_then_deny() -> None:
        [held] = await held_by(hub, seconds=30.0)
        shown.append(for_window(held, paths))
        deny(hub, held.command_id)

    async with serving(home, bound=True) as client, anyio.create_task_group() as group:
        group.start_soon(look_then_deny)
        result = await run(client, {"command": COMMAND, "cwd": str(user_home / "proj")})
    assert "denied" in result.get("error", ""), result
    [item] = shown
    said_rightly(item, user_home)
    assert (user_home / "Documents" / "thesis.txt").read_text() == "years of work\n"
