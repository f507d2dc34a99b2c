"""What the approval prompt shows of a held command's environment and targets, after the red team of
2026-12-06 (tests/test_red_team_nine_view.py): a path under a secret-looking name is shown, a value
the command names is judged as what it deletes, the person's own folders are said before caches, every
variable that picks programs is shown whole (PATH first, a long one a folder a line), and the log
window names the real folder."""

from __future__ import annotations

import time
import tkinter as tk
from pathlib import Path

import pytest

from app.core.authority.hub import Hub
from app.core.commands.pins import MASKED, looks_like_path, pin_command, shown_value, whole_value
from app.core.paths import AppPaths
from app.ui.windows.controls import held_texts
from app.ui.windows.held_command import WaitingCommand, judged, place_rank, sent_values, substituted


def test_a_path_under_a_secret_name_is_shown_and_a_token_is_still_masked(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    assert shown_value("AUTH_DIR", "/home/ana/Documents") == "/home/ana/Documents"
    assert shown_value("SESSION_DIR", "~/Documents") == "~/Documents"
    assert shown_value("AUTH_DIR", "../Documents") == "../Documents"
    assert shown_value("AUTH_DIR", "notes", str(tmp_path)) == "notes", "a folder that is there"
    assert shown_value("AUTH_FILE", "notes/new.txt", str(tmp_path)) == "notes/new.txt", "one in a folder there"
    assert shown_value("GITHUB_TOKEN", "ghp_16C7e42F292c6912E7710c838347Ae178B4a", str(tmp_path)) == MASKED
    # A key with slashes names no folder: still masked.
    assert shown_value("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", str(tmp_path)) == MASKED
    assert not looks_like_path("notes", None), "with no folder known, only how it starts counts"


def test_a_value_that_picks_programs_is_not_cut_at_300_characters_and_path_comes_first(tmp_path: Path) -> None:
    long_path = ":".join(f"/opt/tool{i}/bin" for i in range(60))  # about 900 characters
    env = {"APPDATA": "/a", "CDPATH": "/c", "CURL_HOME": "/h", "PATH": long_path, "LONG": "x" * 1000}
    shown = pin_command("ls", str(tmp_path), env).env_shown
    assert [key for key, _value in shown] == ["PATH", "APPDATA", "CDPATH", "CURL_HOME", "LONG"]
    assert dict(shown)["PATH"] == long_path, "shown whole"
    assert dict(shown)["LONG"] == "x" * 300 + "... (1,000 characters)"
    huge = shown_value("PATH", "/x:" * 2000)
    assert huge.endswith("... (6,000 characters)"), "beyond 4,000, cut and the length said"
    assert whole_value(huge) is None and whole_value(dict(shown)["LONG"]) is None and whole_value(MASKED) is None
    assert whole_value("/home/ana") == "/home/ana"


def test_only_plain_values_shown_whole_are_put_in_the_text() -> None:
    values = sent_values(["T=/home/ana", 'Q=a"b', f"K={MASKED}", "L=" + "x" * 300 + "... (900 characters)", "N"])
    assert values == {"T": "/home/ana"}
    assert substituted('rm -rf "$T"/* ${T}/x $TX \\$T', values) == 'rm -rf "/home/ana"/* /home/ana/x $TX \\$T'


def test_a_deletion_of_a_sent_home_folder_is_the_most_dangerous_class_and_offers_no_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "ana"
    (home / "project" / "build").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))

    def held(command: str, env: list[str]) -> WaitingCommand:
        return judged(1, command, str(home / "project"), client="A", expires_at=time.time() + 300, protected=[],
                      env_keys=env)  # fmt: skip

    severe = held('rm -rf "$T"/*', [f"T={home}"])
    assert severe.severe and severe.confirm_name == str(home) and severe.proposal is None
    assert held('rm -rf "$T"/*', []).danger == "loses_files", "without the value: as before"
    # A value judged no worse leaves the text's own judgement: a command that sets T itself is not
    # said to delete the value sent.
    same = held('T=/; rm -rf "$T"/*', [f"T={home}/project/build"])
    assert any("$T" in line for line in same.lines()), same.lines()


def test_the_persons_own_folders_rank_above_caches_and_dot_folders(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/ana")
    own, cache, dot = (place_rank(p, "/tmp/w") for p in ("~/Documents", "~/.cache/pip", "/home/ana/.config/x"))
    assert own > cache and cache == dot
    assert place_rank("/home", "/tmp/w") == place_rank("/home/ana/projects/site", "/tmp/w") == own
    assert place_rank("/tmp/x", "/tmp/w") < cache


def test_the_log_window_is_told_the_real_folder() -> None:
    told = held_texts({"holds": [{"id": 3, "command": "ls", "cwd": "/p/notes", "folder": "/home/ana/Documents"}]})
    assert told is not None and told[3].cwd == "/home/ana/Documents"
    older = held_texts({"holds": [{"id": 3, "command": "ls", "cwd": "/p/notes"}]})
    assert older is not None and older[3].cwd == "/p/notes", "a tray that tells no folder: the path sent"


@pytest.mark.gui
def test_every_variable_that_picks_programs_shows_whole_and_only_the_others_are_counted(display: str) -> None:
    from app.ui.windows.approval_prompt import ApprovalPrompt

    planted = "/home/ana/project/.cache/bin"
    path = f"/usr/local/sbin:/usr/local/bin:/opt/local/bin:/snap/bin:{planted}:/usr/bin:/bin:/usr/games"
    filler = "/usr/share/applications/defaults/profiles/system-wide/configuration/settings/shared/folder"
    picking = [f"PATH={path}", *(f"{name}={filler}" for name in ("APPDATA", "CDPATH", "CURL_HOME", "GNUPGHOME"))]
    others = [f"NOISE{i}={'y' * 200}" for i in range(12)]
    held = judged(1, "ls", "/tmp", client="A", expires_at=time.time() + 300, protected=[],
                  env_keys=[*picking, *others])  # fmt: skip

    class Line:
        def send(self, message: dict) -> None:
            pass

        def drain(self) -> list:
            return []

    root = tk.Tk()
    try:
        prompt = ApprovalPrompt(root, Line())
        prompt.take({"op": "show", "hold": held.to_json()})
        prompt.refresh()
        root.update()
        details = str(prompt.details.cget("text"))
    finally:
        root.destroy()
    lines = details.split("\n")
    assert lines[1] == "Extra environment: PATH=/usr/local/sbin:", "a PATH too long for a line: a folder a line"
    assert f"    {planted}:" in lines, details
    for name in ("APPDATA", "CDPATH", "CURL_HOME", "GNUPGHOME"):
        assert f"{name}={filler}" in lines, details
    assert "more" in lines[-1] and "NOISE11" not in details, "the others, as many as fit, the rest counted"


@pytest.mark.gui
@pytest.mark.anyio
async def test_a_path_of_newlines_shows_whole_as_marks_and_the_question_still_shows(
    home: Path, paths: AppPaths, hub: Hub, display: str, tmp_path: Path
) -> None:
    """The PATH of 120 newlines (tests/test_approval_prompt_layout.py) now shows whole, a folder a line,
    each newline written out; the countdown, the other variable and an armed Allow still show."""
    from tests.test_approval_prompt import prompt_on_pipes
    from tests.test_approval_prompt_layout import held_for_window, shown_until_armed, the_whole_question_shows

    env = {"PATH": "\n" * 120 + f":{tmp_path}/evilbin:/usr/bin:/bin", "GREETING": "hello"}
    item = await held_for_window(hub, paths, {"command": "ls", "cwd": str(tmp_path), "env": env}, home)
    with prompt_on_pipes() as (prompt, tray):
        shown_until_armed(prompt, tray, item)
        the_whole_question_shows(prompt)
        details = prompt.details.cget("text").split("\n")
        assert details[1] == "Extra environment: PATH=" + "^J" * 120 + ":", details
        assert details[2:5] == [f"    {tmp_path}/evilbin:", "    /usr/bin:", "    /bin"], details
        assert details[5:] == ["GREETING=hello"], details


@pytest.mark.gui
@pytest.mark.anyio
async def test_a_path_too_long_for_the_screen_keeps_allow_off_and_deny_in_sight(
    home: Path, paths: AppPaths, hub: Hub, display: str, tmp_path: Path
) -> None:
    """Two hundred and thirty folders on a PATH, a folder a line, cannot all show: Allow waits (never armed on
    a PATH the person could not read), the window stays on the screen and Deny answers."""
    from tests.test_approval_prompt import enabled, prompt_on_pipes, pump_for, pump_until, showing
    from tests.test_approval_prompt_layout import held_for_window, whole_in_window

    env = {"PATH": ":".join(f"/opt/tool{i:03}/bin" for i in range(230))}
    item = await held_for_window(hub, paths, {"command": "ls", "cwd": str(tmp_path), "env": env}, home)
    with prompt_on_pipes() as (prompt, tray):
        tray.tell({"op": "show", "hold": item.to_json()})
        root = prompt.root
        pump_until(root, lambda: showing(prompt, item.id) and root.winfo_viewable())
        pump_until(root, lambda: prompt.armed)
        pump_for(root, 0.5)
        assert "/opt/tool229/bin" in prompt.details.cget("text"), "said whole, though the screen cuts it"
        assert not enabled(prompt.allow_button), "Allow waits: the PATH does not show whole"
        assert root.winfo_height() <= root.winfo_screenheight() and whole_in_window(prompt, prompt.deny_button)


@pytest.mark.gui
@pytest.mark.anyio
async def test_a_path_cut_past_what_the_prompt_shows_keeps_allow_off(
    home: Path, paths: AppPaths, hub: Hub, display: str, tmp_path: Path
) -> None:
    """A review, 2026-12-06: a PATH over 4,000 characters is cut (its length said), and the folder
    past the cut, where `ls` came from, was never shown, yet Allow armed because the cut text fit the
    screen. A program-choosing variable not shown whole keeps Allow off; Deny answers."""
    from tests.test_approval_prompt import enabled, prompt_on_pipes, pump_for, pump_until, showing
    from tests.test_approval_prompt_layout import held_for_window

    evil = tmp_path / "evilbin"
    env = {"PATH": "/" + "i" * 4100 + f":{evil}:/usr/bin:/bin"}
    item = await held_for_window(hub, paths, {"command": "ls", "cwd": str(tmp_path), "env": env}, home)
    with prompt_on_pipes() as (prompt, tray):
        tray.tell({"op": "show", "hold": item.to_json()})
        root = prompt.root
        pump_until(root, lambda: showing(prompt, item.id) and root.winfo_viewable())
        pump_until(root, lambda: prompt.armed)
        pump_for(root, 0.5)
        assert str(evil) not in prompt.details.cget("text"), "cut: the folder is not shown"
        assert not enabled(prompt.allow_button), "Allow waits on a PATH the person cannot read whole"
        assert tray.heard() == {"op": "seen", "id": item.id}
        prompt.answer(True)  # what a click on Allow calls: nothing while it waits
        assert tray.heard(timeout_s=0.5) is None
        prompt.answer(False)  # Deny, at once
        assert tray.heard() == {"op": "decide", "id": item.id, "allowed": False, "rule": None}
