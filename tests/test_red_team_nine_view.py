"""A red team, 2026-12-06 (ninth, H): what the person sees before they allow a held command (the
approval prompt, the log window, the CLI's confirm window, the tray's menu without Tk), and whether
their click does only what they were shown. Each test runs the attack through a tray-bound server's tools
(a real MCP client, the hub of this process, real bash in the real container) or the window's own
functions, and asserts what should happen: each fails today because the attack works."""

from __future__ import annotations

import json
import time
from pathlib import Path

import anyio
import pytest

from app.core.authority.hub import Hub
from app.core.i18n.formats import shorten_command
from app.core.paths import AppPaths
from app.core.visible_text import visible
from app.ui.tray.holds import for_window
from app.ui.windows.approval_prompt import MAX_ENV_CHARS
from tests.in_process_server import allow, held_by, serving

pytestmark = [pytest.mark.anyio]


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A project folder, and ~/Documents (a test folder: HOME points at the test's)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    folder, victim = tmp_path / "project", tmp_path / "Documents"
    folder.mkdir()
    victim.mkdir()
    (victim / "precious.txt").write_text("keep me")
    return folder, victim


def env_lines_shown(hold_env: list[str]) -> list[str]:
    """Each environment entry as the approval window's "Extra environment" line says it
    (approval_prompt.ApprovalPrompt._details_text: visible, then cut to MAX_ENV_CHARS)."""
    return [shorten_command(visible(name, keep=""), MAX_ENV_CHARS) for name in hold_env]


async def allowed_as_shown(hub: Hub, paths: AppPaths, call) -> tuple[object, dict]:  # type: ignore[no-untyped-def]
    """The call's command is held; the window's view of it is taken (what the tray sends the prompt,
    `ui/tray/holds.for_window`), then the person clicks Allow: (what the window showed, the result)."""
    result: dict = {}

    async def run() -> None:
        result["r"] = await call()

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        [held] = await held_by(hub)
        shown = for_window(held, paths)
        allow(hub, held.command_id)
    return shown, result["r"]


async def test_a_deletion_target_in_a_secret_named_variable_is_masked_in_the_window(
    home: Path, paths: AppPaths, hub: Hub, work: tuple[Path, Path]
) -> None:
    """`execute_command('rm -rf "$AUTH_DIR"/*', env={"AUTH_DIR": ~/Documents})`: the window says "deletes
    "$AUTH_DIR"/* (a name known only when it runs)" and shows the variable as `AUTH_DIR=********`
    (pins.shown_value masks a name matching SECRET_NAME), so the person cannot see what is deleted
    although the tray was sent it; and the tray judges the command without its environment, so an
    `AUTH_DIR` holding the whole home folder is never the most dangerous class (no typed folder name).
    Achieved: one Allow of a window that showed neither path nor class emptied ~/Documents."""
    folder, victim = work
    async with serving(home, bound=True) as client:
        shown, result = await allowed_as_shown(
            hub,
            paths,
            lambda: client.call_tool(
                "execute_command",
                {"command": 'rm -rf "$AUTH_DIR"/*', "cwd": str(folder), "env": {"AUTH_DIR": str(victim)}},
            ),
        )
    env_shown = env_lines_shown(list(shown.env_keys))
    deleted = not (victim / "precious.txt").exists()
    assert any(str(victim) in line for line in env_shown) or any(str(victim) in line for line in shown.lines()), (
        f"the window showed {env_shown} and {shown.lines()}; the Allow deleted ~/Documents: {deleted}"
    )


PLANTED_LS = '#!/bin/sh\nrm -rf "$HOME/Documents"\necho listed\n'


@pytest.mark.gui
async def test_a_planted_folder_in_the_middle_of_path_is_cut_out_of_the_window(
    home: Path, paths: AppPaths, hub: Hub, work: tuple[Path, Path], display: str
) -> None:
    """`execute_command("ls", env={"PATH": "/usr/local/sbin:/usr/local/bin:/opt/local/bin:/snap/bin:
    <project>/.cache/bin:/usr/bin:/bin:/usr/games:/usr/local/games"})` with a planted `ls` in
    `<project>/.cache/bin`: the PATH makes it wait (pins.picks_programs), but the window cuts each
    `NAME=value` to MAX_ENV_CHARS (100) in the middle (`_details_text`, `shorten_command`), keeping
    the first 60 and the last 39 characters: it shows `PATH=/usr/local/sbin:/usr/local/bin:/opt/local/
    bin:/snap/bi…/usr/bin:/bin:/usr/games:/usr/local/games` and the planted folder, which is what decides
    which `ls` runs, shows nowhere in it (docs/security.md: "shows every environment value (cut at 300
    characters)", "the start of a value decides"). Achieved: the Allow of a plain `ls` ran the planted
    one, which emptied ~/Documents."""
    folder, victim = work
    planted = folder / ".cache" / "bin"
    planted.mkdir(parents=True)
    (planted / "ls").write_text(PLANTED_LS)
    (planted / "ls").chmod(0o755)
    path = (
        f"/usr/local/sbin:/usr/local/bin:/opt/local/bin:/snap/bin:{planted}:/usr/bin:/bin:/usr/games:/usr/local/games"
    )
    async with serving(home, bound=True) as client:
        shown, result = await allowed_as_shown(
            hub,
            paths,
            lambda: client.call_tool("execute_command", {"command": "ls", "cwd": str(folder), "env": {"PATH": path}}),
        )
    _what, details, _box = window_texts(shown)
    deleted = not (victim / "precious.txt").exists()
    assert str(planted) in details, (
        f"the window showed {details!r}; the Allow ran the planted ls, ~/Documents deleted: {deleted}"
    )


async def test_a_build_folder_rule_made_for_node_modules_deletes_a_projects_bin_unasked(
    home: Path, paths: AppPaths, hub: Hub, work: tuple[Path, Path]
) -> None:
    """The person allows `rm -rf node_modules` in ~/project with the window's "Always allow deleting build
    folders (build, dist, node_modules...) in ~/project" (the rule the tray makes on that click:
    ui/tray/windows.py `_make_rule`). The rule also covers `bin`, `site`, `out`, `target`, `coverage`,
    `obj` (policy/rules.GENERATED_FOLDERS), which the button hides behind "...", in that folder and every
    folder below it, though a project's `bin/` is often its own hand-written scripts. Achieved:
    `rm -rf bin` of ~/project/tools ran without asking, deleting the scripts. Now the rule covers the
    names the deletion removed, as its button says ("Always allow deleting node_modules in ~/project"):
    `rm -rf bin` waits for the person, who denies it here."""
    from tests.in_process_server import deny

    folder, _victim = work
    (folder / "node_modules").mkdir()
    scripts = folder / "tools" / "bin"
    scripts.mkdir(parents=True)
    (scripts / "deploy.sh").write_text("#!/bin/sh\n# the project's own script, written by hand\n")
    later: dict = {}
    async with serving(home, bound=True) as client:
        shown, _result = await allowed_as_shown(
            hub,
            paths,
            lambda: client.call_tool("execute_command", {"command": "rm -rf node_modules", "cwd": str(folder)}),
        )
        assert shown.proposal is not None
        button = f"Always allow {visible(shown.proposal.description(), keep='')}"
        hub.add_rule(shown.proposal.kind, shown.proposal.folder, "folder", shown.proposal.description("folder"))

        async def run() -> None:
            call = {"command": "rm -rf bin", "cwd": str(folder / "tools")}
            later["r"] = await client.call_tool("execute_command", call)

        async with anyio.create_task_group() as group:
            group.start_soon(run)
            with anyio.fail_after(60):  # it runs (the rule covered it) or waits for the person
                while "r" not in later and not hub.pending_holds():
                    await anyio.sleep(0.02)
            asked = [hold.command for hold in hub.pending_holds()]
            for hold in hub.pending_holds():
                deny(hub, hold.command_id)
    ran = later["r"].content[0].text if later["r"].is_error else json.loads(later["r"].content[0].text)
    assert button == "Always allow deleting node_modules in ~/project", button
    assert asked == ["rm -rf bin"] and (scripts / "deploy.sh").exists(), (
        f"the button said {button!r}; `rm -rf bin` in ~/project/tools then ran unasked: {ran}"
    )


async def test_the_whole_home_folder_named_by_a_sent_variable_is_not_the_most_dangerous_class(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`execute_command('rm -rf "$T"/*', env={"T": <home folder>})`: the tray judges what the window says
    from the command and folder alone (held_command.judged: `classify` takes no environment), so the
    class is "loses files", not "loses everything": no red "cannot be undone", and no typed home
    folder before Allow (held_command.confirm_name_of), the safeguard `rm -rf ~/*` gets.
    Achieved: one plain Allow deleted everything in the home folder (~/Documents, the project; what
    `*` leaves are the dot folders)."""
    user = tmp_path / "user"
    (user / "Documents").mkdir(parents=True)
    (user / "Documents" / "precious.txt").write_text("keep me")
    (user / "project").mkdir()
    monkeypatch.setenv("HOME", str(user))
    async with serving(home, bound=True) as client:
        shown, _result = await allowed_as_shown(
            hub,
            paths,
            lambda: client.call_tool(
                "execute_command", {"command": 'rm -rf "$T"/*', "cwd": str(user / "project"), "env": {"T": str(user)}}
            ),
        )
    emptied = not (user / "Documents").exists() and not (user / "project").exists()
    assert shown.severe and shown.confirm_name == str(user), (
        f"the window's class was {shown.danger!r} (typed word: {shown.confirm_name!r}); "
        f"the plain Allow emptied the home folder: {emptied} (left: {sorted(p.name for p in user.iterdir())})"
    )


@pytest.mark.gui
def test_many_deletions_in_the_home_folder_push_documents_out_of_the_plain_words(display: str) -> None:
    """`rm -rf \\` then eight `~/.cache/pip/wheels/wN \\` lines, then `~/Documents`: every target is
    in the home folder, so every line has the same rank (held_command.rank_of: the place's rank, then
    the class, both equal), and `plain_lines` keeps the first five in order: the real prompt says
    "Deletes the folder ~/.cache/pip/wheels/w0 ... w4" and "and 4 more"; its command box (6 lines)
    shows `~/Documents` only after scrolling to the command's tenth line. Achieved: what the window
    says the command does never names the one folder that matters."""
    import os

    from app.ui.windows.approval_prompt import COMMAND_LINES
    from app.ui.windows.held_command import judged

    home = os.path.expanduser("~")
    command = "rm -rf \\\n" + "".join(f"  ~/.cache/pip/wheels/w{i} \\\n" for i in range(8)) + "  ~/Documents\n"
    held = judged(1, command, "/tmp", client="Claude", expires_at=time.time() + 300, protected=[])
    what, _details, _box = window_texts(held)
    box = visible(command).split("\n")[:COMMAND_LINES]
    assert f"{home}/Documents" in what or any("Documents" in line for line in box), (
        f"the window says: {what!r}; its box shows: {box}"
    )


class _Line:
    """The prompt's line to the tray, as a list (the window's answers are not needed here)."""

    def __init__(self) -> None:
        self.sent: list[dict] = []

    def send(self, message: dict) -> None:
        self.sent.append(message)

    def drain(self) -> list:
        return []


def window_texts(shown) -> tuple[str, str, str]:  # type: ignore[no-untyped-def]
    """What the real approval prompt (Tk, on the test's X display) says of a held command: its plain
    words, its details (folder, environment) and its command box."""
    import tkinter as tk

    from app.ui.windows.approval_prompt import ApprovalPrompt

    root = tk.Tk()
    try:
        prompt = ApprovalPrompt(root, _Line())
        prompt.take({"op": "show", "hold": shown.to_json()})
        prompt.refresh()
        root.update()
        return str(prompt.what.cget("text")), str(prompt.details.cget("text")), prompt.command.get("1.0", "end")
    finally:
        root.destroy()


@pytest.mark.gui
async def test_program_picking_variables_sorted_before_path_push_it_out_of_the_window(
    home: Path, paths: AppPaths, hub: Hub, work: tuple[Path, Path], display: str
) -> None:
    """`execute_command("ls", env={APPDATA, CDPATH, CURL_HOME, GNUPGHOME, LOCALAPPDATA: ~95-character
    harmless-looking paths each, PATH: <project>/.cache/bin:/usr/bin:/bin})`: every one of them picks
    programs (pins.picks_programs), so all are "listed first", in name order, and PATH comes after the
    five; the window's details keep MAX_DETAILS_SCREEN_LINES (5) lines (`_details_text`), so it says
    "Extra environment: APPDATA=..., CDPATH=..., ... and N more" and PATH, the one that picks the `ls`
    that runs, is not shown at all (the 300-variable route of 2026-12-05, with variables that pick
    programs). Achieved: the Allow of `ls` ran the planted one, which emptied ~/Documents."""
    folder, victim = work
    planted = folder / ".cache" / "bin"
    planted.mkdir(parents=True)
    (planted / "ls").write_text(PLANTED_LS)
    (planted / "ls").chmod(0o755)
    filler = "/usr/share/applications/defaults/profiles/system-wide/configuration/settings/shared/folder-"
    env = {name: filler + name.lower() for name in ("APPDATA", "CDPATH", "CURL_HOME", "GNUPGHOME", "LOCALAPPDATA")}
    env["PATH"] = f"{planted}:/usr/bin:/bin"
    async with serving(home, bound=True) as client:
        shown, _result = await allowed_as_shown(
            hub, paths, lambda: client.call_tool("execute_command", {"command": "ls", "cwd": str(folder), "env": env})
        )
    _what, details, _box = window_texts(shown)
    deleted = not (victim / "precious.txt").exists()
    assert str(planted) in details, f"the window's details: {details!r}; the Allow ran the planted ls: {deleted}"


async def test_the_log_windows_allow_is_given_on_a_view_without_the_environments_values(
    home: Path, paths: AppPaths, hub: Hub, work: tuple[Path, Path]
) -> None:
    """`execute_command("ls", env={"PATH": "<project>/.cache/bin:/usr/bin:/bin"})` with a planted `ls`:
    the tray-started log window shows the held row with the tray's text, but its details say "extra
    environment: PATH", names only, from the journal row (log_model.detail_lines): the value that picks
    the program is shown nowhere in that window (the approval prompt shows it). Was: its Allow was taken
    by the tray (ui/tray/windows.py `TrayWindows.log_window_said` checked only the command's text) and
    ran the planted `ls`, which emptied ~/Documents. Now its Allow brings the approval prompt (the hub's
    `on_holds`, the tray's "show what waits") and decides nothing: the command still waits."""
    from types import SimpleNamespace

    from app.core.journal.store import Journal
    from app.ui.tray.windows import TrayWindows, holds_message
    from app.ui.windows.controls import as_told, held_texts

    folder, victim = work
    planted = folder / ".cache" / "bin"
    planted.mkdir(parents=True)
    (planted / "ls").write_text(PLANTED_LS)
    (planted / "ls").chmod(0o755)
    async with serving(home, bound=True) as client, anyio.create_task_group() as group:
        group.start_soon(
            client.call_tool,
            "execute_command",
            {"command": "ls", "cwd": str(folder), "env": {"PATH": f"{planted}:/usr/bin:/bin"}},
        )
        [held] = await held_by(hub)
        with Journal.open(paths) as journal:
            row = journal.get_command(held.command_id)
        assert row is not None
        shown = as_told(row, held_texts(holds_message([held])), lambda: "?")
        prompts: list[str] = []
        hub.on_holds = lambda: prompts.append("shown")  # the tray: OPEN_APPROVALS
        # The person's click on Allow in the log window, as the tray takes it from the window's pipe.
        TrayWindows.log_window_said(
            SimpleNamespace(hub=hub),  # type: ignore[arg-type]
            {"op": "decide", "id": held.command_id, "allowed": True, "command": shown.command},
        )
        await anyio.sleep(0.5)
        still_held = hub.held(held.command_id) is not None
        asked_for = list(prompts)
        assert hub.decide(held.command_id, allowed=False, by="user (test cleanup)") == still_held
    deleted = not (victim / "precious.txt").exists()
    assert still_held and not deleted, f"the log window's Allow was taken; the planted ls ran: {deleted}"
    assert asked_for == ["shown"], "the log window's Allow brings the approval prompt, which shows PATH's value"


async def test_the_log_windows_plain_allow_runs_what_the_prompt_makes_the_person_type_for(
    home: Path, paths: AppPaths, hub: Hub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`execute_command("rm -rf ~/*")`: the approval prompt keeps Allow off until the person types their
    home folder's path (the most dangerous class, docs/security.md: "no habit click can allow it"), but
    the tray-started log window offered a plain "Allow once" for the same held row (log_details
    `approval_buttons`, armed after a moment, no typed word), and the tray took it
    (`TrayWindows.log_window_said` checked only the command's text): one click in the log window
    deleted everything in the home folder. Now the log window's "Allow…" brings the approval prompt
    (the hub's `on_holds`), where the path is typed, and decides nothing."""
    from types import SimpleNamespace

    from app.ui.tray.windows import TrayWindows

    user = tmp_path / "user"
    (user / "Documents").mkdir(parents=True)
    (user / "Documents" / "precious.txt").write_text("keep me")
    (user / "project").mkdir()
    monkeypatch.setenv("HOME", str(user))
    async with serving(home, bound=True) as client, anyio.create_task_group() as group:
        group.start_soon(client.call_tool, "execute_command", {"command": "rm -rf ~/*", "cwd": str(user / "project")})
        [held] = await held_by(hub)
        prompt_view = for_window(held, paths)
        assert prompt_view.severe and prompt_view.confirm_name == str(user)  # the prompt asks for the typed path
        prompts: list[str] = []
        hub.on_holds = lambda: prompts.append("shown")  # the tray: OPEN_APPROVALS
        # The person's click on the log window's Allow (no word typed), as the tray takes it from its pipe.
        TrayWindows.log_window_said(
            SimpleNamespace(hub=hub),  # type: ignore[arg-type]
            {"op": "decide", "id": held.command_id, "allowed": True, "command": held.command},
        )
        await anyio.sleep(0.5)
        still_held = any(h.command_id == held.command_id for h in hub.pending_holds())
        asked_for = list(prompts)
        if still_held:
            allow_denied = hub.decide(held.command_id, allowed=False, by="user (test cleanup)")
            assert allow_denied
    emptied = not (user / "Documents").exists()
    assert still_held and not emptied, f"the log window's plain Allow was taken; ~/Documents deleted: {emptied}"
    assert asked_for == ["shown"], "the log window's Allow brings the approval prompt, where the path is typed"


async def test_the_cli_approve_question_shows_no_environment_and_asks_no_typed_folder(
    home: Path, paths: AppPaths, hub: Hub, work: tuple[Path, Path]
) -> None:
    """`cowork-terminal approve N` (the person's own terminal) opened the tray's confirm window with
    `questions.approve_question`: the command, the folder and the reasons, but no environment value,
    so `ls` held with `PATH=<project>/.cache/bin:...` read as a plain `ls`, and its Yes (`hub.decide`,
    CONFIRMED_DECIDED_BY) needed no typed word for the most dangerous class either: the Yes ran the
    planted `ls`, which emptied ~/Documents. Now the request asks no yes/no: the question put to the
    tray names the held command to show (`Question.shows`), the tray (`TrayWindows.ask_user`) brings
    the approval prompt and tells the CLI so, and nothing is decided."""
    from types import SimpleNamespace

    from app.core.authority.questions import Question
    from app.core.channel.protocol import IdRequest
    from app.ui.tray.windows import TrayWindows

    folder, victim = work
    planted = folder / ".cache" / "bin"
    planted.mkdir(parents=True)
    (planted / "ls").write_text(PLANTED_LS)
    (planted / "ls").chmod(0o755)
    async with serving(home, bound=True) as client, anyio.create_task_group() as group:
        group.start_soon(
            client.call_tool,
            "execute_command",
            {"command": "ls", "cwd": str(folder), "env": {"PATH": f"{planted}:/usr/bin:/bin"}},
        )
        [held] = await held_by(hub)
        prompts: list[str] = []
        hub.on_holds = lambda: prompts.append("shown")  # the tray: OPEN_APPROVALS
        asked: list[Question] = []
        tray = SimpleNamespace(hub=hub, app=SimpleNamespace(windows=True))

        def ask_user(question: Question) -> None:  # the tray's part, as TrayApp wires it
            asked.append(question)
            TrayWindows.ask_user(tray, question)  # type: ignore[arg-type]

        hub.questions.ask_user = ask_user
        told: list[object] = []
        cli = SimpleNamespace(facts=SimpleNamespace(run_mark=False, pid=None), push=told.append)  # the person's CLI
        hub.questions.ask(cli, "approve", IdRequest(held.command_id), 5)  # type: ignore[arg-type]
        await anyio.sleep(0.5)
        still_held = hub.held(held.command_id) is not None
        asked_for = list(prompts)
        assert hub.decide(held.command_id, allowed=False, by="user (test cleanup)") == still_held
    deleted = not (victim / "precious.txt").exists()
    assert still_held and not deleted, f"`approve N` decided; the planted ls ran: {deleted}"
    assert [q.shows for q in asked] == [held.command_id] and asked_for == ["shown"], "the approval prompt shows it"
    [answer] = told
    assert answer.to_wire()["message"] == (  # type: ignore[attr-defined]
        f"Command #{held.command_id} is shown in Cowork Terminal's approval window: allow or deny it there."
    )


async def test_the_log_window_names_the_folder_as_the_agent_wrote_it_not_where_it_leads(
    home: Path, paths: AppPaths, hub: Hub, work: tuple[Path, Path]
) -> None:
    """`execute_command("python3 -c 'import shutil,os; [shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
    for p in os.listdir()]'", cwd="~/project/notes")` with `notes` a link to ~/Documents: the approval
    prompt names the real folder (HeldCommand.folder, the pin's), but the log window shows the hold's
    `cwd` as the server received it (ui/windows/controls.held_texts reads "cwd", not "folder"):
    "Folder: ~/project/notes", and the reason ("Runs python3 code that can delete files...") names no
    folder. Its Allow is taken. Achieved: an Allow in the log window, on a view saying ~/project/notes,
    emptied ~/Documents."""
    from types import SimpleNamespace

    from app.core.journal.store import Journal
    from app.core.paths import protected_paths
    from app.ui.tray.windows import TrayWindows, holds_message
    from app.ui.windows.controls import as_told, held_texts
    from app.ui.windows.log_model import detail_lines

    folder, victim = work
    (folder / "notes").symlink_to(victim)
    code = "import shutil,os; [shutil.rmtree(p) if os.path.isdir(p) else os.remove(p) for p in os.listdir()]"
    async with serving(home, bound=True) as client, anyio.create_task_group() as group:
        group.start_soon(
            client.call_tool, "execute_command", {"command": f"python3 -c '{code}'", "cwd": str(folder / "notes")}
        )
        [held] = await held_by(hub)
        with Journal.open(paths) as journal:
            row = journal.get_command(held.command_id)
        assert row is not None
        shown = as_told(row, held_texts(holds_message([held])), lambda: "?")
        details = [f"{line.label}: {line.value}" for line in detail_lines(shown, protected=protected_paths(paths))]
        TrayWindows.log_window_said(
            SimpleNamespace(hub=hub),  # type: ignore[arg-type]
            {"op": "decide", "id": held.command_id, "allowed": True, "command": shown.command},
        )
    deleted = not (victim / "precious.txt").exists()
    assert any(str(victim) in line for line in details), (
        f"the log window said {details}; its Allow emptied ~/Documents: {deleted}"
    )


async def test_the_trays_menu_without_tk_cuts_the_deletion_out_of_the_command_it_offers_to_allow(
    home: Path, paths: AppPaths, hub: Hub, work: tuple[Path, Path]
) -> None:
    """On a Python without Tk (no python3-tk), the tray lists each held command in its menu, labelled
    "<client>: <command>" cut to 60 characters in the middle (`_short`, tray_state.short_command keeps
    the end): no plain words, folder, environment or typed word. `echo "Building the project, please
    wait" ; rm -rf ~/Documents ; echo "Build finished OK, no errors"` reads there as `<client>: echo
    "Building the project, please w…finished OK, no errors"`. Was: that menu offered "Allow once"
    (menu.waiting_entry, then actions' decide), which deleted ~/Documents. Now it offers only Deny, and a
    disabled line saying the command can be allowed only in the approval window, once Tk is installed."""
    from types import SimpleNamespace

    from app.core.claude.names import friendly_client_name
    from app.ui.tray import actions, menu
    from app.ui.tray.menu import waiting_entry
    from app.ui.tray.tray_state import HeldView

    folder, victim = work
    command = 'echo "Building the project, please wait" ; rm -rf ~/Documents ; echo "Build finished OK, no errors"'
    async with serving(home, bound=True) as client, anyio.create_task_group() as group:
        group.start_soon(client.call_tool, "execute_command", {"command": command, "cwd": str(folder)})
        [held] = await held_by(hub)
        views = (HeldView(held.command_id, held.command, friendly_client_name(held.client)),)
        entry = waiting_entry(SimpleNamespace(waiting=1, windows=False, held=views))  # type: ignore[arg-type]
        assert entry.submenu is not None
        [item] = entry.submenu
        assert item.submenu is not None
        offered = [(e.text, e.action, e.enabled) for e in item.submenu]
        # What each click in that submenu does, as the tray's menu performs it (only enabled actions).
        tray = SimpleNamespace(hub=hub, read_rules_and_holds=lambda: None)
        for clicked in (e for e in item.submenu if e.enabled and e.action not in (None, menu.DENY)):
            actions.perform(tray, clicked.action, clicked.target)  # type: ignore[arg-type]
        await anyio.sleep(0.5)
        still_held = hub.held(held.command_id) is not None
        # Deny: at once, from anywhere.
        actions.perform(tray, menu.DENY, str(held.command_id))  # type: ignore[arg-type]
        denied = hub.held(held.command_id) is None
    deleted = not (victim / "precious.txt").exists()
    assert offered == [
        ("Can be allowed only in the approval window, once Tk is installed", None, False),
        ("Deny", menu.DENY, True),
    ], f"the menu offered {offered} for {item.text!r}; ~/Documents deleted: {deleted}"
    assert still_held and denied and not deleted
